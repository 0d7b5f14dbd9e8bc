/* The API's secrets and records: sha256 (libcrypto, loaded on first use),
 * fresh tokens from getrandom, a sandbox's token kept as its hash in the
 * sandbox's own state directory (so it survives a restart of the server and
 * goes with the sandbox), compared in constant time; and the idempotency
 * records of creates and run starts. */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "common/crypto-dl.h"
#include "common/file.h"
#include "sentry/api/api-internal.h"

int api_sha256_hex(const void *data, size_t len, char ret[65])
{
        const char *why = NULL;
        if (crypto_dl_load(&why) < 0)
                return -ELIBACC;
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        unsigned char md[32];
        unsigned int n = 0;
        int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 && EVP_DigestUpdate(ctx, data, len) == 1 &&
                 EVP_DigestFinal_ex(ctx, md, &n) == 1 && n == 32;
        EVP_MD_CTX_free(ctx);
        if (!ok)
                return -EIO;
        for (int i = 0; i < 32; i++)
                snprintf(ret + 2 * i, 3, "%02x", md[i]);
        return 0;
}

void api_new_token(char ret[2 * API_TOKEN_BYTES + 1])
{
        uint8_t b[API_TOKEN_BYTES];
        size_t got = 0;
        while (got < sizeof(b)) {
                ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        abort(); /* no randomness: no token (fail closed) */
                got += (size_t)n;
        }
        for (size_t i = 0; i < sizeof(b); i++)
                snprintf(ret + 2 * i, 3, "%02x", b[i]);
        explicit_bzero(b, sizeof(b));
}

bool api_const_eq(const void *a, const void *b, size_t n)
{
        const volatile uint8_t *x = a, *y = b;
        uint8_t d = 0;
        for (size_t i = 0; i < n; i++)
                d |= x[i] ^ y[i];
        return d == 0;
}

#define TOKEN_FILE "api-token.sha256"

int api_token_store(const char *id, const char *token)
{
        char dir[600], hex[65];
        if (sandbox_dir(id, dir, sizeof(dir)) < 0)
                return -EINVAL;
        int r = api_sha256_hex(token, strlen(token), hex);
        if (r < 0)
                return r;
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        _cleanup_close_ int fd = openat(dfd, TOKEN_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        return write_all(fd, hex, 64);
}

bool api_token_matches(const char *id, const char *hash_hex)
{
        char dir[600], stored[65] = "";
        if (!id || !sandbox_id_valid(id) || sandbox_dir(id, dir, sizeof(dir)) < 0)
                return false;
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int fd = dfd >= 0 ? openat(dfd, TOKEN_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
        if (fd < 0 || read(fd, stored, 64) != 64)
                return false;
        return api_const_eq(stored, hash_hex, 64);
}

bool api_token_matches_any(const char *hash_hex)
{
        json_t *all = NULL;
        (void)sandbox_list_json(&all);
        size_t i;
        json_t *m;
        bool found = false;
        json_array_foreach(all, i, m)
        {
                found = found || api_token_matches(json_string_value(json_object_get(m, "id")), hash_hex);
        }
        json_decref(all);
        return found;
}

/* --- idempotency records: DIR/idem-<sha256 of the key>, holding the value;
 * a record older than a day is forgotten --- */

#define IDEM_LIFETIME (24 * 3600)

static int idem_name(const char *key, char ret[80])
{
        char hex[65];
        int r = api_sha256_hex(key, strlen(key), hex);
        if (r < 0)
                return r;
        snprintf(ret, 80, "idem-%s", hex);
        return 0;
}

int api_idem_get(const char *dir, const char *key, char *ret, size_t size)
{
        char name[80];
        int r = idem_name(key, name);
        if (r < 0)
                return r;
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int fd = dfd >= 0 ? openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return -ENOENT;
        if (time(NULL) - st.st_mtime > IDEM_LIFETIME) {
                (void)unlinkat(dfd, name, 0);
                return -ENOENT;
        }
        ssize_t n = read(fd, ret, size - 1);
        if (n <= 0)
                return -ENOENT;
        ret[n] = '\0';
        return 0;
}

int api_idem_put(const char *dir, const char *key, const char *value)
{
        char name[80];
        int r = idem_name(key, name);
        if (r < 0)
                return r;
        (void)mkdir(dir, 0700);
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        _cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        return write_all(fd, value, strlen(value));
}
