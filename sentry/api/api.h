/* sentry/api/: the sandbox API over HTTP (`cordon serve`), JSON over
 * HTTP/1.1 on libmicrohttpd, for the TypeScript and Python SDKs (sdk/).
 *
 * Promises: every operation of `cordon sandbox` is a route (the OpenAPI
 * document sentry/api/openapi.json lists them all, and a test holds the
 * server to it), done by the sandbox room's own client calls
 * (sentry/sandbox/sandbox.h), so the CLI and the API never disagree; errors
 * are one JSON shape, {"error": {"code", "message", "field"}}, with the
 * status a client expects; on a unix socket only root and the socket's
 * group get in (SO_PEERCRED), over TCP only a bearer token (the admin
 * token from --token-file, or a sandbox's own token, which acts on that
 * sandbox alone), compared in constant time, stored hashed, never logged;
 * a sandbox's isolation tier is the one it asked for or it is refused.
 *
 * Never: a sandbox depends on the server (they live under their own
 * sentries; a restarted server finds them in the state root); closing a
 * connection never cancels a run; a client that stops reading holds only
 * its own connection. The room sits above the sandbox room and below the
 * command line, which starts it. */
#pragma once

#include <stdbool.h>

struct api_config {
        const char *listen;         /* "unix:PATH" or "tcp:ADDR:PORT" */
        const char *token_file;     /* the admin token (a 0600 file); required for tcp: */
        const char *self_exe;       /* cordon itself: `sandbox create` and `check --json` run it */
        const char *admission_path; /* NULL: the default admission file */
        bool verbose;               /* one line per request on stderr (never a token) */
};

/* Serves until SIGINT or SIGTERM: 0; -errno with *ret_error (malloc'd)
 * naming what could not be set up. */
int api_serve(const struct api_config *c, char **ret_error);
