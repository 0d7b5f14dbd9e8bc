/* Loads the policy document (DESIGN.md, "The policy") with strict validation. Nothing unknown
 * is ignored and nothing doubtful is guessed: a typo in a security policy must stop the start
 * with a message naming the key, never quietly widen or narrow what a sandbox may do. */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "common/docparse.h"
#include "common/util.h"
#include "sentry/policy/policy-internal.h"
#include "sentry/policy/policy.h"

#define APPROVAL_TIMEOUT_DEFAULT_MS 300000
#define MIB                         (INT64_C(1) << 20)
#define DAY_MS                      (INT64_C(24) * 60 * 60 * 1000)

/* Field parsers, one per kind of value. */

static int field_int(struct parser *p, json_t *v, const struct field *f, void *target)
{
        json_int_t i;

        if (!json_is_integer(v))
                return fail(p, "expected %s, got %s", f->min > 0 ? "a positive integer" : "an integer",
                            doc_json_kind(v));
        i = json_integer_value(v);
        if (i < f->min) {
                if (f->min == 1)
                        return fail(p, "expected a positive integer, got %lld", (long long)i);
                return fail(p, "must be at least %" PRId64 ", got %lld", f->min, (long long)i);
        }
        if (i > f->max)
                return fail(p, "must be at most %" PRId64 ", got %lld", f->max, (long long)i);
        *(int64_t *)target = (int64_t)i;
        return 0;
}

static int field_bool(struct parser *p, json_t *v, const struct field *f, void *target)
{
        if (!json_is_boolean(v))
                return fail(p, "expected a boolean, got %s", doc_json_kind(v));
        *(bool *)target = json_is_true(v);
        return 0;
}

/* A boolean whose absence is remembered (-1), for rules that may leave a bit to the layer below. */
static int field_tristate(struct parser *p, json_t *v, const struct field *f, void *target)
{
        if (!json_is_boolean(v))
                return fail(p, "expected a boolean, got %s", doc_json_kind(v));
        *(int *)target = json_is_true(v) ? 1 : 0;
        return 0;
}

static int field_source_kind(struct parser *p, json_t *v, const struct field *f, void *target)
{
        static const char *const names[] = {"template", "snapshot"};
        char **t = target;
        size_t i;
        int r;

        r = parse_enum(p, v, names, ELEMENTSOF(names), &i);
        if (r < 0)
                return r;
        free(*t);
        *t = xstrdup(names[i]);
        return 0;
}

static int field_digest(struct parser *p, json_t *v, const struct field *f, void *target)
{
        static const char prefix[] = "sha256:";
        char **t = target, q[DOC_QUOTE_MAX];
        const char *s;
        size_t len;
        int r;

        r = parse_string(p, v, SIZE_MAX, &s);
        if (r < 0)
                return r;
        len = strlen(s);
        if (len != strlen(prefix) + 64 || !startswith(s, prefix) ||
            strspn(s + strlen(prefix), "0123456789abcdef") != 64)
                return fail(p, "expected \"sha256:\" followed by 64 lowercase hex digits, got %s",
                            doc_quote(q, s, len));
        free(*t);
        *t = xstrdup(s);
        return 0;
}

static int field_access(struct parser *p, json_t *v, const struct field *f, void *target)
{
        static const char *const names[] = {"hidden", "read", "read-write"};
        static const enum path_access values[] = {ACCESS_HIDDEN, ACCESS_READ, ACCESS_READ_WRITE};
        size_t i;
        int r;

        r = parse_enum(p, v, names, ELEMENTSOF(names), &i);
        if (r < 0)
                return r;
        *(enum path_access *)target = values[i];
        return 0;
}

static int field_net_mode(struct parser *p, json_t *v, const struct field *f, void *target)
{
        static const char *const names[] = {"deny", "allow-listed"};
        static const enum net_mode values[] = {NET_DENY, NET_ALLOW_LISTED};
        size_t i;
        int r;

        r = parse_enum(p, v, names, ELEMENTSOF(names), &i);
        if (r < 0)
                return r;
        *(enum net_mode *)target = values[i];
        return 0;
}

/* The sections. */

static const struct field source_fields[] = {
        FIELD("kind", field_source_kind, struct policy, source_kind, true),
        FIELD("path", field_abs_path, struct policy, source_path, true),
        FIELD("digest", field_digest, struct policy, source_digest, false),
};

static int field_source(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy *pol = target;
        int r;

        r = dispatch(p, v, source_fields, ELEMENTSOF(source_fields), pol);
        if (r < 0)
                return r;
        pol->has_source = true;
        return 0;
}

/* A limit: an integer in its range, or the string "unlimited", which lifts
 * the built-in default (the value stays POLICY_UNSET and the policy's
 * unlimited bit says so). Any other string is an error naming the field. */
static int field_limit(struct parser *p, json_t *v, const struct field *f, void *target)
{
        if (json_is_integer(v))
                return field_int(p, v, f, target);
        if (!json_is_string(v))
                return fail(p, "expected a positive integer or \"unlimited\", got %s", doc_json_kind(v));
        const char *s = json_string_value(v);
        if (!streq(s, "unlimited")) {
                char q[DOC_QUOTE_MAX];
                return fail(p, "expected a positive integer or \"unlimited\", got %s",
                            doc_quote(q, s, json_string_length(v)));
        }
        /* the table's offsets are struct policy's: target is the field of the policy dispatch was given */
        struct policy *pol = (struct policy *)(void *)((char *)target - f->offset);
        for (size_t k = 0; k < _LIMIT_KIND_MAX; k++)
                if (streq(f->name, limit_key((enum limit_kind)k)))
                        pol->unlimited |= LIMIT_BIT(k);
        *(int64_t *)target = POLICY_UNSET;
        return 0;
}

#define LIMIT(json, member, lo, hi)                                                                           \
        {                                                                                                     \
                .name = (json), .parse = field_limit, .offset = offsetof(struct policy, member), .min = (lo), \
                .max = (hi)                                                                                   \
        }
static const struct field limit_fields[] = {
        LIMIT("cpuMillis", cpu_millis, 1, 1000000),         LIMIT("memoryBytes", memory_bytes, 4 * MIB, INT64_MAX),
        LIMIT("diskBytes", disk_bytes, 1 * MIB, INT64_MAX), LIMIT("maxProcesses", max_processes, 1, 4194304),
        LIMIT("maxOpenFiles", max_open_files, 1, 1048576),  LIMIT("timeoutMs", timeout_ms, 1, 30 * DAY_MS),
};
#undef LIMIT

static int field_limits(struct parser *p, json_t *v, const struct field *f, void *target)
{
        return dispatch(p, v, limit_fields, ELEMENTSOF(limit_fields), target);
}

static const struct field bind_fields[] = {
        FIELD("source", field_abs_path, struct policy_bind, source, true),
        FIELD("target", field_abs_path, struct policy_bind, target, true),
        FIELD("readOnly", field_bool, struct policy_bind, read_only, false),
};

/* cordon builds /, /proc and /dev of the view itself (DESIGN.md, "The view"); a bind over them
 * would replace the masked /proc or the short /dev list with whatever the host path holds. */
static int check_bind_target(struct parser *p, const struct policy *pol, size_t i, size_t parent_len)
{
        static const char *const owned[] = {"/proc", "/dev"};
        const char *target = pol->binds[i].target;
        char q[DOC_QUOTE_MAX];
        size_t saved = doc_path_push_key(&p->path, "target");
        int r = 0;

        if (streq(target, "/"))
                r = fail(p, "binding over / is not allowed (the view's root comes from the source)");
        for (size_t k = 0; r == 0 && k < ELEMENTSOF(owned); k++)
                if (path_beneath(target, owned[k]))
                        r = fail(p, "%s is under %s, which cordon provides itself",
                                 doc_quote(q, target, strlen(target)), owned[k]);
        for (size_t j = 0; r == 0 && j < i; j++)
                if (streq(pol->binds[j].target, target))
                        r = fail(p, "%s is already the target of %.*s[%zu]", doc_quote(q, target, strlen(target)),
                                 (int)parent_len, p->path.text, j);
        doc_path_pop(&p->path, saved);
        return r;
}

static int field_binds(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy *pol = target;
        size_t n, parent_len = p->path.len;
        int r;

        r = check_array(p, v, &n);
        if (r < 0)
                return r;
        pol->binds = xcalloc(n, sizeof(*pol->binds));
        pol->n_binds = n;
        for (size_t i = 0; i < n; i++) {
                size_t saved = doc_path_push_index(&p->path, i);

                r = dispatch(p, json_array_get(v, i), bind_fields, ELEMENTSOF(bind_fields), &pol->binds[i]);
                if (r >= 0)
                        r = check_bind_target(p, pol, i, parent_len);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const struct field rule_fields[] = {
        FIELD("path", field_abs_path, struct policy_path_rule, path, true),
        FIELD("access", field_access, struct policy_path_rule, access, true),
        FIELD("exec", field_tristate, struct policy_path_rule, exec, false),
        FIELD("action", field_action, struct policy_path_rule, action, false),
};

static int field_rules(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy *pol = target;
        size_t n, parent_len = p->path.len;
        int r;

        r = check_array(p, v, &n);
        if (r < 0)
                return r;
        pol->rules = xcalloc(n, sizeof(*pol->rules));
        pol->n_rules = n;
        for (size_t i = 0; i < n; i++) {
                struct policy_path_rule *rule = &pol->rules[i];
                size_t saved = doc_path_push_index(&p->path, i);

                rule->exec = -1;
                rule->action = ACTION_DEFAULT;
                r = dispatch(p, json_array_get(v, i), rule_fields, ELEMENTSOF(rule_fields), rule);
                /* Two rules for one path would leave "longest prefix wins" without a winner. */
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (streq(pol->rules[j].path, rule->path)) {
                                char q[DOC_QUOTE_MAX];
                                size_t s2 = doc_path_push_key(&p->path, "path");
                                doc_quote(q, rule->path, strlen(rule->path));
                                r = fail(p, "%s already has a rule, %.*s[%zu]", q, (int)parent_len, p->path.text, j);
                                doc_path_pop(&p->path, s2);
                        }
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const struct field filesystem_fields[] = {
        {.name = "binds", .parse = field_binds},
        {.name = "rules", .parse = field_rules},
};

static int field_filesystem(struct parser *p, json_t *v, const struct field *f, void *target)
{
        return dispatch(p, v, filesystem_fields, ELEMENTSOF(filesystem_fields), target);
}

static const struct field net_rule_fields[] = {
        FIELD("host", field_host, struct policy_net_rule, host, true),
        FIELD("port", field_port, struct policy_net_rule, port, true),
        FIELD("reason", field_reason, struct policy_net_rule, reason, true),
        FIELD("action", field_action, struct policy_net_rule, action, false),
};

static int field_net_rules(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy *pol = target;
        size_t n, parent_len = p->path.len;
        int r;

        r = check_array(p, v, &n);
        if (r < 0)
                return r;
        pol->net_rules = xcalloc(n, sizeof(*pol->net_rules));
        pol->n_net_rules = n;
        for (size_t i = 0; i < n; i++) {
                struct policy_net_rule *rule = &pol->net_rules[i];
                size_t saved = doc_path_push_index(&p->path, i);

                rule->action = ACTION_DEFAULT;
                r = dispatch(p, json_array_get(v, i), net_rule_fields, ELEMENTSOF(net_rule_fields), rule);
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (streq(pol->net_rules[j].host, rule->host)) {
                                char q[DOC_QUOTE_MAX];
                                size_t s2 = doc_path_push_key(&p->path, "host");
                                doc_quote(q, rule->host, strlen(rule->host));
                                r = fail(p, "%s is already listed in %.*s[%zu]", q, (int)parent_len, p->path.text, j);
                                doc_path_pop(&p->path, s2);
                        }
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int field_allow_private(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy_net_testing *t = target;
        size_t n;
        int r = check_array(p, v, &n);
        if (r < 0)
                return r;
        t->allow_private = xcalloc(n, sizeof(*t->allow_private));
        t->n_allow_private = n;
        for (size_t i = 0; i < n; i++) {
                size_t saved = doc_path_push_index(&p->path, i);
                r = parse_cidr(p, json_array_get(v, i), &t->allow_private[i]);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const struct field testing_fields[] = {
        FIELD("hostsFile", field_abs_path, struct policy_net_testing, hosts_file, false),
        FIELD("upstreamCaFile", field_abs_path, struct policy_net_testing, upstream_ca_file, false),
        {.name = "allowPrivateNetworks", .parse = field_allow_private},
};

static int field_net_testing(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy *pol = target;
        pol->has_net_testing = true;
        return dispatch(p, v, testing_fields, ELEMENTSOF(testing_fields), &pol->net_testing);
}

static const struct field network_fields[] = {
        FIELD("mode", field_net_mode, struct policy, net_mode, false),
        {.name = "rules", .parse = field_net_rules},
        {.name = "testing", .parse = field_net_testing},
        {.name = "clusterRules", .parse = policy_field_cluster_rules},
        FIELD("clusterDomain", field_host, struct policy, cluster_domain, false),
};

static int field_network(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy *pol = target;
        size_t saved;
        int r;

        r = dispatch(p, v, network_fields, ELEMENTSOF(network_fields), pol);
        if (r < 0)
                return r;

        /* Rules under "deny" would be silently dead: the author meant something else. */
        if (pol->net_mode == NET_DENY && pol->n_net_rules > 0) {
                saved = doc_path_push_key(&p->path, "rules");
                r = fail(p,
                         "mode is \"deny\"%s, which allows no egress, yet %zu rule(s) are listed: "
                         "set mode to \"allow-listed\" to allow them, or remove them",
                         json_object_get(v, "mode") ? "" : " (the default)", pol->n_net_rules);
                doc_path_pop(&p->path, saved);
                return r;
        }
        return 0;
}

/* The sandbox's whole environment (no host variable is inherited), in document order. */
static int field_env(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy *pol = target;
        const char *key;
        json_t *value;
        size_t n, i = 0;

        if (!json_is_object(v))
                return fail(p, "expected an object, got %s", doc_json_kind(v));
        n = json_object_size(v);
        if (n > POLICY_MAX_ENTRIES)
                return fail(p, "too many variables (%zu, the limit is %d)", n, POLICY_MAX_ENTRIES);

        pol->env = xcalloc(n, sizeof(*pol->env));
        pol->n_env = n;
        json_object_foreach(v, key, value)
        {
                size_t saved = doc_path_push_key(&p->path, key);
                const char *s = NULL;
                char q[DOC_QUOTE_MAX];
                int r;

                if (!doc_key_is_identifier(key))
                        r = fail(p,
                                 "invalid variable name %s (expected letters, digits and '_', not starting "
                                 "with a digit)",
                                 doc_quote(q, key, strlen(key)));
                else
                        r = parse_string(p, value, SIZE_MAX, &s);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;

                pol->env[i].key = xstrdup(key);
                pol->env[i].value = xstrdup(s);
                i++;
        }
        return 0;
}

/* What the sandbox's root holds inside its user namespace: replaces the
 * default set ([] for none). A refused capability is an error naming it. */
static int field_capabilities(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy *pol = target;
        size_t n;
        int r = check_array(p, v, &n);
        if (r < 0)
                return r;
        pol->has_caps = true;
        pol->caps = 0;
        for (size_t i = 0; i < n; i++) {
                size_t saved = doc_path_push_index(&p->path, i);
                const char *name = NULL, *why = NULL;
                char q[DOC_QUOTE_MAX];
                int cap;
                r = parse_string(p, json_array_get(v, i), 64, &name);
                if (r == 0 && policy_cap_parse(name, &cap, &why) < 0)
                        r = fail(p, "unknown capability %s (expected a name such as \"CAP_CHOWN\")",
                                 doc_quote(q, name, strlen(name)));
                else if (r == 0 && why)
                        r = fail(p,
                                 "capability CAP_%s is refused: it gives %s, which cordon never grants inside a "
                                 "sandbox, even within its own user namespace",
                                 policy_cap_name(cap), why);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
                pol->caps |= UINT64_C(1) << cap;
        }
        return 0;
}

/* Ids as the kernel takes them: any but (uid_t)-1, which means "no change". Whether the
 * sandbox's user namespace has the id is known only at the start, which says so. */
#define ID_MAX INT64_C(4294967294)
static const struct field user_fields[] = {
        {.name = "uid",
         .parse = field_int,
         .offset = offsetof(struct policy, user_uid),
         .required = true,
         .max = ID_MAX},
        {.name = "gid", .parse = field_int, .offset = offsetof(struct policy, user_gid), .max = ID_MAX},
};

static int field_user(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy *pol = target;
        int r;

        pol->user_gid = POLICY_UNSET;
        r = dispatch(p, v, user_fields, ELEMENTSOF(user_fields), pol);
        if (r < 0)
                return r;
        if (pol->user_gid == POLICY_UNSET)
                pol->user_gid = pol->user_uid;
        pol->has_user = true;
        return 0;
}

static int field_isolation(struct parser *p, json_t *v, const struct field *f, void *target)
{
        const char *names[POLICY_N_TIERS];
        size_t i;
        for (i = 0; i < POLICY_N_TIERS; i++)
                names[i] = policy_tiers[i].name;
        int r = parse_enum(p, v, names, POLICY_N_TIERS, &i);
        if (r < 0)
                return r;
        ((struct policy *)target)->isolation = (int)i;
        return 0;
}

static const struct field top_fields[] = {
        {.name = "source", .parse = field_source},
        {.name = "limits", .parse = field_limits},
        {.name = "filesystem", .parse = field_filesystem},
        {.name = "networkPolicy", .parse = field_network},
        {.name = "env", .parse = field_env},
        {.name = "capabilities", .parse = field_capabilities},
        {.name = "user", .parse = field_user},
        {.name = "credentials", .parse = policy_field_credentials},
        {.name = "requestedIsolation", .parse = field_isolation},
        {.name = "ports", .parse = policy_field_ports},
        FIELD("expiresAt", field_timestamp, struct policy, expires_at, false),
        {.name = "approvalTimeoutMs",
         .parse = field_int,
         .offset = offsetof(struct policy, approval_timeout_ms),
         .min = 1,
         .max = DAY_MS},
};

struct policy *policy_new_default(void)
{
        struct policy *p = xcalloc(1, sizeof(*p));

        p->cpu_millis = POLICY_UNSET;
        p->memory_bytes = POLICY_UNSET;
        p->disk_bytes = POLICY_UNSET;
        p->max_processes = POLICY_UNSET;
        p->max_open_files = POLICY_UNSET;
        p->timeout_ms = POLICY_UNSET;
        p->net_mode = NET_DENY;
        p->expires_at = (time_t)-1;
        p->approval_timeout_ms = APPROVAL_TIMEOUT_DEFAULT_MS;
        p->isolation = -1;
        return p;
}

void policy_free(struct policy *p)
{
        if (!p)
                return;

        free(p->source_kind);
        free(p->source_path);
        free(p->source_digest);
        for (size_t i = 0; i < p->n_binds; i++) {
                free(p->binds[i].source);
                free(p->binds[i].target);
        }
        free(p->binds);
        for (size_t i = 0; i < p->n_rules; i++)
                free(p->rules[i].path);
        free(p->rules);
        for (size_t i = 0; i < p->n_net_rules; i++) {
                free(p->net_rules[i].host);
                free(p->net_rules[i].reason);
        }
        free(p->net_rules);
        free(p->net_testing.hosts_file);
        free(p->net_testing.upstream_ca_file);
        policy_credentials_free(p);
        policy_cluster_free(p);
        policy_ports_free(p);
        free(p->net_testing.allow_private);
        for (size_t i = 0; i < p->n_env; i++) {
                free(p->env[i].key);
                free(p->env[i].value);
        }
        free(p->env);
        free(p);
}

/* jansson's message quotes the text near the error, which may be any bytes of the document. */
static void sanitise(char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
                        *s = '?';
}

int policy_load_buffer(const char *buf, size_t len, const char *origin, struct policy **ret, char **ret_error)
{
        _cleanup_(policy_freep) struct policy *pol = NULL;
        _cleanup_(json_decrefp) json_t *root = NULL;
        struct parser p = {.origin = origin ?: "policy"};
        json_error_t jerr;
        int r;

        if (len > POLICY_MAX_BYTES) {
                if (ret_error)
                        *ret_error = xasprintf("%s: policy is larger than 1 MiB (%zu bytes)", p.origin, len);
                return -EFBIG;
        }

        /* JSON_ALLOW_NUL: see parse_string(). JSON_DECODE_ANY: so that a top level that is not an
         * object gets a plain message rather than a syntax error. */
        root = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);
        if (!root) {
                sanitise(jerr.text);
                if (ret_error)
                        *ret_error = xasprintf("%s:%d:%d: %s", p.origin, jerr.line, jerr.column, jerr.text);
                return -EINVAL;
        }
        if (!json_is_object(root)) {
                if (ret_error)
                        *ret_error = xasprintf("%s: expected a JSON object at the top level, got %s", p.origin,
                                               doc_json_kind(root));
                return -EINVAL;
        }

        pol = policy_new_default();
        r = dispatch(&p, root, top_fields, ELEMENTSOF(top_fields), pol);
        if (r >= 0)
                r = policy_check_credentials(&p, pol);
        if (r < 0) {
                if (ret_error)
                        *ret_error = p.error ? TAKE_PTR(p.error) : xasprintf("%s: invalid policy", p.origin);
                free(p.error);
                return r;
        }

        *ret = TAKE_PTR(pol);
        return 0;
}

int policy_load_file(const char *path, struct policy **ret, char **ret_error)
{
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -1;
        struct stat st;
        ssize_t n;

        /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer before the
         * fstat() below could refuse it. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                int r = negative_errno();
                if (ret_error)
                        *ret_error = xasprintf("%s: cannot open: %s", path, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0) {
                int r = negative_errno();
                if (ret_error)
                        *ret_error = xasprintf("%s: cannot stat: %s", path, strerror(-r));
                return r;
        }
        if (S_ISDIR(st.st_mode)) {
                if (ret_error)
                        *ret_error = xasprintf("%s: is a directory, not a policy file", path);
                return -EISDIR;
        }
        if (!S_ISREG(st.st_mode)) {
                if (ret_error)
                        *ret_error = xasprintf("%s: not a regular file", path);
                return -EINVAL;
        }
        if (st.st_size > POLICY_MAX_BYTES) {
                if (ret_error)
                        *ret_error =
                                xasprintf("%s: policy is larger than 1 MiB (%lld bytes)", path, (long long)st.st_size);
                return -EFBIG;
        }

        /* Read one byte past the limit: the file may have grown since fstat(). */
        buf = xmalloc(POLICY_MAX_BYTES + 1);
        n = read_full(fd, buf, POLICY_MAX_BYTES + 1);
        if (n < 0) {
                if (ret_error)
                        *ret_error = xasprintf("%s: cannot read: %s", path, strerror((int)-n));
                return (int)n;
        }
        return policy_load_buffer(buf, (size_t)n, path, ret, ret_error);
}
