/* Confirmation before acting: what a run's failures ask a re-test to measure
 * (fp_confirm_plan_make), and the verdicts once the re-test has measured it
 * (fp_verdicts_confirm): only what fails again fails; what does not warns,
 * "did not reproduce on re-test". The link sweep's part tells a node's fault
 * from a link's: each end of a failing link is measured again with nodes that
 * passed, so an end slow with them too is the node, and a link slow again
 * while both ends are fine with good partners is the link. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"
#include "fleetprint/log.h"
#include "fleetprint/stats.h"

const char *fp_confirm_outcome_name(fp_confirm_outcome o)
{
    static const char *const names[] = {"reproduced", "not_reproduced", "not_retested", "found"};
    return (unsigned)o <= FP_CONFIRM_FOUND ? names[o] : "?";
}

const fp_confirm_info *fp_verdicts_confirm_info(const fp_verdicts *v)
{
    return v->confirm;
}

/* ---- names to indices ------------------------------------------------------------------- */

/* A sorted view of names (strings of an array), for lookups by name. */
typedef struct name_pair {
    const char *name;
    int idx;
} name_pair;

typedef struct name_ix {
    name_pair *pair; /* by name */
    size_t n;
} name_ix;

static int cmp_pair(const void *a, const void *b)
{
    return strcmp(((const name_pair *)a)->name, ((const name_pair *)b)->name);
}

/* Index n names (name(i, arg) for i < n); FP_ENOMEM. Free ix->pair. */
static fp_status ix_build(name_ix *ix, size_t n, const char *(*name)(size_t, const void *),
                          const void *arg)
{
    fp_status st = FP_OK;
    ix->n = 0;
    ix->pair = malloc((n + 1) * sizeof *ix->pair);
    FP_CHECK_ALLOC(ix->pair);
    for (size_t i = 0; i < n; i++)
        ix->pair[i] = (name_pair){name(i, arg), (int)i};
    qsort(ix->pair, n, sizeof *ix->pair, cmp_pair);
    ix->n = n;
cleanup:
    return st;
}

/* The index of name, or -1. */
static int ix_find(const name_ix *ix, const char *name)
{
    name_pair key = {name, -1};
    const name_pair *hit = ix->n ? bsearch(&key, ix->pair, ix->n, sizeof key, cmp_pair) : NULL;
    return hit ? hit->idx : -1;
}

static const char *run_node_name(size_t i, const void *arg)
{
    return ((const fp_run *)arg)->nodes[i];
}

static const char *verdict_node_name(size_t i, const void *arg)
{
    return ((const fp_verdicts *)arg)->node_names[i];
}

/* ---- the plan --------------------------------------------------------------------------- */

void fp_confirm_plan_free(fp_confirm_plan *plan)
{
    free(plan->pairs);
    free(plan->spare);
    free(plan->inside);
    memset(plan, 0, sizeof *plan);
}

static bool has_test(const char (*tests)[24], int n, const char *t, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(tests[i]) == len && strncmp(tests[i], t, len) == 0)
            return true;
    return false;
}

static void add_test(fp_confirm_plan *p, const char *t, size_t len)
{
    if (len == 0 || len >= sizeof p->tests[0] || p->ntests >= FP_CONFIRM_TESTS ||
        has_test((const char (*)[24])p->tests, p->ntests, t, len))
        return;
    memcpy(p->tests[p->ntests], t, len);
    p->tests[p->ntests++][len] = 0;
}

/* The test of a metric key "suite.test.metric[@size]" (its start and length;
 * length 0 when the key has none). */
static size_t key_test(const char *key, const char **test)
{
    const char *dot = strchr(key, '.');
    *test = dot ? dot + 1 : key;
    return dot ? strcspn(dot + 1, ".@") : 0;
}

/* The tests whose failing reasons are re-testable; *late: a late-rank reason
 * (collectives.*.late_rank) asked for every collective with late-rank records. */
static void reason_tests(fp_confirm_plan *p, const fp_reason *r, bool *late)
{
    const char *t;
    size_t len = key_test(r->key, &t);
    if (len == 1 && t[0] == '*')
        *late = true;
    else
        add_test(p, t, len);
}

/* Put the tests in the order the run measured them, adding the collectives
 * with late-rank records when late. */
static fp_status order_tests(fp_confirm_plan *p, const fp_run *run, bool late)
{
    fp_status st = FP_OK;
    char(*seen)[24] = calloc(FP_CONFIRM_TESTS + 1, sizeof *seen);
    int n = 0;
    FP_CHECK_ALLOC(seen);
    const char *prev = NULL;
    for (size_t i = 0; i < run->nsamples && n < FP_CONFIRM_TESTS; i++) {
        const fp_sample *s = fp_run_ref(run, i).key;
        bool wanted = has_test((const char (*)[24])p->tests, p->ntests, s->test, strlen(s->test)) ||
                      (late && strncmp(s->metric, "late_rank", 9) == 0);
        if (!wanted || (prev && strcmp(prev, s->test) == 0))
            continue;
        prev = s->test;
        if (!has_test((const char (*)[24])seen, n, s->test, strlen(s->test)))
            snprintf(seen[n++], sizeof seen[0], "%s", s->test);
    }
    /* a test the samples do not name (a missing result's) keeps its place after them */
    for (int i = 0; i < p->ntests && n < FP_CONFIRM_TESTS; i++)
        if (!has_test((const char (*)[24])seen, n, p->tests[i], strlen(p->tests[i])))
            snprintf(seen[n++], sizeof seen[0], "%s", p->tests[i]);
    memcpy(p->tests, seen, sizeof p->tests);
    p->ntests = n;
cleanup:
    free(seen);
    return st;
}

/* Pair node e with k nodes that may serve (spare, not yet its partner):
 * the least used first, then the nearest after e (in run order, cyclic). */
static fp_status add_partners(fp_confirm_plan *p, int e, int k, int nn, const bool *warned,
                              int *used, int *cap)
{
    fp_status st = FP_OK;
    int got = 0;
    for (; got < k; got++) {
        int best = -1;
        for (int d = 1; d < nn; d++) {
            int c = (e + d) % nn;
            if (!p->spare[c])
                continue;
            bool paired = false;
            for (int i = 0; i < p->npairs && !paired; i++)
                paired = (p->pairs[i][0] == e && p->pairs[i][1] == c) ||
                         (p->pairs[i][0] == c && p->pairs[i][1] == e);
            /* a node that passed before one that warned, then the least used */
            if (!paired && (best < 0 || warned[c] < warned[best] ||
                            (warned[c] == warned[best] && used[c] < used[best])))
                best = c;
        }
        if (best < 0)
            break;
        if (p->npairs >= *cap) {
            int (*grown)[2] = realloc(p->pairs, (size_t)(2 * *cap + 8) * sizeof *grown);
            FP_CHECK_ALLOC(grown);
            p->pairs = grown;
            *cap = 2 * *cap + 8;
        }
        p->pairs[p->npairs][0] = e;
        p->pairs[p->npairs][1] = best;
        p->npairs++;
        used[best]++;
    }
    if (got < k && !p->note[0])
        snprintf(p->note, sizeof p->note,
                 "only %d of %d partners that passed for a link end (node index %d)", got, k, e);
cleanup:
    return st;
}

/* Is any failing reason of ev the rule "hung", and does it have another? */
/* Whether ev only warns for want of a re-test: a host-side metric's deficit
 * on baseline evidence, or on every device of a node (fp_reason.needs_retest),
 * which the re-test turns into a fail when it reproduces. */
static bool held(const fp_verdicts *v, const fp_entity_verdict *ev)
{
    for (size_t k = 0; ev->verdict == FP_WARN && k < ev->nreasons; k++)
        if (v->reasons[ev->first_reason + k].needs_retest)
            return true;
    return false;
}

/* Whether the re-test judges reason r again: a fail (not a hang) of an
 * entity that failed, a warn that needs a re-test of one that is held. */
static bool retested_reason(const fp_reason *r, bool is_held)
{
    if (is_held)
        return r->verdict == FP_WARN && r->needs_retest;
    return r->verdict == FP_FAIL && strcmp(r->rule, "hung") != 0;
}

static void reason_kinds(const fp_verdicts *v, const fp_entity_verdict *ev, bool *hung,
                         bool *other, bool *links)
{
    *hung = *other = *links = false;
    for (size_t k = 0; k < ev->nreasons; k++) {
        const fp_reason *r = &v->reasons[ev->first_reason + k];
        if (r->verdict != FP_FAIL)
            continue;
        if (strcmp(r->rule, "hung") == 0)
            *hung = true;
        else
            *other = true;
        *links |= r->evidence == FP_EV_LINKS;
    }
}

fp_status fp_confirm_plan_make(const fp_verdicts *v, const fp_run *run, const fp_rules *rules,
                               fp_confirm_plan *plan)
{
    fp_status st = FP_OK;
    int nn = run->nnodes, cap = 0;
    name_ix nodes = {0};
    bool late = false;
    bool *end = NULL, *slow = NULL, *warned = NULL; /* one allocation: three flags a node */
    int *used = NULL;
    memset(plan, 0, sizeof *plan);
    plan->spare = calloc((size_t)nn + 1, sizeof *plan->spare);
    plan->inside = calloc((size_t)nn + 1, sizeof *plan->inside);
    end = calloc(3 * (size_t)nn + 1, sizeof *end);
    used = calloc((size_t)nn + 1, sizeof *used);
    FP_CHECK_ALLOC(plan->spare);
    FP_CHECK_ALLOC(plan->inside);
    FP_CHECK_ALLOC(end);
    FP_CHECK_ALLOC(used);
    slow = end + nn;
    warned = slow + nn;
    FP_CHECK(ix_build(&nodes, (size_t)nn, run_node_name, run));
    for (size_t i = 0; i < v->nents; i++) {
        const fp_entity_verdict *ev = &v->ents[i];
        bool is_held = held(v, ev);
        if (ev->verdict != FP_FAIL && !is_held)
            continue;
        bool hung, other, links;
        reason_kinds(v, ev, &hung, &other, &links);
        plan->nhung += hung;
        if (!other && !is_held)
            continue;
        plan->nsuspects++;
        for (size_t k = 0; k < ev->nreasons; k++)
            if (retested_reason(&v->reasons[ev->first_reason + k], is_held))
                reason_tests(plan, &v->reasons[ev->first_reason + k], &late);
        const fp_entity *e = ev->entity;
        int a = ix_find(&nodes, e->node);
        if (a < 0)
            continue;
        if (e->kind == FP_ENT_LINK) {
            int b = ix_find(&nodes, e->peer);
            if (b == a) {
                plan->inside[a] = true;
            } else if (b >= 0) {
                if (plan->npairs >= cap) {
                    cap = 2 * cap + 8;
                    int (*grown)[2] = realloc(plan->pairs, (size_t)cap * sizeof *grown);
                    FP_CHECK_ALLOC(grown);
                    plan->pairs = grown;
                }
                plan->pairs[plan->npairs][0] = a;
                plan->pairs[plan->npairs][1] = b;
                plan->npairs++;
                end[a] = end[b] = true;
            }
        } else if (e->kind == FP_ENT_NODE && links) {
            slow[a] = true;
        }
    }
    FP_CHECK(order_tests(plan, run, late));
    /* nodes that passed may partner the suspects; the verdicts list nodes in
     * run order, but look each up by name all the same */
    for (size_t i = 0; i < v->nnodes; i++) {
        int n = i < (size_t)nn && strcmp(v->node_names[i], run->nodes[i]) == 0
                    ? (int)i
                    : ix_find(&nodes, v->node_names[i]);
        if (n >= 0) { /* passed the gate: pass, or only warned */
            plan->spare[n] = (v->ents[i].verdict == FP_PASS || v->ents[i].verdict == FP_WARN) &&
                             !end[n] && !slow[n];
            warned[n] = v->ents[i].verdict == FP_WARN;
        }
    }
    int k = rules->node_link_min > 2 ? rules->node_link_min : 2;
    for (int n = 0; n < nn; n++)
        if (end[n] || slow[n])
            FP_CHECK(add_partners(plan, n, slow[n] ? k + 1 : k, nn, warned, used, &cap));
cleanup:
    free(nodes.pair);
    free(end);
    free(used);
    if (st != FP_OK)
        fp_confirm_plan_free(plan);
    return st;
}

/* ---- the verdicts after the re-test ------------------------------------------------------- */

/* Whether every re-testable test of ev's failing reasons (of a held entity:
 * those that need a re-test) is among the tests the re-test ran ("a,b,c";
 * late: it judged late-rank records), and it has one. */
static bool tests_ran(const fp_verdicts *v, const fp_entity_verdict *ev, bool is_held,
                      const char *ran, bool late)
{
    bool any = false;
    for (size_t k = 0; k < ev->nreasons; k++) {
        const fp_reason *r = &v->reasons[ev->first_reason + k];
        if (!retested_reason(r, is_held))
            continue;
        const char *t;
        size_t len = key_test(r->key, &t);
        if (len == 1 && t[0] == '*') { /* late ranks: any collective that records them */
            if (!late)
                return false;
            any = true;
            continue;
        }
        bool found = false;
        for (const char *p = ran; *p && !found;) {
            size_t m = strcspn(p, ",");
            found = m == len && strncmp(p, t, len) == 0;
            p += m + (p[m] == ',');
        }
        if (!found)
            return false;
        any = true;
    }
    return any;
}

/* "what; note" into r's note, cut to fit ("note; what" for a configuration
 * reason, whose note is the value its line prints: "config F = <note>"). */
static void prefix_note(fp_reason *r, const char *what)
{
    char old[sizeof r->note];
    memcpy(old, r->note, sizeof old);
    if (old[0] && r->evidence == FP_EV_CONFIG)
        snprintf(r->note, sizeof r->note, "%.*s; %s",
                 (int)(sizeof r->note > strlen(what) + 3 ? sizeof r->note - strlen(what) - 3 : 0),
                 old, what);
    else if (old[0])
        snprintf(r->note, sizeof r->note, "%s; %.*s", what,
                 (int)(sizeof r->note > strlen(what) + 3 ? sizeof r->note - strlen(what) - 3 : 0),
                 old);
    else
        snprintf(r->note, sizeof r->note, "%s", what);
}

/* One failing entity of the first pass, or a node the re-test may find. */
typedef struct judged {
    size_t slot;     /* its entity in first */
    int retest;      /* its entity in retest, or -1 */
    bool suspect;    /* failed in the first pass, or held (below) */
    bool held;       /* only warned, for want of a re-test (a host-side metric) */
    bool candidate;  /* passed, an end of a failing link or slow with partners */
    bool retested, certain;
    fp_confirm_outcome outcome;
} judged;

typedef struct judged_names {
    const judged *j;
    char (*name)[2 * FP_NAME_MAX + 32];
} judged_names;

static const char *judged_name_buf(size_t i, const void *arg)
{
    return ((const judged_names *)arg)->name[i];
}

/* Whether ev has a failing reason of evidence kind e (FP_EV_VALUE: a wrong
 * result; FP_EV_LINKS: slow with its link partners). */
static bool fails_by(const fp_verdicts *v, const fp_entity_verdict *ev, fp_evidence e)
{
    for (size_t k = 0; k < ev->nreasons; k++)
        if (v->reasons[ev->first_reason + k].verdict == FP_FAIL &&
            v->reasons[ev->first_reason + k].evidence == e)
            return true;
    return false;
}

/* The entities to judge: first's failing ones, then the nodes at the ends of
 * its failing links and the nodes slow with their partners that passed (a
 * re-test may find them); each with its entity in retest. */
static fp_status collect(const fp_verdicts *first, const fp_verdicts *retest, judged **out,
                         size_t *n)
{
    fp_status st = FP_OK;
    judged *j = calloc(first->nents + 1, sizeof *j);
    judged_names jn = {0};
    name_ix nodes = {0}, names = {0};
    bool *cand = calloc(first->nnodes + 1, sizeof *cand);
    bool *certain = calloc(first->nnodes + 1, sizeof *certain);
    size_t m = 0;
    FP_CHECK_ALLOC(j);
    FP_CHECK_ALLOC(cand);
    FP_CHECK_ALLOC(certain);
    FP_CHECK(ix_build(&nodes, first->nnodes, verdict_node_name, first));
    /* a node fails whatever the re-test says when one of its parts gave a
     * wrong result */
    for (size_t i = 0; i < first->nents; i++) {
        const fp_entity_verdict *ev = &first->ents[i];
        if (ev->verdict != FP_FAIL || !fails_by(first, ev, FP_EV_VALUE))
            continue;
        int a = ev->entity->kind == FP_ENT_GROUP ? -1 : ix_find(&nodes, ev->entity->node);
        if (a >= 0)
            certain[a] = true;
    }
    for (size_t i = 0; i < first->nents; i++) {
        const fp_entity_verdict *ev = &first->ents[i];
        if (ev->verdict != FP_FAIL)
            continue;
        int a = ix_find(&nodes, ev->entity->node), b = -1;
        bool whole = ev->entity->kind != FP_ENT_LINK && ev->entity->kind != FP_ENT_GROUP;
        j[m++] = (judged){.slot = i, .retest = -1, .suspect = true,
                          .certain = fails_by(first, ev, FP_EV_VALUE) ||
                                     (whole && a >= 0 && certain[a])};
        if (ev->entity->kind == FP_ENT_LINK)
            b = ix_find(&nodes, ev->entity->peer);
        if (ev->entity->kind == FP_ENT_LINK && a >= 0 && b >= 0 && a != b)
            cand[a] = cand[b] = true;
        if (ev->entity->kind == FP_ENT_NODE && a >= 0 && fails_by(first, ev, FP_EV_LINKS))
            cand[a] = true;
    }
    for (size_t i = 0; i < first->nents; i++)
        if (held(first, &first->ents[i]))
            j[m++] = (judged){.slot = i, .retest = -1, .suspect = true, .held = true};
    for (size_t i = 0; i < first->nnodes; i++)
        if (cand[i] && first->ents[i].verdict != FP_FAIL && !held(first, &first->ents[i]))
            j[m++] = (judged){.slot = i, .retest = -1, .candidate = true};
    if (retest && m) {
        jn.j = j;
        jn.name = calloc(m, sizeof *jn.name);
        FP_CHECK_ALLOC(jn.name);
        for (size_t i = 0; i < m; i++)
            fp_entity_format(first->ents[j[i].slot].entity, jn.name[i], sizeof jn.name[0]);
        FP_CHECK(ix_build(&names, m, judged_name_buf, &jn));
        char name[2 * FP_NAME_MAX + 32];
        for (size_t e = 0; e < retest->nents; e++) {
            int w = ix_find(&names, fp_entity_format(retest->ents[e].entity, name, sizeof name));
            if (w >= 0)
                j[w].retest = (int)e;
        }
    }
    *out = j;
    *n = m;
    j = NULL;
cleanup:
    free(j);
    free(jn.name);
    free(cand);
    free(certain);
    free(nodes.pair);
    free(names.pair);
    return st;
}

/* Whether the re-test's run has late-rank records (a collective ran and was judged for them). */
static bool late_judged(const fp_verdicts *retest)
{
    const fp_run *run = retest ? retest->run : NULL;
    for (size_t i = 0; run && i < run->nsamples; i++)
        if (strncmp(fp_run_ref(run, i).key->metric, "late_rank", 9) == 0)
            return true;
    return false;
}

/* The series a re-test measured (its samples' metric key and entity, as
 * text), by the hash of that text, sorted: built once. A scan of the
 * re-test's samples for every failing reason grew with the product of the
 * two (at 100,000 nodes x 8 with 1,207 failing nodes, about 10 s of detect's
 * 18 s). */
typedef struct seen {
    uint64_t h;
    size_t i; /* a sample of the series */
} seen;
typedef struct measured {
    const fp_run *run;
    seen *by;
    size_t n;
} measured;

static uint64_t series_hash(const char *key, const char *entity)
{
    uint64_t h = fp_mix64(fp_hash_bytes(0, key, strlen(key)) ^ 0x1f); /* the texts apart */
    return fp_hash_bytes(h, entity, strlen(entity));
}

static int cmp_seen(const void *a, const void *b)
{
    const seen *x = a, *y = b;
    return x->h != y->h ? (x->h > y->h) - (x->h < y->h) : (x->i > y->i) - (x->i < y->i);
}

/* m for run (NULL: nothing measured); false when out of memory. */
static bool measured_make(measured *m, const fp_run *run)
{
    memset(m, 0, sizeof *m);
    m->run = run;
    if (!run || !run->nsamples)
        return true;
    m->by = malloc(run->nsamples * sizeof *m->by);
    if (!m->by)
        return false;
    char key[128], ent[2 * FP_NAME_MAX + 32];
    for (size_t i = 0; i < run->nsamples; i++) {
        fp_sample_ref s = fp_run_ref(run, i);
        m->by[m->n++] = (seen){series_hash(fp_sample_key(s.key, key, sizeof key),
                                           fp_entity_format(s.entity, ent, sizeof ent)),
                               i};
    }
    qsort(m->by, m->n, sizeof *m->by, cmp_seen);
    return true;
}

/* Whether m's run has a sample of metric key and entity (texts). */
static bool measured_has(const measured *m, const char *key, const char *entity)
{
    uint64_t h = series_hash(key, entity);
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->by[mid].h < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    char k[128], e[2 * FP_NAME_MAX + 32];
    for (; lo < m->n && m->by[lo].h == h; lo++) { /* the texts themselves decide */
        fp_sample_ref s = fp_run_ref(m->run, m->by[lo].i);
        if (strcmp(fp_sample_key(s.key, k, sizeof k), key) == 0 &&
            strcmp(fp_entity_format(s.entity, e, sizeof e), entity) == 0)
            return true;
    }
    return false;
}

/* Whether the re-test measured every series that failed ev (a GPU's or a
 * link's own peers, drift, fleet or reference evidence): a link sweep cut
 * short at its deadline can leave a failing link's bandwidth out, and a
 * series not measured again says nothing either way. */
static bool series_measured(const fp_verdicts *first, const fp_entity_verdict *ev,
                            bool is_held, const measured *m)
{
    if (ev->entity->kind != FP_ENT_GPU && ev->entity->kind != FP_ENT_LINK)
        return true;
    char want[2 * FP_NAME_MAX + 32];
    fp_entity_format(ev->entity, want, sizeof want);
    for (size_t k = 0; k < ev->nreasons; k++) {
        const fp_reason *r = &first->reasons[ev->first_reason + k];
        if (!retested_reason(r, is_held) ||
            (r->evidence != FP_EV_PEERS && r->evidence != FP_EV_DRIFT &&
                                      r->evidence != FP_EV_FLEET &&
                                      r->evidence != FP_EV_REFERENCE))
            continue;
        if (!measured_has(m, r->key, want))
            return false;
    }
    return true;
}

/* Whether a re-tested link was slow: it fails, or failed and a node
 * explains it (fp_reason.explained). */
static bool link_slow(const fp_verdicts *v, const fp_entity_verdict *ev)
{
    for (size_t k = 0; k < ev->nreasons; k++) {
        const fp_reason *r = &v->reasons[ev->first_reason + k];
        if (r->verdict == FP_FAIL || r->explained)
            return true;
    }
    return false;
}

/* Per node of first: its re-tested links to nodes that passed (a failing
 * node or an end of a failing link is no such partner), and the slow ones. */
typedef struct partners {
    uint32_t n, slow;
    bool cleared; /* a candidate end not found: its slow links are not its doing */
} partners;

static fp_status count_partners(const fp_verdicts *first, const fp_verdicts *retest,
                                const name_ix *nodes, const judged *j, size_t nj,
                                partners **out)
{
    fp_status st = FP_OK;
    size_t nn = first->nnodes;
    partners *p = calloc(nn + 1, sizeof *p);
    bool *good = malloc(nn + 1);
    FP_CHECK_ALLOC(p);
    FP_CHECK_ALLOC(good);
    for (size_t i = 0; i < nn; i++)
        good[i] = first->ents[i].verdict == FP_PASS || first->ents[i].verdict == FP_WARN;
    for (size_t i = 0; i < nj; i++)
        if (j[i].candidate)
            good[j[i].slot] = false;
    for (size_t e = 0; retest && e < retest->nents; e++) {
        const fp_entity *l = retest->ents[e].entity;
        if (l->kind != FP_ENT_LINK || strcmp(l->node, l->peer) == 0)
            continue;
        int a = ix_find(nodes, l->node), b = ix_find(nodes, l->peer);
        if (a < 0 || b < 0)
            continue;
        bool slow = link_slow(retest, &retest->ents[e]);
        if (good[b]) {
            p[a].n++;
            p[a].slow += slow;
        }
        if (good[a]) {
            p[b].n++;
            p[b].slow += slow;
        }
    }
    *out = p;
    p = NULL;
cleanup:
    free(p);
    free(good);
    return st;
}

/* Judge each entity: re-tested, reproduced, certain (a wrong result). An
 * end of a failing link (a candidate) is found when it fails on its links
 * again and is slow with most, and at least two, of its partners that
 * passed: its link to the other end, slow as before, says nothing of which
 * end is at fault, and one noisy partner is not enough. A failing link slow
 * again is reproduced unless an end so found explains it. */
static void judge(const fp_verdicts *first, const fp_verdicts *retest,
                  const fp_confirm_info *info, const measured *m, partners *p,
                  const name_ix *nodes, judged *j, size_t n)
{
    bool late = late_judged(retest);
    for (size_t i = 0; i < n; i++) {
        judged *x = &j[i];
        if (!x->candidate)
            continue;
        const fp_entity_verdict *rv = x->retest >= 0 ? &retest->ents[x->retest] : NULL;
        const partners *c = &p[x->slot];
        x->retested = rv != NULL;
        x->outcome = rv && rv->verdict == FP_FAIL && fails_by(retest, rv, FP_EV_LINKS) &&
                             c->slow >= 2 && 2 * c->slow > c->n
                         ? FP_CONFIRM_FOUND
                         : FP_CONFIRM_NOT_REPRODUCED;
        p[x->slot].cleared = x->outcome == FP_CONFIRM_NOT_REPRODUCED;
    }
    for (size_t i = 0; i < n; i++) {
        judged *x = &j[i];
        if (x->candidate)
            continue;
        const fp_entity_verdict *ev = &first->ents[x->slot];
        const fp_entity_verdict *rv = x->retest >= 0 ? &retest->ents[x->retest] : NULL;
        x->retested = info->ran && retest && tests_ran(first, ev, x->held, info->tests, late) &&
                      (ev->entity->kind != FP_ENT_LINK || rv) &&
                      series_measured(first, ev, x->held, m);
        bool again = rv && rv->verdict == FP_FAIL;
        if (rv && !again && ev->entity->kind == FP_ENT_LINK && link_slow(retest, rv)) {
            int a = ix_find(nodes, ev->entity->node), b = ix_find(nodes, ev->entity->peer);
            again = a >= 0 && b >= 0 && p[a].cleared && p[b].cleared;
        }
        x->outcome = !x->retested ? FP_CONFIRM_NOT_RETESTED
                     : again      ? FP_CONFIRM_REPRODUCED
                                  : FP_CONFIRM_NOT_REPRODUCED;
    }
}

/* A node fails while one of its parts (a device, a rank, a link inside it)
 * still fails: a part that reproduced confirms its node's fail (and fails a
 * node that only warned, where the part was held), one that failed and was
 * not re-tested keeps it. nodes: first's node names, indexed. */
static void roll_up(const fp_verdicts *first, const name_ix *nodes, judged *j, size_t n,
                    fp_confirm_outcome *part)
{
    for (size_t i = 0; i < first->nnodes; i++)
        part[i] = FP_CONFIRM_NOT_REPRODUCED;
    for (size_t k = 0; k < n; k++) {
        const fp_entity *e = first->ents[j[k].slot].entity;
        if (j[k].candidate || e->kind == FP_ENT_NODE || e->kind == FP_ENT_GROUP ||
            (e->kind == FP_ENT_LINK && strcmp(e->peer, e->node) != 0))
            continue;
        int a = ix_find(nodes, e->node);
        if (a >= 0 && (j[k].outcome == FP_CONFIRM_REPRODUCED ||
                       (j[k].outcome == FP_CONFIRM_NOT_RETESTED && !j[k].held &&
                        part[a] != FP_CONFIRM_REPRODUCED)))
            part[a] = j[k].outcome;
    }
    for (size_t k = 0; k < n; k++) {
        const fp_entity *e = first->ents[j[k].slot].entity;
        int a = e->kind == FP_ENT_NODE && !j[k].candidate ? ix_find(nodes, e->node) : -1;
        if (a >= 0 && j[k].outcome == FP_CONFIRM_NOT_REPRODUCED)
            j[k].outcome = part[a];
    }
}

/* The verdict an entity ends with (FP_UNKNOWN: its first pass's), and the
 * note its first-pass fails (a held entity's warns that wait for a re-test)
 * get. */
static fp_verdict final_verdict(const judged *x, const char **note)
{
    *note = NULL;
    if (x->held && x->outcome != FP_CONFIRM_REPRODUCED) {
        *note = x->outcome == FP_CONFIRM_NOT_RETESTED ? "not re-tested"
                                                      : "did not reproduce on re-test";
        return FP_UNKNOWN;
    }
    switch (x->outcome) {
    case FP_CONFIRM_REPRODUCED: /* its re-test reasons follow its own */
        return FP_FAIL;
    case FP_CONFIRM_NOT_RETESTED:
        *note = "not re-tested";
        return FP_FAIL;
    case FP_CONFIRM_FOUND:
        return FP_FAIL;
    case FP_CONFIRM_NOT_REPRODUCED:
        if (x->candidate)
            return FP_UNKNOWN; /* keeps its first-pass verdict */
        *note = x->certain ? "did not reproduce on re-test; a wrong result fails regardless"
                           : "did not reproduce on re-test";
        return x->certain ? FP_FAIL : FP_WARN;
    }
    return FP_FAIL;
}

fp_status fp_verdicts_confirm(const fp_verdicts *first, const fp_verdicts *retest,
                              const fp_confirm_info *info, fp_verdicts **out)
{
    fp_status st = FP_OK;
    judged *j = NULL;
    size_t nj = 0;
    int *of_slot = NULL;
    fp_confirm_outcome *part = NULL;
    partners *partner = NULL;
    name_ix nodes = {0};
    measured seen_by = {0};
    fp_verdicts *v = calloc(1, sizeof *v);
    *out = NULL;
    FP_CHECK_ALLOC(v);
    if (!info->ran)
        retest = NULL;
    FP_CHECK(collect(first, retest, &j, &nj));
    if (!measured_make(&seen_by, retest ? retest->run : NULL))
        FP_FAIL(FP_ENOMEM, "out of memory indexing the %zu samples of the re-test",
                retest->run->nsamples);
    FP_CHECK(ix_build(&nodes, first->nnodes, verdict_node_name, first));
    FP_CHECK(count_partners(first, retest, &nodes, j, nj, &partner));
    judge(first, retest, info, &seen_by, partner, &nodes, j, nj);
    part = malloc((first->nnodes + 1) * sizeof *part);
    FP_CHECK_ALLOC(part);
    roll_up(first, &nodes, j, nj, part);
    of_slot = malloc((first->nents + 1) * sizeof *of_slot);
    FP_CHECK_ALLOC(of_slot);
    for (size_t i = 0; i < first->nents; i++)
        of_slot[i] = -1;
    size_t extra = 0;
    for (size_t i = 0; i < nj; i++) {
        of_slot[j[i].slot] = (int)i;
        if (j[i].retest >= 0)
            extra += retest->ents[j[i].retest].nreasons;
    }
    size_t nn = first->nnodes;
    v->run = first->run;
    v->nents = first->nents;
    v->ents = calloc(first->nents + 1, sizeof *v->ents);
    v->made = malloc((first->nmade + 1) * sizeof *v->made);
    v->reasons = calloc(first->nreasons + extra + 1, sizeof *v->reasons);
    v->node_names = malloc((nn + 1) * sizeof *v->node_names);
    v->fail_nodes = malloc((nn + 1) * sizeof *v->fail_nodes);
    v->warn_nodes = malloc((nn + 1) * sizeof *v->warn_nodes);
    v->blind = malloc((first->nblind + 1) * sizeof *v->blind);
    v->confirm = calloc(1, sizeof *v->confirm);
    fp_confirm_item *items = calloc(nj + 1, sizeof *items);
    if (v->confirm)
        v->confirm->items = items;
    else
        free(items);
    if (!v->ents || !v->made || !v->reasons || !v->node_names || !v->fail_nodes ||
        !v->warn_nodes || !v->blind || !v->confirm || !items)
        FP_FAIL(FP_ENOMEM, "out of memory confirming the verdicts of run %s (%zu entities)",
                first->run->id, first->nents);
    memcpy(v->node_names, first->node_names, nn * sizeof *v->node_names);
    memcpy(v->made, first->made, first->nmade * sizeof *v->made); /* first's go with it */
    v->nmade = first->nmade;
    uintptr_t made_lo = (uintptr_t)first->made, made_hi = made_lo + first->nmade * sizeof *v->made;
    memcpy(v->blind, first->blind, first->nblind * sizeof *v->blind);
    v->nblind = first->nblind;
    v->nnodes = nn;
    fp_verdict overall = FP_UNKNOWN;
    for (size_t i = 0; i < first->nents; i++) {
        const fp_entity_verdict *ev = &first->ents[i];
        fp_entity_verdict *nv = &v->ents[i];
        const judged *x = of_slot[i] >= 0 ? &j[of_slot[i]] : NULL;
        const char *note = NULL;
        fp_verdict fv = x ? final_verdict(x, &note) : FP_UNKNOWN;
        if (!x && i < nn && part[i] == FP_CONFIRM_REPRODUCED)
            fv = FP_FAIL; /* a node that warned: a held part of it reproduced */
        *nv = *ev;
        if ((uintptr_t)ev->entity >= made_lo && (uintptr_t)ev->entity < made_hi)
            nv->entity = v->made + ((uintptr_t)ev->entity - made_lo) / sizeof *v->made;
        nv->verdict = fv == FP_UNKNOWN ? ev->verdict : fv;
        nv->first_reason = v->nreasons;
        nv->nreasons = 0;
        for (size_t k = 0; k < ev->nreasons; k++) {
            fp_reason r = first->reasons[ev->first_reason + k];
            if (note && (r.verdict == FP_FAIL || (x->held && r.needs_retest))) {
                prefix_note(&r, note);
                if (fv == FP_WARN)
                    r.verdict = FP_WARN;
            }
            v->reasons[v->nreasons++] = r;
            nv->nreasons++;
        }
        if (x && x->retest >= 0 && (x->suspect || x->outcome == FP_CONFIRM_FOUND)) {
            /* the second pass's word on it */
            const fp_entity_verdict *rv = &retest->ents[x->retest];
            for (size_t k = 0; k < rv->nreasons; k++) {
                fp_reason r = retest->reasons[rv->first_reason + k];
                if (r.verdict == FP_PASS)
                    continue;
                r.retest = true;
                if (r.explained && x->outcome == FP_CONFIRM_REPRODUCED &&
                    ev->entity->kind == FP_ENT_LINK) {
                    r.verdict = FP_FAIL; /* slow again; no end was found at fault */
                    r.explained = false;
                    snprintf(r.note, sizeof r.note,
                             "slow again; both ends fine with most nodes that passed");
                }
                if (x->outcome == FP_CONFIRM_FOUND && r.verdict == FP_FAIL &&
                    r.evidence == FP_EV_LINKS)
                    prefix_note(&r, "slow with nodes that passed too");
                v->reasons[v->nreasons++] = r;
                nv->nreasons++;
            }
        }
        overall = fp__det_worse(overall, nv->verdict);
        if (i < nn && nv->verdict == FP_FAIL)
            v->fail_nodes[v->nfail_nodes++] = v->node_names[i];
        if (i < nn && (nv->verdict == FP_FAIL || nv->verdict == FP_WARN))
            v->warn_nodes[v->nwarn_nodes++] = v->node_names[i];
    }
    v->overall = overall;
    *v->confirm = *info;
    size_t ni = 0;
    for (size_t i = 0; i < nj; i++) {
        if (j[i].candidate && j[i].outcome != FP_CONFIRM_FOUND)
            continue; /* an end that passed again: nothing to say */
        items[ni++] = (fp_confirm_item){.entity = *first->ents[j[i].slot].entity,
                                        .outcome = j[i].outcome,
                                        .certain = j[i].certain};
    }
    v->confirm->items = items;
    v->confirm->nitems = ni;
    FP_CHECK(fp__det_keep_extras(v, first));
cleanup:
    free(j);
    free(seen_by.by);
    free(of_slot);
    free(part);
    free(partner);
    free(nodes.pair);
    if (st == FP_OK)
        *out = v;
    else
        fp_verdicts_free(v);
    return st;
}
