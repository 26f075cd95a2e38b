/* fleetprint preflight: quick checks on every rank before a job starts, then
 * detect: exit 0 = go; drain and exclude lists. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "fleetprint/detect.h"
#include "fleetprint/hostlist.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/stats.h"
#include "fleetprint/store.h"
#include "fleetprint/suite.h"
#include "fleetprint/timer.h"
#include "fleetprint/outfile.h"

/* ==== fleetprint preflight ============================================================== */

typedef struct preflight_cfg {
    tests_cfg tests;
    measure_out run; /* the tag and store (its outputs are the verdicts') */
    detect_out out;
    const char *run_json;
    bool no_baselines;
    const char *confirm; /* auto: re-test what failed before acting; off */
    const char *isolate; /* --isolate STRATEGY: isolation when no culprit is named */
} preflight_cfg;

/* The quick default set, in registry order; tests not in this build are
 * skipped with a note. */
static const char *const quick_tests[] = {"membw", "gemm", "allreduce", "alltoall", "links", NULL};

#define PF(field) offsetof(preflight_cfg, tests.base.field)
#define PF_SWEEP(field) offsetof(preflight_cfg, tests.sweep.field)
static const fp_opt preflight_opts[] = {
    {"test", 't', FP_OPT_LIST, offsetof(preflight_cfg, tests.tests), NULL,
     "run only this test (repeatable; default: membw gemm allreduce alltoall links)"},
    {"device", 0, FP_OPT_STRING, PF(device), "auto", "device backend: auto, host or cuda"},
    {"comm", 0, FP_OPT_STRING, PF(comm), "auto", "comm backend: auto, mpi or nccl"},
    {"threads", 0, FP_OPT_INT, PF(threads), "1", "host threads per rank (0: cores / ranks)"},
    {"min-bytes", 'b', FP_OPT_BYTES, PF_SWEEP(min_bytes), "1M", "smallest message size"},
    {"max-bytes", 'e', FP_OPT_BYTES, PF_SWEEP(max_bytes), "4M", "largest message size"},
    {"step-factor", 'f', FP_OPT_DOUBLE, PF_SWEEP(step_factor), "4",
     "size multiplier between steps"},
    {"iters", 'n', FP_OPT_INT, PF_SWEEP(iters), "6", "timed iterations (the detector's windows)"},
    {"warmup-iters", 'w', FP_OPT_INT, PF_SWEEP(warmup), "2", "untimed warm-up iterations"},
    {"check", 'c', FP_OPT_INT, PF_SWEEP(check), "1", "verify results: 1 yes, 0 no"},
    {"array-size", 0, FP_OPT_BYTES, offsetof(preflight_cfg, tests.kernels.array_bytes), "8M",
     "membw: bytes per array"},
    {"pairs", 0, FP_OPT_STRING, offsetof(preflight_cfg, tests.coll.pairs), "auto",
     "link sweep pairs: auto (all up to 32 nodes, else random=8), all, ring, k=K, random=K"},
    {"timeout", 0, FP_OPT_SECONDS, PF(timeout), "60s", "deadline of every blocking step"},
    {"inject", 0, FP_OPT_LIST, PF(inject), NULL, "inject a fault (repeatable; see README)"},
    {"tag", 0, FP_OPT_STRING, offsetof(preflight_cfg, run.tag), "preflight", "tag of the run"},
    {"store", 0, FP_OPT_STRING, offsetof(preflight_cfg, run.store), NULL,
     "HDF5 store: compare with its baselines, then append the run to it"},
    {"no-baselines", 0, FP_OPT_FLAG, offsetof(preflight_cfg, no_baselines), NULL,
     "peer evidence only, even with a store"},
    {"confirm", 0, FP_OPT_STRING, offsetof(preflight_cfg, confirm), "auto",
     "auto: before writing the drain list, re-test what failed (within a quarter of the "
     "first pass's time, but 3 passes of a link sweep); only what fails again fails. off: act "
     "on one measurement"},
    FP_DETECT_OUT_OPTS(preflight_cfg, out),
    {"prometheus-local", 0, FP_OPT_STRING, offsetof(preflight_cfg, out.prometheus_local), NULL,
     "each node's first rank writes its node's textfile, fleetprint-<node>.prom, into DIR on "
     "its host (%n: the node's name); rank 0 adds fleetprint-run.prom (docs/prometheus.md)"},
    {"run-json", 0, FP_OPT_STRING, offsetof(preflight_cfg, run_json), NULL,
     "also write the run's samples as JSON to FILE"},
    {"isolate", 0, FP_OPT_STRING, offsetof(preflight_cfg, isolate), NULL,
     "when a whole-job collective fails and no culprit is named, isolate in rounds: grid, "
     "bisect or auto (docs/isolate.md)"},
    {"verbose", 'v', FP_OPT_FLAG, PF(verbose), NULL, "log from every rank"},
    {"quiet", 'q', FP_OPT_FLAG, PF(quiet), NULL, "only warnings, errors and the verdict"},
    {0},
};
#undef PF
#undef PF_SWEEP

/* What preflight writes when a step times out (fp_world_on_timeout): the
 * verdict outputs with the missing ranks' nodes failing, so the drain file,
 * JSON and HTML name the node that most needs draining. ctx is the run's
 * context only, made before the tests start: the hook may run on the
 * watchdog thread while the tests' samples are still being written. */
typedef struct hang_out {
    detect_out out;
    const fp_rules *rules; /* for the circuit breaker */
    fp_run ctx;
} hang_out;

static fp_status hang_prepare(hang_out *h, const fp_ctx *ctx, const char *tag)
{
    const fp_world *w = ctx->world;
    fp_status st = fp_run_set_shape(&h->ctx, fp_world_nnodes(w), fp_world_size(w));
    if (st != FP_OK)
        return st;
    for (int i = 0; i < fp_world_nnodes(w); i++)
        snprintf(h->ctx.nodes[i], FP_NAME_MAX, "%s", fp_world_node_name(w, i));
    for (int r = 0; r < fp_world_size(w); r++) {
        h->ctx.ranks[r].node = fp_world_node_of(w, r);
        h->ctx.ranks[r].dev = -1;
    }
    fp_ctx_describe_run(ctx, tag, &h->ctx);
    snprintf(h->ctx.status, sizeof h->ctx.status, "timeout");
    return FP_OK;
}

static void hang_write(const fp_world *w, void *arg)
{
    hang_out *h = arg;
    const int *ranks;
    const char *step;
    size_t n = fp_world_missing(w, &ranks, &step);
    h->ctx.duration = fp_world_now(w);
    fp_verdicts *v = NULL;
    if (fp_verdicts_hung(&h->ctx, ranks, n, step, &v) != FP_OK) {
        fp_error("preflight: no memory to write the verdicts of the timeout");
        return;
    }
    fp_verdicts_apply_breaker(v, h->rules, h->out.max_drain);
    if (!h->out.quiet)
        fp_verdicts_print(stdout, v, &h->ctx);
    (void)fp_app_write_outputs(&h->ctx, v, &h->out); /* each write logs its own error */
    fflush(stdout);
    fp_verdicts_free(v);
}

static bool registered(const char *name)
{
    for (int k = 0; fp_tests[k]; k++)
        if (strcmp(fp_tests[k]->name, name) == 0)
            return true;
    return false;
}

/* The first pass's time of each test, on rank 0 (the re-test's budget). */
typedef struct test_time {
    const char *name;
    double seconds; /* from its barrier to its end */
    double end;     /* when it ended, on the run's clock (fp_world_now, as --inject's times) */
} test_time;

#define PF_TESTS 32
/* The most a re-test may cost, as a share of the first pass's time. */
#define PF_CONFIRM_SHARE 0.25
/* The link passes a re-test runs whatever its deadline: a link's figure is
 * the median of its exchanges, and on shared cores one pass's medians of
 * healthy links spread up to 2.5x, where a 16x link could pass; over 3
 * passes they settle (docs/confirm.md: its z -3.3 at worst, then -5.3). */
#define PF_CONFIRM_LINK_PASSES 3

typedef struct pf_state {
    const preflight_cfg *pc;
    const tests_cfg *tests;   /* the tests to run: pc's, with the quick set filled in */
    const fp_rules *rules;
    const fp_baselines *base; /* NULL: peer evidence only */
    const detect_out *out;    /* with the history, and where the verdicts' record goes */
    fp_run_verdicts record;   /* rank 0: the verdicts stored with the run */
    const char *contended;    /* NULL, or why the timings are only roughly comparable */
    double t0;
    hang_out hang;            /* rank 0: the outputs of a timeout */
    bool confirm;             /* --confirm auto */
    test_time timed[PF_TESTS];
    int ntimed;
    double first_seconds;     /* the first pass's tests, rank 0 */
    fp_run retest;            /* rank 0: the re-test run, when one ran (have_retest) */
    bool have_retest;
    detect_confirm dc;        /* rank 0: the confirm pass the report judges with */
    double t_confirm;         /* when the confirm pass began, on the run's clock */
    bool dc_set;
    char isolate_why[160];    /* rank 0: why isolation is wanted (--isolate), or "" */
    bool isolate_wrong;       /* rank 0: and the check's results were wrong */
    char prom_dir[4096];      /* rank 0: its --prometheus-local folder */
    fp_prom_files prom_local; /* rank 0: every node's textfile for --prometheus-local */
} pf_state;

static bool wanted(const tests_cfg *tc, const char *name)
{
    for (int i = 0; i < tc->tests.n; i++)
        if (strcmp(tc->tests.item[i], name) == 0)
            return true;
    return false;
}

/* The tests one at a time, in registry order (as fp_run_selected runs them),
 * each timed for the re-test's budget. */
static fp_status run_timed(fp_ctx *ctx, pf_state *ps)
{
    fp_status st = FP_OK;
    double t0 = fp_clock();
    for (int k = 0; fp_tests[k] && st == FP_OK; k++) {
        if (!wanted(ps->tests, fp_tests[k]->name) || ps->ntimed >= PF_TESTS)
            continue;
        tests_cfg one = *ps->tests;
        one.tests.n = 1;
        one.tests.item[0] = fp_tests[k]->name;
        double t = fp_clock();
        st = fp_run_selected(ctx, &one);
        ps->timed[ps->ntimed++] = (test_time){fp_tests[k]->name, fp_clock() - t,
                                              fp_world_now(ctx->world)};
    }
    ps->first_seconds = fp_clock() - t0;
    if (st == FP_OK && ctx->rank == 0) {
        char line[512];
        size_t n = 0;
        for (int i = 0; i < ps->ntimed && n < sizeof line; i++)
            n += (size_t)snprintf(line + n, sizeof line - n, "%s%s %.2f s (to %.2f)", i ? ", " : "",
                                  ps->timed[i].name, ps->timed[i].seconds, ps->timed[i].end);
        fp_info("preflight: first pass %.2f s: %s on the run's clock", ps->first_seconds, line);
    }
    return st;
}

static fp_status pf_measure(fp_ctx *ctx, void *arg)
{
    pf_state *ps = arg;
    if (ctx->rank == 0) {
        ps->hang.out = *ps->out;
        ps->hang.out.prom_local = NULL; /* a timeout's: rank 0 writes its own at once */
        ps->hang.rules = ps->rules;
        fp_status st = hang_prepare(&ps->hang, ctx, ps->pc->run.tag);
        if (st != FP_OK)
            return st;
        fp_world_on_timeout(ctx->world, hang_write, &ps->hang);
    }
    return run_timed(ctx, ps);
}

/* ---- the confirm pass: re-test what failed before acting (docs/confirm.md) ------------- */

/* What rank 0 tells every rank to re-test. */
typedef struct retest_msg {
    int status;    /* rank 0's: anything but FP_OK stops every rank with it */
    int run;       /* 1: re-test; 0: act on the first pass (the note says why) */
    int iters, warmup;           /* of every test but the link sweep */
    int one_size;  /* 1: the collectives at the smallest message size only */
    int link_iters, link_warmup, passes, min_passes; /* the link sweep's */
    double deadline;      /* the collectives' (the run's clock): links come after them */
    double link_deadline; /* the link sweep's */
    int ntests;
    char tests[FP_CONFIRM_TESTS][24];
    int pairs_len; /* bytes of the --pairs list broadcast next (0: none) */
} retest_msg;

static double first_time(const pf_state *ps, const char *name)
{
    for (int i = 0; i < ps->ntimed; i++)
        if (strcmp(ps->timed[i].name, name) == 0)
            return ps->timed[i].seconds;
    return 0;
}

static bool is_collective(const char *name)
{
    for (int k = 0; fp_tests[k]; k++)
        if (strcmp(fp_tests[k]->name, name) == 0)
            return strcmp(fp_tests[k]->suite, "collectives") == 0 && strcmp(name, "links") != 0;
    return false;
}

/* How the re-test's time scales from the first pass's. */
typedef struct cost_model {
    /* the link sweep's rounds in units of a typical round (link_units): the
     * first pass's, all passes; the re-test's, one pass */
    double units1, units2;
    int sizes1;    /* message sizes of the collectives in the first pass */
    double target; /* what the plan may cost */
} cost_model;

/* The re-test's time as the first pass's scaled: a test's time grows with
 * its calls per size (warm-up, timed and one checked call), a collective's
 * with its sizes too, the link sweep's with its rounds and passes. *links:
 * the link sweep's part. */
static double retest_cost(const pf_state *ps, const retest_msg *m, const cost_model *cm,
                          double *links)
{
    const fp_sweep *sw = &ps->tests->sweep;
    double per1 = sw->iters + sw->warmup + 1, c = 0;
    *links = 0;
    for (int t = 0; t < m->ntests; t++) {
        double d = first_time(ps, m->tests[t]) / per1;
        if (strcmp(m->tests[t], "links") == 0) /* its deadline decides past min_passes */
            *links = d * (m->link_iters + m->link_warmup + 1) * m->min_passes * cm->units2 /
                     cm->units1;
        else
            c += d * (m->iters + m->warmup + 1) / (is_collective(m->tests[t]) && m->one_size
                                                       ? cm->sizes1 : 1);
    }
    return c + *links;
}

/* A round of the link sweep lasts as long as its slowest exchange, so a
 * round with a slow link costs that link's slowdown: the sweep's time in
 * units of a typical round, from the first pass's links (a link's time is
 * the median bandwidth over its own, at least 1). The first pass's, over all
 * its passes: its rounds, plus each slow link's extra in one round a pass;
 * the re-test's plan lp, one pass: the slowest of each round. */
static fp_status link_units(const fp_run *run, const fp_link_plan *lp, cost_model *cm)
{
    fp_status st = FP_OK;
    size_t n = 0, cap = 64;
    int rounds1 = 1;
    double *bw = malloc(cap * sizeof *bw);
    const fp_entity **who = malloc(cap * sizeof *who);
    FP_CHECK_ALLOC(bw);
    FP_CHECK_ALLOC(who);
    for (size_t i = 0; i < run->nsamples; i++) {
        fp_sample_ref s = fp_run_ref(run, i);
        if (strcmp(s.key->test, "links") != 0 || s.iter != -1)
            continue;
        if (strcmp(s.key->metric, "rounds") == 0 && s.value >= 1)
            rounds1 = (int)s.value;
        if (strcmp(s.key->metric, "bw_inter") != 0 || !(s.value > 0))
            continue;
        if (n == cap) {
            cap *= 2;
            double *b2 = realloc(bw, cap * sizeof *bw);
            FP_CHECK_ALLOC(b2);
            bw = b2;
            const fp_entity **w2 = realloc(who, cap * sizeof *who);
            FP_CHECK_ALLOC(w2);
            who = w2;
        }
        bw[n] = s.value;
        who[n++] = s.entity;
    }
    double *sorted = malloc((n + 1) * sizeof *sorted);
    FP_CHECK_ALLOC(sorted);
    memcpy(sorted, bw, n * sizeof *bw);
    double med = n ? fp_median(sorted, n) : 1;
    free(sorted);
    double extra = 0;
    for (size_t i = 0; i < n; i++)
        extra += med / bw[i] > 1.5 ? med / bw[i] - 1 : 0;
    cm->units1 = FP_LINK_PASSES * (rounds1 + extra);
    cm->units2 = 0;
    for (int r = 0, i = 0; r < lp->nrounds; r++) {
        double slowest = 1;
        for (; i < lp->npairs && lp->round[i] == r; i++) {
            const char *a = run->nodes[lp->pair[i][0]], *b = run->nodes[lp->pair[i][1]];
            for (size_t k = 0; k < n; k++)
                if ((strcmp(who[k]->node, a) == 0 && strcmp(who[k]->peer, b) == 0) ||
                    (strcmp(who[k]->node, b) == 0 && strcmp(who[k]->peer, a) == 0))
                    slowest = med / bw[k] > slowest ? med / bw[k] : slowest;
        }
        cm->units2 += slowest;
    }
cleanup:
    free(bw);
    free(who);
    return st;
}

/* Settings whose estimate stays within cm->target. The tests at most 3
 * iterations and 1 warm-up; the link sweep, whose figure is a median over
 * its exchanges and needs as many to stand out again, its first-pass
 * iterations over as many passes as its deadline allows (it runs last; the
 * estimate counts the passes it must run). Then, on whichever part costs more:
 * fewer link iterations (at least 3); the collectives at one message size,
 * fewer iterations (at least 2), no warm-up; last, the costliest tests are
 * left out (named in note), never the link sweep: at 3 iterations its least
 * passes cost at most 3 of the first pass's 7 at 5/8 of its calls, even where
 * one slow link is most of both (27%), and may pass the target. */
static void fit_budget(const pf_state *ps, retest_msg *m, const cost_model *cm, char *note,
                       size_t len)
{
    const fp_sweep *sw = &ps->tests->sweep;
    m->iters = sw->iters < 3 ? sw->iters : 3;
    m->warmup = sw->warmup < 1 ? sw->warmup : 1;
    m->link_iters = sw->iters;
    m->link_warmup = sw->warmup;
    m->passes = FP_LINK_PASSES;
    m->min_passes = PF_CONFIRM_LINK_PASSES;
    m->one_size = 0;
    bool colls = false;
    for (int t = 0; t < m->ntests; t++)
        colls |= is_collective(m->tests[t]);
    double links, cost;
    size_t n = 0;
    while (m->ntests > 0 && (cost = retest_cost(ps, m, cm, &links)) > cm->target) {
        bool link_cut = links > 0 && m->link_iters > 3;
        bool rest_cut = (colls && !m->one_size && cm->sizes1 > 1) || m->iters > 2 || m->warmup > 0;
        if (link_cut && (links > cost - links || !rest_cut)) {
            m->link_iters--;
        } else if (rest_cut) {
            if (colls && !m->one_size && cm->sizes1 > 1)
                m->one_size = 1;
            else if (m->iters > 2)
                m->iters--;
            else /* the first pass warmed them up moments ago */
                m->warmup = 0;
        } else { /* the costliest test keeps its first-pass verdict */
            int worst = -1;
            for (int t = 0; t < m->ntests; t++)
                if (strcmp(m->tests[t], "links") != 0 &&
                    (worst < 0 || first_time(ps, m->tests[t]) > first_time(ps, m->tests[worst])))
                    worst = t;
            if (worst < 0)
                break; /* the link sweep alone: its least runs (see PF_CONFIRM_LINK_PASSES) */
            if (n < len)
                n += (size_t)snprintf(note + n, len - n, "%s%s", n ? ", " : "over budget: ",
                                      m->tests[worst]);
            memmove(m->tests[worst], m->tests[worst + 1],
                    (size_t)(m->ntests - worst - 1) * sizeof m->tests[0]);
            m->ntests--;
        }
    }
    if (n && n < len)
        snprintf(note + n, len - n, " not re-tested");
}

/* Rank 0: judge the first pass and decide the re-test (m, and *pairs, the
 * link sweep's list), or why there is none (the confirm info's note). */
static fp_status plan_retest(pf_state *ps, const fp_run *run, retest_msg *m, char **pairs)
{
    fp_status st = FP_OK;
    fp_confirm_info *info = &ps->dc.info;
    fp_verdicts *v = NULL;
    fp_confirm_plan plan;
    fp_link_plan lp;
    memset(&plan, 0, sizeof plan);
    memset(&lp, 0, sizeof lp);
    ps->dc_set = true;
    info->first_seconds = ps->first_seconds;
    if (!ps->confirm) {
        snprintf(info->note, sizeof info->note, "--confirm off: failures act on one measurement");
        goto cleanup;
    }
    fp_detect_opts d = {.rules = ps->rules, .baselines = ps->base,
                        .contended = ps->contended != NULL, .contended_note = ps->contended};
    FP_CHECK(fp_detect(run, &d, &v));
    FP_CHECK(fp_confirm_plan_make(v, run, ps->rules, &plan));
    /* nothing failed, and no warn waits for a re-test (a host-side deficit) */
    if (fp_verdicts_overall(v) != FP_FAIL && plan.nsuspects == 0) {
        snprintf(info->note, sizeof info->note, "nothing failed");
        goto cleanup;
    }
    bool links = false;
    for (int t = 0; t < plan.ntests; t++) {
        if (strcmp(plan.tests[t], "links") == 0 && !links) {
            links = true;
            FP_CHECK(fp_app_confirm_pairs(&plan, run, pairs, &lp));
            if (*pairs)
                continue;
            snprintf(info->note, sizeof info->note, "links: no link to measure again");
        }
        if (strcmp(plan.tests[t], "links") != 0 || *pairs)
            snprintf(m->tests[m->ntests++], sizeof m->tests[0], "%s", plan.tests[t]);
    }
    if (*pairs) /* in registry order, links is last: the list goes with it */
        snprintf(m->tests[m->ntests++], sizeof m->tests[0], "links");
    if (m->ntests == 0) {
        snprintf(info->note, sizeof info->note, "%s",
                 plan.nhung ? "a hang is not re-tested (the watchdog named it)"
                            : "nothing failed that a re-test can judge");
        goto cleanup;
    }
    if (plan.note[0])
        fp_info("confirm: %s", plan.note);
    if (*pairs)
        fp_debug("confirm: the link sweep's pairs: %s", *pairs);
    /* a quarter of the first pass, planned at 60% of that: the estimate
     * scales the first pass's times of the tests alone, while the re-test's
     * time counts its plan, broadcast, gather and verdicts too, and a busy
     * machine's noise; the collectives and the link sweep also stop early at
     * 85% of it (deadline, link_deadline) */
    info->budget_seconds = PF_CONFIRM_SHARE * ps->first_seconds;
    const fp_sweep *sw = &ps->tests->sweep;
    uint64_t sizes[64];
    char err[160];
    cost_model cm = {.units1 = 1, .units2 = 1, .sizes1 = 1,
                     .target = 0.6 * info->budget_seconds};
    if (*pairs)
        FP_CHECK(link_units(run, &lp, &cm));
    if (fp_coll_sizes(sw->min_bytes, sw->max_bytes, sw->step_factor, sizes, 64, &cm.sizes1, err,
                      sizeof err) != FP_OK || cm.sizes1 < 1)
        cm.sizes1 = 1;
    fit_budget(ps, m, &cm, info->note, sizeof info->note);
    if (m->ntests == 0)
        goto cleanup; /* the note says that nothing fits */
    m->run = 1;
    /* the sweeps stop at 85% of it: the collectives in time for the link
     * sweep's passes that always run, the link sweep between passes after them */
    m->link_deadline = ps->t_confirm + 0.85 * info->budget_seconds;
    double links_est;
    retest_cost(ps, m, &cm, &links_est);
    m->deadline = m->link_deadline - links_est;
    m->pairs_len = *pairs && strcmp(m->tests[m->ntests - 1], "links") == 0 ? (int)strlen(*pairs)
                                                                          : 0;
    size_t n = 0;
    for (int t = 0; t < m->ntests; t++)
        n += (size_t)snprintf(info->tests + n, n < sizeof info->tests ? sizeof info->tests - n : 0,
                              "%s%s", t ? "," : "", m->tests[t]);
    bool others = m->ntests > (m->pairs_len > 0); /* tests beside the link sweep */
    info->iters = others ? m->iters : 0;
    info->warmup = others ? m->warmup : 0;
    info->link_passes = m->pairs_len ? m->passes : 0;
    info->link_iters = m->pairs_len ? m->link_iters : 0;
    info->npairs = m->pairs_len ? lp.npairs : 0;
    char settings[160] = "", links_part[96] = "";
    if (others)
        snprintf(settings, sizeof settings, "%d iterations, %d warm-up%s", m->iters, m->warmup,
                 m->one_size ? ", collectives at the smallest size" : "");
    if (m->pairs_len)
        snprintf(links_part, sizeof links_part,
                 "links: %d pairs, at least %d of %d passes of %d iterations", info->npairs,
                 m->min_passes, m->passes, m->link_iters);
    fp_info("confirm: %d failing %s: re-testing %s (%s%s%s) within %.2f s", plan.nsuspects,
            fp_plural(plan.nsuspects, "entity", "entities"), info->tests, settings,
            others && m->pairs_len ? "; " : "", links_part, info->budget_seconds);
cleanup:
    fp_link_plan_free(&lp);
    fp_confirm_plan_free(&plan);
    fp_verdicts_free(v);
    return st;
}

/* Every rank after the gather: rank 0 decides, every rank re-tests, rank 0
 * gathers the re-test as a run of its own (status retest, confirms the
 * first), which the report judges the run with and the store keeps beside it. */
static fp_status pf_confirm(fp_ctx *ctx, fp_run *run, void *arg)
{
    pf_state *ps = arg;
    fp_status st = FP_OK;
    fp_world *w = ctx->world;
    retest_msg m;
    char *pairs = NULL;
    fp_run local, *first_local = ctx->local;
    memset(&m, 0, sizeof m);
    fp_run_init(&local);
    double t0 = fp_clock();
    ps->t_confirm = fp_world_now(w);
    if (ctx->rank == 0) {
        m.status = plan_retest(ps, run, &m, &pairs);
        if (m.status != FP_OK)
            m.run = 0;
    }
    FP_CHECK(fp_world_bcast(w, &m, (int)sizeof m, "confirm: the re-test's plan"));
    st = (fp_status)m.status;
    if (st != FP_OK || !m.run)
        goto cleanup;
    if (m.pairs_len > 0) {
        if (ctx->rank != 0) {
            pairs = calloc((size_t)m.pairs_len + 1, 1);
            FP_CHECK_ALLOC(pairs);
        }
        FP_CHECK(fp_world_bcast(w, pairs, m.pairs_len + 1, "confirm: the re-test's link pairs"));
    }
    /* the link sweep apart: it keeps the first pass's message size, and the
     * collectives may not */
    tests_cfg rc = *ps->tests, lc;
    rc.tests.n = 0;
    for (int t = 0; t < m.ntests; t++)
        if (strcmp(m.tests[t], "links") != 0)
            rc.tests.item[rc.tests.n++] = m.tests[t];
    rc.sweep.iters = m.iters;
    rc.sweep.warmup = m.warmup;
    lc = rc;
    if (m.one_size)
        rc.sweep.max_bytes = rc.sweep.min_bytes;
    lc.sweep.iters = m.link_iters;
    lc.sweep.warmup = m.link_warmup;
    lc.tests.n = m.pairs_len > 0;
    lc.tests.item[0] = "links";
    lc.coll.link_passes = m.passes;
    lc.coll.link_min_passes = m.min_passes;
    rc.coll.deadline = m.deadline;
    lc.coll.deadline = m.link_deadline;
    lc.coll.pairs = pairs;
    double start = fp_world_now(w);
    ctx->local = &local;
    if (rc.tests.n)
        st = fp_run_selected(ctx, &rc);
    if (st == FP_OK && lc.tests.n)
        st = fp_run_selected(ctx, &lc);
    ctx->local = first_local;
    if (st == FP_ETIMEOUT)
        goto cleanup;
    st = fp_world_agree(w, st);
    if (ctx->rank == 0)
        fp_run_init(&ps->retest);
    ctx->local = &local;
    if (st == FP_OK)
        st = fp_ctx_gather(ctx, ps->pc->run.tag, &ps->retest);
    ctx->local = first_local;
    bool failed = st != FP_OK && st != FP_ETIMEOUT;
    if (failed) { /* the first pass's verdicts still stand */
        if (ctx->rank == 0)
            snprintf(ps->dc.info.note, sizeof ps->dc.info.note,
                     "the re-test could not run (%s, logged above): acting on the first pass",
                     fp_status_name(st));
        st = FP_OK;
    }
    if (st != FP_OK || failed || ctx->rank != 0)
        goto cleanup;
    /* its own run, on its own clock, naming the run it confirms */
    fp_run *r = &ps->retest;
    ps->have_retest = true;
    snprintf(r->status, sizeof r->status, "%s", FP_RUN_RETEST);
    snprintf(r->confirms, sizeof r->confirms, "%s", run->id);
    snprintf(r->contended, sizeof r->contended, "%s", ps->contended ? ps->contended : "");
    r->time = run->time + start;
    r->duration = fp_world_now(w) - start;
    /* the link sweep's passes as run (its deadline may stop it early): the
     * windows of a link measured once a pass, the first listed */
    int windows = 0;
    char first_link[2 * FP_NAME_MAX + 8] = "";
    if (pairs)
        snprintf(first_link, sizeof first_link, "link:%.*s", (int)strcspn(pairs, ","), pairs);
    for (size_t i = 0; i < r->nsamples; i++) {
        fp_run_shift_t(r, i, -start);
        fp_sample_ref sm = fp_run_ref(r, i);
        char ent[2 * FP_NAME_MAX + 32];
        if (strcmp(sm.key->metric, "bw_inter") == 0 && sm.iter >= windows &&
            strcmp(fp_entity_format(sm.entity, ent, sizeof ent), first_link) == 0)
            windows = sm.iter + 1;
    }
    if (m.link_iters > 0 && windows > 0)
        ps->dc.info.link_passes = windows / m.link_iters;
    ps->dc.retest = r;
    ps->dc.info.ran = true;
    snprintf(ps->dc.info.run_id, sizeof ps->dc.info.run_id, "%s", r->id);
    ps->dc.info.seconds = fp_clock() - t0;
    fp_info("confirm: re-test %s: %zu samples in %.2f s, %.0f%% of the first pass's %.2f s",
            r->id, r->nsamples, ps->dc.info.seconds,
            100 * ps->dc.info.seconds / (ps->first_seconds > 0 ? ps->first_seconds : 1),
            ps->first_seconds);
cleanup:
    ctx->local = first_local;
    fp_run_free(&local);
    free(pairs);
    return st;
}

static const fp_run *pf_also_store(void *arg)
{
    const pf_state *ps = arg;
    return ps->have_retest ? &ps->retest : NULL;
}

static fp_status pf_report(fp_run *run, void *arg)
{
    pf_state *ps = arg;
    fp_info("preflight: %zu samples from %d %s on %d %s in %.1f s", run->nsamples, run->nranks,
            fp_plural(run->nranks, "rank", "ranks"), run->nnodes,
            fp_plural(run->nnodes, "node", "nodes"), fp_clock() - ps->t0);
    fp_status st = FP_OK;
    /* recorded, so that detect on the stored run judges it as contended too */
    snprintf(run->contended, sizeof run->contended, "%s", ps->contended ? ps->contended : "");
    if (ps->pc->run_json)
        st = fp_report_json(run, ps->pc->run_json);
    detect_out out = *ps->out;
    if (ps->dc_set) /* judged with its confirm pass */
        out.confirm = &ps->dc;
    if (st == FP_OK)
        st = fp_app_detect_and_report(run, ps->rules, ps->base, &out, ps->contended);
    if (st == FP_EFAIL && ps->pc->isolate)
        fp_app_isolate_wanted(run, ps->rules, ps->base, ps->contended, ps->isolate_why,
                              sizeof ps->isolate_why, &ps->isolate_wrong);
    return st;
}

/* What the store keeps with the run: the verdicts' record, when detect made one. */
static const fp_run_verdicts *pf_verdicts(void *arg)
{
    const pf_state *ps = arg;
    return ps->out->record && ps->record.n ? &ps->record : NULL;
}

static fp_status preflight_main(const void *config, fp_world *w)
{
    const preflight_cfg *pc = config;
    tests_cfg tc = pc->tests;
    const fp_config *rt = &tc.base; /* the runtime's settings */
    const char *stored = pc->run.store;
    fp_status st = FP_OK;
    fp_rules *rules = NULL;
    fp_store *store = NULL;
    fp_baselines *base = NULL;
    fp_history *hist = NULL;
    static const fp_measure_steps steps = {
        .measure = pf_measure, .confirm = pf_confirm, .also_store = pf_also_store,
        .report = pf_report, .verdicts = pf_verdicts};
    int rank = fp_world_rank(w);
    double t0 = fp_clock();
    detect_out out = pc->out;
    out.quiet = out.quiet || rt->quiet;
    out.command = "preflight";
    pf_state ps = {.pc = pc, .tests = &tc, .out = &out, .t0 = t0};
    fp_run_init(&ps.hang.ctx);
    fp_run prev, now;
    fp_run_init(&prev);
    fp_run_init(&now);
    ps.confirm = !pc->confirm || strcmp(pc->confirm, "auto") == 0;
    if (pc->confirm && !ps.confirm && strcmp(pc->confirm, "off") != 0) {
        if (rank == 0)
            fp_error("--confirm '%s': expected auto or off", pc->confirm);
        st = FP_EUSAGE;
    }

    /* inputs first, so a bad rules file or store fails before any test runs */
    fp_world_configure(w, rt->timeout, rt->verbose, rt->quiet);
    if (rank == 0 && st == FP_OK) {
        st = fp_app_check_max_drain(out.max_drain);
        if (st == FP_OK)
            st = fp_app_load_rules(out.rules, &rules);
        bool exists = stored && access(stored, F_OK) == 0;
        if (stored && !exists)
            fp_info("preflight: %s does not exist yet: peer evidence only; the run starts it",
                    stored);
        if (st == FP_OK && exists)
            st = fp_store_open(&store, stored, FP_STORE_READ, 0);
        if (st == FP_OK && exists)
            st = fp_store_open(&store, stored, FP_STORE_READ, 0);
        if (st == FP_OK && exists && !pc->no_baselines)
            st = fp_store_load_baselines(store, &base);
        /* the configuration records of the store's last run, to compare with */
        bool found = false;
        if (st == FP_OK && store)
            st = fp_app_previous_run(store, &now, &prev, &found);
        out.previous = found ? &prev : NULL;
        /* the verdicts of the runs before this one: repeat offenders */
        if (st == FP_OK && exists)
            st = fp_app_load_history(store, rules, NULL, &hist);
        out.history = hist;
        out.record = stored ? &ps.record : NULL;
        if (st == FP_OK && out.prometheus_local) {
            out.prom_local_node = fp_world_my_node(w);
            out.prom_local_dir = ps.prom_dir;
            out.prom_local = &ps.prom_local;
            if (!fp_app_prom_local_dir(out.prometheus_local, out.prom_local_node, ps.prom_dir,
                                       sizeof ps.prom_dir)) {
                fp_error("--prometheus-local '%s': expected a folder, %%n for the node's name "
                         "and %%%% for a '%%'", out.prometheus_local);
                st = FP_EUSAGE;
            }
        }
    }
    st = fp_world_agree(w, st);
    if (st != FP_OK)
        goto cleanup;

    /* the quick set: what this build has */
    tc.suite = "all";
    if (tc.tests.n == 0) {
        for (int i = 0; quick_tests[i]; i++) {
            if (registered(quick_tests[i]))
                tc.tests.item[tc.tests.n++] = quick_tests[i];
            else if (rank == 0)
                fp_info("preflight: test '%s' is not in this build: skipped", quick_tests[i]);
        }
        if (tc.tests.n == 0)
            FP_FAIL(FP_EUSAGE, "preflight: none of its tests is in this build");
    }
    if (strcmp(tc.coll.pairs, "auto") == 0)
        tc.coll.pairs = fp_world_nnodes(w) <= 32 ? "all" : "random=8";
    char note[112];
    FP_CHECK(fp_app_contention(w, &tc.base, "preflight", note, sizeof note));
    ps.rules = rules;
    ps.base = base;
    ps.contended = note[0] ? note : NULL;
    st = fp_measure(rt, &pc->run, w, &steps, &ps);
    st = fp_app_isolate_after(pc->isolate, rt, &pc->run, &out, w, st, ps.isolate_why,
                              ps.isolate_wrong);
    /* the files of the last report (isolation's, when it ran), once it judged */
    if (out.prometheus_local && (st == FP_OK || st == FP_EFAIL))
        st = fp_status_worst(st, fp_app_prom_local_write(w, out.prometheus_local, &ps.prom_local));
cleanup:
    fp_world_on_timeout(w, NULL, NULL);
    fp_run_free(&ps.hang.ctx);
    fp_run_free(&prev);
    fp_run_free(&now);
    fp_run_verdicts_free(&ps.record);
    fp_prom_files_free(&ps.prom_local);
    fp_history_free(hist);
    fp_run_free(&ps.retest);
    fp_baselines_free(base);
    fp_store_close(store);
    fp_rules_free(rules);
    return st;
}

static fp_status preflight_check(const void *config, bool speak)
{
    return fp_app_isolate_check(((const preflight_cfg *)config)->isolate, speak);
}

const fp_command fp_cmd_preflight = {
    .name = "preflight",
    .summary = "quick checks before a job starts, then detect: exit 0 = go; drain lists",
    .opts = preflight_opts,
    .config_size = sizeof(preflight_cfg),
    .needs_world = true,
    .run = preflight_main,
    .check = preflight_check,
};

