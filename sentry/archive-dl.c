/* libarchive through dlopen (see archive-dl.h). */
#include "config.h"

#define ARCHIVE_DL_IMPL
#include <dlfcn.h>
#include <pthread.h>

#include "common/crypto-dl.h"
#include "common/util.h"
#include "sentry/archive-dl.h"

struct archive_dl archive_dl;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool tried;
static const char *load_error;

static void load(void)
{
        /* the soname the headers were written for (libarchive 3: .13) */
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
        pthread_mutex_lock(&lock);
        const char *why = NULL;
        if (!tried && !dl_may_load())
                why = "libarchive.so.13 is loaded by the sentry's main thread only (this thread may see the "
                      "sandbox's files)";
        else {
                if (!tried) {
                        tried = true;
                        load();
                }
                why = load_error;
        }
        pthread_mutex_unlock(&lock);
        if (why) {
                if (ret_error)
                        *ret_error = why;
                return -ELIBACC;
        }
        return 0;
}
