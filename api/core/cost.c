/*
 * cost.c — a request's cost from its planned allocation (see cost.h).
 */
#include "cost.h"

#include "limit.h"

void api_cost_of_plan(api_cost *cost, size_t input_slots, const api_arena *plan,
                      uint64_t ops) {
    uint64_t slots = plan->overflow ? UINT64_MAX : plan->slots;
    uint64_t inputs = input_slots < slots ? input_slots : slots;
    cost->input_bytes = api_work_mul(inputs, 8);
    cost->working_bytes = api_work_mul(slots, 8);
    cost->answer_bytes =
        api_work_add(api_work_mul(slots - inputs, API_COST_NUMBER_TEXT),
                     API_COST_ANSWER_FRAME);
    cost->ops = ops;
}
