/* The policy's "ports": TCP ports of a long-lived sandbox exposed at host
 * addresses when it is created (`cordon sandbox port` does it later):
 *
 *   "ports": [{"port": 3000, "listen": "127.0.0.1:0"}]
 *
 * port is inside the sandbox (1-65535, each once); listen is ADDR:PORT or
 * [ADDR6]:PORT on the host, an address written out (no names), default
 * 127.0.0.1:0 (a free port). Whether the address can be had is the
 * sentry's to find out at create. */
#include "config.h"

#include <arpa/inet.h>

#include "sentry/policy/policy-internal.h"

#define POLICY_MAX_PORTS 32 /* what one sentry forwards (sentry/sandbox/ports.c) */

/* "ADDR:PORT" or "[ADDR6]:PORT": whether s is one. */
static bool listen_ok(const char *s)
{
        char host[64];
        const char *colon;
        size_t n;
        if (s[0] == '[') {
                const char *close = strchr(s, ']');
                if (!close || close[1] != ':')
                        return false;
                n = (size_t)(close - s - 1);
                if (n >= sizeof(host))
                        return false;
                memcpy(host, s + 1, n);
                colon = close + 1;
        } else {
                colon = strrchr(s, ':');
                if (!colon)
                        return false;
                n = (size_t)(colon - s);
                if (n >= sizeof(host))
                        return false;
                memcpy(host, s, n);
        }
        host[n] = '\0';
        unsigned char addr[16];
        if (inet_pton(s[0] == '[' ? AF_INET6 : AF_INET, host, addr) != 1)
                return false;
        char *end;
        long port = strtol(colon + 1, &end, 10);
        return colon[1] >= '0' && colon[1] <= '9' && !*end && port >= 0 && port <= 65535;
}

static int field_listen(struct parser *p, json_t *v, const struct field *f, void *target)
{
        const char *s;
        int r = parse_string(p, v, 80, &s);
        if (r < 0)
                return r;
        if (!listen_ok(s))
                return fail(p,
                            "expected ADDR:PORT (an IPv4 address, or [IPv6]:PORT; port 0 for a free one), got "
                            "\"%.80s\"",
                            s);
        *(char **)target = xstrdup(s);
        return 0;
}

static int field_inside_port(struct parser *p, json_t *v, const struct field *f, void *target)
{
        if (!json_is_integer(v))
                return fail(p, "expected a port number from 1 to 65535, got %s", doc_json_kind(v));
        json_int_t n = json_integer_value(v);
        if (n < 1 || n > 65535)
                return fail(p, "expected a port number from 1 to 65535, got %lld", (long long)n);
        *(int *)target = (int)n;
        return 0;
}

static const struct field port_fields[] = {
        FIELD("port", field_inside_port, struct policy_port, port, true),
        FIELD("listen", field_listen, struct policy_port, listen, false),
};

int policy_field_ports(struct parser *p, json_t *v, const struct field *f, void *target)
{
        struct policy *pol = target;
        size_t n;
        int r = check_array(p, v, &n);
        if (r < 0)
                return r;
        if (n > POLICY_MAX_PORTS)
                return fail(p, "at most %d ports, got %zu", POLICY_MAX_PORTS, n);
        pol->ports = xcalloc(n ? n : 1, sizeof(*pol->ports));
        for (size_t i = 0; i < n; i++) {
                struct policy_port *pp = &pol->ports[pol->n_ports++];
                size_t saved = doc_path_push_index(&p->path, i);
                r = dispatch(p, json_array_get(v, i), port_fields, ELEMENTSOF(port_fields), pp);
                for (size_t j = 0; r == 0 && j < i; j++)
                        if (pol->ports[j].port == pp->port)
                                r = fail(p, "port %d is already listed", pp->port);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }
        return 0;
}

void policy_ports_free(struct policy *pol)
{
        for (size_t i = 0; i < pol->n_ports; i++)
                free(pol->ports[i].listen);
        free(pol->ports);
        pol->ports = NULL;
        pol->n_ports = 0;
}
