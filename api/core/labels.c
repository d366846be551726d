/*
 * labels.c — the `labels` field: token labels for a heatmap's axes (see
 * labels.h).
 */
#include "labels.h"

#include <stdio.h>

static const api_field label_fields[] = {
    {"queries", API_FIELD_STRINGS, 0, NULL, NULL},
    {"keys", API_FIELD_STRINGS, 0, NULL, NULL},
};

const api_schema api_labels_schema = {
    "labels", label_fields, sizeof label_fields / sizeof label_fields[0]};

/* The code point of an explicit bidirectional embedding, override or
 * isolate (U+202A … U+202E, U+2066 … U+2069; UAX #9) starting at c, or 0.
 * Their UTF-8 is E2 80 AA … AE and E2 81 A6 … A9. */
static unsigned bidi_control(const unsigned char *c, size_t left) {
    if (left < 3 || c[0] != 0xE2)
        return 0;
    if (c[1] == 0x80 && c[2] >= 0xAA && c[2] <= 0xAE)
        return 0x202Au + (unsigned)(c[2] - 0xAA);
    if (c[1] == 0x81 && c[2] >= 0xA6 && c[2] <= 0xA9)
        return 0x2066u + (unsigned)(c[2] - 0xA6);
    return 0;
}

/* 1 when c starts U+FFFE or U+FFFF (EF BF BE, EF BF BF): noncharacters,
 * which XML 1.0 (section 2.2, Char) does not allow in a document, so an
 * SVG picture with one would not parse. */
static int xml_nonchar(const unsigned char *c, size_t left) {
    return left >= 3 && c[0] == 0xEF && c[1] == 0xBF &&
           (c[2] == 0xBE || c[2] == 0xBF);
}

/* Check one axis: n labels, each short and free of control characters. */
static int check_axis(const json_t *axis, const char *member, size_t n,
                      const char *what, api_problem *p) {
    char ptr[64];
    snprintf(ptr, sizeof ptr, "/labels/%s", member);
    size_t got = json_array_size(axis);
    if (got != n) {
        long long want = (long long)n;
        api_fail(p, API_E_SHAPE_MISMATCH, ptr,
                 "labels.%s has %zu %s; the weights have %zu %s (one label "
                 "per %s, in order)",
                 member, got, api_plural(got, "label", "labels"), n,
                 api_plural(n, what, member), what);
        api_problem_shapes_z(p, &want, 1, &got, 1);
        return -1;
    }
    for (size_t i = 0; i < got; i++) {
        const json_t *s = json_array_get(axis, i);
        const unsigned char *c = (const unsigned char *)json_string_value(s);
        size_t len = json_string_length(s);
        snprintf(ptr, sizeof ptr, "/labels/%s/%zu", member, i);
        if (len > API_LABEL_MAX_BYTES)
            return api_fail(p, API_E_INVALID_VALUE, ptr,
                            "label %zu of labels.%s has %zu bytes of UTF-8; "
                            "a label has at most %d",
                            i, member, len, API_LABEL_MAX_BYTES);
        for (size_t k = 0; k < len; k++) {
            if (c[k] < 0x20 || c[k] == 0x7f)
                return api_fail(p, API_E_INVALID_VALUE, ptr,
                                "label %zu of labels.%s holds the control "
                                "character U+%04X at byte %zu; labels are "
                                "printable text (an SVG picture cannot carry "
                                "control characters)",
                                i, member, c[k], k);
            if (xml_nonchar(c + k, len - k))
                return api_fail(p, API_E_INVALID_VALUE, ptr,
                                "label %zu of labels.%s holds the "
                                "noncharacter U+FFF%c at byte %zu; labels are "
                                "text an SVG (XML 1.0) document can carry",
                                i, member, c[k + 2] == 0xBE ? 'E' : 'F', k);
            unsigned cp = bidi_control(c + k, len - k);
            if (cp)
                return api_fail(p, API_E_INVALID_VALUE, ptr,
                                "label %zu of labels.%s holds the "
                                "bidirectional control U+%04X at byte %zu; "
                                "it would reorder the labels drawn after "
                                "it, so labels carry none (Unicode UAX #9)",
                                i, member, cp, k);
        }
    }
    return 0;
}

int api_labels_read(api_labels *out, const json_t *body, size_t Nq, size_t Nk,
                    api_problem *p) {
    out->queries = out->keys = NULL;
    const json_t *labels = api_field_value(body, "labels");
    if (!labels)
        return 0;
    const json_t *q = api_field_value(labels, "queries");
    const json_t *k = api_field_value(labels, "keys");
    if ((q && check_axis(q, "queries", Nq, "query", p)) ||
        (k && check_axis(k, "keys", Nk, "key", p)))
        return -1;
    out->queries = q;
    out->keys = k;
    return 0;
}

const char *api_label_at(const json_t *axis, size_t i, size_t *len) {
    const json_t *s = axis ? json_array_get(axis, i) : NULL;
    if (!s)
        return NULL;
    *len = json_string_length(s);
    return json_string_value(s);
}
