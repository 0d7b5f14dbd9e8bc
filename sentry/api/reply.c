/* What every handler of the API replies with: JSON bodies, the one error
 * shape {"error": {"code", "message", "field"}} with its status (and a
 * sandbox sentry's error reply mapped to one), the query, the connection's
 * socket, and a request body parsed as a JSON object whose keys are checked. */
#include "config.h"

#include <stdarg.h>

#include "sentry/api/api-internal.h"

/* --- replies --- */

json_t *api_text(const char *s, size_t n)
{
        json_t *j = json_stringn(s, n);
        if (j)
                return j;
        char *t = xmalloc(n + 1);
        for (size_t i = 0; i < n; i++)
                t[i] = (unsigned char)s[i] < 0x80 && s[i] ? s[i] : '?';
        j = json_stringn(t, n);
        free(t);
        return j ? j : json_string("");
}

enum MHD_Result api_reply_response(struct api_req *r, unsigned status, struct MHD_Response *resp)
{
        if (!resp)
                return MHD_NO;
        r->status = (int)status;
        enum MHD_Result q = MHD_queue_response(r->conn, status, resp);
        MHD_destroy_response(resp);
        return q;
}

enum MHD_Result api_reply_json(struct api_req *r, unsigned status, json_t *body)
{
        char *text = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
        json_decref(body);
        if (!text)
                return MHD_NO;
        size_t len = strlen(text);
        text = xrealloc(text, len + 2);
        text[len++] = '\n';
        struct MHD_Response *resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
        if (!resp) {
                free(text);
                return MHD_NO;
        }
        MHD_add_response_header(resp, "Content-Type", "application/json");
        return api_reply_response(r, status, resp);
}

static enum MHD_Result api_errorv(struct api_req *r, unsigned status, const char *code, const char *field,
                                  const char *fmt, va_list ap) _printf_(5, 0);
static enum MHD_Result api_errorv(struct api_req *r, unsigned status, const char *code, const char *field,
                                  const char *fmt, va_list ap)
{
        char msg[1024];
        vsnprintf(msg, sizeof(msg), fmt, ap);
        json_t *e = json_pack("{s:s, s:o, s:o}", "code", code, "message", api_text(msg, strlen(msg)), "field",
                              field ? api_text(field, strlen(field)) : json_null());
        return api_reply_json(r, status, json_pack("{s:o}", "error", e));
}

enum MHD_Result api_error(struct api_req *r, unsigned status, const char *code, const char *field, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        enum MHD_Result q = api_errorv(r, status, code, field, fmt, ap);
        va_end(ap);
        return q;
}

enum MHD_Result api_sandbox_error(struct api_req *r, const char *id, int call_r, json_t *rep)
{
        if (call_r == -EINVAL || call_r == -ENOENT)
                return api_error(r, 404, "not_found", NULL, "no sandbox %s", id);
        if (call_r < 0)
                return api_error(r, 503, "unavailable", NULL, "sandbox %s does not answer (%s)", id, strerror(-call_r));
        const char *msg = json_string_value(json_object_get(rep, "error"));
        const char *code = json_string_value(json_object_get(rep, "code"));
        unsigned status = 400;
        if (code && streq(code, SANDBOX_ERR_CONFLICT))
                status = 409;
        else if (code && streq(code, SANDBOX_ERR_NOT_FOUND))
                status = 404;
        else if (code && streq(code, SANDBOX_ERR_QUOTA))
                status = 429;
        else if (code && streq(code, SANDBOX_ERR_DENIED))
                status = 403;
        else if (code && streq(code, SANDBOX_ERR_NO_SPACE))
                status = 507;
        else if (code && streq(code, SANDBOX_ERR_SHORT))
                status = 400;
        else
                code = "rejected";
        return api_error(r, status, code, NULL, "%s", msg ? msg : "the sandbox refused the request");
}

const char *api_query(struct api_req *r, const char *key)
{
        return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

int api_conn_fd(struct api_req *r)
{
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        return ci ? ci->connect_fd : -1;
}

int api_body_object(struct api_req *r, const char *const *allowed, json_t **ret, enum MHD_Result *ret_result)
{
        json_error_t jerr;
        json_t *j = r->body_len ? json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &jerr) : json_object();
        if (!j) {
                /* a key given twice is named as the field: which of its
                 * values counts is what a client (or a proxy) and cordon
                 * could read otherwise */
                char key[256] = "";
                const char *near = strstr(jerr.text, "near '\"");
                if (json_error_code(&jerr) == json_error_duplicate_key && near &&
                    sscanf(near, "near '\"%255[^\"]\"'", key) != 1)
                        key[0] = '\0';
                *ret_result = api_error(r, 400, "invalid_json", key[0] ? key : NULL, "the body is not JSON: %d:%d: %s",
                                        jerr.line, jerr.column, jerr.text);
                return -EINVAL;
        }
        if (!json_is_object(j)) {
                json_decref(j);
                *ret_result = api_error(r, 400, "invalid_json", NULL, "the body must be a JSON object");
                return -EINVAL;
        }
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v)
        {
                bool ok = !allowed;
                for (const char *const *a = allowed; a && *a; a++)
                        ok = ok || streq(*a, k);
                if (!ok) {
                        *ret_result = api_error(r, 400, "unknown_field", k, "%s: unknown field", k);
                        json_decref(j);
                        return -EINVAL;
                }
        }
        *ret = j;
        return 0;
}
