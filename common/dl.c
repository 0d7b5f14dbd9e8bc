/* dlopen on first use, on the main thread only (see dl.h). */
#include "config.h"

#include <dlfcn.h>
#include <unistd.h>

#include "common/dl.h"
#include "common/util.h"

bool dl_may_load(void)
{
        return gettid() == getpid();
}

int dl_load(struct dl_lib *l, const char **ret_error)
{
        pthread_mutex_lock(&l->lock);
        const char *why;
        if (!l->tried && !dl_may_load())
                why = "a library is loaded by the sentry's main thread only (this thread may see the sandbox's "
                      "files)";
        else {
                if (!l->tried) {
                        l->tried = true;
                        void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
                        if (!h)
                                l->error = l->missing;
                        else if (l->resolve(h, &l->error) < 0)
                                dlclose(h);
                }
                why = l->error;
        }
        pthread_mutex_unlock(&l->lock);
        if (why) {
                if (ret_error)
                        *ret_error = why;
                return -ELIBACC;
        }
        return 0;
}
