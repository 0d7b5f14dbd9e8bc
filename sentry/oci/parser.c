/* The OCI config parser's plumbing (sentry/oci/oci-internal.h): the JSON
 * path each error names, the first error kept with its origin, and one
 * reader per kind of value (object, array, string, name from a table,
 * boolean, integer, path, list of strings), each refusing a wrong type or
 * value by name. The bottom of the parser half: config.c, linux.c and
 * seccomp.c call it, and it calls none of them. */
#include "config.h"

#include <jansson.h>
#include <stdarg.h>

#include "common/docparse.h"
#include "common/util.h"
#include "sentry/oci/oci-internal.h"
#include "sentry/oci/oci.h"

/* Records the first error, prefixed with the origin and the JSON path. */
int oci_fail(struct oci_parser *p, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = doc_vfail(&p->error, p->origin, &p->path, fmt, ap);
        va_end(ap);
        return r;
}

/* A string oci_spec_parse() made of an integer above INT64_MAX. */
static const char *wide_digits(const json_t *v)
{
        size_t n = strlen(OCI_U64_MARK), len;
        const char *d;

        if (!json_is_string(v) || json_string_length(v) <= n || memcmp(json_string_value(v), OCI_U64_MARK, n) != 0)
                return NULL;
        /* only what widen_u64() writes: 19 or 20 digits, at most UINT64_MAX */
        d = json_string_value(v) + n;
        len = json_string_length(v) - n;
        if ((len != 19 && len != 20) || strspn(d, "0123456789") != len ||
            (len == 20 && memcmp(d, "18446744073709551615", 20) > 0))
                return NULL;
        return d;
}

const char *oci_json_kind(const json_t *v)
{
        if (wide_digits(v))
                return "an integer";
        return doc_json_kind(v);
}

/* A member, with JSON null read as absent: Go, in which runc and the
 * engines are written, reads null into the zero value. */
json_t *oci_member(json_t *obj, const char *key)
{
        json_t *v = json_object_get(obj, key);
        return json_is_null(v) ? NULL : v;
}

int oci_check_object(struct oci_parser *p, json_t *v)
{
        if (!json_is_object(v))
                return oci_fail(p, "expected an object, got %s", oci_json_kind(v));
        return 0;
}

int oci_check_array(struct oci_parser *p, json_t *v, size_t *ret_n)
{
        size_t n;

        if (!json_is_array(v))
                return oci_fail(p, "expected an array, got %s", oci_json_kind(v));
        n = json_array_size(v);
        if (n > OCI_MAX_ENTRIES)
                return oci_fail(p, "too many entries (%zu, the limit is %d)", n, OCI_MAX_ENTRIES);
        *ret_n = n;
        return 0;
}

int oci_each(struct oci_parser *p, json_t *v, size_t item_size, void *ret_items, size_t *ret_n, oci_item_fn fn,
             void *ctx)
{
        void **items = ret_items;
        size_t n;
        int r = oci_check_array(p, v, &n);
        if (r < 0)
                return r;
        if (items)
                *items = xcalloc(n, item_size);
        for (size_t i = 0; i < n; i++) {
                size_t saved = doc_path_push_index(&p->path, i);
                /* counted before it is filled: the free functions then see
                 * a half-parsed item too */
                if (ret_n)
                        *ret_n = i + 1;
                r = fn(p, json_array_get(v, i), i, items ? (char *)*items + i * item_size : NULL, ctx);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }
        return 0;
}

int oci_each_member(struct oci_parser *p, json_t *v, oci_member_fn fn, void *ctx)
{
        const char *key;
        json_t *value;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if (json_object_size(v) > OCI_MAX_ENTRIES)
                return oci_fail(p, "too many entries (%zu, the limit is %d)", json_object_size(v), OCI_MAX_ENTRIES);
        json_object_foreach(v, key, value)
        {
                size_t saved = doc_path_push_key(&p->path, key);
                r = fn(p, key, value, ctx);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A string without an embedded NUL (the document is loaded with
 * JSON_ALLOW_NUL so that "\u0000" gets a message naming its key; every
 * string read passes here, so no consumer sees a value cut short). */
int oci_get_string(struct oci_parser *p, json_t *v, const char **ret)
{
        size_t len;

        if (!json_is_string(v) || wide_digits(v))
                return oci_fail(p, "expected a string, got %s", oci_json_kind(v));
        len = json_string_length(v);
        if (strlen(json_string_value(v)) != len)
                return oci_fail(p, "contains a NUL byte");
        if (len > OCI_STRING_MAX)
                return oci_fail(p, "too long (%zu bytes, the limit is %d)", len, OCI_STRING_MAX);
        *ret = json_string_value(v);
        return 0;
}

int oci_dup_string(struct oci_parser *p, json_t *v, char **ret)
{
        const char *s;
        int r = oci_get_string(p, v, &s);
        if (r < 0)
                return r;
        free(*ret);
        *ret = xstrdup(s);
        return 0;
}

int oci_get_name(struct oci_parser *p, json_t *v, const struct oci_name *table, size_t n, const char *what,
                 int64_t *ret)
{
        char q[DOC_QUOTE_MAX];
        const char *s;
        int r = oci_get_string(p, v, &s);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (streq(table[i].name, s)) {
                        *ret = table[i].value;
                        return 0;
                }
        return oci_fail(p, "unknown %s %s", what, doc_quote(q, s, strlen(s)));
}

int oci_get_bool(struct oci_parser *p, json_t *v, bool *ret)
{
        if (!json_is_boolean(v))
                return oci_fail(p, "expected a boolean, got %s", oci_json_kind(v));
        *ret = json_is_true(v);
        return 0;
}

int oci_get_int(struct oci_parser *p, json_t *v, int64_t min, int64_t max, int64_t *ret)
{
        json_int_t i;

        if (wide_digits(v))
                return oci_fail(p, "must be between %" PRId64 " and %" PRId64 ", got %s", min, max, wide_digits(v));
        if (!json_is_integer(v))
                return oci_fail(p, "expected an integer, got %s", oci_json_kind(v));
        i = json_integer_value(v);
        if (i < min || i > max)
                return oci_fail(p, "must be between %" PRId64 " and %" PRId64 ", got %lld", min, max, (long long)i);
        *ret = (int64_t)i;
        return 0;
}

/* An unsigned 64-bit value. jansson holds integers as long long, so values
 * above INT64_MAX (RLIM_INFINITY, a seccomp mask with the top bit) reach
 * here as the strings oci_spec_parse() rewrote them to (see widen_u64). */
int oci_get_u64(struct oci_parser *p, json_t *v, uint64_t *ret)
{
        const char *digits = wide_digits(v);
        if (digits) {
                /* widen_u64() let through only 19-20 digits up to UINT64_MAX */
                *ret = strtoull(digits, NULL, 10);
                return 0;
        }
        if (!json_is_integer(v))
                return oci_fail(p, "expected an unsigned integer, got %s", oci_json_kind(v));
        if (json_integer_value(v) < 0)
                return oci_fail(p, "expected an unsigned integer, got %lld", (long long)json_integer_value(v));
        *ret = (uint64_t)json_integer_value(v);
        return 0;
}

int oci_get_u32(struct oci_parser *p, json_t *v, uint32_t *ret)
{
        if (wide_digits(v))
                return oci_fail(p, "expected an unsigned 32-bit integer, got %s", wide_digits(v));
        if (!json_is_integer(v))
                return oci_fail(p, "expected an unsigned integer, got %s", oci_json_kind(v));
        if (json_integer_value(v) < 0 || json_integer_value(v) > UINT32_MAX)
                return oci_fail(p, "expected an unsigned 32-bit integer, got %lld", (long long)json_integer_value(v));
        *ret = (uint32_t)json_integer_value(v);
        return 0;
}

/* Absolute, normalised: repeated slashes collapse, "." components and a
 * trailing slash go. ".." is refused rather than resolved on the string,
 * which could disagree with what the kernel resolves through a symlink. */
int oci_normalise_path(struct oci_parser *p, const char *s, char **ret)
{
        char q[DOC_QUOTE_MAX];
        enum doc_path_error why;
        size_t len = strlen(s);

        if (len >= OCI_PATH_MAX && len > 0)
                return oci_fail(p, "path too long (%zu bytes, the limit is %d)", len, OCI_PATH_MAX - 1);
        if (doc_normalise_abs_path(s, ret, &why) < 0)
                return why == DOC_PATH_EMPTY ? oci_fail(p, "expected an absolute path, got an empty string")
                       : why == DOC_PATH_DOTDOT
                               ? oci_fail(p, "\"..\" components are not allowed, got %s", doc_quote(q, s, len))
                               : oci_fail(p, "expected an absolute path, got %s", doc_quote(q, s, len));
        return 0;
}

int oci_get_abs_path(struct oci_parser *p, json_t *v, char **ret)
{
        const char *s;
        char *out = NULL;
        int r = oci_get_string(p, v, &s);
        if (r < 0)
                return r;
        r = oci_normalise_path(p, s, &out);
        if (r < 0)
                return r;
        free(*ret);
        *ret = out;
        return 0;
}

/* An array of strings, each passed to check (may be NULL) with the path at
 * its index. */
int oci_get_strv(struct oci_parser *p, json_t *v, int (*check)(struct oci_parser *p, const char *s), char ***ret)
{
        char **out;
        size_t n;
        int r;

        r = oci_check_array(p, v, &n);
        if (r < 0)
                return r;
        out = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++) {
                size_t saved = doc_path_push_index(&p->path, i);
                const char *s;

                r = oci_get_string(p, json_array_get(v, i), &s);
                if (r >= 0 && check)
                        r = check(p, s);
                doc_path_pop(&p->path, saved);
                if (r < 0) {
                        strv_free(out);
                        return r;
                }
                out[i] = xstrdup(s);
        }
        strv_free(*ret);
        *ret = out;
        return 0;
}

int oci_fail_at(struct oci_parser *p, const char *key, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        size_t saved = doc_path_push_key(&p->path, key);
        va_list ap;
        int r;

        va_start(ap, fmt);
        msg = xvasprintf(fmt, ap);
        va_end(ap);
        r = oci_fail(p, "%s", msg);
        doc_path_pop(&p->path, saved);
        return r;
}

/* Refuses obj[key] unless absent, null, false, 0, "" or an empty array or
 * object: the way Go writes "not set" for every kind of field. */
bool oci_is_unset(json_t *v)
{
        if (!v || json_is_null(v) || json_is_false(v))
                return true;
        if (json_is_integer(v))
                return json_integer_value(v) == 0;
        if (json_is_string(v))
                return json_string_length(v) == 0;
        if (json_is_array(v))
                return json_array_size(v) == 0;
        if (json_is_object(v))
                return json_object_size(v) == 0;
        return false;
}

int oci_refuse_set(struct oci_parser *p, json_t *obj, const char *key, const char *why)
{
        if (oci_is_unset(json_object_get(obj, key)))
                return 0;
        return oci_fail_at(p, key, "not supported by cordon: %s", why);
}
