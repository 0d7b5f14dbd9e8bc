#!/bin/sh
# git: init, add, commit, status, change 20 files, status, commit in a repo
# of N files created in SCRATCH.
#   git.sh SCRATCH N
set -e
d=$(mktemp -d "$1/git.XXXXXX")
cd "$d"
export HOME="$d" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
mkdir repo
cd repo
awk -v n="$2" 'BEGIN {
	for (i = 0; i < n; i++) {
		dir = sprintf("d%02d", i % 40)
		if (!(dir in made)) { system("mkdir " dir); made[dir] = 1 }
		f = sprintf("%s/f%05d.txt", dir, i)
		printf "file %d\nline two of %d\n", i, i > f
		close(f)
	}
}'
git init -q
git add -A
git commit -q -m initial
git status --porcelain >/dev/null
i=0
while [ "$i" -lt 20 ]; do echo change >>"d$(printf %02d $((i % 40)))/f$(printf %05d "$i").txt"; i=$((i + 1)); done
test "$(git status --porcelain | wc -l)" -eq 20
git commit -q -a -m change
git log --oneline | wc -l >/dev/null
cd /
rm -rf "$d"
