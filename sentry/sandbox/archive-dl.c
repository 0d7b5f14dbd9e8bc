/* libarchive through dlopen (see archive-dl.h). */
#include "config.h"

#define ARCHIVE_DL_IMPL
#include <dlfcn.h>

#include "common/dl.h"
#include "common/util.h"
#include "sentry/sandbox/archive-dl.h"

struct archive_dl archive_dl;

static int resolve(void *h, const char **ret_error)
{
        struct archive_dl t;
#define ARCHIVE_DL_SYM(f)                                  \
        if (!(t.f = (__typeof__(f) *)dlsym(h, #f))) {      \
                *ret_error = "libarchive.so.13 lacks " #f; \
                return -1;                                 \
        }
        ARCHIVE_DL_FUNCS(ARCHIVE_DL_SYM)
#undef ARCHIVE_DL_SYM
        archive_dl = t;
        return 0;
}

/* the soname the headers were written for (libarchive 3: .13) */
static struct dl_lib lib =
        DL_LIB_INIT("libarchive.so.13", "cannot load libarchive.so.13 (snapshots need libarchive 3)", resolve);

int archive_dl_load(const char **ret_error)
{
        return dl_load(&lib, ret_error);
}
