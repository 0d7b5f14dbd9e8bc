/* sentry/policy/: what a sandbox is asked to be, as documents and options.
 *
 * Promises: the policy document (DESIGN.md, "The policy") is loaded with
 * strict validation, and errors name the key by its JSON path, for example
 * "filesystem.rules[1].access: expected one of hidden, read, read-write";
 * resource limits from the command line and the policy are merged (the
 * stricter wins) and checked against the host's admission file, whose
 * errors name the limit, the value and the maximum; what none of them sets
 * gets a built-in default where one exists (memory and tasks, so a fork or
 * memory bomb stops at the sandbox), and every limit remembers where its
 * value came from, for `-v`, `cordon check` and the message that says which
 * limit stopped a command.
 *
 * Never: this room decides nothing at run time and touches no process, file
 * or kernel object beyond reading the documents it is given; only
 * limits_option() prints (it is the command line's option parser). The
 * rooms above it (the core, the fronts, the command line) depend on it, it
 * on common/ alone. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ACCESS_MASKED: an OCI config's maskedPaths only (not in the policy
 * document): shown as an empty read-only mask, as runc masks it */
enum path_access { ACCESS_HIDDEN, ACCESS_READ, ACCESS_READ_WRITE, ACCESS_MASKED };
enum rule_action { ACTION_DEFAULT, ACTION_ASK };
enum net_mode { NET_DENY, NET_ALLOW_LISTED };

struct policy_bind {
        char *source; /* absolute host path */
        char *target; /* absolute path in the view */
        bool read_only;
};

/* "ports": a TCP port inside a long-lived sandbox exposed at create at a
 * host address (listen, "ADDR:PORT"; NULL: 127.0.0.1:0). */
struct policy_port {
        int port;
        char *listen;
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
        char *upstream_ca_file; /* PEM the gate trusts upstream besides the host's store; NULL: none */
};

/* networkPolicy.clusterRules (cluster.c): in-cluster destinations granted
 * by network, each with its ports and the reason a person approved. Only a
 * sandbox in a network namespace an engine prepared (a pod's) reaches them,
 * from that namespace; elsewhere they grant nothing. networkPolicy.
 * clusterDomain (a DNS suffix, e.g. "cluster.local"): names under it resolve
 * to their real addresses, only where those fall in a granted network. */
struct policy_cluster_rule {
        struct policy_net_cidr net;
        unsigned *ports;
        size_t n_ports;
        char *reason;
};

/* A credential grant (credentials.c): the secret stays with the sentry, the
 * sandbox's variable env holds a placeholder, and the gate puts the secret in
 * header (format's {} replaced) only on requests to host:port whose method
 * is listed and whose path starts with path_prefix, before expires_at. */
struct policy_credential {
        char *env;
        char *host; /* lower case; listed in networkPolicy.rules */
        unsigned port;
        char **methods; /* upper case; n_methods 0: any */
        size_t n_methods;
        char *path_prefix; /* "/" when not given */
        char *header;      /* "Authorization" when not given */
        char *format;      /* "Bearer {}" when not given: exactly one {} */
        char *source_file; /* absolute host path, or ... */
        char *source_env;  /* ... a variable of cordon's own environment */
        time_t expires_at; /* (time_t)-1: the sandbox's own expiry */
        char *reason;
        enum rule_action action; /* ACTION_ASK: each matching request waits for a person */
};

struct policy_env {
        char *key;
        char *value;
};

#define POLICY_UNSET (-1)

/* The numeric limits, in this order wherever they are listed (struct
 * run_limits' fields too). */
enum limit_kind {
        LIMIT_MEMORY,     /* memoryBytes, --memory */
        LIMIT_CPU,        /* cpuMillis, --cpus */
        LIMIT_DISK,       /* diskBytes, --disk */
        LIMIT_PROCESSES,  /* maxProcesses, --pids (--max-processes) */
        LIMIT_OPEN_FILES, /* maxOpenFiles, --nofile */
        LIMIT_TIMEOUT,    /* timeoutMs, --timeout (--ttl for `sandbox create`) */
        _LIMIT_KIND_MAX,
};
#define LIMIT_BIT(kind) (1u << (kind))

struct policy {
        bool has_source;
        char *source_kind; /* "template" or "snapshot" */
        char *source_path;
        char *source_digest; /* "sha256:<64 hex>" or NULL */

        /* each POLICY_UNSET when not given, or given as "unlimited" */
        int64_t cpu_millis, memory_bytes, disk_bytes, max_processes, max_open_files, timeout_ms;
        /* LIMIT_BIT(kind) for each limit the policy gives as "unlimited": it
         * lifts the built-in default (a flag's value is still stricter).
         * The value stays POLICY_UNSET, so code that only reads the values
         * (the OCI front's merge with config.json) sees no limit. */
        unsigned unlimited;

        struct policy_bind *binds;
        size_t n_binds;
        struct policy_path_rule *rules;
        size_t n_rules;

        enum net_mode net_mode;
        struct policy_net_rule *net_rules;
        size_t n_net_rules;
        bool has_net_testing;
        struct policy_net_testing net_testing;
        struct policy_cluster_rule *cluster_rules;
        size_t n_cluster_rules;
        char *cluster_domain; /* lower case, no trailing dot; NULL: none */

        struct policy_env *env;
        size_t n_env;

        struct policy_credential *credentials;
        size_t n_credentials;

        time_t expires_at; /* (time_t)-1 when not given */
        int64_t approval_timeout_ms;

        bool has_caps; /* "capabilities" given: caps replaces the default */
        uint64_t caps;

        /* "user": {"uid": N, "gid": N}: the identity the command runs as in
         * the sandbox (no supplementary groups); gid is uid when not given */
        bool has_user;
        int64_t user_uid, user_gid;

        int isolation;             /* requestedIsolation: an index into policy_tiers, or -1 */
        struct policy_port *ports; /* "ports" (sentry/policy/ports.c) */
        size_t n_ports;
};

/* Parses and validates. On failure returns -EINVAL (bad document) or -errno
 * (cannot read the file) and sets *ret_error to a malloc'd message naming the
 * file, the key path and what was wrong. */
int policy_load_file(const char *path, struct policy **ret, char **ret_error);
int policy_load_buffer(const char *buf, size_t len, const char *origin, struct policy **ret, char **ret_error);
/* The capabilities a sandbox's root holds inside its user namespace when
 * the policy names none: what container engines grant (CHOWN, DAC_OVERRIDE,
 * FOWNER, FSETID, KILL, SETGID, SETUID, SETPCAP, NET_BIND_SERVICE,
 * SYS_CHROOT, SETFCAP). */
#define POLICY_DEFAULT_CAPS UINT64_C(0x800405fb)
/* caps.c: a name ("CAP_CHOWN" or "CHOWN") to its number, with why it is
 * refused (NULL: it may be granted); -ENOENT for no such capability. */
int policy_cap_parse(const char *name, int *ret_cap, const char **ret_refused);
const char *policy_cap_name(int cap);
/* "CAP_CHOWN,CAP_KILL" (malloc'd), "none" for none */
char *policy_caps_format(uint64_t mask);

/* An empty policy: the built-in default (deny all egress, no extra binds). */
struct policy *policy_new_default(void);
void policy_free(struct policy *p);
static inline void policy_freep(struct policy **p)
{
        if (*p)
                policy_free(*p);
}

/* --- isolation tiers (tiers.c) --- */

/* A tier is the set of `cordon check` layers (its row names) it guarantees;
 * each includes the one before it. */
#define POLICY_N_TIERS 3
struct isolation_tier {
        const char *name;
        const char *const *layers; /* NULL-terminated */
};
extern const struct isolation_tier policy_tiers[POLICY_N_TIERS];
/* The tier's index (its strength), or -ENOENT. */
int policy_tier_find(const char *name);
/* Why the admission file may call p high-risk (egress rules, credential
 * grants, read-write binds, extra capabilities), or NULL. */
const char *policy_high_risk(const struct policy *p);

/* --- limits and admission (limits.c) --- */

#define EXIT_QUOTA   3   /* a request over the host's admission limits */
#define EXIT_TIMEOUT 124 /* the sandbox reached its timeout or expiry (as timeout(1)) */

#define DEFAULT_ADMISSION_FILE "/etc/cordon/admission.json"

/* The built-in defaults: what a sandbox of `cordon run` or `cordon sandbox
 * create` gets when neither a flag, the policy nor the admission file sets
 * the limit, enough for builds and test suites and small enough that a fork
 * bomb or a memory bomb stops at the sandbox. An OCI container gets none of
 * them: runc applies only what config.json says, and so does cordon. Disk
 * has none of its own: the writable layer is a tmpfs (half the host's RAM
 * unless --disk says less), and being memory it counts towards memoryBytes. */
#define DEFAULT_MEMORY_BYTES  (INT64_C(2) << 30)
#define DEFAULT_MAX_PROCESSES INT64_C(1024)

/* Where a limit's value came from. */
enum limit_source {
        LIMIT_SRC_NONE,      /* nobody set it: no limit */
        LIMIT_SRC_DEFAULT,   /* the built-in default */
        LIMIT_SRC_FLAG,      /* the command line */
        LIMIT_SRC_POLICY,    /* the policy's "limits" */
        LIMIT_SRC_ADMISSION, /* the host's admission file (its maximum) */
};

/* Each value POLICY_UNSET (-1) when there is no limit; src[kind] says why
 * there is one, or, with POLICY_UNSET, why there is none: LIMIT_SRC_FLAG or
 * LIMIT_SRC_POLICY for an explicit "unlimited", LIMIT_SRC_DEFAULT for a
 * built-in default this host could not apply (run_limits_drop_default). */
struct run_limits {
        union {
                struct {
                        int64_t memory_bytes, cpu_millis, disk_bytes, max_processes, max_open_files, timeout_ms;
                };
                int64_t value[_LIMIT_KIND_MAX]; /* by enum limit_kind */
        };
        time_t expires_at; /* (time_t)-1: none */
        enum limit_source src[_LIMIT_KIND_MAX];
        const char *admission; /* the admission file that set any, for messages */
};

void run_limits_unset(struct run_limits *l);
/* Folds the policy's limits into l: where both give a value the stricter
 * wins (an "unlimited" is the least strict); values the caller had put in l
 * without a source are taken as flags. */
void run_limits_merge_policy(struct run_limits *l, const struct policy *p);
/* Fills what nobody set, nor lifted with "unlimited", with the built-in
 * defaults. */
void run_limits_apply_defaults(struct run_limits *l);
/* A built-in default this host cannot apply (no controller for it): gone,
 * and remembered as such, so nothing claims it. */
void run_limits_drop_default(struct run_limits *l, enum limit_kind kind);
/* The policy's key ("memoryBytes"), cordon run's flag ("--memory") and its
 * argument ("SIZE") for a limit. */
const char *limit_key(enum limit_kind kind);
const char *limit_flag(enum limit_kind kind);
const char *limit_flag_arg(enum limit_kind kind);
/* A limit's value for people: "2 GiB", "1.5 CPUs", "1024 tasks", "30 s";
 * "none" for POLICY_UNSET. Returns buf. */
char *limit_format_value(enum limit_kind kind, int64_t value, char *buf, size_t size);
/* Where it came from, for people: "the built-in default", "from --memory",
 * "from the policy", "the host's maximum in FILE", and where there is no
 * limit "--memory unlimited", "\"unlimited\" in the policy", "the built-in
 * default of 2 GiB cannot be applied on this host" or "none". Returns buf. */
char *limit_format_source(const struct run_limits *l, enum limit_kind kind, char *buf, size_t size);
/* The two together, for `cordon run -v` and `cordon check`:
 * "2 GiB (the built-in default)", "none (--memory unlimited)". */
char *limit_describe(const struct run_limits *l, enum limit_kind kind, char *buf, size_t size);
/* How the user raises a limit that stopped a command: "raise it with
 * --memory SIZE or --memory unlimited", "raise limits.memoryBytes in the
 * policy", "only the host's administrator can raise it". Returns buf. */
char *limit_raise_hint(const struct run_limits *l, enum limit_kind kind, char *buf, size_t size);

/* "512M", "1G", "1.5GiB", "4096" (bytes); binary multiples. 0 or -EINVAL. */
int parse_size(const char *s, int64_t *ret);
/* "30s", "500ms", "2m", "1h", "45" (seconds). 0 or -EINVAL. */
int parse_duration_ms(const char *s, int64_t *ret);
/* "1.5" CPUs -> 1500 millis. 0 or -EINVAL. */
int parse_cpus(const char *s, int64_t *ret);
/* One limit option of `run` and `sandbox create` into l: opt is 'M'
 * (--memory), 'c' (--cpus), 'P' (--pids), 'm' (--max-processes, the same), 'N'
 * (--nofile),
 * 'D' (--disk) or 'o' (--timeout). The word "unlimited" lifts the limit,
 * the built-in default included. On a bad value prints which flag and what
 * was expected; -EINVAL. */
int limits_option(char opt, const char *arg, struct run_limits *l);
/* The getopt_long rows of the limit options `run` and `sandbox create`
 * share, which limits_option parses (`run` adds --nofile, 'N', and
 * --timeout, 'o'), and their case labels. */
/* clang-format off */
#define LIMITS_LONG_OPTIONS                                                     \
        {"memory", required_argument, NULL, 'M'},                               \
        {"cpus", required_argument, NULL, 'c'},                                 \
        {"pids", required_argument, NULL, 'P'},                                 \
        {"max-processes", required_argument, NULL, 'm'},                        \
        {"disk", required_argument, NULL, 'D'}
/* clang-format on */
#define LIMITS_OPTION_CASES \
        case 'M':           \
        case 'c':           \
        case 'P':           \
        case 'm':           \
        case 'D'

struct admission {
        const char *origin; /* the file, for messages */
        int64_t memory_bytes, cpu_millis, disk_bytes, max_processes, max_open_files, timeout_ms;
        int64_t max_sandboxes;
        int min_isolation;        /* "minimumIsolation": a tier's index, or -1 */
        bool high_risk_strongest; /* "highRiskRequiresStrongest": policy_high_risk ones need the last tier */
};

/* Loads an admission file. path NULL: the default file, which may be absent
 * (no host-wide limits). 0, or -errno with *ret_error naming the file and key. */
int admission_load(const char *path, struct admission *ret, char **ret_error);
/* Checks l against the maxima; fills unset limits with the maxima (a host
 * that caps memory caps every sandbox). 0, or -EDQUOT with *ret_error naming
 * the limit, the value (an explicit "unlimited" too) and the maximum. */
int admission_apply(const struct admission *a, struct run_limits *l, char **ret_error);
