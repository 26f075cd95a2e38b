/* Isolation's plan (collectives/isolate_plan.c) against known faults: the
 * rounds grid, bisect and auto take to name and confirm them, links, ghosts
 * of two faults, clean fleets, the slow judgement, and the shape of every
 * round (each unit at most once, groups of two or more). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fleetprint/isolate.h"

/* Every round places a unit at most once, in groups of two or more. */
static bool round_ok(const fp_iso_round *r, int n)
{
    char *seen = calloc((size_t)n, 1);
    bool ok = seen != NULL;
    for (int g = 0; ok && g < r->ngroups; g++) {
        const fp_iso_group *x = &r->groups[g];
        ok = x->n >= 2 && x->first + x->n <= r->nunits;
        for (int k = 0; ok && k < x->n; k++) {
            int u = r->units[x->first + k];
            ok = u >= 0 && u < n && !seen[u];
            if (ok)
                seen[u] = 1;
        }
        if (ok && x->role == FP_ISO_PAIR)
            ok = x->subject == r->units[x->first];
    }
    free(seen);
    return ok;
}

/* Run a plan over n units against the faults; returns it (the caller frees). */
static fp_iso_plan *run(fp_iso_strategy s, int n, const fp_iso_fault *f, size_t nf, double limit)
{
    fp_iso_opts o = {.strategy = s, .nunits = n, .slow_limit = limit, .max_rounds = 40};
    fp_iso_plan *p = NULL;
    char err[160];
    CHECK(fp_iso_plan_open(&o, &p, err, sizeof err) == FP_OK);
    if (!p)
        return NULL;
    for (fp_iso_round *r; (r = fp_iso_plan_next(p));) {
        CHECK(round_ok(r, n));
        fp_iso_simulate(r, f, nf, 10.0);
        CHECK(fp_iso_plan_record(p, r) == FP_OK);
    }
    return p;
}

/* The findings of p are exactly the node units want[0..k) (any order). */
static bool names_nodes(const fp_iso_plan *p, const int *want, size_t k, fp_iso_outcome how)
{
    const fp_iso_finding *f;
    size_t n = fp_iso_plan_findings(p, &f);
    if (n != k)
        return false;
    for (size_t i = 0; i < k; i++) {
        bool found = false;
        for (size_t j = 0; j < n; j++)
            found = found || (!f[j].link && f[j].unit == want[i] && f[j].outcome == how);
        if (!found)
            return false;
    }
    return true;
}

static void test_grid_one_fault(void)
{
    /* 16 units are a 4x4 grid: named after rows and columns, confirmed in
     * round 3 (slow: paired again with another unit in round 4) */
    fp_iso_outcome kinds[] = {FP_ISO_WRONG, FP_ISO_HUNG, FP_ISO_SLOW};
    for (int k = 0; k < 3; k++) {
        int last = kinds[k] == FP_ISO_SLOW ? 4 : 3;
        for (int u = 0; u < 16; u++) {
            fp_iso_fault f = {u, -1, kinds[k], 4};
            fp_iso_plan *p = run(FP_ISO_GRID, 16, &f, 1, 0.4);
            CHECK(names_nodes(p, &u, 1, kinds[k]));
            CHECK(fp_iso_plan_named_round(p) == 2);
            CHECK(fp_iso_plan_rounds(p) == last);
            const fp_iso_finding *fd;
            if (fp_iso_plan_findings(p, &fd) == 1)
                CHECK(fd[0].confirmed == last && !fd[0].link);
            if (last == 4) { /* the second pairing has another partner */
                const fp_iso_round *a = fp_iso_plan_round(p, 2), *b = fp_iso_plan_round(p, 3);
                CHECK(b->groups[0].role == FP_ISO_PAIR && b->groups[0].subject == u);
                CHECK(a->units[a->groups[0].first + 1] != b->units[b->groups[0].first + 1]);
            }
            /* rows, then columns, then the candidate with a unit that passed */
            CHECK(fp_iso_plan_round(p, 0)->ngroups == 4 &&
                  fp_iso_plan_round(p, 0)->groups[0].role == FP_ISO_ROW);
            CHECK(fp_iso_plan_round(p, 1)->groups[0].role == FP_ISO_COLUMN);
            const fp_iso_round *r3 = fp_iso_plan_round(p, 2);
            CHECK(r3->groups[0].role == FP_ISO_PAIR && r3->groups[0].subject == u);
            CHECK(fp_iso_plan_cleared(p, r3->units[r3->groups[0].first + 1]));
            fp_iso_plan_free(p);
        }
    }
    /* auto with one fault is the grid */
    fp_iso_fault f = {9, -1, FP_ISO_WRONG, 1};
    fp_iso_plan *p = run(FP_ISO_AUTO, 16, &f, 1, 0.8);
    CHECK(names_nodes(p, (int[]){9}, 1, FP_ISO_WRONG) && fp_iso_plan_named_round(p) == 2);
    fp_iso_plan_free(p);
    /* a fleet of 1,000 and one of 13 (rows of 5, 5 and 3): still two rounds */
    int sizes[] = {1000, 13, 5};
    for (int i = 0; i < 3; i++) {
        fp_iso_fault g = {sizes[i] - 1, -1, FP_ISO_HUNG, 1};
        p = run(FP_ISO_GRID, sizes[i], &g, 1, 0.8);
        CHECK(names_nodes(p, &g.unit, 1, FP_ISO_HUNG));
        CHECK(fp_iso_plan_named_round(p) == 2 && fp_iso_plan_rounds(p) == 3);
        fp_iso_plan_free(p);
    }
}

static void test_two_faults(void)
{
    /* different rows and columns: four candidates, two of them ghosts that
     * pass with units that passed in round 3 */
    fp_iso_fault f[2] = {{5, -1, FP_ISO_WRONG, 1}, {10, -1, FP_ISO_WRONG, 1}};
    fp_iso_plan *p = run(FP_ISO_GRID, 16, f, 2, 0.8);
    CHECK(names_nodes(p, (int[]){5, 10}, 2, FP_ISO_WRONG));
    CHECK(fp_iso_plan_rounds(p) == 3 && fp_iso_plan_named_round(p) == 3);
    const fp_iso_note *notes;
    CHECK(fp_iso_plan_notes(p, &notes) == 2); /* units 6 and 9 */
    CHECK(notes[0].nunits == 1 && notes[1].nunits == 1);
    CHECK(notes[0].units[0] + notes[1].units[0] == 15 && strstr(notes[0].what, "candidate"));
    fp_iso_plan_free(p);
    /* auto: two rows fail, each is bisected */
    p = run(FP_ISO_AUTO, 16, f, 2, 0.8);
    CHECK(names_nodes(p, (int[]){5, 10}, 2, FP_ISO_WRONG));
    CHECK(fp_iso_plan_round(p, 1)->groups[0].role == FP_ISO_HALF);
    CHECK(fp_iso_plan_rounds(p) == 3 && fp_iso_plan_named_round(p) == 3);
    fp_iso_plan_free(p);
    /* the same row: auto stays on the grid and names both after the columns */
    fp_iso_fault same[2] = {{5, -1, FP_ISO_WRONG, 1}, {6, -1, FP_ISO_HUNG, 1}};
    p = run(FP_ISO_AUTO, 16, same, 2, 0.8);
    const fp_iso_finding *fd;
    CHECK(fp_iso_plan_findings(p, &fd) == 2 && fp_iso_plan_named_round(p) == 2);
    fp_iso_plan_free(p);
    /* four faults on 64 units under bisect */
    fp_iso_fault four[4] = {{3, -1, FP_ISO_WRONG, 1}, {17, -1, FP_ISO_WRONG, 1},
                            {40, -1, FP_ISO_WRONG, 1}, {41, -1, FP_ISO_WRONG, 1}};
    p = run(FP_ISO_BISECT, 64, four, 4, 0.8);
    CHECK(names_nodes(p, (int[]){3, 17, 40, 41}, 4, FP_ISO_WRONG));
    CHECK(fp_iso_plan_rounds(p) == 6); /* log2 64 */
    fp_iso_plan_free(p);
}

static void test_bisect(void)
{
    for (int u = 0; u < 16; u++) {
        fp_iso_fault f = {u, -1, FP_ISO_WRONG, 1};
        fp_iso_plan *p = run(FP_ISO_BISECT, 16, &f, 1, 0.8);
        CHECK(names_nodes(p, &u, 1, FP_ISO_WRONG));
        CHECK(fp_iso_plan_rounds(p) == 4 && fp_iso_plan_named_round(p) == 4);
        fp_iso_plan_free(p);
    }
    /* ceil(log2 n) rounds at 100,000 units; slow: one pairing more */
    fp_iso_fault f = {77777, -1, FP_ISO_SLOW, 4};
    fp_iso_plan *p = run(FP_ISO_BISECT, 100000, &f, 1, 0.8);
    CHECK(names_nodes(p, &f.unit, 1, FP_ISO_SLOW));
    CHECK(fp_iso_plan_named_round(p) == 17 && fp_iso_plan_rounds(p) == 18);
    fp_iso_plan_free(p);
}

static void test_links(void)
{
    /* ends in one row: the row fails, both columns pass; its halves, then
     * the cross-boundary unions find the pair */
    fp_iso_fault f = {1, 2, FP_ISO_SLOW, 8};
    fp_iso_plan *p = run(FP_ISO_GRID, 16, &f, 1, 0.8);
    const fp_iso_finding *fd;
    CHECK(fp_iso_plan_findings(p, &fd) == 1);
    CHECK(fd[0].link && ((fd[0].unit == 1 && fd[0].peer == 2) || (fd[0].unit == 2 && fd[0].peer == 1)));
    CHECK(fd[0].outcome == FP_ISO_SLOW);
    /* rows, columns, the failing row again, three probes of it; then each
     * end with a unit that passed (both pass), then both ends again */
    CHECK(fd[0].named == 6 && fd[0].confirmed == 8 && fp_iso_plan_rounds(p) == 8);
    CHECK(fp_iso_plan_round(p, 2)->groups[0].role == FP_ISO_PROBE &&
          fp_iso_plan_round(p, 2)->groups[0].n == 4);
    CHECK(fp_iso_plan_round(p, 6)->groups[0].role == FP_ISO_PAIR);
    CHECK(fp_iso_plan_round(p, 7)->groups[0].role == FP_ISO_LINK);
    fp_iso_plan_free(p);
    /* bisect: the halves pass, the cross probe holds both ends */
    for (int a = 0; a < 16; a++)
        for (int b = a + 1; b < 16; b++) {
            fp_iso_fault l = {a, b, FP_ISO_WRONG, 1};
            p = run(FP_ISO_BISECT, 16, &l, 1, 0.8);
            CHECK(fp_iso_plan_findings(p, &fd) == 1 && fd[0].link);
            CHECK(fd[0].unit + fd[0].peer == a + b && (fd[0].unit == a || fd[0].unit == b));
            fp_iso_plan_free(p);
        }
    /* ends in different rows and columns: no grid group holds both (docs: blind) */
    fp_iso_fault apart = {0, 5, FP_ISO_WRONG, 1};
    p = run(FP_ISO_GRID, 16, &apart, 1, 0.8);
    CHECK(fp_iso_plan_findings(p, &fd) == 0 && fp_iso_plan_rounds(p) == 2);
    fp_iso_plan_free(p);
}

static void test_clean_and_slow(void)
{
    fp_iso_strategy s[] = {FP_ISO_GRID, FP_ISO_AUTO, FP_ISO_BISECT};
    int rounds[] = {2, 2, 3};
    for (int i = 0; i < 3; i++) {
        fp_iso_plan *p = run(s[i], 16, NULL, 0, 0.8);
        const fp_iso_finding *fd;
        CHECK(fp_iso_plan_findings(p, &fd) == 0 && fp_iso_plan_named_round(p) == 0);
        CHECK(fp_iso_plan_rounds(p) == rounds[i] && !fp_iso_plan_truncated(p));
        fp_iso_plan_free(p);
    }
    /* a slow factor the limit does not reach names nothing */
    fp_iso_fault mild = {3, -1, FP_ISO_SLOW, 2};
    fp_iso_plan *p = run(FP_ISO_GRID, 16, &mild, 1, 0.4);
    const fp_iso_finding *fd;
    CHECK(fp_iso_plan_findings(p, &fd) == 0);
    fp_iso_plan_free(p);
    /* a limit of 0 judges no group slow (preflight isolating wrong results):
     * a 4x slow unit is not named, a wrong one beside it is */
    fp_iso_fault both[] = {{3, -1, FP_ISO_SLOW, 4}, {9, -1, FP_ISO_WRONG, 1}};
    int wrong_unit = 9;
    p = run(FP_ISO_AUTO, 16, both, 2, 0);
    CHECK(names_nodes(p, &wrong_unit, 1, FP_ISO_WRONG));
    fp_iso_plan_free(p);
    /* the judgement by hand: leave-one-out median, hung groups no peers */
    fp_iso_opts o = {.strategy = FP_ISO_GRID, .nunits = 16, .slow_limit = 0.4, .max_rounds = 4};
    char err[160];
    CHECK(fp_iso_plan_open(&o, &p, err, sizeof err) == FP_OK);
    fp_iso_round *r = fp_iso_plan_next(p);
    double bw[4] = {10, 3.9, 11, NAN};
    for (int g = 0; g < 4; g++) {
        r->groups[g].outcome = g == 3 ? FP_ISO_HUNG : FP_ISO_OK;
        r->groups[g].busbw = bw[g];
    }
    CHECK(fp_iso_plan_next(p) == NULL); /* not before the round is recorded */
    CHECK(fp_iso_plan_record(p, r) == FP_OK);
    CHECK(r->groups[1].outcome == FP_ISO_SLOW && r->groups[1].expected == 10.5);
    CHECK(r->groups[0].outcome == FP_ISO_OK && r->groups[0].expected == 7.45);
    CHECK(r->groups[3].outcome == FP_ISO_HUNG);
    CHECK(fp_iso_plan_record(p, r) == FP_EINTERNAL); /* twice */
    fp_iso_plan_free(p);
    /* bad options */
    o.nunits = 3;
    CHECK(fp_iso_plan_open(&o, &p, err, sizeof err) == FP_EUSAGE && strstr(err, "at least 4"));
    o.nunits = 8;
    o.slow_limit = 1.5;
    CHECK(fp_iso_plan_open(&o, &p, err, sizeof err) == FP_EUSAGE);
    fp_iso_strategy parsed;
    CHECK(fp_iso_strategy_parse("bisect", &parsed) && parsed == FP_ISO_BISECT);
    CHECK(!fp_iso_strategy_parse("ring", &parsed));
    /* max_rounds cuts a long search short and says so */
    fp_iso_fault l = {1, 2, FP_ISO_WRONG, 1};
    o = (fp_iso_opts){.strategy = FP_ISO_GRID, .nunits = 16, .slow_limit = 0.8, .max_rounds = 3};
    CHECK(fp_iso_plan_open(&o, &p, err, sizeof err) == FP_OK);
    for (fp_iso_round *x; (x = fp_iso_plan_next(p));) {
        fp_iso_simulate(x, &l, 1, 10);
        fp_iso_plan_record(p, x);
    }
    CHECK(fp_iso_plan_rounds(p) == 3 && fp_iso_plan_truncated(p));
    fp_iso_plan_free(p);
}

int main(void)
{
    test_grid_one_fault();
    test_two_faults();
    test_bisect();
    test_links();
    test_clean_and_slow();
    CHECK_DONE();
}
