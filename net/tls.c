/* TLS for the credential broker (DESIGN.md, "Credentials"), with OpenSSL:
 * the sandbox's own CA, made at start, signs a leaf for each granted host;
 * the gate terminates the sandbox's TLS with that leaf and opens its own to
 * the real server, whose certificate and name it verifies against the
 * host's trust store (and, in tests only, the policy's upstreamCaFile).
 * The CA's key signs the leaves at start and is freed: nothing afterwards
 * can mint another certificate the sandbox trusts. */
#include "config.h"

#include <poll.h>
#include <sys/random.h>

#include "common/util.h"
#include "net/net-internal.h"
#include "net/tls-dl.h"

#define CERT_DAYS_DEFAULT 30
#define HANDSHAKE_MS      15000

static int fail_why(char *why, size_t size, const char *what)
{
        char e[160] = "";
        unsigned long code = ERR_get_error();
        if (code)
                ERR_error_string_n(code, e, sizeof(e));
        snprintf(why, size, "the credential broker cannot %s%s%s", what, e[0] ? ": " : "", e);
        return -EPROTO;
}

static bool add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
        X509V3_CTX ctx;
        memset(&ctx, 0, sizeof(ctx));
        X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
        X509_EXTENSION *e = X509V3_EXT_nconf_nid(NULL, &ctx, nid, value);
        if (!e)
                return false;
        bool ok = X509_add_ext(cert, e, -1) == 1;
        X509_EXTENSION_free(e);
        return ok;
}

/* A certificate for key, signed by issuer_key (issuer NULL: self-signed,
 * the CA); valid from an hour ago until secs from now. */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key, long secs,
                       const char *dns_name)
{
        X509 *x = X509_new();
        uint64_t serial;
        if (!x || getrandom(&serial, sizeof(serial), 0) != (ssize_t)sizeof(serial))
                goto fail;
        serial &= INT64_MAX;
        if (X509_set_version(x, 2) != 1 || ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), serial) != 1 ||
            !X509_gmtime_adj(X509_getm_notBefore(x), -3600) || !X509_gmtime_adj(X509_getm_notAfter(x), secs) ||
            X509_set_pubkey(x, key) != 1 ||
            X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
                                       0) != 1 ||
            X509_set_issuer_name(x, X509_get_subject_name(issuer ? issuer : x)) != 1)
                goto fail;
        if (!issuer) {
                if (!add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
                    !add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") ||
                    !add_ext(x, x, NID_subject_key_identifier, "hash"))
                        goto fail;
        } else {
                char san[300];
                snprintf(san, sizeof(san), "DNS:%s", dns_name);
                if (!add_ext(x, issuer, NID_basic_constraints, "critical,CA:FALSE") ||
                    !add_ext(x, issuer, NID_key_usage, "critical,digitalSignature") ||
                    !add_ext(x, issuer, NID_ext_key_usage, "serverAuth") ||
                    !add_ext(x, issuer, NID_subject_alt_name, san) ||
                    !add_ext(x, issuer, NID_authority_key_identifier, "keyid:always"))
                        goto fail;
        }
        if (X509_sign(x, issuer_key, EVP_sha256()) <= 0)
                goto fail;
        return x;
fail:
        if (x)
                X509_free(x);
        return NULL;
}

static char *cert_pem(X509 *x)
{
        BIO *bio = BIO_new(BIO_s_mem());
        if (!bio)
                return NULL;
        char *out = NULL, *data = NULL;
        if (PEM_write_bio_X509(bio, x) == 1) {
                long n = BIO_get_mem_data(bio, &data);
                if (n > 0) {
                        out = xmalloc((size_t)n + 1);
                        memcpy(out, data, (size_t)n);
                        out[n] = '\0';
                }
        }
        BIO_free(bio);
        return out;
}

static int select_http11(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                         unsigned inlen, void *arg)
{
        (void)ssl;
        (void)arg;
        /* HTTP/1.1 only: the broker reads HTTP/1.1 requests; a client that
         * offers only h2 gets no ALPN answer and falls back to HTTP/1.1 */
        static const unsigned char h11[] = "\x08http/1.1";
        unsigned char *o;
        if (SSL_select_next_proto(&o, outlen, h11, sizeof(h11) - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
                return SSL_TLSEXT_ERR_NOACK;
        *out = o;
        return SSL_TLSEXT_ERR_OK;
}

/* Fewer system calls per record: OpenSSL reads what the socket holds, up
 * to 64 KiB (several records), instead of each record's header and body
 * in two reads; net_ssl_pending then says when it holds bytes to go on
 * with without a poll. */
static void fast_io(SSL_CTX *ctx)
{
        SSL_CTX_set_read_ahead(ctx, 1);
        SSL_CTX_set_default_read_buffer_len(ctx, 65536);
        /* an idle connection (keep-alive, or a sandbox holding many open)
         * gives its record buffers back until it reads or writes again */
        SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
}

/* A session (a TLS 1.3 ticket, or 1.2 session) the upstream gave an
 * upstream connection: kept as its grant's, replacing the one before. Safe
 * to resume later: it was made by a handshake that verified the server's
 * certificate for the grant's host (SSL_VERIFY_PEER, SSL_set1_host), and
 * only connections to that host, of that grant, resume it. */
static int new_session(SSL *ssl, SSL_SESSION *sess)
{
        struct broker_grant *bg = SSL_get_ex_data(ssl, 0);
        if (!bg)
                return 0; /* not kept: OpenSSL frees it */
        pthread_mutex_lock(&bg->session_lock);
        SSL_SESSION *old = bg->session;
        bg->session = sess;
        pthread_mutex_unlock(&bg->session_lock);
        if (old)
                SSL_SESSION_free(old);
        return 1; /* the reference is ours */
}

static int client_ctx(struct net_broker *b, char *why, size_t size)
{
        SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
        X509_STORE *store = X509_STORE_new();
        if (!ctx || !store) {
                if (ctx)
                        SSL_CTX_free(ctx);
                if (store)
                        X509_STORE_free(store);
                return fail_why(why, size, "make its client context");
        }
        SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
        /* The host's bundle, read whole now: no hashed-directory lookup,
         * which would read files later from a relay chrooted in the view
         * (where the sandbox could plant a CA). */
        static const char *const bundles[] = {"/etc/ssl/certs/ca-certificates.crt", NULL};
        bool loaded = false;
        for (size_t i = 0; i < ELEMENTSOF(bundles); i++) {
                const char *f = bundles[i] ? bundles[i] : X509_get_default_cert_file();
                if (access(f, R_OK) == 0 && X509_STORE_load_file(store, f) == 1) {
                        loaded = true;
                        break;
                }
        }
        ERR_clear_error();
        if (b->upstream_ca_file) {
                if (X509_STORE_load_file(store, b->upstream_ca_file) != 1) {
                        X509_STORE_free(store);
                        SSL_CTX_free(ctx);
                        char w[256];
                        snprintf(w, sizeof(w), "load networkPolicy.testing.upstreamCaFile %s", b->upstream_ca_file);
                        return fail_why(why, size, w);
                }
                loaded = true;
        }
        if (!loaded) {
                X509_STORE_free(store);
                SSL_CTX_free(ctx);
                snprintf(why, size,
                         "the credential broker found no trust store to verify upstream servers with "
                         "(/etc/ssl/certs/ca-certificates.crt)");
                return -ENOENT;
        }
        SSL_CTX_set_cert_store(ctx, store); /* the context owns it now */
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        fast_io(ctx);
        /* each grant keeps its host's latest session (new_session), which
         * the next connection to that host resumes; OpenSSL's own cache
         * would be keyed by nothing the broker chooses */
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(ctx, new_session);
        /* A server that closes without close_notify (most HTTP servers
         * after "Connection: close") ends the connection as a close_notify
         * would, not as an error: OpenSSL would otherwise mark the session
         * unresumable. It changes nothing of what reaches the sandbox: an
         * end is an end for the relay either way (net_ssl_read), and a
         * response cut short is the client's to see by its framing. */
        SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
        b->client_ctx = ctx;
        return 0;
}

/* The sandbox's trust store: the host's CAs (a sandbox still reaches
 * hosts without a grant, whose real certificates it verifies itself) and
 * the sandbox's CA. */
static int make_bundle(struct net_broker *b, char *why, size_t size)
{
        _cleanup_free_ char *host = NULL;
        size_t n = 0;
        _cleanup_fclose_ FILE *f = fopen(NET_CA_BUNDLE_PATH, "re");
        if (f) {
                char chunk[65536];
                size_t k;
                while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0 && n < (64u << 20)) {
                        host = xrealloc(host, n + k + 1);
                        memcpy(host + n, chunk, k);
                        n += k;
                }
        }
        (void)why;
        (void)size;
        b->ca_bundle = xasprintf("%.*s%s# cordon: this sandbox's CA (the credential broker)\n%s", (int)n,
                                 host ? host : "", n && host[n - 1] != '\n' ? "\n" : "", b->ca_pem);
        return 0;
}

int net_broker_tls_init(struct net_broker *b, char *why, size_t size)
{
        const char *err = NULL;
        if (b->n == 0)
                return 0;
        if (tls_dl_load(&err) < 0) {
                snprintf(why, size, "%s", err);
                return -ELIBACC;
        }
        /* the configuration and the library's state, on this (the main,
         * host-rooted) thread */
        if (OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS, NULL) != 1)
                return fail_why(why, size, "initialise OpenSSL");
        long secs = (long)CERT_DAYS_DEFAULT * 86400;
        time_t now = time(NULL);
        if (b->expiry != (time_t)-1 && b->expiry > now && b->expiry - now + 3600 < secs)
                secs = (long)(b->expiry - now) + 3600;
        EVP_PKEY *ca_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
        EVP_PKEY *leaf_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
        X509 *ca = ca_key ? make_cert(ca_key, "cordon sandbox CA", NULL, ca_key, secs, NULL) : NULL;
        int r = 0;
        if (!ca || !leaf_key || !(b->ca_pem = cert_pem(ca)))
                r = fail_why(why, size, "make the sandbox's CA");
        for (size_t i = 0; i < b->n; i++)
                pthread_mutex_init(&b->grants[i].session_lock, NULL);
        for (size_t i = 0; r == 0 && i < b->n; i++) {
                struct broker_grant *g = &b->grants[i];
                X509 *leaf = make_cert(leaf_key, g->g.host, ca, ca_key, secs, g->g.host);
                SSL_CTX *ctx = leaf ? SSL_CTX_new(TLS_server_method()) : NULL;
                if (!ctx || SSL_CTX_use_certificate(ctx, leaf) != 1 || SSL_CTX_use_PrivateKey(ctx, leaf_key) != 1) {
                        r = fail_why(why, size, "make a certificate for a granted host");
                        if (ctx)
                                SSL_CTX_free(ctx);
                } else {
                        SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
                        SSL_CTX_set_alpn_select_cb(ctx, select_http11, NULL);
                        fast_io(ctx);
                        g->server_ctx = ctx;
                }
                if (leaf)
                        X509_free(leaf);
        }
        if (ca)
                X509_free(ca);
        if (ca_key)
                EVP_PKEY_free(ca_key); /* no more certificates after these */
        if (leaf_key)
                EVP_PKEY_free(leaf_key); /* the contexts hold their own reference */
        if (r == 0)
                r = client_ctx(b, why, size);
        if (r == 0)
                r = make_bundle(b, why, size);
        return r;
}

void net_broker_tls_free(struct net_broker *b)
{
        if (!b->client_ctx && !b->n)
                return;
        for (size_t i = 0; i < b->n; i++) {
                if (b->grants[i].server_ctx)
                        SSL_CTX_free(b->grants[i].server_ctx);
                if (b->grants[i].session)
                        SSL_SESSION_free(b->grants[i].session);
                pthread_mutex_destroy(&b->grants[i].session_lock);
        }
        if (b->client_ctx)
                SSL_CTX_free(b->client_ctx);
}

/* --- nonblocking SSL I/O for the relay thread --- */

static int want(struct net_relay *r, SSL *ssl, int fd, int k, int64_t deadline)
{
        int e = SSL_get_error(ssl, k);
        short ev = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
        if (!ev)
                return -EPROTO;
        int w = net_relay_wait(r, fd, ev, deadline);
        return w > 0 ? 0 : w == 0 ? -ETIMEDOUT : w;
}

/* One step of a handshake: 0 done, or the poll events it waits for, or
 * -EPROTO (failed). */
static int handshake_step(SSL *ssl, bool server)
{
        ERR_clear_error();
        int k = server ? SSL_accept(ssl) : SSL_connect(ssl);
        if (k == 1)
                return 0;
        int e = SSL_get_error(ssl, k);
        return e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : -EPROTO;
}

/* The two handshakes at once, the sandbox's client's (c, with the leaf)
 * and the upstream's (u): the upstream's round trips and certificate
 * check overlap the client's instead of following them. Safe to begin
 * before the client's ends: the ClientHello already named the granted
 * host (relay.c), and nothing of the sandbox's goes upstream until both
 * are done. 0, or -errno with *ret_client_failed saying whose failed (the
 * upstream's: the client's handshake is still completed, so that it can
 * be told why). */
static int handshakes(struct net_relay *r, SSL *c, SSL *u, bool *ret_client_failed)
{
        int64_t deadline = net_now_ms() + HANDSHAKE_MS;
        int cs = POLLIN, us = POLLOUT, uerr = 0;
        for (;;) {
                if (cs > 0)
                        cs = handshake_step(c, true);
                if (cs < 0) {
                        *ret_client_failed = true;
                        return cs;
                }
                if (us > 0 && !uerr) {
                        us = handshake_step(u, false);
                        if (us < 0)
                                uerr = us;
                }
                if (cs == 0 && (us == 0 || uerr)) {
                        *ret_client_failed = false;
                        return uerr;
                }
                int64_t left = deadline - net_now_ms();
                if (left <= 0) {
                        *ret_client_failed = cs != 0;
                        return -ETIMEDOUT;
                }
                struct pollfd p[3] = {{.fd = cs > 0 ? r->child : -1, .events = (short)(cs > 0 ? cs : 0)},
                                      {.fd = us > 0 && !uerr ? r->upstream : -1, .events = (short)(us > 0 ? us : 0)},
                                      {.fd = r->g->relay_stop, .events = POLLIN}};
                int k = poll(p, 3, (int)left);
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (k > 0 && p[2].revents) {
                        *ret_client_failed = true;
                        return -ECANCELED;
                }
        }
}

ssize_t net_ssl_read(void *ssl, void *buf, size_t n)
{
        ERR_clear_error();
        int k = SSL_read(ssl, buf, (int)(n > INT32_MAX ? INT32_MAX : n));
        if (k > 0)
                return k;
        int e = SSL_get_error(ssl, k);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                return -EAGAIN;
        if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && ERR_get_error() == 0))
                return 0; /* closed (with or without close_notify) */
        return -EPIPE;
}

bool net_ssl_pending(void *ssl)
{
        /* records read ahead but not yet decrypted count too: the socket
         * may have nothing more, and a poll would wait for nothing */
        return SSL_has_pending(ssl) == 1;
}

ssize_t net_ssl_peek(void *ssl, void *buf, size_t n)
{
        ERR_clear_error();
        int k = SSL_peek(ssl, buf, (int)(n > INT32_MAX ? INT32_MAX : n));
        ERR_clear_error();
        return k > 0 ? k : 0;
}

/* Writes through a buffer: the records written until a flush (up to
 * 64 KiB of them) leave in one write(2) at its flush, not one each. */
static bool buffer_writes(SSL *ssl)
{
        BIO *sock = SSL_get_rbio(ssl), *buf = BIO_new(BIO_f_buffer());
        if (!buf)
                return false;
        int write_side = 1; /* BIO_set_write_buffer_size, without BIO_int_ctrl */
        if (BIO_ctrl(buf, BIO_C_SET_BUFF_SIZE, 65536 + 1024, &write_side) != 1 || BIO_up_ref(sock) != 1) {
                BIO_free(buf);
                return false;
        }
        BIO_push(buf, sock); /* the chain holds the reference taken */
        SSL_set0_wbio(ssl, buf);
        return true;
}

static int flush(struct net_relay *r, SSL *ssl, int fd, int64_t deadline)
{
        BIO *w = SSL_get_wbio(ssl);
        for (;;) {
                if (BIO_flush(w) > 0)
                        return 0;
                if (!BIO_should_retry(w) || net_relay_wait(r, fd, POLLOUT, deadline) <= 0)
                        return -EPIPE;
        }
}

/* a peer that stops reading for this long is gone */
#define WRITE_STALL_MS 60000

int net_ssl_flush(struct net_relay *r, void *ssl, int fd)
{
        return flush(r, ssl, fd, net_now_ms() + WRITE_STALL_MS);
}

int net_ssl_write_all(struct net_relay *r, void *ssl, int fd, const void *buf, size_t n)
{
        int k = net_ssl_write(r, ssl, fd, buf, n);
        return k < 0 ? k : net_ssl_flush(r, ssl, fd);
}

int net_ssl_write(struct net_relay *r, void *ssl, int fd, const void *buf, size_t n)
{
        int64_t deadline = net_now_ms() + WRITE_STALL_MS;
        while (n > 0) {
                ERR_clear_error();
                int k = SSL_write(ssl, buf, (int)(n > 16384 ? 16384 : n));
                if (k > 0) {
                        buf = (const char *)buf + k;
                        n -= (size_t)k;
                        continue;
                }
                int w = want(r, ssl, fd, k, deadline);
                if (w < 0)
                        return -EPIPE;
        }
        return 0;
}

/* A 502 for the sandbox when the real server cannot be verified. */
static void answer_502(struct net_relay *r, SSL *c, const char *host)
{
        char body[512], msg[768];
        int bn = snprintf(body, sizeof(body),
                          "{\"error\":\"egress_blocked\",\"reason\":\"upstream_unverified\",\"host\":\"%s\"}\n", host);
        int mn = snprintf(msg, sizeof(msg),
                          "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                          "Connection: close\r\n\r\n%s",
                          bn, body);
        (void)net_ssl_write_all(r, c, r->child, msg, (size_t)mn);
}

void net_broker_serve(struct net_relay *r, int grant)
{
        struct net_broker *b = r->g->broker;
        struct broker_grant *bg = &b->grants[grant];
        const char *host = bg->g.host;
        SSL *c = SSL_new(bg->server_ctx);
        SSL *u = SSL_new(b->client_ctx);
        if (!c || !u || SSL_set_fd(c, r->child) != 1 || SSL_set_fd(u, r->upstream) != 1 || !buffer_writes(c) ||
            !buffer_writes(u))
                goto out;
        /* upstream: the host's name in SNI, and the certificate verified
         * for that name (SSL_set1_host) against the host's store; the
         * grant's last session resumed where there is one (new_session) */
        static const unsigned char h11[] = "\x08http/1.1";
        if (SSL_set_tlsext_host_name(u, host) != 1 || SSL_set1_host(u, host) != 1 ||
            SSL_set_alpn_protos(u, h11, sizeof(h11) - 1) != 0 || SSL_set_ex_data(u, 0, bg) != 1)
                goto out;
        pthread_mutex_lock(&bg->session_lock);
        if (bg->session)
                (void)SSL_set_session(u, bg->session); /* takes its own reference */
        pthread_mutex_unlock(&bg->session_lock);
        if (b->upstream_ca_file) {
                const char *kv[] = {"upstreamCaFile", b->upstream_ca_file};
                net_audit_kv(r->g, r->pid, host, true, REASON_TEST_OVERRIDE, kv, 1);
        }
        bool client_failed = false;
        int hr = handshakes(r, c, u, &client_failed);
        if (hr < 0 && client_failed) {
                /* the sandbox's client did not take the leaf (it does not
                 * trust the sandbox's CA) or gave up: nothing of its went
                 * upstream (at most the gate's own handshake) */
                const char *kv[] = {"destination", r->dest, "stage", "client handshake"};
                net_audit_kv(r->g, r->pid, host, false, REASON_NOT_TLS, kv, 2);
                goto out;
        }
        if (hr < 0) {
                long v = SSL_get_verify_result(u);
                const char *kv[] = {
                        "destination", r->dest, "resolved",
                        r->resolved,   "error", v != X509_V_OK ? X509_verify_cert_error_string(v) : "handshake failed"};
                net_audit_kv(r->g, r->pid, host, false, REASON_UPSTREAM_UNVERIFIED, kv, 3);
                answer_502(r, c, host);
                ERR_clear_error();
                (void)SSL_shutdown(c);
                net_relay_drain(r, r->child);
                goto out;
        }
        net_broker_http(r, bg, c, u);
        ERR_clear_error();
        (void)SSL_shutdown(c);
        (void)SSL_shutdown(u);
        net_relay_drain(r, r->child);
out:
        ERR_clear_error();
        if (c)
                SSL_free(c);
        if (u)
                SSL_free(u);
}
