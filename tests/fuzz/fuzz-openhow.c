/* Fuzz target for what the sentry reads from the child around a path call
 * (fs/child-input.c): openat2's struct open_how read the kernel's way, the
 * rewriting of /proc/self and friends, and the hidden rules' matching.
 *
 * The input: 8 header bytes (byte 0: number of rules in its low 3 bits,
 * then "exact", "/etc/mtab is a link", "the namespace lookup fails"; byte 1:
 * the rewrite's output size, 0 for 4096; bytes 2-3: openat2's size argument
 * (little-endian, modulo 4400); bytes 4-7: the caller's tid and tgid), then
 * that many bytes of open_how (zero-padded when the input ends), then lines:
 * the rules ('h' first for hidden, then the path) and the path.
 *
 * Each result is compared with a re-implementation written here from the
 * documented behaviour: open_how as copy_struct_from_user reads it; the
 * rewrite as a table of spellings; hiding as the longest rule, compared
 * component by component, that is a prefix of the path (on normalised
 * paths, which is what the view hands the matcher; raw spellings are only
 * run for memory safety). A rule's trailing slashes never matter.
 *
 * Built with -fsanitize=fuzzer for libFuzzer (make fuzz), or with
 * tests/fuzz/standalone.c to replay a corpus (tests/fuzz/run.sh). */
#include "config.h"

#include <linux/openat2.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

#define CHECK(x)                                                                                  \
        do {                                                                                      \
                if (!(x)) {                                                                       \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #x); \
                        abort();                                                                  \
                }                                                                                 \
        } while (0)

#define MAX_RULES 7
#define MAX_LINE  4096

static uint64_t le64_at(const uint8_t *p)
{
        uint64_t v = 0;
        for (int i = 7; i >= 0; i--)
                v = (v << 8) | p[i];
        return v;
}

static void check_open_how(const uint8_t *how_bytes, size_t size)
{
        struct open_how how;
        memset(&how, 0xa5, sizeof(how));
        struct open_how before = how;
        int r = fs_open_how_from_bytes(how_bytes, size, &how);
        int want = 0;
        if (size < 24)
                want = -EINVAL;
        else if (size > 4096)
                want = -E2BIG;
        else
                for (size_t i = 24; i < size; i++)
                        if (how_bytes[i])
                                want = -E2BIG;
        CHECK(r == want);
        if (r < 0) {
                CHECK(memcmp(&how, &before, sizeof(how)) == 0); /* untouched on failure */
                return;
        }
        CHECK(how.flags == le64_at(how_bytes));
        CHECK(how.mode == le64_at(how_bytes + 8));
        CHECK(how.resolve == le64_at(how_bytes + 16));
}

struct ids {
        pid_t nspid, nstgid;
        bool fail;
        int calls;
};

static int fake_ns_ids(void *userdata, pid_t *ret_nspid, pid_t *ret_nstgid)
{
        struct ids *ids = userdata;
        ids->calls++;
        if (ids->fail)
                return -ESRCH;
        *ret_nspid = ids->nspid;
        *ret_nstgid = ids->nstgid;
        return 0;
}

static bool mtab_yes(void)
{
        return true;
}

static bool mtab_no(void)
{
        return false;
}

static void check_rewrite(const char *path, bool exact, bool mtab, struct ids *ids, size_t outsize)
{
        static const struct {
                const char *prefix;
                const char *tail; /* after /proc/<tgid>, or /proc/<tgid>/task/<tid> when NULL */
        } spellings[] = {
                {"/proc/self", ""},          {"/proc/thread-self", NULL}, {"/dev/fd", "/fd"},
                {"/dev/stdin", "/fd/0"},     {"/dev/stdout", "/fd/1"},    {"/dev/stderr", "/fd/2"},
                {"/proc/mounts", "/mounts"}, {"/proc/net", "/net"},       {"/etc/mtab", "/mounts"},
        };
        /* exact size on the heap: a write past outsize is seen */
        char *out = xmalloc(outsize);
        bool changed = true;
        ids->calls = 0;
        int r = fs_rewrite_self_with(path, exact, fake_ns_ids, ids, mtab ? mtab_yes : mtab_no, out, outsize, &changed);

        int which = -1;
        for (size_t i = 0; i < ELEMENTSOF(spellings) && which < 0; i++) {
                size_t n = strlen(spellings[i].prefix);
                if (strncmp(path, spellings[i].prefix, n) == 0 && (path[n] == '\0' || path[n] == '/'))
                        which = (int)i;
        }
        bool applies = which >= 0;
        if (applies && !exact && path[strlen(spellings[which].prefix)] == '\0')
                applies = false;
        if (applies && streq(spellings[which].prefix, "/etc/mtab") && !mtab)
                applies = false;
        if (!applies) {
                CHECK(r == 0 && !changed && ids->calls == 0);
                free(out);
                return;
        }
        CHECK(ids->calls == 1);
        if (ids->fail) {
                CHECK(r == -ESRCH && !changed);
                free(out);
                return;
        }
        const char *rest = path + strlen(spellings[which].prefix);
        _cleanup_free_ char *want = spellings[which].tail
                                            ? xasprintf("/proc/%d%s%s", (int)ids->nstgid, spellings[which].tail, rest)
                                            : xasprintf("/proc/%d/task/%d%s", (int)ids->nstgid, (int)ids->nspid, rest);
        if (strlen(want) >= outsize) {
                CHECK(r == -ENAMETOOLONG && !changed);
        } else {
                CHECK(r == 0 && changed);
                CHECK(streq(out, want));
        }
        free(out);
}

/* line as a normalised absolute path: components without empty ones
 * ("/" when none), and their list */
static size_t normalise(const char *line, char *out, const char *comps[], size_t max_comps, char *store)
{
        size_t n = 0, o = 0;
        strcpy(store, line);
        for (char *save = NULL, *c = strtok_r(store, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (n < max_comps)
                        comps[n] = c;
                n++;
                o += (size_t)sprintf(out + o, "/%s", c);
        }
        if (o == 0)
                strcpy(out, "/");
        return n;
}

struct nrule {
        char path[MAX_LINE + 2];
        char store[MAX_LINE + 1];
        const char *comps[MAX_LINE];
        size_t n;
        bool hidden;
};

static bool naive_hide(const struct nrule *rules, size_t n, const struct nrule *path)
{
        int best = -1;
        size_t best_n = 0;
        for (size_t i = 0; i < n; i++) {
                if (rules[i].n > path->n)
                        continue;
                bool prefix = true;
                for (size_t k = 0; k < rules[i].n && prefix; k++)
                        prefix = streq(rules[i].comps[k], path->comps[k]);
                if (prefix && (best < 0 || rules[i].n >= best_n)) {
                        best = (int)i;
                        best_n = rules[i].n;
                }
        }
        return best >= 0 && rules[best].hidden;
}

static void check_rules(char **lines, size_t n_lines, size_t n_rules)
{
        static struct nrule norm[MAX_RULES + 1];
        struct fs_rule raw[MAX_RULES], normal[MAX_RULES], slashed[MAX_RULES];
        char *slashed_paths[MAX_RULES] = {0};
        const char *path = n_lines > n_rules ? lines[n_rules] : "/";
        if (n_rules > n_lines)
                n_rules = n_lines;

        for (size_t i = 0; i < n_rules; i++) {
                bool hidden = lines[i][0] == 'h';
                const char *p = lines[i][0] ? lines[i] + 1 : lines[i];
                raw[i] = (struct fs_rule){.path = p, .access = hidden ? FS_HIDDEN : FS_READ, .exec = -1};
                norm[i].n = normalise(p, norm[i].path, norm[i].comps, MAX_LINE, norm[i].store);
                norm[i].hidden = hidden;
                normal[i] = (struct fs_rule){.path = norm[i].path, .access = raw[i].access, .exec = -1};
                slashed_paths[i] = xasprintf("%s//", norm[i].path);
                slashed[i] = normal[i];
                slashed[i].path = slashed_paths[i];
        }
        struct nrule *np = &norm[MAX_RULES];
        np->n = normalise(path, np->path, np->comps, MAX_LINE, np->store);

        /* raw spellings: only memory safety */
        (void)fs_rules_hide(raw, n_rules, path);
        (void)fs_rules_hide(raw, n_rules, np->path);

        bool got = fs_rules_hide(normal, n_rules, np->path);
        CHECK(got == naive_hide(norm, n_rules, np));
        CHECK(fs_rules_hide(slashed, n_rules, np->path) == got);
        bool any_hidden = false;
        for (size_t i = 0; i < n_rules; i++)
                any_hidden |= norm[i].hidden;
        CHECK(fs_rules_have_hidden(normal, n_rules) == any_hidden);
        if (got)
                CHECK(any_hidden);
        for (size_t i = 0; i < n_rules; i++)
                free(slashed_paths[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 8)
                return 0;
        size_t n_rules = data[0] & 7;
        bool exact = data[0] & 8, mtab = data[0] & 16;
        struct ids ids = {.fail = data[0] & 32};
        size_t outsize = data[1] ? data[1] : 4096;
        size_t how_size = (size_t)(data[2] | (data[3] << 8)) % 4400;
        ids.nspid = (pid_t)(data[4] | (data[5] << 8));
        ids.nstgid = (pid_t)(data[6] | (data[7] << 8));
        data += 8;
        size -= 8;

        /* exact size on the heap, zero-padded past the input */
        _cleanup_free_ uint8_t *how_bytes = xmalloc(how_size ? how_size : 1);
        size_t take = how_size < size ? how_size : size;
        memset(how_bytes, 0, how_size);
        memcpy(how_bytes, data, take);
        check_open_how(how_bytes, how_size);
        data += take;
        size -= take;

        /* the rest: lines, each bounded (a path the sentry reads is) */
        _cleanup_free_ char *text = xmalloc(size + 1);
        memcpy(text, data, size);
        text[size] = '\0';
        char *lines[MAX_RULES + 1];
        size_t n_lines = 0;
        for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && n_lines < ELEMENTSOF(lines);
             l = strtok_r(NULL, "\n", &save)) {
                if (strlen(l) > MAX_LINE)
                        l[MAX_LINE] = '\0';
                lines[n_lines++] = l;
        }
        check_rules(lines, n_lines, n_rules);
        for (size_t i = 0; i < n_lines; i++)
                check_rewrite(lines[i], exact, mtab, &ids, outsize);
        return 0;
}
