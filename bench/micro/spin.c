/* Pure compute: ITERS rounds of an xorshift generator, no syscalls.
 *   spin ITERS
 * Prints "@metric seconds V": the loop alone, timed inside (no start-up). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
        uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000ULL;
        uint64_t x = 88172645463325252ULL, acc = 0;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (uint64_t i = 0; i < n; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                acc += x % 1000003;
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        printf("spin %llu\n", (unsigned long long)acc);
        printf("@metric seconds %.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
        return 0;
}
