# SPDX-License-Identifier: GPL-2.0
#
# atl1c_rs: out-of-tree build of atl1c_rs.ko (see Kbuild) and the project's entry points.
#
#   make            build atl1c_rs.ko against KDIR (default: the test kernel scripts/setup built)
#   make check      set up what is missing, then run every test; ends with "N passed, N failed"
#   make demo       set up what is missing, boot the guest and show the driver
#   make bench      atl1c_rs against the C driver on Debian's stock kernel (bench/run)
#   make soak       the long run: every scenario at full counts on the kernel that sees
#   make setup      install/build the toolchain, kernel and QEMU into the cache
#   make clean     (make clean-module: only the module build)
#
# Build against your own Rust-enabled kernel tree: make KDIR=/path/to/build
# Build for a distribution kernel whose headers carry no Rust metadata (Debian's):
#   make distro [KVER=$(uname -r)]    regenerate it (scripts/kdir-rust), then build
#   make install [KO=atl1c_rs.ko]      into /lib/modules/<its kernel>/updates, then depmod

ATL1C_RS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/atl1c_rs
export ATL1C_RS_CACHE
# The test kernel's paths (KDIR, bindgen, LLVM) as scripts/setup selected them; empty when
# building for another kernel.
ATL1C_RS_TEST_ENV ?= $(if $(filter distro,$(MAKECMDGOALS)),,$(ATL1C_RS_CACHE)/env.mk)
-include $(ATL1C_RS_TEST_ENV)

LLVM_BIN ?= /usr/lib/llvm-19/bin
BINDGEN ?= bindgen
export PATH := $(LLVM_BIN):$(if $(findstring /,$(BINDGEN)),$(dir $(BINDGEN)):)$(PATH)
# Only the test kernel's bindgen needs to be told where libclang is; an empty value would hide
# a distribution bindgen's own.
ifneq ($(LIBCLANG_PATH),)
export LIBCLANG_PATH
endif

# The kernel's own configuration picks the compiler: LLVM=1 for a clang-built kernel (the test
# kernel), its gcc otherwise (Debian's headers name theirs in .kernelvariables).
KCONFIG_FILE = $(firstword $(wildcard $(KDIR)/include/config/auto.conf $(KDIR)/.config))
KERNEL_LLVM = $(if $(shell grep -sx 'CONFIG_CC_IS_CLANG=y' $(KCONFIG_FILE)),LLVM=1)
KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR) $(KERNEL_LLVM) BINDGEN=$(BINDGEN)

.PHONY: all modules clippy setup check demo bench soak selftests distro install clean clean-module

all modules:
	@test -n "$(KDIR)" || { echo "no kernel: run 'make setup' or pass KDIR=" >&2; exit 1; }
	$(KMAKE) modules

# Same build with clippy as the Rust compiler driver; warnings are errors (see Kbuild).
clippy:
	@test -n "$(KDIR)" || { echo "no kernel: run 'make setup' or pass KDIR=" >&2; exit 1; }
	$(KMAKE) CLIPPY=1 modules

setup:
	scripts/setup

# A distribution kernel (default: the running one). Its headers, the source it was built from
# (Debian: the linux-source-<series> package's tarball) and the exact rustc and bindgen it was
# built with must be installed; scripts/kdir-rust says which are missing.
KVER ?= $(shell uname -r)
KVER_HEADERS ?= /lib/modules/$(KVER)/build
KVER_SERIES = $(word 1,$(subst ., ,$(KVER))).$(word 2,$(subst ., ,$(KVER)))
LINUX_SOURCE ?= /usr/src/linux-source-$(KVER_SERIES).tar.xz
DISTRO_KDIR ?= $(ATL1C_RS_CACHE)/kdir-rust/$(KVER)

distro:
	scripts/kdir-rust $(KVER_HEADERS) $(LINUX_SOURCE) $(DISTRO_KDIR)
	$(MAKE) ATL1C_RS_TEST_ENV= KDIR=$(DISTRO_KDIR) modules

KO ?= atl1c_rs.ko
install:
	@test -f $(KO) || { echo "no $(KO): build it first (make distro, or make KDIR=...)" >&2; exit 1; }
	@kver=$$(modinfo -F vermagic $(KO) | cut -d' ' -f1) && \
	install -D -m 644 $(KO) $(DESTDIR)/lib/modules/$$kver/updates/atl1c_rs.ko && \
	echo "installed $(DESTDIR)/lib/modules/$$kver/updates/atl1c_rs.ko" && \
	if [ -z "$(DESTDIR)" ]; then depmod -a $$kver; fi

check:
	scripts/check

demo:
	scripts/demo

soak:
	scripts/check --soak

bench:
	bench/run

selftests:
	scripts/selftests run

clean-module:
	@if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then $(KMAKE) clean; fi
	rm -f netdev/bindings_generated.rs netdev/bindings_wrap.c netdev/kernel_types.blocklist

clean: clean-module
	rm -rf out target
