#include "config.h"

/* Unit tests for the kernel egress floor (net/floor.c, net/floor.bpf.c):
 * the programs load, attach to a cgroup v2 group (all five hooks), and then
 * decide for a process in that group: its own loopback (127/8, ::1,
 * ::ffff:127/104) passes, every other destination of connect() and of an
 * addressed sendto() is refused with EPERM; the same process outside the
 * group gets the kernel's ENETUNREACH instead.
 *
 * The probes run in a fresh network namespace with only lo (up): no packet
 * can leave, whether the floor holds or not. A group of this run's own
 * ("floor-unit-PID") is made at the root of the cgroup2 hierarchy and
 * removed at the end. Needs root and a cgroup2 mount; skips (77) otherwise.
 *
 * The programs' pins go in a bpffs of the run's own, mounted in a mount
 * namespace of its own (never the host's /sys/fs/bpf): the first attach
 * loads and pins them, later ones take them from there; both ways must
 * attach the same five programs and decide the same, and a pin that is not
 * ours (or a directory anyone could have written) must be refused and the
 * programs loaded instead. */

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "common/util.h"
#include "net/net.h"

static char cg_dir[256], pin_fs[64];

enum probe {
        P_TCP4_REMOTE,
        P_TCP4_LOOPBACK,
        P_TCP4_LOOPBACK_OTHER, /* 127.0.0.2: all of 127/8 is loopback */
        P_TCP6_LOOPBACK,
        P_TCP6_MAPPED_LOOPBACK,
        P_TCP6_MAPPED_REMOTE,
        P_TCP6_REMOTE,
        P_UDP4_REMOTE,
        P_UDP4_LOOPBACK,
        P_UDP6_REMOTE,
        P_UDP4_CONNECT_REMOTE,
        _P_MAX,
};

static int sa4(struct sockaddr_in *sa, const char *ip, int port)
{
        *sa = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

static int sa6(struct sockaddr_in6 *sa, const char *ip, int port)
{
        *sa = (struct sockaddr_in6){.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
        return inet_pton(AF_INET6, ip, &sa->sin6_addr) == 1 ? 0 : -EINVAL;
}

/* 0 or the errno of the call */
static int try_connect(int family, int type, const struct sockaddr *sa, socklen_t len)
{
        int s = socket(family, type | SOCK_CLOEXEC, 0);
        if (s < 0)
                return errno;
        int r = connect(s, sa, len) < 0 ? errno : 0;
        close(s);
        return r;
}

static int try_sendto(int family, const struct sockaddr *sa, socklen_t len)
{
        int s = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return errno;
        int r = sendto(s, "x", 1, 0, sa, len) < 0 ? errno : 0;
        close(s);
        return r;
}

static int listener(int family, const struct sockaddr *sa, socklen_t len)
{
        int s = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (s < 0 || bind(s, sa, len) < 0 || listen(s, 8) < 0)
                return -1;
        return s;
}

/* In a child: (join the group,) a new network namespace with lo up, every
 * probe; the errnos come back through the pipe. */
static void run_probes(const char *group, int res[_P_MAX])
{
        int p[2];
        ck_assert_int_eq(pipe(p), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                close(p[0]);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                int out[_P_MAX];
                for (int i = 0; i < _P_MAX; i++)
                        out[i] = -1;
                if (group) {
                        char path[300], me[32];
                        snprintf(path, sizeof(path), "%s/cgroup.procs", group);
                        snprintf(me, sizeof(me), "%d", getpid());
                        int fd = open(path, O_WRONLY | O_CLOEXEC);
                        if (fd < 0 || write(fd, me, strlen(me)) < 0)
                                _exit(2);
                        close(fd);
                }
                if (unshare(CLONE_NEWNET) < 0 || net_loopback_up() < 0)
                        _exit(3);
                struct sockaddr_in a4, l4, l4b;
                struct sockaddr_in6 a6, l6;
                sa4(&l4, "127.0.0.1", 4747);
                sa4(&l4b, "127.0.0.2", 4748);
                sa6(&l6, "::1", 4749);
                int ls1 = listener(AF_INET, (struct sockaddr *)&l4, sizeof(l4));
                int ls2 = listener(AF_INET, (struct sockaddr *)&l4b, sizeof(l4b));
                int ls3 = listener(AF_INET6, (struct sockaddr *)&l6, sizeof(l6));
                if (ls1 < 0 || ls2 < 0 || ls3 < 0)
                        _exit(4);

                sa4(&a4, "10.213.255.1", 80);
                out[P_TCP4_REMOTE] = try_connect(AF_INET, SOCK_STREAM, (struct sockaddr *)&a4, sizeof(a4));
                out[P_TCP4_LOOPBACK] = try_connect(AF_INET, SOCK_STREAM, (struct sockaddr *)&l4, sizeof(l4));
                out[P_TCP4_LOOPBACK_OTHER] = try_connect(AF_INET, SOCK_STREAM, (struct sockaddr *)&l4b, sizeof(l4b));
                out[P_TCP6_LOOPBACK] = try_connect(AF_INET6, SOCK_STREAM, (struct sockaddr *)&l6, sizeof(l6));
                sa6(&a6, "::ffff:127.0.0.1", 4747);
                out[P_TCP6_MAPPED_LOOPBACK] = try_connect(AF_INET6, SOCK_STREAM, (struct sockaddr *)&a6, sizeof(a6));
                sa6(&a6, "::ffff:10.213.255.1", 80);
                out[P_TCP6_MAPPED_REMOTE] = try_connect(AF_INET6, SOCK_STREAM, (struct sockaddr *)&a6, sizeof(a6));
                sa6(&a6, "2001:db8::1", 80);
                out[P_TCP6_REMOTE] = try_connect(AF_INET6, SOCK_STREAM, (struct sockaddr *)&a6, sizeof(a6));
                sa4(&a4, "10.213.255.1", 53);
                out[P_UDP4_REMOTE] = try_sendto(AF_INET, (struct sockaddr *)&a4, sizeof(a4));
                out[P_UDP4_CONNECT_REMOTE] = try_connect(AF_INET, SOCK_DGRAM, (struct sockaddr *)&a4, sizeof(a4));
                sa4(&a4, "127.0.0.1", 53);
                out[P_UDP4_LOOPBACK] = try_sendto(AF_INET, (struct sockaddr *)&a4, sizeof(a4));
                sa6(&a6, "2001:db8::1", 53);
                out[P_UDP6_REMOTE] = try_sendto(AF_INET6, (struct sockaddr *)&a6, sizeof(a6));
                _exit(write(p[1], out, sizeof(out)) == (ssize_t)sizeof(out) ? 0 : 5);
        }
        close(p[1]);
        ssize_t n = read(p[0], res, sizeof(int) * _P_MAX);
        close(p[0]);
        int status;
        waitpid(pid, &status, 0);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "probe child failed: status 0x%x", status);
        ck_assert_int_eq(n, (ssize_t)sizeof(int) * _P_MAX);
}

START_TEST(floor_attaches_all_hooks)
{
        int fd = open(cg_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(net_floor_attached(fd), 5);
        close(fd);
}
END_TEST

static void expect_floor(const char *group)
{
        int res[_P_MAX];
        run_probes(group, res);
        ck_assert_int_eq(res[P_TCP4_REMOTE], EPERM);
        ck_assert_int_eq(res[P_TCP4_LOOPBACK], 0);
        ck_assert_int_eq(res[P_TCP4_LOOPBACK_OTHER], 0);
        ck_assert_int_eq(res[P_TCP6_LOOPBACK], 0);
        ck_assert_int_eq(res[P_TCP6_MAPPED_LOOPBACK], 0);
        ck_assert_int_eq(res[P_TCP6_MAPPED_REMOTE], EPERM);
        ck_assert_int_eq(res[P_TCP6_REMOTE], EPERM);
        ck_assert_int_eq(res[P_UDP4_REMOTE], EPERM);
        ck_assert_int_eq(res[P_UDP4_CONNECT_REMOTE], EPERM);
        ck_assert_int_eq(res[P_UDP4_LOOPBACK], 0);
        ck_assert_int_eq(res[P_UDP6_REMOTE], EPERM);
}

START_TEST(floor_refuses_all_but_loopback)
{
        expect_floor(cg_dir);
}
END_TEST

/* the control: outside the group the kernel itself answers (no route) */
START_TEST(outside_the_group_the_kernel_answers)
{
        int res[_P_MAX];
        run_probes(NULL, res);
        ck_assert_int_eq(res[P_TCP4_REMOTE], ENETUNREACH);
        ck_assert_int_eq(res[P_TCP4_LOOPBACK], 0);
        ck_assert_int_eq(res[P_TCP6_MAPPED_REMOTE], ENETUNREACH);
        ck_assert_int_eq(res[P_UDP4_REMOTE], ENETUNREACH);
        ck_assert_int_eq(res[P_UDP4_LOOPBACK], 0);
}
END_TEST

START_TEST(probe_loads)
{
        char why[256] = "";
        ck_assert_msg(net_floor_probe(why, sizeof(why)) == 0, "%s", why);
}
END_TEST

/* The name of the program attached to dir's egress hook ("" if none). */
static void egress_prog_name(const char *dir, char name[BPF_OBJ_NAME_LEN])
{
        name[0] = '\0';
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        __u32 ids[4], count = ELEMENTSOF(ids), flags = 0;
        ck_assert_int_eq(bpf_prog_query(fd, BPF_CGROUP_INET_EGRESS, 0, &flags, ids, &count), 0);
        close(fd);
        ck_assert_uint_eq(count, 1);
        int pfd = bpf_prog_get_fd_by_id(ids[0]);
        ck_assert_int_ge(pfd, 0);
        struct bpf_prog_info info = {0};
        __u32 len = sizeof(info);
        ck_assert_int_eq(bpf_obj_get_info_by_fd(pfd, &info, &len), 0);
        close(pfd);
        memcpy(name, info.name, BPF_OBJ_NAME_LEN);
}

/* Only the egress program the sandbox uses is loaded (the preload knows
 * which): a preload of the other kind is dropped and the right one loaded,
 * so a joined sandbox never gets the loopback-only backstop nor an own
 * namespace's sandbox the joined one's TCP exception. */
START_TEST(each_kind_gets_its_own_egress_program)
{
        const struct {
                bool preloaded, joined; /* the kind preloaded, the kind attached */
                const char *name;
        } rows[] = {
                {false, false, "floor_egress"},
                {true, true, "floor_egress_jo"},
                {true, false, "floor_egress"},
                {false, true, "floor_egress_jo"},
        };
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                char dir[300], why[256] = "", name[BPF_OBJ_NAME_LEN];
                snprintf(dir, sizeof(dir), "%s/kind%zu", cg_dir, i);
                ck_assert_int_eq(mkdir(dir, 0755), 0);
                int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ck_assert_int_ge(fd, 0);
                net_floor_preload(rows[i].preloaded);
                ck_assert_msg(net_floor_attach_joined(fd, rows[i].joined, why, sizeof(why)) == 0, "%s", why);
                ck_assert_int_eq(net_floor_attached(fd), 5);
                close(fd);
                egress_prog_name(dir, name);
                ck_assert_msg(strcmp(name, rows[i].name) == 0, "row %zu: %s attached, %s expected", i, name,
                              rows[i].name);
                ck_assert_int_eq(rmdir(dir), 0);
        }
        net_floor_preload_end();
}
END_TEST

/* --- the programs taken from their pins --- */

static const struct {
        const char *hook;
        enum bpf_attach_type type;
} hook_rows[] = {
        {"connect4", BPF_CGROUP_INET4_CONNECT}, {"connect6", BPF_CGROUP_INET6_CONNECT},
        {"sendmsg4", BPF_CGROUP_UDP4_SENDMSG},  {"sendmsg6", BPF_CGROUP_UDP6_SENDMSG},
        {"egress", BPF_CGROUP_INET_EGRESS},
};

/* The ids, tags and names of the programs attached to group's five hooks. */
struct attached {
        __u32 id[5];
        __u8 tag[5][BPF_TAG_SIZE];
        char name[5][BPF_OBJ_NAME_LEN];
};

static void prog_info(int pfd, struct bpf_prog_info *info)
{
        __u32 len = sizeof(*info);
        memset(info, 0, sizeof(*info));
        ck_assert_int_eq(bpf_obj_get_info_by_fd(pfd, info, &len), 0);
}

static void attached_progs(const char *group, struct attached *ret)
{
        int fd = open(group, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        for (size_t i = 0; i < ELEMENTSOF(hook_rows); i++) {
                __u32 ids[4], count = ELEMENTSOF(ids), flags = 0;
                ck_assert_int_eq(bpf_prog_query(fd, hook_rows[i].type, 0, &flags, ids, &count), 0);
                ck_assert_uint_eq(count, 1);
                int pfd = bpf_prog_get_fd_by_id(ids[0]);
                ck_assert_int_ge(pfd, 0);
                struct bpf_prog_info info;
                prog_info(pfd, &info);
                close(pfd);
                ret->id[i] = ids[0];
                memcpy(ret->tag[i], info.tag, BPF_TAG_SIZE);
                memcpy(ret->name[i], info.name, BPF_OBJ_NAME_LEN);
        }
        close(fd);
}

/* The pin of hook (PIN_FS/cordon/HOOK-TAG) as a path, "" if none; for
 * egress, the own namespace's program's (not the joined kind's, which
 * each_kind_gets_its_own_egress_program pinned too). */
static void pin_of(const char *hook, char *buf, size_t size)
{
        buf[0] = '\0';
        char dir[128];
        snprintf(dir, sizeof(dir), "%s/cordon", pin_fs);
        DIR *d = opendir(dir);
        ck_assert_ptr_nonnull(d);
        size_t n = strlen(hook);
        for (struct dirent *e; (e = readdir(d));) {
                if (strncmp(e->d_name, hook, n) != 0 || e->d_name[n] != '-')
                        continue;
                char path[400];
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                int pfd = bpf_obj_get(path);
                ck_assert_int_ge(pfd, 0);
                struct bpf_prog_info info;
                prog_info(pfd, &info);
                close(pfd);
                if (strcmp(info.name, "floor_egress_jo") != 0)
                        snprintf(buf, size, "%s", path);
        }
        closedir(d);
}

static __u32 pinned_id(const char *hook)
{
        char path[400];
        pin_of(hook, path, sizeof(path));
        ck_assert_msg(path[0], "no pin for %s", hook);
        int pfd = bpf_obj_get(path);
        ck_assert_int_ge(pfd, 0);
        struct bpf_prog_info info;
        prog_info(pfd, &info);
        close(pfd);
        return info.id;
}

/* A group beside the run's, the floor attached (as a start would), or -errno. */
static int group_with_floor(const char *name, char *dir, size_t size)
{
        snprintf(dir, size, "%s-%s", cg_dir, name);
        ck_assert_int_eq(mkdir(dir, 0755), 0);
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        char why[256] = "";
        int r = net_floor_attach(fd, why, sizeof(why));
        ck_assert_msg(r == 0, "%s", why);
        ck_assert_int_eq(net_floor_attached(fd), 5);
        close(fd);
        return r;
}

static bool how_is(const char *prefix)
{
        return strncmp(net_floor_how(), prefix, strlen(prefix)) == 0;
}

/* The run's group got its programs loaded (no pins yet) and pinned them; a
 * second start takes exactly those, and they decide as loaded ones do. */
START_TEST(pinned_and_fresh_attach_the_same_programs)
{
        struct attached fresh, pinned;
        attached_progs(cg_dir, &fresh);
        char dir[300];
        group_with_floor("pinned", dir, sizeof(dir));
        ck_assert_msg(how_is("programs reused from their pins"), "%s", net_floor_how());
        attached_progs(dir, &pinned);
        for (size_t i = 0; i < ELEMENTSOF(hook_rows); i++) {
                ck_assert_msg(memcmp(fresh.tag[i], pinned.tag[i], BPF_TAG_SIZE) == 0, "%s: another program",
                              hook_rows[i].hook);
                ck_assert_str_eq(fresh.name[i], pinned.name[i]);
                ck_assert_uint_eq(pinned.id[i], pinned_id(hook_rows[i].hook));
        }
        expect_floor(dir);
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* A program of ours but not the one for the hook, pinned under the egress
 * hook's name: refused, the programs loaded, the pin put right. */
START_TEST(a_wrong_pin_is_refused_and_replaced)
{
        char path[400], dir[300];
        pin_of("egress", path, sizeof(path));
        ck_assert(path[0]);
        __u32 good = pinned_id("egress");
        ck_assert_int_eq(unlink(path), 0);
        /* the same type and name, other instructions: r0 = 1; exit */
        struct bpf_insn insns[] = {
                {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1},
                {.code = BPF_JMP | BPF_EXIT},
        };
        LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_CGROUP_INET_EGRESS);
        int fake = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "floor_egress", "GPL", insns, 2, &opts);
        ck_assert_int_ge(fake, 0);
        ck_assert_int_eq(bpf_obj_pin(fake, path), 0);
        struct bpf_prog_info info;
        prog_info(fake, &info);
        close(fake);

        group_with_floor("wrongpin", dir, sizeof(dir));
        ck_assert_msg(how_is("programs loaded at this start (pins: a pin under our name is not our program)"), "%s",
                      net_floor_how());
        struct attached a;
        attached_progs(dir, &a);
        ck_assert_uint_ne(a.id[4], info.id);
        ck_assert_uint_ne(a.id[4], good);
        ck_assert_uint_ne(pinned_id("egress"), info.id); /* replaced by ours */
        expect_floor(dir);
        ck_assert_int_eq(rmdir(dir), 0);

        group_with_floor("repinned", dir, sizeof(dir));
        ck_assert_msg(how_is("programs reused from their pins"), "%s", net_floor_how());
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* A pins' directory others could write to is not used (nor its pins). */
START_TEST(a_directory_others_can_write_is_not_used)
{
        char pins[128], dir[300];
        snprintf(pins, sizeof(pins), "%s/cordon", pin_fs);
        ck_assert_int_eq(chmod(pins, 0770), 0);
        group_with_floor("opendir", dir, sizeof(dir));
        ck_assert_int_eq(chmod(pins, 0700), 0);
        ck_assert_msg(how_is("programs loaded at this start (pins: the pins' directory is not root's alone"), "%s",
                      net_floor_how());
        struct attached a;
        attached_progs(dir, &a);
        ck_assert_uint_ne(a.id[0], pinned_id("connect4"));
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* cordon check takes the pins where they are; forced off (in a child: the
 * switch is for the process), every attach loads its own. */
START_TEST(probe_and_forced_fallback)
{
        char why[256] = "";
        ck_assert_msg(net_floor_probe(why, sizeof(why)) == 0, "%s", why);
        ck_assert_msg(how_is("programs reused from their pins"), "%s", net_floor_how());
        char dir[300];
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (net_floor_force_fallback("floor_pin") < 0 || net_floor_force_fallback("openat2") != -EINVAL)
                        _exit(2);
                snprintf(dir, sizeof(dir), "%s-forced", cg_dir);
                int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0 || net_floor_attach(fd, why, sizeof(why)) < 0 || net_floor_attached(fd) != 5)
                        _exit(3);
                _exit(how_is("programs loaded at this start (pins: forced absent") ? 0 : 4);
        }
        snprintf(dir, sizeof(dir), "%s-forced", cg_dir);
        ck_assert_int_eq(mkdir(dir, 0755), 0);
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: 0x%x", status);
        struct attached a;
        attached_progs(dir, &a);
        ck_assert_uint_ne(a.id[0], pinned_id("connect4"));
        expect_floor(dir);
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *floor_suite(void)
{
        Suite *s = suite_create("net-floor");
        TCase *tc = tcase_create("floor");
        tcase_add_test(tc, probe_loads);
        tcase_add_test(tc, floor_attaches_all_hooks);
        tcase_add_test(tc, floor_refuses_all_but_loopback);
        tcase_add_test(tc, outside_the_group_the_kernel_answers);
        tcase_add_test(tc, each_kind_gets_its_own_egress_program);
        tcase_add_test(tc, pinned_and_fresh_attach_the_same_programs);
        tcase_add_test(tc, a_wrong_pin_is_refused_and_replaced);
        tcase_add_test(tc, a_directory_others_can_write_is_not_used);
        tcase_add_test(tc, probe_and_forced_fallback);
        suite_add_tcase(s, tc);
        return s;
}

static bool is_cgroup2(const char *path)
{
        struct statfs s;
        return statfs(path, &s) == 0 && s.f_type == CGROUP2_SUPER_MAGIC;
}

int main(void)
{
        if (geteuid() != 0) {
                printf("skip: needs root (loads BPF programs, makes a cgroup)\n");
                return 77;
        }
        const char *root = is_cgroup2("/sys/fs/cgroup")           ? "/sys/fs/cgroup"
                           : is_cgroup2("/sys/fs/cgroup/unified") ? "/sys/fs/cgroup/unified"
                                                                  : NULL;
        if (!root) {
                printf("skip: no cgroup2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified\n");
                return 77;
        }
        /* the pins' bpffs: the run's own, in a mount namespace of its own */
        snprintf(pin_fs, sizeof(pin_fs), "/tmp/floor-unit-bpffs-%d", (int)getpid());
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mkdir(pin_fs, 0700) < 0 || mount("bpf", pin_fs, "bpf", 0, "mode=0700") < 0) {
                printf("skip: no bpffs of the run's own at %s: %s\n", pin_fs, strerror(errno));
                rmdir(pin_fs);
                return 77;
        }
        net_floor_test_pin_fs(pin_fs);
        snprintf(cg_dir, sizeof(cg_dir), "%s/floor-unit-%d", root, (int)getpid());
        if (mkdir(cg_dir, 0755) < 0) {
                printf("skip: cannot make %s: %s\n", cg_dir, strerror(errno));
                return 77;
        }
        char why[256] = "";
        int fd = open(cg_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r = fd < 0 ? -errno : net_floor_attach(fd, why, sizeof(why));
        if (fd >= 0)
                close(fd);
        if (r < 0) {
                rmdir(cg_dir);
                printf("FAIL: attaching the floor to %s: %s\n", cg_dir, why);
                return 1;
        }
        SRunner *sr = srunner_create(floor_suite());
        srunner_set_fork_status(sr, CK_NOFORK);
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        /* the probe children are gone (waited for): the group is empty */
        if (rmdir(cg_dir) < 0)
                printf("warning: rmdir %s: %s\n", cg_dir, strerror(errno));
        (void)umount2(pin_fs, MNT_DETACH);
        (void)rmdir(pin_fs);
        return failed ? 1 : 0;
}
