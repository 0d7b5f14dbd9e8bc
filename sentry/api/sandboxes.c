/* The API's sandbox calls: create (the policy checked here, so that a bad
 * field, a tier the host cannot give and a quota come back as 400, 422 and
 * 429 naming what was wrong; then `cordon sandbox create` itself), list,
 * inspect, terminate, pause and resume, approvals, and the host's layers
 * (`cordon check --json`) with the tiers they make up. */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "sentry/api/api-internal.h"

/* --- running cordon itself --- */

/* Runs self with argv (argv[0] ignored), fd 3 being extra_fd (or none),
 * stdout and stderr gathered (each bounded): its wait status. The child is
 * a fresh image (exec at once after fork): a sandbox's sentry never holds a
 * copy of the server's memory (its tokens), nor any of its fds, and is no
 * child of the server once the create verb has exited. */
static int run_self(const char *self, char *const argv[], int extra_fd, char **ret_out, char **ret_err)
{
        int out[2], err[2];
        if (pipe2(out, O_CLOEXEC) < 0)
                return negative_errno();
        if (pipe2(err, O_CLOEXEC) < 0) {
                int r = negative_errno();
                close(out[0]);
                close(out[1]);
                return r;
        }
        pid_t pid = fork();
        if (pid == 0) {
                int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (nul < 0 || dup2(nul, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
                        _exit(127);
                if (extra_fd >= 0 && dup2(extra_fd, 3) < 0)
                        _exit(127);
                syscall(SYS_close_range, extra_fd >= 0 ? 4 : 3, ~0U, 0);
                sigset_t none;
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                execv(self, argv);
                _exit(127);
        }
        close(out[1]);
        close(err[1]);
        if (pid < 0) {
                close(out[0]);
                close(err[0]);
                return -EAGAIN;
        }
        size_t cap[2] = {0, 0}, len[2] = {0, 0};
        char *buf[2] = {NULL, NULL};
        int fds[2] = {out[0], err[0]};
        while (fds[0] >= 0 || fds[1] >= 0) {
                struct pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
                if (poll(p, 2, -1) < 0 && errno != EINTR)
                        break;
                for (int k = 0; k < 2; k++) {
                        if (fds[k] < 0 || !p[k].revents)
                                continue;
                        char tmp[4096];
                        ssize_t n = read(fds[k], tmp, sizeof(tmp));
                        if (n <= 0) {
                                close(fds[k]);
                                fds[k] = -1;
                                continue;
                        }
                        if (len[k] + (size_t)n > (1 << 20))
                                continue; /* bounded: the rest is dropped */
                        if (len[k] + (size_t)n + 1 > cap[k]) {
                                cap[k] = (len[k] + (size_t)n + 1) * 2;
                                buf[k] = xrealloc(buf[k], cap[k]);
                        }
                        memcpy(buf[k] + len[k], tmp, (size_t)n);
                        len[k] += (size_t)n;
                        buf[k][len[k]] = '\0';
                }
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        *ret_out = buf[0] ? buf[0] : xstrdup("");
        *ret_err = buf[1] ? buf[1] : xstrdup("");
        return status;
}

/* --- the host and its tiers --- */

json_t *api_host_json(struct api_server *srv)
{
        pthread_mutex_lock(&srv->lock);
        if (!srv->host || time(NULL) - srv->host_at > 30) {
                char *const argv[] = {"cordon", "check", "--json", NULL};
                _cleanup_free_ char *out = NULL, *err = NULL;
                if (run_self(srv->cfg->self_exe, argv, -1, &out, &err) >= 0) {
                        json_error_t jerr;
                        json_t *j = json_loads(out, 0, &jerr);
                        if (json_is_object(j)) {
                                json_decref(srv->host);
                                srv->host = j;
                                srv->host_at = time(NULL);
                        } else
                                json_decref(j);
                }
        }
        json_t *h = json_incref(srv->host);
        pthread_mutex_unlock(&srv->lock);
        return h;
}

/* The tier's layers this host lacks (an array, empty when none). */
static json_t *tier_missing(json_t *host, int tier)
{
        json_t *missing = json_array();
        json_t *layers = json_object_get(host, "layers");
        for (const char *const *l = policy_tiers[tier].layers; *l; l++)
                if (!json_is_true(json_object_get(json_object_get(layers, *l), "available")))
                        json_array_append_new(missing, json_string(*l));
        return missing;
}

static json_t *tier_json(int tier)
{
        json_t *layers = json_array();
        for (const char *const *l = policy_tiers[tier].layers; *l; l++)
                json_array_append_new(layers, json_string(*l));
        return json_pack("{s:s, s:o}", "tier", policy_tiers[tier].name, "layers", layers);
}

enum MHD_Result api_host(struct api_req *r)
{
        json_t *h = api_host_json(r->srv);
        if (!h)
                return api_error(r, 500, "internal", NULL, "`cordon check --json` gave no answer");
        json_t *copy = json_deep_copy(h);
        json_decref(h);
        json_t *tiers = json_array();
        for (int i = 0; i < POLICY_N_TIERS; i++) {
                json_t *t = tier_json(i);
                json_t *missing = tier_missing(copy, i);
                json_object_set_new(t, "available", json_boolean(json_array_size(missing) == 0));
                json_object_set_new(t, "missing", missing);
                json_array_append_new(tiers, t);
        }
        json_object_set_new(copy, "tiers", tiers);
        return api_reply_json(r, 200, copy);
}

enum MHD_Result api_openapi(struct api_req *r)
{
        struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(api_openapi_json), (void *)api_openapi_json,
                                                                    MHD_RESPMEM_PERSISTENT);
        if (resp)
                MHD_add_response_header(resp, "Content-Type", "application/json");
        return api_reply_response(r, 200, resp);
}

/* --- create --- */

/* "body: limits.memoryBytes: expected ..." -> "limits.memoryBytes" */
static char *policy_error_field(const char *err)
{
        const char *s = startswith(err, "body: ") ? err + 6 : err;
        const char *e = strstr(s, ": ");
        if (!e || e == s || memchr(s, ' ', (size_t)(e - s)))
                return NULL;
        return strndup(s, (size_t)(e - s));
}

static const int64_t *admission_max(const struct admission *a, enum limit_kind k)
{
        switch (k) {
        case LIMIT_MEMORY:
                return &a->memory_bytes;
        case LIMIT_CPU:
                return &a->cpu_millis;
        case LIMIT_DISK:
                return &a->disk_bytes;
        case LIMIT_PROCESSES:
                return &a->max_processes;
        case LIMIT_OPEN_FILES:
                return &a->max_open_files;
        case LIMIT_TIMEOUT:
        case _LIMIT_KIND_MAX:
                break;
        }
        return &a->timeout_ms;
}

static enum MHD_Result quota_error(struct api_req *r, const char *limit, json_t *requested, int64_t allowed)
{
        char *req = json_dumps(requested, JSON_ENCODE_ANY);
        json_t *e = json_pack("{s:s, s:o, s:s, s:s, s:o, s:I}", "code", "quota_exceeded", "message",
                              json_sprintf("%s: %s requested, at most %lld allowed (not queued)", limit,
                                           req ? req : "?", (long long)allowed),
                              "field", limit, "limit", limit, "requested", requested, "allowed", (json_int_t)allowed);
        free(req);
        return api_reply_json(r, 429, json_pack("{s:o}", "error", e));
}

/* The sandbox's reply to a create (and to its idempotent repeat). */
static json_t *created_json(const char *id, const char *token, int tier)
{
        json_t *m = NULL;
        json_t *exp = json_null();
        if (sandbox_call(id, json_pack("{s:s}", "op", "inspect"), NULL, 0, NULL, NULL, &m) == 0 &&
            json_is_string(json_object_get(m, "expiresAt")))
                exp = json_incref(json_object_get(m, "expiresAt"));
        json_decref(m);
        return json_pack("{s:s, s:o, s:o, s:o}", "id", id, "token", token ? json_string(token) : json_null(),
                         "isolation", tier_json(tier), "expiresAt", exp);
}

static int tier_of_policy_text(json_t *policy)
{
        int t = policy_tier_find(json_string_value(json_object_get(policy, "requestedIsolation")));
        return t < 0 ? 0 : t;
}

/* A snapshot to restore (fromSnapshot), checked against its digest and
 * held in a file of the API's own directory (root's, 0700) for `cordon
 * sandbox create --from-snapshot`, removed once the create returns. */
struct api_snapshot {
        char path[700];
        char digest[80];
};

static void api_snapshot_done(struct api_snapshot *s)
{
        if (s->path[0])
                (void)unlink(s->path);
        s->path[0] = '\0';
}

static enum MHD_Result take_snapshot(struct api_req *r, json_t *body, struct api_snapshot *ret, bool *ret_bad)
{
        static const char *const keys[] = {"archiveBase64", "digest", NULL};
        json_t *fs = json_object_get(body, "fromSnapshot");
        *ret_bad = true;
        if (!json_is_object(fs))
                return api_error(r, 400, "invalid_field", "fromSnapshot",
                                 "fromSnapshot: expected {\"archiveBase64\": ..., \"digest\": \"sha256:...\"}");
        const char *k;
        json_t *v;
        json_object_foreach(fs, k, v)
        {
                bool known = false;
                for (size_t i = 0; keys[i]; i++)
                        known |= streq(k, keys[i]);
                if (!known)
                        return api_error(r, 400, "unknown_field", "fromSnapshot", "fromSnapshot.%s: unknown field", k);
        }
        json_t *a = json_object_get(fs, "archiveBase64"), *d = json_object_get(fs, "digest");
        const char *digest = json_string_value(d);
        if (!digest || !startswith(digest, "sha256:") || strlen(digest) != 7 + 64)
                return api_error(r, 400, "invalid_field", "fromSnapshot.digest",
                                 "fromSnapshot.digest: expected \"sha256:\" and 64 hex digits (what the snapshot "
                                 "returned in X-Cordon-Digest)");
        _cleanup_free_ uint8_t *data = NULL;
        size_t len = 0;
        if (!json_is_string(a) || api_b64_decode(json_string_value(a), json_string_length(a), &data, &len) < 0)
                return api_error(r, 400, "invalid_field", "fromSnapshot.archiveBase64",
                                 "fromSnapshot.archiveBase64: expected the snapshot's .tar.zst in base64");
        if (len > API_MAX_SNAPSHOT)
                return api_error(r, 413, "too_large", "fromSnapshot.archiveBase64",
                                 "fromSnapshot.archiveBase64: the archive is over the limit of %d bytes",
                                 API_MAX_SNAPSHOT);
        char hex[65];
        if (api_sha256_hex(data, len, hex) < 0)
                return api_error(r, 500, "internal", NULL, "cannot hash the snapshot");
        if (strcmp(digest + 7, hex) != 0)
                return api_error(
                        r, 400, "digest_mismatch", "fromSnapshot.digest",
                        "fromSnapshot.digest: the archive's digest is sha256:%s, not %s; refusing to restore it", hex,
                        digest);
        char dir[600];
        snprintf(dir, sizeof(dir), "%s/api", state_root());
        (void)mkdir(dir, 0700);
        snprintf(ret->path, sizeof(ret->path), "%s/restore-XXXXXX", dir);
        _cleanup_close_ int fd = mkostemp(ret->path, O_CLOEXEC);
        if (fd < 0) {
                ret->path[0] = '\0';
                return api_error(r, 500, "internal", NULL, "cannot hold the snapshot: %m");
        }
        if (write_all(fd, data, len) < 0) {
                api_snapshot_done(ret);
                return api_error(r, 500, "internal", NULL, "cannot hold the snapshot: %m");
        }
        snprintf(ret->digest, sizeof(ret->digest), "%s", digest);
        *ret_bad = false;
        return MHD_YES;
}

static enum MHD_Result create_locked(struct api_req *r, json_t *body, const char *idem_key, int64_t ttl_ms,
                                     const struct api_snapshot *snap)
{
        char api_dir[600];
        snprintf(api_dir, sizeof(api_dir), "%s/api", state_root());
        if (idem_key) {
                char id[32];
                if (api_idem_get(api_dir, idem_key, id, sizeof(id)) == 0 && sandbox_id_valid(id)) {
                        json_t *m = NULL;
                        if (sandbox_call(id, json_pack("{s:s}", "op", "inspect"), NULL, 0, NULL, NULL, &m) == 0 &&
                            !json_object_get(m, "error")) {
                                /* the same sandbox again; its token was
                                 * given once and is kept only as a hash */
                                int tier = tier_of_policy_text(json_object_get(m, "policy"));
                                json_decref(m);
                                json_t *j = created_json(id, NULL, tier);
                                json_object_set_new(j, "idempotentReplay", json_true());
                                return api_reply_json(r, 200, j);
                        }
                        json_decref(m);
                }
        }
        _cleanup_free_ char *text = json_dumps(body, JSON_COMPACT);
        _cleanup_(policy_freep) struct policy *pol = NULL;
        _cleanup_free_ char *err = NULL;
        if (policy_load_buffer(text, strlen(text), "body", &pol, &err) < 0) {
                _cleanup_free_ char *field = policy_error_field(err ? err : "");
                return api_error(r, 400, "invalid_field", field, "%s", err ? err : "invalid policy");
        }
        struct admission adm;
        free(TAKE_PTR(err));
        if (admission_load(r->srv->cfg->admission_path, &adm, &err) < 0)
                return api_error(r, 500, "admission", NULL, "%s", err);

        /* the tier: the one asked for, or the admission file's minimum;
         * granted exactly or refused, never silently another */
        int tier = pol->isolation >= 0 ? pol->isolation : adm.min_isolation >= 0 ? adm.min_isolation : 0;
        if (tier < adm.min_isolation)
                return api_error(r, 422, "isolation_below_minimum", "requestedIsolation",
                                 "this host admits no sandbox below the \"%s\" tier (asked for \"%s\")",
                                 policy_tiers[adm.min_isolation].name, policy_tiers[tier].name);
        const char *risk = policy_high_risk(pol);
        if (risk && adm.high_risk_strongest && tier != POLICY_N_TIERS - 1)
                return api_error(r, 422, "isolation_required", "requestedIsolation",
                                 "a high-risk sandbox (%s) must ask for the \"%s\" tier on this host", risk,
                                 policy_tiers[POLICY_N_TIERS - 1].name);
        json_t *host = api_host_json(r->srv);
        if (!host)
                return api_error(r, 500, "internal", NULL, "cannot tell which layers this host has");
        json_t *missing = tier_missing(host, tier);
        json_decref(host);
        if (json_array_size(missing) > 0) {
                char *m = json_dumps(missing, JSON_COMPACT);
                json_t *e =
                        json_pack("{s:s, s:o, s:s, s:o, s:s}", "code", "isolation_unavailable", "message",
                                  json_sprintf("this host cannot give the \"%s\" tier: missing %s",
                                               policy_tiers[tier].name, m ? m : "?"),
                                  "field", "requestedIsolation", "missing", missing, "tier", policy_tiers[tier].name);
                free(m);
                return api_reply_json(r, 422, json_pack("{s:o}", "error", e));
        }
        json_decref(missing);

        /* quotas: refused at once, naming the limit (never queued, never
         * silently reduced) */
        struct run_limits l;
        run_limits_unset(&l);
        if (ttl_ms > 0) {
                l.timeout_ms = ttl_ms;
                l.src[LIMIT_TIMEOUT] = LIMIT_SRC_FLAG;
        }
        run_limits_merge_policy(&l, pol);
        for (int k = 0; k < _LIMIT_KIND_MAX; k++) {
                int64_t max = *admission_max(&adm, (enum limit_kind)k);
                if (max == POLICY_UNSET)
                        continue;
                if (l.value[k] == POLICY_UNSET && (pol->unlimited & LIMIT_BIT(k)))
                        return quota_error(r, limit_key((enum limit_kind)k), json_string("unlimited"), max);
                if (l.value[k] != POLICY_UNSET && l.value[k] > max)
                        return quota_error(r, limit_key((enum limit_kind)k), json_integer(l.value[k]), max);
        }
        if (adm.max_sandboxes != POLICY_UNSET) {
                json_t *all = NULL;
                (void)sandbox_list_json(&all);
                size_t live = json_array_size(all);
                json_decref(all);
                if ((int64_t)live + 1 > adm.max_sandboxes)
                        return quota_error(r, "maxConcurrentSandboxes", json_integer((json_int_t)live + 1),
                                           adm.max_sandboxes);
        }

        /* the policy as granted (its tier recorded in it), through the
         * command line's own create */
        json_object_set_new(body, "requestedIsolation", json_string(policy_tiers[tier].name));
        free(text);
        text = json_dumps(body, JSON_COMPACT);
        _cleanup_close_ int memfd = memfd_create("cordon-api-policy", MFD_CLOEXEC);
        if (memfd < 0 || write_all(memfd, text, strlen(text)) < 0)
                return api_error(r, 500, "internal", NULL, "cannot hold the policy: %m");
        char ttl[32];
        snprintf(ttl, sizeof(ttl), "%lldms", (long long)ttl_ms);
        const char *argv[20] = {"cordon", "sandbox",  "--root",          state_root(),
                                "create", "--policy", "/proc/self/fd/3", "--json"};
        size_t n = 8;
        if (ttl_ms > 0) {
                argv[n++] = "--ttl";
                argv[n++] = ttl;
        }
        if (r->srv->cfg->admission_path) {
                argv[n++] = "--admission";
                argv[n++] = r->srv->cfg->admission_path;
        }
        if (snap->path[0]) {
                argv[n++] = "--from-snapshot";
                argv[n++] = snap->path;
                argv[n++] = "--digest";
                argv[n++] = snap->digest;
        }
        argv[n] = NULL;
        _cleanup_free_ char *out = NULL, *errtext = NULL;
        int status = run_self(r->srv->cfg->self_exe, (char *const *)argv, memfd, &out, &errtext);
        if (status < 0)
                return api_error(r, 500, "internal", NULL, "cannot run cordon: %s", strerror(-status));
        errtext[strcspn(errtext, "\n")] = '\0';
        const char *msg = startswith(errtext, "cordon: ") ? errtext + 8 : errtext;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                if (code == EXIT_QUOTA)
                        return api_error(r, 429, "quota_exceeded", NULL, "%s", msg);
                if (code == EXIT_USAGE)
                        return api_error(r, 400, "invalid_field", NULL, "%s", msg);
                return api_error(r, 500, "create_failed", NULL, "the sandbox could not be created (exit %d): %s", code,
                                 msg);
        }
        json_error_t jerr;
        json_t *o = json_loads(out, 0, &jerr);
        const char *id = json_string_value(json_object_get(o, "id"));
        if (!id || !sandbox_id_valid(id)) {
                json_decref(o);
                return api_error(r, 500, "create_failed", NULL, "cordon sandbox create said nothing usable");
        }
        char idbuf[17];
        snprintf(idbuf, sizeof(idbuf), "%s", id);
        json_decref(o);
        char token[2 * API_TOKEN_BYTES + 1];
        api_new_token(token);
        int q = api_token_store(idbuf, token);
        if (q < 0) {
                (void)sandbox_terminate(idbuf, NULL);
                explicit_bzero(token, sizeof(token));
                return api_error(r, 500, "internal", NULL, "cannot store the sandbox's token: %s", strerror(-q));
        }
        if (idem_key)
                (void)api_idem_put(api_dir, idem_key, idbuf);
        json_t *j = created_json(idbuf, token, tier);
        explicit_bzero(token, sizeof(token));
        return api_reply_json(r, 201, j);
}

enum MHD_Result api_create(struct api_req *r)
{
        json_t *body = NULL;
        enum MHD_Result q;
        if (api_body_object(r, NULL, &body, &q) < 0)
                return q;
        json_t *k = json_object_get(body, "idempotencyKey"), *t = json_object_get(body, "ttlMs");
        if (k && (!json_is_string(k) || json_string_length(k) == 0 || json_string_length(k) > 256)) {
                json_decref(body);
                return api_error(r, 400, "invalid_field", "idempotencyKey",
                                 "idempotencyKey: expected a string of 1 to 256 characters");
        }
        if (t && (!json_is_integer(t) || json_integer_value(t) <= 0)) {
                json_decref(body);
                return api_error(r, 400, "invalid_field", "ttlMs", "ttlMs: expected a positive integer (milliseconds)");
        }
        /* as --ttl: a sandbox lives at most 30 days */
        if (t && json_integer_value(t) > 30LL * 86400000) {
                long long asked = (long long)json_integer_value(t); /* t is the body's */
                json_decref(body);
                return api_error(r, 400, "invalid_field", "ttlMs",
                                 "ttlMs: %lld is over the longest a sandbox lives, 30 days (2592000000)", asked);
        }
        _cleanup_free_ char *key = k ? xstrdup(json_string_value(k)) : NULL;
        int64_t ttl = t ? json_integer_value(t) : 0;
        struct api_snapshot snap = {0};
        if (json_object_get(body, "fromSnapshot")) {
                bool bad;
                q = take_snapshot(r, body, &snap, &bad);
                if (bad) {
                        json_decref(body);
                        return q;
                }
                json_object_del(body, "fromSnapshot");
        }
        json_object_del(body, "idempotencyKey");
        json_object_del(body, "ttlMs");
        /* one create at a time per key: the second waits and finds the first's */
        if (key)
                pthread_mutex_lock(&r->srv->idem_lock);
        q = create_locked(r, body, key, ttl, &snap);
        if (key)
                pthread_mutex_unlock(&r->srv->idem_lock);
        api_snapshot_done(&snap);
        json_decref(body);
        return q;
}

/* --- list, inspect, terminate, pause, resume --- */

enum MHD_Result api_list(struct api_req *r)
{
        json_t *all = NULL;
        (void)sandbox_list_json(&all);
        if (r->auth == AUTH_SANDBOX) {
                /* a sandbox's token sees its own sandbox and nothing else */
                json_t *own = json_array();
                size_t i;
                json_t *m;
                json_array_foreach(all, i, m)
                {
                        if (api_token_matches(json_string_value(json_object_get(m, "id")), r->token_hash))
                                json_array_append(own, m);
                }
                json_decref(all);
                all = own;
        }
        return api_reply_json(r, 200, json_pack("{s:o}", "sandboxes", all));
}

/* One request to sandbox id, its error reply made an HTTP error: 0 with
 * *ret, or the queued error in *ret_q. */
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

enum MHD_Result api_inspect(struct api_req *r)
{
        json_t *m = NULL;
        enum MHD_Result q;
        if (call(r, json_pack("{s:s}", "op", "inspect"), &m, &q) < 0)
                return q;
        /* the tier granted at create, with the layers it guarantees, beside
         * the layers the sandbox's own sentry reports */
        json_object_set_new(m, "tier", tier_json(tier_of_policy_text(json_object_get(m, "policy"))));
        return api_reply_json(r, 200, m);
}

enum MHD_Result api_terminate(struct api_req *r)
{
        _cleanup_free_ char *err = NULL;
        int t = sandbox_terminate(r->params[0], &err);
        if (t == 0)
                return api_reply_json(r, 200, json_pack("{s:s, s:b}", "id", r->params[0], "terminated", 1));
        if (t == -ENOENT || t == -EINVAL)
                return api_error(r, 404, "not_found", NULL, "no sandbox %s", r->params[0]);
        if (t == -EBUSY)
                return api_error(r, 409, "conflict", NULL, "%s", err ? err : "the sandbox refused");
        return api_error(r, 503, "unavailable", NULL, "sandbox %s: %s", r->params[0],
                         t == -ETIMEDOUT ? "did not finish terminating within 30 s" : strerror(-t));
}

static enum MHD_Result simple_op(struct api_req *r, const char *op)
{
        json_t *rep = NULL;
        enum MHD_Result q;
        if (r->body_len && api_body_object(r, (const char *const[]){NULL}, &rep, &q) < 0)
                return q;
        json_decref(rep);
        if (call(r, json_pack("{s:s}", "op", op), &rep, &q) < 0)
                return q;
        json_t *j = json_pack("{s:s, s:O}", "id", r->params[0], "status", json_object_get(rep, "status"));
        json_decref(rep);
        return api_reply_json(r, 200, j);
}

enum MHD_Result api_pause(struct api_req *r)
{
        return simple_op(r, "pause");
}

enum MHD_Result api_resume(struct api_req *r)
{
        return simple_op(r, "resume");
}

/* --- approvals --- */

enum MHD_Result api_approvals(struct api_req *r)
{
        json_t *rep = NULL;
        enum MHD_Result q;
        if (call(r, json_pack("{s:s}", "op", "pending"), &rep, &q) < 0)
                return q;
        json_t *j = json_pack("{s:O}", "approvals", json_object_get(rep, "pending"));
        json_decref(rep);
        return api_reply_json(r, 200, j);
}

/* Who is asking, for the record of a decision: the sentry sees only this
 * server on its control socket, so the server says whom it relays. */
static void api_caller(struct api_req *r, char *buf, size_t size)
{
        int fd = api_conn_fd(r);
        struct ucred cred;
        socklen_t l = sizeof(cred);
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        char addr[INET6_ADDRSTRLEN] = "?";
        if (fd >= 0 && getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_UNIX &&
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &l) == 0) {
                snprintf(buf, size, "the API: uid %u pid %d", (unsigned)cred.uid, (int)cred.pid);
                return;
        }
        sl = sizeof(ss);
        if (fd >= 0 && getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
                if (ss.ss_family == AF_INET)
                        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, sizeof(addr));
                else if (ss.ss_family == AF_INET6)
                        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr, sizeof(addr));
        }
        snprintf(buf, size, "the API: %s token from %s", r->auth == AUTH_ADMIN ? "the admin" : "the sandbox's", addr);
}

static enum MHD_Result decide(struct api_req *r, bool approve)
{
        static const char *const approve_keys[] = {"remember", NULL}, *const deny_keys[] = {NULL};
        json_t *body = NULL, *rep = NULL;
        enum MHD_Result q;
        if (api_body_object(r, approve ? approve_keys : deny_keys, &body, &q) < 0)
                return q;
        json_t *rem = json_object_get(body, "remember");
        if (rem && !json_is_boolean(rem)) {
                json_decref(body);
                return api_error(r, 400, "invalid_field", "remember", "remember: expected true or false");
        }
        bool remember = json_is_true(rem);
        json_decref(body);
        char via[128];
        api_caller(r, via, sizeof(via));
        if (call(r,
                 json_pack("{s:s, s:s, s:b, s:s}", "op", approve ? "approve" : "deny", "request", r->params[1],
                           "remember", remember, "via", via),
                 &rep, &q) < 0)
                return q;
        json_object_del(rep, "ok");
        return api_reply_json(r, 200, rep);
}

enum MHD_Result api_approve(struct api_req *r)
{
        /* Approval exists so that the operator, not whoever drives the
         * sandbox, decides: a sandbox's token is held by that party (the
         * tenant, or the untrusted agent itself), so with it an approval
         * would be the sandbox granting itself what its policy withheld.
         * Only the admin token, or a unix peer the server trusts as admin,
         * approves. A sandbox's token may still list and deny: a denial
         * only narrows what the sandbox gets. dispatch has already checked
         * the token is this sandbox's (another's is 404 before this), so
         * the 403 tells nothing about sandboxes it cannot see. */
        if (r->auth != AUTH_ADMIN)
                return api_error(r, 403, "forbidden", NULL,
                                 "approving is the operator's decision: it needs the admin token (or the unix "
                                 "socket); a sandbox's own token may list and deny its requests, never approve them");
        return decide(r, true);
}

enum MHD_Result api_deny(struct api_req *r)
{
        return decide(r, false);
}
