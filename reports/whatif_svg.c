/* DP x PP heat map of per-worker slowdown as standalone SVG. One hot cell is a
 * bad worker, a hot last row is stage imbalance, scattered heat is sequence
 * length imbalance (ANCHORS.md). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/outfile.h"

#define VMIN 1.0
#define VMAX 1.5

/* The "Reds" colour ramp, white to dark red. */
static void color(double v, char *buf, size_t len)
{
    static const unsigned ramp[] = {0xfff5f0, 0xfee0d2, 0xfcbba1, 0xfc9272, 0xfb6a4a,
                                    0xef3b2c, 0xcb181d, 0xa50f15, 0x67000d};
    const int n = (int)(sizeof ramp / sizeof ramp[0]);
    if (!isfinite(v)) {
        snprintf(buf, len, "#cccccc");
        return;
    }
    double x = (v - VMIN) / (VMAX - VMIN);
    x = x < 0 ? 0 : x > 1 ? 1 : x;
    double pos = x * (n - 1);
    int i = (int)pos;
    if (i >= n - 1)
        i = n - 2;
    double f = pos - i;
    unsigned a = ramp[i], b = ramp[i + 1];
    int rgb[3];
    for (int c = 0; c < 3; c++) {
        int ca = (int)(a >> (16 - 8 * c) & 0xff), cb = (int)(b >> (16 - 8 * c) & 0xff);
        rgb[c] = (int)lround(ca + f * (cb - ca));
    }
    snprintf(buf, len, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            if ((unsigned char)*s >= 0x20)
                fputc(*s, f);
        }
}

fp_status fp_wi_write_heatmap_svg(const fp_wi_result *r, const char *path)
{
    const int dp = r->meta.dp_size, pp = r->meta.pp_size;
    fp_status st;
    FILE *f = fp_outfile_open(path, &st);
    if (!f)
        return st;
    double cw = 900.0 / dp, ch = 600.0 / pp;
    cw = cw > 64 ? 64 : cw < 6 ? 6 : cw;
    ch = ch > 40 ? 40 : ch < 6 ? 6 : ch;
    const double left = 70, topm = 84;
    const double gw = cw * dp, gh = ch * pp;
    /* wide enough for the title lines whatever the grid */
    const double width = left + gw + 100 > 480 ? left + gw + 100 : 480, height = topm + gh + 50;
    bool annotate = cw >= 36 && ch >= 16;
    bool attributed = r->blocking[FP_WI_BY_DP_RANK].done;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
            width, height, width, height);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%.0f\" y=\"22\" font-size=\"14\">", left);
    xml_text(f, r->meta.trial_name);
    fprintf(f, ": straggler slowdown S = %.3f</text>\n", r->blocking_slowdown);
    fprintf(f, "<text x=\"%.0f\" y=\"38\" font-size=\"11\" fill=\"#555\">cells: per-worker "
               "slowdown S_w = min(S_dp, S_stage)</text>\n",
            left);
    if (!attributed)
        fprintf(f, "<text x=\"%.0f\" y=\"54\">S is below the attribution threshold: no "
                   "per-worker attribution</text>\n",
                left);
    fprintf(f, "<g id=\"cells\">\n");
    for (int s = 0; s < pp; s++)
        for (int d = 0; d < dp; d++) {
            double v = r->worker_slowdown[s * dp + d];
            char fill[16];
            color(v, fill, sizeof fill);
            double x = left + d * cw, y = topm + s * ch;
            fprintf(f,
                    "<rect class=\"cell\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                    "fill=\"%s\" stroke=\"white\" stroke-width=\"0.5\" data-dp-rank=\"%d\" "
                    "data-stage=\"%d\" data-rank=\"%d\" data-slowdown=\"%.6g\">"
                    "<title>dp %d, stage %d, rank %d: S_w %.4f</title></rect>\n",
                    x, y, cw, ch, fill, d, s, r->worker_rank[s * dp + d], v, d, s,
                    r->worker_rank[s * dp + d], v);
            if (annotate) {
                double lum = isfinite(v) ? (v - VMIN) / (VMAX - VMIN) : 0;
                fprintf(f,
                        "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" "
                        "dominant-baseline=\"middle\" fill=\"%s\">",
                        x + cw / 2, y + ch / 2, lum > 0.55 ? "white" : "black");
                if (isfinite(v))
                    fprintf(f, "%.2f</text>\n", v);
                else
                    fprintf(f, "n/a</text>\n");
            }
        }
    fprintf(f, "</g>\n");
    /* axes: DP ranks along x, stages down y; label every k-th to stay legible */
    int kx = dp <= 32 ? 1 : (dp + 31) / 32, ky = pp <= 32 ? 1 : (pp + 31) / 32;
    for (int d = 0; d < dp; d += kx)
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%d</text>\n",
                left + d * cw + cw / 2, topm - 6, d);
    for (int s = 0; s < pp; s += ky)
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" "
                   "dominant-baseline=\"middle\">%d</text>\n",
                left - 6, topm + s * ch + ch / 2, s);
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">DP rank</text>\n",
            left + gw / 2, topm - 24);
    fprintf(f, "<text x=\"20\" y=\"%.2f\" text-anchor=\"middle\" "
               "transform=\"rotate(-90 20 %.2f)\">PP stage</text>\n",
            topm + gh / 2, topm + gh / 2);
    /* colour bar */
    const double bx = left + gw + 30, bh = gh < 120 ? 120 : gh;
    for (int i = 0; i < 50; i++) {
        char fill[16];
        color(VMAX - (VMAX - VMIN) * i / 49.0, fill, sizeof fill);
        fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"16\" height=\"%.3f\" fill=\"%s\"/>\n",
                bx, topm + bh * i / 50.0, bh / 50.0 + 0.5, fill);
    }
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">%.1f+</text>\n", bx + 20, topm + 10, VMAX);
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">%.1f</text>\n", bx + 20, topm + bh, VMIN);
    fprintf(f, "</svg>\n");
    return fp_outfile_close(f, path, true);
}
