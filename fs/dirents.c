/* Directory listings under a hidden rule: a hidden path must look absent
 * (ENOENT to every path call, see resolve.c), and that includes its name in
 * its parent's listing. getdents64(2) and getdents(2) are served on a
 * duplicate of the child's own directory fd (the same open file, so the
 * position the kernel keeps moves as it would), and the entries whose path
 * in the view is hidden are dropped before the rest is copied out. Trapped
 * only when the policy hides something (or with --trap-all). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

/* what one call reads at most: more than any libc asks for (glibc: 32 KiB) */
#define DIRENT_BUF (64 * 1024)

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

struct dirent64_hdr {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

/* The old getdents(2) record: the type sits in the last byte of the record. */
struct dirent_old_hdr {
        unsigned long d_ino;
        unsigned long d_off;
        unsigned short d_reclen;
        char d_name[];
};

static bool hidden_entry(const struct fs_context *ctx, const char *dir, const char *name)
{
        if (!dir || streq(name, ".") || streq(name, ".."))
                return false; /* (no dir: deeper than any rule can name) */
        char path[PATH_MAX];
        int n = snprintf(path, sizeof(path), "%s/%s", streq(dir, "/") ? "" : dir, name);
        if (n < 0 || (size_t)n >= sizeof(path))
                return false; /* deeper than any rule can name */
        return fs_rules_hide(ctx->rules, ctx->n_rules, path);
}

/* Copies the entries of in[0..n) that are not hidden into out (capacity
 * cap), as getdents64 records or, for old, as getdents records. Returns the
 * bytes written, or -EINVAL when not even the first kept entry fits (the
 * kernel's answer for a buffer too small). */
static ssize_t filter(const struct fs_context *ctx, const char *dir, const char *in, size_t n, char *out, size_t cap,
                      bool old)
{
        size_t o = 0;
        for (size_t i = 0; i < n;) {
                const struct dirent64_hdr *e = (const void *)(in + i);
                if (e->d_reclen == 0 || i + e->d_reclen > n)
                        break;
                i += e->d_reclen;
                if (hidden_entry(ctx, dir, e->d_name))
                        continue;
                size_t namelen = strlen(e->d_name);
                size_t len = old ? ALIGN8(offsetof(struct dirent_old_hdr, d_name) + namelen + 2) : e->d_reclen;
                if (o + len > cap)
                        return o ? (ssize_t)o : -EINVAL;
                if (old) {
                        struct dirent_old_hdr *r = (void *)(out + o);
                        memset(r, 0, len);
                        r->d_ino = (unsigned long)e->d_ino;
                        r->d_off = (unsigned long)e->d_off;
                        r->d_reclen = (unsigned short)len;
                        memcpy(r->d_name, e->d_name, namelen + 1);
                        out[o + len - 1] = (char)e->d_type;
                } else
                        memcpy(out + o, e, len);
                o += len;
        }
        return (ssize_t)o;
}

int fs_handle_getdents(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        const struct fs_context *ctx = call->userdata;
        bool old = d->nr == SYS_getdents;
        size_t count = (size_t)(uint32_t)d->args[2];
        ret->kind = VERDICT_ERROR;

        _cleanup_close_ int fd = notify_dup_child_fd(call, (int)d->args[0]);
        if (fd < 0) {
                ret->error = -fd;
                return 0;
        }
        char dir[PATH_MAX];
        int r = fs_view_path(call->hostproc_fd, fd, dir, sizeof(dir));
        /* A directory whose path fills PATH_MAX (a deep tree, which rm -r
         * and shutil.rmtree walk by fds) holds entries deeper than any
         * rule can name, as hidden_entry says of a long entry: nothing in
         * it is hidden. (A directory beneath a hidden one is never
         * reached: every path call refuses the hidden one.) */
        bool deep = r == -ENAMETOOLONG;
        if (!deep && (r < 0 || dir[0] != '/')) {
                /* where the listing is cannot be learned: fail closed, as
                 * every hidden-rule check does */
                ret->error = EACCES;
                return 0;
        }

        size_t want = count < DIRENT_BUF ? count : DIRENT_BUF;
        _cleanup_free_ char *in = xmalloc(DIRENT_BUF), *out = xmalloc(want ? want : 1);
        ssize_t got;
        for (;;) {
                /* an old record is as long as the new one for the same name
                 * (both 20 bytes and the name, aligned to 8): what is read
                 * into want bytes always fits back into want bytes */
                long n = syscall(SYS_getdents64, fd, in, want);
                if (n < 0) {
                        ret->error = errno;
                        return 0;
                }
                if (n == 0) {
                        got = 0;
                        break;
                }
                got = filter(ctx, deep ? NULL : dir, in, (size_t)n, out, want, old);
                if (got != 0)
                        break;
                /* everything read was hidden: read on, as if it were absent */
        }
        if (got < 0) {
                ret->error = (int)-got;
                return 0;
        }
        r = notify_write_mem(call, d->args[1], out, (size_t)got);
        if (r < 0) {
                ret->error = r == -ESRCH ? ENOENT : -r;
                return 0;
        }
        ret->kind = VERDICT_VALUE;
        ret->value = got;
        return 0;
}
