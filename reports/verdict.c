/* Verdict outputs: the console summary, the evidence chain (--explain), JSON,
 * JUnit and the drain/exclude hostlist files. Reads the verdicts through
 * detect.h's accessors. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/detect.h"
#include "fleetprint/log.h"
#include "fleetprint/hostlist.h"
#include "fleetprint/report.h"
#include "fleetprint/outfile.h"
#include "json_stream.h"

/* ---- console ------------------------------------------------------------------------ */

/* "expected 14.8 ± 2.1 GB/s over 3 runs × 6 windows" (or "over 7 peers");
 * without a band or reference the parts are left out. */
static int expected_text(const fp_reason *r, char *buf, size_t len)
{
    int n = snprintf(buf, len, "expected %.4g", r->expected);
    if (isfinite(r->band) && r->band > 0)
        n += snprintf(buf + n, len - (size_t)n, " ± %.2g", r->band);
    n += snprintf(buf + n, len - (size_t)n, " %s", r->unit);
    if (r->ref_runs > 0)
        n += snprintf(buf + n, len - (size_t)n, " over %d run%s × %d window%s", r->ref_runs,
                      r->ref_runs == 1 ? "" : "s", r->ref_windows, r->ref_windows == 1 ? "" : "s");
    else if (r->evidence == FP_EV_PEERS && r->ref_windows > 0)
        n += snprintf(buf + n, len - (size_t)n, " over %d peers", r->ref_windows);
    return n;
}

static void print_reason(FILE *out, const fp_reason *r)
{
    if (r->evidence == FP_EV_CONFIG) { /* "config driver_version = 550.54 (fleet: ...)" */
        fprintf(out, "    %-5s config %s = %s\n", fp_verdict_name(r->verdict), r->key, r->note);
        return;
    }
    if (r->evidence == FP_EV_HISTORY) { /* "repeat offender: failed or warned in ..." */
        fprintf(out, "    %-5s %-7s %s\n", fp_verdict_name(r->verdict), "history", r->note);
        return;
    }
    fprintf(out, "    %-5s %-7s %s", fp_verdict_name(r->verdict), fp_evidence_name(r->evidence),
            r->key[0] ? r->key : "-");
    if (r->evidence == FP_EV_MISSING) {
        fprintf(out, ": missing");
    } else if (r->evidence == FP_EV_LATE) { /* the note says it all: a share, not a measurement */
        fprintf(out, ": %s (rule %s)%s\n", r->note, r->rule, r->retest ? " [re-test]" : "");
        return;
    } else if (r->evidence == FP_EV_VALUE) {
        fprintf(out, " = %g %s (limit %g, rule %s)", r->value, r->unit, r->expected, r->rule);
    } else if (!isnan(r->value)) {
        char exp_[160];
        expected_text(r, exp_, sizeof exp_);
        fprintf(out, " = %.4g %s, %s", r->value, r->unit, exp_);
        if (strcmp(r->rule, "straggler") == 0)
            fprintf(out, ", %.3g %s worse", r->deviation, r->unit);
        else
            fprintf(out, ", %.1f%% worse", 100 * r->deviation);
        char z[32] = ""; /* no z where the evidence has none */
        if (isfinite(r->z))
            snprintf(z, sizeof z, "z %.1f, ", r->z);
        fprintf(out, " (%s%d/%d windows, rule %s)", z, r->windows_bad, r->windows, r->rule);
    }
    if (r->note[0])
        fprintf(out, " -- %s", r->note);
    if (r->retest)
        fputs(" [re-test]", out);
    fputc('\n', out);
}

/* The run's blind spots, FP_BLIND_SHOWN at most: "blind <key>: 28 link peers
 * spread 1.43x; only a value below 0.35x their median fails (rule link: 0.50x)". */
#define FP_BLIND_SHOWN 5
static void print_blind(FILE *out, const fp_verdicts *v)
{
    size_t n = fp_verdicts_blind_count(v);
    for (size_t i = 0; i < n && i < FP_BLIND_SHOWN; i++) {
        const fp_blind_spot *b = fp_verdicts_blind(v, i);
        fprintf(out,
                "blind %s: %d %s peers spread %.2fx; only a value %s %.2fx their median fails "
                "(rule %s: %.2fx)\n",
                b->key, b->peers, fp_entity_kind_name(b->kind), b->spread,
                b->limit < 1 ? "below" : "above", b->limit, b->rule, b->rule_limit);
    }
    if (n > FP_BLIND_SHOWN)
        fprintf(out, "blind ... and %zu more metrics whose peers spread too widely (--json lists them)\n",
                n - FP_BLIND_SHOWN);
}

/* "history: 1 repeat offender (3 of its last 5 judged runs failed or warned):
 * node:n5", when the run was judged with history. */
static void print_offenders(FILE *out, const fp_verdicts *v)
{
    int k, n;
    size_t runs, count = fp_verdicts_offender_count(v);
    if (!fp_verdicts_history(v, &k, &n, &runs))
        return;
    fprintf(out, "history: %zu repeat %s (failed or warned in %d of their last %d judged runs; "
                 "%zu judged %s read)",
            count, fp_plural((long long)count, "offender", "offenders"), k, n, runs,
            fp_plural((long long)runs, "run", "runs"));
    for (size_t i = 0; i < count; i++) {
        char ent[2 * FP_NAME_MAX + 32];
        const fp_offender *o = fp_verdicts_offender(v, i);
        fp_entity_format(fp_verdicts_get(v, o->entity)->entity, ent, sizeof ent);
        fprintf(out, "%s%s (%d of %d)", i ? ", " : ": ", ent, o->bad, o->judged);
    }
    fputc('\n', out);
}

/* ---- the confirm pass ------------------------------------------------------------------ */

#define FP_CONFIRM_SHOWN 10
/* "confirm: <what>: a, b, c +N more (<tail>)" for the items of one outcome. */
static void print_confirm_items(FILE *out, const fp_confirm_info *c, fp_confirm_outcome o,
                                const char *what, const char *tail)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nitems; i++) {
        if (c->items[i].outcome != o)
            continue;
        char ent[2 * FP_NAME_MAX + 32];
        if (n < FP_CONFIRM_SHOWN)
            fprintf(out, "%s%s%s", n ? ", " : "confirm: ", n ? "" : what,
                    fp_entity_format(&c->items[i].entity, ent, sizeof ent));
        n++;
    }
    if (n > FP_CONFIRM_SHOWN)
        fprintf(out, " +%zu more", n - FP_CONFIRM_SHOWN);
    if (n)
        fprintf(out, " (%s)\n", tail);
}

/* The confirm pass behind v, when there is one: what ran, what it cost, and
 * what reproduced (docs/confirm.md). */
static void print_confirm(FILE *out, const fp_verdicts *v)
{
    const fp_confirm_info *c = fp_verdicts_confirm_info(v);
    if (!c)
        return;
    if (!c->ran) {
        fprintf(out, "confirm: no re-test: %s\n", c->note[0] ? c->note : "none ran");
    } else {
        /* the tests' settings, then the link sweep's, each where it ran */
        fprintf(out, "confirm: re-test of %s", c->tests);
        const char *sep = " (";
        if (c->iters > 0) {
            fprintf(out, "%s%d iteration%s, %d warm-up%s", sep, c->iters,
                    c->iters == 1 ? "" : "s", c->warmup, c->warmup == 1 ? "" : "s");
            sep = "; ";
        }
        if (c->link_passes > 0) {
            fprintf(out, "%slinks: %d node pair%s, %d pass%s of %d iterations", sep, c->npairs,
                    c->npairs == 1 ? "" : "s", c->link_passes, c->link_passes == 1 ? "" : "es",
                    c->link_iters);
            sep = "; ";
        }
        fprintf(out, "%s in %.2f s", strcmp(sep, "; ") == 0 ? ")" : "", c->seconds);
        if (c->first_seconds > 0)
            fprintf(out, ", %.0f%% of the first pass's %.2f s", 100 * c->seconds / c->first_seconds,
                    c->first_seconds);
        if (c->budget_seconds > 0)
            fprintf(out, " (budget %.2f s)", c->budget_seconds);
        fprintf(out, "%s%s\n", c->note[0] ? "; " : "", c->note);
    }
    print_confirm_items(out, c, FP_CONFIRM_REPRODUCED, "reproduced on re-test: ", "they fail");
    bool certain = false;
    for (size_t i = 0; i < c->nitems; i++)
        certain |= c->items[i].outcome == FP_CONFIRM_NOT_REPRODUCED && c->items[i].certain;
    print_confirm_items(out, c, FP_CONFIRM_NOT_REPRODUCED, "did not reproduce on re-test: ",
                        certain ? "they warn, but a wrong result fails regardless" : "they warn");
    print_confirm_items(out, c, FP_CONFIRM_FOUND, "found on re-test: ",
                        "an end of a failing link, slow with nodes that passed too: it fails");
    print_confirm_items(out, c, FP_CONFIRM_NOT_RETESTED, "not re-tested: ", "their fail stands");
}

void fp_verdicts_print(FILE *out, const fp_verdicts *v, const fp_run *run)
{
    size_t counts[4] = {0}, ecounts[4] = {0};
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        if (i < fp_verdicts_node_count(v))
            counts[ev->verdict]++;
        else
            ecounts[ev->verdict]++;
        if (ev->verdict == FP_PASS || (ev->verdict == FP_UNKNOWN && ev->nreasons == 0))
            continue;
        char ent[2 * FP_NAME_MAX + 32];
        fp_entity_format(ev->entity, ent, sizeof ent);
        fprintf(out, "%-4s %s\n", ev->verdict == FP_FAIL ? "FAIL" : ev->verdict == FP_WARN ? "warn" : "?",
                ent);
        for (size_t k = 0; k < ev->nreasons; k++)
            print_reason(out, fp_verdicts_reason(v, ev->first_reason + k));
    }
    print_blind(out, v);
    const fp_breaker *b = fp_verdicts_breaker(v);
    if (b->tripped) {
        char line[256];
        fprintf(out, "BREAKER %s\n", fp_breaker_text(b, line, sizeof line));
    }
    print_offenders(out, v);
    print_confirm(out, v);
    fprintf(out,
            "detect %s: %s -- nodes: %zu pass, %zu warn, %zu fail, %zu unknown; other entities: "
            "%zu pass, %zu warn, %zu fail, %zu unknown\n",
            run->id, fp_verdict_name(fp_verdicts_overall(v)), counts[FP_PASS], counts[FP_WARN], counts[FP_FAIL],
            counts[FP_UNKNOWN], ecounts[FP_PASS], ecounts[FP_WARN], ecounts[FP_FAIL],
            ecounts[FP_UNKNOWN]);
}

fp_status fp_verdicts_explain(FILE *out, const fp_verdicts *v, const char *entity)
{
    size_t shown = 0;
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        char name[2 * FP_NAME_MAX + 32];
        if (!fp_entity_in(ev->entity, entity))
            continue;
        fp_entity_format(ev->entity, name, sizeof name);
        fprintf(out, "%s %s: %s\n", shown ? "  part" : "explain", name,
                fp_verdict_name(ev->verdict));
        for (size_t k = 0; k < ev->nreasons; k++)
            print_reason(out, fp_verdicts_reason(v, ev->first_reason + k));
        if (ev->nreasons == 0)
            fprintf(out, "    (no evidence recorded)\n");
        shown++;
    }
    if (!shown) {
        fp_error("--explain %s: the run has no such entity (node:N, gpu:N/D, link:A~B, rank:R@N)",
                 entity);
        return FP_EINPUT;
    }
    return FP_OK;
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void reason_json(fp_json_stream *w, const fp_reason *r)
{
    fp_json_stream_open(w, NULL, '{');
    fp_json_stream_str(w, "verdict", fp_verdict_name(r->verdict));
    fp_json_stream_str(w, "evidence", fp_evidence_name(r->evidence));
    fp_json_stream_str(w, "metric", r->key);
    fp_json_stream_str(w, "unit", r->unit);
    fp_json_stream_str(w, "rule", r->rule);
    fp_json_stream_real(w, "value", r->value);
    fp_json_stream_real(w, "expected", r->expected);
    fp_json_stream_real(w, "band", r->band > 0 ? r->band : NAN);
    fp_json_stream_int(w, "ref_runs", r->ref_runs);
    fp_json_stream_int(w, "ref_windows", r->ref_windows);
    fp_json_stream_real(w, "deviation", r->deviation);
    fp_json_stream_real(w, "z", r->z);
    fp_json_stream_int(w, "windows_bad", r->windows_bad);
    fp_json_stream_int(w, "windows", r->windows);
    if (r->note[0])
        fp_json_stream_str(w, "note", r->note);
    if (r->retest)
        fp_json_stream_bool(w, "retest", true);
    fp_json_stream_close(w, '}');
}

/* {"ran", "note", "run", "tests", settings, "seconds", "first_pass_seconds",
 * "budget_seconds", "share", "retested", "reproduced", "not_reproduced",
 * "not_retested", "found"}: the confirm pass (docs/confirm.md). */
static void confirm_json(fp_json_stream *w, const fp_confirm_info *c)
{
    fp_json_stream_open(w, "confirm", '{');
    fp_json_stream_bool(w, "ran", c->ran);
    if (c->note[0])
        fp_json_stream_str(w, "note", c->note);
    if (c->run_id[0])
        fp_json_stream_str(w, "run", c->run_id);
    fp_json_stream_open(w, "tests", '[');
    for (const char *p = c->tests; *p;) {
        size_t m = strcspn(p, ",");
        fp_json_stream_strn(w, NULL, p, m);
        p += m + (p[m] == ',');
    }
    fp_json_stream_close(w, ']');
    if (c->iters > 0 || c->link_passes > 0) { /* 0: that part was not re-tested */
        fp_json_stream_int(w, "iters", c->iters);
        fp_json_stream_int(w, "warmup", c->warmup);
        fp_json_stream_int(w, "link_passes", c->link_passes);
        fp_json_stream_int(w, "link_iters", c->link_iters);
        fp_json_stream_int(w, "pairs", c->npairs);
    }
    fp_json_stream_real(w, "seconds", c->ran ? c->seconds : 0);
    fp_json_stream_real(w, "first_pass_seconds", c->first_seconds);
    fp_json_stream_real(w, "budget_seconds", c->budget_seconds);
    fp_json_stream_real(w, "share",
                        c->ran && c->first_seconds > 0 ? c->seconds / c->first_seconds : NAN);
    static const struct {
        const char *name;
        int outcome; /* -1: reproduced or not */
    } lists[] = {{"retested", -1},
                 {"reproduced", FP_CONFIRM_REPRODUCED},
                 {"not_reproduced", FP_CONFIRM_NOT_REPRODUCED},
                 {"not_retested", FP_CONFIRM_NOT_RETESTED},
                 {"found", FP_CONFIRM_FOUND}};
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        fp_json_stream_open(w, lists[l].name, '[');
        for (size_t i = 0; i < c->nitems; i++) {
            fp_confirm_outcome o = c->items[i].outcome;
            bool in = lists[l].outcome >= 0 ? (int)o == lists[l].outcome
                                            : o == FP_CONFIRM_REPRODUCED ||
                                                  o == FP_CONFIRM_NOT_REPRODUCED;
            char ent[2 * FP_NAME_MAX + 32];
            if (in)
                fp_json_stream_str(w, NULL,
                                   fp_entity_format(&c->items[i].entity, ent, sizeof ent));
        }
        fp_json_stream_close(w, ']');
    }
    fp_json_stream_close(w, '}');
}

/* "history": {"k", "n", "runs"} when the run was judged with history, and
 * "repeat_offenders": [{"entity", "verdict", "own_verdict", "bad", "judged",
 * "first", "last"}] (empty without history). */
static void offenders_json(fp_json_stream *w, const fp_verdicts *v)
{
    int k, n;
    size_t runs;
    if (fp_verdicts_history(v, &k, &n, &runs)) {
        fp_json_stream_open(w, "history", '{');
        fp_json_stream_int(w, "k", k);
        fp_json_stream_int(w, "n", n);
        fp_json_stream_int(w, "runs", (long long)runs);
        fp_json_stream_close(w, '}');
    }
    fp_json_stream_open(w, "repeat_offenders", '[');
    for (size_t i = 0; i < fp_verdicts_offender_count(v); i++) {
        const fp_offender *o = fp_verdicts_offender(v, i);
        const fp_entity_verdict *ev = fp_verdicts_get(v, o->entity);
        char ent[2 * FP_NAME_MAX + 32];
        fp_json_stream_open(w, NULL, '{');
        fp_json_stream_str(w, "entity", fp_entity_format(ev->entity, ent, sizeof ent));
        fp_json_stream_str(w, "verdict", fp_verdict_name(ev->verdict));
        fp_json_stream_str(w, "own_verdict", fp_verdict_name(o->own));
        fp_json_stream_int(w, "bad", o->bad);
        fp_json_stream_int(w, "judged", o->judged);
        fp_json_stream_real(w, "first", o->first);
        fp_json_stream_real(w, "last", o->last);
        fp_json_stream_close(w, '}');
    }
    fp_json_stream_close(w, ']');
}

/* The document, written as it is made: at 100,000 nodes a jansson tree of it
 * took 0.7 s and some 100 MB (json_stream.h gives the same bytes). */
static void verdicts_json(FILE *f, const fp_verdicts *v, const fp_run *run)
{
    fp_json_stream w;
    fp_json_stream_init(&w, f);
    fp_json_stream_open(&w, NULL, '{');
    fp_json_stream_str(&w, "run", run->id);
    fp_json_stream_str(&w, "verdict", fp_verdict_name(fp_verdicts_overall(v)));
    size_t counts[4] = {0};
    for (size_t i = 0; i < fp_verdicts_node_count(v); i++)
        counts[fp_verdicts_get(v, i)->verdict]++;
    fp_json_stream_open(&w, "nodes", '{');
    for (int k = 0; k < 4; k++)
        fp_json_stream_int(&w, fp_verdict_name((fp_verdict)k), (long long)counts[k]);
    fp_json_stream_close(&w, '}');
    fp_json_stream_open(&w, "failing_nodes", '[');
    const char *const *fail_nodes;
    size_t nfail = fp_verdicts_nodes_at(v, FP_FAIL, &fail_nodes);
    for (size_t i = 0; i < nfail; i++)
        fp_json_stream_str(&w, NULL, fail_nodes[i]);
    fp_json_stream_close(&w, ']');
    fp_json_stream_open(&w, "entities", '[');
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        if (i % 32768 == 32767) /* 1 MB at 100,000 nodes x 8 */
            fp_outfile_writeback(f);
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        if (i >= fp_verdicts_node_count(v) && ev->verdict == FP_PASS)
            continue;
        char ent[2 * FP_NAME_MAX + 32];
        fp_json_stream_open(&w, NULL, '{');
        fp_json_stream_str(&w, "entity", fp_entity_format(ev->entity, ent, sizeof ent));
        fp_json_stream_str(&w, "verdict", fp_verdict_name(ev->verdict));
        fp_json_stream_open(&w, "reasons", '[');
        for (size_t k = 0; k < ev->nreasons; k++)
            reason_json(&w, fp_verdicts_reason(v, ev->first_reason + k));
        fp_json_stream_close(&w, ']');
        fp_json_stream_close(&w, '}');
    }
    fp_json_stream_close(&w, ']');
    fp_json_stream_open(&w, "blind_spots", '[');
    for (size_t i = 0; i < fp_verdicts_blind_count(v); i++) {
        const fp_blind_spot *b = fp_verdicts_blind(v, i);
        fp_json_stream_open(&w, NULL, '{');
        fp_json_stream_str(&w, "metric", b->key);
        fp_json_stream_str(&w, "rule", b->rule);
        fp_json_stream_str(&w, "peers_kind", fp_entity_kind_name(b->kind));
        fp_json_stream_int(&w, "peers", b->peers);
        fp_json_stream_real(&w, "spread", b->spread);
        fp_json_stream_real(&w, "limit", b->limit);
        fp_json_stream_real(&w, "rule_limit", b->rule_limit);
        fp_json_stream_close(&w, '}');
    }
    fp_json_stream_close(&w, ']');
    const fp_breaker *b = fp_verdicts_breaker(v);
    fp_json_stream_open(&w, "breaker", '{');
    fp_json_stream_bool(&w, "tripped", b->tripped);
    fp_json_stream_int(&w, "failing", (long long)b->failing);
    fp_json_stream_int(&w, "nodes", (long long)b->nodes);
    fp_json_stream_real(&w, "max_drain", b->max_drain);
    fp_json_stream_int(&w, "max_nodes", b->max_nodes);
    fp_json_stream_close(&w, '}');
    offenders_json(&w, v);
    if (fp_verdicts_confirm_info(v))
        confirm_json(&w, fp_verdicts_confirm_info(v));
    fp_json_stream_close(&w, '}');
    putc('\n', f);
}

fp_status fp_verdicts_write_json(const fp_verdicts *v, const fp_run *run, const char *path)
{
    fp_status st;
    FILE *f = fp_outfile_open(path, &st);
    if (f) {
        verdicts_json(f, v, run);
        st = fp_outfile_close(f, path, true); /* a failed write: one line, FP_EIO */
    }
    return st;
}

/* ---- JUnit ---------------------------------------------------------------------------------- */

/* The reasons of ev at verdict want (FP_UNKNOWN: all of them), one a line as
 * the console prints them, in a new string (NULL when out of memory). */
static char *reason_lines(const fp_verdicts *v, const fp_entity_verdict *ev, fp_verdict want)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return NULL;
    for (size_t k = 0; k < ev->nreasons; k++) {
        const fp_reason *r = fp_verdicts_reason(v, ev->first_reason + k);
        if (want == FP_UNKNOWN || r->verdict == want)
            print_reason(mem, r);
    }
    if (fclose(mem) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

fp_status fp_verdicts_write_junit(const fp_verdicts *v, const fp_run *run, const char *path)
{
    fp_status st = FP_OK;
    fp_junit_case *cases = calloc(fp_verdicts_count(v) ? fp_verdicts_count(v) : 1, sizeof *cases);
    char **texts = calloc(fp_verdicts_count(v) ? fp_verdicts_count(v) : 1, sizeof *texts);
    FP_CHECK_ALLOC(cases);
    FP_CHECK_ALLOC(texts);
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        fp_junit_case *c = &cases[i];
        snprintf(c->classname, sizeof c->classname, "fleetprint.detect.%s",
                 fp_entity_kind_name(ev->entity->kind));
        fp_entity_format(ev->entity, c->name, sizeof c->name);
        c->failed = ev->verdict == FP_FAIL;
        c->skipped = ev->verdict == FP_UNKNOWN;
        if (ev->verdict == FP_PASS)
            continue;
        texts[i] = reason_lines(v, ev, ev->verdict);
        FP_CHECK_ALLOC(texts[i]);
        for (size_t k = 0; c->failed && k < ev->nreasons && !c->type; k++)
            if (fp_verdicts_reason(v, ev->first_reason + k)->verdict == FP_FAIL)
                c->type = fp_verdicts_reason(v, ev->first_reason + k)->rule;
        if (ev->verdict == FP_WARN)
            c->out = texts[i]; /* a warn passes, with its reasons as a note */
        else if (texts[i][0])
            c->details = texts[i];
        else
            snprintf(c->message, sizeof c->message, "%s",
                     c->skipped ? "no evidence to judge it" : "fails with its parts");
    }
    st = fp_report_junit(path, "fleetprint detect", run, cases, fp_verdicts_count(v));
cleanup:
    for (size_t i = 0; texts && i < fp_verdicts_count(v); i++)
        free(texts[i]);
    free(texts);
    free(cases);
    return st;
}

/* ---- hostlists ---------------------------------------------------------------------------- */

fp_status fp_verdicts_write_hostlist(const fp_verdicts *v, const char *path)
{
    fp_status st = FP_OK;
    const char *const *fail_nodes;
    size_t nfail = fp_verdicts_nodes_at(v, FP_FAIL, &fail_nodes);
    if (fp_verdicts_breaker(v)->tripped)
        nfail = 0; /* the breaker: nothing is drained (the file is still written) */
    for (size_t i = 0; i < nfail; i++) /* a run read from a file names its own nodes */
        if (!fp_node_name_ok(fail_nodes[i])) {
            fp_error("%s: not written: node name '%s' is not a host name (letters, digits, '-', "
                     "'_', '.')", path, fail_nodes[i]);
            return FP_EINPUT;
        }
    char *expr = fp_hostlist_compress(fail_nodes, nfail);
    FP_CHECK_ALLOC(expr);
    FILE *f = fp_outfile_open(path, &st);
    if (f) {
        if (nfail)
            fprintf(f, "%s\n", expr);
        st = fp_outfile_close(f, path, true);
    }
cleanup:
    free(expr);
    return st;
}
