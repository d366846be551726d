/*
 * offline_variants.h — `attnd variants`: each student's handout of a
 * question whose request.json marks tensors to be drawn (docs/variants.md).
 */
#ifndef SRV_OFFLINE_VARIANTS_H
#define SRV_OFFLINE_VARIANTS_H

/* Run attnd variants with argv[1..argc-1] (argv[0] "variants"). Messages
 * go to stderr, prefixed "attnd variants:". Returns SRV_OFFLINE_OK, or
 * SRV_OFFLINE_USAGE for bad arguments, files or marks (offline.h). */
int srv_offline_variants(int argc, char **argv);

#endif /* SRV_OFFLINE_VARIANTS_H */
