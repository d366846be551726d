/*
 * framing.c — request-head framing rules (see framing.h).
 */
#include "framing.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* RFC 9110 section 5.6.2: tchar. */
static int is_token_char(unsigned char c) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
        (c >= 'A' && c <= 'Z'))
        return 1;
    return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int is_token(const char *s) {
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (!is_token_char((unsigned char)*s))
            return 0;
    return 1;
}

/* Content-Length = 1*DIGIT (RFC 9110 section 8.6), with optional
 * whitespace around it. Returns 0 with *v (saturated at 2^64 - 1), or -1. */
static int parse_length(const char *s, unsigned long long *v) {
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s < '0' || *s > '9')
        return -1;
    *v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        *v = *v > (~0ULL - d) / 10 ? ~0ULL : *v * 10 + d;
    }
    while (*s == ' ' || *s == '\t')
        s++;
    return *s == '\0' ? 0 : -1;
}

/* libmicrohttpd 0.9.75 joins an obs-fold line to the field's name:
 * "Content-Length: 4\r\n 5" arrives as "Content-Length5: 4", and
 * "Content-Length:\r\n 45" as "Content-Length45" with an empty value, so
 * the body is framed as having no length; "Host:\r\n x" arrives as a
 * field "Hostx" with no value, beside which a second Host would pass. A
 * name that starts with a framing field's and goes on is such a fold, and
 * so is one that starts with "Host" and has no value ("Host: a\r\n b"
 * arrives as "Hostb: a", which cannot be told from a field of that
 * name). */
static int is_folded_framing(const char *name, const char *value) {
    static const char *const framing[] = {"Content-Length",
                                          "Transfer-Encoding"};
    for (size_t i = 0; i < sizeof framing / sizeof framing[0]; i++) {
        size_t n = strlen(framing[i]);
        if (strlen(name) > n && !strncasecmp(name, framing[i], n))
            return 1;
    }
    /* other fields begin with "Host" ("Hostname: y"): only a name with no
     * value is taken for a fold */
    return strlen(name) > 4 && !strncasecmp(name, "Host", 4) &&
           (value == NULL || *value == '\0');
}

/* RFC 3986 section 3.2.2: a reg-name's bytes (unreserved, pct-encoded as
 * '%' and hex digits, sub-delims), and an IP-literal's between brackets
 * (hex digits, ':' and '.', and IPvFuture's 'v' and sub-delims). */
static int is_host_char(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') ||
           (c != '\0' && strchr("-._~%!$&'()*+,;=", c) != NULL);
}

/* Host = uri-host [ ":" port ] (RFC 9112 section 3.2), with optional
 * whitespace around it; an empty value is allowed (an empty authority). */
static int is_host_value(const char *v) {
    while (*v == ' ' || *v == '\t')
        v++;
    if (*v == '[') { /* IP-literal */
        for (v++; *v != ']'; v++)
            if (*v != ':' && !is_host_char((unsigned char)*v))
                return 0;
        v++;
    } else {
        while (is_host_char((unsigned char)*v))
            v++;
    }
    if (*v == ':')
        for (v++; *v >= '0' && *v <= '9'; v++)
            ;
    while (*v == ' ' || *v == '\t')
        v++;
    return *v == '\0';
}

void srv_framing_init(srv_framing *f) {
    memset(f, 0, sizeof *f);
}

void srv_framing_add(srv_framing *f, const char *name, const char *value) {
    if (f->detail != NULL)
        return;
    if (!is_token(name)) {
        f->detail = "a header field name holds whitespace or a character "
                    "that is not a token character (RFC 9112 section 5.1: "
                    "no whitespace before the colon)";
    } else if (is_folded_framing(name, value)) {
        f->detail = "a folded header line (obs-fold) in the framing headers "
                    "is not accepted (RFC 9112 section 5.2)";
    } else if (!strcasecmp(name, "Host")) {
        f->hosts++;
        if (!is_host_value(value ? value : ""))
            f->detail = "the Host header is not a host name or address with "
                        "an optional :port (RFC 9112 section 3.2, RFC 3986 "
                        "section 3.2.2)";
    } else if (!strcasecmp(name, "Transfer-Encoding")) {
        f->codings++;
    } else if (!strcasecmp(name, "Content-Length")) {
        unsigned long long v = 0;
        if (parse_length(value ? value : "", &v))
            f->detail = "Content-Length must be one decimal number (RFC "
                        "9112 section 6.3)";
        else if (f->lengths++ > 0 && v != f->length)
            f->detail = "Content-Length is given twice with different values "
                        "(RFC 9112 section 6.3)";
        f->length = v;
        f->has_length = f->detail == NULL;
    }
}

int srv_framing_path_has_nul(const char *target, size_t len) {
    for (size_t i = 0; i + 2 < len; i++)
        if (target[i] == '%' && target[i + 1] == '0' && target[i + 2] == '0')
            return 1;
    return 0;
}

static int is_separator(char c) {
    return c == '\0' || c == '\r' || c == '\n' || c == ' ' || c == '\t' ||
           c == ':';
}

int srv_framing_head_hides(const char *head, size_t size, const srv_span *spans,
                           size_t n) {
    if (head == NULL || size == 0)
        return 0;
    unsigned char *read = calloc(size, 1); /* 1: a byte of some part */
    if (read == NULL)
        return 0;
    int inside = 1;
    for (size_t i = 0; i < n && inside; i++) {
        const char *s = spans[i].start;
        if (s == NULL)
            continue;
        inside = s >= head && spans[i].len <= size &&
                 (size_t)(s - head) <= size - spans[i].len;
        if (inside)
            memset(read + (s - head), 1, spans[i].len);
    }
    int hides = 0;
    for (size_t i = 0; inside && i < size && !hides; i++)
        hides = !read[i] && !is_separator(head[i]);
    free(read);
    return hides;
}

int srv_framing_request_line_nul(const char *method, const char *target,
                                 size_t target_len, const char *version,
                                 const char *next_line) {
    if (method == NULL || target == NULL || version == NULL)
        return 0;
    const char *method_end = method + strlen(method);
    if (!(method_end < target && target + target_len < version))
        return 0; /* not one buffer in order: a copy */
    for (const char *p = method_end + 1; p < target; p++)
        if (*p != ' ' && *p != '\t') /* a NUL after the method */
            return 1;
    if (*method_end != '\0' || target + target_len + 1 != version)
        return 1; /* the target ends at a NUL before its SP */
    const char *version_end = version + strlen(version);
    if (next_line == NULL || next_line <= version_end + 2)
        return 0;
    /* more than the line end's two NULs; text between is a header line
     * whose name lies elsewhere (a folded one), not a NUL */
    for (const char *p = version_end; p < next_line; p++)
        if (*p != '\0')
            return 0;
    return 1;
}

void srv_framing_finish(srv_framing *f, const char *version) {
    if (f->detail != NULL)
        return;
    if (f->codings > 1)
        f->detail = "Transfer-Encoding is given more than once: send one "
                    "line, \"Transfer-Encoding: chunked\" (RFC 9112 section "
                    "6.1)";
    else if (f->codings && f->lengths)
        f->detail = "Transfer-Encoding and Content-Length together: the "
                    "body's end would be ambiguous (RFC 9112 section 6.1)";
    else if ((version == NULL || !strcmp(version, "HTTP/1.1")) && f->hosts != 1)
        f->detail = f->hosts ? "HTTP/1.1 needs exactly one Host header, not "
                               "several (RFC 9112 section 3.2)"
                             : "HTTP/1.1 needs a Host header (RFC 9112 "
                               "section 3.2)";
}

const char *srv_framing_target_path(const char *target) {
    size_t scheme = !strncasecmp(target, "http://", 7)    ? 7
                    : !strncasecmp(target, "https://", 8) ? 8
                                                          : 0;
    if (scheme == 0)
        return target;
    const char *path = strchr(target + scheme, '/');
    return path != NULL ? path : "/";
}
