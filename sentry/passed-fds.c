/* What a caller hands a sandbox of its own: the command's stdin, stdout and
 * stderr (cordon run's, a sandbox run's), checked before they are passed
 * in (sentry.h, check_passed_fds). */
#include "config.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "sentry/sentry-internal.h"

/* A directory (or O_PATH) fd handed in as stdin/stdout/stderr would be a
 * way out of the view: openat(0, "../..") or fchdir(0) starts a walk the
 * view's root never bounds (runc's CVE-2024-21626 is this class). Such a
 * request is refused rather than silently changed. */
int check_passed_fds(const int fds[3], char *why, size_t size)
{
        for (int i = 0; i <= 2; i++) {
                int fd = fds[i];
                struct stat st;
                if (fd < 0)
                        continue;
                int fl = fcntl(fd, F_GETFL);
                if (fl < 0)
                        continue; /* closed: fine */
                int domain = 0, type = 0;
                socklen_t l = sizeof(int);
                if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
                    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) == 0) {
                        l = sizeof(int);
                        (void)getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l);
                        /* A host socket may be passed in only where it cannot be
                         * aimed: connected-stream kinds ignore or refuse an
                         * address. A unix datagram or an inet datagram socket
                         * would send wherever msg_name says, in the host's
                         * namespaces, and the gate lets an address-less
                         * sendmsg run without looking at the socket. */
                        bool stream = type == SOCK_STREAM || (domain == AF_UNIX && type == SOCK_SEQPACKET);
                        if (!stream || (domain != AF_UNIX && domain != AF_INET && domain != AF_INET6)) {
                                snprintf(why, size,
                                         "%s is a host socket of family %d type %d; only unix stream and TCP sockets "
                                         "may be passed in",
                                         i == 0   ? "stdin"
                                         : i == 1 ? "stdout"
                                                  : "stderr",
                                         domain, type);
                                return -EBADF;
                        }
                }
                if ((fl & O_PATH) || (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))) {
                        snprintf(why, size,
                                 "%s is a directory or O_PATH descriptor; it would let the command walk "
                                 "out of its view, so cordon refuses to pass it in",
                                 i == 0   ? "stdin"
                                 : i == 1 ? "stdout"
                                          : "stderr");
                        return -EBADF;
                }
        }
        return 0;
}

/* An anonymous pipe handed in as stdin, stdout or stderr belongs to its
 * maker on the host (cordon's caller), mode 0600: inside the sandbox's user
 * namespace that owner is unmapped, so the command's reopen of it through
 * /proc/self/fd (/dev/stdin, /dev/stdout, `tee /dev/stderr`), which works
 * natively, would fail with EACCES. Read and write for others are added to
 * such a pipe, as runc's fixStdioPermissions chowns the container's stdio
 * to its user. Safe: an anonymous pipe has no name; it can be reached only
 * through /proc/PID/fd of a process holding it, which needs ptrace access
 * to that process (the command's own, or one that already holds the pipe).
 * Named FIFOs, files and terminals keep their modes. Best effort: a pipe
 * that cannot be changed stays as it was. */
void open_passed_pipes(const int fds[3])
{
        for (int i = 0; i <= 2; i++) {
                struct stat st;
                struct statfs sfs;
                if (fds[i] < 0 || fstat(fds[i], &st) < 0 || !S_ISFIFO(st.st_mode) || fstatfs(fds[i], &sfs) < 0 ||
                    sfs.f_type != PIPEFS_MAGIC)
                        continue;
                if ((st.st_mode & (S_IROTH | S_IWOTH)) != (S_IROTH | S_IWOTH))
                        (void)fchmod(fds[i], (st.st_mode & 07777) | S_IROTH | S_IWOTH);
        }
}
