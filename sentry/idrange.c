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
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "sentry/sentry-internal.h"

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
                if (sscanf(de->d_name, "%llu:%llu%c", &u, &g, &end) != 2 || u > UINT32_MAX || g > UINT32_MAX ||
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

void idrange_release(void)
{
        if (taken_slot < 0)
                return;
        (void)unlink(taken_path);
        taken_slot = -1;
}

int idrange_gc(void)
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
                if (!range_live(dirfd(d), de->d_name) && unlinkat(dirfd(d), de->d_name, 0) == 0)
                        n++;
        }
        closedir(d);
        return n;
}
