# kvec-aio: build a patched linux-source-6.1, boot it in QEMU, test, bench.
# "make help" lists the targets.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
MAKEFLAGS += --no-print-directory

TOP      := $(CURDIR)
BUILD    := $(TOP)/build
TARBALL  ?= /usr/src/linux-source-6.1.tar.xz
TREE     := $(BUILD)/linux
KOBJ     := $(BUILD)/obj
BZIMAGE  := $(KOBJ)/arch/x86/boot/bzImage
FRAGMENT ?= $(TOP)/qemu/kvec.config
SERIES   := $(TOP)/series
PATCHES  := $(shell sed -e 's/\#.*//' $(SERIES) 2>/dev/null)
NPROC    := $(shell nproc)
JOBS     ?= $(NPROC)
CCACHE   := $(shell command -v ccache 2>/dev/null)
# ccache's depend mode hashes the headers the compiler's own dependency
# output names (kbuild asks for it) instead of running the preprocessor a
# second time: a cold cache then costs 4 % over plain gcc, not 34 %
# (fs/xfs/ on 2 CPUs: gcc 59 s, ccache 79 s, depend mode 62 s).  A fresh
# machine builds each kernel cold once.
export CCACHE_DEPEND ?= 1
KMAKE    := $(MAKE) -C $(TREE) O=$(KOBJ) -j$(JOBS) \
	    $(if $(CCACHE),CC="ccache gcc") KBUILD_BUILD_TIMESTAMP=kvec-aio \
	    KBUILD_BUILD_USER=kvec KBUILD_BUILD_HOST=qemu
QRUN     := $(TOP)/qemu/run
# Test devices: brd (stores data) and null_blk (does not); 256 MiB, 4 GiB;
# scsi_debug, 256 MiB of 4 KiB sectors through sd, answering at once
# (its default delay of a jiffy per command would dominate the run).
GUEST_DEVS := brd.rd_nr=1 brd.rd_size=262144 null_blk.nr_devices=1 null_blk.gb=4 \
	      scsi_debug.sector_size=4096 scsi_debug.dev_size_mb=256 scsi_debug.delay=0
# Real drivers with the queue limits of hardware: NVMe namespaces of 512 B
# and 4 KiB blocks and a 4 KiB virtio-blk disk, on sparse files under
# build/disks/; the names the in-guest runner gives them (and scsi_debug's).
GUEST_QEMU := --nvme 256M:512 --nvme 256M:4096 --disk 256M:4096
export KVEC_REAL_DEVS := nvme-512 nvme-4k virtio-4k scsi-4k

# Settings a user may give ("make help" lists them with their defaults).
# A variable on the command line that is neither one of them nor one that
# make, kbuild or the sub-makes read stops make: a typo such as QUIK=1
# would otherwise silently start the 43-minute full benchmark.
USER_VARS := QUICK REPS RUNTIME GUESTS SAVE KVEC_TESTS KVEC_MODES KVEC_DEVS SHARDS \
	     DEBUG_DEVS DEBUG_SHARDS JOBS ACCEL KEEP_RUNS V FULL PROFILE_ARGS \
	     PREFIX DESTDIR TARBALL
# set by this Makefile on its own sub-makes' command lines
SUBMAKE_VARS := KOBJ FRAGMENT APT_PKGS
# read by make itself, kbuild (make -C build/linux) or userspace/Makefile
PASS_VARS := MAKEFLAGS SHELL O W C CC LD LLVM ARCH CROSS_COMPILE KCFLAGS \
	     KBUILD_VERBOSE INSTALL CFLAGS LDFLAGS
KVEC_ALL_MODES := stock kvec flag kiobuf stock-pin
# filesystem targets of the t-file-* programs, FS@DEVICE (userspace/tests/run)
KVEC_FS_TARGETS := ext4@nvme-4k xfs@nvme-512 ext4-1k@nullb1 xfs@ram0
KVEC_ALL_DEVS  := ram0 nullb0 nullb1 $(KVEC_REAL_DEVS) $(KVEC_FS_TARGETS)

cmdline_vars := $(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),$(v)))
unknown_vars := $(filter-out $(USER_VARS) $(SUBMAKE_VARS) $(PASS_VARS),$(cmdline_vars))
ifneq ($(unknown_vars),)
$(error unknown variable $(unknown_vars) (a typo?); known: $(USER_VARS), and make's, kbuild's: $(PASS_VARS); see make help)
endif
# given (command line or environment), not a Makefile default
given = $(filter command line environment environment override,$(origin $(1)))
nodigits = $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(1)))))))))))
# $(call check-num,VAR,min): a whole number, >= min (0 or 1)
check-num = $(if $(call given,$(1)),$(if $(and $(filter 1,$(words $($(1)))),$(if $(call nodigits,$($(1))),,y),$(if $(filter 1,$(2)),$(subst 0,,$($(1))),y)),,$(error $(1)=$($(1)): must be a whole number$(if $(filter 1,$(2)), of at least 1, 0 or more))))
# $(call check-set,VAR,allowed values,what): each word one of them
check-set = $(if $(call given,$(1)),$(if $(filter-out $(2),$($(1))),$(error $(1)=$($(1)): $(filter-out $(2),$($(1))) is not $(3); one of: $(2))))
# empty is the default; 0 must not count as set (QUICK=0 is the full run)
check-bool = $(if $(call given,$(1)),$(if $(filter-out 0 1,$($(1))),$(error $(1)=$($(1)): must be 0 or 1)))
$(call check-bool,QUICK)
$(call check-bool,FULL)
$(call check-bool,SAVE)
$(foreach v,REPS RUNTIME GUESTS SHARDS DEBUG_SHARDS JOBS,$(call check-num,$(v),1))
$(call check-num,KEEP_RUNS,0)
$(call check-set,V,0 1 2,a verbosity)
$(call check-set,ACCEL,auto kvm tcg,an accelerator)
$(call check-set,KVEC_MODES,$(KVEC_ALL_MODES),a mode)
$(call check-set,KVEC_DEVS,$(KVEC_ALL_DEVS),a test device)
$(call check-set,DEBUG_DEVS,$(KVEC_ALL_DEVS),a test device)
# the guest's runner takes any non-empty V as verbose
override V := $(filter-out 0,$(V))
export V

APT_PKGS := linux-source-6.1 gcc make git qemu-system-x86 libaio-dev liburing-dev fio bc \
	    bison flex libelf-dev libssl-dev dwarves cpio ccache gnuplot-nox \
	    jq python3 kmod pkgconf groff-base gcc-multilib xfsprogs

.PHONY: help setup tree kernel userspace test test-debug test-valgrind bench-kernel bench profile refresh checkpatch check-i386 check-bisect sizes clean install uninstall

help:
	@echo "kvec-aio targets:"
	@echo "  setup       install missing Debian packages (root; else prints the command)"
	@echo "  tree        extract $(notdir $(TARBALL)) into build/linux, apply the series"
	@echo "  kernel      configure (tinyconfig + qemu/kvec.config, verified) and build bzImage"
	@echo "  userspace   build the libaio tests and tools into build/userspace"
	@echo "  test        setup, kernel, userspace, then run the suite in a QEMU guest"
	@echo "  test-debug  the suite and fault injection on a debug kernel (KASAN, lockdep, kmemleak)"
	@echo "  test-valgrind every test program under valgrind memcheck in the guest (leaks, memory errors)"
	@echo "  bench-kernel the benchmark kernel: kernel's config plus qemu/bench.config (-O2,"
	@echo "              Debian's preemption model) in build/obj-bench"
	@echo "  bench       setup, bench-kernel, userspace, then run the benchmark matrix (QUICK=1: subset)"
	@echo "  profile     instructions per I/O by kernel symbol, per path (perf in an icount guest,"
	@echo "              the benchmark kernel)"
	@echo "  refresh     format-patch build/linux's commits back into kvec/, aio-glue/ and series"
	@echo "  checkpatch  scripts/checkpatch.pl --strict on every patch, then check-i386"
	@echo "  check-i386  compile the series' objects for i386 (W=1, no 64-bit division)"
	@echo "  check-bisect every prefix of the series compiles (block/ and touched files, W=1;"
	@echo "              FULL=1: bzImage at every prefix)"
	@echo "  sizes       pahole of the kvec, kiobuf-emulation, bio and aio structures"
	@echo "  install     kvec-aio.h, kvec-aio.pc and man pages under PREFIX (default /usr/local);"
	@echo "              DESTDIR= stages them for a package"
	@echo "  uninstall   remove what install put there (same PREFIX and DESTDIR)"
	@echo "  clean       remove build/ (kernel tree, objects, results of runs)"
	@echo "  help        this list"
	@echo
	@echo "Variables (make TARGET VAR=value; any other on the command line is refused):"
	@echo "  QUICK=0         bench: 1 runs the quick subset (0: the full matrix, about 43 min)"
	@echo "  SAVE=0          bench: 1 writes the run to benchmarks/results/<stamp>/, to commit"
	@echo "                  (0: build/bench/<stamp>/)"
	@echo "  REPS=3          bench: repetitions of each point"
	@echo "  RUNTIME=        bench: ms of guest time per run (default 300 quick, 200 full)"
	@echo "  GUESTS=$(NPROC)        bench: icount guests booted side by side (default: host CPUs)"
	@echo "  KVEC_TESTS=     test: only these programs, e.g. \"t-fixed t-dma-offsets\""
	@echo "                  (default all; set, it skips the benchmark smoke run)"
	@echo "  KVEC_MODES=     test: only these path modes of: $(KVEC_ALL_MODES) (default all)"
	@echo "  KVEC_DEVS=      test: only these devices of: $(KVEC_ALL_DEVS) (default all)"
	@echo "  SHARDS=$(NPROC)        test: guests side by side (default: host CPUs)"
	@echo "  DEBUG_DEVS=\"$(DEBUG_DEVS)\"  test-debug: devices"
	@echo "  DEBUG_SHARDS=$(NPROC)  test-debug: guests side by side (default: host CPUs)"
	@echo "  V=0             test: 1 prints a failing case's stderr; kernel: verbose build"
	@echo "  ACCEL=auto      qemu/run accelerator: auto, kvm or tcg"
	@echo "  KEEP_RUNS=20    qemu/run: run folders kept in build/qemu-out (0: all)"
	@echo "  JOBS=$(NPROC)          kernel builds: make -j (default: host CPUs)"
	@echo "  FULL=0          check-bisect: 1 builds bzImage at every prefix"
	@echo "  PROFILE_ARGS=   profile: options and paths for benchmarks/profile"
	@echo "  PREFIX=/usr/local  install, uninstall: where"
	@echo "  DESTDIR=        install, uninstall: staging root for a package"
	@echo "  TARBALL=$(TARBALL)"
	@echo "                  tree: the kernel source"
	@echo "Passed through to kbuild and userspace/Makefile: $(PASS_VARS)"

setup:
	@missing=$$(for p in $(APT_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done | xargs); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	cmd="apt-get install -y --no-install-recommends $$missing"; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "setup: missing packages: $$missing" >&2; \
		echo "setup: run as root: apt-get update && $$cmd" >&2; exit 1; \
	fi; \
	echo "setup: installing $$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && $$cmd -qq >/dev/null

# The tree is a git repository (added with -f: Debian's .gitignore hides all) whose first commit is the pristine source
# ("base"); the series is applied on top with git am.  The stamp records the
# series' content, so a changed patch re-applies and nothing else does.
$(BUILD)/.tree-stamp: $(SERIES) $(PATCHES) | $(TARBALL)
	@mkdir -p $(BUILD)
	@if ! git -C $(TREE) rev-parse -q --verify base >/dev/null 2>&1; then \
		echo "tree: extracting $(TARBALL)"; \
		rm -rf $(TREE) $(BUILD)/linux-source-6.1; \
		tar -xJf $(TARBALL) -C $(BUILD); \
		mv $(BUILD)/linux-source-6.1 $(TREE); \
		cd $(TREE) && git init -q && git add -f -A . && \
		git -c user.name=kvec-aio -c user.email=kvec-aio@localhost \
			commit -q -m "linux-source-6.1 (pristine)" && git tag base; \
	fi
	@cd $(TREE) && git am --abort >/dev/null 2>&1 || true
	@# A tree that already holds exactly the series keeps its file times,
	@# so refreshing the patches does not force a full kernel rebuild.
	@cd $(TREE) && \
	want=$$(export GIT_INDEX_FILE=$(BUILD)/.series-index && git read-tree base && \
		for p in $(PATCHES); do git apply --cached $(TOP)/$$p || exit 1; done && \
		git write-tree) && \
	if [ "$$want" = "$$(git rev-parse HEAD^{tree})" ] && git diff --quiet HEAD; then \
		echo "tree: already at the series"; \
	else \
		if [ -n "$$(git status --porcelain --untracked-files=no)" ]; then \
			echo "tree: build/linux has uncommitted edits, which re-applying the series would discard." >&2; \
			echo "tree: commit them there and run make refresh, or set them aside: git -C build/linux stash" >&2; \
			exit 1; \
		fi; \
		if [ -f $(BUILD)/.tree-head ] && [ "$$(cat $(BUILD)/.tree-head)" != "$$(git rev-parse HEAD)" ]; then \
			echo "tree: build/linux has commits the series does not hold, which re-applying it would drop." >&2; \
			echo "tree: make refresh writes them into the series (git diff then shows them against what you pulled), or drop them: git -C build/linux reset --hard $$(cat $(BUILD)/.tree-head)" >&2; \
			exit 1; \
		fi; \
		git reset -q --hard base && git clean -qfd && \
		for p in $(PATCHES); do \
			echo "tree: applying $$p"; \
			git -c user.name=kvec-aio -c user.email=kvec-aio@localhost \
				am -q --committer-date-is-author-date $(TOP)/$$p || \
				{ echo "tree: $$p does not apply" >&2; exit 1; }; \
		done; \
	fi
	@# what the series applied to: commits past it are the user's own
	@git -C $(TREE) rev-parse HEAD > $(BUILD)/.tree-head
	@touch $@

tree: $(BUILD)/.tree-stamp

$(TARBALL):
	@echo "tree: $(TARBALL) missing: make setup (package linux-source-6.1)" >&2; exit 1

# tinyconfig + our fragment; every option the fragment asks for must survive
# olddefconfig, or the guest would silently lack it.  An option given twice
# (bench.config after kvec.config) is held to its last value, as
# merge_config.sh sets it.
$(KOBJ)/.config: $(BUILD)/.tree-stamp $(FRAGMENT)
	@mkdir -p $(KOBJ)
	@$(KMAKE) tinyconfig >/dev/null
	@cd $(KOBJ) && $(TREE)/scripts/kconfig/merge_config.sh -m -O $(KOBJ) \
		$(KOBJ)/.config $(FRAGMENT) >/dev/null
	@$(KMAKE) olddefconfig >/dev/null
	@bad=0; while read -r line; do \
		case "$$line" in \
		CONFIG_*=n) opt=$${line%%=*}; \
			grep -qx "$$opt=[ym].*" $(KOBJ)/.config && { echo "kernel: $$opt is set, fragment wants it off" >&2; bad=1; } ;; \
		CONFIG_*=*) grep -qxF "$$line" $(KOBJ)/.config || \
			{ echo "kernel: $$line requested by $(notdir $(FRAGMENT)) but Kconfig gave: $$(grep -E "^(# )?$${line%%=*}[= ]" $(KOBJ)/.config || echo 'nothing (unknown or unmet dependency)')" >&2; bad=1; } ;; \
		esac; \
	done < <(grep -E '^CONFIG_' $(FRAGMENT) | tac | awk -F= '!seen[$$1]++'); \
	if [ $$bad != 0 ]; then rm -f $@; exit 1; fi

kernel: $(KOBJ)/.config
	@echo "kernel: building bzImage$(if $(CCACHE), (ccache))"
	@$(KMAKE) bzImage > $(KOBJ)/build.log 2>&1 || \
		{ tail -n 40 $(KOBJ)/build.log >&2; exit 1; }
	@grep -E 'warning:' $(KOBJ)/build.log >&2 || true
	@echo "kernel: $$(cat $(KOBJ)/include/config/kernel.release) -> $(BZIMAGE:$(TOP)/%=%)"

userspace:
	@$(MAKE) -C userspace O=$(BUILD)/userspace

test: setup
	@$(MAKE) kernel userspace
	@$(TOP)/userspace/tests/run-host "$(GUEST_DEVS)" $(GUEST_QEMU)

# The debug guest: the same fragment plus qemu/debug.config, built apart.
DEBUG_KOBJ     := $(BUILD)/obj-debug
DEBUG_FRAGMENT := $(BUILD)/debug-guest.config

# build/NAME-guest.config: kvec.config plus qemu/NAME.config
$(BUILD)/%-guest.config: $(TOP)/qemu/kvec.config $(TOP)/qemu/%.config
	@mkdir -p $(BUILD)
	@cat $^ > $@

# KASAN under TCG makes every case several times slower, so few devices:
# nullb1 is memory backed and has null_blk's bad blocks for t-fault; the two
# NVMe namespaces have the 4-byte DMA alignment that cuts bios inside pages;
# XFS on the 512-byte one for the t-file-* programs.  DEBUG_DEVS= changes
# the set.
DEBUG_DEVS ?= nullb1 nvme-512 nvme-4k xfs@nvme-512

test-debug: setup
	@$(MAKE) $(DEBUG_FRAGMENT) userspace
	@$(MAKE) kernel KOBJ=$(DEBUG_KOBJ) FRAGMENT=$(DEBUG_FRAGMENT)
	@KERNEL=$(DEBUG_KOBJ)/arch/x86/boot/bzImage KVEC_DEVS="$(DEBUG_DEVS)" \
		$(TOP)/userspace/tests/run-host --debug "$(GUEST_DEVS)" $(GUEST_QEMU)

# Not in make test: a third boot, about 6 minutes, for what only changes
# with the userspace code.
test-valgrind:
	@$(MAKE) setup APT_PKGS="$(APT_PKGS) valgrind"
	@$(MAKE) kernel userspace
	@$(QRUN) --cpus 2 --mem 2G --timeout 3600 --append "$(GUEST_DEVS)" \
		-- $(TOP)/userspace/tests/run-valgrind

# The benchmark kernel: the test fragment plus qemu/bench.config (-O2 and
# Debian's preemption model), built apart; make profile samples the same
# kernel.  make test's smoke run keeps the test kernel, so that CI builds
# one kernel.
BENCH_KOBJ     := $(BUILD)/obj-bench
BENCH_FRAGMENT := $(BUILD)/bench-guest.config
BENCH_KERNEL   := $(BENCH_KOBJ)/arch/x86/boot/bzImage

bench-kernel: setup
	@$(MAKE) $(BENCH_FRAGMENT)
	@$(MAKE) kernel KOBJ=$(BENCH_KOBJ) FRAGMENT=$(BENCH_FRAGMENT)

bench: bench-kernel
	@$(MAKE) userspace
	@KERNEL=$(BENCH_KERNEL) $(TOP)/benchmarks/run $(if $(filter 1,$(QUICK)),--quick) $(if $(filter 1,$(SAVE)),--save)

profile: bench-kernel
	@$(MAKE) setup APT_PKGS="$(APT_PKGS) linux-perf"
	@$(MAKE) userspace
	@KERNEL=$(BENCH_KERNEL) $(TOP)/benchmarks/profile $(PROFILE_ARGS)

# Patches whose subject starts with "aio:" belong to the fs/aio.c glue, the
# rest to the kvec core.
refresh:
	@shopt -s nullglob; cd $(TREE) && n=$$(git rev-list --count base..HEAD); \
	rm -f $(TOP)/kvec/*.patch $(TOP)/aio-glue/*.patch; \
	tmp=$$(mktemp -d); \
	git format-patch -q --zero-commit --no-signature -o $$tmp base..HEAD; \
	: > $(SERIES).new; \
	for f in $$tmp/*.patch; do \
		if grep -q '^Subject: \[PATCH[^]]*\] aio:' $$f; then d=aio-glue; else d=kvec; fi; \
		mv $$f $(TOP)/$$d/; echo "$$d/$$(basename $$f)" >> $(SERIES).new; \
	done; rmdir $$tmp; \
	{ echo "# kvec-aio patch series, applied in order on linux-source-6.1 by make tree"; \
	  cat $(SERIES).new; } > $(SERIES); rm -f $(SERIES).new; \
	echo "refresh: $$n patches"; git rev-parse HEAD > $(BUILD)/.tree-head; touch $(BUILD)/.tree-stamp

checkpatch: $(BUILD)/.tree-stamp
	@fail=0; for p in $(PATCHES); do \
		if $(TREE)/scripts/checkpatch.pl --strict --no-tree -q $(TOP)/$$p; then \
			echo "checkpatch: $$p clean"; else fail=1; fi; \
	done; \
	echo "checkpatch: $(words $(PATCHES)) patches checked"; exit $$fail
	@$(MAKE) check-i386

# The series' objects built for i386 with W=1: no warning, and no call to
# the libgcc helpers a 64-bit division or modulo becomes on 32 bits, which
# the kernel does not provide (vmlinux would not link).
I386_KOBJ := $(BUILD)/obj-i386
I386_OBJS := $(addprefix block/,blk-kvec.o blk-kvec-dio.o blk-kvec-table.o \
	     blk-kvec-kiobuf.o blk-kvec-stats.o blk-kvec-file.o blk-kvec-test.o \
	     fops.o) fs/aio.o
I386_MAKE := $(MAKE) -C $(TREE) O=$(I386_KOBJ) ARCH=i386 -j$(JOBS) \
	     $(if $(CCACHE),CC="ccache gcc")

# Bisectable: each prefix of the series, applied from the patch files in a
# worktree of build/linux, compiles with the kernel's config.
check-bisect: kernel
	@$(TOP)/scripts/check-bisect

check-i386: $(BUILD)/.tree-stamp
	@mkdir -p $(I386_KOBJ)
	@$(I386_MAKE) tinyconfig >/dev/null
	@cd $(I386_KOBJ) && $(TREE)/scripts/kconfig/merge_config.sh -m -O $(I386_KOBJ) \
		$(I386_KOBJ)/.config $(TOP)/qemu/i386.config >/dev/null
	@$(I386_MAKE) olddefconfig >/dev/null
	@for o in $$(grep -E '^CONFIG_' $(TOP)/qemu/i386.config); do \
		grep -qxF "$$o" $(I386_KOBJ)/.config || \
			{ echo "check-i386: $$o did not survive olddefconfig" >&2; exit 1; }; \
	done
	@# compiled every time, so that their warnings are in this log
	@rm -f $(addprefix $(I386_KOBJ)/,$(I386_OBJS))
	@$(I386_MAKE) W=1 $(I386_OBJS) > $(I386_KOBJ)/build.log 2>&1 || \
		{ tail -n 30 $(I386_KOBJ)/build.log >&2; exit 1; }
	@! grep -E 'warning:' $(I386_KOBJ)/build.log >&2 || \
		{ echo "check-i386: warnings in the series' objects" >&2; exit 1; }
	@bad=$$(cd $(I386_KOBJ) && nm -u $(I386_OBJS) | { grep -E '__u?(div|mod)di3' || true; } | sort -u); \
	if [ -n "$$bad" ]; then \
		echo "check-i386: 64-bit division, which i386 cannot link: $$bad" >&2; exit 1; fi
	@echo "check-i386: $(words $(I386_OBJS)) objects compile clean for i386, no 64-bit division"

# The guest kernel has no debug info; the three objects that hold the
# structures are compiled again with it into build/sizes/, then once more
# as before so that the next bzImage build finds them unchanged.
SIZE_STRUCTS := blk_kvec,blk_kvec_io,blk_kvec_buf,blk_kvec_table,kiobuf_emu,bio,bio_vec,kiocb
sizes: kernel
	@mkdir -p $(BUILD)/sizes
	@$(KMAKE) -s KCFLAGS=-g block/blk-kvec.o block/fops.o fs/aio.o
	@cp $(KOBJ)/block/blk-kvec.o $(KOBJ)/block/fops.o $(KOBJ)/fs/aio.o $(BUILD)/sizes/
	@$(KMAKE) -s block/blk-kvec.o block/fops.o fs/aio.o
	@{ pahole -C $(SIZE_STRUCTS) $(BUILD)/sizes/blk-kvec.o; \
	   pahole -C blkdev_dio $(BUILD)/sizes/fops.o; \
	   pahole -C aio_kiocb $(BUILD)/sizes/aio.o; } > $(BUILD)/sizes/pahole.txt
	@awk '/^struct .* \{/ { name = $$2 } /\/\* size: / { sub(",", "", $$3); print name, $$3 }' \
		$(BUILD)/sizes/pahole.txt | sort -u
	@echo "sizes: layouts in build/sizes/pahole.txt"

# The library side for libaio programs: userspace/Makefile does it.  A
# relative DESTDIR is made absolute here, since that make runs in userspace/.
install uninstall:
	@$(MAKE) -C userspace $@ $(if $(DESTDIR),DESTDIR=$(abspath $(DESTDIR)))

clean:
	rm -rf $(BUILD)
