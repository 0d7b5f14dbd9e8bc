#!/bin/sh
# Cold start: run CMD... K times in a row (the sandbox's whole setup and
# teardown each time). Runs on the host, around the sandbox.
#   coldstart.sh K CMD...
k=$1
shift
i=0
while [ "$i" -lt "$k" ]; do
	"$@" || { echo "coldstart: run $i: exit $?" >&2; exit 1; }
	i=$((i + 1))
done
