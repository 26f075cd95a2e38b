/* The collective suite's pure parts: metric names, bus factors, geometry,
 * the size sweep, link plans, 16-bit floats. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fleetprint/collectives.h"

static void test_metric_names(void)
{
    char buf[32], fig[32];
    fp_coll_variant v = {FP_BF16, FP_MAX, true}, back;
    CHECK(strcmp(fp_coll_metric_name(buf, sizeof buf, "late_rank", &v), "late_rank_bf16_max_ip") == 0);
    CHECK(fp_coll_metric_parse(buf, fig, sizeof fig, &back));
    CHECK(strcmp(fig, "late_rank") == 0);
    CHECK(back.dtype == FP_BF16 && back.op == FP_MAX && back.in_place);
    fp_coll_variant none = {FP_F32, FP_REDOP_COUNT, false};
    CHECK(strcmp(fp_coll_metric_name(buf, sizeof buf, "time_max", &none), "time_max_f32_none_oop") == 0);
    CHECK(fp_coll_metric_parse(buf, fig, sizeof fig, &back));
    CHECK(strcmp(fig, "time_max") == 0 && back.op == FP_REDOP_COUNT && !back.in_place);
    /* not ours */
    CHECK(!fp_coll_metric_parse("triad_bw", fig, sizeof fig, &back));
    CHECK(!fp_coll_metric_parse("bw_inter", fig, sizeof fig, &back));
    CHECK(!fp_coll_metric_parse("busbw_f32_sum_xx", fig, sizeof fig, &back));
    CHECK(!fp_coll_metric_parse("busbw_f33_sum_ip", fig, sizeof fig, &back));
    CHECK(!fp_coll_metric_parse("_f32_sum_ip", fig, sizeof fig, &back));
    CHECK(!fp_coll_metric_parse("", fig, sizeof fig, &back));
}

static void test_factors_and_geometry(void)
{
    CHECK_NEAR(fp_coll_bus_factor(FP_ALLREDUCE, 4), 1.5, 1e-12);
    CHECK_NEAR(fp_coll_bus_factor(FP_ALLGATHER, 4), 0.75, 1e-12);
    CHECK_NEAR(fp_coll_bus_factor(FP_REDUCE_SCATTER, 8), 0.875, 1e-12);
    CHECK_NEAR(fp_coll_bus_factor(FP_ALLTOALL, 2), 0.5, 1e-12);
    CHECK(fp_coll_bus_factor(FP_BROADCAST, 8) == 1 && fp_coll_bus_factor(FP_REDUCE, 8) == 1);
    CHECK(fp_coll_bus_factor(FP_SENDRECV, 8) == 1 && fp_coll_bus_factor(FP_ALLREDUCE, 1) == 0);

    fp_coll_geom g = fp_coll_geometry(FP_ALLGATHER, 1048576, 4, 3);
    CHECK(g.count == 87381 && g.send_elems == 87381 && g.recv_elems == 262143);
    CHECK(g.bytes == 1048572);
    g = fp_coll_geometry(FP_REDUCE_SCATTER, 1000, 8, 5);
    CHECK(g.count == 25 && g.send_elems == 125 && g.bytes == 1000);
    g = fp_coll_geometry(FP_ALLTOALL, 100, 4, 3);
    CHECK(g.count == 8 && g.send_elems == 24 && g.recv_elems == 24 && g.bytes == 96);
    g = fp_coll_geometry(FP_ALLREDUCE, 1000003, 2, 5);
    CHECK(g.count == 500001 && g.bytes == 1000002);
    g = fp_coll_geometry(FP_ALLREDUCE, 0, 4, 4);
    CHECK(g.count == 0 && g.bytes == 0);
    g = fp_coll_geometry(FP_ALLGATHER, 8, 4, 3); /* fewer elements than ranks */
    CHECK(g.count == 0 && g.recv_elems == 0 && g.bytes == 0);
}

static void test_sizes(void)
{
    uint64_t s[64];
    int n = 0;
    char err[256];
    CHECK(fp_coll_sizes(1 << 20, 16 << 20, 2, s, 64, &n, err, sizeof err) == FP_OK);
    CHECK(n == 5 && s[0] == 1 << 20 && s[4] == 16 << 20);
    CHECK(fp_coll_sizes(0, 0, 2, s, 64, &n, err, sizeof err) == FP_OK && n == 1 && s[0] == 0);
    CHECK(fp_coll_sizes(0, 4, 2, s, 64, &n, err, sizeof err) == FP_OK);
    CHECK(n == 4 && s[0] == 0 && s[1] == 1 && s[2] == 2 && s[3] == 4);
    CHECK(fp_coll_sizes(1000, 3000, 1.5, s, 64, &n, err, sizeof err) == FP_OK);
    CHECK(n == 3 && s[1] == 1500 && s[2] == 2250);
    CHECK(fp_coll_sizes(10, 11, 1.01, s, 64, &n, err, sizeof err) == FP_OK); /* steps of at least 1 */
    CHECK(n == 2 && s[1] == 11);
    CHECK(fp_coll_sizes(2, 1, 2, s, 64, &n, err, sizeof err) == FP_EUSAGE);
    CHECK(strstr(err, "--min-bytes") != NULL);
    CHECK(fp_coll_sizes(1, 2, 1, s, 64, &n, err, sizeof err) == FP_EUSAGE);
    CHECK(strstr(err, "--step-factor") != NULL);
    CHECK(fp_coll_sizes(1, 2, NAN, s, 64, &n, err, sizeof err) == FP_EUSAGE);
    CHECK(fp_coll_sizes(1, 1ULL << 40, 1.1, s, 64, &n, err, sizeof err) == FP_EUSAGE);
    CHECK(strstr(err, "more than 64 sizes") != NULL);
}

/* Every pair at most once, a < b, rounds of disjoint pairs in order. */
static void check_plan(const fp_link_plan *p)
{
    for (int i = 0; i < p->npairs; i++) {
        int a = p->pair[i][0], b = p->pair[i][1];
        CHECK(a >= 0 && a < b && b < p->n);
        CHECK(p->round[i] >= 0 && p->round[i] < p->nrounds);
        CHECK(i == 0 || p->round[i] >= p->round[i - 1]);
        for (int j = 0; j < i; j++) {
            CHECK(!(p->pair[j][0] == a && p->pair[j][1] == b));
            if (p->round[j] == p->round[i])
                CHECK(p->pair[j][0] != a && p->pair[j][0] != b && p->pair[j][1] != a &&
                      p->pair[j][1] != b);
        }
    }
}

static void test_link_plans(void)
{
    fp_link_plan p;
    char err[160];
    CHECK(fp_link_plan_make("all", 8, 0, &p, err, sizeof err) == FP_OK);
    CHECK(p.npairs == 28 && p.nrounds == 7);
    check_plan(&p);
    for (int r = 0; r < 7; r++) {
        int in_round = 0;
        for (int i = 0; i < p.npairs; i++)
            in_round += p.round[i] == r;
        CHECK(in_round == 4);
    }
    fp_link_plan_free(&p);
    CHECK(fp_link_plan_make("all", 5, 0, &p, err, sizeof err) == FP_OK);
    CHECK(p.npairs == 10 && p.nrounds == 5);
    check_plan(&p);
    fp_link_plan_free(&p);
    CHECK(fp_link_plan_make("all", 1, 0, &p, err, sizeof err) == FP_OK);
    CHECK(p.npairs == 0 && p.nrounds == 0);
    fp_link_plan_free(&p);
    CHECK(fp_link_plan_make("ring", 8, 0, &p, err, sizeof err) == FP_OK);
    CHECK(p.npairs == 8 && p.nrounds == 2);
    check_plan(&p);
    fp_link_plan_free(&p);
    CHECK(fp_link_plan_make("ring", 2, 0, &p, err, sizeof err) == FP_OK && p.npairs == 1);
    fp_link_plan_free(&p);
    CHECK(fp_link_plan_make("k=2", 64, 0, &p, err, sizeof err) == FP_OK);
    CHECK(p.npairs == 128 && p.nrounds <= 5);
    check_plan(&p);
    fp_link_plan_free(&p);
    CHECK(fp_link_plan_make("k=100", 6, 0, &p, err, sizeof err) == FP_OK && p.npairs == 15);
    check_plan(&p);
    fp_link_plan_free(&p);
    fp_link_plan q;
    CHECK(fp_link_plan_make("random=3", 50, 0, &p, err, sizeof err) == FP_OK);
    CHECK(fp_link_plan_make("random=3", 50, 0, &q, err, sizeof err) == FP_OK);
    CHECK(p.npairs > 100 && p.npairs <= 150 && p.npairs == q.npairs);
    CHECK(memcmp(p.pair, q.pair, (size_t)p.npairs * sizeof *p.pair) == 0);
    check_plan(&p);
    fp_link_plan_free(&p);
    fp_link_plan_free(&q);
    /* later passes: the same pairs, in other rounds beside other pairs */
    const char *modes[] = {"all", "ring", "k=3", "random=2", NULL};
    for (int m = 0; modes[m]; m++) {
        fp_link_plan base;
        CHECK(fp_link_plan_make(modes[m], 9, 0, &base, err, sizeof err) == FP_OK);
        bool moved = false;
        for (int pass = 1; pass < 5; pass++) {
            CHECK(fp_link_plan_make(modes[m], 9, pass, &p, err, sizeof err) == FP_OK);
            check_plan(&p);
            CHECK(p.npairs == base.npairs);
            if (m == 0)
                CHECK(p.nrounds == 9);
            for (int i = 0; i < p.npairs; i++) {
                bool found = false;
                for (int j = 0; j < base.npairs; j++)
                    if (p.pair[i][0] == base.pair[j][0] && p.pair[i][1] == base.pair[j][1]) {
                        found = true;
                        moved |= p.round[i] != base.round[j];
                    }
                CHECK(found);
            }
            fp_link_plan_free(&p);
        }
        CHECK(moved);
        fp_link_plan_free(&base);
    }
    const char *bad[] = {"", "al", "k=", "k=0", "k=2x", "random=-1", "ring2", NULL};
    for (int i = 0; bad[i]; i++) {
        CHECK(fp_link_plan_make(bad[i], 8, 0, &p, err, sizeof err) == FP_EUSAGE);
        CHECK(strstr(err, "--pairs") != NULL);
    }
}

static void test_16bit(void)
{
    for (int i = -2048; i <= 2048; i++)
        CHECK(fp_half_to_double(fp_half_from_double(i)) == i);
    for (int i = -256; i <= 256; i++)
        CHECK(fp_bf16_to_double(fp_bf16_from_double(i)) == i);
    CHECK(fp_half_from_double(1.0) == 0x3c00 && fp_half_from_double(-2.0) == 0xc000);
    CHECK(fp_half_from_double(65504) == 0x7bff && fp_half_from_double(65520) == 0x7c00);
    CHECK(fp_half_from_double(1e6) == 0x7c00 && fp_half_from_double(-1e6) == 0xfc00);
    CHECK(fp_half_from_double(ldexp(1, -24)) == 0x0001 && fp_half_from_double(ldexp(1, -14)) == 0x0400);
    CHECK(fp_half_from_double(ldexp(1, -26)) == 0);
    CHECK(fp_half_from_double(1 + ldexp(1, -11)) == 0x3c00);     /* tie to even: down */
    CHECK(fp_half_from_double(1 + 3 * ldexp(1, -11)) == 0x3c02); /* tie to even: up */
    CHECK(isnan(fp_half_to_double(fp_half_from_double(NAN))));
    CHECK(fp_half_to_double(0x7c00) == INFINITY && fp_half_to_double(0x0001) == ldexp(1, -24));
    CHECK(fp_bf16_from_double(1.0) == 0x3f80);
    CHECK(fp_bf16_from_double(1 + ldexp(1, -8)) == 0x3f80);     /* tie to even: down */
    CHECK(fp_bf16_from_double(1 + 3 * ldexp(1, -8)) == 0x3f82); /* tie to even: up */
    CHECK(isnan(fp_bf16_to_double(fp_bf16_from_double(NAN))));
    CHECK(fp_bf16_to_double(0xff80) == -INFINITY);
}

int main(void)
{
    test_metric_names();
    test_factors_and_geometry();
    test_sizes();
    test_link_plans();
    test_16bit();
    CHECK_DONE();
}
