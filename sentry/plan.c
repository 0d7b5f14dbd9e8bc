/* Turns options and policy into a sandbox plan: environment, working
 * directory, view, filter. */
#include "config.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "sentry/prebuilt.h"
#include "sentry/sentry-internal.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define HOME         "/root"

static void env_set(char ***envp, size_t *n, const char *key, const char *value)
{
        size_t klen = strlen(key);
        char *entry = xasprintf("%s=%s", key, value);
        for (size_t i = 0; i < *n; i++)
                if (strncmp((*envp)[i], key, klen) == 0 && (*envp)[i][klen] == '=') {
                        free((*envp)[i]);
                        (*envp)[i] = entry;
                        return;
                }
        *envp = xrealloc(*envp, sizeof(char *) * (*n + 2));
        (*envp)[(*n)++] = entry;
        (*envp)[*n] = NULL;
}

/* The environment is built from scratch: a small default set, then the
 * policy's env, then --env. Nothing is inherited from the host but TERM
 * (so a terminal program draws right), which names no secret. */
static char **build_env(const struct run_options *o, const struct net_broker *broker)
{
        char **envp = xcalloc(1, sizeof(char *));
        size_t n = 0;
        env_set(&envp, &n, "PATH", DEFAULT_PATH);
        env_set(&envp, &n, "HOME", HOME);
        /* the command's user: root in a root-started sandbox, the caller
         * in an unprivileged one (which keeps the caller's uid), by the
         * name the view's /etc/passwd (the host's) gives it */
        const char *user = "root";
        char num[16];
        if (geteuid() != 0 && !o->oci) {
                struct passwd *pw = getpwuid(getuid());
                user = pw && pw->pw_name ? pw->pw_name : "nobody";
        }
        /* --user, the policy's "user": that uid's name, else its number */
        bool chosen = !o->front && (o->user_set || o->policy->has_user);
        if (chosen) {
                uid_t uid = o->user_set ? o->user_uid : (uid_t)o->policy->user_uid;
                struct passwd *pw = getpwuid(uid);
                snprintf(num, sizeof(num), "%u", (unsigned)uid);
                user = pw && pw->pw_name ? pw->pw_name : num;
        }
        env_set(&envp, &n, "USER", user);
        env_set(&envp, &n, "LOGNAME", user);
        env_set(&envp, &n, "SHELL", "/bin/sh");
        env_set(&envp, &n, "LANG", "C.UTF-8");
        env_set(&envp, &n, "TMPDIR", "/tmp");
        const char *term = getenv("TERM");
        if (term && strlen(term) < 64 && !strchr(term, '/'))
                env_set(&envp, &n, "TERM", term);
        /* the sandbox's CA is in the view's bundle; these name it to the
         * clients that do not read the system's (before the policy's env,
         * which may name another) */
        static const char *const ca_vars[] = {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
                                              "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"};
        for (size_t i = 0; net_broker_ca_bundle(broker) && i < ELEMENTSOF(ca_vars); i++)
                env_set(&envp, &n, ca_vars[i], NET_CA_BUNDLE_PATH);
        for (size_t i = 0; i < o->policy->n_env; i++)
                env_set(&envp, &n, o->policy->env[i].key, o->policy->env[i].value);
        for (size_t i = 0; i < o->n_extra_env; i++) {
                char *kv = xstrdup(o->extra_env[i]);
                char *eq = strchr(kv, '=');
                *eq = '\0';
                env_set(&envp, &n, kv, eq + 1);
                free(kv);
        }
        /* a grant's variable holds its placeholder, never the secret (last:
         * --env cannot put anything else there) */
        for (size_t i = 0; broker && i < o->policy->n_credentials; i++)
                env_set(&envp, &n, o->policy->credentials[i].env, net_broker_placeholder(broker, i));
        return envp;
}

/* Refuses what this build cannot enforce yet, and "ask" rules that would
 * ask for nothing: a policy must not run with less isolation, or other
 * approvals, than it says. */
static int refuse_unsupported(const struct policy *p)
{
        const char *what = NULL;
        if (p->has_source && streq(p->source_kind, "snapshot"))
                what = "source kind \"snapshot\" (snapshots come with the sandbox lifecycle, issue #6)";
        if (what) {
                fprintf(stderr,
                        "cordon: the policy asks for %s, which this build of cordon cannot enforce yet; "
                        "refusing to run with less isolation than requested\n",
                        what);
                return -EOPNOTSUPP;
        }
        for (size_t i = 0; i < p->n_rules; i++) {
                const struct policy_path_rule *r = &p->rules[i];
                if (r->action != ACTION_ASK)
                        continue;
                /* an ask rule asks before writes (read-write) and execs
                 * (exec: true) beneath it; hidden has nothing to ask about,
                 * and a read rule without exec would ask for nothing */
                if (r->access == ACCESS_HIDDEN || (r->access == ACCESS_READ && r->exec != 1)) {
                        fprintf(stderr,
                                "cordon: filesystem.rules[%zu] (%s): \"action\": \"ask\" needs \"access\": "
                                "\"read-write\" (ask before writes) or \"exec\": true (ask before execs)\n",
                                i, r->path);
                        return PLAN_POLICY_ERROR;
                }
        }
        return 0;
}

/* A template source: the directory opened once, without following a
 * symlink (a template is a real directory; a link could be re-aimed after
 * the check), and its digest recomputed from that fd when the policy pins
 * one. The child mounts the same directory (idmapped from this very fd when
 * cordon runs as root; otherwise it reopens the path and checks it is the
 * same inode). What stays open: a host process that writes into the
 * template after the hash (SECURITY.md); the tree is pinned, its files are
 * not. PLAN_POLICY_ERROR: the policy cannot be run (exit 2), printed here. */
static int open_template(const struct policy *p, bool oci, int *ret_fd)
{
        const char *path = p->source_path;
        _cleanup_close_ int fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                int e = errno;
                /* an OCI root that is a symlink: runc refuses it too */
                fprintf(stderr, "cordon: %s %s: %s%s\n", oci ? "root.path" : "source.path", path, strerror(e),
                        e == ELOOP || e == ENOTDIR
                                ? (oci ? " (the root must be a directory, not a symlink or a file)"
                                       : " (a template must be a directory, not a symlink or a file)")
                                : "");
                return PLAN_POLICY_ERROR;
        }
        /* the host's whole tree as a template would hand the sandbox every
         * root-owned file (the lower layer is idmapped for root) */
        struct stat st, host_root;
        if (fstat(fd, &st) == 0 && stat("/", &host_root) == 0 && st.st_dev == host_root.st_dev &&
            st.st_ino == host_root.st_ino) {
                fprintf(stderr, "cordon: source.path %s is the host's root directory, which is no template\n", path);
                return PLAN_POLICY_ERROR;
        }
        if (p->source_digest) {
                char err[4352] = "", found[FS_DIGEST_SIZE];
                int r = fs_digest_tree(fd, err, sizeof(err), found);
                if (r < 0) {
                        fprintf(stderr, "cordon: source.digest: cannot compute the digest of the template %s: %s\n",
                                path, err[0] ? err : strerror(-r));
                        return PLAN_POLICY_ERROR;
                }
                if (!streq(found, p->source_digest)) {
                        fprintf(stderr,
                                "cordon: source.digest mismatch for the template %s: the policy expects %s, found %s; "
                                "refusing to start\n",
                                path, p->source_digest, found);
                        return PLAN_POLICY_ERROR;
                }
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* The credential grants' secrets, read now (before init's clone, into
 * memory it does not inherit) and their placeholders. PLAN_POLICY_ERROR
 * (exit 2) naming the grant and source that cannot be read. */
static int start_broker(const struct policy *pol, struct net_broker **ret)
{
        _cleanup_free_ struct net_grant *g = xcalloc(pol->n_credentials, sizeof(*g));
        for (size_t i = 0; i < pol->n_credentials; i++) {
                const struct policy_credential *c = &pol->credentials[i];
                g[i] = (struct net_grant){.env = c->env,
                                          .host = c->host,
                                          .port = c->port,
                                          .methods = c->methods,
                                          .n_methods = c->n_methods,
                                          .path_prefix = c->path_prefix,
                                          .header = c->header,
                                          .format = c->format,
                                          .source_file = c->source_file,
                                          .source_env = c->source_env,
                                          .expires_at = c->expires_at,
                                          .reason = c->reason,
                                          .ask = c->action == ACTION_ASK};
        }
        char why[512];
        int r = net_broker_new(g, pol->n_credentials, pol->expires_at, pol->net_testing.upstream_ca_file, ret, why,
                               sizeof(why));
        if (r < 0) {
                fprintf(stderr, "cordon: %s\n", why);
                return PLAN_POLICY_ERROR;
        }
        return 0;
}

/* Whether a path rule says anything about exec (exec: false, or an exec
 * that asks): then every exec is the sentry's to check. */
static bool plan_has_exec_rule(const struct fs_rule *rules, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (rules[i].exec == 0 || (rules[i].ask && rules[i].exec == 1))
                        return true;
        return false;
}

int sandbox_plan_build(const struct run_options *o, struct sandbox_plan *ret)
{
        struct sandbox_plan p = {0};
        int r = refuse_unsupported(o->policy);
        if (r < 0)
                return r;

        size_t argc = 0;
        while (o->argv && o->argv[argc])
                argc++;
        p.argv = xcalloc(argc + 1, sizeof(char *));
        for (size_t i = 0; i < argc; i++)
                p.argv[i] = xstrdup(o->argv[i]);
        if (o->policy->n_credentials > 0 && (r = start_broker(o->policy, &p.broker)) < 0) {
                sandbox_plan_done(&p);
                return r;
        }
        p.envp = build_env(o, p.broker);
        /* the caller's directory when no --cwd: tried by init in the view,
         * which alone knows whether it shows it (else the home) */
        p.cwd = xstrdup(o->cwd ? o->cwd : o->caller_cwd ? o->caller_cwd : HOME);
        p.cwd_fallback = !o->cwd && o->caller_cwd ? HOME : NULL;
        if (o->user_set) {
                p.user_set = true;
                p.user_uid = o->user_uid;
                p.user_gid = o->user_gid;
                p.user_origin = "--user";
        } else if (o->policy->has_user) {
                /* a front's runs (`cordon sandbox exec`, a container's
                 * process.user) have identities of their own: running them
                 * as the sandbox's root instead would be more than the
                 * policy grants */
                if (o->front) {
                        fprintf(stderr,
                                "cordon: the policy's \"user\" is honoured by `cordon run` only in this build%s; "
                                "refusing to run as another identity than it asks\n",
                                o->oci ? " (a container's identity is its process.user)" : "");
                        sandbox_plan_done(&p);
                        return PLAN_POLICY_ERROR;
                }
                p.user_set = true;
                p.user_uid = (uint32_t)o->policy->user_uid;
                p.user_gid = (uint32_t)o->policy->user_gid;
                p.user_origin = "the policy's \"user\"";
        }

        size_t nb = o->policy->n_binds + o->n_binds;
        p.binds = xcalloc(nb, sizeof(struct fs_bind));
        for (size_t i = 0; i < o->policy->n_binds; i++)
                p.binds[i] = (struct fs_bind){o->policy->binds[i].source, o->policy->binds[i].target,
                                              o->policy->binds[i].read_only};
        for (size_t i = 0; i < o->n_binds; i++)
                p.binds[o->policy->n_binds + i] =
                        (struct fs_bind){o->binds[i].source, o->binds[i].target, o->binds[i].read_only};
        for (size_t i = 0; i < nb; i++) {
                struct stat st;
                if (stat(p.binds[i].source, &st) < 0) {
                        fprintf(stderr, "cordon: bind source %s: %m\n", p.binds[i].source);
                        sandbox_plan_done(&p);
                        return -ENOENT;
                }
        }
        /* An OCI engine (root) names binds from its own private directories
         * (podman's userdata: hostname, .containerenv), which the sandbox's
         * identity may not enter: the sentry opens them, with the engine's
         * standing, as runc would. Any other caller's binds are opened by
         * init as the sandbox, so `cordon run --bind` never reaches further
         * than the sandbox's own identity could. */
        if (o->oci && nb > 0) {
                p.bind_fds = xcalloc(nb, sizeof(int));
                for (size_t i = 0; i < nb; i++)
                        p.bind_fds[i] = -1;
                for (size_t i = 0; i < nb; i++) {
                        /* a detached copy: init lives in another mount
                         * namespace, where only such a tree can be bound */
                        p.bind_fds[i] = (int)syscall(SYS_open_tree, AT_FDCWD, p.binds[i].source,
                                                     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
                        if (p.bind_fds[i] < 0) {
                                fprintf(stderr, "cordon: bind source %s: %m\n", p.binds[i].source);
                                p.n_bind_fds = i;
                                sandbox_plan_done(&p);
                                return -ENOENT;
                        }
                }
                p.n_bind_fds = nb;
        }
        p.rules = xcalloc(o->policy->n_rules, sizeof(struct fs_rule));
        for (size_t i = 0; i < o->policy->n_rules; i++) {
                const struct policy_path_rule *pr = &o->policy->rules[i];
                enum fs_access acc = pr->access == ACCESS_HIDDEN   ? FS_HIDDEN
                                     : pr->access == ACCESS_MASKED ? FS_MASKED
                                     : pr->access == ACCESS_READ   ? FS_READ
                                                                   : FS_READ_WRITE;
                p.rules[i] = (struct fs_rule){pr->path, acc, pr->exec, pr->action == ACTION_ASK};
        }
        p.view = (struct fs_view_spec){.binds = p.binds,
                                       .bind_fds = p.bind_fds,
                                       .n_binds = nb,
                                       .rules = p.rules,
                                       .n_rules = o->policy->n_rules,
                                       .home = HOME,
                                       .resolv_conf =
                                               o->oci && o->oci->resolv_conf ? o->oci->resolv_conf : net_resolv_conf,
                                       .hosts = net_hosts,
                                       .ca_bundle = net_broker_ca_bundle(p.broker),
                                       .template_fd = -1,
                                       .template_tree_fd = -1,
                                       .proc_tree_fd = -1,
                                       .shm_tree_fd = -1};
        if (o->policy->has_source) {
                int fd;
                r = open_template(o->policy, o->oci != NULL, &fd);
                if (r < 0) {
                        sandbox_plan_done(&p);
                        return r;
                }
                p.view.template_fd = fd;
                p.view.template_path = o->policy->source_path;
        }
        /* a working directory asked for by name is refused where the view
         * hides it (init checks again where it resolves to) */
        const char *hider = p.cwd_fallback ? NULL : fs_view_hidden_by(&p.view, p.cwd);
        if (hider) {
                fprintf(stderr, "cordon: the working directory %s is hidden in the sandbox's view (by %s)\n", p.cwd,
                        hider);
                sandbox_plan_done(&p);
                return PLAN_POLICY_ERROR;
        }

        /* The path rows the mount view decides alone stay out of the filter
         * unless --trap-all asks for full emulation or a hidden rule needs
         * every path call checked (DESIGN.md, "Trap only what the policy
         * needs"). */
        size_t n_all;
        (void)sentry_syscall_table(&n_all);
        /* a write "ask" rule needs every call that changes the file system
         * seen by the sentry (it asks before them), as a hidden rule needs
         * every path call: neither is left native. Opens and execs are
         * always trapped; calls that only read stay native under ask. */
        for (size_t i = 0; i < o->policy->n_rules; i++)
                p.trap_writes = p.trap_writes || (p.rules[i].ask && p.rules[i].access == FS_READ_WRITE);
        p.trap_paths = o->trap_all || fs_rules_have_hidden(p.rules, o->policy->n_rules);
        p.table = xcalloc(n_all, sizeof(struct syscall_entry));
        p.n_table = sentry_syscall_select_rows(p.trap_paths, p.trap_writes, false, p.table, n_all);
        const char *bad = NULL;
        /* compiled at build time from the same rows where the binary has
         * it (sentry/prebuilt.h), else now */
        if (sentry_prebuilt_sandbox && sentry_prebuilt_sandbox(p.trap_paths, p.trap_writes, false, &p.filter))
                r = 0;
        else
                r = notify_filter_build(p.table, p.n_table, &p.filter, &bad);
        /* Execs may run natively when nothing about them needs the sentry:
         * no path trapped (--trap-all, hidden rules), no exec rule. Whether
         * they do is init's to say, once it knows the view's own floors are
         * in force (Landlock's execute right, the sandbox's own binfmt_misc:
         * init.c), so it gets both filters. The engine serves the union of
         * the two tables: a row of the filter not installed never fires. */
        if (r >= 0 && !p.trap_paths && !plan_has_exec_rule(p.rules, o->policy->n_rules)) {
                struct syscall_entry *native = xcalloc(n_all, sizeof(struct syscall_entry));
                size_t n_native = sentry_syscall_select_rows(p.trap_paths, p.trap_writes, true, native, n_all);
                if (sentry_prebuilt_sandbox &&
                    sentry_prebuilt_sandbox(p.trap_paths, p.trap_writes, true, &p.filter_native_exec))
                        r = 0;
                else
                        r = notify_filter_build(native, n_native, &p.filter_native_exec, &bad);
                for (size_t i = 0; i < n_native; i++)
                        if (native[i].flags & SC_F_EXEC_NATIVE)
                                p.table[p.n_table++] = native[i];
                free(native);
        }
        if (r < 0) {
                fprintf(stderr, "cordon: cannot build the seccomp filter (row %s): %s\n", bad ? bad : "?",
                        strerror(-r));
                sandbox_plan_done(&p);
                return r;
        }

        switch (o->tty) {
        case TTY_ALWAYS:
                p.use_tty = true;
                break;
        case TTY_NEVER:
                p.use_tty = false;
                break;
        case TTY_AUTO:
                p.use_tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
                break;
        }
        p.max_open_files = POLICY_UNSET;
        p.serve_runs = o->front != NULL;
        p.oci = o->oci;
        /* what the sandbox's root holds inside its user namespace */
        p.caps = o->policy->has_caps ? o->policy->caps : POLICY_DEFAULT_CAPS;
        /* an OCI container: its bounding set (which create checked against
         * the refused list), within what a policy that lists capabilities
         * grants */
        if (o->oci) {
                p.caps = (o->policy->has_caps ? o->policy->caps : ~UINT64_C(0)) & o->oci->cap_bounding;
                p.view.root_readonly = o->oci->root_readonly;
                /* what it writes to its root is its engine's (podman cp,
                 * diff, commit, build), as with runc: a read-only root has
                 * no writable layer at all */
                p.view.root_write_through = !o->oci->root_readonly;
                p.view.dev_mounts = o->oci->dev_mounts;
                p.view.n_dev_mounts = o->oci->n_dev_mounts;
                p.view.dev_data = o->oci->dev_data;
                /* the engine's /dev/shm (oci_sandbox.shm_source): a
                 * detached copy, as the binds are, for init's namespace */
                if (o->oci->shm_source &&
                    (p.view.shm_tree_fd = (int)syscall(SYS_open_tree, AT_FDCWD, o->oci->shm_source,
                                                       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) < 0) {
                        fprintf(stderr, "cordon: /dev/shm source %s: %m\n", o->oci->shm_source);
                        sandbox_plan_done(&p);
                        return -ENOENT;
                }
                p.view.mount_points = o->oci->mount_points;
                p.view.n_mount_points = o->oci->n_mounts;
        }
        *ret = p;
        return 0;
}

void sandbox_plan_done(struct sandbox_plan *p)
{
        if (p->argv)
                for (char **a = p->argv; *a; a++)
                        free(*a);
        free(p->argv);
        if (p->envp)
                for (char **e = p->envp; *e; e++)
                        free(*e);
        free(p->envp);
        free(p->cwd);
        free(p->binds);
        for (size_t i = 0; i < p->n_bind_fds; i++)
                if (p->bind_fds[i] >= 0)
                        close(p->bind_fds[i]);
        if (p->view.shm_tree_fd >= 0)
                close(p->view.shm_tree_fd);
        p->view.shm_tree_fd = -1;
        free(p->bind_fds);
        free(p->rules);
        free(p->table);
        free(p->filter.filter);
        free(p->filter_native_exec.filter);
        /* the fds are ours only once template_path is set (a zeroed plan has fd 0 there) */
        if (p->view.template_path && p->view.template_fd >= 0)
                close(p->view.template_fd);
        if (p->view.template_path && p->view.template_tree_fd >= 0)
                close(p->view.template_tree_fd);
        net_broker_free(p->broker);
        memset(p, 0, sizeof(*p));
}
