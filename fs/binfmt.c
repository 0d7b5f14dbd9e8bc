/* The sandbox's own binfmt_misc: an empty instance of its user namespace,
 * so that no handler the host registered (qemu-user, wine, a jar runner;
 * with the F flag a host file outside the view) ever runs for an exec in
 * the sandbox. Since Linux 6.7 a user namespace that mounts binfmt_misc
 * gets an instance of its own, used for every exec in it from then on,
 * mounted or not; before, the mount is refused there and the host's
 * handlers apply. The trapped exec refuses every format but native ELF and
 * #! scripts (fs/exec.c); this is what lets an exec run natively without
 * the host's formats (sentry/init.c). */
#include "config.h"

#include <dirent.h>
#include <sys/mount.h>

#include "common/util.h"
#include "fs/fs.h"

/* Whether the instance mounted at `at` has no handler: only its control
 * files. An instance with entries is the host's, not the sandbox's own. */
static bool instance_empty(const char *at)
{
        DIR *d = opendir(at);
        if (!d)
                return false;
        bool empty = true;
        struct dirent *e;
        while (empty && (e = readdir(d)))
                empty = streq(e->d_name, ".") || streq(e->d_name, "..") || streq(e->d_name, "register") ||
                        streq(e->d_name, "status");
        closedir(d);
        return empty;
}

int fs_binfmt_isolate(const char *at, bool keep_mounted)
{
        if (mount("binfmt_misc", at, "binfmt_misc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                return negative_errno();
        bool own = instance_empty(at);
        /* the instance stays the namespace's without its mount; an unmount
         * waits for an RCU grace period (namespace_unlock), which the
         * caller may spare by leaving it to a later detach of the tree */
        if (!keep_mounted && umount2(at, MNT_DETACH) < 0)
                return negative_errno();
        return own ? 0 : -EEXIST;
}
