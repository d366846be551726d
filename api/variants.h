/*
 * variants.h — a different problem for every student, for the offline
 * tools (attnd variants, docs/variants.md): a question's request.json that
 * marks tensors to be drawn ({"draw": {...}}), and each student's variant
 * of it, drawn from a key that only the course secret makes
 * (api/grading/variant.h has the whole rule).
 *
 * api/'s third public header, beside api.h and question.h: the server
 * reads the files (request.json, the roster, the secret) and writes the
 * handouts; what a mark means and how a variant is drawn is the api's.
 */
#ifndef API_VARIANTS_H
#define API_VARIANTS_H

#include <stddef.h>

/* Whether request.json, text[0 .. len), marks a member to be drawn, every
 * mark checked. name names the file in messages. Returns 1 (marked), 0
 * (nothing marked), or -1 with *why what is wrong, naming the file and
 * the mark's pointer (malloc'd; NULL when memory ran out). */
int api_variants_marked(const char *text, size_t len, const char *name,
                        char **why);

/* The variant of request.json, text[0 .. len), for student (or group) id
 * `student`, problem id `problem` and `version`, keyed by secret[0 ..
 * secret_len): one line of JSON, the request with every marked member
 * drawn, into *out (malloc'd, ending in a newline). Returns 0, or -1 with
 * *why as above (never holding the secret). */
int api_variants_handout(const char *text, size_t len, const char *name,
                         const unsigned char *secret, size_t secret_len,
                         const char *student, const char *problem,
                         const char *version, char **out, char **why);

#endif /* API_VARIANTS_H */
