/* `cordon serve`'s server: the listening socket (unix, with its group, or
 * TCP with tokens), libmicrohttpd in a thread per connection (so that a
 * client that never reads, or a follow stream that waits, holds only its
 * own thread), each request's body gathered within its limit, who is
 * asking (SO_PEERCRED, or a bearer token), the route table, and the replies
 * and errors every handler uses. */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "common/crypto-dl.h"
#include "common/file.h"
#include "sentry/api/api-internal.h"

const struct api_route api_routes[] = {
        {"GET", "/v1/host", api_host, false},
        {"GET", "/v1/openapi.json", api_openapi, false},
        {"POST", "/v1/sandboxes", api_create, true},
        {"GET", "/v1/sandboxes", api_list, false},
        {"GET", "/v1/sandboxes/{id}", api_inspect, false},
        {"DELETE", "/v1/sandboxes/{id}", api_terminate, false},
        {"POST", "/v1/sandboxes/{id}/exec", api_exec, false},
        {"POST", "/v1/sandboxes/{id}/runs", api_run_start, false},
        {"GET", "/v1/sandboxes/{id}/runs/{run}", api_run_status, false},
        {"GET", "/v1/sandboxes/{id}/runs/{run}/events", api_run_events, false},
        {"POST", "/v1/sandboxes/{id}/runs/{run}/cancel", api_run_cancel, false},
        {"GET", "/v1/sandboxes/{id}/events", api_events, false},
        {"POST", "/v1/sandboxes/{id}/files", api_files_post, false},
        {"PUT", "/v1/sandboxes/{id}/files", api_files_put, false},
        {"GET", "/v1/sandboxes/{id}/files", api_files_get, false},
        {"POST", "/v1/sandboxes/{id}/pause", api_pause, false},
        {"POST", "/v1/sandboxes/{id}/resume", api_resume, false},
        {"POST", "/v1/sandboxes/{id}/snapshot", api_snapshot, false},
        {"GET", "/v1/sandboxes/{id}/approvals", api_approvals, false},
        {"POST", "/v1/sandboxes/{id}/approvals/{req}/approve", api_approve, false},
        {"POST", "/v1/sandboxes/{id}/approvals/{req}/deny", api_deny, false},
        {"GET", "/v1/sandboxes/{id}/processes", api_processes, false},
        {"POST", "/v1/sandboxes/{id}/processes/{pid}/signal", api_process_signal, false},
        {"POST", "/v1/sandboxes/{id}/ports", api_ports_post, false},
        {"GET", "/v1/sandboxes/{id}/ports", api_ports_get, false},
        {"DELETE", "/v1/sandboxes/{id}/ports/{port}", api_ports_delete, false},
};
const size_t api_n_routes = ELEMENTSOF(api_routes);

bool api_route_match(const char *pattern, const char *path, const char *params[3], char *buf, size_t size)
{
        /* the path's segments, each NUL-terminated in buf */
        if (path[0] != '/' || strlen(path) >= size)
                return false;
        strcpy(buf, path + 1);
        char *seg[16];
        size_t n_seg = 0;
        for (char *s = buf;; s++) {
                if (n_seg == ELEMENTSOF(seg))
                        return false;
                seg[n_seg++] = s;
                s = strchrnul(s, '/');
                if (!*s)
                        break;
                *s = '\0';
        }
        size_t i = 0;
        int n = 0;
        for (const char *p = pattern + 1;; i++) {
                const char *pe = strchrnul(p, '/');
                if (i >= n_seg || !seg[i][0])
                        return false;
                if (*p == '{') {
                        if (n >= 3)
                                return false;
                        params[n++] = seg[i];
                } else if (strlen(seg[i]) != (size_t)(pe - p) || strncmp(p, seg[i], (size_t)(pe - p)) != 0)
                        return false;
                if (!*pe)
                        return i + 1 == n_seg;
                p = pe + 1;
        }
}

/* --- who is asking --- */

/* A unix peer: root, or a member of the socket's group (SO_PEERGROUPS: the
 * groups it held when it connected, so no later change of a pid's identity
 * counts). */
static bool unix_peer_allowed(struct api_server *srv, int fd)
{
        struct ucred cred;
        socklen_t l = sizeof(cred);
        if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &l) < 0)
                return false;
        if (cred.uid == 0 || cred.gid == srv->group)
                return true;
        gid_t groups[256];
        l = sizeof(groups);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &l) < 0)
                return false;
        for (size_t i = 0; i < l / sizeof(gid_t); i++)
                if (groups[i] == srv->group)
                        return true;
        return false;
}

/* Over TCP: the bearer token. The admin token is compared by its hash in
 * constant time; any other is kept as its hash for the sandbox a route
 * names (tokens.c compares it with that sandbox's, also in constant time). */
static int token_auth(struct api_req *r)
{
        const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        if (!h || strncasecmp(h, "Bearer ", 7) != 0)
                return -EACCES;
        const char *tok = h + 7;
        size_t len = strlen(tok);
        if (len == 0 || len > 256)
                return -EACCES;
        char hex[65];
        uint8_t bin[32];
        if (api_sha256_hex(tok, len, hex) < 0)
                return -EIO;
        for (int i = 0; i < 32; i++)
                sscanf(hex + 2 * i, "%2hhx", &bin[i]);
        if (r->srv->have_admin && api_const_eq(bin, r->srv->admin_hash, 32)) {
                r->auth = AUTH_ADMIN;
                return 0;
        }
        r->auth = AUTH_SANDBOX;
        memcpy(r->token_hash, hex, sizeof(hex));
        return 0;
}

/* --- a request --- */

const struct api_route *api_route_find(const char *method, const char *url, const char *params[3], char *buf,
                                       size_t size, bool *ret_path_known)
{
        *ret_path_known = false;
        for (size_t i = 0; i < api_n_routes; i++)
                if (api_route_match(api_routes[i].pattern, url, params, buf, size)) {
                        *ret_path_known = true;
                        if (streq(api_routes[i].method, method))
                                return &api_routes[i];
                }
        return NULL;
}

struct req_ctx {
        struct api_req r;
        const struct api_route *route;
        char url_buf[1024];
        bool path_known;
        bool admitted; /* a streamed upload's, before its body */
};

/* Counts a sandbox token's request in progress: -EBUSY at the bound. Over
 * TCP behind a proxy every client has the proxy's address, so the
 * per-address limit is everyone's: without this, one tenant's follow
 * streams or long execs would hold every connection. */
static int busy_take(struct api_req *r)
{
        struct api_server *srv = r->srv;
        int free_slot = -1, r_ = -EBUSY;
        pthread_mutex_lock(&srv->busy_lock);
        for (int i = 0; i < (int)ELEMENTSOF(srv->busy); i++) {
                if (srv->busy[i].n > 0 && streq(srv->busy[i].hash, r->token_hash)) {
                        if (srv->busy[i].n < API_MAX_PER_TOKEN) {
                                srv->busy[i].n++;
                                r->busy_slot = i + 1;
                                r_ = 0;
                        }
                        free_slot = -2;
                        break;
                }
                if (srv->busy[i].n == 0 && free_slot == -1)
                        free_slot = i;
        }
        if (free_slot >= 0) {
                memcpy(srv->busy[free_slot].hash, r->token_hash, sizeof(srv->busy[free_slot].hash));
                srv->busy[free_slot].n = 1;
                r->busy_slot = free_slot + 1;
                r_ = 0;
        }
        pthread_mutex_unlock(&srv->busy_lock);
        return r_;
}

static void busy_put(struct api_req *r)
{
        if (!r->busy_slot)
                return;
        pthread_mutex_lock(&r->srv->busy_lock);
        r->srv->busy[r->busy_slot - 1].n--;
        pthread_mutex_unlock(&r->srv->busy_lock);
        r->busy_slot = 0;
}

/* Who asks, for what: MHD_YES with nothing queued when it may go on, else
 * the refusal's (queued, r->status set). */
static enum MHD_Result admit_check(struct req_ctx *x)
{
        struct api_req *r = &x->r;
        if (r->srv->tcp) {
                int q = token_auth(r);
                if (q == -EIO)
                        return api_error(r, 500, "internal", NULL, "cannot hash the token (libcrypto)");
                if (q < 0)
                        return api_error(r, 401, "unauthorized", NULL, "a bearer token is required");
        } else if (!unix_peer_allowed(r->srv, api_conn_fd(r)))
                return api_error(r, 401, "unauthorized", NULL, "only root and the socket's group may use it");
        else
                r->auth = AUTH_ADMIN;
        if (r->auth == AUTH_SANDBOX) {
                if (x->route->admin_only)
                        return api_error(r, 401, "unauthorized", NULL, "this call needs the admin token");
                /* a sandbox's token acts on its sandbox alone: any other
                 * sandbox, existing or not, is "not found" alike */
                if (strstr(x->route->pattern, "{id}") && !api_token_matches(r->params[0], r->token_hash))
                        return api_error(r, 404, "not_found", NULL, "no sandbox %s", r->params[0]);
                /* elsewhere (the host, the document, the list) it must be
                 * some live sandbox's token */
                if (!strstr(x->route->pattern, "{id}") && !api_token_matches_any(r->token_hash))
                        return api_error(r, 401, "unauthorized", NULL, "a bearer token is required");
        }
        if (strstr(x->route->pattern, "{id}") && !sandbox_id_valid(r->params[0]))
                return api_error(r, 404, "not_found", NULL, "no sandbox %s", r->params[0]);
        if (r->auth == AUTH_SANDBOX && busy_take(r) < 0)
                return api_error(r, 429, "too_many_requests", NULL,
                                 "this sandbox's token has %d requests in progress (streams and execs included); "
                                 "end one first",
                                 API_MAX_PER_TOKEN);
        return MHD_YES;
}

/* 0, or -1 with the refusal queued (*ret_q). */
static int admit(struct req_ctx *x, enum MHD_Result *ret_q)
{
        x->r.status = 0;
        *ret_q = admit_check(x);
        if (x->r.status || *ret_q != MHD_YES) /* refused, or no reply could be made */
                return -1;
        x->admitted = true;
        return 0;
}

/* 413, saying what takes more where something does. */
static enum MHD_Result too_large(struct req_ctx *x)
{
        bool file = x->route && x->route->fn == api_files_post;
        return api_error(&x->r, 413, "too_large", NULL, "the body is over the limit of %zu bytes%s", x->r.body_max,
                         file ? " (PUT .../files?path=P takes a file of any size as its raw body)" : "");
}

static enum MHD_Result dispatch(struct req_ctx *x)
{
        struct api_req *r = &x->r;
        if (!x->route)
                return x->path_known ? api_error(r, 405, "method_not_allowed", NULL, "%s is not allowed on %s",
                                                 r->method, r->url)
                                     : api_error(r, 404, "no_route", NULL, "no route %s %s", r->method, r->url);
        if (r->too_large)
                return too_large(x);
        enum MHD_Result q;
        if (!x->admitted && admit(x, &q) < 0)
                return q;
        return x->route->fn(r);
}

/* The headers a request may carry once: Host and Authorization. */
struct once_headers {
        unsigned host, auth;
};

static enum MHD_Result count_once(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
        (void)kind;
        (void)value;
        struct once_headers *n = cls;
        if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0)
                n->host++;
        else if (strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION) == 0)
                n->auth++;
        return MHD_YES;
}

/* What the raw URL holds that cordon refuses, seen before libmicrohttpd
 * decodes it: an encoded NUL ("%00") anywhere, since the handlers read C
 * strings and what followed it would be cut off unseen (.../ID%00/ports/3000
 * served as .../ID, ?path=/a%00b as /a); an encoded slash ("%2F") in the
 * path, which cordon would take as a separator where a proxy in front saw
 * one segment (.../ID%2Fports%2F3000). In the query a value may hold an
 * encoded slash (?path=%2Ftmp%2Fx). Set as the request line is read, in the
 * connection's own thread, and taken at the request's first call. */
static _Thread_local const char *url_refused;

static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *c)
{
        (void)cls;
        (void)c;
        size_t path_len = strcspn(uri, "?");
        url_refused = strstr(uri, "%00") ? "the URL holds an encoded NUL (%00), which no path, id or value may hold"
                      : memmem(uri, path_len, "%2f", 3) || memmem(uri, path_len, "%2F", 3)
                              ? "the URL's path holds an encoded slash (%2F), which no id may hold"
                              : NULL;
        return NULL;
}

/* The query's keys, each at most once: a repeated one is a request that a
 * proxy in front may read by its last value while cordon reads the first. */
struct query_keys {
        const char *keys[32];
        size_t n;
        const char *dup; /* the key seen twice (or the 33rd), or NULL */
};

static enum MHD_Result count_query(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
        (void)kind;
        (void)value;
        struct query_keys *q = cls;
        for (size_t i = 0; i < q->n; i++)
                if (streq(q->keys[i], key)) {
                        q->dup = key;
                        return MHD_NO;
                }
        if (q->n == ELEMENTSOF(q->keys)) {
                q->dup = key;
                return MHD_NO;
        }
        q->keys[q->n++] = key;
        return MHD_YES;
}

/* A request refused before its body (its framing, its Host, its URL):
 * whatever body comes is dropped, and nothing of it is timed further. */
static enum MHD_Result refuse_early(struct req_ctx *x, unsigned status, const char *code, const char *field,
                                    const char *message)
{
        x->r.too_large = true;
        x->r.started = true;
        api_deadline_phase(x->r.conn, API_DEADLINE_SERVED, 0);
        return api_error(&x->r, status, code, field, "%s", message);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
        struct req_ctx *x = *con_cls;
        if (!x) {
                const char *refused = url_refused; /* this request's line's, taken */
                url_refused = NULL;
                x = xcalloc(1, sizeof(*x));
                x->r.srv = cls;
                x->r.conn = c;
                x->r.method = method;
                x->r.url = url;
                x->r.up_pipe = x->r.up_conn = -1;
                x->route = api_route_find(method, url, x->r.params, x->url_buf, sizeof(x->url_buf), &x->path_known);
                /* the header block is complete: the body is timed from here */
                api_deadline_phase(c, API_DEADLINE_BODY, 0);
                bool raw = x->route && x->route->fn == api_files_put;
                /* a create may carry a snapshot to restore, in base64 */
                bool create = x->route && x->route->fn == api_create;
                x->r.body_max = raw ? API_MAX_UPLOAD : create ? API_MAX_SNAPSHOT / 3 * 4 + API_MAX_BODY : API_MAX_BODY;
                const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
                const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
                *con_cls = x;
                /* a body framed two ways, or by a length that is no
                 * number, is refused: a proxy in front that reads the
                 * other framing would see a second request where this
                 * server sees a body (request smuggling) */
                if ((cl && te) || (cl && (!*cl || cl[strspn(cl, "0123456789")])))
                        return refuse_early(x, 400, "invalid_framing", NULL,
                                            cl && te ? "Content-Length and Transfer-Encoding together: one framing only"
                                                     : "Content-Length: expected a number of bytes");
                /* HTTP/1.1 asks for exactly one Host (RFC 9112 3.2):
                 * libmicrohttpd takes none or two, which a proxy in front
                 * may read otherwise than this server does */
                struct once_headers n = {0, 0};
                MHD_get_connection_values(c, MHD_HEADER_KIND, count_once, &n);
                if (n.host > 1 || (n.host == 0 && strcmp(version, MHD_HTTP_VERSION_1_1) == 0))
                        return refuse_early(x, 400, "invalid_host", NULL,
                                            n.host ? "more than one Host header" : "an HTTP/1.1 request without Host");
                /* two credentials are no credential: cordon would act as
                 * the first, where a proxy in front may have checked (or
                 * added) the other */
                if (n.auth > 1)
                        return refuse_early(x, 400, "invalid_authorization", NULL,
                                            "more than one Authorization header");
                if (refused)
                        return refuse_early(x, 400, "invalid_url", NULL, refused);
                struct query_keys qk = {.n = 0};
                MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, count_query, &qk);
                if (qk.dup) {
                        _cleanup_free_ char *m = xasprintf("%s: a query key may appear once (and at most %zu keys)",
                                                           qk.dup, ELEMENTSOF(qk.keys));
                        return refuse_early(x, 400, "invalid_query", qk.dup, m);
                }
                if (cl && strtoull(cl, NULL, 10) > x->r.body_max && x->route) {
                        /* said at once, before the body: MHD closes the
                         * connection rather than read what it would drop */
                        x->r.too_large = true;
                        x->r.started = true;
                        api_deadline_phase(c, API_DEADLINE_SERVED, 0);
                        return too_large(x);
                }
                if (raw) {
                        /* streamed into the sandbox as it comes (upload.c):
                         * who asks is decided now, before any of it */
                        enum MHD_Result q;
                        if (admit(x, &q) < 0 || api_upload_begin(&x->r, cl, &q) < 0) {
                                x->r.too_large = true; /* whatever body comes is dropped */
                                x->r.started = true;
                                api_deadline_phase(c, API_DEADLINE_SERVED, 0);
                                return q;
                        }
                }
                return MHD_YES;
        }
        if (*upload_data_size) {
                size_t n = *upload_data_size;
                *upload_data_size = 0;
                api_deadline_phase(c, API_DEADLINE_RECEIVED, n);
                if (x->r.up_conn >= 0) {
                        api_upload_data(&x->r, upload_data, n);
                        return MHD_YES;
                }
                if (x->r.too_large || x->r.body_len + n > x->r.body_max) {
                        /* the rest is read and dropped: the reply says 413 */
                        x->r.too_large = true;
                        return MHD_YES;
                }
                if (x->r.body_len + n + 1 > x->r.body_cap) {
                        /* doubled, not grown by each chunk: a create's
                         * snapshot (tens of MB in MHD's chunks of a few
                         * KiB) was thousands of reallocs, each a copy of
                         * all of it where realloc cannot grow in place */
                        x->r.body_cap = (x->r.body_len + n + 1) * 2;
                        x->r.body = xrealloc(x->r.body, x->r.body_cap);
                }
                memcpy(x->r.body + x->r.body_len, upload_data, n);
                x->r.body_len += n;
                x->r.body[x->r.body_len] = '\0';
                return MHD_YES;
        }
        if (x->r.started)
                return MHD_YES;
        x->r.started = true;
        /* the request is complete: its answer, however long, is not timed */
        api_deadline_phase(c, API_DEADLINE_SERVED, 0);
        if (!x->r.body)
                x->r.body = xstrdup("");
        return dispatch(x);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
        (void)toe;
        struct api_server *srv = cls;
        /* a kept-alive connection's next header block is timed from here */
        api_deadline_phase(c, API_DEADLINE_NEXT, 0);
        struct req_ctx *x = *con_cls;
        if (!x)
                return;
        /* the URL only: tokens travel in a header, which is never logged */
        if (srv->cfg->verbose)
                fprintf(stderr, "cordon serve: %s %s %d\n", x->r.method, x->r.url, x->r.status);
        busy_put(&x->r);
        /* an upload cut short: its pipe ends before its length, so the
         * transfer lands nothing */
        api_upload_abort(&x->r, true);
        free(x->r.body);
        free(x);
        *con_cls = NULL;
}

/* --- the listening socket --- */

static int listen_unix(struct api_server *srv, const char *path, char **ret_error)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (path[0] != '/' || strlen(path) >= sizeof(sa.sun_path)) {
                *ret_error = xasprintf("--listen unix:%s: expected an absolute path of at most %zu bytes", path,
                                       sizeof(sa.sun_path) - 1);
                return -EINVAL;
        }
        strcpy(sa.sun_path, path);
        _cleanup_free_ char *dir = xstrdup(path);
        *strrchr(dir, '/') = '\0';
        if (dir[0])
                (void)mkdir(dir, 0755);
        struct stat st;
        /* a socket left by a server that was killed goes; one a live server
         * answers on, or anything else, stays */
        if (lstat(path, &st) == 0) {
                if (!S_ISSOCK(st.st_mode)) {
                        *ret_error = xasprintf("--listen unix:%s: exists and is not a socket", path);
                        return -EEXIST;
                }
                _cleanup_close_ int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
                        *ret_error = xasprintf("--listen unix:%s: another server is listening there", path);
                        return -EADDRINUSE;
                }
                (void)unlink(path);
        }
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        /* made 0660 from the start: never a moment in which anyone may connect */
        mode_t old = umask(0117);
        int b = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
        umask(old);
        if (b < 0 || listen(fd, 128) < 0 || stat(path, &st) < 0) {
                int r = negative_errno();
                *ret_error = xasprintf("--listen unix:%s: %s", path, strerror(-r));
                close(fd);
                return r;
        }
        srv->group = st.st_gid;
        return fd;
}

static int listen_tcp(const char *spec, char **ret_error)
{
        _cleanup_free_ char *host = xstrdup(spec);
        char *colon = strrchr(host, ':');
        if (!colon || colon == host) {
                *ret_error = xasprintf("--listen tcp:%s: expected tcp:ADDRESS:PORT", spec);
                return -EINVAL;
        }
        *colon = '\0';
        const char *port = colon + 1;
        char *h = host;
        if (h[0] == '[' && h[strlen(h) - 1] == ']') {
                h[strlen(h) - 1] = '\0';
                h++;
        }
        struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE, .ai_socktype = SOCK_STREAM};
        struct addrinfo *ai = NULL;
        int e = getaddrinfo(h, port, &hints, &ai);
        if (e != 0) {
                *ret_error = xasprintf("--listen tcp:%s: %s (a numeric address and port)", spec, gai_strerror(e));
                return -EINVAL;
        }
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
                int r = negative_errno();
                *ret_error = xasprintf("--listen tcp:%s: %s", spec, strerror(-r));
                if (fd >= 0)
                        close(fd);
                freeaddrinfo(ai);
                return r;
        }
        freeaddrinfo(ai);
        return fd;
}

/* The admin token: a file only its owner can read (anything looser is
 * refused, as ssh refuses a readable key), at least 16 characters. */
static int load_admin_token(struct api_server *srv, const char *path, char **ret_error)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
                *ret_error = xasprintf("--token-file %s: %m", path);
                return -errno;
        }
        if (!S_ISREG(st.st_mode) || (st.st_mode & 077) || st.st_uid != geteuid()) {
                *ret_error = xasprintf("--token-file %s: must be a regular file of ours with mode 0600 (it is %04o)",
                                       path, (unsigned)(st.st_mode & 07777));
                return -EPERM;
        }
        char buf[512];
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n < 0)
                n = 0;
        buf[n] = '\0';
        buf[strcspn(buf, "\r\n")] = '\0';
        size_t len = strlen(buf);
        if (len < 16 || len > 256) {
                *ret_error =
                        xasprintf("--token-file %s: the token must be 16 to 256 characters on its first line", path);
                explicit_bzero(buf, sizeof(buf));
                return -EINVAL;
        }
        char hex[65];
        int r = api_sha256_hex(buf, len, hex);
        explicit_bzero(buf, sizeof(buf));
        if (r < 0) {
                *ret_error = xasprintf("--token-file: cannot hash the token (libcrypto)");
                return r;
        }
        for (int i = 0; i < 32; i++)
                sscanf(hex + 2 * i, "%2hhx", &srv->admin_hash[i]);
        srv->have_admin = true;
        return 0;
}

/* A create's fromSnapshot archive waits in api/restore-* until the create
 * returns; a server killed meanwhile left it there, in /run's memory.
 * Those older than an hour (no create takes that long) go at start. */
static void remove_stale_restores(void)
{
        char dir[600];
        snprintf(dir, sizeof(dir), "%s/api", state_root());
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d)
                return;
        TAKE_FD(dfd);
        time_t now = time(NULL);
        struct dirent *de;
        while ((de = readdir(d))) {
                struct stat st;
                if (startswith(de->d_name, "restore-") &&
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
                    st.st_mtime < now - 3600)
                        (void)unlinkat(dirfd(d), de->d_name, 0);
        }
        closedir(d);
}

int api_serve(const struct api_config *c, char **ret_error)
{
        static struct api_server srv;
        srv = (struct api_server){.cfg = c};
        pthread_mutex_init(&srv.lock, NULL);
        pthread_mutex_init(&srv.idem_lock, NULL);
        pthread_mutex_init(&srv.busy_lock, NULL);
        /* the HTTP server's library, and libcrypto (it hashes the tokens),
         * are loaded here, on the main thread (common/dl.h), before any
         * request needs them */
        const char *why = NULL;
        if (mhd_dl_load(&why) < 0 || crypto_dl_load(&why) < 0) {
                *ret_error = xasprintf("%s", why);
                return -ELIBACC;
        }
        int fd;
        const char *unix_path = NULL;
        if (startswith(c->listen, "unix:")) {
                unix_path = c->listen + 5;
                fd = listen_unix(&srv, unix_path, ret_error);
        } else if (startswith(c->listen, "tcp:")) {
                /* over TCP anyone who can reach the port asks: only a token says who */
                if (!c->token_file) {
                        *ret_error = xasprintf("--listen %s needs --token-file (the admin token)", c->listen);
                        return -EINVAL;
                }
                srv.tcp = true;
                fd = listen_tcp(c->listen + 4, ret_error);
        } else {
                *ret_error = xasprintf("--listen %s: expected unix:PATH or tcp:ADDRESS:PORT", c->listen);
                return -EINVAL;
        }
        if (fd < 0)
                return fd;
        remove_stale_restores();
        if (c->token_file) {
                int r = load_admin_token(&srv, c->token_file, ret_error);
                if (r < 0) {
                        close(fd);
                        return r;
                }
        }
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        /* blocked before the daemon's threads exist, so they inherit it
         * and only sigwait below takes the signals */
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        signal(SIGPIPE, SIG_IGN);
        int dr = api_deadlines_start(c->verbose);
        if (dr < 0) {
                *ret_error = xasprintf("cannot start the request deadlines' thread: %s", strerror(-dr));
                close(fd);
                return dr;
        }
        srv.daemon = MHD_start_daemon(
                MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL, 0, NULL, NULL,
                on_request, &srv, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_NOTIFY_COMPLETED, on_completed, &srv,
                /* slowloris: a connection idle this long is closed, and
                 * one whose request takes too long to arrive too
                 * (deadline.c: the idle timeout restarts at every byte) */
                MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_NOTIFY_CONNECTION, api_on_connection, &srv,
                /* every connection is a thread: bounded */
                MHD_OPTION_CONNECTION_LIMIT, (unsigned)256,
                /* over TCP one address cannot take them all (0: none,
                 * for the unix socket, whose peers have no address) */
                MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)(srv.tcp ? 64 : 0),
                /* the request line and headers (431 beyond) */
                MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
                /* the raw URL, for what its decoding would hide */
                MHD_OPTION_URI_LOG_CALLBACK, uri_seen, NULL, MHD_OPTION_END);
        if (!srv.daemon) {
                *ret_error = xasprintf("cannot start the HTTP server on %s", c->listen);
                api_deadlines_stop();
                close(fd);
                return -EIO;
        }
        fprintf(stderr, "cordon serve: listening on %s\n", c->listen);
        int sig = 0;
        while (sigwait(&set, &sig) != 0)
                ;
        MHD_stop_daemon(srv.daemon);
        api_deadlines_stop();
        close(fd);
        if (unix_path)
                (void)unlink(unix_path);
        json_decref(srv.host);
        return 0;
}
