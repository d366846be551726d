/*
 * test_numpy_random.c — NumPy's legacy RandomState (lib/numpy_random.c)
 * against numpy 1.24's own output (tests/vectors/numpy_random.txt, made by
 * tests/vectors/gen_numpy_random.py), compared bit for bit (==): the raw
 * MT19937 words, one stream of randn / rand / random_sample calls with odd
 * counts (the cached normal crossing calls) per seed 0, 1, 42 and
 * 2^32 − 1, and the seed note's W_Q, W_K, W_V.
 */
#include "check.h"
#include "vectors.h"

#include "attn.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NP_VECTORS "tests/vectors/numpy_random.txt"

/* First values printed by numpy itself (python3 -c "import numpy as np;
 * np.random.seed(S); print(repr(np.random.randn()))" ...), by hand. */
static void test_first_values(void **state) {
    (void)state;
    attn_np_random rs;
    attn_np_seed(&rs, 0);
    assert_true(rs.key[0] == 0 && rs.key[1] == 1 && rs.key[2] == 0x6c078967u);
    assert_int_equal(rs.pos, ATTN_NP_STATE_LEN);
    assert_true(attn_np_next32(&rs) == 0x8c7f0aacu);
    attn_np_seed(&rs, 0);
    assert_true(attn_np_random_sample(&rs) == 0.5488135039273248);
    assert_true(attn_np_random_sample(&rs) == 0.7151893663724195);
    attn_np_seed(&rs, 42);
    assert_true(attn_np_random_sample(&rs) == 0.3745401188473625);
    attn_np_seed(&rs, 42);
    assert_true(attn_np_gauss(&rs) == 0.4967141530112327);
    assert_true(attn_np_gauss(&rs) == -0.13826430117118466);
    assert_true(attn_np_gauss(&rs) == 0.6476885381006925);
    attn_np_seed(&rs, 1);
    assert_true(attn_np_gauss(&rs) == 1.6243453636632417);
    attn_np_seed(&rs, UINT32_MAX);
    assert_true(rs.key[0] == 0xffffffffu && rs.key[1] == 0x4fe1da6du);
    assert_true(attn_np_gauss(&rs) == 0.6484086742306527);
}

/* np.random.seed with an array (init_by_array), against numpy 1.24's own
 * values (python3 -c "import numpy as np; np.random.seed([1, 2, 3, 4]);
 * print([x.hex() for x in np.random.randn(3)])" ...). */
static void test_seed_array(void **state) {
    (void)state;
    attn_np_random rs;
    const uint32_t k4[] = {1, 2, 3, 4};
    attn_np_seed_array(&rs, k4, 4);
    assert_true(attn_np_gauss(&rs) == -0x1.15cf93e369adcp-1);
    assert_true(attn_np_gauss(&rs) == 0x1.d6e8520fa2a94p-3);
    assert_true(attn_np_gauss(&rs) == -0x1.ca9f2856e8dd6p-1);
    const uint32_t big[] = {0x12345678u, 0x9abcdef0u, 7, 0xffffffffu};
    attn_np_seed_array(&rs, big, 4);
    assert_true(attn_np_random_sample(&rs) == 0x1.1e574fca2d79fp-1);
    assert_true(attn_np_random_sample(&rs) == 0x1.bf8f7db35cbd8p-2);
    /* a new seed drops the cached normal */
    attn_np_seed_array(&rs, k4, 4);
    attn_np_gauss(&rs);
    attn_np_seed_array(&rs, k4, 4);
    assert_int_equal(rs.has_gauss, 0);
    assert_true(attn_np_gauss(&rs) == -0x1.15cf93e369adcp-1);
}

/* The polar method by hand from the uniforms of the same stream: the first
 * normal is f·x2, the second the cached f·x1. */
static void test_polar_by_hand(void **state) {
    (void)state;
    attn_np_random a, b;
    attn_np_seed(&a, 7);
    attn_np_seed(&b, 7);
    double x1, x2, r2;
    do {
        x1 = 2.0 * attn_np_random_sample(&b) - 1.0;
        x2 = 2.0 * attn_np_random_sample(&b) - 1.0;
        r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    double f = sqrt(-2.0 * log(r2) / r2);
    assert_true(attn_np_gauss(&a) == f * x2);
    assert_int_equal(a.has_gauss, 1);
    assert_true(attn_np_gauss(&a) == f * x1);
    assert_int_equal(a.has_gauss, 0);
    /* the generator is where the hand-drawn one is */
    assert_int_equal(a.pos, b.pos);
}

/* Seeding again drops the cached normal (RandomState.seed's
 * _reset_gauss): seed, randn(1), seed, randn(1) gives the same value. */
static void test_seed_resets_cache(void **state) {
    (void)state;
    attn_np_random rs;
    attn_np_seed(&rs, 42);
    double first = attn_np_gauss(&rs);
    assert_int_equal(rs.has_gauss, 1);
    attn_np_seed(&rs, 42);
    assert_int_equal(rs.has_gauss, 0);
    assert_true(attn_np_gauss(&rs) == first);
}

/* Every case of the vector file, exact. */
static void test_vs_numpy(void **state) {
    (void)state;
    FILE *f = fopen(NP_VECTORS, "r");
    assert_non_null(f);
    vec_case c;
    int rc;
    size_t seeds = 0, notes = 0, compared = 0;
    while ((rc = vec_read_case(f, &c)) == 1) {
        attn_np_random rs;
        if (!strcmp(c.name, "notes_42")) {
            static const char *const names[3] = {"W_Q", "W_K", "W_V"};
            double W[32];
            attn_np_seed(&rs, 42);
            for (int m = 0; m < 3; m++) {
                const vec_tensor *want = vec_get(&c, names[m]);
                assert_int_equal(want->count, 32);
                attn_np_randn(&rs, W, 32);
                for (size_t i = 0; i < 32; i++) {
                    if (W[i] * 0.1 != want->data[i])
                        fail_msg("%s[%zu]: %.17g, numpy %.17g", names[m], i,
                                 W[i] * 0.1, want->data[i]);
                    compared++;
                }
            }
            notes++;
            vec_case_free(&c);
            continue;
        }
        uint32_t seed = (uint32_t)vec_data(&c, "seed")[0];
        const vec_tensor *raw = vec_get(&c, "raw");
        attn_np_seed(&rs, seed);
        for (size_t i = 0; i < raw->count; i++) {
            uint32_t got = attn_np_next32(&rs);
            if ((double)got != raw->data[i])
                fail_msg("%s raw[%zu]: %u, numpy %.0f", c.name, i, got,
                         raw->data[i]);
            compared++;
        }
        const vec_tensor *calls = vec_get(&c, "calls");
        const vec_tensor *values = vec_get(&c, "values");
        assert_int_equal(calls->rank, 2);
        attn_np_seed(&rs, seed);
        size_t at = 0;
        double *buf = malloc(values->count * sizeof(double));
        assert_non_null(buf);
        for (size_t k = 0; k < calls->dims[0]; k++) {
            int kind = (int)calls->data[2 * k];
            size_t n = (size_t)calls->data[2 * k + 1];
            assert_true(at + n <= values->count);
            if (kind == 0)
                attn_np_randn(&rs, buf + at, n);
            else
                attn_np_rand(&rs, buf + at, n);
            at += n;
        }
        assert_int_equal(at, values->count);
        for (size_t i = 0; i < at; i++) {
            if (buf[i] != values->data[i])
                fail_msg("%s value %zu: %.17g, numpy %.17g", c.name, i, buf[i],
                         values->data[i]);
            compared++;
        }
        free(buf);
        seeds++;
        vec_case_free(&c);
    }
    fclose(f);
    assert_int_equal(rc, 0);
    assert_int_equal(seeds, 4);
    assert_int_equal(notes, 1);
    print_message("# numpy legacy RandomState: %zu values, all bit for bit\n",
                  compared);
}

/* n = 0 writes nothing and draws nothing. */
static void test_zero_count(void **state) {
    (void)state;
    attn_np_random rs, copy;
    attn_np_seed(&rs, 3);
    (void)attn_np_gauss(&rs);
    memcpy(&copy, &rs, sizeof rs);
    double sentinel = 12.5;
    attn_np_randn(&rs, &sentinel, 0);
    attn_np_rand(&rs, &sentinel, 0);
    assert_true(sentinel == 12.5);
    assert_memory_equal(&rs, &copy, sizeof rs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_values),
        cmocka_unit_test(test_polar_by_hand),
        cmocka_unit_test(test_seed_array),
        cmocka_unit_test(test_seed_resets_cache),
        cmocka_unit_test(test_vs_numpy),
        cmocka_unit_test(test_zero_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
