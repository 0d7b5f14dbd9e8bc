/* The strict document parsers' shared bookkeeping (common/docparse.h):
 * quoting, the JSON path, the first error, kind names, absolute paths. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/docparse.h"

char *doc_printable(const char *s)
{
        if (!s)
                return xstrdup("");
        size_t n = strlen(s);
        char *out = xmalloc(4 * n + 1), *o = out;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                unsigned char next = i + 1 < n ? (unsigned char)s[i + 1] : 0;
                if (c < 0x20 || c == 0x7f)
                        o += sprintf(o, "\\x%02x", c);
                else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) /* C1, as UTF-8 */
                        o += sprintf(o, "\\xc2\\x%02x", s[++i] & 0xff);
                else
                        *o++ = (char)c;
        }
        *o = '\0';
        return out;
}

const char *doc_quote(char buf[static DOC_QUOTE_MAX], const char *s, size_t len)
{
        size_t o = 0;

        buf[o++] = '"';
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                char esc[8];
                size_t n;

                if (c == '"' || c == '\\')
                        n = (size_t)snprintf(esc, sizeof(esc), "\\%c", c);
                else if (c < 0x20 || c >= 0x7f)
                        n = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", c);
                else
                        n = (size_t)snprintf(esc, sizeof(esc), "%c", c);

                /* keep room for `..."` and the NUL */
                if (o + n + 5 > DOC_QUOTE_MAX) {
                        memcpy(buf + o, "...", 3);
                        o += 3;
                        break;
                }
                memcpy(buf + o, esc, n);
                o += n;
        }
        buf[o++] = '"';
        buf[o] = '\0';
        return buf;
}

bool doc_key_is_identifier(const char *s)
{
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
                return false;
        for (s++; *s; s++)
                if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
                        return false;
        return true;
}

_printf_(2, 3) static size_t path_push(struct doc_path *p, const char *fmt, ...)
{
        size_t saved = p->len, room = sizeof(p->text) - p->len;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(p->text + p->len, room, fmt, ap);
        va_end(ap);
        if (n < 0)
                n = 0;
        if ((size_t)n >= room) {
                /* Cut short and say so; only an unknown key's name can be this long. */
                p->len = sizeof(p->text) - 1;
                memcpy(p->text + p->len - 3, "...", 3);
        } else
                p->len += (size_t)n;
        return saved;
}

size_t doc_path_push_key(struct doc_path *p, const char *key)
{
        char q[DOC_QUOTE_MAX];

        if (doc_key_is_identifier(key))
                return path_push(p, "%s%s", p->len > 0 ? "." : "", key);
        return path_push(p, "[%s]", doc_quote(q, key, strlen(key)));
}

size_t doc_path_push_index(struct doc_path *p, size_t i)
{
        return path_push(p, "[%zu]", i);
}

void doc_path_pop(struct doc_path *p, size_t saved)
{
        p->len = saved;
        p->text[saved] = '\0';
}

int doc_vfail(char **error, const char *origin, const struct doc_path *p, const char *fmt, va_list ap)
{
        if (*error)
                return -EINVAL;
        _cleanup_free_ char *msg = xvasprintf(fmt, ap);
        if (p->len > 0)
                *error = xasprintf("%s: %s: %s", origin, p->text, msg);
        else
                *error = xasprintf("%s: %s", origin, msg);
        return -EINVAL;
}

const char *doc_json_kind(const json_t *v)
{
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return "an object";
        case JSON_ARRAY:
                return "an array";
        case JSON_STRING:
                return "a string";
        case JSON_INTEGER:
                return "an integer";
        case JSON_REAL:
                return "a real number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "a boolean";
        case JSON_NULL:
                return "null";
        }
        return "an unknown value";
}

int doc_normalise_abs_path(const char *s, char **ret, enum doc_path_error *ret_why)
{
        _cleanup_free_ char *out = NULL;
        size_t len = strlen(s), o = 0;

        if (len == 0) {
                *ret_why = DOC_PATH_EMPTY;
                return -EINVAL;
        }
        if (s[0] != '/') {
                *ret_why = DOC_PATH_RELATIVE;
                return -EINVAL;
        }
        out = xmalloc(len + 1);
        for (const char *c = s; *c;) {
                size_t n;

                while (*c == '/')
                        c++;
                if (!*c)
                        break;
                n = strcspn(c, "/");
                if (n == 2 && c[0] == '.' && c[1] == '.') {
                        *ret_why = DOC_PATH_DOTDOT;
                        return -EINVAL;
                }
                if (!(n == 1 && c[0] == '.')) {
                        out[o++] = '/';
                        memcpy(out + o, c, n);
                        o += n;
                }
                c += n;
        }
        if (o == 0)
                out[o++] = '/';
        out[o] = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}
