/* The kernel egress floor: cgroup programs attached to the sandbox's cgroup
 * v2 group (net/floor.c). Every connect() and every addressed
 * sendto()/sendmsg() made on a socket the sandbox created is refused (EPERM)
 * unless it names the sandbox's own loopback: 127.0.0.0/8, ::1 or
 * ::ffff:127.0.0.0/104; and every IP packet such a socket sends elsewhere is
 * dropped. This holds whatever the seccomp layer decides: it is the floor
 * beneath the sentry's emulation, not a second copy of it.
 *
 * Connections the policy allows are unaffected: the egress gate makes them
 * from the sentry, whose sockets belong to the sentry's own cgroup (a socket
 * is charged to the cgroup of the task that created it), and injects the
 * connected socket.
 *
 * Built with clang -target bpf -g: the object carries BTF, which libbpf loads
 * with it. No CO-RE relocation is needed: the programs read only the uapi
 * contexts struct bpf_sock_addr and struct __sk_buff, whose fields the kernel itself rewrites into
 * accesses of its own structures when it verifies the program, so there is
 * no kernel-internal layout to relocate and no vmlinux.h to generate. */
/* <linux/bpf.h> first: libbpf's headers use its types */
#include <linux/bpf.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define ALLOW 1
#define DENY  0 /* the caller gets EPERM */

static __always_inline int v4_loopback(__u32 addr_be)
{
        return (bpf_ntohl(addr_be) >> 24) == 127;
}

/* ::1, or an IPv4-mapped loopback address (::ffff:127.x.y.z), which a dual
 * stack socket sends over IPv4 loopback. Other encodings (IPv4-compatible,
 * NAT64, 6to4) would be routed elsewhere: refused. */
static __always_inline int v6_loopback(struct bpf_sock_addr *ctx)
{
        __u32 a0 = ctx->user_ip6[0], a1 = ctx->user_ip6[1], a2 = ctx->user_ip6[2], a3 = ctx->user_ip6[3];
        if (a0 != 0 || a1 != 0)
                return 0;
        if (a2 == 0 && a3 == bpf_htonl(1))
                return 1;
        return a2 == bpf_htonl(0xffff) && v4_loopback(a3);
}

SEC("cgroup/connect4")
int floor_connect4(struct bpf_sock_addr *ctx)
{
        return v4_loopback(ctx->user_ip4) ? ALLOW : DENY;
}

SEC("cgroup/connect6")
int floor_connect6(struct bpf_sock_addr *ctx)
{
        return v6_loopback(ctx) ? ALLOW : DENY;
}

/* UDP (and ping) datagrams with an address; a connected socket was checked
 * when it connected. */
SEC("cgroup/sendmsg4")
int floor_sendmsg4(struct bpf_sock_addr *ctx)
{
        return v4_loopback(ctx->user_ip4) ? ALLOW : DENY;
}

SEC("cgroup/sendmsg6")
int floor_sendmsg6(struct bpf_sock_addr *ctx)
{
        return v6_loopback(ctx) ? ALLOW : DENY;
}

#define ETH_P_IP_BE   0x0008 /* htons(ETH_P_IP) */
#define ETH_P_IPV6_BE 0xdd86 /* htons(ETH_P_IPV6) */
#define IPV4_DADDR    16     /* offsetof(struct iphdr, daddr) */
#define IPV6_DADDR    24     /* offsetof(struct ipv6hdr, daddr) */

/* The backstop: every IP packet a socket of the sandbox sends, whatever its
 * kind (the sock_addr hooks above see only connect and addressed UDP sends;
 * a ping socket's sendto, for one, has no such hook), is dropped unless it
 * goes to loopback. The sender gets EPERM where the protocol reports it.
 * Packets the kernel makes itself (TCP resets, neighbour discovery) are not
 * the sandbox's sockets' and do not pass here. */
static __always_inline int egress_loopback_only(struct __sk_buff *skb)
{
        if (skb->protocol == ETH_P_IP_BE) {
                __u32 daddr;
                if (bpf_skb_load_bytes(skb, IPV4_DADDR, &daddr, sizeof(daddr)) < 0)
                        return DENY;
                return v4_loopback(daddr) ? ALLOW : DENY;
        }
        if (skb->protocol == ETH_P_IPV6_BE) {
                __u32 a[4];
                if (bpf_skb_load_bytes(skb, IPV6_DADDR, a, sizeof(a)) < 0)
                        return DENY;
                /* only ::1: a v4-mapped destination leaves as an IPv4 packet */
                return a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] == bpf_htonl(1) ? ALLOW : DENY;
        }
        return DENY; /* an inet socket sends nothing but IP */
}

SEC("cgroup_skb/egress")
int floor_egress(struct __sk_buff *skb)
{
        return egress_loopback_only(skb);
}

#define IPV4_PROTOCOL 9 /* offsetof(struct iphdr, protocol) */
#define IPV6_NEXTHDR  6 /* offsetof(struct ipv6hdr, nexthdr) */
#define PROTO_TCP     6

/* The backstop for a sandbox that lives in a network namespace an engine
 * prepared (a pod's), where it may accept connections: its TCP packets go
 * anywhere, everything else only to loopback. Safe because a TCP socket of
 * the sandbox can reach no other address by its own doing: the connect4/6
 * programs above refuse every connect (TCP fast open's included) to
 * anything but loopback, so the only TCP connections it has elsewhere are
 * ones it accepted, and their replies are what pass here. (The gate's
 * connections are the sentry's sockets, not the sandbox's.) */
SEC("cgroup_skb/egress")
int floor_egress_joined(struct __sk_buff *skb)
{
        __u8 proto = 0;
        if (skb->protocol == ETH_P_IP_BE) {
                if (bpf_skb_load_bytes(skb, IPV4_PROTOCOL, &proto, sizeof(proto)) < 0)
                        return DENY;
        } else if (skb->protocol == ETH_P_IPV6_BE) {
                if (bpf_skb_load_bytes(skb, IPV6_NEXTHDR, &proto, sizeof(proto)) < 0)
                        return DENY;
        }
        if (proto == PROTO_TCP)
                return ALLOW;
        return egress_loopback_only(skb);
}
