/*
 * numfmt_bench.c — nanoseconds per number for api_num_format against
 * snprintf("%.17g") and the shortest-by-retry method ("%.15g", "%.16g",
 * "%.17g", each read back with strtod), on the same arrays in one run.
 *   usage: numfmt_bench [numbers per array, default 1000000]
 * Prints one line per method and input set with ns/number and the ratio to
 * api_num_format; the best of five passes counts.
 */
#include "numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PASSES 5

typedef size_t (*print_fn)(char *buf, double x);

static size_t print_shortest(char *buf, double x) {
    return api_num_format(buf, x, 0);
}

static size_t print_precision6(char *buf, double x) {
    return api_num_format(buf, x, 6);
}

static size_t print_17g(char *buf, double x) {
    return (size_t)snprintf(buf, 32, "%.17g", x);
}

static size_t print_retry(char *buf, double x) {
    int n = 0;
    for (int p = 15; p <= 17; p++) {
        n = snprintf(buf, 32, "%.*g", p, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return (size_t)n;
}

static uint64_t rng_state = 42;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Best-of-PASSES ns per number of fn over xs[0 … n−1]; *bytes gets the
 * output size of one pass, which also keeps the work from being elided. */
static double time_fn(print_fn fn, const double *xs, size_t n, size_t *bytes) {
    char buf[64];
    double best = INFINITY;
    for (int pass = 0; pass < PASSES; pass++) {
        size_t total = 0;
        double t0 = now_ns();
        for (size_t i = 0; i < n; i++)
            total += fn(buf, xs[i]);
        double t = (now_ns() - t0) / (double)n;
        if (t < best)
            best = t;
        *bytes = total;
    }
    return best;
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 1000000;
    if (n == 0)
        n = 1;
    double *xs = malloc(n * sizeof *xs);
    if (!xs) {
        perror("malloc");
        return 1;
    }
    static const struct {
        const char *name;
        print_fn fn;
    } methods[] = {
        {"api_num_format shortest", print_shortest},
        {"api_num_format precision 6", print_precision6},
        {"snprintf %.17g", print_17g},
        {"retry %.15g/16g/17g+strtod", print_retry},
    };
    const char *sets[] = {"random bit patterns", "uniform (-1, 1)",
                          "integers < 2^20"};
    for (int set = 0; set < 3; set++) {
        for (size_t i = 0; i < n; i++) {
            double x;
            do {
                uint64_t r = rng_next();
                if (set == 0)
                    memcpy(&x, &r, sizeof x);
                else if (set == 1)
                    x = (double)(r >> 11) * 0x1p-52 - 1;
                else
                    x = (double)(r >> 44);
            } while (!isfinite(x));
            xs[i] = x;
        }
        printf("%s, %zu numbers:\n", sets[set], n);
        double base = 0;
        for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
            size_t bytes;
            double ns = time_fn(methods[m].fn, xs, n, &bytes);
            if (m == 0)
                base = ns;
            printf("  %-28s %8.1f ns/number  %5.2fx  %6.2f bytes/number\n",
                   methods[m].name, ns, ns / base, (double)bytes / (double)n);
        }
    }
    free(xs);
    return 0;
}
