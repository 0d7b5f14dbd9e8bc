#!/bin/sh
# File I/O: ROUNDS x (write MB MiB in 64 KiB blocks, read it back, remove it)
# in SCRATCH (the sandbox's /tmp; a tmpfs in every column).
#   fileio.sh SCRATCH MB ROUNDS
set -e
d=$(mktemp -d "$1/fileio.XXXXXX")
r=0
while [ "$r" -lt "$3" ]; do
	dd if=/dev/zero of="$d/f" bs=64k count=$(($2 * 16)) status=none
	dd if="$d/f" of=/dev/null bs=64k status=none
	rm -f "$d/f"
	r=$((r + 1))
done
rm -rf "$d"
