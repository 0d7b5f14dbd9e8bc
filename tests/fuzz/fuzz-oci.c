/* Fuzz target for the OCI config parser (sentry/oci/config.c, linux.c,
 * seccomp.c, parser.c) and what is built from a parsed config (policy.c, the
 * seccomp compiler): the config.json an engine, or whoever can talk to
 * one, hands cordon.
 *
 * Every input is parsed as a config and as an `exec --process` file. A
 * failure must come with a message that names the origin and holds no raw
 * control bytes; a success must hold the invariants the runtime relies on
 * without checking again: absolute normalised paths, known mount types
 * and flags, at least one argument, NAME=VALUE environment entries, unique
 * namespaces, soft rlimits under hard ones, no SCMP_ACT_NOTIFY. A parsed
 * config is then turned into a policy (unless its annotation names a policy
 * file, which would make the target read files of the host) and its seccomp
 * profile is compiled; both must succeed with sane results or fail with a
 * message.
 *
 * Built with -fsanitize=fuzzer for libFuzzer (make fuzz FUZZ_TARGETS=oci),
 * or with tests/fuzz/standalone.c to replay the corpus (tests/fuzz/run.sh). */
#include "config.h"

#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mount.h>

#include "common/util.h"
#include "sentry/oci/oci.h"
#include "sentry/policy/policy.h"

#define BUNDLE "/fuzz/bundle"

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
                const char *end = strchrnul(c + 1, '/');
                size_t n = (size_t)(end - c - 1);
                if (n == 0 || (n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.'))
                        return false;
                c = end;
        }
        return true;
}

static bool under(const char *path, const char *dir)
{
        size_t n = strlen(dir);
        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static void check_message(const char *err, const char *origin)
{
        CHECK(err);
        CHECK(startswith(err, origin));
        for (const char *c = err; *c; c++)
                CHECK((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f);
}

static void check_strv_env(char **env)
{
        for (size_t i = 0; env && env[i]; i++) {
                const char *eq = strchr(env[i], '=');
                CHECK(eq && eq != env[i]);
        }
}

static void check_process(const struct oci_process *p)
{
        CHECK(p->args && p->args[0] && p->args[0][0]);
        CHECK(normalised_abs(p->cwd));
        CHECK(p->env);
        check_strv_env(p->env);
        CHECK(p->n_rlimits == 0 || p->rlimits);
        for (size_t i = 0; i < p->n_rlimits; i++) {
                CHECK(p->rlimits[i].soft <= p->rlimits[i].hard);
                for (size_t j = 0; j < i; j++)
                        CHECK(p->rlimits[i].resource != p->rlimits[j].resource);
        }
        uint64_t all = (UINT64_C(1) << 41) - 1; /* CAP_CHOWN .. CAP_CHECKPOINT_RESTORE */
        CHECK(!(p->caps.bounding & ~all) && !(p->caps.effective & ~all) && !(p->caps.permitted & ~all) &&
              !(p->caps.inheritable & ~all) && !(p->caps.ambient & ~all));
        CHECK(!p->user.has_umask || p->user.umask <= 0777);
        CHECK(!p->has_oom_score_adj || (p->oom_score_adj >= -1000 && p->oom_score_adj <= 1000));
        CHECK(p->console_height <= 65535 && p->console_width <= 65535);
        CHECK(!p->apparmor_profile || p->apparmor_profile[0]);
}

static void check_spec(const struct oci_spec *s)
{
        static const char *const types[] = {"bind", "tmpfs", "proc", "sysfs", "devpts", "mqueue", "cgroup", "cgroup2"};
        const unsigned long flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_SYNCHRONOUS | MS_DIRSYNC |
                                    MS_MANDLOCK | MS_NOATIME | MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME |
                                    MS_LAZYTIME | MS_SILENT | MS_I_VERSION | MS_BIND | MS_REC;

        CHECK(s->oci_version && startswith(s->oci_version, "1."));
        CHECK(streq(s->bundle, BUNDLE));
        CHECK(normalised_abs(s->root_path));
        if (s->has_process)
                check_process(&s->process);
        for (size_t i = 0; i < s->n_mounts; i++) {
                const struct oci_mount *m = &s->mounts[i];
                bool known = false;
                CHECK(normalised_abs(m->destination));
                for (size_t k = 0; k < ELEMENTSOF(types); k++)
                        known = known || streq(m->type, types[k]);
                CHECK(known);
                CHECK(!(m->flags & ~flags));
                CHECK(streq(m->type, "bind") == !!(m->flags & MS_BIND));
                if (streq(m->type, "bind")) {
                        CHECK(normalised_abs(m->source));
                        CHECK(!m->data);
                }
                CHECK(!m->data || (m->data[0] && m->data[0] != ','));
                CHECK(!m->tmpcopyup || streq(m->type, "tmpfs"));
                unsigned long prop = m->propagation & ~MS_REC;
                CHECK(prop == 0 || prop == MS_PRIVATE || prop == MS_SLAVE || prop == MS_SHARED ||
                      prop == MS_UNBINDABLE);
        }
        for (size_t i = 0; i < s->n_namespaces; i++) {
                CHECK(s->namespaces[i].type != 0);
                CHECK(!s->namespaces[i].path || normalised_abs(s->namespaces[i].path));
                for (size_t j = 0; j < i; j++)
                        CHECK(s->namespaces[i].type != s->namespaces[j].type);
        }
        for (size_t i = 0; i < s->n_uid_mappings; i++)
                CHECK(s->uid_mappings[i].size > 0);
        for (size_t i = 0; i < s->n_gid_mappings; i++)
                CHECK(s->gid_mappings[i].size > 0);
        CHECK(s->masked_paths && s->readonly_paths);
        for (char **p = s->masked_paths; *p; p++)
                CHECK(normalised_abs(*p));
        for (char **p = s->readonly_paths; *p; p++)
                CHECK(normalised_abs(*p));
        for (size_t i = 0; i < s->n_sysctls; i++)
                CHECK(s->sysctls[i].key[0] && !strchr(s->sysctls[i].key, '/') && !strstr(s->sysctls[i].key, ".."));
        const struct oci_resources *r = &s->resources;
        CHECK(r->memory_limit == -1 || r->memory_limit > 0);
        CHECK(r->memory_swap == -1 || r->memory_swap > 0);
        CHECK(r->pids_limit == -1 || r->pids_limit > 0);
        CHECK(r->cpu_quota == -1 || r->cpu_quota >= 1000);
        CHECK(r->cpu_period == 0 || (r->cpu_period >= 1000 && r->cpu_period <= 1000000));
        for (int k = 0; k < OCI_HOOK_KINDS; k++)
                for (size_t i = 0; i < s->n_hooks[k]; i++) {
                        CHECK(normalised_abs(s->hooks[k][i].path));
                        CHECK(s->hooks[k][i].timeout >= 0);
                        check_strv_env(s->hooks[k][i].env);
                }
        if (s->seccomp) {
                CHECK(s->seccomp->default_action != SCMP_ACT_NOTIFY);
                for (size_t i = 0; i < s->seccomp->n_rules; i++) {
                        CHECK(s->seccomp->rules[i].action != SCMP_ACT_NOTIFY);
                        CHECK(s->seccomp->rules[i].names);
                        for (size_t a = 0; a < s->seccomp->rules[i].n_args; a++)
                                CHECK(s->seccomp->rules[i].args[a].index <= 5);
                }
        }
        if (s->hostname && s->hostname[0]) {
                /* a uts namespace of its own, or a joined one (a pod's
                 * containers carry the pod's hostname, as runc takes it) */
                bool uts = false;
                for (size_t i = 0; i < s->n_namespaces; i++)
                        uts = uts || s->namespaces[i].type == CLONE_NEWUTS;
                CHECK(uts);
        }
}

static void check_policy(const struct oci_spec *s, const struct policy *p)
{
        CHECK(p->has_source && streq(p->source_kind, "template") && !p->source_digest);
        CHECK(streq(p->source_path, s->root_path));
        CHECK(p->n_binds <= 64);
        for (size_t i = 0; i < p->n_binds; i++) {
                CHECK(normalised_abs(p->binds[i].source));
                CHECK(normalised_abs(p->binds[i].target));
                CHECK(!streq(p->binds[i].target, "/"));
                CHECK(!under(p->binds[i].target, "/proc") && !under(p->binds[i].target, "/dev"));
                for (size_t j = 0; j < i; j++)
                        CHECK(!streq(p->binds[i].target, p->binds[j].target));
        }
        for (size_t i = 0; i < p->n_rules; i++) {
                CHECK(normalised_abs(p->rules[i].path));
                for (size_t j = 0; j < i; j++)
                        CHECK(!streq(p->rules[i].path, p->rules[j].path));
        }
        const int64_t lim[] = {p->cpu_millis, p->memory_bytes, p->max_processes};
        for (size_t i = 0; i < ELEMENTSOF(lim); i++)
                CHECK(lim[i] == POLICY_UNSET || lim[i] > 0);
        /* config.json only ever narrows */
        if (s->resources.memory_limit > 0)
                CHECK(p->memory_bytes != POLICY_UNSET && p->memory_bytes <= s->resources.memory_limit);
        if (s->resources.pids_limit > 0 && s->resources.pids_limit <= 4194304)
                CHECK(p->max_processes != POLICY_UNSET && p->max_processes <= s->resources.pids_limit);
        CHECK(p->cpu_millis == POLICY_UNSET || p->cpu_millis <= 1000000);
        for (char **m = s->masked_paths; *m; m++) {
                bool found = false;
                for (size_t i = 0; i < p->n_rules; i++)
                        /* masked as runc masks it, or hidden where the policy
                         * hides it: never more open */
                        found = found || (streq(p->rules[i].path, *m) &&
                                          (p->rules[i].access == ACCESS_MASKED || p->rules[i].access == ACCESS_HIDDEN));
                CHECK(found);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct oci_spec *s = NULL;
        char *err = NULL;
        int r = oci_spec_parse((const char *)data, size, BUNDLE, &s, &err);

        if (r < 0) {
                CHECK(!s);
                check_message(err, BUNDLE "/config.json");
                free(err);
        } else {
                CHECK(r == 0 && s && !err);
                check_spec(s);

                const char *ann = oci_annotation(s, OCI_POLICY_ANNOTATION);
                if (!ann || ann[strspn(ann, " \t\r\n")] == '{' || ann[0] == '\0') {
                        struct policy *pol = NULL;
                        r = oci_spec_policy(s, &pol, &err);
                        if (r < 0) {
                                CHECK(!pol);
                                check_message(err, BUNDLE "/config.json");
                                free(err);
                                err = NULL;
                        } else {
                                check_policy(s, pol);
                                policy_free(pol);
                        }
                }
                if (s->seccomp) {
                        struct sock_fprog prog = {0};
                        r = oci_seccomp_compile(s->seccomp, &prog, &err);
                        if (r < 0) {
                                CHECK(!prog.filter);
                                check_message(err, "linux.seccomp");
                                free(err);
                                err = NULL;
                        } else {
                                CHECK(prog.filter && prog.len > 0 && prog.len <= BPF_MAXINSNS);
                                free(prog.filter);
                        }
                }
                oci_spec_free(s);
        }

        /* the same bytes as an exec --process file */
        struct oci_process p = {0};
        r = oci_process_parse((const char *)data, size, &p, &err);
        if (r < 0) {
                check_message(err, "process");
                free(err);
        } else {
                check_process(&p);
                oci_process_done(&p);
        }

        /* and as an `update --resources` document: what is given is in
         * the bounds the parser promises */
        struct oci_resources res;
        r = oci_resources_parse((const char *)data, size, "update", &res, &err);
        if (r < 0) {
                check_message(err, "update");
                free(err);
        } else {
                CHECK(res.memory_limit == -1 || res.memory_limit > 0);
                CHECK(res.pids_limit == -1 || res.pids_limit > 0);
                CHECK(res.cpu_quota == -1 || res.cpu_quota >= 1000);
                CHECK(res.cpu_period == 0 || (res.cpu_period >= 1000 && res.cpu_period <= 1000000));
                CHECK(res.cpu_shares <= 262144);
                CHECK(!(res.memory_swap > 0 && res.memory_limit > 0 && res.memory_swap < res.memory_limit));
                oci_resources_done(&res);
        }
        return 0;
}
