/* `update`: new cgroup limits for a live container, as runc's update
 * (containerd's UpdateContainerResources through its runc shim, kubelet's
 * in-place resize, `crictl update`, `podman update`). The new resources,
 * from --resources (a LinuxResources document, "-" for stdin) or runc's
 * flags, are parsed by create's own rules (sentry/oci/oci.h,
 * oci_resources_parse: what create refuses is refused, errors name the
 * field), laid over the container's current ones (what is not given stays),
 * bounded by its policy as create bounds them (where the policy and the
 * resources both limit, the stricter wins), written by sentry/cgroup/'s own
 * writers into the groups create wrote them to, and kept in the container's
 * state for the next update. Also the mapping of linux.resources onto what
 * sentry/cgroup/ writes beyond the policy's limits, which create shares. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>

#include "common/file.h"
#include "common/util.h"
#include "sentry/cgroup/cgroup.h"
#include "sentry/oci/oci.h"
#include "sentry/oci/runtime-internal.h"
#include "sentry/policy/policy.h"
#include "sentry/sentry.h"

void oci_resources_cg(const struct oci_resources *res, struct cg_oci *ret)
{
        struct cg_oci o = CG_OCI_NONE;
        o.cpu_quota = res->cpu_quota > 0 ? res->cpu_quota : 0;
        o.cpu_period = (int64_t)res->cpu_period;
        o.cpu_shares = (int64_t)res->cpu_shares;
        o.cpus = res->cpus;
        o.mems = res->mems;
        o.memory_reservation = res->memory_reservation > 0 ? res->memory_reservation : 0;
        o.memory_swappiness = res->memory_swappiness;
        o.kernel_tcp = res->kernel_tcp > 0 ? res->kernel_tcp : 0;
        o.disable_oom_killer = res->disable_oom_killer;
        if (!cgroup_auto_is_v1()) {
                if (o.disable_oom_killer)
                        oci_warn("linux.resources.memory.disableOOMKiller: ignored on cgroup v2, which has no such "
                                 "setting (as runc ignores it)");
                if (o.memory_reservation)
                        oci_warn("linux.resources.memory.reservation: ignored on cgroup v2 (memory.low would shield "
                                 "the container's memory from the host's reclaim)");
                if (o.memory_swappiness >= 0)
                        oci_warn("linux.resources.memory.swappiness: ignored on cgroup v2, which has no such setting");
                if (o.kernel_tcp)
                        oci_warn("linux.resources.memory.kernelTCP: ignored on cgroup v2, where socket buffers count "
                                 "in the memory limit");
                o.disable_oom_killer = false;
                o.memory_reservation = o.kernel_tcp = 0;
                o.memory_swappiness = -1;
        }
        *ret = o;
}

static json_t *put(json_t *doc, const char *section)
{
        json_t *s = json_object_get(doc, section);
        if (!s) {
                s = json_object();
                json_object_set_new(doc, section, s);
        }
        return s;
}

json_t *oci_resources_json(const struct oci_resources *r)
{
        json_t *doc = json_object();
        if (r->memory_limit > 0)
                json_object_set_new(put(doc, "memory"), "limit", json_integer(r->memory_limit));
        if (r->memory_swap > 0)
                json_object_set_new(put(doc, "memory"), "swap", json_integer(r->memory_swap));
        if (r->memory_reservation > 0)
                json_object_set_new(put(doc, "memory"), "reservation", json_integer(r->memory_reservation));
        if (r->memory_swappiness >= 0)
                json_object_set_new(put(doc, "memory"), "swappiness", json_integer(r->memory_swappiness));
        if (r->kernel_tcp > 0)
                json_object_set_new(put(doc, "memory"), "kernelTCP", json_integer(r->kernel_tcp));
        if (r->disable_oom_killer)
                json_object_set_new(put(doc, "memory"), "disableOOMKiller", json_true());
        if (r->cpu_quota > 0)
                json_object_set_new(put(doc, "cpu"), "quota", json_integer(r->cpu_quota));
        /* at most 1000000 and 262144 (the parser's bounds): they fit */
        if (r->cpu_period > 0)
                json_object_set_new(put(doc, "cpu"), "period", json_integer((json_int_t)r->cpu_period));
        if (r->cpu_shares > 0)
                json_object_set_new(put(doc, "cpu"), "shares", json_integer((json_int_t)r->cpu_shares));
        if (r->cpus)
                json_object_set_new(put(doc, "cpu"), "cpus", json_string(r->cpus));
        if (r->mems)
                json_object_set_new(put(doc, "cpu"), "mems", json_string(r->mems));
        if (r->pids_limit > 0)
                json_object_set_new(put(doc, "pids"), "limit", json_integer(r->pids_limit));
        return doc;
}

/* What b gives laid over a (b's lists taken). */
static void merge(struct oci_resources *a, struct oci_resources *b)
{
#define TAKE_SET(f, unset)   \
        if (b->f != (unset)) \
                a->f = b->f;
        TAKE_SET(memory_limit, -1)
        TAKE_SET(memory_swap, -1)
        TAKE_SET(memory_reservation, -1)
        TAKE_SET(memory_swappiness, -1)
        TAKE_SET(kernel_tcp, -1)
        TAKE_SET(pids_limit, -1)
        TAKE_SET(cpu_quota, -1)
        TAKE_SET(cpu_period, 0)
        TAKE_SET(cpu_shares, 0)
#undef TAKE_SET
        if (b->disable_oom_killer)
                a->disable_oom_killer = true;
        if (b->cpus) {
                free(a->cpus);
                a->cpus = TAKE_PTR(b->cpus);
        }
        if (b->mems) {
                free(a->mems);
                a->mems = TAKE_PTR(b->mems);
        }
}

/* runc's memory flags (go-units' RAMInBytes): a whole number with an
 * optional binary unit b, k, m, g, t (and "b" or "ib" after it); -1 for
 * "unlimited" where runc takes it. */
static int parse_bytes(const char *s, int64_t *ret)
{
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s)
                return -EINVAL;
        if (v == -1 && !*end) {
                *ret = -1;
                return 0;
        }
        if (v < 0)
                return -EINVAL;
        int shift = 0;
        switch (*end | 0x20) {
        case 'k':
                shift = 10;
                break;
        case 'm':
                shift = 20;
                break;
        case 'g':
                shift = 30;
                break;
        case 't':
                shift = 40;
                break;
        default:
                break;
        }
        if (shift)
                end++;
        if (!strcasecmp(end, "ib") && shift)
                end += 2;
        else if ((*end | 0x20) == 'b')
                end++;
        if (*end || (shift && v > (INT64_MAX >> shift)))
                return -EINVAL;
        *ret = (int64_t)v << shift;
        return 0;
}

static int parse_int(const char *s, int64_t *ret)
{
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* The flags, as the LinuxResources document they stand for (the parser
 * then checks them as it checks --resources). */
static int flag_to_json(json_t *doc, int ch, const char *name, const char *arg)
{
        static const struct {
                int ch;
                bool bytes;
                const char *section, *key;
        } map[] = {
                {'m', true, "memory", "limit"},        {'M', true, "memory", "swap"},
                {'R', true, "memory", "reservation"},  {'K', true, "memory", "kernel"},
                {'T', true, "memory", "kernelTCP"},    {'q', false, "cpu", "quota"},
                {'p', false, "cpu", "period"},         {'s', false, "cpu", "shares"},
                {'P', false, "cpu", "realtimePeriod"}, {'U', false, "cpu", "realtimeRuntime"},
                {'l', false, "pids", "limit"},         {'w', false, "blockIO", "weight"},
                {'c', false, "cpu", "cpus"},           {'e', false, "cpu", "mems"},
        };
        for (size_t i = 0; i < ELEMENTSOF(map); i++) {
                if (map[i].ch != ch)
                        continue;
                if (ch == 'c' || ch == 'e') {
                        json_object_set_new(put(doc, map[i].section), map[i].key, json_string(arg));
                        return 0;
                }
                int64_t v;
                if ((map[i].bytes ? parse_bytes(arg, &v) : parse_int(arg, &v)) < 0) {
                        oci_error("update --%s %s: expected %s", name, arg,
                                  map[i].bytes ? "a number of bytes (with an optional unit: 512m, 2g)" : "an integer");
                        return -EINVAL;
                }
                json_object_set_new(put(doc, map[i].section), map[i].key, json_integer(v));
                return 0;
        }
        return -EINVAL;
}

static int read_resources(const char *path, char **ret)
{
        return streq(path, "-") ? read_fd_text(STDIN_FILENO, ret) : read_file_text(path, ret);
}

/* The container's resources now: as the last update (or create) recorded
 * them; a container created before update existed, from its config.json. */
static int current_resources(const struct container *c, struct oci_resources *ret)
{
        _cleanup_free_ char *err = NULL;
        json_t *rec = json_object_get(c->state, "resources");
        if (rec) {
                _cleanup_free_ char *text = json_dumps(rec, JSON_COMPACT);
                if (text && oci_resources_parse(text, strlen(text), "state.json: resources", ret, &err) == 0)
                        return 0;
        }
        struct oci_spec *s = NULL;
        const char *bundle = oci_st_str(c, "bundle");
        int r = bundle ? oci_spec_load(bundle, &s, &err) : -ENOENT;
        if (r < 0) {
                oci_error("update: cannot tell the container's current resources: %s", err ? err : strerror(-r));
                return r;
        }
        *ret = s->resources;
        s->resources.cpus = s->resources.mems = NULL;
        oci_spec_free(s);
        return 0;
}

/* The limits the container's policy allows with res (the stricter of the
 * two, as create decides them: oci_spec_policy on its recorded root and
 * annotations). */
static int bounded_limits(const struct container *c, const struct oci_resources *res, struct cg_limits *ret)
{
        struct oci_spec s = {0};
        json_t *ann = json_object_get(c->state, "annotations");
        size_t n = json_object_size(ann), i = 0;
        const char *key;
        json_t *v;
        _cleanup_free_ char *err = NULL;
        _cleanup_(policy_freep) struct policy *pol = NULL;

        s.bundle = (char *)oci_st_str(c, "bundle");
        s.root_path = (char *)oci_st_str(c, "rootfs");
        s.resources = *res;
        s.annotations = xcalloc(n ? n : 1, sizeof(*s.annotations));
        json_object_foreach(ann, key, v)
        {
                if (!json_is_string(v))
                        continue;
                s.annotations[i].key = (char *)key;
                s.annotations[i++].value = (char *)json_string_value(v);
        }
        s.n_annotations = i;
        int r = oci_spec_policy(&s, &pol, &err);
        free(s.annotations);
        if (r < 0) {
                oci_error("update: %s", err ? err : strerror(-r));
                return r;
        }
        ret->memory_bytes = pol->memory_bytes == POLICY_UNSET ? CG_UNSET : pol->memory_bytes;
        ret->max_processes = pol->max_processes == POLICY_UNSET ? CG_UNSET : pol->max_processes;
        ret->cpu_millis = pol->cpu_millis == POLICY_UNSET ? CG_UNSET : pol->cpu_millis;
        return 0;
}

/* The sandbox's state file's list key as a NULL-terminated array (its
 * strings borrowed from root). */
static const char **state_list(json_t *root, const char *key)
{
        json_t *a = json_object_get(root, key), *v;
        size_t i, n = 0;
        const char **out = xcalloc(json_array_size(a) + 1, sizeof(char *));
        json_array_foreach(a, i, v)
        {
                if (json_is_string(v))
                        out[n++] = json_string_value(v);
        }
        return out;
}

static int write_limits(const struct container *c, const struct oci_resources *res)
{
        struct cg_limits lim;
        int r = bounded_limits(c, res, &lim);
        if (r < 0)
                return r;
        const char *sid = oci_st_str(c, "sandbox");
        char dir[PATH_MAX];
        _cleanup_free_ char *path = NULL, *err = NULL;
        if (!sid || sandbox_dir(sid, dir, sizeof(dir)) < 0) {
                oci_error("update: container %s has no sandbox", c->id);
                return -ESRCH;
        }
        path = xasprintf("%s/state.json", dir);
        json_error_t jerr;
        _cleanup_(json_decrefp) json_t *st = json_load_file(path, 0, &jerr);
        const char *backend = json_string_value(json_object_get(st, "cgroupBackend"));
        if (!st || !backend) {
                oci_error("update: %s: cannot read the container's control groups", path);
                return -EIO;
        }
        _cleanup_free_ const char **dirs = state_list(st, "cgroups");
        _cleanup_free_ const char **parents = state_list(st, "cgroupParents");
        struct cg_oci o;
        oci_resources_cg(res, &o);
        r = cgroup_update(backend, dirs, parents, &lim, &o, &err);
        if (r < 0)
                oci_error("update: %s", err ? err : strerror(-r));
        return r;
}

int oci_cmd_update(int argc, char **argv)
{
        static const struct option opts[] = {
                {"resources", required_argument, NULL, 'r'},
                {"memory", required_argument, NULL, 'm'},
                {"memory-swap", required_argument, NULL, 'M'},
                {"memory-reservation", required_argument, NULL, 'R'},
                {"kernel-memory", required_argument, NULL, 'K'},
                {"kernel-memory-tcp", required_argument, NULL, 'T'},
                {"cpu-quota", required_argument, NULL, 'q'},
                {"cpu-period", required_argument, NULL, 'p'},
                {"cpu-share", required_argument, NULL, 's'},
                {"cpu-shares", required_argument, NULL, 's'},
                {"cpu-rt-period", required_argument, NULL, 'P'},
                {"cpu-rt-runtime", required_argument, NULL, 'U'},
                {"cpuset-cpus", required_argument, NULL, 'c'},
                {"cpuset-mems", required_argument, NULL, 'e'},
                {"pids-limit", required_argument, NULL, 'l'},
                {"blkio-weight", required_argument, NULL, 'w'},
                {"l3-cache-schema", required_argument, NULL, 'L'},
                {"mem-bw-schema", required_argument, NULL, 'L'},
                {0},
        };
        const char *resources = NULL;
        _cleanup_(json_decrefp) json_t *flags = json_object();
        int ch, idx = 0;
        optind = 1;
        opterr = 0;
        while ((ch = getopt_long(argc, argv, "+r:", opts, &idx)) != -1) {
                switch (ch) {
                case 'r':
                        resources = optarg;
                        break;
                case 'L':
                        oci_error("update --%s: not supported by cordon: Intel RDT", opts[idx].name);
                        return 1;
                case '?':
                case ':':
                        oci_error("update: unknown option or missing value %s", argv[optind - 1]);
                        return 1;
                default:
                        if (flag_to_json(flags, ch, opts[idx].name, optarg) < 0)
                                return 1;
                        break;
                }
        }
        if (optind != argc - 1) {
                oci_error("update: expected exactly one container id");
                return 1;
        }
        const char *id = argv[optind];

        /* the new resources, checked before the container is looked at */
        struct oci_resources want = OCI_RESOURCES_UNSET, more = OCI_RESOURCES_UNSET, cur = OCI_RESOURCES_UNSET;
        _cleanup_free_ char *err = NULL, *text = NULL, *origin = NULL;
        int r = 0;
        if (resources) {
                origin = xasprintf("update --resources %s", resources);
                if ((r = read_resources(resources, &text)) < 0) {
                        oci_error("%s: %s", origin, strerror(-r));
                        return 1;
                }
                if ((r = oci_resources_parse(text, strlen(text), origin, &want, &err)) < 0) {
                        oci_error("%s", err);
                        return 1;
                }
        }
        /* runc's flags, laid over --resources */
        free(TAKE_PTR(text));
        text = json_dumps(flags, JSON_COMPACT);
        if ((r = oci_resources_parse(text, strlen(text), "update", &more, &err)) < 0) {
                oci_error("%s", err);
                oci_resources_done(&want);
                return 1;
        }
        merge(&want, &more);
        oci_resources_done(&more);

        struct container c;
        if (oci_lookup(id, &c) < 0) {
                oci_resources_done(&want);
                return 1;
        }
        const char *status = oci_container_status(&c);
        if (streq(status, "stopped")) {
                oci_error("container %s is not running", id);
                r = -ESRCH;
        }
        if (r == 0)
                r = current_resources(&c, &cur);
        if (r == 0) {
                merge(&cur, &want);
                /* what the parser checks within one document, for the two
                 * laid together */
                if (cur.memory_swap > 0 && cur.memory_limit > 0 && cur.memory_swap < cur.memory_limit) {
                        oci_error("update: linux.resources.memory.swap: is below the memory limit (%" PRId64
                                  " < %" PRId64 "): swap counts memory plus swap",
                                  cur.memory_swap, cur.memory_limit);
                        r = -EINVAL;
                } else if ((r = cgroup_cpuset_check(cur.cpus, cur.mems, &err)) < 0)
                        oci_error("update: %s", err);
        }
        if (r == 0)
                r = write_limits(&c, &cur);
        if (r == 0) {
                json_object_set_new(c.state, "resources", oci_resources_json(&cur));
                if ((r = oci_container_save(&c)) < 0)
                        oci_error("%s/%s/state.json: %s", oci_G.root, id, strerror(-r));
        }
        oci_resources_done(&want);
        oci_resources_done(&cur);
        oci_container_close(&c);
        return r < 0 ? 1 : 0;
}
