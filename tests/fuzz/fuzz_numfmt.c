/*
 * fuzz_numfmt.c — libFuzzer target: api_num_format (api/text/numfmt.h) against
 * glibc. Bytes 0 … 7 are the double's bits (little-endian), byte 8 the
 * precision (modulo 18; 0 = shortest); shorter inputs are zero-padded.
 *
 * Invariants (docs/contract.md section 1 "Responses", ECMA-262
 * Number::toString):
 *   - non-finite x prints "null"; otherwise the text fits API_NUM_MAX and
 *     is a JSON number (RFC 8259 section 6 grammar);
 *   - shortest (precision 0): strtod reads back x bit for bit (-0 as 0),
 *     with as few significant digits as the shortest "%.{k}e" that round
 *     trips, and those are its digits (the closest, as glibc's correctly
 *     rounded printf gives) — fewer only at a power of two;
 *   - precision k: reads back as strtod("%.{k}g" of x), or "null" when
 *     that overflows;
 *   - layout: exponent form exactly when the decimal exponent n (value =
 *     0.d1d2… × 10^n) is below -5 or above 21, i.e. below 1e-6 or from
 *     1e21 (ECMA-262 step 6 … 10).
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "numfmt.h"
#include "query.h"

/* Significant digits of a decimal text (leading and trailing zeros of the
 * mantissa dropped) into digits; returns how many. */
static int numfmt_digits(const char *s, char *digits) {
    int n = 0;
    for (; *s && *s != 'e' && *s != 'E'; s++)
        if (*s >= '0' && *s <= '9' && (n > 0 || *s != '0'))
            digits[n++] = *s;
    while (n > 0 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    return n;
}

static int numfmt_same(double a, double b) {
    return memcmp(&a, &b, sizeof a) == 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t in[9] = {0};
    memcpy(in, data, size < sizeof in ? size : sizeof in);
    uint64_t bits = 0;
    for (int i = 7; i >= 0; i--)
        bits = bits << 8 | in[i];
    double x;
    memcpy(&x, &bits, sizeof x);
    int precision = in[8] % 18;

    char buf[API_NUM_MAX + 8];
    memset(buf, 'X', sizeof buf);
    size_t len = api_num_format(buf, x, precision);
    fuzz_check(len < API_NUM_MAX && buf[len] == '\0' && strlen(buf) == len,
               "length %zu for %a", len, x);
    fuzz_check(buf[API_NUM_MAX] == 'X', "wrote past API_NUM_MAX for %a", x);
    if (!isfinite(x)) {
        fuzz_check(!strcmp(buf, "null"), "%a printed '%s'", x, buf);
        return 0;
    }
    double want = x;
    if (precision > 0) {
        char text[64];
        snprintf(text, sizeof text, "%.*g", precision, x);
        want = strtod(text, NULL);
    }
    if (isinf(want)) {
        fuzz_check(!strcmp(buf, "null"),
                   "%a at precision %d overflows but "
                   "printed '%s'",
                   x, precision, buf);
        return 0;
    }
    if (want == 0)
        want = 0.0; /* -0 prints as 0 */
    int integer;
    fuzz_check(api_query_number_syntax(buf, &integer),
               "'%s' is not a JSON number", buf);
    double back = strtod(buf, NULL);
    fuzz_check(numfmt_same(back, want),
               "%.17g (%a) at precision %d printed '%s', which reads back as "
               "%.17g",
               x, x, precision, buf, back);

    /* shortest digits: the fewest of any "%.{k}e" that reads back as want;
     * its exponent gives the layout (value = 0.d… × 10^n, n = e + 1) */
    char mine[32], best[32];
    int n_mine = numfmt_digits(buf, mine);
    if (want != 0) {
        char text[64] = "";
        for (int k = 1; k <= 17; k++) {
            snprintf(text, sizeof text, "%.*e", k - 1, want);
            if (strtod(text, NULL) == want)
                break;
        }
        int n_best = numfmt_digits(text, best);
        /* Fewer digits than glibc's closest k-digit text is right only at
         * a power of two, where the interval of doubles that read back as
         * want is narrower below than above: a k-digit decimal can lie in
         * it on the wide side while the closest one lies just outside on
         * the narrow side. */
        uint64_t want_bits;
        memcpy(&want_bits, &want, sizeof want_bits);
        int power_of_two = (want_bits & ((UINT64_C(1) << 52) - 1)) == 0;
        fuzz_check((n_mine == n_best && !strcmp(mine, best)) ||
                       (n_mine < n_best && power_of_two),
                   "%.17g printed '%s'; the shortest round trip is %s", want,
                   buf, text);
        int n = atoi(strchr(text, 'e') + 1) + 1;
        int exp_form = strchr(buf, 'e') != NULL;
        fuzz_check(exp_form == (n < -5 || n > 21),
                   "'%s': exponent n = %d, expected %s form", buf, n,
                   exp_form ? "fixed" : "exponent");
    } else {
        fuzz_check(!strcmp(buf, "0"), "zero printed '%s'", buf);
    }
    return 0;
}
