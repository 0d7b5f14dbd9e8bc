/* Detects which seccomp user-notification features the running kernel has,
 * by trying them in a throw-away child (never from version numbers). */
#include "config.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/util.h"
#include "notify/notify-internal.h"
#include "notify/notify.h"

static void probe_child(int out)
{
        struct notify_features f = {0};
        uint32_t action = SECCOMP_RET_USER_NOTIF;
        f.user_notif = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
        if (f.user_notif && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) {
                /* notify on a syscall this child never makes */
                struct sock_filter insns[] = {
                        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_acct, 0, 1),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                };
                struct sock_fprog prog = {ELEMENTSOF(insns), insns};
                int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                      SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
                if (fd >= 0)
                        f.wait_killable_recv = true;
                else
                        fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                                          &prog);
                if (fd >= 0) {
                        /* An unknown notification id gives ENOENT from an ioctl
                         * the kernel knows, ENOTTY/EINVAL from one it does not. */
                        struct seccomp_notif_addfd a = {.id = 1, .srcfd = 0};
                        f.addfd = ioctl(fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0 && errno == ENOENT;
                        a.flags = SECCOMP_ADDFD_FLAG_SEND;
                        f.addfd_send = ioctl(fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0 && errno == ENOENT;
                        __u64 flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
                        f.sync_wakeup = ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags) == 0;
                }
        }
        (void)!write(out, &f, sizeof(f));
        _exit(0);
}

int notify_probe_features(struct notify_features *ret)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        pid_t pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                close(p[0]);
                close(p[1]);
                return r;
        }
        if (pid == 0) {
                close(p[0]);
                probe_child(p[1]);
        }
        close(p[1]);
        struct notify_features f = {0};
        ssize_t n = read_full(p[0], &f, sizeof(f));
        close(p[0]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        if (n != (ssize_t)sizeof(f))
                return -EIO;
        /* a feature a test forced absent is reported as the kernel lacking it */
        if (notify_feature_absent("addfd"))
                f.addfd = f.addfd_send = false;
        if (notify_feature_absent("sync_wakeup"))
                f.sync_wakeup = false;
        if (notify_feature_absent("wait_killable_recv"))
                f.wait_killable_recv = false;
        *ret = f;
        return 0;
}

bool notify_listener_has_addfd(int listener_fd)
{
        /* No notification is pending yet, so any id is unknown: a kernel with
         * the ioctl answers ENOENT; one without it EINVAL (or ENOTTY). The
         * source fd must be valid, or EBADF would come first. */
        struct seccomp_notif_addfd a = {.id = 1, .srcfd = (__u32)listener_fd};
        if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a) >= 0)
                return true;
        return errno != EINVAL && errno != ENOTTY;
}
