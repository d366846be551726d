/*
 * test_fuzz_replay.c — the fuzz targets' invariants in every `make test`,
 * without libFuzzer: each target of tests/fuzz (fuzz_request, fuzz_tensor,
 * fuzz_numfmt, fuzz_fastpath) runs on its seed corpus
 * (tests/fuzz/corpus.c: every data case, every JSONTestSuite file, the
 * boundary doubles) and on every input saved under
 * tests/fuzz/regressions/<target>/ (inputs that once broke an invariant or
 * crashed; each file is named after the bug it caught). A broken invariant
 * is a cmocka failure naming the input. Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* the input being replayed, named when an invariant breaks */
static char replay_current[700];
#define FUZZ_ON_FAILURE() fail_msg("input: %s", replay_current)

#define LLVMFuzzerTestOneInput fuzz_request_one
#define LLVMFuzzerInitialize fuzz_request_init
#include "../fuzz/fuzz_request.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize

#define LLVMFuzzerTestOneInput fuzz_tensor_one
#define LLVMFuzzerInitialize fuzz_tensor_init
#include "../fuzz/fuzz_tensor.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize

#define LLVMFuzzerTestOneInput fuzz_numfmt_one
#define LLVMFuzzerInitialize fuzz_numfmt_init
#include "../fuzz/fuzz_numfmt.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize

#define LLVMFuzzerTestOneInput fuzz_fastpath_one
#define LLVMFuzzerInitialize fuzz_fastpath_init
#include "../fuzz/fuzz_fastpath.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize

#define CORPUS_NO_MAIN
#include "../fuzz/corpus.c"

#define REGRESSIONS_DIR "tests/fuzz/regressions"

typedef int (*fuzz_target)(const uint8_t *data, size_t size);
static const fuzz_target replay_targets[CORPUS_TARGETS] = {
    fuzz_request_one, fuzz_tensor_one, fuzz_numfmt_one, fuzz_fastpath_one};

static int replay_only = -1; /* the target whose seeds run, -1: none */
static size_t replay_count;

static void replay_sink(int target, const char *name, const unsigned char *data,
                        size_t size) {
    if (target != replay_only)
        return;
    snprintf(replay_current, sizeof replay_current, "%s seed %s",
             corpus_targets[target], name);
    replay_targets[target](data, size);
    replay_count++;
}

static void replay(void **state) {
    int target = (int)(intptr_t)*state;
    replay_only = target;
    replay_count = 0;
    corpus_sink = replay_sink;
    case_seeds();
    suite_seeds();
    binary_seeds();
    batch_seeds();
    numfmt_seeds();
    size_t seeds = replay_count;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/%s", REGRESSIONS_DIR, corpus_targets[target]);
    char **names;
    size_t n = test_list(dir, 0, &names);
    for (size_t i = 0; i < n; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t len = 0;
        char *data = test_slurp(path, &len);
        assert_non_null(data);
        snprintf(replay_current, sizeof replay_current, "%s", path);
        replay_targets[target]((const uint8_t *)data, len);
        free(data);
    }
    test_list_free(names, n);
    replay_only = -1;
    printf("# %s: %zu seeds and %zu regression inputs hold every "
           "invariant\n",
           corpus_targets[target], seeds, n);
    assert_true(seeds > 0);
}

/* Every route the fast path reads a body of is one fuzz_fastpath picks:
 * a route added to the table is fuzzed without anyone remembering to. */
static void fastpath_routes_cover_the_table(void **state) {
    (void)state;
    for (size_t i = 0; i < api_route_count(); i++) {
        const api_route *r = api_route_at(i);
        if (api_route_fast_fields(r)[0] == NULL)
            continue;
        int picked = 0;
        for (size_t k = 0; k < CORPUS_FASTPATH_ROUTES; k++)
            picked |= api_route_find(corpus_fastpath_routes[k]) == r;
        if (!picked)
            fail_msg("%s %s is read by the fast path but not in "
                     "FUZZ_FASTPATH_ROUTES (tests/fuzz/fuzz.h)",
                     r->method, r->path);
    }
}

int main(void) {
    fuzz_request_init(NULL, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fastpath_routes_cover_the_table),
        {"fuzz_request invariants on seeds and regressions", replay, NULL, NULL,
         (void *)(intptr_t)CORPUS_REQUEST},
        {"fuzz_tensor invariants on seeds and regressions", replay, NULL, NULL,
         (void *)(intptr_t)CORPUS_TENSOR},
        {"fuzz_numfmt invariants on seeds and regressions", replay, NULL, NULL,
         (void *)(intptr_t)CORPUS_NUMFMT},
        {"fuzz_fastpath invariants on seeds and regressions", replay, NULL,
         NULL, (void *)(intptr_t)CORPUS_FASTPATH},
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
