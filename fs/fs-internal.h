/* fs/ private. */
#pragma once

/* Around the one operation a handler performs for the child: drop the
 * worker's remaining effective capability (CAP_SYS_PTRACE, needed to read
 * the child's memory and /proc entries) so that the operation is checked
 * exactly as the child's own call would be — in particular it cannot open
 * another sandbox process's /proc/PID/mem or environ that the child itself
 * could not. */
int fs_as_child_begin(void);
void fs_as_child_end(void);
