/* The runtime's global options (runc's --root, --log, --log-format,
 * --debug and --systemd-cgroup: runtime.c's command line sets them, the
 * verbs read them) and its messages, which obey them: errors to stderr and
 * the --log file, warnings and debug lines as --debug says, in runc's log
 * formats. The bottom of the runtime half: it calls no other file of the
 * room. */
#include "config.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "common/util.h"
#include "sentry/oci/runtime-internal.h"

struct oci_globals oci_G = {.root = OCI_DEFAULT_ROOT, .log_fd = -1};

void oci_now_rfc3339(char *buf, size_t size)
{
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        char base[32];
        strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf, size, "%s.%09ldZ", base, ts.tv_nsec);
}

static void log_line(const char *level, const char *msg)
{
        if (oci_G.log_fd < 0)
                return;
        char when[64];
        oci_now_rfc3339(when, sizeof(when));
        char *line = NULL;
        if (oci_G.log_json) {
                json_t *j = json_pack("{s:s, s:s, s:s}", "level", level, "msg", msg, "time", when);
                line = json_dumps(j, JSON_COMPACT);
                json_decref(j);
        } else {
                /* logrus's text format, which runc writes */
                json_t *q = json_string(msg);
                char *quoted = json_dumps(q, JSON_ENCODE_ANY);
                json_decref(q);
                line = xasprintf("time=\"%s\" level=%s msg=%s", when, level, quoted ? quoted : "\"\"");
                free(quoted);
        }
        if (line) {
                size_t n = strlen(line);
                line = xrealloc(line, n + 2);
                line[n] = '\n';
                (void)write_all(oci_G.log_fd, line, n + 1);
                free(line);
        }
}

/* One message at level: to the log, and to stderr (after "cordon-oci: "
 * and prefix) when to_stderr. */
_printf_(4, 0) static void say(const char *level, bool to_stderr, const char *prefix, const char *fmt, va_list ap)
{
        char msg[4096];
        vsnprintf(msg, sizeof(msg), fmt, ap);
        if (to_stderr)
                fprintf(stderr, "cordon-oci: %s%s\n", prefix, msg);
        log_line(level, msg);
}

/* An error: to stderr and the log. The caller exits non-zero. */
_printf_(1, 2) void oci_error(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        say("error", true, "", fmt, ap);
        va_end(ap);
}

_printf_(1, 2) void oci_warn(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        say("warning", oci_G.debug, "warning: ", fmt, ap);
        va_end(ap);
}

_printf_(1, 2) void oci_debug(const char *fmt, ...)
{
        if (!oci_G.debug)
                return;
        va_list ap;
        va_start(ap, fmt);
        say("debug", true, "", fmt, ap);
        va_end(ap);
}
