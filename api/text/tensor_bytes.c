/*
 * tensor_bytes.c — tensors as little-endian raw bytes (see
 * tensor_bytes.h). Entries are loaded and stored through memcpy, so the
 * bytes need no alignment, and byte-swapped on a big-endian host.
 */
#include "tensor_bytes.h"

#include <stdint.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} types[] = {
    [API_DT_NONE] = {"", 0},       [API_DT_FP64] = {"FP64", 8},
    [API_DT_FP32] = {"FP32", 4},   [API_DT_INT64] = {"INT64", 8},
    [API_DT_INT32] = {"INT32", 4}, [API_DT_BOOL] = {"BOOL", 1},
};

api_datatype api_datatype_parse(const char *s, size_t len) {
    for (size_t dt = API_DT_FP64; dt <= API_DT_BOOL; dt++)
        if (strlen(types[dt].name) == len && !memcmp(types[dt].name, s, len))
            return (api_datatype)dt;
    return API_DT_NONE;
}

const char *api_datatype_name(api_datatype dt) {
    return types[dt].name;
}

size_t api_datatype_size(api_datatype dt) {
    return types[dt].size;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LITTLE_ENDIAN_HOST 0
#else
#define LITTLE_ENDIAN_HOST 1
#endif

static uint64_t load64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return LITTLE_ENDIAN_HOST ? v : __builtin_bswap64(v);
}

static uint32_t load32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return LITTLE_ENDIAN_HOST ? v : __builtin_bswap32(v);
}

static void store64(unsigned char *p, uint64_t v) {
    v = LITTLE_ENDIAN_HOST ? v : __builtin_bswap64(v);
    memcpy(p, &v, 8);
}

static void store32(unsigned char *p, uint32_t v) {
    v = LITTLE_ENDIAN_HOST ? v : __builtin_bswap32(v);
    memcpy(p, &v, 4);
}

size_t api_bytes_bad_bool(const unsigned char *src, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (src[i] > 1)
            return i;
    return count;
}

double api_bytes_at(const unsigned char *src, size_t i, api_datatype dt) {
    switch (dt) {
    case API_DT_FP64: {
        uint64_t bits = load64(src + 8 * i);
        double x;
        memcpy(&x, &bits, 8);
        return x;
    }
    case API_DT_FP32: {
        uint32_t bits = load32(src + 4 * i);
        float x;
        memcpy(&x, &bits, 4);
        return (double)x; /* exact: every float is a double */
    }
    case API_DT_INT64:
        return (double)(int64_t)load64(src + 8 * i);
    case API_DT_INT32:
        return (double)(int32_t)load32(src + 4 * i);
    case API_DT_BOOL:
        return src[i] ? 1.0 : 0.0;
    default:
        return 0.0;
    }
}

void api_bytes_read(double *dst, const unsigned char *src, size_t count,
                    api_datatype dt) {
    if (dt == API_DT_FP64 && LITTLE_ENDIAN_HOST) { /* the bytes are doubles */
        memcpy(dst, src, count * sizeof *dst);
        return;
    }
    for (size_t i = 0; i < count; i++)
        dst[i] = api_bytes_at(src, i, dt);
}

void api_bytes_write(unsigned char *dst, const double *src, size_t count,
                     api_datatype dt) {
    switch (dt) {
    case API_DT_FP64:
        if (LITTLE_ENDIAN_HOST) {
            memcpy(dst, src, count * sizeof *src);
            break;
        }
        for (size_t i = 0; i < count; i++) {
            uint64_t bits;
            memcpy(&bits, &src[i], 8);
            store64(dst + 8 * i, bits);
        }
        break;
    case API_DT_FP32:
        for (size_t i = 0; i < count; i++) {
            /* the cast rounds to nearest, ties to even, in the default
             * rounding mode; a NaN stays a quiet NaN */
            float x = (float)src[i];
            uint32_t bits;
            memcpy(&bits, &x, 4);
            store32(dst + 4 * i, bits);
        }
        break;
    case API_DT_INT64:
        for (size_t i = 0; i < count; i++)
            store64(dst + 8 * i, (uint64_t)(int64_t)src[i]);
        break;
    case API_DT_INT32:
        for (size_t i = 0; i < count; i++)
            store32(dst + 4 * i, (uint32_t)(int32_t)src[i]);
        break;
    default:
        break;
    }
}
