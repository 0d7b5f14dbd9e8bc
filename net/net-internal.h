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

        /* the carried socket options' values on a fresh socket of the gate's */
        struct net_sockopt opt_defaults[NET_CARRIED_OPTS];

        /* audit */
        int audit_fd;
        pthread_mutex_t audit_lock;
        _Atomic uint64_t counts[REASON_COUNT];
        _Atomic uint64_t records;
};

#define NET_AUDIT_MAX_RECORDS 100000

const char *net_reason_name(enum net_reason r);
/* One JSON line: time, sandbox, pid, syscall, destination as given, host,
 * resolved address, decision, reason. Any string may be NULL. Bounded:
 * after NET_AUDIT_MAX_RECORDS one "audit_truncated" line, then counts only. */
void net_audit(struct net_gate *g, unsigned pid, const char *syscall, const char *destination, const char *host,
               const char *resolved, bool allowed, enum net_reason reason);
/* "1.2.3.4:443" / "[::1]:443" for a sockaddr_in/in6. */
void net_format_sockaddr(const struct sockaddr *sa, size_t len, char *buf, size_t size);

void net_gate_stop_stub(struct net_gate *g);
