/* net/: the sandbox's network. Its own network namespace with only loopback
 * up; a DNS stub that answers listed names with synthetic addresses; an
 * egress gate that turns a connect() to such an address into a connection
 * the sentry makes itself, from outside, to an address it checked.
 *
 * Never: it includes fs/ or any sentry/ room (only common/ and notify/'s
 * handler contract); it lets nothing out that no rule lists; its only
 * words to people are the -v summary of what the gate decided (and the
 * audit records, which are data). */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "notify/notify.h"

/* Runs in the child inside its new network namespace, while it still has
 * CAP_NET_ADMIN there: brings lo up. 0 or -errno. */
int net_loopback_up(void);

/* --- the kernel egress floor (floor.c, floor.bpf.c) --- */

/* Loads the floor's BPF programs (cgroup connect4, connect6, sendmsg4,
 * sendmsg6: every destination but the sandbox's own loopback refused with
 * EPERM; cgroup_skb egress: every other IP packet dropped) and attaches them with BPF_F_ALLOW_MULTI to the cgroup v2
 * directory cgroup_fd (O_RDONLY), all or none. They stay attached until the group is removed. 0, or -errno with why
 * (what failed and why) filled: -EPERM or -EACCES when this process may not load or attach BPF programs. */
int net_floor_attach(int cgroup_fd, char *why, size_t size);
/* The same; with joined (the sandbox lives in a network namespace an engine
 * prepared, and may accept connections), the egress program lets the
 * sandbox's TCP packets go anywhere: the connect programs still refuse every
 * connection it would open itself, so those are replies on connections it
 * accepted. Everything else stays loopback only. */
int net_floor_attach_joined(int cgroup_fd, bool joined, char *why, size_t size);
/* Begins loading the programs on a thread, so that the load overlaps other
 * set-up; the next net_floor_attach_joined with the same joined takes them
 * (another joined loads its own). The thread must be over
 * before the process forks or clones (its locks would be copied taken):
 * net_floor_attach and net_floor_preload_end wait for it. */
void net_floor_preload(bool joined);
/* Waits for a preload net_floor_attach did not take, and frees it. */
void net_floor_preload_end(void);
/* Loads the programs without attaching them (cordon check): from their pins
 * where those are there and check out, never pinning nor mounting anything.
 * 0 or -errno, why filled. */
int net_floor_probe(char *why, size_t size);
/* How this process's last floor got its programs (net_floor_probe or an
 * attach): "programs reused from their pins in /sys/fs/bpf/cordon" or
 * "programs loaded at this start (pins: WHY NOT)"; "" before any. A start
 * loads the programs once and pins them in bpffs (mounting one at
 * /sys/fs/bpf where the host has none, only as root in the host's own
 * namespaces); later starts take them from there after checking them. */
const char *net_floor_how(void);
/* CORDON_TEST_FORCE_FALLBACK: "floor_pin" makes every floor load its
 * programs anew, neither taking nor making pins. 0, or -EINVAL for a name
 * that is not the floor's. */
int net_floor_force_fallback(const char *feature);
/* Tests: the bpffs the pins go in (a private mount) instead of /sys/fs/bpf;
 * no bpffs is mounted then. */
void net_floor_test_pin_fs(const char *bpffs);
/* How many of the floor's hooks have a program attached directly to the
 * cgroup cgroup_fd (5 when the floor is in place), or -errno. */
int net_floor_attached(int cgroup_fd);

/* --- address classification (classify.c) --- */

enum addr_class {
        ADDR_PUBLIC = 0,  /* a global unicast address: the only kind the gate connects to */
        ADDR_UNSPECIFIED, /* 0.0.0.0/8, :: */
        ADDR_LOOPBACK,    /* 127/8, ::1 */
        ADDR_PRIVATE,     /* 10/8, 172.16/12, 192.168/16 */
        ADDR_CGNAT,       /* 100.64/10 */
        ADDR_LINK_LOCAL,  /* 169.254/16, fe80::/10 */
        ADDR_METADATA,    /* 169.254.169.254, fd00:ec2::254 and other cloud metadata endpoints */
        ADDR_ULA,         /* fc00::/7 */
        ADDR_MULTICAST,   /* 224/4, ff00::/8 */
        ADDR_BROADCAST,   /* 255.255.255.255 */
        ADDR_RESERVED,    /* documentation, benchmarking, 240/4, 192.0.0/24, 6to4 relay, site-local, ... */
};

/* Classifies an IPv4 address (network byte order). */
enum addr_class net_classify_ipv4(uint32_t addr_be);
/* Classifies an IPv6 address; IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
 * (::a.b.c.d), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16) and
 * Teredo (2001::/32) forms are classified by the IPv4 address they embed
 * when that is not public. */
enum addr_class net_classify_ipv6(const struct in6_addr *a);
/* Classifies a sockaddr_in/sockaddr_in6 of length len; -EAFNOSUPPORT for
 * other families, -EINVAL for a short length. */
int net_classify_sockaddr(const struct sockaddr *sa, size_t len);
const char *net_addr_class_name(enum addr_class c);

/* --- the synthetic pool (classify.c) --- */

/* Name i (0-based) of the allow list is answered as 198.18.X.Y and
 * fdc0:d0::/96 + i: addresses that exist nowhere, so a connect() to one is
 * unmistakably a request for that name. At most NET_POOL_MAX names. */
#define NET_POOL_MAX 65000
void net_pool_ipv4(unsigned index, struct in_addr *ret);
void net_pool_ipv6(unsigned index, struct in6_addr *ret);
/* The index a sockaddr's address stands for, or -ENOENT if it is not in the pool. */
int net_pool_lookup(const struct sockaddr *sa, size_t len);

/* --- DNS (dns.c) --- */

#define DNS_MAX_PACKET 1232

struct dns_question {
        char name[256]; /* lower case, no trailing dot; "" for the root */
        uint16_t qtype;
        uint16_t qclass;
        uint16_t id;
        bool rd;
        bool edns;           /* an OPT record was present */
        size_t question_end; /* offset just past the question in the query */
};

/* Parses a query defensively: one question, no compression pointers in it,
 * labels 1..63 bytes, name at most 255 bytes, anything else in the packet
 * ignored but bounded by len. 0, or -EBADMSG (malformed: answer FORMERR if
 * the header was readable, else drop), -EOPNOTSUPP (not a standard query:
 * answer NOTIMP). */
int dns_parse_query(const uint8_t *pkt, size_t len, struct dns_question *ret);

enum dns_rcode {
        DNS_NOERROR = 0,
        DNS_FORMERR = 1,
        DNS_SERVFAIL = 2,
        DNS_NXDOMAIN = 3,
        DNS_NOTIMP = 4,
        DNS_REFUSED = 5
};

/* Builds the response to q (echoing its question) with rcode and, for
 * NOERROR, at most one answer record: an A (addr4) or AAAA (addr6) record
 * when that pointer is non-NULL, none otherwise (NODATA). Returns the length
 * written into out (at most outsize), or -ENOBUFS. */
ssize_t dns_build_response(const uint8_t *query, const struct dns_question *q, enum dns_rcode rcode,
                           const struct in_addr *addr4, const struct in6_addr *addr6, uint32_t ttl, uint8_t *out,
                           size_t outsize);
/* A header-only error response (FORMERR/NOTIMP) for a query whose question
 * could not be parsed; needs len >= 12. Returns 12 or -EBADMSG. */
ssize_t dns_build_error(const uint8_t *query, size_t len, enum dns_rcode rcode, uint8_t *out, size_t outsize);

/* --- the egress gate (gate.c, stub.c, audit.c) --- */

struct net_rule {
        const char *host; /* exact, lower case */
        unsigned port;
        bool ask; /* "action": "ask": each connection waits for a person (notify_ask) */
};

struct net_cidr {
        int family;
        uint8_t addr[16];
        unsigned prefix;
};

struct net_gate_config {
        const char *sandbox_id;
        const struct net_rule *rules; /* rule i is pool index i */
        size_t n_rules;
        /* test-only overrides (off when NULL/0): see policy.h */
        const char *test_hosts_file;
        const struct net_cidr *test_allow;
        size_t n_test_allow;
        int audit_fd; /* -1: no audit file */
        /* The log bounds itself: a sandbox's events file, whose audit share
         * says when it is full (net_gate_audit_full). The gate then sets no
         * record limit of its own; without it (`cordon run --audit FILE`,
         * a host file) the gate closes after NET_AUDIT_MAX_RECORDS. */
        bool audit_log_bounded;
        bool verbose;              /* summarise decisions on stderr at the end */
        struct net_broker *broker; /* credential grants (outlives the gate); NULL: none */
};

struct net_gate;

/* Creates the gate and its resolver thread. Call from a thread whose root
 * and credentials are the host's (the sentry's main thread): name
 * resolution reads the host's resolver configuration. */
int net_gate_new(const struct net_gate_config *cfg, struct net_gate **ret);
/* Starts the DNS stub inside the sandbox's network namespace (netns_fd) at
 * 127.0.0.53:53 (UDP and TCP), on a thread: net_gate_stub_ready says when
 * it listens. */
int net_gate_start_stub(struct net_gate *g, int netns_fd);
/* The same; with shared, the namespace is a pod's whose sandbox container's
 * stub already listens there: the thread only joins it to learn which
 * sockets are the namespace's, and ends. */
int net_gate_start_stub_shared(struct net_gate *g, int netns_fd, bool shared);
/* The sandbox lives in a network namespace an engine prepared (netns_fd):
 * the gate's upstream sockets are made there from now on, not in the
 * sentry's (the host's). A thread of the gate joins it: call before the
 * sentry's own seccomp filter is loaded. 0 or -errno. */
int net_gate_upstream_netns(struct net_gate *g, int netns_fd);
/* In-cluster grants (the policy's networkPolicy.clusterRules): a connect to
 * an address in net on one of ports is made by the gate from the joined
 * namespace and injected. Honoured only once net_gate_upstream_netns has
 * joined one. Copied. 0 or -errno. */
struct net_cluster_rule {
        struct net_cidr net;
        const unsigned *ports;
        size_t n_ports;
};
int net_gate_set_cluster(struct net_gate *g, const struct net_cluster_rule *rules, size_t n);
/* networkPolicy.clusterDomain: the stub answers names under domain with the
 * address server (the cluster's DNS, an address) gives, asked from the
 * joined namespace, only where it lies in a granted network; else NXDOMAIN.
 * -EINVAL for a server that is not an address. */
int net_gate_set_cluster_dns(struct net_gate *g, const char *domain, const char *server);
/* Waits until the stub listens: 0, or -errno when it could not, with
 * *ret_step saying at what (the caller must not let the sandbox start).
 * The stub's thread joins the sandbox's network namespace (setns) and
 * brings its loopback up, which the sentry's own seccomp filter refuses:
 * call it before that filter is loaded. */
int net_gate_stub_ready(struct net_gate *g, const char **ret_step);
/* Tells the stub's thread to end, without waiting for it (the sandbox is
 * ending: net_gate_free, later, joins it), and every connect waiting for a
 * name's lookup to give up (-ECANCELED). Accepts NULL. */
void net_gate_wind_down(struct net_gate *g);
/* The log the audit records go to can take no more of them (a sandbox's
 * events file has used up its audit share): from now on the gate refuses
 * every new connection with EACCES (reason audit_full), as egress that
 * cannot be recorded must not happen. Connections already made go on.
 * Thread-safe; accepts NULL. net_gate_audit_closed: whether it is so (or
 * the gate closed itself at its own record limit). */
void net_gate_audit_full(struct net_gate *g);
bool net_gate_audit_closed(struct net_gate *g);
/* Prints the decision summary (with verbose) and frees. Accepts NULL. */
void net_gate_free(struct net_gate *g);

/* Who the requests of an "ask" grant are put to: sentry/approvals, handed
 * down by sentry/ as this small table (net/ includes no sentry room). ask
 * must not block: it calls done(arg, approved, decision) exactly once, from
 * any thread, maybe before it returns, decision "expired" for a request
 * nobody answered in time; alive(arg) says whether the asking relay still
 * waits. q describes the request (capability "credential"). */
struct net_asker {
        void (*ask)(void *userdata, const struct notify_ask *q,
                    void (*done)(void *arg, bool approved, const char *decision), bool (*alive)(void *arg), void *arg);
        void *userdata;
};
/* Sets who the gate asks; NULL removes it, waiting for an ask in progress
 * to return (call before what it points to is freed). Without one, every
 * request of an ask grant is refused at once (credential_denied). */
void net_gate_set_asker(struct net_gate *g, const struct net_asker *a);

/* --- the credential broker (broker.c, tls.c, http.c) --- */

/* A grant as the policy gives it (sentry/policy/policy.h's
 * policy_credential, defaults filled in). */
struct net_grant {
        const char *env; /* the sandbox's variable: its placeholder */
        const char *host;
        unsigned port;
        char *const *methods; /* n_methods 0: any */
        size_t n_methods;
        const char *path_prefix;
        const char *header;
        const char *format; /* one "{}" */
        const char *source_file, *source_env;
        time_t expires_at; /* (time_t)-1: none of its own */
        const char *reason;
        bool ask; /* "action": "ask": each matching request waits for a person before the secret goes in */
};

struct net_broker;

/* Reads each grant's secret (a regular file of cordon's user or root that
 * no group or other may read, or a variable of cordon's environment, which
 * is then wiped from it) into memory that a fork or clone does not copy
 * (MADV_WIPEONFORK: init and the sandbox never hold it), and draws each
 * grant's placeholder. Call on the main thread, before the sandbox's init
 * is cloned. upstream_ca_file (test only, may be NULL) is trusted upstream
 * besides the host's store. 0, or -errno with why naming the grant and the
 * source. */
int net_broker_new(const struct net_grant *grants, size_t n, time_t sandbox_expiry, const char *upstream_ca_file,
                   struct net_broker **ret, char *why, size_t why_size);
/* The placeholder the sandbox's variable grants[i].env holds. */
const char *net_broker_placeholder(const struct net_broker *b, size_t i);
/* The PEM of the sandbox's CA, or NULL when no grant needs TLS terminated;
 * and the trust bundle the sandbox sees (the host's CAs, read at start,
 * then the sandbox's own), at NET_CA_BUNDLE_PATH in its view. */
const char *net_broker_ca_pem(const struct net_broker *b);
const char *net_broker_ca_bundle(const struct net_broker *b);
#define NET_CA_BUNDLE_PATH "/etc/ssl/certs/ca-certificates.crt"
void net_broker_free(struct net_broker *b);

/* The resolver configuration the view shows: resolv.conf pointing at the stub. */
#define NET_STUB_ADDR "127.0.0.53"
extern const char net_resolv_conf[];
extern const char net_hosts[];

/* Handlers (userdata: struct net_gate). */
/* Emulates connect(2): own loopback passes; a synthetic address of a listed
 * name on its port is connected by the sentry to an address it resolved and
 * checked, and the connected socket replaces the child's; all else EACCES. */
int net_handle_connect(struct notify_call *call, struct notify_verdict *ret);
/* Emulates sendto(2) with an address (TCP fast open to a listed name included). */
int net_handle_sendto(struct notify_call *call, struct notify_verdict *ret);
/* Emulates sendmsg(2) and sendmmsg(2): no address or own loopback passes. */
int net_handle_sendmsg(struct notify_call *call, struct notify_verdict *ret);
/* Emulates getpeername(2): a relayed connection (the child's end of the
 * gate's loopback pair) names the upstream address, as a socket connected
 * there would; every other socket's runs natively. */
int net_handle_getpeername(struct notify_call *call, struct notify_verdict *ret);
/* Emulates socket ioctls (0x89xx): refused on sockets of another network namespace. */
int net_handle_sockioctl(struct notify_call *call, struct notify_verdict *ret);
