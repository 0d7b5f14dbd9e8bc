/* Unit tests for the credential broker's byte scan (net/scan.c): it finds
 * the first place of a needle exactly where memmem does, for needles of
 * every length up to past the skip table's cap (255), in random bytes, in
 * bytes from a small alphabet (many pairs of the needle, many partial
 * matches), in zeros, with the needle at the start, at the end, cut off by
 * the end, overlapping itself, and in haystacks shorter than it. */
#include "config.h"

#include <check.h>

#include "common/util.h"
#include "net/net-internal.h"

/* a fixed generator: a failure shows the same bytes again */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint8_t next_byte(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (uint8_t)(rng >> 24);
}

static void fill(uint8_t *b, size_t n, unsigned alphabet)
{
        for (size_t i = 0; i < n; i++)
                b[i] = alphabet ? (uint8_t)('a' + next_byte() % alphabet) : next_byte();
}

/* net_scan_find agrees with memmem on hay for needle */
static void agree(const uint8_t *hay, size_t n, const uint8_t *needle, size_t m)
{
        static struct net_scan s;
        net_scan_init(&s, needle, m);
        const char *want = memmem(hay, n, needle, m);
        const char *got = net_scan_find(&s, (const char *)hay, n);
        ck_assert_msg(got == want, "needle of %zu bytes in %zu: found at %td, memmem at %td", m, n,
                      got ? got - (const char *)hay : -1, want ? want - (const char *)hay : -1);
}

START_TEST(test_against_memmem)
{
        static uint8_t hay[8192], needle[400];
        for (unsigned alphabet = 0; alphabet <= 4; alphabet += 2) {
                for (size_t m = 1; m <= 300; m += m < 20 ? 1 : 7) {
                        for (int round = 0; round < 6; round++) {
                                size_t n = 1 + next_byte() * 32u % sizeof(hay);
                                fill(hay, n, alphabet);
                                fill(needle, m, alphabet);
                                agree(hay, n, needle, m); /* mostly absent */
                                if (m <= n) {
                                        /* taken from the haystack: present, maybe earlier too */
                                        size_t at = (size_t)next_byte() * 31u % (n - m + 1);
                                        memcpy(needle, hay + at, m);
                                        agree(hay, n, needle, m);
                                        /* at the very end, and cut off by the end */
                                        memcpy(needle, hay + n - m, m);
                                        agree(hay, n, needle, m);
                                        agree(hay, n - 1, needle, m);
                                        /* at the start */
                                        memcpy(needle, hay, m);
                                        agree(hay, n, needle, m);
                                }
                                agree(hay, m - 1, needle, m); /* shorter than the needle */
                        }
                }
        }
}
END_TEST

START_TEST(test_placeholders)
{
        /* the broker's needles: "cordon_" and 40 hex digits, among them
         * the kind glibc's memmem crawls over zeros with ("f0" at the end) */
        static const char *const phs[] = {
                "cordon_01234567890123456789012345678901234567f012",
                "cordon_0123456789012345678901234567890123456789f0",
                "cordon_00112233445566778899aabbccddeeff00112233",
                "cordon_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        };
        static uint8_t zeros[65536 + 64], hex[65536 + 64];
        for (size_t i = 0; i < sizeof(hex); i++)
                hex[i] = (uint8_t) "0123456789abcdef"[next_byte() % 16];
        for (size_t k = 0; k < ELEMENTSOF(phs); k++) {
                size_t m = strlen(phs[k]);
                agree(zeros, sizeof(zeros), (const uint8_t *)phs[k], m);
                agree(hex, sizeof(hex), (const uint8_t *)phs[k], m);
                /* in the middle, after a near miss (all but the last byte) */
                memcpy(zeros + 1000, phs[k], m - 1);
                memcpy(zeros + 3001, phs[k], m);
                memcpy(hex + 7777, phs[k], m);
                agree(zeros, sizeof(zeros), (const uint8_t *)phs[k], m);
                agree(hex, sizeof(hex), (const uint8_t *)phs[k], m);
                memset(zeros, 0, sizeof(zeros));
        }
        /* a needle that overlaps itself, in a run of its own letters */
        static uint8_t run[1000];
        memset(run, 'a', sizeof(run));
        run[999] = 'b';
        agree(run, sizeof(run), (const uint8_t *)"aaaaab", 6);
        agree(run, sizeof(run), (const uint8_t *)"aaaaaa", 6);
        agree(run, sizeof(run), (const uint8_t *)"abaaaa", 6);
}
END_TEST

static Suite *scan_suite(void)
{
        Suite *s = suite_create("net-scan");
        TCase *tc = tcase_create("scan");
        tcase_add_test(tc, test_against_memmem);
        tcase_add_test(tc, test_placeholders);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(scan_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
