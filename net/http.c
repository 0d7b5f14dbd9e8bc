/* The credential broker's HTTP/1.1 (DESIGN.md, "Credentials"): the
 * requests of a terminated connection, read with Debian's http-parser (a
 * streaming parser that keeps Content-Length and chunked framing strict,
 * refusing both together, a repeated length and a Transfer-Encoding that
 * does not end in chunked), decided one by one, and written upstream as
 * the broker read them: the head rebuilt from the parsed fields, the body
 * re-framed from the parsed bytes, so the server sees exactly what was
 * decided. The grant's placeholder becomes the secret only in the grant's
 * header of a request whose host, method, path and time all match; any
 * other request that carries it is answered here, 403 egress_blocked, after
 * the responses to the requests before it. Responses go back unchanged but
 * for the secret's bytes, which become the placeholder's (same length: the
 * framing stays right); their status lines are read to audit each use. */
#include "config.h"

#include <http_parser.h>
#include <poll.h>

#include "common/util.h"
#include "net/net-internal.h"

#define HEAD_MAX      32768 /* a request's URL and headers */
#define HEADERS_MAX   128
#define PIPELINE_MAX  64     /* requests awaiting their responses */
#define IDLE_MS       120000 /* a connection with no traffic either way ends */
#define SCAN_FLUSH_MS 200    /* bytes held back as a possible start of the secret */
#define READ_BUF      65536  /* what one turn reads of a side: four full records */
/* response bytes held back: a secret's start, and the chunk lines a split
 * one may have between its parts */
#define CARRY_MAX (NET_SECRET_MAX + 4096)
#define HOLD_MAX  65536 /* a body's bytes seen before its head carries the secret upstream */

struct hdr {
        size_t name, name_len, value, value_len; /* offsets into head */
};

struct pending {
        bool head; /* a HEAD request: its response has no body */
        bool cred; /* the secret went into it */
        char method[16];
        char path[256];
};

struct session {
        struct net_relay *r;
        struct broker_grant *bg;
        struct net_broker *b;
        void *c, *u;

        http_parser req;
        http_parser_settings req_set;
        char head[HEAD_MAX];
        size_t head_len;
        size_t url, url_len;
        struct hdr h[HEADERS_MAX];
        size_t n_h;
        bool in_value, too_large, chunked, failed;
        char tail[64]; /* the body's last bytes, so a placeholder split between reads is seen */
        size_t tail_len;
        enum net_reason refuse; /* REASON_ALLOWED: none */
        int refuse_status;
        char method[16], path[256];

        struct pending fifo[PIPELINE_MAX];
        size_t fifo_n;
        http_parser resp;
        http_parser_settings resp_set;
        bool resp_broken;

        char *carry; /* response bytes held back (a possible start of a secret) */
        size_t carry_len;
        char *scratch; /* carry and a read: CARRY_MAX + READ_BUF bytes */
        /* A chunked body's data as the client will read it, without the
         * chunk lines between: the spans of the read being scanned (its
         * offsets, from the parser's on_body), and where in carry lie the
         * held data bytes that could begin a secret a chunk line splits. */
        struct span {
                size_t off, len;
        } * spans, *lsegs;
        size_t n_spans, cap_spans, n_lsegs, cap_lsegs;
        const char *resp_cur, *resp_cur_end; /* the read parse_response parses */

        /* the read being parsed, and where the parser's last data callback
         * ended in it: an ask grant shows a person the body's first bytes */
        const char *cur, *cur_end, *last_at;

        /* A request the secret goes into, while its body's first HOLD_MAX
         * bytes are read: what would go upstream is held here, so that a
         * placeholder in them is refused before anything is sent (past
         * them, the body streams and a placeholder cuts the connection). */
        bool holding;
        char *held;
        size_t held_len, held_cap, held_head;
        struct pending held_q;

        /* What goes upstream, in whole records: a piece too small for
         * one (a head, a chunk line) waits here for what follows it, and
         * what is staged leaves at the end of each read's parse (up_flush).
         * A chunked body went as three writes and two tiny records per
         * chunk (line, data, CRLF). */
        char *stage;
        size_t staged;

        /* offline (the fuzz target): what would go upstream, collected */
        bool offline;
        char *sink;
        size_t sink_len, sink_cap;
        size_t creds; /* requests the secret went into */
};

static void out_add(char **buf, size_t *len, size_t *cap, const char *d, size_t n);

#define RECORD 16384 /* a TLS record's most plaintext */

/* Writes the stage's record upstream and wipes it (a head with the secret
 * passes through it). */
static int stage_out(struct session *s)
{
        int r = s->staged ? net_ssl_write(s->r, s->u, s->r->upstream, s->stage, s->staged) : 0;
        if (s->stage) /* none yet before the first write upstream */
                explicit_bzero(s->stage, s->staged);
        s->staged = 0;
        return r;
}

/* Upstream in whole records: whole ones straight from buf, the rest
 * through the stage. */
static int up_write(struct session *s, const char *buf, size_t n)
{
        if (!s->stage)
                s->stage = xmalloc(RECORD);
        while (n > 0) {
                if (s->staged == 0 && n >= RECORD) {
                        size_t k = n - n % RECORD;
                        int r = net_ssl_write(s->r, s->u, s->r->upstream, buf, k);
                        if (r < 0)
                                return r;
                        buf += k;
                        n -= k;
                        continue;
                }
                size_t k = n < RECORD - s->staged ? n : RECORD - s->staged;
                memcpy(s->stage + s->staged, buf, k);
                s->staged += k;
                buf += k;
                n -= k;
                if (s->staged == RECORD) {
                        int r = stage_out(s);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* What up_write has, out to the upstream's socket. */
static int up_flush(struct session *s)
{
        if (s->offline || !s->u)
                return 0;
        int r = stage_out(s);
        return r < 0 ? r : net_ssl_flush(s->r, s->u, s->r->upstream);
}

/* What goes upstream: held (see holding), through TLS, or (offline) into
 * the sink. */
static int send_up(struct session *s, const void *buf, size_t n)
{
        if (s->holding) {
                out_add(&s->held, &s->held_len, &s->held_cap, buf, n);
                return 0;
        }
        if (s->offline) {
                out_add(&s->sink, &s->sink_len, &s->sink_cap, buf, n);
                return 0;
        }
        return up_write(s, buf, n);
}

static bool eq_ci(const char *a, size_t an, const char *b)
{
        return an == strlen(b) && strncasecmp(a, b, an) == 0;
}

static bool append(struct session *s, const char *at, size_t len)
{
        if (s->head_len + len > sizeof(s->head)) {
                s->too_large = true;
                return false;
        }
        memcpy(s->head + s->head_len, at, len);
        s->head_len += len;
        return true;
}

static int on_message_begin(http_parser *p)
{
        struct session *s = p->data;
        s->head_len = s->url = s->url_len = s->n_h = s->tail_len = 0;
        s->in_value = s->too_large = s->chunked = false;
        return 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
        struct session *s = p->data;
        if (s->url_len == 0)
                s->url = s->head_len;
        s->url_len += len;
        s->last_at = at + len;
        return append(s, at, len) ? 0 : -1;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
        struct session *s = p->data;
        if (s->in_value || s->n_h == 0) {
                if (s->n_h == HEADERS_MAX) {
                        s->too_large = true;
                        return -1;
                }
                s->h[s->n_h++] = (struct hdr){.name = s->head_len};
                s->in_value = false;
        }
        s->h[s->n_h - 1].name_len += len;
        s->last_at = at + len;
        return append(s, at, len) ? 0 : -1;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
        struct session *s = p->data;
        struct hdr *h = &s->h[s->n_h - 1];
        if (!s->in_value) {
                h->value = s->head_len;
                s->in_value = true;
        }
        h->value_len += len;
        s->last_at = at + len;
        return append(s, at, len) ? 0 : -1;
}

/* RFC 9110's token: what a header's name is made of */
static bool is_token(const char *s, size_t n)
{
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
                if (!alnum && (c == '\0' || !strchr("!#$%&'*+-.^_`|~", c)))
                        return false;
        }
        return true;
}

static bool contains(const char *hay, size_t n, const char *needle)
{
        return memmem(hay, n, needle, strlen(needle)) != NULL;
}

/* The request's path is under the grant's prefix, with nothing that a
 * server could read as leaving it: no dot segments (";" parameters
 * included), no encoded dot, slash or backslash. */
static bool path_ok(const char *path, size_t n, const char *prefix)
{
        size_t pl = strlen(prefix);
        if (n < pl || memcmp(path, prefix, pl) != 0)
                return false;
        for (size_t i = 0; i < n; i++) {
                if (path[i] == '\\')
                        return false;
                if (path[i] == '%' && i + 2 < n &&
                    (strncasecmp(path + i, "%2e", 3) == 0 || strncasecmp(path + i, "%2f", 3) == 0 ||
                     strncasecmp(path + i, "%5c", 3) == 0))
                        return false;
                /* a "." or ".." segment, also where a ";" parameter ends it
                 * (servers that drop path parameters read "..;" as "..") */
                if (path[i] == '.' && (i == 0 || path[i - 1] == '/') &&
                    (i + 1 == n || path[i + 1] == '/' || path[i + 1] == ';' ||
                     (path[i + 1] == '.' && (i + 2 == n || path[i + 2] == '/' || path[i + 2] == ';'))))
                        return false;
        }
        return true;
}

static int refuse(struct session *s, http_parser *p, enum net_reason why, int status)
{
        s->refuse = why;
        s->refuse_status = status;
        http_parser_pause(p, 1);
        return 0;
}

/* The value a grant's header must have to be swapped: its format with the
 * placeholder for {}. */
static bool is_grant_value(const struct broker_grant *bg, const char *v, size_t n)
{
        const char *brace = strstr(bg->g.format, "{}");
        size_t pre = (size_t)(brace - bg->g.format), post = strlen(brace + 2), ph = strlen(bg->placeholder);
        return n == pre + ph + post && memcmp(v, bg->g.format, pre) == 0 && memcmp(v + pre, bg->placeholder, ph) == 0 &&
               memcmp(v + pre + ph, brace + 2, post) == 0;
}

static void out_add(char **buf, size_t *len, size_t *cap, const char *d, size_t n)
{
        if (n == 0)
                return;
        if (*len + n > *cap) {
                *cap = (*len + n) * 2;
                *buf = xrealloc(*buf, *cap);
        }
        memcpy(*buf + *len, d, n);
        *len += n;
}

/* A request sent upstream: counted, and (with a connection) queued for
 * its response. */
static void commit_request(struct session *s, const struct pending *q)
{
        s->creds += q->cred;
        if (s->offline) /* no responses come: nothing waits for one */
                return;
        s->fifo[s->fifo_n++] = *q;
}

/* Sends what was held, and stops holding. */
static int release_held(struct session *s)
{
        if (!s->holding)
                return 0;
        s->holding = false;
        int r = send_up(s, s->held, s->held_len);
        explicit_bzero(s->held, s->held_len);
        s->held_len = 0;
        if (r < 0)
                return r;
        commit_request(s, &s->held_q);
        return 0;
}

/* Drops what was held: nothing of it went upstream. */
static void drop_held(struct session *s)
{
        if (s->held)
                explicit_bzero(s->held, s->held_len);
        s->held_len = 0;
        s->holding = false;
}

/* The first bytes of a request's body as the client sent them (chunked:
 * with the chunk lines), for a person deciding an ask grant's request:
 * those that came in the same read as the head, else those the client
 * sends within a moment (left unread). Never waits for more than that. */
static size_t body_first_bytes(struct session *s, const http_parser *p, uint8_t *out, size_t size)
{
        bool chunked = p->flags & F_CHUNKED;
        if (!chunked && (p->content_length == 0 || p->content_length == UINT64_MAX))
                return 0;
        if (!chunked && p->content_length < size)
                size = (size_t)p->content_length;
        uintptr_t at = (uintptr_t)s->last_at, lo = (uintptr_t)s->cur, hi = (uintptr_t)s->cur_end;
        if (s->last_at && at >= lo && at <= hi) {
                const char *end = memmem(s->last_at, (size_t)(hi - at), "\r\n\r\n", 4);
                if (end) {
                        size_t n = (size_t)(s->cur_end - (end + 4));
                        n = n < size ? n : size;
                        memcpy(out, end + 4, n);
                        if (n > 0)
                                return n;
                }
        }
        if (!s->c)
                return 0;
        if (!net_ssl_pending(s->c)) {
                struct pollfd pf = {.fd = s->r->child, .events = POLLIN};
                if (poll(&pf, 1, 200) <= 0)
                        return 0;
        }
        ssize_t k = net_ssl_peek(s->c, out, size);
        return k > 0 ? (size_t)k : 0;
}

static int on_headers_complete(http_parser *p)
{
        struct session *s = p->data;
        const struct broker_grant *bg = s->bg;
        const char *host = bg->g.host;
        s->in_value = false;
        snprintf(s->method, sizeof(s->method), "%s", http_method_str(p->method));
        const char *url = s->head + s->url;
        struct http_parser_url pu;
        http_parser_url_init(&pu);
        s->path[0] = '\0';
        if (http_parser_parse_url(url, s->url_len, 0, &pu) != 0)
                return refuse(s, p, REASON_HTTP_REFUSED, 400);
        const char *path = pu.field_set & (1 << UF_PATH) ? url + pu.field_data[UF_PATH].off : "/";
        size_t path_len = pu.field_set & (1 << UF_PATH) ? pu.field_data[UF_PATH].len : 1;
        snprintf(s->path, sizeof(s->path), "%.*s", (int)(path_len < 255 ? path_len : 255), path);
        if (p->method == HTTP_CONNECT || p->upgrade)
                return refuse(s, p, REASON_HTTP_REFUSED, 403);
        if (s->fifo_n == PIPELINE_MAX)
                return refuse(s, p, REASON_HTTP_REFUSED, 429);

        /* HTTP/1.x only: http-parser takes a request line without a
         * version as HTTP/0.9, whose server reads no headers at all */
        if (p->http_major != 1)
                return refuse(s, p, REASON_HTTP_REFUSED, 400);

        /* the host it names: the Host header (once), and an absolute URL's */
        size_t n_host = 0, n_te = 0, n_cl = 0, n_grant = 0;
        bool host_ok = true, te_ok = true, expect = false;
        for (size_t i = 0; i < s->n_h; i++) {
                const struct hdr *h = &s->h[i];
                const char *name = s->head + h->name, *v = s->head + h->value;
                /* a name that is not a token ("Transfer-Encoding :") is one
                 * http-parser may still act on while the checks below do
                 * not see it, and a server may read either way */
                if (!is_token(name, h->name_len))
                        return refuse(s, p, REASON_HTTP_REFUSED, 400);
                if (eq_ci(name, h->name_len, "host")) {
                        n_host++;
                        size_t hl = strlen(host);
                        host_ok = host_ok && ((h->value_len == hl && strncasecmp(v, host, hl) == 0) ||
                                              (h->value_len == hl + 4 && strncasecmp(v, host, hl) == 0 &&
                                               memcmp(v + hl, ":443", 4) == 0));
                } else if (eq_ci(name, h->name_len, "transfer-encoding")) {
                        n_te++;
                        te_ok = te_ok && eq_ci(v, h->value_len, "chunked");
                } else if (eq_ci(name, h->name_len, "content-length")) {
                        n_cl++;
                } else if (eq_ci(name, h->name_len, "expect")) {
                        expect = true;
                } else if (eq_ci(name, h->name_len, "upgrade")) {
                        return refuse(s, p, REASON_HTTP_REFUSED, 403);
                }
        }
        if (pu.field_set & (1 << UF_HOST))
                host_ok = host_ok && eq_ci(url + pu.field_data[UF_HOST].off, pu.field_data[UF_HOST].len, host);
        /* framing the broker and the server could read differently is refused */
        if (n_te > 1 || n_cl > 1 || (n_te && n_cl) || !te_ok)
                return refuse(s, p, REASON_HTTP_REFUSED, 400);
        s->chunked = n_te == 1;
        /* the body is re-framed as the broker reads the headers and sent as
         * http-parser reads it: the two must agree */
        if (s->chunked != ((p->flags & F_CHUNKED) != 0))
                return refuse(s, p, REASON_HTTP_REFUSED, 400);

        /* every grant's placeholder: only this grant's, only in its header */
        for (size_t k = 0; k < s->b->n; k++) {
                const struct broker_grant *o = &s->b->grants[k];
                bool in_url = contains(url, s->url_len, o->placeholder);
                for (size_t i = 0; i < s->n_h; i++) {
                        const struct hdr *h = &s->h[i];
                        bool in_name = contains(s->head + h->name, h->name_len, o->placeholder);
                        bool in_value = contains(s->head + h->value, h->value_len, o->placeholder);
                        if (!in_name && !in_value)
                                continue;
                        if (o != bg)
                                return refuse(s, p, REASON_CRED_TARGET_MISMATCH, 403);
                        if (in_name || !eq_ci(s->head + h->name, h->name_len, bg->g.header) ||
                            !is_grant_value(bg, s->head + h->value, h->value_len) || ++n_grant > 1)
                                return refuse(s, p, REASON_CRED_MISUSE, 403);
                }
                if (in_url)
                        return refuse(s, p, o == bg ? REASON_CRED_MISUSE : REASON_CRED_TARGET_MISMATCH, 403);
        }
        if (n_host != 1 || !host_ok)
                return refuse(s, p, n_grant ? REASON_CRED_TARGET_MISMATCH : REASON_SNI_MISMATCH, 403);
        bool cred = n_grant == 1;
        if (cred) {
                /* fail closed: a use of the secret the audit log could not
                 * record is refused (a connection made before the log
                 * filled up goes on, but carries no secret unrecorded) */
                if (!s->offline && atomic_load(&s->r->g->audit_closed)) /* offline: no gate */
                        return refuse(s, p, REASON_AUDIT_FULL, 403);
                /* the grant's header once: with two, which one a server
                 * reads is its choice, not the grant's */
                size_t n_named = 0;
                for (size_t i = 0; i < s->n_h; i++)
                        n_named += eq_ci(s->head + s->h[i].name, s->h[i].name_len, bg->g.header);
                if (n_named != 1)
                        return refuse(s, p, REASON_CRED_MISUSE, 403);
                bool method_ok = bg->g.n_methods == 0;
                for (size_t i = 0; i < bg->g.n_methods; i++)
                        method_ok = method_ok || streq(bg->g.methods[i], s->method);
                if (!method_ok)
                        return refuse(s, p, REASON_CRED_METHOD_MISMATCH, 403);
                if (!path_ok(path, path_len, bg->g.path_prefix))
                        return refuse(s, p, REASON_CRED_PATH_MISMATCH, 403);
                if (bg->g.expires_at != (time_t)-1 && time(NULL) >= bg->g.expires_at)
                        return refuse(s, p, REASON_CRED_EXPIRED, 403);
                if (bg->g.ask) {
                        /* a person decides this very request (its grant,
                         * method and target; its first bytes shown), after
                         * every other check passed; refused unless approved.
                         * The thread waits: only this connection does. */
                        /* what the requests before it sent goes now, not
                         * after a person's answer */
                        if (up_flush(s) < 0) {
                                s->failed = true;
                                http_parser_pause(p, 1);
                                return 0;
                        }
                        uint8_t first[NOTIFY_ASK_BYTES_MAX];
                        size_t n_first = body_first_bytes(s, p, first, sizeof(first));
                        enum net_reason a = net_broker_ask(s->r, bg, s->method, url, s->url_len, first, n_first);
                        if (a != REASON_ALLOWED)
                                return refuse(s, p, a, 403);
                        /* the answer may have come late: the grant's own
                         * expiry still holds */
                        if (bg->g.expires_at != (time_t)-1 && time(NULL) >= bg->g.expires_at)
                                return refuse(s, p, REASON_CRED_EXPIRED, 403);
                }
        }

        /* the head as decided: request line, the headers (the grant's with
         * the secret; Accept-Encoding asks for identity, so the response
         * scan sees the secret's bytes as they are), end */
        size_t cap = s->head_len + 256 + (cred ? s->bg->secret_len : 0), len = 0;
        char *out = xmalloc(cap), line[64];
        out_add(&out, &len, &cap, s->method, strlen(s->method));
        out_add(&out, &len, &cap, " ", 1);
        out_add(&out, &len, &cap, url, s->url_len);
        int ln = snprintf(line, sizeof(line), " HTTP/%d.%d\r\n", p->http_major, p->http_minor);
        out_add(&out, &len, &cap, line, (size_t)ln);
        for (size_t i = 0; i < s->n_h; i++) {
                const struct hdr *h = &s->h[i];
                const char *name = s->head + h->name;
                out_add(&out, &len, &cap, name, h->name_len);
                out_add(&out, &len, &cap, ": ", 2);
                if (eq_ci(name, h->name_len, "accept-encoding")) {
                        out_add(&out, &len, &cap, "identity", 8);
                } else if (cred && eq_ci(name, h->name_len, bg->g.header)) {
                        const char *brace = strstr(bg->g.format, "{}");
                        out_add(&out, &len, &cap, bg->g.format, (size_t)(brace - bg->g.format));
                        out_add(&out, &len, &cap, bg->secret, bg->secret_len);
                        out_add(&out, &len, &cap, brace + 2, strlen(brace + 2));
                } else {
                        out_add(&out, &len, &cap, s->head + h->value, h->value_len);
                }
                out_add(&out, &len, &cap, "\r\n", 2);
        }
        out_add(&out, &len, &cap, "\r\n", 2);
        struct pending q = {.head = p->method == HTTP_HEAD, .cred = cred};
        snprintf(q.method, sizeof(q.method), "%s", s->method);
        snprintf(q.path, sizeof(q.path), "%s", s->path);
        /* with the secret in it and a body to come, held until the body's
         * first bytes are seen; not when the client waits for a 100
         * Continue before it sends the body (the head must go for that) */
        bool body = (p->flags & F_CHUNKED) || (p->content_length > 0 && p->content_length != UINT64_MAX);
        if (cred && body && !expect) {
                s->holding = true;
                s->held_len = 0;
                s->held_q = q;
        }
        int r = send_up(s, out, len);
        s->held_head = s->held_len;
        explicit_bzero(out, len);
        free(out);
        if (r < 0) {
                s->failed = true;
                http_parser_pause(p, 1);
                return 0;
        }
        if (!s->holding)
                commit_request(s, &q);
        return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
        struct session *s = p->data;
        /* the new bytes, and the seam with the bytes before them */
        char seam[2 * sizeof(s->tail)];
        size_t head = len < sizeof(s->tail) ? len : sizeof(s->tail);
        memcpy(seam, s->tail, s->tail_len);
        memcpy(seam + s->tail_len, at, head);
        size_t seam_len = s->tail_len + head;
        if (len >= sizeof(s->tail)) {
                memcpy(s->tail, at + len - sizeof(s->tail), sizeof(s->tail));
                s->tail_len = sizeof(s->tail);
        } else {
                size_t keep = seam_len < sizeof(s->tail) ? seam_len : sizeof(s->tail);
                memmove(s->tail, seam + seam_len - keep, keep);
                s->tail_len = keep;
        }
        for (size_t k = 0; k < s->b->n; k++)
                if (net_scan_find(s->b->grants[k].ph_scan, at, len) ||
                    net_scan_find(s->b->grants[k].ph_scan, seam, seam_len)) {
                        if (s->holding) {
                                /* nothing went upstream: refused like a head */
                                drop_held(s);
                                return refuse(s, p, REASON_CRED_MISUSE, 403);
                        }
                        /* the head went upstream already: the connection ends */
                        s->refuse = REASON_CRED_MISUSE;
                        s->failed = true;
                        http_parser_pause(p, 1);
                        return 0;
                }
        char line[32];
        int n = s->chunked ? snprintf(line, sizeof(line), "%zx\r\n", len) : 0;
        if ((n && send_up(s, line, (size_t)n) < 0) || send_up(s, at, len) < 0 || (n && send_up(s, "\r\n", 2) < 0) ||
            (s->holding && s->held_len - s->held_head >= HOLD_MAX && release_held(s) < 0)) {
                s->failed = true;
                http_parser_pause(p, 1);
        }
        return 0;
}

static int on_message_complete(http_parser *p)
{
        struct session *s = p->data;
        if ((s->chunked && send_up(s, "0\r\n\r\n", 5) < 0) || release_held(s) < 0) {
                s->failed = true;
                http_parser_pause(p, 1);
        }
        return 0;
}

static void audit_request(struct session *s, bool allowed, enum net_reason why, const char *method, const char *path,
                          int status)
{
        char st[16];
        snprintf(st, sizeof(st), "%d", status);
        const char *kv[] = {"grant", s->bg->g.env, "method", method, "path", path, "status", status ? st : NULL};
        net_audit_kv(s->r->g, s->r->pid, s->bg->g.host, allowed, why, kv, 4);
}

static int resp_headers_complete(http_parser *p)
{
        struct session *s = p->data;
        /* a HEAD request's response has no body, whatever it says */
        return s->fifo_n > 0 && s->fifo[0].head && p->status_code >= 200 ? 1 : 0;
}

static int resp_message_complete(http_parser *p)
{
        struct session *s = p->data;
        unsigned st = p->status_code;
        if ((st >= 200 || st == 101) && s->fifo_n > 0) {
                struct pending q = s->fifo[0];
                memmove(s->fifo, s->fifo + 1, (s->fifo_n - 1) * sizeof(s->fifo[0]));
                s->fifo_n--;
                if (q.cred)
                        audit_request(s, true, REASON_CRED_USED, q.method, q.path, (int)st);
        }
        return 0;
}

static void free_responses(struct session *s)
{
        free(s->carry);
        free(s->scratch);
        free(s->spans);
        free(s->lsegs);
}

/* A chunked body's data (on_body): its span in the read being parsed. */
static int resp_body(http_parser *p, const char *at, size_t len)
{
        struct session *s = p->data;
        if (!(p->flags & F_CHUNKED) || !s->resp_cur || at < s->resp_cur || at + len > s->resp_cur_end)
                return 0;
        if (s->n_spans == s->cap_spans) {
                s->cap_spans = s->cap_spans ? 2 * s->cap_spans : 16;
                s->spans = xrealloc(s->spans, s->cap_spans * sizeof(*s->spans));
        }
        s->spans[s->n_spans++] = (struct span){(size_t)(at - s->resp_cur), len};
        return 0;
}

/* The response parser over a read (its chunked data spans recorded for
 * scan_send). */
static void parse_response(struct session *s, const char *data, size_t n)
{
        s->n_spans = 0;
        if (s->resp_broken)
                return;
        s->resp_cur = data;
        s->resp_cur_end = data + n;
        http_parser_execute(&s->resp, &s->resp_set, data, n);
        s->resp_broken = HTTP_PARSER_ERRNO(&s->resp) != HPE_OK;
        s->resp_cur = s->resp_cur_end = NULL;
        /* the spans before an error stand: the parser took them as data,
         * and a client reads them as such */
}

/* The response side of a session: its parser and the scan's carry. */
static void init_responses(struct session *s)
{
        s->carry = xmalloc(CARRY_MAX);
        http_parser_init(&s->resp, HTTP_RESPONSE);
        s->resp.data = s;
        s->resp_set = (http_parser_settings){.on_headers_complete = resp_headers_complete,
                                             .on_body = resp_body,
                                             .on_message_complete = resp_message_complete};
}

static void add_span(struct span **v, size_t *n, size_t *cap, size_t off, size_t len)
{
        if (*n > 0 && (*v)[*n - 1].off + (*v)[*n - 1].len == off) {
                (*v)[*n - 1].len += len; /* adjoining: one span */
                return;
        }
        if (*n == *cap) {
                *cap = *cap ? 2 * *cap : 16;
                *v = xrealloc(*v, *cap * sizeof(**v));
        }
        (*v)[(*n)++] = (struct span){off, len};
}

/* How many of buf's last len bytes are the start of o's secret: the most,
 * if more than hold (else hold). Only places that hold the secret's first
 * byte are compared (a length at a time cost a comparison per byte of the
 * secret at every read: 14 us a 64 KiB read for a 6 KiB secret). */
static size_t secret_start(const char *buf, size_t len, const struct broker_grant *o, size_t hold)
{
        size_t most = o->secret_len - 1 < len ? o->secret_len - 1 : len;
        if (most <= hold)
                return hold;
        const char *end = buf + len - hold; /* a start from here is no more than hold */
        for (const char *p = buf + len - most; p < end && (p = memchr(p, o->secret[0], (size_t)(end - p))); p++)
                if (memcmp(p, o->secret, (size_t)(buf + len - p)) == 0)
                        return (size_t)(buf + len - p);
        return hold;
}

/* The offset in buf of the data's byte at index i (segs in data order;
 * i is less than the data's length). */
static size_t data_at(const struct span *segs, size_t n_segs, size_t i)
{
        size_t k = 0;
        while (k + 1 < n_segs && i >= segs[k].len)
                i -= segs[k++].len;
        return segs[k].off + i;
}

/* The second pass of scan_send: a chunked body's data as the client reads
 * it, chunk lines left out, so that a secret a chunk line splits is found
 * too. buf holds len raw bytes, the first carry_len of them held back last
 * time, where lsegs says which are data; spans says which of the rest are.
 * The data is gathered into one run only where it is in more than one
 * piece (a secret within one piece was found by the first pass), and the
 * mask is written over the raw bytes it came from. Returns how many of
 * buf's last bytes must be held back for a data tail that may still become
 * a secret (0 with flush); lsegs then says where that tail lies in buf
 * (scan_send makes them offsets in the next carry). */
static size_t scan_chunked(struct session *s, char *buf, size_t len, size_t carry_len, bool flush)
{
        _cleanup_free_ struct span *segs = NULL;
        size_t n_segs = 0, cap = 0, n = 0;
        for (size_t i = 0; i < s->n_lsegs; i++)
                add_span(&segs, &n_segs, &cap, s->lsegs[i].off, s->lsegs[i].len);
        for (size_t i = 0; i < s->n_spans; i++)
                add_span(&segs, &n_segs, &cap, carry_len + s->spans[i].off, s->spans[i].len);
        s->n_lsegs = 0;
        for (size_t i = 0; i < n_segs; i++)
                n += segs[i].len;
        if (n == 0)
                return 0;
        _cleanup_free_ char *copy = n_segs > 1 ? xmalloc(n) : NULL;
        char *l = copy ? copy : buf + segs[0].off;
        for (size_t i = 0, k = 0; copy && i < n_segs; k += segs[i].len, i++)
                memcpy(copy + k, buf + segs[i].off, segs[i].len);
        size_t hold_l = 0;
        for (size_t g = 0; g < s->b->n; g++) {
                const struct broker_grant *o = &s->b->grants[g];
                for (char *at = l; copy && (at = (char *)net_scan_find(o->secret_scan, at, n - (size_t)(at - l)));
                     at += o->secret_len) {
                        size_t from = (size_t)(at - l);
                        for (size_t q = 0; q < o->secret_len; q++)
                                buf[data_at(segs, n_segs, from + q)] = o->mask[q];
                        memcpy(at, o->mask, o->secret_len);
                }
                if (!flush)
                        hold_l = secret_start(l, n, o, hold_l);
        }
        if (copy)
                explicit_bzero(copy, n);
        if (hold_l == 0)
                return 0;
        size_t hold = len - data_at(segs, n_segs, n - hold_l);
        if (hold > CARRY_MAX)
                /* chunk lines longer than any real server's (extensions):
                 * what the first pass holds is all that is held */
                return 0;
        for (size_t i = 0, k = 0; i < n_segs; k += segs[i].len, i++) {
                if (k + segs[i].len <= n - hold_l)
                        continue;
                size_t skip = k < n - hold_l ? n - hold_l - k : 0;
                add_span(&s->lsegs, &s->n_lsegs, &s->cap_lsegs, segs[i].off + skip, segs[i].len - skip);
        }
        return hold;
}

/* Sends a response's bytes with every grant's secret replaced; holds back
 * a tail that could begin a secret (unless flush). data is changed in
 * place when nothing was held back before it (the common case: no copy),
 * else scanned behind the held bytes in the session's scratch buffer. A
 * chunked body's data is scanned a second time without its chunk lines
 * (scan_chunked), whose spans parse_response recorded for this data. */
static int scan_send(struct session *s, char *data, size_t n, bool flush)
{
        size_t carry_len = s->carry_len;
        char *buf = data;
        size_t len = n;
        if (s->carry_len) {
                if (!s->scratch) /* a read ended in a secret's first bytes: made when first needed */
                        s->scratch = xmalloc(CARRY_MAX + READ_BUF);
                buf = s->scratch;
                memcpy(buf, s->carry, s->carry_len);
                if (n)
                        memcpy(buf + s->carry_len, data, n);
                len = s->carry_len + n;
        }
        if (len == 0)
                return 0;
        size_t hold = 0;
        for (size_t k = 0; k < s->b->n; k++) {
                const struct broker_grant *o = &s->b->grants[k];
                for (char *at = buf; (at = (char *)net_scan_find(o->secret_scan, at, len - (size_t)(at - buf)));
                     at += o->secret_len)
                        memcpy(at, o->mask, o->secret_len);
                if (!flush)
                        hold = secret_start(buf, len, o, hold);
        }
        size_t hold_c = scan_chunked(s, buf, len, carry_len, flush);
        if (hold_c > hold)
                hold = hold_c;
        /* the held data's pieces, as offsets in the next carry (every one
         * lies in what is held: hold covers hold_c) */
        for (size_t i = 0; i < s->n_lsegs; i++)
                s->lsegs[i].off -= len - hold;
        int r = 0;
        if (s->offline)
                out_add(&s->sink, &s->sink_len, &s->sink_cap, buf, len - hold);
        else
                r = net_ssl_write_all(s->r, s->c, s->r->child, buf, len - hold);
        memcpy(s->carry, buf + len - hold, hold);
        s->carry_len = hold;
        s->n_spans = 0;
        /* what is left of a secret's start, here and in the scratch */
        explicit_bzero(buf + len - hold, hold);
        if (buf == s->scratch)
                explicit_bzero(buf, len);
        return r;
}

static void answer_refusal(struct session *s)
{
        char body[512], msg[1024];
        int bn = snprintf(body, sizeof(body), "{\"error\":\"egress_blocked\",\"reason\":\"%s\",\"host\":\"%s\"}\n",
                          net_reason_name(s->refuse), s->bg->g.host);
        const char *text = s->refuse_status == 400   ? "Bad Request"
                           : s->refuse_status == 431 ? "Request Header Fields Too Large"
                           : s->refuse_status == 429 ? "Too Many Requests"
                                                     : "Forbidden";
        int mn = snprintf(msg, sizeof(msg),
                          "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                          "Connection: close\r\n\r\n%s",
                          s->refuse_status, text, bn, body);
        (void)net_ssl_write_all(s->r, s->c, s->r->child, msg, (size_t)mn);
}

/* What ssl holds now, up to n: a read (as net_ssl_read), then more while
 * OpenSSL has bytes already read (no waiting), so that the next write
 * carries up to four records at once. An end or a stall after the first
 * read shows at the next one. */
static ssize_t read_batch(void *ssl, char *buf, size_t n)
{
        ssize_t got = net_ssl_read(ssl, buf, n);
        while (got > 0 && (size_t)got < n && net_ssl_pending(ssl)) {
                ssize_t k = net_ssl_read(ssl, buf + got, n - (size_t)got);
                if (k <= 0)
                        break;
                got += k;
        }
        return got;
}

static void init_requests(struct session *s)
{
        http_parser_init(&s->req, HTTP_REQUEST);
        s->req.data = s;
        s->req_set = (http_parser_settings){.on_message_begin = on_message_begin,
                                            .on_url = on_url,
                                            .on_header_field = on_header_field,
                                            .on_header_value = on_header_value,
                                            .on_headers_complete = on_headers_complete,
                                            .on_body = on_body,
                                            .on_message_complete = on_message_complete};
}

static void feed_requests(struct session *s, const char *buf, size_t n)
{
        s->cur = buf;
        s->cur_end = buf + n;
        s->last_at = NULL;
        size_t used = http_parser_execute(&s->req, &s->req_set, buf, n);
        (void)used;
        /* all that went upstream from this read, refused or not after it
         * (as when each piece left at once) */
        if (up_flush(s) < 0)
                s->failed = true;
        enum http_errno e = HTTP_PARSER_ERRNO(&s->req);
        if (s->failed || s->refuse != REASON_ALLOWED)
                return;
        if (e != HPE_OK) {
                bool big = s->too_large || e == HPE_HEADER_OVERFLOW;
                s->refuse = REASON_HTTP_REFUSED;
                s->refuse_status = big ? 431 : 400;
        }
}

void net_broker_http(struct net_relay *r, struct broker_grant *bg, void *c, void *u)
{
        struct session *s = xcalloc(1, sizeof(*s));
        *s = (struct session){.r = r, .bg = bg, .b = r->g->broker, .c = c, .u = u, .refuse = REASON_ALLOWED};
        init_requests(s);
        init_responses(s);
        char *buf = xmalloc(READ_BUF);
        bool requests = true;
        /* a side whose last read found too little for a record: what
         * OpenSSL holds of it cannot go on until its socket has more */
        bool up_stalled = false, ch_stalled = false;
        int64_t idle = net_now_ms() + IDLE_MS;
        for (;;) {
                if (s->failed)
                        break;
                if (s->refuse != REASON_ALLOWED) {
                        requests = false;
                        /* answered after the responses to the requests before it */
                        if (s->fifo_n == 0 || s->resp_broken) {
                                audit_request(s, false, s->refuse, s->method, s->path, s->refuse_status);
                                if (s->fifo_n == 0) {
                                        if (s->carry_len)
                                                (void)scan_send(s, NULL, 0, true);
                                        answer_refusal(s);
                                }
                                break;
                        }
                }
                if (!requests && s->fifo_n == 0 && s->refuse == REASON_ALLOWED)
                        break; /* the client is done and every response went back */
                bool up = !up_stalled && net_ssl_pending(u), ch = requests && !ch_stalled && net_ssl_pending(c);
                if (!up && !ch) {
                        struct pollfd p[3] = {{.fd = r->upstream, .events = POLLIN},
                                              {.fd = requests ? r->child : -1, .events = POLLIN},
                                              {.fd = r->g->relay_stop, .events = POLLIN}};
                        int64_t left = idle - net_now_ms();
                        int timeout = s->carry_len ? SCAN_FLUSH_MS : (int)(left > 0 ? left : 0);
                        int k = poll(p, 3, timeout);
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k < 0 || p[2].revents)
                                break;
                        if (k == 0) {
                                if (s->carry_len) {
                                        if (scan_send(s, NULL, 0, true) < 0)
                                                break;
                                        continue;
                                }
                                break; /* idle */
                        }
                        up = p[0].revents != 0;
                        ch = p[1].revents != 0;
                        up_stalled = up_stalled && !up;
                        ch_stalled = ch_stalled && !ch;
                }
                if (up) {
                        ssize_t n = read_batch(u, buf, READ_BUF);
                        if (n > 0) {
                                idle = net_now_ms() + IDLE_MS;
                                parse_response(s, buf, (size_t)n);
                                if (scan_send(s, buf, (size_t)n, false) < 0)
                                        break;
                        } else if (n == -EAGAIN) {
                                up_stalled = true;
                        } else if (n == 0 || n == -EPIPE) {
                                if (!s->resp_broken)
                                        http_parser_execute(&s->resp, &s->resp_set, NULL, 0);
                                if (s->carry_len)
                                        (void)scan_send(s, NULL, 0, true);
                                break;
                        }
                }
                if (ch) {
                        ssize_t n = read_batch(c, buf, READ_BUF);
                        if (n > 0) {
                                idle = net_now_ms() + IDLE_MS;
                                feed_requests(s, buf, (size_t)n);
                        } else if (n == -EAGAIN) {
                                ch_stalled = true;
                        } else if (n == 0 || n == -EPIPE) {
                                requests = false;
                        }
                }
        }
        for (size_t i = 0; i < s->fifo_n; i++)
                if (s->fifo[i].cred)
                        audit_request(s, true, REASON_CRED_USED, s->fifo[i].method, s->fifo[i].path, 0);
        if (s->failed && s->refuse == REASON_CRED_MISUSE)
                audit_request(s, false, REASON_CRED_MISUSE, s->method, s->path, 0);
        free(buf);
        free_responses(s);
        drop_held(s);
        free(s->held);
        if (s->stage)
                explicit_bzero(s->stage, RECORD);
        free(s->stage);
        explicit_bzero(s, sizeof(*s));
        free(s);
}

int net_http_offline(struct net_broker *b, size_t grant, const uint8_t *data, size_t n, const size_t *cuts,
                     size_t n_cuts, char **ret_out, size_t *ret_len, bool *ret_refused)
{
        struct session *s = xcalloc(1, sizeof(*s));
        *s = (struct session){.bg = &b->grants[grant], .b = b, .refuse = REASON_ALLOWED, .offline = true};
        init_requests(s);
        size_t at = 0;
        for (size_t i = 0; i <= n_cuts && at < n && !s->failed && s->refuse == REASON_ALLOWED; i++) {
                size_t end = i < n_cuts && cuts[i] > at && cuts[i] < n ? cuts[i] : n;
                feed_requests(s, (const char *)data + at, end - at);
                at = end;
        }
        int creds = (int)s->creds;
        *ret_refused = s->refuse != REASON_ALLOWED || s->failed;
        *ret_out = s->sink;
        *ret_len = s->sink_len;
        drop_held(s); /* a request whose body never ended: nothing sent */
        free(s->held);
        free(s);
        return creds;
}

int net_http_offline_response(struct net_broker *b, const uint8_t *data, size_t n, const size_t *cuts, size_t n_cuts,
                              char **ret_out, size_t *ret_len)
{
        struct session *s = xcalloc(1, sizeof(*s));
        *s = (struct session){.b = b, .refuse = REASON_ALLOWED, .offline = true};
        init_responses(s);
        char *piece = xmalloc(READ_BUF);
        size_t at = 0;
        for (size_t i = 0; i <= n_cuts && at < n; i++) {
                size_t end = i < n_cuts && cuts[i] > at && cuts[i] < n ? cuts[i] : n;
                if (end - at > READ_BUF)
                        end = at + READ_BUF; /* a read is at most READ_BUF */
                memcpy(piece, data + at, end - at);
                parse_response(s, piece, end - at);
                (void)scan_send(s, piece, end - at, false);
                at = end;
                if (i == n_cuts && at < n)
                        i--; /* the rest, READ_BUF at a time */
        }
        (void)scan_send(s, NULL, 0, true);
        *ret_out = s->sink;
        *ret_len = s->sink_len;
        free(piece);
        free_responses(s);
        free(s);
        return 0;
}
