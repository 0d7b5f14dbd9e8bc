/* sentry/cgroup/: what the room says about resource values before any
 * group exists, for its backends and for the OCI front: CPU and
 * memory-node lists ("0-3,8") parsed and checked against what the host has
 * online, and the CPU bandwidth a quota and period come to. Pure functions
 * of their input and, for the host check, of /sys; they make and touch no
 * group (the OCI config fuzz target links them). */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>

#include "common/util.h"
#include "sentry/cgroup/cgroup.h"

#define LIST_WORDS   64 /* lists up to CPU or node 4095 */
#define LIST_NUM_MAX 100000

int64_t cgroup_cpu_millis(uint64_t quota, uint64_t period)
{
        if (period == 0)
                return 0;
        uint64_t whole = quota / period;
        if (whole > (uint64_t)INT64_MAX / 1000 - 1)
                return INT64_MAX;
        int64_t millis = (int64_t)(whole * 1000 + quota % period * 1000 / period);
        /* a quota under a thousandth of a CPU still is a limit */
        return millis > 0 ? millis : 1;
}

static int list_num(const char **p, unsigned *ret)
{
        unsigned v = 0;
        const char *s = *p;
        if (*s < '0' || *s > '9')
                return -EINVAL;
        for (; *s >= '0' && *s <= '9'; s++) {
                v = v * 10 + (unsigned)(*s - '0');
                if (v > LIST_NUM_MAX)
                        return -ERANGE;
        }
        *p = s;
        *ret = v;
        return 0;
}

int cgroup_list_parse(const char *list, uint64_t *mask, size_t n_words)
{
        if (!list || !mask)
                return -EINVAL;
        memset(mask, 0, n_words * sizeof(*mask));
        const char *p = list;
        for (;;) {
                unsigned a, b;
                int r = list_num(&p, &a);
                if (r < 0)
                        return r;
                b = a;
                if (*p == '-') {
                        p++;
                        if ((r = list_num(&p, &b)) < 0)
                                return r;
                        if (b < a)
                                return -EINVAL;
                }
                if (b >= n_words * 64)
                        return -ERANGE;
                for (unsigned i = a; i <= b; i++)
                        mask[i / 64] |= UINT64_C(1) << (i % 64);
                if (*p == ',') {
                        p++;
                        continue;
                }
                /* a file from /sys ends with a newline */
                if (*p == '\n' && p[1] == '\0')
                        p++;
                return *p == '\0' ? 0 : -EINVAL;
        }
}

/* The first run of bits set in mask, as "N" or "N-M", into buf. */
static void first_range(const uint64_t *mask, size_t n_words, char *buf, size_t size)
{
        size_t bits = n_words * 64, a = 0;
        while (a < bits && !(mask[a / 64] >> (a % 64) & 1))
                a++;
        size_t b = a;
        while (b + 1 < bits && mask[(b + 1) / 64] >> ((b + 1) % 64) & 1)
                b++;
        if (a == b)
                snprintf(buf, size, "%zu", a);
        else
                snprintf(buf, size, "%zu-%zu", a, b);
}

static int check_one(const char *field, const char *what, const char *list, const char *online_file,
                     const char *fallback, char **ret_error)
{
        uint64_t want[LIST_WORDS], have[LIST_WORDS], missing[LIST_WORDS];
        int r = cgroup_list_parse(list, want, LIST_WORDS);
        if (r < 0) {
                *ret_error = xasprintf("%s \"%s\": %s", field, list,
                                       r == -ERANGE ? "a number past what cordon handles (4095)"
                                                    : "expected a list of numbers and ranges such as \"0-3,8\"");
                return -EINVAL;
        }
        char online[4096];
        _cleanup_close_ int fd = open(online_file, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read_full(fd, online, sizeof(online) - 1) : -1;
        if (n <= 0)
                snprintf(online, sizeof(online), "%s", fallback); /* no NUMA in this kernel: one node */
        else
                online[n] = '\0';
        online[strcspn(online, "\n")] = '\0';
        if (cgroup_list_parse(online, have, LIST_WORDS) < 0)
                return 0; /* the host's own list unreadable: the kernel's write decides */
        bool any = false;
        for (size_t i = 0; i < LIST_WORDS; i++) {
                missing[i] = want[i] & ~have[i];
                any |= missing[i] != 0;
        }
        if (!any)
                return 0;
        char first[64];
        first_range(missing, LIST_WORDS, first, sizeof(first));
        bool many = strchr(first, '-') != NULL;
        *ret_error = xasprintf("%s \"%s\": %s%s %s %s not online on this host (online: %s)", field, list, what,
                               many ? "s" : "", first, many ? "are" : "is", online);
        return -EINVAL;
}

int cgroup_cpuset_check(const char *cpus, const char *mems, char **ret_error)
{
        int r = 0;
        if (cpus)
                r = check_one("linux.resources.cpu.cpus", "CPU", cpus, "/sys/devices/system/cpu/online", "0",
                              ret_error);
        if (r >= 0 && mems)
                r = check_one("linux.resources.cpu.mems", "memory node", mems, "/sys/devices/system/node/online", "0",
                              ret_error);
        return r;
}
