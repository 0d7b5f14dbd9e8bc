/* Fuzz target for the credential broker's request side (net/http.c): the
 * bytes a sandbox sends inside a terminated connection, read with
 * http-parser and decided request by request.
 *
 * The first input byte picks where the rest is cut into reads; the rest is
 * the request stream for a grant (GET and POST under /repos/ of
 * api.example.com, Authorization: Bearer {}), beside a second grant for
 * another host. Whatever the bytes, what would go upstream never holds
 * either placeholder; the secret appears in it exactly once per request the
 * broker reported as a use, each time as the grant's header; and the other
 * grant's secret never (inputs that hold a secret themselves are skipped).
 * The same bytes as a response come back as long as they went, with
 * neither secret in them, nor in the body a client decodes from them.
 *
 * Built with -fsanitize=fuzzer for libFuzzer (make fuzz), or with
 * tests/fuzz/standalone.c to replay a corpus (tests/fuzz/run.sh). */
#include "config.h"

#include <http_parser.h>

#include "common/util.h"
#include "net/net-internal.h"

#define CHECK(x)                                                                                  \
        do {                                                                                      \
                if (!(x)) {                                                                       \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #x); \
                        abort();                                                                  \
                }                                                                                 \
        } while (0)

static size_t count(const char *hay, size_t n, const char *needle, const char *before)
{
        size_t c = 0, nl = strlen(needle), bl = strlen(before);
        for (const char *at = hay; n && (at = memmem(at, n - (size_t)(at - hay), needle, nl)); at += nl) {
                CHECK((size_t)(at - hay) >= bl &&
                      strncasecmp(at - bl, before, bl) == 0); /* the client's spelling of the name */
                c++;
        }
        return c;
}

/* A response's body bytes as a client reads them (a chunked body without
 * its chunk lines), gathered by http-parser's on_body. */
struct body {
        char *buf;
        size_t len;
};

static int on_body(http_parser *p, const char *at, size_t len)
{
        struct body *b = p->data;
        b->buf = xrealloc(b->buf, b->len + len);
        memcpy(b->buf + b->len, at, len);
        b->len += len;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1 || size > 65536)
                return 0;
        static char *methods[] = {"GET", "POST"};
        static char secret0[] = "s3cr3t-VALUE-0123456789", secret1[] = "0th3r-S3CRET-abcdef";
        static char mask0[sizeof(secret0) - 1], mask1[sizeof(secret1) - 1];
        struct broker_grant g[2] = {0};
        g[0].g = (struct net_grant){.env = "API_TOKEN",
                                    .host = "api.example.com",
                                    .port = 443,
                                    .methods = methods,
                                    .n_methods = 2,
                                    .path_prefix = "/repos/",
                                    .header = "Authorization",
                                    .format = "Bearer {}",
                                    .expires_at = (time_t)-1,
                                    /* an ask grant, offline: nobody answers */
                                    .ask = data[0] >= 0xc0};
        g[1].g = (struct net_grant){.env = "OTHER",
                                    .host = "other.example.com",
                                    .port = 443,
                                    .path_prefix = "/",
                                    .header = "X-Key",
                                    .format = "{}",
                                    .expires_at = (time_t)-1};
        static const char ph0[] = "cordon_00112233445566778899aabbccddeeff00112233",
                          ph1[] = "cordon_ffeeddccbbaa99887766554433221100ffeeddcc";
        snprintf(g[0].placeholder, sizeof(g[0].placeholder), "%s", ph0);
        snprintf(g[1].placeholder, sizeof(g[1].placeholder), "%s", ph1);
        g[0].secret = secret0;
        g[0].secret_len = strlen(secret0);
        g[1].secret = secret1;
        g[1].secret_len = strlen(secret1);
        struct net_broker b = {.grants = g, .n = 2};
        /* the scans' tables, made once: every input has the same needles */
        static struct net_scan scans[4];
        static bool scans_made;
        if (!scans_made) {
                net_scan_init(&scans[0], ph0, strlen(ph0));
                net_scan_init(&scans[1], ph1, strlen(ph1));
                net_scan_init(&scans[2], secret0, strlen(secret0));
                net_scan_init(&scans[3], secret1, strlen(secret1));
                scans_made = true;
        }
        g[0].ph_scan = &scans[0];
        g[1].ph_scan = &scans[1];
        g[0].secret_scan = &scans[2];
        g[1].secret_scan = &scans[3];
        g[0].mask = mask0;
        g[1].mask = mask1;
        for (size_t i = 0; i < sizeof(mask0); i++)
                mask0[i] = g[0].placeholder[i % strlen(g[0].placeholder)];
        for (size_t i = 0; i < sizeof(mask1); i++)
                mask1[i] = g[1].placeholder[i % strlen(g[1].placeholder)];

        /* the response side: the same bytes as a response, cut at the same
         * places (below), come back as long as they went, with no secret
         * left in them, whatever reads split them */
        size_t rstep = 1 + data[0] % 89, rcuts[1024], n_rcuts = 0;
        for (size_t at = rstep; at < size && n_rcuts < 1024; at += rstep)
                rcuts[n_rcuts++] = at;
        char *rout = NULL;
        size_t rlen = 0;
        net_http_offline_response(&b, data, size, rcuts, n_rcuts, &rout, &rlen);
        CHECK(rlen == size);
        CHECK(!rout || !memmem(rout, rlen, secret0, strlen(secret0)));
        CHECK(!rout || !memmem(rout, rlen, secret1, strlen(secret1)));
        /* nor in the body a client decodes from them: a secret split by
         * chunk lines is replaced too (as far as the stream parses) */
        if (rout) {
                struct body bd = {0};
                http_parser rp;
                http_parser_init(&rp, HTTP_RESPONSE);
                rp.data = &bd;
                http_parser_settings rs = {.on_body = on_body};
                http_parser_execute(&rp, &rs, rout, rlen);
                CHECK(!bd.len || !memmem(bd.buf, bd.len, secret0, strlen(secret0)));
                CHECK(!bd.len || !memmem(bd.buf, bd.len, secret1, strlen(secret1)));
                free(bd.buf);
        }
        free(rout);

        /* the sandbox does not know the secrets: bytes that happen to be
         * one (the fuzzer reads them out of this file) prove nothing */
        if (memmem(data, size, secret0, strlen(secret0)) || memmem(data, size, secret1, strlen(secret1)))
                return 0;

        size_t step = 1 + data[0] % 97, cuts[1024], n_cuts = 0;
        for (size_t at = step; at < size - 1 && n_cuts < 1024; at += step)
                cuts[n_cuts++] = at;
        char *out = NULL;
        size_t len = 0;
        bool refused = false;
        int creds = net_http_offline(&b, 0, data + 1, size - 1, cuts, n_cuts, &out, &len, &refused);
        CHECK(creds >= 0);
        CHECK(!g[0].g.ask || creds == 0); /* no approval, no secret */
        CHECK(!out || !memmem(out, len, g[0].placeholder, strlen(g[0].placeholder)));
        CHECK(!out || !memmem(out, len, g[1].placeholder, strlen(g[1].placeholder)));
        CHECK(!out || !memmem(out, len, secret1, strlen(secret1)));
        CHECK(count(out, len, secret0, "\r\nAuthorization: Bearer ") == (size_t)creds);
        free(out);
        return 0;
}
