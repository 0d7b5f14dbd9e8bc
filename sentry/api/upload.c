/* A file uploaded into a sandbox as it arrives (PUT .../files?path=P): the
 * body never waits whole in the server's memory, so its size is the
 * sandbox's disk limit's to bound, not the server's. The request is
 * admitted (who asks, for which sandbox) once its headers are in; the
 * sandbox's put transfer then starts with a pipe as the client's file and
 * the body's Content-Length as its length; each piece of the body goes into
 * the pipe as it comes (this connection's own thread waits while the
 * sandbox writes); the reply is the transfer's. A request cut short ends the
 * pipe before that length, which the transfer takes for a client gone:
 * nothing lands, and the old file stays whole (sentry/sandbox/transfer.c). */
#include "config.h"

#include <fcntl.h>

#include "sentry/api/api-internal.h"

/* ?mode=0644: octal, at most 0777; 0644 when absent. -1 when bad. */
static int query_mode(const char *s)
{
        if (!s)
                return 0644;
        if (!*s || strlen(s) > 4 || s[strspn(s, "01234567")])
                return -1;
        long m = strtol(s, NULL, 8);
        return m <= 0777 ? (int)m : -1;
}

int api_upload_begin(struct api_req *r, const char *content_length, enum MHD_Result *ret_q)
{
        const char *path = api_query(r, "path");
        if (!api_path_ok(path)) {
                *ret_q = api_error(r, 400, "invalid_field", "path",
                                   "path: expected ?path=/ABSOLUTE/PATH in the sandbox");
                return -EINVAL;
        }
        int mode = query_mode(api_query(r, "mode"));
        if (mode < 0) {
                *ret_q = api_error(r, 400, "invalid_field", "mode", "mode: expected an octal file mode from 0 to 0777");
                return -EINVAL;
        }
        /* the length is what tells a whole file from a client gone */
        if (!content_length) {
                *ret_q = api_error(r, 411, "length_required", NULL,
                                   "PUT .../files needs a Content-Length (the file's size), not a chunked body");
                return -EINVAL;
        }
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) {
                *ret_q = api_error(r, 500, "internal", NULL, "cannot make a pipe: %m");
                return -errno;
        }
        int conn = -1;
        int c = control_connect(r->params[0], &conn);
        if (c >= 0)
                c = control_send(conn,
                                 json_pack("{s:s, s:s, s:i, s:I}", "op", "put", "path", path, "mode", mode, "size",
                                           (json_int_t)strtoull(content_length, NULL, 10)),
                                 &p[0], 1);
        close(p[0]);
        if (c < 0) {
                close(p[1]);
                if (conn >= 0)
                        close(conn);
                *ret_q = api_sandbox_error(r, r->params[0], c == -EINVAL || c == -ENOENT ? c : -EIO, NULL);
                return c;
        }
        r->up_pipe = p[1];
        r->up_conn = conn;
        return 0;
}

void api_upload_data(struct api_req *r, const char *data, size_t n)
{
        r->up_got += n;
        /* the transfer ended early (it failed: the path, the disk limit):
         * the rest of the body is read and dropped, the reply says why */
        if (r->up_pipe < 0)
                return;
        if (write_all(r->up_pipe, data, n) < 0)
                api_upload_abort(r, false);
}

void api_upload_abort(struct api_req *r, bool conn_too)
{
        if (r->up_pipe >= 0)
                close(r->up_pipe);
        r->up_pipe = -1;
        if (conn_too && r->up_conn >= 0) {
                close(r->up_conn);
                r->up_conn = -1;
        }
}

enum MHD_Result api_files_put(struct api_req *r)
{
        /* the body's end: the transfer sees the pipe's end and answers */
        api_upload_abort(r, false);
        json_t *rep = NULL;
        int c = r->up_conn >= 0 ? control_recv(r->up_conn, &rep, NULL, 0) : -EBADF;
        api_upload_abort(r, true);
        if (c <= 0)
                return api_error(r, 503, "unavailable", NULL, "sandbox %s: its sentry went away during the upload",
                                 r->params[0]);
        if (json_object_get(rep, "error")) {
                enum MHD_Result q = api_sandbox_error(r, r->params[0], 0, rep);
                json_decref(rep);
                return q;
        }
        json_int_t bytes = json_integer_value(json_object_get(rep, "bytes"));
        json_decref(rep);
        return api_reply_json(r, 200, json_pack("{s:s, s:I}", "path", api_query(r, "path"), "size", bytes));
}
