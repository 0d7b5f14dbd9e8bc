/* net/ private: the gate's state shared by gate.c, stub.c and audit.c. */
#pragma once

#include <pthread.h>
#include <stdatomic.h>

#include "net/net.h"

enum net_reason {
        REASON_ALLOWED,        /* egress_allowed: connected to a checked address */
        REASON_LOOPBACK,       /* loopback: the sandbox's own loopback */
        REASON_EGRESS_BLOCKED, /* egress_blocked: not a listed destination */
        REASON_DNS_BLOCKED,    /* dns_blocked: a name not on the list */
        REASON_SSRF_BLOCKED,   /* ssrf_blocked: the name resolved to a forbidden address */
        REASON_PORT_BLOCKED,   /* port_blocked: a listed name on another port */
        REASON_IP_LITERAL,     /* ip_literal_blocked: a raw address, not a name */
        REASON_RESOLVE_FAILED, /* resolve_failed: the name did not resolve */
        REASON_CONNECT_FAILED, /* connect_failed: allowed, but the upstream refused or timed out */
        REASON_TEST_OVERRIDE,  /* test_override: the policy's testing section was used */
        REASON_DNS_ANSWERED,   /* dns_answered: a listed name answered from the pool */
        /* the relay (relay.c, broker.c): what an allowed connection carried */
        REASON_NOT_TLS,              /* not_tls: the first flight was no TLS ClientHello (or never came) */
        REASON_SNI_MISMATCH,         /* sni_mismatch: the ClientHello names no host or another one */
        REASON_UPSTREAM_UNVERIFIED,  /* upstream_unverified: the real server's certificate or name failed */
        REASON_HTTP_REFUSED,         /* http_refused: a request the broker cannot read safely */
        REASON_CRED_USED,            /* credential_used: the secret went into a matching request */
        REASON_CRED_TARGET_MISMATCH, /* credential_target_mismatch: a grant's request named another host */
        REASON_CRED_METHOD_MISMATCH, /* credential_method_mismatch */
        REASON_CRED_PATH_MISMATCH,   /* credential_path_mismatch */
        REASON_CRED_EXPIRED,         /* credential_expired */
        REASON_CRED_MISUSE,          /* credential_misuse: a placeholder anywhere but its grant's header */
        REASON_CRED_DENIED,          /* credential_denied: an ask grant's request a person (or nobody) refused */
        REASON_CRED_ASK_EXPIRED,     /* credential_approval_expired: nobody answered an ask grant's request in time */
        REASON_AUDIT_FULL,           /* audit_full: refused, as the audit log cannot take another connection's record */
        REASON_COUNT,
};

/* A socket option's value as getsockopt gave it. */
#define NET_CARRIED_OPTS 12
struct net_sockopt {
        bool ok;
        socklen_t len;
        uint8_t val[32];
};

struct net_gate {
        struct net_gate_config cfg;
        char *sandbox_id;
        struct net_rule *rules;
        char **hosts;
        size_t n_rules;
        char *test_hosts_file;
        struct net_cidr *test_allow;
        size_t n_test_allow;

        /* the resolver thread: getaddrinfo needs the host's root and files */
        pthread_t resolver;
        bool resolver_started;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        struct resolve_req *queue;
        /* the request being resolved; NULL once its asker has given up (the
         * resolver then drops the answer: the request was on its stack) */
        struct resolve_req *inflight;
        bool resolving; /* the resolver is in a lookup, which it cannot cut short */
        bool stopping;  /* from the wind-down: nobody waits for an answer any more */

        /* the DNS stub */
        pthread_t stub;
        bool stub_started;
        int stub_ready_fd; /* the stub's readiness, until net_gate_stub_ready read it; -1 */
        int stub_udp, stub_tcp;
        int stub_stop;                 /* eventfd that ends the stub thread */
        int stub_err;                  /* 0 once it listens, or -errno of ... */
        const char *stub_step;         /* ... this step */
        uint64_t sandbox_netns_cookie; /* SO_NETNS_COOKIE of the sandbox's namespace */
        /* a joined namespace's upstream socket maker (upstream.c), or NULL */
        struct net_upstream *upstream;
        /* in-cluster grants (cluster.c) */
        struct net_cluster *cluster;
        size_t n_cluster;
        char *cluster_domain;                /* names under it: clusterdns.c; NULL: none */
        struct sockaddr_storage cluster_dns; /* the cluster's DNS server, port 53 */

        /* the carried socket options' values on a fresh socket of the gate's */
        struct net_sockopt opt_defaults[NET_CARRIED_OPTS];

        /* the relays of allowed connections (relay.c) */
        pthread_mutex_t relay_lock;
        pthread_cond_t relay_cond;
        struct net_relay *relays;
        size_t n_relays;
        int relay_stop;           /* eventfd: every relay ends */
        int relay_ep;             /* epoll: relay_stop and the relays waiting for a first flight */
        uint64_t relay_seq;       /* the last relay's id */
        size_t n_waiting;         /* relays no thread has taken yet */
        size_t n_threads, n_idle; /* relay threads, and those waiting for work */
        /* the listener the relays' loopback pairs are made through, per
         * family (AF_INET, AF_INET6), -1 until the first; one pair at a time */
        pthread_mutex_t pair_lock;
        int pair_listen[2];
        struct sockaddr_storage pair_addr[2];
        socklen_t pair_len[2];
        struct net_broker *broker; /* the credential grants; NULL: none (not owned) */
        pthread_mutex_t ask_lock;  /* held while the asker is called or changed (ask.c) */
        struct net_asker asker;    /* .ask NULL: nobody to ask */

        /* audit */
        int audit_fd;
        pthread_mutex_t audit_lock;
        _Atomic uint64_t counts[REASON_COUNT];
        _Atomic uint64_t records;
        bool audit_log_bounded; /* net_gate_config's: no record limit of the gate's */
        /* the audit log takes no more: new connections are refused (audit_full) */
        _Atomic bool audit_closed;
};

#define NET_AUDIT_MAX_RECORDS 100000
/* The last records are kept back for the connections already under way
 * when the gate closes (one line each, their allow or connect_failed);
 * there are far fewer of those than this (a connect in progress per
 * worker or relay thread). */
#define NET_AUDIT_KEPT 1000

const char *net_reason_name(enum net_reason r);
/* One JSON line: time, sandbox, pid, syscall, destination as given, host,
 * resolved address, decision, reason. Any string may be NULL. Bounded:
 * egress that cannot be recorded must not happen, so once the log has
 * taken NET_AUDIT_MAX_RECORDS - NET_AUDIT_KEPT records the gate closes (one
 * "audit_full" note says so; every new connection is refused from then
 * on) and only the allowed records of connections already under way are
 * written, into the records kept back; the rest is counted only. */
void net_audit(struct net_gate *g, unsigned pid, const char *syscall, const char *destination, const char *host,
               const char *resolved, bool allowed, enum net_reason reason);
/* "1.2.3.4:443" / "[::1]:443" for a sockaddr_in/in6. */
void net_format_sockaddr(const struct sockaddr *sa, size_t len, char *buf, size_t size);

void net_gate_stop_stub(struct net_gate *g);
/* One JSON line like net_audit's, for what the relay saw in a connection:
 * host, decision, reason and n extra "key": "value" pairs (kv[2i], kv[2i+1]). */
void net_audit_kv(struct net_gate *g, unsigned pid, const char *host, bool allowed, enum net_reason reason,
                  const char *const *kv, size_t n);

/* --- the first flight (hello.c) --- */

#define NET_HELLO_MAX 16384                  /* the largest ClientHello message the gate reads */
#define NET_HELLO_BUF (NET_HELLO_MAX + 2048) /* with its records' headers */
/* Reads the ClientHello at the start of buf. 0 with the one server name
 * (lower case) in sni; 1 with *ret_need the bytes needed in all to go on;
 * -EPROTONOSUPPORT: not TLS; -EBADMSG: malformed; -ENOENT: no server name;
 * -EEXIST: two server names; -E2BIG: larger than the gate reads. */
int net_tls_client_hello(const uint8_t *buf, size_t len, char *sni, size_t sni_size, size_t *ret_need);

/* --- relays (relay.c) --- */

/* Every allowed connection runs through a relay: the child holds one end of
 * a loopback TCP pair the gate made, the relay thread the other and the
 * upstream socket. It reads the first flight and checks it names the rule's
 * host before a byte goes upstream; a host with a credential grant is
 * terminated by the broker (broker.c), any other passed through. */
struct net_relay {
        struct net_gate *g;
        int child;    /* our end of the pair */
        int upstream; /* connected, or connecting (state 0) */
        unsigned rule;
        unsigned pid;
        dev_t child_dev; /* the child's end, for connect() again on it */
        ino_t child_ino;
        _Atomic int state; /* 0 connecting upstream, 1 connected, -errno failed */
        char dest[96];
        char resolved[80];
        struct sockaddr_storage peer; /* the upstream's address, for getpeername */
        socklen_t peer_len;
        uint64_t id;            /* its key in the gate's epoll set */
        int64_t hello_deadline; /* net_now_ms() by which the first flight must be in */
        bool waiting;           /* for its first flight, no thread has it yet */
        struct net_relay *next;
};
#define NET_RELAY_MAX 1024
/* A connected loopback TCP pair of family (AF_INET or AF_INET6) through the
 * gate's listener: *ret_child (nonblocking if asked) for the child,
 * *ret_ours for the relay. */
int net_relay_pair(struct net_gate *g, int family, bool nonblock, int *ret_child, int *ret_ours);
/* Hands ours and upstream (both taken, closed on failure) to the relay
 * threads. 0 or -errno (-EAGAIN: NET_RELAY_MAX relays run). */
int net_relay_start(struct net_gate *g, int child_end, int ours, int upstream, int state, unsigned rule, unsigned pid,
                    const char *dest, const char *resolved, const struct sockaddr *peer, socklen_t peer_len);
/* The state of the relay whose child end is the socket fd (a duplicate):
 * 0 connecting, 1 connected or no relay, -errno its upstream's failure;
 * with ret_peer, its upstream's address (*ret_peer_len 0: no relay). */
int net_relay_state(struct net_gate *g, int fd, struct sockaddr_storage *ret_peer, socklen_t *ret_peer_len);
/* Ends every relay and waits for them (at most a few seconds): whether
 * all have ended (if not, the gate must outlive them). */
bool net_relay_stop_all(struct net_gate *g);
/* The relay's socket plumbing: waits for fd (and the gate's stop) until
 * deadline_ms (CLOCK_MONOTONIC; 0: none). 1 ready, 0 timeout, -ECANCELED. */
int net_relay_wait(struct net_relay *r, int fd, short events, int64_t deadline_ms);
int64_t net_now_ms(void);
/* Writes all of buf to the nonblocking fd, waiting as needed. 0 or -errno. */
int net_relay_write_all(struct net_relay *r, int fd, const void *buf, size_t n);
/* Copies both ways between the nonblocking a and b until both are done. */
void net_relay_pump(struct net_relay *r, int a, int b);
/* Ends our side of fd and reads what the peer still sends (at most 2 s),
 * so that closing it does not reset what the peer has yet to read. */
void net_relay_drain(struct net_relay *r, int fd);
/* Closes fd with a reset (SO_LINGER 0): the peer sees ECONNRESET. */
void net_close_reset(int fd);

/* --- the credential broker (broker.c, tls.c, http.c, scan.c) --- */

/* scan.c: a needle made ready to be found in any bytes at a cost that does
 * not hang on what they are (a skip table over the needle's byte pairs).
 * The needle is not copied: it must outlive the scan. Needles shorter than
 * NET_SCAN_MIN go to memmem, whose short-needle paths have no table. */
#define NET_SCAN_MIN   4
#define NET_SCAN_SLOTS 512
struct net_scan {
        const uint8_t *needle;
        size_t len;
        size_t skip;                  /* after a window ending in the last pair that did not match */
        uint64_t present[65536 / 64]; /* the byte pairs of the needle's tail */
        /* where each ends in the tail (1 .. 255; 0: an empty slot) */
        uint16_t key[NET_SCAN_SLOTS];
        uint8_t at[NET_SCAN_SLOTS];
};
void net_scan_init(struct net_scan *s, const void *needle, size_t len);
/* The first place of the needle in hay's n bytes, or NULL. */
const char *net_scan_find(const struct net_scan *s, const char *hay, size_t n);

struct broker_grant {
        struct net_grant g; /* strings owned */
        char **methods;
        char placeholder[48];
        char *secret; /* in the broker's wiped mapping */
        size_t secret_len;
        char *mask; /* secret_len bytes the response scan puts in the secret's place */
        /* the scans for the placeholder (in request bodies) and the secret
         * (in responses); the secret's table tells of its bytes, so it is
         * in the secrets' mapping too */
        struct net_scan *ph_scan, *secret_scan;
        void *server_ctx; /* SSL_CTX with the sandbox CA's leaf for g.host */
        /* the upstream's latest TLS session (ticket) for g.host, which
         * the next connection resumes: no certificate chain to verify
         * again, and one round of signatures fewer (tls.c) */
        pthread_mutex_t session_lock;
        void *session; /* SSL_SESSION, or NULL */
};

struct net_broker {
        struct broker_grant *grants;
        size_t n;
        char *secrets; /* the mapping: n * NET_SECRET_MAX bytes */
        size_t secrets_size;
        char *upstream_ca_file;
        char *ca_pem;     /* the sandbox's CA, for its trust store */
        char *ca_bundle;  /* the host's bundle and ca_pem */
        void *client_ctx; /* SSL_CTX verifying upstream servers */
        time_t expiry;    /* the sandbox's, for the certificates; (time_t)-1 none */
};
#define NET_SECRET_MAX 8192

/* tls.c, on the main thread at start: the sandbox's CA and a leaf per
 * grant's host (EC P-256, the CA's key dropped once they are signed), the
 * server contexts, and the client context whose store is the host's CA
 * bundle (read now: the relays run chrooted in the view) plus the test's
 * upstreamCaFile. 0 or -errno with why. */
int net_broker_tls_init(struct net_broker *b, char *why, size_t why_size);
void net_broker_tls_free(struct net_broker *b);

/* http.c: the requests and responses of a terminated connection; c and u
 * are the SSL objects (child side, upstream side). */
void net_broker_http(struct net_relay *r, struct broker_grant *bg, void *c, void *u);
/* The request side of http.c without a connection (tests/fuzz/fuzz-http.c):
 * data, cut into reads at cuts, for grant of b; what would go upstream in
 * *ret_out (malloc'd, *ret_len bytes), whether a request was refused.
 * Returns how many requests the secret went into. */
int net_http_offline(struct net_broker *b, size_t grant, const uint8_t *data, size_t n, const size_t *cuts,
                     size_t n_cuts, char **ret_out, size_t *ret_len, bool *ret_refused);
/* The response side without a connection: data, cut into reads at cuts,
 * through the scan that puts each secret's mask in its place; what the
 * sandbox would get in *ret_out (malloc'd, *ret_len bytes). */
int net_http_offline_response(struct net_broker *b, const uint8_t *data, size_t n, const size_t *cuts, size_t n_cuts,
                              char **ret_out, size_t *ret_len);
/* tls.c: I/O on a nonblocking SSL object for http.c: bytes read (>0), 0 at
 * the end, -EAGAIN (wait for fd), -EPIPE; and a write of all of buf. */
ssize_t net_ssl_read(void *ssl, void *buf, size_t n);
int net_ssl_write_all(struct net_relay *r, void *ssl, int fd, const void *buf, size_t n);
/* The same in two steps: records into the write buffer (which writes to fd
 * as it fills), then what it holds out to fd. 0 or -EPIPE. */
int net_ssl_write(struct net_relay *r, void *ssl, int fd, const void *buf, size_t n);
int net_ssl_flush(struct net_relay *r, void *ssl, int fd);
bool net_ssl_pending(void *ssl);
/* Up to n of the bytes SSL_read would give next, left unread: >0, or 0
 * when none are there yet (or the connection ended). */
ssize_t net_ssl_peek(void *ssl, void *buf, size_t n);

/* ask.c: puts an ask grant's request (method, its target as sent, the
 * first bytes of its body) to the gate's asker and waits for the answer,
 * the gate's stop or the client's hang-up. REASON_ALLOWED: approved;
 * REASON_CRED_DENIED; REASON_CRED_ASK_EXPIRED. r NULL (offline): denied. */
enum net_reason net_broker_ask(struct net_relay *r, const struct broker_grant *bg, const char *method, const char *url,
                               size_t url_len, const uint8_t *bytes, size_t n_bytes);

/* --- the credential broker's side of a relay (broker.c) --- */

/* The grant index for the rule's host, or -1: not terminated. */
int net_broker_grant_for(const struct net_broker *b, const char *host, unsigned port);
/* Serves a terminated connection: TLS with the sandbox's leaf for host to
 * the child, TLS verified to upstream, requests decided one by one. The
 * first flight (n bytes of hello) is still in the child's socket. */
void net_broker_serve(struct net_relay *r, int grant);

/* upstream.c: a socket for the gate's upstream connection, made in the
 * joined namespace where there is one (else the sentry's own); -errno. */
int net_upstream_socket(struct net_gate *g, int family, int type, int protocol);
/* Ends the upstream thread (net_gate_free). Accepts a gate without one. */
void net_upstream_free(struct net_gate *g);
/* cluster.c: whether sa:port is in a granted network (only from a joined
 * namespace); the gate's connection to it from there, audited (the socket,
 * or -errno); freed by net_gate_free. */
bool net_cluster_granted(const struct net_gate *g, const struct sockaddr *sa, size_t len, unsigned port);
int net_cluster_connect(struct net_gate *g, unsigned pid, const char *dest, const struct sockaddr *sa, socklen_t len,
                        bool nonblock, bool *ret_inprogress);
void net_cluster_free(struct net_gate *g);
/* Whether addr (4 or 16 bytes) lies in a granted network, whatever port. */
bool net_cluster_in_network(const struct net_gate *g, int family, const uint8_t *addr);
/* clusterdns.c: the stub's answer to a name under the cluster domain, or
 * -ENOENT for another name (the stub answers it as usual). */
ssize_t net_cluster_dns_answer(struct net_gate *g, const uint8_t *q, size_t len, const struct dns_question *dq,
                               uint8_t *out, size_t outsize);
