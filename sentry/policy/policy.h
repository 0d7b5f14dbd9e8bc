/* The policy document (DESIGN.md, "The policy"): loaded from JSON with
 * strict validation. Errors name the key by its JSON path, for example
 * "filesystem.rules[1].access: expected one of hidden, read, read-write". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum path_access { ACCESS_HIDDEN, ACCESS_READ, ACCESS_READ_WRITE };
enum rule_action { ACTION_DEFAULT, ACTION_ASK };
enum net_mode { NET_DENY, NET_ALLOW_LISTED };

struct policy_bind {
        char *source; /* absolute host path */
        char *target; /* absolute path in the view */
        bool read_only;
};

struct policy_path_rule {
        char *path; /* absolute, normalised (no trailing slash, no . or .. components) */
        enum path_access access;
        int exec; /* -1 not given, 0 or 1 */
        enum rule_action action;
};

struct policy_net_rule {
        char *host; /* exact DNS name, lower case */
        unsigned port;
        char *reason;
        enum rule_action action;
};

/* Test-only: lets the tests' own upstream servers (in network namespaces the
 * tests create) be reached. Off unless spelled out in the policy; every use
 * is recorded in the audit log with reason "test_override". */
struct policy_net_cidr {
        int family; /* AF_INET or AF_INET6 */
        uint8_t addr[16];
        unsigned prefix;
};

struct policy_net_testing {
        char *hosts_file; /* "NAME ADDRESS" lines, read again at every connect; NULL: none */
        struct policy_net_cidr *allow_private;
        size_t n_allow_private;
};

struct policy_env {
        char *key;
        char *value;
};

#define POLICY_UNSET (-1)

struct policy {
        bool has_source;
        char *source_kind; /* "template" or "snapshot" */
        char *source_path;
        char *source_digest; /* "sha256:<64 hex>" or NULL */

        /* each POLICY_UNSET when not given */
        int64_t cpu_millis, memory_bytes, disk_bytes, max_processes, max_open_files, timeout_ms;

        struct policy_bind *binds;
        size_t n_binds;
        struct policy_path_rule *rules;
        size_t n_rules;

        enum net_mode net_mode;
        struct policy_net_rule *net_rules;
        size_t n_net_rules;
        bool has_net_testing;
        struct policy_net_testing net_testing;

        struct policy_env *env;
        size_t n_env;

        time_t expires_at; /* (time_t)-1 when not given */
        int64_t approval_timeout_ms;
};

/* For parsers of other JSON documents (the OCI config) that name keys the
 * same way: untrusted text rendered for a message (quoted, control and
 * non-ASCII bytes escaped, cut short), and whether a key can be written
 * .key rather than ["key"] in a JSON path. */
#define POLICY_QUOTE_MAX 80
const char *policy_quote(char buf[static POLICY_QUOTE_MAX], const char *s, size_t len);
bool policy_key_is_identifier(const char *s);

/* Parses and validates. On failure returns -EINVAL (bad document) or -errno
 * (cannot read the file) and sets *ret_error to a malloc'd message naming the
 * file, the key path and what was wrong. */
int policy_load_file(const char *path, struct policy **ret, char **ret_error);
int policy_load_buffer(const char *buf, size_t len, const char *origin, struct policy **ret, char **ret_error);
/* An empty policy: the built-in default (deny all egress, no extra binds). */
struct policy *policy_new_default(void);
void policy_free(struct policy *p);
static inline void policy_freep(struct policy **p)
{
        if (*p)
                policy_free(*p);
}
