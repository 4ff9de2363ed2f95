# SPDX-License-Identifier: GPL-2.0
# Shared settings for atl1c_rs scripts. Source it; it defines no functions that run anything.
#
# ATL1C_RS_CACHE   where downloads and build results live (default ~/.cache/atl1c_rs)

ATL1C_RS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ATL1C_RS_CACHE=${ATL1C_RS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/atl1c_rs}

# Pinned tool versions. Changing one changes the cache keys that depend on it.
KERNEL_SERIES=7.2
LLVM_VERSION=19
BINDGEN_VERSION=0.73.2
QEMU_SUITE=trixie-backports

LLVM_BIN=/usr/lib/llvm-$LLVM_VERSION/bin
export LIBCLANG_PATH=/usr/lib/llvm-$LLVM_VERSION/lib
BINDGEN_ROOT=$ATL1C_RS_CACHE/bindgen-$BINDGEN_VERSION

log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
