/*
 * accept.h — content negotiation on the Accept request header (RFC 9110
 * section 12.5.1): the quality a client gives one media type, and the one
 * decision attnd makes with it — an SVG picture of the weights instead of
 * JSON (docs/contract.md section 11).
 */
#ifndef API_ACCEPT_H
#define API_ACCEPT_H

#include <stddef.h>

#include "api.h"

/* Media types the weight routes can answer. */
#define API_CT_SVG "image/svg+xml"

/* api_qvalue_parse, the weight of a range, is declared in api.h: public,
 * for the server's Accept-Encoding. */

/* The quality, in thousandths (0 … 1000), that the Accept header value
 * `accept` gives the media type `type` (e.g. "image/svg+xml"; no
 * parameters). The most specific matching media range decides (RFC 9110
 * section 12.5.1): "type/subtype" with parameters, then "type/subtype",
 * then "type/ *", then "* / *"; among equally specific ranges the highest q
 * wins. Names compare case-insensitively; parameters other than q only
 * make a range more specific. A range with a malformed q (not 0 … 1 with
 * at most three decimals) or a malformed type is ignored.
 * accept NULL (no header) → 1000: every type is acceptable. A header that
 * matches nothing (including an empty one) → 0. Never fails. */
int api_accept_quality(const char *accept, const char *type);

/* 1 when `accept` ranks image/svg+xml strictly above application/json by
 * quality, else 0. So "* / *" alone, a tie, no header, or a header that
 * allows neither type all mean JSON (the contract never answers 406). */
int api_accept_prefers_svg(const char *accept);

#endif /* API_ACCEPT_H */
