/* The policy's "credentials" grants (DESIGN.md, "Credentials"): read as
 * strictly as the rest of the document, with the defaults the broker's
 * design gives, and checked against what they depend on once the whole
 * document is in: the grant's host must be a listed egress rule on the same
 * port, its expiry may not be later than the sandbox's own, and its variable
 * may not also be set by "env". "action": "ask" makes each request that
 * matches the grant wait for a person (approvalTimeoutMs, as for the other
 * ask rules) before the secret goes in. Nothing here reads a secret: the source is
 * only named (the sentry reads it at start, net/broker.c). */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "common/util.h"
#include "sentry/policy/policy-internal.h"

#define METHOD_MAX 16
#define PREFIX_MAX 1024
#define HEADER_MAX 64
#define FORMAT_MAX 256

static bool is_tchar(char c)
{
        /* RFC 9110's token characters */
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int field_env_name(struct parser *p, json_t *v, const struct field *f, void *target)
{
        char **t = target, q[DOC_QUOTE_MAX];
        const char *s;
        int r = parse_string(p, v, 255, &s);
        if (r < 0)
                return r;
        if (!doc_key_is_identifier(s))
                return fail(p, "expected a variable name ([A-Za-z_][A-Za-z0-9_]*), got %s", doc_quote(q, s, strlen(s)));
        free(*t);
        *t = xstrdup(s);
        return 0;
}

static int field_methods(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy_credential *c = target;
        size_t n;
        int r = check_array(p, v, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return fail(p, "must list at least one method (leave \"methods\" out to allow any)");
        c->methods = xcalloc(n, sizeof(char *));
        for (size_t i = 0; i < n; i++) {
                size_t saved = doc_path_push_index(&p->path, i);
                const char *s;
                char q[DOC_QUOTE_MAX];
                r = parse_string(p, json_array_get(v, i), METHOD_MAX, &s);
                if (r >= 0 && (s[0] == '\0' || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(s)))
                        r = fail(p, "expected an HTTP method in capitals such as \"GET\", got %s",
                                 doc_quote(q, s, strlen(s)));
                for (size_t j = 0; r >= 0 && j < c->n_methods; j++)
                        if (streq(c->methods[j], s))
                                r = fail(p, "%s is listed twice", doc_quote(q, s, strlen(s)));
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
                c->methods[c->n_methods++] = xstrdup(s);
        }
        return 0;
}

/* An absolute request path: what the gate compares the request's target
 * with, byte for byte, so no spaces, controls, query or fragment. */
static int field_path_prefix(struct parser *p, json_t *v, const struct field *f, void *target)
{
        char **t = target, q[DOC_QUOTE_MAX];
        const char *s;
        int r = parse_string(p, v, PREFIX_MAX, &s);
        if (r < 0)
                return r;
        bool ok = s[0] == '/';
        for (const char *c = s; ok && *c; c++)
                ok = (unsigned char)*c > 0x20 && (unsigned char)*c < 0x7f && *c != '?' && *c != '#';
        if (!ok)
                return fail(p, "expected a request path starting with \"/\" (no spaces, query or fragment), got %s",
                            doc_quote(q, s, strlen(s)));
        free(*t);
        *t = xstrdup(s);
        return 0;
}

static int field_header(struct parser *p, json_t *v, const struct field *f, void *target)
{
        static const char *const framing[] = {"host",       "content-length", "transfer-encoding",
                                              "connection", "upgrade",        "te",
                                              "trailer",    "expect",         "keep-alive"};
        char **t = target, q[DOC_QUOTE_MAX];
        const char *s;
        int r = parse_string(p, v, HEADER_MAX, &s);
        if (r < 0)
                return r;
        bool ok = s[0] != '\0';
        for (const char *c = s; ok && *c; c++)
                ok = is_tchar(*c);
        if (!ok)
                return fail(p, "expected an HTTP header name, got %s", doc_quote(q, s, strlen(s)));
        for (size_t i = 0; i < ELEMENTSOF(framing); i++)
                if (strcasecmp(s, framing[i]) == 0)
                        return fail(p, "%s frames or routes the request and cannot carry a credential",
                                    doc_quote(q, s, strlen(s)));
        free(*t);
        *t = xstrdup(s);
        return 0;
}

static int field_format(struct parser *p, json_t *v, const struct field *f, void *target)
{
        char **t = target, q[DOC_QUOTE_MAX];
        const char *s;
        int r = parse_string(p, v, FORMAT_MAX, &s);
        if (r < 0)
                return r;
        const char *at = strstr(s, "{}");
        if (!at || strstr(at + 2, "{}"))
                return fail(p, "must hold \"{}\" (where the secret goes) exactly once, got %s",
                            doc_quote(q, s, strlen(s)));
        for (const char *c = s; *c; c++)
                if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
                        return fail(p, "control characters are not allowed, got %s", doc_quote(q, s, strlen(s)));
        free(*t);
        *t = xstrdup(s);
        return 0;
}

static const struct field source_fields[] = {
        FIELD("file", field_abs_path, struct policy_credential, source_file, false),
        FIELD("env", field_env_name, struct policy_credential, source_env, false),
};

static int field_cred_source(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy_credential *c = target;
        int r = dispatch(p, v, source_fields, ELEMENTSOF(source_fields), c);
        if (r < 0)
                return r;
        if (!!c->source_file == !!c->source_env)
                return fail(p, "expected exactly one of \"file\" (a host file readable by cordon only) or \"env\" "
                               "(a variable of cordon's environment)");
        return 0;
}

static const struct field credential_fields[] = {
        FIELD("env", field_env_name, struct policy_credential, env, true),
        FIELD("host", field_host, struct policy_credential, host, true),
        FIELD("port", field_port, struct policy_credential, port, false),
        {.name = "methods", .parse = field_methods},
        FIELD("pathPrefix", field_path_prefix, struct policy_credential, path_prefix, false),
        FIELD("header", field_header, struct policy_credential, header, false),
        FIELD("format", field_format, struct policy_credential, format, false),
        {.name = "source", .parse = field_cred_source, .required = true},
        FIELD("expiresAt", field_timestamp, struct policy_credential, expires_at, false),
        FIELD("reason", field_reason, struct policy_credential, reason, true),
        FIELD("action", field_action, struct policy_credential, action, false),
};

int policy_field_credentials(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy *pol = target;
        size_t n;
        int r = check_array(p, v, &n);
        if (r < 0)
                return r;
        pol->credentials = xcalloc(n, sizeof(*pol->credentials));
        for (size_t i = 0; i < n; i++) {
                struct policy_credential *c = &pol->credentials[pol->n_credentials++];
                size_t saved = doc_path_push_index(&p->path, i);
                c->port = 443;
                c->expires_at = (time_t)-1;
                r = dispatch(p, json_array_get(v, i), credential_fields, ELEMENTSOF(credential_fields), c);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
                if (!c->path_prefix)
                        c->path_prefix = xstrdup("/");
                if (!c->header)
                        c->header = xstrdup("Authorization");
                if (!c->format)
                        c->format = xstrdup("Bearer {}");
        }
        return 0;
}

/* fails at credentials[i].key */
_printf_(4, 5) static int fail_at(struct parser *p, size_t i, const char *key, const char *fmt, ...)
{
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        size_t s0 = doc_path_push_key(&p->path, "credentials");
        size_t s1 = doc_path_push_index(&p->path, i);
        size_t s2 = doc_path_push_key(&p->path, key);
        int r = fail(p, "%s", msg);
        doc_path_pop(&p->path, s2);
        doc_path_pop(&p->path, s1);
        doc_path_pop(&p->path, s0);
        return r;
}

int policy_check_credentials(struct parser *p, struct policy *pol)
{
        for (size_t i = 0; i < pol->n_credentials; i++) {
                const struct policy_credential *c = &pol->credentials[i];
                bool listed = false;
                for (size_t j = 0; j < pol->n_net_rules; j++)
                        listed =
                                listed || (streq(pol->net_rules[j].host, c->host) && pol->net_rules[j].port == c->port);
                if (!listed)
                        return fail_at(p, i, "host",
                                       "%s:%u is not listed in networkPolicy.rules: a grant is for a host the "
                                       "sandbox may reach",
                                       c->host, c->port);
                if (c->expires_at != (time_t)-1 && pol->expires_at != (time_t)-1 && c->expires_at > pol->expires_at)
                        return fail_at(p, i, "expiresAt", "is later than the sandbox's own expiresAt");
                for (size_t j = 0; j < i; j++) {
                        if (streq(pol->credentials[j].env, c->env))
                                return fail_at(p, i, "env", "%s is already the variable of credentials[%zu]", c->env,
                                               j);
                        /* one grant per host: the gate terminates a host's TLS
                         * for one grant and reads its header */
                        if (streq(pol->credentials[j].host, c->host) && pol->credentials[j].port == c->port)
                                return fail_at(p, i, "host", "%s:%u already has a grant, credentials[%zu]", c->host,
                                               c->port, j);
                }
                for (size_t j = 0; j < pol->n_env; j++)
                        if (streq(pol->env[j].key, c->env))
                                return fail_at(p, i, "env",
                                               "%s is also set in \"env\": the grant's placeholder goes there", c->env);
        }
        return 0;
}

void policy_credentials_free(struct policy *pol)
{
        for (size_t i = 0; i < pol->n_credentials; i++) {
                struct policy_credential *c = &pol->credentials[i];
                free(c->env);
                free(c->host);
                for (size_t j = 0; j < c->n_methods; j++)
                        free(c->methods[j]);
                free(c->methods);
                free(c->path_prefix);
                free(c->header);
                free(c->format);
                free(c->source_file);
                free(c->source_env);
                free(c->reason);
        }
        free(pol->credentials);
}
