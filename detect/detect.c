/* The detector. A run's samples become series (metric key x entity, one
 * value per window); series are grouped by key and SKU; every window of a
 * group gets a robust centre and scale (median, MAD; in log space for
 * relative rules, so a 2x outlier and a 0.5x one weigh alike); each series is
 * judged per window and must stay out of bounds in enough windows, in a row,
 * to fail (Minder's continuity check). Entity verdicts are then demarcated:
 * links slow with most partners of a node blame the node, the rest blame the
 * link; device and late-rank failures blame their node.
 *
 * Cost: O(samples) hashing plus O(series x windows) selection, no sorting of
 * samples; 10,000 nodes x 8 GPUs takes well under a second on one core.
 * This file is the driver: fp_detect runs the phases in order and assembles
 * the verdict set, whose accessors follow, and the verdicts of a run that
 * timed out. It calls the engine (engine.c: interning, reasons), the evidence
 * phases (evidence.c: value, peers, baselines) and the last phases
 * (demarcate.c: missing results, demarcation, late ranks); none of them calls
 * back. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"
#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "fleetprint/store.h"

/* ---- names ---------------------------------------------------------------------------------- */

const char *fp_verdict_name(fp_verdict v)
{
    static const char *const names[] = {"pass", "warn", "fail", "unknown"};
    return (unsigned)v <= FP_UNKNOWN ? names[v] : "?";
}

const char *fp_evidence_name(fp_evidence e)
{
    static const char *const names[] = {"peers",   "drift", "fleet",     "value",
                                        "missing", "links", "gpus",      "late",
                                        "config",  "reference", "history"};
    return (unsigned)e < FP_EV_COUNT ? names[e] : "?";
}


/* ---- assembling the verdicts ---------------------------------------------------------------- */

/* out's room for an entity verdict per node and per entity other than a node
 * (interning made them all), faulted in by pf while the last steps of
 * evidence run: they leave a core idle, and at 100,000 nodes x 8 the 235 MB
 * took assembly 0.2-0.5 s to fault in. FP_ENOMEM. */
static fp_status assemble_room(const eng *g, fp_verdicts *out, fp_prefault *pf)
{
    size_t nother = 0;
    for (size_t e = 0; e < g->nents; e++)
        nother += g->ents[e].kind != FP_ENT_NODE;
    out->nents = g->nnodes + nother;
    out->ents = fp_calloc_huge(out->nents + 1, sizeof *out->ents);
    if (!out->ents)
        return FP_ENOMEM;
    fp_prefault_add(pf, out->ents, (out->nents + 1) * sizeof *out->ents);
    fp_prefault_start(pf);
    return FP_OK;
}

static fp_status assemble(eng *g, fp_verdicts *out)
{
    size_t nn = g->nnodes, nother = out->nents - nn;
    out->run = g->run;
    out->reasons = fp_malloc_huge((g->nreasons + 1) * sizeof *out->reasons);
    out->made = malloc((nn + 1) * sizeof *out->made);
    out->node_names = malloc((nn + 1) * sizeof *out->node_names);
    out->fail_nodes = malloc((nn + 1) * sizeof *out->fail_nodes);
    out->warn_nodes = malloc((nn + 1) * sizeof *out->warn_nodes);
    size_t *slot_of_owner = fp_malloc_huge((nn + g->nents + 1) * sizeof *slot_of_owner);
    size_t *count = fp_calloc_huge(nn + nother + 2, sizeof *count);
    fp_status st = FP_OK;
    if (!out->reasons || !out->made || !out->node_names || !out->fail_nodes ||
        !out->warn_nodes || !slot_of_owner || !count)
        FP_FAIL(FP_ENOMEM, "out of memory assembling the verdicts of run %s (%zu entities)",
                g->run->id, out->nents);
    fp_verdict overall = FP_UNKNOWN;
    for (size_t n = 0; n < nn; n++) {
        snprintf(out->node_names[n], FP_NAME_MAX, "%s", g->node[n]);
        out->ents[n].entity = fp__det_made(out, fp_entity_node(g->node[n]));
        out->ents[n].verdict = g->node_v[n];
        slot_of_owner[n] = n;
        overall = fp__det_worse(overall, g->node_v[n]);
        if (g->node_v[n] == FP_FAIL)
            out->fail_nodes[out->nfail_nodes++] = out->node_names[n];
        if (g->node_v[n] == FP_FAIL || g->node_v[n] == FP_WARN)
            out->warn_nodes[out->nwarn_nodes++] = out->node_names[n];
    }
    out->nnodes = nn;
    size_t slot = nn;
    for (size_t e = 0; e < g->nents; e++) {
        const ent_info *ei = &g->ents[e];
        if (ei->kind == FP_ENT_NODE) {
            slot_of_owner[nn + e] = (size_t)ei->node;
            continue;
        }
        slot_of_owner[nn + e] = slot;
        out->ents[slot].entity = ei->e;
        out->ents[slot].verdict = ei->v;
        overall = fp__det_worse(overall, ei->v);
        slot++;
    }
    out->overall = overall;
    /* reasons grouped by entity slot, in the order they were found */
    for (size_t i = 0; i < g->nreasons; i++)
        count[slot_of_owner[g->reasons[i].owner] + 1]++;
    for (size_t s = 0; s < out->nents; s++) {
        count[s + 1] += count[s];
        out->ents[s].first_reason = count[s];
    }
    for (size_t i = 0; i < g->nreasons; i++) {
        size_t s = slot_of_owner[g->reasons[i].owner];
        out->reasons[out->ents[s].first_reason + out->ents[s].nreasons++] = g->reasons[i].r;
    }
    out->nreasons = g->nreasons;
    out->blind = g->blind, out->nblind = g->nblind;
    g->blind = NULL;
    out->drift = g->drift, out->ndrift = g->ndrift;
    g->drift = NULL;
cleanup:
    free(slot_of_owner);
    free(count);
    return st;
}

/* ---- entry point ------------------------------------------------------------------------------ */

/* Baseline evidence runs on a thread of its own, beside peer evidence. It
 * reads only what interning made, and writes into a shallow copy of the
 * engine: its own reasons and entity verdicts (merged after peer evidence's,
 * so the verdicts and their order do not depend on the threads) and the
 * class floors (window and between-run), which peer evidence does not touch.
 * It plans (fp__det_base_plan), then judges the series a chunk at a time;
 * the main thread, done with peer evidence, takes chunks too (at 100k nodes
 * x 8 with baselines the plan took 1.3-1.4 s, peer evidence 1.4-1.6 s, and
 * the judging 0.9 s more), in a copy of its own (help). Their reasons are
 * merged in the chunks' order: the series' order, as one thread judges. */
#define BASE_CHUNK ((size_t)1 << 16)

typedef struct base_chunk {
    bool helped;   /* judged by the main thread */
    size_t lo, hi; /* its reasons in the judging copy */
} base_chunk;

typedef struct base_job {
    eng g, help;
    fp__base_plan plan;
    base_chunk *chunk;
    size_t nchunks;
    atomic_size_t next; /* the next chunk to judge */
    window_score *ws;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t planned_cv;
    bool running, planned, helped;
    fp_status plan_st, st;
} base_job;

/* to: a shallow copy of g for a thread, with reasons, blind spots and
 * entity verdicts (all unknown) of its own. FP_ENOMEM (logged). */
static fp_status thread_copy(eng *to, const eng *g)
{
    fp_status st = FP_OK;
    *to = *g;
    to->reasons = NULL;
    to->nreasons = to->reason_cap = 0;
    to->blind = NULL;
    to->nblind = to->blind_cap = 0;
    to->ent_v = fp_malloc_huge((g->nents + 1) * sizeof *to->ent_v);
    FP_CHECK_ALLOC(to->ent_v);
    for (size_t e = 0; e < g->nents; e++)
        to->ent_v[e] = FP_UNKNOWN;
cleanup:
    return st;
}

/* Run fn(arg) on a new thread (true), or here where none is to be had. */
static bool start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
    if (pthread_create(t, NULL, fn, arg) == 0)
        return true;
    fn(arg);
    return false;
}

/* Raise g's entity verdicts to those a copy of it found. */
static void merge_verdicts(eng *g, const eng *from)
{
    for (size_t e = 0; e < g->nents; e++)
        g->ents[e].v = fp__det_worse(g->ents[e].v, from->ent_v[e]);
}

/* Judge chunks of series into g (the thread's copy, or the main thread's
 * help) until none is left. */
static fp_status judge_chunks(base_job *j, eng *g, bool helped, window_score *ws)
{
    fp_status st = FP_OK;
    size_t c;
    while (st == FP_OK && (c = atomic_fetch_add(&j->next, 1)) < j->nchunks) {
        size_t s0 = c * BASE_CHUNK, s1 = s0 + BASE_CHUNK < g->nser ? s0 + BASE_CHUNK : g->nser;
        j->chunk[c] = (base_chunk){.helped = helped, .lo = g->nreasons, .hi = g->nreasons};
        st = fp__det_base_judge(g, &j->plan, s0, s1, ws);
        j->chunk[c].hi = g->nreasons;
    }
    return st;
}

static void *base_main(void *arg)
{
    base_job *j = arg;
    fp_status st = fp__det_base_plan(&j->g, &j->plan);
    pthread_mutex_lock(&j->mu);
    j->plan_st = st;
    j->planned = true;
    pthread_cond_signal(&j->planned_cv);
    pthread_mutex_unlock(&j->mu);
    j->st = st == FP_OK ? judge_chunks(j, &j->g, false, j->ws) : st;
    return NULL;
}

static fp_status base_start(base_job *j, const eng *g, int maxw)
{
    fp_status st = FP_OK;
    FP_CHECK(thread_copy(&j->g, g));
    j->nchunks = (g->nser + BASE_CHUNK - 1) / BASE_CHUNK;
    j->chunk = calloc(j->nchunks + 1, sizeof *j->chunk);
    j->ws = malloc((size_t)maxw * sizeof *j->ws);
    FP_CHECK_ALLOC(j->chunk);
    FP_CHECK_ALLOC(j->ws);
    atomic_init(&j->next, 0);
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->planned_cv, NULL);
    j->running = start_thread(&j->thread, base_main, j);
cleanup:
    return st;
}

/* The main thread, its peer evidence done: judges what chunks are left once
 * the thread's plan is made (ws: room for the most windows). */
static fp_status base_help(base_job *j, const eng *g, window_score *ws)
{
    fp_status st = FP_OK;
    pthread_mutex_lock(&j->mu);
    while (!j->planned)
        pthread_cond_wait(&j->planned_cv, &j->mu);
    pthread_mutex_unlock(&j->mu);
    if (j->plan_st != FP_OK)
        return FP_OK; /* base_finish reports it */
    FP_CHECK(thread_copy(&j->help, g));
    j->helped = true;
    j->help.class_floor = j->g.class_floor;
    j->help.run_floor = j->g.run_floor;
    FP_CHECK(judge_chunks(j, &j->help, true, ws));
cleanup:
    return st;
}

/* Append n reasons (found by a copy of g judging on a thread; what: its
 * evidence, for the message) to g's. */
static fp_status merge_reasons(eng *g, const owned_reason *r, size_t n, const char *what)
{
    fp_status st = FP_OK;
    if (!n)
        return FP_OK;
    owned_reason *t = fp_grow(g->reasons, &g->reason_cap, g->nreasons + n, sizeof *t, 256);
    if (!t)
        FP_FAIL(FP_ENOMEM, "out of memory merging %zu reasons of %s", n, what);
    g->reasons = t;
    memcpy(g->reasons + g->nreasons, r, n * sizeof *t);
    g->nreasons += n;
cleanup:
    return st;
}

/* Waits for the baseline thread and merges its results, and the main
 * thread's, into g: the reasons in the chunks' order. */
static fp_status base_finish(base_job *j, eng *g)
{
    if (j->running)
        pthread_join(j->thread, NULL);
    j->running = false;
    g->class_floor = j->g.class_floor;
    j->g.class_floor = NULL;
    fp_status st = j->st;
    for (size_t c = 0; st == FP_OK && c < j->nchunks; c++) {
        const base_chunk *k = &j->chunk[c];
        const eng *from = k->helped ? &j->help : &j->g;
        st = merge_reasons(g, from->reasons + k->lo, k->hi - k->lo, "baseline evidence");
    }
    if (st == FP_OK)
        merge_verdicts(g, &j->g);
    if (st == FP_OK && j->helped)
        merge_verdicts(g, &j->help);
    return st;
}

static void base_free(base_job *j, eng *g)
{
    if (j->running)
        (void)base_finish(j, g);
    if (j->ws && j->chunk) { /* started: its lock and condition made */
        pthread_mutex_destroy(&j->mu);
        pthread_cond_destroy(&j->planned_cv);
    }
    fp__det_base_plan_free(&j->plan);
    free(j->g.reasons);
    free(j->g.ent_v);
    free(j->g.class_floor);
    free(j->help.reasons);
    free(j->help.ent_v);
    free(j->chunk);
    free(j->ws);
    memset(j, 0, sizeof *j); /* freed again: nothing */
}

/* A series' peer group: its entity's SKU (those of none last), then kind. */
static size_t peer_group(const eng *g, uint32_t ser)
{
    const ent_info *ei = &g->ents[g->ser[ser].ent];
    size_t sku = ei->sku < 0 ? g->nsku : (size_t)ei->sku;
    return sku * FP_ENT_KIND_COUNT + (size_t)ei->kind;
}

/* One thread's scratch for judging keys: the largest key's values, windows
 * and peer groups. */
typedef struct key_scratch {
    double *buf;
    window_score *ws;
    uint32_t *grp, *grp_first;
} key_scratch;

/* Whether key k's records are late-rank records (tallied, not judged by
 * peers). */
static bool late_key(const key_info *k)
{
    return !k->vrule && k->cls && !k->cls->ignore && k->cls->late;
}

/* Value and peer evidence of keys [k0, k1) (series by_key, key_first), and
 * their late-rank records tallied into late (NULL: left to the caller). */
static fp_status judge_keys(eng *g, const uint32_t *key_first, const uint32_t *by_key, size_t k0,
                            size_t k1, key_scratch *s, late_tally *late)
{
    fp_status st = FP_OK;
    size_t ngrp = (g->nsku + 1) * FP_ENT_KIND_COUNT;
    for (size_t k = k0; k < k1; k++) {
        const key_info *ki = &g->keys[k];
        const uint32_t *sers = by_key + key_first[k];
        size_t m = key_first[k + 1] - key_first[k];
        if (ki->vrule) {
            for (size_t i = 0; i < m; i++)
                FP_CHECK(fp__det_judge_value(g, &g->ser[sers[i]]));
            continue;
        }
        if (late_key(ki)) {
            if (late)
                fp__det_tally_late(g, ki, sers, m, late);
            continue;
        }
        if (!ki->cls || ki->cls->ignore)
            continue; /* no class matches, or the class is not judged */
        /* one peer group per SKU and entity kind, those of no SKU last
         * (a counting sort of the key's series into grp) */
        uint32_t *grp = s->grp, *grp_first = s->grp_first;
        memset(grp_first, 0, (ngrp + 1) * sizeof *grp_first);
        for (size_t i = 0; i < m; i++)
            grp_first[peer_group(g, sers[i]) + 1]++;
        for (size_t b = 0; b < ngrp; b++)
            grp_first[b + 1] += grp_first[b];
        for (size_t i = 0; i < m; i++)
            grp[grp_first[peer_group(g, sers[i])]++] = sers[i];
        for (size_t b = 0, lo = 0; b < ngrp; lo = grp_first[b++])
            if (grp_first[b] > lo)
                FP_CHECK(fp__det_judge_peers(g, ki, grp + lo, grp_first[b] - lo, s->buf, s->ws));
    }
cleanup:
    return st;
}

/* Below this many values a second thread does not pay for itself. */
#define PEERS_THREAD_MIN ((size_t)1 << 20)

/* Without baselines the second core would idle through peer evidence: a
 * thread judges the later keys on a shallow copy of the engine with its own
 * reasons, entity verdicts, bad windows, blind spots and scratch, merged
 * after the main thread's, so that the verdicts, and the order of reasons
 * and blind spots, are those of one thread judging every key in turn. */
typedef struct peers_job {
    eng g;
    const uint32_t *key_first, *by_key;
    size_t k0, k1;
    key_scratch s;
    pthread_t thread;
    bool running;
    fp_status st;
} peers_job;

static void *peers_main(void *arg)
{
    peers_job *j = arg;
    j->st = judge_keys(&j->g, j->key_first, j->by_key, j->k0, j->k1, &j->s, NULL);
    return NULL;
}

/* Start the job on keys [k0, nkeys) of g, whose largest key has most
 * values and m series at most maxw windows. */
static fp_status peers_start(peers_job *j, const eng *g, const uint32_t *key_first,
                             const uint32_t *by_key, size_t k0, size_t most, size_t m, int maxw)
{
    fp_status st = FP_OK;
    FP_CHECK(thread_copy(&j->g, g));
    j->g.bad = fp_calloc_huge(g->nents + 1, sizeof *j->g.bad);
    j->g.peer_rows = fp_malloc_huge((2 * most + 3 * m) * sizeof *j->g.peer_rows);
    j->s.buf = malloc((m + 4 * (size_t)maxw + 1) * sizeof *j->s.buf);
    j->s.ws = malloc((size_t)maxw * sizeof *j->s.ws);
    j->s.grp = malloc((m + 1) * sizeof *j->s.grp);
    j->s.grp_first = malloc(((g->nsku + 1) * FP_ENT_KIND_COUNT + 1) * sizeof *j->s.grp_first);
    if (!j->g.bad || !j->g.peer_rows || !j->s.buf || !j->s.ws || !j->s.grp || !j->s.grp_first)
        FP_FAIL(FP_ENOMEM, "out of memory for peer evidence on a second thread (%zu entities)",
                g->nents);
    j->key_first = key_first;
    j->by_key = by_key;
    j->k0 = k0;
    j->k1 = g->nkeys;
    j->running = start_thread(&j->thread, peers_main, j);
cleanup:
    return st;
}

/* Waits for the job and merges what it found into g, after g's own. */
static fp_status peers_finish(peers_job *j, eng *g)
{
    if (j->running)
        pthread_join(j->thread, NULL);
    j->running = false;
    fp_status st = j->st;
    if (st == FP_OK)
        st = merge_reasons(g, j->g.reasons, j->g.nreasons, "peer evidence");
    if (st == FP_OK && j->g.nblind) {
        fp_blind_spot *t =
            fp_grow(g->blind, &g->blind_cap, g->nblind + j->g.nblind, sizeof *t, 16);
        if (!t)
            FP_FAIL(FP_ENOMEM, "out of memory merging %zu blind spots", j->g.nblind);
        g->blind = t;
        memcpy(g->blind + g->nblind, j->g.blind, j->g.nblind * sizeof *t);
        g->nblind += j->g.nblind;
    }
    for (size_t e = 0; st == FP_OK && e < g->nents; e++) {
        ent_info *ei = &g->ents[e];
        ei->v = fp__det_worse(ei->v, j->g.ent_v[e]);
        /* out in two series: both on one side, or one on each */
        ei->bad2 |= j->g.bad[e][1] | (ei->bad1 & j->g.bad[e][0]);
        ei->bad1 |= j->g.bad[e][0];
    }
cleanup:
    return st;
}

static void peers_free(peers_job *j, eng *g)
{
    if (j->running)
        (void)peers_finish(j, g);
    free(j->g.reasons);
    free(j->g.blind);
    free(j->g.ent_v);
    free(j->g.bad);
    free(j->g.peer_rows);
    free(j->s.buf);
    free(j->s.ws);
    free(j->s.grp);
    free(j->s.grp_first);
    memset(j, 0, sizeof *j);
}

/* Missing results on a thread beside the release of held fails and
 * reference evidence (0.18 s and 0.24 s at 100k nodes x 8): it reads only
 * what interning made, and neither of them reads what it writes, its own
 * reasons and entity verdicts, merged after theirs. */
typedef struct missing_job {
    eng g;
    const uint32_t *key_first, *by_key;
    pthread_t thread;
    bool running;
    fp_status st;
} missing_job;

static void *missing_main(void *arg)
{
    missing_job *j = arg;
    j->st = fp__det_judge_missing(&j->g, j->key_first, j->by_key);
    return NULL;
}

static fp_status missing_start(missing_job *j, const eng *g, const uint32_t *key_first,
                               const uint32_t *by_key)
{
    fp_status st = FP_OK;
    FP_CHECK(thread_copy(&j->g, g));
    j->key_first = key_first;
    j->by_key = by_key;
    j->running = start_thread(&j->thread, missing_main, j);
cleanup:
    return st;
}

static fp_status missing_finish(missing_job *j, eng *g)
{
    if (j->running)
        pthread_join(j->thread, NULL);
    j->running = false;
    fp_status st = j->st;
    if (st == FP_OK)
        st = merge_reasons(g, j->g.reasons, j->g.nreasons, "missing results");
    if (st == FP_OK)
        merge_verdicts(g, &j->g);
    return st;
}

static void missing_free(missing_job *j, eng *g)
{
    if (j->running)
        (void)missing_finish(j, g);
    free(j->g.reasons);
    free(j->g.ent_v);
}

/* ---- interning ahead ------------------------------------------------------------------------ */

struct fp_detect_prep {
    eng g;
    pthread_t thread;
    bool running, taken;
    fp_status st;
};

static void *prep_main(void *arg)
{
    fp_detect_prep *p = arg;
    p->st = fp__det_intern(&p->g);
    return NULL;
}

fp_status fp_detect_prepare(const fp_run *run, const struct fp_row_pack *pack,
                            const fp_rules *rules, fp_detect_prep **out)
{
    fp_detect_prep *p = calloc(1, sizeof *p);
    *out = p;
    if (!p)
        return FP_ENOMEM;
    p->g.run = run;
    p->g.pack = pack;
    p->g.rules = rules;
    if (run->nsamples == 0 || run->nsamples >= UINT32_MAX / 2)
        return FP_OK; /* nothing to intern: fp_detect says why */
    p->g.ahead = fp__det_ahead_new(&p->g);
    p->running = start_thread(&p->thread, prep_main, p);
    return FP_OK;
}

static void prep_wait(fp_detect_prep *p)
{
    if (p->running)
        pthread_join(p->thread, NULL);
    p->running = false;
    fp__det_ahead_free(p->g.ahead);
    p->g.ahead = NULL;
}

void fp_detect_prep_free(fp_detect_prep *p)
{
    if (!p)
        return;
    prep_wait(p);
    if (!p->taken)
        fp__det_free(&p->g);
    free(p);
}

/* The baseline entity id of each entity of run's table, or NULL (no
 * memory: the plan looks them up by name). */
static uint32_t *table_baseline_ids(const fp_run *run, const fp_baselines *base)
{
    size_t n = run->rows->nents;
    uint32_t *bid = fp_malloc_huge((n + 1) * sizeof *bid);
    char name[2 * FP_NAME_MAX + 32];
    uint32_t next = 0; /* a run's table and the baselines' list entities alike */
    for (size_t i = 0; bid && i < n; i++) {
        fp_entity_format(&run->rows->ents[i], name, sizeof name);
        bid[i] = fp_baselines_entity_id_near(base, name, next);
        if (bid[i] != FP_BASELINE_NONE)
            next = bid[i] + 1;
    }
    return bid;
}

/* g (its run and rules set, nothing else) interned: by the prepared job,
 * where there is one for this run; meanwhile this thread, which would wait,
 * finds the run's entities in the baselines base (NULL: none), then decodes
 * chunks ahead of the interning. */
static fp_status intern(eng *g, fp_detect_prep *p, const fp_baselines *base)
{
    if (!p || p->taken || p->g.run != g->run || p->g.rules != g->rules) {
        if (g->run->rows && !g->run->rows->row) {
            fp_error("run %s: its rows are packed: only fp_detect_prepare reads them",
                     g->run->id);
            return FP_EUSAGE;
        }
        return fp__det_intern(g);
    }
    uint32_t *bid = base && g->run->rows ? table_baseline_ids(g->run, base) : NULL;
    if (p->running)
        fp__det_ahead_help(p->g.ahead);
    prep_wait(p);
    p->taken = true;
    *g = p->g;
    g->table_bid = bid;
    return p->st;
}

fp_status fp_detect(const fp_run *run, const fp_detect_opts *opts, fp_verdicts **out)
{
    fp_status st = FP_OK;
    eng g;
    memset(&g, 0, sizeof g);
    g.run = run;
    g.rules = opts->rules;
    uint32_t *by_key = NULL, *key_first = NULL, *grp = NULL, *grp_first = NULL;
    double *buf = NULL;
    window_score *ws = NULL;
    fp_verdicts *v = NULL;
    late_tally late = {0};
    base_job bj = {0};
    peers_job pj = {0};
    missing_job mj = {0};
    det_history hist = {0};
    fp_prefault pf = {0};
    *out = NULL;
    if (run->nsamples == 0 || run->nsamples >= UINT32_MAX / 2)
        FP_FAIL(FP_EINPUT, "run %s has %s samples: nothing to judge", run->id,
                run->nsamples ? "too many" : "no");
    FP_CHECK(intern(&g, opts->prepared, opts->baselines));
    g.base = opts->baselines;
    g.contended = opts->contended;
    g.contended_note = opts->contended_note;
    g.explain = opts->explain;
    g.refs = opts->references;
    g.previous = opts->previous;
    g.confirmed = opts->confirmed;
    for (size_t x = 0; g.explain && x < g.nents; x++)
        g.ents[x].explain = fp_entity_in(g.ents[x].e, g.explain);

    /* series bucketed by key (counting sort) */
    by_key = fp_malloc_huge((g.nser + 1) * sizeof *by_key);
    key_first = calloc(g.nkeys + 2, sizeof *key_first);
    FP_CHECK_ALLOC(by_key);
    FP_CHECK_ALLOC(key_first);
    for (size_t s = 0; s < g.nser; s++)
        key_first[g.ser[s].key + 1]++;
    for (size_t k = 0; k < g.nkeys; k++)
        key_first[k + 1] += key_first[k];
    {
        uint32_t *fill = calloc(g.nkeys + 1, sizeof *fill);
        FP_CHECK_ALLOC(fill);
        for (size_t s = 0; s < g.nser; s++) {
            uint32_t k = g.ser[s].key;
            by_key[key_first[k] + fill[k]++] = (uint32_t)s;
        }
        free(fill);
    }
    int maxw = 1;
    size_t most = 1, most_m = 1, total = 0; /* values and series of the largest key; values */
    for (size_t k = 0; k < g.nkeys; k++) {
        maxw = g.keys[k].raw_windows > maxw ? g.keys[k].raw_windows : maxw;
        size_t n = key_first[k + 1] - key_first[k], m = n * (size_t)g.keys[k].windows;
        most = m > most ? m : most;
        most_m = n > most_m ? n : most_m;
        total += m;
    }
    g.peer_rows = fp_malloc_huge((2 * most + 3 * most_m) * sizeof *g.peer_rows);
    FP_CHECK_ALLOC(g.peer_rows);
    buf = fp_malloc_huge((g.nser + 4 * (size_t)maxw + 1) * sizeof *buf);
    ws = malloc((size_t)maxw * sizeof *ws);
    grp = fp_malloc_huge((g.nser + 1) * sizeof *grp);
    size_t ngrp = (g.nsku + 1) * FP_ENT_KIND_COUNT;
    grp_first = malloc((ngrp + 1) * sizeof *grp_first);
    FP_CHECK_ALLOC(grp_first);
    FP_CHECK_ALLOC(buf);
    FP_CHECK_ALLOC(ws);
    FP_CHECK_ALLOC(grp);
    late.count = calloc(g.nents + 1, sizeof *late.count);
    FP_CHECK_ALLOC(late.count);
    if (g.base)
        FP_CHECK(base_start(&bj, &g, maxw));
    /* keys [0, split) here, the rest on a second thread when no baseline
     * thread has it and the run is large enough to gain: split where half
     * the values lie */
    size_t split = g.nkeys;
    if (!g.base && total >= PEERS_THREAD_MIN) {
        size_t half = 0;
        for (split = 0; split < g.nkeys && 2 * half < total; split++)
            half += (key_first[split + 1] - key_first[split]) * (size_t)g.keys[split].windows;
        if (split < g.nkeys)
            FP_CHECK(peers_start(&pj, &g, key_first, by_key, split, most, most_m, maxw));
    }
    key_scratch ks = {buf, ws, grp, grp_first};
    FP_CHECK(judge_keys(&g, key_first, by_key, 0, split, &ks, &late));
    for (size_t k = split; k < g.nkeys; k++) /* the thread's late-rank records */
        if (late_key(&g.keys[k]))
            fp__det_tally_late(&g, &g.keys[k], by_key + key_first[k],
                               key_first[k + 1] - key_first[k], &late);
    if (split < g.nkeys)
        FP_CHECK(peers_finish(&pj, &g));
    FP_CHECK(fp__det_judge_late(&g, &late));
    if (g.base) {
        FP_CHECK(base_help(&bj, &g, ws));
        FP_CHECK(base_finish(&bj, &g));
    }
    /* peer and baseline evidence are done: their arrays go now, for the last
     * steps' to reuse (fp_mem_keep_freed) */
    peers_free(&pj, &g);
    base_free(&bj, &g);
    free(g.peer_rows);
    g.peer_rows = NULL;
    free(grp);
    grp = NULL;
    FP_CHECK(missing_start(&mj, &g, key_first, by_key));
    v = calloc(1, sizeof *v);
    FP_CHECK_ALLOC(v);
    if (assemble_room(&g, v, &pf) != FP_OK)
        FP_FAIL(FP_ENOMEM, "out of memory for the verdicts of run %s", run->id);
    FP_CHECK(fp__det_release(&g));
    FP_CHECK(fp__det_judge_reference(&g, buf));
    FP_CHECK(missing_finish(&mj, &g));
    FP_CHECK(fp__det_demarcate(&g));
    FP_CHECK(fp__det_judge_config(&g));
    if (opts->history)
        FP_CHECK(fp__det_judge_history(&g, opts->history, &hist));
    FP_CHECK(assemble(&g, v));
    if (opts->history)
        FP_CHECK(fp__det_history_finish(&g, opts->history, &hist, v));
    fp_verdicts_apply_breaker(v, g.rules, opts->max_drain);
    *out = v;
    v = NULL;
cleanup:
    fp_prefault_wait(&pf);
    fp_verdicts_free(v);
    free(by_key);
    free(key_first);
    free(grp);
    free(grp_first);
    free(buf);
    free(ws);
    free(late.count);
    peers_free(&pj, &g);
    missing_free(&mj, &g);
    base_free(&bj, &g);
    fp__det_history_free(&hist);
    fp__det_free(&g);
    return st;
}

/* ---- accessors --------------------------------------------------------------------------------- */

size_t fp_verdicts_blind_count(const fp_verdicts *v)
{
    return v->nblind;
}

const fp_blind_spot *fp_verdicts_blind(const fp_verdicts *v, size_t i)
{
    return i < v->nblind ? &v->blind[i] : NULL;
}

size_t fp_verdicts_drift_count(const fp_verdicts *v)
{
    return v->ndrift;
}

const fp_config_drift *fp_verdicts_drift(const fp_verdicts *v, size_t i)
{
    return i < v->ndrift ? &v->drift[i] : NULL;
}

void fp_verdicts_free(fp_verdicts *v)
{
    if (!v)
        return;
    free(v->ents);
    free(v->made);
    free(v->reasons);
    free(v->blind);
    free(v->drift);
    if (v->confirm)
        free((void *)v->confirm->items);
    free(v->confirm);
    free(v->node_names);
    free(v->fail_nodes);
    free(v->warn_nodes);
    free(v->offenders);
    free(v->own);
    free(v);
}

fp_verdict fp_verdicts_overall(const fp_verdicts *v)
{
    return v->overall;
}

size_t fp_verdicts_node_count(const fp_verdicts *v)
{
    return v->nnodes;
}

bool fp_entity_in(const fp_entity *e, const char *text)
{
    char name[2 * FP_NAME_MAX + 32];
    if (strcmp(fp_entity_format(e, name, sizeof name), text) == 0)
        return true;
    const char *node = strncmp(text, "node:", 5) == 0 ? text + 5 : NULL;
    return node && e->kind != FP_ENT_GROUP &&
           (strcmp(e->node, node) == 0 || (e->kind == FP_ENT_LINK && strcmp(e->peer, node) == 0));
}

size_t fp_verdicts_count(const fp_verdicts *v)
{
    return v->nents;
}

const fp_entity_verdict *fp_verdicts_get(const fp_verdicts *v, size_t i)
{
    return i < v->nents ? &v->ents[i] : NULL;
}

const fp_reason *fp_verdicts_reason(const fp_verdicts *v, size_t i)
{
    return i < v->nreasons ? &v->reasons[i] : NULL;
}

fp_verdict fp_verdicts_node(const fp_verdicts *v, const char *node)
{
    for (size_t i = 0; i < v->nnodes; i++)
        if (strcmp(v->node_names[i], node) == 0)
            return v->ents[i].verdict;
    return FP_UNKNOWN;
}

size_t fp_verdicts_nodes_at(const fp_verdicts *v, fp_verdict min, const char *const **names)
{
    if (min == FP_FAIL) {
        *names = v->fail_nodes;
        return v->nfail_nodes;
    }
    *names = v->warn_nodes;
    return v->nwarn_nodes;
}

fp_status fp_verdicts_status(const fp_verdicts *v)
{
    return v->overall == FP_FAIL ? FP_EFAIL : FP_OK;
}

/* ---- the circuit breaker ------------------------------------------------------------------ */

/* Trip b when the failing nodes are more than its share and count allow. */
static void breaker_judge(fp_breaker *b, size_t failing)
{
    b->failing = failing;
    b->tripped = (double)failing > b->max_drain * (double)b->nodes &&
                 failing > (size_t)b->max_nodes;
}

fp_status fp__det_keep_extras(fp_verdicts *v, const fp_verdicts *from)
{
    fp_status st = FP_OK;
    if (from->ndrift) {
        v->drift = malloc(from->ndrift * sizeof *v->drift);
        FP_CHECK_ALLOC(v->drift);
        memcpy(v->drift, from->drift, from->ndrift * sizeof *v->drift);
        v->ndrift = from->ndrift;
    }
    v->history = from->history;
    v->hist_k = from->hist_k;
    v->hist_n = from->hist_n;
    v->hist_runs = from->hist_runs;
    if (from->noffenders) {
        v->offenders = malloc(from->noffenders * sizeof *v->offenders);
        FP_CHECK_ALLOC(v->offenders);
        memcpy(v->offenders, from->offenders, from->noffenders * sizeof *v->offenders);
        v->noffenders = from->noffenders;
    }
    if (from->own) {
        v->own = malloc((v->nents + 1) * sizeof *v->own);
        FP_CHECK_ALLOC(v->own);
        memcpy(v->own, from->own, v->nents * sizeof *v->own);
    }
    /* the same limits, judged on the failing nodes left */
    v->breaker = from->breaker;
    breaker_judge(&v->breaker, v->nfail_nodes);
cleanup:
    return st;
}

void fp_verdicts_apply_breaker(fp_verdicts *v, const fp_rules *rules, double max_drain)
{
    fp_breaker *b = &v->breaker;
    b->nodes = v->nnodes;
    b->max_drain = max_drain > 0 ? max_drain : rules->breaker_max_drain;
    b->max_nodes = rules->breaker_max_nodes;
    breaker_judge(b, v->nfail_nodes);
}

const fp_breaker *fp_verdicts_breaker(const fp_verdicts *v)
{
    return &v->breaker;
}

char *fp_breaker_text(const fp_breaker *b, char *buf, size_t len)
{
    snprintf(buf, len,
             "%zu of %zu nodes fail: more than --max-drain (%.3g%% and %d nodes); nothing "
             "drained. Suspect the baselines, the test, or a fleet-wide change",
             b->failing, b->nodes, 100 * b->max_drain, b->max_nodes);
    return buf;
}

/* ---- a run that timed out -------------------------------------------------------------- */

/* A reason that needs no measurement: evidence missing, the note says why. */
static fp_reason hung_reason(const char *key, const char *note)
{
    fp_reason r;
    memset(&r, 0, sizeof r);
    snprintf(r.key, sizeof r.key, "%s", key);
    snprintf(r.rule, sizeof r.rule, "hung");
    snprintf(r.note, sizeof r.note, "%s", note);
    r.evidence = FP_EV_MISSING;
    r.verdict = FP_FAIL;
    r.value = r.expected = r.band = r.deviation = r.z = NAN;
    return r;
}

fp_status fp_verdicts_hung(const fp_run *run, const int *ranks, size_t n, const char *step,
                           fp_verdicts **out)
{
    *out = NULL;
    size_t nn = run->nnodes > 0 ? (size_t)run->nnodes : 0;
    fp_verdicts *v = calloc(1, sizeof *v);
    fp_status st = FP_OK;
    FP_CHECK_ALLOC(v);
    v->run = run;
    v->ents = calloc(nn + n + 2, sizeof *v->ents);
    v->made = calloc(nn + n + 2, sizeof *v->made);
    v->reasons = calloc(nn + n + 2, sizeof *v->reasons);
    v->node_names = calloc(nn + 1, sizeof *v->node_names);
    v->fail_nodes = calloc(nn + 1, sizeof *v->fail_nodes);
    v->warn_nodes = calloc(nn + 1, sizeof *v->warn_nodes);
    if (!v->ents || !v->made || !v->reasons || !v->node_names || !v->fail_nodes ||
        !v->warn_nodes)
        FP_FAIL(FP_ENOMEM, "out of memory for the verdicts of hung run %s (%zu nodes)", run->id,
                nn);
    char note[sizeof v->reasons[0].note], key[sizeof v->reasons[0].key];
    snprintf(note, sizeof note, "hung: never arrived in %s", step);
    /* nodes in run order: a node with a missing rank fails (one reason per
     * missing rank), the others arrived but were not judged */
    for (size_t i = 0; i < nn; i++) {
        fp_entity_verdict *ev = &v->ents[v->nents++];
        snprintf(v->node_names[i], FP_NAME_MAX, "%s", run->nodes[i]);
        ev->entity = fp__det_made(v, fp_entity_node(run->nodes[i]));
        ev->verdict = FP_UNKNOWN;
        ev->first_reason = v->nreasons;
        for (size_t k = 0; k < n; k++) {
            if (ranks[k] < 0 || ranks[k] >= run->nranks || run->ranks[ranks[k]].node != (int)i)
                continue;
            snprintf(key, sizeof key, "rank %d", ranks[k]);
            v->reasons[v->nreasons++] = hung_reason(key, note);
            ev->nreasons++;
            ev->verdict = FP_FAIL;
        }
        if (ev->verdict == FP_FAIL)
            v->fail_nodes[v->nfail_nodes++] = v->warn_nodes[v->nwarn_nodes++] = v->node_names[i];
    }
    v->nnodes = nn;
    for (size_t k = 0; k < n; k++) {
        if (ranks[k] < 0 || ranks[k] >= run->nranks)
            continue;
        fp_entity_verdict *ev = &v->ents[v->nents++];
        const char *node = run->nodes[run->ranks[ranks[k]].node];
        ev->entity = fp__det_made(v, fp_entity_rank(node, ranks[k]));
        ev->verdict = FP_FAIL;
        ev->first_reason = v->nreasons;
        ev->nreasons = 1;
        v->reasons[v->nreasons++] = hung_reason("arrival", note);
    }
    if (v->nfail_nodes == 0) { /* every rank arrived, the step still did not end */
        fp_entity_verdict *ev = &v->ents[v->nents++];
        ev->entity = fp__det_made(v, fp_entity_group("world"));
        ev->verdict = FP_FAIL;
        ev->first_reason = v->nreasons;
        ev->nreasons = 1;
        snprintf(note, sizeof note, "timeout: every rank arrived but %s did not complete", step);
        v->reasons[v->nreasons++] = hung_reason("completion", note);
    }
    v->overall = FP_FAIL;
    *out = v;
    v = NULL;
cleanup:
    fp_verdicts_free(v);
    return st;
}
