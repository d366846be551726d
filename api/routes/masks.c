/*
 * masks.c — a request's PyTorch masks in its arena (see masks.h).
 */
#include "masks.h"

/* Slots of n bytes (one more: a partial slot). */
static size_t byte_slots(size_t n) {
    return n / sizeof(double) + 1;
}

static size_t amask_slots(const api_masks *m) {
    return m->kind == API_MASK_FLOAT ? m->amask.count
                                     : byte_slots(m->amask.count);
}

size_t api_masks_slots(const api_masks *m) {
    size_t n = 0;
    if (m->has_amask)
        n += amask_slots(m);
    if (m->has_kpm)
        n += byte_slots(m->kpm.count);
    return n;
}

void api_masks_plan(const api_masks *m, api_arena *arena) {
    if (m->has_amask)
        api_arena_plan(arena, amask_slots(m));
    if (m->has_kpm)
        api_arena_plan(arena, byte_slots(m->kpm.count));
}

void api_masks_take(api_masks *m, api_arena *arena) {
    m->amask_b = m->kpm_d = NULL;
    m->amask_f = NULL;
    if (m->has_amask && m->kind == API_MASK_FLOAT) {
        m->amask_f = api_arena_take(arena, m->amask.count);
        api_mask_read_float(m->amask_f, &m->amask);
    } else if (m->has_amask) {
        m->amask_b = api_arena_take(arena, byte_slots(m->amask.count));
        api_mask_read_bool(m->amask_b, &m->amask);
    }
    if (m->has_kpm) {
        m->kpm_d = api_arena_take(arena, byte_slots(m->kpm.count));
        api_mask_read_bool(m->kpm_d, &m->kpm);
    }
}

void api_masks_set(attn_mask *mask, const api_masks *m) {
    mask->bool_mask = m->amask_b;
    mask->float_mask = m->amask_f;
    mask->layout = m->layout;
    mask->key_padding_mask = m->kpm_d;
}
