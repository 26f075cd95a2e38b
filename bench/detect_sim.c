/* Detector accuracy and speed on simulated fleets.
 *
 *   detect_sim [--smoke] [--explain] [--seeds N] [--nodes N ...]
 *
 * For each fleet size and seed: make the fleet (fleetprint simulate's model:
 * heavy-tailed noise, per-SKU bases, persistent node/device offsets, diurnal
 * drift; slow GPUs, slow nodes, bad links, SDC, throttling from a window on,
 * intermittent episodes), run the detector on the live run with the default
 * rules and peer evidence only (a first run on a new fleet: no baseline), and
 * score failing nodes against the truth. Prints per-seed and pooled node
 * precision, recall, F1, link precision/recall, and seconds per detect (one
 * core; the median over seeds). --smoke: one small fleet, checks only that the
 * detector runs and finds faults (a correctness check, no timing asserted). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/detect.h"
#include "fleetprint/timer.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Print the reasons of false alarms and the truth of missed faults. */
static void explain_errors(const fp_sim *sim, const fp_verdicts *v)
{
    const fp_sim_fault *f;
    size_t nf = fp_sim_faults(sim, &f);
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        if (ev->entity.kind != FP_ENT_NODE)
            continue;
        bool truth = false;
        for (size_t k = 0; k < nf; k++) {
            char name[FP_NAME_MAX];
            fp_entity e = fp_entity_node(ev->entity.node);
            (void)e;
            snprintf(name, sizeof name, "%s", ev->entity.node);
            truth |= fp_sim_fault_is_node(&f[k]) && atoi(name + 1) == f[k].node;
        }
        bool pred = ev->verdict == FP_FAIL;
        if (pred == truth)
            continue;
        printf("    %s %s:", pred ? "false alarm" : "missed", ev->entity.node);
        for (size_t k = 0; k < nf; k++)
            if (atoi(ev->entity.node + 1) == f[k].node || (f[k].peer >= 0 && atoi(ev->entity.node + 1) == f[k].peer))
                printf(" truth %s gpu %d factor %.2f windows %d-%d;", fp_sim_fault_name(f[k].kind),
                       f[k].gpu, f[k].factor, f[k].from, f[k].to);
        for (size_t r = 0; r < ev->nreasons; r++) {
            const fp_reason *re = fp_verdicts_reason(v, ev->first_reason + r);
            printf(" [%s %s %s v=%.4g exp=%.4g dev=%.3f z=%.1f %d/%d %s]", fp_verdict_name(re->verdict),
                   fp_evidence_name(re->evidence), re->key, re->value, re->expected, re->deviation,
                   re->z, re->windows_bad, re->windows, re->note);
        }
        printf("\n");
    }
}

static int one_size(int nodes, int seeds, const fp_rules *rules, bool smoke, bool explain)
{
    fp_sim_score pool = {0};
    double *secs = calloc((size_t)seeds, sizeof *secs);
    int rc = 0;
    printf("%d nodes x 8 GPUs, %d seeds, peer evidence only, default rules\n", nodes, seeds);
    printf("  %-5s %9s %6s %5s %5s %5s %9s %7s %6s %6s %10s\n", "seed", "samples", "faulty",
           "tp", "fp", "fn", "precision", "recall", "links+", "links-", "detect_s");
    for (int s = 0; s < seeds && !rc; s++) {
        fp_sim_opts o = {.nodes = nodes, .gpus_per_node = 8, .runs = 1, .windows = 6,
                         .link_partners = 4, .seed = (uint64_t)(s + 1), .faults = NULL};
        char err[256];
        fp_sim *sim = NULL;
        fp_run run;
        fp_verdicts *v = NULL;
        if (fp_sim_open(&o, &sim, err, sizeof err) != FP_OK) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        if (fp_sim_run(sim, fp_sim_runs(sim) - 1, &run) != FP_OK) {
            fp_sim_free(sim);
            return 1;
        }
        fp_detect_opts d = {.rules = rules, .baselines = NULL};
        double t0 = fp_clock();
        fp_status st = fp_detect(&run, &d, &v);
        secs[s] = fp_clock() - t0;
        if (st != FP_OK) {
            rc = 1;
        } else {
            fp_sim_score sc;
            fp_sim_score_verdicts(sim, v, &sc);
            if (explain)
                explain_errors(sim, v);
            printf("  %-5d %9zu %6zu %5zu %5zu %5zu %9.3f %7.3f %6zu %6zu %10.3f\n", s + 1,
                   run.nsamples, sc.tp + sc.fn, sc.tp, sc.fp, sc.fn, sc.precision, sc.recall,
                   sc.link_tp, sc.link_fn + sc.link_fp, secs[s]);
            pool.tp += sc.tp;
            pool.fp += sc.fp;
            pool.fn += sc.fn;
            pool.link_tp += sc.link_tp;
            pool.link_fp += sc.link_fp;
            pool.link_fn += sc.link_fn;
            if (smoke && (sc.tp == 0 || fp_verdicts_overall(v) != FP_FAIL)) {
                fprintf(stderr, "smoke: the detector found no faulty node\n");
                rc = 1;
            }
        }
        fp_verdicts_free(v);
        fp_run_free(&run);
        fp_sim_free(sim);
    }
    double p = pool.tp + pool.fp ? (double)pool.tp / (double)(pool.tp + pool.fp) : 1;
    double r = pool.tp + pool.fn ? (double)pool.tp / (double)(pool.tp + pool.fn) : 1;
    double lp = pool.link_tp + pool.link_fp ? (double)pool.link_tp / (double)(pool.link_tp + pool.link_fp) : 1;
    double lr = pool.link_tp + pool.link_fn ? (double)pool.link_tp / (double)(pool.link_tp + pool.link_fn) : 1;
    qsort(secs, (size_t)seeds, sizeof *secs, cmp_double);
    printf("  pooled: node precision %.3f recall %.3f F1 %.3f (tp %zu fp %zu fn %zu); link "
           "precision %.3f recall %.3f; detect %.3f s median, %.3f s max (one core)\n\n",
           p, r, p + r > 0 ? 2 * p * r / (p + r) : 0, pool.tp, pool.fp, pool.fn, lp, lr,
           secs[seeds / 2], secs[seeds - 1]);
    free(secs);
    return rc;
}

int main(int argc, char **argv)
{
    bool smoke = false, explain = false;
    int seeds = 5;
    int sizes[8], nsizes = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0)
            smoke = true;
        else if (strcmp(argv[i], "--explain") == 0)
            explain = true;
        else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
            seeds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc && nsizes < 8)
            sizes[nsizes++] = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: detect_sim [--smoke] [--explain] [--seeds N] [--nodes N]...\n");
            return 2;
        }
    }
    if (seeds < 1)
        seeds = 1;
    if (smoke) {
        seeds = 1;
        sizes[0] = 300;
        nsizes = 1;
    } else if (nsizes == 0) {
        sizes[0] = 1000;
        sizes[1] = 10000;
        nsizes = 2;
    }
    char err[256];
    fp_rules *rules = NULL;
    if (fp_rules_load(NULL, &rules, err, sizeof err) != FP_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < nsizes && !rc; i++)
        rc = one_size(sizes[i], seeds, rules, smoke, explain);
    fp_rules_free(rules);
    return rc;
}
