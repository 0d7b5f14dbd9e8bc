#include "config.h"

/* Unit tests for the events of long-lived sandboxes (sentry/sandbox/events.c):
 * credential-like fields are masked at any depth, and every event is
 * bounded (depth, string length, items) with a marker where it was cut. */

#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "sentry/sandbox/sandbox-internal.h"

static char *dump(json_t *j)
{
        char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        ck_assert_ptr_nonnull(s);
        return s;
}

START_TEST(masks_credentials_recursively)
{
        json_error_t e;
        json_t *in = json_loads("{\"token\": \"abc\", \"inner\": {\"Password\": \"p\", \"keep\": 1,"
                                " \"list\": [{\"X-Api_Key\": \"k\"}, {\"authorization\": {\"deep\": \"s\"}}]},"
                                " \"argv\": [\"echo\", \"hi\"], \"session_secret\": 5}",
                                0, &e);
        ck_assert_ptr_nonnull(in);
        json_t *out = event_sanitize(in);
        _cleanup_free_ char *s = dump(out);
        ck_assert_str_eq(
                s, "{\"argv\":[\"echo\",\"hi\"],\"inner\":{\"Password\":\"***\",\"keep\":1,\"list\":[{\"X-Api_Key\":"
                   "\"***\"},{\"authorization\":\"***\"}]},\"session_secret\":\"***\",\"token\":\"***\"}");
        /* the input is left as it was */
        ck_assert_str_eq(json_string_value(json_object_get(in, "token")), "abc");
        json_decref(in);
        json_decref(out);
}
END_TEST

START_TEST(names_that_are_not_credentials)
{
        static const char *const plain[] = {"run", "argv", "status", "exitCode", "path", "keep", "tok", "pass"};
        for (size_t i = 0; i < ELEMENTSOF(plain); i++)
                ck_assert_msg(!event_secret_key(plain[i]), "%s is not a credential", plain[i]);
        static const char *const secret[] = {"token",  "AccessToken",   "PASSWORD",    "passwd", "Authorization",
                                             "cookie", "client_secret", "credentials", "apiKey"};
        for (size_t i = 0; i < ELEMENTSOF(secret); i++)
                ck_assert_msg(event_secret_key(secret[i]), "%s is a credential", secret[i]);
}
END_TEST

START_TEST(long_strings_are_cut_with_a_marker)
{
        size_t n = EVENT_MAX_STRING * 3;
        char *big = xmalloc(n + 1);
        memset(big, 'a', n);
        big[n] = '\0';
        /* a multibyte character right at the cut */
        memcpy(big + EVENT_MAX_STRING - 1, "\xc3\xa9", 2);
        json_t *in = json_pack("{s:s}", "text", big);
        ck_assert_ptr_nonnull(in);
        json_t *out = event_sanitize(in);
        const char *t = json_string_value(json_object_get(out, "text"));
        ck_assert_ptr_nonnull(t);
        ck_assert_uint_lt(strlen(t), EVENT_MAX_STRING + 100);
        ck_assert_ptr_nonnull(strstr(t, "[cordon: truncated, "));
        free(big);
        json_decref(in);
        json_decref(out);
}
END_TEST

START_TEST(deep_nesting_and_many_items_are_bounded)
{
        json_t *root = json_object(), *cur = root;
        for (int i = 0; i < EVENT_MAX_DEPTH * 4; i++) {
                json_t *next = json_object();
                json_object_set_new(cur, "n", next);
                cur = next;
        }
        json_t *out = event_sanitize(root);
        _cleanup_free_ char *s = dump(out);
        ck_assert_ptr_nonnull(strstr(s, "nested too deep"));
        json_decref(root);
        json_decref(out);

        json_t *arr = json_array();
        for (int i = 0; i < EVENT_MAX_ITEMS * 2; i++)
                json_array_append_new(arr, json_integer(i));
        out = event_sanitize(arr);
        ck_assert_uint_eq(json_array_size(out), EVENT_MAX_ITEMS + 1);
        ck_assert_str_eq(json_string_value(json_array_get(out, EVENT_MAX_ITEMS)), "[cordon: truncated]");
        json_decref(arr);
        json_decref(out);
}
END_TEST

START_TEST(text_that_is_not_utf8)
{
        json_t *j = json_text("ab\xff\xfe"
                              "c",
                              5);
        ck_assert_str_eq(json_string_value(j), "ab??c");
        json_decref(j);
        j = json_text("plain", 5);
        ck_assert_str_eq(json_string_value(j), "plain");
        json_decref(j);
}
END_TEST

/* The lines event_append wrote to fd, from the start: their types. */
static char *types_written(int fd)
{
        char buf[4096];
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        ck_assert_int_ge(n, 0);
        buf[n] = '\0';
        char *out = xstrdup("");
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                json_t *j = json_loads(line, 0, NULL);
                ck_assert_ptr_nonnull(j);
                char *o = xasprintf("%s%s ", out, json_string_value(json_object_get(j, "type")));
                free(out);
                out = o;
                json_decref(j);
        }
        return out;
}

/* A run that prints without end fills the events file with output: the
 * lines after that (a run's end, an egress audit record, an approval,
 * the sandbox's end) must still be written, or the sandboxed code could
 * blind the record of what it does next by printing first. */
START_TEST(output_cannot_crowd_out_the_record)
{
        char path[] = "/tmp/cordon-events-XXXXXX";
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        unlink(path);
        /* output up to the edge of its share, then more of it */
        struct serve srv = {.events_fd = fd, .events_bytes = (48LL << 20) - 200};
        for (int i = 0; i < 4; i++)
                event_append(&srv, "output",
                             json_pack("{s:s, s:s}", "run", "r1", "text", "0123456789012345678901234567890123456789"));
        event_append(&srv, "run_exited", json_pack("{s:s, s:i}", "run", "r1", "exitCode", 0));
        event_append(&srv, "audit", json_pack("{s:s, s:s}", "reason", "egress_allowed", "host", "example.com"));
        event_append(&srv, "terminated", json_object());
        event_append(&srv, "output", json_pack("{s:s, s:s}", "run", "r1", "text", "x"));
        _cleanup_free_ char *types = types_written(fd);
        /* output is refused before the others, and says so once */
        ck_assert_ptr_nonnull(strstr(types, "output output_limit run_exited audit terminated "));
        ck_assert_ptr_null(strstr(strstr(types, "output_limit ") + 1, "output"));
        /* a share passed by the others' events is said used up too */
        srv.events_bytes = (60LL << 20) + 10;
        event_append(&srv, "audit", json_pack("{s:s}", "reason", "egress_allowed"));
        event_append(&srv, "audit", json_pack("{s:s}", "reason", "egress_allowed"));
        event_append(&srv, "run_started", json_pack("{s:s}", "run", "r2"));
        /* the file's own limit is its last line, whatever comes after */
        srv.events_bytes = (64LL << 20) - 10;
        event_append(&srv, "run_exited", json_pack("{s:s}", "run", "r2"));
        event_append(&srv, "output", json_pack("{s:s}", "run", "r2"));
        event_append(&srv, "audit", json_pack("{s:s}", "reason", "egress_allowed"));
        event_append(&srv, "ended", json_object());
        _cleanup_free_ char *more = types_written(fd);
        ck_assert_ptr_nonnull(strstr(more, "terminated audit_limit run_started events_limit "));
        ck_assert_str_eq(strstr(more, "events_limit "), "events_limit ");
        close(fd);
}
END_TEST

/* A reader resuming at a seq finds it by a binary search on the log: the
 * first event after it, whatever the lines' lengths, with a line being
 * written at the end left for later, and the last complete event's seq. */
START_TEST(seek_finds_the_first_event_after)
{
        char path[] = "/tmp/cordon-events-XXXXXX";
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        unlink(path);
        FILE *w = fdopen(dup(fd), "w");
        for (int i = 1; i <= 5000; i++) {
                /* lines of unequal length, some long */
                int pad = (i * 7919) % 300 + (i % 97 == 0 ? 60000 : 0);
                fprintf(w, "{\"pad\":\"%*s\",\"seq\":%d,\"type\":\"output\"}\n", pad, "", i);
        }
        /* being written, and long: the search's scans stop short of it */
        fputs("{\"seq\":5001,\"type\":\"output\",\"text\":\"", w);
        for (int i = 0; i < (1 << 20); i++)
                putc('x', w);
        fclose(w);
        static const long long afters[] = {0, 1, 2, 96, 97, 98, 2500, 4998, 4999, 5000, 7000};
        for (size_t k = 0; k < ELEMENTSOF(afters); k++) {
                struct event_reader er = {.f = fdopen(dup(fd), "r")};
                long long last = -1;
                ck_assert_int_eq(event_reader_seek(&er, afters[k], &last), 0);
                ck_assert_int_eq(last, 5000);
                json_t *ev = NULL;
                int got = event_reader_next(&er, &ev, NULL);
                if (afters[k] < 5000) {
                        ck_assert_int_eq(got, 1);
                        ck_assert_int_eq(json_integer_value(json_object_get(ev, "seq")), afters[k] + 1);
                        json_decref(ev);
                } else
                        ck_assert_int_eq(got, 0); /* only the line being written is left */
                event_reader_close(&er);
        }
        /* an empty log */
        ck_assert_int_eq(ftruncate(fd, 0), 0);
        struct event_reader er = {.f = fdopen(dup(fd), "r")};
        long long last = -1;
        ck_assert_int_eq(event_reader_seek(&er, 0, &last), 0);
        ck_assert_int_eq(last, 0);
        event_reader_close(&er);
        close(fd);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("sentry-events");
        TCase *tc = tcase_create("events");
        tcase_add_test(tc, masks_credentials_recursively);
        tcase_add_test(tc, names_that_are_not_credentials);
        tcase_add_test(tc, long_strings_are_cut_with_a_marker);
        tcase_add_test(tc, deep_nesting_and_many_items_are_bounded);
        tcase_add_test(tc, text_that_is_not_utf8);
        tcase_add_test(tc, output_cannot_crowd_out_the_record);
        tcase_add_test(tc, seek_finds_the_first_event_after);
        suite_add_tcase(s, tc);
        SRunner *sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
