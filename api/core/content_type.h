/*
 * content_type.h — what a request's Content-Type names: the one test the
 * dispatcher's 415 checks and the fronts' own (front.h) share.
 */
#ifndef API_CONTENT_TYPE_H
#define API_CONTENT_TYPE_H

/* 1 when the Content-Type value ct names the media type `type`
 * ("application/json"), else 0. The media type compares
 * case-insensitively (RFC 9110 section 8.3.1), blanks around it and
 * parameters are allowed; for any type but application/octet-stream (JSON,
 * JSON Lines) a charset parameter must say utf-8, as JSON is UTF-8 (RFC
 * 8259 section 8.1). ct NULL (no header) → 0. Never fails. */
int api_content_type_is(const char *ct, const char *type);

#endif /* API_CONTENT_TYPE_H */
