/* libssl and libcrypto through dlopen (see tls-dl.h). */
#include "config.h"

#define TLS_DL_IMPL
#include <dlfcn.h>

#include "common/dl.h"
#include "common/util.h"
#include "net/tls-dl.h"

struct tls_dl tls_dl;
static struct tls_dl staged;

static int resolve_ssl(void *h, const char **ret_error)
{
#define TLS_DL_SYM(f)                                      \
        if (!(staged.f = (__typeof__(f) *)dlsym(h, #f))) { \
                *ret_error = "libssl.so.3 lacks " #f;      \
                return -1;                                 \
        }
        TLS_DL_SSL_FUNCS(TLS_DL_SYM)
#undef TLS_DL_SYM
        return 0;
}

static int resolve_crypto(void *h, const char **ret_error)
{
#define TLS_DL_SYM(f)                                      \
        if (!(staged.f = (__typeof__(f) *)dlsym(h, #f))) { \
                *ret_error = "libcrypto.so.3 lacks " #f;   \
                return -1;                                 \
        }
        TLS_DL_CRYPTO_FUNCS(TLS_DL_SYM)
#undef TLS_DL_SYM
        return 0;
}

static struct dl_lib crypto_lib = DL_LIB_INIT(
        "libcrypto.so.3", "cannot load libcrypto.so.3 (OpenSSL 3), which makes the sandbox's CA", resolve_crypto);
static struct dl_lib ssl_lib =
        DL_LIB_INIT("libssl.so.3", "cannot load libssl.so.3 (OpenSSL 3), which terminates TLS for grants", resolve_ssl);

int tls_dl_load(const char **ret_error)
{
        int r = dl_load(&crypto_lib, ret_error);
        if (r < 0)
                return r;
        r = dl_load(&ssl_lib, ret_error);
        if (r < 0)
                return r;
        tls_dl = staged;
        return 0;
}
