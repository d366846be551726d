/*
 * content_type.c — reading a Content-Type value (see content_type.h).
 */
#include "content_type.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "problem.h"

static const char *skip_ows(const char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* The media type, then each parameter (RFC 9110 section 5.6.6: name,
 * then a value plain or quoted), of which only charset is read. */
int api_content_type_is(const char *ct, const char *type) {
    int json = strcmp(type, API_CT_OCTET_STREAM) != 0;
    size_t type_len = strlen(type);
    if (!ct)
        return 0;
    ct = skip_ows(ct);
    if (strncasecmp(ct, type, type_len) != 0)
        return 0;
    ct = skip_ows(ct + type_len);
    while (*ct == ';') {
        ct = skip_ows(ct + 1);
        const char *name = ct;
        while (*ct && *ct != '=' && *ct != ';')
            ct++;
        size_t name_len = (size_t)(ct - name);
        while (name_len &&
               (name[name_len - 1] == ' ' || name[name_len - 1] == '\t'))
            name_len--;
        const char *value = "";
        size_t value_len = 0;
        if (*ct == '=') {
            ct = skip_ows(ct + 1);
            int quoted = *ct == '"';
            if (quoted)
                ct++;
            value = ct;
            while (*ct && (quoted ? *ct != '"' : *ct != ';'))
                ct++;
            value_len = (size_t)(ct - value);
            if (quoted && *ct == '"')
                ct++;
            while (
                !quoted && value_len &&
                (value[value_len - 1] == ' ' || value[value_len - 1] == '\t'))
                value_len--;
            ct = skip_ows(ct);
        }
        if (json && name_len == 7 && !strncasecmp(name, "charset", 7) &&
            !(value_len == 5 && !strncasecmp(value, "utf-8", 5)))
            return 0;
        if (*ct && *ct != ';')
            return 0;
    }
    return *ct == '\0';
}
