# SPDX-License-Identifier: GPL-2.0
# Shell functions shared by scripts/setup and scripts/debian-kernel: the machine's own Debian
# mirror, private apt configurations for extra suites, and progress for long steps.
# Source it after scripts/env.sh; it runs nothing by itself.

# The machine's Debian mirror, read from its own apt sources (deb822 or one-line format).
debian_mirror() {
	local codename uri f files=()
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && files+=("$f")
	done
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	uri=$(awk -v c="$codename" '
		/^URIs:/ { u = $2 }
		/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == c) found = u }
		/^deb[ \t]/ { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /=/) break;
		              if ($(i + 1) == c) found = $i }
		END { if (found != "") print found }' "${files[@]}" | head -1)
	[ -n "$uri" ] || die "no apt source for '$codename' found in /etc/apt; cannot derive a mirror"
	echo "${uri%/}"
}

# A private apt configuration for extra suites: its own sources, lists, empty dpkg status and
# archive directory, so nothing touches the host's package state.
# usage: xapt_init NAME SUITE...; then xapt NAME apt-get|apt-cache ARGS...
xapt_init() {
	local name=$1 mirror d s
	shift
	d=$ATL1C_RS_CACHE/apt/$name
	mirror=$(debian_mirror)
	mkdir -p "$d/lists/partial" "$d/archives/partial" "$d/cache"
	: >"$d/status"
	: >"$d/sources.list.new"
	for s in "$@"; do
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $s main" \
			>>"$d/sources.list.new"
	done
	mv "$d/sources.list.new" "$d/sources.list"
	log "apt ($name): updating package lists for $*"
	xapt "$name" apt-get update -q >"$d/update.log" 2>&1 ||
		{ tail -20 "$d/update.log" >&2; die "apt-get update for $* failed"; }
}

# A mirror that lags serves sid Release files past their Valid-Until date: accept them (the
# archive signature is still checked).
xapt() {
	local name=$1 tool=$2 d
	shift 2
	d=$ATL1C_RS_CACHE/apt/$name
	"$tool" -o Dir::Etc::SourceList="$d/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State="$d" -o Dir::State::Lists="$d/lists" -o Dir::State::status="$d/status" \
		-o Dir::Cache="$d/cache" -o Dir::Cache::Archives="$d/archives" \
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null \
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root -o Acquire::Check-Valid-Until=false "$@"
}

candidate() { # NAME PKG [SUITE]: candidate version in that private config
	xapt "$1" apt-cache policy ${3:+-t "$3"} "$2" | awk '/Candidate:/ { print $2 }'
}

# fetch_kernel_source VER: Debian linux-source-$KERNEL_SERIES at VER, unpacked into the cache
# once (the private "kernel" apt configuration must be initialised); sets KSRC.
fetch_kernel_source() {
	local ver=$1 dl deb
	KSRC=$ATL1C_RS_CACHE/src/linux-$ver
	[ -f "$KSRC/.atl1c_rs-complete" ] && return
	dl=$ATL1C_RS_CACHE/dl
	mkdir -p "$dl" "$ATL1C_RS_CACHE/src"
	log "downloading linux-source-$KERNEL_SERIES $ver"
	(cd "$dl" && xapt kernel apt-get download -q "linux-source-$KERNEL_SERIES=$ver" >/dev/null) ||
		die "download of linux-source-$KERNEL_SERIES=$ver failed"
	deb=$(ls "$dl"/linux-source-"$KERNEL_SERIES"_*.deb | head -1)
	rm -rf "$KSRC.tmp" && mkdir -p "$KSRC.tmp"
	log "unpacking kernel source (about a minute)"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$KSRC.tmp" --wildcards '*.tar.xz'
	tar -xJf "$KSRC.tmp"/usr/src/linux-source-"$KERNEL_SERIES".tar.xz -C "$KSRC.tmp"
	rm -rf "$KSRC"
	mv "$KSRC.tmp/linux-source-$KERNEL_SERIES" "$KSRC"
	rm -rf "$KSRC.tmp" "$deb"
	echo "$ver" >"$KSRC/.atl1c_rs-complete"
}

# Run a long command with its output in LOGFILE and a progress line every 30 s.
with_progress() {
	local what=$1 logfile=$2 pid rc=0 t=0
	shift 2
	"$@" >"$logfile" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 2
		t=$((t + 2))
		if [ $((t % 30)) -eq 0 ]; then
			log "$what: ${t}s, $(tail -1 "$logfile" | cut -c1-100)"
		fi
	done
	wait "$pid" || rc=$?
	if [ $rc -ne 0 ]; then
		tail -40 "$logfile" >&2
		die "$what failed (full log: $logfile)"
	fi
}
