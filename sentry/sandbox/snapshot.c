/* Snapshots of a long-lived sandbox: its writable layer (the private /tmp,
 * /var/tmp, /run, home and /dev/shm; for a template root also the overlay's
 * upper layer, the root's changes anywhere, deletions included) plus its
 * policy and metadata, as a tar (pax) compressed with zstd, written with
 * libarchive, with the sha256 of the archive computed while it is written.
 * Restoring (`create --from-snapshot`) checks that digest first, then that
 * a template root's changes go onto the same template, and then unpacks the
 * layer into the new sandbox's view. Both run in a thread confined to the
 * view as the sandbox's user (transfer.c), so a snapshot holds only what the
 * sandbox could read, and a restore writes only where the sandbox could
 * write. The archive's names: snapshot-entry.c. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>

#include "common/crypto-dl.h"
#include "fs/fs.h"
#include "sentry/sandbox/archive-dl.h"
#include "sentry/sandbox/sandbox-internal.h"

#define WALK_MAX_DEPTH   128
#define PROGRESS_MS      200       /* between two progress reports */
#define SANDBOX_JSON_MAX (1 << 20) /* cordon/sandbox.json, read at restore */
/* overlayfs's mark of an opaque directory, with the userxattr option the
 * view mounts it with (fs/view.c) */
#define OVL_OPAQUE_XATTR "user.overlay.opaque"

struct sink {
        int fd;
        EVP_MD_CTX *md;
        int64_t bytes;
        int64_t entries;
        int progress_conn; /* the client's connection, when it shows progress; else -1 */
        int64_t last_ms;
};

/* A progress message to a client on a terminal: at most one per
 * PROGRESS_MS, and one at the end (final). */
static void sink_progress(struct sink *s, bool final)
{
        if (s->progress_conn < 0)
                return;
        int64_t now = monotonic_ms();
        if (!final && now - s->last_ms < PROGRESS_MS)
                return;
        s->last_ms = now;
        (void)control_send(s->progress_conn,
                           json_pack("{s:{s:I, s:I, s:b}}", "progress", "bytes", (json_int_t)s->bytes, "entries",
                                     (json_int_t)s->entries, "final", final),
                           NULL, 0);
}

static la_ssize_t sink_write(struct archive *a, void *userdata, const void *buf, size_t len)
{
        struct sink *s = userdata;
        if (write_all(s->fd, buf, len) < 0) {
                archive_set_error(a, errno, "write: %s", strerror(errno));
                return -1;
        }
        EVP_DigestUpdate(s->md, buf, len);
        s->bytes += (int64_t)len;
        sink_progress(s, false);
        return (la_ssize_t)len;
}

static void hex(const unsigned char *d, unsigned n, char *out)
{
        for (unsigned i = 0; i < n; i++)
                snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int add_file(struct archive *a, struct sink *sk, int dirfd, const char *name, const char *arcname,
                    const struct stat *st)
{
        sk->entries++;
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, arcname);
        archive_entry_copy_stat(e, st);
        archive_entry_set_uid(e, 0);
        archive_entry_set_gid(e, 0);
        int r = 0;
        if (S_ISLNK(st->st_mode)) {
                char target[4096];
                ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
                if (n < 0) {
                        archive_entry_free(e);
                        return 0; /* gone meanwhile */
                }
                target[n] = '\0';
                archive_entry_set_symlink(e, target);
                r = archive_write_header(a, e);
        } else if (S_ISREG(st->st_mode)) {
                int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                struct stat st2;
                if (fd < 0 || fstat(fd, &st2) < 0 || st2.st_ino != st->st_ino || !S_ISREG(st2.st_mode)) {
                        if (fd >= 0)
                                close(fd);
                        archive_entry_free(e);
                        return 0; /* replaced meanwhile: left out */
                }
                archive_entry_set_size(e, st2.st_size);
                r = archive_write_header(a, e);
                char buf[65536];
                ssize_t n;
                int64_t left = st2.st_size;
                while (r == ARCHIVE_OK && left > 0 && (n = read(fd, buf, sizeof(buf))) > 0) {
                        if (n > left)
                                n = (ssize_t)left;
                        if (archive_write_data(a, buf, (size_t)n) < 0)
                                r = ARCHIVE_FATAL;
                        left -= n;
                }
                close(fd);
        } else if (S_ISDIR(st->st_mode))
                r = archive_write_header(a, e);
        /* fifos, sockets, devices: not part of a snapshot */
        archive_entry_free(e);
        return r == ARCHIVE_OK || r == ARCHIVE_WARN ? 0 : -EIO;
}

/* A directory stream of its own on the directory top (top stays open), a
 * walk's level depth; NULL past WALK_MAX_DEPTH (a walk goes no deeper). */
static DIR *dir_stream(int top, int depth)
{
        if (depth > WALK_MAX_DEPTH)
                return NULL;
        int dfd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d && dfd >= 0)
                close(dfd);
        return d;
}

/* The next entry of d other than "." and "..", its lstat in *st (an entry
 * that cannot be stat'ed is passed over); NULL at the end. */
static struct dirent *next_entry(DIR *d, struct stat *st)
{
        struct dirent *de;
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), de->d_name, st, AT_SYMLINK_NOFOLLOW) == 0)
                        return de;
        }
        return NULL;
}

/* Adds what is below dirfd, never leaving its mount (dev) and never
 * following a symlink. */
static int walk(struct archive *a, struct sink *sk, int top, const char *prefix, dev_t dev, int depth)
{
        DIR *d = dir_stream(top, depth);
        if (!d)
                return 0;
        struct dirent *de;
        struct stat st;
        int r = 0;
        while (r == 0 && (de = next_entry(d, &st))) {
                if (st.st_dev != dev)
                        continue;
                char *arc = xasprintf("%s/%s", prefix, de->d_name);
                r = add_file(a, sk, dirfd(d), de->d_name, arc, &st);
                if (r == 0 && S_ISDIR(st.st_mode)) {
                        int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub >= 0) {
                                r = walk(a, sk, sub, arc, dev, depth + 1);
                                close(sub);
                        }
                }
                free(arc);
        }
        closedir(d);
        return r;
}

static int add_blob(struct archive *a, const char *name, const char *text)
{
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, name);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0600);
        archive_entry_set_size(e, (la_int64_t)strlen(text));
        archive_entry_set_mtime(e, time(NULL), 0);
        int r = archive_write_header(a, e);
        if (r == ARCHIVE_OK && archive_write_data(a, text, strlen(text)) < 0)
                r = ARCHIVE_FATAL;
        archive_entry_free(e);
        return r == ARCHIVE_OK ? 0 : -EIO;
}

static int add_marker(struct archive *a, struct sink *sk, const char *name, const struct stat *dirst)
{
        sk->entries++;
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, name);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0);
        archive_entry_set_size(e, 0);
        archive_entry_set_mtime(e, dirst->st_mtim.tv_sec, dirst->st_mtim.tv_nsec);
        int r = archive_write_header(a, e);
        archive_entry_free(e);
        return r == ARCHIVE_OK || r == ARCHIVE_WARN ? 0 : -EIO;
}

/* The mount a path of the (chrooted) view is on; 0 when it cannot tell. */
static uint64_t view_mount(const char *path)
{
        struct statx sx;
        if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_MNT_ID, &sx) < 0 ||
            !(sx.stx_mask & STATX_MNT_ID))
                return 0;
        return sx.stx_mnt_id;
}

/* Adds a template root's upper layer below top (the upper directory, or one
 * beneath it at rel): what it holds as it is, whiteouts (character devices
 * 0/0) as ".wh.NAME" markers, an opaque directory's mark as ".wh..wh..opq"
 * after the directory's own entry. What the view shows from another mount
 * (cordon's own mount points: /tmp, /run, home, /dev, /proc, the policy's
 * binds, /etc/resolv.conf) is left out: the new sandbox makes its own. Names
 * that look like markers themselves are left out too (counted). */
static int walk_upper(struct archive *a, struct sink *sk, int top, const char *rel, uint64_t root_mnt, int depth,
                      int64_t *skipped)
{
        DIR *d = dir_stream(top, depth);
        if (!d)
                return 0;
        struct dirent *de;
        struct stat st;
        int r = 0;
        while (r == 0 && (de = next_entry(d, &st))) {
                _cleanup_free_ char *sub = rel[0] ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
                _cleanup_free_ char *arc = NULL;
                if (S_ISCHR(st.st_mode) && st.st_rdev == 0) {
                        arc = rel[0] ? xasprintf(SNAPSHOT_UPPER "/%s/" SNAPSHOT_WHITEOUT "%s", rel, de->d_name)
                                     : xasprintf(SNAPSHOT_UPPER "/" SNAPSHOT_WHITEOUT "%s", de->d_name);
                        r = add_marker(a, sk, arc, &st);
                        continue;
                }
                if (startswith(de->d_name, SNAPSHOT_WHITEOUT)) {
                        (*skipped)++;
                        continue;
                }
                _cleanup_free_ char *vpath = xasprintf("/%s", sub);
                if (view_mount(vpath) != root_mnt)
                        continue;
                arc = xasprintf(SNAPSHOT_UPPER "/%s", sub);
                r = add_file(a, sk, dirfd(d), de->d_name, arc, &st);
                if (r < 0 || !S_ISDIR(st.st_mode))
                        continue;
                int subfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (subfd < 0)
                        continue;
                char v[8];
                ssize_t n = fgetxattr(subfd, OVL_OPAQUE_XATTR, v, sizeof(v));
                if (n == 1 && v[0] == 'y') {
                        _cleanup_free_ char *opq = xasprintf("%s/" SNAPSHOT_OPAQUE, arc);
                        r = add_marker(a, sk, opq, &st);
                }
                if (r == 0)
                        r = walk_upper(a, sk, subfd, sub, root_mnt, depth + 1, skipped);
                close(subfd);
        }
        closedir(d);
        return r;
}

/* The template's digest as a snapshot records it and a restore compares
 * it: the policy's source.digest (checked when the sandbox started), else
 * computed now from the template's path (the tree the path shows now; a
 * policy that pins the digest pins what the sandbox's root was). Call
 * before the thread is confined. */
int snapshot_template_digest(const struct sandbox_state *st, char ret[FS_DIGEST_SIZE], char *err, size_t errsize)
{
        const char *path = st->plan ? st->plan->view.template_path : NULL;
        if (!path)
                return -ENOENT;
        if (st->policy && st->policy->source_digest) {
                snprintf(ret, FS_DIGEST_SIZE, "%s", st->policy->source_digest);
                return 0;
        }
        _cleanup_close_ int fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                int r = negative_errno();
                snprintf(err, errsize, "the template %s: %s", path, strerror(-r));
                return r;
        }
        return fs_digest_tree(fd, err, errsize, ret);
}

json_t *snapshot_write(struct xfer *x)
{
        const char *why = NULL;
        if (archive_dl_load(&why) < 0 || crypto_dl_load(&why) < 0)
                return error_reply("snapshot: %s", why);
        struct sink s = {.fd = x->fd, .md = EVP_MD_CTX_new(), .progress_conn = x->progress ? x->conn : -1};
        if (!s.md || EVP_DigestInit_ex(s.md, EVP_sha256(), NULL) != 1)
                oom();
        struct archive *a = archive_write_new();
        if (!a)
                oom();
        json_t *res = NULL;
        /* no zero padding after the compressed stream: zstd(1) would take it
         * for trailing garbage */
        archive_write_set_bytes_in_last_block(a, 1);
        if (archive_write_add_filter_zstd(a) != ARCHIVE_OK ||
            archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
            archive_write_open2(a, &s, NULL, sink_write, NULL, NULL) != ARCHIVE_OK) {
                res = error_reply("libarchive: %s", archive_error_string(a) ?: "cannot start the archive");
                goto out;
        }
        int r = add_blob(a, "cordon/sandbox.json", x->extra_json ? x->extra_json : "{}");
        for (size_t i = 0; r == 0 && i < SNAPSHOT_LAYER_DIRS; i++) {
                int fd = xfer_open(snapshot_layer_dirs[i].view, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
                struct stat st;
                if (fd < 0)
                        continue;
                if (fstat(fd, &st) == 0) {
                        struct archive_entry *e = archive_entry_new();
                        archive_entry_set_pathname(e, snapshot_layer_dirs[i].name);
                        archive_entry_copy_stat(e, &st);
                        archive_entry_set_uid(e, 0);
                        archive_entry_set_gid(e, 0);
                        r = archive_write_header(a, e) == ARCHIVE_OK ? 0 : -EIO;
                        archive_entry_free(e);
                        s.entries++;
                        if (r == 0)
                                r = walk(a, &s, fd, snapshot_layer_dirs[i].name, st.st_dev, 0);
                }
                close(fd);
        }
        /* a template root: its changes, from the upper directory behind the
         * overlay (x->upper_fd, opened before the thread was confined) */
        int64_t skipped = 0;
        if (r == 0 && x->upper_fd >= 0) {
                uint64_t root_mnt = view_mount("/");
                r = root_mnt ? walk_upper(a, &s, x->upper_fd, "", root_mnt, 0, &skipped) : -EOPNOTSUPP;
        }
        if (r == 0 && archive_write_close(a) != ARCHIVE_OK)
                r = -EIO;
        sink_progress(&s, true);
        if (r < 0) {
                res = error_reply("snapshot: %s", archive_error_string(a) ?: strerror(-r));
                goto out;
        }
        unsigned char d[EVP_MAX_MD_SIZE];
        unsigned dn = 0;
        char digest[2 * EVP_MAX_MD_SIZE + 8] = "sha256:";
        EVP_DigestFinal_ex(s.md, d, &dn);
        hex(d, dn, digest + 7);
        res = json_pack("{s:b, s:s, s:I, s:I}", "ok", 1, "digest", digest, "bytes", (json_int_t)s.bytes, "entries",
                        (json_int_t)s.entries);
        if (skipped)
                json_object_set_new(res, "skippedMarkerNames", json_integer(skipped));
out:
        archive_write_free(a);
        EVP_MD_CTX_free(s.md);
        return res;
}

/* The digest of what fd holds, from its start ("sha256:<hex>"). */
static int digest_fd(int fd, char out[80])
{
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
                oom();
        char buf[65536];
        ssize_t n;
        off_t off = 0;
        while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
                EVP_DigestUpdate(md, buf, (size_t)n);
                off += n;
        }
        unsigned char d[EVP_MAX_MD_SIZE];
        unsigned dn = 0;
        EVP_DigestFinal_ex(md, d, &dn);
        EVP_MD_CTX_free(md);
        if (n < 0)
                return negative_errno();
        memcpy(out, "sha256:", 7);
        hex(d, dn, out + 7);
        return 0;
}

struct restore {
        struct sandbox_state *st;
        int fd;
        char *err;
        size_t errsize;
        int result;
        int progress_fd;             /* "PROGRESS bytes total entries" lines for a client on a terminal; else -1 */
        const char *template;        /* the new sandbox's template root, or NULL */
        char digest[FS_DIGEST_SIZE]; /* its digest (snapshot_template_digest) */
        bool template_checked;       /* the archive's template record matched */
        int root;                    /* the view's root, in the confined thread */
        int64_t skipped;             /* upper entries on another mount than the root's, left out */
        json_t *policy;              /* the policy the new sandbox runs under (parsed), or NULL */
        bool policy_differs;         /* the snapshot was taken under another */
};

/* Opens the parent directory of rel (relative to the view's root) by a
 * walk that follows no symlink and crosses no mount: a restore writes a
 * template root's changes onto the root's own mount only, never through
 * one of its symlinks, never onto cordon's mount points (/tmp, /proc, the
 * policy's binds, ...). -ENOENT: a component is missing (a later entry
 * creates it, or nothing is there to remove); -ELOOP, -EXDEV: not on the
 * root's mount. */
static int view_parent(int root, const char *rel, char **ret_base)
{
        _cleanup_free_ char *copy = xstrdup(rel);
        size_t len = strlen(copy);
        while (len > 0 && copy[len - 1] == '/')
                copy[--len] = '\0';
        char *slash = strrchr(copy, '/');
        char *base = slash ? slash + 1 : copy;
        if (!*base)
                return -EINVAL;
        _cleanup_close_ int cur = fcntl(root, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return negative_errno();
        if (slash) {
                *slash = '\0';
                char *save = NULL;
                for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                        int next = fs_open_beneath_one(cur, c, O_PATH | O_DIRECTORY, true);
                        if (next < 0)
                                return next;
                        close(cur);
                        cur = next;
                }
        }
        *ret_base = xstrdup(base);
        return TAKE_FD(cur);
}

/* Removes name below dirfd and all beneath it, on dirfd's mount only
 * (never following a symlink: a link is removed, not its target). */
static int remove_tree(int parent, const char *name, int depth)
{
        if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
                return 0;
        if (errno != EISDIR && errno != EPERM)
                return negative_errno();
        if (depth > WALK_MAX_DEPTH)
                return -ELOOP;
        int fd = fs_open_beneath_one(parent, name, O_RDONLY | O_DIRECTORY, true);
        if (fd < 0)
                return fd;
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -ENOMEM;
        }
        int r = 0;
        struct dirent *de;
        while (r == 0 && (de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        r = remove_tree(dirfd(d), de->d_name, depth + 1);
        closedir(d);
        if (r == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                r = negative_errno();
        return r;
}

/* A whiteout (remove name) or an opaque marker (empty the directory name)
 * from upper/, applied through the view: overlayfs records each removal of
 * a template's file as its own whiteout. */
static int apply_removal(struct restore *rs, const struct snapshot_plan *p)
{
        _cleanup_free_ char *base = NULL;
        _cleanup_close_ int parent = view_parent(rs->root, p->name, &base);
        if (parent == -ENOENT)
                return 0; /* nothing there */
        if (parent == -ELOOP || parent == -EXDEV) {
                rs->skipped++;
                return 0;
        }
        if (parent < 0)
                return parent;
        if (p->action == SNAPSHOT_ACT_WHITEOUT)
                return remove_tree(parent, base, 0);
        _cleanup_close_ int dfd = fs_open_beneath_one(parent, base, O_RDONLY | O_DIRECTORY, true);
        if (dfd == -ENOENT)
                return 0;
        if (dfd == -ELOOP || dfd == -EXDEV) {
                rs->skipped++;
                return 0;
        }
        if (dfd < 0)
                return dfd;
        DIR *d = fdopendir(dfd);
        if (!d)
                return -ENOMEM;
        dfd = -1; /* closedir closes it */
        int r = 0;
        struct dirent *de;
        while (r == 0 && (de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        r = remove_tree(dirfd(d), de->d_name, 0);
        closedir(d);
        return r;
}

/* Whether an upper/ entry may be written at its name: its parent is
 * reached on the root's mount without a symlink, and the name itself is
 * not one of cordon's mount points. */
static bool upper_writable(struct restore *rs, const char *name)
{
        _cleanup_free_ char *base = NULL;
        _cleanup_close_ int parent = view_parent(rs->root, name, &base);
        if (parent == -ENOENT)
                return true; /* created by the writer, beneath checked components */
        if (parent < 0)
                return false;
        struct statx a, b;
        if (statx(parent, "", AT_EMPTY_PATH, STATX_MNT_ID, &a) < 0)
                return false;
        if (statx(parent, base, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &b) < 0)
                return errno == ENOENT;
        return a.stx_mnt_id == b.stx_mnt_id;
}

/* cordon/sandbox.json: a template root's snapshot names its template; its
 * changes are restored only onto the same one (same path, same digest). */
static int check_template(struct restore *rs, struct archive *in)
{
        _cleanup_free_ char *buf = xmalloc(SANDBOX_JSON_MAX + 1);
        size_t len = 0;
        for (;;) {
                la_ssize_t n = archive_read_data(in, buf + len, SANDBOX_JSON_MAX - len);
                if (n < 0) {
                        snprintf(rs->err, rs->errsize, "cordon/sandbox.json: %s",
                                 archive_error_string(in) ?: "unreadable");
                        return -EINVAL;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len == SANDBOX_JSON_MAX) {
                        snprintf(rs->err, rs->errsize, "cordon/sandbox.json: larger than %d bytes", SANDBOX_JSON_MAX);
                        return -EINVAL;
                }
        }
        json_error_t jerr;
        json_t *j = json_loadb(buf, len, 0, &jerr);
        /* the policy it was taken under is only compared, never applied:
         * an archive is data, and granting binds, grants or egress is the
         * creator's policy's alone */
        const char *ptext = json_string_value(json_object_get(j, "policy"));
        json_t *p = ptext ? json_loads(ptext, 0, &jerr) : NULL;
        if (rs->policy && p && !json_equal(p, rs->policy))
                rs->policy_differs = true;
        json_decref(p);
        json_t *t = json_object_get(j, "template");
        const char *path = json_string_value(json_object_get(t, "path"));
        const char *digest = json_string_value(json_object_get(t, "digest"));
        int r = 0;
        if (t && (!path || !digest)) {
                snprintf(rs->err, rs->errsize, "cordon/sandbox.json: the template record lacks its path or digest");
                r = -EINVAL;
        } else if (t && !rs->template) {
                snprintf(rs->err, rs->errsize,
                         "the snapshot holds changes to the template root %s (%s), but this sandbox's root is "
                         "not a template; create it with a policy whose source is that template",
                         path, digest);
                r = -EINVAL;
        } else if (t && (!streq(path, rs->template) || !streq(digest, rs->digest))) {
                snprintf(rs->err, rs->errsize,
                         "template mismatch: the snapshot holds changes to the template %s (%s), but this "
                         "sandbox's root is the template %s (%s); a template root's snapshot is restored only onto "
                         "the same template",
                         path, digest, rs->template, rs->digest);
                r = -EINVAL;
        } else if (t)
                rs->template_checked = true;
        json_decref(j);
        return r;
}

static void restore_progress(struct restore *rs, struct archive *in, int64_t entries, int64_t total, int64_t *last,
                             bool final)
{
        if (rs->progress_fd < 0)
                return;
        int64_t now = monotonic_ms();
        if (!final && now - *last < PROGRESS_MS)
                return;
        *last = now;
        char line[96];
        int n = snprintf(line, sizeof(line), "PROGRESS %lld %lld %lld\n", (long long)archive_filter_bytes(in, -1),
                         (long long)total, (long long)entries);
        (void)write_all(rs->progress_fd, line, (size_t)n);
}

static void *restore_thread(void *arg)
{
        struct restore *rs = arg;
        int r = xfer_confine(&rs->st->fsctx);
        if (r < 0) {
                snprintf(rs->err, rs->errsize, "cannot enter the view: %s", strerror(-r));
                rs->result = r;
                return NULL;
        }
        rs->root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rs->root < 0) {
                rs->result = negative_errno();
                snprintf(rs->err, rs->errsize, "cannot open the view's root: %s", strerror(-rs->result));
                return NULL;
        }
        struct archive *in = archive_read_new(), *out = archive_write_disk_new();
        if (!in || !out)
                oom();
        archive_read_support_filter_zstd(in);
        archive_read_support_format_tar(in);
        /* no absolute paths, no "..", no writing through a symlink the
         * archive made, no owners from the archive (files are the
         * sandbox user's) */
        archive_write_disk_set_options(out, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                                    ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                                    ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS | ARCHIVE_EXTRACT_UNLINK);
        r = 0;
        struct stat ast;
        int64_t total = fstat(rs->fd, &ast) == 0 ? (int64_t)ast.st_size : -1, entries = 0, last = 0;
        if (lseek(rs->fd, 0, SEEK_SET) < 0 || archive_read_open_fd(in, rs->fd, 65536) != ARCHIVE_OK) {
                snprintf(rs->err, rs->errsize, "%s", archive_error_string(in) ?: "cannot read the archive");
                r = -EINVAL;
        }
        struct archive_entry *e;
        int ar = ARCHIVE_OK;
        bool first = true;
        while (r == 0 && (ar = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
                entries++;
                restore_progress(rs, in, entries, total, &last, false);
                if (first && streq(archive_entry_pathname(e) ?: "", "cordon/sandbox.json")) {
                        first = false;
                        r = check_template(rs, in);
                        continue;
                }
                first = false;
                struct snapshot_plan p = {0};
                int act = snapshot_entry_plan(e, &p);
                if (act < 0) {
                        snprintf(rs->err, rs->errsize, "%s: a name with \"..\", or a malformed whiteout marker",
                                 archive_entry_pathname(e));
                        r = act;
                        break;
                }
                if (act == 0)
                        continue;
                if (act != SNAPSHOT_ACT_WRITE && !rs->template_checked) {
                        /* changes to a template root with no record of which
                         * template: never applied to whatever root this is */
                        snprintf(rs->err, rs->errsize,
                                 "%s: a template root's change, but the snapshot names no template "
                                 "(cordon/sandbox.json first, with a \"template\" record)",
                                 archive_entry_pathname(e));
                        snapshot_plan_done(&p);
                        r = -EINVAL;
                        break;
                }
                if (act == SNAPSHOT_ACT_WHITEOUT || act == SNAPSHOT_ACT_OPAQUE) {
                        int q = apply_removal(rs, &p);
                        if (q < 0) {
                                snprintf(rs->err, rs->errsize, "%s: cannot remove /%s in the view: %s",
                                         archive_entry_pathname(e), p.name, strerror(-q));
                                r = q;
                        }
                        snapshot_plan_done(&p);
                        continue;
                }
                if (act == SNAPSHOT_ACT_UPPER &&
                    (!upper_writable(rs, p.name) || (p.hardlink && !upper_writable(rs, p.hardlink)))) {
                        rs->skipped++;
                        snapshot_plan_done(&p);
                        continue;
                }
                archive_entry_set_pathname(e, p.name);
                if (p.hardlink)
                        archive_entry_set_hardlink(e, p.hardlink);
                int w = archive_write_header(out, e);
                if (w == ARCHIVE_OK && archive_entry_size(e) > 0) {
                        const void *buf;
                        size_t size;
                        la_int64_t offset;
                        int rr;
                        while ((rr = archive_read_data_block(in, &buf, &size, &offset)) == ARCHIVE_OK)
                                if (archive_write_data_block(out, buf, size, offset) < ARCHIVE_OK) {
                                        w = ARCHIVE_FATAL;
                                        break;
                                }
                        if (rr < ARCHIVE_WARN)
                                w = ARCHIVE_FATAL;
                }
                if (w == ARCHIVE_OK)
                        w = archive_write_finish_entry(out);
                if (w < ARCHIVE_WARN) {
                        snprintf(rs->err, rs->errsize, "%s: %s", p.name,
                                 archive_error_string(out) ?: archive_error_string(in) ?: "cannot restore");
                        r = -EIO;
                }
                snapshot_plan_done(&p);
        }
        if (r == 0 && ar != ARCHIVE_EOF) {
                snprintf(rs->err, rs->errsize, "%s", archive_error_string(in) ?: "a damaged archive");
                r = -EINVAL;
        }
        /* directories' modes and times, which the writer sets last */
        if (r == 0 && archive_write_close(out) < ARCHIVE_WARN) {
                snprintf(rs->err, rs->errsize, "%s", archive_error_string(out) ?: "cannot finish the restore");
                r = -EIO;
        }
        restore_progress(rs, in, entries, total, &last, true);
        archive_read_free(in);
        archive_write_free(out);
        close(rs->root);
        rs->result = r;
        return NULL;
}

int snapshot_recorded_limits(const char *path, struct run_limits *ret)
{
        run_limits_unset(ret);
        const char *why = NULL;
        if (archive_dl_load(&why) < 0)
                return -ELIBACC;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        struct archive *in = archive_read_new();
        if (!in)
                oom();
        archive_read_support_filter_zstd(in);
        archive_read_support_format_tar(in);
        struct archive_entry *e;
        int r = -EINVAL;
        /* cordon/sandbox.json is the archive's first entry (snapshot_write) */
        if (archive_read_open_fd(in, fd, 65536) == ARCHIVE_OK && archive_read_next_header(in, &e) == ARCHIVE_OK &&
            streq(archive_entry_pathname(e) ?: "", "cordon/sandbox.json")) {
                _cleanup_free_ char *buf = xmalloc(SANDBOX_JSON_MAX);
                size_t len = 0;
                la_ssize_t n;
                while (len < SANDBOX_JSON_MAX && (n = archive_read_data(in, buf + len, SANDBOX_JSON_MAX - len)) > 0)
                        len += (size_t)n;
                json_t *j = json_loadb(buf, len, 0, NULL);
                json_t *l = json_object_get(json_object_get(j, "meta"), "limits");
                if (json_is_object(l)) {
                        for (size_t k = 0; k < _LIMIT_KIND_MAX; k++) {
                                json_t *v = json_object_get(l, limit_key((enum limit_kind)k));
                                if (json_is_integer(v) && json_integer_value(v) > 0)
                                        ret->value[k] = (int64_t)json_integer_value(v);
                        }
                        r = 0;
                }
                json_decref(j);
        }
        archive_read_free(in);
        return r;
}

int snapshot_restore(struct sandbox_state *st, int fd, const char *want_digest, int progress_fd, char *err,
                     size_t errsize)
{
        const char *why = NULL;
        if (archive_dl_load(&why) < 0 || crypto_dl_load(&why) < 0) {
                snprintf(err, errsize, "%s", why);
                return -ELIBACC;
        }
        char got[80];
        int r = digest_fd(fd, got);
        if (r < 0) {
                snprintf(err, errsize, "cannot read it: %s", strerror(-r));
                return r;
        }
        /* a snapshot whose digest differs from the one recorded for it is
         * refused outright: it is not what was snapshotted */
        if (!want_digest || !streq(got, want_digest)) {
                snprintf(err, errsize, "digest mismatch: expected %s, the file has %s; refusing to restore it",
                         want_digest ? want_digest : "(none)", got);
                return -EBADMSG;
        }
        struct restore rs = {.st = st,
                             .fd = fd,
                             .err = err,
                             .errsize = errsize,
                             .progress_fd = progress_fd,
                             .policy = st->serve ? st->serve->policy_json : NULL};
        /* the template this sandbox's root is, to compare with the one the
         * snapshot names: computed here, before the thread is confined */
        if (st->plan && st->plan->view.template_path) {
                rs.template = st->plan->view.template_path;
                r = snapshot_template_digest(st, rs.digest, err, errsize);
                if (r < 0)
                        return r;
        }
        pthread_t t;
        r = pthread_create(&t, NULL, restore_thread, &rs);
        if (r != 0)
                return -r;
        pthread_join(t, NULL);
        if (rs.skipped > 0)
                fprintf(stderr, "cordon: the snapshot's restore left out %lld change(s) at cordon's own mount points\n",
                        (long long)rs.skipped);
        if (rs.result == 0 && rs.policy_differs)
                fprintf(stderr,
                        "cordon: note: the snapshot was taken under another policy (its cordon/sandbox.json has it); "
                        "the restored sandbox runs under the policy it was created with (--policy, else the default), "
                        "its rules and egress included (of its limits, only those the snapshot recorded stricter "
                        "and this create did not set are the snapshot's)\n");
        return rs.result;
}
