/*
 * query.h — query parameters of GET routes, checked like body fields
 * (docs/contract.md "HTTP behaviour"): a repeated parameter — the last wins; an
 * unknown one -> 422 unknown_field; an empty or non-numeric value -> 422
 * wrong_type; out of range -> 422 invalid_value (the handler's); pointer
 * "/<name>". Names and values are percent-decoded, '+' is a space
 * (application/x-www-form-urlencoded, WHATWG URL section 5.1).
 */
#ifndef API_QUERY_H
#define API_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "problem.h"

/* The value of a parameter whose decoded value contains a NUL byte. */
#define API_QUERY_NUL "(a value containing %00)"

typedef struct {
    const char *name;  /* known parameter name (static) */
    const char *value; /* decoded value of the last occurrence; NULL: absent */
} api_query_param;

/* Split and decode query (raw, without '?'; NULL = empty) into params
 * (n known names, values set here). *storage receives the decoded copy the
 * values point into; the caller frees it (also on error). Returns 0, or -1
 * with p set: unknown_field for the first unknown name (closest known name
 * in the detail), or internal when memory runs out. */
int api_query_parse(char **storage, const char *query, api_query_param *params,
                    size_t n, api_problem *p);

/* 1 when the NUL-terminated text s is a number by JSON's grammar (RFC 8259
 * section 6: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, nothing
 * before or after), else 0. *integer is set to 1 when the text has neither
 * fraction nor exponent, else 0 (meaningful only when 1 is returned).
 * Checks the text only; no value is computed. */
int api_query_number_syntax(const char *s, int *integer);

/* A number with JSON's grammar (RFC 8259 section 6), into *out.
 * Returns 0; 1 when the value does not fit a double (e.g. 1e400: the
 * caller's invalid_value); -1 with wrong_type set when it is empty or not a
 * number. */
int api_query_number(const api_query_param *q, double *out, api_problem *p);

/* An integer (JSON integer, or integral number such as "2.0") into *out.
 * Returns 0; 1 when it lies outside int64 (*out then INT64_MIN or
 * INT64_MAX by sign, for the caller's invalid_value); -1 with wrong_type
 * set when empty, not a number, or has a fraction. */
int api_query_int(const api_query_param *q, int64_t *out, api_problem *p);

#endif /* API_QUERY_H */
