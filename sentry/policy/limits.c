/* Limits as requested, parsing of sizes and durations, and the host's
 * admission policy. */
#include "config.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>

#include "common/util.h"
#include "sentry/policy/policy.h"

void run_limits_unset(struct run_limits *l)
{
        *l = (struct run_limits){
                .memory_bytes = POLICY_UNSET,
                .cpu_millis = POLICY_UNSET,
                .disk_bytes = POLICY_UNSET,
                .max_processes = POLICY_UNSET,
                .max_open_files = POLICY_UNSET,
                .timeout_ms = POLICY_UNSET,
                .expires_at = (time_t)-1,
        };
}

static void stricter(int64_t *have, int64_t other)
{
        if (other == POLICY_UNSET)
                return;
        if (*have == POLICY_UNSET || other < *have)
                *have = other;
}

void run_limits_merge_policy(struct run_limits *l, const struct policy *p)
{
        stricter(&l->memory_bytes, p->memory_bytes);
        stricter(&l->cpu_millis, p->cpu_millis);
        stricter(&l->disk_bytes, p->disk_bytes);
        stricter(&l->max_processes, p->max_processes);
        stricter(&l->max_open_files, p->max_open_files);
        stricter(&l->timeout_ms, p->timeout_ms);
        if (p->expires_at != (time_t)-1 && (l->expires_at == (time_t)-1 || p->expires_at < l->expires_at))
                l->expires_at = p->expires_at;
}

/* A decimal number with an optional fraction; *ret_end after it. */
static int parse_decimal(const char *s, double *ret, const char **ret_end)
{
        if (!isdigit((unsigned char)s[0]))
                return -EINVAL;
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (errno != 0 || !isfinite(v) || v < 0)
                return -EINVAL;
        *ret = v;
        *ret_end = end;
        return 0;
}

int parse_size(const char *s, int64_t *ret)
{
        double v;
        const char *u;
        if (parse_decimal(s, &v, &u) < 0)
                return -EINVAL;
        static const struct {
                const char *suffix;
                double mult;
        } units[] = {
                {"", 1},
                {"B", 1},
                {"K", 1024.0},
                {"KB", 1024.0},
                {"KiB", 1024.0},
                {"M", 1048576.0},
                {"MB", 1048576.0},
                {"MiB", 1048576.0},
                {"G", 1073741824.0},
                {"GB", 1073741824.0},
                {"GiB", 1073741824.0},
                {"T", 1099511627776.0},
                {"TB", 1099511627776.0},
                {"TiB", 1099511627776.0},
        };
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (strcasecmp(u, units[i].suffix) == 0) {
                        double b = v * units[i].mult;
                        if (b < 1 || b > 9.0e18)
                                return -EINVAL;
                        *ret = (int64_t)b;
                        return 0;
                }
        return -EINVAL;
}

int parse_duration_ms(const char *s, int64_t *ret)
{
        double v;
        const char *u;
        if (parse_decimal(s, &v, &u) < 0)
                return -EINVAL;
        double mult;
        if (*u == '\0' || streq(u, "s"))
                mult = 1000;
        else if (streq(u, "ms"))
                mult = 1;
        else if (streq(u, "m") || streq(u, "min"))
                mult = 60000;
        else if (streq(u, "h"))
                mult = 3600000;
        else if (streq(u, "d"))
                mult = 86400000;
        else
                return -EINVAL;
        double ms = v * mult;
        if (ms < 1 || ms > 30.0 * 86400000)
                return -EINVAL;
        *ret = (int64_t)ms;
        return 0;
}

int parse_cpus(const char *s, int64_t *ret)
{
        double v;
        const char *u;
        if (parse_decimal(s, &v, &u) < 0 || *u != '\0')
                return -EINVAL;
        double m = v * 1000;
        if (m < 10 || m > 1000000)
                return -EINVAL;
        *ret = (int64_t)llround(m);
        return 0;
}

static const struct {
        const char *key;
        size_t off;
} admission_keys[] = {
        {"memoryBytes", offsetof(struct admission, memory_bytes)},
        {"cpuMillis", offsetof(struct admission, cpu_millis)},
        {"diskBytes", offsetof(struct admission, disk_bytes)},
        {"maxProcesses", offsetof(struct admission, max_processes)},
        {"maxOpenFiles", offsetof(struct admission, max_open_files)},
        {"timeoutMs", offsetof(struct admission, timeout_ms)},
};

static void admission_unset(struct admission *a, const char *origin)
{
        *a = (struct admission){.origin = origin};
        for (size_t i = 0; i < ELEMENTSOF(admission_keys); i++)
                *(int64_t *)((char *)a + admission_keys[i].off) = POLICY_UNSET;
        a->max_sandboxes = POLICY_UNSET;
}

static int positive_int(json_t *v, int64_t *ret)
{
        if (!json_is_integer(v) || json_integer_value(v) <= 0)
                return -EINVAL;
        *ret = json_integer_value(v);
        return 0;
}

int admission_load(const char *path, struct admission *ret, char **ret_error)
{
        const char *file = path ? path : DEFAULT_ADMISSION_FILE;
        admission_unset(ret, file);
        json_error_t jerr;
        json_t *root = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
        if (!root) {
                if (!path && access(file, F_OK) < 0 && errno == ENOENT)
                        return 0; /* no admission policy on this host */
                *ret_error = xasprintf("%s:%d:%d: %s", file, jerr.line, jerr.column, jerr.text);
                return -EINVAL;
        }
        int r = 0;
        const char *key;
        json_t *v;
        if (!json_is_object(root)) {
                *ret_error = xasprintf("%s: expected a JSON object", file);
                r = -EINVAL;
                goto out;
        }
        json_object_foreach(root, key, v)
        {
                if (streq(key, "maxConcurrentSandboxes")) {
                        if (positive_int(v, &ret->max_sandboxes) < 0) {
                                *ret_error = xasprintf("%s: maxConcurrentSandboxes: expected a positive integer", file);
                                r = -EINVAL;
                                goto out;
                        }
                } else if (streq(key, "maxPerSandbox")) {
                        if (!json_is_object(v)) {
                                *ret_error = xasprintf("%s: maxPerSandbox: expected an object", file);
                                r = -EINVAL;
                                goto out;
                        }
                        const char *k2;
                        json_t *v2;
                        json_object_foreach(v, k2, v2)
                        {
                                size_t i;
                                for (i = 0; i < ELEMENTSOF(admission_keys); i++)
                                        if (streq(k2, admission_keys[i].key))
                                                break;
                                if (i == ELEMENTSOF(admission_keys)) {
                                        *ret_error = xasprintf("%s: maxPerSandbox.%s: unknown key", file, k2);
                                        r = -EINVAL;
                                        goto out;
                                }
                                if (positive_int(v2, (int64_t *)((char *)ret + admission_keys[i].off)) < 0) {
                                        *ret_error = xasprintf("%s: maxPerSandbox.%s: expected a positive integer",
                                                               file, k2);
                                        r = -EINVAL;
                                        goto out;
                                }
                        }
                } else {
                        *ret_error = xasprintf("%s: %s: unknown key (expected maxPerSandbox, maxConcurrentSandboxes)",
                                               file, key);
                        r = -EINVAL;
                        goto out;
                }
        }
out:
        json_decref(root);
        return r;
}

int admission_apply(const struct admission *a, struct run_limits *l, char **ret_error)
{
        struct {
                const char *name;
                int64_t *have;
                int64_t max;
        } rows[] = {
                {"memoryBytes", &l->memory_bytes, a->memory_bytes},
                {"cpuMillis", &l->cpu_millis, a->cpu_millis},
                {"diskBytes", &l->disk_bytes, a->disk_bytes},
                {"maxProcesses", &l->max_processes, a->max_processes},
                {"maxOpenFiles", &l->max_open_files, a->max_open_files},
                {"timeoutMs", &l->timeout_ms, a->timeout_ms},
        };
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                if (rows[i].max == POLICY_UNSET)
                        continue;
                if (*rows[i].have == POLICY_UNSET) {
                        *rows[i].have = rows[i].max;
                        continue;
                }
                if (*rows[i].have > rows[i].max) {
                        *ret_error = xasprintf("quota: %s %" PRId64 " exceeds the host's maximum %" PRId64 " (%s)",
                                               rows[i].name, *rows[i].have, rows[i].max, a->origin);
                        return -EDQUOT;
                }
        }
        return 0;
}

int limits_option(char opt, const char *arg, struct run_limits *l)
{
        switch (opt) {
        case 'M':
                if (parse_size(arg, &l->memory_bytes) < 0 || l->memory_bytes < 4 << 20) {
                        fprintf(stderr, "cordon: --memory %s: expected a size of at least 4M, e.g. 512M or 2G\n", arg);
                        return -EINVAL;
                }
                return 0;
        case 'c':
                if (parse_cpus(arg, &l->cpu_millis) < 0) {
                        fprintf(stderr, "cordon: --cpus %s: expected a number of CPUs from 0.01, e.g. 1.5\n", arg);
                        return -EINVAL;
                }
                return 0;
        case 'P':
        case 'N': {
                char *end;
                errno = 0;
                long long n = strtoll(arg, &end, 10);
                if (errno || *end || end == arg || n <= 0 || n > 4194304) {
                        fprintf(stderr, "cordon: --%s %s: expected a positive integer\n",
                                opt == 'P' ? "pids" : "nofile", arg);
                        return -EINVAL;
                }
                if (opt == 'P')
                        l->max_processes = n;
                else
                        l->max_open_files = n;
                return 0;
        }
        case 'D':
                if (parse_size(arg, &l->disk_bytes) < 0 || l->disk_bytes < 1 << 20) {
                        fprintf(stderr, "cordon: --disk %s: expected a size of at least 1M, e.g. 1G\n", arg);
                        return -EINVAL;
                }
                return 0;
        default:
                return -EINVAL;
        }
}
