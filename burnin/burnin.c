/* fleetprint burnin: sustained GEMM on every device with deterministic
 * inputs for --duration, in windows of --interval. Every window: a throughput
 * sample per device, a telemetry reading, and result checks against the
 * device's own first result and across all ranks (majority vote). Before the
 * stress, a memory pattern test. After it, degradation over time and the
 * verdicts. SIGINT/SIGTERM stop it at the next window boundary with the
 * results so far, marked interrupted. */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/burnin.h"
#include "fleetprint/stats.h"
#include "fleetprint/log.h"
#include "fleetprint/progress.h"
#include "fleetprint/timer.h"

/* ---- what burn-in records ------------------------------------------------------- */

/* Test descriptors name the samples (burnin.<test>.<metric>); burn-in is a
 * command of its own, so they are not in the run registry. */
static const fp_test t_gemm = {.suite = "burnin", .name = "gemm", .summary = "sustained GEMM"};
static const fp_test t_mem = {.suite = "burnin", .name = "memtest", .summary = "memory patterns"};
static const fp_test t_tel = {.suite = "burnin", .name = "telemetry", .summary = "telemetry"};
static const fp_test t_verdict = {.suite = "burnin", .name = "verdict", .summary = "verdicts"};

const char *fp_burnin_outcome_name(int outcome)
{
    switch (outcome) {
    case FP_BURNIN_PASS: return "pass";
    case FP_BURNIN_WARN: return "warn";
    default: return "fail";
    }
}

static const fp_metric m_gflops = {"gflops", "GFLOP/s", FP_BETTER_HIGHER};
static const fp_metric m_self = {"self_mismatch", "count", FP_BETTER_LOWER};
static const fp_metric m_peer = {"peer_mismatch", "blocks", FP_BETTER_LOWER};
static const fp_metric m_nonfinite = {"nonfinite", "count", FP_BETTER_LOWER};
static const fp_metric m_mem_errors = {"errors", "count", FP_BETTER_LOWER};
static const fp_metric m_mem_bw = {"bandwidth", "GB/s", FP_BETTER_HIGHER};
static const fp_metric m_sdc = {"sdc_suspect", "flag", FP_BETTER_LOWER};
static const fp_metric m_first_bad = {"first_bad_interval", "window", FP_BETTER_HIGHER};
static const fp_metric m_ratio = {"late_early_ratio", "ratio", FP_BETTER_HIGHER};
static const fp_metric m_rel_ratio = {"relative_late_early", "ratio", FP_BETTER_HIGHER};
static const fp_metric m_degraded = {"degraded", "flag", FP_BETTER_LOWER};
static const fp_metric m_outcome = {"outcome", "0pass1warn2fail", FP_BETTER_LOWER};
static const fp_metric m_duty = {"duty_cycle", "fraction", FP_BETTER_HIGHER};

/* ---- signals -------------------------------------------------------------------- */

/* The one piece of process-wide mutable state in burn-in, and why: a signal
 * handler can only talk to the loop through a static volatile sig_atomic_t.
 * It is set by SIGINT/SIGTERM and read at every window boundary. */
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

typedef struct saved_signals {
    struct sigaction intr, term;
} saved_signals;

/* SA_RESETHAND: a second signal ends the process the default way. */
static void signals_install(saved_signals *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    stop_signal = 0;
    sigaction(SIGINT, &sa, &old->intr);
    sigaction(SIGTERM, &sa, &old->term);
}

static void signals_restore(const saved_signals *old)
{
    sigaction(SIGINT, &old->intr, NULL);
    sigaction(SIGTERM, &old->term, NULL);
}

/* ---- state -------------------------------------------------------------------- */

/* What every rank sends the others at the end of a window. */
typedef struct win_msg {
    fp_digest digest;
    double gflops;
    long long self_mismatch, nonfinite;
    long long errors;  /* everything found on this rank so far */
    int stop;          /* a signal arrived */
    int pad;
} win_msg;

typedef struct burn {
    fp_ctx *ctx;
    const fp_burnin_config *cfg;
    fp_gemm_type type;
    int n;                /* problem size n = m = k */
    size_t es, nn;        /* result element size, result elements */
    void *da, *db, *dc;   /* device operands */
    void *dref;           /* the warm-up result, before any window: the reference */
    int nwin, done;       /* windows planned and completed */
    double *tput;         /* nranks x nwin GFLOP/s, NaN until known */
    int *first_bad;       /* per rank, -1 none */
    win_msg *msgs;        /* nranks */
    fp_digest *digests;
    int *disagree;
    int batch;            /* GEMMs per timed region */
    fp_telemetry *tel;
    fp_tel_sampler *sampler;  /* NULL when telemetry is waived */
    fp_burnin_verdict v;  /* this rank's */
    bool interrupted;
    bool flipped;         /* an injected bitflip hit a result */
    double win_start;     /* fp_clock at the start of the current window */
    long long no_majority;
} burn;

/* ---- options ---------------------------------------------------------------------- */

static fp_status validate(const fp_burnin_config *cfg, int rank, fp_gemm_type *type)
{
    const char *bad = NULL;
    char msg[160];
    if (!(cfg->duration > 0))
        bad = "--duration must be positive (e.g. 30m)";
    else if (!(cfg->interval > 0) || cfg->interval > cfg->duration)
        bad = "--interval must be positive and at most --duration";
    else if (cfg->duration / cfg->interval > 100000)
        bad = "--duration / --interval gives more than 100000 windows";
    else if (!(cfg->memory_fraction == -1 ||
               (cfg->memory_fraction >= 0 && cfg->memory_fraction <= 0.95)))
        bad = "--memory-fraction must be -1 (auto) or within 0..0.95";
    else if (!(cfg->sdc_tol >= 0 && cfg->sdc_tol < 1))
        bad = "--sdc-tolerance must be within 0 (bitwise) .. 1";
    else if (!(cfg->degrade > 0 && cfg->degrade < 1))
        bad = "--degrade-threshold must be within 0 .. 1 (exclusive)";
    else if (cfg->gemm_size < 0 || cfg->gemm_size > 65536)
        bad = "--gemm-size must be within 1..65536 (0: auto)";
    *type = FP_GEMM_TYPE_COUNT; /* auto */
    if (!bad && strcmp(cfg->gemm_type, "auto") != 0) {
        for (int t = 0; t < FP_GEMM_TYPE_COUNT; t++)
            if (strcmp(cfg->gemm_type, fp_gemm_type_name((fp_gemm_type)t)) == 0)
                *type = (fp_gemm_type)t;
        if (*type == FP_GEMM_TYPE_COUNT) {
            snprintf(msg, sizeof msg, "--gemm-type '%s': choose auto, f64, f32, tf32, f16, bf16 or fp8",
                     cfg->gemm_type);
            bad = msg;
        }
    }
    if (!bad)
        return FP_OK;
    if (rank == 0)
        fp_error("%s", bad);
    return FP_EUSAGE;
}

/* The GEMM types every rank's device runs (*common, a mask of fp_gemm_type
 * bits) and the first rank whose device does not run want (*lacking; -1:
 * none, or want is auto). Collective. */
static fp_status gemm_types(fp_ctx *ctx, fp_gemm_type want, int *common, int *lacking)
{
    fp_status st = FP_OK;
    int mine = 0, *all = calloc((size_t)ctx->nranks, sizeof *all);
    FP_CHECK_ALLOC(all);
    for (int t = 0; t < FP_GEMM_TYPE_COUNT; t++)
        mine |= ctx->dev_ops->gemm_supports(ctx->dev, (fp_gemm_type)t) ? 1 << t : 0;
    FP_CHECK(fp_world_allgather(ctx->world, &mine, all, (int)sizeof mine, "gemm types"));
    *common = ~0;
    *lacking = -1;
    for (int r = 0; r < ctx->nranks; r++) {
        *common &= all[r];
        if (want != FP_GEMM_TYPE_COUNT && !(all[r] & 1 << want) && *lacking < 0)
            *lacking = r;
    }
cleanup:
    free(all);
    return st;
}

/* The type every rank runs: the one asked for if all support it; auto:
 * bf16 where every device has it (GPUs), else f64, else f32. */
static fp_status choose_type(burn *b, fp_gemm_type want)
{
    fp_ctx *ctx = b->ctx;
    int common = 0, lacking = -1;
    fp_status st = gemm_types(ctx, want, &common, &lacking);
    if (st != FP_OK)
        return st;
    if (want != FP_GEMM_TYPE_COUNT) {
        if (lacking >= 0) {
            if (ctx->rank == 0)
                fp_error("--gemm-type %s: rank %d's device (%s) does not run it",
                         fp_gemm_type_name(want), lacking, ctx->dev_ops->name);
            return FP_EUSAGE;
        }
        b->type = want;
        return FP_OK;
    }
    static const fp_gemm_type pref[] = {FP_GEMM_BF16, FP_GEMM_F64, FP_GEMM_F32};
    for (size_t i = 0; i < sizeof pref / sizeof pref[0]; i++)
        if (common & 1 << pref[i]) {
            b->type = pref[i];
            return FP_OK;
        }
    if (ctx->rank == 0)
        fp_error("burnin: no GEMM type runs on every rank's device");
    return FP_EUNSUPPORTED;
}

/* ---- telemetry ------------------------------------------------------------------- */

static void tel_open(burn *b)
{
    fp_ctx *ctx = b->ctx;
    const char *nvml = b->cfg->nvml;
    if (!nvml)
        nvml = getenv("FLEETPRINT_NVML");
    if (nvml && !*nvml)
        nvml = NULL;
    if (!nvml && ctx->dev_ops != &fp_device_host)
        nvml = "libnvidia-ml.so.1";
    const char *root = getenv("FLEETPRINT_SYSROOT");
    char why[160];
    fp_status st = fp_telemetry_open(&b->tel, nvml, ctx->dev_info.pci_bus, ctx->dev_info.index,
                                     root, why, sizeof why);
    if (st == FP_OK) {
        snprintf(b->v.telemetry, sizeof b->v.telemetry, "%s", fp_telemetry_source(b->tel));
        if (fp_tel_sampler_start(&b->sampler, b->tel, FP_TEL_PERIOD_MAX) != FP_OK)
            fp_warn("telemetry: no sampler thread; one reading per window only");
        return;
    }
    b->v.telemetry_waived = true;
    snprintf(b->v.telemetry, sizeof b->v.telemetry, "waived: %.150s", why);
    fp_warn("telemetry waived: %s", why);
}

/* Take a reading, record its fields as samples (iter = reading index:
 * 0 at start, w + 1 after window w) and remember it. */
static fp_status tel_read(burn *b, int index, fp_tel_reading *r)
{
    fp_status st = FP_OK;
    fp_telemetry_read(b->tel, r);
    for (int f = 0; f < FP_TEL_COUNT; f++)
        if (r->have & 1u << f)
            FP_CHECK(fp_emit(b->ctx, &t_tel, fp_tel_metric(f), &b->ctx->self, 0, index, r->v[f]));
    if (r->have & 1u << FP_TEL_CLOCK_REASONS)
        b->v.clock_reasons_seen |= (uint64_t)r->v[FP_TEL_CLOCK_REASONS];
cleanup:
    return st;
}

/* Record the sampler's statistics of window w: <field>_min, _mean and _max
 * of every sampled field, and how many readings they summarise. */
static fp_status tel_window(burn *b, int w)
{
    fp_status st = FP_OK;
    static const fp_metric m_samples = {"samples", "count", FP_BETTER_HIGHER};
    static const char *const stat[] = {"min", "mean", "max"};
    fp_tel_stats s;
    if (!b->sampler)
        return FP_OK;
    fp_tel_sampler_take(b->sampler, &s);
    FP_CHECK(fp_emit(b->ctx, &t_tel, &m_samples, &b->ctx->self, 0, w, s.samples));
    for (int f = 0; f < FP_TEL_COUNT; f++) {
        if (!(s.have & 1u << f))
            continue;
        const fp_metric *m = fp_tel_metric(f);
        const double v[] = {s.min[f], s.mean[f], s.max[f]};
        for (int k = 0; k < 3; k++) {
            char name[48];
            snprintf(name, sizeof name, "%s_%s", m->name, stat[k]);
            fp_metric mk = {name, m->unit, m->better};
            FP_CHECK(fp_emit(b->ctx, &t_tel, &mk, &b->ctx->self, 0, w, v[k]));
        }
    }
cleanup:
    return st;
}

/* ---- memory test --------------------------------------------------------------- */

/* Share of --duration the memory test may take before the stress (but at
 * least MEMTEST_BUDGET_MIN_S, so short runs on a loaded machine still test
 * every pattern): the patterns run in order while the next one fits the
 * budget by the time the last one took (one always runs). */
#define MEMTEST_BUDGET 0.1
#define MEMTEST_BUDGET_MIN_S 5.0

static fp_status memtest(burn *b)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = b->ctx;
    double frac = b->cfg->memory_fraction;
    uint64_t bytes = frac == -1 ? (ctx->dev_ops == &fp_device_host
                                       ? FP_BURNIN_MEM_BYTES_HOST
                                       : (uint64_t)(FP_BURNIN_MEM_FRACTION_CUDA *
                                                    (double)ctx->dev_info.memory))
                                : (uint64_t)(frac * (double)ctx->dev_info.memory);
    bytes -= bytes % 4096;
    void *region = NULL;
    if (bytes == 0)
        return FP_OK;
    FP_CHECK(ctx->dev_ops->alloc(ctx->dev, bytes, &region));
    double budget = fmax(MEMTEST_BUDGET * b->cfg->duration, MEMTEST_BUDGET_MIN_S);
    double spent = 0, last = 0;
    for (int p = 0; p < FP_MEM_PATTERN_COUNT && !stop_signal; p++) {
        if (p > 0 && spent + last > budget) {
            fp_warn("memtest: %d of %d patterns in its budget of %.3g s", p, FP_MEM_PATTERN_COUNT,
                    budget);
            break;
        }
        fp_memtest_result res;
        FP_CHECK(fp_memtest_run(ctx->dev_ops, ctx->dev, region, bytes, p, 0x5eedULL + (uint64_t)p,
                                &res));
        spent += last = res.seconds;
        const fp_mem_check *k = &res.check;
        FP_CHECK(fp_emit(ctx, &t_mem, &m_mem_errors, &ctx->self, bytes, p, (double)k->errors));
        if (res.seconds > 0) /* a write and a read of every byte */
            FP_CHECK(fp_emit(ctx, &t_mem, &m_mem_bw, &ctx->self, bytes, p,
                             2.0 * (double)res.bytes / res.seconds * 1e-9));
        if (k->errors == 0)
            continue;
        if (b->v.mem_errors == 0 && k->naddr > 0)
            b->v.mem_first_addr = k->addr[0];
        b->v.mem_errors += (long long)k->errors;
        fp_error("memtest %s: %llu bad words in %llu bytes", fp_mem_pattern_name(p),
                 (unsigned long long)k->errors, (unsigned long long)res.bytes);
        for (uint64_t i = 0; i < k->naddr; i++)
            fp_error("  at 0x%llx: read 0x%016llx, wrote 0x%016llx",
                     (unsigned long long)k->addr[i], (unsigned long long)k->got[i],
                     (unsigned long long)k->want[i]);
    }
cleanup:
    if (region)
        ctx->dev_ops->free(ctx->dev, region);
    return st;
}

/* ---- the stress loop ------------------------------------------------------------- */

static fp_status gemm_setup(burn *b)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = b->ctx;
    const fp_device_ops *d = ctx->dev_ops;
    int n = b->cfg->gemm_size;
    b->n = n > 0 ? n : d == &fp_device_host ? 512 : 8192;
    b->nn = (size_t)b->n * (size_t)b->n;
    b->es = fp_gemm_out_size(b->type);
    FP_CHECK(d->alloc(ctx->dev, b->nn * fp_gemm_in_size(b->type), &b->da));
    FP_CHECK(d->alloc(ctx->dev, b->nn * fp_gemm_in_size(b->type), &b->db));
    FP_CHECK(d->alloc(ctx->dev, b->nn * b->es, &b->dc));
    FP_CHECK(d->alloc(ctx->dev, b->nn * b->es, &b->dref));
    /* the same inputs on every rank, made on the device: exact in every
     * type (see burnin.h) */
    FP_CHECK(d->fill_gemm(ctx->dev, b->type, b->da, b->nn, 11, true));
    FP_CHECK(d->fill_gemm(ctx->dev, b->type, b->db, b->nn, 23, true));
    /* warm-up, untimed; its result is the reference every window's result
     * is compared with (taken before any window, so no injection is in it) */
    FP_CHECK(d->gemm(ctx->dev, b->type, b->n, b->n, b->n, b->da, b->n, b->db, b->n, b->dref,
                     b->n));
    FP_CHECK(d->sync(ctx->dev));
cleanup:
    return st;
}

static void gemm_teardown(burn *b)
{
    fp_ctx *ctx = b->ctx;
    void **bufs[] = {&b->da, &b->db, &b->dc, &b->dref};
    for (int i = 0; i < 4; i++)
        if (*bufs[i]) {
            ctx->dev_ops->free(ctx->dev, *bufs[i]);
            *bufs[i] = NULL;
        }
}

/* Flip one low mantissa bit of a result element: a corruption only a
 * bitwise check sees (2^-42 relative in f64, 2^-21 in f32). */
static fp_status inject_flip(burn *b, size_t i)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = b->ctx;
    unsigned char v[8];
    char *p = (char *)b->dc + i * b->es;
    FP_CHECK(ctx->dev_ops->copy(ctx->dev, v, p, b->es, FP_COPY_D2H));
    v[1] ^= 0x04;
    FP_CHECK(ctx->dev_ops->copy(ctx->dev, p, v, b->es, FP_COPY_H2D));
cleanup:
    return st;
}

/* Run GEMMs until the common clock passes end; returns GFLOP/s over the
 * wall time of the loop (what a job would get: on a shared or throttled
 * device, waiting counts) and in *busy the device time of the timed regions.
 * Timed regions (where injected slowdowns act) of b->batch GEMMs grow until
 * one takes 1/20 of an interval, so GPU timing overhead stays small and the
 * loop overshoots end by little. */
static fp_status stress(burn *b, double end, double *gflops, double *busy)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = b->ctx;
    double flop = 2.0 * (double)b->n * (double)b->n * (double)b->n, t0 = fp_clock();
    long long count = 0;
    do {
        double sec = 0;
        FP_CHECK(fp_timed_start(ctx));
        for (int i = 0; i < b->batch; i++)
            FP_CHECK(ctx->dev_ops->gemm(ctx->dev, b->type, b->n, b->n, b->n, b->da, b->n, b->db,
                                        b->n, b->dc, b->n));
        FP_CHECK(fp_timed_stop(ctx, &sec));
        *busy += sec;
        count += b->batch;
        if (sec < b->cfg->interval / 20 && b->batch < 1024)
            b->batch *= 2;
    } while (fp_world_now(ctx->world) < end);
    double wall = fp_clock() - t0;
    *gflops = wall > 0 ? flop * (double)count / wall * 1e-9 : 0;
cleanup:
    return st;
}

/* One window: stress, check, read telemetry, exchange, vote. */
static fp_status window(burn *b, int w, double t0, fp_progress *prog)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = b->ctx;
    double interval = b->cfg->interval;
    win_msg mine;
    memset(&mine, 0, sizeof mine);
    double busy = 0;
    FP_CHECK(stress(b, t0 + (w + 1) * interval, &mine.gflops, &busy));
    /* the flip lands in the device's result, before the device checks it */
    if (fp_inject_bitflip(ctx->inject, ctx->rank, fp_world_now(ctx->world))) {
        FP_CHECK(inject_flip(b, b->nn / 2 + (size_t)b->n / 3));
        if (!b->flipped)
            fp_warn("burn-in: injected bitflip in window %d's result (and every later one)", w);
        b->flipped = true;
    }
    /* checked on the device: only the digest crosses to the host */
    FP_CHECK(ctx->dev_ops->digest(ctx->dev, b->dc, b->dref, b->nn, b->es, b->cfg->sdc_tol,
                                  &mine.digest));
    mine.self_mismatch = (long long)mine.digest.mismatch;
    mine.nonfinite = (long long)mine.digest.nonfinite;
    b->v.self_mismatch += mine.self_mismatch;
    b->v.nonfinite += mine.nonfinite;
    mine.errors = b->v.self_mismatch + b->v.peer_mismatch + b->v.nonfinite + b->v.mem_errors;
    mine.stop = stop_signal != 0;

    fp_tel_reading r;
    FP_CHECK(tel_read(b, w + 1, &r));
    FP_CHECK(tel_window(b, w));
    b->v.tel_end = r;
    FP_CHECK(fp_emit(ctx, &t_gemm, &m_gflops, &ctx->self, b->nn * b->es, w, mine.gflops));
    FP_CHECK(fp_emit(ctx, &t_gemm, &m_self, &ctx->self, b->nn * b->es, w,
                     (double)mine.self_mismatch));
    FP_CHECK(fp_emit(ctx, &t_gemm, &m_nonfinite, &ctx->self, b->nn * b->es, w,
                     (double)mine.nonfinite));

    /* everyone learns everyone's window; the vote is the same on every rank */
    FP_CHECK(fp_world_allgather(ctx->world, &mine, b->msgs, (int)sizeof mine, "burn-in window"));
    int nr = ctx->nranks;
    for (int q = 0; q < nr; q++)
        b->digests[q] = b->msgs[q].digest;
    int nomaj = nr >= 3 ? fp_sdc_vote(b->digests, nr, b->cfg->sdc_tol, b->disagree) : 0;
    if (nr < 3) /* two ranks cannot outvote each other: only NaN/Inf count */
        for (int q = 0; q < nr; q++)
            b->disagree[q] = b->msgs[q].nonfinite > 0;
    b->no_majority += nomaj;
    if (nomaj && ctx->rank == 0)
        fp_warn("window %d: %d result blocks have no majority across ranks", w, nomaj);
    b->v.peer_mismatch += b->disagree[ctx->rank];
    FP_CHECK(fp_emit(ctx, &t_gemm, &m_peer, &ctx->self, b->nn * b->es, w,
                     (double)b->disagree[ctx->rank]));
    double *g = malloc((size_t)nr * sizeof *g);
    FP_CHECK_ALLOC(g);
    long long errors = 0;
    for (int q = 0; q < nr; q++) {
        const win_msg *m = &b->msgs[q];
        b->tput[(size_t)q * (size_t)b->nwin + (size_t)w] = m->gflops;
        if (b->first_bad[q] < 0 && (m->self_mismatch > 0 || m->nonfinite > 0 || b->disagree[q] > 0))
            b->first_bad[q] = w;
        errors += m->errors + b->disagree[q];
        b->interrupted |= m->stop != 0;
        g[q] = m->gflops;
    }
    double med = fp_median(g, nr); /* reorders g: min and max after */
    double lo = g[0], hi = g[0];
    for (int q = 1; q < nr; q++) {
        lo = g[q] < lo ? g[q] : lo;
        hi = g[q] > hi ? g[q] : hi;
    }
    free(g);
    char detail[160];
    snprintf(detail, sizeof detail, "GFLOP/s min %.1f median %.1f max %.1f, %lld error%s so far",
             lo, med, hi, errors, errors == 1 ? "" : "s");
    fp_progress_update(prog, (w + 1) * interval, detail);
    b->done = w + 1;
    /* the share of the window's wall time the device had GEMMs to run:
     * checks, exchanges and host work between the timed regions count idle */
    double now = fp_clock();
    if (now > b->win_start)
        FP_CHECK(fp_emit(ctx, &t_gemm, &m_duty, &ctx->self, 0, w, busy / (now - b->win_start)));
    b->win_start = now;
cleanup:
    return st;
}

/* ---- verdicts --------------------------------------------------------------------- */

static void reason(fp_burnin_verdict *v, int outcome, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reason(fp_burnin_verdict *v, int outcome, const char *fmt, ...)
{
    size_t at = strlen(v->reasons);
    if (at && at + 2 < sizeof v->reasons) {
        memcpy(v->reasons + at, "; ", 3);
        at += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->reasons + at, sizeof v->reasons - at, fmt, ap);
    va_end(ap);
    if (outcome > v->outcome)
        v->outcome = outcome;
}

/* Increase of field f from the start reading to the end one (0 when either
 * lacks it). */
static double delta(const fp_burnin_verdict *v, int f)
{
    if (!(v->tel_start.have & v->tel_end.have & 1u << f))
        return 0;
    return v->tel_end.v[f] - v->tel_start.v[f];
}

static bool has(const fp_tel_reading *r, int f)
{
    return (r->have & 1u << f) != 0;
}

static void judge_telemetry(fp_burnin_verdict *v)
{
    const fp_tel_reading *e = &v->tel_end;
    double d;
    if ((d = delta(v, FP_TEL_ECC_UNCORR)) > 0)
        reason(v, FP_BURNIN_FAIL, "ECC uncorrected errors +%.0f during the run", d);
    if (has(e, FP_TEL_XID) && e->v[FP_TEL_XID] > 0)
        reason(v, FP_BURNIN_FAIL, "XID %.0f (%.0f critical XID event%s)", e->v[FP_TEL_LAST_XID],
               e->v[FP_TEL_XID], e->v[FP_TEL_XID] == 1 ? "" : "s");
    if (has(e, FP_TEL_REMAP_FAILURE) && e->v[FP_TEL_REMAP_FAILURE] > 0)
        reason(v, FP_BURNIN_FAIL, "row remapping failed");
    if (has(e, FP_TEL_REMAP_PENDING) && e->v[FP_TEL_REMAP_PENDING] > 0)
        reason(v, FP_BURNIN_WARN, "row remap pending (needs a GPU reset)");
    if ((d = delta(v, FP_TEL_ECC_CORR)) > 0)
        reason(v, FP_BURNIN_WARN, "ECC corrected errors +%.0f", d);
    char rs[160];
    if (v->clock_reasons_seen & fp_tel_throttle_mask())
        reason(v, FP_BURNIN_WARN, "clock events: %s",
               fp_tel_reasons_text(v->clock_reasons_seen, rs, sizeof rs));
    if (has(e, FP_TEL_PCIE_GEN) && has(e, FP_TEL_PCIE_GEN_MAX) &&
        e->v[FP_TEL_PCIE_GEN] < e->v[FP_TEL_PCIE_GEN_MAX])
        reason(v, FP_BURNIN_WARN, "PCIe gen %.0f of %.0f under load", e->v[FP_TEL_PCIE_GEN],
               e->v[FP_TEL_PCIE_GEN_MAX]);
    if (has(e, FP_TEL_PCIE_WIDTH) && has(e, FP_TEL_PCIE_WIDTH_MAX) &&
        e->v[FP_TEL_PCIE_WIDTH] < e->v[FP_TEL_PCIE_WIDTH_MAX])
        reason(v, FP_BURNIN_WARN, "PCIe x%.0f of x%.0f", e->v[FP_TEL_PCIE_WIDTH],
               e->v[FP_TEL_PCIE_WIDTH_MAX]);
    if ((d = delta(v, FP_TEL_PCIE_REPLAY)) > 0)
        reason(v, FP_BURNIN_WARN, "PCIe replays +%.0f", d);
    if ((d = delta(v, FP_TEL_NVLINK_ERRORS)) > 0)
        reason(v, FP_BURNIN_WARN, "NVLink errors +%.0f", d);
    if ((d = delta(v, FP_TEL_NVLINK_ACTIVE)) < 0)
        reason(v, FP_BURNIN_FAIL, "%.0f NVLink link%s went down", -d, d == -1 ? "" : "s");
    static const int temps[] = {FP_TEL_TEMP, FP_TEL_CPU_TEMP};
    for (int i = 0; i < 2; i++) {
        int f = temps[i];
        if (has(e, f) && e->v[f] > FP_BURNIN_TEMP_WARN_C)
            reason(v, FP_BURNIN_WARN, "%s %.0f C above %.0f C", fp_tel_metric(f)->name, e->v[f],
                   FP_BURNIN_TEMP_WARN_C);
    }
}

static fp_status judge(burn *b)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = b->ctx;
    fp_burnin_verdict *v = &b->v;
    int nr = ctx->nranks, nw = b->done;
    v->rank = ctx->rank;
    v->entity = ctx->self;
    v->windows = nw;
    v->first_bad_interval = b->first_bad[ctx->rank];
    v->sdc_suspect = v->self_mismatch + v->peer_mismatch + v->nonfinite > 0;
    if (v->sdc_suspect)
        reason(v, FP_BURNIN_FAIL,
               "silent data corruption suspect from window %d: %lld elements differ from its "
               "first result, %lld blocks from the majority, %lld NaN/Inf",
               v->first_bad_interval, v->self_mismatch, v->peer_mismatch, v->nonfinite);
    /* degradation, from the windows every rank completed */
    double *t = malloc((size_t)nr * (size_t)(nw > 0 ? nw : 1) * sizeof *t);
    fp_degrade *dg = calloc((size_t)nr, sizeof *dg);
    FP_CHECK_ALLOC(t);
    FP_CHECK_ALLOC(dg);
    for (int q = 0; q < nr; q++)
        for (int w = 0; w < nw; w++)
            t[(size_t)q * (size_t)nw + (size_t)w] = b->tput[(size_t)q * (size_t)b->nwin + (size_t)w];
    fp_burnin_degradation(t, nr, nw, b->cfg->degrade, dg);
    v->degrade = dg[ctx->rank];
    char rs[160] = "";
    fp_tel_reasons_text(v->clock_reasons_seen, rs, sizeof rs);
    if (v->degrade.degraded)
        reason(v, FP_BURNIN_FAIL,
               "degraded over time: late windows at %.0f%% of early ones against its peers "
               "(%.0f%% in absolute terms)%s%s",
               100 * v->degrade.rel_ratio, 100 * v->degrade.ratio, rs[0] ? ", throttled: " : "",
               rs);
    if (v->mem_errors > 0)
        reason(v, FP_BURNIN_FAIL, "memory test: %lld errors, first at 0x%llx", v->mem_errors,
               (unsigned long long)v->mem_first_addr);
    if (!v->telemetry_waived)
        judge_telemetry(v);
    /* verdict samples */
    FP_CHECK(fp_emit(ctx, &t_verdict, &m_sdc, &ctx->self, 0, -1, v->sdc_suspect));
    if (v->sdc_suspect)
        FP_CHECK(fp_emit(ctx, &t_verdict, &m_first_bad, &ctx->self, 0, -1, v->first_bad_interval));
    if (v->degrade.state == 0) {
        FP_CHECK(fp_emit(ctx, &t_verdict, &m_ratio, &ctx->self, 0, -1, v->degrade.ratio));
        FP_CHECK(fp_emit(ctx, &t_verdict, &m_rel_ratio, &ctx->self, 0, -1, v->degrade.rel_ratio));
        FP_CHECK(fp_emit(ctx, &t_verdict, &m_degraded, &ctx->self, 0, -1, v->degrade.degraded));
    }
    FP_CHECK(fp_emit(ctx, &t_verdict, &m_outcome, &ctx->self, 0, -1, v->outcome));
cleanup:
    free(t);
    free(dg);
    return st;
}

/* ---- one burn-in ------------------------------------------------------------------ */

static fp_status burn_alloc(burn *b)
{
    fp_status st = FP_OK;
    int nr = b->ctx->nranks;
    b->tput = malloc((size_t)nr * (size_t)b->nwin * sizeof *b->tput);
    b->first_bad = malloc((size_t)nr * sizeof *b->first_bad);
    b->msgs = calloc((size_t)nr, sizeof *b->msgs);
    b->digests = calloc((size_t)nr, sizeof *b->digests);
    b->disagree = calloc((size_t)nr, sizeof *b->disagree);
    FP_CHECK_ALLOC(b->tput);
    FP_CHECK_ALLOC(b->first_bad);
    FP_CHECK_ALLOC(b->msgs);
    FP_CHECK_ALLOC(b->digests);
    FP_CHECK_ALLOC(b->disagree);
    for (size_t i = 0; i < (size_t)nr * (size_t)b->nwin; i++)
        b->tput[i] = NAN;
    for (int q = 0; q < nr; q++)
        b->first_bad[q] = -1;
cleanup:
    return st;
}

static void burn_free(burn *b)
{
    gemm_teardown(b);
    fp_tel_sampler_stop(b->sampler);
    fp_telemetry_close(b->tel);
    free(b->tput);
    free(b->first_bad);
    free(b->msgs);
    free(b->digests);
    free(b->disagree);
}

/* Everything between opening the context and the verdicts, on every rank. */
static fp_status burn_run(burn *b, fp_gemm_type want)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = b->ctx;
    const fp_burnin_config *c = b->cfg;
    b->nwin = (int)ceil(c->duration / c->interval - 1e-9);
    b->batch = 1;
    FP_CHECK(burn_alloc(b));
    FP_CHECK(choose_type(b, want));
    tel_open(b);
    FP_CHECK(tel_read(b, 0, &b->v.tel_start));
    b->v.tel_end = b->v.tel_start;
    st = memtest(b);
    FP_CHECK(fp_world_agree(ctx->world, st));
    st = gemm_setup(b);
    FP_CHECK(fp_world_agree(ctx->world, st));
    if (ctx->rank == 0)
        fp_info("burn-in: %d windows of %.3g s, %s GEMM n=%d on every rank; telemetry %s",
                b->nwin, c->interval, fp_gemm_type_name(b->type), b->n, b->v.telemetry);
    FP_CHECK(fp_ctx_barrier(ctx, "burn-in start"));
    fp_progress prog;
    fp_progress_begin(&prog, "burn-in", b->nwin * c->interval, ctx->rank == 0 && !c->base.quiet);
    prog.every = c->interval > 10 ? c->interval : 10;
    double t0 = fp_world_now(ctx->world);
    b->win_start = fp_clock();
    if (b->sampler) { /* the windows' statistics start now */
        fp_tel_stats discard;
        fp_tel_sampler_take(b->sampler, &discard);
    }
    for (int w = 0; w < b->nwin && !b->interrupted; w++)
        FP_CHECK(window(b, w, t0, &prog));
    if (b->interrupted && ctx->rank == 0)
        fp_warn("burn-in interrupted by a signal after %d of %d windows", b->done, b->nwin);
    fp_progress_end(&prog, b->interrupted ? "interrupted" : "done");
    gemm_teardown(b);
    fp_tel_reading end;
    FP_CHECK(tel_read(b, b->done + 1, &end));
    if (end.have)
        b->v.tel_end = end;
    FP_CHECK(judge(b));
cleanup:
    return st;
}

/* ---- the entry points ------------------------------------------------------------ */

struct fp_burnin {
    burn b;
    fp_gemm_type want;
    saved_signals old;
};

fp_status fp_burnin_begin(const fp_burnin_config *cfg, int rank, fp_burnin **out)
{
    fp_status st = FP_OK;
    *out = NULL;
    fp_burnin *bi = calloc(1, sizeof *bi);
    FP_CHECK_ALLOC(bi);
    signals_install(&bi->old);
    st = validate(cfg, rank, &bi->want);
    if (st != FP_OK) {
        signals_restore(&bi->old);
        free(bi);
        return st;
    }
    bi->b.cfg = cfg;
    *out = bi;
cleanup:
    return st;
}

fp_status fp_burnin_run(fp_burnin *bi, fp_ctx *ctx)
{
    bi->b.ctx = ctx;
    return burn_run(&bi->b, bi->want);
}

fp_status fp_burnin_verdicts(fp_burnin *bi, fp_burnin_result *res)
{
    fp_status st = FP_OK;
    burn *b = &bi->b;
    memset(res, 0, sizeof *res);
    res->nranks = b->ctx->nranks;
    res->interrupted = b->interrupted;
    res->done = b->done;
    res->planned = b->nwin;
    res->all = calloc((size_t)res->nranks, sizeof *res->all);
    FP_CHECK_ALLOC(res->all);
    FP_CHECK(fp_world_allgather(b->ctx->world, &b->v, res->all, (int)sizeof b->v,
                                "burn-in verdicts"));
    for (int q = 0; q < res->nranks; q++)
        res->failed |= res->all[q].outcome == FP_BURNIN_FAIL;
cleanup:
    return st;
}

void fp_burnin_end(fp_burnin *bi)
{
    if (!bi)
        return;
    burn_free(&bi->b);
    signals_restore(&bi->old);
    free(bi);
}
