#include "config.h"

/* Unit tests for the HTTP API's routes (sentry/api/server.c): the route
 * table and the OpenAPI document in the repo (sentry/api/openapi.json)
 * list the same calls, both ways; the document compiled into cordon is that
 * file; the router matches paths by segment; the isolation tiers
 * (sentry/policy/tiers.c) each hold the one before them; request bodies
 * (sentry/api/bodies.c) are refused naming the field, or accepted as the
 * control protocol's request. */

#include <check.h>
#include <ctype.h>
#include <jansson.h>

#include "common/util.h"
#include "sentry/api/api-internal.h"

static json_t *load_doc(void)
{
        const char *srcdir = getenv("TESTS_SRCDIR");
        _cleanup_free_ char *path = xasprintf("%s/../sentry/api/openapi.json", srcdir ? srcdir : "../tests");
        json_error_t e;
        json_t *doc = json_load_file(path, 0, &e);
        ck_assert_msg(doc != NULL, "cannot load %s: %s (set TESTS_SRCDIR)", path, e.text);
        return doc;
}

static char *lower(const char *s)
{
        char *t = xstrdup(s);
        for (char *p = t; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        return t;
}

START_TEST(every_route_is_in_the_document)
{
        json_t *doc = load_doc();
        json_t *paths = json_object_get(doc, "paths");
        for (size_t i = 0; i < api_n_routes; i++) {
                _cleanup_free_ char *m = lower(api_routes[i].method);
                ck_assert_msg(json_object_get(json_object_get(paths, api_routes[i].pattern), m) != NULL,
                              "%s %s is served but not in openapi.json", api_routes[i].method, api_routes[i].pattern);
        }
        json_decref(doc);
}
END_TEST

START_TEST(every_documented_call_is_served)
{
        json_t *doc = load_doc();
        const char *path, *method;
        json_t *ops, *op;
        size_t n = 0;
        ck_assert_str_eq(json_string_value(json_object_get(doc, "openapi")), "3.1.0");
        json_object_foreach(json_object_get(doc, "paths"), path, ops)
        {
                json_object_foreach(ops, method, op)
                {
                        bool found = false;
                        for (size_t i = 0; i < api_n_routes; i++) {
                                _cleanup_free_ char *m = lower(api_routes[i].method);
                                found = found || (streq(api_routes[i].pattern, path) && streq(m, method));
                        }
                        ck_assert_msg(found, "%s %s is in openapi.json but not served", method, path);
                        n++;
                }
        }
        ck_assert_uint_eq(n, api_n_routes);
        json_decref(doc);
}
END_TEST

START_TEST(the_served_document_is_the_file)
{
        json_t *doc = load_doc();
        json_error_t e;
        json_t *served = json_loads(api_openapi_json, 0, &e);
        ck_assert_ptr_nonnull(served);
        ck_assert(json_equal(doc, served));
        json_decref(doc);
        json_decref(served);
}
END_TEST

START_TEST(router_matches_by_segment)
{
        const char *p[3] = {NULL, NULL, NULL};
        char buf[256];
        ck_assert(api_route_match("/v1/sandboxes/{id}/runs/{run}/events", "/v1/sandboxes/abc/runs/r2/events", p, buf,
                                  sizeof(buf)));
        ck_assert_str_eq(p[0], "abc");
        ck_assert_str_eq(p[1], "r2");
        ck_assert(api_route_match("/v1/sandboxes", "/v1/sandboxes", p, buf, sizeof(buf)));
        static const char *const misses[] = {
                "/v1/sandboxes/", "/v1/sandboxes//runs", "/v1/sandboxes/a/runs/r1/events/x",
                "/v1/sandboxesx", "v1/sandboxes",        "/v1/sandboxes/a/../b",
        };
        ck_assert(!api_route_match("/v1/sandboxes/{id}/runs", misses[1], p, buf, sizeof(buf)));
        ck_assert(!api_route_match("/v1/sandboxes/{id}", misses[0], p, buf, sizeof(buf)));
        ck_assert(!api_route_match("/v1/sandboxes/{id}/runs/{run}/events", misses[2], p, buf, sizeof(buf)));
        ck_assert(!api_route_match("/v1/sandboxes", misses[3], p, buf, sizeof(buf)));
        ck_assert(!api_route_match("/v1/sandboxes", misses[4], p, buf, sizeof(buf)));
        ck_assert(!api_route_match("/v1/sandboxes/{id}", misses[5], p, buf, sizeof(buf)));
        /* a path longer than the buffer matches nothing */
        char longp[600];
        memset(longp, 'a', sizeof(longp) - 1);
        longp[0] = '/';
        longp[sizeof(longp) - 1] = '\0';
        ck_assert(!api_route_match("/{id}", longp, p, buf, sizeof(buf)));
}
END_TEST

START_TEST(tiers_include_the_ones_below)
{
        for (int t = 1; t < POLICY_N_TIERS; t++)
                for (const char *const *l = policy_tiers[t - 1].layers; *l; l++) {
                        bool found = false;
                        for (const char *const *m = policy_tiers[t].layers; *m; m++)
                                found = found || streq(*l, *m);
                        ck_assert_msg(found, "tier %s lacks %s of %s", policy_tiers[t].name, *l,
                                      policy_tiers[t - 1].name);
                }
        ck_assert_int_eq(policy_tier_find("maximum"), POLICY_N_TIERS - 1);
        ck_assert_int_eq(policy_tier_find("bogus"), -ENOENT);
}
END_TEST

static json_t *parse(const char *text)
{
        json_error_t e;
        json_t *j = json_loads(text, JSON_ALLOW_NUL, &e); /* the server refuses \u0000; the checks must too */
        ck_assert_msg(j != NULL, "%s: %s", text, e.text);
        return j;
}

/* Bodies the API refuses name the field; accepted ones become the control
 * protocol's exec request. */
static const struct {
        const char *body, *field; /* NULL field: accepted */
} exec_cases[] = {
        {"{\"argv\": [\"ls\", \"-l\"], \"env\": {\"A\": \"1\"}, \"cwd\": \"/tmp\", \"timeoutMs\": 5}", NULL},
        {"{}", "argv"},
        {"{\"argv\": []}", "argv"},
        {"{\"argv\": \"ls\"}", "argv"},
        {"{\"argv\": [\"ls\", 1]}", "argv[1]"},
        {"{\"argv\": [\"a\\u0000b\"]}", "argv[0]"},
        {"{\"argv\": [\"ls\"], \"env\": [\"A=1\"]}", "env"},
        {"{\"argv\": [\"ls\"], \"env\": {\"A\": 1}}", "env.A"},
        {"{\"argv\": [\"ls\"], \"env\": {\"A=B\": \"1\"}}", "env.A=B"},
        {"{\"argv\": [\"ls\"], \"cwd\": \"tmp\"}", "cwd"},
        {"{\"argv\": [\"ls\"], \"timeoutMs\": 0}", "timeoutMs"},
        {"{\"argv\": [\"ls\"], \"timeoutMs\": \"5s\"}", "timeoutMs"},
};

START_TEST(exec_bodies)
{
        json_t *body = parse(exec_cases[_i].body);
        struct api_bad bad = {{0}, {0}};
        json_t *req = api_exec_request(body, false, &bad);
        if (exec_cases[_i].field) {
                ck_assert_ptr_null(req);
                ck_assert_str_eq(bad.field, exec_cases[_i].field);
        } else {
                ck_assert_ptr_nonnull(req);
                ck_assert_str_eq(json_string_value(json_object_get(req, "op")), "exec");
                ck_assert_str_eq(json_string_value(json_array_get(json_object_get(req, "env"), 0)), "A=1");
                ck_assert_int_eq(json_integer_value(json_object_get(req, "timeoutMs")), 5);
                json_decref(req);
        }
        json_decref(body);
}
END_TEST

START_TEST(file_bodies_and_base64)
{
        struct api_file f;
        struct api_bad bad = {{0}, {0}};
        json_t *b = parse("{\"path\": \"/tmp/a\", \"contentBase64\": \"aGVsbG8=\", \"mode\": 493}");
        ck_assert_int_eq(api_file_body(b, &f, &bad), 0);
        ck_assert_uint_eq(f.len, 5);
        ck_assert(memcmp(f.data, "hello", 5) == 0);
        ck_assert_int_eq(f.mode, 0755);
        free(f.data);
        json_decref(b);
        static const char *const bad_bodies[][2] = {
                {"{\"path\": \"tmp/a\", \"contentBase64\": \"\"}", "path"},
                {"{\"path\": \"/a\", \"contentBase64\": \"a\"}", "contentBase64"},
                {"{\"path\": \"/a\", \"contentBase64\": \"a*==\"}", "contentBase64"},
                {"{\"path\": \"/a\", \"contentBase64\": \"\", \"mode\": 4096}", "mode"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad_bodies); i++) {
                b = parse(bad_bodies[i][0]);
                ck_assert_int_eq(api_file_body(b, &f, &bad), -EINVAL);
                ck_assert_str_eq(bad.field, bad_bodies[i][1]);
                json_decref(b);
        }
        uint8_t *out;
        size_t n;
        ck_assert_int_eq(api_b64_decode("Zm9vYmFy", 8, &out, &n), 0);
        ck_assert_uint_eq(n, 6);
        ck_assert(memcmp(out, "foobar", 6) == 0);
        free(out);
        ck_assert_int_eq(api_b64_decode("Zm9vYg", 6, &out, &n), 0); /* padding optional */
        ck_assert_uint_eq(n, 4);
        free(out);
        ck_assert_int_eq(api_b64_decode("Zm9vY===", 8, &out, &n), -EINVAL);
        ck_assert_int_eq(api_b64_decode("Zm9v\nYg==", 9, &out, &n), -EINVAL);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("api-routes");
        TCase *tc = tcase_create("routes");
        tcase_add_test(tc, every_route_is_in_the_document);
        tcase_add_test(tc, every_documented_call_is_served);
        tcase_add_test(tc, the_served_document_is_the_file);
        tcase_add_test(tc, router_matches_by_segment);
        tcase_add_test(tc, tiers_include_the_ones_below);
        tcase_add_loop_test(tc, exec_bodies, 0, ELEMENTSOF(exec_cases));
        tcase_add_test(tc, file_bodies_and_base64);
        suite_add_tcase(s, tc);
        SRunner *sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
