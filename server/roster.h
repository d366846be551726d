/*
 * roster.h — a class's roster file (docs/variants.md "The roster"): one
 * student per line, an id or "id,group"; '#' starts a comment, blank
 * lines are skipped. An id (and a group id) is 1 to SRV_ROSTER_ID_MAX of
 * A-Z a-z 0-9 . _ - @ +, not starting with '.', so that it can name a
 * handout's file, and case counts (s01 and S01 are two students); no
 * student is listed twice, no group is named as a student (the two would
 * share a variant), and a first line that names a column (id, student,
 * email, ...) is refused as a header that wants its '#'. Read by attnd
 * variants, attnd grade --roster and the daemon's --roster.
 */
#ifndef SRV_ROSTER_H
#define SRV_ROSTER_H

#include <stddef.h>

#include "api.h"

#define SRV_ROSTER_ID_MAX 64

typedef struct {
    size_t n;
    char **ids, **groups; /* file order; groups[i] NULL: none */
    /* the api's view, sorted by id (api_roster) */
    const char **sorted_ids, **sorted_groups;
    api_roster api;
    char *text; /* the file, cut in place: every id points into it */
} srv_roster;

/* Read path into *r (zeroed first). Returns 0, or -1 after writing why
 * into err (cap bytes), naming path and the line: unreadable, larger
 * than 16 MiB, a header, an empty group, an id that is not one, a
 * student twice, a group named as a student, no student. */
int srv_roster_read(const char *path, srv_roster *r, char *err, size_t cap);

void srv_roster_free(srv_roster *r);

/* The daemon's roster (set once before serving), or NULL. */
const api_roster *srv_roster_of_daemon(void);
void srv_roster_set_daemon(const api_roster *roster);

#endif /* SRV_ROSTER_H */
