#!/bin/bash
# The house's rules (issue #17), checked on the tree and on the built objects:
# - no C source or header over 1,200 lines, and each opens with a comment
#   saying what it owns;
# - includes point down the rooms' order: common/ < notify/, policy/,
#   cgroup/ < fs/, net/, approvals/ < the core (sentry/) < sandbox/ < oci/, api/ <
#   cli/; a room never includes a room of its own rank (fs/ and net/ never
#   each other) or above, and a room's private header (*-internal.h) is
#   included from its own room only;
# - no circle between the files of sentry/'s rooms: the graph "this object
#   uses a symbol that object defines", from nm over the built objects, has
#   no cycle (two files that need each other share a part that moves down,
#   or a callback table replaces the back edge).
set -u
src=${TESTS_SRCDIR:-$(dirname "$0")}/..
build=$(dirname "${CORDON:-$src/cordon}")
exec python3 - "$src" "$build" <<'EOF'
import os, re, subprocess, sys
src, build = sys.argv[1], sys.argv[2]
passed = failed = 0
def check(name, problems):
    global passed, failed
    if problems:
        failed += 1
        print('FAIL - %s' % name)
        for p in problems[:40]:
            print('#   %s' % p)
    else:
        passed += 1
        print('PASS - %s' % name)

rank = {'common': 0, 'notify': 1, 'sentry/policy': 1, 'sentry/cgroup': 1,
        'fs': 2, 'net': 2, 'sentry/approvals': 2, 'sentry': 3,
        'sentry/sandbox': 4, 'sentry/oci': 5, 'sentry/api': 5, 'sentry/cli': 6}
def room(path):
    d = os.path.dirname(path)
    return d if d in rank else None

files = subprocess.run(['git', '-C', src, 'ls-files', '*.c', '*.h'], capture_output=True, text=True).stdout.split()
if not files:  # not a git checkout (a tarball): every source below the rooms
    files = [os.path.relpath(os.path.join(r, f), src) for top in rank if '/' not in top
             for r, _, fs in os.walk(os.path.join(src, top)) for f in fs if f.endswith(('.c', '.h'))]
code = [f for f in files if room(f)]

long_files, no_comment = [], []
for f in code:
    text = open(os.path.join(src, f), errors='replace').read()
    n = text.count('\n')
    if n > 1200:
        long_files.append('%s: %d lines' % (f, n))
    if not text.lstrip().startswith(('/*', '//')):
        no_comment.append('%s does not open with a comment saying what it owns' % f)
check('no source file over 1,200 lines', long_files)
check('each source file opens with what it owns', no_comment)

bad = []
for f in code:
    r = room(f)
    for m in re.finditer(r'^#include "([^"]+)"', open(os.path.join(src, f), errors='replace').read(), re.M):
        inc = m.group(1)
        ir = room(inc)
        if ir is None or ir == r:
            continue
        if inc.endswith('-internal.h'):
            bad.append('%s includes %s, private to %s/' % (f, inc, ir))
        elif rank[ir] >= rank[r]:
            bad.append('%s (%s/) includes %s (%s/): not below it' % (f, r, inc, ir))
check('includes point down the rooms', bad)

objs = {}
for f in code:
    if f.endswith('.c') and f.startswith('sentry/') and os.path.basename(f) != 'gen-filters.c':
        o = os.path.join(build, f[:-2] + '.o')
        if os.path.exists(o):
            objs[f] = o
if not objs:
    check('built objects to check for circles (%s)' % build, ['none found: build first'])
else:
    defs, uses = {}, {}
    for f, o in objs.items():
        out = subprocess.run(['nm', o], capture_output=True, text=True).stdout.splitlines()
        uses[f] = set()
        for line in out:
            parts = line.split()
            if len(parts) == 2 and parts[0] == 'U':
                uses[f].add(parts[1])
            elif len(parts) == 3 and parts[1] in 'TDBRC':
                defs.setdefault(parts[2], f)
    edges = {f: sorted({defs[s] for s in uses[f] if s in defs and defs[s] != f}) for f in objs}
    cycles, state, stack = [], {}, []
    def visit(f):
        state[f] = 1
        stack.append(f)
        for g in edges[f]:
            if state.get(g) == 1:
                cycles.append(' -> '.join(stack[stack.index(g):] + [g]))
            elif g not in state:
                visit(g)
        stack.pop()
        state[f] = 2
    for f in sorted(objs):
        if f not in state:
            visit(f)
    check('no circle between the files of sentry/ (%d objects)' % len(objs), cycles)
print('%d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
EOF
