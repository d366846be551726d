/*
 * numfmt.c — doubles printed as ECMAScript's Number.prototype.toString
 * (ECMA-262 §6.1.6.1.20 Number::toString): shortest round-trip digits, then
 * the fixed or exponent layout that JavaScript (and so JSON.stringify) uses.
 */
#include "numfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shortest digits of finite x > 0: the first precision p in 1 … 17 whose
 * correctly rounded "%.{p-1}e" reads back as x. Writes the digits (no
 * trailing zeros) to digits, returns their count and stores the decimal
 * exponent n, so x ≈ 0.d1d2… × 10^n. */
static int shortest_digits(char digits[20], int *n, double x)
{
    char tmp[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, x);
        if (strtod(tmp, NULL) == x || p == 17)
            break;
    }
    int len = 0;
    const char *c = tmp;
    for (; *c != 'e'; c++)
        if (*c >= '0' && *c <= '9')
            digits[len++] = *c;
    *n = atoi(c + 1) + 1;
    while (len > 1 && digits[len - 1] == '0')
        len--;
    return len;
}

/* Lays out k digits with decimal exponent n (value = 0.digits × 10^n) by
 * the four cases of Number::toString. Returns the length written. */
static size_t layout(char *buf, int negative, const char *digits, int k, int n)
{
    char *p = buf;
    if (negative)
        *p++ = '-';
    if (k <= n && n <= 21) {
        memcpy(p, digits, (size_t)k); /* digits then n − k zeros */
        p += k;
        memset(p, '0', (size_t)(n - k));
        p += n - k;
    } else if (0 < n && n <= 21) {
        memcpy(p, digits, (size_t)n); /* point after n digits */
        p += n;
        *p++ = '.';
        memcpy(p, digits + n, (size_t)(k - n));
        p += k - n;
    } else if (-6 < n && n <= 0) {
        *p++ = '0'; /* "0." then −n zeros then the digits */
        *p++ = '.';
        memset(p, '0', (size_t)-n);
        p += -n;
        memcpy(p, digits, (size_t)k);
        p += k;
    } else {
        *p++ = digits[0]; /* d[.ddd]e±(n−1) */
        if (k > 1) {
            *p++ = '.';
            memcpy(p, digits + 1, (size_t)(k - 1));
            p += k - 1;
        }
        *p++ = 'e';
        int e = n - 1;
        *p++ = e < 0 ? '-' : '+';
        if (e < 0)
            e = -e;
        if (e >= 100)
            *p++ = (char)('0' + e / 100);
        if (e >= 10)
            *p++ = (char)('0' + e / 10 % 10);
        *p++ = (char)('0' + e % 10);
    }
    *p = '\0';
    return (size_t)(p - buf);
}

size_t api_num_format(char *buf, double x, int precision)
{
    if (!isfinite(x)) {
        memcpy(buf, "null", 5);
        return 4;
    }
    if (precision >= 1 && precision <= 17) {
        char tmp[40];
        snprintf(tmp, sizeof tmp, "%.*e", precision - 1, x);
        x = strtod(tmp, NULL);
        if (!isfinite(x)) {
            memcpy(buf, "null", 5);
            return 4;
        }
    }
    if (x == 0) {
        memcpy(buf, "0", 2);
        return 1;
    }
    char digits[20];
    int n;
    int k = shortest_digits(digits, &n, fabs(x));
    return layout(buf, x < 0, digits, k, n);
}
