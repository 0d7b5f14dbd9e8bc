/* The policy's in-cluster grants, networkPolicy.clusterRules (DESIGN.md,
 * "Networks"): each a network (no host bits), the ports it may be reached
 * on and the reason a person approved, read as strictly as the rest of the
 * document. What they grant is the gate's to apply, and only from a network
 * namespace an engine prepared (net/cluster.c). */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "common/util.h"
#include "sentry/policy/policy-internal.h"

#define CLUSTER_PORTS_MAX 64

static int field_cidr(struct parser *p, json_t *v, const struct field *f, void *target)
{
        return parse_cidr(p, v, target);
}

static int field_ports(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy_cluster_rule *rule = target;
        size_t n;
        int r = check_array(p, v, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return fail(p, "list at least one port: a network is granted on the ports it serves, not all");
        if (n > CLUSTER_PORTS_MAX)
                return fail(p, "at most %d ports, got %zu", CLUSTER_PORTS_MAX, n);
        rule->ports = xcalloc(n, sizeof(*rule->ports));
        for (size_t i = 0; i < n; i++) {
                json_t *e = json_array_get(v, i);
                size_t saved = doc_path_push_index(&p->path, i);
                if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > 65535)
                        r = fail(p, "expected a port from 1 to 65535, got %s",
                                 json_is_integer(e) ? "an integer out of range" : doc_json_kind(e));
                else
                        rule->ports[rule->n_ports++] = (unsigned)json_integer_value(e);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const struct field cluster_rule_fields[] = {
        FIELD("cidr", field_cidr, struct policy_cluster_rule, net, true),
        {.name = "ports", .parse = field_ports, .required = true},
        FIELD("reason", field_reason, struct policy_cluster_rule, reason, true),
};

int policy_field_cluster_rules(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy *pol = target;
        size_t n;
        int r = check_array(p, v, &n);
        if (r < 0)
                return r;
        pol->cluster_rules = xcalloc(n ? n : 1, sizeof(*pol->cluster_rules));
        for (size_t i = 0; i < n; i++) {
                size_t saved = doc_path_push_index(&p->path, i);
                pol->n_cluster_rules = i + 1; /* so that a half-read one is freed */
                r = dispatch(p, json_array_get(v, i), cluster_rule_fields, ELEMENTSOF(cluster_rule_fields),
                             &pol->cluster_rules[i]);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }
        return 0;
}

void policy_cluster_free(struct policy *pol)
{
        for (size_t i = 0; i < pol->n_cluster_rules; i++) {
                free(pol->cluster_rules[i].ports);
                free(pol->cluster_rules[i].reason);
        }
        free(pol->cluster_rules);
        free(pol->cluster_domain);
        pol->cluster_rules = NULL;
        pol->n_cluster_rules = 0;
        pol->cluster_domain = NULL;
}
