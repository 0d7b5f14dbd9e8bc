#!/bin/sh
# Process-heavy: sh spawning N short processes (fork + exec + exit + wait).
#   procs.sh N
i=0
while [ "$i" -lt "$1" ]; do
	/bin/true || exit 1
	i=$((i + 1))
done
