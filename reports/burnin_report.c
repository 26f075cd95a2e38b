/* Burn-in output: the per-rank throughput timeline, verdict lines on the
 * console, and the JSON document with the verdicts beside the samples. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/burnin.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"

/* Timeline columns shown at most; longer runs show every k-th window. */
#define TIMELINE_COLS 20

/* The per-window series shown as timelines: throughput always, the others
 * when the run has them (the duty cycle, and the telemetry sampler's). */
static const struct series {
    const char *test, *metric, *title;
    int digits; /* after the point */
} series[] = {
    {"gemm", "gflops", "throughput timeline (GFLOP/s", 1},
    {"gemm", "duty_cycle", "duty cycle (device busy / wall time", 3},
    {"telemetry", "power_mean", "mean power (W", 0},
    {"telemetry", "sm_clock_mean", "mean SM clock (MHz", 0},
    {"telemetry", "temperature_max", "max temperature (C", 0},
};

/* Value of window w of entity e in run for series sr, NaN when absent. */
static double window_value(const fp_run *run, const struct series *sr, const fp_entity *e, int w)
{
    char a[2 * FP_NAME_MAX + 32], b[2 * FP_NAME_MAX + 32];
    fp_entity_format(e, a, sizeof a);
    for (size_t i = 0; i < run->nsamples; i++) {
        fp_sample_ref s = fp_run_ref(run, i);
        if (s.iter != w || strcmp(s.key->suite, "burnin") != 0 ||
            strcmp(s.key->test, sr->test) != 0 || strcmp(s.key->metric, sr->metric) != 0)
            continue;
        if (strcmp(fp_entity_format(s.entity, b, sizeof b), a) == 0)
            return s.value;
    }
    return NAN;
}

static void timeline(FILE *out, const fp_run *run, const struct series *sr,
                     const fp_burnin_verdict *v, int nranks, int windows, bool always)
{
    if (windows <= 0)
        return;
    int step = (windows + TIMELINE_COLS - 1) / TIMELINE_COLS;
    bool any = always;
    for (int r = 0; r < nranks && !any; r++)
        any = isfinite(window_value(run, sr, &v[r].entity, 0));
    if (!any)
        return;
    fprintf(out, "\nburn-in %s per window%s)\n", sr->title, step > 1 ? ", every few windows" : "");
    fprintf(out, "%-6s %-16s", "rank", "device");
    for (int w = 0; w < windows; w += step)
        fprintf(out, " %7d", w);
    fputc('\n', out);
    for (int r = 0; r < nranks; r++) {
        char ent[2 * FP_NAME_MAX + 32];
        fprintf(out, "%-6d %-16s", v[r].rank, fp_entity_format(&v[r].entity, ent, sizeof ent));
        for (int w = 0; w < windows; w += step)
            fprintf(out, " %7.*f", sr->digits, window_value(run, sr, &v[r].entity, w));
        fputc('\n', out);
    }
}

void fp_report_burnin_console(FILE *out, const fp_run *run, const fp_burnin_verdict *v, int nranks,
                              bool interrupted, int windows, int planned)
{
    for (size_t i = 0; i < sizeof series / sizeof series[0]; i++)
        timeline(out, run, &series[i], v, nranks, windows, i == 0);
    int worst = FP_BURNIN_PASS, nfail = 0, nwarn = 0;
    fprintf(out, "\nburn-in verdicts (%d of %d windows%s)\n", windows, planned,
            interrupted ? ", interrupted" : "");
    for (int r = 0; r < nranks; r++) {
        char ent[2 * FP_NAME_MAX + 32];
        fp_entity_format(&v[r].entity, ent, sizeof ent);
        worst = v[r].outcome > worst ? v[r].outcome : worst;
        nfail += v[r].outcome == FP_BURNIN_FAIL;
        nwarn += v[r].outcome == FP_BURNIN_WARN;
        fprintf(out, "  rank %-4d %-16s %-4s", v[r].rank, ent, fp_burnin_outcome_name(v[r].outcome));
        if (v[r].sdc_suspect)
            fprintf(out, "  SDC SUSPECT (first bad window %d)", v[r].first_bad_interval);
        if (v[r].degrade.degraded)
            fprintf(out, "  DEGRADED (%.0f%% of early, against peers)", 100 * v[r].degrade.rel_ratio);
        if (v[r].reasons[0])
            fprintf(out, "\n             %s", v[r].reasons);
        if (v[r].telemetry_waived)
            fprintf(out, "\n             telemetry %s", v[r].telemetry);
        fputc('\n', out);
    }
    int slowed = 0;
    for (int r = 0; r < nranks; r++)
        slowed += v[r].degrade.slowed;
    if (slowed)
        fprintf(out, "note: %d rank%s slowed down over time together with their peers (shared "
                     "load or fleet-wide throttling; not blamed on a device)\n",
                slowed, slowed == 1 ? "" : "s");
    fprintf(out, "burn-in: %s (%d fail, %d warn, %d %s)%s\n", fp_burnin_outcome_name(worst), nfail,
            nwarn, nranks, fp_plural(nranks, "rank", "ranks"),
            interrupted ? ", interrupted by a signal" : "");
}

static json_t *reading_json(const fp_tel_reading *r)
{
    json_t *o = json_object();
    for (int f = 0; f < FP_TEL_COUNT; f++)
        if (r->have & 1u << f)
            json_object_set_new(o, fp_tel_metric(f)->name, json_real(r->v[f]));
    return o;
}

static json_t *num_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *verdict_json(const fp_burnin_verdict *v)
{
    char ent[2 * FP_NAME_MAX + 32], rs[160];
    json_t *o = json_object();
    json_object_set_new(o, "rank", json_integer(v->rank));
    json_object_set_new(o, "entity", json_string(fp_entity_format(&v->entity, ent, sizeof ent)));
    json_object_set_new(o, "node", json_string(v->entity.node));
    json_object_set_new(o, "verdict", json_string(fp_burnin_outcome_name(v->outcome)));
    json_object_set_new(o, "sdc_suspect", json_boolean(v->sdc_suspect));
    json_object_set_new(o, "first_bad_interval",
                        v->first_bad_interval >= 0 ? json_integer(v->first_bad_interval)
                                                   : json_null());
    json_object_set_new(o, "self_mismatch", json_integer(v->self_mismatch));
    json_object_set_new(o, "peer_mismatch", json_integer(v->peer_mismatch));
    json_object_set_new(o, "nonfinite", json_integer(v->nonfinite));
    json_object_set_new(o, "windows", json_integer(v->windows));
    json_t *d = json_object();
    json_object_set_new(d, "judged", json_boolean(v->degrade.state == 0));
    json_object_set_new(d, "degraded", json_boolean(v->degrade.degraded));
    json_object_set_new(d, "early_gflops", num_or_null(v->degrade.early));
    json_object_set_new(d, "late_gflops", num_or_null(v->degrade.late));
    json_object_set_new(d, "late_early_ratio", num_or_null(v->degrade.ratio));
    json_object_set_new(d, "relative_late_early", num_or_null(v->degrade.rel_ratio));
    json_object_set_new(d, "slowed_with_peers", json_boolean(v->degrade.slowed));
    json_object_set_new(o, "degradation", d);
    json_object_set_new(o, "memory_errors", json_integer(v->mem_errors));
    json_t *t = json_object();
    json_object_set_new(t, "state", json_string(v->telemetry_waived ? "waived" : "ok"));
    json_object_set_new(t, "source", json_string(v->telemetry));
    json_object_set_new(t, "start", reading_json(&v->tel_start));
    json_object_set_new(t, "end", reading_json(&v->tel_end));
    json_object_set_new(t, "clock_events",
                        json_string(fp_tel_reasons_text(v->clock_reasons_seen, rs, sizeof rs)));
    json_object_set_new(o, "telemetry", t);
    json_t *reasons = json_array();
    const char *p = v->reasons;
    while (*p) {
        const char *end = strstr(p, "; ");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        json_array_append_new(reasons, json_stringn(p, len));
        p += len + (end ? 2 : 0);
    }
    json_object_set_new(o, "reasons", reasons);
    return o;
}

fp_status fp_report_burnin_json(const fp_run *run, const fp_burnin_verdict *v, int nranks,
                                bool interrupted, int windows, int planned, const char *path)
{
    json_t *root = fp_json_run(run);
    json_t *b = json_object();
    int worst = FP_BURNIN_PASS;
    json_t *ranks = json_array(), *suspects = json_array(), *degraded = json_array();
    for (int r = 0; r < nranks; r++) {
        worst = v[r].outcome > worst ? v[r].outcome : worst;
        json_array_append_new(ranks, verdict_json(&v[r]));
        if (v[r].sdc_suspect)
            json_array_append_new(suspects, json_integer(v[r].rank));
        if (v[r].degrade.degraded)
            json_array_append_new(degraded, json_integer(v[r].rank));
    }
    json_object_set_new(b, "verdict", json_string(fp_burnin_outcome_name(worst)));
    json_object_set_new(b, "interrupted", json_boolean(interrupted));
    json_object_set_new(b, "windows", json_integer(windows));
    json_object_set_new(b, "windows_planned", json_integer(planned));
    json_object_set_new(b, "sdc_suspects", suspects);
    json_object_set_new(b, "degraded", degraded);
    json_object_set_new(b, "ranks", ranks);
    json_object_set_new(root, "burnin", b);
    return fp_json_write(root, path);
}

fp_status fp_report_burnin_junit(const fp_run *run, const fp_burnin_verdict *v, int nranks,
                                 const char *path)
{
    fp_status st = FP_OK;
    fp_junit_case *cases = calloc(nranks > 0 ? (size_t)nranks : 1, sizeof *cases);
    FP_CHECK_ALLOC(cases);
    for (int r = 0; r < nranks; r++) {
        fp_junit_case *c = &cases[r];
        char ent[2 * FP_NAME_MAX + 32];
        snprintf(c->classname, sizeof c->classname, "fleetprint.burnin");
        snprintf(c->name, sizeof c->name, "rank %d %s", v[r].rank,
                 fp_entity_format(&v[r].entity, ent, sizeof ent));
        c->failed = v[r].outcome == FP_BURNIN_FAIL;
        c->type = "burnin";
        if (c->failed)
            c->details = v[r].reasons;
        else if (v[r].outcome == FP_BURNIN_WARN)
            c->out = v[r].reasons;
    }
    st = fp_report_junit(path, "fleetprint burnin", run, cases, (size_t)nranks);
cleanup:
    free(cases);
    return st;
}
