/*
 * offline_internal.h — what server/offline*.c share (nothing else
 * includes this): offline.c reads the command line and stdin and hands
 * the request to the api; offline_question.c reads a question folder
 * (attnd grade --question DIR) and adds it to the batch's body.
 */
#ifndef SRV_OFFLINE_INTERNAL_H
#define SRV_OFFLINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api.h"

/* A body read from stdin (or a question folder's file) and what it holds
 * of the memory budget. */
typedef struct {
    char *text;       /* malloc'd; NULL when empty, freed or refused */
    size_t len;       /* its length (a refused body's whole length) */
    uint64_t charged; /* bytes of the budget its buffer holds */
    int refused;      /* API_BUDGET_NEVER: the buffer found no room */
    int over_max;     /* 1: cut where it passed the reader's max */
} offline_body;

/* Give back what b holds, buffer and budget; b is then empty (refused
 * and len are left as they are). */
void srv_offline_body_release(offline_body *b);

/* All of in (stdin, or a question folder's file) into b (b->text NULL
 * when it is empty), its buffer reserved from the memory budget as it
 * grows, as the daemon reserves a body's.
 * A body that outgrows the whole budget is read to its end and dropped:
 * b->refused API_BUDGET_NEVER, b->len its whole length (the daemon's
 * answer names it). max > 0: a text longer than max bytes is dropped
 * as soon as it passes max, unread beyond (b->over_max 1), so that a
 * file without end (a FIFO, /dev/zero) is refused, not read forever.
 * Returns 0, or -1 with errno set (ENOMEM when memory runs out). */
int srv_offline_read(FILE *in, offline_body *b, uint64_t max);

/* Read the question folder dir (its question.json and request.json,
 * limits as a body's) into *settings: the text added to each
 * submission, question.json's members and then "request": request.json,
 * reserved from the memory budget; then grade an empty answer with them
 * once, so that a setting or request the grader refuses is told before
 * any student's answer. A request.json that marks members to draw is a
 * problem (docs/variants.md): it needs the secret (NULL: none, which is
 * said), and its problem id is question.json's "problem", else dir's own
 * name, as attnd variants names it. Messages go to stderr, prefixed who.
 * Returns 0,
 * or -1 after printing why with nothing held. */
int srv_offline_question_load(const char *who, const char *dir,
                              const api_limits *limits,
                              const api_variant_secret *secret,
                              offline_body *settings);

/* body (stdin, of Content-Type content_type) replaced by the batch's
 * body with settings added to its submissions (api_question_batch),
 * reserved from the memory budget; a body that finds no room is left
 * refused (body->refused, its length body->len) and *what names it. A
 * body of a type the batch does not take, refused or empty, is left as
 * it is. Returns 0, or -1 when memory runs out. */
int srv_offline_question_batch(offline_body *body, const char *content_type,
                               const offline_body *settings, const char **what);

#endif /* SRV_OFFLINE_INTERNAL_H */
