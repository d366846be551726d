/*
 * variant.c — a student's variant of a problem (see variant.h).
 */
#include "variant.h"

#include <stdio.h>

#include <gnutls/crypto.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "buf.h"
#include "grade_entries.h"
#include "tensor_bytes.h"
#include "variants.h"

#define FIELD_WORDS (API_VARIANT_KEY_BYTES / 4)
#define MAX_RANK 4
#define MAX_ROUND 15

/* One member to draw. */
typedef struct {
    size_t shape[MAX_RANK], rank, count;
    int normal;  /* 1: normal(mean, std); 0: uniform(low, high) */
    double a, b; /* mean and std, or low and high */
    int round;   /* decimal places, or -1: not rounded */
} mark;

static int id_part(const char *s, const char *what, api_problem *p) {
    if (!s || !*s)
        return api_fail(p, API_E_INVALID_VALUE, NULL, "the %s id is empty",
                        what);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return api_fail(p, API_E_INVALID_VALUE, NULL,
                            "the %s id holds the control character U+%04X; "
                            "ids are printable text",
                            what, *c);
    return 0;
}

int api_variant_key(const unsigned char *secret, size_t secret_len,
                    const api_variant_id *id,
                    unsigned char key[API_VARIANT_KEY_BYTES], api_problem *p) {
    if (id_part(id->student, "student", p) ||
        id_part(id->problem, "problem", p) ||
        id_part(id->version, "version", p))
        return -1;
    size_t ls = strlen(id->student), lp = strlen(id->problem),
           lv = strlen(id->version);
    char *msg = malloc(ls + lp + lv + 2);
    if (!msg)
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    memcpy(msg, id->student, ls);
    msg[ls] = 0x1F;
    memcpy(msg + ls + 1, id->problem, lp);
    msg[ls + 1 + lp] = 0x1F;
    memcpy(msg + ls + lp + 2, id->version, lv);
    int rc = gnutls_hmac_fast(GNUTLS_MAC_SHA256, secret, secret_len, msg,
                              ls + lp + lv + 2, key);
    free(msg);
    return rc < 0 ? api_fail(p, API_E_INTERNAL, NULL,
                             "HMAC-SHA-256 failed (gnutls error %d)", rc)
                  : 0;
}

/* The member's mark ({"draw": {...}}), or NULL. */
static const json_t *draw_of(const json_t *v) {
    return json_is_object(v) && json_object_size(v) == 1
               ? json_object_get(v, "draw")
               : NULL;
}

int api_variant_marked(const json_t *request) {
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)request, name, v) if (draw_of(v)) return 1;
    return 0;
}

/* The largest mean, std, low or high a mark takes: its draws, and their
 * rounding to 15 decimals, stay far from a double's overflow. */
#define MAX_PARAMETER 1e15

static int number_of(const json_t *d, const char *member, double dflt,
                     double *out, const char *field, api_problem *p) {
    const json_t *v = json_object_get(d, member);
    char ptr[160];
    snprintf(ptr, sizeof ptr, "/%s/draw/%s", field, member);
    *out = dflt;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v))
        return api_fail(p, API_E_WRONG_TYPE, ptr, "%s.draw.%s must be a number",
                        field, member);
    *out = json_number_value(v);
    if (!(fabs(*out) <= MAX_PARAMETER))
        return api_fail(p, API_E_INVALID_VALUE, ptr,
                        "%s.draw.%s must be at most %g in size; got %g", field,
                        member, MAX_PARAMETER, *out);
    return 0;
}

/* Read the mark d of member field into m: 0, or -1 with p set. */
static int read_mark(const json_t *d, const char *field, mark *m,
                     api_problem *p) {
    char ptr[160];
    snprintf(ptr, sizeof ptr, "/%s/draw", field);
    if (!json_is_object(d))
        return api_fail(p, API_E_WRONG_TYPE, ptr,
                        "%s.draw must be an object: shape, distribution and "
                        "its parameters, round",
                        field);
    static const char *const known[] = {"shape", "distribution", "mean", "std",
                                        "low",   "high",         "round"};
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)d, name, v) {
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] && strcmp(known[k], name))
            k++;
        if (k == sizeof known / sizeof known[0]) {
            snprintf(ptr, sizeof ptr, "/%s/draw/%s", field, name);
            return api_fail(p, API_E_UNKNOWN_FIELD, ptr,
                            "%s.draw has no member %s: it takes shape, "
                            "distribution, mean and std (normal), low and "
                            "high (uniform), round",
                            field, name);
        }
    }
    const json_t *shape = json_object_get(d, "shape");
    snprintf(ptr, sizeof ptr, "/%s/draw/shape", field);
    if (!shape)
        return api_fail(p, API_E_MISSING_FIELD, ptr, "%s.draw needs a shape",
                        field);
    if (!json_is_array(shape) || json_array_size(shape) < 1 ||
        json_array_size(shape) > MAX_RANK)
        return api_fail(p, API_E_WRONG_TYPE, ptr,
                        "%s.draw.shape must be an array of 1 to %d sizes",
                        field, MAX_RANK);
    m->rank = json_array_size(shape);
    m->count = 1;
    for (size_t i = 0; i < m->rank; i++) {
        const json_t *n = json_array_get(shape, i);
        if (!json_is_integer(n) || json_integer_value(n) < 1 ||
            json_integer_value(n) > (json_int_t)API_VARIANT_MAX_ENTRIES)
            return api_fail(p, API_E_INVALID_VALUE, ptr,
                            "%s.draw.shape[%zu] must be an integer from 1 "
                            "to %zu",
                            field, i, API_VARIANT_MAX_ENTRIES);
        m->shape[i] = (size_t)json_integer_value(n);
        m->count *= m->shape[i];
        if (m->count > API_VARIANT_MAX_ENTRIES)
            return api_fail(p, API_E_INVALID_VALUE, ptr,
                            "%s.draw.shape has more than %zu entries", field,
                            API_VARIANT_MAX_ENTRIES);
    }
    const json_t *dist = json_object_get(d, "distribution");
    snprintf(ptr, sizeof ptr, "/%s/draw/distribution", field);
    if (!dist)
        return api_fail(p, API_E_MISSING_FIELD, ptr,
                        "%s.draw needs a distribution: normal or uniform",
                        field);
    const char *dn = json_string_value(dist);
    if (!dn || (strcmp(dn, "normal") && strcmp(dn, "uniform")))
        return api_fail(p, API_E_INVALID_VALUE, ptr,
                        "%s.draw.distribution must be \"normal\" or "
                        "\"uniform\"",
                        field);
    m->normal = !strcmp(dn, "normal");
    int bad = m->normal ? number_of(d, "mean", 0, &m->a, field, p) ||
                              number_of(d, "std", 1, &m->b, field, p)
                        : number_of(d, "low", 0, &m->a, field, p) ||
                              number_of(d, "high", 1, &m->b, field, p);
    if (bad)
        return -1;
    if (json_object_get(d, m->normal ? "low" : "mean") ||
        json_object_get(d, m->normal ? "high" : "std")) {
        snprintf(ptr, sizeof ptr, "/%s/draw/%s", field,
                 json_object_get(d, m->normal ? "low" : "mean")
                     ? (m->normal ? "low" : "mean")
                     : (m->normal ? "high" : "std"));
        return api_fail(p, API_E_UNKNOWN_FIELD, ptr,
                        "%s.draw: a %s distribution takes %s", field, dn,
                        m->normal ? "mean and std" : "low and high");
    }
    if (m->normal ? !(m->b > 0) || !isfinite(m->b) : !(m->a < m->b)) {
        snprintf(ptr, sizeof ptr, "/%s/draw/%s", field,
                 m->normal ? "std" : "high");
        return api_fail(p, API_E_INVALID_VALUE, ptr,
                        m->normal ? "%s.draw.std must be greater than 0"
                                  : "%s.draw.high must be greater than low",
                        field);
    }
    const json_t *r = json_object_get(d, "round");
    m->round = -1;
    if (r && !json_is_null(r)) {
        snprintf(ptr, sizeof ptr, "/%s/draw/round", field);
        if (!json_is_integer(r) || json_integer_value(r) < 0 ||
            json_integer_value(r) > MAX_ROUND)
            return api_fail(p, API_E_INVALID_VALUE, ptr,
                            "%s.draw.round must be an integer from 0 to %d "
                            "(decimal places)",
                            field, MAX_ROUND);
        m->round = (int)json_integer_value(r);
    }
    return 0;
}

int api_variant_check(const json_t *request, api_problem *p) {
    const char *name;
    const json_t *v;
    mark m;
    size_t total = 0;
    json_object_foreach((json_t *)request, name, v) {
        const json_t *d = draw_of(v);
        if (d && read_mark(d, name, &m, p))
            return -1;
        if (d && (total += m.count) > API_VARIANT_MAX_ENTRIES) {
            char ptr[160];
            snprintf(ptr, sizeof ptr, "/%s/draw/shape", name);
            return api_fail(p, API_E_INVALID_VALUE, ptr,
                            "the marks draw more than %zu entries in all "
                            "(%s's shape passes it): a variant is a "
                            "student's problem, not a data set",
                            API_VARIANT_MAX_ENTRIES, name);
        }
    }
    return 0;
}

size_t api_variant_entries(const json_t *request) {
    const char *name;
    const json_t *v;
    size_t total = 0;
    mark m;
    api_problem p = {0};
    json_object_foreach((json_t *)request, name, v) {
        const json_t *d = draw_of(v);
        if (d && read_mark(d, name, &m, &p) == 0)
            total += m.count;
    }
    return total;
}

/* np.random.normal(mean, std, shape) or np.random.uniform(low, high,
 * shape) after np.random.seed(words), then np.round(x, round). */
static void draw(const mark *m, const uint32_t words[FIELD_WORDS], double *x) {
    static const double pow10[MAX_ROUND + 1] = {
        1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
        1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    attn_np_random rs;
    attn_np_seed_array(&rs, words, FIELD_WORDS);
    if (m->normal)
        attn_np_randn(&rs, x, m->count);
    else
        attn_np_rand(&rs, x, m->count);
    for (size_t i = 0; i < m->count; i++) {
        double v = m->normal ? m->a + m->b * x[i] : m->a + (m->b - m->a) * x[i];
        if (m->round >= 0)
            v = rint(v * pow10[m->round]) / pow10[m->round];
        x[i] = v == 0 ? 0.0 : v; /* no -0 in a handout */
    }
}

/* x (m's shape, row-major) as nested arrays, from axis on. */
static void put_tensor(api_buf *out, const mark *m, const double *x,
                       size_t axis, size_t *at) {
    api_buf_putc(out, '[');
    for (size_t i = 0; i < m->shape[axis]; i++) {
        if (i)
            api_buf_putc(out, ',');
        if (axis + 1 == m->rank)
            api_buf_number(out, x[(*at)++], 0);
        else
            put_tensor(out, m, x, axis + 1, at);
    }
    api_buf_putc(out, ']');
}

/* Member name of the variant of key drawn into x (m->count entries).
 * Returns 0, or -1 when HMAC-SHA-256 fails. */
static int draw_member(const unsigned char key[API_VARIANT_KEY_BYTES],
                       const char *name, const mark *m, double *x) {
    unsigned char h[API_VARIANT_KEY_BYTES];
    uint32_t words[FIELD_WORDS];
    if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, API_VARIANT_KEY_BYTES, name,
                         strlen(name), h) < 0)
        return -1;
    for (int w = 0; w < FIELD_WORDS; w++)
        words[w] = (uint32_t)h[4 * w] | (uint32_t)h[4 * w + 1] << 8 |
                   (uint32_t)h[4 * w + 2] << 16 | (uint32_t)h[4 * w + 3] << 24;
    draw(m, words, x);
    return 0;
}

int api_variant_write(const json_t *request,
                      const unsigned char key[API_VARIANT_KEY_BYTES],
                      char **text, api_problem *p) {
    *text = NULL;
    if (api_variant_check(request, p))
        return -1;
    api_buf out = {0};
    const char *name;
    const json_t *v;
    int first = 1, rc = 0;
    api_buf_putc(&out, '{');
    json_object_foreach((json_t *)request, name, v) {
        if (!first)
            api_buf_putc(&out, ',');
        first = 0;
        api_buf_json_string(&out, name, strlen(name));
        api_buf_putc(&out, ':');
        const json_t *d = draw_of(v);
        if (!d) {
            api_grade_put_value(&out, v); /* as /grade quotes a value */
            continue;
        }
        mark m;
        read_mark(d, name, &m, p); /* checked above */
        double *x = malloc(m.count * sizeof *x);
        if (!x || draw_member(key, name, &m, x)) {
            free(x);
            rc = api_fail(p, API_E_INTERNAL, NULL,
                          "out of memory, or HMAC-SHA-256 failed, while "
                          "drawing %s",
                          name);
            break;
        }
        size_t at = 0;
        put_tensor(&out, &m, x, 0, &at);
        free(x);
    }
    api_buf_puts(&out, "}\n");
    if (rc == 0 && out.failed)
        rc = api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    if (rc) {
        api_buf_free(&out);
        return -1;
    }
    size_t len;
    *text = api_buf_release(&out, &len);
    return 0;
}

/* {"shape": m's shape, "data": a placeholder of doc for x}, or NULL when
 * memory runs out. */
static json_t *adopted_tensor(api_fastpath *doc, const mark *m,
                              const double *x) {
    json_t *shape = json_array(), *t = json_object();
    for (size_t i = 0; shape && i < m->rank; i++)
        json_array_append_new(shape, json_integer((json_int_t)m->shape[i]));
    json_t *data = api_fastpath_adopt_bytes(doc, (const unsigned char *)x,
                                            API_DT_FP64, m->count);
    if (!shape || !t || !data || json_array_size(shape) != m->rank ||
        json_object_set_new(t, "shape", shape) ||
        json_object_set_new(t, "data", data)) {
        json_decref(t);
        return NULL;
    }
    return t;
}

int api_variant_request(const json_t *request,
                        const unsigned char key[API_VARIANT_KEY_BYTES],
                        api_fastpath *doc, json_t **out, double **numbers,
                        api_problem *p) {
    *out = NULL;
    *numbers = NULL;
    if (api_variant_check(request, p))
        return -1;
    const char *name;
    const json_t *v;
    size_t total = 0;
    mark m;
    json_object_foreach((json_t *)request, name, v) {
        const json_t *d = draw_of(v);
        if (d) {
            read_mark(d, name, &m, p); /* checked above */
            total += m.count;
        }
    }
    /* x86-64 and aarch64 hold doubles little-endian, as FP64 bytes are */
    double *x = malloc((total ? total : 1) * sizeof *x);
    json_t *built = json_object();
    size_t at = 0;
    int rc = x && built ? 0 : -1;
    json_object_foreach((json_t *)request, name, v) {
        if (rc)
            break;
        const json_t *d = draw_of(v);
        if (!d) {
            rc = json_object_set(built, name, (json_t *)v);
            continue;
        }
        read_mark(d, name, &m, p);
        json_t *t = NULL;
        rc = draw_member(key, name, &m, x + at) ||
                     !(t = adopted_tensor(doc, &m, x + at)) ||
                     json_object_set_new(built, name, t)
                 ? -1
                 : 0;
        at += m.count;
    }
    if (rc) {
        json_decref(built);
        free(x);
        return api_fail(p, API_E_INTERNAL, NULL,
                        "out of memory, or HMAC-SHA-256 failed, while "
                        "drawing the variant");
    }
    *out = built;
    *numbers = x;
    return 0;
}

/* ------------------------------------------------- the public side */

/* *why = "name: detail (at pointer)". */
static void say_why(char **why, const char *name, const api_problem *p) {
    const char *ptr = p->has_pointer ? p->pointer : NULL;
    if (asprintf(why, "%s: %s%s%s%s", name, p->detail, ptr ? " (at " : "",
                 ptr ? ptr : "", ptr ? ")" : "") < 0)
        *why = NULL;
}

/* text parsed as one JSON object, or NULL with *why set. */
static json_t *parse_request(const char *text, size_t len, const char *name,
                             char **why) {
    json_error_t e;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
    if (!root || !json_is_object(root)) {
        if (asprintf(why, "%s: %s", name, root ? "not a JSON object" : e.text) <
            0)
            *why = NULL;
        json_decref(root);
        return NULL;
    }
    return root;
}

int api_variants_marked(const char *text, size_t len, const char *name,
                        char **why) {
    *why = NULL;
    json_t *root = parse_request(text, len, name, why);
    if (!root)
        return -1;
    api_problem p = {0};
    int rc = api_variant_check(root, &p) ? -1 : api_variant_marked(root);
    if (rc < 0)
        say_why(why, name, &p);
    json_decref(root);
    return rc;
}

int api_variants_handout(const char *text, size_t len, const char *name,
                         const unsigned char *secret, size_t secret_len,
                         const char *student, const char *problem,
                         const char *version, char **out, char **why) {
    *out = *why = NULL;
    json_t *root = parse_request(text, len, name, why);
    if (!root)
        return -1;
    api_problem p = {0};
    unsigned char key[API_VARIANT_KEY_BYTES];
    api_variant_id id = {student, problem, version};
    int rc = api_variant_key(secret, secret_len, &id, key, &p) ||
                     api_variant_write(root, key, out, &p)
                 ? -1
                 : 0;
    if (rc)
        say_why(why, name, &p);
    memset(key, 0, sizeof key);
    json_decref(root);
    return rc;
}
