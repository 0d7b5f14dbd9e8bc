#!/bin/bash
# cordon integration tests for binds: a read-write bind of a root-started sandbox is idmapped
# (what the sandbox writes there belongs on the host to the owner of the bind's source, whose
# files show inside as the sandbox root's), read-only binds are as before, and the path rules
# beneath a bind still hold. The setuid/setgid/capability/device refusals are in
# tests/escape/binds.sh. Run by `make check`; by hand:
#
#   CORDON=/path/to/cordon TESTS_SRCDIR=/path/to/tests bash tests/integration/binds.sh [REGEX...]

if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

need_root() {
        [ "$(id -u)" = 0 ] || skip "idmapped binds are made for root-started sandboxes only"
}

# a fresh directory owned by OWNER (uid:gid) with mode MODE
owned_dir() {
        local d
        d=$(scratch_dir "$1") && chown "$2" "$d" && chmod "$3" "$d" || fail "cannot make $1"
        printf '%s\n' "$d"
}

it_test rw_bind_of_root_owned_dir
rw_bind_of_root_owned_dir() {
        need_root
        local d
        d=$(owned_dir rootowned 0:0 0755)
        printf 'host\n' >"$d/old" && chmod 0600 "$d/old"
        crun --bind "$d:/job" -- sh -c 'echo hi > /job/f && mkdir /job/sub && echo made;
                stat -c "%u:%g %a %n" /job /job/f /job/sub /job/old; cat /job/old; echo x >> /job/old'
        expect_rc 0
        expect_contains "$OUT" "made" "a write into root's 0755 directory"
        expect_contains "$OUT" "0:0 755 /job" "the bind's root shows as the sandbox root's"
        expect_contains "$OUT" "0:0 644 /job/f" "the new file shows as the sandbox root's"
        expect_contains "$OUT" "0:0 600 /job/old" "root's own file shows as the sandbox root's"
        expect_contains "$OUT" "host" "root's 0600 file is readable by the sandbox root"
        expect_eq "0:0" "$(stat -c %u:%g "$d/f")" "the new file's owner on the host"
        expect_eq "0:0" "$(stat -c %u:%g "$d/sub")" "the new directory's owner on the host"
        expect_eq "hi" "$(cat "$d/f")" "the new file's content on the host"
        expect_eq "$(printf 'host\nx')" "$(cat "$d/old")" "the append on the host"
}

it_test rw_bind_of_user_dir_stays_theirs
rw_bind_of_user_dir_stays_theirs() {
        need_root
        local d
        d=$(owned_dir userdir 1234:2345 0700)
        printf 'mine\n' >"$d/mine" && chown 1234:2345 "$d/mine"
        crun --bind "$d:/w" -- sh -c 'echo new > /w/new && stat -c "%u:%g %n" /w /w/mine /w/new && cat /w/mine'
        expect_rc 0
        expect_contains "$OUT" "0:0 /w/mine" "the user's file shows as the sandbox root's"
        expect_contains "$OUT" "0:0 /w/new" "the new file shows as the sandbox root's"
        expect_contains "$OUT" "mine" "the user's 0700 directory is the sandbox root's to read"
        expect_eq "1234:2345" "$(stat -c %u:%g "$d/new")" "the new file's owner on the host: the directory's"
}

it_test rw_bind_other_owners_overflow
rw_bind_other_owners_overflow() {
        need_root
        local d
        d=$(owned_dir others 0:0 0755)
        printf 'theirs\n' >"$d/theirs" && chown 4321:4321 "$d/theirs" && chmod 0644 "$d/theirs"
        crun --bind "$d:/job" -- sh -c 'stat -c "%u:%g %n" /job/theirs; cat /job/theirs;
                if echo more >> /job/theirs; then echo appended; else echo refused; fi'
        expect_rc 0
        expect_contains "$OUT" "65534:65534 /job/theirs" "another host owner shows as the overflow id"
        expect_contains "$OUT" "theirs" "its world-readable content reads"
        expect_contains "$OUT" "refused" "its owner's write permission is not the sandbox's"
        expect_eq "theirs" "$(cat "$d/theirs")" "the file on the host"
        expect_eq "4321:4321" "$(stat -c %u:%g "$d/theirs")" "its owner on the host"
}

it_test ro_bind_unchanged
ro_bind_unchanged() {
        local d
        d=$(owned_dir readonly 0:0 0755)
        printf 'ro\n' >"$d/f" && chmod 0644 "$d/f"
        printf 'private\n' >"$d/p" && chmod 0600 "$d/p"
        crun --bind "$d:/ro:ro" -- sh -c 'cat /ro/f; stat -c "%u %n" /ro/f;
                if cat /ro/p 2>/dev/null; then echo read-private; fi;
                if echo x > /ro/new 2>/dev/null; then echo wrote; else echo refused; fi'
        expect_rc 0
        expect_contains "$OUT" "ro" "a read-only bind reads"
        expect_contains "$OUT" "refused" "a read-only bind refuses writes"
        expect_not_contains "$OUT" "wrote" "nothing written"
        if [ "$(id -u)" = 0 ]; then
                expect_contains "$OUT" "65534 /ro/f" "a read-only bind is not idmapped: root's file is the overflow id"
                expect_not_contains "$OUT" "read-private" "root's 0600 file in a read-only bind stays unreadable"
        fi
        expect_eq "" "$(ls "$d" | grep -v '^[fp]$')" "nothing new on the host"
}

it_test rules_beneath_rw_bind
rules_beneath_rw_bind() {
        need_root
        local d pol
        d=$(owned_dir ruled 0:0 0755)
        mkdir -p "$d/hidden" "$d/ro" "$d/noexec" && printf 'secret\n' >"$d/hidden/s"
        cp "$(command -v true)" "$d/noexec/t" && chmod 0755 "$d/noexec/t"
        pol=$IT_TMP/rules.json
        cat >"$pol" <<JSON
{"filesystem": {"binds": [{"source": "$d", "target": "/job", "readOnly": false}],
  "rules": [{"path": "/job/hidden", "access": "hidden"},
            {"path": "/job/ro", "access": "read"},
            {"path": "/job/noexec", "access": "read-write", "exec": false}]}}
JSON
        crun --policy "$pol" -- sh -c 'cat /job/hidden/s 2>/dev/null && echo saw-hidden;
                echo x > /job/ro/f 2>/dev/null && echo wrote-ro;
                /job/noexec/t 2>/dev/null && echo ran-noexec;
                echo ok > /job/f && echo wrote-bind'
        expect_rc 0
        expect_contains "$OUT" "wrote-bind" "the bind itself is writable"
        expect_not_contains "$OUT" "saw-hidden" "a hidden rule beneath the bind"
        expect_not_contains "$OUT" "wrote-ro" "a read rule beneath the bind"
        expect_not_contains "$OUT" "ran-noexec" "an exec:false rule beneath the bind"
        expect_eq "0:0" "$(stat -c %u:%g "$d/f")" "the bind's file on the host"
}

it_test setid_private_layer_native
setid_private_layer_native() {
        need_root
        local d
        d=$(owned_dir setiddir 0:0 0755)
        crun --bind "$d:/job" -- sh -c 'touch /tmp/p && chmod 4755 /tmp/p && stat -c "%a %n" /tmp/p;
                mkdir /job/shared && chmod 2775 /job/shared && stat -c "%a %n" /job/shared;
                touch /job/f; chmod 4755 /job/f 2>&1; chmod 0700 /job/f && stat -c "%a %n" /job/f'
        expect_rc 0
        expect_contains "$OUT" "4755 /tmp/p" "setuid in the private layer behaves natively"
        expect_contains "$OUT" "2775 /job/shared" "a setgid directory in a bind is allowed"
        expect_contains "$OUT" "Operation not permitted" "setuid in the bind is refused with EPERM"
        expect_contains "$OUT" "700 /job/f" "an ordinary chmod in the bind works"
        expect_eq "700" "$(stat -c %a "$d/f")" "the ordinary mode on the host"
        # every route the escape suite refuses in a bind works in the private layer
        local a
        for a in open-creat-setuid open-excl-setuid creat-setuid openat2-setuid tmpfile-setuid mknod-reg-setuid \
                fchmod-fd fchmodat; do
                crun --bind "$HELPERS:/helpers:ro" -- /helpers/setid-probe "$a" /tmp
                expect_contains "$OUT" "GOT THROUGH" "$a in the private layer (/tmp) makes a setuid file"
        done
}

it_test unprivileged_bind_is_callers
unprivileged_bind_is_callers() {
        need_root # to become another user for the run
        command -v setpriv >/dev/null || skip "no setpriv(1)"
        (cd / && setpriv --reuid=65534 --regid=65534 --clear-groups -- unshare -U true) 2>/dev/null ||
                skip "uid 65534 cannot make user namespaces here"
        local d
        d=$(owned_dir callers 65534:65534 0755)
        OUT=$(cd / && timeout -k 5 "$IT_CMD_TIMEOUT" setpriv --reuid=65534 --regid=65534 --clear-groups -- \
                "$CORDON" run --bind "$d:/w" -- sh -c 'echo mine > /w/f && echo wrote; chmod 4755 /w/f 2>&1' 2>&1)
        expect_contains "$OUT" "wrote" "the caller's directory is writable"
        expect_contains "$OUT" "Operation not permitted" "setuid in it is refused unprivileged too"
        expect_eq "65534:65534 644" "$(stat -c '%u:%g %a' "$d/f")" "the file is the caller's, not setuid"
}

it_test idmap_refused_fails_closed
idmap_refused_fails_closed() {
        need_root
        # procfs refuses idmapped mounts: a read-write bind of it must stop the run, named
        crun --bind "/proc/sys:/x" -- true
        if [ "$RC" = 0 ]; then
                fail "a read-write bind of a filesystem without idmapped mounts ran"
        fi
        expect_contains "$ERR" "idmapped mount of the read-write bind" "the message says what failed"
        expect_contains "$ERR" "/x" "the message names the bind"
}

it_main "$@"
