/* Simulation of topology-aware admission on the cluster shapes Arnold used
 * (arXiv 2509.15940): 3 minipods / 18 nodes / DP12 TP4 PP2, 5 / 438 / DP24
 * TP4 PP8 and 11 / 1,019 / DP46 TP8 PP8, each partly occupied at random
 * (several seeds and occupancy levels), alpha in {0, .3, .5, .7, 1}.
 * Prints, per setting and alpha, the mean objective of ours and of first-fit,
 * best-fit and random-fit, the ratio best baseline / ours, how many seeds ours
 * was worse (must be 0), and the time ours took; then the 10,000-node timing.
 *
 *   admit_sim            full run
 *   admit_sim --smoke    one seed per setting, correctness only (a ctest) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleetprint/admit.h"
#include "fleetprint/topology.h"

typedef struct cluster {
    const char *name;
    int pods, nodes, leaf_size;
    int dp, tp, pp;
    double occupancy[3];
} cluster;

static const cluster clusters[] = {
    {"(i) 3 pods, 18 nodes", 3, 18, 3, 12, 4, 2, {0.10, 0.20, 0.30}},
    {"(ii) 5 pods, 438 nodes", 5, 438, 16, 24, 4, 8, {0.20, 0.40, 0.60}},
    {"(iii) 11 pods, 1019 nodes", 11, 1019, 16, 46, 8, 8, {0.20, 0.40, 0.60}},
};
static const double alphas[] = {0, 0.3, 0.5, 0.7, 1};
#define NSEEDS 8
#define NMETHODS 4

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* topology.conf text: pods of near-equal size, leaves of leaf_size nodes. */
static char *make_conf(int pods, int nodes, int leaf_size)
{
    size_t cap = 256 + (size_t)nodes * 64;
    char *s = malloc(cap);
    size_t n = 0;
    int node = 0, leaf = 0;
    for (int p = 0; p < pods; p++) {
        int in_pod = nodes / pods + (p < nodes % pods ? 1 : 0);
        int first_leaf = leaf;
        for (int k = 0; k < in_pod; k += leaf_size) {
            int m = in_pod - k < leaf_size ? in_pod - k : leaf_size;
            n += (size_t)snprintf(s + n, cap - n, "SwitchName=leaf%d Nodes=gpu[%05d-%05d]\n",
                                  leaf, node, node + m - 1);
            node += m;
            leaf++;
        }
        n += (size_t)snprintf(s + n, cap - n, "SwitchName=pod%d Switches=leaf[%d-%d]\n", p,
                              first_leaf, leaf - 1);
    }
    n += (size_t)snprintf(s + n, cap - n, "SwitchName=core Switches=pod[0-%d]\n", pods - 1);
    return s;
}

/* Occupy about frac of the nodes with runs of 1..8 consecutive nodes (other
 * jobs), at random. */
static void occupy(unsigned char *avail, int n, double frac, uint64_t *rng)
{
    memset(avail, FP_ADMIT_HEALTHY, (size_t)n);
    int target = (int)(frac * n + 0.5), busy = 0;
    while (busy < target) {
        int start = (int)(rnd(rng) % (uint64_t)n), len = 1 + (int)(rnd(rng) % 8);
        for (int k = start; k < start + len && k < n && busy < target; k++)
            if (avail[k]) {
                avail[k] = FP_ADMIT_UNAVAILABLE;
                busy++;
            }
    }
}

/* Every node usable and used once. */
static bool valid(const fp_placement *p, const unsigned char *avail, int n)
{
    unsigned char *seen = calloc((size_t)n, 1);
    bool ok = seen != NULL;
    for (int k = 0; ok && k < p->n; k++) {
        int x = p->node[k];
        ok = x >= 0 && x < n && avail[x] != FP_ADMIT_UNAVAILABLE && !seen[x];
        if (ok)
            seen[x] = 1;
    }
    free(seen);
    return ok;
}

int main(int argc, char **argv)
{
    bool smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
    int nseeds = smoke ? 1 : NSEEDS;
    int failures = 0, worse_total = 0;
    double ratio_sum = 0, ratio_max = 0;
    int ratio_n = 0;
    const char *ratio_max_at = "";
    char where[160], err[512];
    static char best_where[160];

    printf("%-26s %5s %5s %7s %9s %9s %9s %9s %8s %6s %9s\n", "cluster", "occ", "alpha",
           "ours", "first-fit", "best-fit", "rand-fit", "best-base", "ratio", "worse",
           "ours ms");
    for (size_t ci = 0; ci < sizeof clusters / sizeof *clusters; ci++) {
        const cluster *cl = &clusters[ci];
        char *conf = make_conf(cl->pods, cl->nodes, cl->leaf_size);
        fp_topology *t;
        if (fp_topology_parse(conf, "sim", &t, err, sizeof err) != FP_OK) {
            fprintf(stderr, "admit_sim: %s\n", err);
            return 2;
        }
        free(conf);
        int n = fp_topology_nodes(t);
        unsigned char *avail = malloc((size_t)n);
        for (int oi = 0; oi < 3; oi++) {
            for (size_t ai = 0; ai < sizeof alphas / sizeof *alphas; ai++) {
                fp_admit_shape sh = {.dp = cl->dp, .tp = cl->tp, .pp = cl->pp,
                                     .alpha = alphas[ai]};
                if (fp_admit_resolve(&sh, err, sizeof err) != FP_OK) {
                    fprintf(stderr, "admit_sim: %s\n", err);
                    return 2;
                }
                double sum[NMETHODS] = {0}, secs = 0;
                int worse = 0;
                for (int seed = 1; seed <= nseeds; seed++) {
                    uint64_t rng = (uint64_t)seed * 7919u + ci * 104729u + (uint64_t)oi * 31u;
                    occupy(avail, n, cl->occupancy[oi], &rng);
                    double obj[NMETHODS];
                    for (int m = 0; m < NMETHODS; m++) {
                        fp_placement p;
                        double t0 = now();
                        fp_status st = fp_admit_place(t, &sh, avail, (fp_admit_method)m,
                                                      (uint64_t)seed, &p, err, sizeof err);
                        if (m == FP_ADMIT_TOPO)
                            secs += now() - t0;
                        if (st != FP_OK || !valid(&p, avail, n)) {
                            fprintf(stderr, "admit_sim: %s seed %d: %s\n", cl->name, seed,
                                    st != FP_OK ? err : "invalid placement");
                            failures++;
                            obj[m] = 0;
                        } else {
                            obj[m] = p.score.objective;
                        }
                        sum[m] += obj[m];
                        fp_placement_clear(&p);
                    }
                    for (int m = 1; m < NMETHODS; m++)
                        if (obj[0] > obj[m] + 1e-9)
                            worse++;
                }
                int bestb = 1;
                for (int m = 2; m < NMETHODS; m++)
                    if (sum[m] < sum[bestb])
                        bestb = m;
                double ratio = sum[bestb] / sum[0];
                snprintf(where, sizeof where, "%s, occupancy %.2f, alpha %.1f", cl->name,
                         cl->occupancy[oi], alphas[ai]);
                printf("%-26s %5.2f %5.1f %7.3f %9.3f %9.3f %9.3f %9s %7.3fx %6d %9.2f\n",
                       cl->name, cl->occupancy[oi], alphas[ai], sum[0] / nseeds,
                       sum[1] / nseeds, sum[2] / nseeds, sum[3] / nseeds,
                       fp_admit_method_name((fp_admit_method)bestb), ratio, worse,
                       1e3 * secs / nseeds);
                ratio_sum += ratio;
                ratio_n++;
                if (ratio > ratio_max) {
                    ratio_max = ratio;
                    snprintf(best_where, sizeof best_where, "%s", where);
                    ratio_max_at = best_where;
                }
                worse_total += worse;
            }
        }
        free(avail);
        fp_topology_free(t);
    }
    printf("\nbest baseline / ours: average %.3fx over %d settings, best %.3fx (%s); "
           "seeds where ours was worse: %d\n",
           ratio_sum / ratio_n, ratio_n, ratio_max, ratio_max_at, worse_total);

    if (!smoke) { /* timing at scale: 1,019 and 10,000 nodes */
        static const struct {
            int pods, nodes, dp, tp, pp;
        } big[] = {{11, 1019, 46, 8, 8}, {40, 10000, 512, 8, 8}, {40, 10000, 4000, 8, 1}};
        for (size_t b = 0; b < sizeof big / sizeof *big; b++) {
            char *conf = make_conf(big[b].pods, big[b].nodes, 16);
            fp_topology *t;
            double t0 = now();
            if (fp_topology_parse(conf, "sim", &t, err, sizeof err) != FP_OK)
                return 2;
            double tparse = now() - t0;
            free(conf);
            int n = fp_topology_nodes(t);
            unsigned char *avail = malloc((size_t)n);
            uint64_t rng = 99;
            occupy(avail, n, 0.3, &rng);
            fp_admit_shape sh = {.dp = big[b].dp, .tp = big[b].tp, .pp = big[b].pp,
                                 .alpha = 0.5};
            fp_admit_resolve(&sh, err, sizeof err);
            double worst = 0;
            for (int rep = 0; rep < 3; rep++) {
                fp_placement p;
                t0 = now();
                if (fp_admit_place(t, &sh, avail, FP_ADMIT_TOPO, (uint64_t)rep + 1, &p, err,
                                   sizeof err) != FP_OK || !valid(&p, avail, n))
                    failures++;
                double dt = now() - t0;
                worst = dt > worst ? dt : worst;
                fp_placement_clear(&p);
            }
            printf("timing: %5d nodes, %3d pods, job %4d nodes (DP%d TP%d PP%d): parse %.1f ms, "
                   "admission worst of 3 %.1f ms\n",
                   n, big[b].pods, sh.nodes, big[b].dp, big[b].tp, big[b].pp, 1e3 * tparse,
                   1e3 * worst);
            free(avail);
            fp_topology_free(t);
        }
    }
    if (failures || worse_total) {
        fprintf(stderr, "admit_sim: %d invalid placements, %d cases worse than a baseline\n",
                failures, worse_total);
        return 1;
    }
    return 0;
}
