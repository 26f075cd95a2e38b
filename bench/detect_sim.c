/* Detector accuracy and speed on simulated fleets, peers only and with
 * baselines, side by side, per scenario.
 *
 *   detect_sim [--smoke] [--explain] [--seeds N] [--first-seed S] [--history R]
 *              [--nodes N ...] [--scenario NAME ...] [--build-only]
 *
 * Scenarios (default: all; --smoke: default only):
 *   default      the default fault mix (fp_sim_default_faults)
 *   host-dip     1% of the nodes healthy with a host-side dip for the whole
 *                live run (pageable copies, launches 25-40% worse): any
 *                failing node is a false alarm
 *   fail-slow    0.5% of the nodes with one GPU 8-12% slow at GEMM and 0.2%
 *                with one GPU's launches 1.5-1.7x, in every run (the history
 *                the baselines come from too)
 *   fleet-shift  the default mix with every device's GEMM and memory
 *                bandwidth 15% lower in the live run than in the baselines'
 *   split-25, split-50  a quarter (a half) of the nodes 2x slow together,
 *                spread evenly (each SKU's peers split alike)
 *
 * For each fleet size and seed: make the fleet (fleetprint simulate's model:
 * per-SKU bases, persistent node/device offsets, per-run wander, per-class
 * heavy-tailed noise, transient dips, noisy metrics no fault touches; slow
 * GPUs, slow nodes, bad links, SDC, throttling from a window on, intermittent
 * episodes), append its R clean history runs (default 5, nightly runs) to a
 * store in $TMPDIR, build baselines, then run the detector on the live run
 * (as rows, the form rank 0 gathers a run in and detect --store reads it)
 * twice -- peer evidence only, and with the baselines (drift and fleet
 * evidence too) -- and score failing nodes against the truth. Prints per-seed
 * and pooled node precision, recall, F1, link precision/recall and seconds
 * per detect (wall time; with baselines their evidence runs on a second
 * thread) for both paths, and the seconds to build the history: in all
 * (build_s), and split into simulating and appending the runs, the baseline
 * build (fp_store_build_baselines) and loading the baselines.
 * --build-only: the history and its baselines only (default scenario unless
 * --scenario), no detect: the baseline build's time at a size.
 * --smoke: one small fleet with 3 history runs, checks only that both paths
 * run and find faults (a correctness check, no timing asserted). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleetprint/detect.h"
#include "fleetprint/log.h"
#include "fleetprint/store.h"
#include "fleetprint/timer.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Print the reasons of false alarms and the truth of missed faults. */
static void print_reasons(const fp_verdicts *v, const fp_entity_verdict *ev)
{
    for (size_t r = 0; r < ev->nreasons; r++) {
        const fp_reason *re = fp_verdicts_reason(v, ev->first_reason + r);
        printf(" [%s %s %s v=%.4g exp=%.4g dev=%.3f z=%.1f %d/%d %s]", fp_verdict_name(re->verdict),
               fp_evidence_name(re->evidence), re->key, re->value, re->expected, re->deviation,
               re->z, re->windows_bad, re->windows, re->note);
    }
}

/* False alarms and misses with their reasons: the node's, then those of its
 * devices that are not passing. */
static void explain_errors(const fp_sim *sim, const fp_verdicts *v)
{
    const fp_sim_fault *f;
    size_t nf = fp_sim_faults(sim, &f);
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        if (ev->entity->kind == FP_ENT_LINK && ev->verdict == FP_FAIL) {
            bool bad = false;
            for (size_t k = 0; k < nf; k++)
                bad |= f[k].kind == FP_SIM_BAD_LINK && atoi(ev->entity->node + 1) == f[k].node &&
                       atoi(ev->entity->peer + 1) == f[k].peer;
            if (!bad) {
                printf("    false alarm link:%s~%s:", ev->entity->node, ev->entity->peer);
                print_reasons(v, ev);
                printf("\n");
            }
        }
        if (ev->entity->kind != FP_ENT_NODE)
            continue;
        bool truth = false;
        for (size_t k = 0; k < nf; k++) {
            char name[FP_NAME_MAX];
            fp_entity e = fp_entity_node(ev->entity->node);
            (void)e;
            snprintf(name, sizeof name, "%s", ev->entity->node);
            truth |= fp_sim_fault_is_node(&f[k]) && atoi(name + 1) == f[k].node;
        }
        bool pred = ev->verdict == FP_FAIL;
        if (pred == truth)
            continue;
        printf("    %s %s:", pred ? "false alarm" : "missed", ev->entity->node);
        int at = atoi(ev->entity->node + 1);
        for (size_t k = 0; k < nf; k++)
            if (at == f[k].node || (f[k].peer >= 0 && at == f[k].peer))
                printf(" truth %s gpu %d factor %.2f windows %d-%d;", fp_sim_fault_name(f[k].kind),
                       f[k].gpu, f[k].factor, f[k].from, f[k].to);
        print_reasons(v, ev);
        for (size_t j = 0; j < fp_verdicts_count(v); j++) {
            const fp_entity_verdict *dv = fp_verdicts_get(v, j);
            if (dv->entity->kind == FP_ENT_GPU && dv->verdict != FP_PASS &&
                strcmp(dv->entity->node, ev->entity->node) == 0) {
                printf("\n      gpu %d:", dv->entity->dev);
                print_reasons(v, dv);
            }
        }
        printf("\n");
    }
}

/* A simulated case: its fault mix and fleet-wide shift. */
typedef struct scenario {
    const char *name;
    const char *faults; /* NULL: the default mix */
    double shift;       /* 1: none */
} scenario;

static const scenario scenarios[] = {
    {"default", NULL, 1},
    {"host-dip", "host-dip=1%", 1},
    {"fail-slow", "fail-slow=0.5%,slow-launch=0.2%", 1},
    {"fleet-shift", NULL, 0.85},
    {"split-25", "split=25%", 1},
    {"split-50", "split=50%", 1},
};
enum { NSCENARIOS = sizeof scenarios / sizeof scenarios[0] };

/* One line of the closing table: a scenario, a fleet size, both paths. */
typedef struct summary_row {
    const char *scenario;
    int nodes;
    fp_sim_score peers, withb;
} summary_row;

/* The closing table: per scenario and fleet size, node precision and
 * recall, false alarms (healthy nodes failed) and misses (faulty nodes not
 * failed), peers only and with baselines. */
static void print_summary(const summary_row *rows, size_t n, int seeds, bool with_base)
{
    printf("summary (%d seeds pooled): scenario, nodes, then per path: precision recall "
           "false-alarms misses\n", seeds);
    printf("  %-12s %6s | %-32s | %s\n", "scenario", "nodes", "peers only",
           with_base ? "with baselines" : "");
    for (size_t i = 0; i < n; i++) {
        const fp_sim_score *p[2] = {&rows[i].peers, &rows[i].withb};
        printf("  %-12s %6d", rows[i].scenario, rows[i].nodes);
        for (int k = 0; k < (with_base ? 2 : 1); k++) {
            size_t tp = p[k]->tp, fp = p[k]->fp, fn = p[k]->fn;
            char pr[16], rc[16];
            snprintf(pr, sizeof pr, tp + fp ? "%.3f" : "-", tp + fp ? (double)tp / (tp + fp) : 0);
            snprintf(rc, sizeof rc, tp + fn ? "%.3f" : "-", tp + fn ? (double)tp / (tp + fn) : 0);
            printf(" | P %-5s R %-5s fa %4zu miss %4zu", pr, rc, fp, fn);
        }
        printf("\n");
    }
}

/* Pooled scores and detect times of one evidence path over the seeds. */
typedef struct path_score {
    fp_sim_score pool;
    double *secs;
} path_score;

static void pool_add(path_score *p, const fp_sim_score *sc)
{
    p->pool.tp += sc->tp;
    p->pool.fp += sc->fp;
    p->pool.fn += sc->fn;
    p->pool.link_tp += sc->link_tp;
    p->pool.link_fp += sc->link_fp;
    p->pool.link_fn += sc->link_fn;
}

static void pool_print(const char *what, path_score *p, int seeds)
{
    const fp_sim_score *q = &p->pool;
    double pr = q->tp + q->fp ? (double)q->tp / (double)(q->tp + q->fp) : 1;
    double r = q->tp + q->fn ? (double)q->tp / (double)(q->tp + q->fn) : 1;
    double lp = q->link_tp + q->link_fp ? (double)q->link_tp / (double)(q->link_tp + q->link_fp) : 1;
    double lr = q->link_tp + q->link_fn ? (double)q->link_tp / (double)(q->link_tp + q->link_fn) : 1;
    qsort(p->secs, (size_t)seeds, sizeof *p->secs, cmp_double);
    printf("  pooled %-14s node precision %.3f recall %.3f F1 %.3f (tp %zu fp %zu fn %zu); link "
           "precision %.3f recall %.3f; detect %.3f s median, %.3f s max (wall)\n",
           what, pr, r, pr + r > 0 ? 2 * pr * r / (pr + r) : 0, q->tp, q->fp, q->fn, lp, lr,
           p->secs[seeds / 2], p->secs[seeds - 1]);
}

/* Seconds of the history's parts: simulating and appending the runs, the
 * baseline build, loading the baselines. */
typedef struct history_secs {
    double append, build, load;
} history_secs;

/* The history runs 0..nruns-2 of sim into a fresh store at path, baselines
 * built over them, loaded into *out; the parts timed into *secs. */
static fp_status history_baselines(const fp_sim *sim, const char *path, fp_baselines **out,
                                   history_secs *secs)
{
    fp_store *st = NULL;
    double t0 = fp_clock();
    fp_status rc = fp_store_open(&st, path, FP_STORE_APPEND, 0);
    for (int r = 0; rc == FP_OK && r < fp_sim_runs(sim) - 1; r++) {
        fp_run run;
        rc = fp_sim_run_rows(sim, r, &run);
        if (rc == FP_OK)
            rc = fp_store_append(st, &run);
        fp_run_free(&run);
    }
    fp_baseline_opts bo = {.reject = 3.5};
    double t1 = fp_clock();
    if (rc == FP_OK)
        rc = fp_store_build_baselines(st, &bo, NULL);
    double t2 = fp_clock();
    if (rc == FP_OK)
        rc = fp_store_load_baselines(st, out);
    fp_store_close(st);
    *secs = (history_secs){.append = t1 - t0, .build = t2 - t1, .load = fp_clock() - t2};
    return rc;
}

/* Remove a store: its manifest, lock and partition files (FILE.d/). */
static void remove_store(const char *path)
{
    char name[1024];
    snprintf(name, sizeof name, "%s.d", path);
    DIR *d = opendir(name);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(name, sizeof name, "%s.d/%s", path, e->d_name);
        remove(name);
    }
    if (d)
        closedir(d);
    snprintf(name, sizeof name, "%s.d", path);
    rmdir(name);
    snprintf(name, sizeof name, "%s.lock", path);
    remove(name);
    remove(path);
}

/* Detect on run (with baselines base or peers only), time it, score it. */
static fp_status score_path(const fp_sim *sim, const fp_run *run, const fp_rules *rules,
                            const fp_baselines *base, bool explain, fp_sim_score *sc,
                            double *secs, fp_verdict *overall)
{
    fp_verdicts *v = NULL;
    fp_detect_opts d = {.rules = rules, .baselines = base};
    double t0 = fp_clock();
    fp_status st = fp_detect(run, &d, &v);
    *secs = fp_clock() - t0;
    if (st != FP_OK)
        return st;
    fp_sim_score_verdicts(sim, v, sc);
    if (explain)
        explain_errors(sim, v);
    *overall = fp_verdicts_overall(v);
    fp_verdicts_free(v);
    return FP_OK;
}

static int one_size(const scenario *sc, int nodes, int seed0, int seeds, int history,
                    const fp_rules *rules, bool smoke, bool explain, bool build_only,
                    const char *dir, summary_row *row)
{
    path_score peers = {0}, withb = {0};
    peers.secs = calloc((size_t)seeds, sizeof *peers.secs);
    withb.secs = calloc((size_t)seeds, sizeof *withb.secs);
    int rc = !peers.secs || !withb.secs;
    printf("scenario %s: %d nodes x 8 GPUs, %d seeds, default rules, faults %s, shift %g; peers "
           "only | with baselines from %d runs\n",
           sc->name, nodes, seeds, sc->faults ? sc->faults : fp_sim_default_faults(), sc->shift,
           history);
    printf("  %-5s %9s %6s | %4s %4s %4s %8s | %4s %4s %4s %8s %8s\n", "seed", "samples", "faulty",
           "tp", "fp", "fn", "detect_s", "tp", "fp", "fn", "detect_s", "build_s");
    for (int s = 0; s < seeds && !rc; s++) {
        fp_sim_opts o = {.nodes = nodes, .gpus_per_node = 8, .runs = history + 1, .windows = 6,
                         .link_partners = 4, .seed = (uint64_t)(seed0 + s),
                         .faults = sc->faults, .shift = sc->shift};
        char err[256], path[512];
        fp_sim *sim = NULL;
        fp_baselines *base = NULL;
        fp_run run;
        fp_run_init(&run);
        if (fp_sim_open(&o, &sim, err, sizeof err) != FP_OK) {
            fprintf(stderr, "%s\n", err);
            rc = 1;
            break;
        }
        fp_sim_score sp = {0}, sb = {0};
        fp_verdict vp = FP_UNKNOWN, vb = FP_UNKNOWN;
        double t0 = fp_clock(), build = 0;
        history_secs hs = {0};
        snprintf(path, sizeof path, "%s/history-%d-%d.h5", dir, nodes, s);
        if (history > 0 && history_baselines(sim, path, &base, &hs) != FP_OK)
            rc = 1;
        build = fp_clock() - t0;
        if (!rc && history > 0)
            printf("  seed %d history: %d runs simulated and appended %.1f s, baseline build "
                   "%.1f s, baselines loaded %.1f s\n", seed0 + s, history, hs.append, hs.build,
                   hs.load);
        if (build_only) {
            fp_baselines_free(base);
            fp_sim_free(sim);
            remove_store(path);
            continue;
        }
        fp_run_free(&run);
        /* as rows: the form rank 0 gathers a run in and detect --store reads */
        if (!rc && fp_sim_run_rows(sim, fp_sim_runs(sim) - 1, &run) != FP_OK)
            rc = 1;
        if (!rc && explain)
            printf("  seed %d, peers only:\n", seed0 + s);
        if (!rc && score_path(sim, &run, rules, NULL, explain, &sp, &peers.secs[s], &vp) != FP_OK)
            rc = 1;
        if (!rc && base && explain)
            printf("  seed %d, with baselines:\n", seed0 + s);
        if (!rc && base &&
            score_path(sim, &run, rules, base, explain, &sb, &withb.secs[s], &vb) != FP_OK)
            rc = 1;
        if (!rc) {
            printf("  %-5d %9zu %6zu | %4zu %4zu %4zu %8.3f | %4zu %4zu %4zu %8.3f %8.1f\n", seed0 + s,
                   run.nsamples, sp.tp + sp.fn, sp.tp, sp.fp, sp.fn, peers.secs[s], sb.tp, sb.fp,
                   sb.fn, withb.secs[s], build);
            pool_add(&peers, &sp);
            pool_add(&withb, &sb);
            if (smoke && (sp.tp == 0 || vp != FP_FAIL || (base && (sb.tp == 0 || vb != FP_FAIL)))) {
                fprintf(stderr, "smoke: the detector found no faulty node\n");
                rc = 1;
            }
        }
        fp_baselines_free(base);
        fp_run_free(&run);
        fp_sim_free(sim);
        remove_store(path);
    }
    if (!rc && !build_only) {
        pool_print("peers only:", &peers, seeds);
        if (history > 0)
            pool_print("with baselines:", &withb, seeds);
        printf("\n");
        *row = (summary_row){.scenario = sc->name, .nodes = nodes, .peers = peers.pool,
                             .withb = withb.pool};
    }
    free(peers.secs);
    free(withb.secs);
    return rc;
}

int main(int argc, char **argv)
{
    bool smoke = false, explain = false, build_only = false;
    int seeds = 5, history = 5, seed0 = 1;
    int sizes[8], nsizes = 0;
    const scenario *chosen[NSCENARIOS];
    size_t nchosen = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0)
            smoke = true;
        else if (strcmp(argv[i], "--explain") == 0)
            explain = true;
        else if (strcmp(argv[i], "--build-only") == 0)
            build_only = true; /* and the build's phases on stderr (debug log) */
        else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
            seeds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc && nsizes < 8)
            sizes[nsizes++] = atoi(argv[++i]);
        else if (strcmp(argv[i], "--first-seed") == 0 && i + 1 < argc)
            seed0 = atoi(argv[++i]);
        else if (strcmp(argv[i], "--history") == 0 && i + 1 < argc)
            history = atoi(argv[++i]);
        else if (strcmp(argv[i], "--scenario") == 0 && i + 1 < argc && nchosen < NSCENARIOS) {
            const char *name = argv[++i];
            size_t k = 0;
            while (k < NSCENARIOS && strcmp(scenarios[k].name, name) != 0)
                k++;
            if (k == NSCENARIOS) {
                fprintf(stderr, "detect_sim: unknown scenario '%s'\n", name);
                return 2;
            }
            chosen[nchosen++] = &scenarios[k];
        } else {
            fprintf(stderr, "usage: detect_sim [--smoke] [--explain] [--seeds N] [--first-seed S] "
                            "[--history R] [--nodes N]... [--scenario NAME]... [--build-only]\n");
            return 2;
        }
    }
    if (seeds < 1)
        seeds = 1;
    if (history < 0)
        history = 0;
    if (smoke) {
        seeds = 1;
        history = 3;
        sizes[0] = 300;
        nsizes = 1;
        chosen[0] = &scenarios[0];
        nchosen = 1;
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
    /* the history stores live in a private directory of $TMPDIR */
    char dir[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/detect_sim.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror(dir);
        fp_rules_free(rules);
        return 1;
    }
    if (build_only && nchosen == 0)
        chosen[nchosen++] = &scenarios[0];
    if (build_only)
        fp_log_identity("", 0, true, false);
    for (size_t k = 0; nchosen == 0 && k < NSCENARIOS; k++)
        chosen[k] = &scenarios[k];
    nchosen = nchosen ? nchosen : NSCENARIOS;
    int rc = 0;
    summary_row rows[8 * NSCENARIOS];
    size_t nrows = 0;
    for (int i = 0; i < nsizes && !rc; i++)
        for (size_t k = 0; k < nchosen && !rc; k++)
            rc = one_size(chosen[k], sizes[i], seed0, seeds, history, rules, smoke, explain,
                          build_only, dir, &rows[nrows++]);
    if (!rc && !build_only)
        print_summary(rows, nrows, seeds, history > 0);
    rmdir(dir);
    fp_rules_free(rules);
    return rc;
}
