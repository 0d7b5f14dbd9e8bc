/* Each running sandbox has a state directory holding state.json and a lock
 * that its sentry holds for the sandbox's whole life. A lock nobody holds
 * means the sentry is gone: what it left (the directory, its cgroups) is
 * garbage that `cordon gc` may remove. Admission counts held locks. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "common/util.h"
#include "sentry/cgroup/cgroup.h"
#include "sentry/policy/policy.h"
#include "sentry/sentry.h"

static char root_dir[512];

int state_set_root(const char *dir, char **ret_error)
{
        /* the control socket, DIR/sandboxes/ID/control.sock, must fit a
         * unix socket address (108 bytes with its NUL) */
        static const size_t tail = sizeof("/sandboxes/0123456789abcdef/control.sock");
        size_t n = strlen(dir);
        if (dir[0] != '/') {
                *ret_error = xasprintf("--root %s: must be an absolute path", dir);
                return -EINVAL;
        }
        while (n > 1 && dir[n - 1] == '/')
                n--;
        if (n + tail > sizeof(((struct sockaddr_un *)0)->sun_path)) {
                *ret_error = xasprintf("--root %s: longer than %zu characters (the sandboxes' control sockets "
                                       "must fit a unix socket address)",
                                       dir, sizeof(((struct sockaddr_un *)0)->sun_path) - tail);
                return -ENAMETOOLONG;
        }
        memcpy(root_dir, dir, n);
        root_dir[n] = '\0';
        return 0;
}

/* The default root: /run/cordon for root; $XDG_RUNTIME_DIR/cordon or
 * /tmp/cordon-UID otherwise. What is host-wide for this user (admission,
 * the claims below) lives there whatever --root says. */
const char *state_default_root(void)
{
        static char dflt[512];
        if (dflt[0])
                return dflt;
        if (geteuid() == 0)
                snprintf(dflt, sizeof(dflt), "/run/cordon");
        else {
                const char *xdg = getenv("XDG_RUNTIME_DIR");
                if (xdg && xdg[0] == '/' && strlen(xdg) < 400)
                        snprintf(dflt, sizeof(dflt), "%s/cordon", xdg);
                else
                        snprintf(dflt, sizeof(dflt), "/tmp/cordon-%u", (unsigned)geteuid());
        }
        return dflt;
}

const char *state_root(void)
{
        return root_dir[0] ? root_dir : state_default_root();
}

bool state_root_is_default(void)
{
        return streq(state_root(), state_default_root());
}

void sandbox_new_id(char ret[17])
{
        uint8_t b[8];
        if (getrandom(b, sizeof(b), 0) != sizeof(b))
                oom(); /* never happens after boot; fail closed rather than reuse ids */
        for (int i = 0; i < 8; i++)
                snprintf(ret + 2 * i, 3, "%02x", b[i]);
}

int sandbox_dir(const char *id, char *buf, size_t size)
{
        if (!sandbox_id_valid(id))
                return -EINVAL;
        snprintf(buf, size, "%s/sandboxes/%s", state_root(), id);
        return 0;
}

bool sandbox_id_valid(const char *id)
{
        size_t n = strlen(id);
        if (n == 0 || n > 64)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
                        return false;
        return true;
}

static int mkdir_private(const char *path)
{
        if (mkdir(path, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        struct stat st;
        if (lstat(path, &st) < 0)
                return negative_errno();
        /* refuse a directory someone else planted (e.g. in /tmp) */
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0022))
                return -EPERM;
        return 0;
}

static int sandboxes_dir(char *buf, size_t size)
{
        int r = mkdir_private(state_root());
        if (r < 0)
                return r;
        snprintf(buf, size, "%s/sandboxes", state_root());
        return mkdir_private(buf);
}

/* Whether the sandbox whose directory is dir is alive (its lock is held). */
bool state_dir_live(int dirfd)
{
        _cleanup_close_ int fd = openat(dirfd, "lock", O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return false;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK;
        flock(fd, LOCK_UN);
        return false;
}

/* Every sandbox's sentry holds a claim, DEFAULT_ROOT/claims/ID locked for
 * its whole life, whichever --root its state is under: admission counts
 * claims (so another --root is no way around maxConcurrentSandboxes), and
 * gc never takes a group whose claim is held for garbage (a gc under one
 * root cannot see another root's state). */
static int claim_fd = -1;

static int claims_dir(char *buf, size_t size)
{
        int r = mkdir_private(state_default_root());
        if (r < 0)
                return r;
        snprintf(buf, size, "%s/claims", state_default_root());
        return mkdir_private(buf);
}

bool state_claim_held(const char *id)
{
        char path[700];
        snprintf(path, sizeof(path), "%s/claims/%s", state_default_root(), id);
        _cleanup_close_ int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return false;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK;
        flock(fd, LOCK_UN);
        return false;
}

/* Held claims. With ret_dropped (gc), stale ones (their sentry is gone) are
 * removed on the way and counted there: only gc drops them, as it is what
 * then looks for the groups a dead sentry left (state_gc). */
static int count_claims_dropping(int *ret_dropped)
{
        char dir[600];
        int r = claims_dir(dir, sizeof(dir));
        if (r < 0)
                return r;
        DIR *d = opendir(dir);
        if (!d)
                return negative_errno();
        int n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!sandbox_id_valid(de->d_name))
                        continue;
                if (state_claim_held(de->d_name))
                        n++;
                else if (ret_dropped && unlinkat(dirfd(d), de->d_name, 0) == 0)
                        (*ret_dropped)++;
        }
        closedir(d);
        return n;
}

static int count_claims(void)
{
        return count_claims_dropping(NULL);
}

static int take_claim(const char *id, char **ret_error)
{
        char dir[600], path[700];
        int r = claims_dir(dir, sizeof(dir));
        if (r >= 0) {
                snprintf(path, sizeof(path), "%s/%s", dir, id);
                int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
                        claim_fd = fd;
                        return 0;
                }
                r = negative_errno();
                if (fd >= 0)
                        close(fd);
        }
        *ret_error = xasprintf("claim %s/claims/%s: %s", state_default_root(), id, strerror(-r));
        return r;
}

int state_admit(const char *id, int64_t max_sandboxes, struct id_range *ret_range, char **ret_error)
{
        char dir[600], path[700];
        int r = sandboxes_dir(dir, sizeof(dir));
        if (r < 0) {
                *ret_error = xasprintf("state directory %s: %s", state_root(), strerror(-r));
                return r;
        }
        /* admission is host-wide for this user, whatever --root is */
        if ((r = mkdir_private(state_default_root())) < 0) {
                *ret_error = xasprintf("state directory %s: %s", state_default_root(), strerror(-r));
                return r;
        }
        snprintf(path, sizeof(path), "%s/admission.lock", state_default_root());
        _cleanup_close_ int adm = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (adm < 0 || flock(adm, LOCK_EX) < 0) {
                r = negative_errno();
                *ret_error = xasprintf("%s: %s", path, strerror(-r));
                return r;
        }
        if (max_sandboxes >= 0) {
                int live = count_claims();
                if (live >= 0 && live >= max_sandboxes) {
                        *ret_error =
                                xasprintf("quota: maxConcurrentSandboxes %" PRId64 " reached (%d sandboxes running)",
                                          max_sandboxes, live);
                        return -EDQUOT;
                }
        }
        snprintf(path, sizeof(path), "%s/%s", dir, id);
        if (mkdir(path, 0700) < 0) {
                r = negative_errno();
                *ret_error = xasprintf("%s: %s", path, strerror(-r));
                return r;
        }
        snprintf(path, sizeof(path), "%s/%s/lock", dir, id);
        int lock = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0) {
                r = negative_errno();
                *ret_error = xasprintf("%s: %s", path, strerror(-r));
                if (lock >= 0)
                        close(lock);
                return r;
        }
        if ((r = take_claim(id, ret_error)) < 0) {
                close(lock);
                return r;
        }
        /* the range's holder is the claim just taken (below); a range
         * given (a pod's app container) is shared, not taken */
        if (ret_range && (r = ret_range->count ? idrange_share(id, ret_range, ret_error)
                                               : idrange_take(id, ret_range, ret_error)) < 0) {
                close(lock);
                (void)state_remove(id);
                return r;
        }
        return lock; /* the admission lock is released on return */
}

int state_write(const char *id, const char *json)
{
        char path[700], tmp[720];
        snprintf(path, sizeof(path), "%s/sandboxes/%s/state.json", state_root(), id);
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        _cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        int r = write_all(fd, json, strlen(json));
        if (r < 0)
                return r;
        if (rename(tmp, path) < 0)
                return negative_errno();
        return 0;
}

static int remove_state_dir(int parent, const char *id)
{
        _cleanup_close_ int fd = openat(parent, id, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        /* A long-lived sandbox (`cordon sandbox`) keeps more here: its
         * policy, metadata, events, control socket and run logs (runs/).
         * Everything goes, one directory level deep, the lock last. */
        _cleanup_close_ int rfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = rfd >= 0 ? fdopendir(TAKE_FD(rfd)) : NULL;
        struct dirent *de;
        while (d && (de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, "..") || streq(de->d_name, "lock"))
                        continue;
                if (unlinkat(dirfd(d), de->d_name, 0) == 0 || errno != EISDIR)
                        continue;
                _cleanup_close_ int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                DIR *sd = sub >= 0 ? fdopendir(TAKE_FD(sub)) : NULL;
                struct dirent *se;
                while (sd && (se = readdir(sd)))
                        if (!streq(se->d_name, ".") && !streq(se->d_name, ".."))
                                (void)unlinkat(dirfd(sd), se->d_name, 0);
                if (sd)
                        closedir(sd);
                (void)unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
        }
        if (d)
                closedir(d);
        (void)unlinkat(fd, "lock", 0);
        if (unlinkat(parent, id, AT_REMOVEDIR) < 0)
                return negative_errno();
        return 0;
}

int state_remove_dir(const char *id)
{
        char dir[600];
        snprintf(dir, sizeof(dir), "%s/sandboxes", state_root());
        _cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return remove_state_dir(fd, id);
}

int state_remove_run_dir(const char *id)
{
        /* `cordon run`'s directory holds state.json and the lock, nothing
         * else: those two and the directory go by name (5 syscalls against
         * the scan's 15, on the teardown's path). Should anything else be
         * there, the scan removes it. */
        char dir[700];
        snprintf(dir, sizeof(dir), "%s/sandboxes/%s", state_root(), id);
        _cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        (void)unlinkat(fd, "state.json", 0);
        (void)unlinkat(fd, "lock", 0);
        if (rmdir(dir) == 0)
                return 0;
        return state_remove_dir(id);
}

void state_drop_claim(const char *id)
{
        char claim[700];
        snprintf(claim, sizeof(claim), "%s/claims/%s", state_default_root(), id);
        /* closed first: an unlinked file still open is put on the
         * filesystem's orphan list, and freed only at the last close */
        idrange_release();
        if (claim_fd >= 0)
                close(TAKE_FD(claim_fd));
        (void)unlink(claim);
}

int state_remove(const char *id)
{
        int r = state_remove_dir(id);
        state_drop_claim(id);
        return r;
}

/* Removes the cgroups a dead sandbox's state.json lists. */
static int gc_state_cgroups(int dirfd, bool quiet)
{
        _cleanup_close_ int fd = openat(dirfd, "state.json", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return 0;
        json_error_t jerr;
        json_t *root = json_loadfd(fd, 0, &jerr);
        if (!root)
                return 0;
        int n = 0;
        json_t *dirs = json_object_get(root, "cgroups"), *v;
        size_t i;
        json_array_foreach(dirs, i, v)
        {
                const char *d = json_string_value(v);
                if (d && cgroup_remove_dir(d) == 0) {
                        if (!quiet)
                                printf("removed cgroup %s\n", d);
                        n++;
                }
        }
        /* an OCI container's cgroupsPath groups its sentry entered (as runc's
         * delete removes them): only once empty, which rmdir checks */
        json_array_foreach(json_object_get(root, "cgroupParents"), i, v)
        {
                const char *d = json_string_value(v);
                if (d && d[0] == '/' && rmdir(d) == 0) {
                        if (!quiet)
                                printf("removed cgroup %s\n", d);
                        n++;
                }
        }
        json_decref(root);
        return n;
}

struct leftover_ctx {
        int sandboxes_fd;
        bool quiet;
        int removed;
};

static int gc_leftover_cgroup(const char *dir, const char *id, void *userdata)
{
        struct leftover_ctx *c = userdata;
        if (!sandbox_id_valid(id))
                return 0;
        _cleanup_close_ int fd =
                c->sandboxes_fd >= 0 ? openat(c->sandboxes_fd, id, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW) : -1;
        if ((fd >= 0 && state_dir_live(fd)) || state_claim_held(id))
                return 0; /* a running sandbox's group (under this root or another) */
        /* Only a group this user made can be this user's garbage: another
         * user's cordon (root's, whose sandboxes run as host uid 65534) keeps
         * its state elsewhere, and an unprivileged gc that killed what runs in
         * root's groups would kill live sandboxes. */
        struct stat st;
        if (stat(dir, &st) < 0 || st.st_uid != geteuid())
                return 0;
        if (cgroup_remove_dir(dir) == 0) {
                if (!c->quiet)
                        printf("removed cgroup %s\n", dir);
                c->removed++;
        }
        return 0;
}

int state_gc(bool quiet)
{
        char dir[600], path[700];
        int removed = 0;
        /* under the admission lock: a sandbox being admitted has its
         * directory before it has its lock, and must not be taken for dead */
        snprintf(path, sizeof(path), "%s/admission.lock", state_default_root());
        _cleanup_close_ int adm = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (adm >= 0)
                flock(adm, LOCK_EX);
        snprintf(dir, sizeof(dir), "%s/sandboxes", state_root());
        _cleanup_close_ int sfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sfd >= 0) {
                DIR *d = fdopendir(fcntl(sfd, F_DUPFD_CLOEXEC, 3));
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        if (!sandbox_id_valid(de->d_name))
                                continue;
                        _cleanup_close_ int fd = openat(sfd, de->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                        if (fd < 0 || state_dir_live(fd))
                                continue;
                        removed += gc_state_cgroups(fd, quiet);
                        if (remove_state_dir(sfd, de->d_name) == 0) {
                                if (!quiet)
                                        printf("removed stale sandbox state %s/%s\n", dir, de->d_name);
                                removed++;
                        }
                }
                if (d)
                        closedir(d);
        }
        int dropped = 0;
        (void)count_claims_dropping(&dropped);
        removed += idrange_gc(quiet);
        /* The groups' own scan (a directory in each hierarchy) only where a
         * sentry died: a dead sentry's claim stays behind, and a sentry
         * drops its own only once its groups are gone (state_drop_claim),
         * so a group can be left over only beside a claim this gc just
         * dropped, or a state directory it removed. `cordon gc` (not
         * quiet) always looks. */
        struct leftover_ctx c = {.sandboxes_fd = sfd, .quiet = quiet};
        if (!quiet || dropped > 0 || removed > 0)
                (void)cgroup_foreach_leftover(gc_leftover_cgroup, &c);
        return removed + c.removed;
}

/* --- uid ranges --- */

/* Each sandbox root starts gets a range of 65,536 host uids and gids of its
 * own, so that no two live sandboxes (OCI containers included) share a host
 * id and ids 0-65535 exist inside. The ranges come from the `cordon`
 * entries of /etc/subuid and /etc/subgid when both have one, else from the
 * default pool, host ids 2^31 to 2^31 + 2^30 - 1 (16,384 ranges; above the
 * ids distributions hand out, as containers' userns tools choose theirs).
 *
 * A range is taken under the admission lock (state_admit) and recorded as
 * DEFAULT_ROOT/idranges/UID:GID (its first host uid and gid), holding the
 * sandbox's id: the range is in use while that sandbox's claim is held (its
 * sentry is alive). A range whose
 * holder's claim nobody holds is free again: the sentry is dead, and so is
 * its pid namespace with every process that ran as the range's ids. The
 * sentry drops its file at teardown (state_drop_claim), `cordon gc` those of
 * dead sentries. */

#define RANGE_SIZE          65536u
#define DEFAULT_POOL_START  2147483648u /* 2^31 */
#define DEFAULT_POOL_RANGES 16384u      /* 2^30 ids */

static int taken_slot = -1;
static char taken_path[700];

/* The first "cordon:START:COUNT" line of an /etc/subuid-style file. */
static bool subid_entry(const char *path, uint64_t *ret_start, uint64_t *ret_count)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char line[256];
        while (f && fgets(line, sizeof(line), f)) {
                unsigned long long start, count;
                char name[64];
                if (sscanf(line, "%63[^:]:%llu:%llu", name, &start, &count) == 3 && streq(name, "cordon") &&
                    start + count <= UINT32_MAX) {
                        *ret_start = start;
                        *ret_count = count;
                        return true;
                }
        }
        return false;
}

int idrange_pool(struct id_pool *ret)
{
        *ret = (struct id_pool){.uid_start = DEFAULT_POOL_START,
                                .gid_start = DEFAULT_POOL_START,
                                .ranges = DEFAULT_POOL_RANGES,
                                .source = "the default pool"};
        /* Test hook: a small pool, so that the tests can exhaust one. */
        const char *t = getenv("CORDON_TEST_ID_POOL");
        unsigned long long s, n;
        if (t && sscanf(t, "%llu:%llu", &s, &n) == 2 && s >= 65536 && s + n * RANGE_SIZE <= UINT32_MAX) {
                ret->uid_start = ret->gid_start = (uint32_t)s;
                ret->ranges = (uint32_t)n;
                ret->source = "the test pool (CORDON_TEST_ID_POOL)";
                return 0;
        }
        uint64_t us, uc, gs, gc;
        if (subid_entry("/etc/subuid", &us, &uc) && subid_entry("/etc/subgid", &gs, &gc)) {
                if (us == 0 || gs == 0)
                        return -EINVAL; /* host root is never a sandbox's id */
                ret->uid_start = (uint32_t)us;
                ret->gid_start = (uint32_t)gs;
                ret->ranges = (uint32_t)((uc < gc ? uc : gc) / RANGE_SIZE);
                ret->source = "the cordon entries of /etc/subuid and /etc/subgid";
        }
        return 0;
}

static int ranges_dir(char *buf, size_t size)
{
        snprintf(buf, size, "%s/idranges", state_default_root());
        if (mkdir(buf, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        struct stat st;
        if (lstat(buf, &st) < 0)
                return negative_errno();
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0022))
                return -EPERM;
        return 0;
}

/* Whether range file name (in dirfd) belongs to a live sandbox. */
static bool range_live(int dirfd, const char *name)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        char holder[80] = "";
        ssize_t n = fd >= 0 ? read(fd, holder, sizeof(holder) - 1) : -1;
        if (n <= 0)
                return false;
        holder[n] = '\0';
        holder[strcspn(holder, "\n")] = '\0';
        return sandbox_id_valid(holder) && state_claim_held(holder);
}

/* The live ranges recorded (their file names are "UID:GID", each the
 * first host id of a range of RANGE_SIZE), for the overlap check below:
 * whatever pool a live range came from (/etc/subuid may have changed since
 * it was taken), a new one never overlaps it. */
struct live {
        uint32_t uid, gid;
};

static size_t live_ranges(int dfd, struct live **ret)
{
        size_t n = 0, cap = 0;
        *ret = NULL;
        DIR *d = fdopendir(fcntl(dfd, F_DUPFD_CLOEXEC, 3));
        struct dirent *de;
        while (d && (de = readdir(d))) {
                unsigned long long u, g;
                char end;
                int n_read = sscanf(de->d_name, "%llu:%llu%c", &u, &g, &end);
                /* "UID:GID+ID": a pod member's share of its pod's range */
                if ((n_read != 2 && !(n_read == 3 && end == '+')) || u > UINT32_MAX || g > UINT32_MAX ||
                    !range_live(dfd, de->d_name))
                        continue;
                if (n == cap) {
                        cap = cap ? 2 * cap : 16;
                        *ret = xrealloc(*ret, cap * sizeof(**ret));
                }
                (*ret)[n++] = (struct live){(uint32_t)u, (uint32_t)g};
        }
        if (d)
                closedir(d);
        return n;
}

static bool overlaps(uint32_t a, uint32_t b)
{
        return (a < b ? b - a : a - b) < RANGE_SIZE;
}

int idrange_take(const char *id, struct id_range *ret, char **ret_error)
{
        struct id_pool pool;
        char dir[600];
        int r = idrange_pool(&pool);
        if (r < 0) {
                *ret_error = xstrdup("/etc/subuid or /etc/subgid gives cordon a range that holds host id 0: "
                                     "refused (a sandbox's ids are never host root's)");
                return r;
        }
        if ((r = ranges_dir(dir, sizeof(dir))) < 0) {
                *ret_error = xasprintf("%s: %s", dir, strerror(-r));
                return r;
        }
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                r = negative_errno();
                *ret_error = xasprintf("%s: %s", dir, strerror(-r));
                return r;
        }
        _cleanup_free_ struct live *live = NULL;
        size_t n_live = live_ranges(dfd, &live), held = 0;
        for (uint32_t k = 0; k < pool.ranges; k++) {
                uint32_t u = pool.uid_start + k * RANGE_SIZE, g = pool.gid_start + k * RANGE_SIZE;
                bool busy = false;
                for (size_t i = 0; i < n_live && !busy; i++)
                        busy = overlaps(u, live[i].uid) || overlaps(g, live[i].gid);
                if (busy) {
                        held++;
                        continue;
                }
                char name[32], tmp[48];
                snprintf(name, sizeof(name), "%u:%u", u, g);
                snprintf(tmp, sizeof(tmp), ".%s.%s", name, id);
                /* free, or its holder is dead: written afresh */
                _cleanup_close_ int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (fd < 0 || dprintf(fd, "%s\n", id) < 0 || renameat(dfd, tmp, dfd, name) < 0) {
                        r = negative_errno();
                        (void)unlinkat(dfd, tmp, 0);
                        *ret_error = xasprintf("%s/%s: %s", dir, name, strerror(-r));
                        return r;
                }
                taken_slot = (int)k;
                snprintf(taken_path, sizeof(taken_path), "%s/%s", dir, name);
                *ret = (struct id_range){.uid = u, .gid = g, .count = RANGE_SIZE, .slot = (int)k};
                return 0;
        }
        *ret_error = xasprintf("quota: no free uid/gid range: %zu of the %u range%s of %u ids in %s (uids from %u, "
                               "gids from %u) %s held by live sandboxes",
                               held, pool.ranges, pool.ranges == 1 ? "" : "s", RANGE_SIZE, pool.source, pool.uid_start,
                               pool.gid_start, held == 1 ? "is" : "are");
        return -EDQUOT;
}

int idrange_share(const char *id, const struct id_range *range, char **ret_error)
{
        char dir[600], name[32], share[64], tmp[96];
        int r = ranges_dir(dir, sizeof(dir));
        if (r < 0) {
                *ret_error = xasprintf("%s: %s", dir, strerror(-r));
                return r;
        }
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                r = negative_errno();
                *ret_error = xasprintf("%s: %s", dir, strerror(-r));
                return r;
        }
        /* Only a range a live sandbox holds now, as cordon handed it out:
         * never ids someone named (host root's, another user's). */
        snprintf(name, sizeof(name), "%u:%u", range->uid, range->gid);
        if (range->count != RANGE_SIZE || !range_live(dfd, name)) {
                *ret_error = xasprintf("the pod's uid range %s (%u ids) is not one a live sandbox holds", name,
                                       range->count);
                return -ESRCH;
        }
        /* held as well while this sandbox lives: its pod's sandbox container
         * may end first, and the range must not be handed out meanwhile */
        snprintf(share, sizeof(share), "%s+%s", name, id);
        snprintf(tmp, sizeof(tmp), ".%s", share);
        _cleanup_close_ int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0 || dprintf(fd, "%s\n", id) < 0 || renameat(dfd, tmp, dfd, share) < 0) {
                r = negative_errno();
                (void)unlinkat(dfd, tmp, 0);
                *ret_error = xasprintf("%s/%s: %s", dir, share, strerror(-r));
                return r;
        }
        taken_slot = range->slot >= 0 ? range->slot : 0;
        snprintf(taken_path, sizeof(taken_path), "%s/%s", dir, share);
        return 0;
}

void idrange_release(void)
{
        if (taken_slot < 0)
                return;
        (void)unlink(taken_path);
        taken_slot = -1;
}

int idrange_gc(bool quiet)
{
        char dir[600];
        if (ranges_dir(dir, sizeof(dir)) < 0)
                return 0;
        DIR *d = opendir(dir);
        if (!d)
                return 0;
        int n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' && (streq(de->d_name, ".") || streq(de->d_name, "..")))
                        continue;
                if (!range_live(dirfd(d), de->d_name) && unlinkat(dirfd(d), de->d_name, 0) == 0) {
                        if (!quiet)
                                printf("returned uid range %s/%s (its sandbox is gone)\n", dir, de->d_name);
                        n++;
                }
        }
        closedir(d);
        return n;
}
