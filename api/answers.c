/*
 * answers.c — the members of each computing route's answer (see
 * answers.h), in the order the routes write them (API.md sections 2–10).
 */
#include "answers.h"

#include <string.h>

#define ALWAYS NULL
#define WEIGHTS "\"return_weights\" not false"
#define SCORES "\"return_scores\": true"
#define DIAG "\"diagnostics\": true"
#define GRADS "grad_output"
#define DRAWN "num_hiddens (and seed) instead of given parameters"

/* diagnostics for rows of rank r (dot/additive (B, Nq), multihead
 * (B, H, Nq)) */
#define DIAGNOSTICS(r)                                                         \
    {"diagnostics.scores.min", 0, 0, 0, DIAG},                                 \
        {"diagnostics.scores.max", 0, 0, 0, DIAG},                             \
        {"diagnostics.scores.mean", 0, 0, 0, DIAG},                            \
        {"diagnostics.scores.std", 0, 0, 0, DIAG},                             \
        {"diagnostics.entropy", r, 0, 0, DIAG},                                \
        {"diagnostics.max_weight", r, 0, 0, DIAG}, {                           \
        "diagnostics.argmax", r, 1, 0, DIAG                                    \
    }

static const api_answer_field dot[] = {
    {"output", 3, 0, 0, ALWAYS},
    {"weights", 3, 0, 0, WEIGHTS},
    {"scale", 0, 0, 0, ALWAYS},
    {"scores", 3, 0, 0, SCORES},
    DIAGNOSTICS(2),
    {"grads.queries", 3, 0, 0, GRADS},
    {"grads.keys", 3, 0, 0, GRADS},
    {"grads.values", 3, 0, 0, GRADS},
};

static const api_answer_field additive[] = {
    {"output", 3, 0, 0, ALWAYS},
    {"weights", 3, 0, 0, WEIGHTS},
    {"scores", 3, 0, 0, SCORES},
    {"params.W_q", 2, 0, 0, DRAWN},
    {"params.W_k", 2, 0, 0, DRAWN},
    {"params.w_v", 1, 0, 0, DRAWN},
    DIAGNOSTICS(2),
    {"grads.queries", 3, 0, 0, GRADS},
    {"grads.keys", 3, 0, 0, GRADS},
    {"grads.values", 3, 0, 0, GRADS},
    {"grads.W_q", 2, 0, 0, GRADS},
    {"grads.W_k", 2, 0, 0, GRADS},
    {"grads.w_v", 1, 0, 0, GRADS},
};

static const api_answer_field multihead[] = {
    {"output", 3, 0, 0, ALWAYS},
    {"weights", 4, 0, 0, WEIGHTS},
    {"params.W_q", 2, 0, 0, DRAWN},
    {"params.W_k", 2, 0, 0, DRAWN},
    {"params.W_v", 2, 0, 0, DRAWN},
    {"params.W_o", 2, 0, 0, DRAWN},
    DIAGNOSTICS(3),
    {"grads.queries", 3, 0, 0, GRADS},
    {"grads.keys", 3, 0, 0,
     GRADS " with keys given (self-attention adds "
           "it into grads.queries)"},
    {"grads.values", 3, 0, 0, GRADS " with values given"},
    {"grads.W_q", 2, 0, 0, GRADS},
    {"grads.W_k", 2, 0, 0, GRADS},
    {"grads.W_v", 2, 0, 0, GRADS},
    {"grads.W_o", 2, 0, 0, GRADS},
    {"grads.b_q", 1, 0, 0, GRADS " with b_q given"},
    {"grads.b_k", 1, 0, 0, GRADS " with b_k given"},
    {"grads.b_v", 1, 0, 0, GRADS " with b_v given"},
    {"grads.b_o", 1, 0, 0, GRADS " with b_o given"},
};

static const api_answer_field nw[] = {
    {"predictions", 1, 0, 0, ALWAYS},
    {"weights", 2, 0, 0, ALWAYS},
    {"w", 0, 0, 0, ALWAYS},
    {"loss", 0, 0, 0, "y_query"},
    {"grad_w", 0, 0, 0, "y_query with the gaussian kernel"},
    {"history.epoch", 1, 0, 1, "fit"},
    {"history.w", 1, 0, 1, "fit"},
    {"history.loss", 1, 0, 1, "fit"},
};

static const api_answer_field dataset[] = {
    {"x_train", 1, 0, 0, ALWAYS}, {"y_train", 1, 0, 0, ALWAYS},
    {"x_test", 1, 0, 0, ALWAYS},  {"y_truth", 1, 0, 0, ALWAYS},
    {"n_train", 0, 1, 0, ALWAYS}, {"noise", 0, 0, 0, ALWAYS},
    {"seed", 0, 1, 0, ALWAYS},
};

static const api_answer_field softmax[] = {
    {"weights", 3, 0, 0, ALWAYS},
};

static const api_answer_field posenc[] = {
    {"P", 2, 0, 0, ALWAYS},
};

#define TABLE(route, f)                                                        \
    { route, f, sizeof f / sizeof f[0] }

static const api_answer_table tables[] = {
    TABLE("/attention/dot", dot),
    TABLE("/attention/additive", additive),
    TABLE("/attention/multihead", multihead),
    TABLE("/regression/nw", nw),
    TABLE("/regression/nw/dataset", dataset),
    TABLE("/softmax/masked", softmax),
    TABLE("/encoding/positional", posenc),
};

const api_answer_table *api_answers_find(const char *route) {
    for (size_t i = 0; route && i < sizeof tables / sizeof tables[0]; i++)
        if (!strcmp(tables[i].route, route))
            return &tables[i];
    return NULL;
}

const api_answer_field *api_answers_field(const api_answer_table *t,
                                          const char *name, size_t len) {
    for (size_t i = 0; i < t->n; i++)
        if (strlen(t->fields[i].name) == len &&
            !memcmp(t->fields[i].name, name, len))
            return &t->fields[i];
    return NULL;
}

int api_answers_is_group(const api_answer_table *t, const char *name,
                         size_t len) {
    for (size_t i = 0; i < t->n; i++) {
        const char *f = t->fields[i].name;
        if (strlen(f) > len && !memcmp(f, name, len) && f[len] == '.')
            return 1;
    }
    return 0;
}

size_t api_answers_children(const api_answer_table *t, const char *prefix,
                            size_t plen, char names[][API_ANSWER_SEGMENT_MAX],
                            size_t cap) {
    size_t n = 0;
    for (size_t i = 0; i < t->n && n < cap; i++) {
        const char *f = t->fields[i].name;
        if (plen && (strncmp(f, prefix, plen) != 0 || f[plen] != '.'))
            continue;
        const char *seg = plen ? f + plen + 1 : f;
        size_t len = strcspn(seg, ".");
        if (len >= API_ANSWER_SEGMENT_MAX)
            continue;
        int seen = 0;
        for (size_t k = 0; k < n && !seen; k++)
            seen = strlen(names[k]) == len && !memcmp(names[k], seg, len);
        if (seen)
            continue;
        memcpy(names[n], seg, len);
        names[n][len] = '\0';
        n++;
    }
    return n;
}
