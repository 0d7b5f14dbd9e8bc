#!/bin/bash
# The native path's cost, interleaved: micro/sysloop's getppid, openat of an
# existing file + close and openat of a missing file, natively, under
# bubblewrap (if installed) and under `cordon run` (and a second cordon build,
# for an A/B), ROUNDS times in turn; medians of the calling thread's CPU time
# per call (sysloop's cpu_ns_per_call: the whole cost of a call the kernel
# answers in the caller's context, steadier than wall time on a shared host)
# and the ratio to native.
#   bench/native-path.sh [-n ROUNDS] [--cordon PATH] [--cordon-b PATH] [--file PATH]
# Run as root (cordon's default sandbox). See README.md, "The native path".
set -euo pipefail
ROUNDS=9
HERE=$(cd "$(dirname "$0")" && pwd)
CORDON=${CORDON:-$HERE/../cordon}
CORDON_B=""
FILE=/etc/passwd
while [ $# -gt 0 ]; do
	case $1 in
	-n) ROUNDS=$2; shift 2 ;;
	--cordon) CORDON=$2; shift 2 ;;
	--cordon-b) CORDON_B=$2; shift 2 ;;
	--file) FILE=$2; shift 2 ;;
	*) echo "usage: $0 [-n ROUNDS] [--cordon PATH] [--cordon-b PATH] [--file PATH]" >&2; exit 2 ;;
	esac
done
[ -x "$CORDON" ] || { echo "no cordon at $CORDON (--cordon PATH)" >&2; exit 2; }
WORK=/var/tmp/cordon-bench
mkdir -p "$WORK/bin"
BIN=$WORK/bin/sysloop-cpu
cc -O2 -o "$BIN.new" "$HERE/micro/sysloop.c" && mv "$BIN.new" "$BIN"

SBX=(native)
command -v bwrap >/dev/null && SBX+=(bwrap)
SBX+=(cordon)
[ -n "$CORDON_B" ] && SBX+=(cordon-b)
run() { # run SANDBOX MODE N: cpu ns per call
	local p=()
	case $1 in
	bwrap) p=(bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-all --die-with-parent --) ;;
	cordon) p=("$CORDON" run -T --bind "$WORK:$WORK:ro" --) ;;
	cordon-b) p=("$CORDON_B" run -T --bind "$WORK:$WORK:ro" --) ;;
	esac
	(cd / && env -i PATH=/usr/bin:/bin "${p[@]}" "$BIN" "$2" "$3" "$FILE") | awk '$1 == "cpu_ns_per_call" { print $2 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for r in $(seq "$ROUNDS"); do
	for m in getppid open missing; do
		n=400000
		[ "$m" = getppid ] && n=2000000
		# the sandbox order rotates from one round to the next
		k=${#SBX[@]}
		for i in $(seq 0 $((k - 1))); do
			s=${SBX[$(((i + r) % k))]}
			run "$s" "$m" "$n" >>"$TMP/$m.$s"
		done
	done
done
printf '%-9s' "ns/call"
for s in "${SBX[@]}"; do printf ' %16s' "$s"; done
printf '\n'
for m in getppid open missing; do
	nat=$(median <"$TMP/$m.native")
	printf '%-9s' "$m"
	for s in "${SBX[@]}"; do
		v=$(median <"$TMP/$m.$s")
		printf ' %16s' "$(awk -v v="$v" -v n="$nat" 'BEGIN { printf "%.1f (x%.2f)", v, v / n }')"
	done
	printf '\n'
done
echo "medians of $ROUNDS interleaved rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
