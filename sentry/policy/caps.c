/* Capability names for the policy's "capabilities" list: what a sandbox's
 * root holds inside its own user namespace. The default is the set container
 * engines grant; the refused ones widen the kernel's attack surface even
 * inside a user namespace (mounts and namespaces of every kind, network
 * configuration, kernel modules, raw I/O, tracing, BPF, the clock, ...) and
 * are never granted, whatever the policy says. */
#include "config.h"

#include <linux/capability.h>

#include "common/util.h"
#include "sentry/policy/policy.h"

static const struct {
        const char *name; /* without CAP_ */
        int cap;
        const char *refused; /* why, or NULL: may be granted */
} caps[] = {
        {"CHOWN", CAP_CHOWN, NULL},
        {"DAC_OVERRIDE", CAP_DAC_OVERRIDE, NULL},
        {"DAC_READ_SEARCH", CAP_DAC_READ_SEARCH, "open_by_handle_at reaches files outside any mount"},
        {"FOWNER", CAP_FOWNER, NULL},
        {"FSETID", CAP_FSETID, NULL},
        {"KILL", CAP_KILL, NULL},
        {"SETGID", CAP_SETGID, NULL},
        {"SETUID", CAP_SETUID, NULL},
        {"SETPCAP", CAP_SETPCAP, NULL},
        {"LINUX_IMMUTABLE", CAP_LINUX_IMMUTABLE, "host-wide file attributes"},
        {"NET_BIND_SERVICE", CAP_NET_BIND_SERVICE, NULL},
        {"NET_BROADCAST", CAP_NET_BROADCAST, NULL},
        {"NET_ADMIN", CAP_NET_ADMIN, "network configuration: netfilter, routing, qdiscs, a large kernel surface"},
        {"NET_RAW", CAP_NET_RAW, "raw and packet sockets (the sentry refuses them anyway)"},
        {"IPC_LOCK", CAP_IPC_LOCK, NULL},
        {"IPC_OWNER", CAP_IPC_OWNER, NULL},
        {"SYS_MODULE", CAP_SYS_MODULE, "kernel modules"},
        {"SYS_RAWIO", CAP_SYS_RAWIO, "raw I/O ports and devices"},
        {"SYS_CHROOT", CAP_SYS_CHROOT, NULL},
        {"SYS_PTRACE", CAP_SYS_PTRACE, "tracing other processes and reading their memory"},
        {"SYS_PACCT", CAP_SYS_PACCT, "process accounting"},
        {"SYS_ADMIN", CAP_SYS_ADMIN, "mounts, namespaces and most of the kernel's administration interfaces"},
        {"SYS_BOOT", CAP_SYS_BOOT, "reboot and kexec"},
        {"SYS_NICE", CAP_SYS_NICE, NULL},
        {"SYS_RESOURCE", CAP_SYS_RESOURCE, "overriding resource limits"},
        {"SYS_TIME", CAP_SYS_TIME, "the system clock"},
        {"SYS_TTY_CONFIG", CAP_SYS_TTY_CONFIG, "terminal configuration"},
        /* granted as runc grants it: inside a user namespace it makes no
         * device node (the kernel asks for CAP_MKNOD in the initial
         * namespace, and the sentry's mknod handler refuses device numbers
         * anyway); only an overlay whiteout, which needs no capability */
        {"MKNOD", CAP_MKNOD, NULL},
        {"LEASE", CAP_LEASE, NULL},
        {"AUDIT_WRITE", CAP_AUDIT_WRITE, NULL},
        {"AUDIT_CONTROL", CAP_AUDIT_CONTROL, "the kernel's audit configuration"},
        {"SETFCAP", CAP_SETFCAP, NULL},
        {"MAC_OVERRIDE", CAP_MAC_OVERRIDE, "overriding mandatory access control"},
        {"MAC_ADMIN", CAP_MAC_ADMIN, "mandatory access control configuration"},
        {"SYSLOG", CAP_SYSLOG, "the kernel log and kernel addresses"},
        {"WAKE_ALARM", CAP_WAKE_ALARM, NULL},
        {"BLOCK_SUSPEND", CAP_BLOCK_SUSPEND, "keeping the host from suspending"},
        {"AUDIT_READ", CAP_AUDIT_READ, "the host's audit log"},
        {"PERFMON", 38, "performance monitoring: perf_event_open and kernel data"},
        {"BPF", 39, "BPF programs and maps"},
        {"CHECKPOINT_RESTORE", 40, "checkpoint/restore interfaces (pid selection, other processes' state)"},
};

int policy_cap_parse(const char *name, int *ret_cap, const char **ret_refused)
{
        const char *n = strncmp(name, "CAP_", 4) == 0 ? name + 4 : name;
        for (size_t i = 0; i < ELEMENTSOF(caps); i++)
                if (streq(n, caps[i].name)) {
                        *ret_cap = caps[i].cap;
                        *ret_refused = caps[i].refused;
                        return 0;
                }
        return -ENOENT;
}

const char *policy_cap_name(int cap)
{
        for (size_t i = 0; i < ELEMENTSOF(caps); i++)
                if (caps[i].cap == cap)
                        return caps[i].name;
        return NULL;
}

char *policy_caps_format(uint64_t mask)
{
        size_t size = 16;
        for (size_t i = 0; i < ELEMENTSOF(caps); i++)
                size += strlen(caps[i].name) + 6;
        char *buf = xmalloc(size), *p = buf;
        *p = '\0';
        for (size_t i = 0; i < ELEMENTSOF(caps); i++)
                if (mask & (UINT64_C(1) << caps[i].cap))
                        p += sprintf(p, "%sCAP_%s", p == buf ? "" : ",", caps[i].name);
        if (p == buf)
                strcpy(buf, "none");
        return buf;
}
