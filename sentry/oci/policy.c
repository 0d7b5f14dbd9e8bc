/* The cordon policy a container runs under (sentry/oci/oci.h,
 * oci_spec_policy): the dev.cordon.policy annotation's policy, or the
 * built-in default (no egress), with what config.json says about the
 * filesystem and limits laid over it. Where both say something, the
 * stricter wins: a container's config.json can narrow its policy, never
 * widen it. */
#include "config.h"

#include <stdarg.h>
#include <sys/mount.h>

#include "common/docparse.h"
#include "common/util.h"
#include "sentry/cgroup/cgroup.h"
#include "sentry/oci/oci.h"
#include "sentry/policy/policy.h"

/* fs/ builds the view with at most this many binds (fs/view.c). */
#define VIEW_MAX_BINDS 64

struct builder {
        const struct oci_spec *spec;
        struct policy *pol;
        const char *origin;
        size_t n_policy_binds; /* the first binds are the policy's own */
        char *error;
};

_printf_(2, 3) static int fail(struct builder *b, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        msg = xvasprintf(fmt, ap);
        va_end(ap);
        if (!b->error)
                b->error = xasprintf("%s: %s", b->origin, msg);
        return -EINVAL;
}

/* The annotation's policy: inline JSON (a value starting with '{') or an
 * absolute file path. Not one relative to the bundle: containerd puts the
 * image's root filesystem inside the bundle, and a policy must never come
 * from the image it confines. Whoever may set this annotation chooses the
 * container's policy (and names a file cordon reads as its own user, whose
 * parse errors quote it): an engine that passes pod annotations through
 * (containerd's pod_annotations, CRI-O's allowed_annotations) must allow
 * this one only to people trusted with that. */
static int load_annotation_policy(struct builder *b, struct policy **ret)
{
        const char *v = oci_annotation(b->spec, OCI_POLICY_ANNOTATION);
        _cleanup_free_ char *path = NULL, *err = NULL, *origin = NULL;
        int r;

        if (!v) {
                *ret = policy_new_default();
                return 0;
        }
        origin = xasprintf("annotations[\"%s\"]", OCI_POLICY_ANNOTATION);
        if (v[strspn(v, " \t\r\n")] == '{') {
                r = policy_load_buffer(v, strlen(v), origin, ret, &err);
                if (r < 0)
                        return fail(b, "%s", err ? err : "invalid inline policy");
                return 0;
        }
        if (v[0] == '\0')
                return fail(b, "%s: expected a policy file path or an inline JSON policy, got an empty string", origin);
        if (v[0] != '/')
                return fail(b, "%s: expected an absolute policy file path or an inline JSON policy", origin);
        path = xstrdup(v);
        r = policy_load_file(path, ret, &err);
        if (r < 0)
                return fail(b, "%s: %s", origin, err ? err : strerror(-r));
        return 0;
}

/* The strictest of two limits, each POLICY_UNSET or positive. */
static int64_t stricter(int64_t a, int64_t b)
{
        if (a == POLICY_UNSET)
                return b;
        if (b == POLICY_UNSET)
                return a;
        return a < b ? a : b;
}

/* The policy's own ceilings (sentry/policy/policy.c): above them a limit limits
 * nothing a host has (more than 1,000 CPUs, more pids than pid_max allows),
 * so such a config value is taken as "no limit" rather than handed to code
 * that was never given one that large. */
#define CPU_MILLIS_MAX    INT64_C(1000000)
#define MAX_PROCESSES_MAX INT64_C(4194304)

static void apply_limits(struct builder *b)
{
        const struct oci_resources *res = &b->spec->resources;
        struct policy *pol = b->pol;

        if (res->memory_limit > 0)
                pol->memory_bytes = stricter(pol->memory_bytes, res->memory_limit);
        if (res->pids_limit > 0 && res->pids_limit <= MAX_PROCESSES_MAX)
                pol->max_processes = stricter(pol->max_processes, res->pids_limit);
        if (res->cpu_quota > 0) {
                /* the kernel's default period when none is given */
                uint64_t period = res->cpu_period ? res->cpu_period : 100000;
                /* the same figure sentry/cgroup/ compares with, to write the
                 * config's own quota and period when this is the limit */
                int64_t millis = cgroup_cpu_millis((uint64_t)res->cpu_quota, period);

                if (millis <= CPU_MILLIS_MAX)
                        pol->cpu_millis = stricter(pol->cpu_millis, millis);
        }
}

/* The view's /dev and /proc are cordon's own (DESIGN.md, "The view"); of
 * what engines bind there, the engine's /dev/shm tmpfs (podman's,
 * containerd's pod shm) is attached by the view itself (create.c,
 * fs_view_spec.shm_tree_fd), not bound as a policy bind. /etc/resolv.conf is the sentry's DNS stub's (net/), which
 * the egress gate depends on; an engine's copy would point at resolvers
 * the gate refuses anyway. The engine's /etc/hosts (podman's --add-host
 * entries and the container's own name, a pod's hostAliases) is bound as
 * any other file: a name it gives resolves to an address, and a connect
 * to that address is the gate's to decide as any address literal is (the
 * DNS stub's synthetic pool is the only way to a listed name, and nothing
 * else leaves). Anything else under /dev or /proc, or over /, is refused:
 * a bind of the host's /dev/pts or /dev/mqueue would show the host's ptys
 * or queues (the config's own devpts and mqueue are made instead). */
static const char *const provided[] = {"/dev/shm", "/etc/resolv.conf"};

static int add_bind(struct builder *b, size_t i, const struct oci_mount *m)
{
        struct policy *pol = b->pol;
        char q[DOC_QUOTE_MAX];

        for (size_t k = 0; k < ELEMENTSOF(provided); k++)
                if (streq(m->destination, provided[k]))
                        return 0;
        if (streq(m->destination, "/"))
                return fail(b, "mounts[%zu].destination: a bind over / is not supported (root.path is the root)", i);
        if (path_beneath(m->destination, "/proc") || path_beneath(m->destination, "/dev"))
                return fail(b,
                            "mounts[%zu].destination: %s is under %s, which cordon provides itself; binding host "
                            "paths there is not supported",
                            i, doc_quote(q, m->destination, strlen(m->destination)),
                            path_beneath(m->destination, "/proc") ? "/proc" : "/dev");
        for (size_t j = 0; j < pol->n_binds; j++)
                if (streq(pol->binds[j].target, m->destination))
                        return fail(b, "mounts[%zu].destination: %s is already the target of %s", i,
                                    doc_quote(q, m->destination, strlen(m->destination)),
                                    j < b->n_policy_binds ? "a bind in the policy" : "an earlier bind mount");
        if (pol->n_binds >= VIEW_MAX_BINDS)
                return fail(b, "mounts[%zu]: more than %d bind mounts (policy binds included)", i, VIEW_MAX_BINDS);
        pol->binds = xrealloc(pol->binds, (pol->n_binds + 1) * sizeof(*pol->binds));
        pol->binds[pol->n_binds++] = (struct policy_bind){
                .source = xstrdup(m->source),
                .target = xstrdup(m->destination),
                .read_only = (m->flags & MS_RDONLY) != 0,
        };
        return 0;
}

/* How much a rule lets through: hidden < masked (empty) < read <
 * read-write. */
static int openness(enum path_access a)
{
        return a == ACCESS_HIDDEN ? 0 : a == ACCESS_MASKED ? 1 : a == ACCESS_READ ? 2 : 3;
}

/* A path rule; where the policy already has one for the path, the stricter
 * access stays. */
static void add_rule(struct builder *b, const char *path, enum path_access access)
{
        struct policy *pol = b->pol;

        for (size_t i = 0; i < pol->n_rules; i++)
                if (streq(pol->rules[i].path, path)) {
                        if (openness(access) < openness(pol->rules[i].access))
                                pol->rules[i].access = access;
                        return;
                }
        pol->rules = xrealloc(pol->rules, (pol->n_rules + 1) * sizeof(*pol->rules));
        pol->rules[pol->n_rules++] = (struct policy_path_rule){
                .path = xstrdup(path),
                .access = access,
                .exec = -1,
                .action = ACTION_DEFAULT,
        };
}

/* fs/ applies rules in order: shorter paths first, so a rule on a parent
 * never lands on top of one for a path inside it. */
static int rule_cmp(const void *x, const void *y)
{
        const struct policy_path_rule *a = x, *c = y;
        size_t la = strlen(a->path), lc = strlen(c->path);
        if (la != lc)
                return la < lc ? -1 : 1;
        return strcmp(a->path, c->path);
}

int oci_spec_policy(const struct oci_spec *s, struct policy **ret, char **ret_error)
{
        _cleanup_(policy_freep) struct policy *pol = NULL;
        _cleanup_free_ char *origin = NULL;
        struct builder b = {.spec = s};
        int r;

        origin = s->bundle ? xasprintf("%s/config.json", s->bundle) : xstrdup("config.json");
        b.origin = origin;
        if (!s->root_path) {
                r = fail(&b, "root.path: required key is missing");
                goto fail;
        }

        r = load_annotation_policy(&b, &pol);
        if (r < 0)
                goto fail;
        b.pol = pol;
        b.n_policy_binds = pol->n_binds;

        /* A container's root is root.path; a policy naming another would
         * leave it unclear which one the container runs from. */
        if (pol->has_source) {
                r = fail(&b,
                         "annotations[\"%s\"]: the policy names a source, but a container's root is root.path: "
                         "remove \"source\" from the policy",
                         OCI_POLICY_ANNOTATION);
                goto fail;
        }
        /* The root as a template without a digest: the engine made it (an
         * overlay of the image) just before, and rehashing an image tree at
         * every start would cost seconds. */
        pol->has_source = true;
        pol->source_kind = xstrdup("template");
        pol->source_path = xstrdup(s->root_path);
        pol->source_digest = NULL;

        for (size_t i = 0; i < s->n_mounts; i++)
                if (streq(s->mounts[i].type, "bind") && (r = add_bind(&b, i, &s->mounts[i])) < 0)
                        goto fail;

        /* root.readonly is not a rule: a rule on "/" is applied through a
         * bind of the whole view onto itself, which covers the mounts later
         * rules are applied to (tried: "/" read plus "/tmp" read-write left
         * /tmp read-only), and fs/ has no read-only root with writable
         * places over it yet. The runtime carries s->root_readonly to the
         * view itself. */
        for (char **p = s->readonly_paths; p && *p; p++)
                add_rule(&b, *p, ACCESS_READ);
        for (char **p = s->masked_paths; p && *p; p++)
                add_rule(&b, *p, ACCESS_MASKED);
        if (pol->n_rules > 1)
                qsort(pol->rules, pol->n_rules, sizeof(*pol->rules), rule_cmp);

        apply_limits(&b);

        *ret = TAKE_PTR(pol);
        return 0;
fail:
        if (ret_error)
                *ret_error = b.error ? TAKE_PTR(b.error) : xasprintf("%s: cannot build the policy", origin);
        free(b.error);
        return r;
}
