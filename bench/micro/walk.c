/* Metadata walk: PASSES times over the tree under DIR, stat(), open() and
 * close() every file by path (readdir for the names).
 *   walk DIR PASSES */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static long files, errs;

static void walk(const char *dir)
{
        DIR *d = opendir(dir);
        if (!d) {
                errs++;
                return;
        }
        struct dirent *e;
        char path[4096];
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                struct stat st;
                if (stat(path, &st) < 0) {
                        errs++;
                        continue;
                }
                if (S_ISDIR(st.st_mode)) {
                        walk(path);
                        continue;
                }
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        errs++;
                        continue;
                }
                close(fd);
                files++;
        }
        closedir(d);
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                fprintf(stderr, "usage: walk DIR [PASSES]\n");
                return 2;
        }
        int passes = argc > 2 ? atoi(argv[2]) : 1;
        for (int i = 0; i < passes; i++)
                walk(argv[1]);
        printf("walk: %ld files, %ld errors\n", files, errs);
        if (errs || !files) {
                fprintf(stderr, "walk: %ld errors, %ld files under %s\n", errs, files, argv[1]);
                return 1;
        }
        return 0;
}
