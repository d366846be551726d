/*
 * big_integers.h — integer literals beyond int64 read as the nearest
 * double. jansson stores integer literals as json_int_t and refuses one
 * that does not fit ("too big integer"); but attnd prints integral doubles
 * below 1e21 in full, as ECMAScript does (123456789012345680000), and every
 * answer must read back as a request (docs/contract.md section 1).
 */
#ifndef API_BIG_INTEGERS_H
#define API_BIG_INTEGERS_H

#include <jansson.h>
#include <stddef.h>

/* Where the widened text differs from the original: each integer literal
 * beyond int64 gets ".0" after it, so jansson reads it as a real (strtod,
 * nearest double). offsets[i]: the original byte offset just after the
 * i-th widened literal; lines[i]: its line (from 1, as jansson counts). */
typedef struct {
    size_t n;
    size_t *offsets;
    int *lines;
} api_widening;

/* A copy of the JSON text s[0 .. len) with ".0" after every integer
 * literal outside int64 (outside strings; the number grammar of RFC 8259
 * section 6). Returns NULL when there is none or memory runs out (then
 * map->n is 0); otherwise a malloc'd text of *out_len bytes, and map holds
 * malloc'd arrays. The caller frees both (api_widening_free). */
char *api_json_widen_big_integers(const char *s, size_t len, size_t *out_len,
                                  api_widening *map);

/* Moves jansson's error position in a widened text back to the original
 * text's bytes and columns. */
void api_widening_map_error(const api_widening *map, json_error_t *error);

void api_widening_free(api_widening *map);

/* Whether jansson refused the text for an integer beyond json_int_t. */
int api_json_error_is_big_integer(const json_error_t *error);

#endif /* API_BIG_INTEGERS_H */
