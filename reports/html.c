/* A run as one self-contained HTML page: context, verdicts, the link matrix
 * and the burn-in timeline as inline SVG pictures, and the metric summary. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleetprint/detect.h"
#include "fleetprint/hostlist.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/outfile.h"
#include "fleetprint/stats.h"

enum { MATRIX_MAX = 64, TIMELINE_MAX = 64 };

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
    }
}

/* White at ratio >= 1 to deep red at ratio <= 0.4 of the median. */
static void ratio_colour(double ratio, char *buf, size_t len)
{
    double t = isfinite(ratio) ? (1.0 - ratio) / 0.6 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    snprintf(buf, len, "rgb(%d,%d,%d)", 255 - (int)(80 * t), (int)(255 * (1 - t)),
             (int)(255 * (1 - t)));
}

/* ---- link matrix ------------------------------------------------------------------------- */

static bool is_link_bw(const fp_sample_ref *s)
{
    return s->entity->kind == FP_ENT_LINK && strcmp(s->key->suite, "collectives") == 0 &&
           strcmp(s->key->metric, "bw_inter") == 0;
}

/* Per node pair (a < b, both among the first n nodes): the sweep's summary
 * value, or the median over its passes when it has no summary. NAN: not
 * measured. */
static void link_values(const fp_run *run, int n, double *bw)
{
    size_t cells = (size_t)n * (size_t)n, *count = calloc(cells + 1, sizeof *count);
    double *vals = malloc((run->nsamples + 1) * sizeof *vals);
    bool *summary = calloc(cells + 1, sizeof *summary);
    for (size_t c = 0; c < cells; c++)
        bw[c] = NAN;
    if (!count || !vals || !summary)
        goto done;
    /* two passes: count each cell's windows, then place them contiguously */
    for (int pass = 0; pass < 2; pass++) {
        size_t *fill = pass ? calloc(cells + 1, sizeof *fill) : NULL;
        if (pass && !fill)
            goto done;
        for (size_t i = 0; i < run->nsamples; i++) {
            fp_sample_ref s = fp_run_ref(run, i);
            if (!is_link_bw(&s))
                continue;
            int x = fp_run_node_index(run, s.entity->node), y = fp_run_node_index(run, s.entity->peer);
            if (x < 0 || y < 0 || x >= n || y >= n)
                continue;
            size_t c = (size_t)(x < y ? x * n + y : y * n + x);
            if (s.iter < 0) {
                bw[c] = s.value;
                summary[c] = true;
            } else if (!pass) {
                count[c + 1]++;
            } else {
                vals[count[c] + fill[c]++] = s.value;
            }
        }
        if (!pass)
            for (size_t c = 0; c < cells; c++)
                count[c + 1] += count[c];
        free(fill);
    }
    for (size_t c = 0; c < cells; c++)
        if (!summary[c] && count[c + 1] > count[c])
            bw[c] = fp_median(vals + count[c], count[c + 1] - count[c]);
    for (int x = 0; x < n; x++)
        for (int y = 0; y < x; y++)
            bw[x * n + y] = bw[y * n + x];
done:
    free(count);
    free(vals);
    free(summary);
}

static void link_matrix(FILE *f, const fp_run *run, const fp_verdicts *v)
{
    int n = run->nnodes < MATRIX_MAX ? run->nnodes : MATRIX_MAX;
    double *bw = malloc((size_t)(n > 0 ? n * n : 1) * sizeof *bw);
    double *vals = malloc((size_t)(n > 0 ? n * n : 1) * sizeof *vals);
    if (!bw || !vals)
        goto done;
    link_values(run, n, bw);
    size_t m = 0;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (isfinite(bw[a * n + b]))
                vals[m++] = bw[a * n + b];
    if (m == 0) {
        fprintf(f, "<p>No link sweep in this run (<code>--test links</code>).</p>\n");
        goto done;
    }
    double med = fp_median(vals, m);
    if (run->nnodes > n)
        fprintf(f, "<p>%d nodes: the matrix shows the first %d.</p>\n", run->nnodes, n);
    /* about 600..900 px whatever the node count; values in cells of 40 px or more */
    const int cell = n <= 8 ? 72 : n <= 16 ? 48 : n <= 32 ? 26 : 13, left = 70, top = 70;
    int w = left + n * cell + 20 > 620 ? left + n * cell + 20 : 620, h = top + n * cell + 40;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n", w, h);
    for (int i = 0; i < n; i++) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 4,
                top + i * cell + cell / 2 + 4);
        esc(f, run->nodes[i]);
        fprintf(f, "</text><text transform=\"translate(%d,%d) rotate(-60)\">", left + i * cell +
                cell / 2, top - 4);
        esc(f, run->nodes[i]);
        fputs("</text>\n", f);
    }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            double x = bw[a * n + b];
            char fill[32] = "#eee";
            if (isfinite(x))
                ratio_colour(x / med, fill, sizeof fill);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                       "stroke=\"white\"><title>", left + b * cell, top + a * cell, cell, cell, fill);
            esc(f, run->nodes[a]);
            fputs(" ~ ", f);
            esc(f, run->nodes[b]);
            if (isfinite(x))
                fprintf(f, ": %.3g GB/s (%.2f x median)", x, x / med);
            fputs("</title></rect>\n", f);
            if (isfinite(x) && cell >= 40)
                fprintf(f,
                        "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\">%.3g</text>\n",
                        left + b * cell + cell / 2, top + a * cell + cell / 2 + 4,
                        x / med < 0.7 ? "white" : "black", x);
        }
    fprintf(
        f,
        "<text x=\"%d\" y=\"%d\">cells: bandwidth in GB/s; colour: bandwidth / median %.3g GB/s "
        "(white 1.0, red 0.4 or less; grey: not measured)</text>\n</svg>\n",
        left, h - 12, med);
    /* the failing links, by name */
    for (size_t i = 0; v && i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        if (ev->entity->kind != FP_ENT_LINK || ev->verdict != FP_FAIL)
            continue;
        char ent[2 * FP_NAME_MAX + 32];
        fputs("<p class=\"fail\">failing link: ", f);
        esc(f, fp_entity_format(ev->entity, ent, sizeof ent));
        fputs("</p>\n", f);
    }
done:
    free(bw);
    free(vals);
}

/* ---- burn-in timeline -------------------------------------------------------------------- */

static bool is_burn(const fp_sample_ref *s)
{
    return s->iter >= 0 && strcmp(s->key->suite, "burnin") == 0 &&
           strcmp(s->key->metric, "gflops") == 0;
}

static void timeline(FILE *f, const fp_run *run)
{
    int wmax = 0, ents = 0;
    double ymax = 0;
    fp_entity seen[TIMELINE_MAX];
    for (size_t i = 0; i < run->nsamples; i++) {
        fp_sample_ref s = fp_run_ref(run, i);
        if (!is_burn(&s))
            continue;
        wmax = s.iter > wmax ? s.iter : wmax;
        ymax = s.value > ymax ? s.value : ymax;
        bool known = false;
        for (int k = 0; k < ents && !known; k++)
            known = memcmp(&seen[k], s.entity, sizeof *s.entity) == 0;
        if (!known && ents < TIMELINE_MAX)
            seen[ents++] = *s.entity;
    }
    if (ents == 0) {
        fprintf(f, "<p>No burn-in windows in this run (<code>fleetprint burnin</code>).</p>\n");
        return;
    }
    const int W = 640, H = 260, left = 60, top = 20;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n", W + left + 150, H + top + 40);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
            left, top, W, H);
    fprintf(f, "<text x=\"4\" y=\"%d\">%.3g</text><text x=\"4\" y=\"%d\">0</text>\n", top + 10, ymax,
            top + H);
    fprintf(f, "<text x=\"4\" y=\"%d\">GFLOP/s</text>\n", top + 24);
    fprintf(f, "<text x=\"%d\" y=\"%d\">window (0..%d)</text>\n", left + W / 2 - 30, top + H + 18,
            wmax);
    for (int k = 0; k < ents; k++) {
        char ent[2 * FP_NAME_MAX + 32];
        fp_entity_format(&seen[k], ent, sizeof ent);
        fprintf(f, "<polyline fill=\"none\" stroke=\"hsl(%d,70%%,45%%)\" stroke-width=\"1.5\" "
                   "points=\"", (k * 137) % 360);
        for (size_t i = 0; i < run->nsamples; i++) {
            fp_sample_ref s = fp_run_ref(run, i);
            if (!is_burn(&s) || memcmp(s.entity, &seen[k], sizeof *s.entity) != 0)
                continue;
            double x = left + (wmax ? (double)s.iter / wmax : 0.5) * W;
            double y = top + H - (ymax > 0 ? s.value / ymax : 0) * H;
            fprintf(f, "%.1f,%.1f ", x, y);
        }
        fputs("\"><title>", f);
        esc(f, ent);
        fputs("</title></polyline>\n", f);
        fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"hsl(%d,70%%,45%%)\">", left + W + 8,
                top + 12 + 12 * k, (k * 137) % 360);
        esc(f, ent);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
}

/* ---- the page ------------------------------------------------------------------------------ */

enum { REASONS_SHOWN = 10, SUMMARY_NAMES = 8 };

/* Reasons of one entity about the same metric, whatever their evidence: one
 * line on the page. */
typedef struct reason_group {
    const fp_reason *worst; /* the most severe, then the largest deviation */
    unsigned evidence;      /* bit per fp_evidence */
} reason_group;

static bool worse_reason(const fp_reason *a, const fp_reason *b)
{
    int sa = a->verdict == FP_FAIL ? 2 : a->verdict == FP_WARN,
        sb = b->verdict == FP_FAIL ? 2 : b->verdict == FP_WARN;
    if (sa != sb)
        return sa > sb;
    double da = isfinite(a->deviation) ? a->deviation : 0,
           db = isfinite(b->deviation) ? b->deviation : 0;
    return da > db;
}

static int cmp_group(const void *a, const void *b)
{
    const reason_group *x = a, *y = b;
    return worse_reason(x->worst, y->worst) ? -1 : worse_reason(y->worst, x->worst) ? 1 : 0;
}

/* The reasons of ev grouped by metric key, most severe first, into groups
 * (room for ev->nreasons). Returns the number of groups. */
static size_t group_reasons(const fp_verdicts *v, const fp_entity_verdict *ev, reason_group *groups)
{
    size_t n = 0;
    for (size_t k = 0; k < ev->nreasons; k++) {
        const fp_reason *r = fp_verdicts_reason(v, ev->first_reason + k);
        size_t g = 0;
        while (g < n && strcmp(groups[g].worst->key, r->key) != 0)
            g++;
        if (g == n)
            groups[n++] = (reason_group){r, 0};
        else if (worse_reason(r, groups[g].worst))
            groups[g].worst = r;
        groups[g].evidence |= 1u << r->evidence;
    }
    qsort(groups, n, sizeof *groups, cmp_group);
    return n;
}

static void reason_line(FILE *f, const reason_group *g)
{
    const fp_reason *r = g->worst;
    char line[512], val[48], exp[48], diff[48], kinds[96] = "";
    size_t m = 0;
    for (int e = 0; e < FP_EV_COUNT; e++)
        if (g->evidence & (1u << e))
            m += (size_t)snprintf(kinds + m, sizeof kinds - (m < sizeof kinds ? m : sizeof kinds),
                                  "%s%s", m ? ", " : "", fp_evidence_name((fp_evidence)e));
    bool note_only = isnan(r->value) || r->evidence == FP_EV_MISSING || r->evidence == FP_EV_LATE;
    if (note_only)
        snprintf(line, sizeof line, "%s: %s", r->key[0] ? r->key : "-",
                 r->note[0]                     ? r->note
                 : r->evidence == FP_EV_MISSING ? "missing"
                                                : "");
    else if (r->evidence == FP_EV_VALUE)
        snprintf(line, sizeof line, "%s = %s (limit %s)", r->key,
                 fp_format_value(r->value, r->unit, val, sizeof val),
                 fp_format_value(r->expected, r->unit, exp, sizeof exp));
    else if (r->expected != 0 && strcmp(r->rule, "straggler") != 0)
        snprintf(line, sizeof line, "%s = %s, expected %s (%.0f%% worse)", r->key,
                 fp_format_value(r->value, r->unit, val, sizeof val),
                 fp_format_value(r->expected, r->unit, exp, sizeof exp), 100 * r->deviation);
    else /* no percentage of an expected 0; lateness deviations are in the unit */
        snprintf(line, sizeof line, "%s = %s, expected %s (%s worse)", r->key,
                 fp_format_value(r->value, r->unit, val, sizeof val),
                 fp_format_value(r->expected, r->unit, exp, sizeof exp),
                 fp_format_value(strcmp(r->rule, "straggler") == 0 ? r->deviation
                                                                   : fabs(r->value - r->expected),
                                 r->unit, diff, sizeof diff));
    fprintf(f, "<li class=\"%s\"><b>%s</b> ", fp_verdict_name(r->verdict),
            r->verdict == FP_FAIL   ? "\u2716 FAIL"
            : r->verdict == FP_WARN ? "\u26a0 warn"
                                    : "? unknown");
    esc(f, line);
    fputs(" <small>[", f);
    esc(f, kinds);
    fputs("; ", f);
    esc(f, r->rule);
    if (r->note[0] && !note_only) {
        fputs("; ", f);
        esc(f, r->note);
    }
    fputs("]</small></li>\n", f);
}

/* The metrics the run could not judge at the rules' thresholds (detect.h). */
static void blind_spots(FILE *f, const fp_verdicts *v)
{
    size_t n = fp_verdicts_blind_count(v);
    if (!n)
        return;
    fprintf(f, "<p class=\"blind\">Blind spots: %zu %s whose peers spread too widely for a "
               "fault at the rule's threshold to fail: ",
            n, fp_plural((long long)n, "metric", "metrics"));
    for (size_t i = 0; i < n && i < SUMMARY_NAMES; i++) {
        const fp_blind_spot *b = fp_verdicts_blind(v, i);
        fputs(i ? "; <code>" : "<code>", f);
        esc(f, b->key);
        fprintf(f, "</code> (%d %s peers spread %.2f\u00d7: fails %s %.2f\u00d7 the median, rule "
                   "%.2f\u00d7)",
                b->peers, fp_entity_kind_name(b->kind), b->spread, b->limit < 1 ? "below" : "above",
                b->limit, b->rule_limit);
    }
    if (n > SUMMARY_NAMES)
        fprintf(f, " +%zu more", n - SUMMARY_NAMES);
    fputs("</p>\n", f);
}

/* Configuration drift: one row per differing field (node, device, field,
 * its value, what it was compared with, verdict), at most 50, fails first. */
static void drift_table(FILE *f, const fp_verdicts *v)
{
    size_t n = fp_verdicts_drift_count(v), shown = 0;
    if (!n)
        return;
    fprintf(f, "<h2>Configuration drift</h2>\n<table><tr><th>node</th><th>gpu</th><th>field</th>"
               "<th>value</th><th>expected</th><th>against</th><th>verdict</th></tr>\n");
    static const fp_verdict order[] = {FP_FAIL, FP_WARN, FP_PASS};
    for (size_t o = 0; o < 3; o++)
        for (size_t i = 0; i < n && shown < 50; i++) {
            const fp_config_drift *d = fp_verdicts_drift(v, i);
            if (d->verdict != order[o])
                continue;
            shown++;
            fputs("<tr><td>", f);
            esc(f, d->node);
            fputs(d->dev >= 0 ? "</td><td>" : "</td><td>-", f);
            if (d->dev >= 0)
                fprintf(f, "%d", d->dev);
            fputs("</td><td><code>", f);
            esc(f, d->field);
            fputs("</code></td><td>", f);
            esc(f, d->value);
            fputs("</td><td>", f);
            esc(f, d->expected);
            fputs("</td><td>", f);
            esc(f, d->against);
            if (strcmp(d->against, "fleet") == 0)
                fprintf(f, " (%d of %d)", d->count, d->total);
            fprintf(f, "</td><td class=\"%s\">%s</td></tr>\n", fp_verdict_name(d->verdict),
                    d->verdict == FP_PASS ? "info" : fp_verdict_name(d->verdict));
        }
    fputs("</table>\n", f);
    if (n > shown)
        fprintf(f, "<p>+%zu more (--json lists every reason)</p>\n", n - shown);
}

/* The repeat offenders (detect's history), one line: "Repeat offenders
 * (failed or warned in 3 of their last 5 judged runs): node:n5 (3 of 5)". */
static void repeat_offenders(FILE *f, const fp_verdicts *v)
{
    int k, n;
    size_t count = fp_verdicts_offender_count(v);
    if (!fp_verdicts_history(v, &k, &n, NULL) || !count)
        return;
    fprintf(f, "<p class=\"offenders\">Repeat %s (failed or warned in %d of their last %d "
               "judged runs): <span class=\"warn\">",
            fp_plural((long long)count, "offender", "offenders"), k, n);
    for (size_t i = 0; i < count && i < SUMMARY_NAMES; i++) {
        const fp_offender *o = fp_verdicts_offender(v, i);
        char ent[2 * FP_NAME_MAX + 32];
        fputs(i ? ", " : "", f);
        esc(f, fp_entity_format(fp_verdicts_get(v, o->entity)->entity, ent, sizeof ent));
        fprintf(f, " (%d of %d)", o->bad, o->judged);
    }
    if (count > SUMMARY_NAMES)
        fprintf(f, " +%zu more", count - SUMMARY_NAMES);
    fputs("</span></p>\n", f);
}

/* The confirm pass on the first screen: what was measured again, what it
 * cost, what reproduced and what did not (docs/confirm.md). */
static void confirm_line(FILE *f, const fp_verdicts *v)
{
    const fp_confirm_info *c = fp_verdicts_confirm_info(v);
    if (!c)
        return;
    fputs("<p class=\"confirm\">Re-test before acting: ", f);
    if (!c->ran) {
        fputs("none (", f);
        esc(f, c->note[0] ? c->note : "none ran");
        fputs(")", f);
    } else {
        esc(f, c->tests);
        fprintf(f, " again in %.2f s", c->seconds);
        if (c->first_seconds > 0)
            fprintf(f, " (%.0f%% of the first pass's %.2f s)", 100 * c->seconds / c->first_seconds,
                    c->first_seconds);
    }
    static const struct {
        fp_confirm_outcome o;
        const char *what;
    } parts[] = {{FP_CONFIRM_REPRODUCED, "reproduced"},
                 {FP_CONFIRM_NOT_REPRODUCED, "did not reproduce on re-test (warns)"},
                 {FP_CONFIRM_FOUND, "found on re-test (slow with nodes that passed)"},
                 {FP_CONFIRM_NOT_RETESTED, "not re-tested (fail stands)"}};
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        size_t n = 0;
        for (size_t i = 0; i < c->nitems; i++) {
            if (c->items[i].outcome != parts[k].o)
                continue;
            char ent[2 * FP_NAME_MAX + 32];
            if (n < SUMMARY_NAMES) {
                fprintf(f, "%s", n ? ", " : "; ");
                if (!n)
                    fprintf(f, "%s: ", parts[k].what);
                esc(f, fp_entity_format(&c->items[i].entity, ent, sizeof ent));
            }
            n++;
        }
        if (n > SUMMARY_NAMES)
            fprintf(f, " +%zu more", n - SUMMARY_NAMES);
    }
    fputs("</p>\n", f);
}

/* The first screen: the verdict, the node counts, the drain/exclude list and
 * the other failing entities by name, then the confirm pass and the blind spots. */
static void summary(FILE *f, const fp_verdicts *v)
{
    fp_verdict all = fp_verdicts_overall(v);
    size_t nodes[4] = {0}, others[4] = {0}, total = 0;
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        if (ev->entity->kind == FP_ENT_NODE) {
            nodes[ev->verdict]++;
            total++;
        } else {
            others[ev->verdict]++;
        }
    }
    const char *const *drain;
    size_t ndrain = fp_verdicts_nodes_at(v, FP_FAIL, &drain);
    char *list = fp_hostlist_compress(drain, ndrain);
    const fp_breaker *b = fp_verdicts_breaker(v);
    fprintf(f,
            "<div class=\"summary s-%s\"><h2>Verdict: <span class=\"%s\">%s</span></h2>\n"
            "<p class=\"counts\">",
            fp_verdict_name(all), fp_verdict_name(all), fp_verdict_name(all));
    if (nodes[FP_FAIL]) {
        fprintf(f, "%zu of %zu %s %s: ", nodes[FP_FAIL], total,
                fp_plural((long long)total, "node", "nodes"),
                fp_plural((long long)nodes[FP_FAIL], "fails", "fail"));
        esc(f, list ? list : "?");
        fputs(b->tripped ? " \u2192 <b>not drained</b> (circuit breaker)" : " \u2192 drained", f);
    } else {
        fprintf(f, "0 of %zu %s fail%s", total, fp_plural((long long)total, "node", "nodes"),
                total == 1 ? "s" : "");
    }
    if (nodes[FP_WARN])
        fprintf(f, "; %zu of %zu %s %s", nodes[FP_WARN], total,
                fp_plural((long long)total, "node", "nodes"),
                fp_plural((long long)nodes[FP_WARN], "warns", "warn"));
    if (nodes[FP_UNKNOWN])
        fprintf(f, "; %zu unknown", nodes[FP_UNKNOWN]);
    if (others[FP_FAIL] || others[FP_WARN])
        fprintf(f, "; other entities: %zu failing, %zu warning", others[FP_FAIL], others[FP_WARN]);
    fputs("</p>\n<p>Drain / exclude list: <code class=\"drain\">", f);
    esc(f, ndrain && list && !b->tripped ? list : "(none)");
    fputs("</code></p>\n", f);
    if (b->tripped) {
        char line[256];
        fputs("<p class=\"fail\"><b>Circuit breaker:</b> ", f);
        esc(f, fp_breaker_text(b, line, sizeof line));
        fputs("</p>\n", f);
    }
    free(list);
    size_t named = 0;
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        if (ev->entity->kind == FP_ENT_NODE || ev->verdict != FP_FAIL || named++ >= SUMMARY_NAMES)
            continue;
        char ent[2 * FP_NAME_MAX + 32];
        fputs(named == 1 ? "<p>Failing: <span class=\"fail\">" : ", ", f);
        esc(f, fp_entity_format(ev->entity, ent, sizeof ent));
    }
    if (named > SUMMARY_NAMES)
        fprintf(f, " +%zu more", named - SUMMARY_NAMES);
    if (named)
        fputs("</span></p>\n", f);
    confirm_line(f, v);
    blind_spots(f, v);
    repeat_offenders(f, v);
    fputs("</div>\n", f);
}

static int entity_rank(fp_verdict v)
{
    return v == FP_FAIL ? 0 : v == FP_WARN ? 1 : 2;
}

/* Non-passing entities, fails first, each with at most REASONS_SHOWN lines. */
static void verdict_table(FILE *f, const fp_verdicts *v)
{
    size_t nmax = 1;
    for (size_t i = 0; i < fp_verdicts_count(v); i++)
        nmax = fp_verdicts_get(v, i)->nreasons > nmax ? fp_verdicts_get(v, i)->nreasons : nmax;
    reason_group *groups = malloc(nmax * sizeof *groups);
    if (!groups) {
        fputs("<p>out of memory listing the reasons</p>\n", f);
        return;
    }
    fputs("<h2>Entities that do not pass</h2>\n<table><tr><th>entity</th><th>verdict</th>"
          "<th>reasons (one line per metric; its evidence kinds in brackets)</th></tr>\n",
          f);
    size_t shown = 0;
    for (int rank = 0; rank < 3; rank++)
        for (size_t i = 0; i < fp_verdicts_count(v); i++) {
            const fp_entity_verdict *ev = fp_verdicts_get(v, i);
            if (ev->verdict == FP_PASS || entity_rank(ev->verdict) != rank ||
                (ev->verdict == FP_UNKNOWN && ev->nreasons == 0))
                continue;
            char ent[2 * FP_NAME_MAX + 32];
            fputs("<tr class=\"entity\"><td>", f);
            esc(f, fp_entity_format(ev->entity, ent, sizeof ent));
            fprintf(f, "</td><td class=\"%s\">%s</td><td><ul class=\"reasons\">\n",
                    fp_verdict_name(ev->verdict), fp_verdict_name(ev->verdict));
            size_t n = group_reasons(v, ev, groups);
            if (n == 0)
                fputs("<li>no reason of its own: see its devices, ranks and links</li>\n", f);
            for (size_t g = 0; g < n && g < REASONS_SHOWN; g++)
                reason_line(f, &groups[g]);
            if (n > REASONS_SHOWN)
                fprintf(f, "<li class=\"more\">+%zu more (all of them: <code>--json</code>)</li>\n",
                        n - REASONS_SHOWN);
            fputs("</ul></td></tr>\n", f);
            shown++;
        }
    if (!shown)
        fputs("<tr><td colspan=\"3\">every entity passes</td></tr>\n", f);
    fputs("</table>\n", f);
    free(groups);
}

fp_status fp_report_html(const fp_run *run, const fp_verdicts *v, const char *path)
{
    fp_status st;
    FILE *f = fp_outfile_open(path, &st);
    if (!f)
        return st;
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>fleetprint ", f);
    esc(f, run->id);
    fputs("</title><style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
          "td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top;font-size:13px}"
          ".fail{color:#b00;font-weight:bold}.warn{color:#a60}.pass{color:#070}"
          "pre{font-size:12px}.summary{border:2px solid #ccc;padding:0 1em;margin-bottom:1em}"
          ".s-fail{border-color:#b00}.s-warn{border-color:#a60}.s-pass{border-color:#070}"
          ".counts{font-size:20px}ul.reasons{margin:0;padding-left:1em}li.more{color:#555}"
          "</style></head><body>\n<h1>fleetprint run ",
          f);
    esc(f, run->id);
    fputs("</h1>\n", f);
    if (v)
        summary(f, v);
    fputs("<p>", f);
    char when[64] = "";
    time_t t = (time_t)run->time;
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    fprintf(f, "%s, %.1f s; tag ", when, run->duration);
    esc(f, run->tag);
    fprintf(f, ", status ");
    esc(f, run->status);
    fprintf(f, "; %d %s on %d %s; device ", run->nranks, fp_plural(run->nranks, "rank", "ranks"),
            run->nnodes, fp_plural(run->nnodes, "node", "nodes"));
    esc(f, run->device_backend);
    fputs(", comm ", f);
    esc(f, run->comm_backend);
    if (run->injections[0]) {
        fputs("; <b>injected faults:</b> ", f);
        esc(f, run->injections);
    }
    fputs("</p>\n", f);
    if (v)
        verdict_table(f, v);
    if (v)
        drift_table(f, v);
    fputs("<h2>Link matrix</h2>\n", f);
    link_matrix(f, run, v);
    fputs("<h2>Burn-in throughput per device</h2>\n", f);
    timeline(f, run);
    fputs("<h2>Metrics</h2>\n<pre>", f);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        fp_report_console(mem, run);
        fclose(mem);
        esc(f, text ? text : "");
    }
    free(text);
    fputs("</pre>\n</body></html>\n", f);
    return fp_outfile_close(f, path, true);
}
