/* Unit tests for the template digest (fs/digest.c): the exact byte format,
 * checked against a stream built here by hand and hashed independently;
 * stability across runs; and that every described property (content, mode,
 * symlink target, name, type) changes the digest while what is not described
 * (timestamps) and what lies behind a symlink do not. */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/un.h>

#include "common/util.h"
#include "fs/fs.h"
#include "notify/notify.h"

static char root[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(path);
}

static void setup(void)
{
        snprintf(root, sizeof(root), "/tmp/cordon-digest.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(root));
        ck_assert_int_eq(chmod(root, 0755), 0);
}

static void teardown(void)
{
        nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void put(const char *rel, const char *content, mode_t mode)
{
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", root, rel);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write_all(fd, content, strlen(content)), 0);
        close(fd);
        ck_assert_int_eq(chmod(p, mode), 0);
}

static void dir(const char *rel, mode_t mode)
{
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", root, rel);
        ck_assert_int_eq(mkdir(p, mode), 0);
        ck_assert_int_eq(chmod(p, mode), 0);
}

static void link_to(const char *rel, const char *target)
{
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", root, rel);
        unlink(p);
        ck_assert_int_eq(symlink(target, p), 0);
}

static void digest_of(const char *path, char out[FS_DIGEST_SIZE])
{
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        char err[1024] = "";
        int r = fs_digest_tree(fd, err, sizeof(err), out);
        close(fd);
        ck_assert_msg(r == 0, "digest failed: %s", err);
        ck_assert_uint_eq(strlen(out), FS_DIGEST_SIZE - 1);
        ck_assert(startswith(out, "sha256:"));
}

static void digest(char out[FS_DIGEST_SIZE])
{
        digest_of(root, out);
}

static void sha256_hex(const void *data, size_t len, char out[65])
{
        unsigned char md[32];
        unsigned n = 0;
        ck_assert_int_eq(EVP_Digest(data, len, md, &n, EVP_sha256(), NULL), 1);
        for (unsigned i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", md[i]);
}

struct stream {
        char b[4096];
        size_t len;
};

static void field(struct stream *s, const char *v)
{
        size_t l = strlen(v);
        ck_assert_uint_lt(s->len + l + 1, sizeof(s->b));
        memcpy(s->b + s->len, v, l + 1); /* with its NUL */
        s->len += l + 1;
}

static void record(struct stream *s, const char *path, const char *type, const char *mode, const char *size,
                   const char *extra)
{
        field(s, path);
        field(s, type);
        field(s, mode);
        field(s, size);
        field(s, extra);
}

/* The format as fs/digest.c's comment defines it, built by hand: the root,
 * then the entries in byte order of their paths ("a-c" sorts before "a/b"
 * because '-' < '/'), a file's record carrying the sha256 of its contents, a
 * symlink's its target, a setuid mode in four octal digits. */
START_TEST(test_format)
{
        dir("a", 0750);
        put("a/b", "", 0600);
        put("a-c", "hi", 04755);
        link_to("l", "a/b");
        ck_assert_int_eq(mkfifo(strcat(strcpy((char[256]){0}, root), "/p"), 0640), 0);

        struct stream s = {0};
        field(&s, "cordon-tree-digest-v1");
        char h_empty[65], h_hi[65];
        sha256_hex("", 0, h_empty);
        sha256_hex("hi", 2, h_hi);
        record(&s, "", "d", "0755", "0", "");
        record(&s, "a", "d", "0750", "0", "");
        record(&s, "a-c", "f", "4755", "2", h_hi);
        record(&s, "a/b", "f", "0600", "0", h_empty);
        record(&s, "l", "l", "0777", "3", "a/b");
        record(&s, "p", "p", "0640", "0", "");
        char want[FS_DIGEST_SIZE] = "sha256:";
        sha256_hex(s.b, s.len, want + 7);

        char got[FS_DIGEST_SIZE];
        digest(got);
        ck_assert_str_eq(got, want);
}
END_TEST

/* Sockets and (as root) device nodes are described, not refused: type,
 * mode, and a device's numbers. */
START_TEST(test_special_files)
{
        char p[256];
        snprintf(p, sizeof(p), "%s/sock", root);
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(s, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        ck_assert_uint_lt(strlen(p), sizeof(sa.sun_path));
        strcpy(sa.sun_path, p);
        ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
        close(s);
        ck_assert_int_eq(chmod(p, 0700), 0);
        bool dev = false;
        snprintf(p, sizeof(p), "%s/null", root);
        if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0) {
                dev = true;
                ck_assert_int_eq(chmod(p, 0666), 0);
        }

        struct stream st = {0};
        field(&st, "cordon-tree-digest-v1");
        record(&st, "", "d", "0755", "0", "");
        if (dev)
                record(&st, "null", "c", "0666", "0", "1,3");
        record(&st, "sock", "s", "0700", "0", "");
        char want[FS_DIGEST_SIZE] = "sha256:";
        sha256_hex(st.b, st.len, want + 7);
        char got[FS_DIGEST_SIZE];
        digest(got);
        ck_assert_str_eq(got, want);
}
END_TEST

/* The root must be a directory; a walk error names the path. */
START_TEST(test_errors)
{
        put("file", "x", 0644);
        char p[256];
        snprintf(p, sizeof(p), "%s/file", root);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        char err[1024] = "", out[FS_DIGEST_SIZE] = "untouched";
        ck_assert_int_eq(fs_digest_tree(fd, err, sizeof(err), out), -ENOTDIR);
        ck_assert_str_eq(out, "untouched");
        close(fd);
        if (geteuid() != 0) {
                /* an unreadable file: the error names it */
                put("secret", "x", 0000);
                fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(fs_digest_tree(fd, err, sizeof(err), out), -EACCES);
                ck_assert_msg(strstr(err, "/secret") != NULL, "error names the file: %s", err);
                close(fd);
        }
}
END_TEST

static void build_tree(void)
{
        dir("etc", 0755);
        put("etc/passwd", "root:x:0:0::/root:/bin/sh\n", 0644);
        dir("bin", 0755);
        put("bin/tool", "#!/bin/sh\necho tool\n", 0755);
        link_to("sh", "bin/tool");
        dir("empty", 0700);
}

START_TEST(test_stable)
{
        build_tree();
        char a[FS_DIGEST_SIZE], b[FS_DIGEST_SIZE];
        digest(a);
        digest(b);
        ck_assert_str_eq(a, b);
        /* timestamps are not part of it */
        char p[256];
        snprintf(p, sizeof(p), "%s/etc/passwd", root);
        struct timeval tv[2] = {{1000000, 0}, {1000000, 0}};
        ck_assert_int_eq(utimes(p, tv), 0);
        digest(b);
        ck_assert_str_eq(a, b);
}
END_TEST

START_TEST(test_changes)
{
        build_tree();
        char base[FS_DIGEST_SIZE], d[FS_DIGEST_SIZE];
        digest(base);

        /* content, same size */
        put("etc/passwd", "ROOT:x:0:0::/root:/bin/sh\n", 0644);
        digest(d);
        ck_assert_str_ne(d, base);
        put("etc/passwd", "root:x:0:0::/root:/bin/sh\n", 0644);
        digest(d);
        ck_assert_str_eq(d, base);

        /* mode: permission bits, then setuid alone */
        char p[256];
        snprintf(p, sizeof(p), "%s/bin/tool", root);
        ck_assert_int_eq(chmod(p, 0750), 0);
        digest(d);
        ck_assert_str_ne(d, base);
        ck_assert_int_eq(chmod(p, 04755), 0);
        digest(d);
        ck_assert_str_ne(d, base);
        ck_assert_int_eq(chmod(p, 0755), 0);
        digest(d);
        ck_assert_str_eq(d, base);

        /* a directory's mode */
        snprintf(p, sizeof(p), "%s/empty", root);
        ck_assert_int_eq(chmod(p, 01777), 0);
        digest(d);
        ck_assert_str_ne(d, base);
        ck_assert_int_eq(chmod(p, 0700), 0);

        /* symlink target */
        link_to("sh", "bin/tool2");
        digest(d);
        ck_assert_str_ne(d, base);
        link_to("sh", "bin/tool");
        digest(d);
        ck_assert_str_eq(d, base);

        /* a name */
        char q[256];
        snprintf(p, sizeof(p), "%s/etc/passwd", root);
        snprintf(q, sizeof(q), "%s/etc/passwe", root);
        ck_assert_int_eq(rename(p, q), 0);
        digest(d);
        ck_assert_str_ne(d, base);
        ck_assert_int_eq(rename(q, p), 0);

        /* the type: an empty file where an empty directory was */
        snprintf(p, sizeof(p), "%s/empty", root);
        ck_assert_int_eq(rmdir(p), 0);
        put("empty", "", 0700);
        digest(d);
        ck_assert_str_ne(d, base);

        /* a new empty file */
        ck_assert_int_eq(unlink(p), 0);
        dir("empty", 0700);
        digest(d);
        ck_assert_str_eq(d, base);
        put("empty/new", "", 0644);
        digest(d);
        ck_assert_str_ne(d, base);
}
END_TEST

/* A symlink to a directory is recorded as a link, never walked: what is
 * behind it does not count. */
START_TEST(test_no_follow)
{
        build_tree();
        char outside[64];
        snprintf(outside, sizeof(outside), "/tmp/cordon-digest-out.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(outside));
        link_to("out", outside);
        char a[FS_DIGEST_SIZE], b[FS_DIGEST_SIZE];
        digest(a);
        char p[128];
        snprintf(p, sizeof(p), "%s/secret", outside);
        int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);
        digest(b);
        unlink(p);
        rmdir(outside);
        ck_assert_str_eq(a, b);
}
END_TEST

/* Without openat2 (forced absent, as on an old kernel) the walk goes one
 * O_NOFOLLOW component at a time and must hash the same tree to the same
 * digest, symlinks recorded and never walked. */
START_TEST(test_openat2_fallback_same)
{
        build_tree();
        char outside[64];
        snprintf(outside, sizeof(outside), "/tmp/cordon-digest-out.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(outside));
        link_to("out", outside);
        char a[FS_DIGEST_SIZE], b[FS_DIGEST_SIZE];
        digest(a);
        ck_assert(!notify_feature_absent("openat2"));
        ck_assert_int_eq(notify_force_fallback("openat2"), 0);
        ck_assert(notify_feature_absent("openat2"));
        digest(b);
        rmdir(outside);
        ck_assert_str_eq(a, b);
}
END_TEST

/* The fallback walks follow no symlink and no "..": stricter than
 * RESOLVE_IN_ROOT, never looser. */
START_TEST(test_openat2_fallback_walks)
{
        build_tree();
        link_to("up", "..");
        ck_assert_int_eq(notify_force_fallback("openat2"), 0);
        int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(rootfd, 0);
        int fd = fs_open_in_root(rootfd, "/etc//./passwd", O_RDONLY);
        ck_assert_int_ge(fd, 0);
        char buf[8] = "";
        ck_assert_int_eq(read(fd, buf, 4), 4);
        ck_assert(memcmp(buf, "root", 4) == 0);
        close(fd);
        ck_assert_int_eq(fs_open_in_root(rootfd, "sh", O_PATH), -ELOOP);
        ck_assert_int_eq(fs_open_in_root(rootfd, "sh", O_RDONLY), -ELOOP);
        ck_assert_int_eq(fs_open_in_root(rootfd, "up/etc", O_PATH), -ELOOP);
        ck_assert_int_eq(fs_open_in_root(rootfd, "bin/../etc", O_PATH), -EXDEV);
        ck_assert_int_eq(fs_open_in_root(rootfd, "etc/passwd/x", O_PATH), -ENOTDIR);
        ck_assert_int_eq(fs_open_beneath_one(rootfd, "..", O_PATH, true), -EXDEV);
        ck_assert_int_eq(fs_open_beneath_one(rootfd, "etc/passwd", O_RDONLY, true), -EXDEV);
        fd = fs_open_beneath_one(rootfd, "sh", O_PATH | O_NOFOLLOW, true); /* the link itself, as asked */
        ck_assert_int_ge(fd, 0);
        close(fd);
        fd = fs_open_beneath_one(rootfd, "etc", O_RDONLY | O_DIRECTORY, true);
        ck_assert_int_ge(fd, 0);
        close(fd);
        close(rootfd);
}
END_TEST

/* Two trees with the same contents made apart give the same digest. */
/* common/dl.h: only the main thread loads libcrypto (the sentry's
 * other threads are chrooted into a view, where dlopen would load the
 * sandbox's copy). A digest asked for first on another thread fails
 * without loading, and leaves the library loadable by the main thread.
 * Runs in its own forked process, where nothing was loaded before. */
static void *digest_on_thread(void *arg)
{
        char *err = arg, d[FS_DIGEST_SIZE];
        _cleanup_close_ int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        return (void *)(intptr_t)fs_digest_tree(fd, err, 512, d);
}

START_TEST(test_only_main_thread_loads)
{
        if (getenv("CK_FORK") && streq(getenv("CK_FORK"), "no"))
                return; /* needs a process of its own */
        char err[512] = "";
        pthread_t t;
        void *ret;
        ck_assert_int_eq(pthread_create(&t, NULL, digest_on_thread, err), 0);
        ck_assert_int_eq(pthread_join(t, &ret), 0);
        ck_assert_int_eq((int)(intptr_t)ret, -ELIBACC);
        ck_assert_msg(strstr(err, "main thread only"), "%s", err);
        char dir[] = "/tmp/cordon-digest-XXXXXX", d[FS_DIGEST_SIZE];
        ck_assert_ptr_nonnull(mkdtemp(dir));
        _cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_eq(fs_digest_tree(fd, err, sizeof(err), d), 0);
        rmdir(dir);
}
END_TEST

START_TEST(test_copy_same)
{
        build_tree();
        char a[FS_DIGEST_SIZE], b[FS_DIGEST_SIZE];
        digest(a);
        char first[64];
        snprintf(first, sizeof(first), "%s", root);
        setup();
        build_tree();
        digest(b);
        teardown();
        snprintf(root, sizeof(root), "%s", first);
        ck_assert_str_eq(a, b);
}
END_TEST

static Suite *digest_suite(void)
{
        Suite *s = suite_create("fs-digest");
        TCase *tc = tcase_create("digest");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_format);
        tcase_add_test(tc, test_stable);
        tcase_add_test(tc, test_changes);
        tcase_add_test(tc, test_no_follow);
        tcase_add_test(tc, test_copy_same);
        tcase_add_test(tc, test_openat2_fallback_same);
        tcase_add_test(tc, test_openat2_fallback_walks);
        tcase_add_test(tc, test_special_files);
        tcase_add_test(tc, test_only_main_thread_loads);
        tcase_add_test(tc, test_errors);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(digest_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
