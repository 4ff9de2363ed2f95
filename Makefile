# SPDX-License-Identifier: GPL-2.0
#
# atl1c_rs: out-of-tree build of atl1c_rs.ko (see Kbuild) and the project's entry points.
#
#   make            build atl1c_rs.ko against KDIR (default: the test kernel scripts/setup built)
#   make check      set up what is missing, then run every test; ends with "N passed, N failed"
#   make demo       set up what is missing, boot the guest and show the driver
#   make setup      install/build the toolchain, kernel and QEMU into the cache
#   make clean     (make clean-module: only the module build)
#
# Build against your own Rust-enabled kernel: make KDIR=/lib/modules/$(uname -r)/build

ATL1C_RS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/atl1c_rs
export ATL1C_RS_CACHE
-include $(ATL1C_RS_CACHE)/env.mk

LLVM_BIN ?= /usr/lib/llvm-19/bin
BINDGEN ?= bindgen
export PATH := $(LLVM_BIN):$(dir $(BINDGEN)):$(PATH)
export LIBCLANG_PATH

KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR) LLVM=1 BINDGEN=$(BINDGEN)

.PHONY: all modules clippy setup check demo clean clean-module

all modules:
	@test -n "$(KDIR)" || { echo "no kernel: run 'make setup' or pass KDIR=" >&2; exit 1; }
	$(KMAKE) modules

# Same build with clippy as the Rust compiler driver; warnings are errors (see Kbuild).
clippy:
	@test -n "$(KDIR)" || { echo "no kernel: run 'make setup' or pass KDIR=" >&2; exit 1; }
	$(KMAKE) CLIPPY=1 modules

setup:
	scripts/setup

check:
	scripts/check

demo:
	scripts/demo

clean-module:
	@if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then $(KMAKE) clean; fi
	rm -f netdev/bindings_generated.rs netdev/bindings_wrap.c netdev/kernel_types.blocklist

clean: clean-module
	rm -rf out target
