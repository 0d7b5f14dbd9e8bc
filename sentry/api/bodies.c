/* The request bodies of the API, checked without any HTTP around them (so
 * that tests/fuzz/fuzz-api.c can drive them): an exec or run body made the
 * control protocol's exec request, a file write's body, strict base64, and
 * which paths in a sandbox are acceptable. Each refusal names its field. */
#include "config.h"

#include <stdarg.h>

#include "sentry/api/api-internal.h"

static int bad_field(struct api_bad *bad, const char *field, const char *fmt, ...) _printf_(3, 4);
static int bad_field(struct api_bad *bad, const char *field, const char *fmt, ...)
{
        va_list ap;
        snprintf(bad->field, sizeof(bad->field), "%s", field);
        va_start(ap, fmt);
        vsnprintf(bad->message, sizeof(bad->message), fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* A JSON string without NUL bytes (which C strings would cut short). */
static bool plain_string(json_t *v)
{
        return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v);
}

static int b64_value(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

int api_b64_decode(const char *s, size_t n, uint8_t **ret, size_t *ret_len)
{
        size_t pad = 0;
        while (n > 0 && s[n - 1] == '=' && pad < 2) {
                n--;
                pad++;
        }
        if (n % 4 == 1 || (pad && (n + pad) % 4 != 0))
                return -EINVAL;
        uint8_t *out = xmalloc(n / 4 * 3 + 3);
        size_t o = 0;
        uint32_t acc = 0;
        int bits = 0;
        for (size_t i = 0; i < n; i++) {
                int v = b64_value((unsigned char)s[i]);
                if (v < 0) {
                        free(out);
                        return -EINVAL;
                }
                acc = (acc << 6) | (uint32_t)v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        out[o++] = (uint8_t)(acc >> bits);
                }
        }
        *ret = out;
        *ret_len = o;
        return 0;
}

json_t *api_b64_json(const void *data, size_t len)
{
        static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const uint8_t *in = data;
        size_t n = (len + 2) / 3 * 4;
        char *out = xmalloc(n + 1), *o = out;
        for (size_t i = 0; i < len; i += 3) {
                uint32_t v = (uint32_t)in[i] << 16;
                if (i + 1 < len)
                        v |= (uint32_t)in[i + 1] << 8;
                if (i + 2 < len)
                        v |= in[i + 2];
                *o++ = alphabet[v >> 18 & 63];
                *o++ = alphabet[v >> 12 & 63];
                *o++ = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
                *o++ = i + 2 < len ? alphabet[v & 63] : '=';
        }
        json_t *j = json_stringn(out, n);
        free(out);
        return j;
}

bool api_path_ok(const char *p)
{
        return p && p[0] == '/' && strlen(p) < 4096;
}

json_t *api_exec_request(json_t *body, bool detach, struct api_bad *bad)
{
        json_t *argv = json_object_get(body, "argv"), *env = json_object_get(body, "env"),
               *cwd = json_object_get(body, "cwd"), *tmo = json_object_get(body, "timeoutMs"), *v;
        size_t i;
        if (!json_is_array(argv) || json_array_size(argv) == 0 || json_array_size(argv) > 4096) {
                bad_field(bad, "argv", "argv: expected a non-empty array of strings");
                return NULL;
        }
        json_array_foreach(argv, i, v)
        {
                if (!plain_string(v)) {
                        char f[32];
                        snprintf(f, sizeof(f), "argv[%zu]", i);
                        bad_field(bad, f, "%s: expected a string without NUL bytes", f);
                        return NULL;
                }
        }
        if (env && !json_is_object(env)) {
                bad_field(bad, "env", "env: expected an object of strings");
                return NULL;
        }
        json_t *envs = json_array();
        const char *k;
        json_object_foreach(env, k, v)
        {
                if (!plain_string(v) || !k[0] || strchr(k, '=')) {
                        char f[300];
                        snprintf(f, sizeof(f), "env.%.256s", k);
                        json_decref(envs);
                        bad_field(bad, f, "%s: expected a string without NUL bytes (and a name without '=')", f);
                        return NULL;
                }
                json_array_append_new(envs, json_sprintf("%s=%s", k, json_string_value(v)));
        }
        if (cwd && (!plain_string(cwd) || !api_path_ok(json_string_value(cwd)))) {
                json_decref(envs);
                bad_field(bad, "cwd", "cwd: expected an absolute path in the sandbox");
                return NULL;
        }
        if (tmo && (!json_is_integer(tmo) || json_integer_value(tmo) <= 0)) {
                json_decref(envs);
                bad_field(bad, "timeoutMs", "timeoutMs: expected a positive integer");
                return NULL;
        }
        json_t *req = json_pack("{s:s, s:O, s:o, s:b, s:I}", "op", "exec", "argv", argv, "env", envs, "detach", detach,
                                "timeoutMs", tmo ? json_integer_value(tmo) : (json_int_t)0);
        if (cwd)
                json_object_set(req, "cwd", cwd);
        return req;
}

int api_file_body(json_t *body, struct api_file *ret, struct api_bad *bad)
{
        json_t *p = json_object_get(body, "path"), *c = json_object_get(body, "contentBase64"),
               *m = json_object_get(body, "mode");
        *ret = (struct api_file){.mode = 0644};
        if (!plain_string(p) || !api_path_ok(json_string_value(p)))
                return bad_field(bad, "path", "path: expected an absolute path in the sandbox");
        if (!json_is_string(c) ||
            api_b64_decode(json_string_value(c), json_string_length(c), &ret->data, &ret->len) < 0)
                return bad_field(bad, "contentBase64", "contentBase64: expected base64");
        if (m && (!json_is_integer(m) || json_integer_value(m) < 0 || json_integer_value(m) > 0777)) {
                free(TAKE_PTR(ret->data));
                return bad_field(bad, "mode", "mode: expected a file mode from 0 to 0777");
        }
        ret->path = json_string_value(p);
        if (m)
                ret->mode = (int)json_integer_value(m);
        return 0;
}
