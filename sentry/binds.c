/* Read-write binds of a root-started sandbox, from the host's side: each is
 * an idmapped copy of its source, made here (as host root, before init is
 * cloned, which inherits it) through a user namespace of its own whose maps
 * say "the source's owner is the sandbox's root": on-disk OWNER shows as
 * host SANDBOXROOT (uid 0 inside), and what the sandbox root creates is
 * written as OWNER. Any other host id in the bind shows as the overflow id
 * inside and cannot be given to a new file (the kernel's idmapped-mount
 * rules). Read-only binds stay as before: init opens them as the sandbox,
 * and their files show with their host owners unmapped, so a read-only
 * grant of, say, /etc reads only what others may read there. An OCI
 * engine's own read-only binds (podman's -v DIR:/d:ro, a pod's secrets and
 * config maps) are idmapped as its read-write ones are: under runc the
 * container reads them as their owner (host root reads a 0600 key), and
 * the engine, not a policy, granted them; the mount stays read-only. */
#include "config.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "sentry/sentry-internal.h"

static int write_text(pid_t pid, const char *file, const char *text)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return write_all(fd, text, strlen(text));
}

/* A user namespace mapping uid owner to root_uid and gid gowner to
 * root_gid, one id each: a child is cloned into a new one and waits on a
 * pipe while its maps are written and the namespace is opened, then exits.
 * The fd or -errno. */
static int idmap_userns(uid_t owner, uid_t root_uid, gid_t gowner, gid_t root_gid)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
        if (pid == 0) {
                char c;
                close(p[1]);
                (void)!read(p[0], &c, 1);
                _exit(0);
        }
        int r = pid < 0 ? negative_errno() : 0;
        close(p[0]);
        char map[64], path[64];
        int fd = -1;
        if (r == 0) {
                /* "ID-IN-NS ID-OUTSIDE COUNT": the on-disk owner is the id
                 * the mount's namespace maps, to the sandbox root's host id */
                snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)owner, (unsigned)root_uid);
                r = write_text(pid, "uid_map", map);
        }
        if (r == 0) {
                snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gowner, (unsigned)root_gid);
                r = write_text(pid, "gid_map", map);
        }
        if (r == 0) {
                snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                r = fd < 0 ? negative_errno() : 0;
        }
        close(p[1]);
        if (pid > 0)
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        return r < 0 ? r : fd;
}

/* An OCI config's own bind (not the policy's): its target is one of the
 * config's bind mounts' (a target is never both: oci_spec_policy refuses) */
static bool engine_bind(const struct sandbox_plan *plan, const struct fs_bind *b)
{
        for (size_t i = 0; plan->oci && i < plan->oci->n_engine_binds; i++)
                if (streq(plan->oci->engine_binds[i], b->target))
                        return true;
        return false;
}

int bind_trees(struct sandbox_plan *plan, uid_t root_uid, gid_t root_gid)
{
        size_t n = plan->view.n_binds;
        bool any = false;
        for (size_t i = 0; i < n; i++)
                any = any || !plan->binds[i].read_only || engine_bind(plan, &plan->binds[i]);
        if (!any)
                return 0;
        /* an OCI engine's binds are trees the sentry cloned already (the
         * engine's private files, its volumes): the read-write ones are
         * idmapped in place, so that the container's root writes there as
         * the source's owner, as under runc (where it is host root) */
        if (plan->bind_fds) {
                for (size_t i = 0; i < n && i < plan->n_bind_fds; i++) {
                        const struct fs_bind *b = &plan->binds[i];
                        struct stat st;
                        if ((b->read_only && !engine_bind(plan, b)) || plan->bind_fds[i] < 0)
                                continue;
                        int r = fstat(plan->bind_fds[i], &st) < 0 ? negative_errno() : 0;
                        _cleanup_close_ int userns = r < 0 ? r : idmap_userns(st.st_uid, root_uid, st.st_gid, root_gid);
                        r = userns < 0 ? userns : fs_bind_tree_idmap(plan->bind_fds[i], userns);
                        /* a read-only one stays as it was (its files with
                         * their host owners unmapped): stricter, never wider */
                        if (r < 0 && b->read_only)
                                continue;
                        if (r < 0) {
                                fprintf(stderr,
                                        "cordon: cannot make an idmapped mount of the read-write bind %s (on %s): %s "
                                        "(its filesystem may not support idmapped mounts); without one the container "
                                        "would write there as an id that is not the directory's owner, so cordon "
                                        "refuses to start\n",
                                        b->source, b->target, strerror(-r));
                                return r;
                        }
                }
                return 0;
        }
        plan->bind_fds = xcalloc(n, sizeof(int));
        for (size_t i = 0; i < n; i++)
                plan->bind_fds[i] = -1;
        plan->n_bind_fds = n;
        plan->view.bind_fds = plan->bind_fds;
        for (size_t i = 0; i < n; i++) {
                const struct fs_bind *b = &plan->binds[i];
                if (b->read_only)
                        continue;
                /* the caller (root) named this source: opened with its standing */
                _cleanup_close_ int src = open(b->source, O_PATH | O_CLOEXEC);
                struct stat st;
                if (src < 0 || fstat(src, &st) < 0) {
                        int r = negative_errno();
                        fprintf(stderr, "cordon: bind source %s: %s\n", b->source, strerror(-r));
                        return r;
                }
                _cleanup_close_ int userns = idmap_userns(st.st_uid, root_uid, st.st_gid, root_gid);
                int r = userns < 0 ? userns : fs_bind_idmapped(src, userns, &plan->bind_fds[i]);
                if (r < 0) {
                        fprintf(stderr,
                                "cordon: cannot make an idmapped mount of the read-write bind %s (on %s): %s (its "
                                "filesystem may not support idmapped mounts); without one the sandbox would write "
                                "there as an id that is not the directory's owner, so cordon refuses to start\n",
                                b->source, b->target, strerror(-r));
                        return r;
                }
        }
        return 0;
}

void bind_trees_close(struct sandbox_plan *plan)
{
        for (size_t i = 0; i < plan->n_bind_fds; i++)
                if (plan->bind_fds[i] >= 0) {
                        close(plan->bind_fds[i]);
                        plan->bind_fds[i] = -1;
                }
}
