/* An unprivileged caller's /etc/subuid and /etc/subgid ranges: found as
 * shadow's newuidmap reads them, and written into the sentry's own user
 * namespace by newuidmap and newgidmap, run from the host's namespace by a
 * helper forked before the sentry's unshare (userns.c). With them the
 * sandbox has ids 0-65535, the caller at its own number; without them (or
 * when a tool fails) the caller's one id, and the reason is kept for -v. */
#include "config.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <sys/wait.h>

#include "sentry/sentry-internal.h"

#define NEWUIDMAP "/usr/bin/newuidmap"
#define NEWGIDMAP "/usr/bin/newgidmap"

/* The first entry of FILE for NAME or the numeric ID with SUBID_COUNT ids
 * or more: 1 (*ret_start set), else 0 with *ret_short when the owner has
 * only smaller entries, or a negative errno when the file is unreadable. */
static int find_range(const char *file, const char *name, uint32_t id, uint32_t *ret_start, bool *ret_short)
{
        _cleanup_fclose_ FILE *f = fopen(file, "re");
        if (!f)
                return negative_errno();
        char num[16], line[512];
        snprintf(num, sizeof(num), "%u", id);
        *ret_short = false;
        while (fgets(line, sizeof(line), f)) {
                char *owner = line, *start = strchr(line, ':'), *count = start ? strchr(start + 1, ':') : NULL;
                if (!count)
                        continue;
                *start++ = '\0';
                *count++ = '\0';
                if (!(name && streq(owner, name)) && !streq(owner, num))
                        continue;
                char *e1, *e2;
                errno = 0;
                unsigned long s = strtoul(start, &e1, 10), c = strtoul(count, &e2, 10);
                if (errno || e1 == start || *e1 || e2 == count || (*e2 && *e2 != '\n') || s > UINT32_MAX ||
                    c > UINT32_MAX || s + c > UINT32_MAX)
                        continue;
                if (c < SUBID_COUNT) {
                        *ret_short = true;
                        continue;
                }
                *ret_start = (uint32_t)s;
                return 1;
        }
        return 0;
}

/* "PROG PID" and the map's lines: inside 0..65535 from the range in
 * order, but POS, which is the caller's OWN id. */
static void map_argv(struct subid_argv *a, const char *prog, uint32_t pos, uint32_t own, uint32_t start)
{
        size_t n = 0, k = 0;
        a->argv[n++] = (char *)prog;
        a->argv[n++] = a->pid; /* filled in once the target is known */
        uint32_t lines[3][3] = {{0, start, pos}, {pos, own, 1}, {pos + 1, start + pos + 1, SUBID_COUNT - pos - 1}};
        for (size_t i = 0; i < 3; i++) {
                if (lines[i][2] == 0)
                        continue;
                for (size_t j = 0; j < 3; j++) {
                        snprintf(a->num[k], sizeof(a->num[k]), "%u", lines[i][j]);
                        a->argv[n++] = a->num[k++];
                }
        }
        a->argv[n] = NULL;
}

static void why(struct subid_range *s, const char *fmt, ...) _printf_(2, 3);
static void why(struct subid_range *s, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->why, sizeof(s->why), fmt, ap);
        va_end(ap);
}

/* Runs one tool, its stderr to errfd; async-signal-safe (the helper is a
 * fork of a process that may have had threads). */
static bool run_tool(char **argv, int errfd)
{
        pid_t pid = fork();
        if (pid < 0)
                return false;
        if (pid == 0) {
                static char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
                if (dup2(errfd, STDERR_FILENO) < 0)
                        _exit(127);
                execve(argv[0], argv, envp);
                _exit(127);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return false;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void subid_prepare(uid_t uid, gid_t gid, uint32_t uid_pos, uint32_t gid_pos, struct subid_range *s,
                   struct subid_helper *h)
{
        *s = (struct subid_range){.caller_uid = uid, .caller_gid = gid, .uid_pos = uid_pos, .gid_pos = gid_pos};
        *h = (struct subid_helper){.pid = -1, .go = -1, .err = -1};
        struct passwd *pw = getpwuid(uid);
        const char *name = pw ? pw->pw_name : NULL;
        _cleanup_free_ char *who = name ? xasprintf("%s (uid %u)", name, uid) : xasprintf("uid %u", uid);
        if (uid_pos >= SUBID_COUNT || gid_pos >= SUBID_COUNT) {
                why(s, "the command's ids %u:%u are not below %u, the range's size", uid_pos, gid_pos, SUBID_COUNT);
                return;
        }
        static const char *const files[2] = {"/etc/subuid", "/etc/subgid"};
        uint32_t *starts[2] = {&s->uid_start, &s->gid_start};
        for (size_t i = 0; i < 2; i++) {
                bool short_range;
                int r = find_range(files[i], name, i ? gid : uid, starts[i], &short_range);
                if (r < 0) {
                        why(s, "%s: %s", files[i], strerror(-r));
                        return;
                }
                if (r == 0) {
                        why(s, short_range ? "%s's entries for %s have fewer than %u ids" : "no entry for %s in %s",
                            short_range ? files[i] : who, short_range ? who : files[i], SUBID_COUNT);
                        return;
                }
        }
        if (access(NEWUIDMAP, X_OK) < 0 || access(NEWGIDMAP, X_OK) < 0) {
                why(s, "no %s and %s (the uidmap package)", NEWUIDMAP, NEWGIDMAP);
                return;
        }
        map_argv(&h->uidmap, NEWUIDMAP, uid_pos, uid, s->uid_start);
        map_argv(&h->gidmap, NEWGIDMAP, gid_pos, gid, s->gid_start);
        snprintf(h->uidmap.pid, sizeof(h->uidmap.pid), "%d", (int)getpid());
        memcpy(h->gidmap.pid, h->uidmap.pid, sizeof(h->gidmap.pid));

        int go[2], err[2];
        if (pipe2(go, O_CLOEXEC) < 0) {
                why(s, "cannot make a pipe for the newuidmap helper: %m");
                return;
        }
        if (pipe2(err, O_CLOEXEC) < 0) {
                why(s, "cannot make a pipe for the newuidmap helper: %m");
                close(go[0]);
                close(go[1]);
                return;
        }
        pid_t pid = fork();
        if (pid < 0) {
                why(s, "cannot fork the newuidmap helper: %m");
                close(go[0]);
                close(go[1]);
                close(err[0]);
                close(err[1]);
                return;
        }
        if (pid == 0) {
                /* in the host's namespace still: waits for the sentry's
                 * unshare, then maps it (gids first: a gid map alone is
                 * still usable, see subid_finish) */
                char c;
                close(go[1]);
                close(err[0]);
                if (read(go[0], &c, 1) != 1)
                        _exit(3);
                if (!run_tool(h->gidmap.argv, err[1]))
                        _exit(1);
                if (!run_tool(h->uidmap.argv, err[1]))
                        _exit(2);
                _exit(0);
        }
        close(go[0]);
        close(err[1]);
        h->pid = pid;
        h->go = go[1];
        h->err = err[0];
}

/* Whether this process's map file has been written (it reads empty before). */
static bool map_written(const char *path)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        char c;
        return fd >= 0 && read(fd, &c, 1) == 1;
}

int subid_finish(struct subid_helper *h, bool unshared, struct subid_range *s)
{
        if (h->pid < 0)
                return 0;
        if (unshared && write(h->go, "x", 1) != 1)
                unshared = false;
        close(h->go);
        int status = 0;
        while (waitpid(h->pid, &status, 0) < 0)
                if (errno != EINTR) {
                        status = -1;
                        break;
                }
        char msg[512];
        size_t n = 0;
        ssize_t k;
        while (n < sizeof(msg) - 1 && (k = read(h->err, msg + n, sizeof(msg) - 1 - n)) != 0)
                if (k > 0)
                        n += (size_t)k;
                else if (errno != EINTR)
                        break;
        close(h->err);
        h->pid = -1;
        if (!unshared)
                return 0;
        /* what was written, from the maps themselves: the helper's status
         * is lost where SIGCHLD came ignored from our caller (the kernel
         * then reaps it, and waitpid fails) */
        int written = (map_written("/proc/self/uid_map") ? SUBID_UID : 0) |
                      (map_written("/proc/self/gid_map") ? SUBID_GID : 0);
        int code = status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        if (written == (SUBID_UID | SUBID_GID)) {
                s->used = true;
                return written;
        }
        /* the tool's last line says why */
        msg[n] = '\0';
        while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
                msg[--n] = '\0';
        char *last = strrchr(msg, '\n');
        last = last ? last + 1 : msg;
        const char *tool = code == 2 ? "newuidmap" : "newgidmap";
        if (code == 1 || code == 2)
                why(s, "%s failed%s%s", tool, *last ? ": " : "", last);
        else
                why(s, "the newuidmap helper failed (status %d)%s%s", status, *last ? ": " : "", last);
        return written;
}
