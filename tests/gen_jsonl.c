/* fp_gen_jsonl: write synthetic runs as fleetprint JSON Lines (docs/store.md),
 * for the store's tests and benchmark. Deterministic for a given --seed.
 *
 *   fp_gen_jsonl [--runs R] [--nodes N] [--gpus G] [--metrics M] [--iters I]
 *                [--seed S] [--prefix P] [--tag T] [--sku MODEL]
 *                [--sku2 MODEL --sku2-nodes K] [--sku2-factor F]
 *                [--bad-nodes B] [--bad-factor F] [--time T0] [--no-context]
 *
 * Each run has N nodes (n0000...) with G GPUs each (one rank per GPU); each of
 * M metrics is measured I times on every GPU: value = base(metric) * noise,
 * noise uniform in [0.98, 1.02]. The first B nodes are "bad" (values times
 * --bad-factor); the last K nodes carry --sku2 with values times
 * --sku2-factor. Run r is called P-r and starts at T0 + 3600 r. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

static double uniform(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

int main(int argc, char **argv)
{
    int runs = 1, nodes = 4, gpus = 2, metrics = 3, iters = 2, bad = 0, sku2_nodes = 0;
    int no_context = 0;
    unsigned long long seed = 1;
    double bad_factor = 0.5, sku2_factor = 2.0, t0 = 1.7e9;
    const char *prefix = "run", *tag = "test", *sku = "SIM-A100", *sku2 = "SIM-H100";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-context") == 0) {
            no_context = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "fp_gen_jsonl: %s needs a value\n", a);
            return 2;
        }
        i++;
        if (strcmp(a, "--runs") == 0) runs = atoi(v);
        else if (strcmp(a, "--nodes") == 0) nodes = atoi(v);
        else if (strcmp(a, "--gpus") == 0) gpus = atoi(v);
        else if (strcmp(a, "--metrics") == 0) metrics = atoi(v);
        else if (strcmp(a, "--iters") == 0) iters = atoi(v);
        else if (strcmp(a, "--seed") == 0) seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--prefix") == 0) prefix = v;
        else if (strcmp(a, "--tag") == 0) tag = v;
        else if (strcmp(a, "--sku") == 0) sku = v;
        else if (strcmp(a, "--sku2") == 0) sku2 = v;
        else if (strcmp(a, "--sku2-nodes") == 0) sku2_nodes = atoi(v);
        else if (strcmp(a, "--sku2-factor") == 0) sku2_factor = atof(v);
        else if (strcmp(a, "--bad-nodes") == 0) bad = atoi(v);
        else if (strcmp(a, "--bad-factor") == 0) bad_factor = atof(v);
        else if (strcmp(a, "--time") == 0) t0 = atof(v);
        else {
            fprintf(stderr, "fp_gen_jsonl: unknown option %s\n", a);
            return 2;
        }
    }
    rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
    static char buf[1 << 20];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    for (int r = 0; r < runs; r++) {
        char id[64];
        snprintf(id, sizeof id, "%s-%d", prefix, r);
        if (!no_context) {
            printf("{\"kind\":\"run\",\"run\":{\"id\":\"%s\",\"tag\":\"%s\",\"status\":\"complete\","
                   "\"time\":%.3f,\"duration\":12.5,\"command\":\"fp_gen_jsonl --seed %llu\","
                   "\"device_backend\":\"host\",\"comm_backend\":\"mpi\","
                   "\"fleetprint_version\":\"0.1.0\",\"mpi_version\":\"sim\",\"injections\":\"\","
                   "\"nodes\":[",
                   id, tag, t0 + 3600.0 * r, seed);
            for (int n = 0; n < nodes; n++)
                printf("%s\"n%04d\"", n ? "," : "", n);
            printf("],\"ranks\":[");
            for (int n = 0; n < nodes; n++)
                for (int g = 0; g < gpus; g++)
                    printf("%s{\"node\":\"n%04d\",\"local_rank\":%d,\"dev\":%d,\"model\":\"%s\","
                           "\"uuid\":\"GPU-%04d-%d\",\"pci_bus\":\"0000:%02x:00.0\"}",
                           n || g ? "," : "", n, g, g, n >= nodes - sku2_nodes ? sku2 : sku, n, g,
                           g + 16);
            printf("]}}\n");
        }
        double t = 0;
        for (int m = 0; m < metrics; m++) {
            double base = 100.0 + 10.0 * m;
            for (int n = 0; n < nodes; n++) {
                double f = (n < bad ? bad_factor : 1.0) *
                           (n >= nodes - sku2_nodes ? sku2_factor : 1.0);
                for (int g = 0; g < gpus; g++)
                    for (int it = 0; it < iters; it++) {
                        double v = base * f * (0.98 + 0.04 * uniform());
                        t += 0.001;
                        printf("{\"run\":\"%s\",\"suite\":\"kernels\",\"test\":\"t%d\","
                               "\"metric\":\"m%d\",\"unit\":\"GB/s\",\"better\":\"higher\","
                               "\"entity\":\"gpu:n%04d/%d\",\"size\":%d,\"iter\":%d,"
                               "\"value\":%.17g,\"t\":%.17g}\n",
                               id, m / 10, m, n, g, m % 3 ? 0 : 1048576 << (m % 4), it, v, t);
                    }
            }
        }
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
