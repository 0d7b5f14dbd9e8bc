/* Which entries of a snapshot archive a restore writes, and where: the
 * decision restore_thread (snapshot.c) takes for each entry, a function of
 * the entry alone so that a fuzz target can run it on any archive without a
 * sandbox (tests/fuzz/fuzz-snapshot.c). */
#include "config.h"

#include <archive_entry.h>

#include "sentry/archive-dl.h"
#include "sentry/sandbox.h"

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

int snapshot_entry_plan(struct archive_entry *e, char **ret_name, char **ret_hardlink)
{
        if (archive_dl_load(NULL) < 0)
                return -ELIBACC;
        _cleanup_free_ char *name = snapshot_view_name(archive_entry_pathname(e));
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
        *ret_name = TAKE_PTR(name);
        *ret_hardlink = TAKE_PTR(hname);
        return 1;
}
