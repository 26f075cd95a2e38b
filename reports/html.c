/* A run as one self-contained HTML page: context, verdicts, the link matrix
 * and the burn-in timeline as inline SVG pictures, and the metric summary. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleetprint/detect.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/outfile.h"

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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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

static bool is_link_bw(const fp_sample *s)
{
    return s->entity.kind == FP_ENT_LINK && strcmp(s->suite, "collectives") == 0 &&
           strcmp(s->metric, "bw_inter") == 0;
}

static double median_of(double *a, size_t n)
{
    qsort(a, n, sizeof *a, cmp_double);
    return n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
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
            const fp_sample *s = &run->samples[i];
            if (!is_link_bw(s))
                continue;
            int x = fp_run_node_index(run, s->entity.node), y = fp_run_node_index(run, s->entity.peer);
            if (x < 0 || y < 0 || x >= n || y >= n)
                continue;
            size_t c = (size_t)(x < y ? x * n + y : y * n + x);
            if (s->iter < 0) {
                bw[c] = s->value;
                summary[c] = true;
            } else if (!pass) {
                count[c + 1]++;
            } else {
                vals[count[c] + fill[c]++] = s->value;
            }
        }
        if (!pass)
            for (size_t c = 0; c < cells; c++)
                count[c + 1] += count[c];
        free(fill);
    }
    for (size_t c = 0; c < cells; c++)
        if (!summary[c] && count[c + 1] > count[c])
            bw[c] = median_of(vals + count[c], count[c + 1] - count[c]);
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
    double med = median_of(vals, m);
    if (run->nnodes > n)
        fprintf(f, "<p>%d nodes: the matrix shows the first %d.</p>\n", run->nnodes, n);
    const int cell = n <= 16 ? 28 : n <= 32 ? 16 : 9, left = 70, top = 70;
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
        }
    fprintf(f, "<text x=\"%d\" y=\"%d\">cell colour: bandwidth / median %.3g GB/s "
               "(white 1.0, red 0.4 or less; grey: not measured)</text>\n</svg>\n",
            left, h - 12, med);
    /* the failing links, by name */
    for (size_t i = 0; v && i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        if (ev->entity.kind != FP_ENT_LINK || ev->verdict != FP_FAIL)
            continue;
        char ent[2 * FP_NAME_MAX + 32];
        fputs("<p class=\"fail\">failing link: ", f);
        esc(f, fp_entity_format(&ev->entity, ent, sizeof ent));
        fputs("</p>\n", f);
    }
done:
    free(bw);
    free(vals);
}

/* ---- burn-in timeline -------------------------------------------------------------------- */

static bool is_burn(const fp_sample *s)
{
    return s->iter >= 0 && strcmp(s->suite, "burnin") == 0 && strcmp(s->metric, "gflops") == 0;
}

static void timeline(FILE *f, const fp_run *run)
{
    int wmax = 0, ents = 0;
    double ymax = 0;
    fp_entity seen[TIMELINE_MAX];
    for (size_t i = 0; i < run->nsamples; i++) {
        const fp_sample *s = &run->samples[i];
        if (!is_burn(s))
            continue;
        wmax = s->iter > wmax ? s->iter : wmax;
        ymax = s->value > ymax ? s->value : ymax;
        bool known = false;
        for (int k = 0; k < ents && !known; k++)
            known = memcmp(&seen[k], &s->entity, sizeof s->entity) == 0;
        if (!known && ents < TIMELINE_MAX)
            seen[ents++] = s->entity;
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
            const fp_sample *s = &run->samples[i];
            if (!is_burn(s) || memcmp(&s->entity, &seen[k], sizeof s->entity) != 0)
                continue;
            double x = left + (wmax ? (double)s->iter / wmax : 0.5) * W;
            double y = top + H - (ymax > 0 ? s->value / ymax : 0) * H;
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

static void verdict_table(FILE *f, const fp_verdicts *v)
{
    fprintf(f, "<h2>Verdict: <span class=\"%s\">%s</span></h2>\n",
            fp_verdict_name(fp_verdicts_overall(v)), fp_verdict_name(fp_verdicts_overall(v)));
    fputs("<table><tr><th>entity</th><th>verdict</th><th>reasons</th></tr>\n", f);
    size_t shown = 0;
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        if (ev->verdict == FP_PASS)
            continue;
        char ent[2 * FP_NAME_MAX + 32];
        fputs("<tr><td>", f);
        esc(f, fp_entity_format(&ev->entity, ent, sizeof ent));
        fprintf(f, "</td><td class=\"%s\">%s</td><td>", fp_verdict_name(ev->verdict),
                fp_verdict_name(ev->verdict));
        for (size_t k = 0; k < ev->nreasons; k++) {
            const fp_reason *r = fp_verdicts_reason(v, ev->first_reason + k);
            char line[512];
            if (isnan(r->value))
                snprintf(line, sizeof line, "%s %s: %s (%s)", fp_evidence_name(r->evidence),
                         r->key, r->note, r->rule);
            else
                snprintf(line, sizeof line, "%s %s = %.4g %s, expected %.4g (%.0f%% worse; %s) %s",
                         fp_evidence_name(r->evidence), r->key, r->value, r->unit, r->expected,
                         100 * r->deviation, r->rule, r->note);
            esc(f, line);
            fputs("<br>", f);
        }
        fputs("</td></tr>\n", f);
        shown++;
    }
    if (!shown)
        fputs("<tr><td colspan=\"3\">every entity passes</td></tr>\n", f);
    fputs("</table>\n", f);
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
          "pre{font-size:12px}</style></head><body>\n<h1>fleetprint run ", f);
    esc(f, run->id);
    fputs("</h1>\n<p>", f);
    char when[64] = "";
    time_t t = (time_t)run->time;
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    fprintf(f, "%s, %.1f s; tag ", when, run->duration);
    esc(f, run->tag);
    fprintf(f, ", status ");
    esc(f, run->status);
    fprintf(f, "; %d ranks on %d nodes; device ", run->nranks, run->nnodes);
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
