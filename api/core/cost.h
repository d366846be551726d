/*
 * cost.h — what answering one request costs, counted from its shapes
 * before any of it is paid (docs/architecture.md "Cost"). Each computing
 * route's entry (route.h) has a cost function; its handler calls
 * api_route_charge once the shapes are known, and --max-work is enforced
 * there, in one place.
 */
#ifndef API_COST_H
#define API_COST_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"

typedef struct {
    uint64_t input_bytes;   /* the request's tensors, read as doubles */
    uint64_t working_bytes; /* the request's one allocation (arena.h) */
    uint64_t answer_bytes;  /* the JSON answer, at most */
    uint64_t ops;           /* estimated multiply-adds (--max-work) */
} api_cost;

struct api_call;

/* A route's cost function: shapes is what its handler passes to
 * api_route_charge (the route's own struct of decoded shapes, documented
 * beside the function); call gives the body for options that change the
 * work (NW's "w": "cv"). Fills *cost. */
typedef void (*api_cost_fn)(const struct api_call *call, const void *shapes,
                            api_cost *cost);

/* Longest text of one answered number with its separator: the 25 bytes
 * of the widest double (numfmt.h) and a comma. */
#define API_COST_NUMBER_TEXT 26

/* Room for the keys, brackets and scalars of any answer. */
#define API_COST_ANSWER_FRAME 4096

/* The most text a streamed answer holds at once, besides its working set:
 * each of its items printed whole below API_STREAM_DEFER_MIN entries
 * (result.h, stream.h). */
#define API_COST_STREAMED_TEXT                                                 \
    ((uint64_t)API_RESULT_ITEMS_MAX * API_STREAM_DEFER_MIN *                   \
         API_COST_NUMBER_TEXT +                                                \
     API_COST_ANSWER_FRAME)

/* The cost of a request whose allocation is planned as plan, the first
 * input_slots of them the request's own tensors, doing ops operations.
 * Every number an answer holds lies in the allocation beyond the inputs
 * (or is one of its few scalars), which bounds answer_bytes. Saturates at
 * UINT64_MAX. */
void api_cost_of_plan(api_cost *cost, size_t input_slots, const api_arena *plan,
                      uint64_t ops);

/* Add the scratch lib/ allocates besides the request's allocation (the
 * bytes its *_workspace function gives, at their largest over the calls
 * the request makes, one at a time) to cost->working_bytes; overflowed
 * (ok 0: the workspace function refused the sizes) counts as UINT64_MAX.
 * Scratch is memory like any other: the budget reserves it. */
void api_cost_scratch(api_cost *cost, int ok, size_t bytes);

/* Set cost->answer_bytes from the numbers the answer prints, counted
 * from the request's flags (which members it asks for), when that is less
 * than api_cost_of_plan's bound (every slot beyond the inputs). */
void api_cost_answer(api_cost *cost, uint64_t numbers);

/* The most text an answer may hold: API_ANSWER_TENSORS_MAX tensors of
 * max_elements numbers (--max-elements), each at its widest, and the
 * frame. */
#define API_ANSWER_TENSORS_MAX 2
uint64_t api_cost_answer_max(size_t max_elements);

#endif /* API_COST_H */
