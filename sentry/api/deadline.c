/* How long a request may take to arrive (slowloris): libmicrohttpd's idle
 * timeout starts again at every byte, so a client sending one byte every
 * 29 s would hold its connection (and its thread) for ever. Here a
 * connection's header block must be complete within API_HEADER_DEADLINE of
 * its start (or of its previous request's end, on a kept-alive
 * connection), and a body must arrive at an average of API_BODY_MIN_RATE
 * after a grace of API_HEADER_DEADLINE; a connection that misses either is
 * shut down by a watchdog thread. Once a request is complete nothing is
 * timed here: a long exec, a follow stream or a large download is the
 * server's answer, not the client's stalling, and each holds only its own
 * connection within the per-address and per-token bounds. */
#include "config.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <time.h>

#include "sentry/api/api-internal.h"

#define API_HEADER_DEADLINE_MS 20000
#define API_BODY_MIN_RATE      1024 /* bytes per second, on average, after the grace */

enum phase { PHASE_HEADERS, PHASE_BODY, PHASE_SERVED };

struct api_watch {
        struct api_watch *next, *prev;
        int fd; /* our own dup of the connection's socket: shut down, never a reused number */
        enum phase phase;
        int64_t since_ms; /* CLOCK_MONOTONIC: when the phase began */
        uint64_t received;
        bool cut;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond; /* on CLOCK_MONOTONIC (api_deadlines_start): a wall-clock jump moves no deadline */
static struct api_watch *watches;
static bool stopping, verbose;
static int64_t header_ms = API_HEADER_DEADLINE_MS;
static pthread_t watchdog;

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* When w's phase must be over; INT64_MAX: never. */
static int64_t due(const struct api_watch *w)
{
        switch (w->phase) {
        case PHASE_HEADERS:
                return w->since_ms + header_ms;
        case PHASE_BODY:
                return w->since_ms + header_ms + (int64_t)(w->received * 1000 / API_BODY_MIN_RATE);
        case PHASE_SERVED:
                break;
        }
        return INT64_MAX;
}

static void *watchdog_main(void *arg)
{
        (void)arg;
        pthread_mutex_lock(&lock);
        while (!stopping) {
                int64_t now = now_ms(), next = INT64_MAX;
                for (struct api_watch *w = watches; w; w = w->next) {
                        int64_t d = due(w);
                        if (!w->cut && d <= now) {
                                /* the connection's own thread sees the end of its
                                 * stream and closes it (and ends the request) */
                                w->cut = true;
                                (void)shutdown(w->fd, SHUT_RDWR);
                                if (verbose)
                                        fprintf(stderr,
                                                "cordon serve: a request's %s took too long: connection closed\n",
                                                w->phase == PHASE_HEADERS ? "header block" : "body");
                        } else if (!w->cut && d < next)
                                next = d;
                }
                if (next == INT64_MAX)
                        pthread_cond_wait(&cond, &lock);
                else {
                        /* on the monotonic clock's schedule, within a quarter of a deadline */
                        int64_t wait = next - now;
                        if (wait > header_ms / 4)
                                wait = header_ms / 4;
                        struct timespec ts;
                        clock_gettime(CLOCK_MONOTONIC, &ts);
                        int64_t ns = ts.tv_nsec + (wait % 1000) * 1000000;
                        ts.tv_sec += (time_t)(wait / 1000 + ns / 1000000000);
                        ts.tv_nsec = (long)(ns % 1000000000);
                        pthread_cond_timedwait(&cond, &lock, &ts);
                }
        }
        pthread_mutex_unlock(&lock);
        return NULL;
}

int api_deadlines_start(bool be_verbose)
{
        verbose = be_verbose;
        /* test only: shorter deadlines (never longer), so a test need not wait 20 s */
        const char *t = getenv("CORDON_TEST_HTTP_DEADLINE_MS");
        long long v = t ? strtoll(t, NULL, 10) : 0;
        if (v > 0 && v < API_HEADER_DEADLINE_MS)
                header_ms = v;
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&cond, &ca);
        pthread_condattr_destroy(&ca);
        int r = pthread_create(&watchdog, NULL, watchdog_main, NULL);
        return r ? -r : 0;
}

void api_deadlines_stop(void)
{
        pthread_mutex_lock(&lock);
        stopping = true;
        pthread_cond_signal(&cond);
        pthread_mutex_unlock(&lock);
        pthread_join(watchdog, NULL);
}

void api_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode code)
{
        (void)cls;
        if (code == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
                int fd = ci ? fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 3) : -1;
                if (fd < 0) {
                        /* no handle to cut it with: refused rather than left untimed */
                        if (ci)
                                (void)shutdown(ci->connect_fd, SHUT_RDWR);
                        return;
                }
                struct api_watch *w = xcalloc(1, sizeof(*w));
                w->fd = fd;
                w->phase = PHASE_HEADERS;
                w->since_ms = now_ms();
                pthread_mutex_lock(&lock);
                w->next = watches;
                if (watches)
                        watches->prev = w;
                watches = w;
                pthread_cond_signal(&cond);
                pthread_mutex_unlock(&lock);
                *socket_context = w;
                return;
        }
        struct api_watch *w = *socket_context;
        if (code != MHD_CONNECTION_NOTIFY_CLOSED || !w)
                return;
        pthread_mutex_lock(&lock);
        if (w->prev)
                w->prev->next = w->next;
        else
                watches = w->next;
        if (w->next)
                w->next->prev = w->prev;
        pthread_mutex_unlock(&lock);
        close(w->fd);
        free(w);
        *socket_context = NULL;
}

static struct api_watch *watch_of(struct MHD_Connection *c)
{
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        return ci ? ci->socket_context : NULL;
}

void api_deadline_phase(struct MHD_Connection *c, enum api_deadline_phase p, size_t received)
{
        struct api_watch *w = watch_of(c);
        if (!w)
                return;
        pthread_mutex_lock(&lock);
        switch (p) {
        case API_DEADLINE_BODY:
                w->phase = PHASE_BODY;
                w->since_ms = now_ms();
                w->received = 0;
                break;
        case API_DEADLINE_RECEIVED:
                w->received += received;
                break;
        case API_DEADLINE_SERVED:
                w->phase = PHASE_SERVED;
                break;
        case API_DEADLINE_NEXT:
                w->phase = PHASE_HEADERS;
                w->since_ms = now_ms();
                pthread_cond_signal(&cond);
                break;
        }
        pthread_mutex_unlock(&lock);
}
