/* File transfer for long-lived sandboxes: `put`, `get`, `ls` and
 * `snapshot`, each in a thread of the sentry that is confined exactly as
 * the notification workers are (fs_worker_init: its own fs context
 * chrooted into the view's root, the sandbox's fsuid/fsgid) and then drops
 * even CAP_SYS_PTRACE (xfer_confine, confined.c), so every path is resolved by the kernel inside the
 * view and every permission is checked as the sandbox's own user's:
 * read-only and hidden paths, the disk quota and the sandbox's symlinks all
 * hold, and a symlink to /etc/shadow reads the view's (masked) file.
 *
 * The host side of a transfer is always an fd the client opened itself and
 * passed over the control socket: the sentry never opens a host path on a
 * sandbox's behalf. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "fs/fs.h"
#include "sentry/sandbox/sandbox-internal.h"

#define LS_MAX_ENTRIES 100000
#define LS_BATCH       256

static atomic_int active;

int xfer_active(void)
{
        return atomic_load(&active);
}

static void xfer_free(struct xfer *x)
{
        if (x->conn >= 0)
                close(x->conn);
        if (x->fd >= 0)
                close(x->fd);
        if (x->done_fd >= 0)
                close(x->done_fd);
        if (x->upper_fd >= 0)
                close(x->upper_fd);
        free(x->op);
        free(x->path);
        free(x->extra_json);
        free(x);
}

static const char *type_name(mode_t m)
{
        return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "symlink" : "other";
}

/* A path that could not be opened in the view: the reply, with the code a
 * client acts on where there is one. */
static json_t *open_error(const struct xfer *x, int r)
{
        json_t *j = error_reply("%s: %s", x->path, strerror(-r));
        if (r == -ENOENT || r == -ENOTDIR)
                json_object_set_new(j, "code", json_string(SANDBOX_ERR_NOT_FOUND));
        else if (r == -EACCES || r == -EPERM || r == -EROFS) /* a path the view forbids: read-only is one */
                json_object_set_new(j, "code", json_string(SANDBOX_ERR_DENIED));
        return j;
}

/* A copy that failed (-errno): the reply, with the code a client acts on
 * where there is one (a put over the disk limit). */
static json_t *copy_error(const struct xfer *x, int64_t r)
{
        json_t *j = error_reply("%s: %s", x->path, strerror((int)-r));
        if (r == -ENOSPC || r == -EDQUOT)
                json_object_set_new(j, "code", json_string(SANDBOX_ERR_NO_SPACE));
        return j;
}

/* A put whose client named its length got all of it: a stream (the API's
 * upload, a pipe) that ends short is its client gone, not the file's end. */
static bool put_complete(const struct xfer *x, int64_t n)
{
        return x->size < 0 || n == x->size;
}

static json_t *short_put(const struct xfer *x, int64_t n)
{
        json_t *j = error_reply("%s: the upload ended after %lld of its %lld bytes", x->path, (long long)n,
                                (long long)x->size);
        json_object_set_new(j, "code", json_string(SANDBOX_ERR_SHORT));
        return j;
}

/* put and get: x->path in the view, opened with flags (and mode), must be
 * a regular file; the client's file is copied into it (put) or it into the
 * client's file (get). */
static json_t *copy_regular(struct xfer *x, int flags, mode_t mode, bool put)
{
        int fd = xfer_open(x->path, flags, mode);
        if (fd < 0)
                return open_error(x, fd);
        _cleanup_close_ int file = fd;
        struct stat st;
        if (fstat(file, &st) < 0 || !S_ISREG(st.st_mode))
                return error_reply("%s: not a regular file in the sandbox", x->path);
        fcntl(file, F_SETFL, 0);
        int64_t n = put ? copy_all(x->fd, file) : copy_all(file, x->fd);
        if (n < 0)
                return copy_error(x, n);
        if (put && !put_complete(x, n))
                return short_put(x, n);
        return json_pack("{s:b, s:I}", "ok", 1, "bytes", (json_int_t)n);
}

/* At a confirming stream's end: tells the client how many bytes came and
 * waits (10 s at most) for its {"commit": true}. A client killed with its
 * producer (Ctrl-C on `producer | cordon sandbox put ID - PATH`: the
 * stream's end is the producer's death) never answers, and its upload is
 * dropped: a truncated stream must not land as if whole. 0, or -errno. */
static int confirm_end(const struct xfer *x, int64_t n)
{
        json_t *rep = NULL;
        struct timeval tv = {10, 0};
        (void)setsockopt(x->conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        int r = control_send(x->conn, json_pack("{s:{s:I}}", "progress", "end", (json_int_t)n), NULL, 0);
        if (r >= 0)
                r = control_recv(x->conn, &rep, NULL, 0);
        bool ok = r > 0 && json_is_true(json_object_get(rep, "commit"));
        json_decref(rep);
        return ok ? 0 : -ECONNRESET;
}

static json_t *client_gone(const struct xfer *x)
{
        json_t *j = error_reply("%s: the client went away before the upload's end; nothing was written", x->path);
        json_object_set_new(j, "code", json_string(SANDBOX_ERR_SHORT));
        return j;
}

/* put: the client's file lands whole or not at all. It is written to a new
 * file beside the target and renamed over it once complete, so a put that
 * fails (the disk limit, the client gone) leaves neither a partial file nor
 * a truncated old one. A target that is a symlink is written through in
 * place, as before (where it leads is the sandbox's to say). */
static json_t *do_put(struct xfer *x)
{
        mode_t mode = x->mode > 0 ? (mode_t)x->mode & 0777 : 0644;
        const int in_place = O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_NOCTTY;
        const char *slash = strrchr(x->path, '/');
        const char *base = slash ? slash + 1 : x->path;
        if (!slash || !*base || streq(base, ".") || streq(base, ".."))
                return copy_regular(x, in_place, mode, true);
        _cleanup_free_ char *dir = slash == x->path ? xstrdup("/") : strndup(x->path, (size_t)(slash - x->path));
        if (!dir)
                oom();
        int d = xfer_open(dir, O_PATH | O_DIRECTORY, 0);
        if (d < 0)
                return open_error(x, d);
        _cleanup_close_ int dfd = d;
        struct stat st;
        if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (S_ISLNK(st.st_mode))
                        return copy_regular(x, in_place, mode, true);
                if (S_ISDIR(st.st_mode))
                        return open_error(x, -EISDIR);
                if (!S_ISREG(st.st_mode))
                        return error_reply("%s: not a regular file in the sandbox", x->path);
        } else if (errno != ENOENT)
                return open_error(x, negative_errno());
        char tmp[64];
        int fd = -1;
        for (int i = 0; i < 16 && fd < 0; i++) {
                uint32_t rnd;
                if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
                        rnd = (uint32_t)random();
                snprintf(tmp, sizeof(tmp), ".cordon-put-%08x", rnd);
                fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, mode);
                if (fd < 0 && errno != EEXIST)
                        return open_error(x, negative_errno());
        }
        if (fd < 0)
                return open_error(x, -EEXIST);
        _cleanup_close_ int file = fd;
        /* a client that confirms the end sends nothing meanwhile: anything
         * on its connection is its close, and the copy stops at once (a
         * client killed while its producer goes on writing) */
        int64_t n = copy_all_watched(x->fd, file, x->confirm_end ? x->conn : -1);
        if (n >= 0 && x->confirm_end && confirm_end(x, n) < 0)
                n = -ECONNRESET;
        if (n < 0 || !put_complete(x, n)) {
                (void)unlinkat(dfd, tmp, 0);
                return n == -ECONNRESET && x->confirm_end ? client_gone(x) : n < 0 ? copy_error(x, n) : short_put(x, n);
        }
        if (renameat(dfd, tmp, dfd, base) < 0) {
                int r = negative_errno();
                (void)unlinkat(dfd, tmp, 0);
                return open_error(x, r);
        }
        return json_pack("{s:b, s:I}", "ok", 1, "bytes", (json_int_t)n);
}

static json_t *do_get(struct xfer *x)
{
        return copy_regular(x, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, false);
}

static json_t *entry_json(const char *name, const struct stat *st)
{
        return json_pack("{s:o, s:s, s:I, s:i}", "name", json_text(name, strlen(name)), "type", type_name(st->st_mode),
                         "size", (json_int_t)st->st_size, "mode", (int)(st->st_mode & 07777));
}

static json_t *do_ls(struct xfer *x)
{
        int fd = xfer_open(x->path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
        if (fd < 0)
                return open_error(x, fd);
        struct stat st;
        if (fstat(fd, &st) < 0) {
                close(fd);
                return error_reply("%s: %s", x->path, strerror(errno));
        }
        if (!S_ISDIR(st.st_mode)) {
                close(fd);
                const char *base = strrchr(x->path, '/');
                json_t *batch = json_pack("{s:[o]}", "entries", entry_json(base ? base + 1 : x->path, &st));
                (void)control_send(x->conn, batch, NULL, 0);
                /* "dir": false tells a listing of one file from a directory holding one */
                return json_pack("{s:b, s:i, s:b}", "ok", 1, "count", 1, "dir", 0);
        }
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return error_reply("%s: %s", x->path, strerror(errno));
        }
        json_t *batch = json_array();
        int count = 0;
        size_t bytes = 0;
        bool truncated = false;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (count >= LS_MAX_ENTRIES) {
                        truncated = true;
                        break;
                }
                struct stat est;
                if (fstatat(dirfd(d), de->d_name, &est, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                json_array_append_new(batch, entry_json(de->d_name, &est));
                count++;
                /* a message stays well below CONTROL_MAX_MSG: a name can
                 * grow six-fold when escaped */
                bytes += 6 * strlen(de->d_name) + 100;
                if (json_array_size(batch) == LS_BATCH || bytes > CONTROL_MAX_MSG / 2) {
                        if (control_send(x->conn, json_pack("{s:o}", "entries", batch), NULL, 0) < 0) {
                                closedir(d);
                                return error_reply("%s: cannot send the listing", x->path);
                        }
                        batch = json_array();
                        bytes = 0;
                }
        }
        closedir(d);
        if (json_array_size(batch) > 0)
                (void)control_send(x->conn, json_pack("{s:o}", "entries", batch), NULL, 0);
        else
                json_decref(batch);
        return json_pack("{s:b, s:i, s:b, s:b}", "ok", 1, "count", count, "truncated", truncated, "dir", 1);
}

/* Before a snapshot's thread is confined: for a template root, the
 * template's path and digest go into the archive's record, and the
 * overlay's upper directory is opened (from the writable layer's root,
 * which init handed the sentry; the view does not show it). */
static int snapshot_prepare(struct xfer *x, json_t **ret_error)
{
        struct sandbox_state *st = x->st;
        char digest[FS_DIGEST_SIZE], err[512] = "";
        int r = snapshot_template_digest(st, digest, err, sizeof(err));
        if (r == -ENOENT)
                return 0; /* the default root: its layer directories say all */
        if (r < 0) {
                *ret_error =
                        error_reply("snapshot: cannot compute the template's digest: %s", err[0] ? err : strerror(-r));
                return r;
        }
        if (st->layer_fd < 0 ||
            (x->upper_fd = openat(st->layer_fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
                *ret_error = error_reply("snapshot: cannot open the template root's upper layer: %s",
                                         strerror(st->layer_fd < 0 ? EBADF : errno));
                return -EIO;
        }
        json_error_t jerr;
        json_t *extra = json_loads(x->extra_json ? x->extra_json : "{}", 0, &jerr);
        if (!extra)
                extra = json_object();
        json_object_set_new(extra, "template",
                            json_pack("{s:s, s:s}", "path", st->plan->view.template_path, "digest", digest));
        free(x->extra_json);
        x->extra_json = json_dumps(extra, JSON_INDENT(2) | JSON_SORT_KEYS);
        json_decref(extra);
        return 0;
}

static void *xfer_thread(void *arg)
{
        struct xfer *x = arg;
        json_t *res = NULL;
        int r = streq(x->op, "snapshot") ? snapshot_prepare(x, &res) : 0; /* on failure res says why */
        if (r >= 0 && (r = xfer_confine(&x->st->fsctx)) < 0)
                res = error_reply("cannot enter the sandbox's view: %s", strerror(-r));
        if (r >= 0)
                res = streq(x->op, "put")   ? do_put(x)
                      : streq(x->op, "get") ? do_get(x)
                      : streq(x->op, "ls")  ? do_ls(x)
                                            : snapshot_write(x);
        /* the result as an event, through the serve loop (which owns the
         * events file): one write below PIPE_BUF, so lines never mix */
        json_t *ev = json_pack("{s:s, s:s}", "op", x->op, "path", x->path);
        const char *k;
        json_t *v;
        json_object_foreach(res, k, v)
        {
                if (streq(k, "error") && json_string_length(v) > 1024)
                        continue;
                json_object_set(ev, k, v);
        }
        char *line = json_dumps(ev, JSON_COMPACT);
        json_decref(ev);
        if (line && strlen(line) < 4000) {
                size_t n = strlen(line);
                line[n] = '\n';
                (void)!write(x->done_fd, line, n + 1);
        }
        free(line);
        (void)control_send(x->conn, res, NULL, 0);
        xfer_free(x);
        atomic_fetch_sub(&active, 1);
        return NULL;
}

int xfer_start(struct xfer *x)
{
        pthread_attr_t a;
        pthread_t t;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        atomic_fetch_add(&active, 1);
        int r = pthread_create(&t, &a, xfer_thread, x);
        pthread_attr_destroy(&a);
        if (r != 0) {
                atomic_fetch_sub(&active, 1);
                xfer_free(x);
                return -r;
        }
        return 0;
}
