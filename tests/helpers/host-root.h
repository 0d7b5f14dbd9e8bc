/* For the test helpers whose attempts are real (escape-probe, pathcases):
 * whether this is uid 0 of the host's own user namespace, where they would
 * reach the host's files and processes instead of a sandbox's. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

static inline bool host_root(void)
{
        if (geteuid() != 0)
                return false;
        FILE *f = fopen("/proc/self/uid_map", "re");
        unsigned long inside, outside, count;
        /* only a map read and found the identity says so: unreadable
         * (a sandbox's /proc may refuse) is no proof */
        bool identity = f && fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3 && inside == 0 && outside == 0 &&
                        count == 4294967295UL;
        if (f)
                fclose(f);
        return identity;
}
