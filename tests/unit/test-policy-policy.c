/* Unit tests for the policy loader (sentry/policy/policy.c): table-driven valid and invalid documents,
 * each invalid one checked for the JSON path it names and the gist of what is wrong, plus the
 * file-level cases (size, type, missing). */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/util.h"
#include "sentry/policy/policy.h"

#define ORIGIN "test.json"
#define SHA    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* Loads a document that must fail, and checks the message: it starts with the origin and the
 * JSON path (or, for a syntax error, ":line:col"), and contains the gist. */
static void expect_invalid_len(const char *json, size_t len, const char *path, const char *gist)
{
        _cleanup_free_ char *prefix = NULL;
        struct policy *pol = NULL;
        char *err = NULL;
        int r;

        r = policy_load_buffer(json, len, ORIGIN, &pol, &err);
        ck_assert_msg(r == -EINVAL, "expected -EINVAL, got %d (%s) for %s", r, err ? err : "no error", json);
        ck_assert_ptr_null(pol);
        ck_assert_ptr_nonnull(err);

        if (path[0] == ':')
                prefix = xasprintf("%s%s", ORIGIN, path);
        else if (path[0] == '\0')
                prefix = xasprintf("%s: ", ORIGIN);
        else
                prefix = xasprintf("%s: %s: ", ORIGIN, path);
        ck_assert_msg(startswith(err, prefix), "error \"%s\" does not start with \"%s\"", err, prefix);
        ck_assert_msg(strstr(err + strlen(prefix), gist), "error \"%s\" does not say \"%s\"", err, gist);
        free(err);
}

static void expect_invalid(const char *json, const char *path, const char *gist)
{
        expect_invalid_len(json, strlen(json), path, gist);
}

static struct policy *expect_valid(const char *json)
{
        struct policy *pol = NULL;
        char *err = NULL;
        int r;

        r = policy_load_buffer(json, strlen(json), ORIGIN, &pol, &err);
        ck_assert_msg(r == 0, "expected success, got %d: %s (document %s)", r, err ? err : "", json);
        ck_assert_ptr_nonnull(pol);
        ck_assert_ptr_null(err);
        return pol;
}

/* Invalid documents. */

struct invalid_case {
        const char *json;
        const char *path; /* "" for the top level; ":L:C: " (or a start of it) for a syntax error */
        const char *gist;
};

static const struct invalid_case invalid_cases[] = {
        /* shape */
        {"[]", "", "expected a JSON object at the top level, got an array"},
        {"\"policy\"", "", "expected a JSON object at the top level, got a string"},
        {"{\"sourc\": {}}", "sourc", "unknown key"},
        {"{\"requestedIsolation\": \"strong\"}", "requestedIsolation",
         "expected \"standard\", \"hardened\" or \"maximum\", got \"strong\""},
        {"{\"requestedIsolation\": 2}", "requestedIsolation", "expected \"standard\""},
        {"{\"limits\": {\"cpuMilis\": 5}}", "limits.cpuMilis", "unknown key (known keys here: cpuMillis,"},
        {"{\"filesystem\": {\"rules\": [{\"path\": \"/a\", \"access\": \"read\", \"mode\": 1}]}}",
         "filesystem.rules[0].mode", "unknown key"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"a.example\", \"port\": 443, "
         "\"reason\": \"r\", \"why\": \"x\"}]}}",
         "networkPolicy.rules[0].why", "unknown key"},
        {"{\"source\": {\"kind\": \"template\", \"path\": \"/t\", \"extra\": true}}", "source.extra", "unknown key"},
        {"{\"a b\": 1}", "[\"a b\"]", "unknown key"},
        /* capabilities */
        {"{\"capabilities\": [\"CAP_SYS_ADMIN\"]}", "capabilities[0]", "capability CAP_SYS_ADMIN is refused"},
        {"{\"capabilities\": [\"CAP_CHOWN\", \"NET_ADMIN\"]}", "capabilities[1]",
         "capability CAP_NET_ADMIN is refused"},
        {"{\"capabilities\": [\"CAP_DAC_READ_SEARCH\"]}", "capabilities[0]",
         "capability CAP_DAC_READ_SEARCH is refused"},
        {"{\"capabilities\": [\"CAP_BPF\"]}", "capabilities[0]", "capability CAP_BPF is refused"},
        {"{\"capabilities\": [\"CAP_FLY\"]}", "capabilities[0]", "unknown capability \"CAP_FLY\""},
        {"{\"capabilities\": [\"cap_chown\"]}", "capabilities[0]", "unknown capability"},
        {"{\"capabilities\": \"CAP_CHOWN\"}", "capabilities", "expected an array"},
        {"{\"capabilities\": [7]}", "capabilities[0]", "expected a string"},
        {"{\"ports\": [{\"port\": 0}]}", "ports[0].port", "expected a port number from 1 to 65535, got 0"},
        {"{\"ports\": [{\"port\": 65536}]}", "ports[0].port", "got 65536"},
        {"{\"ports\": [{\"port\": \"3000\"}]}", "ports[0].port", "got a string"},
        {"{\"ports\": [{\"listen\": \"127.0.0.1:0\"}]}", "ports[0].port", "required key is missing"},
        {"{\"ports\": [{\"port\": 1, \"listen\": \"localhost:80\"}]}", "ports[0].listen", "expected ADDR:PORT"},
        {"{\"ports\": [{\"port\": 1, \"listen\": \"127.0.0.1\"}]}", "ports[0].listen", "expected ADDR:PORT"},
        {"{\"ports\": [{\"port\": 1, \"listen\": \"127.0.0.1:65536\"}]}", "ports[0].listen", "expected ADDR:PORT"},
        {"{\"ports\": [{\"port\": 1, \"listen\": \"::1:80\"}]}", "ports[0].listen", "expected ADDR:PORT"},
        {"{\"ports\": [{\"port\": 1, \"host\": \"x\"}]}", "ports[0].host", "unknown key"},
        {"{\"ports\": [{\"port\": 3000}, {\"port\": 3000}]}", "ports[1]", "port 3000 is already listed"},
        {"{\"ports\": {\"port\": 3000}}", "ports", "expected an array"},
        /* wrong types at each level */
        {"{\"source\": []}", "source", "expected an object, got an array"},
        {"{\"limits\": 5}", "limits", "expected an object, got an integer"},
        {"{\"limits\": null}", "limits", "expected an object, got null"},
        {"{\"filesystem\": \"/\"}", "filesystem", "expected an object, got a string"},
        {"{\"filesystem\": {\"binds\": {}}}", "filesystem.binds", "expected an array, got an object"},
        {"{\"filesystem\": {\"binds\": [\"/a\"]}}", "filesystem.binds[0]", "expected an object, got a string"},
        {"{\"filesystem\": {\"binds\": [{\"source\": \"/a\", \"target\": \"/b\", \"readOnly\": \"yes\"}]}}",
         "filesystem.binds[0].readOnly", "expected a boolean, got a string"},
        {"{\"filesystem\": {\"rules\": [{\"path\": \"/a\", \"access\": \"read\", \"exec\": 1}]}}",
         "filesystem.rules[0].exec", "expected a boolean, got an integer"},
        {"{\"filesystem\": {\"rules\": [{\"path\": 5, \"access\": \"read\"}]}}", "filesystem.rules[0].path",
         "expected a string, got an integer"},
        {"{\"networkPolicy\": []}", "networkPolicy", "expected an object, got an array"},
        {"{\"networkPolicy\": {\"rules\": \"a.example\"}}", "networkPolicy.rules", "expected an array, got a string"},
        {"{\"env\": [\"A=1\"]}", "env", "expected an object, got an array"},
        {"{\"env\": {\"A\": 1}}", "env.A", "expected a string, got an integer"},
        {"{\"expiresAt\": 1796126400}", "expiresAt", "expected a string, got an integer"},
        {"{\"limits\": {\"cpuMillis\": \"2000\"}}", "limits.cpuMillis",
         "expected a positive integer or \"unlimited\", got \"2000\""},
        {"{\"limits\": {\"maxProcesses\": true}}", "limits.maxProcesses",
         "expected a positive integer or \"unlimited\", got a boolean"},
        {"{\"limits\": {\"memoryBytes\": \"Unlimited\"}}", "limits.memoryBytes",
         "expected a positive integer or \"unlimited\", got \"Unlimited\""},
        {"{\"limits\": {\"memoryBytes\": null}}", "limits.memoryBytes",
         "expected a positive integer or \"unlimited\", got null"},
        /* limits */
        {"{\"limits\": {\"cpuMillis\": -1}}", "limits.cpuMillis", "expected a positive integer, got -1"},
        {"{\"limits\": {\"maxProcesses\": 0}}", "limits.maxProcesses", "expected a positive integer, got 0"},
        {"{\"limits\": {\"memoryBytes\": 1.5e9}}", "limits.memoryBytes", "got a real number"},
        {"{\"limits\": {\"diskBytes\": 1048576.0}}", "limits.diskBytes", "got a real number"},
        {"{\"limits\": {\"memoryBytes\": 1024}}", "limits.memoryBytes", "must be at least 4194304, got 1024"},
        {"{\"limits\": {\"diskBytes\": 1048575}}", "limits.diskBytes", "must be at least 1048576"},
        {"{\"limits\": {\"cpuMillis\": 1000001}}", "limits.cpuMillis", "must be at most 1000000, got 1000001"},
        {"{\"limits\": {\"maxProcesses\": 4194305}}", "limits.maxProcesses", "must be at most 4194304"},
        {"{\"limits\": {\"maxOpenFiles\": 1048577}}", "limits.maxOpenFiles", "must be at most 1048576"},
        {"{\"limits\": {\"timeoutMs\": 2592000001}}", "limits.timeoutMs", "must be at most 2592000000"},
        {"{\"approvalTimeoutMs\": 86400001}", "approvalTimeoutMs", "must be at most 86400000"},
        {"{\"approvalTimeoutMs\": 0}", "approvalTimeoutMs", "expected a positive integer, got 0"},
        /* source */
        {"{\"source\": {\"path\": \"/t\"}}", "source.kind", "required key is missing"},
        {"{\"source\": {\"kind\": \"template\"}}", "source.path", "required key is missing"},
        {"{\"source\": {\"kind\": \"image\", \"path\": \"/t\"}}", "source.kind",
         "expected \"template\" or \"snapshot\", got \"image\""},
        {"{\"source\": {\"kind\": \"template\", \"path\": \"templates/py\"}}", "source.path",
         "expected an absolute path, got \"templates/py\""},
        {"{\"source\": {\"kind\": \"snapshot\", \"path\": \"/s\", \"digest\": \"sha256:ABC\"}}", "source.digest",
         "64 lowercase hex digits"},
        {"{\"source\": {\"kind\": \"snapshot\", \"path\": \"/s\", \"digest\": "
         "\"sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\"}}",
         "source.digest", "64 lowercase hex digits"},
        {"{\"source\": {\"kind\": \"snapshot\", \"path\": \"/s\", \"digest\": "
         "\"md5:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}}",
         "source.digest", "expected \"sha256:\""},
        /* filesystem */
        {"{\"filesystem\": {\"rules\": [{\"path\": \"/a\", \"access\": \"read\"}, {\"path\": \"/b\", "
         "\"access\": \"write\"}]}}",
         "filesystem.rules[1].access", "expected \"hidden\", \"read\" or \"read-write\", got \"write\""},
        {"{\"filesystem\": {\"rules\": [{\"path\": \"/a\"}]}}", "filesystem.rules[0].access",
         "required key is missing"},
        {"{\"filesystem\": {\"rules\": [{\"path\": \"/a\", \"access\": \"read\", \"action\": \"deny\"}]}}",
         "filesystem.rules[0].action", "expected \"ask\", got \"deny\""},
        {"{\"filesystem\": {\"binds\": [{\"source\": \"srv/job\", \"target\": \"/job\"}]}}",
         "filesystem.binds[0].source", "expected an absolute path, got \"srv/job\""},
        {"{\"filesystem\": {\"binds\": [{\"source\": \"/srv\", \"target\": \"\"}]}}", "filesystem.binds[0].target",
         "expected an absolute path, got an empty string"},
        {"{\"filesystem\": {\"rules\": [{\"path\": \"/job/../etc\", \"access\": \"read\"}]}}",
         "filesystem.rules[0].path", "\"..\" components are not allowed, got \"/job/../etc\""},
        {"{\"filesystem\": {\"binds\": [{\"source\": \"/srv/..\", \"target\": \"/job\"}]}}",
         "filesystem.binds[0].source", "\"..\" components are not allowed"},
        {"{\"filesystem\": {\"rules\": [{\"path\": \"/a\\u0000b\", \"access\": \"read\"}]}}",
         "filesystem.rules[0].path", "contains a NUL byte"},
        {"{\"filesystem\": {\"binds\": [{\"source\": \"/a\", \"target\": \"/job\"}, {\"source\": \"/b\", "
         "\"target\": \"//job/\"}]}}",
         "filesystem.binds[1].target", "\"/job\" is already the target of filesystem.binds[0]"},
        {"{\"filesystem\": {\"binds\": [{\"source\": \"/a\", \"target\": \"/.\"}]}}", "filesystem.binds[0].target",
         "binding over / is not allowed"},
        {"{\"filesystem\": {\"binds\": [{\"source\": \"/a\", \"target\": \"/proc/sys\"}]}}",
         "filesystem.binds[0].target", "is under /proc"},
        {"{\"filesystem\": {\"binds\": [{\"source\": \"/a\", \"target\": \"/dev\"}]}}", "filesystem.binds[0].target",
         "is under /dev"},
        {"{\"filesystem\": {\"rules\": [{\"path\": \"/etc/ssl\", \"access\": \"read\"}, {\"path\": \"/etc//ssl/\", "
         "\"access\": \"hidden\"}]}}",
         "filesystem.rules[1].path", "\"/etc/ssl\" already has a rule, filesystem.rules[0]"},
        /* network */
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"api.example.com\", "
         "\"port\": 80, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].port", "only 443 is allowed, got 80"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"api.example.com\", "
         "\"port\": \"443\", \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].port", "expected the integer 443, got a string"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"api.example.com\", "
         "\"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].port", "required key is missing"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"93.184.216.34\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "IP literals are not allowed, got \"93.184.216.34\""},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"2001:db8::1\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "IP literals are not allowed"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"[::1]\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "IP literals are not allowed"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"127.1\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "IP literals are not allowed"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"0x7f000001\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "IP literals are not allowed"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"*.example.com\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "wildcards are not allowed"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"api..example.com\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "empty label"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"-api.example.com\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "starts or ends with '-'"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"api-.example.com\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "starts or ends with '-'"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"api_x.example.com\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "invalid character \"_\""},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"example.123\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "last label is all digits"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "expected a DNS name"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"a\\u001bc.example\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules[0].host", "invalid character \"\\x1b\""},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"api.example.com\", "
         "\"port\": 443, \"reason\": \"r\"}, {\"host\": \"API.example.com.\", \"port\": 443, \"reason\": \"s\"}]}}",
         "networkPolicy.rules[1].host", "\"api.example.com\" is already listed in networkPolicy.rules[0]"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"api.example.com\", "
         "\"port\": 443}]}}",
         "networkPolicy.rules[0].reason", "required key is missing"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"api.example.com\", "
         "\"port\": 443, \"reason\": \"\"}]}}",
         "networkPolicy.rules[0].reason", "must not be empty"},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"api.example.com\", "
         "\"port\": 443, \"reason\": \"r\", \"action\": \"allow\"}]}}",
         "networkPolicy.rules[0].action", "expected \"ask\", got \"allow\""},
        {"{\"networkPolicy\": {\"mode\": \"deny\", \"rules\": [{\"host\": \"api.example.com\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules", "mode is \"deny\", which allows no egress"},
        {"{\"networkPolicy\": {\"rules\": [{\"host\": \"api.example.com\", \"port\": 443, \"reason\": \"r\"}]}}",
         "networkPolicy.rules", "mode is \"deny\" (the default)"},
        {"{\"networkPolicy\": {\"mode\": \"allow\"}}", "networkPolicy.mode",
         "expected \"deny\" or \"allow-listed\", got \"allow\""},
        /* env */
        {"{\"env\": {\"1FOO\": \"x\"}}", "env[\"1FOO\"]", "invalid variable name \"1FOO\""},
        {"{\"env\": {\"MY-VAR\": \"x\"}}", "env[\"MY-VAR\"]", "invalid variable name"},
        {"{\"env\": {\"\": \"x\"}}", "env[\"\"]", "invalid variable name"},
        {"{\"env\": {\"A\": \"x\\u0000y\"}}", "env.A", "contains a NUL byte"},
        /* expiresAt */
        {"{\"expiresAt\": \"2026-13-01T12:00:00Z\"}", "expiresAt", "is not a valid date and time"},
        {"{\"expiresAt\": \"2026-02-30T12:00:00Z\"}", "expiresAt", "\"2026-02-30T12:00:00Z\" is not a valid date"},
        {"{\"expiresAt\": \"2025-02-29T00:00:00Z\"}", "expiresAt", "is not a valid date"},
        {"{\"expiresAt\": \"2026-12-31T23:59:60Z\"}", "expiresAt", "is not a valid date"},
        {"{\"expiresAt\": \"2026-12-01T24:00:00Z\"}", "expiresAt", "is not a valid date"},
        {"{\"expiresAt\": \"2026-12-01T12:00:00+02:00\"}", "expiresAt", "must be in UTC"},
        {"{\"expiresAt\": \"2026-12-01T12:00:00\"}", "expiresAt", "expected an RFC 3339 UTC timestamp"},
        {"{\"expiresAt\": \"2026-12-01 12:00:00Z\"}", "expiresAt", "expected an RFC 3339 UTC timestamp"},
        {"{\"expiresAt\": \"2026-12-01T12:00:00.Z\"}", "expiresAt", "expected an RFC 3339 UTC timestamp"},
        {"{\"expiresAt\": \"tomorrow\"}", "expiresAt", "expected an RFC 3339 UTC timestamp"},
        {"{\"expiresAt\": \"1969-12-31T23:59:59Z\"}", "expiresAt", "must not be before 1970"},
        /* user */
        {"{\"user\": 1000}", "user", "expected an object, got an integer"},
        {"{\"user\": {}}", "user.uid", "required key is missing"},
        {"{\"user\": {\"gid\": 5}}", "user.uid", "required key is missing"},
        {"{\"user\": {\"uid\": \"1000\"}}", "user.uid", "expected an integer, got a string"},
        {"{\"user\": {\"uid\": 1.5}}", "user.uid", "expected an integer"},
        {"{\"user\": {\"uid\": -1}}", "user.uid", "must be at least 0, got -1"},
        {"{\"user\": {\"uid\": 4294967295}}", "user.uid", "must be at most 4294967294"},
        {"{\"user\": {\"uid\": 1, \"gid\": -2}}", "user.gid", "must be at least 0, got -2"},
        {"{\"user\": {\"uid\": 1, \"gid\": null}}", "user.gid", "expected an integer, got null"},
        {"{\"user\": {\"uid\": 1, \"name\": \"www\"}}", "user.name", "unknown key (known keys here: uid, gid)"},
/* credential grants */
#define GRANT_NET                                                                                      \
        "\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"api.example.com\", " \
        "\"port\": 443, \"reason\": \"r\"}]}, "
#define GRANT_SRC "\"source\": {\"file\": \"/etc/cordon/secret\"}, \"reason\": \"r\""
        {"{" GRANT_NET "\"credentials\": [{\"env\": \"T\", \"host\": \"other.example.com\", " GRANT_SRC "}]}",
         "credentials[0].host", "other.example.com:443 is not listed in networkPolicy.rules"},
        {"{\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", " GRANT_SRC "}]}", "credentials[0].host",
         "is not listed"},
        {"{" GRANT_NET "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", \"methods\": [], " GRANT_SRC
         "}]}",
         "credentials[0].methods", "must list at least one method"},
        {"{" GRANT_NET "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", \"methods\": [\"GET\", "
         "\"GET\"], " GRANT_SRC "}]}",
         "credentials[0].methods[1]", "\"GET\" is listed twice"},
        {"{" GRANT_NET
         "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", \"pathPrefix\": \"/a?b\", " GRANT_SRC "}]}",
         "credentials[0].pathPrefix", "expected a request path"},
        {"{" GRANT_NET "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", \"header\": "
         "\"Content-Length\", " GRANT_SRC "}]}",
         "credentials[0].header", "frames or routes the request"},
        {"{" GRANT_NET
         "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", \"header\": \"a b\", " GRANT_SRC "}]}",
         "credentials[0].header", "expected an HTTP header name"},
        {"{" GRANT_NET
         "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", \"format\": \"{}{}\", " GRANT_SRC "}]}",
         "credentials[0].format", "must hold \"{}\" (where the secret goes) exactly once"},
        {"{" GRANT_NET "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", \"source\": {}, "
         "\"reason\": \"r\"}]}",
         "credentials[0].source", "expected exactly one of \"file\""},
        {"{" GRANT_NET "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", \"source\": {\"file\": "
         "\"rel\"}, \"reason\": \"r\"}]}",
         "credentials[0].source.file", "expected an absolute path"},
        {"{" GRANT_NET "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", \"port\": 80, " GRANT_SRC
         "}]}",
         "credentials[0].port", "only 443 is allowed"},
        {"{" GRANT_NET "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", \"source\": {\"file\": "
         "\"/s\"}}]}",
         "credentials[0].reason", "required key is missing"},
        {"{" GRANT_NET
         "\"env\": {\"T\": \"x\"}, \"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", " GRANT_SRC "}]}",
         "credentials[0].env", "T is also set in \"env\""},
        {"{" GRANT_NET "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", " GRANT_SRC
         "}, {\"env\": \"U\", \"host\": \"api.example.com\", " GRANT_SRC "}]}",
         "credentials[1].host", "api.example.com:443 already has a grant, credentials[0]"},
        {"{" GRANT_NET "\"expiresAt\": \"2030-01-01T00:00:00Z\", \"credentials\": [{\"env\": \"T\", \"host\": "
         "\"api.example.com\", \"expiresAt\": \"2031-01-01T00:00:00Z\", " GRANT_SRC "}]}",
         "credentials[0].expiresAt", "is later than the sandbox's own expiresAt"},
        {"{" GRANT_NET
         "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", \"action\": \"allow\", " GRANT_SRC "}]}",
         "credentials[0].action", "\"allow\""},
        /* in-cluster grants */
        {"{\"networkPolicy\": {\"clusterRules\": [{\"cidr\": \"10.96.0.1/12\", \"ports\": [443], \"reason\": \"r\"}]}}",
         "networkPolicy.clusterRules[0].cidr", "has host bits set beyond /12"},
        {"{\"networkPolicy\": {\"clusterRules\": [{\"cidr\": \"10.96.0.0/12\", \"ports\": [], \"reason\": \"r\"}]}}",
         "networkPolicy.clusterRules[0].ports", "list at least one port"},
        {"{\"networkPolicy\": {\"clusterRules\": [{\"cidr\": \"10.96.0.0/12\", \"ports\": [0], \"reason\": \"r\"}]}}",
         "networkPolicy.clusterRules[0].ports[0]", "expected a port from 1 to 65535"},
        {"{\"networkPolicy\": {\"clusterRules\": [{\"cidr\": \"10.96.0.0/12\", \"ports\": [80]}]}}",
         "networkPolicy.clusterRules[0].reason", "required key is missing"},
        {"{\"networkPolicy\": {\"clusterRules\": [{\"cidr\": \"10.96.0.0/12\", \"ports\": [\"80\"], \"reason\": "
         "\"r\"}]}}",
         "networkPolicy.clusterRules[0].ports[0]", "expected a port from 1 to 65535, got a string"},
        {"{\"networkPolicy\": {\"clusterRules\": [{\"cidr\": \"cluster\", \"ports\": [80], \"reason\": \"r\"}]}}",
         "networkPolicy.clusterRules[0].cidr", "expected ADDRESS/PREFIX"},
        {"{\"networkPolicy\": {\"clusterDomain\": \"*.cluster.local\"}}", "networkPolicy.clusterDomain",
         "wildcards are not allowed"},
        /* syntax, reported by line and column */
        {"{\"env\": {\"A\": \"1\", \"A\": \"2\"}}", ":1:", "duplicate object key"},
        {"{\n  \"env\": {},\n}", ":3:1: ", "string or '}' expected"},
        {"{\n  \"limits\": {\"cpuMillis\": 99999999999999999999}\n}", ":2:", "too big integer"},
        {"{\"env\": {\"A\": \"\xff\"}}", ":1:", "unable to decode byte 0xff"},
        {"", ":1:0: ", "unexpected token"},
};

START_TEST(test_invalid)
{
        const struct invalid_case *c = &invalid_cases[_i];
        expect_invalid(c->json, c->path, c->gist);
}
END_TEST

/* Valid documents, each with what must have come out. */

struct policy;
static void check_isolation(const struct policy *p);

struct valid_case {
        const char *json;
        void (*check)(const struct policy *p);
};

static void check_defaults(const struct policy *p)
{
        ck_assert(!p->has_source);
        ck_assert_ptr_null(p->source_kind);
        ck_assert_ptr_null(p->source_path);
        ck_assert_ptr_null(p->source_digest);
        ck_assert_int_eq(p->isolation, -1);
        ck_assert_int_eq(p->cpu_millis, POLICY_UNSET);
        ck_assert_int_eq(p->memory_bytes, POLICY_UNSET);
        ck_assert_int_eq(p->disk_bytes, POLICY_UNSET);
        ck_assert_int_eq(p->max_processes, POLICY_UNSET);
        ck_assert_int_eq(p->max_open_files, POLICY_UNSET);
        ck_assert_int_eq(p->timeout_ms, POLICY_UNSET);
        ck_assert_uint_eq(p->n_binds, 0);
        ck_assert(!p->has_caps); /* the default set applies */
        ck_assert_uint_eq(p->n_rules, 0);
        ck_assert_int_eq(p->net_mode, NET_DENY);
        ck_assert_uint_eq(p->n_net_rules, 0);
        ck_assert_uint_eq(p->n_env, 0);
        ck_assert(p->expires_at == (time_t)-1);
        ck_assert_int_eq(p->approval_timeout_ms, 300000);
        ck_assert(!p->has_user);
}

static void check_host_lowercased(const struct policy *p)
{
        ck_assert_int_eq(p->net_mode, NET_ALLOW_LISTED);
        ck_assert_uint_eq(p->n_net_rules, 1);
        ck_assert_str_eq(p->net_rules[0].host, "api.example.com");
        ck_assert_uint_eq(p->net_rules[0].port, 443);
        ck_assert_int_eq(p->net_rules[0].action, ACTION_DEFAULT);
}

static void check_hosts_kept(const struct policy *p)
{
        ck_assert_uint_eq(p->n_net_rules, 3);
        ck_assert_str_eq(p->net_rules[0].host, "xn--bcher-kva.example");
        ck_assert_str_eq(p->net_rules[1].host, "a-1.b2.example");
        ck_assert_int_eq(p->net_rules[1].action, ACTION_ASK);
        ck_assert_str_eq(p->net_rules[2].host, "localhost");
}

static void check_allow_listed_empty(const struct policy *p)
{
        ck_assert_int_eq(p->net_mode, NET_ALLOW_LISTED);
        ck_assert_uint_eq(p->n_net_rules, 0);
}

static void check_deny_empty(const struct policy *p)
{
        ck_assert_int_eq(p->net_mode, NET_DENY);
        ck_assert_uint_eq(p->n_net_rules, 0);
}

static void check_paths_normalised(const struct policy *p)
{
        ck_assert_uint_eq(p->n_binds, 1);
        ck_assert_str_eq(p->binds[0].source, "/srv/job-42");
        ck_assert_str_eq(p->binds[0].target, "/job");
        ck_assert(!p->binds[0].read_only);
        ck_assert_uint_eq(p->n_rules, 4);
        ck_assert_str_eq(p->rules[0].path, "/opt/tools/bin");
        ck_assert_int_eq(p->rules[0].exec, -1);
        ck_assert_int_eq(p->rules[0].action, ACTION_DEFAULT);
        ck_assert_str_eq(p->rules[1].path, "/");
        ck_assert_int_eq(p->rules[1].exec, 0);
        ck_assert_str_eq(p->rules[2].path, "/a/...b/.c");
        ck_assert_str_eq(p->rules[3].path, "/procfs");
}

static void check_fraction(const struct policy *p)
{
        ck_assert(p->expires_at == 1796126400);
}

static void check_leap_day(const struct policy *p)
{
        ck_assert(p->expires_at == 1709251199);
}

static void check_env_order(const struct policy *p)
{
        static const char *const keys[] = {"Z", "A", "M", "_under", "PATH"};
        static const char *const values[] = {"1", "2", "", "x", "/usr/bin:/bin"};

        ck_assert_uint_eq(p->n_env, ELEMENTSOF(keys));
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                ck_assert_str_eq(p->env[i].key, keys[i]);
                ck_assert_str_eq(p->env[i].value, values[i]);
        }
}

static void check_limit_edges(const struct policy *p)
{
        ck_assert_int_eq(p->cpu_millis, 1000000);
        ck_assert_int_eq(p->memory_bytes, 4194304);
        ck_assert_int_eq(p->disk_bytes, 1048576);
        ck_assert_int_eq(p->max_processes, 4194304);
        ck_assert_int_eq(p->max_open_files, 1048576);
        ck_assert_int_eq(p->timeout_ms, INT64_C(2592000000));
        ck_assert_int_eq(p->approval_timeout_ms, 86400000);
}

static void check_source_no_digest(const struct policy *p)
{
        ck_assert(p->has_source);
        ck_assert_str_eq(p->source_kind, "snapshot");
        ck_assert_str_eq(p->source_path, "/var/lib/cordon/snapshots/s1");
        ck_assert_ptr_null(p->source_digest);
}

static void check_caps_none(const struct policy *p)
{
        ck_assert(p->has_caps);
        ck_assert_uint_eq(p->caps, 0);
}

static void check_caps_two(const struct policy *p)
{
        ck_assert(p->has_caps);
        ck_assert_uint_eq(p->caps, (UINT64_C(1) << 0) | (UINT64_C(1) << 10)); /* CHOWN, NET_BIND_SERVICE */
}

static void check_user_gid_defaults(const struct policy *p)
{
        ck_assert(p->has_user);
        ck_assert_int_eq(p->user_uid, 1000);
        ck_assert_int_eq(p->user_gid, 1000);
}

static void check_user_both(const struct policy *p)
{
        ck_assert(p->has_user);
        ck_assert_int_eq(p->user_uid, 0);
        ck_assert_int_eq(p->user_gid, INT64_C(4294967294));
}

static void check_cluster(const struct policy *p)
{
        ck_assert_uint_eq(p->n_cluster_rules, 2);
        ck_assert_int_eq(p->cluster_rules[0].net.family, AF_INET);
        ck_assert_uint_eq(p->cluster_rules[0].net.prefix, 12);
        ck_assert_uint_eq(p->cluster_rules[0].net.addr[0], 10);
        ck_assert_uint_eq(p->cluster_rules[0].net.addr[1], 96);
        ck_assert_uint_eq(p->cluster_rules[0].n_ports, 2);
        ck_assert_uint_eq(p->cluster_rules[0].ports[1], 443);
        ck_assert_str_eq(p->cluster_rules[0].reason, "Services");
        ck_assert_int_eq(p->cluster_rules[1].net.family, AF_INET6);
        ck_assert_uint_eq(p->cluster_rules[1].net.prefix, 64);
        ck_assert_str_eq(p->cluster_domain, "cluster.local");
}

static const struct valid_case valid_cases[] = {
        {"{\"networkPolicy\": {\"clusterRules\": [{\"cidr\": \"10.96.0.0/12\", \"ports\": [80, 443], \"reason\": "
         "\"Services\"}, {\"cidr\": \"fd00:10::/64\", \"ports\": [5432], \"reason\": \"the database\"}], "
         "\"clusterDomain\": \"Cluster.Local.\"}}",
         check_cluster},
        {"{\"capabilities\": []}", check_caps_none},
        {"{\"capabilities\": [\"CAP_CHOWN\", \"NET_BIND_SERVICE\", \"CAP_CHOWN\"]}", check_caps_two},
        {"{}", check_defaults},
        {" \n{ }\n ", check_defaults},
        {"{\"filesystem\": {}, \"networkPolicy\": {}, \"env\": {}, \"limits\": {}}", check_defaults},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"API.Example.COM\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         check_host_lowercased},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"api.example.com.\", "
         "\"port\": 443, \"reason\": \"r\"}]}}",
         check_host_lowercased},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": ["
         "{\"host\": \"xn--bcher-kva.example\", \"port\": 443, \"reason\": \"r\"}, "
         "{\"host\": \"a-1.b2.example\", \"port\": 443, \"reason\": \"r\", \"action\": \"ask\"}, "
         "{\"host\": \"localhost\", \"port\": 443, \"reason\": \"r\"}]}}",
         check_hosts_kept},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": []}}", check_allow_listed_empty},
        {"{\"networkPolicy\": {\"mode\": \"allow-listed\"}}", check_allow_listed_empty},
        {"{\"networkPolicy\": {\"mode\": \"deny\", \"rules\": []}}", check_deny_empty},
        {"{\"filesystem\": {\"binds\": [{\"source\": \"//srv///job-42/\", \"target\": \"/./job/.\"}], "
         "\"rules\": [{\"path\": \"/opt//tools/./bin/\", \"access\": \"read\"}, "
         "{\"path\": \"/\", \"access\": \"read-write\", \"exec\": false}, "
         "{\"path\": \"/a/...b/.c\", \"access\": \"hidden\"}, "
         "{\"path\": \"/procfs\", \"access\": \"hidden\"}]}}",
         check_paths_normalised},
        {"{\"expiresAt\": \"2026-12-01T12:00:00.123456Z\"}", check_fraction},
        {"{\"expiresAt\": \"2026-12-01T12:00:00+00:00\"}", check_fraction},
        {"{\"expiresAt\": \"2024-02-29T23:59:59Z\"}", check_leap_day},
        {"{\"env\": {\"Z\": \"1\", \"A\": \"2\", \"M\": \"\", \"_under\": \"x\", \"PATH\": \"/usr/bin:/bin\"}}",
         check_env_order},
        {"{\"limits\": {\"cpuMillis\": 1000000, \"memoryBytes\": 4194304, \"diskBytes\": 1048576, "
         "\"maxProcesses\": 4194304, \"maxOpenFiles\": 1048576, \"timeoutMs\": 2592000000}, "
         "\"approvalTimeoutMs\": 86400000}",
         check_limit_edges},
        {"{\"source\": {\"kind\": \"snapshot\", \"path\": \"/var/lib/cordon/snapshots/s1/\"}}", check_source_no_digest},
        {"{\"user\": {\"uid\": 1000}}", check_user_gid_defaults},
        {"{\"requestedIsolation\": \"hardened\"}", check_isolation},
        {"{\"user\": {\"gid\": 4294967294, \"uid\": 0}}", check_user_both},
};

static void check_isolation(const struct policy *p)
{
        ck_assert_int_eq(p->isolation, policy_tier_find("hardened"));
        ck_assert_str_eq(policy_tiers[p->isolation].name, "hardened");
}

START_TEST(test_credential_defaults)
{
        struct policy *pol = expect_valid("{" GRANT_NET "\"credentials\": [{\"env\": \"GITHUB_TOKEN\", \"host\": "
                                          "\"API.example.com\", \"source\": {\"env\": \"GH\"}, \"reason\": \"r\"}]}");
        ck_assert_uint_eq(pol->n_credentials, 1);
        const struct policy_credential *c = &pol->credentials[0];
        ck_assert_str_eq(c->env, "GITHUB_TOKEN");
        ck_assert_str_eq(c->host, "api.example.com");
        ck_assert_uint_eq(c->port, 443);
        ck_assert_uint_eq(c->n_methods, 0);
        ck_assert_str_eq(c->path_prefix, "/");
        ck_assert_str_eq(c->header, "Authorization");
        ck_assert_str_eq(c->format, "Bearer {}");
        ck_assert_ptr_null(c->source_file);
        ck_assert_str_eq(c->source_env, "GH");
        ck_assert(c->expires_at == (time_t)-1);
        ck_assert_int_eq(c->action, ACTION_DEFAULT);
        policy_free(pol);
        pol = expect_valid("{" GRANT_NET "\"credentials\": [{\"env\": \"T\", \"host\": \"api.example.com\", "
                           "\"action\": \"ask\", " GRANT_SRC "}]}");
        ck_assert_int_eq(pol->credentials[0].action, ACTION_ASK);
        policy_free(pol);
}
END_TEST

START_TEST(test_valid)
{
        const struct valid_case *c = &valid_cases[_i];
        struct policy *pol = expect_valid(c->json);

        c->check(pol);
        policy_free(pol);
}
END_TEST

/* The example from DESIGN.md, with egress allow-listed, and every field checked. */
static const char full_document[] =
        "{\n"
        "  \"source\":   { \"kind\": \"template\", \"path\": \"/var/lib/cordon/templates/py312\", \"digest\": \"" SHA
        "\" },\n"
        "  \"limits\":   { \"cpuMillis\": 2000, \"memoryBytes\": 2147483648, \"diskBytes\": 10737418240, "
        "\"maxProcesses\": 128 },\n"
        "  \"filesystem\": {\n"
        "    \"binds\": [ { \"source\": \"/srv/job-42\", \"target\": \"/job\", \"readOnly\": false } ],\n"
        "    \"rules\": [ { \"path\": \"/etc/ssl/private\", \"access\": \"hidden\" },\n"
        "               { \"path\": \"/opt/tools\", \"access\": \"read\", \"exec\": true },\n"
        "               { \"path\": \"/job/out\", \"access\": \"read-write\", \"action\": \"ask\" } ]\n"
        "  },\n"
        "  \"networkPolicy\": { \"mode\": \"allow-listed\", \"rules\": [ { \"host\": \"api.example.com\", "
        "\"port\": 443, \"reason\": \"fetch prices\" } ] },\n"
        "  \"env\":      { \"LANG\": \"C.UTF-8\" },\n"
        "  \"expiresAt\": \"2026-12-01T12:00:00Z\"\n"
        "}\n";

static void check_full(const struct policy *p)
{
        ck_assert(p->has_source);
        ck_assert_str_eq(p->source_kind, "template");
        ck_assert_str_eq(p->source_path, "/var/lib/cordon/templates/py312");
        ck_assert_str_eq(p->source_digest, SHA);

        ck_assert_int_eq(p->cpu_millis, 2000);
        ck_assert_int_eq(p->memory_bytes, INT64_C(2147483648));
        ck_assert_int_eq(p->disk_bytes, INT64_C(10737418240));
        ck_assert_int_eq(p->max_processes, 128);
        ck_assert_int_eq(p->max_open_files, POLICY_UNSET);
        ck_assert_int_eq(p->timeout_ms, POLICY_UNSET);

        ck_assert_uint_eq(p->n_binds, 1);
        ck_assert_str_eq(p->binds[0].source, "/srv/job-42");
        ck_assert_str_eq(p->binds[0].target, "/job");
        ck_assert(!p->binds[0].read_only);

        ck_assert_uint_eq(p->n_rules, 3);
        ck_assert_str_eq(p->rules[0].path, "/etc/ssl/private");
        ck_assert_int_eq(p->rules[0].access, ACCESS_HIDDEN);
        ck_assert_int_eq(p->rules[0].exec, -1);
        ck_assert_int_eq(p->rules[0].action, ACTION_DEFAULT);
        ck_assert_str_eq(p->rules[1].path, "/opt/tools");
        ck_assert_int_eq(p->rules[1].access, ACCESS_READ);
        ck_assert_int_eq(p->rules[1].exec, 1);
        ck_assert_int_eq(p->rules[1].action, ACTION_DEFAULT);
        ck_assert_str_eq(p->rules[2].path, "/job/out");
        ck_assert_int_eq(p->rules[2].access, ACCESS_READ_WRITE);
        ck_assert_int_eq(p->rules[2].exec, -1);
        ck_assert_int_eq(p->rules[2].action, ACTION_ASK);

        ck_assert_int_eq(p->net_mode, NET_ALLOW_LISTED);
        ck_assert_uint_eq(p->n_net_rules, 1);
        ck_assert_str_eq(p->net_rules[0].host, "api.example.com");
        ck_assert_uint_eq(p->net_rules[0].port, 443);
        ck_assert_str_eq(p->net_rules[0].reason, "fetch prices");
        ck_assert_int_eq(p->net_rules[0].action, ACTION_DEFAULT);

        ck_assert_uint_eq(p->n_env, 1);
        ck_assert_str_eq(p->env[0].key, "LANG");
        ck_assert_str_eq(p->env[0].value, "C.UTF-8");

        ck_assert(p->expires_at == 1796126400);
        ck_assert_int_eq(p->approval_timeout_ms, 300000);
}

START_TEST(test_full_document)
{
        struct policy *pol = expect_valid(full_document);

        check_full(pol);
        policy_free(pol);
}
END_TEST

START_TEST(test_new_default)
{
        struct policy *pol = policy_new_default();

        check_defaults(pol);
        policy_free(pol);
        policy_free(NULL);
}
END_TEST

/* Cases whose documents are too big to write out. */

START_TEST(test_long_values)
{
        _cleanup_free_ char *label = NULL, *name = NULL, *reason = NULL, *path = NULL, *doc = NULL;

        label = xmalloc(65);
        memset(label, 'a', 64);
        label[64] = '\0';
        doc = xasprintf("{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"%s.example\", "
                        "\"port\": 443, \"reason\": \"r\"}]}}",
                        label);
        expect_invalid(doc, "networkPolicy.rules[0].host", "longer than 63 characters");
        free(doc);

        /* Three labels of 63 and one of 62: 254 characters, and the trailing dot does not count. */
        label[63] = '\0';
        name = xasprintf("%s.%s.%s.%.62s", label, label, label, label);
        ck_assert_uint_eq(strlen(name), 254);
        doc = xasprintf("{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"%s.\", "
                        "\"port\": 443, \"reason\": \"r\"}]}}",
                        name);
        expect_invalid(doc, "networkPolicy.rules[0].host", "longer than 253 characters");
        free(doc);

        /* 253 characters is fine. */
        name[253] = '\0';
        doc = xasprintf("{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"%s\", "
                        "\"port\": 443, \"reason\": \"r\"}]}}",
                        name);
        policy_free(expect_valid(doc));
        free(doc);

        reason = xmalloc(1026);
        memset(reason, 'r', 1025);
        reason[1025] = '\0';
        doc = xasprintf("{\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": \"a.example\", "
                        "\"port\": 443, \"reason\": \"%s\"}]}}",
                        reason);
        expect_invalid(doc, "networkPolicy.rules[0].reason", "too long (1025 bytes, the limit is 1024)");
        free(doc);

        path = xmalloc(4097);
        memset(path, 'p', 4096);
        path[0] = '/';
        path[4096] = '\0';
        doc = xasprintf("{\"filesystem\": {\"rules\": [{\"path\": \"%s\", \"access\": \"read\"}]}}", path);
        expect_invalid(doc, "filesystem.rules[0].path", "too long (4096 bytes, the limit is 4095)");
}
END_TEST

START_TEST(test_too_many_entries)
{
        size_t n = 4097, o = 0, size = 64 + n * 64;
        _cleanup_free_ char *doc = xmalloc(size);

        o += (size_t)snprintf(doc + o, size - o, "{\"filesystem\": {\"rules\": [");
        for (size_t i = 0; i < n; i++)
                o += (size_t)snprintf(doc + o, size - o, "%s{\"path\": \"/p%zu\", \"access\": \"read\"}", i ? "," : "",
                                      i);
        snprintf(doc + o, size - o, "]}}");
        expect_invalid(doc, "filesystem.rules", "too many entries (4097, the limit is 4096)");
}
END_TEST

START_TEST(test_long_unknown_key)
{
        _cleanup_free_ char *key = xmalloc(2001), *doc = NULL;
        struct policy *pol = NULL;
        char *err = NULL;

        memset(key, 'k', 2000);
        key[2000] = '\0';
        doc = xasprintf("{\"limits\": {\"%s\": 1}}", key);
        ck_assert_int_eq(policy_load_buffer(doc, strlen(doc), ORIGIN, &pol, &err), -EINVAL);
        ck_assert_ptr_null(pol);
        ck_assert(startswith(err, ORIGIN ": limits.kkkk"));
        ck_assert_ptr_nonnull(strstr(err, "...: unknown key"));
        ck_assert_uint_lt(strlen(err), 1024);
        free(err);
}
END_TEST

START_TEST(test_buffer_too_large)
{
        size_t len = 1024 * 1024 + 1;
        _cleanup_free_ char *doc = xmalloc(len);
        struct policy *pol = NULL;
        char *err = NULL;

        memset(doc, ' ', len);
        doc[0] = '{';
        doc[len - 1] = '}';
        ck_assert_int_eq(policy_load_buffer(doc, len, ORIGIN, &pol, &err), -EFBIG);
        ck_assert_ptr_null(pol);
        ck_assert_ptr_nonnull(strstr(err, "larger than 1 MiB"));
        free(err);

        /* Exactly 1 MiB is accepted. */
        len--;
        doc[len - 1] = '}';
        ck_assert_int_eq(policy_load_buffer(doc, len, ORIGIN, &pol, &err), 0);
        policy_free(pol);
}
END_TEST

START_TEST(test_no_error_pointer)
{
        struct policy *pol = NULL;

        ck_assert_int_eq(policy_load_buffer("{\"x\": 1}", 8, ORIGIN, &pol, NULL), -EINVAL);
        ck_assert_ptr_null(pol);
        ck_assert_int_eq(policy_load_buffer("{", 1, NULL, &pol, NULL), -EINVAL);
        ck_assert_int_eq(policy_load_buffer("{}", 2, NULL, &pol, NULL), 0);
        policy_free(pol);
}
END_TEST

/* Files. */

static char tmpdir[64];

static void make_tmpdir(void)
{
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-policy-policy.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
        static const char *const names[] = {"policy.json", "big.json", "bad.json", "fifo", "dir"};

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_free_ char *p = xasprintf("%s/%s", tmpdir, names[i]);
                (void)unlink(p);
                (void)rmdir(p);
        }
        (void)rmdir(tmpdir);
}

static char *write_file(const char *name, const char *data, size_t len)
{
        char *path = xasprintf("%s/%s", tmpdir, name);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write_all(fd, data, len), 0);
        return path;
}

START_TEST(test_file_valid)
{
        _cleanup_free_ char *path = write_file("policy.json", full_document, strlen(full_document));
        struct policy *pol = NULL;
        char *err = NULL;

        ck_assert_int_eq(policy_load_file(path, &pol, &err), 0);
        ck_assert_ptr_null(err);
        check_full(pol);
        policy_free(pol);
}
END_TEST

START_TEST(test_file_syntax_error)
{
        static const char doc[] = "{\n  \"limits\": {\n    \"cpuMillis\": 2000,\n  }\n}\n";
        _cleanup_free_ char *path = write_file("bad.json", doc, strlen(doc));
        _cleanup_free_ char *prefix = xasprintf("%s:4:3: ", path);
        struct policy *pol = NULL;
        char *err = NULL;

        ck_assert_int_eq(policy_load_file(path, &pol, &err), -EINVAL);
        ck_assert_ptr_null(pol);
        ck_assert_msg(startswith(err, prefix), "error \"%s\" does not start with \"%s\"", err, prefix);
        free(err);
}
END_TEST

START_TEST(test_file_bad_value_names_path)
{
        static const char doc[] = "{\"limits\": {\"cpuMillis\": -5}}";
        _cleanup_free_ char *path = write_file("bad.json", doc, strlen(doc));
        _cleanup_free_ char *expected = xasprintf("%s: limits.cpuMillis: expected a positive integer, got -5", path);
        struct policy *pol = NULL;
        char *err = NULL;

        ck_assert_int_eq(policy_load_file(path, &pol, &err), -EINVAL);
        ck_assert_str_eq(err, expected);
        free(err);
}
END_TEST

START_TEST(test_file_too_large)
{
        size_t len = 1024 * 1024 + 2;
        _cleanup_free_ char *doc = xmalloc(len), *path = NULL;
        struct policy *pol = NULL;
        char *err = NULL;

        memset(doc, ' ', len);
        doc[0] = '{';
        doc[len - 1] = '}';
        path = write_file("big.json", doc, len);
        ck_assert_int_eq(policy_load_file(path, &pol, &err), -EFBIG);
        ck_assert_ptr_null(pol);
        ck_assert(startswith(err, path));
        ck_assert_ptr_nonnull(strstr(err, "larger than 1 MiB"));
        free(err);
}
END_TEST

START_TEST(test_file_directory)
{
        _cleanup_free_ char *path = xasprintf("%s/dir", tmpdir);
        struct policy *pol = NULL;
        char *err = NULL;

        ck_assert_int_eq(mkdir(path, 0700), 0);
        ck_assert_int_eq(policy_load_file(path, &pol, &err), -EISDIR);
        ck_assert_ptr_null(pol);
        ck_assert(startswith(err, path));
        ck_assert_ptr_nonnull(strstr(err, "directory"));
        free(err);
}
END_TEST

START_TEST(test_file_fifo)
{
        _cleanup_free_ char *path = xasprintf("%s/fifo", tmpdir);
        struct policy *pol = NULL;
        char *err = NULL;

        /* Must be refused at once, not wait for a writer. */
        ck_assert_int_eq(mkfifo(path, 0600), 0);
        ck_assert_int_eq(policy_load_file(path, &pol, &err), -EINVAL);
        ck_assert_ptr_null(pol);
        ck_assert(startswith(err, path));
        ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
        free(err);
}
END_TEST

START_TEST(test_file_missing)
{
        _cleanup_free_ char *path = xasprintf("%s/absent.json", tmpdir);
        struct policy *pol = NULL;
        char *err = NULL;

        ck_assert_int_eq(policy_load_file(path, &pol, &err), -ENOENT);
        ck_assert_ptr_null(pol);
        ck_assert(startswith(err, path));
        ck_assert_ptr_nonnull(strstr(err, "No such file or directory"));
        free(err);
}
END_TEST

static Suite *policy_suite(void)
{
        Suite *s = suite_create("sentry-policy");
        TCase *tc;

        tc = tcase_create("invalid");
        tcase_add_loop_test(tc, test_invalid, 0, (int)ELEMENTSOF(invalid_cases));
        tcase_add_test(tc, test_credential_defaults);
        tcase_add_test(tc, test_long_values);
        tcase_add_test(tc, test_too_many_entries);
        tcase_add_test(tc, test_long_unknown_key);
        tcase_add_test(tc, test_buffer_too_large);
        tcase_add_test(tc, test_no_error_pointer);
        suite_add_tcase(s, tc);

        tc = tcase_create("valid");
        tcase_add_loop_test(tc, test_valid, 0, (int)ELEMENTSOF(valid_cases));
        tcase_add_test(tc, test_full_document);
        tcase_add_test(tc, test_new_default);
        suite_add_tcase(s, tc);

        tc = tcase_create("file");
        tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
        tcase_add_test(tc, test_file_valid);
        tcase_add_test(tc, test_file_syntax_error);
        tcase_add_test(tc, test_file_bad_value_names_path);
        tcase_add_test(tc, test_file_too_large);
        tcase_add_test(tc, test_file_directory);
        tcase_add_test(tc, test_file_fifo);
        tcase_add_test(tc, test_file_missing);
        suite_add_tcase(s, tc);

        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(policy_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
