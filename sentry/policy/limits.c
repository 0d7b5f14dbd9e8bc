/* Limits as requested, parsing of sizes and durations, and the host's
 * admission policy. */
#include "config.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h> /* isfinite: a macro, no libm */

#include "common/util.h"
#include "sentry/policy/policy.h"

#define KIB (INT64_C(1) << 10)
#define MIB (INT64_C(1) << 20)
#define GIB (INT64_C(1) << 30)

_Static_assert(offsetof(struct run_limits, value[LIMIT_MEMORY]) == offsetof(struct run_limits, memory_bytes) &&
                       offsetof(struct run_limits, value[LIMIT_CPU]) == offsetof(struct run_limits, cpu_millis) &&
                       offsetof(struct run_limits, value[LIMIT_DISK]) == offsetof(struct run_limits, disk_bytes) &&
                       offsetof(struct run_limits, value[LIMIT_PROCESSES]) ==
                               offsetof(struct run_limits, max_processes) &&
                       offsetof(struct run_limits, value[LIMIT_OPEN_FILES]) ==
                               offsetof(struct run_limits, max_open_files) &&
                       offsetof(struct run_limits, value[LIMIT_TIMEOUT]) == offsetof(struct run_limits, timeout_ms),
               "struct run_limits' fields are in enum limit_kind's order");

static const struct {
        const char *key;  /* the policy's and the admission file's */
        const char *flag; /* cordon run's */
        const char *arg;
        int64_t builtin; /* the built-in default, POLICY_UNSET: none */
} limit_info[_LIMIT_KIND_MAX] = {
        [LIMIT_MEMORY] = {"memoryBytes", "--memory", "SIZE", DEFAULT_MEMORY_BYTES},
        [LIMIT_CPU] = {"cpuMillis", "--cpus", "N", POLICY_UNSET},
        [LIMIT_DISK] = {"diskBytes", "--disk", "SIZE", POLICY_UNSET},
        [LIMIT_PROCESSES] = {"maxProcesses", "--pids", "N", DEFAULT_MAX_PROCESSES},
        [LIMIT_OPEN_FILES] = {"maxOpenFiles", "--nofile", "N", POLICY_UNSET},
        [LIMIT_TIMEOUT] = {"timeoutMs", "--timeout", "DURATION", POLICY_UNSET},
};

const char *limit_key(enum limit_kind kind)
{
        return kind < _LIMIT_KIND_MAX ? limit_info[kind].key : "?";
}

const char *limit_flag(enum limit_kind kind)
{
        return kind < _LIMIT_KIND_MAX ? limit_info[kind].flag : "?";
}

const char *limit_flag_arg(enum limit_kind kind)
{
        return kind < _LIMIT_KIND_MAX ? limit_info[kind].arg : "?";
}

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

static int64_t policy_value(const struct policy *p, enum limit_kind kind)
{
        switch (kind) {
        case LIMIT_MEMORY:
                return p->memory_bytes;
        case LIMIT_CPU:
                return p->cpu_millis;
        case LIMIT_DISK:
                return p->disk_bytes;
        case LIMIT_PROCESSES:
                return p->max_processes;
        case LIMIT_OPEN_FILES:
                return p->max_open_files;
        case LIMIT_TIMEOUT:
                return p->timeout_ms;
        case _LIMIT_KIND_MAX:
                break;
        }
        return POLICY_UNSET;
}

void run_limits_merge_policy(struct run_limits *l, const struct policy *p)
{
        for (size_t k = 0; k < _LIMIT_KIND_MAX; k++) {
                /* what the caller parsed itself (--ttl, --timeout) is a flag */
                if (l->value[k] != POLICY_UNSET && l->src[k] == LIMIT_SRC_NONE)
                        l->src[k] = LIMIT_SRC_FLAG;
                int64_t v = policy_value(p, (enum limit_kind)k);
                if (v != POLICY_UNSET) {
                        /* the stricter wins; a flag's "unlimited" is the least strict */
                        if (l->value[k] == POLICY_UNSET || v < l->value[k]) {
                                l->value[k] = v;
                                l->src[k] = LIMIT_SRC_POLICY;
                        }
                } else if ((p->unlimited & LIMIT_BIT(k)) && l->src[k] == LIMIT_SRC_NONE)
                        l->src[k] = LIMIT_SRC_POLICY; /* lifted: no default */
        }
        if (p->expires_at != (time_t)-1 && (l->expires_at == (time_t)-1 || p->expires_at < l->expires_at))
                l->expires_at = p->expires_at;
}

void run_limits_apply_defaults(struct run_limits *l)
{
        for (size_t k = 0; k < _LIMIT_KIND_MAX; k++)
                if (limit_info[k].builtin != POLICY_UNSET && l->value[k] == POLICY_UNSET &&
                    l->src[k] == LIMIT_SRC_NONE) {
                        l->value[k] = limit_info[k].builtin;
                        l->src[k] = LIMIT_SRC_DEFAULT;
                }
}

void run_limits_drop_default(struct run_limits *l, enum limit_kind kind)
{
        if (kind < _LIMIT_KIND_MAX && l->src[kind] == LIMIT_SRC_DEFAULT)
                l->value[kind] = POLICY_UNSET;
}

char *limit_format_value(enum limit_kind kind, int64_t v, char *buf, size_t size)
{
        if (v == POLICY_UNSET) {
                snprintf(buf, size, "none");
                return buf;
        }
        long long n = (long long)v;
        switch (kind) {
        case LIMIT_MEMORY:
        case LIMIT_DISK:
                if (v % GIB == 0)
                        snprintf(buf, size, "%lld GiB", n / GIB);
                else if (v % MIB == 0)
                        snprintf(buf, size, "%lld MiB", n / MIB);
                else if (v % KIB == 0)
                        snprintf(buf, size, "%lld KiB", n / KIB);
                else
                        snprintf(buf, size, "%lld bytes", n);
                break;
        case LIMIT_CPU:
                snprintf(buf, size, "%g CPU%s", (double)v / 1000, v == 1000 ? "" : "s");
                break;
        case LIMIT_PROCESSES:
                snprintf(buf, size, "%lld task%s", n, n == 1 ? "" : "s");
                break;
        case LIMIT_OPEN_FILES:
                snprintf(buf, size, "%lld open file%s", n, n == 1 ? "" : "s");
                break;
        case LIMIT_TIMEOUT:
                if (v % 3600000 == 0)
                        snprintf(buf, size, "%lld h", n / 3600000);
                else if (v % 60000 == 0)
                        snprintf(buf, size, "%lld min", n / 60000);
                else if (v % 1000 == 0)
                        snprintf(buf, size, "%lld s", n / 1000);
                else
                        snprintf(buf, size, "%lld ms", n);
                break;
        case _LIMIT_KIND_MAX:
                snprintf(buf, size, "%lld", n);
                break;
        }
        return buf;
}

char *limit_format_source(const struct run_limits *l, enum limit_kind kind, char *buf, size_t size)
{
        if (kind >= _LIMIT_KIND_MAX) {
                snprintf(buf, size, "?");
                return buf;
        }
        bool set = l->value[kind] != POLICY_UNSET;
        char def[32];
        switch (l->src[kind]) {
        case LIMIT_SRC_NONE:
                snprintf(buf, size, "none");
                break;
        case LIMIT_SRC_DEFAULT:
                if (set)
                        snprintf(buf, size, "the built-in default");
                else
                        snprintf(buf, size, "the built-in default of %s cannot be applied on this host",
                                 limit_format_value(kind, limit_info[kind].builtin, def, sizeof(def)));
                break;
        case LIMIT_SRC_FLAG:
                snprintf(buf, size, "%s%s%s", set ? "from " : "", limit_info[kind].flag, set ? "" : " unlimited");
                break;
        case LIMIT_SRC_POLICY:
                if (set)
                        snprintf(buf, size, "from the policy");
                else
                        snprintf(buf, size, "\"unlimited\" in the policy");
                break;
        case LIMIT_SRC_ADMISSION:
                snprintf(buf, size, "the host's maximum in %s", l->admission ? l->admission : "its admission file");
                break;
        }
        return buf;
}

char *limit_describe(const struct run_limits *l, enum limit_kind kind, char *buf, size_t size)
{
        char v[48], s[160];
        if (kind >= _LIMIT_KIND_MAX) {
                snprintf(buf, size, "?");
                return buf;
        }
        limit_format_value(kind, l->value[kind], v, sizeof(v));
        if (l->value[kind] == POLICY_UNSET && l->src[kind] == LIMIT_SRC_NONE)
                /* the writable layer is a tmpfs: its own default size */
                snprintf(buf, size, "%s", kind == LIMIT_DISK ? "none (a tmpfs: half the host's RAM)" : "none");
        else
                snprintf(buf, size, "%s (%s)", v, limit_format_source(l, kind, s, sizeof(s)));
        return buf;
}

char *limit_raise_hint(const struct run_limits *l, enum limit_kind kind, char *buf, size_t size)
{
        if (kind >= _LIMIT_KIND_MAX) {
                snprintf(buf, size, "?");
                return buf;
        }
        const char *flag = limit_info[kind].flag, *arg = limit_info[kind].arg;
        switch (l->src[kind]) {
        case LIMIT_SRC_POLICY:
                snprintf(buf, size, "raise limits.%s in the policy", limit_info[kind].key);
                break;
        case LIMIT_SRC_ADMISSION:
                /* the source already names the file */
                snprintf(buf, size, "only the host's administrator can raise it");
                break;
        case LIMIT_SRC_NONE:
        case LIMIT_SRC_DEFAULT:
        case LIMIT_SRC_FLAG:
                snprintf(buf, size, "raise it with %s %s or %s unlimited", flag, arg, flag);
                break;
        }
        return buf;
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
        /* rounded half up (m is positive): llround, without libm, which
         * every start of cordon would otherwise map and relocate */
        *ret = (int64_t)(m + 0.5);
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
        a->min_isolation = -1;
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
                } else if (streq(key, "minimumIsolation")) {
                        if ((ret->min_isolation = policy_tier_find(json_string_value(v))) < 0) {
                                *ret_error = xasprintf(
                                        "%s: minimumIsolation: expected one of standard, hardened, maximum", file);
                                r = -EINVAL;
                                goto out;
                        }
                } else if (streq(key, "highRiskRequiresStrongest")) {
                        if (!json_is_boolean(v)) {
                                *ret_error = xasprintf("%s: highRiskRequiresStrongest: expected true or false", file);
                                r = -EINVAL;
                                goto out;
                        }
                        ret->high_risk_strongest = json_is_true(v);
                } else {
                        *ret_error = xasprintf("%s: %s: unknown key (expected maxPerSandbox, maxConcurrentSandboxes, "
                                               "minimumIsolation, highRiskRequiresStrongest)",
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
        const int64_t max[_LIMIT_KIND_MAX] = {
                [LIMIT_MEMORY] = a->memory_bytes,       [LIMIT_CPU] = a->cpu_millis,
                [LIMIT_DISK] = a->disk_bytes,           [LIMIT_PROCESSES] = a->max_processes,
                [LIMIT_OPEN_FILES] = a->max_open_files, [LIMIT_TIMEOUT] = a->timeout_ms,
        };
        for (size_t k = 0; k < _LIMIT_KIND_MAX; k++) {
                if (max[k] == POLICY_UNSET)
                        continue;
                /* nobody set it (a built-in default is no setting): the
                 * host's maximum is the limit */
                if (l->src[k] == LIMIT_SRC_NONE || l->src[k] == LIMIT_SRC_DEFAULT) {
                        l->value[k] = max[k];
                        l->src[k] = LIMIT_SRC_ADMISSION;
                        l->admission = a->origin;
                        continue;
                }
                if (l->value[k] == POLICY_UNSET) {
                        char src[160];
                        *ret_error = xasprintf("quota: %s unlimited (%s) exceeds the host's maximum %" PRId64 " (%s)",
                                               limit_info[k].key,
                                               limit_format_source(l, (enum limit_kind)k, src, sizeof(src)), max[k],
                                               a->origin);
                        return -EDQUOT;
                }
                if (l->value[k] > max[k]) {
                        *ret_error = xasprintf("quota: %s %" PRId64 " exceeds the host's maximum %" PRId64 " (%s)",
                                               limit_info[k].key, l->value[k], max[k], a->origin);
                        return -EDQUOT;
                }
        }
        return 0;
}

int limits_option(char opt, const char *arg, struct run_limits *l)
{
        enum limit_kind kind;
        const char *name;
        switch (opt) {
        case 'M':
                kind = LIMIT_MEMORY, name = "--memory";
                break;
        case 'c':
                kind = LIMIT_CPU, name = "--cpus";
                break;
        case 'P':
                kind = LIMIT_PROCESSES, name = "--pids";
                break;
        case 'm':
                kind = LIMIT_PROCESSES, name = "--max-processes";
                break;
        case 'N':
                kind = LIMIT_OPEN_FILES, name = "--nofile";
                break;
        case 'D':
                kind = LIMIT_DISK, name = "--disk";
                break;
        case 'o':
                kind = LIMIT_TIMEOUT, name = "--timeout";
                break;
        default:
                return -EINVAL;
        }
        int64_t *v = &l->value[kind];
        /* said out loud, so that no built-in default applies: the policy's
         * limit, when it gives one, is still the stricter */
        if (streq(arg, "unlimited")) {
                *v = POLICY_UNSET;
                l->src[kind] = LIMIT_SRC_FLAG;
                return 0;
        }
        int r = -EINVAL;
        const char *want = NULL;
        switch (kind) {
        case LIMIT_MEMORY:
                r = parse_size(arg, v) < 0 || *v < 4 << 20 ? -EINVAL : 0;
                want = "a size of at least 4M, e.g. 512M or 2G, or unlimited";
                break;
        case LIMIT_CPU:
                r = parse_cpus(arg, v);
                want = "a number of CPUs from 0.01, e.g. 1.5, or unlimited";
                break;
        case LIMIT_PROCESSES:
        case LIMIT_OPEN_FILES: {
                char *end;
                errno = 0;
                long long n = strtoll(arg, &end, 10);
                r = errno || *end || end == arg || n <= 0 || n > 4194304 ? -EINVAL : 0;
                if (r == 0)
                        *v = n;
                want = "a positive integer, or unlimited";
                break;
        }
        case LIMIT_DISK:
                r = parse_size(arg, v) < 0 || *v < 1 << 20 ? -EINVAL : 0;
                want = "a size of at least 1M, e.g. 1G, or unlimited";
                break;
        case LIMIT_TIMEOUT:
                r = parse_duration_ms(arg, v);
                want = "a duration such as 30s, 500ms, 5m, 1h (at most 30 days), or unlimited";
                break;
        case _LIMIT_KIND_MAX:
                break;
        }
        if (r < 0) {
                *v = POLICY_UNSET;
                fprintf(stderr, "cordon: %s %s: expected %s\n", name, arg, want);
                return -EINVAL;
        }
        l->src[kind] = LIMIT_SRC_FLAG;
        return 0;
}
