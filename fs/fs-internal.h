/* fs/ private. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "fs/fs.h"

/* Around the one operation a handler performs for the child: drop the
 * worker's remaining effective capability (CAP_SYS_PTRACE, needed to read
 * the child's memory and /proc entries) so that the operation is checked
 * exactly as the child's own call would be — in particular it cannot open
 * another sandbox process's /proc/PID/mem or environ that the child itself
 * could not. */
int fs_as_child_begin(void);
void fs_as_child_end(void);

/* Opens path (relative to dirfd when >= 0) in the proc agent. Returns the fd
 * or -errno; -ENOSYS when there is no agent. */
int fs_agent_open(struct fs_context *ctx, int dirfd, const char *path, int flags, mode_t mode, uint64_t resolve,
                  mode_t um);
