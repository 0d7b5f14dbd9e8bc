/* libcrypto through dlopen (see crypto-dl.h). */
#include "config.h"

#define CRYPTO_DL_IMPL
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#include "common/crypto-dl.h"
#include "common/util.h"

struct crypto_dl crypto_dl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *load_error;
static atomic_bool sealed;

void dl_seal(void)
{
        atomic_store(&sealed, true);
}

bool dl_sealed(void)
{
        return atomic_load(&sealed);
}

static void load(void)
{
        if (dl_sealed()) {
                load_error = "libcrypto.so.3 was not loaded before the sentry started serving, and is not loaded "
                             "after (the sentry's threads see the sandbox's files)";
                return;
        }
        /* the soname of the OpenSSL 3 the headers are from */
        void *h = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                load_error = "cannot load libcrypto.so.3 (OpenSSL 3), which computes the SHA-256 digests";
                return;
        }
        struct crypto_dl t;
#define CRYPTO_DL_SYM(f)                                 \
        if (!(t.f = (__typeof__(f) *)dlsym(h, #f))) {    \
                load_error = "libcrypto.so.3 lacks " #f; \
                return;                                  \
        }
        CRYPTO_DL_FUNCS(CRYPTO_DL_SYM)
#undef CRYPTO_DL_SYM
        crypto_dl = t;
}

int crypto_dl_load(const char **ret_error)
{
        pthread_once(&once, load);
        if (load_error) {
                if (ret_error)
                        *ret_error = load_error;
                return -ELIBACC;
        }
        return 0;
}
