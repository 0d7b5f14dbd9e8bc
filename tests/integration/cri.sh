#!/bin/bash
# cordon integration tests for Kubernetes pods (issue 19): a private containerd with its CRI
# plugin, driven by crictl exactly as kubelet drives it, runs a two-container pod under
# cordon (and under runc, the reference, where it is installed); then cordon-oci is given
# pod containers with bad namespace paths and sandbox ids directly. Run like run.sh:
#
#   CORDON=/path/to/cordon TESTS_SRCDIR=/path/to/tests bash tests/integration/cri.sh [REGEX...]
#
# containerd runs with its own root, state and socket under the test's scratch directory and
# is killed at the end. The pod network is a CNI bridge of its own whose subnet routes
# nowhere (no gateway, no masquerade): the pod reaches nothing but itself. The image is made
# locally from busybox-static (podman import + save, ctr import): no registry is used.
if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"
IT_TEST_TIMEOUT=${CRI_TEST_TIMEOUT:-180}

BUSYBOX=${BUSYBOX:-/bin/busybox}
CRICTL=${CRICTL:-$(dirname "$IT_SCRIPT")/../../../shared/tools/crictl}
CNI_DIR=${CNI_DIR:-/usr/lib/cni}
# web.test: a server the test puts on the pod network (test-only overrides: its address is
# private, and it comes from a hosts file)
policy_json() { # HOSTS-FILE
        printf '{"networkPolicy":{"mode":"allow-listed","rules":[{"host":"api.example.com","port":443,"reason":"the test"},{"host":"web.test","port":443,"reason":"a server on the pod network"}],"clusterRules":[{"cidr":"%s","ports":[8443],"reason":"the pod network'"'"'s servers"}],"clusterDomain":"cluster.local","testing":{"hostsFile":"%s","allowPrivateNetworks":["10.219.0.0/16"]}}}' "$SUBNET" "$1"
}

oci_bin() {
        local b
        b="$(dirname "$CORDON")/cordon-oci"
        if [ ! -x "$b" ]; then
                b="$IT_TMP/cordon-oci"
                ln -sf "$CORDON" "$b"
        fi
        printf '%s\n' "$b"
}

need_tools() {
        [ "$(id -u)" = 0 ] || skip "the CRI tests run containerd as root"
        command -v containerd >/dev/null || skip "containerd is not installed"
        command -v ctr >/dev/null || skip "ctr is not installed"
        [ -x "$CRICTL" ] || skip "no crictl at $CRICTL (../shared/tools/crictl)"
        [ -x "$CNI_DIR/bridge" ] && [ -x "$CNI_DIR/host-local" ] && [ -x "$CNI_DIR/loopback" ] ||
                skip "the CNI plugins are not installed (apt-get install containernetworking-plugins)"
        command -v ip >/dev/null || skip "ip (iproute2) is not installed"
        [ -x "$BUSYBOX" ] || skip "no static busybox at $BUSYBOX (apt-get install busybox-static)"
        OCI=$(oci_bin)
}

make_rootfs() { # DIR
        local d=$1 t
        mkdir -p "$d/bin" "$d/etc" "$d/proc" "$d/dev" "$d/sys" "$d/tmp" "$d/root"
        cp "$BUSYBOX" "$d/bin/busybox"
        for t in sh echo cat sleep id ls hostname nc ifconfig nslookup grep true ps; do
                ln -sf busybox "$d/bin/$t"
        done
        echo "root:x:0:0:root:/root:/bin/sh" >"$d/etc/passwd"
        echo "root:x:0:" >"$d/etc/group"
}

# The image: a busybox root whose command sleeps (also the pod's sandbox image), as a
# docker archive made by a throwaway podman.
make_image() { # OUT.tar
        command -v podman >/dev/null || skip "podman is not installed (it builds the test image)"
        local d="$IT_TMP/img" out
        mkdir -p "$d"
        make_rootfs "$d/rootfs"
        tar -C "$d/rootfs" -cf "$d/rootfs.tar" . || fail "tar"
        local run
        run=$(mktemp -d /tmp/cordon-cri.XXXXXX) || fail "mktemp"
        local PM=(podman --root "$d/storage" --runroot "$run" --tmpdir "$d/tmp" --events-backend=file)
        out=$("${PM[@]}" import --change 'CMD ["/bin/sleep","1000000"]' "$d/rootfs.tar" localhost/cordon-cri:1 2>&1) ||
                fail "podman import: $out"
        out=$("${PM[@]}" save --format docker-archive -o "$1" localhost/cordon-cri:1 2>&1) || fail "podman save: $out"
        "${PM[@]}" rmi -af >/dev/null 2>&1
        rm -rf "$run" "$d"
}

# A private containerd with the CRI plugin, runtimes "runc" and "cordon"; sets D and C
# (crictl's command line).
containerd_up() {
        need_tools
        D="$IT_TMP/ctd"
        mkdir -p "$D/cni" "$D/logs"
        BR="cdn$$"
        BR=${BR:0:15}
        SUBNET="10.219.$(($$ % 200 + 20)).0/24"
        SRVIP="${SUBNET%.0/24}.250" # the test's server and the pod's DNS (gate_from_pod_network)
        cat >"$D/cni/10-cordon.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "cordon-cri-test", "plugins": [
  {"type": "bridge", "bridge": "$BR", "isGateway": false, "ipMasq": false,
   "ipam": {"type": "host-local", "subnet": "$SUBNET", "dataDir": "$D/ipam"}}]}
EOF
        cat >"$D/config.toml" <<EOF
version = 2
root = "$D/root"
state = "$D/state"
[grpc]
  address = "$D/sock"
[ttrpc]
  address = "$D/sock.ttrpc"
[debug]
  address = "$D/debug.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/cordon-cri:1"
  restrict_oom_score_adj = true
  # containerd 2.0's defaults (every pod gets ping_group_range "0 2147483647" and
  # ip_unprivileged_port_start 0)
  enable_unprivileged_ports = true
  enable_unprivileged_icmp = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_DIR"
    conf_dir = "$D/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$D/runc-root"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.cordon]
      runtime_type = "io.containerd.runc.v2"
      pod_annotations = ["dev.cordon.policy"]
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.cordon.options]
        BinaryName = "$OCI"
        Root = "$D/cordon-root"
EOF
        make_image "$D/img.tar"
        containerd --config "$D/config.toml" >"$D/log" 2>&1 &
        local cpid=$!
        C=("$CRICTL" --runtime-endpoint "unix://$D/sock" --image-endpoint "unix://$D/sock" --timeout 60s)
        # pods left by a failed test go first, then containerd, its bridge and its netns pins
        at_exit "for p in \$(${C[*]} pods -q 2>/dev/null); do ${C[*]} stopp \$p; ${C[*]} rmp \$p; done >/dev/null 2>&1; kill $cpid; sleep 1; ip link del $BR 2>/dev/null; rm -rf '$D'"
        wait_until 20 ctr -a "$D/sock" version >/dev/null 2>&1 || fail "containerd did not start: $(tail -3 "$D/log")"
        ctr -a "$D/sock" -n k8s.io images import "$D/img.tar" >/dev/null 2>&1 || fail "ctr images import failed"
}

# crictl ARGS: sets OUT, ERR and RC
cri() {
        local errf
        errf=$(mktemp -p "$IT_TMP" stderr.XXXXXX) || fail "mktemp failed"
        printf '+ crictl' >&2
        printf ' %q' "$@" >&2
        printf '\n' >&2
        OUT=$(timeout -k 5 90 "${C[@]}" "$@" 2>"$errf")
        RC=$?
        ERR=$(cat "$errf")
        rm -f "$errf"
        printf '  [exit %s]\n' "$RC" >&2
        [ -n "$OUT" ] && printf '%s\n' "$OUT" | sed 's/^/  stdout| /' | head -n 20 >&2
        [ -n "$ERR" ] && printf '%s\n' "$ERR" | sed 's/^/  stderr| /' | head -n 20 >&2
        return 0
}

write_configs() { # pod name
        cat >"$D/pod.json" <<EOF
{"metadata": {"name": "$1", "namespace": "default", "uid": "$1-uid", "attempt": 0},
 "log_directory": "$D/logs", "dns_config": {"servers": ["$SRVIP"], "searches": ["default.svc.cluster.local", "svc.cluster.local"], "options": ["ndots:5"]}, "annotations": {"dev.cordon.policy": $(policy_json "$D/hosts" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')},
 "linux": {"security_context": {"namespace_options": {"pid": 1}}}}
EOF
        cat >"$D/web.json" <<'EOF'
{"metadata": {"name": "web"}, "image": {"image": "localhost/cordon-cri:1"},
 "command": ["/bin/sh", "-c", "echo hi-from-web; while true; do echo pong | nc -l -p 8080; done"],
 "log_path": "web.log", "linux": {"resources": {"memory_limit_in_bytes": 67108864},
                                   "security_context": {"namespace_options": {"pid": 1}}}}
EOF
        cat >"$D/client.json" <<'EOF'
{"metadata": {"name": "client"}, "image": {"image": "localhost/cordon-cri:1"},
 "command": ["/bin/sleep", "1000000"],
 "log_path": "client.log", "linux": {"security_context": {"namespace_options": {"pid": 1}}}}
EOF
}

# The two-container pod under HANDLER: what runc and cordon must both do.
pod_checks() { # HANDLER [EXTRA-CHECKS-FUNCTION]
        write_configs "pod-$1"
        rm -f "$D/logs/"*
        cri runp --runtime="$1" "$D/pod.json"
        [ "$RC" = 0 ] || fail "crictl runp --runtime=$1 failed: $ERR"
        POD=$OUT
        cri create "$POD" "$D/web.json" "$D/pod.json"
        [ "$RC" = 0 ] || fail "crictl create web failed: $ERR"
        WEB=$OUT
        cri create "$POD" "$D/client.json" "$D/pod.json"
        [ "$RC" = 0 ] || fail "crictl create client failed: $ERR"
        CLIENT=$OUT
        cri start "$WEB"
        expect_rc 0 "crictl start web"
        cri start "$CLIENT"
        expect_rc 0 "crictl start client"
        # a command the image lacks: the runtime's create fails (containerd's StartContainer,
        # kubelet's StartError / RunContainerError) naming it, as runc's does
        sed -e 's/"name": "client"/"name": "nope"/' -e 's|"command": \[[^]]*\]|"command": ["nope"]|' \
                -e 's/client.log/nope.log/' "$D/client.json" >"$D/nope.json"
        cri create "$POD" "$D/nope.json" "$D/pod.json"
        [ "$RC" = 0 ] || fail "crictl create nope failed: $ERR"
        local nope=$OUT
        cri start "$nope"
        expect_true "crictl start of a container whose command is not in the image fails" test "$RC" != 0
        expect_contains "$ERR" 'exec: \"nope\": executable file not found in $PATH' "the error names the command"
        cri rm "$nope"
        expect_rc 0 "crictl rm of the container that did not start"
        cri exec "$CLIENT" nope
        expect_true "crictl exec of a command not in the image fails" test "$RC" != 0
        expect_contains "$ERR" 'exec: \"nope\": executable file not found in $PATH' "the error names it"

        # localhost between the pod's containers
        local i
        for i in $(seq 50); do
                cri exec "$CLIENT" nc 127.0.0.1 8080
                [ "$OUT" = pong ] && break
                sleep 0.2
        done
        expect_eq pong "$OUT" "the client reaches the web container on the pod's localhost"
        # the pod's CNI address, as containerd reports it, is the container's eth0
        cri inspectp "$POD"
        local ip
        ip=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["network"]["ip"])')
        expect_match "$ip" "^10\\.219\\." "the pod's CNI address"
        cri exec "$CLIENT" ifconfig eth0
        expect_contains "$OUT" "inet addr:$ip " "the container sees the pod's address on eth0"
        cri exec "$WEB" ifconfig eth0
        expect_contains "$OUT" "inet addr:$ip " "so does the other container"
        # exec: output and exit codes
        cri exec "$CLIENT" sh -c 'echo out-of-exec; exit 7'
        expect_contains "$OUT" out-of-exec "crictl exec's output"
        expect_contains "$ERR" "exit code 7" "crictl exec's exit code"
        cri exec "$CLIENT" true
        expect_rc 0 "crictl exec true"
        # what a container writes to its root is in containerd's snapshot, as runc writes it
        cri exec "$CLIENT" sh -c "echo $1 > /written-$1"
        expect_eq "$1 0" "$(cat "$D"/root/io.containerd.snapshotter.v1.overlayfs/snapshots/*/fs/written-"$1" 2>/dev/null) $(stat -c %u "$D"/root/io.containerd.snapshotter.v1.overlayfs/snapshots/*/fs/written-"$1" 2>/dev/null)" \
                "a write to / lands in containerd's snapshot, root's on disk"
        # the pod's DNS search domains and options (kubelet's: a Service by its short name)
        cri exec "$CLIENT" cat /etc/resolv.conf
        expect_contains "$OUT" "search default.svc.cluster.local svc.cluster.local" \
                "the pod's search domains are in /etc/resolv.conf"
        expect_match "$OUT" "options.* ndots:5" "so is its ndots option"
        # one uts namespace: the same hostname in both
        cri exec "$CLIENT" hostname
        local h1=$OUT
        cri exec "$WEB" hostname
        expect_eq "$h1" "$OUT" "the pod's containers share one hostname"
        # one /dev/shm: the pod's (containerd binds it into each container)
        cri exec "$CLIENT" sh -c 'echo shm-of-the-pod > /dev/shm/pod'
        cri exec "$WEB" cat /dev/shm/pod
        expect_eq shm-of-the-pod "$OUT" "the pod's containers share /dev/shm"
        # each container its own process tree
        cri exec "$CLIENT" ps -o args
        expect_contains "$OUT" "sleep 1000000" "the client sees its own process"
        expect_not_contains "$OUT" "nc -l" "the client does not see the web container's processes"
        cri logs "$WEB"
        expect_contains "$OUT" hi-from-web "crictl logs"
        # port-forward: the host's port to the pod's 8080
        local pf=$((20000 + $$ % 20000)) got=""
        "${C[@]}" port-forward "$POD" "$pf:8080" >"$D/pf.log" 2>&1 &
        local pfpid=$!
        for i in $(seq 50); do
                got=$(timeout 5 "$BUSYBOX" nc -w 3 127.0.0.1 "$pf" </dev/null 2>/dev/null)
                [ "$got" = pong ] && break
                sleep 0.2
        done
        kill "$pfpid" 2>/dev/null
        wait "$pfpid" 2>/dev/null
        expect_eq pong "$got" "crictl port-forward reaches the web container"
        # cgroupsPath: the engine's group counts the container (crictl stats reads it), and the
        # limit is written there, as runc writes it
        cri stats -o json "$WEB"
        local mem cpu
        mem=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"][0]["memory"]["workingSetBytes"]["value"])' 2>/dev/null)
        cpu=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"][0]["cpu"]["usageCoreNanoSeconds"]["value"])' 2>/dev/null)
        expect_true "crictl stats: the container's memory ($mem bytes) is counted" test "${mem:-0}" -gt 100000
        expect_true "crictl stats: the container's cpu time ($cpu ns) is counted" test "${cpu:-0}" -gt 0
        # containerd reports what is left beneath the group's limit: the limit is seen there
        local avail
        avail=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"][0]["memory"]["availableBytes"]["value"])' 2>/dev/null)
        expect_eq 67108864 "$((${mem:-0} + ${avail:-0}))" "crictl stats: the container's memory limit (used + available)"
        CGDIR=/sys/fs/cgroup/memory/k8s.io/$WEB
        if [ -d /sys/fs/cgroup/memory/k8s.io ]; then
                expect_eq 67108864 "$(cat "$CGDIR/memory.limit_in_bytes" 2>/dev/null)" \
                        "the memory limit is in the container's group $CGDIR itself"
        fi
        # UpdateContainerResources (kubelet's in-place resize): the runtime's `update`
        cri update --memory 134217728 "$WEB"
        expect_rc 0 "crictl update --memory"
        if [ -d /sys/fs/cgroup/memory/k8s.io ]; then
                expect_eq 134217728 "$(cat "$CGDIR/memory.limit_in_bytes" 2>/dev/null)" \
                        "the updated memory limit is in the container's group"
        fi
        cri exec "$WEB" echo still-running
        expect_eq still-running "$OUT" "the container runs on after the update"
        [ -n "${2:-}" ] && "$2"

        cri stopp "$POD"
        expect_rc 0 "crictl stopp"
        cri rmp "$POD"
        expect_rc 0 "crictl rmp"
        cri ps -a
        expect_not_contains "$OUT" "$POD" "no container of the pod is left"
        expect_true "the container's group $CGDIR is removed" test ! -e "$CGDIR"
}

it_test cri_pod_runc
cri_pod_runc() {
        command -v runc >/dev/null || skip "runc is not installed (the reference)"
        containerd_up
        pod_checks runc
        expect_eq "" "$(ls "$D/runc-root/k8s.io" 2>/dev/null)" "no runc state left"
}

# What only cordon promises, while the pod runs: one uid range for the pod, the pod's policy
# in every container (its DNS stub answers the listed name, nothing else).
cordon_checks() {
        local st meta init
        SIDS=$(for st in "$D/cordon-root/k8s.io/"*/state.json; do
                python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sandbox"])' "$st"
        done)
        [ "$(printf '%s\n' "$SIDS" | grep -c .)" = 3 ] || fail "expected 3 cordon sandboxes (the pod's and 2 containers), got: $SIDS"
        meta=/run/cordon/sandboxes/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sandbox"])' \
                "$D/cordon-root/k8s.io/$POD/state.json")/meta.json
        init=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["initPid"])' "$meta")
        local podmap
        podmap=$(cat "/proc/$init/uid_map" | tr -s ' ')
        cri exec "$CLIENT" cat /proc/self/uid_map
        expect_eq "$podmap" "$(printf '%s' "$OUT" | tr -s ' ')" "the client runs in the pod's uid range"
        cri exec "$WEB" cat /proc/self/uid_map
        expect_eq "$podmap" "$(printf '%s' "$OUT" | tr -s ' ')" "so does the web container"
        expect_match "$podmap" "^ ?0 [0-9]+ 65536" "one range of 65,536 ids"
        cri exec "$CLIENT" nslookup api.example.com
        expect_contains "$OUT" "198.18." "the pod's policy: its listed name resolves to the gate's address"
        cri exec "$CLIENT" nslookup other.example.org
        expect_not_contains "$OUT" "198.18." "a name the pod's policy does not list does not resolve"
        cri exec "$CLIENT" sh -c "nc -w 2 ${ip%.*}.254 80 </dev/null; echo rc=\$?"
        expect_contains "$OUT" "rc=1" "no connection out of the pod"
        gate_from_pod_network
}

# A listed name whose server is on the pod network only (a namespace of the test's with a
# veth on the pod's bridge; the host has no route there): the gate's connection must come
# from the pod's namespace, with the pod's address.
gate_from_pod_network() {
        local srv="cdns$$" srvip=$SRVIP va="cdv$$" vb="cdw$$"
        ip netns add "$srv" || fail "ip netns add"
        at_exit "ip netns del $srv; ip link del $va 2>/dev/null"
        ip link add "$va" type veth peer name "$vb" && ip link set "$vb" netns "$srv" &&
                ip link set "$va" master "$BR" up && ip -n "$srv" addr add "$srvip/24" dev "$vb" &&
                ip -n "$srv" link set "$vb" up && ip -n "$srv" link set lo up || fail "cannot wire $srv to $BR"
        : >"$D/peers"
        ip netns exec "$srv" python3 -c '
import socket, sys
import select
ls = []
for port in (443, 8443):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port)); s.listen(4); ls.append(s)
while True:
    for s in select.select(ls, [], [], 60)[0]:
        c, a = s.accept(); open(sys.argv[1], "a").write("%s %d\n" % (a[0], s.getsockname()[1])); c.close()
' "$D/peers" &
        local spid=$!
        at_exit "kill $spid 2>/dev/null"
        # the pod's DNS server (containerd wrote it into the pod's resolv.conf): two cluster
        # names, one inside the granted network, one outside it
        ip netns exec "$srv" python3 -c '
import socket, struct, sys
names = {"web.default.svc.cluster.local": sys.argv[1], "outside.default.svc.cluster.local": "192.0.2.99"}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 53)); s.settimeout(60)
while True:
    q, a = s.recvfrom(512)
    p, labels = 12, []
    while q[p]:
        labels.append(q[p + 1:p + 1 + q[p]].decode()); p += 1 + q[p]
    qtype = struct.unpack(">H", q[p + 1:p + 3])[0]; p += 5
    addr = names.get(".".join(labels).lower())
    an = addr is not None and qtype == 1
    hdr = q[:2] + struct.pack(">HHHHH", 0x8180 if addr else 0x8183, 1, int(an), 0, 0)
    body = q[12:p] + (b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 30, 4) + socket.inet_aton(addr) if an else b"")
    s.sendto(hdr + body, a)
' "$srvip" &
        at_exit "kill $! 2>/dev/null"
        echo "web.test $srvip" >"$D/hosts"
        local i
        for i in $(seq 50); do
                cri exec "$CLIENT" sh -c "nc -w 3 web.test 443 </dev/null; echo rc=\$?"
                [ -s "$D/peers" ] && break
                sleep 0.2
        done
        expect_eq "$ip 443" "$(head -n1 "$D/peers")" "the gate's connection to web.test came from the pod's address"
        # a network the policy grants (clusterRules), by address, on its port
        : >"$D/peers"
        cri exec "$CLIENT" sh -c "nc -w 3 $srvip 8443 </dev/null; echo rc=\$?"
        expect_contains "$OUT" "rc=0" "a granted network's server is reached by its address"
        wait_until 5 test -s "$D/peers" # (the server writes after its accept)
        expect_eq "$ip 8443" "$(head -n1 "$D/peers")" "from the pod's address"
        # inbound: from the pod network to the web container's listening socket
        local got=""
        for i in $(seq 20); do
                got=$(ip netns exec "$srv" timeout 5 "$BUSYBOX" nc -w 3 "$ip" 8080 </dev/null 2>&1)
                [ "$got" = pong ] && break
                sleep 0.2
        done
        expect_eq pong "$got" "a connection from the pod network reaches the web container"
        # a cluster name (networkPolicy.clusterDomain): its real address, asked of the pod's DNS,
        # where the policy grants its network; else it does not exist for the pod
        cri exec "$CLIENT" nslookup web.default.svc.cluster.local
        expect_contains "$OUT" "Address: $srvip" "a cluster name in a granted network resolves to its address"
        cri exec "$CLIENT" nslookup outside.default.svc.cluster.local
        expect_not_contains "$OUT" "192.0.2.99" "a cluster name outside the granted networks does not resolve"
        : >"$D/peers"
        cri exec "$CLIENT" sh -c "nc -w 3 web.default.svc.cluster.local 8443 </dev/null; echo rc=\$?"
        wait_until 5 test -s "$D/peers"
        expect_eq "$ip 8443" "$(head -n1 "$D/peers")" "the cluster name's server is reached on a granted port"
        # the same server by its address: not a listed name, refused
        : >"$D/peers"
        cri exec "$CLIENT" sh -c "nc -w 3 $srvip 443 </dev/null; echo rc=\$?"
        expect_contains "$ERR$OUT" "rc=1" "the granted network on a port it does not grant is refused"
        sleep 0.5 # (what reached the server would be written by now)
        expect_eq "" "$(cat "$D/peers")" "nothing reached the server by its address"
}

it_test cri_pod_cordon
cri_pod_cordon() {
        containerd_up
        pod_checks cordon cordon_checks
        expect_eq "" "$(ls "$D/cordon-root/k8s.io" 2>/dev/null)" "no container state left in cordon's root"
        local sid
        for sid in $SIDS; do
                expect_true "sandbox $sid's state is gone" test ! -e "/run/cordon/sandboxes/$sid"
                expect_eq "" "$(grep -rl "$sid" /run/cordon/idranges 2>/dev/null)" "sandbox $sid holds no uid range"
                expect_eq "" "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "*$sid*" 2>/dev/null)" \
                        "sandbox $sid left no cgroup"
        done
}

# shareProcessNamespace (namespace_options pid POD): one pid namespace for the pod, whose pid 1
# is the pod's infra process; each container sees the other's processes. Under HANDLER, then
# the pod is stopped and removed and nothing of it is left.
shared_pid_checks() { # HANDLER
        cat >"$D/spod.json" <<EOF
{"metadata": {"name": "spid-$1", "namespace": "default", "uid": "spid-$1-uid", "attempt": 0},
 "log_directory": "$D/logs", "linux": {"security_context": {"namespace_options": {"pid": 0}}}}
EOF
        cat >"$D/sweb.json" <<'EOF'
{"metadata": {"name": "sweb"}, "image": {"image": "localhost/cordon-cri:1"},
 "command": ["/bin/sh", "-c", "sleep 555444 & while true; do echo pong | nc -l -p 8080; done"],
 "log_path": "sweb.log", "linux": {"security_context": {"namespace_options": {"pid": 0}}}}
EOF
        cat >"$D/sclient.json" <<'EOF'
{"metadata": {"name": "sclient"}, "image": {"image": "localhost/cordon-cri:1"},
 "command": ["/bin/sleep", "777777"],
 "log_path": "sclient.log", "linux": {"security_context": {"namespace_options": {"pid": 0}}}}
EOF
        cri runp --runtime="$1" "$D/spod.json"
        [ "$RC" = 0 ] || fail "crictl runp --runtime=$1 (shared pid) failed: $ERR"
        local pod=$OUT web client
        cri create "$pod" "$D/sweb.json" "$D/spod.json"
        [ "$RC" = 0 ] || fail "$1: crictl create in a pod sharing its pid namespace failed: $ERR"
        web=$OUT
        cri create "$pod" "$D/sclient.json" "$D/spod.json"
        [ "$RC" = 0 ] || fail "$1: crictl create client failed: $ERR"
        client=$OUT
        cri start "$web"
        expect_rc 0 "$1: crictl start web"
        cri start "$client"
        expect_rc 0 "$1: crictl start client"
        local i
        for i in $(seq 50); do
                cri exec "$client" ps -o args
                case $OUT in *"nc -l"*) break ;; esac
                sleep 0.2
        done
        expect_contains "$OUT" "nc -l -p 8080" "$1: the client sees the web container's processes"
        expect_contains "$OUT" "sleep 777777" "$1: and its own"
        cri exec "$web" ps -o args
        expect_contains "$OUT" "sleep 777777" "$1: the web container sees the client's"
        expect_not_contains "$OUT" "sleep 666666" "$1: and nothing of the host's (the test's own sleep 666666)"
        cri exec "$client" sh -c 'tr "\0" " " </proc/1/cmdline'
        expect_eq "/bin/sleep 1000000" "$(printf '%s' "$OUT" | sed 's/ *$//')" "$1: pid 1 is the pod's infra process"
        cri exec "$web" sh -c 'tr "\0" " " </proc/1/cmdline'
        expect_eq "/bin/sleep 1000000" "$(printf '%s' "$OUT" | sed 's/ *$//')" "$1: in both containers"
        # a process of the other container can be signalled, as in one pid namespace
        cri exec "$client" sh -c 'kill $(ps -o pid,args | grep "^ *[0-9]* nc -l" | head -n1 | sed "s/^ *//; s/ .*//") && echo sent'
        expect_contains "$OUT" sent "$1: the client signals the web container's process"
        # cordon: kill --all of one container (as the engine sends it) reaches its processes,
        # not the other container's in the same pid namespace
        if [ "$1" = cordon ]; then
                timeout 30 "$OCI" --root "$D/cordon-root/k8s.io" kill --all "$client" STOP
                expect_rc 0 "cordon-oci kill --all STOP of the client"
                expect_match "$(grep '^State' "/proc/$(pgrep -f '^/bin/sleep 77777[7]$')/status")" "stopped" \
                        "the client's process is stopped"
                expect_match "$(grep '^State' "/proc/$(pgrep -f '^sleep 55544[4]$')/status")" "sleeping" \
                        "the web container's is not"
                timeout 30 "$OCI" --root "$D/cordon-root/k8s.io" kill --all "$client" CONT
        fi
        # one container stopped: its processes go, those it left in their own session too
        cri exec "$client" sh -c 'setsid sleep 555555 </dev/null >/dev/null 2>&1 & echo started'
        expect_contains "$OUT" started "$1: the client starts a process in a session of its own"
        cri stop "$client"
        expect_rc 0 "$1: crictl stop client"
        for i in $(seq 50); do
                cri exec "$web" ps -o args
                case $OUT in *"sleep 555555"* | *"sleep 777777"*) sleep 0.2 ;; *) break ;; esac
        done
        expect_not_contains "$OUT" "sleep 777777" "$1: the stopped container's process is gone from the pod"
        expect_not_contains "$OUT" "sleep 555555" "$1: so is the one it left in its own session"
        expect_contains "$OUT" "/bin/sleep 1000000" "$1: the pod's infra process stays"
        expect_contains "$OUT" "sleep 555444" "$1: so do the other container's processes"
        # cordon: a container's sentry killed, nothing of it runs on unsupervised in the pod
        # (its init is no pid 1 there: its control group ends them)
        if [ "$1" = cordon ]; then
                local sp
                sp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sentryPid"])' \
                        "$D/cordon-root/k8s.io/$web/state.json")
                # (the pattern's brackets keep the waiting shell from matching itself)
                expect_true "the web container's processes run" pgrep -f "sleep 55544[4]"
                kill -9 "$sp"
                wait_until 20 sh -c '! pgrep -f "sleep 55544[4]"'
                expect_eq "" "$(pgrep -af 'sleep 55544[4]')" "the web container's processes end with its killed sentry"
        fi
        cri stopp "$pod"
        expect_rc 0 "$1: crictl stopp"
        cri rmp "$pod"
        expect_rc 0 "$1: crictl rmp"
        cri ps -a
        expect_not_contains "$OUT" "$pod" "$1: no container of the pod is left"
}

it_test cri_shared_pid
cri_shared_pid() {
        containerd_up
        sleep 666666 &
        at_exit "kill $!"
        if command -v runc >/dev/null; then
                shared_pid_checks runc
        fi
        shared_pid_checks cordon
        expect_eq "" "$(ls "$D/cordon-root/k8s.io" 2>/dev/null)" "no container state left in cordon's root"
        expect_eq "" "$(pgrep -f 'sleep 777777')" "no process of the pod is left"
}

# crictl under a terminal of the test's own (a pty, as a person's shell gives kubectl): INPUT
# is typed after a second, once the session is up; OUT gets everything the terminal showed.
cri_pty() { # INPUT CRICTL-ARGS...
        local input=$1
        shift
        printf '+ crictl (on a pty)' >&2
        printf ' %q' "$@" >&2
        printf '\n' >&2
        OUT=$(python3 - "$input" "${C[@]}" "$@" <<'PY'
import fcntl, os, pty, select, struct, subprocess, sys, termios, time
m, s = pty.openpty()
fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 111, 0, 0))
def ctty():
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
p = subprocess.Popen(sys.argv[2:], stdin=s, stdout=s, stderr=s, start_new_session=True, preexec_fn=ctty)
os.close(s)
out, start, typed = b"", time.time(), False
while time.time() - start < 30:
    if not typed and time.time() - start > 1:
        os.write(m, sys.argv[1].encode().decode("unicode_escape").encode())
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
    elif p.poll() is not None and typed:
        break
try:
    p.wait(timeout=5)
except subprocess.TimeoutExpired:
    p.kill()
sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
sys.stdout.write("\n[exit %s]\n" % p.returncode)
PY
)
        printf '%s\n' "$OUT" | sed 's/^/  pty| /' | head -n 30 >&2
}

# crictl exec -it and attach, under HANDLER: a shell on a terminal, as `kubectl exec -it`
# and `kubectl attach` give one.
tty_checks() { # HANDLER
        cat >"$D/tpod.json" <<EOF
{"metadata": {"name": "tty-$1", "namespace": "default", "uid": "tty-$1-uid", "attempt": 0},
 "log_directory": "$D/logs"}
EOF
        cat >"$D/tty.json" <<'EOF'
{"metadata": {"name": "tty"}, "image": {"image": "localhost/cordon-cri:1"},
 "command": ["/bin/sh"], "tty": true, "stdin": true, "log_path": "tty.log"}
EOF
        cri runp --runtime="$1" "$D/tpod.json"
        [ "$RC" = 0 ] || fail "crictl runp --runtime=$1 failed: $ERR"
        local pod=$OUT ctr
        cri create "$pod" "$D/tty.json" "$D/tpod.json"
        [ "$RC" = 0 ] || fail "$1: crictl create of a container with a terminal failed: $ERR"
        ctr=$OUT
        cri start "$ctr"
        expect_rc 0 "$1: crictl start"
        cri_pty 'hello-typed\n' exec -it "$ctr" sh -c 'tty; read l; stty size; echo "got $l"; exit 3'
        expect_match "$OUT" "/dev/pts/[0-9]+" "$1: crictl exec -it runs on a terminal"
        expect_contains "$OUT" "33 111" "$1: of the size of crictl's"
        expect_contains "$OUT" "got hello-typed" "$1: what is typed reaches it"
        expect_contains "$OUT" "exit code 3" "$1: with its exit code"
        cri exec "$ctr" sh -c 'echo plain; exit 4'
        expect_contains "$OUT" plain "$1: crictl exec without a terminal"
        expect_contains "$ERR" "exit code 4" "$1: its exit code"
        cri_pty 'echo attached-$((6*7)); tty\nexit 5\n' attach -it "$ctr"
        expect_contains "$OUT" "attached-42" "$1: crictl attach reaches the container's shell"
        expect_match "$OUT" "/dev/pts/[0-9]+" "$1: on its terminal"
        for i in $(seq 50); do
                cri inspect "$ctr"
                case $OUT in *CONTAINER_EXITED*) break ;; esac
                sleep 0.2
        done
        expect_contains "$OUT" '"exitCode": 5' "$1: the shell's exit ends the container with its code"
        cri stopp "$pod"
        cri rmp "$pod"
        expect_rc 0 "$1: crictl rmp"
}

it_test cri_terminal
cri_terminal() {
        containerd_up
        if command -v runc >/dev/null; then
                tty_checks runc
        fi
        tty_checks cordon
}

# --- bad input: cordon-oci given pod containers directly, beside a live pod ---

# A bundle in $D/b-NAME whose config is the default spec changed by python statements on
# `c` (p: the pod's sentry pid; pod: its id).
bad_bundle() { # NAME PYTHON
        local d="$D/b-$1"
        mkdir -p "$d"
        # (only the good one runs: the others may share one root)
        if [ "${1#good}" != "$1" ]; then make_rootfs "$d/rootfs"; else ln -sfn "$D/b-good/rootfs" "$d/rootfs"; fi
        "$OCI" spec --bundle "$d" || fail "cordon-oci spec failed"
        python3 - "$d/config.json" "$PODPID" "$POD" "$2" <<'PY' || fail "cannot edit config.json"
import json, sys
path, p, pod, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
c = json.load(open(path))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/sleep", "1000"]
c["annotations"] = {"io.kubernetes.cri.container-type": "container", "io.kubernetes.cri.sandbox-id": pod}
ns = {"pid": None, "mount": None, "network": "/proc/%s/ns/net" % p, "ipc": "/proc/%s/ns/ipc" % p,
      "uts": "/proc/%s/ns/uts" % p}
def setns():
    c["linux"]["namespaces"] = [dict({"type": t}, **({"path": v} if v else {})) for t, v in ns.items()]
exec(extra)
setns()
json.dump(c, open(path, "w"), indent=1)
PY
        BUNDLE=$d
}

# cordon-oci create of bundle NAME must fail naming WANT, and leave nothing behind
refused() { # NAME WANT WHAT
        local before ranges after
        before=$(ls "$ROOT")
        ranges=$(ls /run/cordon/idranges 2>/dev/null | grep -c +)
        timeout 30 "$OCI" --root "$ROOT" create --bundle "$D/b-$1" "bad-$1" >"$D/bad.out" 2>&1 </dev/null
        RC=$?
        OUT=$(cat "$D/bad.out")
        printf '+ create bad-%s: [exit %s] %s\n' "$1" "$RC" "$OUT" >&2
        [ "$RC" != 0 ] || { _it_soft_fail "$3: create succeeded"; timeout 30 "$OCI" --root "$ROOT" delete --force "bad-$1"; }
        expect_contains "$OUT" "$2" "$3: the error names the field and value"
        expect_eq "$before" "$(ls "$ROOT")" "$3: no container state left"
        # (host-wide: another pod container's teardown may still be dropping its share)
        wait_until 5 test "$ranges" -ge "$(ls /run/cordon/idranges 2>/dev/null | grep -c +)"
        expect_true "$3: no uid range shared" test "$ranges" -ge "$(ls /run/cordon/idranges 2>/dev/null | grep -c +)"
}

it_test cri_bad_input
cri_bad_input() {
        containerd_up
        write_configs pod-bad
        cri runp --runtime=cordon "$D/pod.json"
        [ "$RC" = 0 ] || fail "crictl runp failed: $ERR"
        POD=$OUT
        ROOT="$D/cordon-root/k8s.io"
        PODPID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sentryPid"])' "$ROOT/$POD/state.json")
        PODINIT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["initPid"])' \
                "/run/cordon/sandboxes/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sandbox"])' "$ROOT/$POD/state.json")/meta.json")
        local podnet other="cdnx$$"
        podnet=$(python3 -c 'import json,sys
c = json.load(open(sys.argv[1]))
print([n["path"] for n in c["linux"]["namespaces"] if n["type"] == "network"][0])' \
                "$D/state/io.containerd.runtime.v2.task/k8s.io/$POD/config.json")
        ip netns add "$other" || fail "ip netns add"
        at_exit "ip netns del $other"

        bad_bundle good ''
        # (the container's sentry keeps create's stdout: a file, not a pipe)
        timeout 30 "$OCI" --root "$ROOT" create --bundle "$BUNDLE" good >"$D/good.out" 2>&1 </dev/null
        RC=$?
        OUT=$(cat "$D/good.out")
        expect_rc 0 "a pod container naming its pod's namespaces as containerd does is created: $OUT"
        timeout 30 "$OCI" --root "$ROOT" delete --force good
        # the pod's shared pid namespace, named as containerd names it (shareProcessNamespace)
        bad_bundle goodpid 'ns["pid"] = "/proc/%s/ns/pid" % p'
        timeout 30 "$OCI" --root "$ROOT" create --bundle "$BUNDLE" goodpid >"$D/good.out" 2>&1 </dev/null
        RC=$?
        OUT=$(cat "$D/good.out")
        expect_rc 0 "a pod container joining the pod's pid namespace is created: $OUT"
        timeout 30 "$OCI" --root "$ROOT" delete --force goodpid

        # a command the image lacks, or one that cannot be run: create fails as runc's
        # (these two reach the container's root: the good one's, a directory)
        bad_bundle nocmd 'c["process"]["args"] = ["nope"]; c["root"]["path"] = path.rsplit("/", 2)[0] + "/b-good/rootfs"'
        refused nocmd 'exec: "nope": executable file not found in $PATH' "a command not in the image"
        bad_bundle dircmd 'c["process"]["args"] = ["/bin"]; c["root"]["path"] = path.rsplit("/", 2)[0] + "/b-good/rootfs"'
        refused dircmd 'exec: "/bin": permission denied' "a directory as the command"
        bad_bundle unknown 'c["annotations"]["io.kubernetes.cri.sandbox-id"] = "nosuchpod"'
        refused unknown 'io.kubernetes.cri.sandbox-id "nosuchpod": no such pod sandbox' "an unknown sandbox id"
        bad_bundle nosid 'del c["annotations"]["io.kubernetes.cri.sandbox-id"]'
        refused nosid 'io.kubernetes.cri.sandbox-id is missing' "no sandbox id"
        bad_bundle hostnet "ns['network'] = '/proc/$$/ns/net'"
        refused hostnet "network path /proc/$$/ns/net is the host's" "the host's network namespace"
        bad_bundle hostipc 'ns["ipc"] = "/proc/self/ns/ipc"'
        refused hostipc "ipc path /proc/self/ns/ipc is the host's" "the host's ipc namespace"
        bad_bundle notns 'ns["network"] = "/etc/hostname"'
        refused notns "network path /etc/hostname: it is not a namespace" "a path that is not a namespace"
        bad_bundle wrongtype 'ns["network"] = "/proc/%s/ns/ipc" % p'
        refused wrongtype "it is a ipc namespace, not a network one" "a namespace of the wrong kind"
        bad_bundle otherpod "ns['network'] = '/var/run/netns/$other'"
        refused otherpod "network path /var/run/netns/$other is another namespace, not the network namespace of pod" \
                "another pod's network namespace"
        bad_bundle hostpid 'ns["pid"] = "/proc/self/ns/pid"'
        refused hostpid "pid path /proc/self/ns/pid is the host's" "the host's pid namespace"
        # the pod's init's own pid namespace (cordon's init is pid 1 there), not the pod's
        bad_bundle initpid "ns['pid'] = '/proc/$PODINIT/ns/pid'"
        refused initpid "pid path /proc/$PODINIT/ns/pid is another namespace, not the pid namespace of pod" \
                "a pid namespace of the pod's that is not its shared one"
        bad_bundle userns 'ns["user"] = "/proc/%s/ns/user" % p'
        refused userns "user path /proc/$PODPID/ns/user" "a user namespace path"
        bad_bundle ownpolicy 'c["annotations"]["dev.cordon.policy"] = "{}"'
        refused ownpolicy "annotations: dev.cordon.policy: a pod's containers run under the pod's policy" \
                "a container's own policy"
        bad_bundle sandboxhost 'c["annotations"] = {"io.kubernetes.cri.container-type": "sandbox", "io.kubernetes.cri.sandbox-id": "x"}; ns.update(network="/proc/self/ns/net", ipc=None, uts=None)'
        refused sandboxhost "network path /proc/self/ns/net is the host's network namespace" "a pod on the host's network"
        bad_bundle sandboxtwice "c['annotations'] = {'io.kubernetes.cri.container-type': 'sandbox', 'io.kubernetes.cri.sandbox-id': 'y'}; ns.update(network='$podnet', ipc=None, uts=None)"
        refused sandboxtwice "is the network namespace of container $POD" "a second pod in the first one's network"
}

it_main "$@"
