/* The seccomp filters compiled at build time (sentry/gen-filters.c writes
 * sentry/filters.gen.c, which only the cordon binary links): a run copies
 * its filter from there instead of compiling it with libseccomp. The
 * functions are weak: in the unit tests and fuzzers, which link libcordon.a
 * without the generated file, they are NULL and the filters are compiled as
 * before. */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A malloc'd copy of the sandbox's filter for these options into *ret
 * (free ret->filter), or false. */
__attribute__((weak)) bool sentry_prebuilt_sandbox(bool trap_paths, bool trap_writes, bool native_exec,
                                                   struct sock_fprog *ret);
/* The same for the sentry's own filter. */
__attribute__((weak)) bool sentry_prebuilt_confine(struct sock_fprog *ret);

static inline bool prebuilt_copy(const struct sock_filter *f, size_t size, struct sock_fprog *ret)
{
        struct sock_filter *copy = malloc(size);
        if (!copy)
                return false;
        memcpy(copy, f, size);
        ret->filter = copy;
        ret->len = (unsigned short)(size / sizeof(*f));
        return true;
}
