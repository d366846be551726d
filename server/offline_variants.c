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

#include "roster.h"
#include "variant_secret.h"
#include "variants.h"

#define WHO "attnd variants"
#define FILE_MAX ((size_t)16 << 20) /* request.json */

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
        SRV_VARIANT_SECRET_MIN);
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

const char *srv_problem_of_folder(const char *dir, char *buf, size_t n) {
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    const char *base = dir + len;
    while (base > dir && base[-1] != '/')
        base--;
    snprintf(buf, n, "%.*s", (int)(dir + len - base), base);
    return buf;
}

/* The problem id: --problem, else the question folder's own name. */
static const char *problem_of(const variants_args *a, char *buf, size_t n) {
    return a->problem ? a->problem : srv_problem_of_folder(a->question, buf, n);
}

int srv_offline_variants(int argc, char **argv) {
    variants_args a;
    int parsed = parse(&a, argc, argv);
    if (parsed)
        return parsed > 0 ? 0 : -1;
    int rc = -1;
    char *req = NULL, *why = NULL, err[512];
    size_t req_len;
    char path[4096], problem_buf[256];
    srv_roster roster;
    memset(&roster, 0, sizeof roster);
    api_variant_secret secret;
    memset(&secret, 0, sizeof secret);
    snprintf(path, sizeof path, "%s/request.json", a.question);
    if (slurp(path, &req, &req_len))
        goto done;
    if (srv_roster_read(a.roster, &roster, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", WHO, err);
        goto done;
    }
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
    int has = srv_variant_secret_read(a.secret_file, &secret, err, sizeof err);
    if (has <= 0) {
        fprintf(stderr, "%s: %s\n", WHO,
                has < 0 ? err
                        : "no secret: give --secret-file FILE or set "
                          "ATTND_VARIANT_SECRET");
        goto done;
    }
    const char *problem = problem_of(&a, problem_buf, sizeof problem_buf);
    if (a.out && mkdir(a.out, 0777) && errno != EEXIST) {
        fprintf(stderr, "%s: %s: %s\n", WHO, a.out, strerror(errno));
        goto done;
    }
    for (size_t i = 0; i < roster.n; i++) {
        const char *student = roster.ids[i], *group = roster.groups[i];
        char *text = NULL;
        if (api_variants_handout(req, req_len, path, secret.bytes, secret.len,
                                 group ? group : student, problem, a.version,
                                 &text, &why)) {
            fprintf(stderr, "%s: %s\n", WHO, why ? why : "out of memory");
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
                fprintf(stderr, "%s: %s: %s\n", WHO, file, strerror(errno));
        } else {
            bad = printf("{\"student\":\"%s\",%s%s%s\"request\":", student,
                         group ? "\"group\":\"" : "", group ? group : "",
                         group ? "\"," : "") < 0;
            size_t tl = strlen(text);
            bad |= fwrite(text, 1, tl - 1, stdout) != tl - 1 ||
                   fputs("}\n", stdout) < 0;
        }
        free(text);
        if (bad)
            goto done;
    }
    fprintf(stderr, "%s: %zu variants of %s, version %s\n", WHO, roster.n,
            problem, a.version);
    rc = fflush(stdout) == 0 ? 0 : -1;
done:
    free(req);
    srv_roster_free(&roster);
    srv_variant_secret_free(&secret);
    free(why);
    return rc;
}
