/* The digest of a template tree: what `source.digest` pins and what
 * `cordon digest DIR` prints.
 *
 * Format (version 1), so that another implementation can reproduce it:
 *
 *   digest  = "sha256:" || lowercase hex of SHA-256( "cordon-tree-digest-v1" NUL || record... )
 *
 * with one record per entry of the tree, the root directory included, the
 * records ordered by plain byte-wise comparison (memcmp, shorter prefix
 * first) of their paths. A record is five fields, each followed by one NUL
 * byte:
 *
 *   path   the entry's path relative to the root, components joined by "/";
 *          the root itself is the empty string
 *   type   one letter: "d" directory, "f" regular file, "l" symlink,
 *          "c" character device, "b" block device, "p" fifo, "s" socket
 *   mode   st_mode & 07777 as exactly four octal digits, e.g. "0755", "4755"
 *          (permission bits with setuid, setgid and sticky)
 *   size   decimal, no leading zeros: a file's length in bytes; a symlink's
 *          target length; "0" for every other type
 *   extra  a file: lowercase hex SHA-256 of its contents (64 digits);
 *          a symlink: its target, byte for byte; a device: "MAJOR,MINOR" in
 *          decimal; directories, fifos and sockets: empty
 *
 * Not covered, on purpose: owners and groups (the view maps them to the
 * sandbox's own ids, and a copy made by another user keeps its digest),
 * timestamps, extended attributes, hard-link identity (two names of one
 * file count as two files).
 *
 * Device nodes, fifos and sockets are described by type, mode and device
 * numbers rather than refused: a root tree unpacked from an image often has
 * a few under /dev, they have no contents to change, and the view never
 * lets the sandbox use a template's device node (the overlay is nodev).
 *
 * The walk never follows a symlink and never crosses into another mount:
 * every step is an openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_XDEV from the directory fd above it, so the tree hashed is the
 * one under the fd the caller holds, whatever the paths to it do meanwhile.
 * A mount point inside the tree is an error: the overlay that mounts a
 * template shows what is beneath it, not the mount, and the digest must
 * describe what is mounted. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "common/crypto-dl.h"
#include "common/util.h"
#include "fs/fs.h"

#define DIGEST_MAGIC "cordon-tree-digest-v1"
/* bounds on what a tree may make us hold: records in memory, open
 * directories (one per level), a path */
#define MAX_ENTRIES (4 * 1024 * 1024)
#define MAX_DEPTH   256
#define MAX_PATH    4096

struct record {
        char *buf; /* the record's bytes; begins with the path and its NUL */
        size_t len;
};

struct walk {
        struct record *recs;
        size_t n, cap;
        char *err;
        size_t errsize;
};

_printf_(3, 4) static int walk_fail(struct walk *w, int r, const char *fmt, ...)
{
        char what[MAX_PATH + 128];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        if (w->err && w->errsize)
                snprintf(w->err, w->errsize, "%s: %s", what, strerror(-r));
        return r;
}

static void hex(const unsigned char *in, size_t n, char *out)
{
        static const char digits[] = "0123456789abcdef";
        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[in[i] >> 4];
                out[2 * i + 1] = digits[in[i] & 0xf];
        }
        out[2 * n] = '\0';
}

static int add_record(struct walk *w, const char *path, char type, mode_t mode, uint64_t size, const char *extra,
                      size_t extra_len)
{
        if (w->n == MAX_ENTRIES)
                return walk_fail(w, -E2BIG, "more than %d entries", MAX_ENTRIES);
        char head[64];
        int hl = snprintf(head, sizeof(head), "%c%c%04o%c%llu%c", type, '\0', (unsigned)(mode & 07777), '\0',
                          (unsigned long long)size, '\0');
        size_t pl = strlen(path);
        size_t len = pl + 1 + (size_t)hl + extra_len + 1;
        char *b = xmalloc(len);
        memcpy(b, path, pl + 1);
        memcpy(b + pl + 1, head, (size_t)hl);
        memcpy(b + pl + 1 + hl, extra, extra_len);
        b[len - 1] = '\0';
        if (w->n == w->cap) {
                w->cap = w->cap ? w->cap * 2 : 256;
                w->recs = xrealloc(w->recs, w->cap * sizeof(*w->recs));
        }
        w->recs[w->n++] = (struct record){b, len};
        return 0;
}

/* one step down: name in dirfd, never through a symlink or into another mount */
static int open_beneath(int dirfd, const char *name, int flags)
{
        return fs_open_beneath_one(dirfd, name, flags | O_NOFOLLOW | O_NOCTTY, true);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && (a->st_mode & S_IFMT) == (b->st_mode & S_IFMT);
}

static int hash_file(struct walk *w, int fd, const char *path, const struct stat *st)
{
        /* on the heap, not in thread-local storage: a 64 KiB _Thread_local
         * is set up (and its pages touched) in every thread of every
         * process, sentry workers included, whether they hash or not */
        enum { BUF = 1 << 16 };
        _cleanup_free_ unsigned char *buf = NULL;
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        if (!ctx)
                oom();
        int r = 0;
        uint64_t total = 0;
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned mdlen = 0;
        if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
                r = walk_fail(w, -EIO, "%s: sha256 init", path);
                goto out;
        }
        buf = xmalloc(BUF);
        for (;;) {
                ssize_t n = read(fd, buf, BUF);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = walk_fail(w, negative_errno(), "read %s", path);
                        goto out;
                }
                if (n == 0)
                        break;
                total += (uint64_t)n;
                if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1) {
                        r = walk_fail(w, -EIO, "%s: sha256 update", path);
                        goto out;
                }
        }
        if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1) {
                r = walk_fail(w, -EIO, "%s: sha256 final", path);
                goto out;
        }
        struct stat after;
        if (fstat(fd, &after) < 0) {
                r = walk_fail(w, negative_errno(), "stat %s", path);
                goto out;
        }
        /* a writer at work: what we hashed is no stable description */
        if ((uint64_t)after.st_size != total || (uint64_t)st->st_size != total ||
            after.st_mtim.tv_sec != st->st_mtim.tv_sec || after.st_mtim.tv_nsec != st->st_mtim.tv_nsec) {
                r = walk_fail(w, -EAGAIN, "%s changed while it was being hashed", path);
                goto out;
        }
        char x[2 * EVP_MAX_MD_SIZE + 1];
        hex(md, mdlen, x);
        r = add_record(w, path, 'f', after.st_mode, total, x, strlen(x));
out:
        EVP_MD_CTX_free(ctx);
        return r;
}

static int cmp_name(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Records dirfd's entries (dirfd is at path, "" for the root) and walks into
 * its subdirectories. */
static int walk_dir(struct walk *w, int dirfd, const char *path, int depth)
{
        if (depth > MAX_DEPTH)
                return walk_fail(w, -ELOOP, "%s: deeper than %d levels", path, MAX_DEPTH);
        /* readdir gets its own fd: the walk below keeps using dirfd */
        int lfd = open_beneath(dirfd, ".", O_RDONLY | O_DIRECTORY);
        if (lfd < 0)
                return walk_fail(w, lfd, "open directory /%s", path);
        DIR *d = fdopendir(lfd);
        if (!d) {
                int r = negative_errno();
                close(lfd);
                return walk_fail(w, r, "read directory /%s", path);
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        int r = 0;
        for (;;) {
                errno = 0;
                struct dirent *de = readdir(d);
                if (!de) {
                        if (errno)
                                r = walk_fail(w, negative_errno(), "read directory /%s", path);
                        break;
                }
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (n == cap) {
                        cap = cap ? cap * 2 : 32;
                        names = xrealloc(names, cap * sizeof(char *));
                }
                names[n++] = xstrdup(de->d_name);
        }
        closedir(d);
        /* the order of the records is fixed by the final sort; sorting here
         * only makes the walk (and its first error) deterministic */
        if (r == 0 && n > 0)
                qsort(names, n, sizeof(char *), cmp_name);

        for (size_t i = 0; r == 0 && i < n; i++) {
                char sub[MAX_PATH];
                if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "/" : "", names[i]) >= sizeof(sub)) {
                        r = walk_fail(w, -ENAMETOOLONG, "/%s/%s", path, names[i]);
                        break;
                }
                struct stat st;
                if (fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = walk_fail(w, negative_errno(), "stat /%s", sub);
                        break;
                }
                switch (st.st_mode & S_IFMT) {
                case S_IFDIR: {
                        int fd = open_beneath(dirfd, names[i], O_RDONLY | O_DIRECTORY);
                        if (fd == -EXDEV) {
                                r = walk_fail(w, fd,
                                              "/%s is a mount point; a template must be a single filesystem tree "
                                              "(its mounts would not be part of the sandbox's root)",
                                              sub);
                                break;
                        }
                        if (fd < 0) {
                                r = walk_fail(w, fd, "open directory /%s", sub);
                                break;
                        }
                        struct stat fst;
                        if (fstat(fd, &fst) < 0 || !same_file(&st, &fst))
                                r = walk_fail(w, -EAGAIN, "/%s changed while the tree was being hashed", sub);
                        if (r == 0)
                                r = add_record(w, sub, 'd', fst.st_mode, 0, "", 0);
                        if (r == 0)
                                r = walk_dir(w, fd, sub, depth + 1);
                        close(fd);
                        break;
                }
                case S_IFREG: {
                        int fd = open_beneath(dirfd, names[i], O_RDONLY);
                        if (fd < 0) {
                                r = walk_fail(w, fd, "open /%s", sub);
                                break;
                        }
                        struct stat fst;
                        if (fstat(fd, &fst) < 0 || !same_file(&st, &fst))
                                r = walk_fail(w, -EAGAIN, "/%s changed while the tree was being hashed", sub);
                        else
                                r = hash_file(w, fd, sub, &fst);
                        close(fd);
                        break;
                }
                case S_IFLNK: {
                        char target[MAX_PATH + 1];
                        ssize_t len = readlinkat(dirfd, names[i], target, sizeof(target));
                        if (len < 0) {
                                r = walk_fail(w, negative_errno(), "readlink /%s", sub);
                                break;
                        }
                        if ((size_t)len >= sizeof(target)) {
                                r = walk_fail(w, -ENAMETOOLONG, "readlink /%s", sub);
                                break;
                        }
                        r = add_record(w, sub, 'l', st.st_mode, (uint64_t)len, target, (size_t)len);
                        break;
                }
                case S_IFCHR:
                case S_IFBLK: {
                        char dev[48];
                        int dl = snprintf(dev, sizeof(dev), "%u,%u", major(st.st_rdev), minor(st.st_rdev));
                        r = add_record(w, sub, S_ISCHR(st.st_mode) ? 'c' : 'b', st.st_mode, 0, dev, (size_t)dl);
                        break;
                }
                case S_IFIFO:
                        r = add_record(w, sub, 'p', st.st_mode, 0, "", 0);
                        break;
                case S_IFSOCK:
                        r = add_record(w, sub, 's', st.st_mode, 0, "", 0);
                        break;
                default:
                        r = walk_fail(w, -EINVAL, "/%s: a file type the digest cannot describe (mode %o)", sub,
                                      (unsigned)st.st_mode);
                        break;
                }
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return r;
}

static int cmp_record(const void *a, const void *b)
{
        /* each record begins with its NUL-terminated path */
        const unsigned char *x = (const unsigned char *)((const struct record *)a)->buf;
        const unsigned char *y = (const unsigned char *)((const struct record *)b)->buf;
        return strcmp((const char *)x, (const char *)y);
}

int fs_digest_tree(int dirfd, char *err, size_t errsize, char ret_digest[FS_DIGEST_SIZE])
{
        struct walk w = {.err = err, .errsize = errsize};
        int r;
        const char *why = NULL;
        if (crypto_dl_load(&why) < 0)
                return walk_fail(&w, -ELIBACC, "%s", why);
        struct stat st;
        if (fstat(dirfd, &st) < 0)
                return walk_fail(&w, negative_errno(), "stat the tree's root");
        if (!S_ISDIR(st.st_mode))
                return walk_fail(&w, -ENOTDIR, "the tree's root");
        r = add_record(&w, "", 'd', st.st_mode, 0, "", 0);
        if (r == 0)
                r = walk_dir(&w, dirfd, "", 0);

        EVP_MD_CTX *ctx = NULL;
        if (r == 0) {
                /* strcmp on unsigned bytes is the byte order the format names */
                qsort(w.recs, w.n, sizeof(*w.recs), cmp_record);
                ctx = EVP_MD_CTX_new();
                if (!ctx)
                        oom();
                if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
                    EVP_DigestUpdate(ctx, DIGEST_MAGIC, sizeof(DIGEST_MAGIC)) != 1)
                        r = walk_fail(&w, -EIO, "sha256");
                for (size_t i = 0; r == 0 && i < w.n; i++)
                        if (EVP_DigestUpdate(ctx, w.recs[i].buf, w.recs[i].len) != 1)
                                r = walk_fail(&w, -EIO, "sha256");
                unsigned char md[EVP_MAX_MD_SIZE];
                unsigned mdlen = 0;
                if (r == 0 && (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32))
                        r = walk_fail(&w, -EIO, "sha256");
                if (r == 0) {
                        memcpy(ret_digest, "sha256:", 7);
                        hex(md, mdlen, ret_digest + 7);
                }
                EVP_MD_CTX_free(ctx);
        }
        for (size_t i = 0; i < w.n; i++)
                free(w.recs[i].buf);
        free(w.recs);
        return r;
}
