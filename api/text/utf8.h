/*
 * utf8.h — UTF-8 validation of one encoded character (RFC 3629), shared by
 * every writer of JSON strings (response bodies, access log lines).
 */
#ifndef API_UTF8_H
#define API_UTF8_H

#include <stddef.h>

#include "api.h"

/* api_utf8_len, this module's one function, is declared in api.h:
 * public, for the server's access log. */

#endif /* API_UTF8_H */
