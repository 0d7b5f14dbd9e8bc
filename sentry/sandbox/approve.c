/* A long-lived sandbox and its approver (sentry/approvals/): what the
 * approver queued becomes the sandbox's events, each tied to the run its
 * process belongs to (approve_drain), and `sandbox approve|deny` requests
 * decide a pending one (approve_decide). */
#include "config.h"

#include <jansson.h>
#include <poll.h>
#include <sys/socket.h>

#include "sentry/approvals/approvals.h"
#include "sentry/sandbox/sandbox-internal.h"

/* The approver's queued events become the sandbox's events; the pending
 * set, changed, goes to meta.json. */
void approve_drain(struct sandbox_state *st)
{
        struct serve *srv = st->serve;
        char buf[256];
        while (read(srv->appr_wake_rd, buf, sizeof(buf)) > 0)
                ;
        if (!st->approvals)
                return;
        json_t *evs = approvals_take_events(st->approvals);
        bool changed = false;
        size_t i;
        json_t *ev;
        json_array_foreach(evs, i, ev)
        {
                const char *type = json_string_value(json_object_get(ev, "type"));
                if (!type)
                        continue;
                char t[64];
                snprintf(t, sizeof(t), "%s", type);
                json_t *body = json_deep_copy(ev);
                json_object_del(body, "type");
                if (streq(t, "audit")) {
                        event_append(srv, "audit", body);
                        continue;
                }
                json_int_t pid = json_integer_value(json_object_get(json_object_get(ev, "summary"), "pid"));
                char run[16];
                run_of_pid(srv, (pid_t)pid, run, sizeof(run));
                if (!run[0] && streq(t, "approval_required")) {
                        /* a run's first process can ask before init's word
                         * of its pid has been read: read it (bounded) */
                        struct pollfd ip = {st->sock, POLLIN, 0};
                        while (st->sock >= 0 && poll(&ip, 1, 100) > 0 && run_read_init(st))
                                ;
                        run_of_pid(srv, (pid_t)pid, run, sizeof(run));
                }
                if (run[0])
                        json_object_set_new(body, "run", json_string(run));
                event_append(srv, t, body);
                changed = true;
        }
        json_decref(evs);
        if (changed)
                meta_write(st);
}

/* `sandbox approve|deny ID REQ [--remember]`: who decided is the client's
 * SO_PEERCRED (checked at accept to be root or the sandbox's owner), and
 * whom that client says it relays ("via", the API server's caller), kept
 * after it, so the record never loses who connected. */
void approve_decide(struct sandbox_state *st, int conn, json_t *req, bool approve)
{
        struct serve *srv = st->serve;
        const char *id = json_string_value(json_object_get(req, "request"));
        bool remember = json_is_true(json_object_get(req, "remember"));
        if (!id || strlen(id) > 20) {
                control_reply_error(conn, "%s: which request? (see `cordon sandbox pending %s`)",
                                    approve ? "approve" : "deny", srv->id);
                return;
        }
        if (remember && !approve) {
                control_reply_error(conn, "deny: --remember is for approvals only (a denial is never remembered)");
                return;
        }
        struct ucred cred = {0};
        socklen_t l = sizeof(cred);
        char who[200];
        if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &l) == 0)
                snprintf(who, sizeof(who), "uid %u pid %d", (unsigned)cred.uid, (int)cred.pid);
        else
                snprintf(who, sizeof(who), "client");
        const char *via = json_string_value(json_object_get(req, "via"));
        if (via && strlen(via) < 128) {
                size_t n = strlen(who);
                snprintf(who + n, sizeof(who) - n, " via %s", via);
                for (char *c = who + n; *c; c++)
                        if (*c < 0x20 || *c > 0x7e) /* a line of the record, printable */
                                *c = '?';
        }
        char err[200];
        int r = approvals_decide(st->approvals, id, approve, remember, who, err, sizeof(err));
        approve_drain(st);
        if (r < 0) {
                control_reply_error_code(conn, r == -ENOENT ? SANDBOX_ERR_NOT_FOUND : SANDBOX_ERR_CONFLICT,
                                         "sandbox %s: %s", srv->id, err);
                return;
        }
        (void)control_send(conn,
                           json_pack("{s:b, s:s, s:s, s:b, s:s}", "ok", 1, "request", id, "decision",
                                     approve ? "approved" : "denied", "remember", remember, "decidedBy", who),
                           NULL, 0);
}
