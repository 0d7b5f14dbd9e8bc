/* Events of long-lived sandboxes: what may be written. Every event is
 * bounded (nesting depth, string length, items per object or array; what is
 * cut is marked, never dropped silently) and the values of fields named like
 * credentials (token, secret, password, authorization, cookie, ...) are
 * masked at any depth, before anything reaches the events file. */
#include "config.h"

#include "sentry/sandbox/sandbox-internal.h"

/* A field named like a credential: its value is never written. */
bool event_secret_key(const char *k)
{
        static const char *const words[] = {"token",  "secret",     "password", "passwd",  "authorization",
                                            "cookie", "credential", "apikey",   "api_key", "private_key"};
        char low[128];
        size_t n = strlen(k);
        if (n >= sizeof(low))
                n = sizeof(low) - 1;
        for (size_t i = 0; i < n; i++)
                low[i] = (char)(k[i] >= 'A' && k[i] <= 'Z' ? k[i] + 32 : k[i]);
        low[n] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (strstr(low, words[i]))
                        return true;
        return false;
}

/* A copy of v that is bounded (depth, string length, items; what is cut
 * says so) and has credential-like fields masked, recursively. */
static json_t *sanitize(json_t *v, int depth)
{
        if (depth > EVENT_MAX_DEPTH)
                return json_string("[cordon: truncated, nested too deep]");
        if (json_is_string(v) && json_string_length(v) > EVENT_MAX_STRING) {
                size_t len = json_string_length(v);
                char *t = xasprintf("%.*s[cordon: truncated, %zu more bytes]", EVENT_MAX_STRING, json_string_value(v),
                                    len - EVENT_MAX_STRING);
                /* the cut may fall inside a UTF-8 sequence */
                json_t *r = json_text(t, strlen(t));
                free(t);
                return r;
        }
        if (json_is_object(v)) {
                json_t *o = json_object();
                const char *k;
                json_t *e;
                size_t n = 0;
                json_object_foreach(v, k, e)
                {
                        if (n++ == EVENT_MAX_ITEMS) {
                                json_object_set_new(o, "cordonTruncated", json_true());
                                break;
                        }
                        json_object_set_new(o, k, event_secret_key(k) ? json_string("***") : sanitize(e, depth + 1));
                }
                return o;
        }
        if (json_is_array(v)) {
                json_t *a = json_array();
                size_t i;
                json_t *e;
                json_array_foreach(v, i, e)
                {
                        if (i == EVENT_MAX_ITEMS) {
                                json_array_append_new(a, json_string("[cordon: truncated]"));
                                break;
                        }
                        json_array_append_new(a, sanitize(e, depth + 1));
                }
                return a;
        }
        return json_incref(v);
}

json_t *event_sanitize(json_t *v)
{
        return sanitize(v, 0);
}
