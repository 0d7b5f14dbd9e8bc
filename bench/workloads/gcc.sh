#!/bin/sh
# gcc: generate a C project of N files in SCRATCH and build it with make -j2.
#   gcc.sh SCRATCH N
set -e
d=$(mktemp -d "$1/gcc.XXXXXX")
cd "$d"
n=$2
i=0
: >decls.h
while [ "$i" -lt "$n" ]; do
	echo "long unit$i(long x);" >>decls.h
	cat >"u$i.c" <<EOC
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decls.h"
struct rec$i { long a, b; char name[32]; };
static int cmp$i(const void *x, const void *y)
{
	const struct rec$i *p = x, *q = y;
	return (p->a > q->a) - (p->a < q->a);
}
static long mix$i(long x) { for (int k = 0; k < 16; k++) x = x * 6364136223846793005L + $i + k; return x; }
long unit$i(long x)
{
	struct rec$i r[64];
	for (int k = 0; k < 64; k++) {
		r[k].a = mix$i(x + k) % 1000; r[k].b = k;
		snprintf(r[k].name, sizeof r[k].name, "u$i-%d", k);
	}
	qsort(r, 64, sizeof r[0], cmp$i);
	long s = 0;
	for (int k = 0; k < 64; k++) s += r[k].a * (long)strlen(r[k].name) + r[k].b;
	return s;
}
EOC
	i=$((i + 1))
done
{
	echo '#include <stdio.h>'
	echo '#include "decls.h"'
	echo 'int main(void) { long s = 0;'
	i=0
	while [ "$i" -lt "$n" ]; do echo "s += unit$i($i);"; i=$((i + 1)); done
	printf '%s\n' 'printf("%ld\n", s); return 0; }'
} >main.c
objs=main.o
i=0
while [ "$i" -lt "$n" ]; do objs="$objs u$i.o"; i=$((i + 1)); done
printf 'CFLAGS = -O2 -Wall\nprog: %s\n\t$(CC) -o $@ $^\n%%.o: %%.c decls.h\n\t$(CC) $(CFLAGS) -c -o $@ $<\n' "$objs" >Makefile
make -s -j2 CC=gcc >/dev/null
./prog >/dev/null
cd /
rm -rf "$d"
