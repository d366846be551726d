/*
 * offline_variants.c — `attnd variants`: each student's handout of a
 * question whose request.json marks tensors to be drawn (docs/variants.md,
 * api/variants.h). The secret comes from a file (--secret-file) or the
 * environment (ATTND_VARIANT_SECRET), never from the command line, where
 * any user of the machine could read it, and is never printed.
 */
#include "offline_variants.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "variants.h"

#define WHO "attnd variants"
#define FILE_MAX ((size_t)16 << 20) /* request.json, a roster, a secret */
#define SECRET_MIN 16               /* bytes of a secret worth keeping */
#define ID_MAX 64

typedef struct {
    const char *question, *roster, *problem, *version, *secret_file, *out;
} variants_args;

static void usage(FILE *out) {
    fprintf(
        out,
        "usage: attnd variants --question DIR --roster FILE [--problem ID]\n"
        "                      [--version V] [--secret-file FILE] [--out DIR]\n"
        "Each student's variant of DIR/request.json, whose members marked\n"
        "{\"draw\": {...}} are drawn from HMAC-SHA-256(secret, student, "
        "problem,\n"
        "version) (docs/variants.md).\n\n"
        "  --question DIR     the question folder (its request.json)\n"
        "  --roster FILE      one student per line: id, or id,group (a group\n"
        "                     shares one variant); # starts a comment\n"
        "  --problem ID       the problem's id (default: DIR's own name)\n"
        "  --version V        the version (default 1): a new one changes\n"
        "                     every variant\n"
        "  --secret-file FILE the course secret (else ATTND_VARIANT_SECRET);\n"
        "                     at least %d bytes\n"
        "  --out DIR          write DIR/<id>.json; without it, one line per\n"
        "                     student on stdout: {\"student\", \"request\"}\n",
        SECRET_MIN);
}

static int parse(variants_args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->version = "1";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help")) {
            usage(stdout);
            return 1;
        }
        static const char *const names[] = {"--question",    "--roster",
                                            "--problem",     "--version",
                                            "--secret-file", "--out"};
        const char **slots[] = {&a->question, &a->roster,      &a->problem,
                                &a->version,  &a->secret_file, &a->out};
        size_t k = 0;
        while (k < 6 && strcmp(names[k], arg))
            k++;
        if (k == 6 || i + 1 >= argc) {
            fprintf(stderr, "%s: %s '%s' (try %s --help)\n", WHO,
                    k == 6 ? "unknown argument" : "no value after", arg, WHO);
            return -1;
        }
        *slots[k] = argv[++i];
    }
    if (!a->question || !a->roster) {
        fprintf(
            stderr,
            "%s: --question DIR and --roster FILE are needed (try %s --help)\n",
            WHO, WHO);
        return -1;
    }
    return 0;
}

/* The whole file path (at most FILE_MAX bytes) into *text, *len; 0 or -1
 * after saying why. */
static int slurp(const char *path, char **text, size_t *len) {
    FILE *f = fopen(path, "rb");
    *text = NULL;
    *len = 0;
    if (!f) {
        fprintf(stderr, "%s: %s: %s\n", WHO, path, strerror(errno));
        return -1;
    }
    size_t cap = 4096;
    char *buf = malloc(cap + 1);
    size_t n;
    while (buf && (n = fread(buf + *len, 1, cap - *len, f)) > 0) {
        *len += n;
        if (*len == cap) {
            if (cap >= FILE_MAX) {
                fprintf(stderr, "%s: %s: larger than %zu bytes\n", WHO, path,
                        FILE_MAX);
                free(buf);
                fclose(f);
                return -1;
            }
            cap *= 2;
            char *more = realloc(buf, cap + 1);
            if (!more)
                free(buf);
            buf = more;
        }
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf || failed) {
        fprintf(stderr, "%s: %s: %s\n", WHO, path,
                buf ? "read error" : "out of memory");
        free(buf);
        return -1;
    }
    buf[*len] = '\0';
    *text = buf;
    return 0;
}

/* An id of a roster line: 1 … ID_MAX characters of A-Z a-z 0-9 . _ - @ +
 * (it names a file), not starting with '.'. */
static int id_ok(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n > ID_MAX || s[0] == '.')
        return 0;
    for (; *s; s++)
        if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                    "0123456789._-@+",
                    *s))
            return 0;
    return 1;
}

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

/* The secret: the file's bytes (a final newline dropped) or the
 * environment's; NULL after saying why. */
static char *secret_of(const variants_args *a, size_t *len) {
    char *s = NULL;
    if (a->secret_file) {
        if (slurp(a->secret_file, &s, len))
            return NULL;
        while (*len && (s[*len - 1] == '\n' || s[*len - 1] == '\r'))
            s[--*len] = '\0';
    } else {
        const char *env = getenv("ATTND_VARIANT_SECRET");
        if (!env) {
            fprintf(stderr,
                    "%s: no secret: give --secret-file FILE or set "
                    "ATTND_VARIANT_SECRET\n",
                    WHO);
            return NULL;
        }
        s = strdup(env);
        *len = s ? strlen(s) : 0;
    }
    if (s && *len < SECRET_MIN) {
        fprintf(stderr,
                "%s: the secret has %zu bytes; it needs at least %d (e.g. "
                "head -c 32 /dev/urandom | base64 > secret)\n",
                WHO, *len, SECRET_MIN);
        free(s);
        return NULL;
    }
    return s;
}

/* The problem id: --problem, else the question folder's own name. */
static const char *problem_of(const variants_args *a, char *buf, size_t n) {
    if (a->problem)
        return a->problem;
    const char *dir = a->question;
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    const char *base = dir + len;
    while (base > dir && base[-1] != '/')
        base--;
    snprintf(buf, n, "%.*s", (int)(dir + len - base), base);
    return buf;
}

int srv_offline_variants(int argc, char **argv) {
    variants_args a;
    int parsed = parse(&a, argc, argv);
    if (parsed)
        return parsed > 0 ? 0 : -1;
    int rc = -1;
    char *req = NULL, *roster = NULL, *secret = NULL, *why = NULL;
    size_t req_len, roster_len, secret_len = 0;
    char path[4096], problem_buf[256];
    snprintf(path, sizeof path, "%s/request.json", a.question);
    if (slurp(path, &req, &req_len) || slurp(a.roster, &roster, &roster_len))
        goto done;
    int marked = api_variants_marked(req, req_len, path, &why);
    if (marked <= 0) {
        if (marked == 0)
            fprintf(stderr,
                    "%s: %s marks no member to be drawn ({\"draw\": "
                    "{\"shape\", \"distribution\", ...}}): every student "
                    "would get the same request\n",
                    WHO, path);
        else
            fprintf(stderr, "%s: %s\n", WHO, why ? why : "out of memory");
        goto done;
    }
    if (!(secret = secret_of(&a, &secret_len)))
        goto done;
    const char *problem = problem_of(&a, problem_buf, sizeof problem_buf);
    if (a.out && mkdir(a.out, 0777) && errno != EEXIST) {
        fprintf(stderr, "%s: %s: %s\n", WHO, a.out, strerror(errno));
        goto done;
    }
    /* one pass to check the roster, one to write */
    for (int write = 0; write < 2; write++) {
        size_t line_no = 0, students = 0;
        char *seen = NULL;
        size_t seen_len = 0;
        for (char *line = roster, *next; line && *line; line = next) {
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
            if (!*student && !group) {
                if (comma)
                    *comma = ',';
                if (hash)
                    *hash = '#';
                if (next)
                    next[-1] = '\n';
                continue;
            }
            if (!write && (!id_ok(student) || (group && !id_ok(group)))) {
                fprintf(stderr,
                        "%s: %s:%zu: '%s' is not an id (1 to %d of A-Z a-z "
                        "0-9 . _ - @ +, not starting with '.')\n",
                        WHO, a.roster, line_no,
                        id_ok(student) ? group : student, ID_MAX);
                free(seen);
                goto done;
            }
            if (!write) {
                /* a student twice would get two files of one name */
                for (size_t at = 0; at < seen_len; at += strlen(seen + at) + 1)
                    if (!strcmp(seen + at, student)) {
                        fprintf(stderr,
                                "%s: %s:%zu: the student %s is "
                                "listed twice\n",
                                WHO, a.roster, line_no, student);
                        free(seen);
                        goto done;
                    }
                size_t n = strlen(student) + 1;
                char *more = realloc(seen, seen_len + n);
                if (!more) {
                    free(seen);
                    fprintf(stderr, "%s: out of memory\n", WHO);
                    goto done;
                }
                seen = more;
                memcpy(seen + seen_len, student, n);
                seen_len += n;
            } else {
                char *text = NULL;
                if (api_variants_handout(req, req_len, path,
                                         (const unsigned char *)secret,
                                         secret_len, group ? group : student,
                                         problem, a.version, &text, &why)) {
                    fprintf(stderr, "%s: %s\n", WHO,
                            why ? why : "out of memory");
                    goto done;
                }
                int bad;
                if (a.out) {
                    char file[4096];
                    snprintf(file, sizeof file, "%s/%s.json", a.out, student);
                    FILE *f = fopen(file, "wb");
                    bad = !f || fputs(text, f) < 0;
                    bad |= f && fclose(f) != 0;
                    if (bad)
                        fprintf(stderr, "%s: %s: %s\n", WHO, file,
                                strerror(errno));
                } else {
                    bad = printf("{\"student\":\"%s\",%s%s%s\"request\":",
                                 student, group ? "\"group\":\"" : "",
                                 group ? group : "", group ? "\"," : "") < 0;
                    size_t tl = strlen(text);
                    bad |= fwrite(text, 1, tl - 1, stdout) != tl - 1 ||
                           fputs("}\n", stdout) < 0;
                }
                free(text);
                if (bad)
                    goto done;
            }
            students++;
            if (comma)
                *comma = ',';
            if (hash)
                *hash = '#';
            if (next)
                next[-1] = '\n';
        }
        free(seen);
        if (!write && students == 0) {
            fprintf(stderr, "%s: %s lists no student\n", WHO, a.roster);
            goto done;
        }
        if (write)
            fprintf(stderr, "%s: %zu variants of %s, version %s\n", WHO,
                    students, problem, a.version);
    }
    rc = fflush(stdout) == 0 ? 0 : -1;
done:
    free(req);
    free(roster);
    if (secret) {
        memset(secret, 0, secret_len);
        free(secret);
    }
    free(why);
    return rc;
}
