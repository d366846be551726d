/*
 * masks.h — a request's PyTorch masks (attn_mask, key_padding_mask;
 * docs/contract.md section 1, "Masking") from their decoded tensors to
 * the library's attn_mask: the arena slots they take, read into them, and
 * the attn_mask fields they set. The attention routes (attention.h) and
 * the Transformer blocks (transformer.h, one per attention block) share
 * it; each checks the shapes against its own field names.
 */
#ifndef API_MASKS_H
#define API_MASKS_H

#include <stddef.h>

#include "arena.h"
#include "attn.h"
#include "mask_json.h"
#include "tensor.h"

typedef struct {
    api_tensor amask, kpm; /* attn_mask, key_padding_mask (decoded) */
    int has_amask, has_kpm;
    api_mask_kind kind;      /* the attn_mask's: booleans or numbers */
    attn_mask_layout layout; /* from its shape (the cross-field phase) */
    /* Carved and read by api_masks_take, else NULL: */
    unsigned char *amask_b; /* a boolean attn_mask */
    double *amask_f;        /* a float attn_mask (−∞ for null) */
    unsigned char *kpm_d;   /* key_padding_mask */
} api_masks;

/* Arena slots (8 bytes each) of the masks as read: a boolean mask and the
 * key padding one byte an entry, a float mask one slot an entry. */
size_t api_masks_slots(const api_masks *m);

/* Plan, then carve and read (in the same order), the masks' slots. */
void api_masks_plan(const api_masks *m, api_arena *arena);
void api_masks_take(api_masks *m, api_arena *arena);

/* The library's mask fields (bool_mask, float_mask, layout,
 * key_padding_mask) from the masks as read; the others are left. */
void api_masks_set(attn_mask *mask, const api_masks *m);

#endif /* API_MASKS_H */
