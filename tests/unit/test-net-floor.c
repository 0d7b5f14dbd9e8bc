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
 * removed at the end. Needs root and a cgroup2 mount; skips (77) otherwise. */

#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "common/util.h"
#include "net/net.h"

static char cg_dir[256];

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
static void run_probes(bool in_group, int res[_P_MAX])
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
                if (in_group) {
                        char path[300], me[32];
                        snprintf(path, sizeof(path), "%s/cgroup.procs", cg_dir);
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

START_TEST(floor_refuses_all_but_loopback)
{
        int res[_P_MAX];
        run_probes(true, res);
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
END_TEST

/* the control: outside the group the kernel itself answers (no route) */
START_TEST(outside_the_group_the_kernel_answers)
{
        int res[_P_MAX];
        run_probes(false, res);
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

static Suite *floor_suite(void)
{
        Suite *s = suite_create("net-floor");
        TCase *tc = tcase_create("floor");
        tcase_add_test(tc, probe_loads);
        tcase_add_test(tc, floor_attaches_all_hooks);
        tcase_add_test(tc, floor_refuses_all_but_loopback);
        tcase_add_test(tc, outside_the_group_the_kernel_answers);
        tcase_add_test(tc, each_kind_gets_its_own_egress_program);
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
        return failed ? 1 : 0;
}
