/* The control protocol of long-lived sandboxes, the bottom layer that both
 * the client verbs and the detached sentry stand on: where a sandbox's state
 * directory is (sentry.h: sandbox_dir, sandbox_id_valid), one JSON object per
 * SOCK_SEQPACKET message with fds beside it (control_send, control_recv),
 * and the pieces of a message every side builds (json_text, error_reply, control_reply_error and its
 * variant with a machine-readable code). */
#include "config.h"

#include <jansson.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "sentry/sandbox/sandbox-internal.h"

int control_connect(const char *id, int *ret)
{
        char dir[600];
        if (!id || sandbox_dir(id, dir, sizeof(dir)) < 0)
                return -EINVAL;
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/control.sock", dir) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        *ret = fd;
        return 0;
}

int control_send(int fd, json_t *msg, const int *fds, size_t n_fds)
{
        if (!msg)
                return -EINVAL;
        char *text = json_dumps(msg, JSON_COMPACT);
        json_decref(msg);
        if (!text)
                return -EINVAL;
        size_t len = strlen(text);
        int r = len > CONTROL_MAX_MSG ? -E2BIG : send_fds(fd, text, len, fds, n_fds);
        free(text);
        return r;
}

int control_recv(int fd, json_t **ret, int *fds, size_t max_fds)
{
        _cleanup_free_ char *buf = xmalloc(CONTROL_MAX_MSG + 1);
        ssize_t n = recv_fds(fd, buf, CONTROL_MAX_MSG, fds, max_fds);
        if (n <= 0)
                return (int)n;
        json_error_t jerr;
        json_t *j = json_loadb(buf, (size_t)n, 0, &jerr);
        if (!j || !json_is_object(j)) {
                json_decref(j);
                for (size_t i = 0; i < max_fds; i++)
                        if (fds[i] >= 0)
                                close(fds[i]);
                return -EBADMSG;
        }
        *ret = j;
        return 1;
}

static json_t *error_replyv(const char *fmt, va_list ap) _printf_(1, 0);
static json_t *error_replyv(const char *fmt, va_list ap)
{
        char text[1024];
        vsnprintf(text, sizeof(text), fmt, ap);
        return json_pack("{s:s}", "error", text);
}

json_t *error_reply(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        json_t *j = error_replyv(fmt, ap);
        va_end(ap);
        return j;
}

json_t *json_text(const char *s, size_t n)
{
        json_t *j = json_stringn(s, n);
        if (j)
                return j;
        /* not UTF-8 (a sandbox picks its file names and output freely):
         * every byte outside ASCII becomes '?' rather than the message
         * failing */
        char *t = xmalloc(n + 1);
        for (size_t i = 0; i < n; i++)
                t[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
        j = json_stringn(t, n);
        free(t);
        return j ? j : json_string("?");
}

void control_reply_error(int conn, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        json_t *j = error_replyv(fmt, ap);
        va_end(ap);
        (void)control_send(conn, j, NULL, 0);
}

void control_reply_error_code(int conn, const char *code, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        json_t *j = error_replyv(fmt, ap);
        va_end(ap);
        json_object_set_new(j, "code", json_string(code));
        (void)control_send(conn, j, NULL, 0);
}
