/* net/: the sandbox's network. For now: its own network namespace with only
 * loopback up (no route out), and the socket families it may create. The
 * egress gate (DNS stub, connect emulation) arrives with its own issue. */
#pragma once

/* Runs in the child inside its new network namespace, while it still has
 * CAP_NET_ADMIN there: brings lo up. 0 or -errno. */
int net_loopback_up(void);
