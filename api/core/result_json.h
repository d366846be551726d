/*
 * result_json.h — a typed result (result.h) as the JSON answer of
 * docs/contract.md section 3: members in the result's order, groups as
 * nested objects, tensors in the request's tensor_format and precision.
 */
#ifndef API_RESULT_JSON_H
#define API_RESULT_JSON_H

#include "buf.h"
#include "problem.h"
#include "result.h"

/* Append r as one JSON object to out. Large tensors are left as holes
 * when out allows it (stream.h: api_stream_allow with r->arena before,
 * api_stream_hand_over after). Items are checked as they are written
 * (api_result_check_item): the first that cannot be printed stops the
 * writing with its error in p and -1 (out is then partial and must be
 * discarded). Returns 0 on success. */
int api_result_write_json(const api_result *r, api_buf *out, api_problem *p);

#endif /* API_RESULT_JSON_H */
