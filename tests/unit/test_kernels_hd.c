/* The kernels suite's shared element logic (kernels.h), as the CUDA kernels
 * run it: input patterns, small-format encode/decode, GEMM bounds, fused
 * patterns and the reduce-scatter epilogue's routing, Flux figures, lists. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fleetprint/kernels.h"

static void test_inputs_exact(void)
{
    int seen[31] = {0};
    for (uint64_t i = 0; i < 4096; i++) {
        double v = fp_gemm_input(7, i);
        int q = (int)(v * 16) + 15;
        CHECK(q >= 0 && q <= 30 && v * 16 == floor(v * 16));
        seen[q]++;
        /* exact in every format the devices read */
        CHECK(fp_minifloat_decode(fp_minifloat_encode(v, 5, 10), 5, 10) == v);
        CHECK(fp_minifloat_decode(fp_minifloat_encode(v, 8, 7), 8, 7) == v);
        CHECK(fp_minifloat_decode(fp_minifloat_encode(v, 4, 3), 4, 3) == v);
    }
    for (int q = 0; q < 31; q++)
        CHECK(seen[q] > 80); /* all 31 values, roughly uniform (132 each) */
    /* every partial sum of k <= 65536 products (burn-in's largest GEMM) is
     * exact in an f32 accumulator, in any order, even the largest one */
    float fwd = 0, rev = 0, big = 0;
    double ref = 0;
    for (uint64_t i = 0; i < 65536; i++) {
        fwd += (float)(fp_gemm_input(7, i) * fp_gemm_input(8, i));
        rev += (float)(fp_gemm_input(7, 65535 - i) * fp_gemm_input(8, 65535 - i));
        ref += fp_gemm_input(7, i) * fp_gemm_input(8, i);
        big += i == 0 ? 0x1p-8f : 0.9375f * 0.9375f;
    }
    CHECK(fwd == ref && rev == ref && big == 0x1p-8 + 65535 * 0.9375 * 0.9375);
    int differ = 0; /* another seed gives another stream */
    for (uint64_t i = 0; i < 64; i++)
        differ += fp_gemm_input(7, i) != fp_gemm_input(8, i);
    CHECK(differ > 32);
}

static void test_minifloat(void)
{
    /* known encodings */
    CHECK(fp_minifloat_encode(1.0, 5, 10) == 0x3C00);
    CHECK(fp_minifloat_encode(-2.0, 5, 10) == 0xC000);
    CHECK(fp_minifloat_encode(65504.0, 5, 10) == 0x7BFF);
    CHECK(fp_minifloat_encode(1e6, 5, 10) == 0x7BFF);          /* saturates */
    CHECK(fp_minifloat_encode(0x1p-24, 5, 10) == 0x0001);      /* smallest subnormal */
    CHECK(fp_minifloat_encode(1.0, 8, 7) == 0x3F80);
    CHECK(fp_minifloat_encode(3.140625, 8, 7) == 0x4049);
    CHECK(fp_minifloat_encode(1.0, 4, 3) == 0x38);
    CHECK(fp_minifloat_encode(448.0, 4, 3) == 0x7E);           /* e4m3 max */
    CHECK(fp_minifloat_encode(1000.0, 4, 3) == 0x7E);
    CHECK(fp_minifloat_encode(0x1p-9, 4, 3) == 0x01);          /* e4m3 smallest subnormal */
    /* round to nearest even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 */
    CHECK(fp_minifloat_encode(1.0 + 0x1p-11, 5, 10) == 0x3C00);
    CHECK(fp_minifloat_encode(1.0 + 3 * 0x1p-11, 5, 10) == 0x3C02);
    CHECK(fp_minifloat_encode(2047.0 / 1024, 5, 10) == 0x3FFF);
    CHECK(fp_minifloat_encode(2047.5 / 1024, 5, 10) == 0x4000); /* carries into the exponent */
    /* round trip of every finite f16 pattern */
    int bad = 0;
    for (unsigned b = 0; b < 0x10000; b++) {
        if (((b >> 10) & 0x1F) == 0x1F)
            continue;
        bad += fp_minifloat_encode(fp_minifloat_decode(b, 5, 10), 5, 10) != b &&
               !(b == 0x8000); /* -0 encodes as +0 */
    }
    CHECK(bad == 0);
    CHECK(fp_minifloat_decode(0x7E, 4, 3) == 448.0);
    CHECK(fp_minifloat_decode(0x4049, 8, 7) == 3.140625);
}

static void test_bounds(void)
{
    /* an exact result passes; one ulp-ish error passes in f32 but not f64 */
    CHECK(!fp_gemm_elem_wrong(10.0, 10.0, 40.0, 128, 0));
    CHECK(!fp_gemm_elem_wrong(10.0 + 1e-5, 10.0, 40.0, 128, 1));
    CHECK(fp_gemm_elem_wrong(10.0 + 1e-5, 10.0, 40.0, 128, 0));
    CHECK(fp_gemm_elem_wrong(10.5, 10.0, 40.0, 128, 1));
    CHECK(!fp_gemm_elem_wrong(10.2, 10.0, 40.0, 128, 4)); /* bf16 is loose */
    CHECK(fp_gemm_elem_wrong(NAN, 10.0, 40.0, 128, 4));
    CHECK(fp_gemm_elem_wrong(INFINITY, 10.0, 40.0, 128, 1));
    /* the bitflip gemm.c injects (top exponent bit of a float) is always caught */
    float vals[] = {0.0f, 1.0f, -3.25f, 17.0f, 0.125f};
    for (int i = 0; i < 5; i++) {
        float f = vals[i];
        uint32_t u;
        memcpy(&u, &f, 4);
        u ^= 1u << 30;
        memcpy(&f, &u, 4);
        CHECK(fp_gemm_elem_wrong(f, vals[i], 40.0, 128, 1));
    }
}

/* The routing of the fused epilogue produces exactly the layout a chunked
 * reduce-scatter gives each rank: emulate both for 4 ranks. */
static void test_rs_route(void)
{
    enum { R = 4, M = 32, N = 6, MC = 8, K = 3 };
    double part[R][M * N], rs[R][M * N / R], ep[R][M * N / R];
    memset(ep, 0, sizeof ep);
    for (int r = 0; r < R; r++)
        for (int t = 0; t < M; t++)
            for (int j = 0; j < N; j++)
                part[r][t * N + j] = fp_fused_expect((uint64_t)t, (uint64_t)j, K, r + 1);
    /* chunk c's reduce-scatter: rank q receives block q of the chunk's storage */
    size_t cnt = MC * N / R;
    for (int c = 0; c < M / MC; c++)
        for (int q = 0; q < R; q++)
            for (size_t e = 0; e < cnt; e++) {
                double s = 0;
                for (int r = 0; r < R; r++)
                    s += part[r][(size_t)c * MC * N + q * cnt + e];
                rs[q][c * cnt + e] = s;
            }
    /* epilogue: every rank adds each element of its tile into its owner */
    for (int r = 0; r < R; r++)
        for (int t = 0; t < M; t++)
            for (int j = 0; j < N; j++) {
                int owner;
                uint64_t off;
                fp_rs_route((uint64_t)t, (uint64_t)j, N, MC, R, &owner, &off);
                CHECK(owner >= 0 && owner < R && off < M * N / R);
                ep[owner][off] += part[r][t * N + j];
            }
    CHECK(memcmp(rs, ep, sizeof rs) == 0);
    /* and the closed form of the sum the fused test checks against */
    int owner;
    uint64_t off;
    fp_rs_route(13, 5, N, MC, R, &owner, &off);
    CHECK(ep[owner][off] == fp_fused_expect(13, 5, K, R * (R + 1) / 2));
}

/* All-gather in chunks: every token lands exactly once, in a position the
 * emulated gather agrees with. */
static void test_ag_source(void)
{
    enum { R = 4, M = 48, MC = 12 };
    int hits[M] = {0};
    uint64_t rows = MC / R;
    for (uint64_t t = 0; t < M; t++) {
        uint64_t src = fp_ag_source(t, MC, R, M);
        CHECK(src < M);
        if (src < M)
            hits[src]++;
        /* emulate: chunk c, block q = rank q's local rows c*rows.. */
        uint64_t c = t / MC, q = (t % MC) / rows, l = c * rows + t % rows;
        CHECK(src == q * (M / R) + l);
    }
    for (int i = 0; i < M; i++)
        CHECK(hits[i] == 1);
    /* one chunk: the plain all-gather order */
    for (uint64_t t = 0; t < M; t++)
        CHECK(fp_ag_source(t, M, R, M) == t);
}

static void test_flux_and_lists(void)
{
    CHECK_NEAR(fp_flux_ect(12.0, 10.0), 2.0, 1e-12);
    CHECK_NEAR(fp_flux_efficiency(0.5, 2.0), 0.75, 1e-12);
    CHECK(fp_flux_efficiency(3.0, 2.0) < 0);
    CHECK(isnan(fp_flux_efficiency(1.0, 0.0)));
    double v[] = {5, 1, 4, 2, 3};
    CHECK(fp_median(v, 5) == 3);
    double w[] = {4, 1, 3, 2};
    CHECK(fp_median(w, 4) == 2.5);

    int out[8], n = 0, def[] = {1, 2};
    char err[256];
    fp_strlist l = {0};
    CHECK(fp_parse_int_list(&l, "chunks", def, 2, out, 8, &n, err, sizeof err) == FP_OK &&
          n == 2 && out[1] == 2);
    l.n = 2;
    l.item[0] = "1,2,4";
    l.item[1] = "8";
    CHECK(fp_parse_int_list(&l, "chunks", def, 2, out, 8, &n, err, sizeof err) == FP_OK &&
          n == 4 && out[2] == 4 && out[3] == 8);
    l.n = 1;
    l.item[0] = "2,x,4";
    CHECK(fp_parse_int_list(&l, "chunks", def, 2, out, 8, &n, err, sizeof err) == FP_EUSAGE &&
          strstr(err, "--chunks") && strstr(err, "item 2 'x'"));
    l.item[0] = "2,,4";
    CHECK(fp_parse_int_list(&l, "fused-m", def, 2, out, 8, &n, err, sizeof err) == FP_EUSAGE);
    l.item[0] = "0";
    CHECK(fp_parse_int_list(&l, "fused-m", def, 2, out, 8, &n, err, sizeof err) == FP_EUSAGE);
}

static void test_pack(void)
{
    double src[9], back;
    unsigned char buf[9 * 8];
    for (int i = 0; i < 9; i++)
        src[i] = (i - 4) * 0.25;
    for (int t = 0; t < FP_GEMM_TYPE_COUNT; t++) {
        fp_gemm_pack((fp_gemm_type)t, src, buf, 9);
        for (int i = 0; i < 9; i++) {
            back = fp_gemm_unpack((fp_gemm_type)t, buf, (size_t)i);
            CHECK(back == src[i]);
        }
    }
    CHECK(fp_gemm_in_size(FP_GEMM_FP8) == 1 && fp_gemm_out_size(FP_GEMM_BF16) == 4 &&
          fp_gemm_out_size(FP_GEMM_F64) == 8);
    CHECK(strcmp(fp_gemm_type_name(FP_GEMM_TF32), "tf32") == 0);
}

int main(void)
{
    test_inputs_exact();
    test_minifloat();
    test_bounds();
    test_rs_route();
    test_ag_source();
    test_flux_and_lists();
    test_pack();
    CHECK_DONE();
}
