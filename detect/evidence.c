/* The detector's evidence phases: value rules, peer evidence (each window of a
 * group against its robust centre and scale) and baseline evidence (drift and
 * fleet), and the release of held fails once all evidence is in. They call
 * only the engine (engine.c; its state: detect_internal.h); the driver
 * (detect.c) runs them. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"
#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "fleetprint/stats.h"
#include "fleetprint/store.h"

/* ---- value rules -------------------------------------------------------------------------- */

fp_status fp__det_judge_value(eng *g, const series *se)
{
    const key_info *k = &g->keys[se->key];
    const fp_value_rule *vr = k->vrule;
    int bad = 0, present = 0;
    double worst = NAN;
    for (int w = 0; w < k->windows; w++) {
        double v = g->vals[se->off + (size_t)w];
        if (isnan(v))
            continue;
        present++;
        if (v > vr->max || v < vr->min) {
            bad++;
            if (isnan(worst) || (v > vr->max ? v > worst : v < worst))
                worst = v;
        }
    }
    if (!present)
        return FP_OK; /* judged as missing elsewhere */
    if (!bad) {
        fp__det_set_ent_verdict(g, se->ent, FP_PASS);
        return FP_OK;
    }
    fp__det_set_ent_verdict(g, se->ent, vr->verdict);
    fp_reason *r;
    fp_status st = fp__det_series_reason(g, se, FP_EV_VALUE, vr->verdict, vr->name, &r);
    if (st != FP_OK)
        return st;
    r->value = worst;
    r->expected = worst > vr->max ? vr->max : vr->min;
    r->deviation = worst - r->expected;
    r->z = NAN;
    r->windows_bad = bad;
    r->windows = present;
    snprintf(r->note, sizeof r->note, "%s %g in %d of %d windows",
             worst > vr->max ? "above the limit:" : "below the limit:", worst, bad, present);
    return FP_OK;
}

/* ---- peer evidence -------------------------------------------------------------------------- */


/* What a series is judged against: how many runs x windows (or peers) stand
 * behind the expected value, and whether it is noisy (then only a
 * persistence over several windows fails it, never one window). */
typedef struct reference {
    int runs, windows;
    bool noisy;
} reference;

/* What a rule class judges with in this run: its thresholds, raised on
 * contended runs (effective()). */
typedef struct limits {
    const char *name;
    bool absolute, noisy;
    bool host;         /* host-side: no fail on baseline evidence unless confirmed */
    double warn, fail; /* how much worse than expected warns / fails far out */
    double cost;       /* a window this much worse (and beyond z) is out of bounds
                          at the cost level: the cost floor, at most fail */
    double z;          /* and how many robust standard deviations */
} limits;

/* Window levels (score()): out of bounds at the warn threshold, at the cost
 * floor, at the rule's fail, far out (strong_factor x fail). */
enum { LVL_WARN = 1, LVL_COST, LVL_FAIL, LVL_STRONG, NLVL };

/* The evidence of a series from its per-window scores: persistence decides. */
static fp_status conclude(eng *g, const series *se, const window_score *ws, int n, fp_evidence ev,
                          const limits *cls, const reference *ref)
{
    const fp_rules *r = g->rules;
    /* per level: windows at it or beyond, and the longest run of them */
    int present = 0, count[NLVL] = {0}, run[NLVL] = {0}, best[NLVL] = {0};
    uint64_t out_w = 0, out_f = 0; /* windows out of bounds: warn, fail level */
    for (int w = 0; w < n; w++) {
        if (ws[w].level < 0)
            continue;
        uint64_t bit = (uint64_t)1 << (n > 64 ? w * 64 / n : w);
        out_w |= ws[w].level >= LVL_WARN ? bit : 0;
        out_f |= ws[w].level >= LVL_FAIL ? bit : 0;
        present++;
        for (int l = LVL_WARN; l < NLVL; l++) {
            run[l] = ws[w].level >= l ? run[l] + 1 : 0;
            count[l] += ws[w].level >= l;
            best[l] = run[l] > best[l] ? run[l] : best[l];
        }
    }
    int nwarn = count[LVL_WARN], ncost = count[LVL_COST], nfail = count[LVL_FAIL];
    int nstrong = count[LVL_STRONG];
    int best_w = best[LVL_WARN], best_c = best[LVL_COST], best_f = best[LVL_FAIL];
    int best_s = best[LVL_STRONG];
    if (!present)
        return FP_OK;
    ent_info *ei = &g->ents[se->ent];
    if (ev == FP_EV_PEERS) {
        uint64_t *b1 = g->bad ? &g->bad[se->ent][0] : &ei->bad1;
        uint64_t *b2 = g->bad ? &g->bad[se->ent][1] : &ei->bad2;
        *b2 |= *b1 & out_w;
        *b1 |= out_w;
        uint8_t *peers = &g->ser[se - g->ser].peers; /* its key's thread alone writes it */
        *peers = out_w ? PEERS_OUT : *peers == PEERS_NONE ? PEERS_IN : *peers;
    }
    /* out of bounds long enough: a fraction of the windows, min_windows in a
     * row; far out of bounds (strong_factor x fail): a smaller fraction */
    int streak = r->persist_min < present ? r->persist_min : present;
    if (ref->noisy && streak < 2 && n > 1)
        streak = 2; /* one window never fails (a summary, an aggregate over the
                       measurement's own iterations, is judged as it is) */
    int need = (int)ceil(r->persist_fraction * present - 1e-9);
    need = need < streak ? streak : need > present ? present : need;
    int need_s = (int)ceil(r->strong_fraction * present - 1e-9);
    need_s = need_s < streak ? streak : need_s > present ? present : need_s;
    /* a deficit below the rule's fail (at the cost floor) must be the
     * series' level, not a tail: out in more of its windows (cost_fraction) */
    int need_c = (int)ceil(r->cost_fraction * present - 1e-9);
    need_c = need_c < need ? need : need_c > present ? present : need_c;
    if (cls->absolute || ref->noisy) /* per-call timings, noisy metrics: persistence alone */
        nstrong = 0;
    fp_verdict v = FP_PASS;
    bool at_fail = nfail >= need && best_f >= streak;
    bool persistent = at_fail || (ncost >= need_c && best_c >= streak);
    if (persistent || (nstrong >= need_s && best_s >= streak))
        v = FP_FAIL;
    else if ((nwarn >= need && best_w >= streak) || nstrong > 0)
        v = FP_WARN; /* a persistent mild deviation, or one far out of bounds */
    int hold = 0;
    if (v == FP_FAIL && !persistent)
        hold |= HOLD_EPISODE;
    if (v == FP_FAIL && g->base && !g->contended && (ev == FP_EV_PEERS || ev == FP_EV_FLEET))
        hold |= HOLD_DRIFT;
    /* host-side metrics (pageable and small copies, launches) move with the
     * host's load between runs more than any baseline of a few runs shows:
     * against history they fail only once a re-test confirmed them */
    bool host_held = v == FP_FAIL && cls->host && !g->confirmed &&
                     (ev == FP_EV_DRIFT || ev == FP_EV_FLEET);
    /* against its peers, such a metric is the host's when every device of the
     * node shares the deficit (a whole-run host dip looks the same): held */
    if (v == FP_FAIL && cls->host && !g->confirmed && ev == FP_EV_PEERS)
        hold |= HOLD_HOST;
    /* on shared cores a run summary (one value from a measurement's own few
     * iterations) can fall wholly in a stretch where another rank or tenant
     * held the core or its cache: seen as one kernel of a healthy rank 68%
     * below its peers, the rank's other kernels normal. A slow device is
     * slow at everything: another of its metrics must agree (links have
     * one metric, a median over many exchanges: their own thresholds) */
    if (v == FP_FAIL && g->contended && g->keys[se->key].use_summary && ei->kind == FP_ENT_GPU)
        hold |= HOLD_SHARED;
    if (host_held)
        hold = 0; /* a warning, whatever else would decide it */
    uint32_t si = (uint32_t)(se - g->ser);
    if (ev == FP_EV_DRIFT) { /* did the level change? (one far window is no change) */
        g->ser[si].drift_judged = true;
        g->ser[si].drift = v == FP_WARN && !(nwarn >= need && best_w >= streak) ? FP_PASS : v;
    }
    fp__det_set_ent_verdict(g, se->ent, hold || host_held ? FP_WARN : v);
    if (v == FP_PASS && !ei->explain)
        return FP_OK;
    /* describe the out-of-bounds windows (all, for a pass) by their medians */
    int lvl = v == FP_FAIL ? (at_fail ? LVL_FAIL : persistent ? LVL_COST : LVL_STRONG)
              : v == FP_WARN ? LVL_WARN : 0;
    int m = 0;
    double buf[5][64];
    double *loss = buf[0], *z = buf[1], *val = buf[2], *exp_ = buf[3], *band = buf[4];
    int stride = n > 64 ? (n + 63) / 64 : 1;
    for (int w = 0; w < n && m < 64; w += 1) {
        if (ws[w].level < lvl || (stride > 1 && w % stride))
            continue;
        loss[m] = ws[w].loss;
        z[m] = ws[w].z;
        val[m] = ws[w].value;
        exp_[m] = ws[w].expected;
        band[m] = ws[w].band;
        m++;
    }
    if (m == 0) { /* a transient fail window on a sparse stride */
        for (int w = 0; w < n && m < 1; w++)
            if (ws[w].level >= 1) {
                loss[0] = ws[w].loss, z[0] = ws[w].z, val[0] = ws[w].value;
                exp_[0] = ws[w].expected;
                band[0] = ws[w].band;
                m = 1;
            }
    }
    fp_reason *rs;
    fp_status st = fp__det_series_reason(g, se, ev, host_held ? FP_WARN : v, cls->name, &rs);
    if (st != FP_OK)
        return st;
    rs->needs_retest = host_held;
    g->reasons[g->nreasons - 1].ser = si;
    g->reasons[g->nreasons - 1].mask = out_f;
    g->reasons[g->nreasons - 1].hold = hold;
    rs->deviation = fp_median_select(loss, (size_t)m);
    rs->z = fp_median_select(z, (size_t)m);
    rs->value = fp_median_select(val, (size_t)m);
    rs->expected = fp_median_select(exp_, (size_t)m);
    rs->band = fp_median_select(band, (size_t)m);
    rs->ref_runs = ref->runs;
    rs->ref_windows = ref->windows;
    rs->windows_bad = lvl ? count[lvl] : 0;
    rs->windows = present;
    if (host_held)
        snprintf(rs->note, sizeof rs->note,
                 "host-side metric: needs a re-test to fail on baseline evidence");
    else if (v == FP_WARN && nstrong > 0 && !(nwarn >= need && best_w >= streak))
        snprintf(rs->note, sizeof rs->note, "transient: far out of bounds in %d of %d windows",
                 nstrong, present);
    else if (ref->noisy && v != FP_FAIL && ncost > 0)
        snprintf(rs->note, sizeof rs->note,
                 "noisy metric: %d of %d windows out of bounds is no persistent fault", ncost,
                 present);
    else if (g->contended && !cls->absolute)
        snprintf(rs->note, sizeof rs->note, "contended thresholds (%.0f%%/%.0f%%): %s",
                 100 * cls->warn, 100 * cls->fail, g->contended_note ? g->contended_note : "");
    return FP_OK;
}

/* Score value v (of log lv, for relative rules) against centre c and scale s
 * (both in the transformed space; ec = exp(c) for relative rules, computed
 * once by the caller). */
static void score_log(const limits *cls, fp_better better, double v, double lv, double c,
                      double ec, double s, double floor_, double strong, window_score *out)
{
    out->value = v;
    if (cls->absolute) {
        double dev = better == FP_BETTER_HIGHER ? v - c : c - v;
        double sc = s > floor_ * fabs(c) ? s : floor_ * fabs(c);
        sc = sc > 1e-12 ? sc : 1e-12;
        out->expected = c;
        out->band = sc;
        out->loss = -dev;
        out->z = dev / sc;
    } else {
        double pv = v > 1e-300 ? v : 1e-300;
        double dev = better == FP_BETTER_HIGHER ? lv - c : c - lv;
        double sc = s > floor_ ? s : floor_;
        out->expected = ec;
        out->band = ec * sc;
        out->loss = better == FP_BETTER_HIGHER ? 1 - pv / ec : pv / ec - 1;
        out->z = dev / sc;
    }
    out->level = 0;
    if (out->z > -cls->z)
        return;
    /* beyond the noise (z), the cost floor decides: fail is its ceiling */
    if (out->loss >= (cls->warn < cls->cost ? cls->warn : cls->cost))
        out->level = LVL_WARN;
    if (out->loss >= cls->cost)
        out->level = LVL_COST;
    if (out->loss >= cls->fail)
        out->level = LVL_FAIL;
    if (out->loss >= strong * cls->fail)
        out->level = LVL_STRONG;
}

/* score_log of v, its log taken here. */
static void score(const limits *cls, fp_better better, double v, double c, double ec,
                  double s, double floor_, double strong, window_score *out)
{
    score_log(cls, better, v, cls->absolute ? NAN : log(v > 1e-300 ? v : 1e-300), c, ec, s,
              floor_, strong, out);
}

/* Straggler attribution for absolute rules (lateness): the time this entity
 * was behind its peers, summed over windows (calls), and what it cost the
 * m - 1 others who waited for it. */
static void note_cost(fp_reason *r, const window_score *ws, int n, size_t m)
{
    double behind = 0;
    int calls = 0;
    for (int w = 0; w < n; w++)
        if (ws[w].level >= 0) {
            calls++;
            behind += ws[w].loss > 0 ? ws[w].loss : 0;
        }
    char b[32], c[32];
    snprintf(r->note, sizeof r->note, "behind by %s over %d calls; cost the %zu others %s",
             fp_format_value(behind, r->unit, b, sizeof b), calls, m - 1,
             fp_format_value(behind * (double)(m - 1), r->unit, c, sizeof c));
}

/* The class's thresholds for this run: on contended runs relative
 * thresholds are at least the class's contended ones (the rules' where the
 * class has none), with the class's contended z where it has one, and
 * absolute (timing) ones only warn. */
static limits effective(const eng *g, const fp_rule_class *cls)
{
    limits c = {.name = cls->name, .absolute = cls->absolute, .noisy = cls->noisy,
                .host = cls->host, .warn = cls->warn, .fail = cls->fail, .cost = cls->cost,
                .z = cls->z};
    if (g->contended && !c.absolute) {
        bool own = cls->contended_fail >= 0;
        double cw = own ? cls->contended_warn : g->rules->contended_warn;
        double cf = own ? cls->contended_fail : g->rules->contended_fail;
        c.warn = c.warn > cw ? c.warn : cw;
        c.fail = c.fail > cf ? c.fail : cf;
        /* contention widens the peers' spread: a class whose contended
         * fraction alone separates may judge on a smaller z */
        if (own)
            c.z = cls->contended_z;
    }
    if (g->contended && (c.absolute || c.noisy)) {
        /* per-call timings and noisy metrics (small messages, launches) on
         * shared cores are mostly the scheduler's: they warn, and the
         * scale-free late-rank count and the bandwidths decide who fails */
        c.fail = INFINITY;
    }
    /* contention's own thresholds decide there (how much of a core a rank
     * gets is no deficit a job on a dedicated node would see): no cost floor */
    if (g->contended || c.absolute)
        c.cost = c.fail;
    return c;
}

/* A blind spot is worth telling where a fault this much beyond the rule's
 * threshold (as a factor) still cannot fail. */
#define BLIND_GAP 1.25

/* Record a blind spot of key k where its m peers spread by s (robust, in
 * logs) so widely that a value at the class's fail threshold lies fewer than
 * z spreads from their median, and so cannot fail (score()). */
static fp_status note_blind(eng *g, const key_info *k, const limits *cls, const series *first,
                            double s, size_t m)
{
    double sc = s > g->rules->scale_floor ? s : g->rules->scale_floor;
    bool higher = k->rep->better == FP_BETTER_HIGHER;
    double limit = exp(higher ? -cls->z * sc : cls->z * sc);
    double rule = higher ? 1 - cls->fail : 1 + cls->fail;
    if ((higher ? rule / limit : limit / rule) < BLIND_GAP)
        return FP_OK;
    fp_status st = FP_OK;
    fp_blind_spot *t = fp_grow(g->blind, &g->blind_cap, g->nblind + 1, sizeof *t, 16);
    if (!t)
        FP_FAIL(FP_ENOMEM, "out of memory for blind spot %zu (%s)", g->nblind + 1, k->text);
    g->blind = t;
    fp_blind_spot *b = &g->blind[g->nblind++];
    snprintf(b->key, sizeof b->key, "%s", k->text);
    snprintf(b->rule, sizeof b->rule, "%s", cls->name);
    b->kind = g->ents[first->ent].kind;
    b->peers = (int)m;
    b->spread = exp(s);
    b->limit = limit;
    b->rule_limit = rule;
cleanup:
    return st;
}

/* ---- split populations ----------------------------------------------------------------- */

/* Two clusters among the peers of a key: the worse one, and the better one
 * that stands for the healthy (at least half of the peers). */
typedef struct split {
    size_t worse, better; /* members (worse 0: no split) */
    double factor;        /* between the clusters' medians, >= 1 */
    double gap;           /* between their nearest members, >= 1 */
} split;

/* A threshold t on how much worse (1 - v/e or v/e - 1) as the same factor
 * between two values: a split is as far apart in throughput as in time. */
static double as_factor_loss(double t, fp_better better)
{
    return better == FP_BETTER_HIGHER ? t / (1 + t) : t;
}

/* Whether the peers of a relative key (their values: m rows of its windows)
 * fall into two clusters: in the sorted logs of their medians over windows,
 * the widest gap that leaves at least 2 below it and at least half of the
 * peers (and min_peers) above it, in the metric's better direction (at
 * exactly half, the better half is the healthy one). It splits them when it
 * is beyond z times the spread within each cluster (robust: 1.4826 x the
 * median distance of its members from its median; two outliers far from
 * each other are no cluster) and the clusters' medians lie a factor
 * 1 + fail apart. A gap, not a share: a fleet half of which is 2x slow has a median between
 * the halves and a spread so wide that neither half is an outlier. worse[i]
 * is set for the members of the worse cluster; room: 3 m doubles of scratch. */
static void find_split(const eng *g, const key_info *k, const limits *cls, const double *row,
                       size_t m, double *tmp, double *room, bool *worse, split *out)
{
    memset(out, 0, sizeof *out);
    memset(worse, 0, m * sizeof *worse);
    size_t min_better = (size_t)g->rules->min_peers;
    if (cls->absolute || !isfinite(cls->fail) || m < 2 + min_better)
        return;
    /* good[i]: series i's median over windows, log, larger is better (NaN:
     * none); low: the lower half of them in order; dev: scratch (room: 3 m) */
    double *good = room, *low = good + m, *dev = low + m;
    bool higher = k->rep->better == FP_BETTER_HIGHER;
    size_t n = 0;
    for (size_t i = 0; i < m; i++) {
        size_t c = 0;
        for (int w = 0; w < k->windows; w++) {
            double v = row[i * (size_t)k->windows + (size_t)w];
            if (!isnan(v))
                tmp[c++] = v;
        }
        /* the log of the median: the median of the logs (one log a series) */
        double x = c ? log(fmax(fp_median_select(tmp, c), 1e-300)) : NAN;
        good[i] = higher ? x : -x;
        if (c)
            dev[n++] = good[i];
    }
    if (n < 2 + min_better)
        return;
    /* the worse cluster lies in the lower half: sort that only (and the
     * value above it), a large fleet's groups are tens of thousands */
    size_t h = n / 2 + 1, nl = 0;
    double edge = fp_select_k(dev, n, h - 1);
    for (size_t i = 0; i < m; i++)
        if (good[i] <= edge) /* NaN: never */
            low[nl++] = good[i];
    fp_sort_doubles(low, nl);
    size_t cut = 0;
    double gap = 0;
    for (size_t j = 2; j <= n / 2 && n - j >= min_better; j++)
        if (low[j] - low[j - 1] > gap) {
            gap = low[j] - low[j - 1];
            cut = j;
        }
    if (!cut || gap < cls->z * g->rules->scale_floor)
        return;
    /* the clusters' (upper) medians and spreads: the worse cluster is
     * low[0..cut), the better one every value above low[cut - 1] */
    double mw = low[cut / 2], ww, wb;
    size_t nb = 0;
    for (size_t i = 0; i < m; i++)
        if (good[i] > low[cut - 1])
            dev[nb++] = good[i];
    double mb = fp_select_k(dev, nb, nb / 2);
    for (size_t i = 0; i < nb; i++)
        dev[i] = fabs(dev[i] - mb);
    wb = 1.4826 * fp_median_select(dev, nb);
    for (size_t i = 0; i < cut; i++)
        dev[i] = fabs(low[i] - mw);
    ww = 1.4826 * fp_median_select(dev, cut);
    double within = ww > wb ? ww : wb;
    within = within > g->rules->scale_floor ? within : g->rules->scale_floor;
    if (gap < cls->z * within || mb - mw < log(1 + cls->fail))
        return;
    for (size_t i = 0; i < m; i++) /* at or below the gap's lower edge */
        worse[i] = good[i] <= low[cut - 1];
    out->worse = cut;
    out->better = nb;
    out->factor = exp(mb - mw);
    out->gap = exp(gap);
}

/* Judge the series sers[0..m) of one key and one SKU against each other.
 * Where they split into two clusters (find_split), the better one is the
 * peers' reference: the worse cluster's members are judged against it, a
 * factor 1 + fail (the rule's, in either direction) out of bounds. */
fp_status fp__det_judge_peers(eng *g, const key_info *k, const uint32_t *sers, size_t m,
                             double *buf, window_score *ws)
{
    limits eff = effective(g, k->cls);
    const limits *cls = &eff;
    int W = k->windows;
    fp_better better = k->rep->better;
    double *centre = buf + m, *scale = centre + W, *spread = scale + W, *ec = spread + W;
    size_t nsp = 0;
    bool any = false;
    split sp;
    bool *worse = malloc((m + 1) * sizeof *worse);
    if (!worse)
        return FP_ENOMEM;
    /* the peers' values gathered once, row i the windows of sers[i], and
     * their logs for a relative rule: every pass below reads them in order,
     * where the series themselves lie far apart (g->peer_rows: room for the
     * largest key) */
    double *row = g->peer_rows, *lg = row + m * (size_t)W;
    enum { AHEAD = 16 };
    for (size_t i = 0; i < m; i++) {
        if (i + 2 * AHEAD < m)
            __builtin_prefetch(&g->ser[sers[i + 2 * AHEAD]]);
        if (i + AHEAD < m)
            __builtin_prefetch(g->vals + g->ser[sers[i + AHEAD]].off);
        memcpy(row + i * (size_t)W, g->vals + g->ser[sers[i]].off, (size_t)W * sizeof *row);
    }
    for (size_t x = 0; !cls->absolute && x < m * (size_t)W; x++)
        lg[x] = isnan(row[x]) ? NAN : log(row[x] > 1e-300 ? row[x] : 1e-300);
    const double *judged = cls->absolute ? row : lg;
    fp_status st = FP_OK;
    find_split(g, k, cls, row, m, buf, lg + m * (size_t)W, worse, &sp);
    /* the worse cluster of a split: the rule's thresholds as factors */
    limits split_lim = eff;
    split_lim.warn = as_factor_loss(eff.warn, better);
    split_lim.fail = split_lim.cost = as_factor_loss(eff.fail, better);
    for (int w = 0; w < W; w++) {
        size_t c = 0;
        for (size_t i = 0; i < m; i++) {
            double v = judged[i * (size_t)W + (size_t)w];
            if (!worse[i] && !isnan(v))
                buf[c++] = v;
        }
        centre[w] = NAN;
        if (c < (size_t)g->rules->min_peers)
            continue;
        double med, mad;
        fp_median_mad(buf, c, &med, &mad);
        centre[w] = med;
        ec[w] = cls->absolute ? med : exp(med);
        scale[w] = 1.4826 * mad;
        spread[nsp++] = scale[w];
        any = true;
    }
    if (!any)
        goto cleanup; /* too few peers: no evidence (unknown unless baselines speak) */
    /* peers that spread more than the rules' noisy level per window: a noisy
     * metric, judged on persistence only */
    double typical = fp_median_select(spread, nsp);
    bool noisy = cls->noisy || (!cls->absolute && typical > g->rules->base_noisy);
    if (!cls->absolute && isfinite(cls->fail))
        FP_CHECK(note_blind(g, k, cls, &g->ser[sers[0]], typical, m - sp.worse));
    for (size_t i = 0; i < m; i++) {
        const series *se = &g->ser[sers[i]];
        const limits *lim = worse[i] ? &split_lim : cls;
        for (int w = 0; w < W; w++) {
            size_t x = i * (size_t)W + (size_t)w;
            ws[w].level = -1;
            if (isnan(row[x]) || isnan(centre[w]))
                continue;
            score_log(lim, better, row[x], cls->absolute ? NAN : lg[x], centre[w], ec[w],
                      scale[w], g->rules->scale_floor, g->rules->strong_factor, &ws[w]);
        }
        size_t before = g->nreasons;
        reference ref = {.runs = 0, .windows = (int)(m - sp.worse), .noisy = noisy};
        FP_CHECK(conclude(g, se, ws, W, FP_EV_PEERS, lim, &ref));
        if (cls->absolute && g->nreasons > before)
            note_cost(&g->reasons[g->nreasons - 1].r, ws, W, m);
        if (worse[i] && g->nreasons > before)
            snprintf(g->reasons[g->nreasons - 1].r.note, sizeof g->reasons[0].r.note,
                     "split peers: %zu of %zu are %.2fx worse than the other %zu (gap %.2fx)%s",
                     sp.worse, sp.worse + sp.better, sp.factor, sp.better, sp.gap,
                     g->contended ? "; contended" : "");
    }
cleanup:
    free(worse);
    return st;
}

/* ---- baseline evidence (drift and fleet) -------------------------------------------------- */

/* sqrt(a^2 + b^2) of the finite ones of two relative spreads (NaN: none). */
static double combine(double a, double b)
{
    if (!isfinite(a))
        return b;
    if (!isfinite(b))
        return a;
    return sqrt(a * a + b * b);
}

/* The Student-t quantile with dof degrees of freedom at the normal quantile
 * z (the Cornish-Fisher expansion, Abramowitz & Stegun 26.7.5; within a few
 * percent for dof >= 3 and z <= 6). A spread estimated from few values is
 * itself uncertain: a threshold of z standard deviations becomes this many
 * estimated ones, so that the false-alarm rate stays the rule's. */
static double t_quantile(double z, double dof)
{
    if (!(dof < 1e4))
        return z;
    double n = dof < 3 ? 3 : dof, z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2,
           z9 = z7 * z2;
    return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
           (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n) +
           (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * n * n * n * n);
}

/* An entity's spread estimated from n runs, shrunk toward its SKU's: a
 * weighted mean of variances, the entity's with n - 1 degrees of freedom,
 * the SKU's with prior (runs' worth of weight). NaN where neither is known. */
static double shrink(double ent, double sku, int n, double prior)
{
    double we = isfinite(ent) && n > 1 ? n - 1 : 0, ws = isfinite(sku) ? prior : 0;
    if (we + ws <= 0)
        return isfinite(ent) ? ent : sku;
    double v = (we ? we * ent * ent : 0) + (ws ? ws * sku * sku : 0);
    return sqrt(v / (we + ws));
}

/* The relative spread one live window is expected to show around a
 * baseline's centre: run-to-run and within-run spread (drift, shrunk toward
 * the SKU's), or the spread between entities and within-run (fleet). The
 * part between runs (between entities: they differ run to run too) is at
 * least run_floor: a live run is another run. */
static double window_spread_of(const eng *g, const fp_baseline *b, const fp_baseline *sku,
                               fp_evidence ev, double run_floor)
{
    if (ev == FP_EV_FLEET) {
        double between = 1.4826 * b->mad / b->median;
        return combine(isfinite(between) && between > run_floor ? between
                       : run_floor > 0                          ? run_floor
                                                                : between,
                       b->window_spread);
    }
    int n = (int)b->nruns;
    double prior = g->rules->base_prior_runs;
    double rs = shrink(b->run_spread, sku ? sku->run_spread : NAN, n, prior);
    double ws = shrink(b->window_spread, sku ? sku->window_spread : NAN, n, prior);
    return combine(isfinite(rs) && rs > run_floor ? rs : run_floor > 0 ? run_floor : rs, ws);
}

/* A class's between-run spread: its documented default d (the class's
 * run_spread, weighing spread_prior entity-runs) and the one learned from
 * the store l (weighing its degrees of freedom dof), as a weighted mean of
 * variances. A young store (a few runs of one node) gets about d; a fleet
 * of many entities and runs what it shows. */
static double blend_spread(double d, double l, double dof, double prior)
{
    if (!isfinite(l) || dof <= 0)
        return d;
    if (d <= 0)
        return l;
    return sqrt((prior * d * d + dof * l * l) / (prior + dof));
}

/* Per rule class, the floors under every baseline spread, learned from the
 * SKU baselines of the run's keys:
 * - class_floor: the first quartile of their window spreads (the quiet end
 *   of the class), at least the rules' scale_floor;
 * - run_floor: the spread between runs the class's metrics show. A baseline
 *   of a handful of back-to-back runs cannot show it, so no baseline claims
 *   less: the class's run_spread where the store is young, blended with the
 *   median over the SKU rows of their run_spread (each the median over the
 *   SKU's entities: every entity of the store with the key) as runs and
 *   entities accumulate (blend_spread; dof: entity-runs less entities). */
static fp_status learn_floors(eng *g)
{
    const fp_rules *r = g->rules;
    size_t nc = (size_t)r->nclasses;
    g->class_floor = malloc((2 * nc + 1) * sizeof *g->class_floor);
    g->run_floor = g->class_floor ? g->class_floor + nc : NULL;
    size_t cap = g->nkeys * (g->nsku + 1) + 1;
    double *v = malloc(3 * cap * sizeof *v), *rs = v + cap, *dof = rs + cap;
    fp_status st = FP_OK;
    FP_CHECK_ALLOC(g->class_floor);
    FP_CHECK_ALLOC(v);
    for (size_t c = 0; c < nc; c++) {
        size_t n = 0, nr = 0;
        for (size_t k = 0; k < g->nkeys; k++) {
            if (g->keys[k].cls != &r->classes[c])
                continue;
            for (size_t s = 0; s < g->nsku; s++) {
                const fp_baseline *b = fp_baselines_sku(g->base, g->keys[k].text, g->sku[s]);
                if (!b || !(b->median > 0))
                    continue;
                double sp = window_spread_of(g, b, NULL, FP_EV_DRIFT, 0);
                if (isfinite(sp))
                    v[n++] = sp;
                if (isfinite(b->run_spread) && b->nruns > 1) {
                    rs[nr] = b->run_spread;
                    dof[nr++] = (double)b->count - (double)b->count / b->nruns;
                }
            }
        }
        double q = n ? fp_select_k(v, n, n / 4) : 0;
        g->class_floor[c] = q > r->scale_floor ? q : r->scale_floor;
        double l = nr ? fp_median_select(rs, nr) : NAN, d = nr ? fp_median_select(dof, nr) : 0;
        g->run_floor[c] = blend_spread(r->classes[c].run_spread, l, d, r->base_spread_prior);
    }
cleanup:
    free(v);
    return st;
}

/* Each series' baselines: bl[2s] its entity's own, bl[2s+1] its SKU's; NULL
 * where there is none or its key is not judged against baselines. Each key,
 * entity and SKU name is looked up once. */
static fp_status find_baselines(const eng *g, const fp_baseline **bl)
{
    char name[2 * FP_NAME_MAX + 32];
    size_t nk = g->nkeys, ns = g->nsku;
    uint32_t *key_id = malloc((nk + 1) * sizeof *key_id);
    uint32_t *ent_id = malloc((g->nents + 1) * sizeof *ent_id);
    const fp_baseline **sku_bl = malloc((nk * ns + 1) * sizeof *sku_bl);
    fp_status st = FP_OK;
    FP_CHECK_ALLOC(key_id);
    FP_CHECK_ALLOC(ent_id);
    FP_CHECK_ALLOC(sku_bl);
    for (size_t k = 0; k < nk; k++) {
        key_id[k] = fp_baselines_key_id(g->base, g->keys[k].text);
        for (size_t s = 0; s < ns; s++)
            sku_bl[k * ns + s] = fp_baselines_sku(g->base, g->keys[k].text, g->sku[s]);
    }
    /* an entity of the run's table: its id was found while the run was
     * interned (the table's range compared as addresses) */
    uintptr_t tab = g->table_bid ? (uintptr_t)g->run->rows->ents : 0;
    uintptr_t tab_end = tab + (tab ? g->run->rows->nents * sizeof(fp_entity) : 0);
    uint32_t next = 0; /* the entities come in about the baselines' order */
    for (size_t e = 0; e < g->nents; e++) {
        const fp_entity *x = g->ents[e].e;
        if ((uintptr_t)x >= tab && (uintptr_t)x < tab_end) {
            ent_id[e] = g->table_bid[((uintptr_t)x - tab) / sizeof(fp_entity)];
        } else {
            fp_entity_format(x, name, sizeof name);
            ent_id[e] = fp_baselines_entity_id_near(g->base, name, next);
        }
        if (ent_id[e] != FP_BASELINE_NONE)
            next = ent_id[e] + 1;
    }
    for (size_t s = 0; s < g->nser; s++) {
        const series *se = &g->ser[s];
        const fp_rule_class *cls = g->keys[se->key].cls;
        int32_t sku = g->ents[se->ent].sku;
        bool judged = cls && !cls->ignore && !cls->late;
        bl[2 * s] = judged ? fp_baselines_entity_at(g->base, key_id[se->key], ent_id[se->ent]) : NULL;
        bl[2 * s + 1] = judged && sku >= 0 ? sku_bl[se->key * ns + (size_t)sku] : NULL;
    }
cleanup:
    free(key_id);
    free(ent_id);
    free(sku_bl);
    return st;
}

/* How much worse an entity's own baseline b is than its SKU's (the run
 * summaries' for summary classes, else the medians): its persistent deficit,
 * as a fraction in the metric's better direction; NaN where either is
 * missing or the class is absolute. */
static double persistent_deficit(const key_info *k, const fp_baseline *b, const fp_baseline *sku)
{
    if (!sku || k->cls->absolute)
        return NAN;
    bool summary = k->use_summary && b->summary > 0 && sku->summary > 0;
    double e = summary ? b->summary : b->median, s = summary ? sku->summary : sku->median;
    if (!(e > 0 && s > 0))
        return NAN;
    return k->rep->better == FP_BETTER_HIGHER ? 1 - e / s : e / s - 1;
}

/* Judge a series against a baseline b (drift: the entity's own, sku its
 * SKU's for shrinking; fleet: the SKU's). Relative rules use the windows as
 * measured, never the run's summary alone where windows exist. */
static fp_status judge_baseline(eng *g, const series *se, const fp_baseline *b,
                                const fp_baseline *sku, fp_evidence ev, double shift,
                                window_score *ws)
{
    const key_info *k = &g->keys[se->key];
    limits eff = effective(g, k->cls);
    const fp_rules *r = g->rules;
    /* no verdict rests on a baseline of fewer runs (drift) or fewer
     * entity-runs (fleet) than the rules' minimum */
    if (!b || b->count == 0 || !(b->median > 0 || eff.absolute))
        return FP_OK;
    uint32_t behind = ev == FP_EV_DRIFT ? b->nruns : b->count;
    if (behind < (uint32_t)r->base_min_runs) {
        if (!g->ents[se->ent].explain)
            return FP_OK;
        fp_reason *rs;
        fp_status st = fp__det_series_reason(g, se, ev, FP_UNKNOWN, k->cls->name, &rs);
        if (st != FP_OK)
            return st;
        rs->value = rs->expected = rs->deviation = rs->z = rs->band = NAN;
        snprintf(rs->note, sizeof rs->note, "not judged: %s baseline of %u %s < min_runs %d",
                 ev == FP_EV_DRIFT ? "drift: entity" : "fleet: SKU", behind,
                 ev == FP_EV_DRIFT ? "runs" : "entity-runs", r->base_min_runs);
        return FP_OK;
    }
    if (ev == FP_EV_DRIFT)
        g->ser[se - g->ser].persist = persistent_deficit(k, b, sku);
    /* ranks sharing cores measure the scheduler as much as the device, and
     * how much it steals differs from one run to the next: against history
     * a contended run only warns (peers, sharing the same cores, decide) */
    if (g->contended)
        eff.fail = INFINITY;
    double c, s, own = NAN, floor_ = r->scale_floor;
    double run_floor = g->run_floor[k->cls - r->classes];
    reference ref = {.runs = (int)b->nruns, .windows = (int)(b->windows ? b->windows : 1)};
    const double *vals = g->vals + se->off;
    int n = k->windows;
    if (eff.absolute) {
        c = b->median + shift;
        s = 1.4826 * b->mad;
    } else if (k->use_summary && !eff.noisy && b->summary > 0) {
        /* summary classes (best of run, median over passes) judge the run's
         * summary against the baseline runs' summaries: on shared cores
         * the windows are the scheduler's, the best of them is the device's */
        c = log(b->summary) + shift;
        s = ev == FP_EV_FLEET ? b->summary_spread
                              : shrink(b->summary_spread, sku ? sku->run_spread : NAN,
                                       (int)b->nruns, r->base_prior_runs);
        if (!isfinite(s))
            s = r->scale_floor;
        s = s > floor_ ? s : floor_;
        own = s;
        s = s > run_floor ? s : run_floor; /* a summary differs between runs */
        ref.windows = 1;
    } else {
        c = log(b->median) + shift;
        own = window_spread_of(g, b, sku, ev, 0);
        s = window_spread_of(g, b, sku, ev, run_floor);
        if (!isfinite(s)) /* too few values for a spread: the pooled MAD */
            s = own = 1.4826 * b->mad / b->median;
        double cf = g->class_floor[k->cls - r->classes];
        floor_ = cf > floor_ ? cf : floor_;
        s = s > floor_ ? s : floor_;
        own = isfinite(own) && own > floor_ ? own : floor_;
        vals = g->wvals + se->woff; /* the windows as measured */
        n = k->raw_windows;
    }
    if (!eff.absolute) {
        /* noisy by its own spread (between runs, the class's floor may be
         * wider: that is no noise of its windows) */
        ref.noisy = eff.noisy || own > r->base_noisy;
        /* degrees of freedom of the spread: runs (and the SKU's prior runs)
         * for drift, entity-runs for fleet; where the class's between-run
         * floor sets it, the store's and the default's weight behind it */
        double dof = ev == FP_EV_FLEET ? (double)b->count - 1
                                       : (double)b->nruns - 1 +
                                             (sku && isfinite(sku->run_spread) ? r->base_prior_runs : 0);
        if (s > own * (1 + 1e-9) && dof < r->base_spread_prior)
            dof = r->base_spread_prior;
        eff.z = t_quantile(eff.z, dof);
    }
    double ec = eff.absolute ? c : exp(c);
    for (int w = 0; w < n; w++) {
        ws[w].level = -1;
        if (!isnan(vals[w]))
            score(&eff, k->rep->better, vals[w], c, ec, s, floor_, r->strong_factor, &ws[w]);
    }
    return conclude(g, se, ws, n, ev, &eff, &ref);
}

/* The median over windows of a series' live values, NaN when it has none.
 * buf: k.windows. */
static double live_median(const eng *g, const series *se, double *buf)
{
    const key_info *k = &g->keys[se->key];
    size_t c = 0;
    for (int w = 0; w < k->windows; w++)
        if (!isnan(g->vals[se->off + (size_t)w]))
            buf[c++] = g->vals[se->off + (size_t)w];
    return c ? fp_median_select(buf, c) : NAN;
}

/* How far the live run of a series (its median m) lies from a baseline: the
 * log ratio to the baseline's median (relative rules), or the difference
 * (absolute). NaN where either is missing. */
static double live_shift(const eng *g, const series *se, const fp_baseline *b, double m)
{
    const key_info *k = &g->keys[se->key];
    if (!b || b->count == 0 || !(b->median > 0 || k->cls->absolute))
        return NAN;
    if (k->cls->absolute)
        return m - b->median;
    return m > 0 ? log(m / b->median) : NAN;
}

/* A series' peer group for the fleet-wide shift: key x SKU (none last). */
static size_t shift_group(const eng *g, const series *se)
{
    int32_t sku = g->ents[se->ent].sku;
    return se->key * (g->nsku + 1) + (sku >= 0 ? (size_t)sku : g->nsku);
}

/* Drift and fleet evidence, planned: each series is judged relative to the
 * fleet-wide shift of its metric in this run (per key and SKU, the median
 * of the series' shifts from their baselines, over series on at least
 * min_peers nodes): a drift every peer shares (a driver, the room's
 * temperature, the time of day) is no entity's fault, and peer evidence
 * judges the level. Fewer nodes than that could all share one fault (the
 * devices of one slow node): no shift then. */
fp_status fp__det_base_plan(eng *g, fp__base_plan *p)
{
    size_t nb = g->nkeys * (g->nsku + 1), n = g->nser;
    int maxw = 1;
    for (size_t k = 0; k < g->nkeys; k++)
        maxw = g->keys[k].windows > maxw ? g->keys[k].windows : maxw;
    memset(p, 0, sizeof *p);
    p->bl = fp_malloc_huge((2 * n + 1) * sizeof *p->bl);
    p->shift = malloc((2 * nb + 1) * sizeof *p->shift);
    uint32_t *first = calloc(nb + 2, sizeof *first);
    /* by bucket: each series' live shifts from its baselines (drift's, then
     * fleet's) and its node */
    double *sh = fp_malloc_huge((2 * n + 1) * sizeof *sh);
    int32_t *node = fp_malloc_huge((n + 1) * sizeof *node);
    /* per node and e: the bucket + 1 that counted the node */
    size_t *seen = calloc(2 * (g->nnodes + 1), sizeof *seen);
    double *buf = malloc((size_t)maxw * sizeof *buf);
    fp_status st = FP_OK;
    FP_CHECK_ALLOC(p->bl);
    FP_CHECK_ALLOC(p->shift);
    FP_CHECK_ALLOC(first);
    FP_CHECK_ALLOC(sh);
    FP_CHECK_ALLOC(node);
    FP_CHECK_ALLOC(seen);
    FP_CHECK_ALLOC(buf);
    fp_populate(p->bl, (2 * n + 1) * sizeof *p->bl); /* each written once, in order */
    FP_CHECK(learn_floors(g));
    const fp_baseline **bl = p->bl;
    double *shift = p->shift;
    /* each series' baselines (drift, fleet); its live shifts from them put
     * in its bucket, key x SKU (a counting sort), in series order: each pass
     * reads the series in order */
    FP_CHECK(find_baselines(g, bl));
    for (size_t s = 0; s < n; s++)
        if (bl[2 * s] || bl[2 * s + 1])
            first[shift_group(g, &g->ser[s]) + 1]++;
    for (size_t b = 0; b < nb; b++)
        first[b + 1] += first[b];
    for (size_t s = 0; s < n; s++) { /* first[b]: where bucket b's next goes */
        const series *se = &g->ser[s];
        if (!bl[2 * s] && !bl[2 * s + 1])
            continue;
        double m = live_median(g, se, buf);
        size_t at = first[shift_group(g, se)]++;
        sh[at] = live_shift(g, se, bl[2 * s], m);
        sh[n + at] = live_shift(g, se, bl[2 * s + 1], m);
        node[at] = g->ents[se->ent].node;
    }
    /* first[b] is now the end of bucket b; the fleet-wide shifts per bucket:
     * the median of its finite shifts, where they come from enough nodes */
    for (size_t b = 0, lo = 0; b < nb; lo = first[b++]) {
        for (size_t e = 0; e < 2; e++) {
            double *x = sh + e * n;
            size_t c = lo, nodes = 0;
            for (size_t i = lo; i < first[b]; i++) {
                if (!isfinite(x[i]))
                    continue;
                x[c++] = x[i]; /* the finite ones to the front */
                if (node[i] >= 0 && seen[2 * (size_t)node[i] + e] != b + 1) {
                    seen[2 * (size_t)node[i] + e] = b + 1;
                    nodes++;
                }
            }
            shift[2 * b + e] =
                nodes >= (size_t)g->rules->min_peers ? fp_median_select(x + lo, c - lo) : 0;
        }
    }
cleanup:
    free(buf);
    free(sh);
    free(node);
    free(first);
    free(seen);
    if (st != FP_OK)
        fp__det_base_plan_free(p);
    return st;
}

fp_status fp__det_base_judge(eng *g, const fp__base_plan *p, size_t s0, size_t s1,
                             window_score *ws)
{
    fp_status st = FP_OK;
    for (size_t s = s0; s < s1 && st == FP_OK; s++) {
        const fp_baseline *own = p->bl[2 * s], *sku = p->bl[2 * s + 1];
        if (!own && !sku)
            continue;
        const series *se = &g->ser[s];
        size_t b = shift_group(g, se);
        st = judge_baseline(g, se, own, sku, FP_EV_DRIFT, p->shift[2 * b], ws);
        if (st == FP_OK)
            st = judge_baseline(g, se, sku, NULL, FP_EV_FLEET, p->shift[2 * b + 1], ws);
    }
    return st;
}

void fp__det_base_plan_free(fp__base_plan *p)
{
    free(p->bl);
    free(p->shift);
    memset(p, 0, sizeof *p);
}

/* A device's typical value of a key on a node, for comparing a node's
 * devices with each other. */
typedef struct key_node {
    uint32_t key;
    int32_t node;
    double value; /* the series' median over windows */
} key_node;

static int cmp_key_node(const void *a, const void *b)
{
    const key_node *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* The first of pairs[0..n) (sorted) at or after (key, node), and how many
 * share it in *count. */
static size_t find_key_node(const key_node *pairs, size_t n, uint32_t key, int32_t node,
                            size_t *count)
{
    key_node p = {key, node, 0};
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cmp_key_node(&pairs[mid], &p) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *count = 0;
    while (lo + *count < n && cmp_key_node(&pairs[lo + *count], &p) == 0)
        (*count)++;
    return lo;
}

/* Per held host-side reason (HOLD_HOST): whether its node's devices share
 * the deficit -- the median over the node's devices of how much worse their
 * values are than the peers' (the reason's expected) is at least half the
 * reason's own, or the class's cost floor -- or the entity cannot be told
 * from its host (a node of one device, an entity that is no device).
 * shared[i] for reason i. FP_ENOMEM. */
static fp_status host_shared(const eng *g, bool *shared)
{
    size_t nheld = 0, ndev = 0;
    for (size_t i = 0; i < g->nreasons; i++)
        nheld += (g->reasons[i].hold & HOLD_HOST) != 0;
    if (!nheld)
        return FP_OK;
    fp_status st = FP_OK;
    key_node *held = malloc(nheld * sizeof *held), *dev = NULL;
    bool *key_held = NULL;
    int maxw = 1;
    for (size_t k = 0; k < g->nkeys; k++)
        maxw = g->keys[k].windows > maxw ? g->keys[k].windows : maxw;
    double *buf = malloc((size_t)maxw * sizeof *buf), *loss = NULL;
    FP_CHECK_ALLOC(held);
    FP_CHECK_ALLOC(buf);
    nheld = 0;
    for (size_t i = 0; i < g->nreasons; i++)
        if (g->reasons[i].hold & HOLD_HOST) {
            const series *se = &g->ser[g->reasons[i].ser];
            held[nheld++] = (key_node){se->key, g->ents[se->ent].node, 0};
        }
    qsort(held, nheld, sizeof *held, cmp_key_node);
    /* every device's median of the held keys on the held nodes (a series of
     * a key or a node none is held on is passed over without a search) */
    dev = fp_malloc_huge((g->nser + 1) * sizeof *dev);
    key_held = calloc(g->nkeys + g->nnodes + 1, sizeof *key_held);
    FP_CHECK_ALLOC(dev);
    FP_CHECK_ALLOC(key_held);
    bool *node_held = key_held + g->nkeys;
    for (size_t i = 0; i < nheld; i++) {
        key_held[held[i].key] = true;
        if (held[i].node >= 0)
            node_held[held[i].node] = true;
    }
    for (size_t s = 0; s < g->nser; s++) {
        const series *se = &g->ser[s];
        if (!key_held[se->key])
            continue;
        const ent_info *ei = &g->ents[se->ent];
        size_t c = 0;
        if (ei->kind != FP_ENT_GPU || ei->node < 0 || !node_held[ei->node] ||
            (find_key_node(held, nheld, se->key, ei->node, &c), !c))
            continue;
        const key_info *k = &g->keys[se->key];
        size_t nv = 0;
        for (int w = 0; w < k->windows; w++)
            if (!isnan(g->vals[se->off + (size_t)w]))
                buf[nv++] = g->vals[se->off + (size_t)w];
        if (nv)
            dev[ndev++] = (key_node){se->key, ei->node, fp_median_select(buf, nv)};
    }
    qsort(dev, ndev, sizeof *dev, cmp_key_node);
    loss = malloc((ndev + 1) * sizeof *loss);
    FP_CHECK_ALLOC(loss);
    for (size_t i = 0; i < g->nreasons; i++) {
        const owned_reason *o = &g->reasons[i];
        if (!(o->hold & HOLD_HOST))
            continue;
        const series *se = &g->ser[o->ser];
        size_t n = 0, at = find_key_node(dev, ndev, se->key, g->ents[se->ent].node, &n);
        if (g->ents[se->ent].kind != FP_ENT_GPU || n <= 1) {
            shared[i] = true;
            continue;
        }
        bool higher = g->keys[se->key].rep->better == FP_BETTER_HIGHER;
        double e = o->r.expected;
        for (size_t j = 0; j < n; j++)
            loss[j] = higher ? 1 - dev[at + j].value / e : dev[at + j].value / e - 1;
        double half = 0.5 * o->r.deviation, cost = g->keys[se->key].cls->cost;
        shared[i] = fp_median_select(loss, n) >= (half < cost ? half : cost);
    }
cleanup:
    free(held);
    free(dev);
    free(key_held);
    free(buf);
    free(loss);
    return st;
}

/* Whether a held run summary on shared cores stands alone: where another
 * test of the entity was judged against its peers too, none of that test's
 * series is out of bounds; where this test alone was, none of its other
 * series is (mask: the held series' windows). The kernels of one test (the
 * four STREAM kernels) run back to back in the same stretch of the shared
 * cores and memory bus, and read slow together on a healthy rank. */
static bool shared_alone(const eng *g, const series *se, uint64_t mask, bool *other)
{
    int32_t test = g->keys[se->key].test;
    *other = false;
    for (int32_t s = g->ents[se->ent].first_ser; s >= 0; s = g->ser[s].ent_next) {
        if (g->keys[g->ser[s].key].test == test || g->ser[s].peers == PEERS_NONE)
            continue;
        if (g->ser[s].peers == PEERS_OUT)
            return false;
        *other = true;
    }
    return *other || !(g->ents[se->ent].bad2 & mask);
}

/* Decide the held fails once all evidence is in. A short episode (too few
 * windows to be persistent) fails only where another series of the same
 * entity is out of bounds against its peers in one of its windows: a
 * transient dip of one metric never fails alone; nor, on shared cores, does
 * a run summary (shared_alone: another test must agree). A host-side metric
 * failing against its peers on most of its node's devices is the host's (a
 * whole-run dip or a host fault look alike): it warns, needing a re-test,
 * unless the run was confirmed; on one device of several it is the device's,
 * and fails. Peer or fleet evidence against an entity whose own baseline
 * (min_runs runs) saw no change is its normal where its baselines lie below
 * its SKU's by less than the cost floor (a quirk within tolerance): it
 * warns; at the floor and beyond, a job on it loses that much in every run,
 * whatever its history: it fails. FP_ENOMEM. */
fp_status fp__det_release(eng *g)
{
    fp_status st = FP_OK;
    bool *shared = calloc(g->nreasons + 1, sizeof *shared);
    FP_CHECK_ALLOC(shared);
    FP_CHECK(host_shared(g, shared));
    for (size_t i = 0; i < g->nreasons; i++) {
        owned_reason *o = &g->reasons[i];
        if (!o->hold)
            continue;
        const series *se = &g->ser[o->ser];
        bool other_test = false;
        bool episode = (o->hold & HOLD_EPISODE) && !(g->ents[se->ent].bad2 & o->mask);
        bool summary = (o->hold & HOLD_SHARED) && shared_alone(g, se, o->mask, &other_test);
        bool alone = episode || summary;
        /* a stable offset its own baseline knows: its normal below the cost
         * floor; at the floor and beyond, a job on it loses that much in
         * every run (a fail-slow device) */
        double cost = g->keys[se->key].cls->cost;
        bool stable = (o->hold & HOLD_DRIFT) && se->drift_judged && se->drift == FP_PASS;
        bool normal = stable && isfinite(se->persist) && se->persist < cost;
        if (!alone && !shared[i] && !normal) {
            fp__det_set_ent_verdict(g, se->ent, FP_FAIL);
            if (stable && isfinite(se->persist) && !o->r.note[0])
                snprintf(o->r.note, sizeof o->r.note,
                         "persistent: its baselines %.1f%% below its SKU's too (cost floor %.0f%%)",
                         100 * se->persist, 100 * cost);
            continue;
        }
        o->r.verdict = FP_WARN;
        if (episode)
            snprintf(o->r.note, sizeof o->r.note,
                     "transient: out of bounds in %d of %d windows, no other metric agrees",
                     o->r.windows_bad, o->r.windows);
        else if (summary)
            snprintf(o->r.note, sizeof o->r.note, "shared cores: no other %s agrees (%s)",
                     other_test ? "test" : "metric",
                     g->contended_note ? g->contended_note : "contended");
        else if (shared[i]) {
            o->r.needs_retest = true;
            snprintf(o->r.note, sizeof o->r.note,
                     "host-side metric, node-wide: needs a re-test to fail");
        } else
            snprintf(o->r.note, sizeof o->r.note,
                     "its normal: its baselines %.1f%% below its SKU's, within the cost floor",
                     100 * se->persist);
    }
cleanup:
    free(shared);
    return st;
}
