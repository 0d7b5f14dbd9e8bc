/* The verbs that leave every container as it is: state (the OCI state
 * document), list, ps (the pids in the sandbox's cgroups, shown by ps(1)),
 * features (what this runtime supports, in runc's document) and spec (a
 * starting config.json, written only where there is none). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "common/util.h"
#include "sentry/oci/oci.h"
#include "sentry/oci/runtime-internal.h"
#include "sentry/sandbox/sandbox.h"

int oci_cmd_state(int argc, char **argv)
{
        struct container c;
        int ec = oci_lookup_one(argc, argv, "state", &c);
        if (ec != 0)
                return ec;
        json_t *doc = oci_state_doc(&c, oci_container_status(&c));
        json_dumpf(doc, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(doc);
        oci_container_close(&c);
        return 0;
}

/* --format json|table (also -f, and --format=json): true when argv[*i] is
 * one, *i then at its last word; *json set for json. */
static bool format_option(int argc, char **argv, int *i, bool *json)
{
        if (streq(argv[*i], "--format=json") || streq(argv[*i], "-f=json") ||
            ((streq(argv[*i], "--format") || streq(argv[*i], "-f")) && *i + 1 < argc && streq(argv[*i + 1], "json") &&
             ++*i)) {
                *json = true;
                return true;
        }
        if ((streq(argv[*i], "--format") || streq(argv[*i], "-f")) && *i + 1 < argc && streq(argv[*i + 1], "table")) {
                ++*i;
                return true;
        }
        return false;
}

int oci_cmd_list(int argc, char **argv)
{
        bool json = false, quiet = false;
        for (int i = 1; i < argc; i++) {
                if (format_option(argc, argv, &i, &json))
                        continue;
                if (streq(argv[i], "-q") || streq(argv[i], "--quiet"))
                        quiet = true;
                else {
                        oci_error("list: unknown option %s", argv[i]);
                        return EXIT_USAGE;
                }
        }
        json_t *all = json_array();
        DIR *d = opendir(oci_G.root);
        struct dirent *de;
        while (d && (de = readdir(d))) {
                if (de->d_name[0] == '.' || !oci_container_id_valid(de->d_name))
                        continue;
                struct container c;
                if (oci_container_open(de->d_name, &c) < 0)
                        continue;
                const char *status = oci_container_status(&c);
                json_t *doc = oci_state_doc(&c, status);
                json_object_set_new(doc, "rootfs",
                                    json_string(oci_st_str(&c, "rootfs") ? oci_st_str(&c, "rootfs") : ""));
                json_object_set_new(doc, "created",
                                    json_string(oci_st_str(&c, "created") ? oci_st_str(&c, "created") : ""));
                json_object_set_new(
                        doc, "owner",
                        json_string(json_integer_value(json_object_get(c.state, "owner")) ? "user" : "root"));
                json_array_append_new(all, doc);
                oci_container_close(&c);
        }
        if (d)
                closedir(d);
        size_t i;
        json_t *v;
        if (json) {
                json_dumpf(all, stdout, JSON_COMPACT);
                putchar('\n');
        } else if (quiet) {
                json_array_foreach(all, i, v) printf("%s\n", json_string_value(json_object_get(v, "id")));
        } else {
                printf("%-20s %-8s %-10s %-40s %-31s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
                json_array_foreach(all, i, v)
                {
                        printf("%-20s %-8lld %-10s %-40s %-31s %s\n", json_string_value(json_object_get(v, "id")),
                               (long long)json_integer_value(json_object_get(v, "pid")),
                               json_string_value(json_object_get(v, "status")),
                               json_string_value(json_object_get(v, "bundle")),
                               json_string_value(json_object_get(v, "created")),
                               json_string_value(json_object_get(v, "owner")));
                }
        }
        json_decref(all);
        return 0;
}

/* Every pid in the cgroup tree under dir (the sandbox's cgroup). */
static void collect_pids(const char *dir, json_t *pids, int depth)
{
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        long long pid;
        while (f && fscanf(f, "%lld", &pid) == 1)
                json_array_append_new(pids, json_integer(pid));
        if (depth > 8)
                return;
        DIR *d = opendir(dir);
        struct dirent *de;
        while (d && (de = readdir(d)))
                if (de->d_type == DT_DIR && de->d_name[0] != '.') {
                        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                        collect_pids(path, pids, depth + 1);
                }
        if (d)
                closedir(d);
}

int oci_cmd_ps(int argc, char **argv)
{
        bool json = false;
        const char *id = NULL;
        char **ps_args = NULL;
        for (int i = 1; i < argc; i++) {
                if (format_option(argc, argv, &i, &json))
                        continue;
                if (!id && argv[i][0] != '-')
                        id = argv[i];
                else if (id) {
                        ps_args = argv + i;
                        break;
                } else {
                        oci_error("ps: unknown option %s", argv[i]);
                        return EXIT_USAGE;
                }
        }
        if (!id) {
                oci_error("ps: usage: ps [--format table|json] ID [ps options]");
                return EXIT_USAGE;
        }
        struct container c;
        if (oci_lookup(id, &c) < 0)
                return 1;
        json_t *pids = json_array();
        if (!streq(oci_container_status(&c), "stopped")) {
                char dir[600], path[700];
                json_error_t jerr;
                if (sandbox_dir(oci_st_str(&c, "sandbox"), dir, sizeof(dir)) == 0) {
                        snprintf(path, sizeof(path), "%s/state.json", dir);
                        json_t *sst = json_load_file(path, 0, &jerr);
                        size_t i;
                        json_t *cg;
                        json_array_foreach(json_object_get(sst, "cgroups"), i, cg)
                        {
                                const char *cgdir = json_string_value(cg);
                                char probe[PATH_MAX];
                                snprintf(probe, sizeof(probe), "%s/cgroup.procs", cgdir ? cgdir : "");
                                if (cgdir && access(probe, F_OK) == 0) {
                                        collect_pids(cgdir, pids, 0);
                                        break;
                                }
                        }
                        json_decref(sst);
                }
        }
        oci_container_close(&c);
        if (json) {
                json_dumpf(pids, stdout, JSON_COMPACT);
                putchar('\n');
                json_decref(pids);
                return 0;
        }
        /* the table is ps(1)'s own, for these pids */
        size_t n = json_array_size(pids), i;
        json_t *v;
        char *list = xstrdup("");
        json_array_foreach(pids, i, v)
        {
                char *next = xasprintf("%s%s%lld", list, i ? "," : "", (long long)json_integer_value(v));
                free(list);
                list = next;
        }
        json_decref(pids);
        if (n == 0) {
                free(list);
                printf("UID          PID    PPID  C STIME TTY          TIME CMD\n");
                return 0;
        }
        size_t extra = 0;
        while (ps_args && ps_args[extra])
                extra++;
        char **args = xcalloc(extra + 5, sizeof(char *));
        size_t k = 0;
        args[k++] = (char *)"ps";
        if (extra == 0)
                args[k++] = (char *)"-f";
        for (size_t e = 0; e < extra; e++)
                args[k++] = ps_args[e];
        args[k++] = (char *)"-p";
        args[k++] = list;
        fflush(NULL);
        execvp("ps", args);
        oci_error("ps: cannot run ps(1): %s", strerror(errno));
        return 1;
}

/* --- features, spec --- */

int oci_cmd_features(void)
{
        json_t *ns = json_pack("[sssssss]", "cgroup", "ipc", "mount", "network", "pid", "user", "uts");
        json_t *actions = json_pack("[sssssss]", "SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL",
                                    "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG", "SCMP_ACT_TRAP");
        json_array_append_new(actions, json_string("SCMP_ACT_TRACE"));
        json_t *ops = json_pack("[sssssss]", "SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_LE", "SCMP_CMP_LT",
                                "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE");
        /* the options config.c reads (sentry/oci/config.c's mount_opts, and tmpcopyup) */
        static const char *const mount_options[] = {
                "defaults",      "ro",         "rw",          "suid",       "nosuid",      "dev",        "nodev",
                "exec",          "noexec",     "sync",        "async",      "dirsync",     "mand",       "nomand",
                "atime",         "noatime",    "diratime",    "nodiratime", "relatime",    "norelatime", "strictatime",
                "nostrictatime", "lazytime",   "nolazytime",  "silent",     "loud",        "iversion",   "noiversion",
                "bind",          "rbind",      "private",     "rprivate",   "shared",      "rshared",    "slave",
                "rslave",        "unbindable", "runbindable", "tmpcopyup",  "notmpcopyup",
        };
        json_t *mopts = json_array();
        for (size_t i = 0; i < ELEMENTSOF(mount_options); i++)
                json_array_append_new(mopts, json_string(mount_options[i]));
        json_t *doc = json_pack(
                "{s:s, s:s, s:[ssss], s:o, s:{s:o, s:[], s:{s:b, s:b, s:b, s:b}, s:{s:b, s:o, s:o, "
                "s:[ss], s:[sss]}, s:{s:b}, s:{s:b}}, s:{s:s, s:s, s:s}}",
                "ociVersionMin", "1.0.0", "ociVersionMax", OCI_SPEC_VERSION, "hooks", "prestart", "createRuntime",
                "poststart", "poststop", "mountOptions", mopts, "linux", "namespaces", ns, "capabilities", "cgroup",
                "v1", 1, "v2", 1, "systemd", 0, "systemdUser", 0, "seccomp", "enabled", 1, "actions", actions,
                "operators", ops, "archs", "SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64", "knownFlags",
                "SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW", "apparmor",
                "enabled", 0, "selinux", "enabled", 0, "annotations", OCI_POLICY_ANNOTATION,
                "cordon policy for the container: a path to a policy file or inline JSON; without it, no egress",
                "dev.cordon.capabilities",
                "process.capabilities apply within the container's user namespace; one cordon refuses fails "
                "create (NET_RAW is held: raw and packet sockets stay refused)",
                "dev.cordon.namespaces",
                "a network namespace an engine prepared and a Kubernetes pod's network, ipc and uts "
                "namespaces are joined; other namespace paths are refused");
        if (!doc) {
                oci_error("features: cannot build the document");
                return 1;
        }
        json_dumpf(doc, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(doc);
        return 0;
}

int oci_cmd_spec(int argc, char **argv)
{
        const char *bundle = ".";
        bool rootless = false;
        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "--rootless"))
                        rootless = true;
                else if ((streq(argv[i], "--bundle") || streq(argv[i], "-b")) && i + 1 < argc)
                        bundle = argv[++i];
                else if (startswith(argv[i], "--bundle="))
                        bundle = argv[i] + 9;
                else {
                        oci_error("spec: unknown option %s", argv[i]);
                        return EXIT_USAGE;
                }
        }
        json_t *mounts = json_pack(
                "[{s:s, s:s, s:s}, {s:s, s:s, s:s, s:[ssss]}, {s:s, s:s, s:s, s:[ssssss]}, {s:s, s:s, s:s, "
                "s:[ssss]}, {s:s, s:s, s:s, s:[sss]}]",
                "destination", "/proc", "type", "proc", "source", "proc", "destination", "/dev", "type", "tmpfs",
                "source", "tmpfs", "options", "nosuid", "strictatime", "mode=755", "size=65536k", "destination",
                "/dev/pts", "type", "devpts", "source", "devpts", "options", "nosuid", "noexec", "newinstance",
                "ptmxmode=0666", "mode=0620", rootless ? "mode=0620" : "gid=5", "destination", "/dev/shm", "type",
                "tmpfs", "source", "shm", "options", "nosuid", "noexec", "nodev", "mode=1777", "destination",
                "/dev/mqueue", "type", "mqueue", "source", "mqueue", "options", "nosuid", "noexec", "nodev");
        json_array_append_new(mounts, json_pack("{s:s, s:s, s:s, s:[ssss]}", "destination", "/sys", "type", "sysfs",
                                                "source", "sysfs", "options", "nosuid", "noexec", "nodev", "ro"));
        json_t *nss = json_pack("[{s:s}, {s:s}, {s:s}, {s:s}, {s:s}]", "type", "pid", "type", "ipc", "type", "uts",
                                "type", "mount", "type", "cgroup");
        if (rootless)
                json_array_append_new(nss, json_pack("{s:s}", "type", "user"));
        else
                json_array_append_new(nss, json_pack("{s:s}", "type", "network"));
        json_t *doc = json_pack(
                "{s:s, s:{s:b, s:{s:i, s:i}, s:[s], s:[ss], s:s, s:[{s:s, s:i, s:i}], s:b}, s:{s:s, s:b}, s:s, "
                "s:o, s:{s:o, s:[sssssssss], s:[ssssss]}}",
                "ociVersion", OCI_SPEC_VERSION, "process", "terminal", 1, "user", "uid", 0, "gid", 0, "args", "sh",
                "env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm", "cwd", "/",
                "rlimits", "type", "RLIMIT_NOFILE", "hard", 1024, "soft", 1024, "noNewPrivileges", 1, "root", "path",
                "rootfs", "readonly", 1, "hostname", "cordon", "mounts", mounts, "linux", "namespaces", nss,
                "maskedPaths", "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "readonlyPaths",
                "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", "/proc/scsi");
        if (rootless) {
                json_object_set_new(
                        json_object_get(doc, "linux"), "uidMappings",
                        json_pack("[{s:i, s:i, s:i}]", "containerID", 0, "hostID", (int)getuid(), "size", 1));
                json_object_set_new(
                        json_object_get(doc, "linux"), "gidMappings",
                        json_pack("[{s:i, s:i, s:i}]", "containerID", 0, "hostID", (int)getgid(), "size", 1));
        }
        char *text = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
        json_decref(doc);
        _cleanup_close_ int dfd = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int fd =
                dfd >= 0 ? openat(dfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644) : -1;
        if (!text || fd < 0) {
                oci_error("spec: %s/config.json: %s", bundle, errno == EEXIST ? "File exists" : strerror(errno));
                free(text);
                return 1;
        }
        size_t n = strlen(text);
        text = xrealloc(text, n + 2);
        text[n] = '\n';
        int r = write_all(fd, text, n + 1);
        free(text);
        return r < 0 ? 1 : 0;
}
