/* The egress audit log: one JSON object per line, appended with one write
 * so that lines from concurrent workers never interleave. */
#include "config.h"

#include <arpa/inet.h>
#include <time.h>

#include "common/util.h"
#include "net/net-internal.h"

static const char *const reason_names[REASON_COUNT] = {
        [REASON_ALLOWED] = "egress_allowed",
        [REASON_LOOPBACK] = "loopback",
        [REASON_EGRESS_BLOCKED] = "egress_blocked",
        [REASON_DNS_BLOCKED] = "dns_blocked",
        [REASON_SSRF_BLOCKED] = "ssrf_blocked",
        [REASON_PORT_BLOCKED] = "port_blocked",
        [REASON_IP_LITERAL] = "ip_literal_blocked",
        [REASON_RESOLVE_FAILED] = "resolve_failed",
        [REASON_CONNECT_FAILED] = "connect_failed",
        [REASON_TEST_OVERRIDE] = "test_override",
        [REASON_DNS_ANSWERED] = "dns_answered",
        [REASON_NOT_TLS] = "not_tls",
        [REASON_SNI_MISMATCH] = "sni_mismatch",
        [REASON_UPSTREAM_UNVERIFIED] = "upstream_unverified",
        [REASON_HTTP_REFUSED] = "http_refused",
        [REASON_CRED_USED] = "credential_used",
        [REASON_CRED_TARGET_MISMATCH] = "credential_target_mismatch",
        [REASON_CRED_METHOD_MISMATCH] = "credential_method_mismatch",
        [REASON_CRED_PATH_MISMATCH] = "credential_path_mismatch",
        [REASON_CRED_EXPIRED] = "credential_expired",
        [REASON_CRED_MISUSE] = "credential_misuse",
        [REASON_CRED_DENIED] = "credential_denied",
        [REASON_CRED_ASK_EXPIRED] = "credential_approval_expired",
        [REASON_AUDIT_FULL] = "audit_full",
};

const char *net_reason_name(enum net_reason r)
{
        return r < REASON_COUNT ? reason_names[r] : "?";
}

/* Appends s as a JSON string (quotes included); control and non-ASCII bytes escaped. */
static size_t json_str(char *out, size_t size, size_t o, const char *s)
{
        if (!s) {
                o += (size_t)snprintf(out + (o < size ? o : size), o < size ? size - o : 0, "null");
                return o;
        }
        if (o < size)
                out[o] = '"';
        o++;
        for (const unsigned char *p = (const unsigned char *)s; *p && o < size; p++) {
                if (*p == '"' || *p == '\\') {
                        if (o + 2 < size) {
                                out[o++] = '\\';
                                out[o++] = (char)*p;
                        } else
                                o = size;
                } else if (*p < 0x20 || *p >= 0x7f) {
                        int n = snprintf(out + o, size - o, "\\u%04x", *p);
                        o += n > 0 ? (size_t)n : 0;
                } else
                        out[o++] = (char)*p;
        }
        if (o < size)
                out[o] = '"';
        o++;
        return o;
}

/* Now, as an audit record's "time": UTC with milliseconds. */
static void audit_time(char ts[static 40])
{
        struct timespec now;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &now);
        gmtime_r(&now.tv_sec, &tm);
        size_t tl = strftime(ts, 40, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(ts + tl, 40 - tl, ".%03ldZ", now.tv_nsec / 1000000);
}

/* Writes one whole line under the lock (lines never interleave). */
static void audit_write(struct net_gate *g, const char *line, size_t n)
{
        pthread_mutex_lock(&g->audit_lock);
        (void)write_all(g->audit_fd, line, n);
        pthread_mutex_unlock(&g->audit_lock);
}

/* Whether a record may be written (see net_audit in net-internal.h). A
 * refusal after the close takes no kept-back record: the sandbox could
 * otherwise spend them on refused connects and push out the allowed
 * records of connections the gate let through just before it closed. */
static bool audit_take(struct net_gate *g, bool allowed)
{
        if (!allowed && atomic_load(&g->audit_closed))
                return false;
        uint64_t n = atomic_fetch_add(&g->records, 1);
        /* a log that bounds itself closes the gate when it is full (a
         * sandbox's events: net_gate_audit_full), and keeps its own room
         * for the allowed records of connections under way then */
        if (g->audit_log_bounded || n < NET_AUDIT_MAX_RECORDS - NET_AUDIT_KEPT)
                return true;
        if (!atomic_exchange(&g->audit_closed, true)) {
                char ts[40], line[512];
                audit_time(ts);
                size_t size = sizeof(line) - 2;
                size_t o = (size_t)snprintf(line, size, "{\"time\":\"%s\",\"sandbox\":", ts);
                o = json_str(line, size, o, g->sandbox_id);
                o += (size_t)snprintf(line + (o < size ? o : size), o < size ? size - o : 0,
                                      ",\"decision\":\"note\",\"reason\":\"audit_full\",\"records\":%u,"
                                      "\"note\":\"the audit log is full: new connections are refused\"}",
                                      (unsigned)(NET_AUDIT_MAX_RECORDS - NET_AUDIT_KEPT));
                if (o < size) {
                        line[o++] = '\n';
                        audit_write(g, line, o);
                }
        }
        return allowed && n < NET_AUDIT_MAX_RECORDS;
}

void net_gate_audit_full(struct net_gate *g)
{
        if (g)
                atomic_store(&g->audit_closed, true);
}

bool net_gate_audit_closed(struct net_gate *g)
{
        return atomic_load(&g->audit_closed);
}

void net_audit(struct net_gate *g, unsigned pid, const char *syscall, const char *destination, const char *host,
               const char *resolved, bool allowed, enum net_reason reason)
{
        if (reason < REASON_COUNT)
                atomic_fetch_add(&g->counts[reason], 1);
        if (g->audit_fd < 0 || !audit_take(g, allowed))
                return;

        char ts[40];
        audit_time(ts);

        char line[2048];
        size_t o = 0, size = sizeof(line) - 2;
        o += (size_t)snprintf(line, size, "{\"time\":\"%s\",\"sandbox\":", ts);
        o = json_str(line, size, o, g->sandbox_id);
        o += (size_t)snprintf(line + (o < size ? o : size), o < size ? size - o : 0, ",\"pid\":%u,\"syscall\":", pid);
        o = json_str(line, size, o, syscall);
        o += (size_t)snprintf(line + (o < size ? o : size), o < size ? size - o : 0, ",\"destination\":");
        o = json_str(line, size, o, destination);
        o += (size_t)snprintf(line + (o < size ? o : size), o < size ? size - o : 0, ",\"host\":");
        o = json_str(line, size, o, host);
        o += (size_t)snprintf(line + (o < size ? o : size), o < size ? size - o : 0, ",\"resolved\":");
        o = json_str(line, size, o, resolved);
        o += (size_t)snprintf(line + (o < size ? o : size), o < size ? size - o : 0,
                              ",\"decision\":\"%s\",\"reason\":\"%s\"}", allowed ? "allow" : "deny",
                              net_reason_name(reason));
        if (o >= size)
                return; /* cannot happen with bounded fields; never write a broken line */
        line[o++] = '\n';
        audit_write(g, line, o);
}

void net_audit_kv(struct net_gate *g, unsigned pid, const char *host, bool allowed, enum net_reason reason,
                  const char *const *kv, size_t n)
{
        if (reason < REASON_COUNT)
                atomic_fetch_add(&g->counts[reason], 1);
        if (g->audit_fd < 0 || !audit_take(g, allowed))
                return;
        char ts[40];
        audit_time(ts);
        char line[4096];
        size_t size = sizeof(line) - 2;
        size_t o = (size_t)snprintf(line, size, "{\"time\":\"%s\",\"sandbox\":", ts);
        o = json_str(line, size, o, g->sandbox_id);
        o += (size_t)snprintf(line + (o < size ? o : size), o < size ? size - o : 0, ",\"pid\":%u,\"host\":", pid);
        o = json_str(line, size, o, host);
        for (size_t i = 0; i < n; i++) {
                o += (size_t)snprintf(line + (o < size ? o : size), o < size ? size - o : 0, ",\"%s\":", kv[2 * i]);
                o = json_str(line, size, o, kv[2 * i + 1]);
        }
        o += (size_t)snprintf(line + (o < size ? o : size), o < size ? size - o : 0,
                              ",\"decision\":\"%s\",\"reason\":\"%s\"}", allowed ? "allow" : "deny",
                              net_reason_name(reason));
        if (o >= size)
                return;
        line[o++] = '\n';
        audit_write(g, line, o);
}

void net_format_sockaddr(const struct sockaddr *sa, size_t len, char *buf, size_t size)
{
        char a[INET6_ADDRSTRLEN];
        if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
                const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
                inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
                snprintf(buf, size, "%s:%u", a, ntohs(in->sin_port));
        } else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
                inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
                snprintf(buf, size, "[%s]:%u", a, ntohs(in6->sin6_port));
        } else
                snprintf(buf, size, "family %u", sa->sa_family);
}
