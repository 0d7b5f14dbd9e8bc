/* libcrypto through dlopen (see crypto-dl.h). */
#include "config.h"

#define CRYPTO_DL_IMPL
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include "common/crypto-dl.h"
#include "common/util.h"

struct crypto_dl crypto_dl;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool tried;
static const char *load_error;

static void load(void)
{
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

bool dl_may_load(void)
{
        return gettid() == getpid();
}

int crypto_dl_load(const char **ret_error)
{
        pthread_mutex_lock(&lock);
        const char *why = NULL;
        if (!tried && !dl_may_load())
                why = "libcrypto.so.3 is loaded by the sentry's main thread only (this thread may see the "
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
