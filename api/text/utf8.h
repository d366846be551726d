/*
 * utf8.h — UTF-8 validation of one encoded character (RFC 3629), shared by
 * every writer of JSON strings (response bodies, access log lines).
 */
#ifndef API_UTF8_H
#define API_UTF8_H

#include <stddef.h>

/* Length in bytes (1 … 4) of the valid UTF-8 sequence starting at s[0],
 * reading at most n bytes (n >= 1), or 0 when the sequence is invalid:
 * a stray continuation byte, an overlong form, a surrogate (U+D800 …
 * U+DFFF), a code point above U+10FFFF, or a sequence cut off by n
 * (RFC 3629 section 4). Never fails otherwise; reads nothing past s[n-1]. */
size_t api_utf8_len(const unsigned char *s, size_t n);

#endif /* API_UTF8_H */
