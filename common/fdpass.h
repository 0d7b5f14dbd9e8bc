/* Passing file descriptors over a unix socket (SCM_RIGHTS), shared by the
 * sentry's set-up channel and the proc agent; and shedding the ones a
 * forked helper must not keep. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Sends len bytes with n_fds (at most 8) descriptors. 0 or -errno. */
int send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n_fds);
/* Receives one message into buf; up to max_fds descriptors into fds (the
 * rest, and any beyond 8, are closed; unused slots are -1). Returns the
 * message length (0 at EOF) or -errno. Received fds are O_CLOEXEC. */
ssize_t recv_fds(int sock, void *buf, size_t len, int *fds, size_t max_fds);
/* Closes every fd from 3 up except those in keep (-1 entries ignored), with
 * close_range over the gaps: one call per gap instead of one per number.
 * 0 or -errno (-E2BIG for more than 80 to keep). */
int close_all_but(const int *keep, size_t n);
