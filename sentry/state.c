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
        /* the range's holder is the claim just taken (idrange.c) */
        if (ret_range && (r = idrange_take(id, ret_range, ret_error)) < 0) {
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
        removed += idrange_gc();
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
