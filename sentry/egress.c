/* The sandbox's egress gate, started from its policy: the listed names,
 * the test-only overrides, the audit file, the in-cluster grants and cluster
 * DNS of a sandbox in an engine's network namespace (whose upstream sockets
 * the gate then makes there), and the DNS stub in the sandbox's namespace. */
#include "config.h"

#include "sentry/approvals/approvals.h"
#include "sentry/sentry-internal.h"

/* The gate's asker (net.h): an "ask" grant's request goes to the
 * sandbox's approvals, like every other ask rule's call. */
static void gate_ask(void *userdata, const struct notify_ask *q,
                     void (*done)(void *arg, bool approved, const char *decision), bool (*alive)(void *arg), void *arg)
{
        approvals_ask(userdata, q, &(struct approvals_callback){.done = done, .alive = alive, .arg = arg});
}

void egress_attach_approvals(struct sandbox_state *st)
{
        if (!st->gate)
                return;
        if (st->approvals)
                net_gate_set_asker(st->gate, &(struct net_asker){.ask = gate_ask, .userdata = st->approvals});
        else
                net_gate_set_asker(st->gate, NULL);
}

/* The egress gate: the policy's rules (rule i answers as pool address i),
 * its test-only overrides, the audit file; then the DNS stub inside the
 * sandbox's network namespace. */
int start_gate(struct sandbox_state *st, int netnsfd)
{
        const struct policy *p = st->policy;
        _cleanup_free_ struct net_rule *rules = xcalloc(p->n_net_rules, sizeof(*rules));
        for (size_t i = 0; i < p->n_net_rules; i++)
                rules[i] = (struct net_rule){p->net_rules[i].host, p->net_rules[i].port,
                                             p->net_rules[i].action == ACTION_ASK};
        _cleanup_free_ struct net_cidr *allow = xcalloc(p->net_testing.n_allow_private, sizeof(*allow));
        for (size_t i = 0; i < p->net_testing.n_allow_private; i++) {
                allow[i].family = p->net_testing.allow_private[i].family;
                allow[i].prefix = p->net_testing.allow_private[i].prefix;
                memcpy(allow[i].addr, p->net_testing.allow_private[i].addr, 16);
        }
        struct net_gate_config cfg = {
                .sandbox_id = st->id,
                .rules = rules,
                .n_rules = p->n_net_rules,
                .test_hosts_file = p->net_testing.hosts_file,
                .test_allow = allow,
                .n_test_allow = p->net_testing.n_allow_private,
                .audit_fd = st->audit_fd,
                /* a sandbox's audit goes to its events, whose share closes
                 * the gate when it is used up (sandbox/events.c) */
                .audit_log_bounded = st->serve != NULL,
                .verbose = st->verbose,
                .broker = st->plan->broker,
        };
        int r = net_gate_new(&cfg, &st->gate);
        if (r < 0) {
                fprintf(stderr, "cordon: cannot start the egress gate: %s\n", strerror(-r));
                return r;
        }
        r = net_gate_start_stub_shared(st->gate, netnsfd, st->plan->oci && st->plan->oci->stub_shared);
        if (r < 0) {
                fprintf(stderr, "cordon: cannot start the DNS stub in the sandbox: %s\n", strerror(-r));
                net_gate_free(TAKE_PTR(st->gate));
                return r;
        }
        /* a network namespace an engine prepared: the gate connects from it */
        if (st->plan->oci && st->plan->oci->net_prepared && (r = net_gate_upstream_netns(st->gate, netnsfd)) < 0) {
                fprintf(stderr, "cordon: the egress gate cannot join the sandbox's network namespace: %s\n",
                        strerror(-r));
                net_gate_free(TAKE_PTR(st->gate));
                return r;
        }
        if (p->n_cluster_rules) {
                _cleanup_free_ struct net_cluster_rule *cl = xcalloc(p->n_cluster_rules, sizeof(*cl));
                for (size_t i = 0; i < p->n_cluster_rules; i++) {
                        const struct policy_cluster_rule *c = &p->cluster_rules[i];
                        cl[i] = (struct net_cluster_rule){{c->net.family, {0}, c->net.prefix}, c->ports, c->n_ports};
                        memcpy(cl[i].net.addr, c->net.addr, 16);
                }
                (void)net_gate_set_cluster(st->gate, cl, p->n_cluster_rules);
        }
        const char *dns = st->plan->oci ? st->plan->oci->cluster_dns : NULL;
        if (p->cluster_domain && dns && net_gate_set_cluster_dns(st->gate, p->cluster_domain, dns) < 0)
                fprintf(stderr,
                        "cordon: warning: the engine's nameserver %s is not an address: names under %s "
                        "do not resolve\n",
                        dns, p->cluster_domain);
        if (p->has_net_testing)
                fprintf(stderr, "cordon: warning: the policy's networkPolicy.testing overrides are in force "
                                "(test use only; every use is audited)\n");
        return 0;
}
