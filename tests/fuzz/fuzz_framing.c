/*
 * fuzz_framing.c — libFuzzer target: the request-head framing rules of
 * server/framing.c (RFC 9112 sections 3.2, 5.1, 5.2, 6.1–6.3), fed one
 * header line at a time as libmicrohttpd hands them over.
 *
 * The input is a request head as text: the first line is the request line
 * ("POST /attention/dot HTTP/1.1"; its last word is the version, its
 * middle the target, an empty line gives no version, which counts as
 * HTTP/1.1), then one header line per line ("\n" or "\r\n"), split at the
 * first colon into name and value (leading blanks of the value dropped, as
 * libmicrohttpd does; a line without a colon is a name with no value). An
 * empty line ends the head; what follows (a body) is not read. framing.c
 * lives in the server, not in libapi.a or libattn.a, so it is included
 * here whole.
 *
 * Invariants:
 *   - no crash, no sanitizer report, for any bytes;
 *   - the verdict is NULL or one of the documented reasons (framing.h),
 *     each naming its RFC 9112 section;
 *   - the same head checked twice gives the same verdict and the same
 *     counts, length included;
 *   - a second, independent reading of the rules (below) agrees: the head
 *     is refused exactly when it breaks a rule, the reason is a rule it
 *     breaks (the first broken line rule when a line breaks one), and an
 *     accepted head reports its Content-Length (saturated at 2^64 - 1) and
 *     its counts of Content-Length, Transfer-Encoding and Host lines. So a
 *     head with exactly one valid Content-Length, one Host and nothing odd
 *     is accepted, and one with both Content-Length and Transfer-Encoding
 *     is always refused;
 *   - srv_framing_target_path gives a pointer into the target, or "/",
 *     and for an http:// or https:// target a path starting with "/".
 */
#include <ctype.h>
#include <string.h>

#include "../../server/framing.c"
#include "fuzz.h"

#define FRAMING_MAX_LINES 512

/* The reasons framing.h documents, told apart by their wording. */
enum {
    R_NONE,
    R_NAME,     /* a name that is not a token (5.1) */
    R_FOLD,     /* an obs-fold in a framing header (5.2) */
    R_CL,       /* Content-Length not one decimal number (6.3) */
    R_CL_DIFF,  /* Content-Length twice, different values (6.3) */
    R_TE_MULTI, /* Transfer-Encoding more than once (6.1) */
    R_TE_CL,    /* Transfer-Encoding with Content-Length (6.1) */
    R_NO_HOST,  /* HTTP/1.1 without Host (3.2) */
    R_HOSTS,    /* HTTP/1.1 with several Host lines (3.2) */
    R_HOST,     /* a Host value that is not host[:port] (3.2) */
    R_UNKNOWN
};

static const char *const framing_reason_names[] = {
    "accepted",         "name not a token",  "obs-fold",
    "Content-Length",   "differing lengths", "Transfer-Encoding twice",
    "TE with CL",       "no Host",           "several Host",
    "Host not host[:port]", "an unknown reason"};

static int framing_reason(const char *detail) {
    static const struct {
        const char *words;
        int reason;
    } known[] = {
        {"not a token character", R_NAME},
        {"(obs-fold)", R_FOLD},
        {"must be one decimal number", R_CL},
        {"twice with different values", R_CL_DIFF},
        {"Transfer-Encoding is given more than once", R_TE_MULTI},
        {"Transfer-Encoding and Content-Length together", R_TE_CL},
        {"needs a Host header", R_NO_HOST},
        {"exactly one Host header", R_HOSTS},
        {"the Host header is not a host name", R_HOST},
    };
    if (detail == NULL)
        return R_NONE;
    if (strstr(detail, "(RFC 9112 section ") == NULL)
        return R_UNKNOWN;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strstr(detail, known[i].words) != NULL)
            return known[i].reason;
    return R_UNKNOWN;
}

/* The second reading of the rules: what a head breaks. */
typedef struct {
    int line_reason; /* the first line rule broken, R_NONE if none */
    size_t lengths, codings, hosts;
    char length[24]; /* the first Content-Length's digits, no leading 0s */
    int saturated;   /* it is 2^64 - 1 or more */
    unsigned long long value;
} framing_model;

/* name equal to want, ASCII case ignored */
static int model_is(const char *name, const char *want) {
    for (; *name && *want; name++, want++)
        if (tolower((unsigned char)*name) != tolower((unsigned char)*want))
            return 0;
    return *name == '\0' && *want == '\0';
}

/* want is a proper prefix of name, ASCII case ignored */
static int model_extends(const char *name, const char *want) {
    for (; *want; name++, want++)
        if (*name == '\0' ||
            tolower((unsigned char)*name) != tolower((unsigned char)*want))
            return 0;
    return *name != '\0';
}

/* RFC 9110 section 5.6.2 token: 1*tchar */
static int model_token(const char *s) {
    static const char tchar_extra[] = "!#$%&'*+-.^_`|~";
    if (*s == '\0')
        return 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x80 || !(isalnum(c) || memchr(tchar_extra, c, 15)))
            return 0;
    }
    return 1;
}

/* OWS 1*DIGIT OWS. Writes the digits without leading zeros ("0" for
 * zero; at most 20 kept, more means beyond 2^64) and 1 when the value
 * is 2^64 - 1 or more. Returns 0, or -1 when it is not one number. */
static int model_length(const char *s, char out[24], int *saturated,
                        unsigned long long *value) {
    static const char max[] = "18446744073709551615"; /* 2^64 - 1 */
    size_t n = 0, digits = 0;
    while (*s == ' ' || *s == '\t')
        s++;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        if (n == 0 && *s == '0')
            continue;
        if (n < 21)
            out[n] = *s;
        n++;
    }
    while (*s == ' ' || *s == '\t')
        s++;
    if (digits == 0 || *s != '\0')
        return -1;
    if (n == 0)
        out[n++] = '0';
    out[n < 21 ? n : 21] = '\0';
    *saturated = n > 20 || (n == 20 && strcmp(out, max) >= 0);
    *value = 0;
    if (*saturated)
        *value = ~0ULL;
    else
        for (size_t i = 0; i < n; i++)
            *value = *value * 10 + (unsigned)(out[i] - '0');
    return 0;
}

/* RFC 3986 section 3.2.2 read again: host = IP-literal / IPv4address /
 * reg-name, whose bytes are unreserved, '%' hex escapes' and sub-delims
 * (an IP-literal: those, ':' and the brackets); then ":" port. Blanks
 * around it are the field's optional whitespace. */
static int model_host(const char *v) {
    static const char reg[] = "abcdefghijklmnopqrstuvwxyz"
                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                              "-._~%!$&'()*+,;=";
    size_t i = strspn(v, " \t");
    size_t end = strlen(v);
    while (end > i && (v[end - 1] == ' ' || v[end - 1] == '\t'))
        end--;
    if (v[i] == '[') {
        size_t close = i + 1;
        while (close < end && v[close] != ']') {
            if (v[close] != ':' && strchr(reg, v[close]) == NULL)
                return 0;
            close++;
        }
        if (close == end)
            return 0; /* no closing bracket */
        i = close + 1;
    } else {
        while (i < end && v[i] != ':' && strchr(reg, v[i]) != NULL)
            i++;
    }
    if (i < end && v[i] == ':')
        for (i++; i < end; i++)
            if (v[i] < '0' || v[i] > '9')
                return 0;
    return i == end;
}

static void model_line(framing_model *m, const char *name, const char *value) {
    if (m->line_reason != R_NONE)
        return;
    if (!model_token(name)) {
        m->line_reason = R_NAME;
    } else if (model_extends(name, "content-length") ||
               model_extends(name, "transfer-encoding") ||
               (model_extends(name, "host") && (!value || !*value))) {
        m->line_reason = R_FOLD;
    } else if (model_is(name, "host")) {
        m->hosts++;
        if (!model_host(value ? value : ""))
            m->line_reason = R_HOST;
    } else if (model_is(name, "transfer-encoding")) {
        m->codings++;
    } else if (model_is(name, "content-length")) {
        char digits[24];
        int saturated;
        unsigned long long v;
        if (model_length(value ? value : "", digits, &saturated, &v) != 0) {
            m->line_reason = R_CL;
        } else if (m->lengths++ == 0) {
            memcpy(m->length, digits, sizeof digits);
            m->saturated = saturated;
            m->value = v;
        } else if (strcmp(digits, m->length) != 0 &&
                   !(saturated && m->saturated)) {
            /* values that both reach 2^64 - 1 compare equal: framing.h
             * keeps a length saturated there */
            m->line_reason = R_CL_DIFF;
        }
    }
}

/* The head rules broken (a bit per reason), given no line rule was. */
static unsigned model_head(const framing_model *m, const char *version) {
    unsigned broken = 0;
    if (m->codings > 1)
        broken |= 1u << R_TE_MULTI;
    if (m->codings && m->lengths)
        broken |= 1u << R_TE_CL;
    if (version == NULL || !strcmp(version, "HTTP/1.1")) {
        if (m->hosts == 0)
            broken |= 1u << R_NO_HOST;
        else if (m->hosts > 1)
            broken |= 1u << R_HOSTS;
    }
    return broken;
}

typedef struct {
    char *name;
    char *value; /* NULL: the line had no colon */
} framing_line;

static void framing_run(srv_framing *f, const framing_line *lines, size_t n,
                        const char *version) {
    srv_framing_init(f);
    for (size_t i = 0; i < n; i++)
        srv_framing_add(f, lines[i].name, lines[i].value);
    srv_framing_finish(f, version);
}

static void check_target(const char *target) {
    const char *path = srv_framing_target_path(target);
    size_t len = strlen(target);
    int inside = path >= target && path <= target + len;
    fuzz_check(inside || !strcmp(path, "/"),
               "target path of \"%s\" is neither in it nor \"/\"", target);
    if (!strncasecmp(target, "http://", 7) ||
        !strncasecmp(target, "https://", 8))
        fuzz_check(path[0] == '/', "absolute-form \"%s\" gave path \"%s\"",
                   target, path);
    else
        fuzz_check(path == target, "origin-form \"%s\" gave path \"%s\"",
                   target, path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* one NUL-terminated copy; each line becomes a C string in place, so a
     * NUL inside a line ends its name or value as it would in C */
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    framing_line lines[FRAMING_MAX_LINES];
    size_t n = 0;
    char *version = NULL, *target = NULL;

    char *p = text, *end = text + size;
    for (int first = 1; p <= end && n < FRAMING_MAX_LINES; first = 0) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *stop = nl != NULL ? nl : end;
        if (stop > p && stop[-1] == '\r')
            stop[-1] = '\0';
        *stop = '\0';
        if (first) {
            /* METHOD SP TARGET SP VERSION: the version is the last word */
            char *last = strrchr(p, ' ');
            char *sp = strchr(p, ' ');
            version = last != NULL ? last + 1 : (*p ? p : NULL);
            if (sp != NULL && sp != last) {
                *last = '\0';
                target = sp + 1;
            }
        } else {
            if (*p == '\0')
                break; /* the end of the head */
            char *colon = strchr(p, ':');
            lines[n].name = p;
            lines[n].value = NULL;
            if (colon != NULL) {
                *colon = '\0';
                char *v = colon + 1;
                while (*v == ' ' || *v == '\t')
                    v++;
                lines[n].value = v;
            }
            n++;
        }
        if (nl == NULL)
            break;
        p = nl + 1;
    }

    srv_framing a, b;
    framing_run(&a, lines, n, version);
    framing_run(&b, lines, n, version);
    int reason = framing_reason(a.detail);
    fuzz_check(reason != R_UNKNOWN, "undocumented verdict \"%s\"", a.detail);
    fuzz_check(a.detail == b.detail && a.has_length == b.has_length &&
                   a.length == b.length && a.lengths == b.lengths &&
                   a.codings == b.codings && a.hosts == b.hosts,
               "the same head checked twice: \"%s\" then \"%s\"",
               a.detail ? a.detail : "accepted",
               b.detail ? b.detail : "accepted");

    framing_model m;
    memset(&m, 0, sizeof m);
    for (size_t i = 0; i < n; i++)
        model_line(&m, lines[i].name, lines[i].value);
    if (m.line_reason != R_NONE) {
        fuzz_check(
            reason == m.line_reason, "%s where a line breaks the %s rule",
            framing_reason_names[reason], framing_reason_names[m.line_reason]);
    } else {
        unsigned broken = model_head(&m, version);
        if (broken == 0)
            fuzz_check(reason == R_NONE,
                       "%s, for a head that breaks no rule (%zu CL, %zu TE, "
                       "%zu Host, version %s)",
                       framing_reason_names[reason], m.lengths, m.codings,
                       m.hosts, version ? version : "none");
        else
            fuzz_check(reason != R_NONE && (broken >> reason & 1u),
                       "%s for a head that breaks rules 0x%x (%zu CL, %zu "
                       "TE, %zu Host, version %s)",
                       framing_reason_names[reason], broken, m.lengths,
                       m.codings, m.hosts, version ? version : "none");
        if (m.codings && m.lengths)
            fuzz_check(a.detail != NULL, "Content-Length with "
                                         "Transfer-Encoding accepted");
    }
    if (a.detail == NULL) {
        fuzz_check(a.lengths == m.lengths && a.codings == m.codings &&
                       a.hosts == m.hosts,
                   "counts CL %zu TE %zu Host %zu, expected %zu %zu %zu",
                   a.lengths, a.codings, a.hosts, m.lengths, m.codings,
                   m.hosts);
        fuzz_check(a.has_length == (m.lengths > 0),
                   "has_length %d with %zu Content-Length lines", a.has_length,
                   m.lengths);
        fuzz_check(!a.has_length || a.length == m.value,
                   "length %llu for Content-Length %s", a.length, m.length);
    }
    if (target != NULL)
        check_target(target);
    free(text);
    return 0;
}
