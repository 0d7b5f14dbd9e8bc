/* A main() for the fuzz targets without libFuzzer: runs
 * LLVMFuzzerTestOneInput() once on each file named on the command line, and
 * on each regular file in each directory named there (in name order), so
 * that a corpus doubles as a regression suite. A target signals a failed
 * invariant by aborting; this driver exits 0 when every input ran. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "common/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs larger than this are not corpus files but mistakes. */
#define FUZZ_MAX_INPUT (1024 * 1024)

static int run_file(int dirfd, const char *name, const char *shown)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0) {
                int r = negative_errno();
                fprintf(stderr, "%s: %s\n", shown, strerror(-r));
                return r;
        }
        if (st.st_size > FUZZ_MAX_INPUT) {
                fprintf(stderr, "%s: larger than %d bytes\n", shown, FUZZ_MAX_INPUT);
                return -EFBIG;
        }
        /* An exact-size allocation, so that a sanitizer sees any read past the end. */
        size_t size = (size_t)st.st_size;
        _cleanup_free_ uint8_t *buf = xmalloc(size);
        ssize_t n = read_full(fd, buf, size);
        if (n < 0 || (size_t)n != size) {
                fprintf(stderr, "%s: short read\n", shown);
                return -EIO;
        }
        LLVMFuzzerTestOneInput(buf, size);
        printf("ok %s (%zu bytes)\n", shown, size);
        return 0;
}

static int cmp_names(const struct dirent **a, const struct dirent **b)
{
        return strcmp((*a)->d_name, (*b)->d_name);
}

static int run_dir(const char *path, int *count)
{
        _cleanup_close_ int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct dirent **list = NULL;
        int failed = 0;

        if (dfd < 0) {
                int r = negative_errno();
                fprintf(stderr, "%s: %s\n", path, strerror(-r));
                return r;
        }
        int n = scandir(path, &list, NULL, cmp_names);
        if (n < 0) {
                int r = negative_errno();
                fprintf(stderr, "%s: %s\n", path, strerror(-r));
                return r;
        }
        for (int i = 0; i < n; i++) {
                struct stat st;
                if (list[i]->d_name[0] != '.' && fstatat(dfd, list[i]->d_name, &st, 0) == 0 && S_ISREG(st.st_mode)) {
                        _cleanup_free_ char *shown = xasprintf("%s/%s", path, list[i]->d_name);
                        if (run_file(dfd, list[i]->d_name, shown) < 0)
                                failed = 1;
                        ++*count;
                }
                free(list[i]);
        }
        free(list);
        return failed ? -EIO : 0;
}

int main(int argc, char **argv)
{
        int count = 0, failed = 0;

        if (argc < 2) {
                fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
                return 2;
        }
        for (int i = 1; i < argc; i++) {
                struct stat st;
                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        failed = 1;
                } else if (S_ISDIR(st.st_mode)) {
                        if (run_dir(argv[i], &count) < 0)
                                failed = 1;
                } else {
                        if (run_file(AT_FDCWD, argv[i], argv[i]) < 0)
                                failed = 1;
                        count++;
                }
        }
        printf("%d input(s) run\n", count);
        return failed;
}
