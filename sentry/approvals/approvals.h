/* sentry/approvals/: human approval of high-risk calls (issue #10), the
 * room's one header. A policy rule with "action": "ask" makes the matching
 * call wait (only the calling thread: notify_ask) until a person decides,
 * through `cordon sandbox approve|deny` (the control socket) or, for
 * `cordon run --approve-interactive`, on the controlling terminal; or
 * until the request expires (policy approvalTimeoutMs), which denies it.
 *
 * Promises: every decision is recorded with who made it; a request nobody
 * can answer, one past APPROVALS_MAX_PENDING and every pending one at the
 * sandbox's end is denied, never allowed; the core (`cordon run`) and the
 * sandbox room both use it, so it sits below both and knows neither.
 *
 * Never: it performs no call itself and reads no child memory (the
 * notification engine asks it with the details it copied); the only people
 * it speaks to are those on the terminal --approve-interactive names. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "notify/notify.h"

/* pending requests at once; beyond, a new one is denied at once (recorded) */
#define APPROVALS_MAX_PENDING 256
/* remembered answers kept per sandbox */
#define APPROVALS_MAX_REMEMBERED 256

struct approvals_config {
        const char *sandbox_id;
        int64_t timeout_ms; /* a request's life; then it is denied as expired */
        int audit_fd;       /* `cordon run`: one JSON line per decision (the --audit file); -1 */
        bool events;        /* `sandbox create`: events (and audit records) are queued for the serve loop */
        int wake_events_fd; /* written to (non-blocking) when events are queued; -1 */
        int tty_fd;         /* --approve-interactive: the controlling terminal to ask on; -1 */
        int wake_fd;        /* written to when a terminal prompt starts or ends (the tty relay pauses); -1 */
};

struct approvals;

/* With neither events nor tty_fd, nobody can be asked: each ask is
 * denied at once, recorded as decided by "no-approver". */
int approvals_new(const struct approvals_config *cfg, struct approvals **ret);
/* The approver to give the notification engine (valid while ap lives). */
const struct notify_approver *approvals_approver(struct approvals *ap);
/* A request that is no held syscall: the credential broker's, whose relay
 * thread waits for the answer (an "ask" grant's request, before the secret
 * goes in). done is called exactly once, from any thread, maybe before
 * approvals_ask returns, with decision "approved", "remembered", "denied"
 * or "expired"; alive (may be NULL) says whether the asker still waits
 * (if not, the request is dropped as its caller gone). */
struct approvals_callback {
        void (*done)(void *arg, bool approved, const char *decision);
        bool (*alive)(void *arg);
        void *arg;
};
void approvals_ask(struct approvals *ap, const struct notify_ask *q, const struct approvals_callback *cb);
/* Answers request id (e.g. "q3"). who names the decider ("uid 0 pid 123").
 * 0, or -ENOENT (no such pending request) with err filled. */
int approvals_decide(struct approvals *ap, const char *id, bool approve, bool remember, const char *who, char *err,
                     size_t errsize);
/* Denies every pending request, decided by who ("terminate"), and every
 * later ask at once; stops the timer and the terminal prompt. Call before
 * the notification engine stops. Idempotent. */
void approvals_close(struct approvals *ap, const char *who);
/* The pending requests, oldest first: [{request, capability, target,
 * summary, requestedAt, expiresAt}]. */
json_t *approvals_pending_json(struct approvals *ap);
/* Takes the queued events, oldest first: a JSON array of objects, each
 * with its "type" (approval_required, approval_decided, audit with its
 * "record"). Never NULL. */
json_t *approvals_take_events(struct approvals *ap);
/* Whether a terminal prompt is open (the tty relay must not read then). */
bool approvals_prompting(struct approvals *ap);
/* Closes (as "terminate") and frees. Accepts NULL. */
void approvals_free(struct approvals *ap);
