/* The API's work inside a sandbox: exec (waits, with the run's output
 * bounded in the reply), runs in the background with their status and
 * cancel, the run's and the sandbox's events as a stream (server-sent events
 * or NDJSON) that a reader resumes with the last seq it saw, files in and
 * out of the view, and snapshots. All through the sandbox's control socket,
 * as `cordon sandbox` does; a connection that closes stops only its reading. */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sentry/api/api-internal.h"

/* --- events --- */

struct stream {
        struct event_reader er;
        int dirfd, conn_fd;
        char run[32]; /* "" for all of the sandbox's events */
        long long after;
        bool follow, sse, done;
        char *buf;
        size_t len, off, cap;
        time_t last_sent;
};

static void stream_free(void *cls)
{
        struct stream *s = cls;
        event_reader_close(&s->er);
        if (s->dirfd >= 0)
                close(s->dirfd);
        free(s->buf);
        free(s);
}

static void stream_put(struct stream *s, const char *text, size_t n)
{
        if (s->len + n > s->cap) {
                s->cap = (s->len + n) * 2;
                s->buf = xrealloc(s->buf, s->cap);
        }
        memcpy(s->buf + s->len, text, n);
        s->len += n;
}

/* Reads what the log has (up to ~64 KiB of it): the matching events
 * formatted into the buffer; done once the run ended or the sandbox is
 * gone (following), or at the end of the log (not following). */
static void stream_fill(struct stream *s)
{
        json_t *ev;
        const char *line;
        bool got = false;
        while (s->len < 65536 && event_reader_next(&s->er, &ev, &line) > 0) {
                got = true;
                long long seq = (long long)json_integer_value(json_object_get(ev, "seq"));
                const char *evrun = json_string_value(json_object_get(ev, "run"));
                const char *type = json_string_value(json_object_get(ev, "type"));
                bool mine = !s->run[0] || (evrun && streq(evrun, s->run));
                if (seq > s->after && mine) {
                        size_t n = strcspn(line, "\n");
                        if (s->sse) {
                                char head[160];
                                int h = snprintf(head, sizeof(head), "id: %lld\nevent: %s\ndata: ", seq,
                                                 type ? type : "event");
                                stream_put(s, head, (size_t)h);
                                stream_put(s, line, n);
                                stream_put(s, "\n\n", 2);
                        } else {
                                stream_put(s, line, n);
                                stream_put(s, "\n", 1);
                        }
                        s->after = seq;
                        if (s->run[0] && type && streq(type, "run_exited"))
                                s->done = true;
                }
                json_decref(ev);
                if (s->done)
                        return;
        }
        if (!s->follow && !got)
                s->done = true;
        else if (!got && !state_dir_live(s->dirfd))
                s->done = true; /* the sandbox is gone, and so is what it would say */
}

static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
        (void)pos;
        struct stream *s = cls;
        for (;;) {
                if (s->off < s->len) {
                        size_t n = s->len - s->off < max ? s->len - s->off : max;
                        memcpy(out, s->buf + s->off, n);
                        s->off += n;
                        s->last_sent = time(NULL);
                        return (ssize_t)n;
                }
                s->off = s->len = 0;
                if (s->done)
                        return MHD_CONTENT_READER_END_OF_STREAM;
                stream_fill(s);
                if (s->len || s->done)
                        continue;
                /* nothing new: the reader gone ends it (its run goes on) */
                struct pollfd p = {s->conn_fd, POLLRDHUP, 0};
                if (s->conn_fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
                        return MHD_CONTENT_READER_END_WITH_ERROR;
                if (s->sse && time(NULL) - s->last_sent >= 15) {
                        stream_put(s, ": keep-alive\n\n", 14);
                        continue;
                }
                usleep(100 * 1000);
        }
}

/* GET .../events: afterSequence, follow, and Accept (text/event-stream, else NDJSON). */
static enum MHD_Result events(struct api_req *r, const char *run, bool force_follow)
{
        const char *a = api_query(r, "afterSequence"), *f = api_query(r, "follow");
        const char *last = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Last-Event-ID");
        const char *accept = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
        long long after = 0;
        char *end;
        if (a) {
                errno = 0;
                after = strtoll(a, &end, 10);
                if (errno || end == a || *end || after < 0)
                        return api_error(r, 400, "invalid_field", "afterSequence",
                                         "afterSequence: expected a non-negative integer");
        }
        if (last) {
                /* a server-sent-events client resuming: its last id wins */
                long long l = strtoll(last, &end, 10);
                if (end != last && !*end && l > after)
                        after = l;
        }
        bool follow = force_follow || (f && (streq(f, "1") || streq(f, "true")));
        if (f && !follow && !streq(f, "0") && !streq(f, "false"))
                return api_error(r, 400, "invalid_field", "follow", "follow: expected 1, 0, true or false");
        struct stream *s = xcalloc(1, sizeof(*s));
        s->dirfd = -1;
        int q = event_reader_open(r->params[0], &s->er, &s->dirfd);
        if (q < 0) {
                stream_free(s);
                return api_error(r, 404, "not_found", NULL, "no sandbox %s", r->params[0]);
        }
        /* The log's last seq now, and whether the run is in it: a reader
         * that asks past the end, or for a run there never was, is told.
         * The sandbox's sentry knows its runs (and where each one's events
         * begin), and the log is read from the first event asked for on (a
         * binary search on its seqs): a request costs what it returns, not
         * a parse of the whole log (up to 64 MiB). Only a sentry that does
         * not answer (gone, or older than "op": "run") has the log read
         * through instead. */
        long long max_seq = 0, exited_seq = 0, from = after;
        bool run_seen = !run, seeked = false;
        json_t *rep = NULL;
        int c = run ? sandbox_call(r->params[0], json_pack("{s:s, s:s}", "op", "run", "run", run), NULL, 0, NULL, NULL,
                                   &rep)
                    : 0;
        const char *code = json_string_value(json_object_get(rep, "code"));
        if (c == 0 && code && streq(code, SANDBOX_ERR_NOT_FOUND)) {
                json_decref(rep);
                stream_free(s);
                return api_error(r, 404, "not_found", NULL, "no run %s in sandbox %s", run, r->params[0]);
        }
        if (c == 0 && (!run || json_is_object(json_object_get(rep, "run")))) {
                if (run) {
                        run_seen = true;
                        long long started = (long long)json_integer_value(json_object_get(rep, "startedSeq"));
                        const char *status = json_string_value(json_object_get(json_object_get(rep, "run"), "status"));
                        /* none of the run's events comes before its start */
                        if (started - 1 > from)
                                from = started - 1;
                        /* an ended run's events are all in the log: read to its
                         * end (the run's run_exited ends the stream there) */
                        if (status && !streq(status, "running"))
                                follow = false;
                }
                seeked = event_reader_seek(&s->er, from, &max_seq) == 0;
        }
        json_decref(rep);
        json_t *ev;
        const char *line;
        while (!seeked && event_reader_next(&s->er, &ev, &line) > 0) {
                long long seq = (long long)json_integer_value(json_object_get(ev, "seq"));
                if (seq > max_seq)
                        max_seq = seq;
                const char *evrun = json_string_value(json_object_get(ev, "run"));
                const char *type = json_string_value(json_object_get(ev, "type"));
                if (run && evrun && streq(evrun, run)) {
                        run_seen = true;
                        if (type && streq(type, "run_exited"))
                                exited_seq = seq;
                }
                json_decref(ev);
        }
        if (!run_seen) {
                stream_free(s);
                return api_error(r, 404, "not_found", NULL, "no run %s in sandbox %s", run, r->params[0]);
        }
        if (after > max_seq) {
                stream_free(s);
                return api_error(r, 400, "invalid_field", "afterSequence",
                                 "afterSequence %lld is beyond the last event (%lld)", after, max_seq);
        }
        /* a reader resuming after the run's end has nothing to wait for */
        if (exited_seq > 0 && exited_seq <= after)
                follow = false;
        if (!seeked) {
                rewind(s->er.f);
                s->er.partial_len = 0;
        }
        snprintf(s->run, sizeof(s->run), "%s", run ? run : "");
        s->after = after;
        s->follow = follow;
        s->sse = accept && strstr(accept, "text/event-stream");
        s->conn_fd = api_conn_fd(r);
        s->last_sent = time(NULL);
        struct MHD_Response *resp =
                MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, s, stream_free);
        if (!resp) {
                stream_free(s);
                return MHD_NO;
        }
        MHD_add_response_header(resp, "Content-Type", s->sse ? "text/event-stream" : "application/x-ndjson");
        MHD_add_response_header(resp, "Cache-Control", "no-cache");
        if (run)
                MHD_add_response_header(resp, "X-Cordon-Run", run);
        return api_reply_response(r, 200, resp);
}

enum MHD_Result api_events(struct api_req *r)
{
        return events(r, NULL, false);
}

enum MHD_Result api_run_events(struct api_req *r)
{
        return events(r, r->params[1], false);
}

/* --- runs --- */

static const char *const exec_keys[] = {
        "argv", "env", "cwd", "timeoutMs", "stdinBase64", "cancelOnDisconnect", "outputEncoding", NULL};
static const char *const run_keys[] = {"argv", "env", "cwd", "timeoutMs", "idempotencyKey", NULL};

/* A detached run: 0 with its id in ret, or the error queued. */
static int start_detached(struct api_req *r, json_t *body, char ret[32], enum MHD_Result *ret_q)
{
        struct api_bad bad;
        json_t *req = api_exec_request(body, true, &bad);
        if (!req) {
                *ret_q = api_error(r, 400, "invalid_field", bad.field, "%s", bad.message);
                return -1;
        }
        json_t *rep = NULL;
        int c = sandbox_call(r->params[0], req, NULL, 0, NULL, NULL, &rep);
        if (c < 0 || json_object_get(rep, "error") || !json_is_string(json_object_get(rep, "run"))) {
                *ret_q = api_sandbox_error(r, r->params[0], c, rep);
                json_decref(rep);
                return -1;
        }
        snprintf(ret, 32, "%s", json_string_value(json_object_get(rep, "run")));
        json_decref(rep);
        return 0;
}

enum MHD_Result api_run_start(struct api_req *r)
{
        json_t *body = NULL;
        enum MHD_Result q;
        if (api_body_object(r, run_keys, &body, &q) < 0)
                return q;
        json_t *k = json_object_get(body, "idempotencyKey");
        if (k && (!json_is_string(k) || json_string_length(k) == 0 || json_string_length(k) > 256)) {
                json_decref(body);
                return api_error(r, 400, "invalid_field", "idempotencyKey",
                                 "idempotencyKey: expected a string of 1 to 256 characters");
        }
        char dir[600], run[32];
        (void)sandbox_dir(r->params[0], dir, sizeof(dir));
        if (k)
                pthread_mutex_lock(&r->srv->idem_lock);
        bool replay = k && api_idem_get(dir, json_string_value(k), run, sizeof(run)) == 0;
        int s = replay ? 0 : start_detached(r, body, run, &q);
        if (s == 0 && k && !replay)
                (void)api_idem_put(dir, json_string_value(k), run);
        if (k)
                pthread_mutex_unlock(&r->srv->idem_lock);
        json_decref(body);
        if (s < 0)
                return q;
        json_t *j = json_pack("{s:s}", "runId", run);
        if (replay)
                json_object_set_new(j, "idempotentReplay", json_true());
        return api_reply_json(r, replay ? 200 : 201, j);
}

enum MHD_Result api_run_status(struct api_req *r)
{
        json_t *m = NULL;
        int c = sandbox_call(r->params[0], json_pack("{s:s}", "op", "inspect"), NULL, 0, NULL, NULL, &m);
        if (c < 0 || json_object_get(m, "error")) {
                enum MHD_Result q = api_sandbox_error(r, r->params[0], c, m);
                json_decref(m);
                return q;
        }
        size_t i;
        json_t *run;
        json_array_foreach(json_object_get(m, "runs"), i, run)
        {
                if (json_is_string(json_object_get(run, "id")) &&
                    streq(json_string_value(json_object_get(run, "id")), r->params[1])) {
                        json_t *j = json_deep_copy(run);
                        json_object_set_new(j, "runId", json_string(r->params[1]));
                        json_decref(m);
                        return api_reply_json(r, 200, j);
                }
        }
        json_decref(m);
        return api_error(r, 404, "not_found", NULL, "no run %s in sandbox %s", r->params[1], r->params[0]);
}

enum MHD_Result api_run_cancel(struct api_req *r)
{
        json_t *rep = NULL;
        int c = sandbox_call(r->params[0], json_pack("{s:s, s:s}", "op", "cancel", "run", r->params[1]), NULL, 0, NULL,
                             NULL, &rep);
        if (c < 0 || json_object_get(rep, "error")) {
                enum MHD_Result q = api_sandbox_error(r, r->params[0], c, rep);
                json_decref(rep);
                return q;
        }
        json_decref(rep);
        return api_reply_json(r, 200, json_pack("{s:s, s:b}", "runId", r->params[1], "cancelled", 1));
}

/* --- exec --- */

struct out_buf {
        char *data;
        size_t len;
        bool truncated;
};

static bool relay_into(int fd, struct out_buf *o)
{
        char tmp[16384];
        ssize_t n = read(fd, tmp, sizeof(tmp));
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return true;
        if (n <= 0)
                return false;
        size_t keep = o->len < API_MAX_OUTPUT ? API_MAX_OUTPUT - o->len : 0;
        if ((size_t)n > keep)
                o->truncated = true; /* the rest is read and dropped: the run never waits on us */
        if (keep > (size_t)n)
                keep = (size_t)n;
        if (keep) {
                o->data = xrealloc(o->data, o->len + keep);
                memcpy(o->data + o->len, tmp, keep);
                o->len += keep;
        }
        return true;
}

enum MHD_Result api_exec(struct api_req *r)
{
        json_t *body = NULL;
        enum MHD_Result q;
        const char *st = api_query(r, "stream");
        bool stream = st && (streq(st, "1") || streq(st, "true"));
        if (api_body_object(r, stream ? run_keys : exec_keys, &body, &q) < 0)
                return q;
        if (stream) {
                /* a background run, and its events until it ends */
                char run[32];
                json_object_del(body, "idempotencyKey");
                int s = start_detached(r, body, run, &q);
                json_decref(body);
                if (s < 0)
                        return q;
                return events(r, run, true);
        }
        json_t *cod = json_object_get(body, "cancelOnDisconnect");
        if (cod && !json_is_boolean(cod)) {
                json_decref(body);
                return api_error(r, 400, "invalid_field", "cancelOnDisconnect",
                                 "cancelOnDisconnect: expected a boolean");
        }
        bool cancel_on_hangup = json_is_true(cod);
        /* "base64": the output's bytes as they are, for output that is not
         * text (a tarball, an image); as text, a byte that is not UTF-8
         * would come back as '?' */
        json_t *enc = json_object_get(body, "outputEncoding");
        if (enc && (!json_is_string(enc) ||
                    (!streq(json_string_value(enc), "text") && !streq(json_string_value(enc), "base64")))) {
                json_decref(body);
                return api_error(r, 400, "invalid_field", "outputEncoding",
                                 "outputEncoding: expected \"text\" (the default) or \"base64\"");
        }
        bool out_b64 = enc && streq(json_string_value(enc), "base64");
        json_t *in = json_object_get(body, "stdinBase64");
        _cleanup_free_ uint8_t *input = NULL;
        size_t input_len = 0;
        if (in && (!json_is_string(in) ||
                   api_b64_decode(json_string_value(in), json_string_length(in), &input, &input_len) < 0)) {
                json_decref(body);
                return api_error(r, 400, "invalid_field", "stdinBase64", "stdinBase64: expected base64");
        }
        struct api_bad bad;
        json_t *req = api_exec_request(body, false, &bad);
        json_decref(body);
        if (!req)
                return api_error(r, 400, "invalid_field", bad.field, "%s", bad.message);

        _cleanup_close_ int conn = -1, nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        int c = control_connect(r->params[0], &conn);
        if (c < 0) {
                json_decref(req);
                char dir[600];
                struct stat sb;
                (void)sandbox_dir(r->params[0], dir, sizeof(dir));
                return api_sandbox_error(r, r->params[0], stat(dir, &sb) < 0 ? -ENOENT : c, NULL);
        }
        /* stdin: the request's bytes through a pipe we feed, else nothing */
        int in_pipe[2] = {-1, -1};
        if (input_len && pipe2(in_pipe, O_CLOEXEC) < 0) {
                json_decref(req);
                return api_error(r, 500, "internal", NULL, "cannot make the stdin pipe: %m");
        }
        _cleanup_close_ int in_rd = in_pipe[0], in_wr = in_pipe[1];
        if (in_wr >= 0)
                fcntl(in_wr, F_SETFL, O_NONBLOCK);
        int fds[3] = {in_rd >= 0 ? in_rd : nul, nul, nul};
        int s = control_send(conn, req, fds, 3);
        if (in_rd >= 0)
                close(TAKE_FD(in_rd));
        json_t *rep = NULL;
        int back[2] = {-1, -1};
        if (s >= 0)
                s = control_recv(conn, &rep, back, 2);
        _cleanup_close_ int out_fd = back[0], err_fd = back[1];
        if (s <= 0)
                return api_error(r, 503, "unavailable", NULL, "sandbox %s: no answer from its sentry", r->params[0]);
        if (json_object_get(rep, "error")) {
                q = api_sandbox_error(r, r->params[0], 0, rep);
                json_decref(rep);
                return q;
        }
        char run[32];
        snprintf(run, sizeof(run), "%s", json_string_value(json_object_get(rep, "run")) ?: "");
        json_decref(rep);
        rep = NULL;
        if (out_fd >= 0)
                fcntl(out_fd, F_SETFL, O_NONBLOCK);
        if (err_fd >= 0)
                fcntl(err_fd, F_SETFL, O_NONBLOCK);
        struct out_buf o[2] = {{0}, {0}};
        size_t in_off = 0;
        bool out_open = out_fd >= 0, err_open = err_fd >= 0;
        /* until the run's status: its output gathered (bounded), its input
         * fed. If our client goes away meanwhile the run goes on, unless it
         * asked otherwise (cancelOnDisconnect: an SDK's abort, whose run's
         * id would have come in this reply alone) */
        for (;;) {
                struct pollfd p[5] = {{conn, POLLIN, 0},
                                      {out_open ? out_fd : -1, POLLIN, 0},
                                      {err_open ? err_fd : -1, POLLIN, 0},
                                      {in_wr, POLLOUT, 0},
                                      /* only its hang-up: a next request
                                       * already sent waits unread */
                                      {cancel_on_hangup ? api_conn_fd(r) : -1, POLLRDHUP, 0}};
                if (poll(p, 5, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[4].revents) {
                        json_t *cr = NULL;
                        (void)sandbox_call(r->params[0], json_pack("{s:s, s:s}", "op", "cancel", "run", run), NULL, 0,
                                           NULL, NULL, &cr);
                        json_decref(cr);
                        free(o[0].data);
                        free(o[1].data);
                        return MHD_NO; /* nobody to answer */
                }
                if (p[1].revents && !relay_into(out_fd, &o[0]))
                        out_open = false;
                if (p[2].revents && !relay_into(err_fd, &o[1]))
                        err_open = false;
                if (p[3].revents) {
                        ssize_t w = write(in_wr, input + in_off, input_len - in_off);
                        if (w > 0)
                                in_off += (size_t)w;
                        if ((w < 0 && errno != EAGAIN && errno != EINTR) || in_off == input_len)
                                close(TAKE_FD(in_wr));
                }
                if (!p[0].revents)
                        continue;
                s = control_recv(conn, &rep, NULL, 0);
                if (s <= 0) {
                        free(o[0].data);
                        free(o[1].data);
                        return api_error(r, 503, "unavailable", NULL,
                                         "sandbox %s: its sentry went away before the run ended", r->params[0]);
                }
                if (json_object_get(rep, "exitCode"))
                        break;
                json_decref(rep);
                rep = NULL;
        }
        /* what the run wrote before its status, until the pipes end (or stay
         * quiet: a process it left behind may hold them) */
        while (out_open || err_open) {
                struct pollfd p[2] = {{out_open ? out_fd : -1, POLLIN, 0}, {err_open ? err_fd : -1, POLLIN, 0}};
                if (poll(p, 2, 100) <= 0)
                        break;
                if (p[0].revents && !relay_into(out_fd, &o[0]))
                        out_open = false;
                if (p[1].revents && !relay_into(err_fd, &o[1]))
                        err_open = false;
        }
        int status = (int)json_integer_value(json_object_get(rep, "status"));
        json_t *j =
                json_pack("{s:s, s:O, s:o, s:b, s:b}", "runId", run, "exitCode", json_object_get(rep, "exitCode"),
                          "signal", WIFSIGNALED(status) ? json_integer(WTERMSIG(status)) : json_null(), "truncated",
                          o[0].truncated || o[1].truncated, "timedOut", json_is_true(json_object_get(rep, "timedOut")));
        static const char *const names[2][2] = {{"stdout", "stderr"}, {"stdoutBase64", "stderrBase64"}};
        for (size_t i = 0; j && i < 2; i++)
                json_object_set_new(j, names[out_b64][i],
                                    out_b64 ? api_b64_json(o[i].data ? o[i].data : "", o[i].len)
                                            : api_text(o[i].data ? o[i].data : "", o[i].len));
        json_decref(rep);
        free(o[0].data);
        free(o[1].data);
        return api_reply_json(r, 200, j);
}

/* --- files --- */

/* put: the bytes into path through a memfd (the transfer reads it). */
static enum MHD_Result put_bytes(struct api_req *r, const char *path, const void *data, size_t len, int mode)
{
        _cleanup_close_ int fd = memfd_create("cordon-api-put", MFD_CLOEXEC);
        if (fd < 0 || write_all(fd, data, len) < 0 || lseek(fd, 0, SEEK_SET) < 0)
                return api_error(r, 500, "internal", NULL, "cannot hold the file: %m");
        json_t *rep = NULL;
        int c = sandbox_call(r->params[0], json_pack("{s:s, s:s, s:i}", "op", "put", "path", path, "mode", mode), &fd,
                             1, NULL, NULL, &rep);
        if (c < 0 || json_object_get(rep, "error")) {
                enum MHD_Result q = api_sandbox_error(r, r->params[0], c, rep);
                json_decref(rep);
                return q;
        }
        json_decref(rep);
        return api_reply_json(r, 200, json_pack("{s:s, s:I}", "path", path, "size", (json_int_t)len));
}

enum MHD_Result api_files_post(struct api_req *r)
{
        static const char *const keys[] = {"path", "contentBase64", "mode", NULL};
        json_t *body = NULL;
        enum MHD_Result q;
        if (api_body_object(r, keys, &body, &q) < 0)
                return q;
        struct api_file f;
        struct api_bad bad;
        if (api_file_body(body, &f, &bad) < 0)
                q = api_error(r, 400, "invalid_field", bad.field, "%s", bad.message);
        else
                q = put_bytes(r, f.path, f.data, f.len, f.mode);
        free(f.data);
        json_decref(body);
        return q;
}

/* The entries `ls` gives for path (a directory's, or a file's own): 0 with
 * *ret (an array), *ret_truncated and *ret_dir, or -1 with the error queued. */
static int ls_entries(struct api_req *r, const char *path, json_t **ret, bool *ret_truncated, bool *ret_dir,
                      enum MHD_Result *ret_q)
{
        _cleanup_close_ int fd = -1;
        int c = control_connect(r->params[0], &fd);
        if (c < 0) {
                char dir[600];
                struct stat sb;
                (void)sandbox_dir(r->params[0], dir, sizeof(dir));
                *ret_q = api_sandbox_error(r, r->params[0], stat(dir, &sb) < 0 ? -ENOENT : c, NULL);
                return -1;
        }
        if (control_send(fd, json_pack("{s:s, s:s}", "op", "ls", "path", path), NULL, 0) < 0) {
                *ret_q = api_error(r, 503, "unavailable", NULL, "sandbox %s does not answer", r->params[0]);
                return -1;
        }
        json_t *all = json_array();
        for (;;) {
                json_t *m = NULL;
                if (control_recv(fd, &m, NULL, 0) <= 0) {
                        json_decref(all);
                        *ret_q = api_error(r, 503, "unavailable", NULL, "sandbox %s: no answer from its sentry",
                                           r->params[0]);
                        return -1;
                }
                if (json_object_get(m, "error")) {
                        json_decref(all);
                        *ret_q = api_sandbox_error(r, r->params[0], 0, m);
                        json_decref(m);
                        return -1;
                }
                if (json_object_get(m, "ok")) {
                        *ret_truncated = json_is_true(json_object_get(m, "truncated"));
                        *ret_dir = json_is_true(json_object_get(m, "dir"));
                        json_decref(m);
                        *ret = all;
                        return 0;
                }
                json_array_extend(all, json_object_get(m, "entries"));
                json_decref(m);
        }
}

/* A file on its way out: the transfer thread writes into a pipe whose other
 * end the response reads, so that no file passes whole through the
 * server's memory; the transfer's reply (on conn) says at the end whether
 * all of it came. */
struct file_out {
        int pipe_rd, conn;
};

static ssize_t file_read(void *cls, uint64_t pos, char *out, size_t max)
{
        (void)pos;
        struct file_out *f = cls;
        ssize_t n;
        do
                n = read(f->pipe_rd, out, max);
        while (n < 0 && errno == EINTR);
        if (n > 0)
                return n;
        /* the end: whole only if the transfer says so */
        json_t *rep = NULL;
        bool ok = n == 0 && control_recv(f->conn, &rep, NULL, 0) > 0 && !json_object_get(rep, "error");
        json_decref(rep);
        return ok ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void file_free(void *cls)
{
        struct file_out *f = cls;
        close(f->pipe_rd);
        close(f->conn);
        free(f);
}

enum MHD_Result api_files_get(struct api_req *r)
{
        const char *path = api_query(r, "path"), *list = api_query(r, "list");
        if (!api_path_ok(path))
                return api_error(r, 400, "invalid_field", "path", "path: expected ?path=/ABSOLUTE/PATH in the sandbox");
        json_t *entries = NULL;
        bool truncated = false, dir = false;
        enum MHD_Result q;
        if (ls_entries(r, path, &entries, &truncated, &dir, &q) < 0)
                return q;
        if (list && (streq(list, "1") || streq(list, "true")))
                return api_reply_json(
                        r, 200, json_pack("{s:s, s:o, s:b}", "path", path, "entries", entries, "truncated", truncated));
        /* what it is, first: errors have their status before any byte is sent */
        const char *type = json_string_value(json_object_get(json_array_get(entries, 0), "type"));
        bool is_file = !dir && json_array_size(entries) == 1 && type && streq(type, "file");
        json_int_t size = json_integer_value(json_object_get(json_array_get(entries, 0), "size"));
        json_decref(entries);
        if (!is_file)
                return api_error(r, 400, "not_a_file", "path",
                                 "%s: not a regular file in the sandbox (list=1 lists a directory)", path);
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return api_error(r, 500, "internal", NULL, "cannot make a pipe: %m");
        int conn = -1;
        int c = control_connect(r->params[0], &conn);
        if (c >= 0)
                c = control_send(conn, json_pack("{s:s, s:s}", "op", "get", "path", path), &p[1], 1);
        close(p[1]);
        if (c < 0) {
                close(p[0]);
                if (conn >= 0)
                        close(conn);
                return api_error(r, 503, "unavailable", NULL, "sandbox %s does not answer", r->params[0]);
        }
        struct file_out *f = xcalloc(1, sizeof(*f));
        f->pipe_rd = p[0];
        f->conn = conn;
        struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 65536, file_read, f, file_free);
        if (!resp) {
                file_free(f);
                return MHD_NO;
        }
        char sz[32];
        snprintf(sz, sizeof(sz), "%lld", (long long)size);
        MHD_add_response_header(resp, "Content-Type", "application/octet-stream");
        /* the size when it was looked at (the body is chunked: the file may change meanwhile) */
        MHD_add_response_header(resp, "X-Cordon-Size", sz);
        return api_reply_response(r, 200, resp);
}

/* --- snapshot --- */

enum MHD_Result api_snapshot(struct api_req *r)
{
        /* the archive's digest goes in a header, so the archive is whole
         * before the reply: held in an unnamed file on disk (a writable
         * layer can be large), in memory where /var/tmp takes none */
        int fd = open("/var/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0)
                fd = memfd_create("cordon-api-snapshot", MFD_CLOEXEC);
        if (fd < 0)
                return api_error(r, 500, "internal", NULL, "cannot hold the snapshot: %m");
        json_t *rep = NULL;
        int c = sandbox_call(r->params[0], json_pack("{s:s, s:b}", "op", "snapshot", "progress", 0), &fd, 1, NULL, NULL,
                             &rep);
        struct stat sb;
        const char *digest = json_string_value(json_object_get(rep, "digest"));
        if (c < 0 || json_object_get(rep, "error") || !digest || fstat(fd, &sb) < 0) {
                close(fd);
                enum MHD_Result q = api_sandbox_error(r, r->params[0], c, rep);
                json_decref(rep);
                return q;
        }
        struct MHD_Response *resp = MHD_create_response_from_fd((uint64_t)sb.st_size, fd);
        if (!resp) {
                close(fd);
                json_decref(rep);
                return MHD_NO;
        }
        MHD_add_response_header(resp, "Content-Type", "application/zstd");
        MHD_add_response_header(resp, "X-Cordon-Digest", digest);
        json_decref(rep);
        return api_reply_response(r, 200, resp);
}
