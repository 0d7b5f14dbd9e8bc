/* The isolation tiers a sandbox can ask for (requestedIsolation): each is
 * defined by the `cordon check` layers it guarantees, so that a tier's name
 * is a promise a host either keeps in full or refuses; and which policies
 * are high-risk (the admission file may ask those for the strongest tier):
 * egress rules, credential grants, read-write binds, extra capabilities. */
#include "config.h"

#include "common/util.h"
#include "sentry/policy/policy.h"

/* What `cordon run` requires (cordon check's "required" rows): a host that
 * lacks one of these runs nothing at all. */
#define STANDARD_LAYERS                                                                                              \
        "user namespace", "mount namespace", "pid namespace", "network namespace", "ipc namespace", "uts namespace", \
                "cgroup namespace", "seccomp user notification", "seccomp ADDFD", "mount_setattr", "pidfd_open",     \
                "SO_NETNS_COOKIE", "sentry confined", "ptrace exec events"
/* and the optional layers that each close a gap the standard tier leaves:
 * the child's native file access bounded by the kernel (landlock), RESOLVE_*
 * walks (openat2), limits and per-run kill groups (cgroup v2) */
#define HARDENED_LAYERS STANDARD_LAYERS, "landlock", "openat2", "cgroup v2"

static const char *const standard_layers[] = {STANDARD_LAYERS, NULL};
static const char *const hardened_layers[] = {HARDENED_LAYERS, NULL};
/* and the kernel egress floor beneath the gate, atomic fd injection and
 * emulated calls no signal can interrupt */
static const char *const maximum_layers[] = {HARDENED_LAYERS, "egress floor", "seccomp ADDFD_FLAG_SEND",
                                             "seccomp WAIT_KILLABLE_RECV", NULL};

const struct isolation_tier policy_tiers[POLICY_N_TIERS] = {
        {"standard", standard_layers},
        {"hardened", hardened_layers},
        {"maximum", maximum_layers},
};

int policy_tier_find(const char *name)
{
        for (int i = 0; name && i < POLICY_N_TIERS; i++)
                if (streq(policy_tiers[i].name, name))
                        return i;
        return -ENOENT;
}

const char *policy_high_risk(const struct policy *p)
{
        if (p->n_net_rules > 0)
                return "networkPolicy.rules: egress to the outside";
        if (p->n_credentials > 0)
                return "credentials: a credential grant";
        for (size_t i = 0; i < p->n_binds; i++)
                if (!p->binds[i].read_only)
                        return "filesystem.binds: a read-write bind of a host directory";
        if (p->has_caps && (p->caps & ~POLICY_DEFAULT_CAPS))
                return "capabilities: more than the default set";
        return NULL;
}
