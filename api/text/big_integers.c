/*
 * big_integers.c — integer literals beyond int64 widened to reals before
 * jansson reads them (see big_integers.h).
 */
#include "big_integers.h"

#include "numparse.h"

#include <stdlib.h>
#include <string.h>

static const char WIDEN[] = ".0";
enum { WIDEN_LEN = sizeof WIDEN - 1 };

/* Appends (offset, line) to map; -1 when memory runs out. */
static int note(api_widening *map, size_t *cap, size_t offset, int line) {
    if (map->n == *cap) {
        size_t grown = *cap ? 2 * *cap : 8;
        size_t *offsets = realloc(map->offsets, grown * sizeof *offsets);
        if (!offsets)
            return -1;
        map->offsets = offsets;
        int *lines = realloc(map->lines, grown * sizeof *lines);
        if (!lines)
            return -1;
        map->lines = lines;
        *cap = grown;
    }
    map->offsets[map->n] = offset;
    map->lines[map->n] = line;
    map->n++;
    return 0;
}

/* Notes the end of every integer literal beyond int64 in s[0 .. len). */
static int find_big_integers(api_widening *map, const char *s, size_t len) {
    size_t cap = 0, i = 0;
    int line = 1;
    while (i < len) {
        char c = s[i];
        if (c == '"') { /* a string: skip to its closing quote */
            for (i++; i < len && s[i] != '"'; i++) {
                if (s[i] == '\\')
                    i++;
                else if (s[i] == '\n')
                    line++;
            }
            i++;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            double ignored;
            size_t used;
            api_num_kind kind = api_num_parse(&ignored, &used, s + i, len - i);
            i += used ? used : 1;
            if (kind == API_NUM_BIG_INTEGER && note(map, &cap, i, line))
                return -1;
        } else {
            line += c == '\n';
            i++;
        }
    }
    return 0;
}

char *api_json_widen_big_integers(const char *s, size_t len, size_t *out_len,
                                  api_widening *map) {
    memset(map, 0, sizeof *map);
    if (find_big_integers(map, s, len) || map->n == 0) {
        api_widening_free(map);
        return NULL;
    }
    size_t total = len + WIDEN_LEN * map->n; /* n ≤ len: no overflow */
    char *text = malloc(total + 1);
    if (!text) {
        api_widening_free(map);
        return NULL;
    }
    size_t from = 0, to = 0;
    for (size_t k = 0; k < map->n; k++) {
        size_t piece = map->offsets[k] - from;
        memcpy(text + to, s + from, piece);
        memcpy(text + to + piece, WIDEN, WIDEN_LEN);
        to += piece + WIDEN_LEN;
        from = map->offsets[k];
    }
    memcpy(text + to, s + from, len - from);
    text[total] = '\0';
    *out_len = total;
    return text;
}

void api_widening_map_error(const api_widening *map, json_error_t *error) {
    /* an insertion before the error moves it by WIDEN_LEN bytes, and by
     * WIDEN_LEN columns when it is on the error's line */
    size_t position = (size_t)error->position, shift = 0;
    int column_shift = 0;
    for (size_t k = 0; k < map->n; k++) {
        if (map->offsets[k] + shift >= position)
            break;
        shift += WIDEN_LEN;
        if (map->lines[k] == error->line)
            column_shift += WIDEN_LEN;
    }
    error->position -= (int)shift;
    error->column -= column_shift;
}

void api_widening_free(api_widening *map) {
    free(map->offsets);
    free(map->lines);
    memset(map, 0, sizeof *map);
}

int api_json_error_is_big_integer(const json_error_t *error) {
    /* jansson 2.14: "too big integer", "too big negative integer" */
    return json_error_code(error) == json_error_numeric_overflow &&
           strstr(error->text, "too big") != NULL;
}
