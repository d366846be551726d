/*
 * offline_variants.h — `attnd variants`: each student's handout of a
 * question whose request.json marks tensors to be drawn (docs/variants.md).
 */
#ifndef SRV_OFFLINE_VARIANTS_H
#define SRV_OFFLINE_VARIANTS_H

#include <stddef.h>

/* Run attnd variants with argv[1..argc-1] (argv[0] "variants"). Messages
 * go to stderr, prefixed "attnd variants:". Returns 0 (the handouts
 * written, or --help), or -1 for bad arguments, files, marks or secret
 * (attnd then exits 1, SRV_OFFLINE_USAGE). */
int srv_offline_variants(int argc, char **argv);

/* A problem's id when none is given: its question folder's own name, the
 * last part of dir (trailing slashes aside), into buf (n bytes). Returns
 * buf. attnd variants draws by it, and attnd grade --question grades by
 * it. */
const char *srv_problem_of_folder(const char *dir, char *buf, size_t n);

#endif /* SRV_OFFLINE_VARIANTS_H */
