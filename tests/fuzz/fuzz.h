/*
 * fuzz.h — what the libFuzzer targets in tests/fuzz share: the entry point
 * declarations and fuzz_check(), which reports a broken invariant and
 * aborts (libFuzzer then saves the input as a crash). The regression replay
 * (tests/unit/test_fuzz_replay.c) includes the targets with
 * FUZZ_ON_FAILURE() defined as a cmocka failure instead.
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef FUZZ_ON_FAILURE
#define FUZZ_ON_FAILURE() abort()
#endif

/* Report "fuzz check failed: COND: detail" on stderr and fail. */
#define fuzz_check(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "fuzz check failed: %s: ", #cond);                 \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            FUZZ_ON_FAILURE();                                                 \
        }                                                                      \
    } while (0)

/* fuzz_fastpath's routes: byte 0 of an input picks one (corpus.c writes
 * its seeds with the same byte). Every route whose body the fast path
 * reads is among them (test_fuzz_replay.c checks it on the route table). */
#define FUZZ_FASTPATH_ROUTES                                                   \
    {                                                                          \
        "/attention/dot", "/attention/additive", "/attention/multihead",       \
            "/regression/nw", "/softmax/masked", "/grade",                     \
            "/v2/models/attention_dot/infer",                                  \
            "/v2/models/regression_nw/infer", "/attention/self",               \
            "/transformer/encoder", "/transformer/decoder"                     \
    }

#endif /* FUZZ_H */

/* libFuzzer's entry points, declared at every inclusion: the replay
 * includes several targets, renaming these two for each by macro. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
