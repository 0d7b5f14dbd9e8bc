/* Small whole files: read into memory, bounded, in the negative-errno
 * convention. */
#pragma once

/* The whole of path as a NUL-terminated string (*ret, malloc'd). At most
 * 16 MiB: a larger file is -EFBIG. 0 or -errno; *ret untouched on failure. */
int read_file_text(const char *path, char **ret);
