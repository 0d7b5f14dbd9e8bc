#!/bin/bash
# cordon integration tests for the view's layers: a template directory as the sandbox's root
# (overlayfs, the template read-only below, a private upper layer in the disk-capped writable
# layer), source.digest and `cordon digest`, and the policy's path rules inside a template root.
# Run by `make check`; by hand:
#
#   CORDON=/path/to/cordon TESTS_SRCDIR=/path/to/tests bash tests/integration/layers.sh [REGEX...]

if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

# A small x86_64 root made from the host's own binaries: a few programs, the libraries ldd
# names for them, merged-/usr links, an /etc/passwd and a /data directory with files to change.
# About 4 MB; built in well under a second.
make_template() {
        local t=$1 p lib
        mkdir -p "$t/usr/bin" "$t/usr/lib/x86_64-linux-gnu" "$t/usr/lib64" "$t/etc" "$t/data" ||
                fail "cannot create the template in $t"
        ln -s usr/bin "$t/bin" && ln -s usr/lib "$t/lib" && ln -s usr/lib64 "$t/lib64" ||
                fail "cannot create the template's links"
        for p in sh cat ls dd chmod rm stat mkdir touch head ln; do
                [ -x "/usr/bin/$p" ] || [ -x "/bin/$p" ] || skip "the host has no $p to put in a template"
                cp -L "$(command -v "$p")" "$t/usr/bin/$p" || fail "cannot copy $p into the template"
                for lib in $(ldd "$t/usr/bin/$p" 2>/dev/null | grep -o '/[^ ]*'); do
                        case $lib in
                        */ld-linux*) cp -Ln "$lib" "$t/usr/lib64/" ;;
                        *) cp -Ln "$lib" "$t/usr/lib/x86_64-linux-gnu/" ;;
                        esac || fail "cannot copy $lib into the template"
                done
        done
        echo 'root:x:0:0:root:/root:/bin/sh' >"$t/etc/passwd"
        mkdir -p "$t/opt/tools" "$t/secret"
        printf 'original\n' >"$t/data/file"
        printf 'delete me\n' >"$t/data/victim"
        printf 'keep my mode\n' >"$t/data/moded"
        printf 'top secret\n' >"$t/secret/key"
        cp -L "$(command -v cat)" "$t/opt/tools/mycat"
        chmod 0644 "$t/data/file" "$t/data/victim" "$t/data/moded"
        chmod 0755 "$t" "$t/data" "$t/opt/tools"
}

# a policy with a template source: template_policy FILE TEMPLATE [DIGEST] [EXTRA JSON MEMBERS]
template_policy() {
        local f=$1 t=$2 d=${3:-} extra=${4:-}
        local digest=
        [ -n "$d" ] && digest=", \"digest\": \"$d\""
        printf '{"source": {"kind": "template", "path": "%s"%s}%s}\n' "$t" "$digest" "${extra:+, $extra}" >"$f"
}

# A second implementation of the digest format (fs/digest.c's comment), in Python, so that the
# format is checked as written and not only as implemented.
py_digest() {
        "$(command -v /usr/bin/python3 || command -v python3)" - "$1" <<'EOF'
import hashlib, os, stat, sys
root = sys.argv[1].encode()
recs = []
def rec(rel, full):
    st = os.lstat(full)
    m = st.st_mode
    if stat.S_ISDIR(m):
        t, size, extra = b'd', 0, b''
    elif stat.S_ISREG(m):
        with open(full, 'rb') as f:
            data = f.read()
        t, size, extra = b'f', len(data), hashlib.sha256(data).hexdigest().encode()
    elif stat.S_ISLNK(m):
        target = os.readlink(full)
        t, size, extra = b'l', len(target), target
    elif stat.S_ISCHR(m) or stat.S_ISBLK(m):
        t, size = (b'c' if stat.S_ISCHR(m) else b'b'), 0
        extra = b'%d,%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))
    else:
        t, size, extra = (b'p' if stat.S_ISFIFO(m) else b's'), 0, b''
    recs.append(b'\0'.join([rel, t, b'%04o' % (m & 0o7777), str(size).encode(), extra]) + b'\0')
rec(b'', root)
for dirpath, dirs, files in os.walk(root):
    for n in dirs + files:
        full = os.path.join(dirpath, n)
        rec(os.path.relpath(full, root), full)
recs.sort()
print('sha256:' + hashlib.sha256(b'cordon-tree-digest-v1\0' + b''.join(recs)).hexdigest())
EOF
}

# the template's state, independent of cordon: every entry's type, mode, size and content hash
snapshot_tree() {
        (cd "$1" && find . -printf '%y %m %s %p -> %l\n' | sort && find . -type f -exec sha256sum {} + | sort)
}

# =============================================================================================
# a template as the root

it_test template_root_runs_and_writes_stay_private
template_root_runs_and_writes_stay_private() {
        local t pol before after
        t=$(scratch_dir tpl)
        make_template "$t"
        pol="$IT_TMP/policy.json"
        template_policy "$pol" "$t"
        before=$(snapshot_tree "$t")
        crun -p "$pol" -- sh -c '
cat /data/file
echo changed >/data/file && echo wrote
rm /data/victim && echo removed
chmod 0600 /data/moded && echo chmodded
echo new >/data/new && echo created
mkdir /usr/newdir && echo mkdir
ln -s /data/file /data/link && echo linked
rm -r /opt/tools && echo rmtree
echo "file=$(cat /data/file) new=$(cat /data/new) link=$(cat /data/link)"
stat -c "%a %U" /data/moded
ls /data
[ -e /data/victim ] || echo victim-gone
[ -e /opt/tools ] || echo tools-gone
echo devnull >/dev/null && echo dev-ok
[ -r /proc/self/status ] && echo proc-ok
echo tmp >/tmp/t && echo tmp-ok
echo top >/top && (cd / && echo top2 >top2 && echo more >>top) && echo top-level && cat /top /top2
cat /etc/resolv.conf'
        expect_rc 0 "commands in the template root"
        expect_contains "$OUT" "nameserver 127.0.0.53" "the sandbox's resolver, in a template without one"
        expect_contains "$OUT" "original" "the template's content is visible"
        expect_contains "$OUT" "file=changed new=new link=changed" "the sandbox sees its own writes"
        expect_contains "$OUT" "600 root" "chmod of a template file, owned by the sandbox's root"
        expect_contains "$OUT" "victim-gone" "a deleted template file is gone in the sandbox"
        expect_contains "$OUT" "tools-gone" "a deleted template directory is gone in the sandbox"
        # a name directly in the template's root: the mount view lets it be
        # written, Landlock cannot grant it (fs/open.c keeps it emulated)
        expect_contains "$OUT" $'top-level\ntop\nmore\ntop2' "files made at the template root's top, absolute and relative"
        for w in wrote removed chmodded created mkdir linked rmtree dev-ok proc-ok tmp-ok; do
                expect_contains "$OUT" "$w" "step $w"
        done
        after=$(snapshot_tree "$t")
        expect_eq "$before" "$after" "the template after the sandbox wrote, deleted and chmodded in it"
        expect_eq "original" "$(cat "$t/data/file")" "the template's file on the host"
        expect_true "the template's deleted file is still on the host" test -f "$t/data/victim"
        # a second sandbox starts from the template again, not from the first one's changes
        crun -p "$pol" -- sh -c 'cat /data/file; ls /data'
        expect_rc 0 "second run"
        expect_eq $'original\nfile\nmoded\nvictim' "$OUT" "a fresh sandbox sees the untouched template"
}

it_test template_disk_cap_enospc
template_disk_cap_enospc() {
        local t pol before
        t=$(scratch_dir tpl)
        make_template "$t"
        pol="$IT_TMP/policy.json"
        template_policy "$pol" "$t" "" '"limits": {"diskBytes": 4194304}'
        before=$(snapshot_tree "$t")
        local used_before stats="$IT_TMP/stats.json"
        used_before=$(du -sk "$IT_TMP" | cut -f1)
        crun -p "$pol" --stats "$stats" -- sh -c '
dd if=/dev/zero of=/data/big bs=1M count=32 2>&1 | head -n 1
dd if=/dev/zero of=/usr/big2 bs=1M count=32 2>/dev/null || echo second-failed
echo small >/data/small 2>/dev/null || echo small-failed
rm -f /data/big /usr/big2; echo after >/data/after && cat /data/after
dd if=/dev/zero of=/data/keep bs=1M count=1 2>/dev/null'
        expect_rc 0 "the filler"
        local used
        used=$(grep -o '"writableBytesUsed": *[0-9]*' "$stats" | grep -o '[0-9]*$')
        expect_true "the stats count the upper layer as writable bytes used (got ${used:-none})" \
                test "${used:-0}" -ge 1048576
        expect_contains "$OUT" "No space left on device" "a write beyond diskBytes in the template root fails with ENOSPC"
        expect_contains "$OUT" "second-failed" "the cap is one budget for the whole upper layer"
        expect_contains "$OUT" "after" "space is back once the files are removed"
        expect_eq "$before" "$(snapshot_tree "$t")" "the template after the filler"
        local used_after
        used_after=$(du -sk "$IT_TMP" | cut -f1)
        expect_true "nothing landed on the host's disk ($used_before KiB before, $used_after KiB after)" \
                test "$used_after" -le "$((used_before + 64))"
        # the command line's --disk caps it too
        template_policy "$pol" "$t"
        crun --disk 2M -p "$pol" -- sh -c 'dd if=/dev/zero of=/big bs=1M count=8 2>&1 | head -n 1'
        expect_contains "$OUT" "No space left on device" "--disk caps the template's upper layer"
}

it_test template_under_host_tmp
template_under_host_tmp() {
        # the staging tmpfs covers the host's /tmp in the child: the template is opened first
        local t pol
        t=$(mktemp -d /tmp/cordon-layers-tpl.XXXXXX) || fail "mktemp"
        at_exit "rm -rf '$t'"
        make_template "$t"
        pol="$IT_TMP/policy.json"
        template_policy "$pol" "$t" "$("$CORDON" digest "$t")"
        crun -p "$pol" -- cat /data/file
        expect_rc 0 "a template under the host's /tmp"
        expect_eq "original" "$OUT" "its content"
}

it_test template_refusals
template_refusals() {
        local t pol
        t=$(scratch_dir tpl)
        make_template "$t"
        pol="$IT_TMP/policy.json"
        ln -s "$t" "$IT_TMP/link"
        template_policy "$pol" "$IT_TMP/link"
        crun -p "$pol" -- true
        expect_rc 2 "a template path that is a symlink"
        expect_contains "$ERR" "not a symlink" "says why"
        template_policy "$pol" "$IT_TMP/missing"
        crun -p "$pol" -- true
        expect_rc 2 "a missing template"
        expect_contains "$ERR" "$IT_TMP/missing" "names the path"
        template_policy "$pol" /
        crun -p "$pol" -- true
        expect_rc 2 "the host's root as a template"
        expect_contains "$ERR" "host's root directory" "says why"
        printf '{"source": {"kind": "snapshot", "path": "%s"}}\n' "$t" >"$pol"
        crun -p "$pol" -- true
        expect_rc 125 "a snapshot source"
        expect_contains "$ERR" "issue #6" "names the issue snapshots wait for"
        # a view that cannot be built says why (the error crosses from init to the sentry)
        ln -s /etc "$t/dev"
        template_policy "$pol" "$t"
        crun -p "$pol" -- true
        expect_rc 125 "a template whose /dev is a symlink"
        expect_contains "$ERR" "mkdir /dev: Not a directory" "says which step failed"
        rm "$t/dev"
        crun -p "$pol" -- no-such-program
        expect_rc 127 "a program the template does not hold"
        expect_contains "$ERR" "not found in the sandbox's root, the template $t" "says where it looked"
}

# =============================================================================================
# digests

it_test digest_cli_stable_and_independent
digest_cli_stable_and_independent() {
        local t a b py
        t=$(scratch_dir tpl)
        make_template "$t"
        mkfifo "$t/data/fifo"
        a=$("$CORDON" digest "$t") || fail "cordon digest failed"
        b=$("$CORDON" digest "$t")
        expect_match "$a" '^sha256:[0-9a-f]{64}$' "the output's form"
        expect_eq "$a" "$b" "two runs"
        if command -v python3 >/dev/null 2>&1; then
                py=$(py_digest "$t") || fail "the Python digest failed"
                expect_eq "$py" "$a" "an independent implementation of the documented format"
        else
                it_log "no python3: the digest is not checked against the second implementation"
        fi
        touch -d '2001-01-01' "$t/data/file"
        expect_eq "$a" "$("$CORDON" digest "$t")" "a timestamp is not part of the digest"
        chmod 0640 "$t/data/file"
        b=$("$CORDON" digest "$t")
        expect_true "a mode change changes the digest" test "$a" != "$b"
        chmod 0644 "$t/data/file"
        printf 'origina!\n' >"$t/data/file"
        b=$("$CORDON" digest "$t")
        expect_true "a content change (same size) changes the digest" test "$a" != "$b"
        printf 'original\n' >"$t/data/file"
        expect_eq "$a" "$("$CORDON" digest "$t")" "restored"
        ln -sfn usr/sbin "$t/bin"
        b=$("$CORDON" digest "$t")
        expect_true "a symlink target change changes the digest" test "$a" != "$b"
        ln -sfn usr/bin "$t/bin"
        mv "$t/data/moded" "$t/data/mode2"
        b=$("$CORDON" digest "$t")
        expect_true "a rename changes the digest" test "$a" != "$b"
        mv "$t/data/mode2" "$t/data/moded"
        expect_eq "$a" "$("$CORDON" digest "$t")" "restored again"
        RC=0
        "$CORDON" digest "$IT_TMP/nope" 2>/dev/null || RC=$?
        expect_rc 1 "digest of a missing directory"
}

it_test digest_match_starts_mismatch_refuses
digest_match_starts_mismatch_refuses() {
        local t pol d wrong
        t=$(scratch_dir tpl)
        make_template "$t"
        pol="$IT_TMP/policy.json"
        d=$("$CORDON" digest "$t")
        template_policy "$pol" "$t" "$d"
        crun -p "$pol" -- cat /data/file
        expect_rc 0 "the matching digest"
        expect_eq "original" "$OUT" "runs in the template"
        wrong="sha256:$(printf '%064d' 0)"
        template_policy "$pol" "$t" "$wrong"
        crun -p "$pol" -- cat /data/file
        expect_rc 2 "a wrong digest refuses to start"
        expect_contains "$ERR" "expects $wrong" "the message names the expected digest"
        expect_contains "$ERR" "found $d" "the message names the digest found"
        expect_eq "" "$OUT" "nothing ran"
        # the template changed after the policy was written
        template_policy "$pol" "$t" "$d"
        printf 'tampered\n' >>"$t/data/file"
        crun -p "$pol" -- cat /data/file
        expect_rc 2 "a changed template refuses to start"
        expect_contains "$ERR" "found $("$CORDON" digest "$t")" "names the new digest"
}

it_test digest_refuses_mount_points
digest_refuses_mount_points() {
        [ "$(id -u)" = 0 ] || skip "mounting inside the template needs root"
        local t
        t=$(scratch_dir tpl)
        make_template "$t"
        mkdir "$t/mnt"
        mount -t tmpfs -o size=1m tmpfs "$t/mnt" || skip "cannot mount a tmpfs here"
        at_exit "umount '$t/mnt'"
        RC=0
        ERR=$("$CORDON" digest "$t" 2>&1 >/dev/null) || RC=$?
        expect_rc 1 "digest of a tree with a mount point inside"
        expect_contains "$ERR" "/mnt is a mount point" "names the mount point"
}

# The template replaced at its path after cordon hashed it and before the sandbox exists: the
# tree mounted is the tree hashed (as root, an idmapped mount of the very fd that was hashed), or,
# unprivileged, the start is refused because the path no longer names that directory.
it_test template_swapped_after_check
template_swapped_after_check() {
        local t pol out="$IT_TMP/bg.out" rc
        t=$(scratch_dir tpl)
        make_template "$t"
        pol="$IT_TMP/policy.json"
        template_policy "$pol" "$t" "$("$CORDON" digest "$t")"
        CORDON_TEST_STALL=start CORDON_TEST_STALL_SECONDS=2 bg_cordon "$out" -p "$pol" -- cat /data/file
        wait_until 10 grep -q "stalled at start" "$out" || fail "cordon did not reach its stall"
        mv "$t" "$IT_TMP/tpl.checked" || fail "cannot move the template away"
        make_template "$t"
        printf 'swapped\n' >"$t/data/file"
        wait "$BG_PID"
        rc=$?
        OUT=$(grep -v "stalled at start" "$out")
        if [ "$(id -u)" = 0 ]; then
                RC=$rc expect_rc 0 "the run after the swap"
                expect_eq "original" "$OUT" "the sandbox reads the tree that was hashed"
        else
                RC=$rc expect_rc 125 "the run after the swap"
                expect_contains "$OUT" "was replaced after cordon checked it" "refused, saying why"
        fi
        expect_true "the swapped-in template is untouched" grep -qx swapped "$t/data/file"
}

# =============================================================================================
# policy path rules inside a template root

it_test template_rule_read_only_erofs
template_rule_read_only_erofs() {
        local t pol
        t=$(scratch_dir tpl)
        make_template "$t"
        pol="$IT_TMP/policy.json"
        template_policy "$pol" "$t" "" '"filesystem": {"rules": [{"path": "/data", "access": "read"}]}'
        crun -p "$pol" -- sh -c 'cat /data/file; echo x >/data/file; echo x >/data/other; rm /data/victim; echo y >/etc/ok && echo etc-writable'
        expect_rc 0 "the run"
        expect_contains "$OUT" "original" "a read rule leaves the path readable"
        expect_contains "$ERR" "/data/file: Read-only file system" "writing a file under a read rule: EROFS"
        expect_contains "$ERR" "/data/other: Read-only file system" "creating under a read rule: EROFS"
        expect_contains "$OUT" "etc-writable" "the rest of the template root stays writable"
        expect_eq "original" "$(cat "$t/data/file")" "the template"
}

it_test template_rule_noexec_eacces
template_rule_noexec_eacces() {
        local t pol
        t=$(scratch_dir tpl)
        make_template "$t"
        pol="$IT_TMP/policy.json"
        template_policy "$pol" "$t" "" \
                '"filesystem": {"rules": [{"path": "/opt/tools", "access": "read", "exec": false}]}'
        crun -p "$pol" -- sh -c '/opt/tools/mycat /data/file; echo "rc=$?"; cat /data/file'
        expect_rc 0 "the run"
        expect_contains "$ERR" "Permission denied" "exec under an exec:false rule: EACCES"
        expect_contains "$OUT" "rc=126" "the shell's status for a denied exec"
        expect_contains "$OUT" "original" "exec elsewhere still works"
        crun -p "$pol" -- /opt/tools/mycat /data/file
        expect_rc 126 "cordon run of a no-exec program"
}

it_test template_rule_hidden
template_rule_hidden() {
        local t pol
        t=$(scratch_dir tpl)
        make_template "$t"
        pol="$IT_TMP/policy.json"
        template_policy "$pol" "$t" "" \
                '"filesystem": {"rules": [{"path": "/secret", "access": "hidden"}, {"path": "/etc/passwd", "access": "hidden"}]}'
        crun -p "$pol" -- sh -c 'cat /secret/key; ls -A /secret; echo "[$(cat /etc/passwd 2>/dev/null)]"; echo x >/secret/new; echo end'
        expect_rc 0 "the run"
        expect_not_contains "$OUT" "top secret" "a hidden directory's content"
        expect_not_contains "$OUT" "key" "a hidden directory's names"
        expect_not_contains "$OUT" "root:x:0" "a hidden file's content"
        expect_contains "$OUT" "end" "the script ran to its end"
        expect_eq "top secret" "$(cat "$t/secret/key")" "the template"
}

# A template's own symlinks where cordon mounts (/tmp, /var) or that point at host paths resolve
# inside the view: nothing is mounted or written outside it, and no host file shows through.
it_test template_symlinks_stay_inside
template_symlinks_stay_inside() {
        local t pol marker
        t=$(scratch_dir tpl)
        make_template "$t"
        marker="cordon-layers-$$-$RANDOM"
        ln -s ../../../../../../../../var/tmp "$t/tmp"
        mkdir -p "$t/var"
        ln -s /etc/hostname "$t/data/hostname"
        ln -s /../../../../etc/passwd "$t/data/passwd"
        pol="$IT_TMP/policy.json"
        template_policy "$pol" "$t"
        # /tmp leads (inside the root) to a /var/tmp the template lacks: refused, clearly
        crun -p "$pol" -- true
        expect_rc 125 "a template /tmp linked to nothing"
        expect_contains "$ERR" "mkdir /tmp (a symlink in the root there leads to no directory in it)" "says why"
        mkdir -p "$t/var/tmp"
        crun -p "$pol" -- sh -c "echo x >/tmp/$marker && echo wrote-tmp; echo \"hostname=[\$(cat /data/hostname 2>/dev/null)]\"; cat /data/passwd; ls /var"
        expect_rc 0 "the run"
        expect_contains "$OUT" "wrote-tmp" "the private /tmp, wherever the template's link points"
        expect_contains "$OUT" "root:x:0:0:root:/root:/bin/sh" "an absolute link reads the template's own file"
        expect_contains "$OUT" "hostname=[]" "a link to a host file the template lacks reads nothing"
        expect_true "nothing written to the host's /var/tmp" test ! -e "/var/tmp/$marker"
        expect_true "nothing written to the template" test ! -e "$t/var/tmp/$marker"
}

it_test template_bind_inside
template_bind_inside() {
        local t pol host
        t=$(scratch_dir tpl)
        make_template "$t"
        host=$(scratch_dir hostdir)
        printf 'from the host\n' >"$host/in"
        pol="$IT_TMP/policy.json"
        template_policy "$pol" "$t"
        crun -p "$pol" --bind "$host:/job" -- sh -c 'cat /job/in; echo out >/job/out'
        expect_rc 0 "a bind into a template root"
        expect_eq "from the host" "$OUT" "the bound file"
        expect_eq "out" "$(cat "$host/out" 2>/dev/null)" "a write through the bind reaches the host"
        expect_true "the bind's mount point is not created in the template" test ! -e "$t/job"
}

# =============================================================================================
# nothing left behind

it_test template_nothing_left_behind
template_nothing_left_behind() {
        local t pol stats id mounts_before mounts_after
        t=$(scratch_dir tpl)
        make_template "$t"
        pol="$IT_TMP/policy.json"
        stats="$IT_TMP/stats.json"
        template_policy "$pol" "$t"
        mounts_before=$(grep -c . /proc/self/mountinfo)
        crun -p "$pol" --stats "$stats" -- sh -c 'dd if=/dev/zero of=/data/fill bs=1M count=2 2>/dev/null; echo done'
        expect_rc 0 "the run"
        expect_eq "done" "$OUT" "output"
        id=$(grep -o '"id": *"[0-9a-f]*"' "$stats" | grep -o '[0-9a-f]\{16\}')
        [ -n "$id" ] || fail "no sandbox id in the stats"
        mounts_after=$(grep -c . /proc/self/mountinfo)
        expect_eq "$mounts_before" "$mounts_after" "the host's mount table after the sandbox"
        expect_eq "" "$(grep -e "$t" -e overlay /proc/self/mountinfo | grep -e "$t" -e 'upperdir=/tmp/rw')" \
                "a mount of the template or its upper layer on the host"
        expect_eq "" "$(find /run/cordon/sandboxes "${XDG_RUNTIME_DIR:-/nonexistent}/cordon/sandboxes" \
                "/tmp/cordon-$(id -u)/sandboxes" -maxdepth 1 -name "$id" 2>/dev/null)" "the sandbox's state directory"
        expect_eq "" "$(find "$t" -newer "$pol" 2>/dev/null)" "anything written into the template"
        expect_eq "" "$(find / -xdev -maxdepth 3 -name fill -newer "$pol" 2>/dev/null)" "the upper layer's file on the host"
}

it_main "$@"
