/* File descriptors across processes: sent and received with a message over
 * a unix socket (SCM_RIGHTS), and every fd but a kept few closed before a
 * process runs on. */
#include "config.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "common/util.h"

/* the kernel's most in one message (SCM_MAX_FD) */
#define MAX_FDS 253

int send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n_fds)
{
        if (n_fds > MAX_FDS)
                return -EINVAL;
        struct iovec iov = {(void *)buf, len};
        char cbuf[CMSG_SPACE(sizeof(int) * MAX_FDS)] = {0};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        if (n_fds > 0) {
                mh.msg_control = cbuf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        ssize_t n;
        do
                n = sendmsg(sock, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        return n == (ssize_t)len ? 0 : -EIO;
}

ssize_t recv_fds(int sock, void *buf, size_t len, int *fds, size_t max_fds)
{
        char cbuf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
        struct iovec iov = {buf, len};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        for (size_t i = 0; i < max_fds; i++)
                fds[i] = -1;
        ssize_t n;
        do
                n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        size_t next = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t n_fds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                const unsigned char *data = CMSG_DATA(c);
                for (size_t i = 0; i < n_fds; i++) {
                        int fd;
                        memcpy(&fd, data + i * sizeof(int), sizeof(int));
                        if (next < max_fds)
                                fds[next++] = fd;
                        else
                                close(fd);
                }
        }
        return n;
}

static int cmp_int(const void *a, const void *b)
{
        return *(const int *)a - *(const int *)b;
}

int close_all_but(const int *keep, size_t n)
{
        int k[80];
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
                if (keep[i] >= 3) {
                        if (m == ELEMENTSOF(k))
                                return -E2BIG; /* rather than close one that was to stay */
                        k[m++] = keep[i];
                }
        qsort(k, m, sizeof(int), cmp_int);
        unsigned from = 3;
        for (size_t i = 0; i <= m; i++) {
                unsigned to = i < m ? (unsigned)k[i] : ~0U;
                if (i < m && (unsigned)k[i] < from)
                        continue; /* a duplicate */
                if (to > from && syscall(SYS_close_range, from, i < m ? to - 1 : ~0U, 0) < 0)
                        return negative_errno();
                if (i < m)
                        from = to + 1;
        }
        return 0;
}
