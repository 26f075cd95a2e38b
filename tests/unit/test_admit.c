/* Admission: shapes, availability, never an unusable node, rank order as a
 * valid hostlist, optimality against brute force on small clusters, warned
 * nodes last, determinism. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fleetprint/admit.h"

/* 3 pods x 2 leaves x 2 nodes: n[00-11], pod = node / 4, leaf = node / 2 */
static const char *conf = "SwitchName=l0 Nodes=n[00-01]\nSwitchName=l1 Nodes=n[02-03]\n"
                          "SwitchName=l2 Nodes=n[04-05]\nSwitchName=l3 Nodes=n[06-07]\n"
                          "SwitchName=l4 Nodes=n[08-09]\nSwitchName=l5 Nodes=n[10-11]\n"
                          "SwitchName=p0 Switches=l[0-1]\nSwitchName=p1 Switches=l[2-3]\n"
                          "SwitchName=p2 Switches=l[4-5]\nSwitchName=c Switches=p[0-2]\n";

/* Best objective over every assignment of cells to pods within capacity. */
static double brute(int R, int C, const int *cap, double alpha)
{
    int N = R * C, a[16], used[3] = {0};
    double best = 1e9;
    for (long code = 0;; code++) {
        long x = code;
        for (int k = 0; k < N; k++) {
            a[k] = (int)(x % 3);
            x /= 3;
        }
        if (x)
            break;
        memset(used, 0, sizeof used);
        int ok = 1;
        for (int k = 0; k < N; k++)
            ok &= ++used[a[k]] <= cap[a[k]];
        if (!ok)
            continue;
        int rmax = 0, cmax = 0;
        for (int s = 0; s < R; s++) {
            int seen[3] = {0}, n = 0;
            for (int d = 0; d < C; d++)
                n += !seen[a[s * C + d]]++;
            rmax = n > rmax ? n : rmax;
        }
        for (int d = 0; d < C; d++) {
            int seen[3] = {0}, n = 0;
            for (int s = 0; s < R; s++)
                n += !seen[a[s * C + d]]++;
            cmax = n > cmax ? n : cmax;
        }
        double obj = alpha * rmax + (1 - alpha) * cmax;
        best = obj < best ? obj : best;
    }
    return best;
}

int main(void)
{
    fp_topology *t;
    char err[512];
    CHECK(fp_topology_parse(conf, "t.conf", &t, err, sizeof err) == FP_OK);
    if (!t)
        CHECK_DONE();
    int n = fp_topology_nodes(t);
    unsigned char avail[12];

    /* shapes */
    fp_admit_shape sh = {.nodes = 12, .dp = 12, .tp = 4, .pp = 2};
    CHECK(fp_admit_resolve(&sh, err, sizeof err) == FP_OK);
    CHECK(sh.rows == 2 && sh.cols == 6 && sh.gpus_per_node == 8);
    fp_admit_shape s2 = {.nodes = 8, .pp = 2};
    CHECK(fp_admit_resolve(&s2, err, sizeof err) == FP_OK && s2.cols == 4 && s2.dp == 4);
    fp_admit_shape bad1 = {.nodes = 12, .dp = 12, .tp = 3};
    CHECK(fp_admit_resolve(&bad1, err, sizeof err) == FP_EUSAGE && strstr(err, "--tp 3"));
    fp_admit_shape bad2 = {.nodes = 10, .dp = 4, .pp = 2};
    CHECK(fp_admit_resolve(&bad2, err, sizeof err) == FP_EUSAGE && strstr(err, "not --nodes 10"));
    fp_admit_shape bad3 = {.nodes = 7, .pp = 2};
    CHECK(fp_admit_resolve(&bad3, err, sizeof err) == FP_EUSAGE && strstr(err, "multiple"));
    fp_admit_shape bad4 = {.nodes = 4, .alpha = 1.5};
    CHECK(fp_admit_resolve(&bad4, err, sizeof err) == FP_EUSAGE && strstr(err, "--alpha"));

    /* availability: free, exclude, fail, warn; unknown free names are errors */
    fp_hostlist *fr, *ex, *fa, *wa;
    CHECK(fp_hostlist_parse("n[00-09]", &fr, err, sizeof err) == FP_OK);
    CHECK(fp_hostlist_parse("n01,zz9", &ex, err, sizeof err) == FP_OK);
    CHECK(fp_hostlist_parse("n[04-05]", &fa, err, sizeof err) == FP_OK);
    CHECK(fp_hostlist_parse("n[08-09],n11", &wa, err, sizeof err) == FP_OK);
    fp_admit_health h = {.fail = fa, .warn = wa};
    CHECK(fp_admit_availability(t, fr, ex, &h, avail, err, sizeof err) == FP_OK);
    const unsigned char want[12] = {1, 0, 1, 1, 0, 0, 1, 1, 2, 2, 0, 0};
    CHECK(memcmp(avail, want, 12) == 0);

    /* 5 healthy + 2 warned usable: a 5-node job uses no warned node and no
     * unusable one; a 7-node job must use the warned ones; 8 cannot run */
    for (int N = 3; N <= 8; N++) {
        fp_admit_shape js = {.nodes = N, .alpha = 0.5};
        CHECK(fp_admit_resolve(&js, err, sizeof err) == FP_OK);
        for (int m = 0; m < 4; m++) {
            fp_placement p;
            fp_status st = fp_admit_place(t, &js, avail, (fp_admit_method)m, 7, &p, err, sizeof err);
            if (N == 8) {
                CHECK(st == FP_EFAIL && strstr(err, "only 5 free healthy and 2 warned"));
                continue;
            }
            CHECK(st == FP_OK && p.n == N);
            int seen[12] = {0};
            for (int k = 0; st == FP_OK && k < N; k++) {
                CHECK(p.node[k] >= 0 && p.node[k] < n && avail[p.node[k]] != 0);
                CHECK(seen[p.node[k]]++ == 0);
            }
            if (m != FP_ADMIT_RANDOM_FIT) /* random-fit may skip a healthy node */
                CHECK(p.score.warned == (N > 5 ? N - 5 : 0));
            else
                CHECK(p.score.warned <= (N > 5 ? 2 : 0));
            fp_placement_clear(&p);
        }
    }

    /* the rank-order hostlist expands back to the same nodes in order */
    {
        fp_admit_shape js = {.nodes = 4, .pp = 2, .alpha = 0.3};
        fp_admit_resolve(&js, err, sizeof err);
        fp_placement p;
        CHECK(fp_admit_place(t, &js, avail, FP_ADMIT_TOPO, 1, &p, err, sizeof err) == FP_OK);
        const char *names[12];
        for (int k = 0; k < p.n; k++)
            names[k] = fp_topology_node_name(t, p.node[k]);
        char *hl = fp_hostlist_compress(names, (size_t)p.n);
        fp_hostlist *back;
        CHECK(hl && fp_hostlist_parse(hl, &back, err, sizeof err) == FP_OK);
        CHECK(fp_hostlist_count(back) == (size_t)p.n);
        for (int k = 0; k < p.n; k++)
            CHECK(strcmp(fp_hostlist_get(back, (size_t)k), names[k]) == 0);
        /* same seed, same answer */
        fp_placement q;
        CHECK(fp_admit_place(t, &js, avail, FP_ADMIT_TOPO, 1, &q, err, sizeof err) == FP_OK);
        CHECK(memcmp(p.node, q.node, (size_t)p.n * sizeof(int)) == 0);
        fp_placement_clear(&q);
        fp_hostlist_free(back);
        free(hl);
        fp_placement_clear(&p);
    }

    /* optimal against brute force over pods, on random occupancies and shapes */
    static const int shapes[][2] = {{2, 3}, {3, 2}, {2, 2}, {1, 4}, {4, 1}, {3, 3}, {2, 4}};
    static const double alphas[] = {0, 0.3, 0.5, 0.7, 1};
    uint64_t rng = 42;
    int cases = 0, optimal = 0;
    for (int trial = 0; trial < 40; trial++) {
        for (int k = 0; k < n; k++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            avail[k] = (rng >> 40) % 4 != 0; /* about a quarter busy */
        }
        int cap[3] = {0};
        for (int k = 0; k < n; k++)
            cap[k / 4] += avail[k];
        for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
            int R = shapes[si][0], C = shapes[si][1];
            if (cap[0] + cap[1] + cap[2] < R * C)
                continue;
            for (size_t ai = 0; ai < 5; ai++) {
                fp_admit_shape js = {.nodes = R * C, .pp = R, .alpha = alphas[ai]};
                CHECK(fp_admit_resolve(&js, err, sizeof err) == FP_OK);
                fp_placement p;
                CHECK(fp_admit_place(t, &js, avail, FP_ADMIT_TOPO, 3, &p, err, sizeof err) == FP_OK);
                double opt = brute(R, C, cap, alphas[ai]);
                cases++;
                if (p.score.objective <= opt + 1e-9)
                    optimal++;
                else
                    fprintf(stderr, "R%d C%d alpha %.1f caps %d/%d/%d: ours %.2f, best %.2f\n", R,
                            C, alphas[ai], cap[0], cap[1], cap[2], p.score.objective, opt);
                CHECK(p.score.objective >= opt - 1e-9);
                fp_placement_clear(&p);
            }
        }
    }
    fprintf(stderr, "brute force: ours optimal in %d of %d cases\n", optimal, cases);
    CHECK(cases > 100 && optimal == cases);

    fp_hostlist_free(fr);
    fp_hostlist_free(ex);
    fp_hostlist_free(fa);
    fp_hostlist_free(wa);
    fp_topology_free(t);
    CHECK_DONE();
}
