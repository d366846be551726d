/*
 * numparse.h — JSON number text to double, with the answers jansson gives
 * (integer literals through int64, reals through strtod), at a few
 * nanoseconds per number instead of jansson's per-character lexing.
 *
 * Reals are rounded correctly (nearest, ties to even) by:
 *   1. Clinger's exact fast path: w ≤ 2^53 and |q| ≤ 22, one IEEE
 *      multiplication or division (Clinger, "How to Read Floating Point
 *      Numbers Accurately", PLDI 1990);
 *   2. Eisel–Lemire: w · 10^q through a 128-bit approximation of 10^q, with
 *      an error bound that says when the truncated product decides the
 *      rounding (Lemire, "Number Parsing at a Gigabyte per Second",
 *      Software: Practice and Experience 51(8), 2021);
 *   3. glibc strtod for the rest: more than 19 significant digits, results
 *      near a rounding boundary, subnormals, exponents beyond the table.
 */
#ifndef API_NUMPARSE_H
#define API_NUMPARSE_H

#include <stddef.h>

/* What the text at the cursor is. */
typedef enum {
    API_NUM_INVALID = 0, /* not a JSON number (RFC 8259 section 6) */
    API_NUM_INTEGER,     /* integer literal within int64: *out = (double)v,
                            so "-0" gives +0 (as jansson's json_integer) */
    API_NUM_BIG_INTEGER, /* integer literal outside int64 (jansson: "too big
                            integer"); *out untouched */
    API_NUM_REAL,        /* with fraction or exponent: *out = strtod's value */
    API_NUM_OVERFLOW     /* a real that rounds to ±infinity (strtod ERANGE;
                            jansson: "real number overflow"); *out untouched */
} api_num_kind;

/* Read one number at s[0 .. len) by the strict RFC 8259 grammar
 *   -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
 * taking the longest match. The text after it is not looked at: the caller
 * decides whether the next byte may follow a number. *used gets the bytes
 * read (0 for API_NUM_INVALID, e.g. "01", "1.", "-", ".5", "+1").
 * Returns the kind; *out is set for API_NUM_INTEGER and API_NUM_REAL.
 * Underflow is not an error: tiny reals give ±0 or a subnormal as strtod. */
api_num_kind api_num_parse(double *out, size_t *used, const char *s,
                           size_t len);

#endif /* API_NUMPARSE_H */
