/*
 * batch_scan.c — cutting a batch body into submissions (see
 * batch_scan.h).
 */
#include "batch_scan.h"

#include <string.h>

/* Byte classes of the pass: what may open, close or quote. */
enum { PLAIN = 0, QUOTE = 1, OPEN = 2, CLOSE = 3 };

static const unsigned char byte_class[256] = {
    ['"'] = QUOTE, ['{'] = OPEN, ['['] = OPEN, ['}'] = CLOSE, [']'] = CLOSE,
};

static int is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_blanks(const char *s, size_t len, size_t at) {
    while (at < len && is_blank(s[at]))
        at++;
    return at;
}

/* The end of the string whose opening quote is s[at]: just after its
 * closing quote, or 0 when it does not end before len. */
static size_t string_end(const char *s, size_t len, size_t at) {
    for (size_t i = at + 1; i < len; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return 0;
}

/* 1 in each byte of x that is zero, as its top bit (and maybe in the
 * bytes above one that is: enough to tell whether there is one). */
static uint64_t zero_bytes(uint64_t x) {
    return (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
}

/* The first byte from at on that may be a quote or a bracket, eight
 * bytes at a time: an array of numbers is mostly digits and commas.
 * '[' and ']' are '{' and '}' but for bit 0x20 and '"' has it set, so
 * one OR with 0x20 leaves three bytes to look for (a control byte that
 * becomes one of them only stops the skip early). */
static size_t plain_run(const char *s, size_t len, size_t at) {
    const uint64_t ones = 0x0101010101010101ull;
    while (at + 8 <= len) {
        uint64_t w;
        memcpy(&w, s + at, 8);
        w |= 0x20 * ones;
        if (zero_bytes(w ^ ('{' * ones)) | zero_bytes(w ^ ('}' * ones)) |
            zero_bytes(w ^ ('"' * ones)))
            break;
        at += 8;
    }
    while (at < len && byte_class[(unsigned char)s[at]] == PLAIN)
        at++;
    return at;
}

/* The end of the JSON value starting at s[at] (not blank): just after
 * its last byte, or 0 when it does not end before len. Objects and
 * arrays end at the bracket that closes the first (brackets counted with
 * strings skipped); a scalar ends before a blank, ',', ']' or '}'. */
static size_t value_end(const char *s, size_t len, size_t at) {
    unsigned char first = (unsigned char)s[at];
    if (byte_class[first] == QUOTE)
        return string_end(s, len, at);
    if (byte_class[first] != OPEN) {
        size_t i = at;
        while (i < len && !is_blank(s[i]) && s[i] != ',' && s[i] != ']' &&
               s[i] != '}')
            i++;
        return i;
    }
    size_t depth = 0;
    for (size_t i = at; i < len;) {
        switch (byte_class[(unsigned char)s[i]]) {
        case PLAIN:
            i = plain_run(s, len, i + 1);
            continue;
        case QUOTE:
            i = string_end(s, len, i);
            if (i == 0)
                return 0;
            continue;
        case OPEN:
            depth++;
            break;
        case CLOSE:
            if (--depth == 0)
                return i + 1;
            break;
        }
        i++;
    }
    return 0;
}

/* The top-level members of the object at s[at] (an '{'), up to its end:
 * where its last "request" member's value lies (item->request_*), and
 * where the object ends (returned; 0 when it does not end before len or
 * is not a well-formed frame of members, which its parse then reports).
 * A request value equal to hint is taken without scanning it. */
static size_t scan_members(const char *s, size_t len, size_t at,
                           api_batch_item *item, const char *hint,
                           size_t hint_len) {
    static const char request[] = "\"request\"", id[] = "\"id\"",
                      endpoint[] = "\"endpoint\"";
    size_t req_start = 0, req_len = 0, id_start = 0, id_len = 0;
    size_t ep_start = 0, ep_len = 0;
    int escaped = 0, hinted = 0;
    size_t i = skip_blanks(s, len, at + 1);
    if (i < len && s[i] == '}')
        return i + 1;
    for (;;) {
        if (i >= len || s[i] != '"')
            return 0;
        size_t key_end = string_end(s, len, i);
        if (key_end == 0)
            return 0;
        escaped |= memchr(s + i, '\\', key_end - i) != NULL;
        int is_request = key_end - i == sizeof request - 1 &&
                         !memcmp(s + i, request, sizeof request - 1);
        int is_id =
            key_end - i == sizeof id - 1 && !memcmp(s + i, id, sizeof id - 1);
        int is_endpoint = key_end - i == sizeof endpoint - 1 &&
                          !memcmp(s + i, endpoint, sizeof endpoint - 1);
        i = skip_blanks(s, len, key_end);
        if (i >= len || s[i] != ':')
            return 0;
        i = skip_blanks(s, len, i + 1);
        if (i >= len)
            return 0;
        size_t end;
        int matched = is_request && hint_len > 0 && hint_len <= len - i &&
                      !memcmp(s + i, hint, hint_len);
        if (matched)
            end = i + hint_len; /* a complete value: it ends where hint does */
        else
            end = value_end(s, len, i);
        if (end == 0)
            return 0;
        if (is_request) {
            req_start = i;
            req_len = s[i] == '{' ? end - i : 0;
            hinted = matched;
        }
        if (is_endpoint) {
            ep_start = i;
            ep_len = end - i;
        }
        if (is_id) {
            id_start = i;
            id_len = end - i;
        }
        i = skip_blanks(s, len, end);
        if (i < len && s[i] == ',') {
            i = skip_blanks(s, len, i + 1);
            continue;
        }
        if (i < len && s[i] == '}')
            break;
        return 0;
    }
    if (!escaped) {
        item->request_start = req_start;
        item->request_len = req_len;
        item->id_start = id_start;
        item->id_len = id_len;
        item->endpoint_start = ep_start;
        item->endpoint_len = ep_len;
        item->request_is_hint = hinted && req_len > 0;
    }
    return i + 1;
}

void api_batch_scan_start(api_batch_scanner *s, const char *body, size_t len,
                          api_batch_form form) {
    memset(s, 0, sizeof *s);
    s->body = body;
    s->len = len;
    s->form = form;
    s->line = 1;
}

static int broken(size_t *where, const char **why, size_t at,
                  const char *what) {
    *where = at;
    *why = what;
    return API_BATCH_BROKEN;
}

static int next_line(api_batch_scanner *s, api_batch_item *item,
                     const char *hint, size_t hint_len) {
    const char *b = s->body;
    while (s->at < s->len) {
        const char *nl = memchr(b + s->at, '\n', s->len - s->at);
        size_t end = nl ? (size_t)(nl - b) : s->len;
        size_t start = s->at, line = s->line;
        s->at = nl ? end + 1 : end;
        s->line++;
        size_t last = end;
        while (last > start && is_blank(b[last - 1]))
            last--;
        size_t first = skip_blanks(b, last, start);
        if (first == last)
            continue; /* a blank line */
        memset(item, 0, sizeof *item);
        item->start = first;
        item->len = last - first;
        item->line = line;
        item->index = s->n++;
        if (b[first] == '{')
            scan_members(b, last, first, item, hint, hint_len);
        return API_BATCH_ITEM;
    }
    return API_BATCH_END;
}

/* The frame is checked up to the next element: an element is handed out
 * before whatever follows it is read, so one broken comma still leaves
 * every element before it graded. */
static int next_element(api_batch_scanner *s, api_batch_item *item,
                        const char *hint, size_t hint_len, size_t *where,
                        const char **why) {
    const char *b = s->body;
    size_t i = skip_blanks(b, s->len, s->at);
    if (s->done)
        return API_BATCH_END;
    if (!s->started) {
        if (i >= s->len || b[i] != '[')
            return broken(where, why, i, "the body is not a JSON array");
        s->started = 1;
        i = skip_blanks(b, s->len, i + 1);
        if (i < s->len && b[i] == ']') {
            i++;
            goto closed;
        }
    } else {
        /* after an element: ',' and the next one, or the closing ']' */
        if (i < s->len && b[i] == ']') {
            i++;
            goto closed;
        }
        if (i >= s->len || b[i] != ',')
            return broken(where, why, i,
                          i < s->len ? "expected ',' or ']' after an element"
                                     : "the array ends before its ']'");
        i = skip_blanks(b, s->len, i + 1);
        if (i < s->len && b[i] == ']')
            return broken(where, why, i, "a ',' before the array's ']'");
    }
    if (i >= s->len)
        return broken(where, why, i, "the array ends before its ']'");
    memset(item, 0, sizeof *item);
    size_t end =
        b[i] == '{' ? scan_members(b, s->len, i, item, hint, hint_len) : 0;
    if (end == 0)
        end = value_end(b, s->len, i);
    if (end == 0)
        return broken(where, why, i,
                      "an element does not end before the body does (a "
                      "string or bracket left open)");
    item->start = i;
    item->len = end - i;
    item->index = s->n++;
    s->at = end;
    return API_BATCH_ITEM;
closed:
    s->done = 1;
    i = skip_blanks(b, s->len, i);
    if (i < s->len)
        return broken(where, why, i, "text after the array's ']'");
    return API_BATCH_END;
}

int api_batch_scan_next(api_batch_scanner *s, api_batch_item *item,
                        const char *hint, size_t hint_len, size_t *where,
                        const char **why) {
    if (s->form == API_BATCH_LINES)
        return next_line(s, item, hint, hint_len);
    return next_element(s, item, hint, hint_len, where, why);
}

/* 64-bit multiply-xorshift over 8 bytes at a time (the common request
 * template is ~250 KB, hashed once per submission). */
uint64_t api_batch_hash(const void *bytes, size_t n) {
    const unsigned char *p = bytes;
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    uint64_t h = 0xCBF29CE484222325ull ^ (n * k);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * k;
        h ^= h >> 29;
    }
    uint64_t w = 0;
    memcpy(&w, p + i, n - i);
    h = (h ^ w) * k;
    h ^= h >> 32;
    return h;
}
