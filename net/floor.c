/* The kernel egress floor: loads the programs of floor.bpf.c (their
 * instructions read from the libbpf skeleton bpftool generated at build
 * time) and attaches them to the sandbox's cgroup v2 group.
 *
 * Attached with the legacy BPF_PROG_ATTACH rather than as bpf_links: the
 * attachment then belongs to the cgroup and lasts until the group is
 * removed, not until the sentry closes an fd, so no window opens when the
 * sentry exits (or is killed) before the last of the sandbox's processes.
 *
 * BPF_F_ALLOW_MULTI: programs the host attached to ancestor groups (systemd's
 * IP accounting and firewall use ALLOW_MULTI too) keep running alongside
 * ours, and a verdict of any of them that refuses wins. Nothing in the
 * sandbox can attach programs beneath ours to undo it: bpf() is refused by
 * its seccomp filter and it holds no capability, and with ALLOW_MULTI a
 * descendant's program could only add refusals anyway.
 *
 * The programs hold no state and are the same for every sandbox of a kind,
 * so they are loaded once and pinned in bpffs (/sys/fs/bpf/cordon/, a
 * root-only directory): a start takes them from there, checks what it got
 * and attaches them to its own group as before (floor-pin below). */
#include "config.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "net/floor.skel.h"
#include "net/net.h"

static const struct {
        const char *name;
        enum bpf_attach_type type;
} hooks[] = {
        {"connect4", BPF_CGROUP_INET4_CONNECT}, {"connect6", BPF_CGROUP_INET6_CONNECT},
        {"sendmsg4", BPF_CGROUP_UDP4_SENDMSG},  {"sendmsg6", BPF_CGROUP_UDP6_SENDMSG},
        {"egress", BPF_CGROUP_INET_EGRESS},
};

/* libbpf would print to stderr; only sentry/ talks to people, so its
 * messages are dropped and the caller gets an errno and a reason instead. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
        return 0;
}

_printf_(3, 4) static void set_why(char *why, size_t size, const char *fmt, ...)
{
        if (!why || size == 0)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
}

/* The programs of one floor: the four sock_addr hooks and one of the two
 * egress programs, as fds the kernel gave for them, and how they came
 * (for cordon check and run -v). */
struct floor_progs {
        int fd[ELEMENTSOF(hooks)];
        bool pinned;
        char how[200];
};

static void progs_close(struct floor_progs *p)
{
        for (size_t i = 0; i < ELEMENTSOF(p->fd); i++)
                if (p->fd[i] >= 0)
                        close(TAKE_FD(p->fd[i]));
}

static struct bpf_program *hook_prog(struct floor_bpf *skel, size_t i, bool joined)
{
        struct bpf_program *p[] = {skel->progs.floor_connect4, skel->progs.floor_connect6, skel->progs.floor_sendmsg4,
                                   skel->progs.floor_sendmsg6,
                                   joined ? skel->progs.floor_egress_joined : skel->progs.floor_egress};
        return p[i];
}

/* One program as compiled in: its instructions, type, name (cut to 15
 * characters, as the kernel keeps it) and the tags the kernel may give a
 * program of exactly these instructions: the first 8 bytes of their SHA-1
 * (kernel/bpf/core.c bpf_prog_calc_tag; older kernels) or of their
 * SHA-256 (newer ones: 6.18 here), over the instructions with map fds zeroed, and
 * these programs load none. The SHA-256 one names the pin (as `bpftool prog
 * show` gives the tag on such a kernel); either identifies what a pin
 * holds. */
struct prog_spec {
        const struct bpf_insn *insns;
        size_t cnt;
        enum bpf_prog_type type;
        enum bpf_attach_type attach;
        char name[BPF_OBJ_NAME_LEN];
        uint8_t sha1[BPF_TAG_SIZE], sha256[BPF_TAG_SIZE];
        char pin[64]; /* "connect4-TAG" */
};

/* SHA-1 and SHA-256 (FIPS 180-4), only for the tags above: identities the
 * kernel computes too, not secrets. */
static uint32_t rol32(uint32_t x, int n)
{
        return x << n | x >> (32 - n);
}

static uint32_t ror32(uint32_t x, int n)
{
        return x >> n | x << (32 - n);
}

static uint32_t be32(const uint8_t *b)
{
        return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void sha1_block(uint32_t h[8], const uint8_t b[64])
{
        uint32_t w[80];
        for (int i = 0; i < 16; i++)
                w[i] = be32(b + 4 * i);
        for (int i = 16; i < 80; i++)
                w[i] = rol32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4];
        for (int i = 0; i < 80; i++) {
                uint32_t f, k;
                if (i < 20)
                        f = (bb & c) | (~bb & d), k = 0x5a827999;
                else if (i < 40)
                        f = bb ^ c ^ d, k = 0x6ed9eba1;
                else if (i < 60)
                        f = (bb & c) | (bb & d) | (c & d), k = 0x8f1bbcdc;
                else
                        f = bb ^ c ^ d, k = 0xca62c1d6;
                uint32_t t = rol32(a, 5) + f + e + k + w[i];
                e = d, d = c, c = rol32(bb, 30), bb = a, a = t;
        }
        h[0] += a, h[1] += bb, h[2] += c, h[3] += d, h[4] += e;
}

static const uint32_t sha256_k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static void sha256_block(uint32_t h[8], const uint8_t b[64])
{
        uint32_t w[64], v[8];
        for (int i = 0; i < 16; i++)
                w[i] = be32(b + 4 * i);
        for (int i = 16; i < 64; i++)
                w[i] = w[i - 16] + (ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 7] +
                       (ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10));
        memcpy(v, h, sizeof(v));
        for (int i = 0; i < 64; i++) {
                uint32_t t1 = v[7] + (ror32(v[4], 6) ^ ror32(v[4], 11) ^ ror32(v[4], 25)) +
                              ((v[4] & v[5]) ^ (~v[4] & v[6])) + sha256_k[i] + w[i];
                uint32_t t2 = (ror32(v[0], 2) ^ ror32(v[0], 13) ^ ror32(v[0], 22)) +
                              ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
                memmove(v + 1, v, 7 * sizeof(v[0]));
                v[4] += t1;
                v[0] = t1 + t2;
        }
        for (int i = 0; i < 8; i++)
                h[i] += v[i];
}

/* The first 8 bytes of the digest of data: both hashes pad alike (a 1 bit,
 * zeros, the length in bits big-endian in a block's last 8 bytes). */
static void tag_of(bool sha256, const void *data, size_t len, uint8_t ret_tag[BPF_TAG_SIZE])
{
        uint32_t h[8] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
        static const uint32_t h256[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
        if (sha256)
                memcpy(h, h256, sizeof(h));
        void (*block)(uint32_t *, const uint8_t *) = sha256 ? sha256_block : sha1_block;
        const uint8_t *p = data;
        size_t left = len;
        for (; left >= 64; p += 64, left -= 64)
                block(h, p);
        uint8_t last[128] = {0};
        memcpy(last, p, left);
        last[left] = 0x80;
        size_t n = left < 56 ? 64 : 128;
        uint64_t bits = (uint64_t)len * 8;
        for (int i = 0; i < 8; i++)
                last[n - 1 - i] = (uint8_t)(bits >> (8 * i));
        block(h, last);
        if (n == 128)
                block(h, last + 64);
        for (int i = 0; i < BPF_TAG_SIZE; i++)
                ret_tag[i] = (uint8_t)(h[i / 4] >> (24 - 8 * (i % 4)));
}

static void spec_fill(struct floor_bpf *skel, size_t i, bool joined, struct prog_spec *ret)
{
        const struct bpf_program *prog = hook_prog(skel, i, joined);
        *ret = (struct prog_spec){
                .insns = bpf_program__insns(prog),
                .cnt = bpf_program__insn_cnt(prog),
                .type = bpf_program__type(prog),
                .attach = hooks[i].type,
        };
        snprintf(ret->name, sizeof(ret->name), "%s", bpf_program__name(prog));
        tag_of(false, ret->insns, ret->cnt * sizeof(struct bpf_insn), ret->sha1);
        tag_of(true, ret->insns, ret->cnt * sizeof(struct bpf_insn), ret->sha256);
        int n = snprintf(ret->pin, sizeof(ret->pin), "%s-", hooks[i].name);
        for (int k = 0; k < BPF_TAG_SIZE; k++)
                n += snprintf(ret->pin + n, sizeof(ret->pin) - (size_t)n, "%02x", ret->sha256[k]);
}

/* One BPF_PROG_LOAD of the instructions as compiled, by the syscall
 * itself: libbpf's bpf_prog_load would first load two probe programs of its
 * own in every process (whether the kernel takes program names, whether it
 * charges BPF memory to the memory cgroup). A kernel that still counts it
 * against RLIMIT_MEMLOCK (before Linux 5.11) may refuse with EPERM: then
 * libbpf's load, which raises the limit. The fd, or -errno. */
static int prog_load(const struct prog_spec *spec)
{
        union bpf_attr attr = {
                .prog_type = spec->type,
                .expected_attach_type = spec->attach,
                .insns = (uintptr_t)spec->insns,
                .insn_cnt = (__u32)spec->cnt,
                .license = (uintptr_t) "GPL",
        };
        memcpy(attr.prog_name, spec->name, sizeof(attr.prog_name));
        int fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
        if (fd >= 0)
                return fd;
        if (errno != EPERM)
                return negative_errno();
        LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = spec->attach);
        fd = bpf_prog_load(spec->type, spec->name, "GPL", spec->insns, spec->cnt, &opts);
        return fd >= 0 ? fd : fd == -1 ? negative_errno() : fd;
}

/* --- floor-pin: the programs loaded once, kept in bpffs ---
 *
 * Why this is safe: a loaded program is immutable, and these hold no state
 * (no map, no global data), so one loaded copy attached to many groups acts
 * in each exactly as a copy of its own would. What a start takes from a pin
 * is checked before it is attached: the directory is on a bpffs, owned by
 * root and writable by nobody else (only root could have put the pin there,
 * and root can detach any sandbox's floor anyway); the program's type and
 * name are ours and its tag, which the kernel computes from the
 * instructions it was given, is our instructions' (so a pin of another
 * cordon version, whose instructions differ, has another name and would
 * be refused under ours); the attach itself refuses a sock_addr program
 * loaded for another hook. Anything else, or any error on the way: the
 * programs are loaded as before (fail closed: nothing unchecked attached,
 * never fewer floors than before). The pins stay until reboot, an object
 * cordon leaves on the host (SECURITY.md); running sandboxes hold their
 * attachments, not the pins, so a pin's removal ends nothing. */

static const char default_pin_fs[] = "/sys/fs/bpf";
static const char *pin_fs = default_pin_fs;
static bool pin_off; /* CORDON_TEST_FORCE_FALLBACK=floor_pin */

/* The initial namespaces' fixed inode numbers (include/linux/proc_ns.h:
 * PROC_USER_INIT_INO, PROC_PID_INIT_INO, and since about Linux 6.16
 * PROC_MNT_INIT_INO; before, the initial mount namespace is known as pid
 * 1's, where /proc/1/ns/mnt can be read) */
#define USER_NS_INIT_INO 0xEFFFFFFDU
#define PID_NS_INIT_INO  0xEFFFFFFCU
#define MNT_NS_INIT_INO  0xEFFFFFF8U

static bool same_ns_ino(const char *path, ino_t ino)
{
        struct stat st;
        return stat(path, &st) == 0 && st.st_ino == ino;
}

/* Mounts a bpffs at /sys/fs/bpf where the host has none, as systemd does
 * at boot on most hosts (the same options: mode 0700, nosuid, nodev,
 * noexec), and bpftool or Cilium when they find none: only by root in the
 * initial user, pid and mount namespaces (the host's own tree, never a
 * container's or a sandbox's), and only on sysfs' own empty mount point
 * there. The later of two racing starts finds it mounted (the lock on the
 * mount point). 0 once one is there, or -errno. */
static int bpffs_mount(const char **ret_why)
{
        *ret_why = "no bpffs at /sys/fs/bpf";
        if (pin_fs != default_pin_fs || geteuid() != 0 || !same_ns_ino("/proc/self/ns/user", USER_NS_INIT_INO) ||
            !same_ns_ino("/proc/self/ns/pid", PID_NS_INIT_INO))
                return -EPERM;
        struct stat self, init;
        if (stat("/proc/self/ns/mnt", &self) < 0)
                return -EPERM;
        if (self.st_ino != MNT_NS_INIT_INO &&
            (stat("/proc/1/ns/mnt", &init) < 0 || self.st_ino != init.st_ino || self.st_dev != init.st_dev))
                return -EPERM;
        _cleanup_close_ int fd = open(default_pin_fs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct statfs fs;
        if (fd < 0 || fstatfs(fd, &fs) < 0 || fs.f_type != SYSFS_MAGIC)
                return -ENOENT;
        if (flock(fd, LOCK_EX) < 0)
                return negative_errno();
        if (statfs(default_pin_fs, &fs) == 0 && fs.f_type == BPF_FS_MAGIC)
                return 0; /* another start's */
        if (mount("bpf", default_pin_fs, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") < 0) {
                *ret_why = "mounting a bpffs at /sys/fs/bpf failed";
                return negative_errno();
        }
        return 0;
}

/* The pins' directory (PIN_FS/cordon), checked; with create, made (and the
 * bpffs mounted) where missing. The directory's fd, or -errno with why. */
static int pin_dir_open(bool create, const char **ret_why)
{
        *ret_why = "forced absent (CORDON_TEST_FORCE_FALLBACK=floor_pin)";
        if (pin_off)
                return -EOPNOTSUPP;
        *ret_why = "the sentry is not root";
        if (geteuid() != 0)
                return -EPERM;
        struct statfs fs;
        if (statfs(pin_fs, &fs) < 0 || fs.f_type != BPF_FS_MAGIC) {
                *ret_why = "no bpffs at /sys/fs/bpf";
                if (!create)
                        return -ENOENT;
                int r = bpffs_mount(ret_why);
                if (r < 0)
                        return r;
        }
        _cleanup_close_ int root = open(pin_fs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root < 0) {
                *ret_why = "cannot open the bpffs";
                return negative_errno();
        }
        if (create && mkdirat(root, "cordon", 0700) < 0 && errno != EEXIST) {
                *ret_why = "cannot make the pins' directory";
                return negative_errno();
        }
        _cleanup_close_ int dir = openat(root, "cordon", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        *ret_why = "no pins yet";
        if (dir < 0)
                return negative_errno();
        *ret_why = "the pins' directory is not root's alone, or not on a bpffs: not used";
        if (fstatfs(dir, &fs) < 0 || fs.f_type != BPF_FS_MAGIC || fstat(dir, &st) < 0 || st.st_uid != 0 ||
            (st.st_mode & 022) != 0)
                return -EPERM;
        return TAKE_FD(dir);
}

static int pin_path(const struct prog_spec *spec, char *buf, size_t size)
{
        int n = snprintf(buf, size, "%s/cordon/%s", pin_fs, spec->pin);
        return n > 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

/* The program pinned under spec's name, if it is the one spec describes:
 * its fd, -ENOENT (no pin), -EBADMSG (another program under our name). */
static int pin_get(const struct prog_spec *spec)
{
        char path[PATH_MAX];
        if (pin_path(spec, path, sizeof(path)) < 0)
                return -ENAMETOOLONG;
        union bpf_attr attr = {.pathname = (uintptr_t)path};
        _cleanup_close_ int fd = (int)syscall(SYS_bpf, BPF_OBJ_GET, &attr, sizeof(attr));
        if (fd < 0)
                return errno == ENOENT ? -ENOENT : -EBADMSG; /* a map or a link under our name: refused too */
        struct bpf_prog_info info = {0};
        __u32 len = sizeof(info);
        if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0 || info.type != (__u32)spec->type ||
            (memcmp(info.tag, spec->sha256, sizeof(info.tag)) != 0 &&
             memcmp(info.tag, spec->sha1, sizeof(info.tag)) != 0) ||
            strncmp(info.name, spec->name, sizeof(info.name)) != 0)
                return -EBADMSG;
        return TAKE_FD(fd);
}

/* The five programs from their pins, all checked, or -errno with why. */
static int pins_take(const struct prog_spec spec[], struct floor_progs *p, const char **ret_why)
{
        _cleanup_close_ int dir = pin_dir_open(false, ret_why);
        if (dir < 0)
                return dir;
        for (size_t i = 0; i < ELEMENTSOF(hooks); i++) {
                p->fd[i] = pin_get(&spec[i]);
                if (p->fd[i] < 0) {
                        int r = p->fd[i];
                        p->fd[i] = -1;
                        progs_close(p);
                        *ret_why = r == -ENOENT ? "not pinned yet" : "a pin under our name is not our program";
                        return r;
                }
        }
        return 0;
}

/* Pins freshly loaded programs for the next starts, best effort (a start
 * that cannot pin runs the same, with the programs it loaded). A pin under
 * our name that is not ours (pin_get said so) is replaced; EEXIST otherwise
 * means a racing start pinned the same program first. */
static void pins_put(const struct prog_spec spec[], const struct floor_progs *p)
{
        const char *why;
        _cleanup_close_ int dir = pin_dir_open(true, &why);
        if (dir < 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(hooks); i++) {
                char path[PATH_MAX];
                if (pin_path(&spec[i], path, sizeof(path)) < 0)
                        return;
                union bpf_attr attr = {.pathname = (uintptr_t)path, .bpf_fd = (__u32)p->fd[i]};
                if (syscall(SYS_bpf, BPF_OBJ_PIN, &attr, sizeof(attr)) == 0 || errno != EEXIST)
                        continue;
                int fd = pin_get(&spec[i]);
                if (fd >= 0) {
                        close(fd);
                        continue;
                }
                if (unlinkat(dir, spec[i].pin, 0) == 0)
                        (void)syscall(SYS_bpf, BPF_OBJ_PIN, &attr, sizeof(attr));
        }
}

/* Loads the five programs a floor needs straight from the embedded object's
 * instructions, with one BPF_PROG_LOAD each, or takes them from their pins.
 * floor_bpf__load would first
 * probe the kernel's features (four probe programs, nine BTF loads), load
 * the object's BTF and load the egress program the sandbox does not use:
 * about half the floor's CPU per start, for nothing these programs need.
 * They call helpers only, read no map and no global data and have no
 * subprograms (everything is __always_inline), so the instructions as
 * compiled are the instructions loaded: there is nothing for libbpf to
 * relocate (floor.bpf.o has no .rel section for any program). Should one
 * ever read a map, its unrelocated load is refused by the verifier and the
 * floor fails as a whole, never loads half-made. The verifier checks each
 * program exactly as before; a kernel that refuses one fails the floor as
 * before. */
/* What a load does with pins: takes them or loads and pins (a start),
 * takes them or loads without pinning (cordon check: it changes nothing on
 * the host), or loads (pinned programs the attach refused). */
enum pin_use { PIN_TAKE_OR_PIN, PIN_TAKE, PIN_NONE };

static int load(bool joined, enum pin_use use, struct floor_progs *ret, char *why, size_t size)
{
        libbpf_set_print(quiet);
        struct floor_bpf *skel = floor_bpf__open();
        if (!skel) {
                int r = -errno ?: -EINVAL;
                set_why(why, size, "opening the embedded BPF object failed: %s", strerror(-r));
                return r;
        }
        struct prog_spec spec[ELEMENTSOF(hooks)];
        for (size_t i = 0; i < ELEMENTSOF(hooks); i++)
                spec_fill(skel, i, joined, &spec[i]);
        struct floor_progs p;
        for (size_t i = 0; i < ELEMENTSOF(p.fd); i++)
                p.fd[i] = -1;
        const char *nopin = "their pins refused by the attach";
        if (use != PIN_NONE && pins_take(spec, &p, &nopin) == 0) {
                p.pinned = true;
                snprintf(p.how, sizeof(p.how), "programs reused from their pins in %s/cordon", pin_fs);
                floor_bpf__destroy(skel);
                *ret = p;
                return 0;
        }
        int r = 0;
        for (size_t i = 0; i < ELEMENTSOF(p.fd); i++) {
                p.fd[i] = prog_load(&spec[i]);
                if (p.fd[i] < 0) {
                        r = p.fd[i];
                        p.fd[i] = -1;
                        set_why(why, size, "loading the %s program failed: %s%s", hooks[i].name, strerror(-r),
                                r == -EPERM || r == -EACCES ? " (needs CAP_BPF and CAP_NET_ADMIN, or root)" : "");
                        break;
                }
        }
        if (r == 0 && use == PIN_TAKE_OR_PIN && !pin_off && geteuid() == 0)
                pins_put(spec, &p);
        floor_bpf__destroy(skel);
        if (r < 0) {
                progs_close(&p);
                return r;
        }
        p.pinned = false;
        snprintf(p.how, sizeof(p.how), "programs loaded at this start (pins: %s)", nopin);
        *ret = p;
        return 0;
}

/* The load begun early on a thread (net_floor_preload): the verifier and
 * the JIT take a few hundred microseconds, which then overlap the sentry's
 * other set-up instead of delaying the sandbox's start. One per process;
 * only the thread that started it joins it, so no lock. */
static struct {
        pthread_t thread;
        bool started, joined;
        struct floor_progs progs;
        int r;
        char why[256];
} pre;

static void *preload_main(void *arg)
{
        (void)arg;
        pre.r = load(pre.joined, PIN_TAKE_OR_PIN, &pre.progs, pre.why, sizeof(pre.why));
        return NULL;
}

void net_floor_preload(bool joined)
{
        if (pre.started)
                return;
        pre.joined = joined;
        /* no signal is this thread's to take: the sentry's handlers run on
         * the threads that expect them */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pre.started = pthread_create(&pre.thread, NULL, preload_main, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Waits for the preload thread, if one runs; true if it loaded programs. */
static bool preload_joined(void)
{
        if (!pre.started)
                return false;
        pthread_join(pre.thread, NULL);
        pre.started = false;
        return pre.r >= 0;
}

/* The preloaded programs (waiting for the load to end), or a load now. */
static int take_loaded(bool joined, struct floor_progs *ret, char *why, size_t size)
{
        bool started = pre.started;
        if (preload_joined() && pre.joined == joined) {
                *ret = pre.progs;
                return 0;
        }
        if (started && pre.r >= 0)
                progs_close(&pre.progs); /* the other egress program: load anew */
        else if (started) {
                set_why(why, size, "%s", pre.why);
                return pre.r;
        }
        return load(joined, PIN_TAKE_OR_PIN, ret, why, size);
}

void net_floor_preload_end(void)
{
        if (preload_joined())
                progs_close(&pre.progs);
}

static char last_how[200];

int net_floor_probe(char *why, size_t size)
{
        struct floor_progs p;
        int r = load(false, PIN_TAKE, &p, why, size);
        if (r < 0)
                return r;
        snprintf(last_how, sizeof(last_how), "%s", p.how);
        progs_close(&p);
        return 0;
}

const char *net_floor_how(void)
{
        return last_how;
}

int net_floor_attach(int cgroup_fd, char *why, size_t size)
{
        return net_floor_attach_joined(cgroup_fd, false, why, size);
}

/* Attaches the five to the group, all or none. 0 or -errno, why filled. */
static int attach_all(const struct floor_progs *p, int cgroup_fd, char *why, size_t size)
{
        size_t done = 0;
        int r = 0;
        for (; done < ELEMENTSOF(hooks); done++) {
                if (bpf_prog_attach(p->fd[done], cgroup_fd, hooks[done].type, BPF_F_ALLOW_MULTI) < 0) {
                        r = negative_errno();
                        set_why(why, size, "attaching the %s program to the sandbox's cgroup failed: %s%s",
                                hooks[done].name, strerror(-r),
                                r == -EPERM ? " (an ancestor group holds an exclusive program, or no privilege)" : "");
                        break;
                }
        }
        if (r < 0)
                /* all or nothing: a half floor would be reported as absent
                 * while still refusing some calls */
                while (done-- > 0)
                        (void)bpf_prog_detach2(p->fd[done], cgroup_fd, hooks[done].type);
        return r;
}

int net_floor_attach_joined(int cgroup_fd, bool joined, char *why, size_t size)
{
        struct floor_progs p;
        int r = take_loaded(joined, &p, why, size);
        if (r < 0)
                return r;
        r = attach_all(&p, cgroup_fd, why, size);
        if (r < 0 && p.pinned) {
                /* pinned programs the kernel would not attach (a program
                 * loaded for another hook under our name, say): the
                 * programs loaded anew, as without pins */
                progs_close(&p);
                r = load(joined, PIN_NONE, &p, why, size);
                if (r < 0)
                        return r;
                r = attach_all(&p, cgroup_fd, why, size);
        }
        if (r >= 0)
                snprintf(last_how, sizeof(last_how), "%s", p.how);
        /* the group holds the attached programs now; our fds can go */
        progs_close(&p);
        return r;
}

int net_floor_force_fallback(const char *feature)
{
        if (!streq(feature, "floor_pin"))
                return -EINVAL;
        pin_off = true;
        return 0;
}

void net_floor_test_pin_fs(const char *bpffs)
{
        pin_fs = bpffs;
}

int net_floor_attached(int cgroup_fd)
{
        int n = 0;
        for (size_t i = 0; i < ELEMENTSOF(hooks); i++) {
                __u32 ids[16], count = ELEMENTSOF(ids), flags = 0;
                if (bpf_prog_query(cgroup_fd, hooks[i].type, 0, &flags, ids, &count) < 0)
                        return negative_errno();
                if (count > 0)
                        n++;
        }
        return n;
}
