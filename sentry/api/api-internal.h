/* The API room's private declarations (sentry/api/ only): the server, one
 * request, the route table, and what the handlers share. */
#pragma once

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdint.h>

#include "sentry/api/api.h"
#include "sentry/api/mhd-dl.h"
#include "sentry/sandbox/sandbox.h"

#define API_MAX_BODY      (1 << 20)    /* a JSON body */
#define API_MAX_UPLOAD    (1ULL << 40) /* PUT .../files: a raw file, streamed (the sandbox's disk limit comes first) */
#define API_MAX_SNAPSHOT  (64 << 20)   /* a create's fromSnapshot archive (its body is that in base64, and JSON) */
#define API_MAX_OUTPUT    (1 << 20)    /* exec: each of stdout and stderr kept in the reply */
#define API_MAX_PER_TOKEN 16           /* requests in progress at once with one sandbox's token */
#define API_TOKEN_BYTES   32

struct api_server {
        const struct api_config *cfg;
        struct MHD_Daemon *daemon;
        bool tcp;
        gid_t group; /* unix: the socket's group, which may connect */
        bool have_admin;
        uint8_t admin_hash[32];    /* sha256 of the admin token */
        pthread_mutex_t lock;      /* the host cache */
        pthread_mutex_t idem_lock; /* creates with an idempotency key, one at a time */
        json_t *host;              /* `cordon check --json`, cached */
        time_t host_at;
        /* requests in progress per sandbox token (tokens.c: api_busy_*):
         * one tenant cannot hold every connection a proxy's address has */
        pthread_mutex_t busy_lock;
        struct {
                char hash[65];
                int n;
        } busy[256];
};

enum api_auth { AUTH_NONE, AUTH_ADMIN, AUTH_SANDBOX };

/* One request: its body as it arrives, then the route's handler. */
struct api_req {
        struct api_server *srv;
        struct MHD_Connection *conn;
        const char *method, *url;
        bool started;
        char *body; /* NUL-terminated */
        size_t body_len, body_max;
        size_t body_cap; /* body's allocation: it grows by doubling */
        bool too_large;
        enum api_auth auth;
        char token_hash[65];   /* AUTH_SANDBOX: sha256 of the bearer token, hex */
        int busy_slot;         /* AUTH_SANDBOX: its srv->busy entry + 1, while it runs; else 0 */
        const char *params[3]; /* {id}, {run}, {req} by position */
        int status;            /* for the log */
        /* PUT .../files (upload.c): the pipe its body goes into and the
         * transfer's control connection, -1 when none; bytes so far */
        int up_pipe, up_conn;
        uint64_t up_got;
};

typedef enum MHD_Result (*api_handler)(struct api_req *r);
struct api_route {
        const char *method;
        const char *pattern; /* "/v1/sandboxes/{id}/runs/{run}" */
        api_handler fn;
        bool admin_only; /* a sandbox's token cannot call it */
};
extern const struct api_route api_routes[];
extern const size_t api_n_routes;
/* The path of a URL matches a pattern: params filled by position. */
bool api_route_match(const char *pattern, const char *path, const char *params[3], char *buf, size_t size);

/* reply.c: a string of n bytes that may not be UTF-8 (bytes outside
 * ASCII of an invalid one become '?'); replies. */
json_t *api_text(const char *s, size_t n);
enum MHD_Result api_reply_json(struct api_req *r, unsigned status, json_t *body); /* steals body */
enum MHD_Result api_error(struct api_req *r, unsigned status, const char *code, const char *field, const char *fmt, ...)
        _printf_(5, 6);
/* An error reply of the sandbox's sentry ({"error", "code"?}) or a failed
 * call (-errno), for sandbox id. */
enum MHD_Result api_sandbox_error(struct api_req *r, const char *id, int call_r, json_t *rep);
enum MHD_Result api_reply_response(struct api_req *r, unsigned status, struct MHD_Response *resp);
const char *api_query(struct api_req *r, const char *key);
/* The request's body as a JSON object whose keys are all in allowed
 * (NULL-terminated; NULL: any): 0 with *ret, or an error already queued
 * (*ret_result) and -EINVAL. */
int api_body_object(struct api_req *r, const char *const *allowed, json_t **ret, enum MHD_Result *ret_result);
/* The connection's socket, for its peer's hang-up. */
int api_conn_fd(struct api_req *r);

/* bodies.c: request bodies checked apart from HTTP (a fuzz target's). A
 * refusal names the field and says what was wrong. */
struct api_bad {
        char field[300];
        char message[512];
};
/* {argv, env, cwd, timeoutMs} as the control protocol's exec request (a new
 * reference), or NULL with *bad filled. */
json_t *api_exec_request(json_t *body, bool detach, struct api_bad *bad);
struct api_file {
        const char *path; /* borrowed from the body */
        uint8_t *data;    /* malloc'd */
        size_t len;
        int mode;
};
/* {path, contentBase64, mode}: 0 with *ret filled, or -EINVAL with *bad. */
int api_file_body(json_t *body, struct api_file *ret, struct api_bad *bad);
/* Strict base64 (padding optional): 0 with *ret (malloc'd), or -EINVAL. */
int api_b64_decode(const char *s, size_t n, uint8_t **ret, size_t *ret_len);
/* n bytes as a JSON string of their base64 (padded), or NULL (memory) */
json_t *api_b64_json(const void *data, size_t len);
/* An absolute path in a sandbox, shorter than PATH_MAX (the view resolves
 * it: ".." never climbs out of it). */
bool api_path_ok(const char *p);
/* server.c: the route for method and path (params filled), or NULL
 * (*ret_path_known: the path has a route for another method). */
const struct api_route *api_route_find(const char *method, const char *path, const char *params[3], char *buf,
                                       size_t size, bool *ret_path_known);

/* tokens.c: sha256 in hex; a new random token; a sandbox's token hash kept
 * in its state directory, and whether a hash matches it (constant time). */
int api_sha256_hex(const void *data, size_t len, char ret[65]);
void api_new_token(char ret[2 * API_TOKEN_BYTES + 1]);
int api_token_store(const char *id, const char *token);
bool api_token_matches(const char *id, const char *hash_hex);
bool api_token_matches_any(const char *hash_hex); /* any live sandbox's */
bool api_const_eq(const void *a, const void *b, size_t n);
/* Idempotency records: name's value under scope (a directory the caller
 * names: the server's for creates, the sandbox's for runs). */
int api_idem_get(const char *dir, const char *key, char *ret, size_t size);
int api_idem_put(const char *dir, const char *key, const char *value);

/* sandboxes.c: the handlers of the sandboxes and of the host. */
enum MHD_Result api_create(struct api_req *r);
enum MHD_Result api_list(struct api_req *r);
enum MHD_Result api_inspect(struct api_req *r);
enum MHD_Result api_terminate(struct api_req *r);
enum MHD_Result api_pause(struct api_req *r);
enum MHD_Result api_resume(struct api_req *r);
enum MHD_Result api_approvals(struct api_req *r);
enum MHD_Result api_approve(struct api_req *r);
enum MHD_Result api_deny(struct api_req *r);
enum MHD_Result api_host(struct api_req *r);
enum MHD_Result api_openapi(struct api_req *r);
/* The host's layers (cached `cordon check --json`): a new reference. */
json_t *api_host_json(struct api_server *srv);

/* procs.c: a sandbox's processes and ports. */
enum MHD_Result api_processes(struct api_req *r);
enum MHD_Result api_process_signal(struct api_req *r);
enum MHD_Result api_ports_post(struct api_req *r);
enum MHD_Result api_ports_get(struct api_req *r);
enum MHD_Result api_ports_delete(struct api_req *r);

/* runs.c: exec, runs and their events, files, snapshots. */
enum MHD_Result api_exec(struct api_req *r);
enum MHD_Result api_run_start(struct api_req *r);
enum MHD_Result api_run_status(struct api_req *r);
enum MHD_Result api_run_cancel(struct api_req *r);
enum MHD_Result api_run_events(struct api_req *r);
enum MHD_Result api_events(struct api_req *r);
enum MHD_Result api_files_post(struct api_req *r);
enum MHD_Result api_files_get(struct api_req *r);
enum MHD_Result api_snapshot(struct api_req *r);

/* upload.c: PUT .../files, streamed. Begun once the request is admitted,
 * before its body: 0, or -errno with the refusal queued (*ret_q); each
 * piece of the body; the reply at its end (the route's handler); the
 * pipe (and with conn_too the transfer's connection) closed, at once for a
 * request that ends early. */
int api_upload_begin(struct api_req *r, const char *content_length, enum MHD_Result *ret_q);
void api_upload_data(struct api_req *r, const char *data, size_t n);
enum MHD_Result api_files_put(struct api_req *r);
void api_upload_abort(struct api_req *r, bool conn_too);

/* deadline.c: how long a request may take to arrive (slowloris). The
 * watchdog thread; libmicrohttpd's connection notifications (each
 * connection watched from its start to its close); and a request's
 * phases, told by the server as they come: its header block complete
 * (the body is timed from here), n bytes of its body, the request
 * complete (nothing timed while it is served), its end (the next
 * request's header block is timed from here). */
int api_deadlines_start(bool verbose);
void api_deadlines_stop(void);
void api_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode code);
enum api_deadline_phase { API_DEADLINE_BODY, API_DEADLINE_RECEIVED, API_DEADLINE_SERVED, API_DEADLINE_NEXT };
void api_deadline_phase(struct MHD_Connection *c, enum api_deadline_phase p, size_t received);

/* openapi.gen.c (from openapi.json at build time) */
extern const char api_openapi_json[];
