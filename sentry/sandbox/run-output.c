/* What a run of a long-lived sandbox writes: an attached run's stdout and
 * stderr (or its terminal) relayed to its client through the sentry
 * without blocking the serve loop, a detached run's output into its log
 * (bounded), and every line of either as an output event (bounded per
 * run). */
#include "config.h"

#include <jansson.h>
#include <poll.h>
#include <termios.h>

#include "sentry/sandbox/sandbox-internal.h"

#define RUN_LOG_MAX       (16LL << 20) /* a detached run's log; beyond, a marker and nothing more */
#define RUN_OUTPUT_EVENTS 20000        /* output events per run; then one marker */

/* One line of a detached run's output as an event: a line that is a JSON
 * object is recorded as structured data (so its credential-like fields are
 * masked), any other as text. */
static void output_event(struct serve *srv, struct run_rec *r, const char *text, size_t len, bool split,
                         const char *stream)
{
        char id[16];
        snprintf(id, sizeof(id), "r%d", r->num);
        if (r->output_events == RUN_OUTPUT_EVENTS) {
                event_append(srv, "output_truncated", json_pack("{s:s, s:i}", "run", id, "limit", RUN_OUTPUT_EVENTS));
                r->output_events++;
        }
        if (r->output_events > RUN_OUTPUT_EVENTS)
                return;
        r->output_events++;
        json_error_t jerr;
        json_t *data = split ? NULL : json_loadb(text, len, JSON_DECODE_ANY, &jerr);
        json_t *ev = json_pack("{s:s}", "run", id);
        if (stream)
                json_object_set_new(ev, "stream", json_string(stream));
        if (json_is_object(data))
                json_object_set_new(ev, "data", data);
        else {
                json_decref(data);
                json_object_set_new(ev, "text", json_text(text, len));
                if (split)
                        json_object_set_new(ev, "continued", json_true());
        }
        event_append(srv, "output", ev);
}

static void output_lines(struct serve *srv, struct run_rec *r, const char *buf, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                if (buf[i] == '\n') {
                        output_event(srv, r, r->line, r->line_len, false, NULL);
                        r->line_len = 0;
                        continue;
                }
                if (r->line_len == sizeof(r->line)) {
                        output_event(srv, r, r->line, r->line_len, true, NULL);
                        r->line_len = 0;
                }
                r->line[r->line_len++] = buf[i];
        }
}

/* A detached run's output, into its log, bounded. */
void run_drain_log(struct serve *srv, struct run_rec *r)
{
        char buf[16384];
        /* bounded per call: a run that writes without pause must not keep
         * the serve loop from everything else (while its lines still become
         * events, a few thousand of them at most per call) */
        int rounds = r->output_events <= RUN_OUTPUT_EVENTS ? 1 : 16;
        size_t chunk = r->output_events <= RUN_OUTPUT_EVENTS ? 4096 : sizeof(buf);
        for (int round = 0; round < rounds; round++) {
                ssize_t n = read(r->log_in, buf, chunk);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        if (n == 0 || errno != EAGAIN) {
                                if (r->line_len > 0)
                                        output_event(srv, r, r->line, r->line_len, false, NULL);
                                r->line_len = 0;
                                close(r->log_in);
                                r->log_in = -1;
                                close(r->log_fd);
                                r->log_fd = -1;
                        }
                        return;
                }
                output_lines(srv, r, buf, (size_t)n);
                if (r->log_bytes + n <= RUN_LOG_MAX) {
                        (void)write_all(r->log_fd, buf, (size_t)n);
                        r->log_bytes += n;
                } else if (!r->log_truncated) {
                        static const char marker[] = "\n[cordon: output truncated at the log's limit]\n";
                        (void)write_all(r->log_fd, marker, sizeof(marker) - 1);
                        r->log_truncated = true;
                }
        }
}

static const char *const stream_names[2] = {"stdout", "stderr"};

static const char *stream_name(const struct run_rec *r, int k)
{
        return r->tty ? "tty" : stream_names[k];
}

static void stream_lines(struct serve *srv, struct run_rec *r, int k, const char *buf, size_t n)
{
        struct stream *sm = &r->streams[k];
        if (r->tty && k == 1)
                return; /* what the client types: its echo comes back on stream 0 */
        for (size_t i = 0; i < n; i++) {
                if (buf[i] == '\n') {
                        /* a terminal ends its lines with \r\n */
                        size_t len = sm->line_len;
                        if (r->tty && len > 0 && sm->line[len - 1] == '\r')
                                len--;
                        output_event(srv, r, sm->line, len, false, stream_name(r, k));
                        sm->line_len = 0;
                        continue;
                }
                if (sm->line_len == sizeof(sm->line)) {
                        output_event(srv, r, sm->line, sm->line_len, true, stream_name(r, k));
                        sm->line_len = 0;
                }
                sm->line[sm->line_len++] = buf[i];
        }
}

void stream_close(struct serve *srv, struct run_rec *r, int k)
{
        struct stream *sm = &r->streams[k];
        if (sm->line_len > 0)
                output_event(srv, r, sm->line, sm->line_len, false, stream_name(r, k));
        sm->line_len = 0;
        if (sm->in >= 0)
                close(TAKE_FD(sm->in));
        if (sm->to >= 0)
                close(TAKE_FD(sm->to));
        sm->off = sm->len = 0;
}

/* Whether a stream whose run's end is closed keeps the client's end open
 * until the run's status is sent (run_ended): the client then learns both
 * at once, woken once, not first by its pipes' end and again by the
 * status. A run's output pipes only; a terminal's streams close as they
 * end. */
static bool stream_held(const struct run_rec *r)
{
        return r->running && !r->tty;
}

/* Moves what it can of stream k from the run to the client without
 * blocking; returns true while the stream has something left to do. */
bool stream_pump(struct serve *srv, struct run_rec *r, int k)
{
        struct stream *sm = &r->streams[k];
        for (int round = 0; round < 16; round++) {
                if (sm->off < sm->len) {
                        ssize_t w = write(sm->to, sm->buf + sm->off, sm->len - sm->off);
                        if (w < 0 && (errno == EAGAIN || errno == EINTR))
                                return true; /* the client is behind: wait for it */
                        if (w < 0) {
                                /* the client's end is gone: the run's own
                                 * writes now fail, as on a closed stream */
                                stream_close(srv, r, k);
                                return false;
                        }
                        sm->off += (size_t)w;
                        if (sm->off < sm->len)
                                return true;
                        sm->off = sm->len = 0;
                }
                if (sm->in < 0) {
                        if (!stream_held(r))
                                stream_close(srv, r, k);
                        return false;
                }
                ssize_t n = read(sm->in, sm->buf, sizeof(sm->buf));
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return true;
                if (n == 0 && r->tty && k == 1 && sm->to >= 0) {
                        /* the client's input ended: on a terminal that is
                         * its EOF character, not a closed master */
                        struct termios t;
                        if (tcgetattr(sm->to, &t) == 0 && t.c_cc[VEOF])
                                (void)!write(sm->to, &t.c_cc[VEOF], 1);
                }
                if (n == 0 && stream_held(r)) {
                        /* the run's end of the pipe is closed: its last
                         * line now, the client's end at the run's status */
                        if (sm->line_len > 0)
                                output_event(srv, r, sm->line, sm->line_len, false, stream_name(r, k));
                        sm->line_len = 0;
                        close(TAKE_FD(sm->in));
                        return false;
                }
                if (n <= 0) {
                        stream_close(srv, r, k);
                        return false;
                }
                stream_lines(srv, r, k, sm->buf, (size_t)n);
                sm->len = (size_t)n;
                sm->off = 0;
        }
        return true;
}

/* At the run's exit, what it wrote is passed on before its status (bounded:
 * a process it left behind may hold the pipe open; its output follows
 * later through the serve loop). */
void streams_flush(struct serve *srv, struct run_rec *r)
{
        if (!r->streams)
                return;
        for (int round = 0; round < 40; round++) {
                struct pollfd q[2];
                int busy = 0;
                for (int k = 0; k < 2; k++) {
                        q[k] = (struct pollfd){-1, 0, 0};
                        if (!stream_pump(srv, r, k))
                                continue;
                        struct stream *sm = &r->streams[k];
                        q[k] = sm->off < sm->len ? (struct pollfd){sm->to, POLLOUT, 0}
                                                 : (struct pollfd){sm->in, POLLIN, 0};
                        busy++;
                }
                if (!busy || poll(q, 2, 50) <= 0)
                        return;
        }
}
