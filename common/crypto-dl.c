/* libcrypto through dlopen (see crypto-dl.h). */
#include "config.h"

#define CRYPTO_DL_IMPL
#include <dlfcn.h>

#include "common/crypto-dl.h"
#include "common/dl.h"
#include "common/util.h"

struct crypto_dl crypto_dl;

static int resolve(void *h, const char **ret_error)
{
        struct crypto_dl t;
#define CRYPTO_DL_SYM(f)                                 \
        if (!(t.f = (__typeof__(f) *)dlsym(h, #f))) {    \
                *ret_error = "libcrypto.so.3 lacks " #f; \
                return -1;                               \
        }
        CRYPTO_DL_FUNCS(CRYPTO_DL_SYM)
#undef CRYPTO_DL_SYM
        crypto_dl = t;
        return 0;
}

/* the soname of the OpenSSL 3 the headers are from */
static struct dl_lib lib = DL_LIB_INIT(
        "libcrypto.so.3", "cannot load libcrypto.so.3 (OpenSSL 3), which computes the SHA-256 digests", resolve);

int crypto_dl_load(const char **ret_error)
{
        return dl_load(&lib, ret_error);
}
