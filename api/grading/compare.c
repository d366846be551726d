/*
 * compare.c — the comparison modes of /grade (compare.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "fields.h"
#include "numfmt_shortest.h"
#include "pointer.h"

/* PrairieLearn's half-unit with a little room for the binary rounding of
 * the written decimal (0.51, not 0.5). */
#define HALF_UNIT 0.51

static const struct {
    const char *name;
    api_compare_mode mode;
} modes[] = {
    {"relabs_or_rounded", API_COMPARE_RELABS_OR_ROUNDED},
    {"relabs", API_COMPARE_RELABS},
    {"sigfig", API_COMPARE_SIGFIG},
    {"decdig", API_COMPARE_DECDIG},
    {"ulp", API_COMPARE_ULP},
};
#define N_MODES (sizeof modes / sizeof modes[0])

/* 10^−k for k = 0 … 17, the decimals a rounded answer can show */
static const double tenth_power[18] = {
    1,    1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,  1e-8,
    1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17};
/* 10^k for k = 0 … 9, exact */
static const double tenth_power_inverse[10] = {1,   1e1, 1e2, 1e3, 1e4,
                                               1e5, 1e6, 1e7, 1e8, 1e9};
#define MODE_NAMES "relabs_or_rounded, relabs, sigfig, decdig, ulp"

api_compare api_compare_default(void) {
    return (api_compare){.mode = API_COMPARE_RELABS_OR_ROUNDED,
                         .rtol = 1e-5,
                         .atol = 1e-8,
                         .digits = 4,
                         .decimals = 4,
                         .rounded_reach = HALF_UNIT * 1e-4,
                         .ulps = 4};
}

api_compare api_compare_relabs(double rtol, double atol) {
    api_compare c = api_compare_default();
    c.mode = API_COMPARE_RELABS;
    c.rtol = rtol;
    c.atol = atol;
    return c;
}

static int relabs(const api_compare *c, double expected, double err) {
    return err <= c->atol + c->rtol * fabs(expected);
}

static int decimals_of(double x) {
    if (x == 0)
        return 0;
    api_num_decimal d = api_num_shortest(fabs(x));
    return d.exponent < 0 ? -d.exponent : 0;
}

int api_compare_as_written(double x, double *written) {
    *written = x;
    int k = decimals_of(x);
    float f = (float)x;
    if (k <= 9 || !isfinite(f) || (double)f != x)
        return k;
    /* a float32 value: the shortest text that reads back as it (what
     * torch and numpy print for a float32 array, and .tolist() widens) */
    for (int digits = 1; digits <= 9; digits++) {
        char text[32];
        snprintf(text, sizeof text, "%.*e", digits - 1, x);
        if (strtof(text, NULL) == f) {
            *written = strtod(text, NULL);
            int shown = decimals_of(*written);
            return shown < k ? shown : (*written = x, k);
        }
    }
    return k;
}

int api_compare_decimals_shown(double x) {
    double written;
    return api_compare_as_written(x, &written);
}

/* 1 when the positive finite x reads back from a decimal of at most k
 * places (k ≤ 9), 0 when not or when it cannot tell cheaply: then
 * decimals_of(x) ≤ k exactly when 1, as the decimal with the fewest
 * places that reads back as x is the shortest one. Below 2^50 the only
 * candidate is x·10^k rounded to an integer, and dividing it by the exact
 * 10^k rounds as reading its text does. */
static int reads_back_within(double x, int k) {
    double scaled = x * tenth_power_inverse[k];
    if (!(scaled < 0x1p50))
        return 0;
    return nearbyint(scaled) / tenth_power_inverse[k] == x;
}

int api_compare_rounded_at_most(const api_compare *c, double expected,
                                double got, int decimals) {
    if (c->mode != API_COMPARE_RELABS_OR_ROUNDED || decimals < c->decimals ||
        decimals > 9 || !isfinite(expected) || !isfinite(got) || got == 0)
        return 0;
    double err = fabs(got - expected);
    /* within relabs it is no rounded match; farther than decimals' half
     * unit, fewer places might still match, which only the count tells;
     * at most 9 places, got is written as it is (no float32 text) */
    if (relabs(c, expected, err) || !(err < HALF_UNIT * tenth_power[decimals]))
        return 0;
    return reads_back_within(fabs(got), decimals);
}

/* x as an integer ordered as the doubles are (−0 and +0 both 0). */
static int64_t ordered(double x) {
    int64_t i;
    memcpy(&i, &x, sizeof i);
    return i < 0 ? INT64_MIN - i : i;
}

static int within_ulps(double a, double b, uint64_t ulps) {
    int64_t x = ordered(a), y = ordered(b);
    uint64_t d = x > y ? (uint64_t)x - (uint64_t)y : (uint64_t)y - (uint64_t)x;
    return d <= ulps;
}

api_match api_compare_entry(const api_compare *c, double expected, double got,
                            int *decimals) {
    if (!isfinite(expected) || !isfinite(got))
        return got == expected ? API_MATCH_YES : API_MATCH_NO;
    double err = fabs(got - expected);
    switch (c->mode) {
    case API_COMPARE_RELABS:
        return relabs(c, expected, err) ? API_MATCH_YES : API_MATCH_NO;
    case API_COMPARE_SIGFIG: {
        int n = c->digits - 1;
        if (expected != 0)
            n -= (int)floor(log10(fabs(expected)));
        return err == 0 || err < HALF_UNIT * pow(10, -n) ? API_MATCH_YES
                                                         : API_MATCH_NO;
    }
    case API_COMPARE_DECDIG:
        return err == 0 || err < HALF_UNIT * tenth_power[c->digits]
                   ? API_MATCH_YES
                   : API_MATCH_NO;
    case API_COMPARE_ULP:
        return within_ulps(expected, got, c->ulps) ? API_MATCH_YES
                                                   : API_MATCH_NO;
    case API_COMPARE_RELABS_OR_ROUNDED:
        break;
    }
    if (relabs(c, expected, err))
        return API_MATCH_YES;
    /* the widest rounding is at the fewest decimals: farther than that,
     * no need to find the decimals got shows */
    if (!(err < c->rounded_reach))
        return API_MATCH_NO;
    double written;
    int k = api_compare_as_written(got, &written);
    if (k < c->decimals)
        k = c->decimals;
    if (k > 17 || !(fabs(written - expected) < HALF_UNIT * tenth_power[k]))
        return API_MATCH_NO;
    *decimals = k;
    return API_MATCH_ROUNDED;
}

/* ------------------------------------------------------------ reading */

int api_compare_is_one(const json_t *v) {
    return json_is_string(v) ||
           (json_is_object(v) && json_object_get(v, "mode") != NULL);
}

static int mode_named(const char *s, api_compare_mode *mode) {
    for (size_t i = 0; i < N_MODES; i++)
        if (!strcmp(s, modes[i].name)) {
            *mode = modes[i].mode;
            return 0;
        }
    return -1;
}

static const char *mode_name(api_compare_mode mode) {
    for (size_t i = 0; i < N_MODES; i++)
        if (modes[i].mode == mode)
            return modes[i].name;
    return "?";
}

/* Which numbers each mode reads. */
static int reads(api_compare_mode mode, const char *member) {
    switch (mode) {
    case API_COMPARE_RELABS_OR_ROUNDED:
        return !strcmp(member, "rtol") || !strcmp(member, "atol") ||
               !strcmp(member, "decimals");
    case API_COMPARE_RELABS:
        return !strcmp(member, "rtol") || !strcmp(member, "atol");
    case API_COMPARE_SIGFIG:
    case API_COMPARE_DECDIG:
        return !strcmp(member, "digits");
    case API_COMPARE_ULP:
        return !strcmp(member, "ulps");
    }
    return 0;
}

static const char *numbers_of(api_compare_mode mode) {
    switch (mode) {
    case API_COMPARE_RELABS_OR_ROUNDED:
        return "rtol, atol, decimals";
    case API_COMPARE_RELABS:
        return "rtol, atol";
    case API_COMPARE_SIGFIG:
    case API_COMPARE_DECDIG:
        return "digits";
    case API_COMPARE_ULP:
        return "ulps";
    }
    return "";
}

/* A whole number lo … hi (an integral real too), else -1 with p set. */
static int read_count(const json_t *v, const char *pointer, const char *name,
                      double lo, double hi, double *out, api_problem *p) {
    if (!json_is_number(v))
        return api_fail(p, API_E_WRONG_TYPE, pointer,
                        "%s is a whole number; got %s", name, api_json_kind(v));
    double x = json_number_value(v);
    if (x != floor(x))
        return api_fail(p, API_E_WRONG_TYPE, pointer,
                        "%s is a whole number; got %g", name, x);
    if (!(x >= lo && x <= hi))
        return api_fail(p, API_E_INVALID_VALUE, pointer,
                        "%s is %.0f … %.0f; got %g", name, lo, hi, x);
    *out = x;
    return 0;
}

static int read_member(const json_t *v, const char *pointer, const char *key,
                       api_compare *c, api_problem *p) {
    double x;
    if (!strcmp(key, "rtol") || !strcmp(key, "atol")) {
        if (!json_is_number(v))
            return api_fail(p, API_E_WRONG_TYPE, pointer,
                            "%s is a tolerance, a number ≥ 0; got %s", key,
                            api_json_kind(v));
        x = json_number_value(v);
        if (!(isfinite(x) && x >= 0))
            return api_fail(p, API_E_INVALID_VALUE, pointer,
                            "%s is a tolerance, a number ≥ 0 (a value "
                            "matches when |got − expected| ≤ atol + "
                            "rtol·|expected|)",
                            key);
        *(key[0] == 'r' ? &c->rtol : &c->atol) = x;
        return 0;
    }
    if (!strcmp(key, "digits")) {
        if (read_count(v, pointer, "digits", 1, 17, &x, p))
            return -1;
        c->digits = (int)x;
        return 0;
    }
    if (!strcmp(key, "decimals")) {
        if (read_count(v, pointer, "decimals", 0, 17, &x, p))
            return -1;
        c->decimals = (int)x;
        c->rounded_reach = HALF_UNIT * tenth_power[c->decimals];
        return 0;
    }
    if (read_count(v, pointer, "ulps", 0, 4503599627370496.0, &x, p))
        return -1;
    c->ulps = (uint64_t)x;
    return 0;
}

int api_compare_parse(const json_t *v, const char *pointer, api_compare *out,
                      api_problem *p) {
    api_compare c = api_compare_default();
    const json_t *mode = json_is_object(v) ? json_object_get(v, "mode") : v;
    api_pointer at;
    api_pointer_init(&at, pointer);
    if (json_is_object(v))
        api_pointer_push_key(&at, "mode", 4);
    if (!json_is_string(mode))
        return api_fail(p, API_E_WRONG_TYPE, at.s,
                        "a comparison is a mode's name (%s) or {\"mode\": "
                        "name, its numbers}; got %s",
                        MODE_NAMES, api_json_kind(mode));
    if (mode_named(json_string_value(mode), &c.mode))
        return api_fail(p, API_E_INVALID_VALUE, at.s,
                        "unknown comparison \"%.64s\": the modes are %s "
                        "(docs/grading.md \"Comparisons\")",
                        json_string_value(mode), MODE_NAMES);
    if (json_is_object(v)) {
        const char *key;
        const json_t *m;
        json_object_foreach((json_t *)v, key, m) {
            if (!strcmp(key, "mode") || json_is_null(m))
                continue;
            api_pointer_init(&at, pointer);
            api_pointer_push_key(&at, key, strlen(key));
            if (!reads(c.mode, key))
                return api_fail(p, API_E_UNKNOWN_FIELD, at.s,
                                "%s reads %s; `%.64s` is not one of them",
                                mode_name(c.mode), numbers_of(c.mode), key);
            if (read_member(m, at.s, key, &c, p))
                return -1;
        }
    }
    *out = c;
    return 0;
}

void api_compare_describe(const api_compare *c, api_buf *out) {
    char text[160];
    switch (c->mode) {
    case API_COMPARE_RELABS_OR_ROUNDED:
        snprintf(text, sizeof text,
                 "relabs_or_rounded (rtol %g, atol %g, or rounded to %d+ "
                 "decimals)",
                 c->rtol, c->atol, c->decimals);
        break;
    case API_COMPARE_RELABS:
        snprintf(text, sizeof text, "relabs (rtol %g, atol %g)", c->rtol,
                 c->atol);
        break;
    case API_COMPARE_SIGFIG:
        snprintf(text, sizeof text, "sigfig (%d significant digits)",
                 c->digits);
        break;
    case API_COMPARE_DECDIG:
        snprintf(text, sizeof text, "decdig (%d decimals)", c->digits);
        break;
    case API_COMPARE_ULP:
        snprintf(text, sizeof text, "ulp (%llu units in the last place)",
                 (unsigned long long)c->ulps);
        break;
    }
    api_buf_puts(out, text);
}
