/* The namespaces an OCI container joins instead of creating (struct
 * oci_sandbox's join[]: a CNI pod network, a podman network, a pod's ipc
 * and uts): opened again by the sentry, checked to be still the namespace
 * the OCI front checked, and entered by the sentry's main thread for the
 * clone of init alone, which inherits them; the thread then returns to its
 * own. */
#include "config.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>

#include "sentry/sentry-internal.h"

static const struct {
        int type;
        const char *name;
} join_kinds[OCI_JOIN_KINDS] = {
        [OCI_JOIN_NET] = {CLONE_NEWNET, "net"},
        [OCI_JOIN_IPC] = {CLONE_NEWIPC, "ipc"},
        [OCI_JOIN_UTS] = {CLONE_NEWUTS, "uts"},
};

void join_leave(int saved[OCI_JOIN_KINDS])
{
        for (size_t k = 0; k < OCI_JOIN_KINDS; k++) {
                if (saved[k] < 0)
                        continue;
                /* back to the sentry's own (the host's): what it makes from
                 * here on, but the gate's upstream sockets, lives there */
                if (setns(saved[k], join_kinds[k].type) < 0)
                        abort(); /* a sentry left in a sandbox's namespace must not go on */
                close(saved[k]);
                saved[k] = -1;
        }
}

int join_enter(const struct oci_sandbox *oci, unsigned long *flags, int saved[OCI_JOIN_KINDS], char *why, size_t size)
{
        for (size_t k = 0; k < OCI_JOIN_KINDS; k++)
                saved[k] = -1;
        if (!oci)
                return 0;
        for (size_t k = 0; k < OCI_JOIN_KINDS; k++) {
                const struct oci_join *j = &oci->join[k];
                if (!j->path)
                        continue;
                char self[64];
                snprintf(self, sizeof(self), "/proc/thread-self/ns/%s", join_kinds[k].name);
                _cleanup_close_ int fd = open(j->path, O_RDONLY | O_CLOEXEC);
                struct stat st;
                int r = fd < 0 || fstat(fd, &st) < 0 ? negative_errno() : 0;
                /* the namespace the front checked, not whatever the path
                 * names now (a pid reused, a file replaced) */
                if (r == 0 && ((uint64_t)st.st_dev != j->dev || (uint64_t)st.st_ino != j->ino))
                        r = -ESTALE;
                if (r == 0 && (saved[k] = open(self, O_RDONLY | O_CLOEXEC)) < 0)
                        r = negative_errno();
                if (r == 0 && setns(fd, join_kinds[k].type) < 0) {
                        r = negative_errno();
                        close(saved[k]);
                        saved[k] = -1;
                }
                if (r < 0) {
                        snprintf(why, size, "cannot join the %s namespace %s: %s", join_kinds[k].name, j->path,
                                 r == -ESTALE ? "it is no longer the namespace that was checked" : strerror(-r));
                        join_leave(saved);
                        return r;
                }
                *flags &= ~(unsigned long)join_kinds[k].type;
        }
        return 0;
}
