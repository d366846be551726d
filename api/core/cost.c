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

void api_cost_scratch(api_cost *cost, int ok, size_t bytes) {
    cost->working_bytes =
        api_work_add(cost->working_bytes, ok ? bytes : UINT64_MAX);
}

void api_cost_answer(api_cost *cost, uint64_t numbers) {
    uint64_t bytes = api_work_add(api_work_mul(numbers, API_COST_NUMBER_TEXT),
                                  API_COST_ANSWER_FRAME);
    if (bytes < cost->answer_bytes)
        cost->answer_bytes = bytes;
}

uint64_t api_cost_answer_max(size_t max_elements) {
    return api_work_add(
        api_work_mul(api_work_mul(max_elements, API_ANSWER_TENSORS_MAX),
                     API_COST_NUMBER_TEXT),
        API_COST_ANSWER_FRAME);
}
