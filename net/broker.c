/* The credential broker's grants (DESIGN.md, "Credentials"): each grant's
 * secret, read once at start and held where no other process can get it,
 * and the placeholder the sandbox sees instead. The secret is kept in a
 * mapping marked MADV_WIPEONFORK and MADV_DONTDUMP: the sandbox's init is a
 * clone of the sentry, and a plain heap copy would reach it (and every run
 * a long-lived sandbox's init forks); with wipe-on-fork its copy is zeros. */
#include "config.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "common/util.h"
#include "net/net-internal.h"

#define SECRET_MAX NET_SECRET_MAX
#define PH_RANDOM  20 /* bytes of randomness in a placeholder: 40 hex digits */

static int read_secret_file(const char *path, char *buf, size_t *ret_len, char *why, size_t why_size)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0) {
                int r = negative_errno();
                snprintf(why, why_size, "cannot open %s: %s", path, strerror(-r));
                return r;
        }
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                snprintf(why, why_size, "%s is not a regular file", path);
                return -EINVAL;
        }
        /* readable by the sentry only: a secret others can read is not
         * kept from anyone, and cordon will not pretend otherwise */
        if (st.st_mode & (S_IRGRP | S_IROTH | S_IWGRP | S_IWOTH)) {
                snprintf(why, why_size, "%s is group- or world-accessible (mode %04o): make it 0600 or 0400", path,
                         (unsigned)(st.st_mode & 07777));
                return -EACCES;
        }
        if (st.st_uid != geteuid() && st.st_uid != 0) {
                snprintf(why, why_size, "%s belongs to uid %u, neither cordon's user nor root", path,
                         (unsigned)st.st_uid);
                return -EACCES;
        }
        size_t n = 0;
        for (;;) {
                ssize_t k = read(fd, buf + n, SECRET_MAX - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        int r = negative_errno();
                        snprintf(why, why_size, "cannot read %s: %s", path, strerror(-r));
                        return r;
                }
                if (k == 0)
                        break;
                n += (size_t)k;
                if (n == SECRET_MAX) {
                        snprintf(why, why_size, "%s is larger than %d bytes", path, SECRET_MAX - 1);
                        return -EFBIG;
                }
        }
        *ret_len = n;
        return 0;
}

static int read_secret(const struct net_grant *gr, char *buf, size_t *ret_len, char *why, size_t why_size)
{
        int r;
        if (gr->source_file) {
                r = read_secret_file(gr->source_file, buf, ret_len, why, why_size);
                if (r < 0)
                        return r;
        } else {
                char *v = getenv(gr->source_env);
                if (!v) {
                        snprintf(why, why_size, "the variable %s is not set in cordon's environment", gr->source_env);
                        return -ENOENT;
                }
                size_t n = strlen(v);
                if (n >= SECRET_MAX) {
                        snprintf(why, why_size, "the variable %s is longer than %d bytes", gr->source_env,
                                 SECRET_MAX - 1);
                        return -EFBIG;
                }
                memcpy(buf, v, n);
                *ret_len = n;
                /* gone from cordon's own environment (and its initial
                 * stack, which a clone would copy) */
                explicit_bzero(v, n);
                unsetenv(gr->source_env);
        }
        size_t n = *ret_len;
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
                n--;
        *ret_len = n;
        const char *what = gr->source_file ? gr->source_file : gr->source_env;
        if (n == 0) {
                snprintf(why, why_size, "%s holds an empty secret", what);
                return -EINVAL;
        }
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] == 0x7f) {
                        /* it goes into a header line: a line break would split it */
                        snprintf(why, why_size, "%s holds a control character at byte %zu", what, i);
                        return -EINVAL;
                }
        return 0;
}

static char *dup_or_null(const char *s)
{
        return s ? xstrdup(s) : NULL;
}

int net_broker_new(const struct net_grant *grants, size_t n, time_t sandbox_expiry, const char *upstream_ca_file,
                   struct net_broker **ret, char *why, size_t why_size)
{
        struct net_broker *b = xcalloc(1, sizeof(*b));
        b->grants = xcalloc(n ? n : 1, sizeof(*b->grants));
        b->upstream_ca_file = dup_or_null(upstream_ca_file);
        /* the secrets, then the scan of each (its table tells of the
         * secret's bytes: kept as the secret is) */
        b->secrets_size = (n ? n : 1) * (SECRET_MAX + sizeof(struct net_scan));
        b->secrets = mmap(NULL, b->secrets_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (b->secrets == MAP_FAILED) {
                b->secrets = NULL;
                net_broker_free(b);
                snprintf(why, why_size, "cannot map memory for the secrets");
                return -ENOMEM;
        }
        /* fail closed: without wipe-on-fork the sandbox's init would hold a
         * copy of every secret */
        if (madvise(b->secrets, b->secrets_size, MADV_WIPEONFORK) < 0) {
                int r = negative_errno();
                net_broker_free(b);
                snprintf(why, why_size, "this kernel cannot keep the secrets out of the sandbox (MADV_WIPEONFORK: %s)",
                         strerror(-r));
                return r;
        }
        (void)madvise(b->secrets, b->secrets_size, MADV_DONTDUMP);
        /* the secrets first: a small RLIMIT_MEMLOCK that cannot take the
         * scans' tables too still keeps them out of swap */
        (void)mlock(b->secrets, (n ? n : 1) * SECRET_MAX);
        (void)mlock(b->secrets + (n ? n : 1) * SECRET_MAX, b->secrets_size - (n ? n : 1) * SECRET_MAX);
        for (size_t i = 0; i < n; i++) {
                const struct net_grant *gr = &grants[i];
                struct broker_grant *o = &b->grants[b->n++];
                o->g = *gr;
                o->g.env = xstrdup(gr->env);
                o->g.host = xstrdup(gr->host);
                o->methods = xcalloc(gr->n_methods ? gr->n_methods : 1, sizeof(char *));
                for (size_t j = 0; j < gr->n_methods; j++)
                        o->methods[j] = xstrdup(gr->methods[j]);
                o->g.methods = o->methods;
                o->g.path_prefix = xstrdup(gr->path_prefix ? gr->path_prefix : "/");
                o->g.header = xstrdup(gr->header ? gr->header : "Authorization");
                o->g.format = xstrdup(gr->format ? gr->format : "Bearer {}");
                o->g.source_file = dup_or_null(gr->source_file);
                o->g.source_env = dup_or_null(gr->source_env);
                o->g.reason = dup_or_null(gr->reason);
                /* no later than the sandbox: a grant never outlives it */
                if (sandbox_expiry != (time_t)-1 && (o->g.expires_at == (time_t)-1 || o->g.expires_at > sandbox_expiry))
                        o->g.expires_at = sandbox_expiry;
                o->secret = b->secrets + i * SECRET_MAX;
                char w[384];
                int r = read_secret(gr, o->secret, &o->secret_len, w, sizeof(w));
                if (r < 0) {
                        snprintf(why, why_size, "credentials[%zu] (%s): %s", i, gr->env, w);
                        net_broker_free(b);
                        return r;
                }
                uint8_t rnd[PH_RANDOM];
                if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
                        snprintf(why, why_size, "no randomness for the placeholders");
                        net_broker_free(b);
                        return -EIO;
                }
                /* shaped like a token: letters, digits and '_' only */
                int k = snprintf(o->placeholder, sizeof(o->placeholder), "cordon_");
                for (size_t j = 0; j < sizeof(rnd); j++)
                        k += snprintf(o->placeholder + k, sizeof(o->placeholder) - (size_t)k, "%02x", rnd[j]);
                /* what a response shows in the secret's place: the
                 * placeholder, cut or repeated to the secret's length so
                 * that the response's framing stays right */
                o->mask = xmalloc(o->secret_len);
                for (size_t j = 0; j < o->secret_len; j++)
                        o->mask[j] = o->placeholder[j % (size_t)k];
                o->ph_scan = xmalloc(sizeof(*o->ph_scan));
                net_scan_init(o->ph_scan, o->placeholder, (size_t)k);
                o->secret_scan = (struct net_scan *)(b->secrets + n * SECRET_MAX) + i;
                net_scan_init(o->secret_scan, o->secret, o->secret_len);
        }
        b->expiry = sandbox_expiry;
        int r = net_broker_tls_init(b, why, why_size);
        if (r < 0) {
                net_broker_free(b);
                return r;
        }
        *ret = b;
        return 0;
}

const char *net_broker_placeholder(const struct net_broker *b, size_t i)
{
        return b && i < b->n ? b->grants[i].placeholder : NULL;
}

const char *net_broker_ca_pem(const struct net_broker *b)
{
        return b ? b->ca_pem : NULL;
}

const char *net_broker_ca_bundle(const struct net_broker *b)
{
        return b ? b->ca_bundle : NULL;
}

int net_broker_grant_for(const struct net_broker *b, const char *host, unsigned port)
{
        if (!b)
                return -1;
        for (size_t i = 0; i < b->n; i++)
                if (streq(b->grants[i].g.host, host) && b->grants[i].g.port == port)
                        return (int)i;
        return -1;
}

void net_broker_free(struct net_broker *b)
{
        if (!b)
                return;
        for (size_t i = 0; i < b->n; i++) {
                struct broker_grant *o = &b->grants[i];
                free((char *)o->g.env);
                free((char *)o->g.host);
                for (size_t j = 0; j < o->g.n_methods; j++)
                        free(o->methods[j]);
                free(o->methods);
                free((char *)o->g.path_prefix);
                free((char *)o->g.header);
                free((char *)o->g.format);
                free((char *)o->g.source_file);
                free((char *)o->g.source_env);
                free((char *)o->g.reason);
                free(o->mask);
                free(o->ph_scan);
        }
        net_broker_tls_free(b);
        free(b->grants);
        if (b->secrets) {
                explicit_bzero(b->secrets, b->secrets_size);
                munmap(b->secrets, b->secrets_size);
        }
        free(b->upstream_ca_file);
        free(b->ca_pem);
        free(b->ca_bundle);
        free(b);
}
