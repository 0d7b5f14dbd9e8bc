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

#include "common/allowlist.h"
#include "common/util.h"
#include "sentry/oci/oci-internal.h"
#include "sentry/oci/oci.h"

/* errno values a filter can return: the kernel clamps SECCOMP_RET_DATA to
 * MAX_ERRNO. */
#define ERRNO_MAX 4095

static void seccomp_releasep(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}

/* errno/trace data is added later */
static const struct oci_name actions[] = {
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
        int64_t a;
        int r;

        /* cordon's own filter owns the process's one notification
         * listener; a second supervisor would also be one cordon cannot
         * vouch for. */
        if (json_is_string(v) && streq(json_string_value(v), "SCMP_ACT_NOTIFY"))
                return oci_fail(p, "SCMP_ACT_NOTIFY is not supported by cordon: its own supervisor handles the "
                                   "container's notifications");
        r = oci_get_name(p, v, actions, ELEMENTSOF(actions), "seccomp action", &a);
        if (r < 0)
                return r;
        *ret = (uint32_t)a;
        return 0;
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

static int get_arch(struct oci_parser *p, json_t *v, size_t idx, void *item, void *ctx)
{
        uint32_t *ret = item;
        char name[32], q[DOC_QUOTE_MAX];
        const char *s;
        uint32_t arch;
        size_t n;
        int r = oci_get_string(p, v, &s);
        if (r < 0)
                return r;
        /* "SCMP_ARCH_X86_64" is libseccomp's "x86_64", and so on for all */
        n = strlen(s);
        if (!startswith(s, "SCMP_ARCH_") || n - 10 >= sizeof(name) || n == 10)
                return oci_fail(p, "unknown architecture %s", doc_quote(q, s, n));
        for (size_t i = 10; i <= n; i++)
                name[i - 10] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
        arch = seccomp_arch_resolve_name(name);
        if (arch == 0)
                return oci_fail(p, "unknown architecture %s", doc_quote(q, s, n));
        *ret = arch;
        return 0;
}

static int parse_arches(struct oci_parser *p, json_t *v, struct oci_seccomp *sc)
{
        return oci_each(p, v, sizeof(uint32_t), &sc->arches, &sc->n_arches, get_arch, NULL);
}

static int flag_at(struct oci_parser *p, json_t *e, size_t i, void *item, void *ctx)
{
        struct oci_seccomp *sc = ctx;
        char q[DOC_QUOTE_MAX];
        const char *s;
        int r = oci_get_string(p, e, &s);
        if (r < 0)
                return r;
        if (streq(s, "SECCOMP_FILTER_FLAG_TSYNC"))
                sc->flags |= SECCOMP_FILTER_FLAG_TSYNC;
        else if (streq(s, "SECCOMP_FILTER_FLAG_LOG"))
                sc->flags |= SECCOMP_FILTER_FLAG_LOG;
        else if (streq(s, "SECCOMP_FILTER_FLAG_SPEC_ALLOW"))
                return oci_fail(p, "SECCOMP_FILTER_FLAG_SPEC_ALLOW is not supported by cordon: it turns off the "
                                   "speculative-store-bypass mitigation");
        /* WAIT_KILLABLE_RECV only means something with a listener, which is refused */
        else if (!streq(s, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"))
                return oci_fail(p, "unknown seccomp flag %s", doc_quote(q, s, strlen(s)));
        return 0;
}

static int parse_flags(struct oci_parser *p, json_t *v, struct oci_seccomp *sc)
{
        return oci_each(p, v, 0, NULL, NULL, flag_at, sc);
}

static const struct oci_name ops[] = {
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
        int64_t op;
        int r = oci_get_name(p, v, ops, ELEMENTSOF(ops), "comparison", &op);
        if (r < 0)
                return r;
        *ret = (int)op;
        return 0;
}

static int parse_arg(struct oci_parser *p, json_t *v, size_t i, void *item, void *ctx)
{
        struct oci_seccomp_arg *a = item;
        int64_t index;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        static const char *const required[] = {"index", "value", "op"};
        for (size_t k = 0; k < ELEMENTSOF(required); k++)
                if (!oci_member(v, required[k]))
                        return oci_fail_at(p, required[k], "required key is missing");
        if ((r = AT(p, v, "index", oci_get_int(p, it, 0, 5, &index))) < 0 ||
            (r = AT(p, v, "value", oci_get_u64(p, it, &a->value))) < 0 ||
            (r = AT(p, v, "valueTwo", oci_get_u64(p, it, &a->value_two))) < 0 ||
            (r = AT(p, v, "op", get_op(p, it, &a->op))) < 0)
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
        strv_free(rule->names);
        free(rule->args);
}

static int parse_rule(struct oci_parser *p, json_t *v, size_t i, void *item, void *ctx)
{
        struct oci_seccomp_rule *rule = item;
        uint32_t errno_ret = EPERM;
        bool has_errno = false;
        size_t n;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if (!oci_member(v, "names"))
                return oci_fail_at(p, "names", "required key is missing");
        if (!oci_member(v, "action"))
                return oci_fail_at(p, "action", "required key is missing");
        if ((r = AT(p, v, "names", oci_get_strv(p, it, check_syscall_name, &rule->names))) < 0 ||
            (r = AT(p, v, "action", get_action(p, it, &rule->action))) < 0 ||
            (r = AT(p, v, "errnoRet", get_errno(p, it, &errno_ret))) < 0)
                return r;
        has_errno = oci_member(v, "errnoRet") != NULL;
        if (has_errno && !action_takes_errno(rule->action))
                return oci_fail_at(p, "errnoRet", "only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errnoRet");
        if (rule->action == SCMP_ACT_ERRNO(0))
                rule->action = SCMP_ACT_ERRNO(errno_ret);
        else if (rule->action == SCMP_ACT_TRACE(0))
                rule->action = SCMP_ACT_TRACE(errno_ret);

        json_t *args = oci_member(v, "args");
        if (args) {
                size_t saved = doc_path_push_key(&p->path, "args");
                r = oci_check_array(p, args, &n);
                if (r >= 0 && n > 6 * 8)
                        r = oci_fail(p, "too many comparisons (%zu)", n);
                if (r >= 0)
                        r = oci_each(p, args, sizeof(*rule->args), &rule->args, &rule->n_args, parse_arg, NULL);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }
        /* docker's profile format filters rules by arch and capability with
         * "includes"/"excludes"; in config.json they are already applied, so
         * a rule still carrying one means something cordon would not. */
        if (oci_member(v, "includes") || oci_member(v, "excludes")) {
                size_t saved = doc_path_push_key(&p->path, oci_member(v, "includes") ? "includes" : "excludes");
                r = oci_fail(p, "not part of the OCI format (a docker profile's filter): give config.json's "
                                "resolved rules");
                doc_path_pop(&p->path, saved);
                return r;
        }
        return 0;
}

static int parse_rules(struct oci_parser *p, json_t *v, struct oci_seccomp *sc)
{
        return oci_each(p, v, sizeof(*sc->rules), &sc->rules, &sc->n_rules, parse_rule, NULL);
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
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if (!oci_member(v, "defaultAction"))
                return oci_fail_at(p, "defaultAction", "required key is missing");
        sc = xcalloc(1, sizeof(*sc));
        if ((r = AT(p, v, "defaultAction", get_action(p, it, &sc->default_action))) < 0 ||
            (r = AT(p, v, "defaultErrnoRet", get_errno(p, it, &default_errno))) < 0 ||
            (r = AT(p, v, "architectures", parse_arches(p, it, sc))) < 0 ||
            (r = AT(p, v, "flags", parse_flags(p, it, sc))) < 0 ||
            (r = AT(p, v, "syscalls", parse_rules(p, it, sc))) < 0)
                return r;
        if (oci_member(v, "defaultErrnoRet") && !action_takes_errno(sc->default_action))
                return oci_fail_at(p, "defaultErrnoRet",
                                   "only a defaultAction of SCMP_ACT_ERRNO or SCMP_ACT_TRACE takes an errno");
        if (sc->default_action == SCMP_ACT_ERRNO(0))
                sc->default_action = SCMP_ACT_ERRNO(default_errno);
        else if (sc->default_action == SCMP_ACT_TRACE(0))
                sc->default_action = SCMP_ACT_TRACE(default_errno);
        /* a listener is for SCMP_ACT_NOTIFY, which is refused above */
        static const char *const listener[] = {"listenerPath", "listenerMetadata"};
        for (size_t i = 0; i < ELEMENTSOF(listener); i++) {
                json_t *l = oci_member(v, listener[i]);
                if (l && !(json_is_string(l) && json_string_length(l) == 0)) {
                        return oci_fail_at(p, listener[i],
                                           "not supported by cordon: a seccomp listener (its own supervisor owns the "
                                           "container's notifications)");
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
        msg = xvasprintf(fmt, ap);
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
        if (r >= 0)
                r = seccomp_ctx_tree(ctx); /* a profile has hundreds of rows */
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
                                char q[DOC_QUOTE_MAX];
                                return compile_fail(ret_error, -EINVAL,
                                                    "linux.seccomp.syscalls[%zu]: libseccomp refuses the rule for %s: "
                                                    "%s",
                                                    i, doc_quote(q, rule->names[k], strlen(rule->names[k])),
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
