/*
 * foreign_names.h — field names users bring from PyTorch and d2l that
 * attnd does not take, with what to send instead: `is_causal` is attnd's
 * `causal`, `dropout` has no counterpart (attnd computes as in eval mode),
 * `Q` is `queries`; and the members of attnd's answers, which are no
 * request fields (`output` is not `grad_output`).
 * Such a name is still 422 unknown_field (docs/contract.md section 1);
 * the detail says what it is rather than guessing a spelling.
 */
#ifndef API_FOREIGN_NAMES_H
#define API_FOREIGN_NAMES_H

#include <stddef.h>

/* What to say about the request field key on a route whose fields are
 * names[0 … n-1]: a static sentence that follows "`key` ", or NULL when
 * key is no such name or its advice does not fit this route (it names a
 * field the route lacks). A member of attnd's answers (`output`,
 * `weights`, `grads`, ...) gets its sentence on every route: it points
 * to POST /grade rather than to a field of a similar spelling (on /grade,
 * whose names include `answer`, inside the answer). */
const char *api_foreign_name(const char *key, const char *const *names,
                             size_t n);

/* The members of attnd's answers that api_foreign_name names as such,
 * names[0 … *n-1]: static, never NULL. Each is the top-level member of
 * some route's answer table (answers.h); a test holds the two together. */
const char *const *api_foreign_answer_members(size_t *n);

#endif /* API_FOREIGN_NAMES_H */
