#!/bin/sh
# Instructions the sentry's worker executes per emulated openat, counted by
# valgrind --tool=callgrind on tests/helpers/hotpath (cordon's engine and
# open handler serving a child's openat calls; valgrind cannot run cordon
# itself). Runs N1 and N2 calls and prints (Ir(N2) - Ir(N1)) / (N2 - N1), so
# start-up and thread set-up cancel out, and the top functions per call.
#
#   bench/callgrind.sh [HOTPATH-BINARY] [MODE...]     MODE: open missing creat
set -eu
hp=${1:-build/tests/helpers/hotpath}
[ $# -gt 0 ] && shift
modes=${*:-open missing creat}
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
n1=1000 n2=3000
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ir() { # ir N MODE: Ir in the worker threads
	valgrind --tool=callgrind --toggle-collect=worker_main --callgrind-out-file="$out/cg.$1.$2" \
		"$hp" "$1" "$2" >/dev/null 2>"$out/err" || { cat "$out/err" >&2; exit 1; }
	callgrind_annotate "$out/cg.$1.$2" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }'
}
for m in $modes; do
	a=$(ir $n1 "$m")
	b=$(ir $n2 "$m")
	echo "openat $m: $(( (b - a) / (n2 - n1) )) instructions per call in the worker (callgrind, $n1 vs $n2 calls)"
	callgrind_annotate --inclusive=no "$out/cg.$n2.$m" 2>/dev/null |
		awk -v n="$n2" '/^ *[0-9,]+ .*:/ { v = $1; gsub(",", "", v); if (v / n >= 20) { $1 = ""; printf "    %7.0f %s\n", v / n, $0 } }' | head -15
done
