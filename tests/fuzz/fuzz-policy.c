/* Fuzz target for the policy parser (sentry/policy/policy.c): the JSON document a
 * tenant hands cordon.
 *
 * Every input is parsed. A failure must come with a message that names the
 * origin and holds no raw control bytes (it is printed to a terminal); a
 * success must give a policy whose fields hold the invariants the rest of
 * cordon relies on without checking again: absolute, normalised paths,
 * exact lower-case host names on port 443, bounded counts, known enum
 * values. The input is also parsed a second time to check the parser keeps
 * no state between documents.
 *
 * Built with -fsanitize=fuzzer for libFuzzer (make fuzz), or with
 * tests/fuzz/standalone.c to replay a corpus (tests/fuzz/run.sh). */
#include "config.h"

#include <sys/socket.h>

#include "common/util.h"
#include "sentry/policy/policy.h"

#define CHECK(x)                                                                                  \
        do {                                                                                      \
                if (!(x)) {                                                                       \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #x); \
                        abort();                                                                  \
                }                                                                                 \
        } while (0)

/* "/", or "/a/b" with no empty, "." or ".." component and no trailing slash */
static bool normalised_abs(const char *p)
{
        if (!p || p[0] != '/')
                return false;
        if (streq(p, "/"))
                return true;
        for (const char *c = p; *c;) {
                CHECK(*c == '/');
                const char *end = strchrnul(c + 1, '/');
                size_t n = (size_t)(end - c - 1);
                if (n == 0 || (n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.'))
                        return false;
                c = end;
        }
        return true;
}

static void check_host(const char *h)
{
        CHECK(h && *h);
        CHECK(strlen(h) <= 253);
        for (const char *c = h; *c; c++)
                CHECK((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '.');
        CHECK(!strchr(h, '*'));
        CHECK(h[0] != '.');
}

static void check_policy(const struct policy *p)
{
        if (p->has_source) {
                CHECK(p->source_kind && (streq(p->source_kind, "template") || streq(p->source_kind, "snapshot")));
                CHECK(normalised_abs(p->source_path));
                if (p->source_digest) {
                        CHECK(strlen(p->source_digest) == 7 + 64);
                        CHECK(startswith(p->source_digest, "sha256:"));
                }
        }
        const int64_t *lim[] = {&p->cpu_millis,    &p->memory_bytes,   &p->disk_bytes,
                                &p->max_processes, &p->max_open_files, &p->timeout_ms};
        for (size_t i = 0; i < ELEMENTSOF(lim); i++)
                CHECK(*lim[i] == POLICY_UNSET || *lim[i] > 0);
        CHECK(p->n_binds == 0 || p->binds);
        for (size_t i = 0; i < p->n_binds; i++) {
                CHECK(p->binds[i].source && p->binds[i].source[0] == '/');
                CHECK(normalised_abs(p->binds[i].target));
                CHECK(!streq(p->binds[i].target, "/"));
        }
        for (size_t i = 0; i < p->n_rules; i++) {
                const struct policy_path_rule *r = &p->rules[i];
                CHECK(normalised_abs(r->path));
                CHECK(r->access == ACCESS_HIDDEN || r->access == ACCESS_READ || r->access == ACCESS_READ_WRITE);
                CHECK(r->exec >= -1 && r->exec <= 1);
                CHECK(r->action == ACTION_DEFAULT || r->action == ACTION_ASK);
        }
        CHECK(p->net_mode == NET_DENY || p->net_mode == NET_ALLOW_LISTED);
        for (size_t i = 0; i < p->n_net_rules; i++) {
                check_host(p->net_rules[i].host);
                CHECK(p->net_rules[i].port == 443);
        }
        for (size_t i = 0; i < p->n_env; i++) {
                CHECK(p->env[i].key && *p->env[i].key && !strchr(p->env[i].key, '='));
                CHECK(p->env[i].value);
        }
        if (p->has_net_testing)
                for (size_t i = 0; i < p->net_testing.n_allow_private; i++) {
                        const struct policy_net_cidr *c = &p->net_testing.allow_private[i];
                        CHECK(c->family == AF_INET || c->family == AF_INET6);
                        CHECK(c->prefix <= (c->family == AF_INET ? 32U : 128U));
                }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        for (int round = 0; round < 2; round++) {
                struct policy *p = NULL;
                char *err = NULL;
                int r = policy_load_buffer((const char *)data, size, "fuzz.json", &p, &err);
                if (r < 0) {
                        CHECK(!p);
                        CHECK(err);
                        CHECK(startswith(err, "fuzz.json"));
                        for (const char *c = err; *c; c++)
                                CHECK((unsigned char)*c >= 0x20 || *c == '\t');
                        free(err);
                        continue;
                }
                CHECK(r == 0 && p && !err);
                check_policy(p);
                policy_free(p);
        }
        return 0;
}
