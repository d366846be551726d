/*
 * numbers_anchor.cc — the record implementations that numbers_bench.c
 * measures attnd's number parsing and printing against, behind plain C
 * functions so that the benchmark itself stays C:
 *   fast_float 3.9 (Debian's libfast-float-dev): Eisel–Lemire parsing, the
 *     parse record (Lemire, "Number Parsing at a Gigabyte per Second");
 *   fmt 9.1 (libfmt-dev, header-only here): fmt::format_to "{}" of a double
 *     is Dragonbox shortest (Jeon, "Dragonbox: A New Floating-Point
 *     Binary-to-Decimal Conversion Algorithm", 2020), the print record;
 *   std::to_chars(double) of g++ 12's libstdc++: Ryu shortest (Adams, "Ryū:
 *     fast float-to-string conversion", PLDI 2018);
 *   fmt's Dragonbox digit search alone (fmt::detail::dragonbox::to_decimal,
 *     an internal of fmt 9.1), to compare the methods without the text
 *     layouts around them.
 * Each is called out of line, as attnd's api_num_parse and api_num_format
 * are from the benchmark.
 */
#define FMT_HEADER_ONLY
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <fast_float/fast_float.h>
#include <fmt/compile.h>

extern "C" {

/* fast_float::from_chars over s[0 .. end): the bytes read, 0 on error. */
size_t anchor_fast_float(double *out, const char *s, const char *end) {
    fast_float::from_chars_result r = fast_float::from_chars(s, end, *out);
    return r.ec == std::errc() ? static_cast<size_t>(r.ptr - s) : 0;
}

/* fmt::format_to(buf, "{}", x) with the format compiled: Dragonbox digits
 * in fmt's own layout (fixed; exponent below 1e-4 and from 1e16). */
size_t anchor_fmt(char *buf, double x) {
    return static_cast<size_t>(fmt::format_to(buf, FMT_COMPILE("{}"), x) - buf);
}

/* std::to_chars(buf, buf + 32, x): Ryu digits, shortest layout. */
size_t anchor_to_chars(char *buf, double x) {
    return static_cast<size_t>(std::to_chars(buf, buf + 32, x).ptr - buf);
}

/* Dragonbox's digits alone (fmt's implementation, fmt::detail): x > 0
 * finite as *digits · 10^*exponent, trailing zeros removed. Returns the
 * digits. */
uint64_t anchor_dragonbox_digits(int *exponent, double x) {
    fmt::detail::dragonbox::decimal_fp<double> d =
        fmt::detail::dragonbox::to_decimal(x);
    *exponent = d.exponent;
    return d.significand;
}
}
