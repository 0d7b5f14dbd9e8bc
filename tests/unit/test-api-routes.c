#include "config.h"

/* Unit tests for the HTTP API's routes (sentry/api/server.c): the route
 * table and the OpenAPI document in the repo (sentry/api/openapi.json)
 * list the same calls, both ways; the document compiled into cordon is that
 * file; the router matches paths by segment; the isolation tiers
 * (sentry/policy/tiers.c) each hold the one before them. */

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

int main(void)
{
        Suite *s = suite_create("api-routes");
        TCase *tc = tcase_create("routes");
        tcase_add_test(tc, every_route_is_in_the_document);
        tcase_add_test(tc, every_documented_call_is_served);
        tcase_add_test(tc, the_served_document_is_the_file);
        tcase_add_test(tc, router_matches_by_segment);
        tcase_add_test(tc, tiers_include_the_ones_below);
        suite_add_tcase(s, tc);
        SRunner *sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
