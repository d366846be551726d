/*
 * problem.c — RFC 9457 problem details for every error the request layer
 * answers (see problem.h). The code -> status -> title mapping lives in
 * the two tables below and nowhere else.
 */
#include "problem.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastpath.h"
#include "utf8.h"

static const struct {
    const char *name;
    int status;
} error_table[API_E_COUNT] = {
    [API_E_NONE] = {"internal", 500},
    [API_E_INVALID_JSON] = {"invalid_json", 400},
    [API_E_UNAUTHORIZED] = {"unauthorized", 401},
    [API_E_NOT_FOUND] = {"not_found", 404},
    [API_E_METHOD_NOT_ALLOWED] = {"method_not_allowed", 405},
    [API_E_PAYLOAD_TOO_LARGE] = {"payload_too_large", 413},
    [API_E_UNSUPPORTED_MEDIA_TYPE] = {"unsupported_media_type", 415},
    [API_E_MISSING_FIELD] = {"missing_field", 422},
    [API_E_UNKNOWN_FIELD] = {"unknown_field", 422},
    [API_E_WRONG_TYPE] = {"wrong_type", 422},
    [API_E_RAGGED_ARRAY] = {"ragged_array", 422},
    [API_E_SHAPE_MISMATCH] = {"shape_mismatch", 422},
    [API_E_INVALID_VALUE] = {"invalid_value", 422},
    [API_E_RATE_LIMITED] = {"rate_limited", 429},
    [API_E_OVERLOADED] = {"overloaded", 503},
    [API_E_INTERNAL] = {"internal", 500},
    [API_E_NO_ROOM] = {"overloaded", 503},
};

/* RFC 9110 section 15 reason phrases of every status attnd answers. */
static const struct {
    int status;
    const char *title;
} title_table[] = {
    {200, "OK"},
    {204, "No Content"},
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {408, "Request Timeout"},
    {413, "Content Too Large"},
    {414, "URI Too Long"},
    {415, "Unsupported Media Type"},
    {422, "Unprocessable Content"},
    {429, "Too Many Requests"},
    {431, "Request Header Fields Too Large"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {503, "Service Unavailable"},
};

const char *api_error_name(api_error code) {
    if (code <= API_E_NONE || code >= API_E_COUNT)
        return "internal";
    return error_table[code].name;
}

int api_error_status(api_error code) {
    if (code <= API_E_NONE || code >= API_E_COUNT)
        return 500;
    return error_table[code].status;
}

const char *api_status_title(int status) {
    for (size_t i = 0; i < sizeof title_table / sizeof title_table[0]; i++)
        if (title_table[i].status == status)
            return title_table[i].title;
    return "Error";
}

/* When vsnprintf cut the text (wanted >= cap), drop a trailing UTF-8
 * sequence that the cut left incomplete. */
static void cut_utf8(char *s, size_t cap, int wanted) {
    if (wanted < 0 || (size_t)wanted < cap)
        return;
    size_t end = cap - 1; /* s[end] is the NUL */
    size_t k = end;
    while (k > 0 && ((unsigned char)s[k - 1] & 0xC0) == 0x80)
        k--;
    if (k == 0)
        return;
    unsigned char lead = (unsigned char)s[k - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (k - 1 + need > end)
        s[k - 1] = '\0';
}

int api_fail(api_problem *p, api_error code, const char *pointer,
             const char *fmt, ...) {
    if (p->code != API_E_NONE)
        return -1;
    p->code = code;
    p->has_pointer = pointer != NULL;
    p->pointer[0] = '\0';
    if (pointer) /* whole segments only (pointer.h) */
        api_pointer_join(p->pointer, sizeof p->pointer, "", pointer);
    va_list ap;
    va_start(ap, fmt);
    int wanted = vsnprintf(p->detail, sizeof p->detail, fmt, ap);
    va_end(ap);
    cut_utf8(p->detail, sizeof p->detail, wanted);
    p->has_expected = 0;
    p->has_got = 0;
    return -1;
}

void api_problem_shapes(api_problem *p, const long long *expected,
                        size_t expected_rank, const long long *got,
                        size_t got_rank) {
    if (expected) {
        p->has_expected = 1;
        p->expected_rank =
            expected_rank > API_SHAPE_MAX ? API_SHAPE_MAX : expected_rank;
        memcpy(p->expected, expected, p->expected_rank * sizeof *expected);
    }
    if (got) {
        p->has_got = 1;
        p->got_rank = got_rank > API_SHAPE_MAX ? API_SHAPE_MAX : got_rank;
        memcpy(p->got, got, p->got_rank * sizeof *got);
    }
}

void api_problem_shapes_z(api_problem *p, const long long *expected,
                          size_t expected_rank, const size_t *got,
                          size_t got_rank) {
    long long g[API_SHAPE_MAX];
    size_t n = got_rank > API_SHAPE_MAX ? API_SHAPE_MAX : got_rank;
    for (size_t i = 0; got && i < n; i++)
        g[i] = got[i] > (size_t)LLONG_MAX ? LLONG_MAX : (long long)got[i];
    api_problem_shapes(p, expected, expected_rank, got ? g : NULL, n);
}

const char *api_plural(size_t n, const char *one, const char *many) {
    return n == 1 ? one : many;
}

/* Whether the len bytes of s are only JSON whitespace (RFC 8259). */
static int only_whitespace(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
            return 0;
    return 1;
}

static int is_letter(char c) {
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

/* Whether s[0 .. len) starts with the whole word (lower case), ignoring
 * case: "inf" but not "info". */
static int starts_with_word(const char *s, size_t len, const char *word) {
    size_t n = strlen(word);
    if (len < n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((s[i] | 0x20) != word[i])
            return 0;
    return len == n || !is_letter(s[n]);
}

/* The non-JSON literal (NaN, Infinity, inf, with a sign) that jansson
 * stopped at, or NULL: its invalid token is "NaN", or the sign alone
 * with the word after it (the position is past what it read). */
static const char *non_finite_literal(const json_error_t *error,
                                      const char *body, size_t len) {
    static const char *const words[] = {"nan", "infinity", "inf"};
    const char *near = strstr(error->text, "invalid token near '");
    if (near == NULL || error->position < 0 || (size_t)error->position > len)
        return NULL;
    near += strlen("invalid token near '");
    size_t at = (size_t)error->position;
    if (*near == '-' || *near == '+')
        near++;
    else /* the token itself: step back over it */
        while (at > 0 && is_letter(body[at - 1]))
            at--;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (starts_with_word(near, strlen(near), words[i]) ||
            (*near == '\'' && starts_with_word(body + at, len - at, words[i])))
            return words[i];
    return NULL;
}

/* The offset of the first byte of body[0 .. len) that starts no valid
 * UTF-8 sequence (RFC 3629), or len when all of it is UTF-8. */
static size_t first_non_utf8(const char *body, size_t len) {
    size_t at = 0;
    while (at < len) {
        size_t n = api_utf8_len((const unsigned char *)body + at, len - at);
        if (n == 0)
            return at;
        at += n;
    }
    return len;
}

/* The number literal that ends where jansson stopped (its position
 * counts the bytes read, the number's last one included), as its offset
 * into *at and its length into *n; 0 when none ends there. jansson quotes
 * a token only up to 20 bytes, and a widened big integer not at all
 * (big_integers.h), so the body is read instead. */
static int number_at(const json_error_t *error, const char *body, size_t len,
                     size_t *at, size_t *n) {
    if (error->position < 1 || (size_t)error->position > len)
        return 0;
    size_t end = (size_t)error->position, start = end;
    while (start > 0 && strchr("0123456789+-.eE", body[start - 1]) &&
           body[start - 1] != '\0')
        start--;
    *at = start;
    *n = end - start;
    return *n > 0;
}

/* The ']' or '}' jansson stopped at when a comma comes right before it
 * (blanks between), or 0: JSON (RFC 8259) has no trailing comma, and
 * jansson calls it an unexpected token or a missing string. Its position
 * counts the bytes read, the closing one included. */
static char trailing_comma(const json_error_t *error, const char *body,
                           size_t len) {
    if (json_error_code(error) != json_error_invalid_syntax ||
        error->position < 2 || (size_t)error->position > len)
        return 0;
    size_t at = (size_t)error->position - 1;
    char close = body[at];
    if (close != ']' && close != '}')
        return 0;
    while (at > 0 && only_whitespace(body + at - 1, 1))
        at--;
    return at > 0 && body[at - 1] == ',' ? close : 0;
}

/* The token jansson met where it expected ',' or the closing bracket,
 * when it starts a value (jansson: "'}' expected near '\"keys\"'"), or
 * NULL: two members or elements with no comma between them. */
static const char *missing_comma(const json_error_t *error) {
    static const char *const expected[] = {"'}' expected near '",
                                           "']' expected near '"};
    if (json_error_code(error) != json_error_invalid_syntax)
        return NULL;
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(expected[i]);
        if (strncmp(error->text, expected[i], n) == 0 &&
            error->text[n] != '\0' &&
            strchr("\"-0123456789[{tfn", error->text[n]) != NULL)
            return error->text + n - 1; /* the token, quoted as jansson does */
    }
    return NULL;
}

/* What is wrong with the body as text, before its grammar: empty, a byte
 * order mark, a byte that is not UTF-8. Returns 1 when p is filled. */
static int text_error(api_problem *p, const json_error_t *error,
                      const char *body, size_t len) {
    if (body == NULL || only_whitespace(body, len)) {
        api_fail(p, API_E_INVALID_JSON, NULL,
                 "the body is empty: this route reads one JSON object "
                 "{...} of its fields (listed in /openapi.json), sent with "
                 "Content-Type: application/json");
        return 1;
    }
    /* RFC 8259 section 8.1: no byte order mark before JSON text (an
     * editor's "UTF-8 with BOM", PowerShell's Out-File) */
    if (len >= 3 && memcmp(body, "\xEF\xBB\xBF", 3) == 0) {
        api_fail(p, API_E_INVALID_JSON, NULL,
                 "the body is not valid JSON: it starts with a byte order "
                 "mark (EF BB BF); send the JSON without it");
        return 1;
    }
    if (json_error_code(error) == json_error_invalid_utf8) {
        size_t at = first_non_utf8(body, len);
        if (at < len) {
            api_fail(p, API_E_INVALID_JSON, NULL,
                     "the body is not valid JSON: it must be UTF-8, and byte "
                     "0x%02x at offset %zu (line %d) is not: encode the text "
                     "as UTF-8 (a lone byte from 0x80 up is often Latin-1)",
                     (unsigned char)body[at], at, error->line);
            return 1;
        }
    }
    return 0;
}

/* The usual slips of JSON written by hand: a number beyond the doubles, a
 * trailing comma, a missing comma, NaN or Infinity. Returns 1 when p is
 * filled. */
static int slip_error(api_problem *p, const json_error_t *error,
                      const char *body, size_t len) {
    size_t at, n;
    if (json_error_code(error) == json_error_numeric_overflow &&
        strstr(error->text, "real number overflow") &&
        number_at(error, body, len, &at, &n)) {
        api_fail(p, API_E_INVALID_JSON, NULL,
                 "the body is not valid JSON: the number %.*s%s does not fit "
                 "a double (line %d, column %d, byte %d): it is beyond the "
                 "double range, about ±1.8e308; send a finite double",
                 (int)(n > 24 ? 24 : n), body + at, n > 24 ? "..." : "",
                 error->line, error->column, error->position);
        return 1;
    }
    char close = trailing_comma(error, body, len);
    if (close) {
        api_fail(p, API_E_INVALID_JSON, NULL,
                 "the body is not valid JSON: a comma before '%c' (line %d, "
                 "column %d, byte %d): JSON allows no trailing comma; delete "
                 "it",
                 close, error->line, error->column, error->position);
        return 1;
    }
    const char *token = missing_comma(error);
    if (token) {
        api_fail(p, API_E_INVALID_JSON, NULL,
                 "the body is not valid JSON: a comma is missing before %s "
                 "(line %d, column %d, byte %d): JSON puts one between two "
                 "members of an object and between two elements of an array",
                 token, error->line, error->column, error->position);
        return 1;
    }
    if (non_finite_literal(error, body, len)) {
        api_fail(p, API_E_INVALID_JSON, NULL,
                 "the body is not valid JSON: JSON has no NaN or Infinity "
                 "(line %d, column %d, byte %d). Send finite numbers (mask "
                 "keys with valid_lens, causal or attn_mask, where null is "
                 "-inf; a masked score in an answer is null); Python's "
                 "json.dumps(x, "
                 "allow_nan=False) finds them",
                 error->line, error->column, error->position);
        return 1;
    }
    return 0;
}

/* Python's text for JSON: str() or repr() of a dict (single quotes, True,
 * False, None) or numpy's print of an array ("1." with nothing after the
 * point, "array(...)"), which jansson calls an invalid token. Returns 1
 * when p is filled. */
static int python_error(api_problem *p, const json_error_t *error) {
    const char *near = strstr(error->text, "near '");
    if (near == NULL)
        return 0;
    const char *token = near + 6;
    size_t n = strlen(token);
    if (n > 0 && token[n - 1] == '\'')
        n--; /* the quote jansson closes the token with */
    const char *says = NULL;
    if (n == 1 && token[0] == '\'')
        says = "a single quote where JSON needs a double one: this reads "
               "like Python's str() of a dict. Send json.dumps(request), "
               "which writes JSON (\"name\", true, false, null)";
    else if ((n == 4 && !strncmp(token, "True", 4)) ||
             (n == 5 && !strncmp(token, "False", 5)) ||
             (n == 4 && !strncmp(token, "None", 4)))
        says = "Python's True, False and None are JSON's true, false and "
               "null: send json.dumps(request)";
    else if (n >= 2 && token[n - 1] == '.' &&
             strspn(token, "+-0123456789") == n - 1)
        says = "a number ends with its point, as numpy prints 1. for 1.0: "
               "JSON needs a digit after it. Send json.dumps(x.tolist())";
    else if (n == 5 && !strncmp(token, "array", 5))
        says = "array(...) is numpy's repr, not JSON: send "
               "json.dumps(x.tolist())";
    if (says == NULL)
        return 0;
    api_fail(p, API_E_INVALID_JSON, NULL,
             "the body is not valid JSON: %s (line %d, column %d, byte %d)",
             says, error->line, error->column, error->position);
    return 1;
}

/* Valid JSON that attnd does not read: a member given twice (where the
 * route refuses it), a key holding NUL. Returns 1 when p is filled. */
static int unread_error(api_problem *p, const json_error_t *error) {
    if (json_error_code(error) == json_error_duplicate_key) {
        /* jansson says: duplicate object key near '"name"' */
        const char *near = strstr(error->text, "near ");
        api_fail(p, API_E_INVALID_JSON, NULL,
                 "an object gives a member twice%s%s (line %d, column %d, "
                 "byte %d): here each member comes once, so that no later "
                 "copy replaces the one that is graded",
                 near ? ": " : "", near ? near + 5 : "", error->line,
                 error->column, error->position);
        return 1;
    }
    if (json_error_code(error) == json_error_null_byte_in_key) {
        /* valid JSON (RFC 8259 allows it), which attnd does not read:
         * no field name has a NUL, and C strings would end at it */
        api_fail(p, API_E_INVALID_JSON, NULL,
                 "an object key holds \\u0000 (line %d, column %d, byte "
                 "%d): no field name has one, and attnd reads no key that "
                 "does; a string value may hold it",
                 error->line, error->column, error->position);
        return 1;
    }
    return 0;
}

const char *api_json_nul_hint(const char *text, size_t pos) {
    int in_string = 0;
    for (size_t i = 0; i < pos; i++) {
        if (in_string && text[i] == '\\')
            i++; /* the escaped character */
        else if (text[i] == '"')
            in_string = !in_string;
    }
    return in_string ? "inside a string write \\u0000"
                     : "JSON allows none outside strings";
}

void api_problem_from_json_error(api_problem *p, const json_error_t *error,
                                 const char *body, size_t len) {
    if (text_error(p, error, body, len) || slip_error(p, error, body, len) ||
        python_error(p, error) || unread_error(p, error))
        return;
    api_fail(p, API_E_INVALID_JSON, NULL,
             "the body is not valid JSON: %s (line %d, column %d, byte %d)",
             error->text, error->line, error->column, error->position);
}

const char *api_json_kind_in(const api_fastpath *doc, const json_t *v) {
    if (api_fastpath_find(doc, v))
        return "an array"; /* a placeholder for the array the client sent */
    return api_json_kind(v);
}

const char *api_json_kind(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "a value";
}

void api_problem_write(api_buf *out, const api_problem *p) {
    int status = api_error_status(p->code);
    api_buf_puts(out, "{\"type\":\"about:blank\",\"title\":");
    const char *title = api_status_title(status);
    api_buf_json_string(out, title, strlen(title));
    api_buf_puts(out, ",\"status\":");
    api_buf_int(out, status);
    api_buf_puts(out, ",\"code\":\"");
    api_buf_puts(out, api_error_name(p->code));
    api_buf_putc(out, '"');
    if (p->has_pointer) {
        api_buf_puts(out, ",\"pointer\":");
        api_buf_json_string(out, p->pointer, strlen(p->pointer));
    }
    if (p->has_expected) {
        api_buf_puts(out, ",\"expected\":");
        api_buf_ints(out, p->expected, p->expected_rank);
    }
    if (p->has_got) {
        api_buf_puts(out, ",\"got\":");
        api_buf_ints(out, p->got, p->got_rank);
    }
    api_buf_puts(out, ",\"detail\":");
    api_buf_json_string(out, p->detail, strlen(p->detail));
    api_buf_putc(out, '}');
}

void api_problem_respond(api_response *res, const api_problem *p) {
    api_buf out = {0};
    api_problem_write(&out, p);
    free(res->body);
    res->status = api_error_status(p->code);
    res->no_room = p->code == API_E_NO_ROOM;
    res->content_type = API_CT_PROBLEM;
    res->body = api_buf_release(&out, &res->body_len);
}

/* The code of an error of HTTP itself (docs/errors.md): the status's
 * name in the table's style. */
static const char *http_code(int status) {
    switch (status) {
    case 400:
        return "bad_request";
    case 408:
        return "request_timeout";
    case 413:
        return "payload_too_large";
    case 414:
        return "uri_too_long";
    case 431:
        return "header_fields_too_large";
    case 429:
        return "rate_limited";
    case 501:
        return "not_implemented";
    case 503:
        return "overloaded";
    default:
        return "internal";
    }
}

void api_problem_respond_http(api_response *res, int status,
                              const char *detail) {
    api_buf out = {0};
    const char *title = api_status_title(status);
    const char *code = http_code(status);
    api_buf_puts(&out, "{\"type\":\"about:blank\",\"title\":");
    api_buf_json_string(&out, title, strlen(title));
    api_buf_puts(&out, ",\"status\":");
    api_buf_int(&out, status);
    api_buf_puts(&out, ",\"code\":");
    api_buf_json_string(&out, code, strlen(code));
    api_buf_puts(&out, ",\"detail\":");
    api_buf_json_string(&out, detail, strlen(detail));
    api_buf_putc(&out, '}');
    free(res->body);
    res->status = status;
    res->content_type = API_CT_PROBLEM;
    res->body = api_buf_release(&out, &res->body_len);
}
