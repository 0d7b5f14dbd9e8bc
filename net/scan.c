/* The credential broker's byte scan (DESIGN.md, "Credentials"): finds a
 * grant's placeholder in every request body and its secret in every
 * response, at a cost that does not hang on what the bytes happen to be.
 *
 * glibc's memmem (needles up to 256 bytes) skips along a table of 256
 * hashed byte pairs, and data whose pairs share a hash with one near the
 * needle's end stops the skipping: a body of zeros against a placeholder
 * with "f0" among its last digits went at 0.4 GB/s, more than half of the
 * gate's time in an upload (of random placeholders, 1 in 40 scans zeros
 * below 2 GB/s, 1 in 75 below 1 GB/s). Here every pair is told apart (a
 * bitmap of the needle's pairs, their places in a small hash: about 10 KiB
 * a needle): the scan skips the needle's length less one unless the
 * window's last pair really is one of the needle's (Horspool on byte
 * pairs). A window is compared only when its last two bytes are the
 * needle's, and each comparison is followed by a skip to that pair's
 * previous place in the needle. */
#include "config.h"

#include "common/util.h"
#include "net/net-internal.h"

/* The skip table covers the needle's last NET_SCAN_SPAN bytes (a pair's
 * place must fit in a byte); a longer needle's first bytes are compared
 * once those are found. */
#define NET_SCAN_SPAN 256

static size_t pair(const uint8_t *p)
{
        return (size_t)p[0] << 8 | p[1];
}

static bool present(const struct net_scan *s, size_t p)
{
        return s->present[p >> 6] >> (p & 63) & 1;
}

/* The slot of pair p: its own, or the empty one where it would go (at
 * most NET_SCAN_SPAN - 1 pairs in NET_SCAN_SLOTS slots: one is empty). */
static size_t slot(const struct net_scan *s, size_t p)
{
        size_t i = (p * 40503u >> 7) & (NET_SCAN_SLOTS - 1);
        while (s->at[i] && s->key[i] != p)
                i = (i + 1) & (NET_SCAN_SLOTS - 1);
        return i;
}

static void put(struct net_scan *s, size_t p, size_t j)
{
        size_t i = slot(s, p);
        s->key[i] = (uint16_t)p;
        s->at[i] = (uint8_t)j;
        s->present[p >> 6] |= (uint64_t)1 << (p & 63);
}

void net_scan_init(struct net_scan *s, const void *needle, size_t len)
{
        const uint8_t *ne = needle;
        s->needle = ne;
        s->len = len;
        if (len < NET_SCAN_MIN)
                return; /* memmem's own short-needle paths (net_scan_find) */
        size_t span = len < NET_SCAN_SPAN ? len : NET_SCAN_SPAN;
        const uint8_t *tail = ne + len - span;
        size_t m1 = span - 1;
        /* where each pair of the tail ends in it (1 .. m1), the last place
         * winning. The last pair's earlier place says how far to go on
         * after a window that ends in it did not match. */
        memset(s->present, 0, sizeof(s->present));
        memset(s->at, 0, sizeof(s->at));
        for (size_t j = 1; j < m1; j++)
                put(s, pair(tail + j - 1), j);
        size_t last = pair(tail + m1 - 1);
        s->skip = m1 - (present(s, last) ? s->at[slot(s, last)] : 0);
        put(s, last, m1);
}

/* The first place of the tail (the needle's last span bytes) in h[0..n)
 * at or after from; SIZE_MAX: none. */
static size_t find_tail(const struct net_scan *s, const uint8_t *h, size_t n, size_t from)
{
        size_t span = s->len < NET_SCAN_SPAN ? s->len : NET_SCAN_SPAN, m1 = span - 1;
        const uint8_t *tail = s->needle + s->len - span;
        if (n < span)
                return SIZE_MAX;
        size_t last = n - span; /* the last place a window can start */
        for (size_t at = from; at <= last;) {
                /* windows whose last pair is nowhere in the tail, passed
                 * over a whole window less a byte at a time (the step does
                 * not wait for the table: the loads overlap) */
                size_t p;
                bool in;
                do {
                        at += m1;
                        p = pair(h + at - 1);
                        in = present(s, p);
                } while (!in && at <= last);
                if (!in)
                        break;
                /* the pair is at k in the tail: the window that puts it there */
                size_t k = s->at[slot(s, p)];
                at -= k;
                if (k < m1)
                        continue;
                if (memcmp(h + at, tail, span - 2) == 0)
                        return at;
                at += s->skip;
        }
        return SIZE_MAX;
}

const char *net_scan_find(const struct net_scan *s, const char *hay, size_t n)
{
        size_t m = s->len;
        if (m < NET_SCAN_MIN)
                return m == 0 ? hay : memmem(hay, n, s->needle, m);
        const uint8_t *h = (const uint8_t *)hay;
        size_t head = m > NET_SCAN_SPAN ? m - NET_SCAN_SPAN : 0;
        if (n < m)
                return NULL;
        /* the tail's places, from where a whole needle could end there */
        for (size_t at = head; (at = find_tail(s, h, n, at)) != SIZE_MAX; at++)
                if (memcmp(h + at - head, s->needle, head) == 0)
                        return hay + at - head;
        return NULL;
}
