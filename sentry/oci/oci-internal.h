/* sentry/oci/ private: the OCI config parser's half of the room. The
 * plumbing its files share is parser.c's (the bottom layer); config.c reads
 * the document and calls down into linux.c and seccomp.c, which call only
 * parser.c. Not for the runtime half: sentry/oci/oci.h is the contract. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/docparse.h"
#include "common/util.h"
#include "sentry/oci/oci.h"

/* Bounds on what a document can make cordon hold (the document comes from
 * whoever can run podman or talk to containerd; podman's whole default
 * seccomp profile is about 30 KiB). */
#define OCI_MAX_BYTES   (8 * 1024 * 1024)
#define OCI_MAX_ENTRIES 65536
#define OCI_STRING_MAX  (1024 * 1024)
#define OCI_PATH_MAX    4096

/* The prefix oci_spec_parse() gives an integer literal above INT64_MAX
 * (which jansson cannot hold) when it rewrites it as a string. Every reader
 * takes such a string for the integer it was: oci_get_u64() accepts it,
 * the other readers refuse it as an integer. (A document spelling out
 * "\u0001u64:..." itself gets the same treatment, which changes nothing:
 * the field wanted a number.) */
#define OCI_U64_MARK      "\x01u64:"
#define OCI_U64_MARK_JSON "\\u0001u64:" /* the same, as JSON text */

struct oci_parser {
        const char *origin;
        const char *bundle;   /* absolute, for relative host paths; may be NULL */
        struct doc_path path; /* of the value being looked at */
        char *error;          /* the first error */
};

/* parser.c: the JSON path, the first error, the readers */
_printf_(2, 3) int oci_fail(struct oci_parser *p, const char *fmt, ...);
const char *oci_json_kind(const json_t *v);
json_t *oci_member(json_t *obj, const char *key);
int oci_check_object(struct oci_parser *p, json_t *v);
int oci_check_array(struct oci_parser *p, json_t *v, size_t *ret_n);
/* Each element of the array v: fn(p, element, its index, its item, ctx)
 * with the path at the index, stopping at the first error. With ret_items,
 * an array of item_size items is allocated first and each call gets its
 * slot; *ret_n (may be NULL) counts the items reached so far, so that a
 * free function sees the half-parsed one too. */
typedef int (*oci_item_fn)(struct oci_parser *p, json_t *e, size_t i, void *item, void *ctx);
int oci_each(struct oci_parser *p, json_t *v, size_t item_size, void *ret_items, size_t *ret_n, oci_item_fn fn,
             void *ctx);
/* Each member of the object v: fn(p, key, value, ctx) with the path at the key. */
typedef int (*oci_member_fn)(struct oci_parser *p, const char *key, json_t *value, void *ctx);
int oci_each_member(struct oci_parser *p, json_t *v, oci_member_fn fn, void *ctx);
int oci_get_string(struct oci_parser *p, json_t *v, const char **ret);
/* A string naming one entry of a table: *ret its value, or an error
 * "unknown WHAT "x"". */
struct oci_name {
        const char *name;
        int64_t value;
};
int oci_get_name(struct oci_parser *p, json_t *v, const struct oci_name *table, size_t n, const char *what,
                 int64_t *ret);
int oci_get_bool(struct oci_parser *p, json_t *v, bool *ret);
int oci_get_int(struct oci_parser *p, json_t *v, int64_t min, int64_t max, int64_t *ret);
int oci_get_u64(struct oci_parser *p, json_t *v, uint64_t *ret);
int oci_get_u32(struct oci_parser *p, json_t *v, uint32_t *ret);
int oci_get_strv(struct oci_parser *p, json_t *v, int (*check)(struct oci_parser *p, const char *s), char ***ret);

_printf_(3, 4) int oci_fail_at(struct oci_parser *p, const char *key, const char *fmt, ...);
/* Go's "not set" for every kind of value: absent, null, false, 0, "", [] or {}. */
bool oci_is_unset(json_t *v);
/* Refuses obj[key] unless unset, naming it and why cordon cannot honour it. */
int oci_refuse_set(struct oci_parser *p, json_t *obj, const char *key, const char *why);
int oci_get_abs_path(struct oci_parser *p, json_t *v, char **ret);
/* s, absolute, normalised into *ret (malloc'd); ".." refused. */
int oci_normalise_path(struct oci_parser *p, const char *s, char **ret);
int oci_dup_string(struct oci_parser *p, json_t *v, char **ret);

/* Evaluates expr, which reads the member as `it`, when obj[key] is present
 * (not null), with the path at the key. */
#define AT(p, obj, key, expr)                                                 \
        ({                                                                    \
                json_t *_v = oci_member((obj), (key));                        \
                int _r = 0;                                                   \
                if (_v) {                                                     \
                        size_t _saved = doc_path_push_key(&(p)->path, (key)); \
                        json_t *it = _v;                                      \
                        _r = (expr);                                          \
                        doc_path_pop(&(p)->path, _saved);                     \
                }                                                             \
                _r;                                                           \
        })

/* process.capabilities (config.c): CAP_* by name, -1 if unknown */
int oci_cap_from_name(const char *name);

/* linux (linux.c) */
/* linux.namespaces lists type (oci_has_ns), and not joined by path (oci_has_new_ns). */
bool oci_has_ns(const struct oci_spec *s, int type);
bool oci_has_new_ns(const struct oci_spec *s, int type);
int oci_parse_linux(struct oci_parser *p, json_t *v, struct oci_spec *s);
/* linux.resources (also `update --resources`'s whole document) */
int oci_parse_resources(struct oci_parser *p, json_t *v, struct oci_resources *res);

/* linux.seccomp (seccomp.c) */
int oci_parse_seccomp(struct oci_parser *p, json_t *v, struct oci_seccomp **ret);
void oci_seccomp_free(struct oci_seccomp *s);
