/* What the strict parsers of untrusted JSON documents share (the policy in
 * sentry/policy/, the OCI config in sentry/oci/): the JSON path of the value
 * being looked at, the first error prefixed with the document's origin and
 * that path, untrusted text quoted safely for a message, the kind of a
 * value named for "expected X, got Y", and an absolute path normalised
 * without resolving "..". Each parser keeps its own readers and messages. */
#pragma once

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

/* Room for a quoted excerpt of untrusted text in a message. */
#define DOC_QUOTE_MAX 80

/* Renders untrusted text for a message: quoted, with control and non-ASCII
 * bytes escaped and long text cut short, so a document cannot put terminal
 * escapes or megabytes into a log. Returns buf. */
const char *doc_quote(char buf[static DOC_QUOTE_MAX], const char *s, size_t len);
/* A malloc'd copy of untrusted text (a file name, a command line from a
 * sandbox) for a person's terminal: whole, but with control bytes (C0,
 * DEL, UTF-8's C1) as \xNN, so it can neither send an escape sequence nor
 * redraw what is shown around it. NULL gives "". */
char *doc_printable(const char *s);
/* [A-Za-z_][A-Za-z0-9_]*: a key a JSON path can name after a dot. */
bool doc_key_is_identifier(const char *s);

struct doc_path {
        char text[256]; /* "process.args[0]"; "" at the top level */
        size_t len;
};
/* Each push returns what doc_path_pop takes to undo it. A path too long
 * for text is cut short with "..." (only an unknown key's name can make it
 * so long). */
size_t doc_path_push_key(struct doc_path *p, const char *key);
size_t doc_path_push_index(struct doc_path *p, size_t i);
void doc_path_pop(struct doc_path *p, size_t saved);

/* Records the first error in *error as "ORIGIN: PATH: MESSAGE" (or
 * "ORIGIN: MESSAGE" at the top level); later ones are consequences and
 * are dropped. Always returns -EINVAL. */
int doc_vfail(char **error, const char *origin, const struct doc_path *p, const char *fmt, va_list ap) _printf_(4, 0);

/* "an object", "a string", ... for "expected X, got Y". */
const char *doc_json_kind(const json_t *v);

enum doc_path_error { DOC_PATH_EMPTY = 1, DOC_PATH_RELATIVE, DOC_PATH_DOTDOT };
/* An absolute path normalised: repeated slashes collapse, "." components
 * and a trailing slash go. ".." is refused rather than resolved on the
 * string, which could disagree with what the kernel resolves through a
 * symlink. 0 with *ret (malloc'd), or -EINVAL with *ret_why saying which
 * rule s breaks. */
int doc_normalise_abs_path(const char *s, char **ret, enum doc_path_error *ret_why);
