/* The policy's strict reader (DESIGN.md, "The policy"): the parser's first
 * error with its JSON path, walking an object against its table of keys,
 * and the readers of values more than one section takes (strings, enums,
 * arrays, absolute paths, host names, the port, reasons, timestamps). */
#include "config.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include "common/util.h"
#include "sentry/policy/policy-internal.h"

/* Records the first error, prefixed with the origin and the current JSON path. */
int fail(struct parser *p, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = doc_vfail(&p->error, p->origin, &p->path, fmt, ap);
        va_end(ap);
        return r;
}

/* A string without embedded NUL (the document is loaded with JSON_ALLOW_NUL so that "\u0000"
 * gets a message naming its key rather than a bare syntax error; every string read passes here
 * so no C consumer ever sees a value cut short at the NUL). */
int parse_string(struct parser *p, json_t *v, size_t max, const char **ret)
{
        size_t len;

        if (!json_is_string(v))
                return fail(p, "expected a string, got %s", doc_json_kind(v));
        len = json_string_length(v);
        if (strlen(json_string_value(v)) != len)
                return fail(p, "contains a NUL byte");
        if (len > max)
                return fail(p, "too long (%zu bytes, the limit is %zu)", len, max);
        *ret = json_string_value(v);
        return 0;
}

/* Matches a string against names; the message lists them as a person would write them. */
int parse_enum(struct parser *p, json_t *v, const char *const *names, size_t n, size_t *ret)
{
        char expected[256] = "", q[DOC_QUOTE_MAX];
        size_t o = 0;

        for (size_t i = 0; i < n; i++) {
                const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
                o += (size_t)snprintf(expected + o, sizeof(expected) - o, "%s\"%s\"", sep, names[i]);
                if (o >= sizeof(expected))
                        break;
        }

        if (!json_is_string(v))
                return fail(p, "expected %s, got %s", expected, doc_json_kind(v));
        for (size_t i = 0; i < n; i++)
                if (strlen(names[i]) == json_string_length(v) && streq(names[i], json_string_value(v))) {
                        *ret = i;
                        return 0;
                }
        return fail(p, "expected %s, got %s", expected, doc_quote(q, json_string_value(v), json_string_length(v)));
}

int check_array(struct parser *p, json_t *v, size_t *ret_n)
{
        size_t n;

        if (!json_is_array(v))
                return fail(p, "expected an array, got %s", doc_json_kind(v));
        n = json_array_size(v);
        if (n > POLICY_MAX_ENTRIES)
                return fail(p, "too many entries (%zu, the limit is %d)", n, POLICY_MAX_ENTRIES);
        *ret_n = n;
        return 0;
}

/* Walks an object in document order, so the first error reported is the first in the file;
 * a key not in the table is an error, as is a required key left out. */
int dispatch(struct parser *p, json_t *obj, const struct field *fields, size_t n_fields, void *base)
{
        uint64_t seen = 0;
        const char *key;
        json_t *v;
        int r;

        if (n_fields > 64)
                return -EINVAL; /* a table this big is a bug here, not in the document */
        if (!json_is_object(obj))
                return fail(p, "expected an object, got %s", doc_json_kind(obj));

        json_object_foreach(obj, key, v)
        {
                size_t i, saved = doc_path_push_key(&p->path, key);

                for (i = 0; i < n_fields; i++)
                        if (streq(fields[i].name, key))
                                break;
                if (i >= n_fields) {
                        char known[512] = "";
                        size_t o = 0;

                        for (size_t j = 0; j < n_fields && o < sizeof(known); j++)
                                o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s", j ? ", " : "",
                                                      fields[j].name);
                        r = fail(p, "unknown key (known keys here: %s)", known);
                } else {
                        seen |= UINT64_C(1) << i;
                        r = fields[i].parse(p, v, &fields[i], (char *)base + fields[i].offset);
                }
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; i < n_fields; i++)
                if (fields[i].required && !(seen & (UINT64_C(1) << i))) {
                        size_t saved = doc_path_push_key(&p->path, fields[i].name);
                        r = fail(p, "required key is missing");
                        doc_path_pop(&p->path, saved);
                        return r;
                }
        return 0;
}

/* An absolute path, normalised: repeated slashes collapse, "." components go, a trailing slash
 * goes. ".." is refused rather than resolved: resolving it on the string could disagree with
 * what the kernel resolves through a symlink, and a rule that means something other than what
 * it says is worse than an error. */
int field_abs_path(struct parser *p, json_t *v, const struct field *f, void *target)
{
        char **t = target, *out = NULL, q[DOC_QUOTE_MAX];
        enum doc_path_error why;
        const char *s;
        int r;

        r = parse_string(p, v, POLICY_PATH_MAX - 1, &s);
        if (r < 0)
                return r;
        if (doc_normalise_abs_path(s, &out, &why) < 0)
                return why == DOC_PATH_EMPTY ? fail(p, "expected an absolute path, got an empty string")
                       : why == DOC_PATH_DOTDOT
                               ? fail(p, "\"..\" components are not allowed, got %s", doc_quote(q, s, strlen(s)))
                               : fail(p, "expected an absolute path, got %s", doc_quote(q, s, strlen(s)));
        free(*t);
        *t = out;
        return 0;
}

/* "ask" is the only action there is; anything else is a typo or a feature this build lacks,
 * and either way must not be read as "no action". */
int field_action(struct parser *p, json_t *v, const struct field *f, void *target)
{
        static const char *const names[] = {"ask"};
        size_t i;
        int r;

        r = parse_enum(p, v, names, ELEMENTSOF(names), &i);
        if (r < 0)
                return r;
        *(enum rule_action *)target = ACTION_ASK;
        return 0;
}

/* An exact DNS name, lower-cased, without the root's trailing dot. Wildcards and IP literals
 * are refused (DESIGN.md, "Egress"): the gate resolves the name itself and checks the address
 * it got, which a literal would bypass. Anything inet_aton() would take as an address
 * ("127.1", "0x7f000001") counts as a literal, since a resolver may read it that way. */
int field_host(struct parser *p, json_t *v, const struct field *f, void *target)
{
        _cleanup_free_ char *h = NULL;
        char **t = target, q[DOC_QUOTE_MAX];
        const char *s, *label, *last = NULL;
        struct in_addr addr;
        size_t len, last_len = 0;
        int r;

        r = parse_string(p, v, SIZE_MAX, &s);
        if (r < 0)
                return r;
        len = strlen(s);
        if (strchr(s, '*'))
                return fail(p, "wildcards are not allowed, got %s: list each host by its exact name",
                            doc_quote(q, s, len));
        if (strpbrk(s, ":[]"))
                return fail(p, "IP literals are not allowed, got %s: give the host's DNS name", doc_quote(q, s, len));

        h = xstrdup(s);
        if (len > 0 && h[len - 1] == '.')
                h[--len] = '\0';
        if (len == 0)
                return fail(p, "expected a DNS name, got %s", doc_quote(q, s, strlen(s)));
        if (len > HOST_MAX)
                return fail(p, "DNS name is longer than %d characters (%zu)", HOST_MAX, len);

        for (char *c = h; *c; c++) {
                if (*c >= 'A' && *c <= 'Z')
                        *c = (char)(*c - 'A' + 'a');
                if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '.')) {
                        char qc[DOC_QUOTE_MAX];
                        return fail(p, "invalid character %s in DNS name %s (allowed: a-z, 0-9, '-' and '.')",
                                    doc_quote(qc, c, 1), doc_quote(q, s, strlen(s)));
                }
        }

        for (label = h;;) {
                size_t n = strcspn(label, ".");

                if (n == 0)
                        return fail(p, "empty label in DNS name %s", doc_quote(q, s, strlen(s)));
                if (n > LABEL_MAX)
                        return fail(p, "a label is longer than %d characters in DNS name %s", LABEL_MAX,
                                    doc_quote(q, s, strlen(s)));
                if (label[0] == '-' || label[n - 1] == '-')
                        return fail(p, "a label starts or ends with '-' in DNS name %s", doc_quote(q, s, strlen(s)));
                if (label[n] == '\0') {
                        last = label;
                        last_len = n;
                        break;
                }
                label += n + 1;
        }

        if (inet_aton(h, &addr) != 0)
                return fail(p, "IP literals are not allowed, got %s: give the host's DNS name",
                            doc_quote(q, s, strlen(s)));
        if (strspn(last, "0123456789") == last_len)
                return fail(p, "%s is not a DNS name: its last label is all digits (no IP literals)",
                            doc_quote(q, s, strlen(s)));

        free(*t);
        *t = TAKE_PTR(h);
        return 0;
}

/* Egress is HTTPS to named hosts only (DESIGN.md, "Egress"); other ports are refused here rather
 * than accepted and then never honoured. */
int field_port(struct parser *p, json_t *v, const struct field *f, void *target)
{
        if (!json_is_integer(v))
                return fail(p, "expected the integer 443, got %s", doc_json_kind(v));
        if (json_integer_value(v) != 443)
                return fail(p, "only 443 is allowed, got %lld", (long long)json_integer_value(v));
        *(unsigned *)target = 443;
        return 0;
}

/* The reason a person approved the rule: shown to people, so it must say something. */
int field_reason(struct parser *p, json_t *v, const struct field *f, void *target)
{
        char **t = target;
        const char *s;
        int r;

        r = parse_string(p, v, REASON_MAX, &s);
        if (r < 0)
                return r;
        if (s[0] == '\0')
                return fail(p, "must not be empty: say why this host is needed");
        free(*t);
        *t = xstrdup(s);
        return 0;
}

static bool parse_digits(const char *s, size_t n, int *ret)
{
        int v = 0;

        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (s[i] - '0');
        }
        *ret = v;
        return true;
}

/* RFC 3339 in UTC: "YYYY-MM-DDTHH:MM:SS", optional fraction (dropped: expiry is kept in whole
 * seconds), then "Z" or "+00:00". The date is checked by a round trip through timegm(), which
 * would otherwise quietly turn February 30 into March 2. */
int field_timestamp(struct parser *p, json_t *v, const struct field *f, void *target)
{
        char q[DOC_QUOTE_MAX];
        const char *s, *zone;
        struct tm tm = {}, back;
        int year, mon, mday, hour, min, sec;
        size_t len, i;
        time_t t;
        int r;

        r = parse_string(p, v, TIMESTAMP_MAX, &s);
        if (r < 0)
                return r;
        len = strlen(s);

        if (len < 20 || !parse_digits(s, 4, &year) || s[4] != '-' || !parse_digits(s + 5, 2, &mon) || s[7] != '-' ||
            !parse_digits(s + 8, 2, &mday) || s[10] != 'T' || !parse_digits(s + 11, 2, &hour) || s[13] != ':' ||
            !parse_digits(s + 14, 2, &min) || s[16] != ':' || !parse_digits(s + 17, 2, &sec))
                goto bad_format;
        i = 19;
        if (s[i] == '.') {
                size_t digits = strspn(s + i + 1, "0123456789");
                if (digits == 0)
                        goto bad_format;
                i += 1 + digits;
        }
        zone = s + i;
        if (!streq(zone, "Z") && !streq(zone, "+00:00")) {
                int zh, zm;
                if (strlen(zone) == 6 && (zone[0] == '+' || zone[0] == '-') && parse_digits(zone + 1, 2, &zh) &&
                    zone[3] == ':' && parse_digits(zone + 4, 2, &zm))
                        return fail(p, "must be in UTC (end in \"Z\" or \"+00:00\"), got %s", doc_quote(q, s, len));
                goto bad_format;
        }

        tm.tm_year = year - 1900;
        tm.tm_mon = mon - 1;
        tm.tm_mday = mday;
        tm.tm_hour = hour;
        tm.tm_min = min;
        tm.tm_sec = sec;
        t = timegm(&tm);
        if (!gmtime_r(&t, &back) || back.tm_year != year - 1900 || back.tm_mon != mon - 1 || back.tm_mday != mday ||
            back.tm_hour != hour || back.tm_min != min || back.tm_sec != sec)
                return fail(p, "%s is not a valid date and time", doc_quote(q, s, len));
        /* (time_t)-1 means "not given" in struct policy, so the epoch bounds what can be said. */
        if (year < 1970)
                return fail(p, "must not be before 1970, got %s", doc_quote(q, s, len));

        *(time_t *)target = t;
        return 0;

bad_format:
        return fail(p, "expected an RFC 3339 UTC timestamp such as \"2026-12-01T12:00:00Z\", got %s",
                    doc_quote(q, s, len));
}

/* "10.213.0.0/24", "fd00:1::/64": the prefix must cover the address exactly (no host bits). */
int parse_cidr(struct parser *p, json_t *v, struct policy_net_cidr *ret)
{
        const char *s;
        char buf[64], q[DOC_QUOTE_MAX];
        int r = parse_string(p, v, sizeof(buf) - 1, &s);
        if (r < 0)
                return r;
        strcpy(buf, s);
        char *slash = strchr(buf, '/');
        if (!slash)
                return fail(p, "expected ADDRESS/PREFIX, got %s", doc_quote(q, s, strlen(s)));
        *slash = '\0';
        char *end;
        errno = 0;
        unsigned long prefix = strtoul(slash + 1, &end, 10);
        struct policy_net_cidr c = {0};
        if (inet_pton(AF_INET, buf, c.addr) == 1)
                c.family = AF_INET;
        else if (inet_pton(AF_INET6, buf, c.addr) == 1)
                c.family = AF_INET6;
        else
                return fail(p, "expected an IPv4 or IPv6 network, got %s", doc_quote(q, s, strlen(s)));
        unsigned bits = c.family == AF_INET ? 32 : 128;
        if (errno || *end || end == slash + 1 || prefix > bits)
                return fail(p, "bad prefix length in %s", doc_quote(q, s, strlen(s)));
        for (unsigned b = (unsigned)prefix; b < bits; b++)
                if (c.addr[b / 8] & (0x80 >> (b % 8)))
                        return fail(p, "%s has host bits set beyond /%lu", doc_quote(q, s, strlen(s)), prefix);
        c.prefix = (unsigned)prefix;
        *ret = c;
        return 0;
}
