/*
 * question.h — a question folder (attnd grade --question DIR,
 * docs/offline.md): question.json, the members of a grading request that
 * every submission of one question shares, and request.json, the request
 * the students answer; each checked, then added to every submission of a
 * batch.
 *
 * api/'s second public header, beside api.h. api.h is what the daemon
 * needs, and the daemon never reads a question folder; what the folder
 * needs of the api is the api's own business: a file parsed as a body is
 * (the fast path of its endpoint's tensors, the bound and the reservation
 * of its JSON tree), the members a grading request takes ("did you mean"),
 * and a batch body cut into its submissions as POST /grade/batch cuts it.
 * So that logic is api/grading/question.c's, and the offline grader
 * (server/offline_question.c) sees it through this header alone. Reading
 * the files, and the memory budget of their text, stay the server's.
 */
#ifndef API_QUESTION_H
#define API_QUESTION_H

#include <stddef.h>

#include "api.h"

/* Check question.json, text[0 .. len) (NULL when the file is empty),
 * parsed as a body is: no raw NUL byte, its JSON tree at most
 * limits->max_tree_bytes and reserved from the memory budget while it is
 * held; an object, every member one of a question's settings (endpoint,
 * fields, compare, points, credit, visibility, show_expected, rtol,
 * atol). name is the file as messages name it (its path).
 * Returns 0 with *members the object written compactly, braces included
 * (malloc'd; the caller frees it), and *route the template of the route
 * its "endpoint" names (static; NULL when it names none). Returns -1 with
 * *why what is wrong, naming the file (malloc'd; NULL when memory ran
 * out), and *members NULL. Nothing of the budget is held on return. */
int api_question_settings(const char *text, size_t len, const char *name,
                          const api_limits *limits, char **members,
                          const char **route, char **why);

/* Check request.json, text[0 .. len) (NULL when the file is empty),
 * parsed as a body of route is (a template from api_question_settings,
 * or NULL): no raw NUL byte, its tree bounded and reserved as above, the
 * route's tensors read by the fast path; an object. name as above.
 * Returns 0, or -1 with *why as above. Nothing of the budget is held on
 * return. */
int api_question_request(const char *text, size_t len, const char *name,
                         const char *route, const api_limits *limits,
                         char **why);

/* The body of POST /grade/batch built from body[0 .. len), of
 * Content-Type content_type: settings[0 .. settings_len) added before the
 * closing '}' of each submission that is an object (a ',' before them
 * unless the object is empty), found as the batch finds its submissions;
 * nothing else moves, so line numbers and array elements stay where they
 * were. A submission that is not an object, white space aside, is left
 * as it is for the batch to refuse. Written into out (NULL: only
 * counted), *total its length. Returns 0; 1 when the batch takes no body
 * of content_type (nothing done: the batch refuses the body as it is); -1
 * when the length would pass SIZE_MAX (*total untouched). */
int api_question_batch(char *out, size_t *total, const char *body, size_t len,
                       const char *content_type, const char *settings,
                       size_t settings_len);

#endif /* API_QUESTION_H */
