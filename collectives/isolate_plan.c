/* Isolation in rounds: the strategies' pure logic (docs/isolate.md, The
 * plan). Units are 0..n-1; a group fails when any of its units has a fault
 * (every group it is in fails) or when it holds both ends of a bad link.
 * Suspects live in sets:
 *  - a node set holds units one of which has a fault; bisect halves it,
 *    each half padded with units that passed, until one unit is left, which
 *    is paired with units that passed (its confirmation);
 *  - a pair set holds units that each passed, but failed together: the fault
 *    needs two of them (a link). Its halves are tested, then the two
 *    cross-boundary unions of their halves; a failing group of two units is
 *    the link.
 * grid lays the units out in rows and columns: after both, the units of a
 * failing group that no passing group cleared are the candidates, each
 * paired with units that passed in the third round. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/isolate.h"
#include "fleetprint/stats.h"

static const char *const strategy_names[FP_ISO_STRATEGY_COUNT] = {"grid", "bisect", "auto"};
static const char *const outcome_names[FP_ISO_OUTCOME_COUNT] = {"ok", "slow", "wrong", "hung"};
static const char *const role_names[FP_ISO_ROLE_COUNT] = {"row",  "column", "half", "probe",
                                                           "link", "pair",   "control"};

const char *fp_iso_strategy_name(fp_iso_strategy s)
{
    return (int)s >= 0 && s < FP_ISO_STRATEGY_COUNT ? strategy_names[s] : "?";
}

bool fp_iso_strategy_parse(const char *text, fp_iso_strategy *out)
{
    for (int i = 0; i < FP_ISO_STRATEGY_COUNT; i++)
        if (strcmp(text, strategy_names[i]) == 0) {
            *out = (fp_iso_strategy)i;
            return true;
        }
    return false;
}

const char *fp_iso_outcome_name(fp_iso_outcome o)
{
    return (int)o >= 0 && o < FP_ISO_OUTCOME_COUNT ? outcome_names[o] : "?";
}

const char *fp_iso_role_name(fp_iso_role r)
{
    return (int)r >= 0 && r < FP_ISO_ROLE_COUNT ? role_names[r] : "?";
}

/* ---- state -------------------------------------------------------------------------- */

typedef struct iso_set {
    int *units;
    int n;
    bool pair;  /* the fault needs two of its units together */
    bool link;  /* a pair set of two that failed: to be confirmed */
    int stage;  /* pair sets: -1 the whole set again, 0 its halves, 1 and 2 the
                   cross-boundary unions; links: 0 the ends apart, 1 together */
    bool done;
} iso_set;

/* What a group of a round tests: part 0 or 1 of set (the halves, or a pair
 * set's two unions; a link's confirmation: 0 both ends, 1 and 2 each end
 * with a unit that passed), or nothing (-1: a control, or a grid row or
 * column). */
typedef struct group_tag {
    int set, part;
    int own;      /* its first own units are the set's; the rest pads that passed */
    bool handled; /* a failing group: explained by a finding, or its pair set made */
} group_tag;

enum { MAX_NOTES = 64, MAX_LINKS = 64, SLOW_CONFIRMS = 2, MIN_GROUP = 4 };

struct fp_iso_plan {
    fp_iso_opts o;
    int n;
    bool *cleared;       /* passed in some group */
    int *named;          /* round after which it was a failing group's only suspect; 0 */
    bool *culprit;       /* a confirmed node finding */
    int *inset;          /* open sets that hold it */
    int *slow_pairings;  /* pairings with units that passed in which it was slow */
    int *failures;       /* failing groups it was in */
    iso_set *sets;
    int nsets, capsets;
    fp_iso_round *rounds;
    group_tag **tags;    /* per round, per group */
    int nrounds, caprounds;
    bool recorded;       /* the last round was recorded */
    int grid_rows, grid_cols;
    bool grid;           /* the grid's rows or columns are still to come or to judge */
    bool over, truncated;
    fp_iso_finding *findings;
    size_t nfindings, capfindings;
    fp_iso_note notes[MAX_NOTES];
    size_t nnotes;
    int named_link[MAX_LINKS]; /* per link candidate (set index mod MAX_LINKS): when it failed */
};

/* A suspicion that ended without a finding: its units (the first
 * FP_ISO_NOTE_UNITS of them) and why. */
__attribute__((format(printf, 4, 5))) static void note(fp_iso_plan *p, const int *units, int n,
                                                       const char *fmt, ...)
{
    if (p->nnotes >= MAX_NOTES)
        return;
    fp_iso_note *x = &p->notes[p->nnotes++];
    memset(x, 0, sizeof *x);
    x->nunits = n;
    for (int i = 0; i < n && i < FP_ISO_NOTE_UNITS; i++)
        x->units[i] = units[i];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->what, sizeof x->what, fmt, ap);
    va_end(ap);
}

/* A new open set over units[0..n) (copied); its index, or -1 without memory. */
static int set_add(fp_iso_plan *p, const int *units, int n, bool pair, int stage)
{
    if (p->nsets == p->capsets) {
        int cap = p->capsets ? 2 * p->capsets : 16;
        iso_set *s = realloc(p->sets, (size_t)cap * sizeof *s);
        if (!s)
            return -1;
        p->sets = s;
        p->capsets = cap;
    }
    iso_set *s = &p->sets[p->nsets];
    memset(s, 0, sizeof *s);
    s->units = malloc((size_t)(n ? n : 1) * sizeof *s->units);
    if (!s->units)
        return -1;
    memcpy(s->units, units, (size_t)n * sizeof *units);
    s->n = n;
    s->pair = pair;
    s->stage = stage;
    for (int i = 0; i < n; i++)
        p->inset[units[i]]++;
    return p->nsets++;
}

/* The set is settled: its units leave suspicion (unless another set holds them). */
static void set_close(fp_iso_plan *p, int si)
{
    iso_set *s = &p->sets[si];
    if (s->done)
        return;
    s->done = true;
    for (int i = 0; i < s->n; i++)
        p->inset[s->units[i]]--;
}

/* Whether an open set holds u: a suspect, or one end of a suspected link
 * (neither pads, partners nor controls another group). */
static bool suspected(const fp_iso_plan *p, int u)
{
    return p->inset[u] > 0;
}

static fp_status add_finding(fp_iso_plan *p, const fp_iso_finding *f)
{
    if (p->nfindings == p->capfindings) {
        size_t cap = p->capfindings ? 2 * p->capfindings : 8;
        fp_iso_finding *a = realloc(p->findings, cap * sizeof *a);
        if (!a)
            return FP_ENOMEM;
        p->findings = a;
        p->capfindings = cap;
    }
    p->findings[p->nfindings++] = *f;
    return FP_OK;
}

fp_status fp_iso_plan_open(const fp_iso_opts *o, fp_iso_plan **out, char *err, size_t len)
{
    *out = NULL;
    if (o->nunits < 4) {
        snprintf(err, len, "isolation needs at least 4 nodes, not %d: each candidate is paired "
                 "with nodes that passed", o->nunits);
        return FP_EUSAGE;
    }
    if (!(o->slow_limit >= 0 && o->slow_limit < 1)) {
        snprintf(err, len, "slow limit %g: expected a factor from 0 (not judged) below 1",
                 o->slow_limit);
        return FP_EUSAGE;
    }
    if (o->max_rounds < 2 || (int)o->strategy < 0 || o->strategy >= FP_ISO_STRATEGY_COUNT) {
        snprintf(err, len, "max rounds %d: expected 2 or more", o->max_rounds);
        return FP_EUSAGE;
    }
    fp_iso_plan *p = calloc(1, sizeof *p);
    if (!p)
        return FP_ENOMEM;
    p->o = *o;
    p->n = o->nunits;
    p->cleared = calloc((size_t)p->n, sizeof *p->cleared);
    p->named = calloc((size_t)p->n, sizeof *p->named);
    p->culprit = calloc((size_t)p->n, sizeof *p->culprit);
    p->inset = calloc((size_t)p->n, sizeof *p->inset);
    p->slow_pairings = calloc((size_t)p->n, sizeof *p->slow_pairings);
    p->failures = calloc((size_t)p->n, sizeof *p->failures);
    if (!p->cleared || !p->named || !p->culprit || !p->inset || !p->slow_pairings ||
        !p->failures) {
        fp_iso_plan_free(p);
        return FP_ENOMEM;
    }
    /* rows of at least two: floor(sqrt(n)) rows of ceil(n / rows) */
    p->grid_rows = (int)floor(sqrt((double)p->n));
    p->grid_cols = (p->n + p->grid_rows - 1) / p->grid_rows;
    p->grid = o->strategy != FP_ISO_BISECT;
    p->recorded = true;
    *out = p;
    return FP_OK;
}

void fp_iso_plan_free(fp_iso_plan *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nsets; i++)
        free(p->sets[i].units);
    for (int i = 0; i < p->nrounds; i++) {
        free(p->rounds[i].groups);
        free(p->rounds[i].units);
        free(p->tags[i]);
    }
    free(p->sets);
    free(p->rounds);
    free(p->tags);
    free(p->cleared);
    free(p->named);
    free(p->culprit);
    free(p->inset);
    free(p->slow_pairings);
    free(p->failures);
    free(p->findings);
    free(p);
}

/* ---- building a round ---------------------------------------------------------------- */

static fp_iso_round *round_new(fp_iso_plan *p)
{
    if (p->nrounds == p->caprounds) {
        int cap = p->caprounds ? 2 * p->caprounds : 8;
        fp_iso_round *r = realloc(p->rounds, (size_t)cap * sizeof *r);
        if (!r)
            return NULL;
        p->rounds = r;
        group_tag **t = realloc(p->tags, (size_t)cap * sizeof *t);
        if (!t)
            return NULL;
        p->tags = t;
        p->caprounds = cap;
    }
    fp_iso_round *r = &p->rounds[p->nrounds];
    memset(r, 0, sizeof *r);
    r->index = p->nrounds + 1;
    /* a round holds each unit at most once, so n groups of n units bound it */
    r->groups = calloc((size_t)p->n, sizeof *r->groups);
    r->units = calloc((size_t)p->n, sizeof *r->units);
    p->tags[p->nrounds] = calloc((size_t)p->n, sizeof *p->tags[0]);
    if (!r->groups || !r->units || !p->tags[p->nrounds]) {
        free(r->groups);
        free(r->units);
        free(p->tags[p->nrounds]);
        return NULL;
    }
    p->nrounds++;
    return r;
}

/* Append a group of units[0..k) to the last round (k >= 2), of which the
 * first own are the tested set's (the rest pad it). */
static void group_add(fp_iso_plan *p, fp_iso_round *r, fp_iso_role role, const int *units, int k,
                      int own, int subject, int set, int part)
{
    fp_iso_group *g = &r->groups[r->ngroups];
    memset(g, 0, sizeof *g);
    g->role = role;
    g->first = r->nunits;
    g->n = k;
    g->subject = subject;
    g->busbw = g->seconds = g->expected = NAN;
    memcpy(r->units + r->nunits, units, (size_t)k * sizeof *units);
    r->nunits += k;
    p->tags[p->nrounds - 1][r->ngroups] = (group_tag){set, part, own, false};
    r->ngroups++;
}

/* The grid's rows (columns false) or columns, a group of one unit merged
 * into the one before it. */
static void grid_groups(fp_iso_plan *p, fp_iso_round *r, bool columns)
{
    int lines = columns ? p->grid_cols : p->grid_rows;
    int *buf = malloc((size_t)p->n * sizeof *buf);
    if (!buf)
        return;
    for (int l = 0; l < lines; l++) {
        int k = 0;
        for (int u = 0; u < p->n; u++)
            if ((columns ? u % p->grid_cols : u / p->grid_cols) == l)
                buf[k++] = u;
        if (k == 0)
            continue;
        if (k == 1 && r->ngroups > 0) { /* too small: joins the line before it */
            fp_iso_group *g = &r->groups[r->ngroups - 1];
            r->units[r->nunits++] = buf[0];
            g->n++;
            continue;
        }
        group_add(p, r, columns ? FP_ISO_COLUMN : FP_ISO_ROW, buf, k, k, -1, -1, -1);
    }
    free(buf);
}

/* The units that may pad a half, partner a candidate or form a control:
 * passed, not a finding, not under suspicion; in unit order. */
typedef struct ranked {
    int failures, unit;
} ranked;

/* More failures first, then by unit: a stable order every rank agrees on. */
static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->failures != y->failures)
        return x->failures > y->failures ? -1 : 1;
    return (x->unit > y->unit) - (x->unit < y->unit);
}

static int pool_of(const fp_iso_plan *p, const bool *used, int *pool)
{
    int k = 0;
    ranked *rk = malloc((size_t)p->n * sizeof *rk);
    for (int u = 0; u < p->n; u++)
        if (p->cleared[u] && !p->culprit[u] && !used[u] && !suspected(p, u)) {
            if (rk)
                rk[k] = (ranked){p->failures[u], u};
            pool[k++] = u;
        }
    /* those that were in fewer failing groups last, where pads and partners
     * are taken: a fault that one noisy reading cleared must not slow the
     * candidates it partners */
    if (rk) {
        qsort(rk, (size_t)k, sizeof *rk, cmp_ranked);
        for (int i = 0; i < k; i++)
            pool[i] = rk[i].unit;
    }
    free(rk);
    return k;
}

static bool any_used(const bool *used, const int *units, int n)
{
    for (int i = 0; i < n; i++)
        if (used[units[i]])
            return true;
    return false;
}

/* The two groups a pair set's stage tests, into a/na and b/nb: its halves
 * A and B (stage 0), then A1+B1 and A2+B2, then A1+B2 and A2+B1. A set of
 * two is tested whole. */
static void pair_parts(const iso_set *s, int *a, int *na, int *b, int *nb)
{
    *na = *nb = 0;
    if (s->stage < 0) { /* the whole set again */
        memcpy(a, s->units, (size_t)s->n * sizeof *a);
        *na = s->n;
        return;
    }
    if (s->n == 2) {
        if (s->stage == 0) {
            a[(*na)++] = s->units[0];
            a[(*na)++] = s->units[1];
        }
        return;
    }
    int h = s->n / 2, h1 = h / 2, h2 = h + (s->n - h) / 2;
    const int *u = s->units;
    for (int i = 0; i < s->n; i++) {
        bool in_a = i < h, first = in_a ? i < h1 : i < h2;
        int part; /* 0: a, 1: b */
        if (s->stage == 0)
            part = in_a ? 0 : 1;
        else if (s->stage == 1)
            part = first ? 0 : 1;
        else
            part = in_a == first ? 0 : 1;
        if (part == 0)
            a[(*na)++] = u[i];
        else
            b[(*nb)++] = u[i];
    }
}

/* A partner for u from pool[0..*npool), taken out: one of those at its
 * end that were in the fewest failing groups, which one turning with the
 * round, so that a unit paired again gets another partner. */
static int take_partner(const fp_iso_plan *p, int *pool, int *npool, int u, int round)
{
    int best = p->failures[pool[*npool - 1]], m = 1;
    while (m < *npool && p->failures[pool[*npool - 1 - m]] == best)
        m++;
    int k = *npool - 1 - (int)(((unsigned)u * 7u + (unsigned)round) % (unsigned)m);
    int v = pool[k];
    memmove(pool + k, pool + k + 1, (size_t)(*npool - 1 - k) * sizeof *pool);
    --*npool;
    return v;
}

/* Add a group of units[0..k) padded with units from the pool up to min
 * (the first turning with the round, take_partner; the rest from the pool's
 * end), all marked used. A candidate alone (subject >= 0) needs at least
 * one pad: false, and nothing added, when the pool is empty. */
static bool add_padded(fp_iso_plan *p, fp_iso_round *r, bool *used, int *pool, int *npool,
                       fp_iso_role role, const int *units, int k, int min, int subject, int set,
                       int part)
{
    if (subject >= 0 && *npool == 0)
        return false;
    int *g = malloc((size_t)(k + min + 1) * sizeof *g);
    if (!g)
        return false;
    memcpy(g, units, (size_t)k * sizeof *units);
    int n = k;
    if (n < min && *npool > 0)
        g[n++] = take_partner(p, pool, npool, units[0], r->index);
    while (n < min && *npool > 0)
        g[n++] = pool[--*npool];
    for (int i = 0; i < n; i++)
        used[g[i]] = true;
    group_add(p, r, role, g, n, k, subject, set, part);
    free(g);
    return true;
}

/* Place one half of a node set: two or more units as a half, one unit as a
 * pair (with units that passed); either padded up to min. False when a pair
 * finds no partner. */
static bool place_half(fp_iso_plan *p, fp_iso_round *r, bool *used, int *pool, int *npool,
                       const int *units, int k, int set, int part, int min)
{
    if (k == 0)
        return true;
    return add_padded(p, r, used, pool, npool, k == 1 ? FP_ISO_PAIR : FP_ISO_HALF, units, k,
                      min, k == 1 ? units[0] : -1, set, part);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The median size of r's groups, at least 2 (the size of its controls). */
static int median_size(const fp_iso_round *r)
{
    int n = r->ngroups, *sizes = malloc((size_t)(n ? n : 1) * sizeof *sizes), m = 2;
    if (!sizes)
        return m;
    for (int g = 0; g < n; g++)
        sizes[g] = r->groups[g].n;
    qsort(sizes, (size_t)n, sizeof *sizes, cmp_int);
    m = n && sizes[n / 2] > 2 ? sizes[n / 2] : 2;
    free(sizes);
    return m;
}

/* A round from the open sets, with controls from the units left over.
 * NULL when nothing could be placed. */
static fp_iso_round *open_round(fp_iso_plan *p)
{
    bool *used = calloc((size_t)p->n, sizeof *used);
    int *pool = malloc((size_t)p->n * sizeof *pool), *a = malloc((size_t)p->n * sizeof *a),
        *b = malloc((size_t)p->n * sizeof *b);
    fp_iso_round *r = NULL;
    if (!used || !pool || !a || !b)
        goto done;
    int npool = pool_of(p, used, pool);
    /* pool[] is taken from its end: the lowest units stay for the last */
    r = round_new(p);
    if (!r)
        goto done;
    /* the size of the round's groups: halves of the largest node set, and
     * at least MIN_GROUP (a group of two on shared cores is timed in whole
     * time slices: twice or thrice its peers' period by chance) */
    int min = p->n / 4 < MIN_GROUP ? p->n / 4 : MIN_GROUP;
    min = min < 2 ? 2 : min;
    for (int i = 0; i < p->nsets; i++) {
        const iso_set *s = &p->sets[i];
        if (!s->done && !s->pair && (s->n + 1) / 2 > min)
            min = (s->n + 1) / 2;
    }
    for (int i = 0; i < p->nsets; i++) {
        iso_set *s = &p->sets[i];
        if (s->done || any_used(used, s->units, s->n))
            continue;
        if (s->link && s->stage == 0) { /* each end with units that passed */
            if (npool < 2)
                continue;
            add_padded(p, r, used, pool, &npool, FP_ISO_PAIR, s->units, 1, min, s->units[0], i,
                       1);
            add_padded(p, r, used, pool, &npool, FP_ISO_PAIR, s->units + 1, 1, min,
                       s->units[1], i, 2);
            continue;
        }
        if (s->link) { /* then both ends together again */
            add_padded(p, r, used, pool, &npool, FP_ISO_LINK, s->units, 2, min, -1, i, 0);
            continue;
        }
        if (s->pair) {
            int na, nb;
            pair_parts(s, a, &na, b, &nb);
            if (na < 2 && nb < 2) { /* no part can hold two of its units */
                set_close(p, i);
                continue;
            }
            if (na >= 2)
                add_padded(p, r, used, pool, &npool, FP_ISO_PROBE, a, na, min, -1, i, 0);
            if (nb >= 2)
                add_padded(p, r, used, pool, &npool, FP_ISO_PROBE, b, nb, min, -1, i, 1);
            continue;
        }
        int h = s->n / 2;
        if (s->n == 1) {
            place_half(p, r, used, pool, &npool, s->units, 1, i, 0, min); /* or it waits */
            continue;
        }
        int before = r->ngroups, units_before = r->nunits, npool_before = npool;
        bool ok = place_half(p, r, used, pool, &npool, s->units, h, i, 0, min) &&
                  place_half(p, r, used, pool, &npool, s->units + h, s->n - h, i, 1, min);
        if (!ok) { /* both halves or neither: undo, the set waits for partners */
            for (int g = before; g < r->ngroups; g++)
                for (int k = 0; k < r->groups[g].n; k++)
                    used[r->units[r->groups[g].first + k]] = false;
            r->ngroups = before;
            r->nunits = units_before;
            npool = npool_before;
        }
    }
    if (r->ngroups == 0) {
        /* nothing to test: the round is not run */
        free(r->groups);
        free(r->units);
        free(p->tags[p->nrounds - 1]);
        p->nrounds--;
        r = NULL;
        goto done;
    }
    /* controls: the units left over that passed, in groups of the tested
     * groups' median size, a last short one joined to the one before */
    int sz = median_size(r);
    npool = pool_of(p, used, pool);
    int tested = r->ngroups;
    for (int at = 0; at < npool;) {
        int k = npool - at >= sz ? sz : npool - at;
        if (k < 2 || (npool - at - k > 0 && npool - at - k < 2)) {
            k = npool - at; /* the rest, too few for a group of their own */
            if (k < 2) {
                if (r->ngroups > tested) { /* joins the last control */
                    fp_iso_group *g = &r->groups[r->ngroups - 1];
                    r->units[r->nunits++] = pool[at];
                    g->n++;
                }
                break;
            }
        }
        group_add(p, r, FP_ISO_CONTROL, pool + at, k, k, -1, -1, -1);
        at += k;
    }
done:
    free(used);
    free(pool);
    free(a);
    free(b);
    return r;
}

fp_iso_round *fp_iso_plan_next(fp_iso_plan *p)
{
    if (p->over || !p->recorded)
        return NULL;
    if (p->nrounds >= p->o.max_rounds) {
        for (int i = 0; i < p->nsets; i++)
            p->truncated = p->truncated || !p->sets[i].done;
        p->over = true;
        return NULL;
    }
    fp_iso_round *r = NULL;
    if (p->grid) {
        r = round_new(p);
        if (r)
            grid_groups(p, r, p->nrounds == 2);
    } else {
        if (p->nrounds == 0) { /* bisect: the whole allocation is the first suspect set */
            int *all = malloc((size_t)p->n * sizeof *all);
            if (!all)
                return NULL;
            for (int u = 0; u < p->n; u++)
                all[u] = u;
            int s = set_add(p, all, p->n, false, 0);
            free(all);
            if (s < 0)
                return NULL;
        }
        r = open_round(p);
    }
    if (!r) {
        for (int i = 0; i < p->nsets; i++)
            if (!p->sets[i].done) {
                note(p, p->sets[i].units, p->sets[i].n,
                     "still suspects, with no units that passed to pair them with");
                set_close(p, i);
            }
        p->over = true;
        return NULL;
    }
    /* a round holds fewer groups than units: give the rest back */
    fp_iso_group *g = realloc(r->groups, (size_t)(r->ngroups ? r->ngroups : 1) * sizeof *g);
    r->groups = g ? g : r->groups;
    group_tag *t = realloc(p->tags[p->nrounds - 1],
                           (size_t)(r->ngroups ? r->ngroups : 1) * sizeof *t);
    p->tags[p->nrounds - 1] = t ? t : p->tags[p->nrounds - 1];
    p->recorded = false;
    return r;
}

/* ---- judging a round ------------------------------------------------------------------ */

/* The median of sorted v[0..k) without its element at skip (-1: none). */
static double median_without(const double *v, int k, int skip)
{
    int m = skip >= 0 ? k - 1 : k;
    if (m <= 0)
        return NAN;
    /* the element at index i of v with skip taken out */
#define AT(i) v[(skip >= 0 && (i) >= skip) ? (i) + 1 : (i)]
    double med = m % 2 ? AT(m / 2) : 0.5 * (AT(m / 2 - 1) + AT(m / 2));
#undef AT
    return med;
}

/* Slow: below the limit x the median busbw of the round's other groups
 * that did not hang (leave-one-out, so one slow group of two still shows). */
static void judge_slow(const fp_iso_plan *p, fp_iso_round *r)
{
    double *v = malloc((size_t)(r->ngroups ? r->ngroups : 1) * sizeof *v);
    if (!v)
        return;
    int k = 0;
    for (int g = 0; g < r->ngroups; g++)
        if (r->groups[g].outcome != FP_ISO_HUNG && isfinite(r->groups[g].busbw))
            v[k++] = r->groups[g].busbw;
    fp_sort_doubles(v, (size_t)k);
    for (int g = 0; g < r->ngroups; g++) {
        fp_iso_group *x = &r->groups[g];
        int skip = -1;
        if (x->outcome != FP_ISO_HUNG && isfinite(x->busbw)) {
            int lo = 0, hi = k - 1; /* where its value sits in v */
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (v[mid] < x->busbw)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            skip = lo;
        }
        x->expected = median_without(v, k, skip);
        if (x->outcome == FP_ISO_OK && skip >= 0 && isfinite(x->expected) &&
            x->busbw < p->o.slow_limit * x->expected)
            x->outcome = FP_ISO_SLOW;
    }
    free(v);
}

static const int *units_of(const fp_iso_round *r, const fp_iso_group *g)
{
    return r->units + g->first;
}

/* The units of g no passing group cleared, into out; their number. */
static int suspects_of(const fp_iso_plan *p, const fp_iso_round *r, const fp_iso_group *g, int *out)
{
    int k = 0;
    for (int i = 0; i < g->n; i++) {
        int u = units_of(r, g)[i];
        if (!p->cleared[u] && !p->culprit[u])
            out[k++] = u;
    }
    return k;
}

/* Unit u failed with units that passed, in group gi of r. Wrong and hung
 * are facts of one reading: confirmed. Slow is a timing, which shared
 * cores make noisy: confirmed by SLOW_CONFIRMS such pairings, each with
 * another partner; until then u is paired again. */
static fp_status confirm_node(fp_iso_plan *p, const fp_iso_round *r, int gi, int u)
{
    if (p->culprit[u])
        return FP_OK;
    if (!p->named[u])
        p->named[u] = r->index;
    if (r->groups[gi].outcome == FP_ISO_SLOW && ++p->slow_pairings[u] < SLOW_CONFIRMS)
        return set_add(p, &u, 1, false, 0) < 0 ? FP_ENOMEM : FP_OK;
    p->culprit[u] = true;
    /* a link with u at one end was u all along */
    size_t kept = 0;
    for (size_t i = 0; i < p->nfindings; i++)
        if (!p->findings[i].link || (p->findings[i].unit != u && p->findings[i].peer != u))
            p->findings[kept++] = p->findings[i];
    p->nfindings = kept;
    fp_iso_finding f = {.link = false, .unit = u, .peer = -1, .outcome = r->groups[gi].outcome,
                        .named = p->named[u], .confirmed = r->index, .group = gi};
    return add_finding(p, &f);
}

/* After the grid's rows and columns: the candidates of every failing line
 * (its units no passing line cleared) become sets of one, each to be paired
 * with units that passed; a failing line with no candidate is a pair set. */
static fp_status grid_candidates(fp_iso_plan *p)
{
    int *sus = malloc((size_t)p->n * sizeof *sus);
    if (!sus)
        return FP_ENOMEM;
    bool *cand = calloc((size_t)p->n, sizeof *cand);
    if (!cand) {
        free(sus);
        return FP_ENOMEM;
    }
    fp_status st = FP_OK;
    for (int ri = 0; ri < p->nrounds && st == FP_OK; ri++) {
        const fp_iso_round *r = &p->rounds[ri];
        for (int g = 0; g < r->ngroups && st == FP_OK; g++) {
            const fp_iso_group *x = &r->groups[g];
            if (x->outcome == FP_ISO_OK)
                continue;
            int k = suspects_of(p, r, x, sus);
            if (k == 1 && !p->named[sus[0]])
                p->named[sus[0]] = p->nrounds;
            for (int i = 0; i < k; i++)
                cand[sus[i]] = true;
            if (k == 0 && set_add(p, units_of(r, x), x->n, true, x->n > 2 ? -1 : 0) < 0)
                st = FP_ENOMEM;
            p->tags[ri][g].handled = k == 0;
        }
    }
    for (int u = 0; u < p->n && st == FP_OK; u++)
        if (cand[u] && set_add(p, &u, 1, false, 0) < 0)
            st = FP_ENOMEM;
    free(sus);
    free(cand);
    return st;
}

/* Group g of r when it was tested (g >= 0) and failed, else NULL. */
static const fp_iso_group *failing(const fp_iso_round *r, int g)
{
    return g >= 0 && r->groups[g].outcome != FP_ISO_OK ? &r->groups[g] : NULL;
}

/* A node set's round: a failing half's suspects are a new set (one suspect:
 * named); a pair confirms its candidate; no failing half leaves a fault that
 * needs a unit of each half. */
static fp_status node_set_done(fp_iso_plan *p, const fp_iso_round *r, int si, const int *gidx,
                               int *sus)
{
    fp_status st = FP_OK;
    bool failed = false;
    for (int part = 0; part < 2; part++) {
        const fp_iso_group *x = failing(r, gidx[part]);
        if (!x)
            continue;
        failed = true;
        int g = gidx[part];
        if (x->role == FP_ISO_PAIR) {
            FP_CHECK(confirm_node(p, r, g, x->subject));
            continue;
        }
        int k = suspects_of(p, r, x, sus);
        if (k == 1 && !p->named[sus[0]])
            p->named[sus[0]] = r->index;
        if (k > 0 && set_add(p, sus, k, false, 0) < 0)
            FP_FAIL(FP_ENOMEM, "out of memory for a suspect set of %d units", k);
    }
    iso_set *s = &p->sets[si];
    if (!failed && s->n == 1) {
        note(p, s->units, 1, "a candidate of round %d, passed with units that passed in round %d",
             p->named[s->units[0]] ? p->named[s->units[0]] : r->index - 1, r->index);
    } else if (!failed) {
        /* every unit of the set passed apart: the fault needs two of them */
        int *u = malloc((size_t)s->n * sizeof *u);
        FP_CHECK_ALLOC(u);
        memcpy(u, s->units, (size_t)s->n * sizeof *u);
        int n = s->n;
        st = set_add(p, u, n, true, n == 2 ? 0 : 1) < 0 ? FP_ENOMEM : FP_OK;
        free(u);
    }
cleanup:
    set_close(p, si);
    return st;
}

/* A pair set's round: a failing group of two is the link; a larger failing
 * one the new pair set; none failing moves to the next cross-boundary union,
 * or ends the set (the fault did not show again). */
static fp_status pair_set_done(fp_iso_plan *p, const fp_iso_round *r, int si, const int *gidx)
{
    fp_status st = FP_OK;
    bool failed = false;
    if (p->sets[si].stage < 0) { /* its retest: failing again, it is searched */
        iso_set *s = &p->sets[si];
        if (gidx[0] >= 0 && r->groups[gidx[0]].outcome != FP_ISO_OK) {
            s->stage = 0;
        } else {
            note(p, s->units, s->n, "failed together, passed together again in round %d: the "
                 "fault did not show again", r->index);
            set_close(p, si);
        }
        return FP_OK;
    }
    for (int part = 0; part < 2; part++) {
        const fp_iso_group *x = failing(r, gidx[part]);
        if (!x)
            continue;
        failed = true;
        int own = p->tags[p->nrounds - 1][gidx[part]].own; /* the pads passed elsewhere */
        if (own == 2) { /* a link, once it shows again and neither end alone */
            int li = set_add(p, units_of(r, x), 2, true, 0);
            if (li < 0)
                FP_FAIL(FP_ENOMEM, "out of memory for a link candidate");
            p->sets[li].link = true;
            p->named_link[li % MAX_LINKS] = r->index;
        } else if (set_add(p, units_of(r, x), own, true, 0) < 0) {
            FP_FAIL(FP_ENOMEM, "out of memory for a pair set of %d units", own);
        }
    }
    iso_set *s = &p->sets[si];
    if (failed) {
        set_close(p, si);
    } else if (s->n == 2 || ++s->stage > 2) {
        set_close(p, si);
        note(p, s->units, s->n, "failed together, passed in every part and cross-boundary "
             "union by round %d: the fault did not show again", r->index);
    }
cleanup:
    return st;
}

/* Whether a finding explains a failing group: a node of it, or both ends
 * of a link in it. */
static bool explained(const fp_iso_plan *p, const fp_iso_round *r, const fp_iso_group *x)
{
    for (size_t i = 0; i < p->nfindings; i++) {
        const fp_iso_finding *f = &p->findings[i];
        bool a = false, b = !f->link;
        for (int k = 0; k < x->n; k++) {
            a = a || units_of(r, x)[k] == f->unit;
            b = b || units_of(r, x)[k] == f->peer;
        }
        if (a && b)
            return true;
    }
    return false;
}

/* Once no set is open: a failing group that no finding explains and whose
 * units all passed elsewhere (its candidates were ghosts) failed because
 * of two of its units together: a pair set. */
static fp_status unexplained(fp_iso_plan *p)
{
    for (int i = 0; i < p->nsets; i++)
        if (!p->sets[i].done)
            return FP_OK;
    for (int ri = 0; ri < p->nrounds; ri++) {
        const fp_iso_round *r = &p->rounds[ri];
        for (int g = 0; g < r->ngroups; g++) {
            const fp_iso_group *x = &r->groups[g];
            group_tag *t = &p->tags[ri][g];
            if (x->outcome == FP_ISO_OK || t->handled)
                continue;
            t->handled = true;
            bool all = !explained(p, r, x);
            for (int k = 0; all && k < x->n; k++)
                all = p->cleared[units_of(r, x)[k]];
            if (all && set_add(p, units_of(r, x), x->n, true, x->n > 2 ? -1 : 0) < 0)
                return FP_ENOMEM;
        }
    }
    return FP_OK;
}

/* A link candidate's confirmation, in two rounds: an end that fails with a
 * unit that passed is the node at fault; else the two ends failing together
 * again are the link; else it did not show again. */
static fp_status link_done(fp_iso_plan *p, const fp_iso_round *r, int si, const int *gidx)
{
    fp_status st = FP_OK;
    iso_set *s = &p->sets[si];
    if (s->stage == 0) {
        bool node = false;
        for (int part = 1; part < 3; part++) {
            int g = gidx[part];
            if (g >= 0 && r->groups[g].outcome != FP_ISO_OK) {
                FP_CHECK(confirm_node(p, r, g, r->groups[g].subject));
                node = true;
            }
        }
        if (!node) {
            s->stage = 1; /* apart they pass: together again next */
            return FP_OK;
        }
    } else if (gidx[0] >= 0 && r->groups[gidx[0]].outcome != FP_ISO_OK) {
        if (p->culprit[s->units[0]] || p->culprit[s->units[1]])
            goto cleanup; /* an end is a node found at fault */
        fp_iso_finding f = {.link = true, .unit = s->units[0], .peer = s->units[1],
                            .outcome = r->groups[gidx[0]].outcome,
                            .named = p->named_link[si % MAX_LINKS], .confirmed = r->index,
                            .group = gidx[0]};
        FP_CHECK(add_finding(p, &f));
    } else {
        note(p, s->units, 2, "failed together in round %d, passed apart and together by round "
             "%d", p->named_link[si % MAX_LINKS], r->index);
    }
cleanup:
    set_close(p, si);
    return st;
}

fp_status fp_iso_plan_record(fp_iso_plan *p, fp_iso_round *r)
{
    fp_status st = FP_OK;
    int *sus = NULL;
    if (p->recorded || p->nrounds == 0 || r != &p->rounds[p->nrounds - 1])
        return FP_EINTERNAL;
    p->recorded = true;
    judge_slow(p, r);
    for (int g = 0; g < r->ngroups; g++)
        for (int k = 0; k < r->groups[g].n; k++) {
            int u = units_of(r, &r->groups[g])[k];
            if (r->groups[g].outcome == FP_ISO_OK)
                p->cleared[u] = true;
            else
                p->failures[u]++;
        }
    sus = malloc((size_t)p->n * sizeof *sus);
    FP_CHECK_ALLOC(sus);
    if (p->grid) {
        int failing = 0;
        for (int g = 0; g < r->ngroups; g++)
            failing += r->groups[g].outcome != FP_ISO_OK;
        if (r->index == 1 && p->o.strategy == FP_ISO_AUTO && failing >= 2) {
            /* several rows fail: several faults, bisect each row */
            p->grid = false;
            for (int g = 0; g < r->ngroups; g++)
                if (r->groups[g].outcome != FP_ISO_OK &&
                    set_add(p, units_of(r, &r->groups[g]), r->groups[g].n, false, 0) < 0)
                    FP_FAIL(FP_ENOMEM, "out of memory for the suspect rows");
        } else if (r->index == 2) {
            p->grid = false;
            FP_CHECK(grid_candidates(p));
            FP_CHECK(unexplained(p));
        }
        goto cleanup;
    }
    /* the groups each set had in this round (two parts at most) */
    int nsets = p->nsets; /* sets added while judging wait for the next round */
    for (int si = 0; si < nsets; si++) {
        int gidx[3] = {-1, -1, -1};
        bool tested = false;
        for (int g = 0; g < r->ngroups; g++) {
            group_tag t = p->tags[p->nrounds - 1][g];
            if (t.set == si && t.part >= 0 && t.part < 3) {
                gidx[t.part] = g;
                tested = true;
            }
        }
        if (!tested || p->sets[si].done)
            continue;
        if (p->sets[si].link)
            FP_CHECK(link_done(p, r, si, gidx));
        else if (p->sets[si].pair)
            FP_CHECK(pair_set_done(p, r, si, gidx));
        else
            FP_CHECK(node_set_done(p, r, si, gidx, sus));
    }
    FP_CHECK(unexplained(p));
cleanup:
    free(sus);
    return st;
}

/* ---- results ------------------------------------------------------------------------------ */

int fp_iso_plan_rounds(const fp_iso_plan *p)
{
    return p->nrounds;
}

const fp_iso_round *fp_iso_plan_round(const fp_iso_plan *p, int i)
{
    return i >= 0 && i < p->nrounds ? &p->rounds[i] : NULL;
}

size_t fp_iso_plan_findings(const fp_iso_plan *p, const fp_iso_finding **out)
{
    *out = p->findings;
    return p->nfindings;
}

int fp_iso_plan_named_round(const fp_iso_plan *p)
{
    int m = 0;
    for (size_t i = 0; i < p->nfindings; i++)
        m = p->findings[i].named > m ? p->findings[i].named : m;
    return m;
}

double fp_iso_plan_seconds(const fp_iso_plan *p, int round)
{
    if (round <= 0 || p->nrounds == 0)
        return 0;
    round = round < p->nrounds ? round : p->nrounds;
    return p->rounds[round - 1].ended - p->rounds[0].started;
}

size_t fp_iso_plan_notes(const fp_iso_plan *p, const fp_iso_note **out)
{
    *out = p->notes;
    return p->nnotes;
}

bool fp_iso_plan_truncated(const fp_iso_plan *p)
{
    return p->truncated;
}

bool fp_iso_plan_cleared(const fp_iso_plan *p, int u)
{
    return u >= 0 && u < p->n && p->cleared[u];
}

/* ---- simulation ------------------------------------------------------------------------ */

void fp_iso_simulate(fp_iso_round *r, const fp_iso_fault *f, size_t n, double busbw)
{
    for (int g = 0; g < r->ngroups; g++) {
        fp_iso_group *x = &r->groups[g];
        const int *u = r->units + x->first;
        fp_iso_outcome worst = FP_ISO_OK;
        double factor = 1;
        for (size_t i = 0; i < n; i++) {
            bool a = false, b = f[i].peer < 0;
            for (int k = 0; k < x->n; k++) {
                a = a || u[k] == f[i].unit;
                b = b || u[k] == f[i].peer;
            }
            if (!a || !b)
                continue;
            worst = f[i].outcome > worst ? f[i].outcome : worst;
            if (f[i].outcome == FP_ISO_SLOW && f[i].factor > factor)
                factor = f[i].factor;
        }
        x->outcome = worst == FP_ISO_SLOW ? FP_ISO_OK : worst; /* slow is the plan's judgement */
        x->wrong = worst == FP_ISO_WRONG;
        x->busbw = worst == FP_ISO_HUNG ? NAN : busbw / (worst == FP_ISO_SLOW ? factor : 1);
        x->seconds = worst == FP_ISO_HUNG ? NAN : 1 / x->busbw;
    }
}
