/*
 * status.c — English text for every attn_status.
 */
#include "attn.h"

const char *attn_status_str(attn_status s) {
    switch (s) {
    case ATTN_OK:
        return "ok";
    case ATTN_E_INVALID_ARG:
        return "invalid argument";
    case ATTN_E_OVERFLOW:
        return "size overflow";
    case ATTN_E_NOMEM:
        return "out of memory";
    case ATTN_E_VALID_LEN:
        return "valid_lens entry out of range";
    case ATTN_E_FULLY_MASKED:
        return "a query sees no key";
    case ATTN_E_NONFINITE:
        return "result is not finite";
    case ATTN_E_ZERO_MASS:
        return "zero kernel mass";
    case ATTN_E_BAD_STEP:
        return "gradient step left the valid range";
    case ATTN_E_TOO_FEW:
        return "too few points";
    case ATTN_E_DEADLINE:
        return "the time limit passed";
    }
    return "unknown status";
}
