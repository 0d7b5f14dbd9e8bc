/* Namespaces a container joins rather than creates: a network namespace an
 * engine prepared (a CNI pod network, a podman network), and a Kubernetes
 * pod's app containers (containerd's CRI annotations), which share their
 * pod sandbox container's network, ipc and uts namespaces, its uid range
 * and its policy, each keeping its own root, mounts and limits, and its own
 * pid namespace unless the pod shares one (shareProcessNamespace: then the
 * pod sandbox container's, where its infra process is pid 1). A pod is one trust unit; nothing here lets a container
 * reach the host's namespaces or another pod's.
 *
 * containerd names the pod's namespaces /proc/PID/ns/X with PID the pod
 * sandbox container's pid as cordon reported it, which is its sentry's (a
 * host process): such a path is taken for the pod's own namespace, that of
 * the pod's init, the sentry's child. Any other path must name the pod's
 * namespace itself.
 *
 * podman's pods are told the same way, in CRI-O's words: podman writes
 * io.kubernetes.cri-o.ContainerType "container" and .SandboxID (the pod's
 * infra container) on a pod's other containers, and names the infra
 * container's namespaces by the pid cordon reported for it, as containerd
 * does. The infra container itself carries no type. A container whose
 * namespace path names another container of the runtime's by that pid,
 * with no annotation (podman's --network, --ipc or --pid container:NAME),
 * joins it the same way: the two are then one pod. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "common/file.h"
#include "common/util.h"
#include "net/net.h"
#include "sentry/oci/oci.h"
#include "sentry/oci/runtime-internal.h"

struct ns_id {
        uint64_t dev, ino;
};

/* The annotations that make a container a pod's: containerd's CRI, and
 * CRI-O's (which podman writes for its pods) */
struct pod_keys {
        const char *type, *sandbox;
};
static const struct pod_keys cri_keys = {OCI_CRI_TYPE_ANNOTATION, OCI_CRI_SANDBOX_ANNOTATION};
static const struct pod_keys crio_keys = {"io.kubernetes.cri-o.ContainerType", "io.kubernetes.cri-o.SandboxID"};
/* no annotation: the pod is the container whose pid names a namespace */
static const struct pod_keys by_pid_keys = {NULL, NULL};

static const struct {
        int type;
        const char *name;  /* in /proc/PID/ns */
        const char *field; /* linux.namespaces' type */
        int join;          /* OCI_JOIN_*, or -1 */
} ns_kinds[] = {
        {CLONE_NEWNET, "net", "network", OCI_JOIN_NET},
        {CLONE_NEWIPC, "ipc", "ipc", OCI_JOIN_IPC},
        {CLONE_NEWUTS, "uts", "uts", OCI_JOIN_UTS},
        {CLONE_NEWPID, "pid", "pid", OCI_JOIN_PID},
        {CLONE_NEWNS, "mnt", "mount", -1},
        {CLONE_NEWUSER, "user", "user", -1},
        {CLONE_NEWCGROUP, "cgroup", "cgroup", -1},
        {CLONE_NEWTIME, "time", "time", -1},
};

static size_t kind_of(int type)
{
        for (size_t i = 0; i < ELEMENTSOF(ns_kinds); i++)
                if (ns_kinds[i].type == type)
                        return i;
        return 0;
}

/* path opened: a namespace of type, its identity in *ret. 0, or -errno
 * with why filled. */
static int ns_identify(const char *path, int type, struct ns_id *ret, char *why, size_t size)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                int r = negative_errno();
                snprintf(why, size, "cannot open it: %s", strerror(-r));
                return r;
        }
        struct statfs sfs;
        struct stat st;
        if (fstatfs(fd, &sfs) < 0 || sfs.f_type != NSFS_MAGIC || fstat(fd, &st) < 0) {
                snprintf(why, size, "it is not a namespace");
                return -EINVAL;
        }
        int t = ioctl(fd, NS_GET_NSTYPE);
        if (t != type) {
                snprintf(why, size, "it is a %s namespace, not a %s one", t >= 0 ? ns_kinds[kind_of(t)].field : "?",
                         ns_kinds[kind_of(type)].field);
                return -EINVAL;
        }
        *ret = (struct ns_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino};
        return 0;
}

static bool same(struct ns_id a, struct ns_id b)
{
        return a.dev == b.dev && a.ino == b.ino;
}

/* Whether id is the host's namespace of that kind (pid 1's, or this
 * runtime's own, which is the engine's). */
static bool host_ns(size_t k, struct ns_id id)
{
        static const char *const pids[] = {"1", "self"};
        for (size_t i = 0; i < ELEMENTSOF(pids); i++) {
                char path[64], why[128];
                struct ns_id h;
                snprintf(path, sizeof(path), "/proc/%s/ns/%s", pids[i], ns_kinds[k].name);
                if (ns_identify(path, ns_kinds[k].type, &h, why, sizeof(why)) == 0 && same(h, id))
                        return true;
        }
        return false;
}

static void format_id(struct ns_id id, char *buf, size_t size)
{
        snprintf(buf, size, "%" PRIu64 ":%" PRIu64, id.dev, id.ino);
}

/* The live container of --root (not self) that joined network namespace
 * id as its own prepared one, or NULL. */
static char *netns_holder(const char *self, struct ns_id id)
{
        char want[64];
        format_id(id, want, sizeof(want));
        DIR *d = opendir(oci_G.root);
        struct dirent *de;
        char *found = NULL;
        while (d && !found && (de = readdir(d))) {
                if (de->d_name[0] == '.' || streq(de->d_name, self) || !oci_container_id_valid(de->d_name))
                        continue;
                /* read without its lock (state.json is replaced whole): a
                 * create under way holds its own while it looks here */
                char path[PATH_MAX];
                json_error_t jerr;
                snprintf(path, sizeof(path), "%s/%s/state.json", oci_G.root, de->d_name);
                struct container c = {.dirfd = -1, .state = json_load_file(path, 0, &jerr)};
                const char *ns = json_string_value(json_object_get(json_object_get(c.state, "pod"), "netns"));
                if (ns && streq(ns, want) && oci_container_alive(&c))
                        found = xstrdup(de->d_name);
                json_decref(c.state);
        }
        if (d)
                closedir(d);
        return found;
}

/* The live container of --root whose pid, as cordon reported it (its
 * sentry's), path names: "/proc/PID/ns/NAME". NULL for any other path. */
static char *pid_owner(const char *path)
{
        int pid = 0, end = 0;
        char name[16];
        if (sscanf(path, "/proc/%d/ns/%15[a-z_]%n", &pid, name, &end) != 2 || path[end] || pid <= 1)
                return NULL;
        DIR *d = opendir(oci_G.root);
        struct dirent *de;
        char *found = NULL;
        while (d && !found && (de = readdir(d))) {
                if (de->d_name[0] == '.' || !oci_container_id_valid(de->d_name))
                        continue;
                char state[PATH_MAX];
                json_error_t jerr;
                snprintf(state, sizeof(state), "%s/%s/state.json", oci_G.root, de->d_name);
                struct container c = {.dirfd = -1, .state = json_load_file(state, 0, &jerr)};
                if (json_integer_value(json_object_get(c.state, "sentryPid")) == pid && oci_container_alive(&c))
                        found = xstrdup(de->d_name);
                json_decref(c.state);
        }
        if (d)
                closedir(d);
        return found;
}

/* The first line of /proc/PID/{uid,gid}_map: "0 BASE COUNT". */
static int read_map(pid_t pid, const char *which, uint32_t *ret_base, uint32_t *ret_count)
{
        char path[64];
        _cleanup_free_ char *text = NULL;
        snprintf(path, sizeof(path), "/proc/%d/%s_map", (int)pid, which);
        int r = read_file_text(path, &text);
        if (r < 0)
                return r;
        unsigned long long inside, base, count;
        if (sscanf(text, "%llu %llu %llu", &inside, &base, &count) != 3 || inside != 0 || base == 0 ||
            base > UINT32_MAX || count > UINT32_MAX)
                return -EINVAL;
        *ret_base = (uint32_t)base;
        *ret_count = (uint32_t)count;
        return 0;
}

/* The parent of pid (field 4 of /proc/PID/stat), or -1. */
static pid_t parent_of(pid_t pid)
{
        char path[64];
        _cleanup_free_ char *text = NULL;
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        if (read_file_text(path, &text) < 0)
                return -1;
        const char *p = strrchr(text, ')');
        int ppid;
        char state;
        if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2)
                return -1;
        return ppid;
}

static int set_annotation(struct oci_spec *s, const char *key, const char *value)
{
        for (size_t i = 0; i < s->n_annotations; i++)
                if (streq(s->annotations[i].key, key)) {
                        free(s->annotations[i].value);
                        s->annotations[i].value = xstrdup(value);
                        return 0;
                }
        s->annotations = xrealloc(s->annotations, (s->n_annotations + 1) * sizeof(*s->annotations));
        s->annotations[s->n_annotations++] = (struct oci_annotation){xstrdup(key), xstrdup(value)};
        return 0;
}

/* A network namespace an engine prepared (not a pod member's): checked
 * and joined. */
static int prepared_netns(const char *self, const char *path, struct oci_sandbox *sb, json_t *record)
{
        char why[256], idtext[64];
        struct ns_id id;
        size_t k = kind_of(CLONE_NEWNET);
        if (ns_identify(path, CLONE_NEWNET, &id, why, sizeof(why)) < 0) {
                oci_error("linux.namespaces: network path %s: %s", path, why);
                return -EINVAL;
        }
        if (host_ns(k, id)) {
                oci_error("linux.namespaces: network path %s is the host's network namespace: cordon never joins "
                          "the host's namespaces",
                          path);
                return -EPERM;
        }
        _cleanup_free_ char *holder = netns_holder(self, id);
        if (holder) {
                oci_error("linux.namespaces: network path %s is the network namespace of container %s (another "
                          "pod's): refused",
                          path, holder);
                return -EPERM;
        }
        format_id(id, idtext, sizeof(idtext));
        json_object_set_new(record, "netns", json_string(idtext));
        sb->join[OCI_JOIN_NET] = (struct oci_join){xstrdup(path), id.dev, id.ino};
        sb->net_prepared = true;
        return 0;
}

/* A pod's app container: its pod sandbox container looked up and each
 * namespace path checked against the pod's. */
static int pod_member(struct oci_spec *s, const struct pod_keys *keys, const char *pod_id, struct oci_sandbox *sb,
                      json_t *record)
{
        struct container pod;
        char who[256];
        if (keys == &by_pid_keys)
                snprintf(who, sizeof(who), "linux.namespaces: container %s (named by its pid)", pod_id);
        else
                snprintf(who, sizeof(who), "annotations: %s \"%s\"", keys->sandbox, pod_id);
        if (geteuid() != 0) {
                oci_error("%s: a pod's containers share its uid range, which needs cordon run as root", who);
                return -EPERM;
        }
        int r = oci_container_id_valid(pod_id) ? oci_container_open(pod_id, &pod) : -EINVAL;
        if (r < 0) {
                oci_error("%s: no such pod sandbox container in %s", who, oci_G.root);
                return -ENOENT;
        }
        json_t *pod_ann = json_object_get(pod.state, "annotations");
        const char *type = keys->type ? json_string_value(json_object_get(pod_ann, keys->type)) : NULL;
        /* podman's infra container, or the container another names by its
         * pid: no type of either kind, and no pod's member itself (a
         * member's namespaces are its pod's, to be named as the pod's) */
        bool member = json_object_get(json_object_get(pod.state, "pod"), "sandboxId") != NULL;
        bool untyped = !json_object_get(pod_ann, cri_keys.type) && !json_object_get(pod_ann, crio_keys.type);
        bool infra = (keys == &crio_keys && untyped && !member) || (keys == &by_pid_keys && !member);
        pid_t sentry = (pid_t)json_integer_value(json_object_get(pod.state, "sentryPid"));
        json_t *meta = oci_container_meta(&pod);
        pid_t init = (pid_t)json_integer_value(json_object_get(meta, "initPid"));
        json_decref(meta);
        r = 0;
        if (keys == &by_pid_keys && member) {
                oci_error("%s: it is a pod's container, which shares its pod's namespaces: name the pod's own", who);
                r = -EINVAL;
        } else if (!infra && (!type || !streq(type, "sandbox"))) {
                oci_error("%s: container %s is not a pod sandbox container (its %s is %s)", who, pod_id, keys->type,
                          type ? type : "unset");
                r = -EINVAL;
        } else if (!oci_container_alive(&pod) || init <= 0 || parent_of(init) != sentry) {
                /* init is the sentry's child: a pid recorded and reused since is not */
                oci_error("%s: the pod sandbox container is not running", who);
                r = -ESRCH;
        }
        /* the pod's network: one an engine prepared (CNI's), or the pod
         * sandbox container's own cordon namespace (a host-network pod),
         * which has nothing but loopback */
        bool pod_net_prepared = json_object_get(json_object_get(pod.state, "pod"), "netns") != NULL;
        /* the pod's policy: a container cannot bring its own */
        const char *pod_policy =
                json_string_value(json_object_get(json_object_get(pod.state, "annotations"), OCI_POLICY_ANNOTATION));
        const char *own = oci_annotation(s, OCI_POLICY_ANNOTATION);
        if (r == 0 && own && (!pod_policy || !streq(own, pod_policy))) {
                oci_error("annotations: %s: a pod's containers run under the pod's policy (the annotation on the pod "
                          "sandbox container %s), not one of their own",
                          OCI_POLICY_ANNOTATION, pod_id);
                r = -EPERM;
        }
        if (r == 0 && pod_policy)
                set_annotation(s, OCI_POLICY_ANNOTATION, pod_policy);
        oci_container_close(&pod);
        if (r < 0)
                return r;

        for (size_t i = 0; i < s->n_namespaces; i++) {
                const struct oci_namespace *ns = &s->namespaces[i];
                size_t k = kind_of(ns->type);
                if (!ns->path)
                        continue;
                if (ns_kinds[k].join < 0) {
                        oci_error("linux.namespaces: %s path %s: cordon creates each container's own %s "
                                  "namespace and never joins one",
                                  ns_kinds[k].field, ns->path, ns_kinds[k].field);
                        return -EOPNOTSUPP;
                }
                /* The pod's process namespace (shareProcessNamespace) is
                 * the one its init forks into, whose pid 1 is the pod's
                 * infra process (init.c's own_pidns), not init's own: a
                 * member joining init's would see cordon's init as pid 1,
                 * and (before Linux 6.15) the pod has no other. */
                bool pid = ns->type == CLONE_NEWPID;
                char pods[64], why[256];
                snprintf(pods, sizeof(pods), "/proc/%d/ns/%s", (int)init, pid ? "pid_for_children" : ns_kinds[k].name);
                struct ns_id want, got;
                if (ns_identify(pods, ns->type, &want, why, sizeof(why)) < 0) {
                        oci_error("linux.namespaces: the pod's %s namespace (%s): %s", ns_kinds[k].field, pods, why);
                        return -ESRCH;
                }
                char inits[64];
                snprintf(inits, sizeof(inits), "/proc/%d/ns/pid", (int)init);
                if (pid && (ns_identify(inits, CLONE_NEWPID, &got, why, sizeof(why)) < 0 || same(got, want))) {
                        oci_error("linux.namespaces: pid path %s: the pod shares no process namespace of its own "
                                  "(its sandbox container's process is not pid 1 of one: that needs procfs's "
                                  "pidns option, Linux 6.15), so shareProcessNamespace cannot be honoured",
                                  ns->path);
                        return -EOPNOTSUPP;
                }
                /* what containerd names: the pod's pid as cordon reported it */
                char reported[64];
                snprintf(reported, sizeof(reported), "/proc/%d/ns/%s", (int)sentry, ns_kinds[k].name);
                if (!streq(ns->path, reported)) {
                        if (ns_identify(ns->path, ns->type, &got, why, sizeof(why)) < 0) {
                                oci_error("linux.namespaces: %s path %s: %s", ns_kinds[k].field, ns->path, why);
                                return -EINVAL;
                        }
                        if (!same(got, want)) {
                                oci_error("linux.namespaces: %s path %s is %s, not the %s namespace of pod %s: "
                                          "refused",
                                          ns_kinds[k].field, ns->path,
                                          host_ns(k, got) ? "the host's" : "another namespace", ns_kinds[k].field,
                                          pod_id);
                                return -EPERM;
                        }
                }
                sb->join[ns_kinds[k].join] = (struct oci_join){xstrdup(pods), want.dev, want.ino};
        }
        /* the pod's uid range, as its init's maps say */
        uint32_t ubase, ucount, gbase, gcount;
        if (read_map(init, "uid", &ubase, &ucount) < 0 || read_map(init, "gid", &gbase, &gcount) < 0 ||
            ucount != gcount) {
                oci_error("%s: cannot read the pod's uid range from its init (pid %d)", who, (int)init);
                return -EIO;
        }
        sb->pod_range = (struct id_range){.uid = ubase, .gid = gbase, .count = ucount, .slot = -1};
        /* the pod sandbox container's DNS stub serves its network namespace */
        sb->stub_shared = sb->join[OCI_JOIN_NET].path != NULL;
        sb->net_prepared = sb->stub_shared && pod_net_prepared;
        json_object_set_new(record, "sandboxId", json_string(pod_id));
        return 0;
}

/* The first nameserver of the resolv.conf the engine binds into the
 * container (containerd's pod resolv.conf, podman's network's): the
 * cluster's DNS server, which the stub asks for names under networkPolicy.
 * clusterDomain. NULL where there is none. */
static char *engine_nameserver(const struct oci_spec *s)
{
        for (size_t i = 0; i < s->n_mounts; i++) {
                const struct oci_mount *m = &s->mounts[i];
                if (!streq(m->destination, "/etc/resolv.conf") || !streq(m->type, "bind") || !m->source)
                        continue;
                _cleanup_fclose_ FILE *f = fopen(m->source, "re");
                char line[256], addr[64];
                while (f && fgets(line, sizeof(line), f))
                        if (sscanf(line, " nameserver %63s", addr) == 1)
                                return xstrdup(addr);
        }
        return NULL;
}

/* The container's /etc/resolv.conf: cordon's (the DNS stub is its only
 * nameserver: net/), with the engine's search domains and resolver options
 * (a pod's "default.svc.cluster.local svc.cluster.local cluster.local" and
 * ndots:5, podman's --dns-search and --dns-option), so that a short name
 * (a Service's) is looked up as the engine meant. The stub still decides
 * every name it is asked. NULL where the engine binds none or gives
 * neither (cordon's own file then). */
static char *engine_resolv_conf(const struct oci_spec *s)
{
        for (size_t i = 0; i < s->n_mounts; i++) {
                const struct oci_mount *m = &s->mounts[i];
                if (!streq(m->destination, "/etc/resolv.conf") || !streq(m->type, "bind") || !m->source)
                        continue;
                _cleanup_fclose_ FILE *f = fopen(m->source, "re");
                char line[1024], search[1024] = "", options[256] = "";
                while (f && fgets(line, sizeof(line), f)) {
                        char *save = NULL, *word = strtok_r(line, " \t\r\n", &save);
                        bool is_search = word && (streq(word, "search") || streq(word, "domain"));
                        bool is_options = word && streq(word, "options");
                        if (is_search)
                                search[0] = '\0'; /* the last one counts, as for the resolver */
                        while ((is_search || is_options) && (word = strtok_r(NULL, " \t\r\n", &save))) {
                                /* a domain is a name; of the options only those
                                 * that say how to ask, not whom */
                                bool ok = is_search ? strspn(word,
                                                             "abcdefghijklmnopqrstuvwxyz"
                                                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") == strlen(word)
                                                    : startswith(word, "ndots:") || startswith(word, "timeout:") ||
                                                              startswith(word, "attempts:");
                                char *into = is_search ? search : options;
                                size_t size = is_search ? sizeof(search) : sizeof(options);
                                if (ok && strlen(into) + strlen(word) + 2 < size) {
                                        strcat(into, " ");
                                        strcat(into, word);
                                }
                        }
                }
                if (!search[0] && !options[0])
                        return NULL;
                return xasprintf("%s%s%s%s%s%s%s", net_resolv_conf, search[0] ? "search" : "", search,
                                 search[0] ? "\n" : "", options[0] ? "options" : "", options, options[0] ? "\n" : "");
        }
        return NULL;
}

int oci_pod_prepare(struct oci_spec *s, struct oci_sandbox *sb, json_t **ret_record)
{
        const struct pod_keys *keys =
                !oci_annotation(s, cri_keys.type) && oci_annotation(s, crio_keys.type) ? &crio_keys : &cri_keys;
        const char *type = oci_annotation(s, keys->type);
        const char *pod_id = oci_annotation(s, keys->sandbox);
        const char *self = pod_id && type && streq(type, "sandbox") ? pod_id : "";
        json_t *record = json_object();
        int r = 0;
        if (type && !streq(type, "sandbox") && !streq(type, "container")) {
                oci_error("annotations: %s \"%s\": expected sandbox or container", keys->type, type);
                json_decref(record);
                return -EINVAL;
        }
        if (type)
                json_object_set_new(record, "type", json_string(type));
        if (type && streq(type, "container")) {
                if (!pod_id || !pod_id[0]) {
                        oci_error("annotations: %s is missing: a pod's container names its pod sandbox", keys->sandbox);
                        json_decref(record);
                        return -EINVAL;
                }
                r = pod_member(s, keys, pod_id, sb, record);
        } else {
                /* a namespace of another container, named by its pid
                 * (podman's --network, --ipc, --pid container:NAME): that
                 * container is the pod, every path is checked as a pod
                 * member's (pod_member) */
                _cleanup_free_ char *owner = NULL;
                for (size_t i = 0; !owner && i < s->n_namespaces; i++)
                        if (s->namespaces[i].path)
                                owner = pid_owner(s->namespaces[i].path);
                if (owner)
                        r = pod_member(s, &by_pid_keys, owner, sb, record);
                for (size_t i = 0; !owner && r == 0 && i < s->n_namespaces; i++) {
                        const struct oci_namespace *ns = &s->namespaces[i];
                        if (!ns->path)
                                continue;
                        if (ns->type == CLONE_NEWNET) {
                                r = prepared_netns(self, ns->path, sb, record);
                                continue;
                        }
                        oci_error("linux.namespaces: joining an existing namespace (%s) is not supported: cordon "
                                  "creates its own user, mount, pid, ipc, uts and cgroup namespaces for every "
                                  "container, and sharing one with another container would let it reach outside "
                                  "its sandbox",
                                  ns->path);
                        r = -EOPNOTSUPP;
                }
        }
        if (r < 0) {
                oci_pod_done(sb);
                json_decref(record);
                return r;
        }
        if (sb->join[OCI_JOIN_NET].path)
                sb->cluster_dns = engine_nameserver(s);
        sb->resolv_conf = engine_resolv_conf(s);
        *ret_record = record;
        return 0;
}

void oci_pod_done(struct oci_sandbox *sb)
{
        free((char *)sb->cluster_dns);
        sb->cluster_dns = NULL;
        free((char *)sb->resolv_conf);
        sb->resolv_conf = NULL;
        for (size_t k = 0; k < OCI_JOIN_KINDS; k++) {
                free((char *)sb->join[k].path);
                sb->join[k] = (struct oci_join){0};
        }
}
