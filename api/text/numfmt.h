/*
 * numfmt.h — numbers between text and double, as the wire contract wants:
 * printing as ECMAScript's Number.prototype.toString (shortest round-trip
 * digits), optionally after rounding to k significant digits.
 */
#ifndef API_NUMFMT_H
#define API_NUMFMT_H

#include <stddef.h>

/* Bytes api_num_format may write, including the terminating NUL. */
#define API_NUM_MAX 32

/* Print finite x into buf (API_NUM_MAX bytes) exactly as ECMAScript's
 * Number.prototype.toString: the shortest decimal that reads back to the
 * same double, integers without ".0", exponent form below 1e-6 and from
 * 1e21 ("1e-7", "1.5e+300"), -0 as "0".
 * precision: 0 for shortest; 1 … 17 to round to that many significant
 * digits first (as "%.{k}g"), read back, then print the same way.
 * Returns the length written (without the NUL). x must be finite (the
 * caller rejects inf/NaN before printing); a non-finite x prints "null".
 * Rounding can overflow: 1.7976931348623157e308 at precision 1 reads back
 * as infinity, which prints "null" too (as JSON.stringify would).
 * buf must have room for all API_NUM_MAX bytes: the text is at most 25
 * bytes plus the NUL, but the bytes after the NUL may be overwritten.
 * Digits: Schubfach (R. Giulietti, "The Schubfach way to render doubles",
 * 2020), api/text/numfmt_shortest.h; layout: ECMA-262 §6.1.6.1.20. */
size_t api_num_format(char *buf, double x, int precision);

#endif /* API_NUMFMT_H */
