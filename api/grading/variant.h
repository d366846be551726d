/*
 * variant.h — a different problem for every student (docs/variants.md,
 * contract section 13b): a question's request.json marks tensors to be
 * drawn, and each student's variant draws them from a key that only the
 * course secret can make.
 *
 *   key   = HMAC-SHA-256(secret, student ‖ 0x1F ‖ problem ‖ 0x1F ‖ version)
 *   field = HMAC-SHA-256(key, name of the request's member), read as 8
 *           little-endian 32-bit words
 *   np.random.seed(words); x = np.random.randn(*shape) * std + mean
 *           (or np.random.uniform(low, high, shape)); np.round(x, round)
 *
 * so that numpy reproduces a variant from its field words, bit for bit
 * (lib/numpy_random.c, init_by_array), and each member is drawn on its
 * own: adding a member to the problem changes no other member. A group id
 * stands for the student id where a group shares one variant. Bumping the
 * version changes every key, hence every variant; nothing else does. The
 * secret never leaves these functions: a key cannot be turned back into
 * it (HMAC, RFC 2104), and a handout holds only drawn numbers.
 *
 * A mark is a member whose value is {"draw": {...}}:
 *   shape         [d0, …], 1 … 4 dimensions, each ≥ 1; the marks of one
 *                 request draw at most 2^20 entries in all
 *   distribution  "normal" (mean 0, std 1 unless given; std > 0) or
 *                 "uniform" (low 0, high 1 unless given; low < high);
 *                 each parameter at most 1e15 in size
 *   round         0 … 15 decimal places (np.round), optional
 */
#ifndef API_VARIANT_H
#define API_VARIANT_H

#include <jansson.h>
#include <stddef.h>

#include "fastpath.h"
#include "problem.h"

#define API_VARIANT_KEY_BYTES 32
#define API_VARIANT_MAX_ENTRIES ((size_t)1 << 20)

/* Whose variant: the student's (or group's) id, the problem's id and the
 * version, each a string of printable characters (no control character,
 * so 0x1F separates them unambiguously). */
typedef struct {
    const char *student;
    const char *problem;
    const char *version;
} api_variant_id;

/* key = HMAC-SHA-256(secret[0 .. secret_len), id's three strings joined
 * by 0x1F). Returns 0, or -1 with p set: invalid_value when an id string
 * is empty or holds a control character, internal when the hash fails. */
int api_variant_key(const unsigned char *secret, size_t secret_len,
                    const api_variant_id *id,
                    unsigned char key[API_VARIANT_KEY_BYTES], api_problem *p);

/* 1 when the request template marks a member to be drawn, else 0. */
int api_variant_marked(const json_t *request);

/* Check every mark of the request template without drawing: 0, or -1
 * with p set at the mark's pointer (/queries/draw/std): unknown_field,
 * missing_field (shape, distribution), wrong_type, invalid_value (a
 * dimension below 1, more than API_VARIANT_MAX_ENTRIES entries in a mark
 * or in all, a parameter beyond 1e15 in size, std ≤ 0, low ≥ high, round
 * outside 0 … 15, a distribution not named above). */
int api_variant_check(const json_t *request, api_problem *p);

/* The entries a variant of the (checked) request template draws, over
 * every marked member. */
size_t api_variant_entries(const json_t *request);

/* The variant of key: the request template with every marked member
 * replaced by its drawn tensor (nested arrays), the other members as they
 * are, in the template's order, written as one line of JSON (numbers as
 * attnd prints them) into *text (malloc'd, NUL-terminated; the caller
 * frees it). Returns 0, or -1 with p set: the errors of api_variant_check,
 * or internal when memory runs out. */
int api_variant_write(const json_t *request,
                      const unsigned char key[API_VARIANT_KEY_BYTES],
                      char **text, api_problem *p);

/* The variant of key as a request to compute: a new object with the
 * template's members in its order, each marked member replaced by
 * {"shape": [...], "data": a placeholder of doc} (the tensors' second
 * form, contract section 1), so that no number is printed or parsed
 * again; doc is begun by the caller (api_fastpath_begin) and resolves
 * the placeholders. The numbers are exactly the handout's (a printed
 * double reads back as itself), in *numbers (malloc'd; the caller frees
 * it after releasing doc). Returns 0 with *out (a new reference), or -1
 * with p set: the errors of api_variant_check, or internal when memory
 * runs out. */
int api_variant_request(const json_t *request,
                        const unsigned char key[API_VARIANT_KEY_BYTES],
                        api_fastpath *doc, json_t **out, double **numbers,
                        api_problem *p);

#endif /* API_VARIANT_H */
