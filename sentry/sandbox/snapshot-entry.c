/* Which entries of a snapshot archive a restore writes, and where: the
 * decision restore_thread (snapshot.c) takes for each entry, a function of
 * the entry alone so that a fuzz target can run it on any archive without a
 * sandbox (tests/fuzz/fuzz-snapshot.c).
 *
 * The archive's names (snapshot.c writes them):
 *   cordon/sandbox.json      the policy and metadata (and, for a template
 *                            root, the template's path and digest)
 *   layer/<dir>/...          the private /tmp, /var/tmp, /run, home and
 *                            /dev/shm (snapshot_layer_dirs)
 *   upper/...                a template root's changes: its overlay's upper
 *                            layer, as in OCI image layers:
 *     upper/D/.wh.NAME       NAME was deleted from D (an overlay whiteout)
 *     upper/D/.wh..wh..opq   D replaced the template's D (an opaque
 *                            directory): nothing of the template's D shows
 *                            beneath it; it follows D's own entry and comes
 *                            before D's content
 *     anything else          a file, directory or symlink as the upper layer
 *                            holds it
 * A restore applies upper/ through the new sandbox's view (never into the
 * upper directory behind the overlay's back): entries are written there,
 * whiteouts and opaque markers remove what the view shows, and overlayfs
 * records those removals as its own whiteouts. */
#include "config.h"

#include <archive_entry.h>

#include "sentry/sandbox/archive-dl.h"
#include "sentry/sandbox/sandbox-internal.h"

const struct snapshot_layer_dir snapshot_layer_dirs[SNAPSHOT_LAYER_DIRS] = {
        {"tmp", "layer/tmp"},   {"var/tmp", "layer/var-tmp"}, {"run", "layer/run"},
        {"root", "layer/home"}, {"dev/shm", "layer/shm"},
};

/* Whether p has a ".." component. */
static bool has_dotdot(const char *p)
{
        for (const char *c = p; *c;) {
                size_t n = strcspn(c, "/");
                if (n == 2 && c[0] == '.' && c[1] == '.')
                        return true;
                c += n;
                c += strspn(c, "/");
        }
        return false;
}

char *snapshot_view_name(const char *arc)
{
        if (!arc)
                return NULL;
        for (size_t i = 0; i < SNAPSHOT_LAYER_DIRS; i++) {
                size_t n = strlen(snapshot_layer_dirs[i].name);
                if (strncmp(arc, snapshot_layer_dirs[i].name, n) == 0 && arc[n] == '/' && arc[n + 1])
                        return xasprintf("%s/%s", snapshot_layer_dirs[i].view, arc + n + 1);
        }
        return NULL;
}

/* "upper/a/b" -> "a/b" (relative to the view's root); NULL: not an upper
 * entry, or the upper directory itself. */
static const char *upper_rel(const char *arc)
{
        if (!arc || strncmp(arc, SNAPSHOT_UPPER "/", sizeof(SNAPSHOT_UPPER)) != 0)
                return NULL;
        const char *rel = arc + sizeof(SNAPSHOT_UPPER);
        rel += strspn(rel, "/");
        return *rel ? rel : NULL;
}

/* Whether a component of rel other than the last starts with ".wh." (never
 * written by a snapshot: such names are markers, see above). */
static bool wh_inside(const char *rel)
{
        for (const char *c = rel; *c;) {
                size_t n = strcspn(c, "/");
                const char *next = c + n + strspn(c + n, "/");
                if (*next && n >= 4 && strncmp(c, SNAPSHOT_WHITEOUT, 4) == 0)
                        return true;
                c = next;
        }
        return false;
}

static int plan_upper(struct archive_entry *e, const char *rel, struct snapshot_plan *ret)
{
        mode_t type = archive_entry_filetype(e);
        const char *hl = archive_entry_hardlink(e);
        if (has_dotdot(rel) || wh_inside(rel))
                return -EINVAL;
        /* the last component: a marker, or a name */
        size_t len = strlen(rel);
        while (len > 0 && rel[len - 1] == '/')
                len--;
        const char *base = rel + len;
        while (base > rel && base[-1] != '/')
                base--;
        size_t dirlen = (size_t)(base - rel);
        while (dirlen > 0 && rel[dirlen - 1] == '/')
                dirlen--;
        size_t baselen = (size_t)(rel + len - base);
        if (baselen >= 4 && strncmp(base, SNAPSHOT_WHITEOUT, 4) == 0) {
                /* a marker is an empty regular file, never a link */
                if (type != AE_IFREG || hl)
                        return -EINVAL;
                if (baselen == strlen(SNAPSHOT_OPAQUE) && strncmp(base, SNAPSHOT_OPAQUE, baselen) == 0) {
                        /* the root is never opaque (overlayfs cannot remove it) */
                        if (dirlen == 0)
                                return -EINVAL;
                        *ret = (struct snapshot_plan){SNAPSHOT_ACT_OPAQUE, xasprintf("%.*s", (int)dirlen, rel), NULL};
                        return SNAPSHOT_ACT_OPAQUE;
                }
                if (strncmp(base, SNAPSHOT_OPAQUE, 8) == 0)
                        return 0; /* another tool's metadata (aufs .wh..wh.plnk, ...) */
                const char *victim = base + 4;
                size_t vlen = baselen - 4;
                if (vlen == 0 || (vlen == 1 && victim[0] == '.') || (vlen == 2 && victim[0] == '.' && victim[1] == '.'))
                        return -EINVAL;
                char *name = dirlen ? xasprintf("%.*s/%.*s", (int)dirlen, rel, (int)vlen, victim)
                                    : xasprintf("%.*s", (int)vlen, victim);
                *ret = (struct snapshot_plan){SNAPSHOT_ACT_WHITEOUT, name, NULL};
                return SNAPSHOT_ACT_WHITEOUT;
        }
        if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
                return 0;
        char *hname = NULL;
        if (hl) {
                /* a hard link within the upper layer only */
                const char *hrel = upper_rel(hl);
                if (!hrel)
                        return 0;
                if (has_dotdot(hrel) || wh_inside(hrel))
                        return -EINVAL;
                const char *hb = strrchr(hrel, '/');
                if (strncmp(hb ? hb + 1 : hrel, SNAPSHOT_WHITEOUT, 4) == 0)
                        return -EINVAL;
                hname = xstrdup(hrel);
        }
        *ret = (struct snapshot_plan){SNAPSHOT_ACT_UPPER, xstrdup(rel), hname};
        return SNAPSHOT_ACT_UPPER;
}

int snapshot_entry_plan(struct archive_entry *e, struct snapshot_plan *ret)
{
        if (archive_dl_load(NULL) < 0)
                return -ELIBACC;
        const char *arc = archive_entry_pathname(e);
        const char *rel = upper_rel(arc);
        if (rel)
                return plan_upper(e, rel, ret);
        _cleanup_free_ char *name = snapshot_view_name(arc);
        if (!name)
                return 0;
        mode_t type = archive_entry_filetype(e);
        if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
                return 0;
        /* the restore's libarchive refuses ".." too (SECURE_NODOTDOT); it is
         * refused here first so that no such name reaches the disk writer */
        if (has_dotdot(name))
                return -EINVAL;
        /* a hard link names another layer path: mapped the same way, and left
         * out when it names something outside the layer */
        _cleanup_free_ char *hname = NULL;
        const char *hl = archive_entry_hardlink(e);
        if (hl) {
                hname = snapshot_view_name(hl);
                if (!hname)
                        return 0;
                if (has_dotdot(hname))
                        return -EINVAL;
        }
        *ret = (struct snapshot_plan){SNAPSHOT_ACT_WRITE, TAKE_PTR(name), TAKE_PTR(hname)};
        return SNAPSHOT_ACT_WRITE;
}

void snapshot_plan_done(struct snapshot_plan *p)
{
        free(p->name);
        free(p->hardlink);
        p->name = p->hardlink = NULL;
}
