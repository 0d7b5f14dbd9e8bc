/* Escape attempts against a read-write bind (tests/escape/binds.sh): each
 * tries to make, in the bind DIR, a setuid or setgid file, a file with file
 * capabilities, or a device node, one way. Prints one line:
 *   escape NAME: blocked (why)      the attempt was refused, nothing made
 *   escape NAME: GOT THROUGH (what) it was not
 * and exits 0 either way unless the probe itself failed (exit 2). The host
 * side checks the bind afterwards too (find -perm /6000, getfattr).
 *
 *   setid-probe NAME DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

static const char *name;
static char dir[2048];

static void probe_fail(const char *what)
{
        printf("escape %s: probe error (%s: %s)\n", name, what, strerror(errno));
        exit(2);
}

static int result(int r, const char *what)
{
        if (r == 0) {
                printf("escape %s: GOT THROUGH (%s succeeded)\n", name, what);
                return 0;
        }
        printf("escape %s: blocked (%s: %s)\n", name, what, strerror(errno));
        return 0;
}

static void path_of(char *buf, size_t size, const char *leaf)
{
        snprintf(buf, size, "%s/%s", dir, leaf);
}

static void make_file(const char *p, mode_t mode)
{
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        if (fd < 0)
                probe_fail(p);
        if (write(fd, "#!/bin/sh\nid\n", 13) != 13)
                probe_fail("write");
        close(fd);
}

/* whether p carries a setuid or setgid bit now (a refused call that still
 * left one behind counts as getting through) */
static int check_mode(const char *p, int r, const char *what)
{
        int e = errno;
        struct stat st;
        if (r == 0 || (stat(p, &st) == 0 && (st.st_mode & 06000))) {
                printf("escape %s: GOT THROUGH (%s: %s is mode %o)\n", name, what, p,
                       stat(p, &st) == 0 ? (unsigned)st.st_mode : 0u);
                return 0;
        }
        printf("escape %s: blocked (%s: %s)\n", name, what, strerror(e));
        return 0;
}

/* a v2 file capability: cap_setuid,cap_sys_admin permitted and effective */
static const unsigned char fcap[20] = {0x01, 0x00, 0x00, 0x02, 0x80, 0x00, 0x20, 0x00,
                                       0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

static volatile int stop;
static int race_a, race_b, race_num;

/* swaps the fd number between a file of the private layer and one of the bind */
static void *swapper(void *arg)
{
        (void)arg;
        while (!stop) {
                dup2(race_a, race_num);
                dup2(race_b, race_num);
        }
        return NULL;
}

int main(int argc, char **argv)
{
        if (argc != 3) {
                fprintf(stderr, "usage: setid-probe NAME DIR\n");
                return 2;
        }
        name = argv[1];
        snprintf(dir, sizeof(dir), "%s", argv[2]);
        umask(022);
        char p[4096], q[4096];
        path_of(p, sizeof(p), name);

        if (!strcmp(name, "chmod-setuid")) {
                make_file(p, 0755);
                return check_mode(p, chmod(p, 04755), "chmod 4755");
        }
        if (!strcmp(name, "chmod-setgid")) {
                make_file(p, 0755);
                return check_mode(p, chmod(p, 02755), "chmod 2755");
        }
        if (!strcmp(name, "fchmod-fd")) {
                make_file(p, 0755);
                int fd = open(p, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        probe_fail(p);
                return check_mode(p, fchmod(fd, 04755), "fchmod(fd, 4755)");
        }
        if (!strcmp(name, "fchmodat")) {
                make_file(p, 0755);
                int d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                return check_mode(p, fchmodat(d, name, 06755, 0), "fchmodat(dirfd, name, 6755)");
        }
        if (!strcmp(name, "fchmodat2-nofollow")) {
                make_file(p, 0755);
                int d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                long r = syscall(SYS_fchmodat2, d, name, 04755, AT_SYMLINK_NOFOLLOW);
                return check_mode(p, (int)r, "fchmodat2(AT_SYMLINK_NOFOLLOW, 4755)");
        }
        if (!strcmp(name, "fchmodat2-empty-path")) {
                make_file(p, 0755);
                int fd = open(p, O_PATH | O_CLOEXEC);
                long r = syscall(SYS_fchmodat2, fd, "", 04755, AT_EMPTY_PATH);
                return check_mode(p, (int)r, "fchmodat2(fd, \"\", 4755, AT_EMPTY_PATH)");
        }
        if (!strcmp(name, "chmod-via-proc-fd")) {
                make_file(p, 0755);
                int fd = open(p, O_RDONLY | O_CLOEXEC);
                snprintf(q, sizeof(q), "/proc/self/fd/%d", fd);
                return check_mode(p, chmod(q, 04755), "chmod /proc/self/fd/N 4755");
        }
        if (!strcmp(name, "open-creat-setuid")) {
                int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 04755);
                return check_mode(p, fd < 0 ? -1 : 0, "open(O_CREAT, 4755)");
        }
        if (!strcmp(name, "open-excl-setuid")) {
                int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 06755);
                return check_mode(p, fd < 0 ? -1 : 0, "open(O_CREAT|O_EXCL, 6755)");
        }
        if (!strcmp(name, "creat-setuid")) {
                int fd = creat(p, 04755);
                return check_mode(p, fd < 0 ? -1 : 0, "creat(4755)");
        }
        if (!strcmp(name, "openat2-setuid")) {
                struct open_how how = {.flags = O_WRONLY | O_CREAT | O_CLOEXEC, .mode = 04755};
                long fd = syscall(SYS_openat2, AT_FDCWD, p, &how, sizeof(how));
                return check_mode(p, fd < 0 ? -1 : 0, "openat2(O_CREAT, 4755)");
        }
        if (!strcmp(name, "tmpfile-setuid")) {
                int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 04755);
                if (fd >= 0) {
                        snprintf(q, sizeof(q), "/proc/self/fd/%d", fd);
                        (void)!linkat(AT_FDCWD, q, AT_FDCWD, p, AT_SYMLINK_FOLLOW);
                }
                return check_mode(p, fd < 0 ? -1 : 0, "open(O_TMPFILE, 4755)");
        }
        if (!strcmp(name, "tmpfile-fchmod")) {
                int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0755);
                if (fd < 0)
                        probe_fail("O_TMPFILE");
                int r = fchmod(fd, 04755);
                snprintf(q, sizeof(q), "/proc/self/fd/%d", fd);
                (void)!linkat(AT_FDCWD, q, AT_FDCWD, p, AT_SYMLINK_FOLLOW);
                return check_mode(p, r, "fchmod of an O_TMPFILE file, 4755, then linkat");
        }
        if (!strcmp(name, "mknod-reg-setuid"))
                return check_mode(p, mknod(p, S_IFREG | 04755, 0), "mknod(S_IFREG|4755)");
        if (!strcmp(name, "mknod-char"))
                return result(mknod(p, S_IFCHR | 0666, makedev(1, 3)), "mknod(S_IFCHR 1:3)");
        if (!strcmp(name, "mknod-block"))
                return result(mknod(p, S_IFBLK | 0666, makedev(8, 0)), "mknod(S_IFBLK 8:0)");
        if (!strcmp(name, "mknod-whiteout"))
                return result(mknodat(AT_FDCWD, p, S_IFCHR | 0666, 0), "mknod(S_IFCHR 0:0, a whiteout)");
        if (!strcmp(name, "setxattr-cap")) {
                make_file(p, 0755);
                return result(setxattr(p, "security.capability", fcap, sizeof(fcap), 0),
                              "setxattr security.capability");
        }
        if (!strcmp(name, "lsetxattr-cap")) {
                make_file(p, 0755);
                return result(lsetxattr(p, "security.capability", fcap, sizeof(fcap), 0),
                              "lsetxattr security.capability");
        }
        if (!strcmp(name, "fsetxattr-cap")) {
                make_file(p, 0755);
                int fd = open(p, O_RDONLY | O_CLOEXEC);
                return result(fsetxattr(fd, "security.capability", fcap, sizeof(fcap), 0),
                              "fsetxattr security.capability");
        }
        if (!strcmp(name, "rename-from-private") || !strcmp(name, "link-from-private")) {
                /* setuid in the private layer is native; it must not cross */
                snprintf(q, sizeof(q), "/tmp/%s", name);
                make_file(q, 0755);
                if (chmod(q, 04755) < 0)
                        probe_fail("chmod 4755 in /tmp (the private layer)");
                int r = name[0] == 'r' ? rename(q, p) : link(q, p);
                return check_mode(p, r, name[0] == 'r' ? "rename /tmp/x into the bind" : "link /tmp/x into the bind");
        }
        if (!strcmp(name, "fchmod-race")) {
                /* a second thread dup2s a bind file and a private one onto the
                 * number fchmod is given: the bind file must never turn setuid */
                snprintf(q, sizeof(q), "/tmp/%s", name);
                make_file(p, 0755);
                make_file(q, 0755);
                race_a = open(q, O_RDONLY | O_CLOEXEC);
                race_b = open(p, O_RDONLY | O_CLOEXEC);
                race_num = 100;
                if (race_a < 0 || race_b < 0 || dup2(race_a, race_num) < 0)
                        probe_fail("open");
                pthread_t t;
                if (pthread_create(&t, NULL, swapper, NULL) != 0)
                        probe_fail("pthread_create");
                int private_ok = 0, bind_ok = 0;
                struct stat st;
                for (int i = 0; i < 2000; i++) {
                        if (fchmod(race_num, 04755) == 0)
                                private_ok++;
                        if (stat(p, &st) == 0 && (st.st_mode & 06000)) {
                                bind_ok++;
                                break;
                        }
                        (void)chmod(q, 0755);
                }
                stop = 1;
                pthread_join(t, NULL);
                if (bind_ok) {
                        printf("escape %s: GOT THROUGH (the bind file turned setuid)\n", name);
                        return 0;
                }
                printf("escape %s: blocked (2000 fchmods while the number was swapped: %d on the private file, "
                       "none on the bind's)\n",
                       name, private_ok);
                return 0;
        }
        printf("escape %s: probe error (no such attempt)\n", name);
        return 2;
}
