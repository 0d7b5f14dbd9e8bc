/* libcrypto's SHA-256, loaded with dlopen on first use instead of linked:
 * only template digests (fs/digest.c) and snapshots (sentry/sandbox/snapshot.c) hash,
 * and linking libcrypto cost every cordon process about 1 ms before main().
 * Included after <openssl/evp.h> by the files that hash; each call below
 * goes through the table. */
#pragma once

#include <openssl/evp.h>

#define CRYPTO_DL_FUNCS(X)    \
        X(EVP_MD_CTX_new)     \
        X(EVP_MD_CTX_free)    \
        X(EVP_DigestInit_ex)  \
        X(EVP_DigestUpdate)   \
        X(EVP_DigestFinal_ex) \
        X(EVP_sha256)

#define CRYPTO_DL_FIELD(f) __typeof__(f) *f;
struct crypto_dl {
        CRYPTO_DL_FUNCS(CRYPTO_DL_FIELD)
};
#undef CRYPTO_DL_FIELD
extern struct crypto_dl crypto_dl;

/* Loads libcrypto (once; thread-safe). 0, or -ELIBACC with *ret_error
 * (static) saying what was missing: the caller refuses what needed the
 * hash (a digest that cannot be computed is not a digest that matched).
 * On the main thread only (common/dl.h). */
int crypto_dl_load(const char **ret_error);

#ifndef CRYPTO_DL_IMPL
#define EVP_MD_CTX_new     crypto_dl.EVP_MD_CTX_new
#define EVP_MD_CTX_free    crypto_dl.EVP_MD_CTX_free
#define EVP_DigestInit_ex  crypto_dl.EVP_DigestInit_ex
#define EVP_DigestUpdate   crypto_dl.EVP_DigestUpdate
#define EVP_DigestFinal_ex crypto_dl.EVP_DigestFinal_ex
#define EVP_sha256         crypto_dl.EVP_sha256
#endif
