/* libarchive through dlopen (see archive-dl.h). */
#include "config.h"

#define ARCHIVE_DL_IMPL
#include <dlfcn.h>
#include <pthread.h>

#include "common/crypto-dl.h"
#include "common/util.h"
#include "sentry/archive-dl.h"

struct archive_dl archive_dl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *load_error;

static void load(void)
{
        /* the soname the headers were written for (libarchive 3: .13) */
        if (dl_sealed()) {
                load_error = "libarchive.so.13 was not loaded before the sentry started serving, and is not "
                             "loaded after (the sentry's threads see the sandbox's files)";
                return;
        }
        void *h = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                load_error = "cannot load libarchive.so.13 (snapshots need libarchive 3)";
                return;
        }
        struct archive_dl t;
#define ARCHIVE_DL_SYM(f)                                  \
        if (!(t.f = (__typeof__(f) *)dlsym(h, #f))) {      \
                load_error = "libarchive.so.13 lacks " #f; \
                return;                                    \
        }
        ARCHIVE_DL_FUNCS(ARCHIVE_DL_SYM)
#undef ARCHIVE_DL_SYM
        archive_dl = t;
}

int archive_dl_load(const char **ret_error)
{
        pthread_once(&once, load);
        if (load_error) {
                if (ret_error)
                        *ret_error = load_error;
                return -ELIBACC;
        }
        return 0;
}
