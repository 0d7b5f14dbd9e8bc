/* Unit tests for the OCI config parser and its translations (sentry/oci/config.c,
 * linux.c, seccomp.c, policy.c): the configs runc spec, crun spec and podman 4.3
 * really write (tests/unit/data/oci/) parse to the values they say; invalid documents, one
 * table row each, fail with a message naming the JSON path; the policy built from a config;
 * and seccomp profiles compiled and loaded for real in a forked child. */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/util.h"
#include "sentry/oci/oci.h"
#include "sentry/policy/policy.h"

#define BUNDLE "/srv/bundle"
#define ORIGIN BUNDLE "/config.json"

/* The smallest valid config; rows splice their fields into it. */
#define MIN_HEAD "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"}"
#define MIN_PROC "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}"
#define MIN      MIN_HEAD ", " MIN_PROC "}"
/* a document with MIN's head and process plus X at the top level */
#define WITH(x)    MIN_HEAD ", " MIN_PROC ", " x "}"
#define LINUX(x)   WITH("\"linux\": {" x "}")
#define PROC(x)    MIN_HEAD ", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", " x "}}"
#define SECCOMP(x) LINUX("\"seccomp\": {" x "}")

static char *read_data(const char *name, size_t *ret_len)
{
        const char *srcdir = getenv("TESTS_SRCDIR");
        _cleanup_free_ char *path = xasprintf("%s/unit/data/oci/%s", srcdir ? srcdir : "../tests", name);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        char *buf;

        ck_assert_msg(fd >= 0, "cannot open %s: %m (set TESTS_SRCDIR)", path);
        ck_assert_int_eq(fstat(fd, &st), 0);
        buf = xmalloc((size_t)st.st_size + 1);
        ck_assert_int_eq(read_full(fd, buf, (size_t)st.st_size), st.st_size);
        buf[st.st_size] = '\0';
        *ret_len = (size_t)st.st_size;
        return buf;
}

static struct oci_spec *parse_ok(const char *json, size_t len)
{
        struct oci_spec *s = NULL;
        char *err = NULL;
        int r = oci_spec_parse(json, len, BUNDLE, &s, &err);
        ck_assert_msg(r == 0, "expected success, got %d: %s", r, err ? err : "");
        ck_assert_ptr_nonnull(s);
        ck_assert_ptr_null(err);
        return s;
}

static struct oci_spec *load_data(const char *name)
{
        size_t len;
        _cleanup_free_ char *buf = read_data(name, &len);
        return parse_ok(buf, len);
}

static const struct oci_mount *find_mount(const struct oci_spec *s, const char *dest)
{
        for (size_t i = 0; i < s->n_mounts; i++)
                if (streq(s->mounts[i].destination, dest))
                        return &s->mounts[i];
        ck_abort_msg("no mount on %s", dest);
        return NULL;
}

static bool has_ns(const struct oci_spec *s, int type, const char *path)
{
        for (size_t i = 0; i < s->n_namespaces; i++)
                if (s->namespaces[i].type == type)
                        return path ? s->namespaces[i].path && streq(s->namespaces[i].path, path)
                                    : s->namespaces[i].path == NULL;
        return false;
}

static size_t strv_len(char **v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

#define CAP(x) (UINT64_C(1) << (x))

/* ---- the real configs ---- */

START_TEST(test_runc_spec)
{
        struct oci_spec *s = load_data("runc-spec.json");

        ck_assert_str_eq(s->oci_version, "1.0.2-dev");
        ck_assert_str_eq(s->bundle, BUNDLE);
        ck_assert_str_eq(s->root_path, BUNDLE "/rootfs");
        ck_assert(s->root_readonly);
        ck_assert_str_eq(s->hostname, "runc");
        ck_assert(s->has_process);
        ck_assert(s->process.terminal);
        ck_assert_str_eq(s->process.args[0], "sh");
        ck_assert_ptr_null(s->process.args[1]);
        ck_assert_str_eq(s->process.cwd, "/");
        ck_assert_uint_eq(strv_len(s->process.env), 2);
        ck_assert_str_eq(s->process.env[1], "TERM=xterm");
        ck_assert_uint_eq(s->process.user.uid, 0);
        ck_assert(!s->process.user.has_umask);
        ck_assert(s->process.no_new_privileges);
        uint64_t caps = CAP(CAP_AUDIT_WRITE) | CAP(CAP_KILL) | CAP(CAP_NET_BIND_SERVICE);
        ck_assert_uint_eq(s->process.caps.bounding, caps);
        ck_assert_uint_eq(s->process.caps.ambient, caps);
        ck_assert_uint_eq(s->process.caps.inheritable, 0);
        ck_assert_uint_eq(s->process.n_rlimits, 1);
        ck_assert_int_eq(s->process.rlimits[0].resource, RLIMIT_NOFILE);
        ck_assert_uint_eq(s->process.rlimits[0].soft, 1024);

        ck_assert_uint_eq(s->n_mounts, 7);
        const struct oci_mount *m = find_mount(s, "/dev");
        ck_assert_str_eq(m->type, "tmpfs");
        ck_assert_uint_eq(m->flags, MS_NOSUID | MS_STRICTATIME);
        ck_assert_str_eq(m->data, "mode=755,size=65536k");
        m = find_mount(s, "/dev/pts");
        ck_assert_str_eq(m->data, "newinstance,ptmxmode=0666,mode=0620,gid=5");
        ck_assert_uint_eq(m->flags, MS_NOSUID | MS_NOEXEC);
        m = find_mount(s, "/sys");
        ck_assert_str_eq(m->type, "sysfs");
        ck_assert_uint_eq(m->flags, MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RDONLY);
        m = find_mount(s, "/sys/fs/cgroup");
        ck_assert_uint_eq(m->flags, MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RELATIME | MS_RDONLY);
        ck_assert_ptr_null(m->data);

        ck_assert_uint_eq(s->n_namespaces, 5);
        ck_assert(has_ns(s, CLONE_NEWPID, NULL) && has_ns(s, CLONE_NEWNET, NULL) && has_ns(s, CLONE_NEWIPC, NULL) &&
                  has_ns(s, CLONE_NEWUTS, NULL) && has_ns(s, CLONE_NEWNS, NULL));
        ck_assert_uint_eq(strv_len(s->masked_paths), 10);
        ck_assert_str_eq(s->masked_paths[0], "/proc/acpi");
        ck_assert_uint_eq(strv_len(s->readonly_paths), 5);
        ck_assert_int_eq(s->resources.memory_limit, -1);
        ck_assert_int_eq(s->resources.pids_limit, -1);
        ck_assert_int_eq(s->resources.cpu_quota, -1);
        ck_assert_ptr_null(s->seccomp);
        ck_assert_uint_eq(s->n_annotations, 0);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_runc_spec_rootless)
{
        struct oci_spec *s = load_data("runc-spec-rootless.json");
        const struct oci_mount *m = find_mount(s, "/sys");

        /* type "none" with rbind: a bind, as runc reads it */
        ck_assert_str_eq(m->type, "bind");
        ck_assert_str_eq(m->source, "/sys");
        ck_assert_uint_eq(m->flags & (MS_BIND | MS_REC | MS_RDONLY), MS_BIND | MS_REC | MS_RDONLY);
        ck_assert(has_ns(s, CLONE_NEWUSER, NULL));
        ck_assert(!has_ns(s, CLONE_NEWNET, NULL));
        ck_assert_uint_eq(s->n_uid_mappings, 1);
        ck_assert_uint_eq(s->uid_mappings[0].size, 1);
        ck_assert_uint_eq(s->n_gid_mappings, 1);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_crun_spec)
{
        struct oci_spec *s = load_data("crun-spec.json");
        ck_assert_str_eq(s->oci_version, "1.0.0");
        ck_assert_str_eq(s->hostname, "crun");
        ck_assert_uint_eq(s->process.caps.inheritable, 0);
        ck_assert_uint_eq(s->n_mounts, 7);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_podman_run)
{
        struct oci_spec *s = load_data("podman-run.json");

        ck_assert(!s->root_readonly);
        ck_assert(startswith(s->root_path, "/var/lib/containers/storage/overlay/"));
        ck_assert(!s->process.terminal);
        ck_assert(s->process.user.has_umask);
        ck_assert_uint_eq(s->process.user.umask, 022);
        ck_assert_uint_eq(s->process.n_rlimits, 2);
        ck_assert_int_eq(s->process.rlimits[1].resource, RLIMIT_NPROC);
        ck_assert_uint_eq(s->process.rlimits[1].hard, 32768);
        ck_assert(s->process.caps.bounding & CAP(CAP_SYS_CHROOT));
        ck_assert(!(s->process.caps.bounding & CAP(CAP_SYS_ADMIN)));
        ck_assert(!s->process.no_new_privileges);
        ck_assert_uint_eq(s->n_namespaces, 5);
        ck_assert_uint_eq(s->n_sysctls, 1);
        ck_assert_str_eq(s->sysctls[0].key, "net.ipv4.ping_group_range");
        ck_assert_str_eq(s->sysctls[0].value, "0 0");
        ck_assert_int_eq(s->resources.pids_limit, 2048);
        ck_assert_ptr_nonnull(s->cgroups_path);
        ck_assert_ptr_nonnull(s->seccomp);
        ck_assert_uint_eq(s->seccomp->default_action, SCMP_ACT_ERRNO(ENOSYS));
        ck_assert_uint_eq(s->seccomp->n_arches, 3);
        ck_assert_uint_eq(s->seccomp->arches[0], SCMP_ARCH_X86_64);
        ck_assert_str_eq(oci_annotation(s, "io.container.manager"), "libpod");
        ck_assert_ptr_null(oci_annotation(s, OCI_POLICY_ANNOTATION));
        const struct oci_mount *m = find_mount(s, "/etc/hosts");
        ck_assert_str_eq(m->type, "bind");
        ck_assert_uint_eq(m->propagation, MS_PRIVATE | MS_REC);
        ck_assert(!(m->flags & MS_RDONLY));
        oci_spec_free(s);
}
END_TEST

START_TEST(test_podman_run_limits)
{
        /* podman run -t --memory 64m --pids-limit 50 --cpus 0.5 --user 1000 -e FOO=bar -w /tmp
         *   -v vol:/vol:ro --read-only --cap-add SYS_ADMIN --hostname h1 */
        struct oci_spec *s = load_data("podman-run-limits.json");

        ck_assert(s->root_readonly);
        ck_assert(s->process.terminal);
        ck_assert_uint_eq(s->process.user.uid, 1000);
        ck_assert_uint_eq(s->process.user.n_additional_gids, 1);
        ck_assert_str_eq(s->process.cwd, "/tmp");
        ck_assert_str_eq(s->process.env[3], "FOO=bar");
        ck_assert_str_eq(s->hostname, "h1");
        ck_assert_uint_eq(s->process.caps.effective, CAP(CAP_SYS_ADMIN));
        ck_assert_int_eq(s->resources.memory_limit, 64 << 20);
        ck_assert_int_eq(s->resources.memory_swap, 128 << 20);
        ck_assert_int_eq(s->resources.pids_limit, 50);
        ck_assert_int_eq(s->resources.cpu_quota, 50000);
        ck_assert_uint_eq(s->resources.cpu_period, 100000);
        const struct oci_mount *m = find_mount(s, "/vol");
        ck_assert_str_eq(m->source, "/tmp/ocispec/vol");
        ck_assert(m->flags & MS_RDONLY);
        m = find_mount(s, "/tmp");
        ck_assert_str_eq(m->type, "tmpfs");
        ck_assert(m->tmpcopyup);
        ck_assert_ptr_null(m->data);
        ck_assert_uint_eq(m->flags, MS_NOSUID | MS_NODEV);
        ck_assert(has_ns(s, CLONE_NEWNET, s->namespaces[1].path));
        ck_assert(startswith(s->namespaces[1].path, "/run/netns/"));
        oci_spec_free(s);
}
END_TEST

START_TEST(test_podman_run_unlimited)
{
        /* podman run --ulimit core=-1:-1 --annotation dev.cordon.policy=FILE --security-opt seccomp=unconfined
         *   --cap-drop all --sysctl net.ipv4.ip_unprivileged_port_start=0 --tmpfs /scratch:size=10m,mode=1777
         *   --device /dev/null */
        struct oci_spec *s = load_data("podman-run-unlimited.json");

        ck_assert_int_eq(s->process.rlimits[2].resource, RLIMIT_CORE);
        ck_assert_uint_eq(s->process.rlimits[2].soft, UINT64_MAX);
        ck_assert_uint_eq(s->process.rlimits[2].hard, UINT64_MAX);
        ck_assert_uint_eq(s->process.caps.bounding, 0);
        ck_assert_ptr_null(s->seccomp);
        ck_assert_uint_eq(s->n_sysctls, 2);
        ck_assert_str_eq(oci_annotation(s, OCI_POLICY_ANNOTATION), "/tmp/ocispec/p250.json");
        const struct oci_mount *m = find_mount(s, "/scratch");
        ck_assert_str_eq(m->data, "size=10m,mode=1777");
        ck_assert(m->tmpcopyup);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_podman_run_device_refused)
{
        /* podman run --device /dev/null:/dev/mynull: a device cordon's /dev does not have */
        size_t len;
        _cleanup_free_ char *buf = read_data("podman-run-device.json", &len);
        struct oci_spec *s = NULL;
        char *err = NULL;

        ck_assert_int_eq(oci_spec_parse(buf, len, BUNDLE, &s, &err), -EINVAL);
        ck_assert_msg(startswith(err, ORIGIN ": linux.devices[0]: device \"/dev/mynull\" is not supported"), "%s", err);
        free(err);
}
END_TEST

START_TEST(test_containerd_run)
{
        /* ctr run --runc-binary ... --memory-limit 67108864 --env FOO=bar IMAGE ID /bin/echo hi */
        struct oci_spec *s = load_data("containerd-run.json");

        ck_assert_str_eq(s->root_path, BUNDLE "/rootfs");
        ck_assert(!s->root_readonly);
        ck_assert_str_eq(s->process.args[1], "hi");
        ck_assert_str_eq(s->process.env[1], "FOO=bar");
        ck_assert(s->process.caps.bounding & CAP(CAP_MKNOD));
        ck_assert(s->process.caps.bounding & CAP(CAP_NET_RAW));
        ck_assert(s->process.no_new_privileges);
        ck_assert_int_eq(s->resources.memory_limit, 64 << 20);
        ck_assert_uint_eq(s->resources.cpu_shares, 1024);
        ck_assert_str_eq(s->cgroups_path, "/t/c1");
        ck_assert_ptr_null(s->seccomp);
        ck_assert_str_eq(find_mount(s, "/run")->type, "tmpfs");
        oci_spec_free(s);
}
END_TEST

START_TEST(test_containerd_run_seccomp)
{
        /* ctr run ... --seccomp --read-only --cpus 0.5 --cap-add CAP_SYS_ADMIN --cwd /tmp --mount ...,options=rbind:ro
         */
        struct oci_spec *s = load_data("containerd-run-seccomp.json");

        ck_assert(s->root_readonly);
        ck_assert_str_eq(s->process.cwd, "/tmp");
        ck_assert_int_eq(s->resources.cpu_quota, 50000);
        ck_assert(find_mount(s, "/vol")->flags & MS_RDONLY);
        ck_assert_ptr_nonnull(s->seccomp);
        /* no defaultErrnoRet: EPERM, as runc */
        ck_assert_uint_eq(s->seccomp->default_action, SCMP_ACT_ERRNO(EPERM));
        ck_assert_uint_eq(s->seccomp->n_rules, 10);
        oci_spec_free(s);
}
END_TEST

/* ---- small valid documents ---- */

START_TEST(test_minimal)
{
        struct oci_spec *s = parse_ok(MIN, strlen(MIN));
        ck_assert_str_eq(s->root_path, BUNDLE "/rootfs");
        ck_assert_ptr_nonnull(s->process.env);
        ck_assert_ptr_null(s->process.env[0]);
        ck_assert_ptr_nonnull(s->masked_paths);
        ck_assert_ptr_null(s->masked_paths[0]);
        ck_assert_ptr_null(s->hostname);
        ck_assert_ptr_null(s->seccomp);
        ck_assert_int_eq(s->resources.memory_swap, -1);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_unknown_keys_ignored)
{
        /* the spec: unknown properties MUST be ignored */
        static const char json[] = MIN_HEAD ", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"future\": 1}, "
                                            "\"futureTop\": {\"x\": [1]}, \"linux\": {\"futureLinux\": true}}";
        oci_spec_free(parse_ok(json, strlen(json)));
}
END_TEST

START_TEST(test_nulls_are_absent)
{
        static const char json[] = MIN_HEAD ", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"env\": null, "
                                            "\"capabilities\": null}, \"hostname\": null, \"mounts\": null, "
                                            "\"linux\": {\"seccomp\": null, \"resources\": null}}";
        struct oci_spec *s = parse_ok(json, strlen(json));
        ck_assert_ptr_null(s->hostname);
        ck_assert_ptr_null(s->seccomp);
        ck_assert_ptr_null(s->process.env[0]);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_u64_max)
{
        /* Go writes RLIM_INFINITY and a full 64-bit mask as uint64, beyond jansson's long long */
        static const char json[] = PROC("\"rlimits\": [{\"type\": \"RLIMIT_CORE\", \"soft\": 18446744073709551615, "
                                        "\"hard\": 18446744073709551615}, {\"type\": \"RLIMIT_STACK\", \"soft\": "
                                        "9223372036854775808, \"hard\": 18446744073709551615}]");
        struct oci_spec *s = parse_ok(json, strlen(json));
        ck_assert_uint_eq(s->process.rlimits[0].soft, UINT64_MAX);
        ck_assert_uint_eq(s->process.rlimits[0].hard, UINT64_MAX);
        ck_assert_uint_eq(s->process.rlimits[1].soft, UINT64_C(9223372036854775808));
        oci_spec_free(s);

        static const char sc[] =
                SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"getpgid\"], "
                        "\"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": 18446744073709551615, "
                        "\"op\": \"SCMP_CMP_EQ\"}]}]");
        s = parse_ok(sc, strlen(sc));
        ck_assert_uint_eq(s->seccomp->rules[0].args[0].value, UINT64_MAX);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_mount_options)
{
        static const char json[] =
                WITH("\"mounts\": [{\"destination\": \"/data//x/./\", \"type\": \"none\", \"source\": \"vol\", "
                     "\"options\": [\"rbind\", \"ro\", \"rw\", \"nosuid\", \"rslave\", \"size=1k\"]}, "
                     "{\"destination\": \"/t\", "
                     "\"type\": \"tmpfs\", \"options\": [\"size=1m\", \"noexec\", \"mode=1777\", \"notmpcopyup\"]}]");
        struct oci_spec *s = parse_ok(json, strlen(json));
        ck_assert_str_eq(s->mounts[0].destination, "/data/x");
        ck_assert_str_eq(s->mounts[0].type, "bind");
        ck_assert_str_eq(s->mounts[0].source, BUNDLE "/vol");
        /* the later of ro/rw wins, as with mount(8) */
        ck_assert_uint_eq(s->mounts[0].flags, MS_BIND | MS_REC | MS_NOSUID);
        ck_assert_uint_eq(s->mounts[0].propagation, MS_SLAVE | MS_REC);
        /* a bind's filesystem options are dropped, as mount(2) ignores them */
        ck_assert_ptr_null(s->mounts[0].data);
        ck_assert_str_eq(s->mounts[1].data, "size=1m,mode=1777");
        ck_assert_uint_eq(s->mounts[1].flags, MS_NOEXEC);
        ck_assert(!s->mounts[1].tmpcopyup);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_hooks_and_more)
{
        static const char json[] = MIN_HEAD
                ", \"process\": {\"args\": [\"sh\", \"-c\", \"x\"], \"cwd\": \"/w\", \"env\": [\"A=1\", \"B=\"], "
                "\"oomScoreAdj\": -500, \"consoleSize\": {\"height\": 24, \"width\": 80}, \"apparmorProfile\": "
                "\"containers-default\", \"selinuxLabel\": \"\", \"user\": {\"uid\": 1, \"gid\": 2, "
                "\"additionalGids\": [3, 4]}}, \"hooks\": {\"prestart\": [{\"path\": \"/bin/hook\", \"args\": "
                "[\"hook\", \"a\"], \"env\": [\"X=y\"], \"timeout\": 5}], \"poststop\": [{\"path\": \"/bin/stop\"}]}, "
                "\"annotations\": {\"dev.cordon.policy\": \"{}\", \"a\": \"b\"}, \"domainname\": \"example\", "
                "\"hostname\": \"h\", \"linux\": {\"namespaces\": [{\"type\": \"uts\"}, {\"type\": \"user\"}, "
                "{\"type\": \"cgroup\"}, {\"type\": \"time\"}, {\"type\": \"ipc\"}], \"uidMappings\": "
                "[{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}], \"sysctl\": {\"kernel.shmmax\": "
                "\"1000\", \"fs.mqueue.msg_max\": \"20\"}, \"devices\": [{\"path\": \"/dev/null\", \"type\": \"c\", "
                "\"major\": 1, \"minor\": 3, \"fileMode\": 438}], \"resources\": {\"devices\": [{\"allow\": false, "
                "\"access\": \"rwm\"}, {\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 3, \"access\": "
                "\"rwm\"}], \"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 0}], \"memory\": {\"limit\": "
                "0, \"swappiness\": 60}, \"cpu\": {\"shares\": 512, \"quota\": -1}}, \"rootfsPropagation\": "
                "\"rslave\", \"mountLabel\": \"system_u:object_r:container_file_t:s0\"}}";
        struct oci_spec *s = parse_ok(json, strlen(json));

        ck_assert_uint_eq(strv_len(s->process.args), 3);
        ck_assert_str_eq(s->process.env[1], "B=");
        ck_assert(s->process.has_oom_score_adj);
        ck_assert_int_eq(s->process.oom_score_adj, -500);
        ck_assert_uint_eq(s->process.console_height, 24);
        ck_assert_uint_eq(s->process.console_width, 80);
        ck_assert_str_eq(s->process.apparmor_profile, "containers-default");
        ck_assert_ptr_null(s->process.selinux_label);
        ck_assert_uint_eq(s->process.user.additional_gids[1], 4);
        ck_assert_uint_eq(s->n_hooks[OCI_HOOK_PRESTART], 1);
        ck_assert_str_eq(s->hooks[OCI_HOOK_PRESTART][0].args[1], "a");
        ck_assert_str_eq(s->hooks[OCI_HOOK_PRESTART][0].env[0], "X=y");
        ck_assert_int_eq(s->hooks[OCI_HOOK_PRESTART][0].timeout, 5);
        ck_assert_uint_eq(s->n_hooks[OCI_HOOK_POSTSTOP], 1);
        ck_assert_ptr_null(s->hooks[OCI_HOOK_POSTSTOP][0].args);
        ck_assert_int_eq(s->hooks[OCI_HOOK_POSTSTOP][0].timeout, 0);
        ck_assert_uint_eq(s->n_hooks[OCI_HOOK_CREATE_RUNTIME], 0);
        ck_assert_str_eq(oci_annotation(s, OCI_POLICY_ANNOTATION), "{}");
        ck_assert_str_eq(s->domainname, "example");
        ck_assert(has_ns(s, CLONE_NEWTIME, NULL) && has_ns(s, CLONE_NEWCGROUP, NULL));
        ck_assert_uint_eq(s->uid_mappings[0].host_id, 100000);
        ck_assert_uint_eq(s->n_sysctls, 2);
        ck_assert_int_eq(s->resources.memory_limit, -1);
        ck_assert_int_eq(s->resources.cpu_quota, -1);
        ck_assert_uint_eq(s->resources.cpu_shares, 512);
        ck_assert_int_eq(s->resources.memory_swappiness, 60);
        ck_assert_ptr_null(s->resources.cpus);
        ck_assert(!s->resources.disable_oom_killer);
        ck_assert_str_eq(s->mount_label, "system_u:object_r:container_file_t:s0");
        ck_assert_uint_eq(s->rootfs_propagation, MS_SLAVE | MS_REC);
        oci_spec_free(s);
}
END_TEST

/* linux.resources beyond the policy's limits, as runtime-tools' cgroup tests send them */
START_TEST(test_resources)
{
        static const char json[] = MIN_HEAD
                ", " MIN_PROC ", \"linux\": {\"cgroupsPath\": \"/cgrouptest\", \"resources\": {\"memory\": {\"limit\": "
                "50593792, \"reservation\": 50593792, \"swap\": 50593792, \"kernel\": 50593792, \"kernelTCP\": "
                "50593792, \"swappiness\": 10, \"disableOOMKiller\": true}, \"cpu\": {\"shares\": 2048, "
                "\"quota\": 200000, \"period\": 500000, \"cpus\": \"0-1,3\", \"mems\": \"0\"}}}}";
        struct oci_spec *s = parse_ok(json, strlen(json));
        const struct oci_resources *r = &s->resources;

        ck_assert_str_eq(s->cgroups_path, "/cgrouptest");
        ck_assert_int_eq(r->memory_reservation, 50593792);
        ck_assert_int_eq(r->kernel_tcp, 50593792);
        ck_assert_int_eq(r->memory_swappiness, 10);
        ck_assert(r->disable_oom_killer);
        ck_assert_uint_eq(r->cpu_shares, 2048);
        ck_assert_str_eq(r->cpus, "0-1,3");
        ck_assert_str_eq(r->mems, "0");
        oci_spec_free(s);

        /* "" is not given, as to runc */
        static const char empty[] =
                MIN_HEAD ", " MIN_PROC ", \"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"\", \"mems\": \"\"}}}}";
        s = parse_ok(empty, strlen(empty));
        ck_assert_ptr_null(s->resources.cpus);
        ck_assert_ptr_null(s->resources.mems);
        ck_assert_int_eq(s->resources.memory_swappiness, -1);
        oci_spec_free(s);
}
END_TEST

/* ---- invalid documents ---- */

struct invalid_case {
        const char *json;
        const char *path; /* "" for the top level; ":" for a syntax error */
        const char *gist;
};

static const struct invalid_case invalid_cases[] = {
        /* shape and the top level */
        {"[]", "", "expected a JSON object at the top level, got an array"},
        {"{", ":", ""},
        {"{\"root\": {\"path\": \"r\"}}", "ociVersion", "required key is missing"},
        {"{\"ociVersion\": \"1.0.0\"}", "root", "required key is missing"},
        {"{\"ociVersion\": 1, \"root\": {\"path\": \"r\"}}", "ociVersion", "expected a string, got an integer"},
        {"{\"ociVersion\": \"0.5.0\", \"root\": {\"path\": \"r\"}}", "ociVersion", "unsupported OCI runtime-spec"},
        {"{\"ociVersion\": \"2.0.0\", \"root\": {\"path\": \"r\"}}", "ociVersion", "unsupported"},
        {MIN_HEAD ", \"ociVersion\": \"1.0.0\"}", ":", "duplicate"},
        {MIN_HEAD ", \"hostname\": 5}", "hostname", "expected a string, got an integer"},
        {MIN_HEAD ", \"hostname\": \"h\"}", "hostname", "needs a new uts namespace"},
        {MIN_HEAD ", \"hostname\": \"a\\u0000b\"}", "hostname", "contains a NUL byte"},
        {MIN_HEAD ", \"windows\": {\"layerFolders\": []}}", "windows", "Linux containers only"},
        {MIN_HEAD ", \"vm\": {\"kernel\": {\"path\": \"/k\"}}}", "vm", "Linux containers only"},
        {MIN_HEAD ", \"hostname\": 18446744073709551615}", "hostname", "expected a string, got an integer"},
        /* root */
        {"{\"ociVersion\": \"1.0.0\", \"root\": []}", "root", "expected an object, got an array"},
        {"{\"ociVersion\": \"1.0.0\", \"root\": {}}", "root.path", "required key is missing"},
        {"{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"\"}}", "root.path", "empty"},
        {"{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"../x\"}}", "root.path", "\"..\" components"},
        {"{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"r\", \"readonly\": \"yes\"}}", "root.readonly",
         "expected a boolean, got a string"},
        /* process */
        {MIN_HEAD ", \"process\": {\"cwd\": \"/\"}}", "process.args", "required key is missing"},
        {MIN_HEAD ", \"process\": {\"args\": [\"sh\"]}}", "process.cwd", "required key is missing"},
        {MIN_HEAD ", \"process\": {\"args\": [], \"cwd\": \"/\"}}", "process.args", "empty array"},
        {MIN_HEAD ", \"process\": {\"args\": [\"\"], \"cwd\": \"/\"}}", "process.args", "empty string"},
        {MIN_HEAD ", \"process\": {\"args\": [\"sh\", 1], \"cwd\": \"/\"}}", "process.args[1]", "expected a string"},
        {MIN_HEAD ", \"process\": {\"args\": \"sh\", \"cwd\": \"/\"}}", "process.args", "expected an array"},
        {MIN_HEAD ", \"process\": {\"args\": [\"sh\"], \"cwd\": \"work\"}}", "process.cwd",
         "expected an absolute path"},
        {PROC("\"env\": [\"A=1\", \"NOEQUALS\"]"), "process.env[1]", "expected \"NAME=VALUE\""},
        {PROC("\"env\": [\"=x\"]"), "process.env[0]", "expected \"NAME=VALUE\""},
        {PROC("\"terminal\": 1"), "process.terminal", "expected a boolean"},
        {PROC("\"user\": {\"uid\": -1}"), "process.user.uid", "expected an unsigned 32-bit integer, got -1"},
        {PROC("\"user\": {\"uid\": 4294967296}"), "process.user.uid", "unsigned 32-bit"},
        {PROC("\"user\": {\"gid\": \"0\"}"), "process.user.gid", "expected an unsigned integer, got a string"},
        {PROC("\"user\": {\"umask\": 512}"), "process.user.umask", "at most 0777"},
        {PROC("\"user\": {\"additionalGids\": [1, \"2\"]}"), "process.user.additionalGids[1]", "expected an unsigned"},
        {PROC("\"user\": {\"uid\": 18446744073709551615}"), "process.user.uid", "unsigned 32-bit integer, got 1844"},
        {PROC("\"capabilities\": {\"bounding\": [\"CAP_KILL\", \"kill\"]}"), "process.capabilities.bounding[1]",
         "expected a capability name (CAP_...), got \"kill\""},
        {PROC("\"capabilities\": {\"bounding\": [\"CAP_\"]}"), "process.capabilities.bounding[0]",
         "expected a capability name"},
        {PROC("\"capabilities\": {\"bounding\": [\"CAP_KILL\", 7]}"), "process.capabilities.bounding[1]",
         "expected a string, got an integer"},
        {PROC("\"capabilities\": {\"effective\": \"CAP_KILL\"}"), "process.capabilities.effective",
         "expected an array"},
        {PROC("\"capabilities\": []"), "process.capabilities", "expected an object"},
        {PROC("\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 10}]"), "process.rlimits[0].hard",
         "required key is missing"},
        {PROC("\"rlimits\": [{\"type\": \"RLIMIT_FOO\", \"soft\": 1, \"hard\": 1}]"), "process.rlimits[0].type",
         "unknown resource limit \"RLIMIT_FOO\""},
        {PROC("\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 10, \"hard\": 5}]"), "process.rlimits[0].soft",
         "above the hard limit"},
        {PROC("\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": -1, \"hard\": 5}]"), "process.rlimits[0].soft",
         "expected an unsigned integer, got -1"},
        {PROC("\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1, \"hard\": 1}, {\"type\": \"RLIMIT_NOFILE\", "
              "\"soft\": 1, \"hard\": 1}]"),
         "process.rlimits[1].type", "already set by rlimits[0]"},
        {PROC("\"noNewPrivileges\": \"true\""), "process.noNewPrivileges", "expected a boolean"},
        {PROC("\"oomScoreAdj\": 1001"), "process.oomScoreAdj", "between -1000 and 1000"},
        {PROC("\"consoleSize\": {\"height\": 70000, \"width\": 1}"), "process.consoleSize", "at most 65535"},
        {PROC("\"apparmorProfile\": 1"), "process.apparmorProfile", "expected a string"},
        {PROC("\"ioPriority\": {\"class\": \"IOPRIO_CLASS_RT\"}"), "process.ioPriority", "not supported by cordon"},
        {PROC("\"scheduler\": {\"policy\": \"SCHED_FIFO\"}"), "process.scheduler", "not supported by cordon"},
        {PROC("\"execCPUAffinity\": {\"initial\": \"0\"}"), "process.execCPUAffinity", "not supported by cordon"},
        {PROC("\"commandLine\": \"cmd /c\""), "process.commandLine", "Windows"},
        /* mounts */
        {WITH("\"mounts\": {}"), "mounts", "expected an array, got an object"},
        {WITH("\"mounts\": [{\"type\": \"tmpfs\"}]"), "mounts[0].destination", "required key is missing"},
        {WITH("\"mounts\": [{\"destination\": \"/a/../b\", \"type\": \"tmpfs\"}]"), "mounts[0].destination",
         "\"..\" components"},
        {WITH("\"mounts\": [{\"destination\": \"/a\", \"type\": \"nfs\", \"source\": \"h:/x\"}]"), "mounts[0].type",
         "filesystem \"nfs\" is not supported"},
        {WITH("\"mounts\": [{\"destination\": \"/a\", \"type\": \"overlay\"}]"), "mounts[0].type", "not supported"},
        {WITH("\"mounts\": [{\"destination\": \"/a\", \"type\": \"none\", \"source\": \"/x\"}]"), "mounts[0].type",
         "without a \"bind\""},
        {WITH("\"mounts\": [{\"destination\": \"/a\", \"source\": \"/x\"}]"), "mounts[0].type", "no type"},
        {WITH("\"mounts\": [{\"destination\": \"/a\", \"type\": \"bind\"}]"), "mounts[0].source",
         "required key is missing"},
        {WITH("\"mounts\": [{\"destination\": \"/a\", \"type\": \"tmpfs\", \"options\": [\"nosuid\", 5]}]"),
         "mounts[0].options[1]", "expected a string"},
        {WITH("\"mounts\": [{\"destination\": \"/a\", \"type\": \"tmpfs\", \"options\": [\"ro,nosuid\"]}]"),
         "mounts[0].options[0]", "expected one mount option"},
        {WITH("\"mounts\": [{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"/x\", \"options\": "
              "[\"rbind\", \"rro\"]}]"),
         "mounts[0].options[1]", "recursive mount attributes"},
        {WITH("\"mounts\": [{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"/x\", \"options\": "
              "[\"bind\", \"idmap\"]}]"),
         "mounts[0].options[1]", "idmapped mounts"},
        {WITH("\"mounts\": [{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"/x\", \"options\": "
              "[\"bind\", \"tmpcopyup\"]}]"),
         "mounts[0].options", "only for tmpfs"},
        {WITH("\"mounts\": [{\"destination\": \"/a\", \"type\": \"tmpfs\", \"options\": [\"remount\"]}]"),
         "mounts[0].options[0]", "remounting"},
        {WITH("\"mounts\": [{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"/x\", \"uidMappings\": "
              "[{\"containerID\": 0, \"hostID\": 1, \"size\": 1}]}]"),
         "mounts[0].uidMappings", "idmapped mounts"},
        /* hooks and annotations */
        {WITH("\"hooks\": {\"prestart\": [{\"args\": [\"x\"]}]}"), "hooks.prestart[0].path", "required key is missing"},
        {WITH("\"hooks\": {\"poststop\": [{\"path\": \"hook\"}]}"), "hooks.poststop[0].path", "absolute path"},
        {WITH("\"hooks\": {\"createRuntime\": [{\"path\": \"/h\", \"timeout\": 0}]}"), "hooks.createRuntime[0].timeout",
         "between 1 and"},
        {WITH("\"hooks\": {\"poststart\": [{\"path\": \"/h\", \"env\": [\"X\"]}]}"), "hooks.poststart[0].env[0]",
         "NAME=VALUE"},
        {WITH("\"hooks\": {\"startContainer\": {}}"), "hooks.startContainer", "expected an array"},
        {WITH("\"annotations\": {\"a\": 1}"), "annotations.a", "expected a string, got an integer"},
        {WITH("\"annotations\": {\"io.x/y\": true}"), "annotations[\"io.x/y\"]", "expected a string"},
        {WITH("\"annotations\": []"), "annotations", "expected an object"},
        /* linux */
        {WITH("\"linux\": []"), "linux", "expected an object"},
        {LINUX("\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"pids\"}]"), "linux.namespaces[1].type",
         "unknown namespace type \"pids\""},
        {LINUX("\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"pid\"}]"), "linux.namespaces[1].type",
         "already listed"},
        {LINUX("\"namespaces\": [{\"type\": \"network\", \"path\": \"netns\"}]"), "linux.namespaces[0].path",
         "absolute path"},
        {LINUX("\"namespaces\": [{}]"), "linux.namespaces[0].type", "required key is missing"},
        {LINUX("\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1, \"size\": 1}]"), "linux.uidMappings",
         "need a user namespace"},
        {LINUX("\"namespaces\": [{\"type\": \"user\"}], \"gidMappings\": [{\"containerID\": 0, \"hostID\": 1}]"),
         "linux.gidMappings[0].size", "required key is missing"},
        {LINUX("\"namespaces\": [{\"type\": \"user\"}], \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1, "
               "\"size\": 0}]"),
         "linux.uidMappings[0].size", "at least 1"},
        {LINUX("\"namespaces\": [{\"type\": \"user\"}], \"uidMappings\": [{\"containerID\": 4294967295, "
               "\"hostID\": 1, \"size\": 2}]"),
         "linux.uidMappings[0].size", "past the last id"},
        {LINUX("\"resources\": {\"memory\": {\"limit\": \"1g\"}}"), "linux.resources.memory.limit",
         "expected an integer, got a string"},
        {LINUX("\"resources\": {\"memory\": {\"limit\": -2}}"), "linux.resources.memory.limit", "between -1"},
        {LINUX("\"resources\": {\"memory\": {\"limit\": 100000000, \"swap\": 1000}}"), "linux.resources.memory.swap",
         "below the memory limit"},
        {LINUX("\"resources\": {\"memory\": {\"disableOOMKiller\": 1}}"), "linux.resources.memory.disableOOMKiller",
         "expected a boolean"},
        {LINUX("\"resources\": {\"memory\": {\"swappiness\": 101}}"), "linux.resources.memory.swappiness",
         "between -1 and 100"},
        {LINUX("\"resources\": {\"pids\": {\"limit\": 1.5}}"), "linux.resources.pids.limit",
         "expected an integer, got a real number"},
        {LINUX("\"resources\": {\"cpu\": {\"period\": 10}}"), "linux.resources.cpu.period", "between 1000 and 1000000"},
        {LINUX("\"resources\": {\"cpu\": {\"quota\": 10}}"), "linux.resources.cpu.quota", "at least 1000"},
        {LINUX("\"resources\": {\"cpu\": {\"cpus\": \"0-\"}}"), "linux.resources.cpu.cpus", "\"0-\": expected a list"},
        {LINUX("\"resources\": {\"cpu\": {\"cpus\": \"3-1\"}}"), "linux.resources.cpu.cpus", "expected a list"},
        {LINUX("\"resources\": {\"cpu\": {\"cpus\": \"0,,1\"}}"), "linux.resources.cpu.cpus", "expected a list"},
        {LINUX("\"resources\": {\"cpu\": {\"cpus\": \"0-9999\"}}"), "linux.resources.cpu.cpus", "past 4095"},
        {LINUX("\"resources\": {\"cpu\": {\"mems\": 0}}"), "linux.resources.cpu.mems", "expected a string"},
        {LINUX("\"resources\": {\"cpu\": {\"shares\": 262145}}"), "linux.resources.cpu.shares", "at most 262144"},
        {LINUX("\"resources\": {\"cpu\": {\"realtimeRuntime\": 5}}"), "linux.resources.cpu.realtimeRuntime",
         "real-time"},
        {LINUX("\"resources\": {\"blockIO\": {\"weight\": 100}}"), "linux.resources.blockIO", "not supported"},
        {LINUX("\"resources\": {\"unified\": {\"memory.high\": \"1\"}}"), "linux.resources.unified", "not supported"},
        {LINUX("\"resources\": {\"network\": {\"classID\": 1}}"), "linux.resources.network", "not supported"},
        {LINUX("\"resources\": {\"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 1048576}]}"),
         "linux.resources.hugepageLimits[0].limit", "hugetlb"},
        {LINUX("\"resources\": {\"devices\": [{\"access\": \"rwm\"}]}"), "linux.resources.devices[0].allow",
         "required key is missing"},
        {LINUX("\"resources\": {\"devices\": [{\"allow\": true, \"access\": \"rwx\"}]}"),
         "linux.resources.devices[0].access", "rwm"},
        {LINUX("\"resources\": {\"devices\": [{\"allow\": true, \"type\": \"x\"}]}"), "linux.resources.devices[0].type",
         "expected \"a\", \"b\" or \"c\""},
        {LINUX("\"devices\": [{\"path\": \"/dev/sda\", \"type\": \"b\", \"major\": 8, \"minor\": 0}]"),
         "linux.devices[0]", "device \"/dev/sda\" is not supported"},
        {LINUX("\"devices\": [{\"path\": \"/dev/null\", \"type\": \"c\", \"major\": 8, \"minor\": 0}]"),
         "linux.devices[0]", "not supported"},
        {LINUX("\"devices\": [{\"path\": \"/dev/fuse\", \"type\": \"c\", \"major\": 10, \"minor\": 229}]"),
         "linux.devices[0]", "/dev/fuse"},
        {LINUX("\"devices\": [{\"type\": \"c\"}]"), "linux.devices[0].path", "required key is missing"},
        {LINUX("\"namespaces\": [{\"type\": \"network\"}], \"sysctl\": {\"kernel.pid_max\": \"10\"}"),
         "linux.sysctl[\"kernel.pid_max\"]", "not namespaced"},
        {LINUX("\"sysctl\": {\"net.ipv4.ip_forward\": \"1\"}"), "linux.sysctl[\"net.ipv4.ip_forward\"]",
         "needs the container to have a network namespace"},
        {LINUX("\"namespaces\": [{\"type\": \"network\"}], \"sysctl\": {\"net.ipv4.ip_forward\": 1}"),
         "linux.sysctl[\"net.ipv4.ip_forward\"]", "expected a string"},
        {LINUX("\"namespaces\": [{\"type\": \"network\"}], \"sysctl\": {\"net/../kernel.x\": \"1\"}"),
         "linux.sysctl[\"net/../kernel.x\"]", "not a sysctl name"},
        {LINUX("\"maskedPaths\": [\"/proc/kcore\", \"proc/keys\"]"), "linux.maskedPaths[1]", "absolute path"},
        {LINUX("\"readonlyPaths\": [\"/proc/sys\", 5]"), "linux.readonlyPaths[1]", "expected a string"},
        {LINUX("\"rootfsPropagation\": \"sideways\""), "linux.rootfsPropagation", "unknown root propagation"},
        {LINUX("\"intelRdt\": {\"closID\": \"x\"}"), "linux.intelRdt", "not supported by cordon: Intel RDT"},
        {LINUX("\"timeOffsets\": {\"monotonic\": {\"secs\": 1}}"), "linux.timeOffsets", "not supported"},
        {LINUX("\"personality\": {\"domain\": \"LINUX32\"}"), "linux.personality", "not supported"},
        {LINUX("\"cgroupsPath\": 7"), "linux.cgroupsPath", "expected a string"},
        {LINUX("\"mountLabel\": []"), "linux.mountLabel", "expected a string"},
        /* seccomp */
        {SECCOMP("\"syscalls\": []"), "linux.seccomp.defaultAction", "required key is missing"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_NOTIFY\""), "linux.seccomp.defaultAction", "SCMP_ACT_NOTIFY"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOWED\""), "linux.seccomp.defaultAction", "unknown seccomp action"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"defaultErrnoRet\": 1"), "linux.seccomp.defaultErrnoRet",
         "only a defaultAction of SCMP_ACT_ERRNO"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 5000"), "linux.seccomp.defaultErrnoRet",
         "between 0 and 4095"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"SCMP_ARCH_Z80\"]"),
         "linux.seccomp.architectures[0]", "unknown architecture"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"x86_64\"]"),
         "linux.seccomp.architectures[0]", "unknown architecture"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\"]"),
         "linux.seccomp.flags[0]", "speculative"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_NEW\"]"),
         "linux.seccomp.flags[0]", "unknown seccomp flag"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"/run/l.sock\""),
         "linux.seccomp.listenerPath", "not supported"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"action\": \"SCMP_ACT_ERRNO\"}]"),
         "linux.seccomp.syscalls[0].names", "required key is missing"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"]}]"),
         "linux.seccomp.syscalls[0].action", "required key is missing"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"\"], \"action\": "
                 "\"SCMP_ACT_ERRNO\"}]"),
         "linux.seccomp.syscalls[0].names[0]", "empty syscall name"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": "
                 "\"SCMP_ACT_NOTIFY\"}]"),
         "linux.seccomp.syscalls[0].action", "SCMP_ACT_NOTIFY is not supported"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": "
                 "\"SCMP_ACT_KILL\", \"errnoRet\": 1}]"),
         "linux.seccomp.syscalls[0].errnoRet", "only SCMP_ACT_ERRNO and SCMP_ACT_TRACE"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": "
                 "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 6, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]"),
         "linux.seccomp.syscalls[0].args[0].index", "between 0 and 5"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": "
                 "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_IN\"}]}]"),
         "linux.seccomp.syscalls[0].args[0].op", "unknown comparison"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": "
                 "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"op\": \"SCMP_CMP_EQ\"}]}]"),
         "linux.seccomp.syscalls[0].args[0].value", "required key is missing"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": "
                 "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": -1, \"op\": \"SCMP_CMP_EQ\"}]}]"),
         "linux.seccomp.syscalls[0].args[0].value", "unsigned"},
        {SECCOMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": "
                 "\"SCMP_ACT_ERRNO\", \"includes\": {\"caps\": [\"CAP_SYS_ADMIN\"]}}]"),
         "linux.seccomp.syscalls[0].includes", "docker profile"},
};

START_TEST(test_invalid)
{
        const struct invalid_case *c = &invalid_cases[_i];
        _cleanup_free_ char *prefix = NULL;
        struct oci_spec *s = NULL;
        char *err = NULL;
        int r = oci_spec_parse(c->json, strlen(c->json), BUNDLE, &s, &err);

        ck_assert_msg(r == -EINVAL, "row %d: expected -EINVAL, got %d (%s) for %s", _i, r, err ? err : "no error",
                      c->json);
        ck_assert_ptr_null(s);
        ck_assert_ptr_nonnull(err);
        if (streq(c->path, ":"))
                prefix = xstrdup(ORIGIN ":");
        else if (c->path[0] == '\0')
                prefix = xstrdup(ORIGIN ": ");
        else
                prefix = xasprintf("%s: %s: ", ORIGIN, c->path);
        ck_assert_msg(startswith(err, prefix), "row %d: error \"%s\" does not start with \"%s\"", _i, err, prefix);
        ck_assert_msg(strstr(err + strlen(prefix), c->gist), "row %d: error \"%s\" does not say \"%s\"", _i, err,
                      c->gist);
        for (const char *ch = err; *ch; ch++)
                ck_assert_msg((unsigned char)*ch >= 0x20 && (unsigned char)*ch < 0x7f, "row %d: raw byte in \"%s\"", _i,
                              err);
        free(err);
}
END_TEST

START_TEST(test_too_large)
{
        size_t len = 8 * 1024 * 1024 + 1;
        _cleanup_free_ char *big = xmalloc(len);
        struct oci_spec *s = NULL;
        char *err = NULL;

        memset(big, ' ', len);
        ck_assert_int_eq(oci_spec_parse(big, len, BUNDLE, &s, &err), -EFBIG);
        ck_assert_ptr_nonnull(strstr(err, "larger than"));
        free(err);
}
END_TEST

/* runtime-spec 1.1: a capability that cannot be granted is logged, not
 * fatal (runtime-tools' process_capabilities_fail adds CAP_TEST). */
START_TEST(test_unknown_caps_ignored)
{
        static const char one[] = PROC("\"capabilities\": {\"bounding\": [\"CAP_KILL\", \"CAP_TEST\"], "
                                       "\"ambient\": [\"CAP_FLY\", \"CAP_CHOWN\"]}");
        struct oci_spec *s = parse_ok(one, strlen(one));
        ck_assert_uint_eq(s->process.caps.bounding, CAP(CAP_KILL));
        ck_assert_uint_eq(s->process.caps.ambient, CAP(CAP_CHOWN));
        ck_assert_uint_eq(strv_len(s->process.caps.ignored), 2);
        ck_assert_str_eq(
                s->process.caps.ignored[0],
                "process.capabilities.bounding[1]: unknown capability \"CAP_TEST\" ignored (it grants nothing)");
        ck_assert_str_eq(s->process.caps.ignored[1],
                         "process.capabilities.ambient[0]: unknown capability \"CAP_FLY\" ignored (it grants nothing)");
        oci_spec_free(s);

        /* a long list is named up to a bound, then counted */
        _cleanup_free_ char *many = xstrdup("");
        for (int i = 0; i < 40; i++) {
                char *next = xasprintf("%s%s\"CAP_X%d\"", many, i ? ", " : "", i);
                free(many);
                many = next;
        }
        _cleanup_free_ char *doc = xasprintf(PROC("\"capabilities\": {\"permitted\": [%s]}"), many);
        s = parse_ok(doc, strlen(doc));
        ck_assert_uint_eq(s->process.caps.permitted, 0);
        ck_assert_uint_eq(strv_len(s->process.caps.ignored), 17);
        ck_assert_str_eq(s->process.caps.ignored[16], "process.capabilities: 24 more unknown capabilities ignored");
        oci_spec_free(s);

        /* an exec --process file too */
        static const char proc[] =
                "{\"args\": [\"ls\"], \"cwd\": \"/\", \"capabilities\": {\"effective\": [\"CAP_TEST\"]}}";
        struct oci_process p = {0};
        char *err = NULL;
        ck_assert_int_eq(oci_process_parse(proc, strlen(proc), &p, &err), 0);
        ck_assert_uint_eq(p.caps.effective, 0);
        ck_assert_str_eq(p.caps.ignored[0],
                         "capabilities.effective[0]: unknown capability \"CAP_TEST\" ignored (it grants nothing)");
        oci_process_done(&p);
}
END_TEST

/* `update --resources`: a LinuxResources document alone, by create's rules. */
START_TEST(test_resources_document)
{
        static const char ok[] = "{\"memory\": {\"limit\": 134217728, \"swap\": 134217728}, \"pids\": {\"limit\": 40}, "
                                 "\"cpu\": {\"quota\": 50000, \"period\": 100000, \"cpus\": \"0\"}}";
        struct oci_resources r;
        char *err = NULL;
        ck_assert_int_eq(oci_resources_parse(ok, strlen(ok), "update", &r, &err), 0);
        ck_assert_int_eq(r.memory_limit, 134217728);
        ck_assert_int_eq(r.pids_limit, 40);
        ck_assert_int_eq(r.cpu_quota, 50000);
        ck_assert_uint_eq(r.cpu_period, 100000);
        ck_assert_str_eq(r.cpus, "0");
        ck_assert_int_eq(r.memory_reservation, -1);
        oci_resources_done(&r);

        static const struct {
                const char *doc, *says;
        } bad[] = {
                {"{\"pids\": {\"limit\": \"many\"}}", "update: pids.limit: expected an integer, got a string"},
                {"{\"memory\": {\"limit\": 100, \"swap\": 50}}", "update: memory.swap: is below the memory limit"},
                {"{\"blockIO\": {\"weight\": 10}}", "update: blockIO: not supported by cordon"},
                {"{\"cpu\": {\"realtimeRuntime\": 1000}}", "update: cpu.realtimeRuntime: not supported by cordon"},
                {"{\"cpu\": {\"cpus\": \"all\"}}", "update: cpu.cpus: \"all\": expected a list"},
                {"[1]", "update: expected a JSON object"},
                {"{\"memory\": ", "update:1:"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                err = NULL;
                ck_assert_int_lt(oci_resources_parse(bad[i].doc, strlen(bad[i].doc), "update", &r, &err), 0);
                ck_assert_msg(err && startswith(err, bad[i].says), "%s: %s", bad[i].doc, err ? err : "(none)");
                free(err);
        }
}
END_TEST

START_TEST(test_process_file)
{
        static const char ok[] = "{\"args\": [\"ls\", \"-l\"], \"cwd\": \"/tmp\", \"env\": [\"A=b\"], \"terminal\": "
                                 "true, \"user\": {\"uid\": 5, \"gid\": 6}}";
        static const char bad[] = "{\"args\": [\"ls\"], \"cwd\": \"/\", \"user\": {\"uid\": \"root\"}}";
        struct oci_process p = {0};
        char *err = NULL;

        ck_assert_int_eq(oci_process_parse(ok, strlen(ok), &p, &err), 0);
        ck_assert_str_eq(p.args[1], "-l");
        ck_assert_str_eq(p.cwd, "/tmp");
        ck_assert(p.terminal);
        ck_assert_uint_eq(p.user.gid, 6);
        oci_process_done(&p);

        ck_assert_int_eq(oci_process_parse(bad, strlen(bad), &p, &err), -EINVAL);
        ck_assert_msg(startswith(err, "process: user.uid: expected an unsigned integer"), "%s", err);
        free(err);
        ck_assert_int_eq(oci_process_parse("[1]", 3, &p, &err), -EINVAL);
        free(err);
}
END_TEST

/* ---- bundle files ---- */

static char tmpdir[] = "/tmp/test-oci-config.XXXXXX";

static void make_tmpdir(void)
{
        strcpy(tmpdir, "/tmp/test-oci-config.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdir);
        ck_assert_int_eq(system(cmd), 0);
}

static void write_file(const char *path, const char *content)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write_all(fd, content, strlen(content)), 0);
}

START_TEST(test_podman_exec_process)
{
        /* podman exec -e X=1 -w /tmp --user 1000 C /bin/echo hi, then podman exec -t C /bin/true */
        size_t len;
        _cleanup_free_ char *plain = read_data("podman-exec-process.json", &len);
        struct oci_process p = {0};
        char *err = NULL;

        ck_assert_msg(oci_process_parse(plain, len, &p, &err) == 0, "%s", err);
        ck_assert_str_eq(p.args[0], "/bin/echo");
        ck_assert_str_eq(p.cwd, "/tmp");
        ck_assert_uint_eq(p.user.uid, 1000);
        ck_assert(!p.terminal);
        ck_assert_str_eq(p.env[3], "X=1");
        ck_assert_str_eq(p.env[4], "HOME=");
        ck_assert_uint_eq(p.n_rlimits, 2);
        ck_assert(p.caps.bounding & CAP(CAP_SYS_CHROOT));
        oci_process_done(&p);

        _cleanup_free_ char *tty = read_data("podman-exec-tty-process.json", &len);
        ck_assert_msg(oci_process_parse(tty, len, &p, &err) == 0, "%s", err);
        ck_assert(p.terminal);
        ck_assert_str_eq(p.cwd, "/");
        oci_process_done(&p);
}
END_TEST

START_TEST(test_load_bundle)
{
        _cleanup_free_ char *cfg = xasprintf("%s/config.json", tmpdir), *root = xasprintf("%s/rootfs", tmpdir);
        struct oci_spec *s = NULL;
        char *err = NULL;

        write_file(cfg, MIN);
        ck_assert_int_eq(oci_spec_load(tmpdir, &s, &err), 0);
        ck_assert_str_eq(s->root_path, root);
        ck_assert_str_eq(s->bundle, tmpdir);
        oci_spec_free(s);

        /* a bundle named through ".." and a symlink: resolved first */
        _cleanup_free_ char *link = xasprintf("%s/link", tmpdir),
                            *dotdot = xasprintf("%s/link/../%s", tmpdir, strrchr(tmpdir, '/') + 1);
        ck_assert_int_eq(symlink(tmpdir, link), 0);
        ck_assert_int_eq(oci_spec_load(dotdot, &s, &err), 0);
        ck_assert_str_eq(s->root_path, root);
        oci_spec_free(s);

        write_file(cfg, "{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": 5}}");
        ck_assert_int_eq(oci_spec_load(tmpdir, &s, &err), -EINVAL);
        ck_assert_msg(startswith(err, cfg) && strstr(err, ": root.path: expected a string"), "%s", err);
        free(err);
}
END_TEST

START_TEST(test_load_missing_and_odd)
{
        _cleanup_free_ char *cfg = xasprintf("%s/config.json", tmpdir);
        struct oci_spec *s = NULL;
        char *err = NULL;

        ck_assert_int_eq(oci_spec_load(tmpdir, &s, &err), -ENOENT);
        ck_assert_msg(startswith(err, cfg) && strstr(err, "No such file"), "%s", err);
        free(err);
        ck_assert_int_eq(mkfifo(cfg, 0600), 0);
        ck_assert_int_eq(oci_spec_load(tmpdir, &s, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
        free(err);
        ck_assert_int_eq(unlink(cfg), 0);
        ck_assert_int_eq(mkdir(cfg, 0700), 0);
        ck_assert_int_eq(oci_spec_load(tmpdir, &s, &err), -EINVAL);
        free(err);
        ck_assert_int_eq(rmdir(cfg), 0);
}
END_TEST

/* ---- the policy ---- */

static struct policy *policy_ok(const struct oci_spec *s)
{
        struct policy *pol = NULL;
        char *err = NULL;
        int r = oci_spec_policy(s, &pol, &err);
        ck_assert_msg(r == 0, "expected a policy, got %d: %s", r, err ? err : "");
        ck_assert_ptr_nonnull(pol);
        return pol;
}

static const struct policy_path_rule *find_rule(const struct policy *pol, const char *path)
{
        for (size_t i = 0; i < pol->n_rules; i++)
                if (streq(pol->rules[i].path, path))
                        return &pol->rules[i];
        return NULL;
}

static const struct policy_bind *find_bind(const struct policy *pol, const char *target)
{
        for (size_t i = 0; i < pol->n_binds; i++)
                if (streq(pol->binds[i].target, target))
                        return &pol->binds[i];
        return NULL;
}

START_TEST(test_policy_podman)
{
        struct oci_spec *s = load_data("podman-run-limits.json");
        struct policy *pol = policy_ok(s);

        ck_assert(pol->has_source);
        ck_assert_str_eq(pol->source_kind, "template");
        ck_assert_str_eq(pol->source_path, s->root_path);
        ck_assert_ptr_null(pol->source_digest);
        ck_assert_int_eq(pol->net_mode, NET_DENY);
        ck_assert_uint_eq(pol->n_net_rules, 0);
        ck_assert_int_eq(pol->memory_bytes, 64 << 20);
        ck_assert_int_eq(pol->max_processes, 50);
        ck_assert_int_eq(pol->cpu_millis, 500);
        ck_assert_int_eq(pol->disk_bytes, POLICY_UNSET);

        const struct policy_bind *b = find_bind(pol, "/vol");
        ck_assert_ptr_nonnull(b);
        ck_assert_str_eq(b->source, "/tmp/ocispec/vol");
        ck_assert(b->read_only);
        ck_assert_ptr_nonnull(find_bind(pol, "/etc/passwd"));
        ck_assert_ptr_nonnull(find_bind(pol, "/etc/hostname"));
        /* podman's --add-host entries and the container's name */
        ck_assert_ptr_nonnull(find_bind(pol, "/etc/hosts"));
        /* cordon's own: the DNS stub's resolv.conf and /dev/shm */
        ck_assert_ptr_null(find_bind(pol, "/etc/resolv.conf"));
        ck_assert_ptr_null(find_bind(pol, "/dev/shm"));
        ck_assert_uint_eq(pol->n_binds, 5);

        const struct policy_path_rule *r = find_rule(pol, "/proc/kcore");
        ck_assert_ptr_nonnull(r);
        /* masked as runc masks it (empty), not hidden: path calls stay native */
        ck_assert_int_eq(r->access, ACCESS_MASKED);
        ck_assert_int_eq(r->exec, -1);
        ck_assert_int_eq(find_rule(pol, "/sys/firmware")->access, ACCESS_MASKED);
        ck_assert_int_eq(find_rule(pol, "/proc/sys")->access, ACCESS_READ);
        ck_assert_uint_eq(pol->n_rules, 11 + 6);
        /* parents before the paths inside them */
        for (size_t i = 1; i < pol->n_rules; i++)
                ck_assert_uint_le(strlen(pol->rules[i - 1].path), strlen(pol->rules[i].path));
        policy_free(pol);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_policy_runc_rootless_sys_bind)
{
        /* runc spec --rootless binds the host's /sys: a read-only bind in the policy */
        struct oci_spec *s = load_data("runc-spec-rootless.json");
        struct policy *pol = policy_ok(s);
        const struct policy_bind *b = find_bind(pol, "/sys");
        ck_assert_ptr_nonnull(b);
        ck_assert(b->read_only);
        ck_assert_str_eq(pol->source_path, BUNDLE "/rootfs");
        policy_free(pol);
        oci_spec_free(s);
}
END_TEST

static struct oci_spec *with_policy(const char *policy_value, const char *extra_linux)
{
        json_t *doc = json_loads(MIN, 0, NULL);
        _cleanup_free_ char *text = NULL;
        json_t *ann = json_object();

        ck_assert_ptr_nonnull(doc);
        json_object_set_new(ann, OCI_POLICY_ANNOTATION, json_string(policy_value));
        json_object_set_new(doc, "annotations", ann);
        if (extra_linux)
                json_object_set_new(doc, "linux", json_loads(extra_linux, 0, NULL));
        text = json_dumps(doc, 0);
        json_decref(doc);
        return parse_ok(text, strlen(text));
}

static const char limits_linux[] = "{\"resources\": {\"memory\": {\"limit\": 100000000}, \"pids\": {\"limit\": 20}, "
                                   "\"cpu\": {\"quota\": 150000, \"period\": 100000}}, \"maskedPaths\": "
                                   "[\"/etc/secret\"], \"readonlyPaths\": [\"/data\"]}";

START_TEST(test_policy_inline_stricter_wins)
{
        /* the policy is stricter on memory, looser on processes, silent on cpu */
        struct oci_spec *s = with_policy("{\"limits\": {\"memoryBytes\": 50000000, \"maxProcesses\": 500}, "
                                         "\"networkPolicy\": {\"mode\": \"allow-listed\", \"rules\": [{\"host\": "
                                         "\"api.example.com\", \"port\": 443, \"reason\": \"r\"}]}, \"filesystem\": "
                                         "{\"rules\": [{\"path\": \"/data\", \"access\": \"hidden\"}, {\"path\": "
                                         "\"/etc/secret\", \"access\": \"read-write\"}]}}",
                                         limits_linux);
        struct policy *pol = policy_ok(s);
        ck_assert_int_eq(pol->memory_bytes, 50000000);
        ck_assert_int_eq(pol->max_processes, 20);
        ck_assert_int_eq(pol->cpu_millis, 1500);
        ck_assert_int_eq(pol->net_mode, NET_ALLOW_LISTED);
        ck_assert_str_eq(pol->net_rules[0].host, "api.example.com");
        /* the policy's hidden /data stays hidden (the config's read-only
         * is looser); config's masked /etc/secret narrows read-write */
        ck_assert_int_eq(find_rule(pol, "/data")->access, ACCESS_HIDDEN);
        ck_assert_int_eq(find_rule(pol, "/etc/secret")->access, ACCESS_MASKED);
        ck_assert_uint_eq(pol->n_rules, 2);
        policy_free(pol);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_policy_limits_beyond_ceilings)
{
        /* more CPUs and pids than any host has: no limit, rather than a value the policy never allows */
        struct oci_spec *s = with_policy("{}", "{\"resources\": {\"pids\": {\"limit\": 9000000}, \"cpu\": "
                                               "{\"quota\": 9223372036854775807, \"period\": 1000}, \"memory\": "
                                               "{\"limit\": 1048576}}}");
        struct policy *pol = policy_ok(s);
        ck_assert_int_eq(pol->max_processes, POLICY_UNSET);
        ck_assert_int_eq(pol->cpu_millis, POLICY_UNSET);
        /* a tiny memory limit is still the stricter one */
        ck_assert_int_eq(pol->memory_bytes, 1048576);
        policy_free(pol);
        oci_spec_free(s);

        /* a thousandth of a CPU and less: still a limit */
        s = with_policy("{}", "{\"resources\": {\"cpu\": {\"quota\": 1000, \"period\": 1000000}}}");
        pol = policy_ok(s);
        ck_assert_int_eq(pol->cpu_millis, 1);
        policy_free(pol);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_policy_file)
{
        _cleanup_free_ char *path = xasprintf("%s/p.json", tmpdir), *root = xasprintf("%s/rootfs", tmpdir);
        struct oci_spec *s;
        struct policy *pol;

        write_file(path, "{\"limits\": {\"cpuMillis\": 100}}");
        s = with_policy(path, limits_linux);
        pol = policy_ok(s);
        ck_assert_int_eq(pol->cpu_millis, 100);
        policy_free(pol);
        oci_spec_free(s);

        /* relative: refused (a containerd bundle holds the image's rootfs) */
        json_t *doc = json_loads(MIN, 0, NULL);
        json_object_set_new(doc, "annotations", json_pack("{s:s}", OCI_POLICY_ANNOTATION, "rootfs/p.json"));
        _cleanup_free_ char *text = json_dumps(doc, 0);
        json_decref(doc);
        char *err = NULL;
        ck_assert_int_eq(oci_spec_parse(text, strlen(text), tmpdir, &s, &err), 0);
        ck_assert_str_eq(s->root_path, root);
        pol = NULL;
        ck_assert_int_eq(oci_spec_policy(s, &pol, &err), -EINVAL);
        ck_assert_ptr_null(pol);
        ck_assert_msg(strstr(err, "expected an absolute policy file path"), "%s", err);
        free(err);
        oci_spec_free(s);
}
END_TEST

struct policy_error_case {
        const char *policy; /* the annotation's value; NULL: none */
        const char *extra;  /* a top-level key to add, as JSON "key": value, or NULL */
        const char *gist;
};

static const struct policy_error_case policy_errors[] = {
        {"{\"limits\": {\"cpuMilis\": 5}}", NULL, "annotations[\"dev.cordon.policy\"]: limits.cpuMilis: unknown key"},
        {"{\"limits\": ", NULL, "annotations[\"dev.cordon.policy\"]:1:"},
        {"/nonexistent/policy.json", NULL, "annotations[\"dev.cordon.policy\"]: /nonexistent/policy.json: cannot open"},
        {"", NULL, "annotations[\"dev.cordon.policy\"]: expected a policy file path or an inline JSON policy"},
        {"policy.json", NULL, "annotations[\"dev.cordon.policy\"]: expected an absolute policy file path"},
        {"{\"source\": {\"kind\": \"template\", \"path\": \"/t\"}}", NULL, "remove \"source\" from the policy"},
        {NULL, "[{\"destination\": \"/proc/x\", \"type\": \"bind\", \"source\": \"/x\"}]",
         "mounts[0].destination: \"/proc/x\" is under /proc"},
        {NULL, "[{\"destination\": \"/dev/kvm\", \"type\": \"bind\", \"source\": \"/dev/kvm\"}]",
         "mounts[0].destination: \"/dev/kvm\" is under /dev"},
        {NULL, "[{\"destination\": \"/\", \"type\": \"bind\", \"source\": \"/x\"}]", "a bind over / is not supported"},
        {NULL,
         "[{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"/x\"}, {\"destination\": \"/a\", \"type\": "
         "\"bind\", \"source\": \"/y\"}]",
         "mounts[1].destination: \"/a\" is already the target of an earlier bind mount"},
        {"{\"filesystem\": {\"binds\": [{\"source\": \"/s\", \"target\": \"/a\"}]}}",
         "[{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"/x\"}]",
         "mounts[0].destination: \"/a\" is already the target of a bind in the policy"},
};

START_TEST(test_policy_errors)
{
        const struct policy_error_case *c = &policy_errors[_i];
        json_t *doc = json_loads(MIN, 0, NULL);
        _cleanup_free_ char *text = NULL, *prefix = xasprintf("%s: ", ORIGIN);
        struct oci_spec *s;
        struct policy *pol = NULL;
        char *err = NULL;

        if (c->policy)
                json_object_set_new(doc, "annotations", json_pack("{s:s}", OCI_POLICY_ANNOTATION, c->policy));
        if (c->extra)
                json_object_set_new(doc, "mounts", json_loads(c->extra, 0, NULL));
        text = json_dumps(doc, 0);
        json_decref(doc);
        s = parse_ok(text, strlen(text));
        ck_assert_int_lt(oci_spec_policy(s, &pol, &err), 0);
        ck_assert_ptr_null(pol);
        ck_assert_msg(err && startswith(err, prefix) && strstr(err, c->gist), "row %d: error \"%s\" does not say %s",
                      _i, err ? err : "(none)", c->gist);
        free(err);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_policy_too_many_binds)
{
        json_t *doc = json_loads(MIN, 0, NULL), *mounts = json_array();
        for (int i = 0; i < 65; i++) {
                char dest[32];
                snprintf(dest, sizeof(dest), "/m%d", i);
                json_array_append_new(mounts,
                                      json_pack("{s:s,s:s,s:s}", "destination", dest, "type", "bind", "source", "/x"));
        }
        json_object_set_new(doc, "mounts", mounts);
        _cleanup_free_ char *text = json_dumps(doc, 0);
        json_decref(doc);
        struct oci_spec *s = parse_ok(text, strlen(text));
        struct policy *pol = NULL;
        char *err = NULL;
        ck_assert_int_eq(oci_spec_policy(s, &pol, &err), -EINVAL);
        ck_assert_msg(strstr(err, "mounts[64]: more than 64 bind mounts"), "%s", err);
        free(err);
        oci_spec_free(s);
}
END_TEST

/* ---- seccomp, compiled and loaded ---- */

static struct oci_spec *seccomp_spec(const char *seccomp_json)
{
        _cleanup_free_ char *json = xasprintf(MIN_HEAD ", " MIN_PROC ", \"linux\": {\"seccomp\": %s}}", seccomp_json);
        return parse_ok(json, strlen(json));
}

static void compile_ok(const struct oci_spec *s, struct sock_fprog *prog)
{
        char *err = NULL;
        int r = oci_seccomp_compile(s->seccomp, prog, &err);
        ck_assert_msg(r == 0, "compile: %d %s", r, err ? err : "");
        ck_assert_uint_gt(prog->len, 0);
        ck_assert_ptr_nonnull(prog->filter);
}

/* Runs check in a child under prog; returns its exit status (0: all as expected). */
static int run_filtered(const struct sock_fprog *prog, int (*check)(void))
{
        pid_t pid = fork();
        int status;

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(100);
                if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0)
                        _exit(101);
                _exit(check());
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status), "child died of signal %d", WTERMSIG(status));
        return WEXITSTATUS(status);
}

static int check_custom(void)
{
        errno = 0;
        if (syscall(SYS_getpgid, 0) != -1 || errno != 42)
                return 1;
        /* the same-index comparisons are alternatives, as in runc */
        errno = 0;
        if (syscall(SYS_getpriority, 11111, 0) != -1 || errno != 7)
                return 2;
        errno = 0;
        if (syscall(SYS_getpriority, 22222, 0) != -1 || errno != 7)
                return 3;
        errno = 0;
        if (syscall(SYS_getpriority, PRIO_PROCESS, 0) == -1 && errno == 7)
                return 4;
        if (getpid() <= 0)
                return 5;
        /* the default action applies to what no rule names */
        errno = 0;
        if (syscall(SYS_getsid, 0) != -1 || errno != 13)
                return 6;
        return 0;
}

START_TEST(test_seccomp_custom_loaded)
{
        struct oci_spec *s = seccomp_spec(
                "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_X86\"], "
                "\"syscalls\": [{\"names\": [\"getpgid\", \"no_such_syscall_anywhere\"], \"action\": "
                "\"SCMP_ACT_ERRNO\", \"errnoRet\": 42}, {\"names\": [\"getpriority\"], \"action\": \"SCMP_ACT_ERRNO\", "
                "\"errnoRet\": 7, \"args\": [{\"index\": 0, \"value\": 11111, \"op\": \"SCMP_CMP_EQ\"}, {\"index\": 0, "
                "\"value\": 22222, \"op\": \"SCMP_CMP_EQ\"}]}, {\"names\": [\"getsid\"], \"action\": "
                "\"SCMP_ACT_ERRNO\", \"errnoRet\": 13}, {\"names\": [\"getuid\"], \"action\": \"SCMP_ACT_ALLOW\"}]}");
        struct sock_fprog prog;

        compile_ok(s, &prog);
        ck_assert_int_eq(run_filtered(&prog, check_custom), 0);
        free(prog.filter);
        oci_spec_free(s);
}
END_TEST

static int check_podman(void)
{
        /* named with errnoRet 1 */
        errno = 0;
        if (syscall(SYS_sysfs, 3) != -1 || errno != EPERM)
                return 1;
        /* named nowhere: the default, ERRNO with defaultErrnoRet 38 */
        errno = 0;
        if (syscall(SYS_add_key, "user", "k", "v", 1, 0) != -1 || errno != ENOSYS)
                return 2;
        /* socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT) is EINVAL; other sockets work */
        errno = 0;
        if (socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 9) != -1 || errno != EINVAL)
                return 3;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return 4;
        close(fd);
        if (getpid() <= 0)
                return 5;
        return 0;
}

START_TEST(test_seccomp_podman_loaded)
{
        struct oci_spec *s = load_data("podman-run.json");
        struct sock_fprog prog;

        ck_assert_uint_eq(s->seccomp->default_action, SCMP_ACT_ERRNO(ENOSYS));
        compile_ok(s, &prog);
        ck_assert_int_eq(run_filtered(&prog, check_podman), 0);
        free(prog.filter);
        oci_spec_free(s);
}
END_TEST

START_TEST(test_seccomp_refuses_notify)
{
        /* a struct built by hand (the parser refuses the name already) */
        struct oci_seccomp sc = {.default_action = SCMP_ACT_ALLOW};
        char *names[] = {"read", NULL};
        struct oci_seccomp_rule rule = {.names = names, .action = SCMP_ACT_NOTIFY};
        struct sock_fprog prog = {0};
        char *err = NULL;

        sc.rules = &rule;
        sc.n_rules = 1;
        ck_assert_int_eq(oci_seccomp_compile(&sc, &prog, &err), -EOPNOTSUPP);
        ck_assert_msg(strstr(err, "syscalls[0].action: SCMP_ACT_NOTIFY"), "%s", err);
        ck_assert_ptr_null(prog.filter);
        free(err);
        sc.default_action = SCMP_ACT_NOTIFY;
        sc.n_rules = 0;
        ck_assert_int_eq(oci_seccomp_compile(&sc, &prog, &err), -EOPNOTSUPP);
        free(err);
}
END_TEST

static int check_containerd(void)
{
        /* named nowhere: the default, ERRNO without defaultErrnoRet */
        errno = 0;
        if (syscall(SYS_add_key, "user", "k", "v", 1, 0) != -1 || errno != EPERM)
                return 1;
        /* personality(0) is allowed by an argument rule; another value is not */
        if (syscall(SYS_personality, 0xffffffffUL) < 0)
                return 2;
        errno = 0;
        if (syscall(SYS_personality, 0x0400000UL /* READ_IMPLIES_EXEC */) != -1 || errno != EPERM)
                return 3;
        if (getpid() <= 0)
                return 4;
        return 0;
}

START_TEST(test_seccomp_containerd_loaded)
{
        struct oci_spec *s = load_data("containerd-run-seccomp.json");
        struct sock_fprog prog;

        compile_ok(s, &prog);
        ck_assert_int_eq(run_filtered(&prog, check_containerd), 0);
        free(prog.filter);
        oci_spec_free(s);
}
END_TEST

static Suite *oci_suite(void)
{
        Suite *s = suite_create("sentry-oci");
        TCase *tc;

        tc = tcase_create("real-configs");
        tcase_add_test(tc, test_runc_spec);
        tcase_add_test(tc, test_runc_spec_rootless);
        tcase_add_test(tc, test_crun_spec);
        tcase_add_test(tc, test_podman_run);
        tcase_add_test(tc, test_podman_run_limits);
        tcase_add_test(tc, test_podman_run_unlimited);
        tcase_add_test(tc, test_podman_run_device_refused);
        tcase_add_test(tc, test_podman_exec_process);
        tcase_add_test(tc, test_containerd_run);
        tcase_add_test(tc, test_containerd_run_seccomp);
        suite_add_tcase(s, tc);

        tc = tcase_create("valid");
        tcase_add_test(tc, test_minimal);
        tcase_add_test(tc, test_unknown_keys_ignored);
        tcase_add_test(tc, test_nulls_are_absent);
        tcase_add_test(tc, test_u64_max);
        tcase_add_test(tc, test_mount_options);
        tcase_add_test(tc, test_hooks_and_more);
        tcase_add_test(tc, test_resources);
        tcase_add_test(tc, test_process_file);
        tcase_add_test(tc, test_unknown_caps_ignored);
        tcase_add_test(tc, test_resources_document);
        suite_add_tcase(s, tc);

        tc = tcase_create("invalid");
        tcase_add_loop_test(tc, test_invalid, 0, (int)ELEMENTSOF(invalid_cases));
        tcase_add_test(tc, test_too_large);
        suite_add_tcase(s, tc);

        tc = tcase_create("files");
        tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
        tcase_add_test(tc, test_load_bundle);
        tcase_add_test(tc, test_load_missing_and_odd);
        tcase_add_test(tc, test_policy_file);
        suite_add_tcase(s, tc);

        tc = tcase_create("policy");
        tcase_add_test(tc, test_policy_podman);
        tcase_add_test(tc, test_policy_runc_rootless_sys_bind);
        tcase_add_test(tc, test_policy_inline_stricter_wins);
        tcase_add_test(tc, test_policy_limits_beyond_ceilings);
        tcase_add_loop_test(tc, test_policy_errors, 0, (int)ELEMENTSOF(policy_errors));
        tcase_add_test(tc, test_policy_too_many_binds);
        suite_add_tcase(s, tc);

        tc = tcase_create("seccomp");
        tcase_add_test(tc, test_seccomp_custom_loaded);
        tcase_add_test(tc, test_seccomp_podman_loaded);
        tcase_add_test(tc, test_seccomp_containerd_loaded);
        tcase_add_test(tc, test_seccomp_refuses_notify);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(oci_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
