#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS on Debian's kernel, as a user's host would run it: this checkout added to Debian's
# dkms in the Debian build environment (the kernel's headers, rustc, bindgen; scripts/
# debian-kernel), `dkms install` for the Debian kernel, then the module dkms installed is
# loaded into that kernel in the guest and must probe the card and pass traffic.
#
# usage: tests/dkms.sh        (run by make check; prints "N passed, N failed")
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ATL1C_RS_TOP"
source "$ATL1C_RS_CACHE/debian/current/env.sh"
D=$(readlink -f "$ATL1C_RS_CACHE/debian/current")
rel=$DEBIAN_RELEASE
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
src=$D/chroot/usr/src/atl1c_rs-$ver

# What `cp -a . /usr/src/atl1c_rs-VER` gives a user, less what the module build does not read.
rm -rf "$src" && mkdir -p "$src"
# shellcheck disable=SC2046
tar -cf - $(git ls-files -co --exclude-standard |
	grep -E '^(Kbuild|Makefile|dkms\.conf|[^/]+\.rs|adapter/[^/]+\.rs|netdev/[^/]+|scripts/(kdir-rust|env\.sh|apt\.sh))$') |
	tar -C "$src" -xf -

passed=0
failed=0
step() {
	if "$@"; then
		passed=$((passed + 1))
		echo "ok - $*"
	else
		failed=$((failed + 1))
		echo "not ok - $*"
	fi
}

# The kernel source for kdir-rust: the cached linux-source tree (a user has the tarball from the
# linux-source package); the metadata already regenerated for this kernel is reused.
dkms_install() {
	scripts/debian-kernel run bash -c '
		set -e
		dkms remove "atl1c_rs/$1" --all >/dev/null 2>&1 || true
		dkms add "atl1c_rs/$1"
		LINUX_SOURCE=$3 DISTRO_KDIR=$4 dkms install "atl1c_rs/$1" -k "$2" ||
			{ cat /var/lib/dkms/atl1c_rs/"$1"/build/make.log; exit 1; }
		dkms status atl1c_rs
		modinfo -F vermagic /lib/modules/"$2"/updates/dkms/atl1c_rs.ko*
	' dkms "$ver" "$rel" "$(readlink -f "$ATL1C_RS_CACHE/src/linux-$DEBIAN_VERSION")" "$D/kdir"
}
step dkms_install

ko=$ATL1C_RS_TOP/out/debian/dkms/atl1c_rs.ko
mkdir -p "$(dirname "$ko")"
installed=$(ls "$D/chroot/lib/modules/$rel/updates/dkms/"atl1c_rs.ko* 2>/dev/null | head -1)
if [ -n "$installed" ]; then
	case $installed in
	*.xz) xz -dc "$installed" >"$ko" ;;
	*.zst) zstd -qdc "$installed" >"$ko" ;;
	*) cp "$installed" "$ko" ;;
	esac
	# The guest's own "N passed" line stays in its log: this script counts as the steps above.
	guest() {
		ATL1C_RS_KO="$ko" scripts/vm --kernel debian --driver atl1c_rs tests/vm/probe.sh \
			>out/dkms-guest.log 2>&1
		local rc=$?
		grep -E '^(ok|not ok|#|=) ' out/dkms-guest.log | sed 's/^/# guest: /'
		return $rc
	}
	step guest # the module dkms installed, in Debian's kernel: tests/vm/probe.sh
else
	failed=$((failed + 1))
	echo "not ok - dkms installed no atl1c_rs.ko"
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
