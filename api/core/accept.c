/*
 * accept.c — Accept header negotiation (see accept.h; RFC 9110 sections
 * 12.5.1 and 12.4.2 for the grammar):
 *   Accept = #( media-range [ weight ] )
 *   media-range = ( "* / *" / ( type "/" "*" ) / ( type "/" subtype ) )
 *                 *( OWS ";" OWS parameter )
 *   weight = OWS ";" OWS "q=" qvalue
 *   qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
 */
#include "accept.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "problem.h"

/* RFC 9110 token characters (tchar). */
static int is_tchar(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9'))
        return 1;
    return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static const char *skip_ows(const char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* s at an opening '"': the position after the closing one, or NULL when
 * the string is unterminated. A backslash escapes the next byte. */
static const char *skip_quoted(const char *s) {
    s++;
    while (*s && *s != '"')
        s += (*s == '\\' && s[1]) ? 2 : 1;
    return *s ? s + 1 : NULL;
}

int api_qvalue_parse(const char *s, size_t n) {
    if (n == 0 || (s[0] != '0' && s[0] != '1'))
        return -1;
    int q = (s[0] - '0') * 1000;
    if (n == 1)
        return q;
    if (s[1] != '.' || n > 5)
        return -1;
    int scale = 100;
    for (size_t i = 2; i < n; i++, scale /= 10) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        q += (s[i] - '0') * scale;
    }
    return q <= 1000 ? q : -1;
}

/* One media range of the header, as parsed by next_range. */
typedef struct {
    const char *type, *subtype;
    size_t type_len, subtype_len;
    int has_params; /* parameters other than q */
    int q;          /* thousandths; -1 when the range is malformed */
} media_range;

/* Parse the list element starting at s into r; returns the position after
 * it (at the ',' or the end). Quoted parameter values may hold commas. */
static const char *next_range(const char *s, media_range *r) {
    memset(r, 0, sizeof *r);
    r->q = 1000;
    int seen_q = 0;
    s = skip_ows(s);
    r->type = s;
    while (is_tchar(*s))
        s++;
    r->type_len = (size_t)(s - r->type);
    int ok = r->type_len > 0 && *s == '/';
    if (ok) {
        r->subtype = ++s;
        while (is_tchar(*s))
            s++;
        r->subtype_len = (size_t)(s - r->subtype);
        ok = r->subtype_len > 0;
    }
    s = skip_ows(s);
    while (ok && *s == ';') {
        s = skip_ows(s + 1);
        const char *name = s;
        while (is_tchar(*s))
            s++;
        size_t name_len = (size_t)(s - name);
        if (name_len == 0 || *s != '=') {
            ok = 0;
            break;
        }
        const char *value = ++s;
        if (*s == '"') {
            const char *end = skip_quoted(s);
            if (!end) {
                s += strlen(s);
                ok = 0;
                break;
            }
            s = end;
        } else {
            while (is_tchar(*s))
                s++;
        }
        size_t value_len = (size_t)(s - value);
        if (name_len == 1 && (name[0] == 'q' || name[0] == 'Q')) {
            r->q = api_qvalue_parse(value, value_len);
            ok = r->q >= 0;
            seen_q = 1;
        } else if (!seen_q) {
            /* a media type parameter; accept-ext ones after q are ignored */
            r->has_params = 1;
        }
        s = skip_ows(s);
    }
    if (*s != ',' && *s != '\0')
        ok = 0;
    /* skip the rest of a malformed element, quoted strings whole */
    while (*s && *s != ',') {
        const char *end = *s == '"' ? skip_quoted(s) : s + 1;
        s = end ? end : s + strlen(s);
    }
    if (!ok)
        r->q = -1;
    return s;
}

static int name_is(const char *s, size_t n, const char *want, size_t want_n) {
    return n == want_n && strncasecmp(s, want, n) == 0;
}

int api_accept_quality(const char *accept, const char *type) {
    if (!accept)
        return 1000;
    const char *slash = strchr(type, '/');
    size_t tlen = slash ? (size_t)(slash - type) : strlen(type);
    const char *sub = slash ? slash + 1 : "";
    size_t slen = strlen(sub);
    int best_rank = -1, best_q = 0;
    const char *s = accept;
    while (*s) {
        media_range r;
        s = next_range(s, &r);
        if (*s == ',')
            s++;
        if (r.q < 0)
            continue;
        int rank;
        int any_type = name_is(r.type, r.type_len, "*", 1);
        int any_sub = name_is(r.subtype, r.subtype_len, "*", 1);
        if (any_type && any_sub)
            rank = 0;
        else if (any_type)
            continue; /* "* / subtype" is not a media range */
        else if (!name_is(r.type, r.type_len, type, tlen))
            continue;
        else if (any_sub)
            rank = 1;
        else if (name_is(r.subtype, r.subtype_len, sub, slen))
            rank = r.has_params ? 3 : 2;
        else
            continue;
        if (rank > best_rank || (rank == best_rank && r.q > best_q)) {
            best_rank = rank;
            best_q = r.q;
        }
    }
    return best_rank < 0 ? 0 : best_q;
}

int api_accept_prefers_svg(const char *accept) {
    if (!accept)
        return 0;
    return api_accept_quality(accept, API_CT_SVG) >
           api_accept_quality(accept, API_CT_JSON);
}
