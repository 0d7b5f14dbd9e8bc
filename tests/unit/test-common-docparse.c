#include "config.h"

/* Unit tests for what the policy and OCI parsers share (common/docparse.c):
 * untrusted text quoted safely, the JSON path each error names (and cut
 * short when a key is huge), only the first error kept, and absolute paths
 * normalised with ".." refused. */

#include <check.h>
#include <errno.h>
#include <string.h>

#include "common/docparse.h"
#include "common/util.h"

START_TEST(quotes_control_and_non_ascii_bytes)
{
        char q[DOC_QUOTE_MAX];
        ck_assert_str_eq(doc_quote(q, "a\"b\\c", 5), "\"a\\\"b\\\\c\"");
        ck_assert_str_eq(doc_quote(q, "\x1b[2J\xc3\xa9", 6), "\"\\x1b[2J\\xc3\\xa9\"");
        /* an embedded NUL is shown, not a cut */
        ck_assert_str_eq(doc_quote(q, "a\0b", 3), "\"a\\x00b\"");
}
END_TEST

START_TEST(printable_escapes_controls_keeps_the_rest)
{
        char *p = doc_printable("a\033[2J\rb\x7f \xc2\x9b \xc3\xa9/x");
        ck_assert_str_eq(p, "a\\x1b[2J\\x0db\\x7f \\xc2\\x9b \xc3\xa9/x");
        free(p);
        p = doc_printable(NULL);
        ck_assert_str_eq(p, "");
        free(p);
}
END_TEST

START_TEST(long_text_is_cut_short)
{
        char big[1000], q[DOC_QUOTE_MAX];
        memset(big, 'x', sizeof(big));
        const char *s = doc_quote(q, big, sizeof(big));
        ck_assert_uint_lt(strlen(s), DOC_QUOTE_MAX);
        ck_assert_str_eq(s + strlen(s) - 4, "...\"");
}
END_TEST

START_TEST(paths_name_keys_and_indexes)
{
        struct doc_path p = {0};
        size_t a = doc_path_push_key(&p, "filesystem");
        size_t b = doc_path_push_key(&p, "rules");
        size_t c = doc_path_push_index(&p, 3);
        ck_assert_str_eq(p.text, "filesystem.rules[3]");
        size_t d = doc_path_push_key(&p, "not an identifier");
        ck_assert_str_eq(p.text, "filesystem.rules[3][\"not an identifier\"]");
        doc_path_pop(&p, d);
        doc_path_pop(&p, c);
        ck_assert_str_eq(p.text, "filesystem.rules");
        doc_path_pop(&p, b);
        doc_path_pop(&p, a);
        ck_assert_str_eq(p.text, "");
        ck_assert_uint_eq(p.len, 0);
        ck_assert(doc_key_is_identifier("_a9"));
        ck_assert(!doc_key_is_identifier("9a"));
        ck_assert(!doc_key_is_identifier(""));
}
END_TEST

START_TEST(a_huge_key_is_cut_with_a_marker)
{
        struct doc_path p = {0};
        char key[600];
        memset(key, 'k', sizeof(key) - 1);
        key[sizeof(key) - 1] = '\0';
        (void)doc_path_push_key(&p, "top");
        size_t saved = doc_path_push_key(&p, key);
        ck_assert_uint_eq(p.len, sizeof(p.text) - 1);
        ck_assert_str_eq(p.text + p.len - 3, "...");
        doc_path_pop(&p, saved);
        ck_assert_str_eq(p.text, "top");
}
END_TEST

_printf_(4, 5) static int record(char **err, const char *origin, const struct doc_path *p, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = doc_vfail(err, origin, p, fmt, ap);
        va_end(ap);
        return r;
}

START_TEST(only_the_first_error_is_kept)
{
        struct doc_path p = {0};
        char *err = NULL;
        ck_assert_int_eq(record(&err, "policy.json", &p, "expected %s", "an object"), -EINVAL);
        ck_assert_str_eq(err, "policy.json: expected an object");
        (void)doc_path_push_key(&p, "limits");
        ck_assert_int_eq(record(&err, "policy.json", &p, "later"), -EINVAL);
        ck_assert_str_eq(err, "policy.json: expected an object");
        free(err);
        err = NULL;
        (void)record(&err, "config.json", &p, "bad %d", 7);
        ck_assert_str_eq(err, "config.json: limits: bad 7");
        free(err);
}
END_TEST

START_TEST(kinds_are_named)
{
        json_t *v[] = {json_object(),  json_array(), json_string("s"), json_integer(1),
                       json_real(1.5), json_true(),  json_null()};
        const char *want[] = {"an object", "an array", "a string", "an integer", "a real number", "a boolean", "null"};
        for (size_t i = 0; i < ELEMENTSOF(v); i++) {
                ck_assert_str_eq(doc_json_kind(v[i]), want[i]);
                json_decref(v[i]);
        }
}
END_TEST

START_TEST(absolute_paths_are_normalised)
{
        static const struct {
                const char *in, *out;
                enum doc_path_error why;
        } rows[] = {
                {"/", "/", 0},
                {"//a///b/", "/a/b", 0},
                {"/a/./b/.", "/a/b", 0},
                {"/./", "/", 0},
                {"/a/..b/c..", "/a/..b/c..", 0},
                {"", NULL, DOC_PATH_EMPTY},
                {"a/b", NULL, DOC_PATH_RELATIVE},
                {"./a", NULL, DOC_PATH_RELATIVE},
                {"/a/../b", NULL, DOC_PATH_DOTDOT},
                {"/..", NULL, DOC_PATH_DOTDOT},
        };
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                char *out = NULL;
                enum doc_path_error why = 0;
                int r = doc_normalise_abs_path(rows[i].in, &out, &why);
                if (rows[i].out) {
                        ck_assert_msg(r == 0, "%s: %d", rows[i].in, r);
                        ck_assert_str_eq(out, rows[i].out);
                } else {
                        ck_assert_msg(r == -EINVAL, "%s: %d", rows[i].in, r);
                        ck_assert_int_eq(why, rows[i].why);
                        ck_assert_ptr_null(out);
                }
                free(out);
        }
}
END_TEST

int main(void)
{
        Suite *s = suite_create("common-docparse");
        TCase *tc = tcase_create("docparse");
        tcase_add_test(tc, quotes_control_and_non_ascii_bytes);
        tcase_add_test(tc, long_text_is_cut_short);
        tcase_add_test(tc, paths_name_keys_and_indexes);
        tcase_add_test(tc, a_huge_key_is_cut_with_a_marker);
        tcase_add_test(tc, only_the_first_error_is_kept);
        tcase_add_test(tc, kinds_are_named);
        tcase_add_test(tc, absolute_paths_are_normalised);
        tcase_add_test(tc, printable_escapes_controls_keeps_the_rest);
        suite_add_tcase(s, tc);
        SRunner *sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
