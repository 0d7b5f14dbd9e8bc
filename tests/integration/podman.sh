#!/bin/bash
# podman's everyday commands under cordon, measured against crun (issue #19): each check runs
# once with the reference runtime and once with `--runtime cordon-oci --cgroup-manager=cgroupfs`,
# and cordon must pass every check the reference passes. The image is a busybox-static root
# imported with `podman import` (no registry is needed), each pass with its own throwaway
# podman root under the test's scratch directory, and every container uses --network=none.
#
# The reference is crun. crun refuses a hybrid cgroup host (v1 controllers beside a v2
# hierarchy that holds a controller of its own); there its pass runs in a private mount
# namespace without the v2 mount, where crun sees plain cgroup v1 (nothing of the host
# changes). Where crun cannot run a container even so, runc is the reference, and the
# output says so.
#
#   CORDON=/path/to/cordon bash tests/integration/podman.sh
if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

SELF=$(readlink -f "${BASH_SOURCE[0]}")
BUSYBOX=${BUSYBOX:-/bin/busybox}

# --- one pass: podman with RUNTIME, each check's result as "NAME ok|FAIL why" on stdout ---
if [ "${1:-}" = --pass ]; then
        RT=$2 DIR=$3 UNSHARED=${4:-}
        if [ "$UNSHARED" = unified ]; then
                umount /sys/fs/cgroup/unified || exit 3
        fi
        mkdir -p "$DIR"
        # conmon leaves a file named "oom" in its working directory: ours,
        # not the caller's source tree
        cd "$DIR" || exit 3
        RUNROOT=$(mktemp -d /tmp/cordon-pmt.XXXXXX) # podman refuses a runroot over 50 characters
        PM=(podman --root "$DIR/storage" --runroot "$RUNROOT" --tmpdir "$DIR/tmp" --runtime "$RT"
                --cgroup-manager=cgroupfs --events-backend=file)
        # the test host's podman asks for more than the VM allows without these (issue #7)
        RUN=(--network=none --ulimit nofile=20000:20000 --ulimit nproc=32768:32768)
        trap '"${PM[@]}" rm -af -t 0 >/dev/null 2>&1; "${PM[@]}" rmi -af >/dev/null 2>&1; rm -rf "$RUNROOT"' EXIT
        "${PM[@]}" import "$DIR/../rootfs.tar" localhost/cordon-pm:1 >/dev/null 2>&1 || {
                echo "import FAIL podman import"
                exit 0
        }
        IMG=localhost/cordon-pm:1
        pm() { # ARGS: OUT, RC
                OUT=$(timeout -k 5 90 "${PM[@]}" "$@" 2>"$DIR/err")
                RC=$?
        }
        res() { # NAME COND WHY
                if [ "$2" = 0 ]; then echo "$1 ok"; else echo "$1 FAIL $3 (exit $RC, out '${OUT:0:200}', err '$(head -c 200 "$DIR/err" | tr '\n' ' ')')"; fi
        }
        pm run --rm "${RUN[@]}" "$IMG" echo hello
        [ "$OUT" = hello ]
        res run $? "echo's output"
        pm run --rm "${RUN[@]}" "$IMG" sh -c 'exit 42'
        [ "$RC" = 42 ]
        res exit-code $? "exit 42"
        # a command the image lacks fails the runtime's create (podman: 127, naming it); one that
        # cannot be run, 126
        pm run --rm "${RUN[@]}" "$IMG" nope
        [ "$RC" = 127 ] && grep -q "nope.*not found in \$PATH" "$DIR/err"
        res missing-command $? "a command not in the image: exit 127, the error names it"
        pm run --rm "${RUN[@]}" "$IMG" /etc
        [ "$RC" = 126 ] && grep -q "OCI permission denied" "$DIR/err"
        res not-executable $? "a directory as the command: exit 126, permission denied"
        pm run --rm "${RUN[@]}" -e FOO=bar "$IMG" sh -c 'echo $FOO'
        [ "$OUT" = bar ]
        res env $? "-e FOO=bar"
        pm run --rm "${RUN[@]}" -w /tmp "$IMG" pwd
        [ "$OUT" = /tmp ]
        res workdir $? "-w /tmp"
        pm run --rm "${RUN[@]}" --user 1000 "$IMG" sh -c 'id -u; touch /etc/x 2>/dev/null && echo wrote-etc'
        [ "$OUT" = 1000 ]
        res user $? "--user 1000 is uid 1000 and cannot write /etc"
        # what the container writes to its root is podman's (cp, diff, commit), as with runc
        pm run "${RUN[@]}" --name wt "$IMG" sh -c 'echo top > /top; echo e > /etc/new; busybox rm /etc/group'
        pm cp wt:/top "$DIR/top.out"
        [ "$RC" = 0 ] && [ "$(cat "$DIR/top.out" 2>/dev/null)" = top ]
        res root-write-cp $? "podman cp out of the exited container"
        pm diff wt
        grep -qx "A /top" <<<"$OUT" && grep -qx "A /etc/new" <<<"$OUT" && grep -qx "D /etc/group" <<<"$OUT"
        res root-write-diff $? "podman diff: /top and /etc/new added, /etc/group deleted"
        pm commit -q wt localhost/cordon-pm:2
        pm run --rm "${RUN[@]}" localhost/cordon-pm:2 sh -c 'cat /top /etc/new; test -e /etc/group || echo no-group'
        [ "$OUT" = "$(printf 'top\ne\nno-group')" ]
        res root-write-commit $? "a run of the committed image sees the writes and the deletion"
        pm rm wt
        # the root's own top level (0555 after podman import): root makes, links, renames and
        # removes entries there (its CAP_DAC_OVERRIDE); a non-root user cannot
        pm run --rm "${RUN[@]}" "$IMG" sh -c 'mkdir /newdir && ln -s /etc /lnk && touch /f && mv /f /g && mv /g /etc/g && rm /lnk /etc/g && rmdir /newdir && echo made'
        [ "$OUT" = made ]
        res root-top-level $? "root makes, links, renames and removes entries at the root's top level"
        pm run --rm "${RUN[@]}" --user 1000 "$IMG" sh -c 'mkdir /u1000 2>/dev/null || echo refused'
        [ "$OUT" = refused ]
        res root-top-level-user $? "a non-root user cannot make an entry at the root's top level"
        # a running container, entered by the pid the runtime gives (podman cp joins its mount
        # namespace, podman top its processes): the container's, never the host's
        pm run -d "${RUN[@]}" --name live "$IMG" sh -c 'echo inside > /mark; exec sleep 60'
        probe=/cordon-pm-cp-probe.$$
        for i in 1 2 3 4 5 6 7 8 9 10; do
                pm exec live cat /mark
                [ "$OUT" = inside ] && break
                sleep 0.3
        done
        pm cp live:/mark "$DIR/mark.out"
        [ "$RC" = 0 ] && [ "$(cat "$DIR/mark.out" 2>/dev/null)" = inside ]
        res cp-running-out $? "podman cp out of a running container reads the container's file"
        echo host-side >"$DIR/cpin"
        pm cp "$DIR/cpin" "live:$probe"
        [ ! -e "$probe" ]
        res cp-running-never-host $? "podman cp into a running container never writes the host's /"
        rm -f "$probe"
        pm top live args
        grep -q "sleep 60" <<<"$OUT"
        res top-running $? "podman top lists the container's processes"
        pm rm -f -t 0 live
        # podman build: a RUN step's writes (buildah runs it through the runtime) are the image's
        mkdir -p "$DIR/bctx"
        printf 'FROM %s\nRUN echo built > /built && busybox rm /etc/group\n' "$IMG" >"$DIR/bctx/Containerfile"
        pm build --runtime "$RT" --network=none --ulimit nofile=20000:20000 --ulimit nproc=32768:32768 -q \
                -t localhost/cordon-pm:3 "$DIR/bctx"
        pm run --rm "${RUN[@]}" localhost/cordon-pm:3 sh -c 'cat /built; test -e /etc/group || echo no-group'
        [ "$OUT" = "$(printf 'built\nno-group')" ]
        res build-run-step $? "podman build: a RUN step's write and deletion are in the image"
        # a podman pod and kube play: the containers join the infra container's network, ipc
        # and uts namespaces, named by the pid the runtime gave for it (the infra container's
        # rlimits come from containers.conf: podman gives it no --ulimit)
        "${PM[@]}" import --change 'CMD ["/bin/sleep","100000"]' "$DIR/../rootfs.tar" localhost/cordon-pm-infra:1 >/dev/null 2>&1
        printf '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]\n[engine]\ninfra_image = "localhost/cordon-pm-infra:1"\n' >"$DIR/pod.conf"
        export CONTAINERS_CONF="$DIR/pod.conf"
        pm pod create --name pp --network none
        pm run -d --pod pp "$IMG" sh -c 'echo shm-shared > /dev/shm/m; while :; do echo pong | nc -l -p 8080; done'
        pm run --rm --pod pp "$IMG" sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do nc 127.0.0.1 8080 </dev/null && break; sleep 0.3; done; cat /dev/shm/m; hostname'
        [ "$OUT" = "$(printf 'pong\nshm-shared\npp')" ]
        res pod $? "podman pod: another container's port on the pod's localhost, its /dev/shm, the pod's hostname"
        "${PM[@]}" pod rm -f -t 0 pp >/dev/null 2>&1
        cat >"$DIR/kube.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: kp
spec:
  containers:
  - name: web
    image: localhost/cordon-pm:1
    command: ["/bin/sh", "-c", "while true; do echo pong | nc -l -p 8080; done"]
  - name: client
    image: localhost/cordon-pm:1
    command: ["/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do nc 127.0.0.1 8080 </dev/null && break; sleep 0.3; done; echo client-done; sleep 1000"]
EOF
        pm kube play --network none "$DIR/kube.yaml"
        for i in 1 2 3 4 5 6 7 8 9 10; do
                pm logs kp-client
                grep -q client-done <<<"$OUT" && break
                sleep 0.5
        done
        [ "$OUT" = "$(printf 'pong\nclient-done')" ]
        res kube-play $? "podman kube play of a two-container pod: the client reaches the web container"
        "${PM[@]}" kube down "$DIR/kube.yaml" >/dev/null 2>&1
        unset CONTAINERS_CONF
        # another container's namespaces, named by the pid the runtime gave for it (--network,
        # --pid container:NAME): the two are one pod
        pm run -d "${RUN[@]}" --name tgt "$IMG" sh -c 'echo tgt-shm > /dev/shm/t; while :; do echo pong | nc -l -p 8080; done'
        pm run --rm "${RUN[@]/--network=none/--network=container:tgt}" --pid container:tgt --ipc container:tgt "$IMG" \
                sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do nc 127.0.0.1 8080 </dev/null && break; sleep 0.3; done; grep -q "whil[e] :" /proc/1/cmdline && echo sees-tgt; cat /dev/shm/t'
        [ "$OUT" = "$(printf 'pong\nsees-tgt\ntgt-shm')" ]
        res container-ns $? "--network, --pid and --ipc container:NAME: its port on localhost, its processes, its /dev/shm"
        "${PM[@]}" rm -f -t 0 tgt >/dev/null 2>&1
        pm run --rm "${RUN[@]}" --read-only "$IMG" sh -c 'touch /x 2>/dev/null && echo x-written; touch /tmp/y && echo tmp-ok'
        [ "$OUT" = tmp-ok ]
        res read-only $? "--read-only: / refuses, /tmp takes"
        pm run --rm "${RUN[@]}" --read-only "$IMG" sh -c 'touch /root/x 2>/dev/null && echo root-written; touch /run/y && echo run-ok'
        [ "$OUT" = run-ok ]
        res read-only-root-home $? "--read-only: /root is the read-only root's, /run podman's tmpfs"
        pm run --rm "${RUN[@]}" --read-only --read-only-tmpfs=false "$IMG" sh -c 'touch /tmp/x 2>/dev/null && echo tmp-written; echo done'
        [ "$OUT" = done ]
        res read-only-no-tmpfs $? "--read-only --read-only-tmpfs=false: /tmp refuses too"
        pm run --rm "${RUN[@]}" --tmpfs /tmp:rw,size=1m,mode=1777 "$IMG" sh -c 'stat -c %a /tmp; df -k /tmp | tail -1 | tr -s " " | cut -d" " -f2'
        [ "$OUT" = "$(printf '1777\n1024')" ]
        res tmpfs-size $? "--tmpfs /tmp:size=1m,mode=1777: a 1 MB tmpfs of mode 1777 at /tmp"
        pm run --rm "${RUN[@]}" --shm-size 10m "$IMG" sh -c 'df -k /dev/shm | tail -1 | tr -s " " | cut -d" " -f2'
        [ "$OUT" = 10240 ]
        res shm-size $? "--shm-size 10m: /dev/shm holds 10 MB"
        pm run --rm "${RUN[@]}" --hostname myhost --add-host foo.example:10.1.2.3 "$IMG" \
                sh -c 'grep -c "^10.1.2.3[[:space:]]*foo.example" /etc/hosts; grep -c "[[:space:]]myhost" /etc/hosts'
        [ "$OUT" = "$(printf '1\n1')" ]
        res add-host $? "--add-host and --hostname are in /etc/hosts"
        pm run --rm "${RUN[@]}" --memory 32m "$IMG" sh -c 'dd if=/dev/zero of=/dev/null bs=64M count=1 2>/dev/null && echo survived'
        [ "$RC" = 137 ] && [ -z "$OUT" ]
        res memory $? "--memory 32m kills a 64M buffer"
        pm run --rm "${RUN[@]}" --pids-limit 10 "$IMG" sh -c 'for i in $(seq 1 20); do sleep 5 & done; echo all-forked'
        [ "$OUT" != all-forked ] && grep -q "can't fork" "$DIR/err"
        res pids-limit $? "--pids-limit 10 stops the 20th fork"
        # podman update: the runtime's update verb, the new limit in the container's group
        pm run -d "${RUN[@]}" --memory 64m "$IMG" sleep 60
        cid=$OUT
        pm update --memory 128m "$cid"
        lim=$(cat "/sys/fs/cgroup/memory/libpod_parent/libpod-$cid/memory.limit_in_bytes" 2>/dev/null ||
                cat "/sys/fs/cgroup/libpod_parent/libpod-$cid/memory.max" 2>/dev/null)
        [ "$RC" = 0 ] && [ "$lim" = 134217728 ]
        res update $? "podman update --memory 128m: the new limit is in the container's group"
        # run without a CPU limit: the runtime still placed it in its group in the cpu hierarchy
        pm update --cpus 0.5 "$cid"
        lim=$(cat "/sys/fs/cgroup/cpu/libpod_parent/libpod-$cid/cpu.cfs_quota_us" 2>/dev/null ||
                cut -d' ' -f1 "/sys/fs/cgroup/libpod_parent/libpod-$cid/cpu.max" 2>/dev/null)
        [ "$RC" = 0 ] && [ "$lim" = 50000 ]
        res update-cpus $? "podman update --cpus 0.5 of a container run without a CPU limit: the quota is in its group"
        "${PM[@]}" rm -f -t 0 "$cid" >/dev/null 2>&1
        pm run --rm "${RUN[@]}" --cpuset-cpus 0 --cpus 0.5 --cpu-shares 512 "$IMG" \
                sh -c 'grep ^Cpus_allowed_list: /proc/self/status | cut -f2'
        [ "$OUT" = 0 ]
        res cpuset $? "--cpuset-cpus 0 (with --cpus and --cpu-shares): the process runs on CPU 0 only"
        pm run --rm "${RUN[@]}" "$IMG" sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
        [ "$OUT" = lo ]
        res network-none $? "--network none: loopback only"
        mkdir -p "$DIR/vol"
        pm run --rm "${RUN[@]}" -v "$DIR/vol:/data" "$IMG" sh -c 'echo from-container > /data/f'
        [ "$RC" = 0 ] && [ "$(cat "$DIR/vol/f" 2>/dev/null)" = from-container ]
        res volume $? "-v: the write is on the host"
        # read-only volumes are read as their owner, as under runc: a 0600 key of root's by the
        # container's root, a 0600 file of uid 1000's by uid 1000
        mkdir -p "$DIR/rov0" "$DIR/rov1000"
        echo k0 >"$DIR/rov0/k" && chmod 600 "$DIR/rov0/k"
        echo k1000 >"$DIR/rov1000/k" && chmod 600 "$DIR/rov1000/k" && chown -R 1000:1000 "$DIR/rov1000"
        pm run --rm "${RUN[@]}" -v "$DIR/rov0:/k:ro" "$IMG" cat /k/k
        out0=$OUT
        pm run --rm "${RUN[@]}" --user 1000 -v "$DIR/rov1000:/k:ro" "$IMG" sh -c 'cat /k/k; touch /k/x 2>/dev/null && echo wrote'
        [ "$out0" = k0 ] && [ "$OUT" = k1000 ]
        res volume-ro-owner $? "-v DIR:/d:ro: root reads root's 0600 file, uid 1000 its own, nothing is written"
        OUT=$(echo piped | timeout -k 5 90 "${PM[@]}" run --rm -i "${RUN[@]}" "$IMG" cat 2>"$DIR/err")
        RC=$?
        [ "$OUT" = piped ]
        res stdin $? "-i: stdin reaches the process"
        pm run --rm -t "${RUN[@]}" "$IMG" sh -c 'test -t 0 && test -t 1 && echo is-a-tty'
        [ "$(printf '%s' "$OUT" | tr -d '\r')" = is-a-tty ]
        res tty $? "-t: a terminal"
        pm run --rm "${RUN[@]}" --cap-drop ALL "$IMG" sh -c 'grep ^CapEff /proc/self/status | cut -f2'
        [ "$OUT" = 0000000000000000 ]
        res cap-drop-all $? "--cap-drop ALL: none"
        pm run --rm "${RUN[@]}" "$IMG" sh -c 'grep ^CapEff /proc/self/status | cut -f2'
        [ "$OUT" = 00000000800405fb ]
        res cap-default $? "podman's default set"
        pm run --rm "${RUN[@]}" --cap-drop ALL --cap-add NET_BIND_SERVICE --user 1000 "$IMG" \
                sh -c 'timeout -s KILL 1 nc -l -p 80 </dev/null; echo $?'
        [ "$OUT" = 137 ] # listening until killed; a refused bind ends nc at once (1)
        res cap-add-bind80 $? "--cap-add NET_BIND_SERVICE: uid 1000 binds port 80"
        # the sysctls Docker and containerd 2.0 (enable_unprivileged_ports, _icmp) give every
        # container: every group may open ICMP sockets, every user may bind ports below 1024
        pm run --rm "${RUN[@]}" --user 1000 --sysctl "net.ipv4.ping_group_range=0 2147483647" \
                --sysctl net.ipv4.ip_unprivileged_port_start=0 "$IMG" \
                sh -c 'cat /proc/sys/net/ipv4/ip_unprivileged_port_start; timeout -s KILL 1 nc -l -p 80 </dev/null; echo $?'
        [ "$OUT" = "$(printf '0\n137')" ]
        res sysctl-unprivileged $? "ping_group_range 0 2147483647 and ip_unprivileged_port_start 0: uid 1000 binds port 80"
        pm run --rm "${RUN[@]}" "$IMG" sh -c 'echo $$ $(tr "\0" " " </proc/1/cmdline)'
        [ "$OUT" = "1 sh -c echo \$\$ \$(tr \"\\0\" \" \" </proc/1/cmdline)" ]
        res pid1 $? "the process is pid 1, /proc/1/cmdline its command"
        pm run -d "${RUN[@]}" "$IMG" sh -c 'trap "exit 0" TERM; while :; do sleep 1; done'
        cid=$OUT
        pm exec -e A=b -w /tmp "$cid" sh -c 'echo $A $(pwd); exit 7'
        [ "$RC" = 7 ] && [ "$OUT" = "b /tmp" ]
        res exec $? "exec -e -w and its exit code"
        pm exec "$cid" nope
        [ "$RC" = 127 ] && grep -q "nope.*not found in \$PATH" "$DIR/err"
        res exec-missing-command $? "exec of a command not in the image: exit 127, the error names it"
        pm exec -t "$cid" sh -c 'test -t 0 && echo is-a-tty'
        [ "$(printf '%s' "$OUT" | tr -d '\r')" = is-a-tty ]
        res exec-tty $? "exec -t"
        # exec -u 0 into a --user 1000 container: root with the default set, as runc's and
        # crun's exec (the engine's process file asks for it); a plain exec stays uid 1000
        pm run -d "${RUN[@]}" --user 1000 "$IMG" sleep 60
        ucid=$OUT
        pm exec -u 0 "$ucid" sh -c 'id -u; echo r > /etc/by-root && stat -c %u /etc/by-root; grep ^CapEff /proc/self/status | cut -f2'
        [ "$OUT" = "$(printf '0\n0\n00000000800405fb')" ]
        res exec-root-in-user $? "exec -u 0 into a --user 1000 container: root, writes a root-owned file"
        pm exec "$ucid" sh -c 'id -u; touch /etc/by-1000 2>/dev/null && echo wrote; grep ^CapEff /proc/self/status | cut -f2'
        [ "$OUT" = "$(printf '1000\n0000000000000000')" ]
        res exec-user-plain $? "a plain exec into it is uid 1000, without capabilities"
        "${PM[@]}" rm -f -t 0 "$ucid" >/dev/null 2>&1
        pm pause "$cid"
        pm inspect --format '{{.State.Status}}' "$cid"
        st=$OUT
        pm unpause "$cid"
        pm exec "$cid" true
        [ "$st" = paused ] && [ "$RC" = 0 ]
        res pause $? "pause, then unpause and exec"
        pm stop -t 10 "$cid"
        pm inspect --format '{{.State.ExitCode}}' "$cid"
        [ "$OUT" = 0 ] && ! grep -q "resorting to SIGKILL" "$DIR/err"
        res stop-graceful $? "stop: SIGTERM reaches a pid 1 that handles it"
        pm run -d "${RUN[@]}" "$IMG" sleep 1000
        cid=$OUT
        pm stop -t 2 "$cid"
        grep -q "resorting to SIGKILL" "$DIR/err"
        waited=$?
        pm inspect --format '{{.State.ExitCode}}' "$cid"
        [ "$OUT" = 137 ] && [ "$waited" = 0 ]
        res stop-forced $? "stop -t 2: a pid 1 without a TERM handler lives out the grace, then SIGKILL"
        exit 0
fi

# --- the runner ---
START=$(date +%s)
skip() {
        echo "podman tests skipped: $*"
        echo "0 passed, 0 failed"
        exit 77
}
: "${CORDON:?CORDON must name the cordon binary}"
[ "$(id -u)" = 0 ] || skip "podman runs containers as root here"
command -v podman >/dev/null || skip "podman is not installed"
command -v conmon >/dev/null || [ -x /usr/libexec/podman/conmon ] || skip "conmon is not installed"
[ -x "$BUSYBOX" ] && ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic' || skip "no static busybox at $BUSYBOX"

WORK=$(mktemp -d /var/tmp/cordon-pm.XXXXXX) || skip "no scratch directory"
trap 'rm -rf "$WORK"' EXIT
OCI="$(dirname "$CORDON")/cordon-oci"
[ -x "$OCI" ] || {
        OCI="$WORK/cordon-oci"
        ln -sf "$CORDON" "$OCI"
}
R="$WORK/rootfs"
mkdir -p "$R/bin" "$R/etc" "$R/proc" "$R/dev" "$R/sys" "$R/tmp" "$R/root"
cp "$BUSYBOX" "$R/bin/busybox"
for t in sh echo cat sleep id touch pwd env dd seq grep cut tr tail test nc kill true timeout df stat; do ln -sf busybox "$R/bin/$t"; done
echo "root:x:0:0:root:/root:/bin/sh" >"$R/etc/passwd"
echo "root:x:0:" >"$R/etc/group"
chmod 1777 "$R/tmp"
tar -C "$R" -cf "$WORK/rootfs.tar" . || skip "tar"

# the reference: crun, in a private mount namespace on a hybrid host, else runc
REF= REF_HOW=
if command -v crun >/dev/null; then
        REF=crun
fi
RESULTS_REF=
if [ -n "$REF" ]; then
        RESULTS_REF=$(bash "$SELF" --pass crun "$WORK/ref" 2>/dev/null)
        if ! grep -q '^run ok' <<<"$RESULTS_REF" && mountpoint -q /sys/fs/cgroup/unified &&
                [ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]; then
                REF_HOW="crun, in a private mount namespace without the hybrid host's cgroup v2 mount"
                rm -rf "$WORK/ref"
                RESULTS_REF=$(unshare -m --propagation private bash "$SELF" --pass crun "$WORK/ref" unified 2>/dev/null)
        fi
fi
if ! grep -q '^run ok' <<<"$RESULTS_REF" && command -v runc >/dev/null; then
        REF=runc REF_HOW="runc (crun cannot run a container on this host)"
        rm -rf "$WORK/ref"
        RESULTS_REF=$(bash "$SELF" --pass runc "$WORK/ref" 2>/dev/null)
fi
grep -q '^run ok' <<<"$RESULTS_REF" || skip "no reference runtime (crun or runc) runs a container here"
echo "reference: ${REF_HOW:-$REF}"
RESULTS=$(bash "$SELF" --pass "$OCI" "$WORK/cordon" 2>/dev/null)

# before Linux 6.15 (procfs's pidns option) the container's process is cordon's init's child,
# not pid 1 (README): the checks that need pid 1 are then said, not counted
old_kernel=false
IFS=. read -r kmaj kmin _ <<<"$(uname -r)"
[ "$kmaj" -lt 6 ] || { [ "$kmaj" = 6 ] && [ "${kmin%%[^0-9]*}" -lt 15 ]; } && old_kernel=true
PASSED=0 FAILED=0 REF_OK=0 OURS_OK=0
while read -r name verdict rest; do
        [ -n "$name" ] || continue
        ours=$(grep "^$name " <<<"$RESULTS")
        if $old_kernel && { [ "$name" = pid1 ] || [ "$name" = stop-forced ]; }; then
                echo "-- $name: not counted before Linux 6.15 (cordon: ${ours#"$name "})"
                continue
        fi
        [ "$verdict" = ok ] && REF_OK=$((REF_OK + 1))
        case "$ours" in "$name ok") OURS_OK=$((OURS_OK + 1)) ;; esac
        if [ "$verdict" != ok ]; then
                echo "-- $name: the reference fails it too ($rest); cordon: ${ours#"$name "}"
        elif [ "$ours" = "$name ok" ]; then
                echo "ok - $name"
                PASSED=$((PASSED + 1))
        else
                echo "FAIL - $name: ${ours:-not run}"
                FAILED=$((FAILED + 1))
        fi
done <<<"$RESULTS_REF"
echo "# $REF passed $REF_OK checks, cordon $OURS_OK"
echo "# podman tests took $(($(date +%s) - START)) s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
