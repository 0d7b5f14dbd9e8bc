/* The HTTP API's handlers for a sandbox's processes and ports: the process
 * list, a signal to one process (by its pid inside the sandbox), and the
 * ports exposed at host addresses. Each is one request to the sandbox's
 * sentry (sentry/sandbox/procs.c, ports.c), which decides. */
#include "config.h"

#include <jansson.h>
#include <microhttpd.h>
#include <signal.h>
#include <strings.h>

#include "sentry/api/api-internal.h"

static int call(struct api_req *r, json_t *req, json_t **ret, enum MHD_Result *ret_q)
{
        json_t *rep = NULL;
        int c = sandbox_call(r->params[0], req, NULL, 0, NULL, NULL, &rep);
        if (c < 0 || json_object_get(rep, "error")) {
                *ret_q = api_sandbox_error(r, r->params[0], c, rep);
                json_decref(rep);
                return -1;
        }
        *ret = rep;
        return 0;
}

/* A pid or port in the path: the number, or -1. */
static long long path_number(const char *s, long long max)
{
        char *end;
        long long n = strtoll(s, &end, 10);
        return *s && !*end && n > 0 && n <= max ? n : -1;
}

/* "TERM", "SIGKILL", 9: the number, or -1. */
static int signal_of(json_t *v)
{
        if (!v)
                return SIGTERM;
        if (json_is_integer(v)) {
                json_int_t n = json_integer_value(v);
                return n > 0 && n < 65 ? (int)n : -1;
        }
        const char *s = json_string_value(v);
        if (!s)
                return -1;
        if (strncasecmp(s, "SIG", 3) == 0)
                s += 3;
        for (int sig = 1; sig < 32; sig++) {
                const char *name = sigabbrev_np(sig);
                if (name && strcasecmp(name, s) == 0)
                        return sig;
        }
        return -1;
}

enum MHD_Result api_processes(struct api_req *r)
{
        json_t *rep = NULL;
        enum MHD_Result q;
        if (call(r, json_pack("{s:s}", "op", "ps"), &rep, &q) < 0)
                return q;
        return api_reply_json(r, 200, rep);
}

enum MHD_Result api_process_signal(struct api_req *r)
{
        static const char *const keys[] = {"signal", NULL};
        json_t *body = NULL, *rep = NULL;
        enum MHD_Result q;
        long long pid = path_number(r->params[1], 4194304);
        if (pid < 0)
                return api_error(r, 404, "not_found", NULL, "no process %s in sandbox %s", r->params[1], r->params[0]);
        if (api_body_object(r, keys, &body, &q) < 0)
                return q;
        int sig = signal_of(json_object_get(body, "signal"));
        json_decref(body);
        if (sig < 0)
                return api_error(r, 400, "invalid_field", "signal",
                                 "signal: expected a number from 1 to 64 or a name such as \"TERM\"");
        if (call(r, json_pack("{s:s, s:I, s:i}", "op", "signal", "pid", (json_int_t)pid, "signal", sig), &rep, &q) < 0)
                return q;
        json_decref(rep);
        return api_reply_json(r, 200, json_pack("{s:I, s:i, s:b}", "pid", (json_int_t)pid, "signal", sig, "sent", 1));
}

enum MHD_Result api_ports_post(struct api_req *r)
{
        static const char *const keys[] = {"port", "listen", NULL};
        json_t *body = NULL, *rep = NULL;
        enum MHD_Result q;
        if (api_body_object(r, keys, &body, &q) < 0)
                return q;
        json_t *port = json_object_get(body, "port"), *listen = json_object_get(body, "listen");
        if (!json_is_integer(port) || json_integer_value(port) < 1 || json_integer_value(port) > 65535) {
                json_decref(body);
                return api_error(r, 400, "invalid_field", "port", "port: expected an integer from 1 to 65535");
        }
        if (listen && !json_is_string(listen)) {
                json_decref(body);
                return api_error(r, 400, "invalid_field", "listen", "listen: expected \"ADDR:PORT\"");
        }
        /* A sandbox's token is the tenant's, and the host's addresses and
         * port numbers are not the tenant's to take: on another address
         * its sandbox would be reachable from outside the host, at a port
         * it names it could hold a privileged one, or squat on one a host
         * service binds (this server's own, while it restarts) and take
         * what that service's clients send. So the tenant gets loopback
         * at a port the kernel picks, the default; the rest needs the
         * admin token. */
        const char *l = listen ? json_string_value(listen) : NULL;
        if (r->auth == AUTH_SANDBOX && l && !streq(l, "127.0.0.1:0") && !streq(l, "[::1]:0")) {
                /* l is the body's: the answer is made before the body goes */
                enum MHD_Result res = api_error(r, 403, "forbidden", "listen",
                                                "listen %s: a sandbox's token exposes a port only on loopback at a "
                                                "port the kernel picks (\"127.0.0.1:0\", the default, or "
                                                "\"[::1]:0\"); another address or port needs the admin token",
                                                l);
                json_decref(body);
                return res;
        }
        json_t *req = json_pack("{s:s, s:O}", "op", "port", "port", port);
        if (listen)
                json_object_set(req, "listen", listen);
        json_decref(body);
        if (call(r, req, &rep, &q) < 0)
                return q;
        json_object_del(rep, "status");
        return api_reply_json(r, 201, rep);
}

enum MHD_Result api_ports_get(struct api_req *r)
{
        json_t *rep = NULL;
        enum MHD_Result q;
        if (call(r, json_pack("{s:s}", "op", "ports"), &rep, &q) < 0)
                return q;
        return api_reply_json(r, 200, rep);
}

enum MHD_Result api_ports_delete(struct api_req *r)
{
        json_t *rep = NULL;
        enum MHD_Result q;
        long long port = path_number(r->params[1], 65535);
        if (port < 0)
                return api_error(r, 404, "not_found", NULL, "port %s of sandbox %s is not exposed", r->params[1],
                                 r->params[0]);
        if (call(r, json_pack("{s:s, s:I}", "op", "unport", "port", (json_int_t)port), &rep, &q) < 0)
                return q;
        json_decref(rep);
        return api_reply_json(r, 200, json_pack("{s:I, s:b}", "port", (json_int_t)port, "closed", 1));
}
