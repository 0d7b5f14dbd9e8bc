/* Fuzz target for the HTTP API's router and request bodies (sentry/api/):
 * what any client of `cordon serve` sends.
 *
 * An input is "METHOD PATH\n" and a body. The path goes through the router
 * (every route: a match has its parameters, each a non-empty segment
 * without '/'); the body is parsed as JSON as the server parses it and,
 * when it is an object, checked as an exec body, a run body and a file
 * write, and as a create's policy. A refusal must name a field; an
 * accepted exec body must give an exec request whose argv is a non-empty
 * array of strings; a decoded file must fit its base64.
 *
 * Built with -fsanitize=fuzzer for libFuzzer (make fuzz), or with
 * tests/fuzz/standalone.c to replay a corpus (tests/fuzz/run.sh). */
#include "config.h"

#include "common/util.h"
#include "sentry/api/api-internal.h"

#define CHECK(x)                                                                                  \
        do {                                                                                      \
                if (!(x)) {                                                                       \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #x); \
                        abort();                                                                  \
                }                                                                                 \
        } while (0)

static void route(const char *line)
{
        char method[16] = "";
        const char *sp = strchr(line, ' ');
        if (!sp || (size_t)(sp - line) >= sizeof(method))
                return;
        memcpy(method, line, (size_t)(sp - line));
        const char *path = sp + 1;
        const char *params[3] = {NULL, NULL, NULL};
        char buf[1024];
        bool known = false;
        const struct api_route *r = api_route_find(method, path, params, buf, sizeof(buf), &known);
        if (r) {
                CHECK(known);
                CHECK(streq(r->method, method));
                size_t want = 0;
                for (const char *p = strchr(r->pattern, '{'); p; p = strchr(p + 1, '{'))
                        want++;
                for (size_t i = 0; i < want; i++) {
                        CHECK(params[i] && params[i][0]);
                        CHECK(!strchr(params[i], '/'));
                }
        }
}

static void bodies(json_t *body)
{
        struct api_bad bad;
        for (int detach = 0; detach < 2; detach++) {
                memset(&bad, 0, sizeof(bad));
                json_t *req = api_exec_request(body, detach, &bad);
                if (!req) {
                        CHECK(bad.field[0] && bad.message[0]);
                        continue;
                }
                json_t *argv = json_object_get(req, "argv"), *v;
                size_t i;
                CHECK(json_is_array(argv) && json_array_size(argv) > 0);
                json_array_foreach(argv, i, v) CHECK(json_is_string(v));
                CHECK(json_is_array(json_object_get(req, "env")));
                json_decref(req);
        }
        struct api_file f;
        memset(&bad, 0, sizeof(bad));
        if (api_file_body(body, &f, &bad) == 0) {
                CHECK(api_path_ok(f.path));
                size_t b64 = json_string_length(json_object_get(body, "contentBase64"));
                CHECK(f.len <= b64 / 4 * 3 + 2);
                free(f.data);
        } else
                CHECK(bad.field[0]);
        /* a create: the policy parser sees the body less the API's own keys */
        json_t *copy = json_deep_copy(body);
        json_object_del(copy, "ttlMs");
        json_object_del(copy, "idempotencyKey");
        char *text = json_dumps(copy, JSON_COMPACT);
        json_decref(copy);
        if (text) {
                struct policy *p = NULL;
                char *err = NULL;
                if (policy_load_buffer(text, strlen(text), "body", &p, &err) == 0) {
                        CHECK(p->isolation >= -1 && p->isolation < POLICY_N_TIERS);
                        (void)policy_high_risk(p);
                        policy_free(p);
                } else
                        CHECK(err && startswith(err, "body"));
                free(err);
                free(text);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *nl = memchr(data, '\n', size);
        size_t head = nl ? (size_t)((const uint8_t *)nl - data) : size;
        char *line = strndup((const char *)data, head);
        route(line);
        free(line);
        if (!nl)
                return 0;
        const char *b = nl + 1;
        size_t n = size - head - 1;
        uint8_t *raw = NULL;
        size_t raw_len = 0;
        if (api_b64_decode(b, n, &raw, &raw_len) == 0) {
                CHECK(raw_len <= n / 4 * 3 + 2);
                free(raw);
        }
        json_error_t jerr;
        json_t *body = json_loadb(b, n, JSON_REJECT_DUPLICATES, &jerr);
        if (json_is_object(body))
                bodies(body);
        json_decref(body);
        return 0;
}
