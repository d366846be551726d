/*
 * cors.c — the origin allow-list, parsed once at start and read-only after.
 */
#include "cors.h"

#include <ctype.h>
#include <string.h>

#define MAX_ORIGINS 32
#define ORIGINS_BYTES 1024

static int wildcard = 1;
static char storage[ORIGINS_BYTES];
static const char *allowed[MAX_ORIGINS];
static int n_allowed;

/* An origin as a browser sends it (RFC 6454 section 6.2): scheme "://"
 * host [":" port], with no path, not even a trailing slash (which would
 * never match), and no wildcard. */
static int valid_origin(const char *o) {
    const char *sep = strstr(o, "://");
    if (sep == NULL || sep == o || !isalpha((unsigned char)*o))
        return 0;
    for (const char *p = o; p < sep; p++)
        if (!isalnum((unsigned char)*p) && *p != '+' && *p != '-' && *p != '.')
            return 0;
    const char *host = sep + 3;
    if (*host == '\0')
        return 0;
    for (const char *p = host; *p; p++)
        if (*p <= ' ' || *p >= 0x7f || strchr("/?#*", *p) != NULL)
            return 0;
    return 1;
}

int srv_cors_init(const char *origins) {
    n_allowed = 0;
    wildcard = strcmp(origins, "*") == 0;
    if (wildcard)
        return 0;
    size_t len = strlen(origins);
    if (len >= sizeof storage)
        return -1;
    memcpy(storage, origins, len + 1);
    char *save = NULL;
    for (char *tok = strtok_r(storage, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ' || *tok == '\t')
            tok++;
        char *end = tok + strlen(tok);
        while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        if (*tok == '\0')
            continue;
        if (n_allowed == MAX_ORIGINS || !valid_origin(tok)) {
            n_allowed = 0;
            return -1;
        }
        allowed[n_allowed++] = tok;
    }
    return n_allowed > 0 ? 0 : -1;
}

const char *srv_cors_allow_origin(const char *origin, int *vary) {
    if (wildcard) {
        *vary = 0;
        return "*";
    }
    *vary = 1;
    if (origin == NULL)
        return NULL;
    for (int i = 0; i < n_allowed; i++)
        if (strcmp(origin, allowed[i]) == 0)
            return allowed[i];
    return NULL;
}
