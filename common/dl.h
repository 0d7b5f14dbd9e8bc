/* Libraries loaded with dlopen on first use instead of linked (libcrypto:
 * common/crypto-dl.c, libarchive: sentry/sandbox/archive-dl.c): each fills a table
 * of function pointers once, on the sentry's main thread only. */
#pragma once

#include <pthread.h>
#include <stdbool.h>

struct dl_lib {
        const char *soname;  /* dlopen's name */
        const char *missing; /* said when dlopen fails (static) */
        /* resolves every symbol from the handle into the library's table;
         * 0, or -1 with *ret_error (static) naming the missing one */
        int (*resolve)(void *handle, const char **ret_error);
        pthread_mutex_t lock;
        bool tried;
        const char *error;
};
#define DL_LIB_INIT(name, why, fn)                                                                     \
        {                                                                                              \
                .soname = (name), .missing = (why), .resolve = (fn), .lock = PTHREAD_MUTEX_INITIALIZER \
        }

/* Loads l once (thread-safe). 0, or -ELIBACC with *ret_error (static).
 * Only the main thread loads: the sentry's other threads are chrooted into
 * the sandbox's view, where dlopen would search the sandbox's own /usr/lib
 * (writable in a template root) and run what the tenant put there. A load
 * asked for on another thread before the main thread made it fails and
 * leaves the library loadable by the main thread. */
int dl_load(struct dl_lib *l, const char **ret_error);

/* Whether this thread may dlopen: the sentry's main thread only. */
bool dl_may_load(void);
