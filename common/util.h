/* common/: small helpers every room shares. This header: cleanup
 * attributes, ownership transfer, the negative-errno convention and the
 * out-of-memory policy (fail closed: oom() aborts). The folder's other
 * headers each serve one need (fd passing, the strict document parsers'
 * bookkeeping, the allow-list builder, start-up tracing, loading optional
 * libraries). common/ includes no other room, and no room's internals
 * belong here. */
#pragma once

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define _public_       __attribute__((visibility("default")))
#define _unused_       __attribute__((unused))
#define _noreturn_     __attribute__((noreturn))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _likely_(x)    __builtin_expect(!!(x), 1)
#define _unlikely_(x)  __builtin_expect(!!(x), 0)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static inline void freep(void *p)
{
        free(*(void **)p);
}
static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}
/* A NULL-terminated array of malloc'd strings (an argv, an envp): each
 * string, then the array; NULL is nothing to free. */
static inline void strv_free(char **v)
{
        for (char **s = v; s && *s; s++)
                free(*s);
        free(v);
}
static inline void strv_freep(char ***v)
{
        strv_free(*v);
}

#define _cleanup_(f)     __attribute__((cleanup(f)))
#define _cleanup_free_   _cleanup_(freep)
#define _cleanup_close_  _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Hands ownership out of a cleanup variable. */
#define TAKE_PTR(p)                       \
        ({                                \
                __typeof__(p) _tp_ = (p); \
                (p) = NULL;               \
                _tp_;                     \
        })
#define TAKE_FD(fd)              \
        ({                       \
                int _tf_ = (fd); \
                (fd) = -1;       \
                _tf_;            \
        })

/* errno as a negative return; never returns 0 even if errno was clobbered. */
/* CLOCK_MONOTONIC in milliseconds */
static inline int64_t monotonic_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int negative_errno(void)
{
        return errno > 0 ? -errno : -EIO;
}

/* Out of memory: cordon is a security supervisor and fails closed. Every
 * allocation that cannot be handled locally goes through these, which abort
 * the process (and with it the sandbox: the child dies with the sentry). */
_noreturn_ static inline void oom(void)
{
        static const char msg[] = "cordon: out of memory, aborting (the sandbox dies with the sentry)\n";
        (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
        abort();
}
static inline void *xmalloc(size_t n)
{
        void *p = malloc(n ? n : 1);
        if (!p)
                oom();
        return p;
}
static inline void *xcalloc(size_t n, size_t s)
{
        void *p = calloc(n ? n : 1, s ? s : 1);
        if (!p)
                oom();
        return p;
}
static inline void *xrealloc(void *old, size_t n)
{
        void *p = realloc(old, n ? n : 1);
        if (!p)
                oom();
        return p;
}
static inline char *xstrdup(const char *s)
{
        char *p = strdup(s);
        if (!p)
                oom();
        return p;
}
_printf_(1, 2) static inline char *xasprintf(const char *fmt, ...)
{
        char *p;
        __builtin_va_list ap;
        __builtin_va_start(ap, fmt);
        int r = vasprintf(&p, fmt, ap);
        __builtin_va_end(ap);
        if (r < 0)
                oom();
        return p;
}
/* xasprintf() for a function that takes its own "..." */
_printf_(1, 0) static inline char *xvasprintf(const char *fmt, __builtin_va_list ap)
{
        char *p;
        if (vasprintf(&p, fmt, ap) < 0)
                oom();
        return p;
}

static inline bool streq(const char *a, const char *b)
{
        return strcmp(a, b) == 0;
}
static inline bool startswith(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}
/* path is dir or lies beneath it, component-wise ("/usr" holds "/usr/lib",
 * not "/usrx"); both absolute, dir without a trailing slash but "/", which
 * holds every path. */
static inline bool path_beneath(const char *path, const char *dir)
{
        size_t n = strlen(dir);
        if (n == 1 && dir[0] == '/')
                return true;
        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* write(2)/read(2) of a whole buffer, retrying on EINTR and short counts. */
static inline int write_all(int fd, const void *buf, size_t len)
{
        const char *p = buf;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}
/* Copies what one read(2) of in gives to out (a terminal relay's step):
 * 0, or -1 at end of file or an error of in (EINTR/EAGAIN are 0). */
static inline int relay_some(int in, int out)
{
        char buf[16384];
        ssize_t n = read(in, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return 0;
        if (n <= 0)
                return -1;
        (void)write_all(out, buf, (size_t)n);
        return 0;
}
/* Copies in to out until in's end of file, retrying on EINTR and short
 * writes: the bytes copied, or -errno of the read or write that failed.
 * With watch >= 0, in is waited for with poll (a non-blocking one too) and
 * the copy stops with -ECONNRESET as soon as watch shows anything (a peer
 * that sends nothing while it waits: its close). */
static inline int64_t copy_all_watched(int in, int out, int watch)
{
        char buf[65536];
        int64_t total = 0;
        for (;;) {
                if (watch >= 0) {
                        struct pollfd p[2] = {{.fd = in, .events = POLLIN},
                                              {.fd = watch, .events = POLLIN | POLLRDHUP}};
                        if (poll(p, 2, -1) < 0) {
                                if (errno == EINTR)
                                        continue;
                                return negative_errno();
                        }
                        if (p[1].revents)
                                return -ECONNRESET;
                        if (!p[0].revents)
                                continue;
                }
                ssize_t n = read(in, buf, sizeof(buf));
                if (n < 0 && (errno == EINTR || (watch >= 0 && errno == EAGAIN)))
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        return total;
                int r = write_all(out, buf, (size_t)n);
                if (r < 0)
                        return r;
                total += n;
        }
}
static inline int64_t copy_all(int in, int out)
{
        return copy_all_watched(in, out, -1);
}
static inline ssize_t read_full(int fd, void *buf, size_t len)
{
        char *p = buf;
        size_t got = 0;
        while (got < len) {
                ssize_t n = read(fd, p + got, len - got);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                got += (size_t)n;
        }
        return (ssize_t)got;
}
