#!/bin/bash
# Fuzz regression: runs each fuzz target's standalone build over every file
# of its corpus (tests/fuzz/corpus/<target>/), one process per file, so that
# a crash or a failed invariant names the input. Prints one line per file
# and "N passed, N failed".
#
# Environment (set by `make check`): FUZZ_BIN (directory of the built
# fuzz-<target>-regress programs), TESTS_SRCDIR (the source tests/ directory).

if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

TESTS_SRCDIR=${TESTS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
FUZZ_BIN=${FUZZ_BIN:-$(pwd)/tests/fuzz}
CORPUS=$TESTS_SRCDIR/fuzz/corpus
TARGETS="dns sockaddr policy elf openhow snapshot oci hello api http"

PASSED=0
FAILED=0

for t in $TARGETS; do
        bin=$FUZZ_BIN/fuzz-$t-regress
        if [ ! -x "$bin" ]; then
                echo "FAIL $t: $bin is not built"
                FAILED=$((FAILED + 1))
                continue
        fi
        found=0
        for f in "$CORPUS/$t"/*; do
                [ -f "$f" ] || continue
                found=1
                if out=$(timeout 30 "$bin" "$f" 2>&1); then
                        echo "PASS $t/${f##*/}"
                        PASSED=$((PASSED + 1))
                else
                        rc=$?
                        echo "FAIL $t/${f##*/} (exit $rc)"
                        printf '%s\n' "$out" | sed 's/^/    /'
                        FAILED=$((FAILED + 1))
                fi
        done
        if [ "$found" = 0 ]; then
                echo "FAIL $t: empty corpus $CORPUS/$t"
                FAILED=$((FAILED + 1))
        fi
done

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
