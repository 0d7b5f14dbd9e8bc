/* linux.seccomp of an OCI config: parsed into struct oci_seccomp, then
 * compiled with libseccomp into a classic BPF program for the native
 * architecture. The runtime loads it in addition to cordon's own filter
 * (the kernel runs every filter and takes the strictest verdict), so a
 * container's profile can only take more away. */
#include "config.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "common/util.h"
#include "sentry/oci-internal.h"
#include "sentry/oci.h"

/* errno values a filter can return: the kernel clamps SECCOMP_RET_DATA to
 * MAX_ERRNO. */
#define ERRNO_MAX 4095

static void seccomp_releasep(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}

static const struct {
        const char *name;
        uint32_t action; /* errno/trace data added later */
} actions[] = {
        {"SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD},
        {"SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD},
        {"SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS},
        {"SCMP_ACT_TRAP", SCMP_ACT_TRAP},
        {"SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0)},
        {"SCMP_ACT_TRACE", SCMP_ACT_TRACE(0)},
        {"SCMP_ACT_ALLOW", SCMP_ACT_ALLOW},
        {"SCMP_ACT_LOG", SCMP_ACT_LOG},
};

static bool action_takes_errno(uint32_t a)
{
        return a == SCMP_ACT_ERRNO(0) || a == SCMP_ACT_TRACE(0);
}

/* An action name; *ret is the base action (ERRNO/TRACE with data 0). */
static int get_action(struct oci_parser *p, json_t *v, uint32_t *ret)
{
        const char *s;
        char q[OCI_QUOTE_MAX];
        int r = oci_get_string(p, v, &s);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(actions); i++)
                if (streq(actions[i].name, s)) {
                        *ret = actions[i].action;
                        return 0;
                }
        /* cordon's own filter owns the process's one notification
         * listener; a second supervisor would also be one cordon cannot
         * vouch for. */
        if (streq(s, "SCMP_ACT_NOTIFY"))
                return oci_fail(p, "SCMP_ACT_NOTIFY is not supported by cordon: its own supervisor handles the "
                                   "container's notifications");
        return oci_fail(p, "unknown seccomp action %s", oci_quote(q, s, strlen(s)));
}

static int get_errno(struct oci_parser *p, json_t *v, uint32_t *ret)
{
        int64_t e;
        int r = oci_get_int(p, v, 0, ERRNO_MAX, &e);
        if (r < 0)
                return r;
        *ret = (uint32_t)e;
        return 0;
}

static int get_arch(struct oci_parser *p, json_t *v, uint32_t *ret)
{
        char name[32], q[OCI_QUOTE_MAX];
        const char *s;
        uint32_t arch;
        size_t n;
        int r = oci_get_string(p, v, &s);
        if (r < 0)
                return r;
        /* "SCMP_ARCH_X86_64" is libseccomp's "x86_64", and so on for all */
        n = strlen(s);
        if (!startswith(s, "SCMP_ARCH_") || n - 10 >= sizeof(name) || n == 10)
                return oci_fail(p, "unknown architecture %s", oci_quote(q, s, n));
        for (size_t i = 10; i <= n; i++)
                name[i - 10] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
        arch = seccomp_arch_resolve_name(name);
        if (arch == 0)
                return oci_fail(p, "unknown architecture %s", oci_quote(q, s, n));
        *ret = arch;
        return 0;
}

static int parse_arches(struct oci_parser *p, json_t *v, struct oci_seccomp *sc)
{
        size_t n;
        int r = oci_check_array(p, v, &n);
        if (r < 0)
                return r;
        sc->arches = xcalloc(n, sizeof(uint32_t));
        for (size_t i = 0; i < n; i++) {
                size_t saved = oci_path_push_index(p, i);
                r = get_arch(p, json_array_get(v, i), &sc->arches[i]);
                oci_path_pop(p, saved);
                if (r < 0)
                        return r;
                sc->n_arches = i + 1;
        }
        return 0;
}

static int parse_flags(struct oci_parser *p, json_t *v, struct oci_seccomp *sc)
{
        size_t n;
        int r = oci_check_array(p, v, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                size_t saved = oci_path_push_index(p, i);
                char q[OCI_QUOTE_MAX];
                const char *s;

                r = oci_get_string(p, json_array_get(v, i), &s);
                if (r >= 0) {
                        if (streq(s, "SECCOMP_FILTER_FLAG_TSYNC"))
                                sc->flags |= SECCOMP_FILTER_FLAG_TSYNC;
                        else if (streq(s, "SECCOMP_FILTER_FLAG_LOG"))
                                sc->flags |= SECCOMP_FILTER_FLAG_LOG;
                        else if (streq(s, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"))
                                /* only means something with a listener, which is refused */
                                ;
                        else if (streq(s, "SECCOMP_FILTER_FLAG_SPEC_ALLOW"))
                                r = oci_fail(p, "SECCOMP_FILTER_FLAG_SPEC_ALLOW is not supported by cordon: it "
                                                "turns off the speculative-store-bypass mitigation");
                        else
                                r = oci_fail(p, "unknown seccomp flag %s", oci_quote(q, s, strlen(s)));
                }
                oci_path_pop(p, saved);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const struct {
        const char *name;
        int op;
} ops[] = {
        {"SCMP_CMP_NE", SCMP_CMP_NE},
        {"SCMP_CMP_LT", SCMP_CMP_LT},
        {"SCMP_CMP_LE", SCMP_CMP_LE},
        {"SCMP_CMP_EQ", SCMP_CMP_EQ},
        {"SCMP_CMP_GE", SCMP_CMP_GE},
        {"SCMP_CMP_GT", SCMP_CMP_GT},
        {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
};

static int get_op(struct oci_parser *p, json_t *v, int *ret)
{
        const char *s;
        char q[OCI_QUOTE_MAX];
        int r = oci_get_string(p, v, &s);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                if (streq(ops[i].name, s)) {
                        *ret = ops[i].op;
                        return 0;
                }
        return oci_fail(p, "unknown comparison %s", oci_quote(q, s, strlen(s)));
}

static int parse_arg(struct oci_parser *p, json_t *v, struct oci_seccomp_arg *a)
{
        int64_t index;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        static const char *const required[] = {"index", "value", "op"};
        for (size_t k = 0; k < ELEMENTSOF(required); k++)
                if (!oci_member(v, required[k])) {
                        size_t saved = oci_path_push_key(p, required[k]);
                        r = oci_fail(p, "required key is missing");
                        oci_path_pop(p, saved);
                        return r;
                }
#define AT1(key, expr)                                               \
        ({                                                           \
                json_t *it = oci_member(v, (key));                   \
                int _r = 0;                                          \
                if (it) {                                            \
                        size_t _saved = oci_path_push_key(p, (key)); \
                        _r = (expr);                                 \
                        oci_path_pop(p, _saved);                     \
                }                                                    \
                _r;                                                  \
        })
        if ((r = AT1("index", oci_get_int(p, it, 0, 5, &index))) < 0 ||
            (r = AT1("value", oci_get_u64(p, it, &a->value))) < 0 ||
            (r = AT1("valueTwo", oci_get_u64(p, it, &a->value_two))) < 0 || (r = AT1("op", get_op(p, it, &a->op))) < 0)
                return r;
        a->index = (unsigned)index;
        return 0;
}

static int check_syscall_name(struct oci_parser *p, const char *s)
{
        if (s[0] == '\0')
                return oci_fail(p, "an empty syscall name");
        return 0;
}

static void rule_done(struct oci_seccomp_rule *rule)
{
        oci_strv_free(rule->names);
        free(rule->args);
}

static int parse_rule(struct oci_parser *p, json_t *v, struct oci_seccomp_rule *rule)
{
        uint32_t errno_ret = EPERM;
        bool has_errno = false;
        size_t n;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if (!oci_member(v, "names")) {
                size_t saved = oci_path_push_key(p, "names");
                r = oci_fail(p, "required key is missing");
                oci_path_pop(p, saved);
                return r;
        }
        if (!oci_member(v, "action")) {
                size_t saved = oci_path_push_key(p, "action");
                r = oci_fail(p, "required key is missing");
                oci_path_pop(p, saved);
                return r;
        }
        if ((r = AT1("names", oci_get_strv(p, it, check_syscall_name, &rule->names))) < 0 ||
            (r = AT1("action", get_action(p, it, &rule->action))) < 0 ||
            (r = AT1("errnoRet", get_errno(p, it, &errno_ret))) < 0)
                return r;
        has_errno = oci_member(v, "errnoRet") != NULL;
        if (has_errno && !action_takes_errno(rule->action)) {
                size_t saved = oci_path_push_key(p, "errnoRet");
                r = oci_fail(p, "only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errnoRet");
                oci_path_pop(p, saved);
                return r;
        }
        if (rule->action == SCMP_ACT_ERRNO(0))
                rule->action = SCMP_ACT_ERRNO(errno_ret);
        else if (rule->action == SCMP_ACT_TRACE(0))
                rule->action = SCMP_ACT_TRACE(errno_ret);

        json_t *args = oci_member(v, "args");
        if (args) {
                size_t saved = oci_path_push_key(p, "args");
                r = oci_check_array(p, args, &n);
                if (r >= 0 && n > 6 * 8)
                        r = oci_fail(p, "too many comparisons (%zu)", n);
                if (r >= 0) {
                        rule->args = xcalloc(n, sizeof(*rule->args));
                        for (size_t i = 0; i < n && r >= 0; i++) {
                                size_t s2 = oci_path_push_index(p, i);
                                r = parse_arg(p, json_array_get(args, i), &rule->args[i]);
                                oci_path_pop(p, s2);
                                rule->n_args = i + 1;
                        }
                }
                oci_path_pop(p, saved);
                if (r < 0)
                        return r;
        }
        /* docker's profile format filters rules by arch and capability with
         * "includes"/"excludes"; in config.json they are already applied, so
         * a rule still carrying one means something cordon would not. */
        if (oci_member(v, "includes") || oci_member(v, "excludes")) {
                size_t saved = oci_path_push_key(p, oci_member(v, "includes") ? "includes" : "excludes");
                r = oci_fail(p, "not part of the OCI format (a docker profile's filter): give config.json's "
                                "resolved rules");
                oci_path_pop(p, saved);
                return r;
        }
        return 0;
}
#undef AT1

static int parse_rules(struct oci_parser *p, json_t *v, struct oci_seccomp *sc)
{
        size_t n;
        int r = oci_check_array(p, v, &n);
        if (r < 0)
                return r;
        sc->rules = xcalloc(n, sizeof(*sc->rules));
        for (size_t i = 0; i < n; i++) {
                size_t saved = oci_path_push_index(p, i);
                sc->n_rules = i + 1;
                r = parse_rule(p, json_array_get(v, i), &sc->rules[i]);
                oci_path_pop(p, saved);
                if (r < 0)
                        return r;
        }
        return 0;
}

void oci_seccomp_free(struct oci_seccomp *s)
{
        if (!s)
                return;
        free(s->arches);
        for (size_t i = 0; i < s->n_rules; i++)
                rule_done(&s->rules[i]);
        free(s->rules);
        free(s);
}

static void oci_seccomp_freep(struct oci_seccomp **s)
{
        oci_seccomp_free(*s);
}

int oci_parse_seccomp(struct oci_parser *p, json_t *v, struct oci_seccomp **ret)
{
        _cleanup_(oci_seccomp_freep) struct oci_seccomp *sc = NULL;
        uint32_t default_errno = EPERM;
        size_t saved;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if (!oci_member(v, "defaultAction")) {
                saved = oci_path_push_key(p, "defaultAction");
                r = oci_fail(p, "required key is missing");
                oci_path_pop(p, saved);
                return r;
        }
        sc = xcalloc(1, sizeof(*sc));
#define AT2(key, expr)                                               \
        ({                                                           \
                json_t *it = oci_member(v, (key));                   \
                int _r = 0;                                          \
                if (it) {                                            \
                        size_t _saved = oci_path_push_key(p, (key)); \
                        _r = (expr);                                 \
                        oci_path_pop(p, _saved);                     \
                }                                                    \
                _r;                                                  \
        })
        if ((r = AT2("defaultAction", get_action(p, it, &sc->default_action))) < 0 ||
            (r = AT2("defaultErrnoRet", get_errno(p, it, &default_errno))) < 0 ||
            (r = AT2("architectures", parse_arches(p, it, sc))) < 0 || (r = AT2("flags", parse_flags(p, it, sc))) < 0 ||
            (r = AT2("syscalls", parse_rules(p, it, sc))) < 0)
                return r;
#undef AT2
        if (oci_member(v, "defaultErrnoRet") && !action_takes_errno(sc->default_action)) {
                saved = oci_path_push_key(p, "defaultErrnoRet");
                r = oci_fail(p, "only a defaultAction of SCMP_ACT_ERRNO or SCMP_ACT_TRACE takes an errno");
                oci_path_pop(p, saved);
                return r;
        }
        if (sc->default_action == SCMP_ACT_ERRNO(0))
                sc->default_action = SCMP_ACT_ERRNO(default_errno);
        else if (sc->default_action == SCMP_ACT_TRACE(0))
                sc->default_action = SCMP_ACT_TRACE(default_errno);
        /* a listener is for SCMP_ACT_NOTIFY, which is refused above */
        static const char *const listener[] = {"listenerPath", "listenerMetadata"};
        for (size_t i = 0; i < ELEMENTSOF(listener); i++) {
                json_t *l = oci_member(v, listener[i]);
                if (l && !(json_is_string(l) && json_string_length(l) == 0)) {
                        saved = oci_path_push_key(p, listener[i]);
                        r = oci_fail(p, "not supported by cordon: a seccomp listener (its own supervisor owns the "
                                        "container's notifications)");
                        oci_path_pop(p, saved);
                        return r;
                }
        }
        oci_seccomp_free(*ret);
        *ret = TAKE_PTR(sc);
        return 0;
}

/* ---- compilation ---- */

static int compile_fail(char **ret_error, int r, const char *fmt, ...) _printf_(3, 4);
static int compile_fail(char **ret_error, int r, const char *fmt, ...)
{
        char *msg;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                oom();
        va_end(ap);
        if (ret_error)
                *ret_error = msg;
        else
                free(msg);
        return r;
}

static bool args_repeat_an_index(const struct oci_seccomp_rule *rule)
{
        for (size_t i = 0; i < rule->n_args; i++)
                for (size_t j = 0; j < i; j++)
                        if (rule->args[i].index == rule->args[j].index)
                                return true;
        return false;
}

static struct scmp_arg_cmp to_cmp(const struct oci_seccomp_arg *a)
{
        return (struct scmp_arg_cmp){
                .arg = a->index, .op = (enum scmp_compare)a->op, .datum_a = a->value, .datum_b = a->value_two};
}

static int add_rule(scmp_filter_ctx ctx, const struct oci_seccomp_rule *rule, int nr)
{
        struct scmp_arg_cmp cmps[6 * 8];
        int r;

        if (rule->n_args == 0)
                return seccomp_rule_add(ctx, rule->action, nr, 0);
        /* libseccomp takes one comparison per argument in a rule; runc
         * turns repeated ones into one rule per comparison (any of them
         * matches), and so does cordon, so a profile means the same here. */
        if (args_repeat_an_index(rule)) {
                for (size_t i = 0; i < rule->n_args; i++) {
                        struct scmp_arg_cmp c = to_cmp(&rule->args[i]);
                        r = seccomp_rule_add_array(ctx, rule->action, nr, 1, &c);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        for (size_t i = 0; i < rule->n_args; i++)
                cmps[i] = to_cmp(&rule->args[i]);
        return seccomp_rule_add_array(ctx, rule->action, nr, (unsigned)rule->n_args, cmps);
}

int oci_seccomp_compile(const struct oci_seccomp *s, struct sock_fprog *ret, char **ret_error)
{
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        _cleanup_close_ int fd = -1;
        _cleanup_free_ struct sock_filter *prog = NULL;
        struct stat st;
        ssize_t n;
        int r;

        if (s->default_action == SCMP_ACT_NOTIFY)
                return compile_fail(ret_error, -EOPNOTSUPP,
                                    "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY is not "
                                    "supported by cordon");
        ctx = seccomp_init(s->default_action);
        if (!ctx)
                return compile_fail(ret_error, -EINVAL, "linux.seccomp.defaultAction: libseccomp refuses action %#x",
                                    s->default_action);
        /* Only exported, never loaded here: the runtime sets no_new_privs
         * itself, and the filter is for the native architecture (cordon's
         * own filter kills every other one). */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        if (r < 0)
                return compile_fail(ret_error, r, "linux.seccomp: libseccomp: %s", strerror(-r));

        for (size_t i = 0; i < s->n_rules; i++) {
                const struct oci_seccomp_rule *rule = &s->rules[i];

                if (rule->action == SCMP_ACT_NOTIFY)
                        return compile_fail(ret_error, -EOPNOTSUPP,
                                            "linux.seccomp.syscalls[%zu].action: SCMP_ACT_NOTIFY is not supported by "
                                            "cordon",
                                            i);
                /* libseccomp refuses a rule that repeats the default; it
                 * changes nothing, so runc skips it, and so does cordon */
                if (rule->action == s->default_action)
                        continue;
                for (size_t k = 0; rule->names && rule->names[k]; k++) {
                        int nr = seccomp_syscall_resolve_name(rule->names[k]);
                        /* a name this libseccomp does not know (a newer
                         * syscall, another arch's): runc skips it too */
                        if (nr == __NR_SCMP_ERROR)
                                continue;
                        r = add_rule(ctx, rule, nr);
                        if (r < 0) {
                                char q[OCI_QUOTE_MAX];
                                return compile_fail(ret_error, -EINVAL,
                                                    "linux.seccomp.syscalls[%zu]: libseccomp refuses the rule for %s: "
                                                    "%s",
                                                    i, oci_quote(q, rule->names[k], strlen(rule->names[k])),
                                                    strerror(-r));
                        }
                }
        }

        /* libseccomp 2.5 exports to an fd only */
        fd = memfd_create("oci-seccomp", MFD_CLOEXEC);
        if (fd < 0)
                return compile_fail(ret_error, negative_errno(), "linux.seccomp: memfd_create: %m");
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return compile_fail(ret_error, r, "linux.seccomp: exporting the filter: %s", strerror(-r));
        if (fstat(fd, &st) < 0)
                return compile_fail(ret_error, negative_errno(), "linux.seccomp: fstat: %m");
        if (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) != 0)
                return compile_fail(ret_error, -EIO, "linux.seccomp: libseccomp exported %lld bytes, not a program",
                                    (long long)st.st_size);
        if (st.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
                return compile_fail(ret_error, -E2BIG,
                                    "linux.seccomp: the filter has %lld instructions, the kernel takes at most %d",
                                    (long long)(st.st_size / (off_t)sizeof(struct sock_filter)), BPF_MAXINSNS);
        prog = xmalloc((size_t)st.st_size);
        n = pread(fd, prog, (size_t)st.st_size, 0);
        if (n != st.st_size)
                return compile_fail(ret_error, n < 0 ? negative_errno() : -EIO,
                                    "linux.seccomp: reading the filter back");
        ret->len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
        ret->filter = TAKE_PTR(prog);
        return 0;
}
