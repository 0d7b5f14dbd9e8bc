/* Creates files in DIR while the umask changes under it, the ways a program
 * can change it: in turn with the creates, from a second process that shares
 * the fs_struct (clone(CLONE_FS)), in a forked child after the parent's
 * change, in a thread with its own fs_struct, across execve (which keeps
 * it), and across an execve by such a thread (which takes over the leader's
 * tid). Then prints "name mode" for every entry of DIR, sorted: run natively
 * and under cordon, the two outputs must be the same (the sentry creates
 * emulated files with the umask it believes the caller has).
 *
 *   umaskprobe DIR
 *   (/full/path/umaskprobe: it execs itself as exec-child DIR NAME and exec-thread DIR)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir;
static const char *self;

static void die(const char *what)
{
        fprintf(stderr, "umaskprobe: %s: %s\n", what, strerror(errno));
        exit(1);
}

static void create(const char *name)
{
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0)
                die(p);
        close(fd);
}

static void make_dir(const char *name)
{
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        if (mkdir(p, 0777) < 0)
                die(p);
}

static void make_fifo(const char *name)
{
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        if (mknod(p, S_IFIFO | 0666, 0) < 0)
                die(p);
}

static void xwrite(int fd)
{
        if (write(fd, "x", 1) != 1)
                die("write");
}

static void xread(int fd)
{
        char c;
        if (read(fd, &c, 1) != 1)
                die("read");
}

/* --- two processes sharing one fs_struct --- */

static int to_sib[2], to_parent[2];

static int sibling(void *arg)
{
        (void)arg;
        create("clonefs-sib-1");
        xwrite(to_parent[1]);
        xread(to_sib[0]); /* the parent set 077 */
        create("clonefs-sib-2");
        umask(002);
        xwrite(to_parent[1]);
        xread(to_sib[0]); /* the parent created with 002 */
        create("clonefs-sib-3");
        _exit(0);
}

static void clone_fs(void)
{
        umask(022);
        if (pipe(to_sib) < 0 || pipe(to_parent) < 0)
                die("pipe");
        create("clonefs-par-1");
        size_t size = 256 * 1024;
        char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED)
                die("mmap");
        pid_t pid = clone(sibling, stack + size, CLONE_FS | SIGCHLD, NULL);
        if (pid < 0)
                die("clone(CLONE_FS)");
        xread(to_parent[0]);
        umask(077);
        create("clonefs-par-2");
        xwrite(to_sib[1]);
        xread(to_parent[0]); /* the sibling set 002 */
        create("clonefs-par-3");
        xwrite(to_sib[1]);
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                die("the CLONE_FS sibling failed");
}

/* --- fork: the child has a copy --- */

static void forked(void)
{
        umask(027);
        create("fork-par-1");
        int go[2], done[2];
        if (pipe(go) < 0 || pipe(done) < 0)
                die("pipe");
        pid_t pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                create("fork-child-1"); /* 027 */
                xread(go[0]);
                create("fork-child-2"); /* still 027 */
                make_dir("fork-child-dir");
                _exit(0);
        }
        umask(077);
        create("fork-par-2");
        xwrite(go[1]);
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                die("the forked child failed");
        create("fork-par-3");
}

/* --- a thread with its own fs_struct --- */

static int t_go[2], t_done[2];

static void *own_fs_thread(void *arg)
{
        (void)arg;
        if (unshare(CLONE_FS) < 0)
                die("unshare(CLONE_FS)");
        umask(077);
        create("thread-own-1");
        xwrite(t_done[1]);
        xread(t_go[0]);         /* main changed its own to 0 */
        create("thread-own-2"); /* still 077 */
        return NULL;
}

static void own_fs(void)
{
        umask(022);
        if (pipe(t_go) < 0 || pipe(t_done) < 0)
                die("pipe");
        create("thread-main-1");
        pthread_t t;
        if (pthread_create(&t, NULL, own_fs_thread, NULL) != 0)
                die("pthread_create");
        xread(t_done[0]);
        create("thread-main-2"); /* 022: the thread's 077 is its own */
        umask(0);
        create("thread-main-3");
        xwrite(t_go[1]);
        pthread_join(t, NULL);
}

/* --- execve keeps the umask; a thread's execve takes the leader's tid --- */

static void run_and_wait(char *const argv[])
{
        pid_t pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                execv(self, argv);
                die("execv");
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                die("the exec'd child failed");
}

static void exec_keeps(void)
{
        umask(037);
        run_and_wait((char *[]){(char *)self, "exec-child", (char *)dir, "exec-1", NULL});
        /* a non-leader thread with its own umask execs: the new image runs
         * with the leader's tid and the thread's umask */
        umask(022);
        run_and_wait((char *[]){(char *)self, "exec-thread", (char *)dir, NULL});
}

static void *exec_thread(void *arg)
{
        int *ready = arg;
        if (unshare(CLONE_FS) < 0)
                die("unshare(CLONE_FS)");
        umask(077);
        xwrite(ready[1]);
        xread(t_go[0]);
        execv(self, (char *[]){(char *)self, "exec-child", (char *)dir, "exec-thread-1", NULL});
        die("execv from a thread");
        return NULL;
}

static int exec_thread_main(void)
{
        int ready[2];
        if (pipe(ready) < 0 || pipe(t_go) < 0)
                die("pipe");
        create("exec-leader-1"); /* 022 */
        pthread_t t;
        if (pthread_create(&t, NULL, exec_thread, ready) != 0)
                die("pthread_create");
        xread(ready[0]);
        /* after the thread's umask(077): this leader's 022 is read again
         * and, once the thread is seen waiting (its umask over), kept for
         * the leader's tid just before the thread's exec; the pause lets
         * the thread reach its read */
        usleep(50000);
        create("exec-leader-2");
        xwrite(t_go[1]);
        pause(); /* the thread's exec ends this image */
        return 1;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
        return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
        self = argv[0]; /* a full path: the re-execs name it */
        if (argc == 4 && !strcmp(argv[1], "exec-child")) {
                dir = argv[2];
                create(argv[3]);
                char d[256];
                snprintf(d, sizeof(d), "%s-dir", argv[3]);
                make_dir(d);
                return 0;
        }
        if (argc == 3 && !strcmp(argv[1], "exec-thread")) {
                dir = argv[2];
                return exec_thread_main();
        }
        if (argc != 2) {
                fprintf(stderr, "usage: umaskprobe DIR\n");
                return 2;
        }
        dir = argv[1];

        /* in turn with the creates, every kind of create */
        umask(077);
        create("seq-1");
        make_dir("seq-dir-1");
        umask(0);
        create("seq-2");
        make_dir("seq-dir-2");
        make_fifo("seq-fifo-2");
        umask(027);
        create("seq-3");
        make_fifo("seq-fifo-3");
        umask(0777);
        create("seq-4");
        umask(022);

        clone_fs();
        forked();
        own_fs();
        exec_keeps();

        struct dirent **list;
        int n = scandir(dir, &list, NULL, by_name);
        if (n < 0)
                die("scandir");
        for (int i = 0; i < n; i++) {
                if (list[i]->d_name[0] == '.')
                        continue;
                char p[4096];
                struct stat st;
                snprintf(p, sizeof(p), "%s/%s", dir, list[i]->d_name);
                if (lstat(p, &st) < 0)
                        die(p);
                printf("%s %04o\n", list[i]->d_name, (unsigned)(st.st_mode & 07777));
        }
        return 0;
}
