/* Snapshots of a long-lived sandbox: its writable layer (the private /tmp,
 * /var/tmp, /run, home and /dev/shm) plus its policy and metadata, as a tar
 * (pax) compressed with zstd, written with libarchive, with the sha256 of
 * the archive computed while it is written. Restoring (`create
 * --from-snapshot`) checks that digest first and then unpacks the layer into
 * the new sandbox's view. Both run in a thread confined to the view as the
 * sandbox's user (transfer.c), so a snapshot holds only what the sandbox
 * could read, and a restore writes only where the sandbox could write. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sys/stat.h>

#include "common/crypto-dl.h"
#include "sentry/archive-dl.h"
#include "sentry/sandbox.h"

#define WALK_MAX_DEPTH 128

struct sink {
        int fd;
        EVP_MD_CTX *md;
        int64_t bytes;
};

static la_ssize_t sink_write(struct archive *a, void *userdata, const void *buf, size_t len)
{
        struct sink *s = userdata;
        if (write_all(s->fd, buf, len) < 0) {
                archive_set_error(a, errno, "write: %s", strerror(errno));
                return -1;
        }
        EVP_DigestUpdate(s->md, buf, len);
        s->bytes += (int64_t)len;
        return (la_ssize_t)len;
}

static void hex(const unsigned char *d, unsigned n, char *out)
{
        for (unsigned i = 0; i < n; i++)
                snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int add_file(struct archive *a, int dirfd, const char *name, const char *arcname, const struct stat *st)
{
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

/* Adds what is below dirfd, never leaving its mount (dev) and never
 * following a symlink. */
static int walk(struct archive *a, int top, const char *prefix, dev_t dev, int depth)
{
        if (depth > WALK_MAX_DEPTH)
                return 0;
        int dfd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d) {
                if (dfd >= 0)
                        close(dfd);
                return 0;
        }
        struct dirent *de;
        int r = 0;
        while (r == 0 && (de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev)
                        continue;
                char *arc = xasprintf("%s/%s", prefix, de->d_name);
                r = add_file(a, dirfd(d), de->d_name, arc, &st);
                if (r == 0 && S_ISDIR(st.st_mode)) {
                        int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub >= 0) {
                                r = walk(a, sub, arc, dev, depth + 1);
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

json_t *snapshot_write(struct xfer *x)
{
        const char *why = NULL;
        if (archive_dl_load(&why) < 0 || crypto_dl_load(&why) < 0)
                return error_reply("snapshot: %s", why);
        struct sink s = {.fd = x->fd, .md = EVP_MD_CTX_new()};
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
                        if (r == 0)
                                r = walk(a, fd, snapshot_layer_dirs[i].name, st.st_dev, 0);
                }
                close(fd);
        }
        if (r == 0 && archive_write_close(a) != ARCHIVE_OK)
                r = -EIO;
        if (r < 0) {
                res = error_reply("snapshot: %s", archive_error_string(a) ?: strerror(-r));
                goto out;
        }
        unsigned char d[EVP_MAX_MD_SIZE];
        unsigned dn = 0;
        char digest[2 * EVP_MAX_MD_SIZE + 8] = "sha256:";
        EVP_DigestFinal_ex(s.md, d, &dn);
        hex(d, dn, digest + 7);
        res = json_pack("{s:b, s:s, s:I}", "ok", 1, "digest", digest, "bytes", (json_int_t)s.bytes);
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
};

static void *restore_thread(void *arg)
{
        struct restore *rs = arg;
        int r = xfer_confine(&rs->st->fsctx);
        if (r < 0) {
                snprintf(rs->err, rs->errsize, "cannot enter the view: %s", strerror(-r));
                rs->result = r;
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
        if (lseek(rs->fd, 0, SEEK_SET) < 0 || archive_read_open_fd(in, rs->fd, 65536) != ARCHIVE_OK) {
                snprintf(rs->err, rs->errsize, "%s", archive_error_string(in) ?: "cannot read the archive");
                r = -EINVAL;
        }
        struct archive_entry *e;
        int ar;
        while (r == 0 && (ar = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
                _cleanup_free_ char *name = NULL, *hname = NULL;
                int p = snapshot_entry_plan(e, &name, &hname);
                if (p < 0) {
                        snprintf(rs->err, rs->errsize, "%s: a name with \"..\"", archive_entry_pathname(e));
                        r = p;
                        break;
                }
                if (p == 0)
                        continue;
                archive_entry_set_pathname(e, name);
                if (hname)
                        archive_entry_set_hardlink(e, hname);
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
                        snprintf(rs->err, rs->errsize, "%s: %s", name,
                                 archive_error_string(out) ?: archive_error_string(in) ?: "cannot restore");
                        r = -EIO;
                }
        }
        if (r == 0 && ar != ARCHIVE_EOF) {
                snprintf(rs->err, rs->errsize, "%s", archive_error_string(in) ?: "a damaged archive");
                r = -EINVAL;
        }
        archive_read_free(in);
        archive_write_free(out);
        rs->result = r;
        return NULL;
}

int snapshot_restore(struct sandbox_state *st, int fd, const char *want_digest, char *err, size_t errsize)
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
        struct restore rs = {.st = st, .fd = fd, .err = err, .errsize = errsize};
        pthread_t t;
        r = pthread_create(&t, NULL, restore_thread, &rs);
        if (r != 0)
                return -r;
        pthread_join(t, NULL);
        return rs.result;
}
