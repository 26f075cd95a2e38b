/* Speed of `fleetprint whatif`: the artifact's ST trace (load + analysis, best of
 * 5) and a synthetic 1F1B trace of about --rows rows (default 1,000,000) written
 * to CSV, loaded and analysed; prints rows/s for each phase.
 *
 *   whatif_bench [--rows N] [--data DIR]   (DIR holds trace-ST.csv and meta-ST.yaml;
 *                                          default: the repository's tests/data/whatif)
 *
 * Exit 0 when every analysis succeeded with a finite slowdown, 1 otherwise; the
 * timings are printed, never asserted. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fleetprint/timer.h"
#include "fleetprint/whatif.h"

static int bench_st(const char *dir)
{
    char trace_path[1024], meta_path[1024];
    snprintf(trace_path, sizeof trace_path, "%s/trace-ST.csv", dir);
    snprintf(meta_path, sizeof meta_path, "%s/meta-ST.yaml", dir);
    double best_load = INFINITY, best_an = INFINITY, s = NAN;
    size_t rows = 0;
    for (int rep = 0; rep < 5; rep++) {
        fp_wi_meta meta;
        fp_wi_trace *t = NULL;
        fp_wi_result *r = NULL;
        double t0 = fp_clock();
        if (fp_wi_meta_load(meta_path, &meta) != FP_OK ||
            fp_wi_trace_load_csv(trace_path, &t) != FP_OK)
            return 1;
        double t1 = fp_clock();
        fp_status st = fp_wi_analyze(t, &meta, NULL, &r);
        double t2 = fp_clock();
        if (st != FP_OK)
            return 1;
        rows = fp_wi_trace_rows(t);
        s = r->blocking_slowdown;
        best_load = fmin(best_load, t1 - t0);
        best_an = fmin(best_an, t2 - t1);
        fp_wi_result_free(r);
        fp_wi_trace_free(t);
    }
    printf("ST trace: %zu rows, S %.4f: load %.1f ms, analysis %.1f ms, total %.1f ms "
           "(best of 5; target < 1000 ms)\n",
           rows, s, best_load * 1e3, best_an * 1e3, (best_load + best_an) * 1e3);
    return isfinite(s) ? 0 : 1;
}

static int bench_synth(long target)
{
    fp_wi_synth sp = fp_wi_synth_default();
    sp.dp = 32;
    sp.pp = 8;
    sp.microbatches = 16;
    sp.slow_dp = 5;
    sp.slow_stage = 2;
    sp.slow_factor = 1.3;
    long per_step = (long)sp.dp * (sp.pp * (2 * sp.microbatches + 6) +
                                   (sp.pp - 1) * 4 * sp.microbatches + 2);
    sp.steps = (int)((target + per_step - 1) / per_step);
    if (sp.steps < 1)
        sp.steps = 1;
    fp_wi_row *rows = NULL;
    size_t n = 0;
    double t0 = fp_clock();
    if (fp_wi_synth_rows(&sp, &rows, &n) != FP_OK)
        return 1;
    double t1 = fp_clock();
    char path[] = "/tmp/fp_whatif_bench_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    int rc = 1;
    fp_wi_trace *t = NULL;
    fp_wi_result *r = NULL;
    if (fp_wi_write_csv(rows, n, path) != FP_OK)
        goto done;
    double t2 = fp_clock();
    clock_t c2 = clock();
    if (fp_wi_trace_load_csv(path, &t) != FP_OK)
        goto done;
    double t3 = fp_clock();
    clock_t c3 = clock();
    fp_wi_meta meta = {.dp_size = sp.dp, .pp_size = sp.pp, .tp_size = 1, .dsp_size = 1,
                       .vpp_size = 1, .world_size = sp.dp * sp.pp};
    snprintf(meta.trial_name, sizeof meta.trial_name, "bench");
    if (fp_wi_analyze(t, &meta, NULL, &r) != FP_OK)
        goto done;
    double t4 = fp_clock();
    clock_t c4 = clock();
    double cpu_load = (double)(c3 - c2) / CLOCKS_PER_SEC, cpu_an = (double)(c4 - c3) / CLOCKS_PER_SEC;
    printf("synthetic 1F1B trace: %zu rows (dp %d, pp %d, %d microbatches, %d steps), "
           "S %.4f, %d attribution replays\n",
           n, sp.dp, sp.pp, sp.microbatches, sp.steps, r->blocking_slowdown,
           r->blocking[0].n + r->blocking[1].n + r->blocking[2].n);
    printf("  generate %8.3f s\n", t1 - t0);
    printf("  %-14s %8s %14s %8s %14s\n", "phase", "wall s", "rows/s (wall)", "cpu s",
           "rows/s (cpu)");
    printf("  %-14s %8.3f %14.0f %8.3f %14.0f\n", "CSV load", t3 - t2, (double)n / (t3 - t2),
           cpu_load, (double)n / cpu_load);
    printf("  %-14s %8.3f %14.0f %8.3f %14.0f\n", "analysis", t4 - t3, (double)n / (t4 - t3),
           cpu_an, (double)n / cpu_an);
    printf("  %-14s %8.3f %14.0f %8.3f %14.0f\n", "load+analysis", t4 - t2,
           (double)n / (t4 - t2), cpu_load + cpu_an, (double)n / (cpu_load + cpu_an));
    printf("  (wall above cpu means the machine was busy; analysis/load cpu ratio %.2f)\n",
           cpu_an / cpu_load);
    rc = isfinite(r->blocking_slowdown) && r->blocking_slowdown >= 1.0 ? 0 : 1;
done:
    fp_wi_result_free(r);
    fp_wi_trace_free(t);
    free(rows);
    unlink(path);
    return rc;
}

int main(int argc, char **argv)
{
    long target = 1000000;
    const char *dir = FP_TEST_DATA "/whatif";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc)
            target = atol(argv[++i]);
        else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            dir = argv[++i];
        else {
            fprintf(stderr, "usage: whatif_bench [--rows N] [--data DIR]\n");
            return 2;
        }
    }
    int rc = bench_st(dir);
    rc |= bench_synth(target);
    return rc;
}
