/* The pure part of reading what the child hands in: openat2's struct
 * open_how (for open.c) and, for resolve.c, the hidden rules' matching and
 * the rewriting of /proc/self and friends. Functions of the bytes read from
 * the child and nothing else (the two lookups the rewriting needs are
 * parameters), so that a fuzz target can link them alone
 * (tests/fuzz/fuzz-openhow.c). */
#include "config.h"

#include <linux/openat2.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

int fs_open_how_from_bytes(const void *buf, size_t size, struct open_how *ret)
{
        if (size < OPEN_HOW_SIZE_VER0)
                return -EINVAL;
        if (size > OPEN_HOW_SIZE_MAX)
                return -E2BIG;
        struct open_how how = {0};
        memcpy(&how, buf, size < sizeof(how) ? size : sizeof(how));
        /* a larger struct from a newer libc: accepted only if what we do not
         * know is zero, so that no flag we would ignore is silently dropped */
        for (size_t i = sizeof(how); i < size; i++)
                if (((const unsigned char *)buf)[i])
                        return -E2BIG;
        *ret = how;
        return 0;
}

/* A rule's path without trailing slashes ("/" stays "/"). */
static size_t rule_len(const char *p)
{
        size_t n = strlen(p);
        while (n > 1 && p[n - 1] == '/')
                n--;
        return n;
}

const struct fs_rule *fs_rules_match(const struct fs_rule *rules, size_t n, const char *path)
{
        const struct fs_rule *best = NULL;
        size_t best_len = 0;
        for (size_t i = 0; i < n; i++) {
                const char *rp = rules[i].path;
                if (!rp || rp[0] != '/')
                        continue;
                size_t rl = rule_len(rp);
                bool match = rl == 1 || (strncmp(path, rp, rl) == 0 && (path[rl] == '\0' || path[rl] == '/'));
                if (match && (!best || rl >= best_len)) {
                        best = &rules[i];
                        best_len = rl;
                }
        }
        return best;
}

bool fs_rules_hide(const struct fs_rule *rules, size_t n, const char *path)
{
        const struct fs_rule *best = fs_rules_match(rules, n, path);
        return best && best->access == FS_HIDDEN;
}

bool fs_rules_ask(const struct fs_rule *rules, size_t n, const char *capability, const char *path)
{
        const struct fs_rule *best = fs_rules_match(rules, n, path);
        if (!best || !best->ask)
                return false;
        if (streq(capability, "write"))
                return best->access == FS_READ_WRITE;
        if (streq(capability, "exec"))
                return best->exec == 1;
        return false;
}

bool fs_rules_have_hidden(const struct fs_rule *rules, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (rules[i].access == FS_HIDDEN)
                        return true;
        return false;
}

/* /proc/self and friends name the *caller*; resolved by the sentry they would
 * name the sentry (which is not even in the sandbox's pid namespace). Rewrite
 * the well-known spellings to the caller's own pid in its namespace. The bare
 * name is rewritten only when the call follows it (exact): lstat and
 * readlink of "/proc/self" act on the link itself. procfs's own links into
 * self/ (/proc/mounts, /proc/net) and /etc/mtab when it links to them are
 * rewritten too. A relative path or another symlink that reaches /proc/self
 * is not rewritten and fails with ENOENT (a limitation). */
int fs_rewrite_self_with(const char *path, bool exact, fs_ns_ids_fn ns_ids, void *userdata, bool (*mtab_link)(void),
                         char *out, size_t size, bool *ret_changed)
{
        static const struct {
                const char *prefix;
                const char *tail; /* after /proc/<tgid> */
                bool thread;      /* /task/<tid> goes before tail */
        } rules[] = {
                {"/proc/self", "", false},
                {"/proc/thread-self", "", true},
                {"/dev/fd", "/fd", false},
                {"/dev/stdin", "/fd/0", false},
                {"/dev/stdout", "/fd/1", false},
                {"/dev/stderr", "/fd/2", false},
                /* procfs's own links to self/ */
                {"/proc/mounts", "/mounts", false},
                {"/proc/net", "/net", false},
                /* the distributions' link to them (only when it is one, below) */
                {"/etc/mtab", "/mounts", false},
        };
        *ret_changed = false;
        /* Every prefix starts "/proc/", "/dev/fd", "/dev/std" or is
         * "/etc/mtab": most paths are none of these, and this runs on every
         * emulated path call (matching all the rules was 40% of the sentry's
         * instructions per open, bench/callgrind.sh). */
        if (path[0] != '/' || (strncmp(path, "/proc/", 6) != 0 && strncmp(path, "/dev/fd", 7) != 0 &&
                               strncmp(path, "/dev/std", 8) != 0 && strncmp(path, "/etc/mtab", 9) != 0))
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(rules); i++) {
                size_t n = strlen(rules[i].prefix);
                if (strncmp(path, rules[i].prefix, n) != 0 || (path[n] != '\0' && path[n] != '/'))
                        continue;
                if (!exact && path[n] == '\0')
                        return 0; /* the link itself */
                if (streq(rules[i].prefix, "/etc/mtab") && !mtab_link())
                        return 0;
                pid_t nspid, nstgid;
                int r = ns_ids(userdata, &nspid, &nstgid);
                if (r < 0)
                        return r;
                char head[64];
                if (rules[i].thread)
                        snprintf(head, sizeof(head), "/proc/%d/task/%d", (int)nstgid, (int)nspid);
                else
                        snprintf(head, sizeof(head), "/proc/%d%s", (int)nstgid, rules[i].tail);
                if ((size_t)snprintf(out, size, "%s%s", head, path + n) >= size)
                        return -ENAMETOOLONG;
                *ret_changed = true;
                return 0;
        }
        return 0;
}
