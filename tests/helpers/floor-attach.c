/* floor-attach DIR: attaches the kernel egress floor (net/floor.c) to the
 * cgroup v2 directory DIR, as cordon does to a sandbox's group, so a test can
 * put a plain host process in it. Prints why and exits 1 on failure. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>

#include "common/util.h"
#include "net/net.h"

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: floor-attach CGROUP_V2_DIR\n");
                return 2;
        }
        int fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "floor-attach: %s: %m\n", argv[1]);
                return 1;
        }
        char why[256] = "";
        int r = net_floor_attach(fd, why, sizeof(why));
        if (r < 0) {
                fprintf(stderr, "floor-attach: %s\n", why);
                return 1;
        }
        printf("%d\n", net_floor_attached(fd));
        close(fd);
        return 0;
}
