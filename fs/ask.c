/* Writes and execs beneath an "ask" rule: the handler resolves where the
 * call acts (pinned, as every emulated path call is), and if the rule that
 * decides that place asks, the call waits for a person (notify_ask). The
 * decision is on the location the sentry resolved, never on the child's
 * string: when the call is served again after an approval, it is resolved
 * again and proceeds only if it lands on the very path approved. */
#include "config.h"

#include <limits.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

int fs_target_view_path(struct notify_call *call, const struct fs_target *t, char *buf, size_t size)
{
        if (t->fd >= 0)
                return fs_view_path(call->hostproc_fd, t->fd, buf, size);
        char dir[PATH_MAX];
        int r = fs_view_path(call->hostproc_fd, t->dirfd, dir, sizeof(dir));
        if (r < 0)
                return r;
        if (streq(t->name, "/")) {
                snprintf(buf, size, "/");
                return 0;
        }
        size_t nl = strlen(t->name);
        while (nl > 0 && t->name[nl - 1] == '/')
                nl--;
        if (nl == 1 && t->name[0] == '.')
                return snprintf(buf, size, "%s", dir) >= (int)size ? -ENAMETOOLONG : 0;
        int n = snprintf(buf, size, "%s%s%.*s", dir, streq(dir, "/") ? "" : "/", (int)nl, t->name);
        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int fs_ask(struct notify_call *call, const char *capability, const char *path, struct notify_verdict *ret)
{
        struct notify_ask q = {0};
        snprintf(q.capability, sizeof(q.capability), "%s", capability);
        size_t n = strlen(path);
        if (n >= sizeof(q.target))
                n = sizeof(q.target) - 1; /* two long names of a rename: cut, asked as shown */
        memcpy(q.target, path, n);
        return notify_ask(call, &q, ret);
}

int fs_ask_write(struct notify_call *call, const struct fs_target *t, const struct fs_target *t2,
                 struct notify_verdict *ret)
{
        const struct fs_context *ctx = call->userdata;
        if (!ctx->ask_write)
                return 1;
        char a[PATH_MAX], b[PATH_MAX];
        bool ask_a = false, ask_b = false;
        /* a location that cannot be named (longer than PATH_MAX) is not
         * known to be outside the rule: fails closed */
        int r = fs_target_view_path(call, t, a, sizeof(a));
        if (r < 0)
                goto unknown;
        ask_a = fs_rules_ask(ctx->rules, ctx->n_rules, "write", a);
        if (t2) {
                if ((r = fs_target_view_path(call, t2, b, sizeof(b))) < 0)
                        goto unknown;
                ask_b = fs_rules_ask(ctx->rules, ctx->n_rules, "write", b);
        }
        if (!ask_a && !ask_b)
                return 1;
        if (ask_a && ask_b) {
                /* one question for both names (rename, link): one answer */
                char both[2 * PATH_MAX + 8];
                snprintf(both, sizeof(both), "%s -> %s", a, b);
                return fs_ask(call, "write", both, ret);
        }
        return fs_ask(call, "write", ask_a ? a : b, ret);
unknown:
        ret->kind = VERDICT_ERROR;
        ret->error = r == -ENOENT ? EACCES : -r;
        return 0;
}
