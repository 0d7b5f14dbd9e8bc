/* Small whole files read into memory (common/file.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/file.h"
#include "common/util.h"

#define FILE_TEXT_MAX (16u << 20)

int read_file_text(const char *path, char **ret)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        size_t cap = 4096, len = 0;
        _cleanup_free_ char *buf = xmalloc(cap);
        for (;;) {
                if (len + 1 >= cap) {
                        if (cap >= FILE_TEXT_MAX)
                                return -EFBIG;
                        cap *= 2;
                        buf = xrealloc(buf, cap);
                }
                ssize_t n = read(fd, buf + len, cap - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}
