/* Small whole files: read into memory, bounded, in the negative-errno
 * convention. */
#pragma once

#include <stdbool.h>

/* The whole of path as a NUL-terminated string (*ret, malloc'd). At most
 * 16 MiB: a larger file is -EFBIG. 0 or -errno; *ret untouched on failure. */
int read_file_text(const char *path, char **ret);
/* The same for what is left to read on fd (a pipe, stdin), which stays open. */
int read_fd_text(int fd, char **ret);

/* Whether the directory dirfd holds runtime state: a tmpfs or ramfs, or a
 * place beneath /run or $XDG_RUNTIME_DIR, which the system clears at boot
 * (FHS) whatever backs it. Syncing such state to the disk protects nothing:
 * a crash of the process loses no written byte (it is in the page cache),
 * and a crash of the host ends the sandboxes it describes and clears it. */
bool dir_is_runtime_state(int dirfd);
