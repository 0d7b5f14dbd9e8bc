/* Events of long-lived sandboxes: what may be written, and the writing of
 * the event log (events.jsonl, the serve loop's alone). Every event is
 * bounded (nesting depth, string length, items per object or array; what is
 * cut is marked, never dropped silently) and the values of fields named like
 * credentials (token, secret, password, authorization, cookie, ...) are
 * masked at any depth, before anything reaches the events file; each line
 * is bounded, and so is the file, where output and audit records have only
 * a share each. */
#include "config.h"

#include <jansson.h>
#include <time.h>

#include "sentry/sandbox/sandbox-internal.h"

#define EVENT_MAX  (64 * 1024)  /* one event line */
#define EVENTS_MAX (64LL << 20) /* the events file; beyond, events are counted, not written */

/* What the sandboxed code can make in bulk has only a share of the file, so
 * that printing (or trying connections) first cannot leave no room for the
 * record of what it does next: output lines stop at 48 MiB, the egress
 * gate's audit records at 60 MiB, and the rest (runs started and ended,
 * approvals, transfers, the sandbox's end) has the last 4 MiB to itself.
 * Each class that reaches its share says so once, with an event.
 *
 * Egress that cannot be recorded must not happen: when the audit share is
 * used up, its event (audit_limit, "egressRefused": true) is written and
 * serve.c closes the gate, which refuses every new connection from then on
 * (net_gate_audit_full). The allowed records of connections the gate let
 * through before it heard of it (a connect in progress per thread, and
 * what the audit pipe holds: a few hundred KiB at most) are still written,
 * from the room above the share kept back for them (up to AUDIT_KEPT below
 * the file's end); refusals after the close are counted only. */
enum event_class { EVENT_CLASS_OUTPUT, EVENT_CLASS_AUDIT, EVENT_CLASS_RECORD };

static enum event_class event_class(const char *type)
{
        if (streq(type, "output") || streq(type, "output_truncated"))
                return EVENT_CLASS_OUTPUT;
        if (streq(type, "audit"))
                return EVENT_CLASS_AUDIT;
        return EVENT_CLASS_RECORD;
}

#define AUDIT_KEPT (2LL << 20) /* the file's last bytes the audit share's overflow never takes */

static const struct {
        int64_t max;
        const char *marker;
} event_shares[] = {
        [EVENT_CLASS_OUTPUT] = {48LL << 20, "output_limit"},
        [EVENT_CLASS_AUDIT] = {60LL << 20, "audit_limit"},
        [EVENT_CLASS_RECORD] = {EVENTS_MAX, "events_limit"},
};

/* A field named like a credential: its value is never written. */
bool event_secret_key(const char *k)
{
        static const char *const words[] = {"token",  "secret",     "password", "passwd",  "authorization",
                                            "cookie", "credential", "apikey",   "api_key", "private_key"};
        char low[128];
        size_t n = strlen(k);
        if (n >= sizeof(low))
                n = sizeof(low) - 1;
        for (size_t i = 0; i < n; i++)
                low[i] = (char)(k[i] >= 'A' && k[i] <= 'Z' ? k[i] + 32 : k[i]);
        low[n] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (strstr(low, words[i]))
                        return true;
        return false;
}

/* A copy of v that is bounded (depth, string length, items; what is cut
 * says so) and has credential-like fields masked, recursively. */
static json_t *sanitize(json_t *v, int depth)
{
        if (depth > EVENT_MAX_DEPTH)
                return json_string("[cordon: truncated, nested too deep]");
        if (json_is_string(v) && json_string_length(v) > EVENT_MAX_STRING) {
                size_t len = json_string_length(v);
                char *t = xasprintf("%.*s[cordon: truncated, %zu more bytes]", EVENT_MAX_STRING, json_string_value(v),
                                    len - EVENT_MAX_STRING);
                /* the cut may fall inside a UTF-8 sequence */
                json_t *r = json_text(t, strlen(t));
                free(t);
                return r;
        }
        if (json_is_object(v)) {
                json_t *o = json_object();
                const char *k;
                json_t *e;
                size_t n = 0;
                json_object_foreach(v, k, e)
                {
                        if (n++ == EVENT_MAX_ITEMS) {
                                json_object_set_new(o, "cordonTruncated", json_true());
                                break;
                        }
                        json_object_set_new(o, k, event_secret_key(k) ? json_string("***") : sanitize(e, depth + 1));
                }
                return o;
        }
        if (json_is_array(v)) {
                json_t *a = json_array();
                size_t i;
                json_t *e;
                json_array_foreach(v, i, e)
                {
                        if (i == EVENT_MAX_ITEMS) {
                                json_array_append_new(a, json_string("[cordon: truncated]"));
                                break;
                        }
                        json_array_append_new(a, sanitize(e, depth + 1));
                }
                return a;
        }
        return json_incref(v);
}

json_t *event_sanitize(json_t *v)
{
        return sanitize(v, 0);
}

void event_iso_time(time_t t, char buf[32])
{
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The audit share: 60 MiB, or less for a test (CORDON_TEST_AUDIT_SHARE,
 * bytes; it can only make the share smaller, so the gate closes sooner). */
static int64_t audit_share(void)
{
        static int64_t share;
        if (!share) {
                const char *t = getenv("CORDON_TEST_AUDIT_SHARE");
                long long v = t ? strtoll(t, NULL, 10) : 0;
                share = v > 0 && v < event_shares[EVENT_CLASS_AUDIT].max ? v : event_shares[EVENT_CLASS_AUDIT].max;
        }
        return share;
}

/* An audit event (on_audit's {"record": ...}) recording a connection the
 * gate let through (not a name the DNS stub answered from the pool, which
 * sends nothing out). */
static bool audit_allowed(json_t *ev)
{
        json_t *rec = json_object_get(ev, "record");
        const char *d = json_string_value(json_object_get(rec, "decision"));
        const char *sc = json_string_value(json_object_get(rec, "syscall"));
        return d && streq(d, "allow") && !(sc && streq(sc, "dns"));
}

/* Writes line (json_dumps's, its NUL replaced by the newline; freed) as
 * the next event: the sequence number and the file's size move on only
 * once it is written. last: the file's own marker, after which every
 * share counts as used up. */
static void write_line(struct serve *srv, char *line, bool last)
{
        size_t len = strlen(line);
        line[len] = '\n';
        if (write_all(srv->events_fd, line, len + 1) == 0) {
                srv->seq++;
                srv->events_bytes = last ? EVENTS_MAX : srv->events_bytes + (int64_t)len + 1;
                srv->events_dirty = true;
        }
        free(line);
}

/* Appends an event (steals ev) with the next sequence number, synced. */
void event_append(struct serve *srv, const char *type, json_t *ev)
{
        json_t *clean = ev ? event_sanitize(ev) : json_object();
        json_decref(ev);
        ev = clean;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        char t[32], when[48];
        event_iso_time(ts.tv_sec, t);
        snprintf(when, sizeof(when), "%.19s.%03ldZ", t, ts.tv_nsec / 1000000);
        enum event_class class = event_class(type);
        int64_t max = class == EVENT_CLASS_AUDIT ? audit_share() : event_shares[class].max;
        bool allowed = class == EVENT_CLASS_AUDIT && audit_allowed(ev);
        if (class == EVENT_CLASS_AUDIT && srv->audit_full && !(srv->events_capped & (1u << class))) {
                /* after the close: only what the gate let through before it */
                if (!allowed) {
                        srv->events_dropped++;
                        json_decref(ev);
                        return;
                }
                max = EVENTS_MAX - AUDIT_KEPT;
        }
        if (srv->events_capped & (1u << class)) {
                /* its share is used up, and that was said (below): counted */
                srv->events_dropped++;
                json_decref(ev);
                return;
        }
        json_object_set_new(ev, "seq", json_integer(srv->seq + 1));
        json_object_set_new(ev, "time", json_string(when));
        json_object_set_new(ev, "type", json_string(type));
        char *line = json_dumps(ev, JSON_COMPACT | JSON_SORT_KEYS);
        if (line && strlen(line) > EVENT_MAX) {
                /* too big even after the bounds: its kind survives, marked */
                free(line);
                json_t *small = json_pack("{s:I, s:s, s:s, s:b}", "seq", (json_int_t)srv->seq + 1, "time", when, "type",
                                          type, "truncated", 1);
                line = json_dumps(small, JSON_COMPACT | JSON_SORT_KEYS);
                json_decref(small);
        }
        if (!line) {
                json_decref(ev);
                return; /* out of memory: no sequence number was used */
        }
        size_t len = strlen(line);
        bool last = false;
        if (class == EVENT_CLASS_AUDIT && !srv->audit_full && srv->events_bytes + (int64_t)len + 1 > max) {
                /* the audit share is used up: said once, then the gate is
                 * closed (serve.c); this record, if the gate let its
                 * connection through, still goes in, above the share */
                srv->audit_full = true;
                json_t *full = json_pack("{s:I, s:s, s:s, s:I, s:b, s:s}", "seq", (json_int_t)srv->seq + 1, "time",
                                         when, "type", event_shares[class].marker, "limit", (json_int_t)max,
                                         "egressRefused", 1, "message",
                                         "the audit share of the events file is used up: new outbound connections "
                                         "are refused (EACCES), as egress that cannot be recorded must not happen");
                char *m = json_dumps(full, JSON_COMPACT | JSON_SORT_KEYS);
                json_decref(full);
                if (m)
                        write_line(srv, m, false);
                free(line);
                if (!allowed) {
                        json_decref(ev);
                        srv->events_dropped++;
                        return;
                }
                /* again, after the close, with the next sequence number */
                json_object_del(ev, "seq");
                json_object_del(ev, "time");
                json_object_del(ev, "type");
                event_append(srv, type, ev);
                return;
        }
        json_decref(ev);
        if (srv->events_bytes + (int64_t)len + 1 > max) {
                free(line);
                srv->events_dropped++;
                srv->events_capped |= 1u << class;
                json_t *full = json_pack("{s:I, s:s, s:s, s:I}", "seq", (json_int_t)srv->seq + 1, "time", when, "type",
                                         event_shares[class].marker, "limit", (json_int_t)max);
                line = json_dumps(full, JSON_COMPACT | JSON_SORT_KEYS);
                json_decref(full);
                if (!line)
                        return;
                /* the smaller shares' markers fit in the room left above
                 * them; the file's own is its last line: every class is
                 * used up with it */
                last = class == EVENT_CLASS_RECORD;
                if (last)
                        srv->events_capped = ~0u;
        }
        write_line(srv, line, last);
}

/* Each event is written (so a crash of the sentry loses at most the one
 * being written) as it happens; the disk sync is once per turn of the
 * serve loop, not once per line, or a chatty run would make the sentry
 * wait on the disk for every line it prints. */
void event_sync(struct serve *srv)
{
        if (srv->events_dirty) {
                if (srv->state_durable)
                        (void)fdatasync(srv->events_fd);
                srv->events_dirty = false;
        }
}
