#!/bin/bash
# The emulated path syscalls against the kernel: a table of path cases
# (tests/helpers/pathcases.c) run natively and under cordon on trees of the
# same shape, compared line by line; and real programs that lean on the path
# calls (git, tar, python, sqlite3, make) run under full emulation.
#
#   CORDON=/path/to/cordon HELPERS=/path/to/build/tests/helpers TESTS_SRCDIR=/path/to/tests \
#       bash tests/integration/fs-semantics.sh [REGEX...]
#
# The identity of the native run. Started by root, the command is uid 0 of a
# user namespace over the sandbox's own range of ids; the helper drops its
# capabilities itself, so the native run gets the same standing from
# `unshare -Ur` run as uid 65534 (via setpriv): uid 0 over one id. Cases
# that chown use ids past both maps (70000). Started by an unprivileged
# user, the command keeps that user's own uid, and the native run is that
# user in a user namespace mapping only its own uid (NATIVE_KEEP_ID), where
# the host's other ids show as the overflow id as they do in the sandbox. Files the helper creates are then owned by
# the same host id in both runs and every permission check is the same, so
# ids are compared too, not only modes. What still differs is the view
# itself (the host's files are read-only mounts in the sandbox): the cases
# avoid writing to host files.

if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

# stage_helper NAME: the helper, copied into a 0755 directory the sandbox's
# host uid can read
stage_helper() {
        local h name=$1
        if [ -z "${HELPERS:-}" ] || [ ! -x "$HELPERS/$name" ]; then
                skip "$name not built (HELPERS=${HELPERS:-unset}; make tests/helpers/$name)"
        fi
        h="$IT_TMP/helpers"
        mkdir -p "$h" && chmod 0755 "$h" && cp "$HELPERS/$name" "$h/" && chmod 0755 "$h/$name" ||
                fail "cannot stage the helper in $h"
        printf '%s\n' "$h"
}

stage_pathcases() {
        stage_helper pathcases
}

host_python_or_skip() {
        if [ -x /usr/bin/python3 ]; then
                echo /usr/bin/python3
        elif command -v python3 >/dev/null; then
                command -v python3
        else
                skip "no python3 on the host"
        fi
}

# run_native DIR: the helper natively, as the sandbox's identity (see above)
run_native() {
        local h=$1 dir=$2
        if [ "$(id -u)" = 0 ] && [ -n "${NATIVE_KEEP_ID:-}" ]; then
                setpriv --reuid=65534 --regid=65534 --clear-groups -- \
                        unshare -U --map-user=65534 --map-group=65534 "$h/pathcases" "$dir"
        elif [ "$(id -u)" = 0 ]; then
                command -v setpriv >/dev/null || skip "no setpriv(1) to run the native side as uid 65534"
                setpriv --reuid=65534 --regid=65534 --clear-groups -- unshare -Ur "$h/pathcases" "$dir"
        else
                unshare -Ur "$h/pathcases" "$dir"
        fi
}

# compare WHAT ARGS...: native against `cordon run ARGS` on a fresh tree each
compare() {
        local what=$1 h native sbox diffs
        shift
        command -v unshare >/dev/null || skip "no unshare(1) for the native run"
        h=$(stage_pathcases)
        native=$(scratch_dir native)
        sbox=$(scratch_dir sandbox)
        if [ "$(id -u)" = 0 ]; then
                # As root cordon idmaps a read-write bind to its source's owner: the
                # tree's root is the sandbox root's, as the native run's own directory
                # is its; the not-owner cases act on a directory of another user's.
                local t
                for t in "$native" "$sbox"; do
                        mkdir "$t/notmine" && chown 4321:4321 "$t/notmine" && chown 65534:65534 "$t" ||
                                fail "cannot give the trees their owners"
                done
        fi
        run_native "$h" "$native" >"$IT_TMP/native.out" 2>"$IT_TMP/native.err" ||
                skip "the native run failed (user namespaces?): $(head -c 300 "$IT_TMP/native.err")"
        crun "$@" --bind "$sbox:/pathcases-tree" --bind "$h:/h:ro" -- /h/pathcases /pathcases-tree
        expect_rc 0 "pathcases under cordon $what"
        printf '%s\n' "$OUT" >"$IT_TMP/sandbox.out"
        local n
        n=$(wc -l <"$IT_TMP/native.out")
        [ "$n" -gt 300 ] || fail "the native run printed only $n lines"
        # By design, not the kernel's: no whiteout (a 0:0 character device to the
        # host) is made in a bind, which the tree is (fs/binds.c), by mknod or
        # by renameat2(RENAME_WHITEOUT) (fs/paths.c)
        expect_contains "$OUT" "mknod-whiteout: mknod = -1 EPERM" "a whiteout in a bind refused"
        expect_contains "$OUT" "renameat2-whiteout: renameat2 = -1 EPERM" "a rename's whiteout in a bind refused"
        sed -i '/^mknod-whiteout: /d; /^renameat2-whiteout: /d' "$IT_TMP/native.out" "$IT_TMP/sandbox.out"
        if [ "$(id -u)" = 0 ] && [ -z "${CORDON_UNPRIVILEGED:-}" ]; then
                # the kernel's rule for an idmapped mount (the bind, as root): a
                # file whose owner it does not map cannot have its attributes
                # changed, EOVERFLOW where a plain mount says EPERM
                local c
                for c in chmod-not-owner utimensat-not-owner; do
                        expect_match "$OUT" "^$c: [a-z]+ = -1 EOVERFLOW" "$c through the idmapped bind"
                        sed -i "/^$c: /d" "$IT_TMP/native.out" "$IT_TMP/sandbox.out"
                done
        fi
        diffs=$(diff "$IT_TMP/native.out" "$IT_TMP/sandbox.out")
        if [ -n "$diffs" ]; then
                it_log "differences (< native, > cordon $what):"
                printf '%s\n' "$diffs" | head -n 80 >&2
                fail "$(printf '%s\n' "$diffs" | grep -c '^[<>]') line(s) differ between native and cordon $what (of $n)"
        fi
        it_log "$n cases, identical"
}

it_test semantics_trap_all
semantics_trap_all() {
        compare "--trap-all" --trap-all
}

it_test semantics_trap_all_proc_mem_fallback
semantics_trap_all_proc_mem_fallback() {
        # child memory read and written through /proc/TID/mem, not process_vm_*v
        export CORDON_TEST_FORCE_FALLBACK=process_vm_readv
        compare "--trap-all (/proc/TID/mem fallback)" --trap-all
        unset CORDON_TEST_FORCE_FALLBACK
}

it_test semantics_trap_all_openat2_fallback
semantics_trap_all_openat2_fallback() {
        # no openat2 for cordon's own walks (the view and its binds set up by
        # O_NOFOLLOW component walks); the table makes no openat2 call itself
        export CORDON_TEST_FORCE_FALLBACK=openat2
        compare "--trap-all (no openat2)" --trap-all
        unset CORDON_TEST_FORCE_FALLBACK
}

it_test semantics_trap_all_sync_wakeup_fallback
semantics_trap_all_sync_wakeup_fallback() {
        # every path call emulated without SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
        export CORDON_TEST_FORCE_FALLBACK=sync_wakeup
        compare "--trap-all (no SYNC_WAKE_UP)" --trap-all
        unset CORDON_TEST_FORCE_FALLBACK
}

# Points CORDON at a copy of cordon that uid 65534 runs (a wrapper around setpriv, from /).
cordon_as_65534() {
        [ "$(id -u)" = 0 ] || skip "needs root to run cordon as uid 65534"
        command -v setpriv >/dev/null || skip "setpriv is not installed"
        local bin="$IT_TMP/bin"
        mkdir -p "$bin" && chmod 0755 "$bin" && cp "$CORDON" "$bin/cordon" && chmod 0755 "$bin/cordon" ||
                fail "cannot copy cordon to $bin"
        printf '#!/bin/sh\ncd / && exec setpriv --reuid=65534 --regid=65534 --clear-groups -- %s "$@"\n' \
                "$bin/cordon" >"$bin/cordon-65534" && chmod 0755 "$bin/cordon-65534" || fail "wrapper"
        CORDON=$bin/cordon-65534
        CORDON_UNPRIVILEGED=1 # its binds are not idmapped
}

it_test semantics_unprivileged_trap_all
semantics_unprivileged_trap_all() {
        # cordon itself run by uid 65534: the sentry then sits in a user
        # namespace of its own, where the overflow id and the sandbox's own
        # id are both 65534 (stat results must still be told apart)
        cordon_as_65534
        NATIVE_KEEP_ID=1 compare "--trap-all, run by uid 65534" --trap-all
}

# The proc agent of a sentry run by an unprivileged user must start every time: it joined the
# sandbox's namespaces through init's pidfd, whose ptrace check of init it failed in some runs
# (5-70% depending on timing), and then every /proc open of a --trap-all sandbox failed with
# EPIPE. Twenty runs in a row, each reading its uid_map through the agent.
it_test unprivileged_proc_agent_every_run
unprivileged_proc_agent_every_run() {
        cordon_as_65534
        local i bad=0 out
        for i in $(seq 20); do
                out=$(timeout 30 "$CORDON" run -T --trap-all -- cat /proc/self/uid_map 2>&1 </dev/null)
                [[ "$out" =~ ^[[:space:]]*65534[[:space:]]+65534[[:space:]]+1$ ]] || {
                        bad=$((bad + 1))
                        it_log "run $i: $out"
                }
        done
        expect_eq 0 "$bad" "runs whose /proc/self/uid_map could not be read (of 20)"
}

it_test semantics_fast_path
semantics_fast_path() {
        compare "(fast path: path calls native)"
}

# Write opens run natively in the fast mode where Landlock bounds them
# (fs/open.c, open_native_write); the ones spelled into /proc or through the
# view's /dev/fd and /dev/std* links are still served by the sentry. Each
# line is what a native run prints too: a truncate and an append, the umask
# on a new file, /proc files written by name and relative to a /proc
# directory, /dev/urandom (writable by anyone, not granted by Landlock), and
# /dev/stdout, /dev/fd/1 and /dev/stderr reopened when they are a host file
# outside the view (which Landlock alone would refuse).
it_test write_opens_native_and_served
write_opens_native_and_served() {
        local host="$IT_TMP/host-out" mode
        for mode in default --trap-all; do
                : >"$host" && chmod 666 "$host"
                local args=(-T)
                [ "$mode" = default ] || args+=("$mode")
                timeout -k 5 "$IT_CMD_TIMEOUT" "$CORDON" run "${args[@]}" -- sh -c '
umask 027; echo a > /tmp/f; echo bb > /tmp/f; echo ccc >> /tmp/f; stat -c %a /tmp/f; cat /tmp/f
echo 600 > /proc/self/oom_score_adj && cat /proc/self/oom_score_adj
(cd /proc/$$ && echo 700 > oom_score_adj) && cat /proc/self/oom_score_adj
cd /tmp && echo rel > g && cat g
echo seed > /dev/urandom && echo urandom
echo tohost >> /dev/stdout; echo tohost2 >> /dev/fd/1; echo tohost3 >> /dev/stderr' </dev/null >>"$host" 2>&1
                RC=$? ERR=""
                expect_rc 0 "the write opens ($mode)"
                expect_eq $'640\nbb\nccc\n600\n700\nrel\nurandom\ntohost\ntohost2\ntohost3' "$(cat "$host")" \
                        "write opens natively and through the sentry ($mode)"
        done
}

it_test semantics_hidden_rule_elsewhere
semantics_hidden_rule_elsewhere() {
        # a hidden rule anywhere makes every path call trapped: the cases,
        # none of them under the rule, must still see exactly the kernel's answers
        printf '{"filesystem": {"rules": [{"path": "/etc/ssl/private", "access": "hidden"}]}}\n' >"$IT_TMP/p.json"
        compare "(a hidden rule elsewhere)" --policy "$IT_TMP/p.json"
}

# The sentry creates emulated files with the umask it believes the caller
# has (notify/umask.c caches it per thread): a program that changes its umask
# between creates, from a second process sharing its fs_struct
# (clone(CLONE_FS)), in a forked child after the parent's change, in a thread
# with its own fs_struct, and across execve (also by such a thread, which
# takes over the leader's tid) must get exactly the modes it gets natively.
it_test umask_changes_match_native
umask_changes_match_native() {
        local h native sbox mode diffs
        h=$(stage_helper umaskprobe)
        native=$(scratch_dir umask-native)
        "$h/umaskprobe" "$native" >"$IT_TMP/umask-native.out" 2>"$IT_TMP/umask-native.err" ||
                fail "the native run failed: $(head -c 300 "$IT_TMP/umask-native.err")"
        [ "$(wc -l <"$IT_TMP/umask-native.out")" -ge 30 ] || fail "the native run listed too few files"
        for mode in default --trap-all; do
                sbox=$(scratch_dir "umask-sandbox$mode")
                if [ "$mode" = default ]; then
                        crun --bind "$sbox:/u" --bind "$h:/h:ro" -- /h/umaskprobe /u
                else
                        crun "$mode" --bind "$sbox:/u" --bind "$h:/h:ro" -- /h/umaskprobe /u
                fi
                expect_rc 0 "umaskprobe under cordon ($mode)"
                diffs=$(diff "$IT_TMP/umask-native.out" - <<<"$OUT")
                [ -z "$diffs" ] || fail "file modes differ between native (<) and cordon $mode (>): $diffs"
        done
        it_log "$(wc -l <"$IT_TMP/umask-native.out") files, the same modes natively, under cordon and with --trap-all"
}

it_test syscalls_lists_path_rows
syscalls_lists_path_rows() {
        OUT=$("$CORDON" syscalls 2>&1)
        local c
        for c in newfstatat statx faccessat2 readlinkat mkdirat mknodat unlinkat renameat2 linkat symlinkat \
                fchmodat fchownat utimensat truncate statfs getxattr lsetxattr llistxattr lremovexattr \
                inotify_add_watch chdir; do
                expect_match "$OUT" "^$c +emulate" "cordon syscalls lists $c"
        done
}

# the hidden rule holds on every path call, however the path is spelled
it_test hidden_rule_on_every_call
hidden_rule_on_every_call() {
        local d
        d=$(scratch_dir tree)
        mkdir -p "$d/secret/sub" && echo s >"$d/secret/file" && echo ok >"$d/ok" &&
                ln -s secret/file "$d/lnk" && ln -s secret "$d/lnkdir" && chmod -R a+rwX "$d" || fail "fixture"
        printf '{"filesystem": {"rules": [{"path": "/t/secret", "access": "hidden"}]}}\n' >"$IT_TMP/p.json"
        crun --policy "$IT_TMP/p.json" --bind "$d:/t" -- /usr/bin/python3 -c '
import os, errno
res = []
def t(what, f):
    try:
        f(); res.append(what + "=ok")
    except OSError as e:
        res.append(what + "=" + errno.errorcode[e.errno])
t("stat", lambda: os.stat("/t/secret"))
t("lstat-file", lambda: os.lstat("/t/secret/file"))
t("stat-dotdot", lambda: os.stat("/t/secret/../ok"))
t("stat-slashes", lambda: os.stat("//t///secret//file"))
t("stat-dot", lambda: os.stat("/t/./secret/file"))
t("readlink-slashes", lambda: os.readlink("/t//secret/file/"))
t("stat-lnk", lambda: os.stat("/t/lnk"))
t("stat-lnkdir-dotdot", lambda: os.stat("/t/lnkdir/../ok"))
t("stat-root", lambda: os.stat("/proc/self/root/t/secret/file"))
t("access", lambda: os.access("/t/secret", os.F_OK) or (_ for _ in ()).throw(OSError(errno.ENOENT, "")))
t("readlink-through", lambda: os.readlink("/t/lnkdir/sub"))
t("getxattr", lambda: os.getxattr("/t/secret/file", "user.x"))
t("listxattr", lambda: os.listxattr("/t/lnk"))
t("open", lambda: open("/t/lnk").read())
t("open-creat", lambda: open("/t/secret/new", "w"))
os.symlink("/t/secret/new", "/tmp/dangling"); os.symlink("dangling", "/tmp/dangling2")
t("creat-via-dangling-links", lambda: open("/tmp/dangling2", "w"))
t("mkdir", lambda: os.mkdir("/t/secret/d"))
t("rename-out", lambda: os.rename("/t/secret/file", "/t/stolen"))
t("link-out", lambda: os.link("/t/secret/file", "/t/hl"))
t("chmod", lambda: os.chmod("/t/lnk", 0o777))
t("chdir", lambda: os.chdir("/t/lnkdir"))
t("ok-still-visible", lambda: os.stat("/t/ok"))
t("lnk-itself-visible", lambda: os.lstat("/t/lnk"))
print(" ".join(res))
'
        expect_rc 0 "the probe ran"
        expect_eq "stat=ENOENT lstat-file=ENOENT stat-dotdot=ENOENT stat-slashes=ENOENT stat-dot=ENOENT readlink-slashes=ENOENT stat-lnk=ENOENT stat-lnkdir-dotdot=ENOENT stat-root=ENOENT access=ENOENT readlink-through=ENOENT getxattr=ENOENT listxattr=ENOENT open=ENOENT open-creat=ENOENT creat-via-dangling-links=ENOENT mkdir=ENOENT rename-out=ENOENT link-out=ENOENT chmod=ENOENT chdir=ENOENT ok-still-visible=ok lnk-itself-visible=ok" \
                "$OUT" "every call on the hidden path"
        expect_true "the host's secret file is untouched" test -f "$d/secret/file"
        expect_true "nothing was moved out of the hidden directory" test ! -e "$d/stolen" -a ! -e "$d/hl"
}

# A hidden name is absent from its parent's listing too: getdents64 (what libc uses) and the
# old getdents, by a raw syscall, read in small buffers so the hidden entry falls in every
# position of a batch.
it_test hidden_name_not_listed
hidden_name_not_listed() {
        local d i
        d=$(scratch_dir tree)
        for i in $(seq 1 40); do : >"$d/f$i"; done
        mkdir -p "$d/secret" && chmod -R a+rwX "$d" || fail "fixture"
        printf '{"filesystem": {"rules": [{"path": "/t/secret", "access": "hidden"}]}}\n' >"$IT_TMP/p.json"
        crun --policy "$IT_TMP/p.json" --bind "$d:/t" -- /usr/bin/python3 -c '
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
def names(nr, size, old):
    fd = os.open("/t", os.O_RDONLY | os.O_DIRECTORY)
    buf = ctypes.create_string_buffer(size)
    out = []
    while True:
        n = libc.syscall(nr, fd, buf, size)
        if n < 0:
            raise OSError(ctypes.get_errno(), "getdents")
        if n == 0:
            break
        raw, i = buf.raw[:n], 0
        while i < n:
            reclen = struct.unpack_from("H", raw, i + 16)[0]
            name = raw[i + 18:i + reclen] if old else raw[i + 19:i + reclen]
            out.append(name.split(b"\0")[0].decode())
            i += reclen
    os.close(fd)
    return sorted(x for x in out if x not in (".", ".."))
a = names(217, 32768, False)
b = names(217, 64, False)
c = names(78, 96, True)
print(len(a), "secret" in a, a == b == c)
print(sorted(os.listdir("/t")) == a)
'
        expect_rc 0 "the probe ran"
        expect_eq $'40 False True\nTrue' "$OUT" "40 names listed, the hidden one in none of the three ways"
}

# procfs's links into self/ (and /etc/mtab, which links to one) name the caller, in both modes
it_test proc_self_links
proc_self_links() {
        local mode
        for mode in "" --trap-all; do
                # shellcheck disable=SC2086
                crun $mode -- sh -c 'set -e
                        grep -c " / " /proc/mounts >/dev/null && echo mounts-ok
                        if [ -L /etc/mtab ]; then grep -q " / " /etc/mtab; fi && echo mtab-ok
                        head -n1 /proc/net/dev | grep -q Inter && echo net-ok
                        [ "$(stat -L -c %F /proc/mounts)" = "regular empty file" ] && echo stat-ok
                        [ "$(readlink /proc/mounts)" = self/mounts ] && echo readlink-ok
                        [ -d /proc/self/fd/ ] && [ -r /proc/thread-self/status ] && echo self-ok'
                expect_rc 0 "procfs links ${mode:-(fast path)}"
                expect_eq $'mounts-ok\nmtab-ok\nnet-ok\nstat-ok\nreadlink-ok\nself-ok' "$OUT" "procfs links ${mode:-(fast path)}"
        done
}

# POSIX ACLs carry ids: read and written through the sentry they must be translated as the
# kernel translates them for the sandbox's own call (else an ACL could name a host user)
it_test acl_ids_translated
acl_ids_translated() {
        local d py native emulated
        d=$(scratch_dir acl)
        touch "$d/f" && chmod 0666 "$d/f" || fail "fixture"
        # the sandbox root's file (its host id as root, the bind's owner: the bind
        # is idmapped to it)
        [ "$(id -u)" = 0 ] && chown 65534:65534 "$d" "$d/f"
        py=$(host_python_or_skip)
        "$py" -c '
import os, struct, sys
e = [(1, 6, 0xffffffff), (2, 4, 1000), (2, 4, os.stat(sys.argv[1]).st_uid), (4, 4, 0xffffffff), (8, 4, 1000),
     (0x10, 6, 0xffffffff), (0x20, 4, 0xffffffff)]
os.setxattr(sys.argv[1], "system.posix_acl_access", struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *x) for x in e))
' "$d/f" 2>/dev/null || skip "the scratch filesystem takes no POSIX ACLs"
        local probe='
import os, struct
def show():
    b = os.getxattr("/a/f", "system.posix_acl_access")
    return [struct.unpack_from("<HHI", b, 4 + 8 * i) for i in range((len(b) - 4) // 8)]
def acl(who):
    e = [(1, 6, 0xffffffff), (2, 4, who), (4, 4, 0xffffffff), (8, 4, 0), (0x10, 6, 0xffffffff), (0x20, 4, 0xffffffff)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *x) for x in e)
print(show())
for who in (1000, 65534, 0):
    try:
        os.setxattr("/a/f", "system.posix_acl_access", acl(who)); print("set", who, "ok")
    except OSError as e:
        print("set", who, e.strerror)
print(show())'
        cp -a "$d/f" "$d/f.orig"
        crun --bind "$d:/a" -- python3 -c "$probe"
        expect_rc 0 "ACLs (fast path)"
        native=$OUT
        cp -a "$d/f.orig" "$d/f"
        crun --trap-all --bind "$d:/a" -- python3 -c "$probe"
        expect_rc 0 "ACLs (--trap-all)"
        emulated=$OUT
        expect_eq "$native" "$emulated" "ACL ids through the sentry against the kernel's"
        expect_contains "$emulated" "set 1000 Invalid argument" "an ACL naming an unmapped id is refused"
        expect_not_contains "$("$py" -c 'import os, sys; print(os.getxattr(sys.argv[1], "system.posix_acl_access").hex())' "$d/f")" \
                "e8030000" "no host uid 1000 in the file's ACL after the emulated run"
}

# =============================================================================================
# real programs under full emulation

it_test git_under_trap_all
git_under_trap_all() {
        need_in_sandbox git
        crun --trap-all -- sh -c '
set -e
cd /tmp && mkdir repo && cd repo
git init -q . && git config user.email t@example.com && git config user.name T
printf "one\n" >a.txt && mkdir sub && printf "two\n" >sub/b.txt && ln -s a.txt link
git add -A && git commit -qm first
printf "one changed\n" >a.txt && git mv sub/b.txt sub/c.txt && chmod +x a.txt
git commit -qam second
git log --oneline | wc -l
git diff HEAD~1 --stat | tail -n1
git status --porcelain | wc -l
git fsck --no-progress 2>&1 | grep -c . || true
git ls-files -s | awk "{print \$1, \$4}"'
        expect_rc 0 "git"
        expect_eq $'2\n 2 files changed, 1 insertion(+), 1 deletion(-)\n0\n0\n100755 a.txt\n120000 link\n100644 sub/c.txt' \
                "$OUT" "git log / diff / status / ls-files"
}

it_test tar_roundtrip_under_trap_all
tar_roundtrip_under_trap_all() {
        need_in_sandbox tar
        crun --trap-all -- sh -c '
set -e
cd /tmp && mkdir -p src/d && cd src
printf data >f && chmod 640 f && ln f hard && ln -s f soft && ln -s /nonexistent dangling
mkdir -m 700 d/private && printf x >d/private/x && chmod 4755 d 2>/dev/null || true
mkfifo fifo && touch -d 2001-02-03 f
cd /tmp && tar -cpf a.tar -C src . && mkdir dst && tar -xpf a.tar -C dst
cd dst
stat -c "%n %A %h %s %Y" f hard d/private fifo | sort
readlink soft dangling
[ "$(stat -c %i f)" = "$(stat -c %i hard)" ] && echo hardlink-kept'
        expect_rc 0 "tar"
        expect_eq $'d/private drwx------ 2 60 x\nf -rw-r----- 2 4 981158400\nfifo prw-r--r-- 1 0 x\nhard -rw-r----- 2 4 981158400\nf\n/nonexistent\nhardlink-kept' \
                "$(printf '%s\n' "$OUT" | sed -E 's/^(d\/private drwx------ 2) [0-9]+ [0-9]+/\1 60 x/; s/^(fifo prw-r--r-- 1 0) [0-9]+/\1 x/')" \
                "tar round trip of modes, links, fifo, mtime"
}

it_test python_fs_under_trap_all
python_fs_under_trap_all() {
        need_in_sandbox python3
        crun --trap-all -- python3 -c '
import os, shutil, tempfile, stat
d = tempfile.mkdtemp()
os.makedirs(os.path.join(d, "a/b/c"))
for i in range(20):
    with open(os.path.join(d, "a/b", "f%d" % i), "w") as f:
        f.write("x" * i)
os.symlink("b/f3", os.path.join(d, "a/l"))
os.chmod(os.path.join(d, "a/b/f5"), 0o600)
shutil.copytree(os.path.join(d, "a"), os.path.join(d, "copy"), symlinks=True)
walk = sorted((os.path.relpath(r, d), sorted(ds), sorted(fs)) for r, ds, fs in os.walk(d))
print(len(walk), sum(len(f) for _, _, f in walk))
print(oct(stat.S_IMODE(os.stat(os.path.join(d, "copy/b/f5")).st_mode)), os.readlink(os.path.join(d, "copy/l")))
with tempfile.NamedTemporaryFile(dir=d) as t:
    t.write(b"abc"); t.flush(); print(os.path.getsize(t.name))
with tempfile.TemporaryDirectory() as td:
    open(os.path.join(td, "x"), "w").close()
    print(os.listdir(td))
shutil.rmtree(d)
print(os.path.exists(d))
'
        expect_rc 0 "python"
        expect_eq $'7 42\n0o600 b/f3\n3\n[\'x\']\nFalse' "$OUT" "os.walk / shutil.copytree / tempfile"
}

# Python that forks a non-dumpable child in a fresh directory holding sub/secret: the child's
# part follows (indented), and the parent's after it; w/r2 are the child's pipes to the parent.
NONDUMPABLE_FORK='
import ctypes, os, sys, tempfile, time
libc = ctypes.CDLL(None, use_errno=True)
d = tempfile.mkdtemp()
os.mkdir(d + "/sub")
with open(d + "/sub/secret", "w") as f:
    f.write("s")
r, w = os.pipe()
r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r); os.close(w2)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        os._exit(3)
'

# A magic link (/proc/PID/cwd) reached through a plain symlink leads into another sandbox
# process only where the caller may trace it: a non-dumpable process's working directory is
# out of the caller's reach, natively and in the sandbox, for reads (emulated with
# --trap-all) and writes (emulated always). The sentry's workers pass such links by a rule of
# their own (their euid owns the sandbox's user namespace): they must not open through them.
it_test magic_link_into_nondumpable_refused
magic_link_into_nondumpable_refused() {
        need_in_sandbox python3
        # the child stays in sub/ until told; the parent links l to its cwd
        local child='
    os.chdir(d + "/sub")
    os.write(w, b"k")
    os.read(r2, 1)
    os._exit(0)
os.close(w); os.close(r2)
os.read(r, 1)
os.symlink("/proc/%d/cwd" % pid, d + "/l")
' end='
os.write(w2, b"x")
os.waitpid(pid, 0)
'
        local script="$NONDUMPABLE_FORK$child"'
for how, mode in (("read", "r"), ("append", "a"), ("create", "w")):
    for path in (d + "/l/secret", "/proc/%d/cwd/secret" % pid):
        try:
            open(path, mode).close()
            print(how, "opened")
        except PermissionError:
            print(how, "EACCES")'"$end"
        local want=$'read EACCES\nread EACCES\nappend EACCES\nappend EACCES\ncreate EACCES\ncreate EACCES'
        crun -- python3 -c "$script"
        expect_rc 0 "python"
        expect_eq "$want" "$OUT" "default: opens through a link into a non-dumpable process"
        crun --trap-all -- python3 -c "$script"
        expect_rc 0 "python under --trap-all"
        expect_eq "$want" "$OUT" "--trap-all: opens through a link into a non-dumpable process"
        # the other path calls, emulated with --trap-all, refuse the same way
        crun --trap-all -- python3 -c "$NONDUMPABLE_FORK$child"'
for name, fn in (("stat", lambda: os.stat(d + "/l/secret")), ("listdir", lambda: os.listdir(d + "/l")),
                 ("access", lambda: os.access(d + "/l/secret", os.R_OK) or (_ for _ in ()).throw(PermissionError())),
                 ("unlink", lambda: os.unlink(d + "/l/secret")), ("mkdir", lambda: os.mkdir(d + "/l/newdir")),
                 ("rename", lambda: os.rename(d + "/l/secret", d + "/l/moved"))):
    try:
        fn()
        print(name, "done")
    except OSError as e:
        print(name, e.__class__.__name__)'"$end"
        expect_rc 0 "python, path calls under --trap-all"
        expect_eq $'stat PermissionError\nlistdir PermissionError\naccess PermissionError\nunlink PermissionError\nmkdir PermissionError\nrename PermissionError' \
                "$OUT" "--trap-all: path calls through a link into a non-dumpable process"
        # and a link into a process the caller may trace still works
        crun --trap-all -- python3 -c '
import os, tempfile
d = tempfile.mkdtemp()
open(d + "/f", "w").write("mine")
os.chdir(d)
os.symlink("/proc/%d/cwd" % os.getpid(), "/tmp/mylink")
print(open("/tmp/mylink/f").read())
open("/tmp/mylink/g", "w").write("new")
print(open(d + "/g").read())
'
        expect_rc 0 "a link into the caller itself"
        expect_eq $'mine\nnew' "$OUT" "opens through a link into the caller's own cwd"
}

# A worker drops CAP_SYS_PTRACE for each operation done as the child and
# takes it back only when a read of a trapped thread is refused without it
# (fs/worker.c, notify_privileged). A non-dumpable caller is the case where
# the ptrace checks look hardest: its relative-path calls (its memory, its
# /proc/TID/cwd and status), each after a call that left the worker without
# the capability, must all be served.
it_test non_dumpable_caller_under_trap_all
non_dumpable_caller_under_trap_all() {
        need_in_sandbox python3
        crun --trap-all -- python3 -c "$NONDUMPABLE_FORK"'
    os.chdir(d + "/sub")
    out = []
    for i in range(30):
        os.stat("secret")
        fd = os.open("secret", os.O_RDONLY)
        out.append(os.read(fd, 1)); os.close(fd)
        fd = os.open("new%d" % i, os.O_WRONLY | os.O_CREAT, 0o640); os.close(fd)
        os.mkdir("dir%d" % i); os.rmdir("dir%d" % i)
        os.unlink("new%d" % i)
    ok = out == [b"s"] * 30 and os.listdir(".") == ["secret"]
    os.write(w, b"ok" if ok else b"no")
    os.read(r2, 1)
    os._exit(0)
os.close(w); os.close(r2)
print("child", os.read(r, 2).decode())
os.write(w2, b"x")
_, st = os.waitpid(pid, 0)
print("exit", os.waitstatus_to_exitcode(st))
'
        expect_rc 0 "python with a non-dumpable child"
        expect_eq $'child ok\nexit 0' "$OUT" "a non-dumpable caller's relative-path calls served"
}

it_test sqlite3_wal_under_trap_all
sqlite3_wal_under_trap_all() {
        need_in_sandbox python3
        crun --trap-all -- python3 -c '
import sqlite3, os
p = "/tmp/w.db"
c = sqlite3.connect(p)
print(c.execute("pragma journal_mode=wal").fetchone()[0])
c.execute("create table t (x)")
c2 = sqlite3.connect(p)
with c:
    c.executemany("insert into t values (?)", [(i,) for i in range(1000)])
print(c2.execute("select count(*), sum(x) from t").fetchone())
print(os.path.exists(p + "-wal"), os.path.exists(p + "-shm"))
c.execute("pragma wal_checkpoint(truncate)")
c.close(); c2.close()
print(os.path.exists(p + "-wal"))
'
        expect_rc 0 "sqlite3 with WAL"
        expect_eq $'wal\n(1000, 499500)\nTrue True\nFalse' "$OUT" "sqlite3 WAL: two connections, checkpoint"
}

it_test make_j2_under_trap_all
make_j2_under_trap_all() {
        need_in_sandbox make
        need_in_sandbox cc
        crun --trap-all -- sh -c '
set -e
mkdir /tmp/proj && cd /tmp/proj
for i in 1 2 3 4 5 6; do
        printf "int f%s(void) { return %s; }\n" $i $i >f$i.c
done
printf "int f1(void);int f2(void);int f3(void);int f4(void);int f5(void);int f6(void);\n#include <stdio.h>\nint main(void){printf(\"%%d\\\\n\", f1()+f2()+f3()+f4()+f5()+f6());return 0;}\n" >main.c
printf "OBJS = main.o f1.o f2.o f3.o f4.o f5.o f6.o\nprog: \$(OBJS)\n\t\$(CC) -o \$@ \$(OBJS)\n%%.o: %%.c\n\t\$(CC) -c -o \$@ \$<\nclean:\n\trm -f prog \$(OBJS)\n" >Makefile
make -s -j2
./prog
touch f3.c && make -j2 | grep -c "f3.o" 
make -s clean && ls'
        expect_rc 0 "make -j2"
        expect_eq $'21\n2\nMakefile\nf1.c\nf2.c\nf3.c\nf4.c\nf5.c\nf6.c\nmain.c' "$OUT" "make -j2 builds, rebuilds one object, cleans"
}

it_main "$@"
