/* fp_bench_store_load STORE NODES GPUS METRICS: time loading a store's
 * baselines and looking up every (metric, entity) that fp_gen_jsonl made.
 * Exit 1 when a lookup misses (so the smoke test checks correctness). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fleetprint/store.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: fp_bench_store_load STORE NODES GPUS METRICS\n");
        return 2;
    }
    int nodes = atoi(argv[2]), gpus = atoi(argv[3]), metrics = atoi(argv[4]);
    double t0 = now();
    fp_store *s = NULL;
    fp_baselines *b = NULL;
    if (fp_store_open(&s, argv[1], FP_STORE_READ, 0) != FP_OK ||
        fp_store_load_baselines(s, &b) != FP_OK)
        return 1;
    double t1 = now();
    size_t found = 0, want = 0, sku_found = 0;
    for (int m = 0; m < metrics; m++) {
        char key[96];
        unsigned long long size = m % 3 ? 0 : 1048576ULL << (m % 4);
        if (size)
            snprintf(key, sizeof key, "kernels.t%d.m%d@%llu", m / 10, m, size);
        else
            snprintf(key, sizeof key, "kernels.t%d.m%d", m / 10, m);
        sku_found += fp_baselines_sku(b, key, "SIM-A100") != NULL;
        for (int n = 0; n < nodes; n++)
            for (int g = 0; g < gpus; g++) {
                char ent[64];
                snprintf(ent, sizeof ent, "gpu:n%04d/%d", n, g);
                found += fp_baselines_entity(b, key, ent) != NULL;
                want++;
            }
    }
    double t2 = now();
    printf("baseline load: %.3f s for %zu (metric, entity) and %zu (metric, SKU) rows, "
           "%d entities\n",
           t1 - t0, fp_baselines_entity_count(b), fp_baselines_sku_count(b), nodes * gpus);
    printf("baseline lookups: %zu of %zu found, %.2f M lookups/s\n", found, want,
           (double)want / (t2 - t1) / 1e6);
    fp_baselines_free(b);
    fp_store_close(s);
    return found == want && sku_found == (size_t)metrics ? 0 : 1;
}
