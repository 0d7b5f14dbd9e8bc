#!/bin/bash
# cordon integration tests for the OCI runtime (issue 7): `cordon-oci` driven directly
# (create/start/state/kill/delete, run, exec, hooks, seccomp, the console socket, the
# pid-file contract with a subreaper), then through the real podman and containerd with a
# local image built from busybox-static (no registry is needed). Run like run.sh:
#
#   CORDON=/path/to/cordon TESTS_SRCDIR=/path/to/tests bash tests/integration/oci.sh [REGEX...]
#
# podman and containerd run with throwaway state under the test's scratch directory
# (--root/--runroot/--tmpdir; containerd's own socket, root and state), and every container
# uses --network=none so that podman leaves the host's network untouched: cordon gives each
# container its own network namespace whatever podman prepares.
if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"
IT_TEST_TIMEOUT=${OCI_TEST_TIMEOUT:-240}

need_root() { [ "$(id -u)" = 0 ] || skip "the OCI runtime tests run containers as root, as podman and containerd do"; }

BUSYBOX=${BUSYBOX:-/bin/busybox}

# the runtime under its own name: cordon dispatches on argv[0]
oci_bin() {
        local b
        b="$(dirname "$CORDON")/cordon-oci"
        if [ ! -x "$b" ]; then
                b="$IT_TMP/cordon-oci"
                ln -sf "$CORDON" "$b"
        fi
        printf '%s\n' "$b"
}

# `cordon-oci --root $OCI_ROOT ARGS...` under timeout; sets OUT, ERR and RC
oci() {
        local errf
        errf=$(mktemp -p "$IT_TMP" stderr.XXXXXX) || fail "mktemp failed"
        printf '+ cordon-oci' >&2
        printf ' %q' "$@" >&2
        printf '\n' >&2
        # create and exec --detach leave a process holding our stdout (as
        # conmon's pipes are held): it goes to a file for those
        case " $* " in
        *" create "* | *" --detach "*)
                timeout -k 5 "$IT_CMD_TIMEOUT" "$OCI" --root "$OCI_ROOT" "$@" >"$IT_TMP/held.out" 2>"$errf" </dev/null
                RC=$?
                OUT=
                ;;
        *)
                OUT=$(timeout -k 5 "$IT_CMD_TIMEOUT" "$OCI" --root "$OCI_ROOT" "$@" 2>"$errf")
                RC=$?
                ;;
        esac
        ERR=$(cat "$errf")
        rm -f "$errf"
        printf '  [exit %s]\n' "$RC" >&2
        [ -n "$OUT" ] && printf '%s\n' "$OUT" | sed 's/^/  stdout| /' | head -n 40 >&2
        [ -n "$ERR" ] && printf '%s\n' "$ERR" | sed 's/^/  stderr| /' | head -n 40 >&2
        return 0
}

# a busybox root filesystem (static, so nothing else of the host is needed)
make_rootfs() { # DIR
        local d=$1 t
        [ -x "$BUSYBOX" ] || skip "no static busybox at $BUSYBOX (apt-get install busybox-static)"
        file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic' ||
                skip "$BUSYBOX is not statically linked"
        mkdir -p "$d/bin" "$d/etc" "$d/proc" "$d/dev" "$d/sys" "$d/tmp" "$d/root" "$d/data"
        cp "$BUSYBOX" "$d/bin/busybox"
        for t in sh echo cat sleep id ls mkdir touch hostname env pwd wget nc grep head dd seq true false \
                printf test tty stat kill ps rm; do
                ln -sf busybox "$d/bin/$t"
        done
        echo "root:x:0:0:root:/root:/bin/sh" >"$d/etc/passwd"
        echo "root:x:0:" >"$d/etc/group"
}

# a bundle in DIR with the default spec, the process given as a JSON array, and more
# changes as python statements on the config `c`
make_bundle() { # DIR ARGS_JSON [PYTHON]
        local d=$1
        mkdir -p "$d"
        make_rootfs "$d/rootfs"
        "$OCI" spec --bundle "$d" || fail "cordon-oci spec failed"
        python3 - "$d/config.json" "$2" "${3:-}" <<'EOF' || fail "cannot edit config.json"
import json, sys
p, args, extra = sys.argv[1], sys.argv[2], sys.argv[3]
c = json.load(open(p))
c["process"]["terminal"] = False
c["process"]["args"] = json.loads(args)
c["root"]["readonly"] = False
exec(extra)
json.dump(c, open(p, "w"), indent=1)
EOF
}

oci_setup() {
        need_root
        OCI=$(oci_bin)
        OCI_ROOT="$IT_TMP/oci-root"
        at_exit "for c in \$(ls '$OCI_ROOT' 2>/dev/null); do timeout 30 '$OCI' --root '$OCI_ROOT' delete --force \$c; done"
}

state_of() { # ID -> status
        oci state "$1"
        python3 -c 'import json,sys; print(json.loads(sys.argv[1])["status"])' "$OUT" 2>/dev/null
}

is_stopped() { "$OCI" --root "$OCI_ROOT" state "$1" 2>/dev/null | grep -q '"status": "stopped"'; }

pid_gone() { [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

cgroups_of() { find /sys/fs/cgroup -maxdepth 6 -type d -name "cordon-$1" 2>/dev/null; }

sandbox_of() { # ID -> the cordon sandbox id
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sandbox"])' "$OCI_ROOT/$1/state.json"
}

# --- the command line, directly ---

it_test cli_run_exit_status
cli_run_exit_status() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sh", "-c", "echo hello from $(hostname); exit 3"]' 'c["hostname"] = "box1"'
        oci run --bundle "$IT_TMP/b" r1
        expect_rc 3 "run exits with the container's status"
        expect_eq "hello from box1" "$OUT" "the process's output and config.json's hostname"
        expect_true "run removes the container" test ! -e "$OCI_ROOT/r1"
}

# What the container writes to its root is in the bundle's rootfs, as runc writes it, with
# the image's ids on disk (root's files 0, uid 1000's 1000), never the sandbox's host range;
# root.readonly writes nothing. Before #19's write-through it all ended with the container.
it_test cli_root_written_through
cli_root_written_through() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sh", "-c", "echo by-root > /by-root; mkdir /etc/d; rm /etc/group; echo t > /tmp/t; echo r > /root/r"]'
        local r="$IT_TMP/b/rootfs"
        chmod 1777 "$r/tmp"
        oci run --bundle "$IT_TMP/b" w1
        expect_rc 0 "the container ran"
        expect_eq by-root "$(cat "$r/by-root" 2>/dev/null)" "the file it wrote to / is in the bundle's rootfs"
        expect_eq 0:0 "$(stat -c %u:%g "$r/by-root" 2>/dev/null)" "owned by on-disk 0 (its root)"
        expect_true "the directory it made" test -d "$r/etc/d"
        expect_true "the file it removed is gone" test ! -e "$r/etc/group"
        expect_eq t "$(cat "$r/tmp/t" 2>/dev/null)" "/tmp is the rootfs's own"
        expect_eq r "$(cat "$r/root/r" 2>/dev/null)" "and so is root's home"
        expect_eq "" "$(find "$r/etc" -name resolv.conf -size +0 -o -name hosts -size +0)" \
                "nothing of cordon's is left in it (its DNS stub's files are bound on empty mount points)"
        make_bundle "$IT_TMP/b2" '["sh", "-c", "echo u > /tmp/by-1000; mkdir /tmp/d-1000"]' \
                'c["process"]["user"] = {"uid": 1000, "gid": 1000}'
        chmod 1777 "$IT_TMP/b2/rootfs/tmp"
        oci run --bundle "$IT_TMP/b2" w2
        expect_rc 0 "the uid-1000 container ran"
        expect_eq "1000:1000 1000:1000" "$(stat -c %u:%g "$IT_TMP/b2/rootfs/tmp/by-1000" "$IT_TMP/b2/rootfs/tmp/d-1000" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')" \
                "uid 1000's file and directory are 1000's on disk"
        expect_eq "" "$(find "$r" "$IT_TMP/b2/rootfs" \( -uid +65535 -o -gid +65535 \) -print)" \
                "no file on disk has an id of the sandbox's host range"
        make_bundle "$IT_TMP/b3" '["sh", "-c", "echo x > /ro || echo refused"]' 'c["root"]["readonly"] = True'
        oci run --bundle "$IT_TMP/b3" w3
        expect_eq refused "$OUT" "root.readonly: the write is refused"
        expect_true "and nothing lands in the rootfs" test ! -e "$IT_TMP/b3/rootfs/ro"
        # a root.path that is a symlink is refused, as runc refuses it
        ln -s rootfs "$IT_TMP/b3/rl"
        python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["root"]={"path": sys.argv[2]}; json.dump(c,open(sys.argv[1],"w"))' \
                "$IT_TMP/b3/config.json" "$IT_TMP/b3/rl"
        oci run --bundle "$IT_TMP/b3" w4
        expect_contains "$ERR" "root.path $IT_TMP/b3/rl: Not a directory (the root must be a directory, not a symlink" \
                "a symlink as root.path is refused, naming it"
}

# The same for an overlay rootfs, mounted here as podman mounts one (its upper and work
# directories named through a symlink to their parent): the container's changes land in the
# upper directory with overlayfs's own trusted.overlay.* bookkeeping, which the engine's
# overlay reads (a whiteout for a removed file, an opaque directory for a replaced one).
# An overlay cordon cannot write through is refused at create, naming root.path and why.
it_test cli_root_overlay_written_through
cli_root_overlay_written_through() {
        oci_setup
        local o="$IT_TMP/ov" i
        make_bundle "$IT_TMP/b" '["sh", "-c", "echo n > /new; rm /etc/passwd; rm -r /opq; mkdir /opq; echo ok"]'
        mkdir -p "$o/c/diff" "$o/c/work" "$o/merged" "$o/data" "$IT_TMP/b/rootfs/opq"
        touch "$IT_TMP/b/rootfs/opq/a"
        ln -s c "$o/link"
        mount -t overlay overlay -o "lowerdir=$IT_TMP/b/rootfs,upperdir=$o/link/diff,workdir=$o/link/work" \
                "$o/merged" || skip "cannot mount an overlay here"
        at_exit "umount -l '$o/merged' 2>/dev/null"
        python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["root"]["path"]=sys.argv[2]; json.dump(c,open(sys.argv[1],"w"))' \
                "$IT_TMP/b/config.json" "$o/merged"
        oci run --bundle "$IT_TMP/b" ov1
        expect_eq ok "$OUT" "the container ran"
        expect_eq "n 0:0" "$(cat "$o/c/diff/new" 2>/dev/null) $(stat -c %u:%g "$o/c/diff/new" 2>/dev/null)" \
                "its new file is in the upper directory, root's on disk"
        expect_eq "character special file 0,0" "$(stat -c '%F %t,%T' "$o/c/diff/etc/passwd" 2>/dev/null)" \
                "a removed file is overlayfs's whiteout there"
        expect_eq y "$(python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], "trusted.overlay.opaque").decode())' \
                "$o/c/diff/opq" 2>/dev/null)" "a replaced directory is opaque (trusted.overlay.opaque)"
        expect_eq "" "$(ls -A "$o/merged/opq")" "the engine's overlay reads them: the opaque directory is empty"
        expect_true "and the removed file is gone there" test ! -e "$o/merged/etc/passwd"
        umount "$o/merged"
        # data-only lower layers, and more layers than cordon stacks
        mount -t overlay overlay -o "lowerdir=$IT_TMP/b/rootfs::$o/data,upperdir=$o/c/diff,workdir=$o/c/work" \
                "$o/merged" 2>/dev/null || skip "this kernel has no data-only overlay layers (Linux 6.5)"
        oci run --bundle "$IT_TMP/b" ov2
        expect_rc 1 "an overlay with data-only layers is refused"
        expect_contains "$ERR" "root.path $o/merged: cannot write the container's root through to it: an overlay with data-only lower layers" \
                "the refusal names root.path and why"
        umount "$o/merged"
        # (relative to the layers' directory: the options must fit in a page, as podman's do)
        local lowers=../../b/rootfs
        for i in $(seq 1 129); do
                mkdir -p "$o/l/$i"
                lowers+=":$i"
        done
        (cd "$o/l" && mount -t overlay overlay -o "lowerdir=$lowers,upperdir=../c/diff,workdir=../c/work" ../merged) ||
                fail "cannot mount an overlay of 130 layers"
        oci run --bundle "$IT_TMP/b" ov3
        expect_rc 1 "an overlay of 130 lower layers is refused"
        expect_contains "$ERR" "root.path $o/merged: cannot write the container's root through to it: more than 128 lower layers" \
                "the refusal names root.path and why"
        umount "$o/merged"
        expect_eq "" "$(ls "$OCI_ROOT")" "no state left by the refusals"
}

it_test cli_sysctl_umask_oom
cli_sysctl_umask_oom() {
        oci_setup
        local host_range host_shm
        host_range=$(cat /proc/sys/net/ipv4/ping_group_range)
        host_shm=$(cat /proc/sys/kernel/shmmni)
        make_bundle "$IT_TMP/b" '["sh", "-c", "cat /proc/sys/net/ipv4/ping_group_range /proc/sys/kernel/shmmni /proc/self/oom_score_adj; umask; : > /tmp/f; stat -c %a /tmp/f"]' \
                'c["linux"]["sysctl"] = {"net.ipv4.ping_group_range": "0 0", "kernel.shmmni": "1234"}
c["process"]["user"]["umask"] = 0o027
c["process"]["oomScoreAdj"] = 500'
        oci run --bundle "$IT_TMP/b" s1
        expect_rc 0 "run with sysctls, umask and oomScoreAdj"
        expect_eq "$(printf '0\t0\n1234\n500\n0027\n640')" "$OUT" "each one is in force in the container"
        expect_eq "$host_range" "$(cat /proc/sys/net/ipv4/ping_group_range)" "the host's net sysctl is untouched"
        expect_eq "$host_shm" "$(cat /proc/sys/kernel/shmmni)" "the host's ipc sysctl is untouched"
        make_bundle "$IT_TMP/b2" '["true"]' 'c["linux"]["sysctl"] = {"net.ipv4.no_such_knob": "1"}'
        oci run --bundle "$IT_TMP/b2" s2
        expect_true "a sysctl the kernel lacks fails the start" test "$RC" != 0
        expect_contains "$ERR" "linux.sysctl: net.ipv4.no_such_knob" "naming it"
        # lowering the score needs CAP_SYS_RESOURCE, which some hosts (this VM) do not give root
        make_bundle "$IT_TMP/b3" '["cat", "/proc/self/oom_score_adj"]' 'c["process"]["oomScoreAdj"] = -500'
        oci run --bundle "$IT_TMP/b3" s3
        if (( 0x$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) & (1 << 24) )); then
                expect_eq "-500" "$OUT" "a lower oomScoreAdj is applied"
        else
                expect_true "a lower oomScoreAdj fails the start without CAP_SYS_RESOURCE" test "$RC" != 0
                expect_contains "$ERR" "process.oomScoreAdj -500: Permission denied (lowering it needs CAP_SYS_RESOURCE" \
                        "saying why"
        fi
}

it_test cli_rlimits_core_ignored
cli_rlimits_core_ignored() {
        oci_setup
        # a config's RLIMIT_CORE (here 0, which a core_pattern pipe ignores)
        # gives way to cordon's one byte, with a warning; the others apply
        make_bundle "$IT_TMP/b" '["sh", "-c", "grep -E \"^Max (core file size|open files)\" /proc/self/limits"]' \
                'c["process"]["rlimits"] = [{"type": "RLIMIT_CORE", "soft": 0, "hard": 0}, {"type": "RLIMIT_NOFILE", "soft": 512, "hard": 800}]'
        oci --log "$IT_TMP/rl1.log" run --bundle "$IT_TMP/b" rl1
        expect_rc 0 "run with RLIMIT_CORE 0 and RLIMIT_NOFILE"
        expect_match "$OUT" $'^Max core file size +1 +1 +bytes *\nMax open files +512 +800 +files *$' "the core limit is one byte, the open-files limit as configured"
        expect_contains "$(cat "$IT_TMP/rl1.log")" "process.rlimits[0]: RLIMIT_CORE ignored" "the log names the entry"
}

# init fails after the sentry has started its egress gate and DNS stub: an
# OCI mount is made once the view is built, and a tmpfs size the kernel
# refuses fails it. init's own message is the one shown, and the run ends
# at once, its state gone (the sanitizer build also finds any leak of the
# gate's on this path).
it_test cli_mount_fails_after_the_gate_started
cli_mount_fails_after_the_gate_started() {
        oci_setup
        make_bundle "$IT_TMP/b" '["true"]' \
                'c["mounts"].append({"destination": "/bad", "type": "tmpfs", "source": "tmpfs", "options": ["size=lots"]})'
        oci run --bundle "$IT_TMP/b" m1
        expect_true "a mount the kernel refuses fails the start" test "$RC" != 0
        expect_contains "$ERR" "mounts: tmpfs /bad (size=lots): Invalid argument" "with init's message naming the mount"
        expect_not_contains "$ERR" "died during set-up" "not a generic one"
        expect_true "run removes the container" test ! -e "$OCI_ROOT/m1"
}

# The config's mounts of /dev, /dev/pts, /dev/shm and /dev/mqueue are made as configured and
# every mount is listed in the config's order (runc's), /proc first although cordon makes it
# last; a bind's tmpfs options are ignored as runc ignores them; propagation is applied.
# devpts without "newinstance" is still a new instance: a pty the host holds open is not seen;
# a tmpfs with tmpcopyup starts with what the image has there.
it_test cli_mounts_as_configured
cli_mounts_as_configured() {
        oci_setup
        mkdir -p "$IT_TMP/vol"
        python3 -c 'import os, pty, time; m, s = pty.openpty(); print(os.ttyname(s), flush=True); time.sleep(60)' \
                >"$IT_TMP/hostpty" &
        local ptypid=$!
        at_exit "kill $ptypid"
        wait_until 10 test -s "$IT_TMP/hostpty" || fail "no host pty"
        make_bundle "$IT_TMP/b" '["sh", "-c", "cat /proc/self/mountinfo; echo ==; busybox df -k /dev/shm | busybox tail -1; stat -c %a /dev/pts/ptmx; ls /dev/pts; cat /seed/sub/f"]' \
                'for m in c["mounts"]:
    if m["destination"] == "/dev/shm": m["options"] = ["nosuid", "noexec", "nodev", "mode=1777", "size=8m"]
    if m["destination"] == "/dev/pts": m["options"] = ["nosuid", "noexec", "ptmxmode=0600", "mode=0620"]
c["mounts"].append({"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]})
c["mounts"].append({"destination": "/data", "type": "bind", "source": p.rsplit("/", 2)[0] + "/vol",
                    "options": ["rbind", "mode=755", "size=1k", "shared"]})
c["linux"]["rootfsPropagation"] = "shared"
import os
os.makedirs(p.rsplit("/", 1)[0] + "/rootfs/seed/sub")
open(p.rsplit("/", 1)[0] + "/rootfs/seed/sub/f", "w").write("seeded\n")
c["mounts"].append({"destination": "/seed", "type": "tmpfs", "source": "tmpfs", "options": ["tmpcopyup"]})'
        oci run --bundle "$IT_TMP/b" mc1
        expect_rc 0 "run with the config's /dev mounts, a tmpfs and a bind with tmpfs options"
        local mi order
        mi=$(printf '%s\n' "$OUT" | sed '/^==$/,$d')
        # mount point, type and source of each mount, in mountinfo's order
        order=$(printf '%s\n' "$mi" | awk '{for (i = 7; i <= NF; i++) if ($i == "-") { print $5, $(i + 1), $(i + 2); break }}' |
                grep -E '^/(proc|dev|dev/pts|dev/shm|dev/mqueue|sys|scratch|data) ' | tr '\n' ';')
        expect_eq "/proc proc proc;/dev tmpfs tmpfs;/dev/pts devpts devpts;/dev/shm tmpfs shm;/dev/mqueue mqueue mqueue;/sys tmpfs tmpfs;/scratch tmpfs tmpfs;/data tmpfs tmpfs;" \
                "$(printf '%s' "$order" | sed 's|/data [^;]*;|/data tmpfs tmpfs;|')" "the config's mounts in its order, each of its type and source"
        expect_match "$(printf '%s\n' "$mi" | awk '$5 == "/data"')" ' shared:[0-9]+ ' "the bind's propagation"
        expect_match "$(printf '%s\n' "$mi" | awk '$5 == "/"')" ' shared:[0-9]+ ' "rootfsPropagation"
        local rest
        rest=$(printf '%s\n' "$OUT" | sed '1,/^==$/d')
        expect_match "$(printf '%s\n' "$rest" | sed -n 1p)" '^shm +8192 ' "/dev/shm has the configured size"
        expect_eq 600 "$(printf '%s\n' "$rest" | sed -n 2p)" "/dev/pts has the configured ptmxmode"
        expect_eq ptmx "$(printf '%s\n' "$rest" | sed -n 3p)" \
                "a devpts of its own (the host's $(cat "$IT_TMP/hostpty") is not there)"
        expect_eq seeded "$(printf '%s\n' "$rest" | sed -n 4p)" "tmpcopyup fills the tmpfs with the image's files"
        make_bundle "$IT_TMP/b2" '["true"]' 'c["mounts"].append({"destination": "/dev/pts", "type": "bind", "source": "/dev/pts", "options": ["rbind"]})'
        oci run --bundle "$IT_TMP/b2" mc2
        expect_true "a bind of the host's /dev/pts is refused" test "$RC" != 0
        expect_contains "$ERR" "mounts[6].destination: \"/dev/pts\" is under /dev" "naming the field and value"
        make_bundle "$IT_TMP/b3" '["true"]' 'c["mounts"].append({"destination": "/dev/x", "type": "devpts", "source": "devpts"})'
        oci run --bundle "$IT_TMP/b3" mc3
        expect_true "devpts elsewhere than /dev/pts is refused" test "$RC" != 0
        expect_contains "$ERR" "mounts[6]: /dev/x of type devpts" "naming the field and value"
}

it_test cli_lifecycle
cli_lifecycle() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sleep", "100"]'
        oci create --bundle "$IT_TMP/b" --pid-file "$IT_TMP/pid" c1
        expect_rc 0 "create"
        local pid sid
        pid=$(cat "$IT_TMP/pid")
        sid=$(sandbox_of c1)
        expect_eq created "$(state_of c1)" "state after create"
        oci state c1
        expect_contains "$OUT" "\"pid\": $pid" "state's pid is the pid-file's"
        expect_contains "$OUT" "\"bundle\": \"$IT_TMP/b\"" "state names the bundle"
        expect_contains "$OUT" '"ociVersion"' "state is the OCI document"
        oci start c1
        expect_rc 0 "start"
        expect_eq running "$(state_of c1)" "state after start"
        oci start c1
        expect_true "a second start is refused" test "$RC" != 0
        oci ps --format json c1
        expect_match "$OUT" '^\[[0-9]+(,[0-9]+)+\]$' "ps lists the container's host pids"
        local p sleeper=
        for p in $(echo "$OUT" | tr -d '[]' | tr , ' '); do
                grep -q '^sleep' "/proc/$p/cmdline" 2>/dev/null && sleeper=$p
        done
        expect_true "ps includes the container's process" test -n "$sleeper"
        oci list --format json
        expect_contains "$OUT" '"id":"c1"' "list --format json"
        oci list
        expect_match "$OUT" 'c1 +[0-9]+ +running' "list's table"
        oci pause c1
        expect_rc 0 "pause"
        expect_eq paused "$(state_of c1)" "state after pause"
        oci exec c1 true
        expect_true "a paused container takes no exec" test "$RC" != 0
        oci resume c1
        expect_eq running "$(state_of c1)" "state after resume"
        oci delete c1
        expect_true "delete of a running container fails" test "$RC" != 0
        expect_contains "$ERR" "cannot delete container c1 that is not stopped: running" "as runc says it"
        oci kill c1 KILL
        expect_rc 0 "kill KILL"
        wait_until 10 pid_gone "$pid" || _it_soft_fail "the sentry (pid-file's pid) outlives its container"
        expect_eq stopped "$(state_of c1)" "state after the process died"
        oci kill c1 TERM
        expect_contains "$ERR" "container not running" "kill of a stopped container"
        oci delete c1
        expect_rc 0 "delete of a stopped container"
        expect_true "its state directory is gone" test ! -e "$OCI_ROOT/c1"
        expect_true "the sandbox's state is gone" test ! -e "/run/cordon/sandboxes/$sid"
        expect_eq "" "$(cgroups_of "$sid")" "no cgroup left"
        oci state c1
        expect_contains "$ERR" "does not exist" "state of a deleted container"
        oci delete --force c1
        expect_rc 0 "delete --force of a missing container succeeds (as runc)"
}

it_test cli_kill_created
cli_kill_created() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sh", "-c", "echo must-not-run > /tmp/ran"]'
        # run-fork: the process is held just after init forked it, before it
        # takes back the default signal actions, as a loaded machine does;
        # the SIGTERM was lost there and the container stayed created
        local stall id
        for stall in none run-fork; do
                id=k1-$stall
                CORDON_TEST_STALL=$stall oci create --bundle "$IT_TMP/b" --pid-file "$IT_TMP/pid" "$id"
                expect_rc 0 "create ($stall)"
                oci kill "$id" SIGTERM
                expect_rc 0 "kill on a created container (containerd relies on it)"
                wait_until 10 pid_gone "$(cat "$IT_TMP/pid")" || _it_soft_fail "the sentry stays after kill on created ($stall)"
                expect_eq stopped "$(state_of "$id")" "stopped after the kill ($stall)"
                oci start "$id"
                expect_contains "$ERR" "cannot start a container that has stopped" "start after kill ($stall)"
                oci delete "$id"
                expect_rc 0 "delete"
        done
        # a created container deleted without --force (runc allows it)
        oci create --bundle "$IT_TMP/b" k2
        oci delete k2
        expect_rc 0 "delete of a created container"
        expect_true "gone" test ! -e "$OCI_ROOT/k2"
}

it_test cli_delete_force_running
cli_delete_force_running() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sleep", "100"]'
        oci create --bundle "$IT_TMP/b" --pid-file "$IT_TMP/pid" f1
        oci start f1
        local pid sid
        pid=$(cat "$IT_TMP/pid")
        sid=$(sandbox_of f1)
        oci delete --force f1
        expect_rc 0 "delete --force of a running container"
        expect_true "the sentry is gone" pid_gone "$pid"
        expect_true "its state directory is gone" test ! -e "$OCI_ROOT/f1"
        expect_true "the sandbox's state is gone" test ! -e "/run/cordon/sandboxes/$sid"
        expect_eq "" "$(cgroups_of "$sid")" "no cgroup left"
}

# The cgroup filesystem type of a hierarchy's mount ("cgroupfs" for v1, "cgroup2fs"), or nothing
cg_fs() { stat -fc %T "$1" 2>/dev/null; }

# linux.cgroupsPath with linux.resources: the limits are in the group the engine named, as
# runc writes them (kubelet and `crictl stats` read them there), the placement is what the
# container's processes get, and delete leaves no group behind, not even the parent cordon
# made on the way.
it_test cli_cgroups_path_limits
cli_cgroups_path_limits() {
        oci_setup
        local top="cordon-it-$$" v1= pid sid G
        [ "$(cg_fs /sys/fs/cgroup/memory)" = cgroupfs ] && [ "$(cg_fs /sys/fs/cgroup/cpuset)" = cgroupfs ] && v1=1
        [ -n "$v1" ] || [ "$(cg_fs /sys/fs/cgroup)" = cgroup2fs ] ||
                skip "neither cgroup v1 memory and cpuset hierarchies nor a cgroup2 root"
        at_exit "rmdir /sys/fs/cgroup/*/$top/c1 /sys/fs/cgroup/*/$top /sys/fs/cgroup/$top/c1 /sys/fs/cgroup/$top 2>/dev/null"
        make_bundle "$IT_TMP/b" '["sh", "-c", "grep Cpus_allowed_list /proc/self/status; sleep 100"]' "
c['linux']['cgroupsPath'] = '/$top/c1'
c['linux']['resources'] = {'memory': {'limit': 67108864}, 'pids': {'limit': 50},
    'cpu': {'quota': 50000, 'period': 200000, 'shares': 512, 'cpus': '0', 'mems': '0'}}"
        oci create --bundle "$IT_TMP/b" --pid-file "$IT_TMP/pid" g1
        expect_rc 0 "create with a cgroupsPath and limits"
        pid=$(cat "$IT_TMP/pid")
        sid=$(sandbox_of g1)
        if [ -n "$v1" ]; then
                G=/sys/fs/cgroup/memory/$top/c1
                expect_eq 67108864 "$(cat "$G/memory.limit_in_bytes")" "the memory limit is at cgroupsPath"
                expect_eq 50 "$(cat "/sys/fs/cgroup/pids/$top/c1/pids.max")" "the pids limit is at cgroupsPath"
                expect_eq "50000 200000" "$(cat "/sys/fs/cgroup/cpu/$top/c1/cpu.cfs_quota_us" \
                        "/sys/fs/cgroup/cpu/$top/c1/cpu.cfs_period_us" | tr '\n' ' ' | sed 's/ $//')" \
                        "the CPU quota and period are at cgroupsPath, as given"
                expect_eq 512 "$(cat "/sys/fs/cgroup/cpu/$top/c1/cpu.shares")" "the CPU shares too"
                expect_eq 0 "$(cat "/sys/fs/cgroup/cpuset/$top/c1/cpuset.cpus")" "the cpuset too"
                expect_contains "$(cat "/proc/$pid/cgroup")" ":memory:/$top/c1" \
                        "the sentry (the pid the engine reads) is in that memory group"
        else
                G=/sys/fs/cgroup/$top/c1
                expect_eq 67108864 "$(cat "$G/memory.max")" "the memory limit is at cgroupsPath"
                expect_eq 50 "$(cat "$G/pids.max")" "the pids limit is at cgroupsPath"
                expect_eq "50000 200000" "$(cat "$G/cpu.max")" "the CPU quota and period are at cgroupsPath"
                expect_eq 0 "$(cat "$G/cpuset.cpus")" "the cpuset too"
        fi
        oci start g1
        expect_rc 0 "start"
        wait_until 10 grep -q Cpus_allowed_list "$IT_TMP/held.out"
        expect_eq "0" "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$IT_TMP/held.out")" \
                "the container's process runs on the CPUs of linux.resources.cpu.cpus"
        oci kill g1 KILL
        wait_until 10 pid_gone "$pid" || _it_soft_fail "the sentry outlives its container"
        oci delete g1
        expect_rc 0 "delete"
        expect_eq "" "$(find /sys/fs/cgroup -maxdepth 2 -name "$top")" "no group left at cgroupsPath or its parent"
        expect_eq "" "$(cgroups_of "$sid")" "no group of cordon's left"
}

# A sentry killed outright leaves its groups; delete still removes them, the cgroupsPath
# group and the parent made for it included (from the state it wrote), as runc's delete does.
it_test cli_cgroups_path_sentry_killed
cli_cgroups_path_sentry_killed() {
        oci_setup
        local top="cordon-it-kill-$$" pid
        at_exit "rmdir /sys/fs/cgroup/*/$top/c1/cordon-* /sys/fs/cgroup/*/$top/c1 /sys/fs/cgroup/*/$top /sys/fs/cgroup/$top/c1/cordon-* /sys/fs/cgroup/$top/c1 /sys/fs/cgroup/$top 2>/dev/null"
        make_bundle "$IT_TMP/b" '["sleep", "100"]' "
c['linux']['cgroupsPath'] = '/$top/c1'
c['linux']['resources'] = {'memory': {'limit': 67108864}, 'pids': {'limit': 50}}"
        oci create --bundle "$IT_TMP/b" --pid-file "$IT_TMP/pid" s1
        expect_rc 0 "create"
        pid=$(cat "$IT_TMP/pid")
        oci start s1
        kill -9 "$pid"
        wait_until 10 pid_gone "$pid" || _it_soft_fail "the sentry did not die"
        expect_true "its groups are still there" test -n "$(find /sys/fs/cgroup -maxdepth 2 -name "$top")"
        oci delete s1
        expect_rc 0 "delete after the sentry was killed"
        expect_eq "" "$(find /sys/fs/cgroup -maxdepth 2 -name "$top")" "no group left at cgroupsPath or its parent"
}

# `update` (containerd's UpdateContainerResources through `runc update --resources -`, kubelet's
# in-place resize, `crictl update`): new limits for a running container, written where create
# wrote them, seen from inside, kept for the next update, bounded by the container's policy; bad
# input refused naming the field; a stopped or unknown container refused.
it_test cli_update
cli_update() {
        oci_setup
        local top="cordon-it-upd-$$" v1= G M P pid
        [ "$(cg_fs /sys/fs/cgroup/memory)" = cgroupfs ] && [ "$(cg_fs /sys/fs/cgroup/pids)" = cgroupfs ] && v1=1
        [ -n "$v1" ] || [ "$(cg_fs /sys/fs/cgroup)" = cgroup2fs ] ||
                skip "neither cgroup v1 memory and pids hierarchies nor a cgroup2 root"
        at_exit "rmdir /sys/fs/cgroup/*/$top/c1 /sys/fs/cgroup/*/$top /sys/fs/cgroup/$top/c1 /sys/fs/cgroup/$top 2>/dev/null"
        if [ -n "$v1" ]; then
                M=/sys/fs/cgroup/memory/$top/c1/memory.limit_in_bytes P=/sys/fs/cgroup/pids/$top/c1/pids.max
        else
                M=/sys/fs/cgroup/$top/c1/memory.max P=/sys/fs/cgroup/$top/c1/pids.max
        fi
        # the container starts N sleeps in the background on each line of its input
        make_bundle "$IT_TMP/b" '["sh", "-c", "while read n; do ok=0; for i in $(seq $n); do sleep 60 & [ $? = 0 ] && ok=$((ok+1)); done; echo started $ok; done < /data/fifo; exec sleep 1000"]' "
c['linux']['cgroupsPath'] = '/$top/c1'
c['linux']['resources'] = {'memory': {'limit': 67108864}, 'pids': {'limit': 12}}
c['mounts'].append({'destination': '/data', 'type': 'bind', 'source': '$IT_TMP/data', 'options': ['rbind']})"
        mkdir -p "$IT_TMP/data" && mkfifo "$IT_TMP/data/fifo"
        oci create --bundle "$IT_TMP/b" --pid-file "$IT_TMP/pid" u1
        expect_rc 0 "create with limits"
        oci start u1
        expect_rc 0 "start"
        expect_eq 12 "$(cat "$P")" "the pids limit create wrote"
        oci update --memory 128m --pids-limit 40 u1
        expect_rc 0 "update --memory --pids-limit"
        expect_eq 134217728 "$(cat "$M")" "the new memory limit is in the container's group"
        expect_eq 40 "$(cat "$P")" "the new pids limit too"
        echo 20 >"$IT_TMP/data/fifo"
        wait_until 10 grep -q started "$IT_TMP/held.out"
        expect_eq "started 20" "$(cat "$IT_TMP/held.out")" "inside, 20 more processes start under the new limit of 40 (12 before)"
        OUT=$(printf '{"pids": {"limit": 30}}' | timeout 30 "$OCI" --root "$OCI_ROOT" update --resources - u1 2>&1)
        expect_eq "" "$OUT" "update --resources - (the runc shim's form)"
        expect_eq 30 "$(cat "$P")" "the pids limit from stdin"
        expect_eq 134217728 "$(cat "$M")" "what it does not name stays"
        if [ -n "$v1" ] && [ "$(cg_fs /sys/fs/cgroup/cpu)" = cgroupfs ] && [ "$(cg_fs /sys/fs/cgroup/cpuset)" = cgroupfs ]; then
                # created without CPU limits, the container is in its group in the cpu and cpuset
                # hierarchies all the same (as runc puts it), so they can be given later
                # (the pid file's is the sentry's; the container's own are in cordon's group beneath G)
                G=$top/c1 pid=$(head -1 "/sys/fs/cgroup/memory/$top/c1/cordon-$(sandbox_of u1)/cgroup.procs")
                expect_true "the container's process is in its cpu group" grep -qx "$pid" "/sys/fs/cgroup/cpu/$G/cgroup.procs"
                expect_true "and in its cpuset group" grep -qx "$pid" "/sys/fs/cgroup/cpuset/$G/cgroup.procs"
                oci update --cpu-quota 50000 --cpu-period 100000 --cpu-shares 512 u1
                expect_rc 0 "update --cpu-quota --cpu-period --cpu-shares of a container created without"
                expect_eq "50000 100000 512" "$(cat /sys/fs/cgroup/cpu/$G/cpu.cfs_quota_us \
                        /sys/fs/cgroup/cpu/$G/cpu.cfs_period_us /sys/fs/cgroup/cpu/$G/cpu.shares | xargs)" \
                        "the CPU limit is in the container's cpu group"
                oci update --cpuset-cpus 0 --cpuset-mems 0 u1
                expect_rc 0 "update --cpuset-cpus --cpuset-mems of a container created without"
                expect_eq "0 0" "$(cat /sys/fs/cgroup/cpuset/$G/cpuset.cpus /sys/fs/cgroup/cpuset/$G/cpuset.mems | xargs)" \
                        "the placement is in the container's cpuset group"
                expect_eq 0 "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$pid/status")" "and binds its process"
        fi
        oci update --resources /nonexistent u1
        expect_true "a missing file is refused" test "$RC" != 0
        printf '{"pids": {"limit": "many"}}' >"$IT_TMP/bad1.json"
        oci update --resources "$IT_TMP/bad1.json" u1
        expect_contains "$ERR" "pids.limit: expected an integer, got a string" "a bad value is refused, naming the field"
        printf '{"blockIO": {"weight": 500}}' >"$IT_TMP/bad2.json"
        oci update --resources "$IT_TMP/bad2.json" u1
        expect_contains "$ERR" "blockIO: not supported by cordon" "what create refuses, update refuses"
        printf '{"memory": {' >"$IT_TMP/bad3.json"
        oci update --resources "$IT_TMP/bad3.json" u1
        expect_true "invalid JSON is refused" test "$RC" != 0
        oci update --cpuset-cpus 0-999 u1
        expect_contains "$ERR" 'linux.resources.cpu.cpus "0-999"' "a cpuset the host lacks, as create"
        oci update --memory lots u1
        expect_contains "$ERR" "update --memory lots: expected a number of bytes" "a bad flag, naming it"
        expect_eq 30 "$(cat "$P")" "nothing refused was written"
        oci update --pids-limit 10 nosuch
        expect_contains "$ERR" "nosuch does not exist" "an unknown container"
        oci kill u1 KILL
        wait_until 10 is_stopped u1
        oci update --pids-limit 10 u1
        expect_contains "$ERR" "is not running" "a stopped container"
        oci delete u1
        # the policy bounds an update as it bounds create: the stricter wins
        make_bundle "$IT_TMP/b2" '["sleep", "100"]' "
c['linux']['cgroupsPath'] = '/$top/c1'
c['linux']['resources'] = {'pids': {'limit': 12}}
c['annotations'] = {'dev.cordon.policy': '{\"limits\": {\"maxProcesses\": 20}}'}"
        oci run --detach --bundle "$IT_TMP/b2" u2
        expect_rc 0 "run with a policy limiting processes"
        oci update --pids-limit 1000 u2
        expect_rc 0 "update above the policy's limit"
        expect_eq 20 "$(cat "$P")" "the policy's limit holds"
        oci delete --force u2
        wait_until 10 sh -c "! find /sys/fs/cgroup -maxdepth 3 -type d -name '$top' | grep -q ."
        expect_eq "" "$(find /sys/fs/cgroup -maxdepth 3 -type d -name "$top")" "delete leaves no group in any hierarchy"
}

# Bad values fail create with the field and the value, and leave nothing behind.
it_test cli_cgroups_bad_values
cli_cgroups_bad_values() {
        oci_setup
        local top="cordon-it-bad-$$" i
        at_exit "rmdir /sys/fs/cgroup/*/$top/x /sys/fs/cgroup/*/$top /sys/fs/cgroup/$top/x /sys/fs/cgroup/$top 2>/dev/null"
        local paths=("/$top/x" "/$top/x" "/$top/x" "/$top/../escape")
        local res=("{'cpu': {'cpus': '0-999'}}" "{'cpu': {'mems': '0,4000'}}" "{'cpu': {'cpus': 'all'}}" "{}")
        local says=('linux.resources.cpu.cpus "0-999": CPUs' 'linux.resources.cpu.mems "0,4000": memory node 4000'
                'linux.resources.cpu.cpus: "all": expected a list' "linux.cgroupsPath /$top/../escape")
        for i in 0 1 2 3; do
                make_bundle "$IT_TMP/bad$i" '["true"]' "
c['linux']['cgroupsPath'] = '${paths[i]}'
c['linux']['resources'] = ${res[i]}"
                oci create --bundle "$IT_TMP/bad$i" bad$i
                expect_true "a bad value is refused ($i)" test "$RC" != 0
                expect_contains "$ERR" "${says[i]}" "the refusal names the field and the value ($i)"
                expect_true "no container state is left ($i)" test ! -e "$OCI_ROOT/bad$i"
        done
        expect_eq "" "$(find /sys/fs/cgroup -maxdepth 2 -name "$top" -o -maxdepth 2 -name escape)" "no group is left"
}

# disableOOMKiller (cgroup v1, as runc writes it): the container's tasks wait at the limit
# instead of one being killed, and kill and delete still end them and clean up.
it_test cli_oom_killer_disabled
cli_oom_killer_disabled() {
        oci_setup
        local top="cordon-it-oom-$$" pid G
        [ "$(cg_fs /sys/fs/cgroup/memory)" = cgroupfs ] || skip "no cgroup v1 memory hierarchy (v2 has no such setting)"
        at_exit "rmdir /sys/fs/cgroup/*/$top/c1 /sys/fs/cgroup/*/$top 2>/dev/null"
        G=/sys/fs/cgroup/memory/$top/c1
        # a string doubled by the shell itself: its pages are touched from user space, where
        # a task at the limit waits (a fault inside a syscall, as dd's read into its buffer,
        # fails the call instead)
        make_bundle "$IT_TMP/b" '["sh", "-c", "a=0123456789abcdef; while :; do a=$a$a; done"]' "
c['linux']['cgroupsPath'] = '/$top/c1'
c['linux']['resources'] = {'memory': {'limit': 16777216, 'disableOOMKiller': True}}"
        oci create --bundle "$IT_TMP/b" --pid-file "$IT_TMP/pid" o1
        expect_rc 0 "create with disableOOMKiller"
        pid=$(cat "$IT_TMP/pid")
        expect_contains "$(cat "$G/memory.oom_control")" "oom_kill_disable 1" "written at cgroupsPath"
        oci start o1
        wait_until 20 grep -q "under_oom 1" "$G/memory.oom_control" ||
                _it_soft_fail "the container did not reach its limit"
        expect_eq running "$(state_of o1)" "a task at the limit waits, not killed"
        oci kill o1 KILL
        expect_rc 0 "kill of a container waiting at its memory limit"
        wait_until 10 pid_gone "$pid" || _it_soft_fail "the sentry outlives its container"
        oci delete o1
        expect_rc 0 "delete"
        # delete --force of one waiting there, without a kill first
        oci create --bundle "$IT_TMP/b" --pid-file "$IT_TMP/pid" o2
        pid=$(cat "$IT_TMP/pid")
        oci start o2
        wait_until 20 grep -q "under_oom 1" "$G/memory.oom_control" ||
                _it_soft_fail "the second container did not reach its limit"
        oci delete --force o2
        expect_rc 0 "delete --force of a container waiting at its memory limit"
        expect_true "its sentry is gone" pid_gone "$pid"
        expect_eq "" "$(find /sys/fs/cgroup -maxdepth 2 -name "$top")" "no group left"
}

it_test cli_signal_names
cli_signal_names() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sh", "-c", "trap \"echo got-usr1; exit 9\" USR1; while true; do sleep 0.1; done"]'
        oci create --bundle "$IT_TMP/b" --pid-file "$IT_TMP/pid" s1
        oci start s1
        sleep 0.5
        oci kill s1 usr1x
        expect_true "an unknown signal name is refused" test "$RC" != 0
        oci kill s1 USR1
        expect_rc 0 "kill by name without SIG"
        wait_until 10 pid_gone "$(cat "$IT_TMP/pid")"
        oci delete s1
        oci create --bundle "$IT_TMP/b" --pid-file "$IT_TMP/pid" s2
        oci start s2
        oci kill --all s2 9
        expect_rc 0 "kill --all by number"
        wait_until 10 pid_gone "$(cat "$IT_TMP/pid")" || _it_soft_fail "kill --all 9 did not end the container"
        oci delete s2
}

it_test cli_pid_file_waited_by_a_subreaper
cli_pid_file_waited_by_a_subreaper() {
        # what conmon and containerd's shim do: subreaper, create, waitpid(pid-file's pid)
        oci_setup
        make_bundle "$IT_TMP/b" '["sh", "-c", "sleep 0.3; exit 42"]'
        OUT=$(timeout 60 python3 - "$OCI" "$OCI_ROOT" "$IT_TMP/b" "$IT_TMP/pid" <<'EOF'
import ctypes, os, subprocess, sys
oci, root, bundle, pidfile = sys.argv[1:]
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
subprocess.run([oci, "--root", root, "create", "--bundle", bundle, "--pid-file", pidfile, "w1"], check=True)
pid = int(open(pidfile).read())
subprocess.run([oci, "--root", root, "start", "w1"], check=True)
_, status = os.waitpid(pid, 0)
print("code", os.waitstatus_to_exitcode(status))
subprocess.run([oci, "--root", root, "delete", "w1"], check=True)
EOF
)
        RC=$?
        expect_rc 0 "the subreaper script"
        expect_eq "code 42" "$OUT" "the pid-file's pid is reparented to the subreaper and exits with the container's status"
}

it_test cli_console_socket
cli_console_socket() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sh", "-c", "test -t 0 && test -t 1 && echo tty-ok; tty"]' 'c["process"]["terminal"] = True'
        oci create --bundle "$IT_TMP/b" t0
        expect_contains "$ERR" "console socket" "a terminal without --console-socket is refused"
        OUT=$(timeout 60 python3 - "$OCI" "$OCI_ROOT" "$IT_TMP/b" "$IT_TMP/console.sock" <<'EOF'
import os, socket, subprocess, sys, time
oci, root, bundle, path = sys.argv[1:]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
p = subprocess.Popen([oci, "--root", root, "create", "--bundle", bundle, "--console-socket", path, "t1"])
conn, _ = srv.accept()
msg, fds, _, _ = socket.recv_fds(conn, 1024, 1)
assert p.wait() == 0
subprocess.run([oci, "--root", root, "start", "t1"], check=True)
out = b""
end = time.time() + 10
while time.time() < end:
    try:
        b = os.read(fds[0], 4096)
    except OSError:
        break
    if not b:
        break
    out += b
    if b"/dev/pts" in out:
        break
print(out.decode(errors="replace").replace("\r", ""))
subprocess.run([oci, "--root", root, "delete", "--force", "t1"], check=True)
EOF
)
        RC=$?
        expect_rc 0 "the console-socket script"
        expect_contains "$OUT" "tty-ok" "the process's stdin and stdout are the terminal sent over the socket"
        expect_match "$OUT" "/dev/pts/[0-9]+" "from the container's own devpts"
}

it_test cli_exec
cli_exec() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sleep", "100"]' 'c["process"]["env"].append("FROM_CONFIG=yes")'
        oci create --bundle "$IT_TMP/b" e1
        oci exec e1 true
        expect_contains "$ERR" "cannot exec in a created container" "exec before start"
        oci start e1
        oci exec --env A=b --cwd /tmp e1 sh -c 'echo $A $FROM_CONFIG $(pwd); exit 5'
        expect_rc 5 "exec exits with the process's status"
        expect_eq "b yes /tmp" "$OUT" "--env, the config's env, --cwd"
        cat >"$IT_TMP/process.json" <<'EOF'
{"terminal": false, "user": {"uid": 0, "gid": 0}, "args": ["sh", "-c", "echo from-process-file $X"],
 "env": ["PATH=/bin", "X=1"], "cwd": "/"}
EOF
        oci exec --process "$IT_TMP/process.json" e1
        expect_eq "from-process-file 1" "$OUT" "exec --process FILE"
        oci exec --user 1000 e1 id
        expect_true "exec as another user fails without CAP_SETUID" test "$RC" != 0
        expect_contains "$ERR" "CAP_SETUID" "saying why"
        oci exec --detach --pid-file "$IT_TMP/epid" e1 sh -c 'sleep 0.5; exit 4'
        expect_rc 0 "exec --detach"
        local w
        w=$(cat "$IT_TMP/epid")
        expect_true "the pid-file names a live waiter" test -e "/proc/$w"
        wait_until 10 pid_gone "$w" || _it_soft_fail "the detached exec's waiter did not end"
        oci delete --force e1
}

# exec with its own process.capabilities and additionalGids (runc exec --process, --cap,
# --additional-gids), as runc applies them (#19): within what the container's process holds;
# a capability it does not hold, or one cordon refuses, is refused by name.
it_test cli_exec_caps
cli_exec_caps() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sleep", "100"]' 'c["process"]["capabilities"] = {k: ["CAP_CHOWN", "CAP_KILL",
 "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE"] for k in ("bounding", "effective", "permitted")}'
        oci run --detach --bundle "$IT_TMP/b" x1
        expect_rc 0 "run"
        local show='["sh", "-c", "grep -E \"^(Cap(Prm|Eff|Bnd|Amb)|Groups)\" /proc/self/status | tr -d \"\\t\" | tr \"\\n\" \" \""]'
        python3 - "$IT_TMP" "$show" <<'PY'
import json, sys
d, show = sys.argv[1], json.loads(sys.argv[2])
base = {"terminal": False, "args": show, "env": ["PATH=/bin"], "cwd": "/"}
def w(name, caps=None, user=None):
    p = dict(base, user=user or {"uid": 0, "gid": 0})
    if caps is not None:
        p["capabilities"] = caps
    json.dump(p, open("%s/%s.json" % (d, name), "w"))
w("fewer", {"bounding": ["CAP_CHOWN", "CAP_KILL"], "effective": ["CAP_CHOWN"], "permitted": ["CAP_CHOWN", "CAP_KILL"]})
w("nice", {"bounding": ["CAP_CHOWN", "CAP_SYS_NICE"], "effective": ["CAP_SYS_NICE"], "permitted": ["CAP_SYS_NICE"]})
w("admin", {"bounding": ["CAP_SYS_ADMIN"], "effective": ["CAP_SYS_ADMIN"], "permitted": ["CAP_SYS_ADMIN"]})
w("gids", None, {"uid": 0, "gid": 0, "additionalGids": [10, 20]})
PY
        oci exec --process "$IT_TMP/fewer.json" x1
        expect_rc 0 "exec with fewer capabilities"
        # (root's exec makes every permitted capability effective, as the kernel does for uid 0)
        expect_eq "Groups:  CapPrm:0000000000000021 CapEff:0000000000000021 CapBnd:0000000000000021 CapAmb:0000000000000000 " \
                "$OUT" "the exec's own sets, not the container's"
        oci exec --process "$IT_TMP/nice.json" x1
        expect_true "a capability the container does not hold is refused" test "$RC" != 0
        expect_contains "$ERR" "process.capabilities.bounding: capability CAP_SYS_NICE is not permitted to container x1" \
                "naming it"
        oci exec --process "$IT_TMP/admin.json" x1
        expect_true "a capability cordon refuses is refused" test "$RC" != 0
        expect_contains "$ERR" "capability CAP_SYS_ADMIN is refused" "naming it"
        oci exec --cap CAP_SYS_NICE x1 true
        expect_true "exec --cap beyond the container's sets is refused" test "$RC" != 0
        expect_contains "$ERR" "CAP_SYS_NICE is not permitted to container x1" "naming it"
        oci exec --process "$IT_TMP/gids.json" x1
        expect_rc 0 "exec with additionalGids"
        expect_contains "$OUT" "Groups:10 20 " "the exec's own additional groups"
        oci exec --additional-gids 30 x1 id -G
        expect_eq "0 30" "$OUT" "exec --additional-gids"
        oci exec x1 id -G
        expect_eq "0" "$OUT" "a plain exec keeps the container's groups"
        oci exec --user 1000:1000 x1 sh -c 'id -u; grep ^CapBnd /proc/self/status | tr -d "\t"'
        expect_eq "1000
CapBnd:00000000000005e1" "$OUT" "exec --user with the container's CAP_SETUID, its bounding set kept"
        oci delete --force x1
}

# A container whose process.user is not root (podman --user 1000): an exec may be root, with
# capabilities up to the container's bounding set, as runc's `exec -u 0` (the engine's process
# file asks for them); the container's own process has none of it; a capability beyond the
# bounding set, or one cordon refuses, is still refused by name.
it_test cli_exec_root_in_user_container
cli_exec_root_in_user_container() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sh", "-c", "grep ^CapEff /proc/self/status | cut -f2 >/tmp/own; id -u >>/tmp/own; trap \"exit 0\" TERM; while :; do sleep 1; done"]' \
                'c["process"]["user"] = {"uid": 1000, "gid": 1000}
c["process"]["capabilities"] = {"bounding": ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_SETUID", "CAP_SETGID", "CAP_KILL"]}
c["hooks"] = {"startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "cat >/dev/null; id -u >/tmp/hook"]}]}
c["process"]["cwd"] = "/tmp"'
        chmod 1777 "$IT_TMP/b/rootfs/tmp"
        oci run --detach --bundle "$IT_TMP/b" u1
        expect_rc 0 "run as uid 1000 with a bounding set only"
        python3 - "$IT_TMP" <<'PY'
import json, sys
d = sys.argv[1]
base = {"terminal": False, "args": ["sh", "-c", "id -u; grep ^CapEff /proc/self/status | cut -f2; echo r >/etc/by-root && stat -c %u /etc/by-root"],
        "env": ["PATH=/bin"], "cwd": "/", "user": {"uid": 0, "gid": 0}}
def w(name, caps):
    json.dump(dict(base, capabilities={k: caps for k in ("bounding", "effective", "permitted")}), open("%s/%s.json" % (d, name), "w"))
w("root", ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_SETUID", "CAP_SETGID", "CAP_KILL"])
w("nice", ["CAP_CHOWN", "CAP_SYS_NICE"])
w("admin", ["CAP_SYS_ADMIN"])
PY
        wait_until 5 test -s "$IT_TMP/b/rootfs/tmp/own"
        oci exec u1 cat /tmp/hook /tmp/own
        expect_eq "1000
0000000000000000
1000" "$OUT" "its startContainer hook and its process: uid 1000, no capabilities"
        oci exec --process "$IT_TMP/root.json" u1
        expect_rc 0 "exec as root with the bounding set"
        expect_eq "0
00000000000000e3
0" "$OUT" "root, its capabilities, a root-owned file written"
        oci exec u1 sh -c 'id -u; touch /etc/by-1000 2>/dev/null && echo wrote'
        expect_eq 1000 "$OUT" "a plain exec is the container's uid 1000 and cannot write /etc"
        # a run that names no identity (`cordon sandbox exec` into the container's sandbox) is the
        # container's process's own user and sets, as before init stayed root for such a container,
        # and starts in the process's cwd, as runc's exec does (it started in /root, which the
        # image may not have: "cannot change to /root")
        local sid
        sid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sandbox"])' "$OCI_ROOT/u1/state.json")
        OUT=$(timeout 30 "$CORDON" sandbox exec "$sid" -- sh -c 'id -u; grep ^CapEff /proc/self/status | cut -f2; pwd' 2>&1)
        expect_eq "1000
0000000000000000
/tmp" "$OUT" "cordon sandbox exec into its sandbox: uid 1000, no capabilities, in the process's cwd"
        OUT=$(timeout 30 "$CORDON" sandbox exec "$sid" --cwd / -- pwd 2>&1)
        expect_eq "/" "$OUT" "--cwd still chooses"
        oci exec --process "$IT_TMP/nice.json" u1
        expect_true "a capability beyond the bounding set is refused" test "$RC" != 0
        expect_contains "$ERR" "process.capabilities.bounding: capability CAP_SYS_NICE is not permitted to container u1" \
                "naming it"
        oci exec --process "$IT_TMP/admin.json" u1
        expect_true "a capability cordon refuses is refused" test "$RC" != 0
        expect_contains "$ERR" "capability CAP_SYS_ADMIN is refused" "naming it"
        oci kill u1 TERM
        wait_until 10 is_stopped u1
        expect_true "kill (SIGTERM) reaches the uid 1000 process" is_stopped u1
        oci delete --force u1
}

# --preserve-fds beyond a handful (podman's --preserve-fds, systemd's socket activation), as
# runc passes them: fd 3 + i in the runtime is fd 3 + i in the container's process.
it_test cli_preserve_fds
cli_preserve_fds() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sh", "-c", "for i in 3 4 5 6 7 8 9 10 11; do read -r l <&$i; printf \"%s \" \"$l\"; done"]'
        local i
        for i in $(seq 3 11); do echo "fd$i" >"$IT_TMP/f$i"; done
        OUT=$(timeout 30 "$OCI" --root "$OCI_ROOT" run --preserve-fds 9 --bundle "$IT_TMP/b" pf1 \
                3<"$IT_TMP/f3" 4<"$IT_TMP/f4" 5<"$IT_TMP/f5" 6<"$IT_TMP/f6" 7<"$IT_TMP/f7" 8<"$IT_TMP/f8" \
                9<"$IT_TMP/f9" 10<"$IT_TMP/f10" 11<"$IT_TMP/f11" 2>"$IT_TMP/pf.err")
        RC=$?
        ERR=$(cat "$IT_TMP/pf.err")
        expect_rc 0 "run --preserve-fds 9"
        expect_eq "fd3 fd4 fd5 fd6 fd7 fd8 fd9 fd10 fd11 " "$OUT" "each preserved fd at its number"
        make_bundle "$IT_TMP/b2" '["sleep", "100"]'
        oci run --detach --bundle "$IT_TMP/b2" pf2
        OUT=$(timeout 30 "$OCI" --root "$OCI_ROOT" exec --preserve-fds 6 pf2 sh -c 'read -r l <&8; echo "$l"' \
                3</dev/null 4</dev/null 5</dev/null 6</dev/null 7</dev/null 8<"$IT_TMP/f8" 2>&1)
        expect_eq fd8 "$OUT" "exec --preserve-fds 6"
        oci delete --force pf2
}

# `cordon-oci ARGS` on a terminal of the test's own (33 rows, 111 columns), as a person's
# shell gives one: "typed" is typed once the process shows its terminal; OUT gets what the
# terminal showed and "[exit N]".
oci_pty() {
        OUT=$(python3 - "$OCI" --root "$OCI_ROOT" "$@" <<'PY'
import fcntl, os, pty, select, struct, subprocess, sys, termios, time
m, s = pty.openpty()
fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 111, 0, 0))
p = subprocess.Popen(sys.argv[1:], stdin=s, stdout=s, stderr=s, start_new_session=True,
                     preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
os.close(s)
out, start, typed = b"", time.time(), False
while time.time() - start < 30:
    if not typed and b"pts" in out:
        os.write(m, b"typed\n")
        typed = True
    r, _, _ = select.select([m], [], [], 0.2)
    if r:
        try:
            d = os.read(m, 4096)
        except OSError:
            break
        if not d:
            break
        out += d
    elif p.poll() is not None:
        break
p.wait(timeout=10)
sys.stdout.write(out.decode(errors="replace").replace("\r", "") + "[exit %d]\n" % p.returncode)
PY
)
        printf '%s\n' "$OUT" | sed 's/^/  pty| /' >&2
}

# process.terminal without --console-socket: `run` and `exec -t` in the foreground put the
# process on the runtime's own terminal, as runc does (typed input in, output out, the size
# passed on, the exit code); create and --detach without one are refused with runc's words.
it_test cli_run_terminal
cli_run_terminal() {
        oci_setup
        local cmd='tty; stty size; read l; echo got-$l; exit 6'
        make_bundle "$IT_TMP/b" "[\"sh\", \"-c\", \"$cmd\"]" 'c["process"]["terminal"] = True'
        oci_pty run --bundle "$IT_TMP/b" rt1
        expect_match "$OUT" "^/dev/pts/[0-9]+" "run: the process runs on a terminal of its own devpts"
        expect_contains "$OUT" "33 111" "run: of the runtime's terminal's size"
        expect_contains "$OUT" "got-typed" "run: what is typed reaches it"
        expect_contains "$OUT" "[exit 6]" "run exits with its code"
        oci run --detach --bundle "$IT_TMP/b" rt2
        expect_true "run --detach with a terminal and no --console-socket fails" test "$RC" != 0
        expect_contains "$ERR" "cannot allocate tty if cordon-oci will detach without setting console socket" "as runc says"
        make_bundle "$IT_TMP/b2" '["sleep", "100"]'
        oci run --detach --bundle "$IT_TMP/b2" rt3
        oci_pty exec -t rt3 sh -c "$cmd"
        expect_match "$OUT" "^/dev/pts/[0-9]+" "exec -t: on a terminal"
        expect_contains "$OUT" "33 111" "exec -t: of the runtime's terminal's size"
        expect_contains "$OUT" "got-typed" "exec -t: what is typed reaches it"
        expect_contains "$OUT" "[exit 6]" "exec -t exits with its code"
        oci exec -t --detach rt3 true
        expect_contains "$ERR" "cannot allocate tty if cordon-oci will detach without setting console socket" \
                "exec -t --detach without --console-socket is refused as runc does"
        oci delete --force rt3
}

# hooks.startContainer run inside the container after `start`, before its process (OCI
# runtime-spec; runc runs them in the container's namespaces with its root): their path is
# the container's, their stdin the state with status "created", and a failing one stops the
# start. createContainer hooks are refused, saying why.
it_test cli_start_container_hooks
cli_start_container_hooks() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sh", "-c", "cat /tmp/hook.out"]' 'c["hooks"] = {"startContainer": [
 {"path": "/bin/sh", "args": ["sh", "-c", "echo done >&2; exec >/tmp/hook.out; read -r s; echo \"state=$s\"; echo \"env=$HOOKENV\"; hostname"],
  "env": ["HOOKENV=yes"]},
 {"path": "/bin/sh", "args": ["sh", "-c", "cat >/dev/null; echo second >>/tmp/hook.out"]}]}
c["hostname"] = "in-the-container"'
        oci run --bundle "$IT_TMP/b" h1
        expect_rc 0 "run with startContainer hooks"
        expect_contains "$OUT" '"status":"created"' "the hook read the state, status created"
        expect_contains "$OUT" '"id":"h1"' "of this container"
        expect_contains "$OUT" "env=yes" "with its own env"
        expect_contains "$OUT" "in-the-container" "in the container's uts namespace"
        expect_contains "$OUT" "second" "each hook in order, in the container's own /tmp, before its process"
        expect_contains "$ERR" "done" "the hook's stderr is the runtime's"
        make_bundle "$IT_TMP/b2" '["sh", "-c", "echo ran > /tmp/ran; sleep 100"]' 'c["hooks"] = {"startContainer": [
 {"path": "/bin/sh", "args": ["sh", "-c", "exit 3"]}]}'
        oci create --bundle "$IT_TMP/b2" h2
        oci start h2
        expect_true "a failing startContainer hook fails start" test "$RC" != 0
        expect_contains "$ERR" "startContainer hook /bin/sh failed (exit status 3)" "saying which"
        wait_until 10 is_stopped h2 || _it_soft_fail "the container did not stop"
        expect_eq stopped "$(state_of h2)" "and the container's process never runs"
        oci delete --force h2
        make_bundle "$IT_TMP/b3" '["true"]' 'c["hooks"] = {"createContainer": [{"path": "/bin/true"}]}'
        oci create --bundle "$IT_TMP/b3" h3
        expect_true "a createContainer hook is refused" test "$RC" != 0
        expect_contains "$ERR" "hooks.createContainer: not supported" "naming the field and why"
}

# The container's process is pid 1 of its own pid namespace, as runc makes it (#19): its
# /proc/1 is the command, an orphan goes to it, an exec'd process sees it as 1, and a
# signal it has no handler for (TERM to a plain sleep) does not end it (the kernel's rule
# for pid 1), while one it handles does.
it_test cli_pid1
cli_pid1() {
        oci_setup
        grep -q 'pid_for_children' <(ls /proc/self/ns) || skip "no pid_for_children namespace link"
        # (ps again while the orphan is between its fork and its exec: its
        # cmdline reads empty then, seen once in a whole-suite run)
        make_bundle "$IT_TMP/b" '["sh", "-c", "echo $$; tr \"\\0\" \" \" </proc/1/cmdline; echo; sh -c \"sleep 30 &\"; for i in 1 2 3 4 5 6 7 8 9 10; do ps -o args | grep -q \"^sleep 30\" && break; sleep 0.1; done; ps -o pid,ppid,args"]'
        oci run --bundle "$IT_TMP/b" p1
        expect_rc 0 "run"
        if [ "$(printf '%s\n' "$OUT" | head -n 1)" != 1 ] && [ "$(uname -r | cut -d. -f1)" -lt 7 ] &&
                [ "$(uname -r | cut -d. -f2)" -lt 15 ]; then
                skip "procfs cannot show another pid namespace before Linux 6.15 (init stays pid 1 there)"
        fi
        expect_eq 1 "$(printf '%s\n' "$OUT" | sed -n 1p)" "the process is pid 1"
        expect_contains "$(printf '%s\n' "$OUT" | sed -n 2p)" "sh -c echo" "/proc/1/cmdline is the container's command"
        # the orphan (a fork of the inner sh, before or after its exec of sleep)
        expect_match "$(printf '%s\n' "$OUT" | sed -n '3,$p')" '^ *[0-9]+ +1 +(\{[a-z]+\} )?(sh -c )?sleep 30' "an orphan's parent is pid 1"
        make_bundle "$IT_TMP/b2" '["sleep", "1000"]'
        oci run --detach --bundle "$IT_TMP/b2" p2
        oci exec p2 sh -c 'echo $$ $(tr "\0" " " </proc/1/cmdline)'
        expect_match "$OUT" '^[0-9]+ sleep 1000$' "exec joins the container's pid namespace"
        expect_true "exec is not pid 1" test "${OUT%% *}" != 1
        oci kill p2 TERM
        expect_rc 0 "kill TERM"
        oci exec p2 true
        expect_eq running "$(state_of p2)" "a pid 1 without a TERM handler survives kill TERM (as under runc)"
        oci kill p2 KILL
        wait_until 10 is_stopped p2 || _it_soft_fail "kill KILL did not stop it"
        expect_eq stopped "$(state_of p2)" "kill KILL ends it"
        oci delete p2
        make_bundle "$IT_TMP/b3" '["sh", "-c", "trap \"exit 7\" TERM; : > /tmp/trapped; while :; do sleep 1; done"]'
        oci run --detach --bundle "$IT_TMP/b3" p3
        # once its handler is in place (before it, TERM meets pid 1's default: ignored)
        wait_until 10 "$OCI" --root "$OCI_ROOT" exec p3 test -e /tmp/trapped || _it_soft_fail "the handler was never set"
        oci kill p3 TERM
        wait_until 10 is_stopped p3 || _it_soft_fail "a TERM handler did not end it"
        expect_eq stopped "$(state_of p3)" "kill TERM reaches a pid 1 that handles it"
        oci delete p3
}

# process.capabilities, all five sets, within the container's user namespace (#19): as
# runc applies them to root and to another user (the ambient set survives the exec), a
# capability cordon refuses fails the create naming the set and the capability, and
# NET_RAW (in containerd's and Docker's default sets) is held as runc holds it (raw and
# packet sockets stay refused: tests/escape/oci.sh).
it_test cli_capabilities
cli_capabilities() {
        oci_setup
        local show='["sh", "-c", "grep ^Cap /proc/self/status | tr -d \"\\t\" | tr \"\\n\" \" \""]'
        local caps='c["process"]["capabilities"] = {"bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE",
 "CAP_SETUID", "CAP_SETGID", "CAP_NET_RAW"], "effective": ["CAP_CHOWN", "CAP_NET_BIND_SERVICE"],
 "permitted": ["CAP_CHOWN", "CAP_NET_BIND_SERVICE"], "inheritable": ["CAP_NET_BIND_SERVICE"],
 "ambient": ["CAP_NET_BIND_SERVICE"]}'
        make_bundle "$IT_TMP/b" "$show" "$caps"
        oci --log "$IT_TMP/k1.log" run --bundle "$IT_TMP/b" k1
        expect_rc 0 "run with capabilities"
        expect_eq "CapInh:0000000000000400 CapPrm:0000000000000401 CapEff:0000000000000401 CapBnd:00000000000024e1 CapAmb:0000000000000400 " \
                "$OUT" "root holds the config's sets (NET_RAW in the bounding set, as runc)"
        expect_not_contains "$(cat "$IT_TMP/k1.log")" "NET_RAW" "and says nothing of NET_RAW in the log"
        make_bundle "$IT_TMP/b2" "$show" "$caps
c['process']['user'] = {'uid': 1000, 'gid': 1000}"
        oci run --bundle "$IT_TMP/b2" k2
        expect_eq "CapInh:0000000000000400 CapPrm:0000000000000400 CapEff:0000000000000400 CapBnd:00000000000024e1 CapAmb:0000000000000400 " \
                "$OUT" "another user keeps only the ambient set across its exec"
        make_bundle "$IT_TMP/b3" '["true"]' "c['process']['capabilities'] = {'bounding': ['CAP_CHOWN', 'CAP_SYS_ADMIN']}"
        oci run --bundle "$IT_TMP/b3" k3
        expect_true "a refused capability fails the create" test "$RC" != 0
        expect_contains "$ERR" "process.capabilities.bounding: capability CAP_SYS_ADMIN is refused" "naming the set and it"
        expect_true "and leaves no state" test ! -e "$OCI_ROOT/k3"
        make_bundle "$IT_TMP/b4" '["sh", "-c", "grep ^CapEff /proc/self/status"]' "c['process']['capabilities'] = {}"
        oci run --bundle "$IT_TMP/b4" k4
        expect_match "$OUT" 'CapEff:[[:space:]]+0+$' "no capabilities listed: none held"
        # exec --user: init, holding the container's CAP_SETUID and CAP_SETGID, switches the run
        make_bundle "$IT_TMP/b5" '["sleep", "1000"]' "c['process']['capabilities'] = {s: ['CAP_SETUID', 'CAP_SETGID', 'CAP_KILL'] for s in ('bounding', 'effective', 'permitted')}"
        oci run --detach --bundle "$IT_TMP/b5" k5
        oci exec --user 1000:1001 k5 sh -c 'echo $(id -u):$(id -g) $(grep ^CapEff /proc/self/status | cut -f2)'
        expect_rc 0 "exec --user"
        expect_eq "1000:1001 0000000000000000" "$OUT" "the run is that user, with no capability left"
        oci delete --force k5
}

# A capability cordon does not know (runtime-tools' process_capabilities_fail adds CAP_TEST
# to the bounding set): runtime-spec 1.1 says to log it and not to fail, as runc >= 1.1 and
# crun do. The container runs with exactly the other capabilities; a value that is not a
# capability name at all still fails the create, naming the field.
it_test cli_capabilities_unknown
cli_capabilities_unknown() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sh", "-c", "grep ^Cap /proc/self/status | tr -d \"\\t\" | tr \"\\n\" \" \""]' \
                'c["process"]["capabilities"] = {s: ["CAP_CHOWN", "CAP_TEST", "CAP_KILL"] for s in ("bounding", "effective", "permitted")}'
        oci --log "$IT_TMP/u1.log" run --bundle "$IT_TMP/b" u1
        expect_rc 0 "run with CAP_TEST in the sets"
        expect_eq "CapInh:0000000000000000 CapPrm:0000000000000021 CapEff:0000000000000021 CapBnd:0000000000000021 CapAmb:0000000000000000 " \
                "$OUT" "the process holds exactly CHOWN and KILL"
        expect_contains "$(cat "$IT_TMP/u1.log")" \
                'process.capabilities.bounding[1]: unknown capability \"CAP_TEST\" ignored' \
                "the log names the set, the index and the value"
        make_bundle "$IT_TMP/b2" '["true"]' 'c["process"]["capabilities"] = {"bounding": ["CAP_CHOWN", "chown"]}'
        oci run --bundle "$IT_TMP/b2" u2
        expect_true "a value that is no capability name fails the create" test "$RC" != 0
        expect_contains "$ERR" 'process.capabilities.bounding[1]: expected a capability name (CAP_...), got "chown"' \
                "naming the field and the value"
        expect_true "and leaves no state" test ! -e "$OCI_ROOT/u2"
        # exec, with a --process file or --cap naming one: the same
        make_bundle "$IT_TMP/b3" '["sleep", "100"]' \
                'c["process"]["capabilities"] = {s: ["CAP_CHOWN", "CAP_KILL"] for s in ("bounding", "effective", "permitted")}'
        oci run --detach --bundle "$IT_TMP/b3" u3
        expect_rc 0 "run"
        printf '%s' '{"args": ["sh", "-c", "grep ^CapEff /proc/self/status | tr -d \"\\t\""], "cwd": "/",
 "capabilities": {"bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_TEST"], "effective": ["CAP_CHOWN", "CAP_TEST"], "permitted": ["CAP_CHOWN"]}}' \
                >"$IT_TMP/p.json"
        oci --log "$IT_TMP/u3.log" exec --process "$IT_TMP/p.json" u3
        expect_rc 0 "exec --process with CAP_TEST"
        expect_eq "CapEff:0000000000000001" "$OUT" "the exec holds CHOWN alone"
        expect_contains "$(cat "$IT_TMP/u3.log")" 'capabilities.effective[1]: unknown capability \"CAP_TEST\" ignored' \
                "logged"
        oci exec --cap CAP_TEST u3 true
        expect_rc 0 "exec --cap CAP_TEST"
        oci exec --cap 'cap test' u3 true
        expect_contains "$ERR" "exec --cap cap test: unknown capability" "a malformed name still fails"
        oci delete --force u3
}

it_test cli_log_json_error
cli_log_json_error() {
        oci_setup
        OUT=$(timeout 30 "$OCI" --root "$OCI_ROOT" --log "$IT_TMP/log.json" --log-format json start nosuch 2>&1)
        RC=$?
        expect_true "an error exits non-zero" test "$RC" != 0
        expect_contains "$OUT" "container nosuch does not exist" "stderr names the cause"
        local line
        line=$(cat "$IT_TMP/log.json")
        expect_match "$line" '^\{"level": ?"error", ?"msg": ?"container nosuch does not exist", ?"time": ?"[0-9T:.-]+Z"\}$' \
                "one runc-style JSON line in --log"
        timeout 30 "$OCI" --root "$OCI_ROOT" --log "$IT_TMP/log.txt" kill nosuch 9 2>/dev/null
        expect_match "$(cat "$IT_TMP/log.txt")" '^time="[^"]+" level=error msg="container nosuch does not exist"$' \
                "the text format is logrus's"
}

it_test cli_refusals
cli_refusals() {
        oci_setup
        make_bundle "$IT_TMP/b" '["true"]' 'for ns in c["linux"]["namespaces"]:
    if ns["type"] == "ipc": ns["path"] = "/proc/1/ns/ipc"'
        oci create --bundle "$IT_TMP/b" n1
        expect_true "joining another ipc namespace is refused" test "$RC" != 0
        expect_contains "$ERR" "/proc/1/ns/ipc" "the refusal names the namespace"
        expect_true "nothing is left" test ! -e "$OCI_ROOT/n1"
        make_bundle "$IT_TMP/b2" '["true"]'
        oci --systemd-cgroup create --bundle "$IT_TMP/b2" n2
        expect_true "--systemd-cgroup is refused" test "$RC" != 0
        expect_contains "$ERR" "cgroupfs" "and says what to use instead"
        oci --foo=bar list
        expect_rc 0 "an unknown --X=Y global (podman's --runtime-flag) is not fatal"
        oci spec --bundle "$IT_TMP/b2"
        expect_true "spec does not overwrite a config.json" test "$RC" != 0
        oci features
        expect_contains "$OUT" '"ociVersionMax"' "features"
        expect_contains "$OUT" 'dev.cordon.policy' "features names the policy annotation"
        expect_contains "$OUT" '"rshared"' "features lists the propagation options"
        OUT=$("$OCI" --version)
        expect_match "$OUT" '^cordon-oci version ' "--version"
        # runc's CRIU verbs (podman container checkpoint, ctr checkpoint): refused plainly
        oci checkpoint --image-path "$IT_TMP/ck" n1
        expect_rc 1 "checkpoint fails"
        expect_contains "$ERR" "checkpoint is not supported by cordon" "and says it is not supported"
        oci restore --image-path "$IT_TMP/ck" n1
        expect_contains "$ERR" "restore is not supported by cordon" "restore too"
}

# A config without a network (or pid) namespace asks runc for the host's (podman's --network
# host, a hostNetwork pod): cordon gives the container its own, and says so in the log (a
# warning, as runc logs its own).
# A namespace the config leaves out is the host's for runc (podman
# --network host, a hostNetwork or hostPID pod). cordon shares none of the
# host's: create is refused, naming the field and what it asks for, and
# leaves nothing behind.
# A command the container's root lacks, or cannot run, fails create as runc's and crun's do
# (runc's init looks it up before it waits for start): the error names it, in runc's words,
# and nothing is left (the container's state, its sandbox, its uid range, its groups).
it_test cli_missing_command
cli_missing_command() {
        oci_setup
        make_bundle "$IT_TMP/b" '["nope"]' 'c["process"]["env"] = ["PATH=/usr/bin:/bin"]'
        local ranges sandboxes
        ranges=$(ls /run/cordon/idranges 2>/dev/null | grep -c +)
        oci create --bundle "$IT_TMP/b" m1
        expect_rc 1 "create of a command not in the root fails"
        expect_contains "$ERR" 'exec: "nope": executable file not found in $PATH' "naming it as runc does"
        expect_true "no state is left" test ! -e "$OCI_ROOT/m1"
        expect_eq "" "$(cgroups_of m1)" "no group is left"
        wait_until 5 test "$ranges" -ge "$(ls /run/cordon/idranges 2>/dev/null | grep -c +)"
        expect_true "no uid range is left" test "$ranges" -ge "$(ls /run/cordon/idranges 2>/dev/null | grep -c +)"
        local b="$IT_TMP/b"
        set_process() { # PYTHON on the config's process p
                python3 - "$b/config.json" "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
p = c["process"]
exec(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PY
        }
        set_process 'p["args"] = ["/nope"]'
        oci create --bundle "$b" m2
        expect_contains "$ERR" 'exec: "/nope": stat /nope: no such file or directory' "a path that is not there"
        set_process 'p["args"] = ["/etc"]'
        oci create --bundle "$b" m3
        expect_contains "$ERR" 'exec: "/etc": permission denied' "a directory"
        printf 'x\n' >"$b/rootfs/root/plain" && chmod 644 "$b/rootfs/root/plain"
        set_process 'p["args"] = ["/root/plain"]'
        oci create --bundle "$b" m4
        expect_contains "$ERR" 'exec: "/root/plain": permission denied' "a file without execute permission"
        # looked up as the container's user, in its cwd
        printf '#!/bin/sh\necho tool-ran\n' >"$b/rootfs/root/tool" && chmod 700 "$b/rootfs/root/tool"
        chmod 755 "$b/rootfs/root"
        set_process 'p["args"] = ["./tool"]; p["cwd"] = "/root"; p["user"] = {"uid": 1000, "gid": 1000}'
        oci create --bundle "$b" m5
        expect_contains "$ERR" 'exec: "./tool": permission denied' "root's 0700 file, for uid 1000"
        set_process 'p["args"] = ["./tool"]; p["cwd"] = "/root"; p["user"] = {"uid": 0, "gid": 0}'
        oci run --bundle "$b" m6
        expect_rc 0 "a command relative to the cwd runs"
        expect_eq tool-ran "$OUT" "its output"
        # looked for after the createRuntime hooks, which may put it in place (as runc's init does)
        set_process "p['args'] = ['late']; p['cwd'] = '/'
c['hooks'] = {'createRuntime': [{'path': '/bin/sh', 'args': ['sh', '-c',
    'printf \"#!/bin/sh\\\\necho late-ran\\\\n\" >$b/rootfs/bin/late; chmod 755 $b/rootfs/bin/late']}]}"
        oci run --bundle "$b" m7
        expect_rc 0 "a command a createRuntime hook puts in place runs"
        expect_eq late-ran "$OUT" "its output"
        # exec: the same look, failing the exec as runc's (status 255)
        set_process 'p["args"] = ["sleep", "100"]'
        oci run --detach --bundle "$b" m8
        oci exec m8 nope
        expect_rc 255 "exec of a command not in the root fails"
        expect_contains "$ERR" 'exec failed: exec: "nope": executable file not found in $PATH' "naming it"
        oci exec --cwd /root m8 ./tool
        expect_eq tool-ran "$OUT" "an exec relative to its cwd runs"
        oci delete --force m8
        oci list
        expect_not_contains "$OUT" "m1" "no container is listed"
        expect_eq "" "$(ls "$OCI_ROOT")" "nothing is left in the runtime's root"
}

it_test cli_host_namespaces_refused
cli_host_namespaces_refused() {
        oci_setup
        local ns
        for ns in network pid ipc uts mount; do
                make_bundle "$IT_TMP/b-$ns" '["true"]' \
                        "c['linux']['namespaces'] = [ns for ns in c['linux']['namespaces'] if ns['type'] != '$ns']
c.pop('hostname', None)"
                oci create --bundle "$IT_TMP/b-$ns" "hn-$ns"
                expect_true "create without a $ns namespace is refused" test "$RC" != 0
                expect_contains "$ERR" "linux.namespaces: no \"$ns\" namespace, which asks for the host's" \
                        "the refusal names the field and the namespace ($ns)"
                expect_true "no state is left for hn-$ns" test ! -e "$OCI_ROOT/hn-$ns"
        done
        expect_contains "$ERR" "$IT_TMP/b-mount/config.json" "the refusal names the config"
        oci list
        expect_not_contains "$OUT" "hn-" "no container is listed"
}

it_test cli_seccomp_profile
cli_seccomp_profile() {
        oci_setup
        make_bundle "$IT_TMP/b" '["sh", "-c", "mkdir /tmp/d && echo made; echo still-here"]' \
                'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"], "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
        oci run --bundle "$IT_TMP/b" sc1
        expect_not_contains "$OUT" "made" "the profile's ERRNO holds on top of cordon's own filter"
        expect_contains "$OUT" "still-here" "the rest runs"
        expect_contains "$ERR" "Operation not permitted" "mkdir got the profile's errno"
        make_bundle "$IT_TMP/b2" '["sh", "-c", "mkdir /tmp/d && echo made"]'
        oci run --bundle "$IT_TMP/b2" sc2
        expect_eq made "$OUT" "without the profile mkdir works"
}

it_test cli_hooks_and_preserved_fds
cli_hooks_and_preserved_fds() {
        oci_setup
        cat >"$IT_TMP/hook.sh" <<EOF
#!/bin/sh
cat > "$IT_TMP/hook.\$1"
EOF
        chmod +x "$IT_TMP/hook.sh"
        make_bundle "$IT_TMP/b" '["sh", "-c", "echo via-fd-3 >&3"]' "c['hooks'] = {
 'prestart': [{'path': '$IT_TMP/hook.sh', 'args': ['hook.sh', 'prestart']}],
 'poststart': [{'path': '$IT_TMP/hook.sh', 'args': ['hook.sh', 'poststart']}],
 'poststop': [{'path': '$IT_TMP/hook.sh', 'args': ['hook.sh', 'poststop']}]}"
        exec 3>"$IT_TMP/fd3"
        oci create --bundle "$IT_TMP/b" --preserve-fds 1 --pid-file "$IT_TMP/pid" h1
        exec 3>&-
        expect_rc 0 "create with a preserved fd"
        expect_contains "$(cat "$IT_TMP/hook.prestart" 2>/dev/null)" '"status":"created"' "prestart got the state on stdin"
        oci start h1
        wait_until 10 pid_gone "$(cat "$IT_TMP/pid")"
        expect_eq "via-fd-3" "$(cat "$IT_TMP/fd3")" "--preserve-fds 1: the process's fd 3 is ours"
        expect_contains "$(cat "$IT_TMP/hook.poststart" 2>/dev/null)" '"id":"h1"' "poststart ran"
        oci delete h1
        expect_contains "$(cat "$IT_TMP/hook.poststop" 2>/dev/null)" '"status":"stopped"' "poststop ran at delete"
}

# --- podman ---

podman_setup() {
        oci_setup
        command -v podman >/dev/null || skip "podman is not installed"
        command -v conmon >/dev/null || [ -x /usr/libexec/podman/conmon ] || skip "conmon is not installed"
        PM_DIR="$IT_TMP/podman"
        mkdir -p "$PM_DIR"
        # conmon leaves a file named "oom" in its working directory (after an OOM kill, as
        # podman_limits makes): ours, not the caller's source tree (as podman.sh does)
        cd "$PM_DIR" || fail "cd $PM_DIR"
        # podman refuses a runroot longer than 50 characters
        PM_RUNROOT=$(mktemp -d /tmp/cordon-pm.XXXXXX) || fail "mktemp"
        at_exit "rm -rf '$PM_RUNROOT'"
        PM=(podman --root "$PM_DIR/storage" --runroot "$PM_RUNROOT" --tmpdir "$PM_DIR/tmp"
                --runtime "$OCI" --cgroup-manager=cgroupfs --events-backend=file)
        # the test host's podman asks for more than the VM allows without these (issue #7)
        PM_RUN=(--network=none --ulimit nofile=20000:20000 --ulimit nproc=32768:32768)
        at_exit "${PM[*]} rm -af -t 0; ${PM[*]} rmi -af; rm -rf '$PM_DIR'"
        make_rootfs "$PM_DIR/rootfs"
        tar -C "$PM_DIR/rootfs" -cf "$PM_DIR/rootfs.tar" . || fail "tar"
        local imp
        imp=$("${PM[@]}" import "$PM_DIR/rootfs.tar" localhost/cordon-test:1 2>&1) || fail "podman import failed: $imp"
        IMG=localhost/cordon-test:1
}

pm() { # podman ARGS, like oci()
        local errf
        errf=$(mktemp -p "$IT_TMP" stderr.XXXXXX) || fail "mktemp failed"
        printf '+ podman' >&2
        printf ' %q' "$@" >&2
        printf '\n' >&2
        OUT=$(timeout -k 5 90 "${PM[@]}" "$@" 2>"$errf")
        RC=$?
        ERR=$(cat "$errf")
        rm -f "$errf"
        printf '  [exit %s]\n' "$RC" >&2
        [ -n "$OUT" ] && printf '%s\n' "$OUT" | sed 's/^/  stdout| /' | head -n 40 >&2
        [ -n "$ERR" ] && printf '%s\n' "$ERR" | sed 's/^/  stderr| /' | head -n 40 >&2
        return 0
}

it_test podman_run
podman_run() {
        podman_setup
        pm run --rm "${PM_RUN[@]}" "$IMG" echo hello
        expect_rc 0 "podman run echo"
        expect_eq hello "$OUT" "its output"
        pm run --rm "${PM_RUN[@]}" "$IMG" sh -c 'exit 42'
        expect_rc 42 "the exit code propagates"
        pm run --rm "${PM_RUN[@]}" -e FOO=bar "$IMG" sh -c 'echo $FOO'
        expect_eq bar "$OUT" "-e"
        pm run --rm "${PM_RUN[@]}" -w /tmp "$IMG" pwd
        expect_eq /tmp "$OUT" "-w"
        pm run --rm "${PM_RUN[@]}" --user 1000 "$IMG" id -u
        expect_eq 1000 "$OUT" "--user 1000"
        pm run --rm "${PM_RUN[@]}" --read-only "$IMG" sh -c 'touch /x 2>&1; test -e /x && echo x-exists; touch /tmp/y && echo tmp-writable'
        expect_match "$OUT" "Read-only file system|Permission denied" "--read-only blocks writes to the root"
        expect_not_contains "$OUT" "x-exists" "nothing was written there"
        expect_contains "$OUT" "tmp-writable" "--read-only keeps podman's tmpfs /tmp writable"
        local vol
        vol=$(scratch_dir vol)
        pm run --rm "${PM_RUN[@]}" -v "$vol:/data" "$IMG" sh -c 'echo from-container > /data/f'
        expect_rc 0 "-v"
        expect_eq from-container "$(cat "$vol/f" 2>/dev/null)" "the bind mount's write is visible on the host"
        # podman's own id mapping of its overlay root: refused plainly (it failed before on a
        # lower layer podman had unmounted), leaving nothing
        pm run --rm "${PM_RUN[@]}" --uidmap 0:100000:65536 --gidmap 0:100000:65536 "$IMG" true
        expect_true "--uidmap is refused" test "$RC" != 0
        expect_contains "$ERR" "linux.uidMappings: container id 0 is host id 100000" "naming the field and the value"
        # --privileged: refused at its first host device, saying it is --privileged
        pm run --rm "${PM_RUN[@]}" --privileged "$IMG" true
        expect_true "--privileged is refused" test "$RC" != 0
        expect_contains "$ERR" "this is podman's --privileged" "saying so"
        expect_eq "" "$(ls "$OCI_ROOT" 2>/dev/null)" "--rm left no container state"
}

it_test podman_limits
podman_limits() {
        podman_setup
        pm run --rm "${PM_RUN[@]}" --memory 32m "$IMG" sh -c 'dd if=/dev/zero of=/dev/null bs=64M count=1 && echo survived'
        expect_rc 137 "--memory 32m: a 64M buffer is OOM-killed"
        expect_not_contains "$OUT" survived "it did not survive"
        pm run --rm "${PM_RUN[@]}" --pids-limit 10 "$IMG" sh -c 'for i in $(seq 1 20); do sleep 5 & done; echo all-forked'
        expect_not_contains "$OUT" all-forked "--pids-limit 10 stops the 20th fork"
        expect_contains "$ERR" "can't fork" "the shell says why"
}

it_test podman_lifecycle
podman_lifecycle() {
        podman_setup
        # pid 1 of its namespace, as under runc: SIGTERM reaches it through its handler
        pm run -d "${PM_RUN[@]}" "$IMG" sh -c 'trap "exit 143" TERM; while :; do sleep 1; done'
        expect_rc 0 "podman run -d"
        local cid=$OUT
        pm exec "$cid" sh -c 'echo exec-ok; exit 7'
        expect_rc 7 "podman exec's status"
        expect_eq exec-ok "$OUT" "podman exec into a running container"
        pm exec -e A=b -w /tmp "$cid" sh -c 'echo $A $(pwd)'
        expect_eq "b /tmp" "$OUT" "podman exec -e -w"
        pm pause "$cid"
        expect_rc 0 "podman pause"
        pm inspect --format '{{.State.Status}}' "$cid"
        expect_eq paused "$OUT" "paused"
        pm unpause "$cid"
        expect_rc 0 "podman unpause"
        pm exec "$cid" true
        expect_rc 0 "runs again after unpause"
        # egress: no dev.cordon.policy annotation, so nothing may leave (the gate decides
        # before any packet: a name is refused by the DNS stub, an address by the gate)
        pm exec "$cid" sh -c 'wget -q -T 3 -O- http://example.com/ >/dev/null 2>&1 && echo name-reached; nc -w 3 192.0.2.1 443 </dev/null && echo addr-reached; echo done'
        expect_eq done "$OUT" "an egress attempt is refused"
        pm stop -t 10 "$cid"
        expect_rc 0 "podman stop"
        pm inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$cid"
        expect_eq "exited 143" "$OUT" "stopped by SIGTERM"
        pm rm "$cid"
        expect_rc 0 "podman rm"
        expect_eq "" "$(ls "$OCI_ROOT" 2>/dev/null)" "no container state left"
}

# --- containerd ---

task_stopped() { ctr -a "$1" task ls 2>/dev/null | grep -q "^$2 .*STOPPED"; }

it_test containerd_basics
containerd_basics() {
        podman_setup # builds the image; containerd imports podman's archive of it
        command -v containerd >/dev/null || skip "containerd is not installed"
        command -v ctr >/dev/null || skip "ctr is not installed"
        local d="$IT_TMP/ctd"
        mkdir -p "$d"
        pm save --format docker-archive -o "$d/img.tar" "$IMG"
        [ "$RC" = 0 ] || fail "podman save failed"
        cat >"$d/config.toml" <<EOF
version = 2
root = "$d/root"
state = "$d/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$d/sock"
[ttrpc]
  address = "$d/sock.ttrpc"
[debug]
  address = "$d/debug.sock"
EOF
        containerd --config "$d/config.toml" >"$d/log" 2>&1 &
        local cpid=$!
        at_exit "kill $cpid; sleep 1; rm -rf '$d'"
        local C=(ctr -a "$d/sock")
        wait_until 20 "${C[@]}" version >/dev/null 2>&1 || fail "containerd did not start: $(tail -3 "$d/log")"
        "${C[@]}" images import "$d/img.tar" >/dev/null 2>&1 || fail "ctr images import failed"
        local R=(--runc-binary "$OCI" --runc-root "$d/runc")
        OUT=$(timeout 60 "${C[@]}" run --rm "${R[@]}" "$IMG" c1 sh -c 'echo hello from containerd; exit 5' 2>"$IT_TMP/err")
        RC=$?
        expect_rc 5 "ctr run: the exit code"
        expect_eq "hello from containerd" "$OUT" "ctr run: the output"
        # pid 1 of its namespace: ctr's SIGTERM reaches it through its handler
        timeout 60 "${C[@]}" run -d "${R[@]}" "$IMG" c2 sh -c 'trap "exit 0" TERM; while :; do sleep 1; done' >/dev/null 2>&1
        OUT=$(timeout 30 "${C[@]}" task exec --exec-id e1 c2 sh -c 'echo in-exec; exit 3' 2>&1)
        RC=$?
        expect_rc 3 "ctr task exec's status"
        expect_eq in-exec "$OUT" "ctr task exec"
        OUT=$(timeout 30 "${C[@]}" task ls 2>&1)
        expect_match "$OUT" 'c2 +[0-9]+ +RUNNING' "task ls"
        timeout 30 "${C[@]}" task kill c2
        wait_until 10 task_stopped "$d/sock" c2 ||
                _it_soft_fail "the task did not stop after ctr task kill"
        timeout 30 "${C[@]}" task rm c2 >/dev/null 2>&1
        timeout 30 "${C[@]}" c rm c2 >/dev/null 2>&1
        expect_eq "" "$(ls "$d/runc/default" 2>/dev/null)" "no container state left in the runtime root"
        # seen once in five runs: the shim's dead-shim cleanup reporting "exit status 255" for a
        # container already deleted (not reproduced by hand); logged, not asserted, until understood
        grep -o 'failed to remove runc container.\{0,300\}' "$d/log" >&2 || true
}

it_main "$@"
