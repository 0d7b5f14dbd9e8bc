/* libmicrohttpd through dlopen (see mhd-dl.h). */
#include "config.h"

#define MHD_DL_IMPL
#include <dlfcn.h>

#include "common/dl.h"
#include "common/util.h"
#include "sentry/api/mhd-dl.h"

struct mhd_dl mhd_dl;

static int resolve(void *h, const char **ret_error)
{
        struct mhd_dl t;
#define MHD_DL_SYM(f)                                         \
        if (!(t.f = (__typeof__(f) *)dlsym(h, #f))) {         \
                *ret_error = "libmicrohttpd.so.12 lacks " #f; \
                return -1;                                    \
        }
        MHD_DL_FUNCS(MHD_DL_SYM)
#undef MHD_DL_SYM
        mhd_dl = t;
        return 0;
}

/* the soname of libmicrohttpd 0.9.x (Debian's libmicrohttpd12) */
static struct dl_lib lib =
        DL_LIB_INIT("libmicrohttpd.so.12",
                    "cannot load libmicrohttpd.so.12 (cordon serve needs libmicrohttpd 0.9.71 or later)", resolve);

int mhd_dl_load(const char **ret_error)
{
        return dl_load(&lib, ret_error);
}
