/*
 * variant_secret.h — the course secret from which each student's variant
 * is drawn (docs/variants.md, contract section 13b): read from a file
 * (--variant-secret-file for the daemon, --secret-file for attnd variants
 * and attnd grade, or ATTND_VARIANT_SECRET_FILE) or, without one, from
 * the environment variable ATTND_VARIANT_SECRET; never from a request,
 * and never printed.
 */
#ifndef SRV_VARIANT_SECRET_H
#define SRV_VARIANT_SECRET_H

#include <stddef.h>

#include "api.h"

/* Bytes a secret needs at least. */
#define SRV_VARIANT_SECRET_MIN 16

/* Read the secret: path's bytes (at most 64 KiB, a final newline
 * dropped); path NULL or "": the file ATTND_VARIANT_SECRET_FILE names,
 * else ATTND_VARIANT_SECRET's value; into *out
 * (its bytes malloc'd; free with srv_variant_secret_free). Returns 1 when
 * read, 0 when there is none (path empty and the variable unset), -1
 * after writing why into err (cap bytes; never the secret): unreadable,
 * too long, or shorter than SRV_VARIANT_SECRET_MIN bytes. */
int srv_variant_secret_read(const char *path, api_variant_secret *out,
                            char *err, size_t cap);

/* Wipe and free what srv_variant_secret_read gave; out zeroed. */
void srv_variant_secret_free(api_variant_secret *out);

/* The daemon's secret (set once before serving), or NULL: no variants. */
const api_variant_secret *srv_variant_secret(void);
void srv_variant_secret_set(const api_variant_secret *secret);

#endif /* SRV_VARIANT_SECRET_H */
