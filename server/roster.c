/*
 * roster.c — a class's roster file (see roster.h).
 */
#include "roster.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ROSTER_FILE_MAX ((size_t)16 << 20)

static const api_roster *daemon_roster;

const api_roster *srv_roster_of_daemon(void) {
    return daemon_roster;
}

void srv_roster_set_daemon(const api_roster *roster) {
    daemon_roster = roster;
}

static int id_ok(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n > SRV_ROSTER_ID_MAX || s[0] == '.')
        return 0;
    for (; *s; s++)
        if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                    "0123456789._-@+",
                    *s))
            return 0;
    return 1;
}

/* A first line that names a column rather than a student. */
static int looks_like_header(const char *s) {
    static const char *const names[] = {"id",    "student", "student_id", "sid",
                                        "email", "login",   "name"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(s, names[i]))
            return 1;
    return 0;
}

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

/* path's bytes, NUL-terminated, into *text. */
static int slurp(const char *path, char **text, char *err, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t len = 0, size = 4096;
    char *buf = malloc(size + 1);
    size_t n;
    while (buf && (n = fread(buf + len, 1, size - len, f)) > 0) {
        len += n;
        if (len == size) {
            char *more =
                size < ROSTER_FILE_MAX ? realloc(buf, 2 * size + 1) : NULL;
            if (!more) {
                snprintf(err, cap, "%s: %s", path,
                         size < ROSTER_FILE_MAX ? "out of memory"
                                                : "larger than 16 MiB");
                free(buf);
                fclose(f);
                return -1;
            }
            buf = more;
            size *= 2;
        }
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf || failed) {
        snprintf(err, cap, "%s: %s", path,
                 buf ? "cannot be read" : "out of memory");
        free(buf);
        return -1;
    }
    buf[len] = '\0';
    *text = buf;
    return 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int by_id(const void *a, const void *b) {
    return strcmp(**(char *const *const *)a, **(char *const *const *)b);
}

int srv_roster_read(const char *path, srv_roster *r, char *err, size_t cap) {
    memset(r, 0, sizeof *r);
    if (slurp(path, &r->text, err, cap))
        return -1;
    size_t lines = 1;
    for (const char *c = r->text; *c; c++)
        lines += *c == '\n';
    r->ids = malloc(lines * sizeof *r->ids);
    r->groups = malloc(lines * sizeof *r->groups);
    size_t *line_of = malloc(lines * sizeof *line_of); /* each entry's */
    if (!r->ids || !r->groups || !line_of) {
        snprintf(err, cap, "out of memory");
        free(line_of);
        srv_roster_free(r);
        return -1;
    }
    size_t line_no = 0;
    for (char *line = r->text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        line_no++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *comma = strchr(line, ',');
        if (comma)
            *comma = '\0';
        char *student = trim(line), *group = comma ? trim(comma + 1) : NULL;
        if (!*student && !group)
            continue;
        if (r->n == 0 && looks_like_header(student)) {
            snprintf(err, cap,
                     "%s:%zu: '%.80s' looks like a header, not a student: "
                     "start it with '#'",
                     path, line_no, student);
            free(line_of);
            srv_roster_free(r);
            return -1;
        }
        if (group && !*group) {
            snprintf(err, cap,
                     "%s:%zu: nothing after the comma: give the group's id, "
                     "or no comma",
                     path, line_no);
            free(line_of);
            srv_roster_free(r);
            return -1;
        }
        if (!id_ok(student) || (group && !id_ok(group))) {
            snprintf(err, cap,
                     "%s:%zu: '%.80s' is not an id (1 to %d of A-Z a-z 0-9 "
                     ". _ - @ +, not starting with '.')",
                     path, line_no, id_ok(student) ? group : student,
                     SRV_ROSTER_ID_MAX);
            free(line_of);
            srv_roster_free(r);
            return -1;
        }
        r->ids[r->n] = student;
        r->groups[r->n] = group;
        line_of[r->n] = line_no;
        r->n++;
    }
    if (r->n == 0) {
        snprintf(err, cap, "%s lists no student", path);
        free(line_of);
        srv_roster_free(r);
        return -1;
    }
    /* sorted, through pointers to the file order's slots */
    char ***order = malloc(r->n * sizeof *order);
    r->sorted_ids = malloc(r->n * sizeof *r->sorted_ids);
    r->sorted_groups = malloc(r->n * sizeof *r->sorted_groups);
    if (!order || !r->sorted_ids || !r->sorted_groups) {
        free(order);
        snprintf(err, cap, "out of memory");
        free(line_of);
        srv_roster_free(r);
        return -1;
    }
    for (size_t i = 0; i < r->n; i++)
        order[i] = &r->ids[i];
    qsort(order, r->n, sizeof *order, by_id);
    for (size_t i = 0; i < r->n; i++) {
        size_t at = (size_t)(order[i] - r->ids);
        if (i > 0 && !strcmp(r->sorted_ids[i - 1], r->ids[at])) {
            size_t first = line_of[order[i - 1] - r->ids];
            snprintf(err, cap,
                     "%s:%zu: the student %s is listed twice (also at line "
                     "%zu)",
                     path, line_of[at] > first ? line_of[at] : first,
                     r->ids[at], line_of[at] > first ? first : line_of[at]);
            free(order);
            free(line_of);
            srv_roster_free(r);
            return -1;
        }
        r->sorted_ids[i] = r->ids[at];
        r->sorted_groups[i] = r->groups[at];
    }
    free(order);
    /* a group named as a student would share that student's variant */
    for (size_t i = 0; i < r->n; i++) {
        const char *g = r->groups[i];
        if (g &&
            bsearch(&g, r->sorted_ids, r->n, sizeof *r->sorted_ids, by_name)) {
            snprintf(err, cap,
                     "%s:%zu: the group %s of %s is also a student's id: the "
                     "two would share one variant; name the group apart",
                     path, line_of[i], g, r->ids[i]);
            free(line_of);
            srv_roster_free(r);
            return -1;
        }
    }
    free(line_of);
    r->api.n = r->n;
    r->api.ids = r->sorted_ids;
    r->api.groups = r->sorted_groups;
    return 0;
}

void srv_roster_free(srv_roster *r) {
    free(r->ids);
    free(r->groups);
    free(r->sorted_ids);
    free(r->sorted_groups);
    free(r->text);
    memset(r, 0, sizeof *r);
}
