/* sentry/policy/ private: the strict reader (reader.c) that policy.c and
 * credentials.c share: the parser's state, the key tables, the value
 * readers more than one section uses. */
#pragma once

#include <jansson.h>

#include "common/docparse.h"
#include "sentry/policy/policy.h"

/* Bounds on what a document can make the sentry hold. */
#define POLICY_MAX_BYTES   (1024 * 1024)
#define POLICY_MAX_ENTRIES 4096 /* per array, and env variables */
#define POLICY_PATH_MAX    4096 /* bytes including the NUL, as PATH_MAX */
#define REASON_MAX         1024
#define HOST_MAX           253
#define LABEL_MAX          63
#define TIMESTAMP_MAX      64

struct parser {
        const char *origin;
        struct doc_path path; /* of the value being looked at */
        char *error;          /* the first error; later ones are consequences */
};

/* One key of an object: its parser gets the value and base + offset. */
struct field;
typedef int (*field_parser)(struct parser *p, json_t *v, const struct field *f, void *target);
struct field {
        const char *name;
        field_parser parse;
        size_t offset;
        bool required;
        int64_t min, max; /* field_int */
};

#define FIELD(json, fn, type, member, req)                                                         \
        {                                                                                          \
                .name = (json), .parse = (fn), .offset = offsetof(type, member), .required = (req) \
        }

/* prefixed in the library's symbol table (other rooms have a static fail()) */
#define fail            policy_fail
#define parse_string    policy_parse_string
#define parse_enum      policy_parse_enum
#define check_array     policy_check_array
#define dispatch        policy_dispatch
#define field_abs_path  policy_field_abs_path
#define field_host      policy_field_host
#define field_port      policy_field_port
#define field_reason    policy_field_reason
#define field_timestamp policy_field_timestamp
#define field_action    policy_field_action

_printf_(2, 3) int fail(struct parser *p, const char *fmt, ...);
int parse_string(struct parser *p, json_t *v, size_t max, const char **ret);
int parse_enum(struct parser *p, json_t *v, const char *const *names, size_t n, size_t *ret);
int check_array(struct parser *p, json_t *v, size_t *ret_n);
int dispatch(struct parser *p, json_t *obj, const struct field *fields, size_t n_fields, void *base);
int field_abs_path(struct parser *p, json_t *v, const struct field *f, void *target);
int field_host(struct parser *p, json_t *v, const struct field *f, void *target);
int field_port(struct parser *p, json_t *v, const struct field *f, void *target);
int field_reason(struct parser *p, json_t *v, const struct field *f, void *target);
int field_timestamp(struct parser *p, json_t *v, const struct field *f, void *target);
int field_action(struct parser *p, json_t *v, const struct field *f, void *target);

/* "ADDRESS/PREFIX", no host bits (reader.c). */
int parse_cidr(struct parser *p, json_t *v, struct policy_net_cidr *ret);

/* cluster.c: networkPolicy.clusterRules. */
int policy_field_cluster_rules(struct parser *p, json_t *v, const struct field *f, void *target);
void policy_cluster_free(struct policy *pol);

/* credentials.c: the "credentials" array, and what it must agree with once
 * the whole document is read (networkPolicy's rules, expiresAt, env). */
int policy_field_credentials(struct parser *p, json_t *v, const struct field *f, void *target);
int policy_check_credentials(struct parser *p, struct policy *pol);
void policy_credentials_free(struct policy *pol);

/* ports.c: the "ports" array (ports of a long-lived sandbox exposed at create). */
int policy_field_ports(struct parser *p, json_t *v, const struct field *f, void *target);
void policy_ports_free(struct policy *pol);
