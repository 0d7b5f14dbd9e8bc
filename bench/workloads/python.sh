#!/bin/sh
# python3 -I starting K times, each importing a dozen stdlib modules and
# doing a little work with them (pywork.py).
#   python.sh DIR-OF-pywork.py K
i=0
while [ "$i" -lt "$2" ]; do
	python3 -I "$1/pywork.py" >/dev/null || exit 1
	i=$((i + 1))
done
