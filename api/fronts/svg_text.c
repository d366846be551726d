/*
 * svg_text.c — writing SVG text (svg_text.h).
 */
#include "svg_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Text as XML character data or an attribute value: &, <, >, " and '
 * escaped (the labels are the request's own strings). */
void api_svg_put_text(api_buf *out, const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        switch (s[i]) {
        case '&':
            api_buf_puts(out, "&amp;");
            break;
        case '<':
            api_buf_puts(out, "&lt;");
            break;
        case '>':
            api_buf_puts(out, "&gt;");
            break;
        case '"':
            api_buf_puts(out, "&quot;");
            break;
        case '\'':
            api_buf_puts(out, "&#39;");
            break;
        default:
            api_buf_putc(out, s[i]);
        }
    }
}

void api_svg_put_num(api_buf *out, double x) {
    char s[32];
    snprintf(s, sizeof s, "%.2f", x);
    char *dot = strchr(s, '.');
    if (dot) {
        char *end = s + strlen(s);
        while (end > dot && (end[-1] == '0' || end[-1] == '.'))
            *--end = '\0';
    }
    if (!strcmp(s, "-0"))
        strcpy(s, "0");
    api_buf_puts(out, s);
}

void api_svg_put_fmt(api_buf *out, const char *fmt, ...) {
    char s[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    if (n > 0)
        api_buf_append(out, s, (size_t)n < sizeof s ? (size_t)n : sizeof s - 1);
}

void api_svg_put_num_attr(api_buf *out, const char *name, double x) {
    api_svg_put_fmt(out, " %s=\"", name);
    api_svg_put_num(out, x);
    api_buf_putc(out, '"');
}
