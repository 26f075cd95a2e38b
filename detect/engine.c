/* The detector's engine: the state its phases share (detect_internal.h) and
 * the helpers they call. Interning turns a run's samples into nodes, SKUs,
 * keys, entities and series with their per-window values, through small
 * open-addressing tables of indices; the reason helpers record evidence
 * against an entity and raise its verdict. The driver (detect.c) and the
 * phases (evidence.c, demarcate.c) call these; nothing here calls back. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"
#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "fleetprint/stats.h"
#include "fleetprint/store.h"

/* ---- tables of indices ------------------------------------------------------------ */

/* String s folded into hash h (fp_hash_bytes), its length last. Only the
 * tables' probes depend on it: indices are handed out in the order things
 * are first met. */
static uint64_t hash_str(uint64_t h, const char *s)
{
    size_t n = strlen(s);
    return fp_mix64(fp_hash_bytes(h, s, n) ^ n);
}

static bool table_init(table *t, size_t expect)
{
    size_t cap = 16;
    while (3 * cap < 4 * expect + 48)
        cap <<= 1;
    t->slot = cap <= UINT32_MAX ? fp_calloc_huge(cap, sizeof *t->slot) : NULL;
    t->mask = cap - 1;
    t->used = 0;
    return t->slot;
}

static void table_free(table *t)
{
    free(t->slot);
}

/* The first empty slot on hash h's probe sequence. */
static size_t table_empty(const table *t, uint32_t h)
{
    size_t i = h & t->mask;
    while (t->slot[i].index)
        i = (i + 1) & t->mask;
    return i;
}

/* Add index (0-based) under hash h, making the table four times larger when
 * it would be over half full: tables start small, so that their probes stay
 * in cache. */
static bool table_add(table *t, uint64_t h, size_t index)
{
    if (4 * (t->used + 1) > 3 * (t->mask + 1)) {
        table old = *t;
        if (!table_init(t, old.mask + 1)) {
            table_free(t);
            *t = old;
            return false;
        }
        for (size_t i = 0; i <= old.mask; i++)
            if (old.slot[i].index)
                t->slot[table_empty(t, old.slot[i].hash)] = old.slot[i];
        t->used = old.used;
        table_free(&old);
    }
    t->slot[table_empty(t, (uint32_t)h)] = (table_slot){(uint32_t)(index + 1), (uint32_t)h};
    t->used++;
    return true;
}

/* The worse of two verdicts: fail > warn > pass > unknown. */
fp_verdict fp__det_worse(fp_verdict a, fp_verdict b)
{
    static const int rank[] = {[FP_PASS] = 1, [FP_WARN] = 2, [FP_FAIL] = 3, [FP_UNKNOWN] = 0};
    return rank[b] > rank[a] ? b : a;
}

/* ---- nodes and SKUs ------------------------------------------------------------------- */

static int32_t node_find(const eng *g, const char *name, uint64_t h)
{
    for (size_t i = h & g->node_tab.mask;; i = (i + 1) & g->node_tab.mask) {
        uint32_t s = g->node_tab.slot[i].index;
        if (!s)
            return -1;
        if (g->node_tab.slot[i].hash == (uint32_t)h && strcmp(g->node[s - 1], name) == 0)
            return (int32_t)(s - 1);
    }
}

static int32_t node_intern(eng *g, const char *name)
{
    uint64_t h = hash_str(0, name);
    int32_t found = node_find(g, name, h);
    if (found >= 0)
        return found;
    if (g->nnodes == g->node_cap || !table_add(&g->node_tab, h, g->nnodes))
        return -1; /* node_cap: sized for the run's nodes plus every sample */
    snprintf(g->node[g->nnodes], FP_NAME_MAX, "%s", name);
    g->node_sku[g->nnodes] = -1;
    return (int32_t)g->nnodes++;
}

static int32_t sku_intern(eng *g, const char *model)
{
    for (size_t i = 0; i < g->nsku; i++)
        if (strcmp(g->sku[i], model) == 0)
            return (int32_t)i;
    char (*t)[FP_NAME_MAX] = realloc(g->sku, (g->nsku + 1) * sizeof *t);
    if (!t)
        return -1;
    g->sku = t;
    snprintf(g->sku[g->nsku], FP_NAME_MAX, "%s", model);
    return (int32_t)g->nsku++;
}

static fp_status setup_nodes(eng *g)
{
    const fp_run *run = g->run;
    fp_status st = FP_OK;
    /* sample entities can name nodes the context lacks: at most two per sample
     * (bounded below by a distinct-name count would need a pass; this bound
     * only costs memory for the table) */
    g->node_cap = (size_t)run->nnodes + 2 * run->nsamples + 1;
    size_t expect = (size_t)run->nnodes + 1024;
    if (g->node_cap > expect * 64)
        g->node_cap = expect * 64; /* real runs repeat node names heavily */
    g->node = malloc(g->node_cap * sizeof *g->node);
    g->node_sku = malloc(g->node_cap * sizeof *g->node_sku);
    FP_CHECK_ALLOC(g->node);
    FP_CHECK_ALLOC(g->node_sku);
    if (!table_init(&g->node_tab, (size_t)run->nnodes))
        FP_FAIL(FP_ENOMEM, "out of memory for the node table of run %s (%d nodes)", run->id,
                run->nnodes);
    for (int i = 0; i < run->nnodes; i++)
        if (node_intern(g, run->nodes[i]) < 0)
            FP_FAIL(FP_ENOMEM, "out of memory interning node %s of run %s", run->nodes[i], run->id);
    /* a node's SKU is its ranks' device model; several give "mixed" */
    for (int r = 0; r < run->nranks; r++) {
        const fp_rank_info *ri = &run->ranks[r];
        if (ri->node < 0 || ri->node >= run->nnodes)
            continue;
        int32_t s = sku_intern(g, ri->model[0] ? ri->model : "unknown");
        int32_t *cur = &g->node_sku[ri->node];
        if (s >= 0 && *cur >= 0 && *cur != s)
            s = sku_intern(g, "mixed");
        if (s < 0)
            FP_FAIL(FP_ENOMEM, "out of memory interning the SKU of rank %d of run %s", r, run->id);
        *cur = s;
    }
cleanup:
    return st;
}

/* ---- interning samples ---------------------------------------------------------------- */

/* The last window a sample may name (0-based): every series of its key gets
 * a slot per window, so a stray iteration number would ask for all memory. */
#define MAX_WINDOW ((1 << 24) - 1)

/* FP_EINPUT (logged) when sample i of run names a window past MAX_WINDOW. */
static fp_status window_ok(const fp_run *run, size_t i, int32_t iter)
{
    if (iter <= MAX_WINDOW)
        return FP_OK;
    fp_error("run %s: sample %zu is of window %d: at most %d are judged", run->id, i, iter,
             MAX_WINDOW);
    return FP_EINPUT;
}

static bool same_key(const fp_sample *a, const fp_sample *b)
{
    return a->size == b->size && strcmp(a->metric, b->metric) == 0 &&
           strcmp(a->test, b->test) == 0 && strcmp(a->suite, b->suite) == 0;
}

static bool same_entity(const fp_entity *a, const fp_entity *b)
{
    return a->kind == b->kind && a->dev == b->dev && a->peer_dev == b->peer_dev &&
           a->rank == b->rank && strcmp(a->node, b->node) == 0 && strcmp(a->peer, b->peer) == 0;
}

static int32_t test_intern(eng *g, const fp_sample *s)
{
    char name[48];
    snprintf(name, sizeof name, "%s.%s", s->suite, s->test);
    for (size_t i = 0; i < g->ntests; i++)
        if (strcmp(g->tests[i], name) == 0)
            return (int32_t)i;
    char (*t)[48] = realloc(g->tests, (g->ntests + 1) * sizeof *t);
    if (!t)
        return -1;
    g->tests = t;
    snprintf(g->tests[g->ntests], 48, "%s", name);
    return (int32_t)g->ntests++;
}

static int64_t key_intern(eng *g, const fp_sample *s)
{
    for (size_t i = 0; i < g->nkeys; i++)
        if (same_key(g->keys[i].rep, s))
            return (int64_t)i;
    key_info *grown = fp_grow(g->keys, &g->key_cap, g->nkeys + 1, sizeof *grown, 32);
    if (!grown)
        return -1;
    g->keys = grown;
    key_info *k = &g->keys[g->nkeys];
    memset(k, 0, sizeof *k);
    k->rep = s;
    k->next = -1;
    fp_sample_key(s, k->text, sizeof k->text);
    k->test = test_intern(g, s);
    if (k->test < 0)
        return -1;
    k->vrule = fp__rules_value(g->rules, k->text);
    k->cls = k->vrule ? NULL : fp__rules_class(g->rules, k->text);
    return (int64_t)g->nkeys++;
}

static uint64_t entity_hash(const fp_entity *e)
{
    uint64_t h = hash_str(hash_str(0, e->node), e->peer);
    h = fp_mix64(h ^ ((uint64_t)e->kind | (uint64_t)(uint32_t)e->dev << 8));
    return fp_mix64(h ^ ((uint64_t)(uint32_t)e->peer_dev | (uint64_t)(uint32_t)e->rank << 32));
}

/* Entity e (of hash h: entity_hash) in g, interned where new. */
static int64_t entity_intern(eng *g, const fp_entity *e, uint64_t h)
{
    size_t i = h & g->ent_tab.mask;
    for (;; i = (i + 1) & g->ent_tab.mask) {
        uint32_t s = g->ent_tab.slot[i].index;
        if (!s)
            break;
        if (g->ent_tab.slot[i].hash == (uint32_t)h && same_entity(g->ents[s - 1].e, e))
            return s - 1;
    }
    ent_info *ei = &g->ents[g->nents];
    ei->e = e;
    ei->kind = e->kind;
    ei->next = ei->first_ser = -1;
    /* a group's name is not a node: it has neither node nor SKU */
    bool group = e->kind == FP_ENT_GROUP;
    ei->node = group ? -1 : node_intern(g, e->node);
    ei->peer = e->kind == FP_ENT_LINK ? node_intern(g, e->peer) : -1;
    ei->v = FP_UNKNOWN;
    ei->bad1 = ei->bad2 = 0;
    ei->explain = false; /* set for --explain once every entity is known */
    if ((!group && ei->node < 0) || (e->kind == FP_ENT_LINK && ei->peer < 0))
        return -1;
    ei->sku = group ? -1 : g->node_sku[ei->node];
    if (!table_add(&g->ent_tab, h, g->nents))
        return -1;
    return (int64_t)g->nents++;
}

/* The series of key and entity in g (its index), or -1: a walk along the
 * entity's own series (a few; its samples come together, so they lie close
 * in memory). A table of every series took a cache miss per probe, and 0.4 s
 * and 100 MB at 100,000 nodes x 8. */
int64_t fp__det_series_find(const eng *g, uint32_t key, uint32_t ent)
{
    for (int32_t s = g->ents[ent].first_ser; s >= 0; s = g->ser[s].ent_next)
        if (g->ser[s].key == key)
            return s;
    return -1;
}

/* A new series of key and entity (known to be absent): its index. */
static int64_t series_add(eng *g, uint32_t key, uint32_t ent)
{
    series *se = &g->ser[g->nser];
    memset(se, 0, sizeof *se);
    se->key = key;
    se->ent = ent;
    se->next = -1;
    se->ent_next = g->ents[ent].first_ser;
    g->ents[ent].first_ser = (int32_t)g->nser;
    return (int64_t)g->nser++;
}

/* The key and entity of sample s, which follows prev (of key k, entity e;
 * NULL, -1 and -1 for the first). Samples come in runs of one entity, and
 * each window lists its keys and entities in the order of the one before:
 * what followed k (or e, or series prev) last time is tried before a lookup.
 * -1: no memory. */
static int64_t next_key(eng *g, const fp_sample *prev, int64_t k, const fp_sample *s)
{
    if (prev && same_key(prev, s))
        return k;
    int64_t guess = k >= 0 ? g->keys[k].next : -1;
    int64_t found = guess >= 0 && same_key(g->keys[guess].rep, s) ? guess : key_intern(g, s);
    if (k >= 0)
        g->keys[k].next = (int32_t)found;
    return found;
}

static int64_t next_entity(eng *g, const fp_sample *prev, int64_t e, const fp_sample *s)
{
    if (prev && same_entity(&prev->entity, &s->entity))
        return e;
    int64_t guess = e >= 0 ? g->ents[e].next : -1;
    int64_t found = guess >= 0 && same_entity(g->ents[guess].e, &s->entity)
                        ? guess
                        : entity_intern(g, &s->entity, entity_hash(&s->entity));
    if (e >= 0)
        g->ents[e].next = (int32_t)found;
    /* the next guess is compared with a sample of the first window, far
     * behind: fetch it while this entity's samples go by */
    int32_t after = found >= 0 ? g->ents[found].next : -1;
    if (after >= 0)
        for (size_t b = 0; b < sizeof(fp_entity); b += 64)
            __builtin_prefetch((const char *)g->ents[after].e + b);
    return found;
}

static int64_t next_series(eng *g, int64_t prev, uint32_t key, uint32_t ent)
{
    if (prev >= 0 && g->ser[prev].key == key && g->ser[prev].ent == ent)
        return prev;
    int64_t guess = prev >= 0 ? g->ser[prev].next : -1;
    int64_t found = guess >= 0 && g->ser[guess].key == key && g->ser[guess].ent == ent
                        ? guess
                        : fp__det_series_find(g, key, ent);
    if (found < 0)
        found = series_add(g, key, ent);
    if (prev >= 0)
        g->ser[prev].next = (int32_t)found;
    return found;
}

/* The key (entity) of a run read as rows at index k of its table: each is
 * interned when a row first names it, so indices follow the order in which
 * the samples meet them, as with samples. map holds index + 1, 0 when not yet
 * met; -1: no memory. A key's windows come from shape (one table key's
 * largest window and whether it has a summary), known before its first
 * series. */
static void shape_key(key_info *ki, const fp_key_shape *sh)
{
    ki->windowed = sh->last >= 0;
    ki->has_summary = sh->summaries > 0;
    ki->windows = sh->last + 1;
    ki->raw_windows = ki->windows > 1 ? ki->windows : 1;
    ki->use_summary = ki->cls && ki->cls->summary && ki->has_summary;
    if (ki->windows < 1 || ki->use_summary)
        ki->windows = 1;
}

static int64_t row_key(eng *g, int32_t *map, uint32_t k, const fp_key_shape *shape)
{
    if (!map[k]) {
        int64_t nkeys = (int64_t)g->nkeys, key = key_intern(g, &g->run->rows->keys[k]);
        if (key >= 0 && key < nkeys)
            return -2; /* a second table key of the same key: the table is corrupt */
        if (key >= 0)
            shape_key(&g->keys[key], &shape[k]);
        map[k] = (int32_t)(key + 1);
    }
    return map[k] - 1;
}

/* Entity e of the run's table in g. A run's rows meet its table's entities
 * mostly in order, so the one AHEAD further on is hashed now and its slot
 * in the table fetched: the probe's cache miss was 90% of interning an
 * entity (a slot of 16 MB at random at 100,000 nodes x 8). */
static int64_t row_entity(eng *g, int32_t *map, uint32_t e)
{
    enum { AHEAD = sizeof g->ent_ahead / sizeof g->ent_ahead[0] };
    if (map[e])
        return map[e] - 1;
    const fp_run_rows *rows = g->run->rows;
    if (e + AHEAD < rows->nents) {
        uint32_t f = e + AHEAD;
        uint64_t h = entity_hash(&rows->ents[f]);
        g->ent_ahead[f % AHEAD].e1 = f + 1;
        g->ent_ahead[f % AHEAD].hash = h;
        __builtin_prefetch(&g->ent_tab.slot[h & g->ent_tab.mask]);
    }
    uint64_t h = g->ent_ahead[e % AHEAD].e1 == e + 1 ? g->ent_ahead[e % AHEAD].hash
                                                     : entity_hash(&rows->ents[e]);
    map[e] = (int32_t)(entity_intern(g, &rows->ents[e], h) + 1);
    return map[e] - 1;
}

/* Room in g->vals for the value slots of a new series se: its windows as
 * measured, then the summary its key judges (use_summary), all NaN. */
static bool place_series(eng *g, series *se, size_t *used, size_t *cap)
{
    const key_info *ki = &g->keys[se->key];
    size_t slots = (size_t)ki->raw_windows + ki->use_summary;
    if (*used + slots > UINT32_MAX) /* past a series' 32-bit offsets */
        return false;
    if (*used + slots > *cap) {
        double *grown = fp_grow(g->vals, cap, *used + slots, sizeof *grown, 1024);
        if (!grown)
            return false;
        g->vals = g->wvals = grown;
    }
    se->woff = (uint32_t)*used;
    se->off = (uint32_t)(ki->use_summary ? *used + (size_t)ki->raw_windows : *used);
    for (size_t i = 0; i < slots; i++)
        g->vals[*used + i] = NAN;
    *used += slots;
    return true;
}

/* ---- chunks decoded ahead ---------------------------------------------------------------- */

/* The helper claims chunks in order, from the first the interning has not
 * reached, into up to AHEAD_SLOTS slots of its own; the interning takes a
 * claimed chunk from its slot and frees the slot when it moves on, and
 * decodes an unclaimed one itself. While the chunk it needs is being
 * decoded, it claims and decodes the next into a slot too: else the two
 * threads took turns, the helper decoding and the interning waiting. At 100,000
 * nodes x 8 the waiting thread arrives with about half the 684 chunks left;
 * decoding was a quarter of the interning's time, which now ends 0.2 s
 * sooner (1.29-1.32 s -> 1.07-1.13 s into the command). */
#define AHEAD_SLOTS 8
enum { SLOT_FREE, SLOT_BUSY, SLOT_READY, SLOT_BAD };

typedef struct ahead_slot {
    fp_row_reader *rd;
    size_t chunk, n;
    const fp_sample_row *rows;
    int state;
} ahead_slot;

struct fp__ahead {
    const struct fp_row_pack *pack;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next, nchunks; /* the first chunk nobody has claimed */
    bool done;            /* the interning has ended */
    ahead_slot slot[AHEAD_SLOTS];
};

struct fp__ahead *fp__det_ahead_new(const eng *g)
{
    struct fp__ahead *a = g->pack ? calloc(1, sizeof *a) : NULL;
    if (!a)
        return NULL;
    a->pack = g->pack;
    a->nchunks = fp_row_pack_chunks(g->pack);
    if (pthread_mutex_init(&a->mu, NULL) != 0) {
        free(a);
        return NULL;
    }
    if (pthread_cond_init(&a->cv, NULL) != 0) {
        pthread_mutex_destroy(&a->mu);
        free(a);
        return NULL;
    }
    return a;
}

void fp__det_ahead_free(struct fp__ahead *a)
{
    if (!a)
        return;
    for (int i = 0; i < AHEAD_SLOTS; i++)
        fp_row_reader_free(a->slot[i].rd);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

static ahead_slot *free_slot(struct fp__ahead *a)
{
    for (int i = 0; i < AHEAD_SLOTS; i++)
        if (a->slot[i].state == SLOT_FREE)
            return &a->slot[i];
    return NULL;
}

/* With a->mu held: claim the next unclaimed chunk into a free slot and
 * decode it there, a->mu released meanwhile. False where there is none to
 * claim or no slot free; *bad where it would not decode. */
static bool decode_one(struct fp__ahead *a, bool *bad)
{
    ahead_slot *sl = a->done || a->next >= a->nchunks ? NULL : free_slot(a);
    *bad = false;
    if (!sl)
        return false;
    sl->chunk = a->next++;
    sl->state = SLOT_BUSY;
    pthread_mutex_unlock(&a->mu);
    bool ok = (sl->rd || fp_row_reader_open(a->pack, &sl->rd) == FP_OK) &&
              fp_row_reader_try(sl->rd, sl->chunk, &sl->rows, &sl->n);
    pthread_mutex_lock(&a->mu);
    sl->state = ok ? SLOT_READY : SLOT_BAD;
    pthread_cond_broadcast(&a->cv);
    *bad = !ok;
    return true;
}

void fp__det_ahead_help(struct fp__ahead *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    bool bad = false;
    while (!bad && !a->done && a->next < a->nchunks)
        if (!decode_one(a, &bad))
            pthread_cond_wait(&a->cv, &a->mu); /* every slot full */
    /* a chunk that did not decode: the interning decodes it again, and
     * says why */
    pthread_mutex_unlock(&a->mu);
}

/* Chunk c for the interning: from the helper's slot (*held, freed at the
 * next call), or NULL where it is to decode it itself. */
static const fp_sample_row *ahead_take(struct fp__ahead *a, size_t c, ahead_slot **held,
                                       size_t *n)
{
    const fp_sample_row *rows = NULL;
    pthread_mutex_lock(&a->mu);
    if (*held) {
        (*held)->state = SLOT_FREE;
        *held = NULL;
        pthread_cond_broadcast(&a->cv);
    }
    if (c >= a->next) { /* unclaimed: its own */
        a->next = c + 1;
    } else {
        ahead_slot *sl = NULL;
        for (int i = 0; i < AHEAD_SLOTS && !sl; i++)
            if (a->slot[i].state != SLOT_FREE && a->slot[i].chunk == c)
                sl = &a->slot[i];
        bool bad; /* reported when the interning reaches it */
        while (sl && sl->state == SLOT_BUSY)
            if (!decode_one(a, &bad)) /* a chunk further on meanwhile */
                pthread_cond_wait(&a->cv, &a->mu);
        if (sl && sl->state == SLOT_READY) {
            rows = sl->rows;
            *n = sl->n;
            *held = sl;
        } else if (sl) {
            sl->state = SLOT_FREE;
        }
    }
    pthread_mutex_unlock(&a->mu);
    return rows;
}

/* The interning has ended: the helper stops. */
static void ahead_end(struct fp__ahead *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    a->done = true;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

/* ---- walking the rows ----------------------------------------------------------------------- */

/* The rows of g's run a chunk at a time: the table where it is held whole
 * (one chunk), else each chunk of g->pack decoded in turn, or taken from
 * g->ahead where the helper decoded it. */
typedef struct row_walk {
    fp_row_reader *rd;
    struct fp__ahead *ahead; /* NULL: none */
    ahead_slot *held;        /* the slot of the chunk last given */
    size_t next, nchunks;    /* the next chunk */
    size_t first, end;       /* the rows of the last one given */
} row_walk;

/* From chunk c0 to c1 (SIZE_MAX: the last). */
static fp_status walk_start(const eng *g, row_walk *w, size_t c0, size_t c1)
{
    size_t all = g->pack ? fp_row_pack_chunks(g->pack) : 1;
    w->next = c0;
    w->nchunks = c1 < all ? c1 : all;
    w->first = w->end = g->pack ? c0 * fp_row_pack_chunk_rows(g->pack) : 0;
    return g->pack && !w->rd ? fp_row_reader_open(g->pack, &w->rd) : FP_OK;
}

/* The next chunk's rows into *rows, *n of them (0: none left), from row
 * w->first of the run. FP_EINPUT (logged) where a chunk will not decode. */
static fp_status walk_next(const eng *g, row_walk *w, const fp_sample_row **rows, size_t *n)
{
    fp_status st = FP_OK;
    w->first = w->end;
    *n = 0;
    if (w->next >= w->nchunks)
        return FP_OK;
    if (w->ahead && (*rows = ahead_take(w->ahead, w->next, &w->held, n)) != NULL) {
        st = FP_OK;
    } else if (w->rd) {
        st = fp_row_reader_chunk(w->rd, w->next, rows, n);
    } else {
        *rows = g->run->rows->row;
        *n = g->run->rows->n;
    }
    w->next++;
    w->end = w->first + *n;
    return st;
}

/* Each key's shape over chunks [c0, c1) of g's run (shape: from {.last =
 * -1}), on a thread of its own where started: a packed run's chunks are
 * decoded for it, and again to be interned. bad: the first row past
 * MAX_WINDOW (SIZE_MAX: none), reported once every part is done. */
typedef struct shape_job {
    const eng *g;
    size_t c0, c1;
    fp_key_shape *shape;
    size_t bad;
    int32_t bad_iter;
    pthread_t thread;
    bool running;
    fp_status st;
} shape_job;

static void *shape_main(void *arg)
{
    shape_job *j = arg;
    row_walk w = {0};
    const fp_sample_row *rw;
    size_t nrw;
    j->bad = SIZE_MAX;
    fp_status st = walk_start(j->g, &w, j->c0, j->c1);
    while (st == FP_OK && (st = walk_next(j->g, &w, &rw, &nrw)) == FP_OK && nrw) {
        for (size_t i = 0; i < nrw; i++) {
            const fp_sample_row *r = &rw[i];
            if (r->iter > MAX_WINDOW && j->bad == SIZE_MAX) {
                j->bad = w.first + i;
                j->bad_iter = r->iter;
            }
            fp_key_shape_add(&j->shape[r->key], r->iter);
        }
    }
    fp_row_reader_free(w.rd);
    j->st = st;
    return NULL;
}

/* The shape of each of g's run's nkeys keys into shape: as the store
 * counted them when it wrote the run, or else from its rows (a packed run's
 * later half of chunks on a second thread). FP_EINPUT, FP_ENOMEM (logged). */
static fp_status shape_keys(const eng *g, fp_key_shape *shape, size_t nkeys)
{
    fp_status st = FP_OK;
    const fp_key_shape *stored = g->run->rows->shapes;
    size_t counted = 0; /* rows of a first window or a summary: no more than the rows */
    for (size_t k = 0; stored && k < nkeys; k++) { /* counted as the run was stored */
        if (stored[k].last > MAX_WINDOW)
            FP_FAIL(FP_EINPUT, "run %s: metric %zu has windows up to %d: at most %d are judged",
                    g->run->id, k, stored[k].last, MAX_WINDOW);
        counted += (size_t)stored[k].firsts + stored[k].summaries;
        if (counted > g->run->rows->n)
            FP_FAIL(FP_EINPUT, "run %s: its metrics count more rows than its %zu (corrupt)",
                    g->run->id, g->run->rows->n);
        shape[k] = stored[k];
        shape[k].last = stored[k].last < 0 ? -1 : stored[k].last;
    }
    if (stored)
        return FP_OK;
    size_t nchunks = g->pack ? fp_row_pack_chunks(g->pack) : 1, half = (nchunks + 1) / 2;
    shape_job a = {.g = g, .c0 = 0, .c1 = SIZE_MAX, .shape = shape};
    shape_job b = {.g = g, .c0 = half, .c1 = SIZE_MAX};
    for (size_t k = 0; k < nkeys; k++)
        shape[k] = (fp_key_shape){.last = -1};
    if (nchunks > 1) {
        b.shape = malloc((nkeys + 1) * sizeof *b.shape);
        FP_CHECK_ALLOC(b.shape);
        memcpy(b.shape, shape, nkeys * sizeof *shape);
        a.c1 = half;
        b.running = pthread_create(&b.thread, NULL, shape_main, &b) == 0;
        if (!b.running) /* no second thread: this one reads it all */
            a.c1 = SIZE_MAX;
    }
    shape_main(&a);
    if (b.running) {
        pthread_join(b.thread, NULL);
        for (size_t k = 0; k < nkeys; k++) {
            fp_key_shape *x = &shape[k];
            const fp_key_shape *y = &b.shape[k];
            x->last = y->last > x->last ? y->last : x->last;
            x->firsts += y->firsts;
            x->summaries += y->summaries;
        }
        if (a.bad == SIZE_MAX && a.st == FP_OK) {
            a.bad = b.bad;
            a.bad_iter = b.bad_iter;
        }
    }
    FP_CHECK(a.st);
    FP_CHECK(b.running ? b.st : FP_OK);
    if (a.bad != SIZE_MAX)
        FP_CHECK(window_ok(g->run, a.bad, a.bad_iter));
cleanup:
    free(b.shape);
    return st;
}

/* Intern row r (sample i of g's run) with its value: kmap, emap and shape
 * as in intern_rows, *se_prev the series of the row before, *used and *cap
 * g->vals' slots. FP_EINPUT, FP_ENOMEM (logged). */
static fp_status intern_row(eng *g, const fp_sample_row *r, size_t i, int32_t *kmap,
                            int32_t *emap, const fp_key_shape *shape, int64_t *se_prev,
                            size_t *used, size_t *cap)
{
    const fp_run *run = g->run;
    fp_status st = FP_OK;
    const fp_key_shape *sh = &shape[r->key];
    if (r->iter > sh->last || (r->iter < 0 && !sh->summaries)) /* its slots come from the shape */
        FP_FAIL(FP_EINPUT, "run %s: sample %zu (window %d) lies outside the windows stored for "
                           "its metric (corrupt)", run->id, i, r->iter);
    int64_t key = row_key(g, kmap, r->key, shape), ent = row_entity(g, emap, r->entity);
    if (key == -2)
        FP_FAIL(FP_EINPUT, "run %s: metric %u of its table repeats an earlier one (corrupt)",
                run->id, r->key);
    size_t before = g->nser;
    int64_t se = key < 0 || ent < 0 ? -1 : next_series(g, *se_prev, (uint32_t)key, (uint32_t)ent);
    if (se < 0 || (g->nser > before && !place_series(g, &g->ser[se], used, cap)))
        FP_FAIL(FP_ENOMEM, "out of memory interning sample %zu of run %s", i, run->id);
    series *x = &g->ser[se];
    if (r->iter >= 0) {
        if (!x->windowed) /* a summary in the first slot gives way to windows */
            g->vals[x->woff] = NAN;
        x->windowed = true;
        g->vals[x->woff + (size_t)r->iter] = r->value;
    } else {
        if (g->keys[key].use_summary)
            g->vals[x->off] = r->value;
        if (!x->windowed)
            g->vals[x->woff] = r->value;
    }
    *se_prev = se;
cleanup:
    return st;
}

/* Intern a run read as rows, its values put in place as they come: no
 * second pass over the rows. A series' windows as measured are its raw
 * slots; a series with no window holds its summary in the first (a summary
 * met before the series' first window is taken back then). */
static fp_status intern_rows(eng *g)
{
    const fp_run *run = g->run;
    const fp_run_rows *rows = run->rows;
    size_t n = rows->n, used = 0, cap = 0;
    int32_t *kmap = NULL, *emap = NULL;
    fp_key_shape *shape = NULL;
    fp_prefault pf = {0};
    row_walk w = {0};
    const fp_sample_row *rw;
    size_t nrw;
    fp_status st = FP_OK;
    w.ahead = g->ahead;
    shape = malloc((rows->nkeys + 1) * sizeof *shape);
    kmap = calloc(rows->nkeys + 1, sizeof *kmap);
    emap = fp_calloc_huge(rows->nents + 1, sizeof *emap);
    g->ents = fp_malloc_huge((rows->nents + 1) * sizeof *g->ents);
    g->ser = fp_malloc_huge((n + 1) * sizeof *g->ser);
    FP_CHECK_ALLOC(shape);
    FP_CHECK_ALLOC(kmap);
    FP_CHECK_ALLOC(emap);
    FP_CHECK_ALLOC(g->ents);
    FP_CHECK_ALLOC(g->ser);
    FP_CHECK(shape_keys(g, shape, rows->nkeys));
    /* the values' room, sized for the series that start with a first window
     * or a summary: what real runs hold (more grow); the series a key has
     * and their slots, as the larger of the two, to fault in (below) */
    size_t nser = 0, used_est = 0;
    for (size_t k = 0; k < rows->nkeys; k++) {
        const fp_key_shape *sh = &shape[k];
        size_t slots = (size_t)(sh->last > 0 ? sh->last + 1 : 1) + 1;
        size_t m = sh->firsts > sh->summaries ? sh->firsts : sh->summaries;
        cap += ((size_t)sh->firsts + sh->summaries) * slots;
        nser += m;
        used_est += m * (slots - (sh->summaries == 0));
    }
    g->vals = g->wvals = fp_malloc_huge((cap + 1) * sizeof *g->vals);
    FP_CHECK_ALLOC(g->vals);
    if (!table_init(&g->ent_tab, rows->nents))
        FP_FAIL(FP_ENOMEM, "out of memory for the entity table of run %s", run->id);
    /* fault in on a thread of its own what interning is about to fill: at
     * 100,000 nodes x 8 it took 0.7 s instead of 1.0-1.8 s, where the faults
     * were half its time */
    fp_prefault_add(&pf, g->vals, (used_est < cap ? used_est : cap) * sizeof *g->vals);
    fp_prefault_add(&pf, g->ser, (nser < n ? nser : n) * sizeof *g->ser);
    fp_prefault_add(&pf, g->ents, (rows->nents + 1) * sizeof *g->ents);
    fp_prefault_add(&pf, g->ent_tab.slot, (g->ent_tab.mask + 1) * sizeof *g->ent_tab.slot);
    fp_prefault_start(&pf);
    int64_t se_prev = -1;
    FP_CHECK(walk_start(g, &w, 0, SIZE_MAX));
    while ((st = walk_next(g, &w, &rw, &nrw)) == FP_OK && nrw) {
        for (size_t j = 0; j < nrw; j++)
            FP_CHECK(intern_row(g, &rw[j], w.first + j, kmap, emap, shape, &se_prev, &used, &cap));
    }
    FP_CHECK(st);
cleanup:
    fp_row_reader_free(w.rd);
    fp_prefault_wait(&pf);
    free(shape);
    free(kmap);
    free(emap);
    return st;
}

static fp_status intern_samples(eng *g)
{
    const fp_run *run = g->run;
    size_t n = run->nsamples;
    g->ents = fp_malloc_huge((n + 1) * sizeof *g->ents);
    g->ser = fp_malloc_huge((n + 1) * sizeof *g->ser);
    g->sample_ser = fp_malloc_huge((n + 1) * sizeof *g->sample_ser);
    fp_status st = FP_OK;
    FP_CHECK_ALLOC(g->ents);
    FP_CHECK_ALLOC(g->ser);
    FP_CHECK_ALLOC(g->sample_ser);
    if (!table_init(&g->ent_tab, 1024))
        FP_FAIL(FP_ENOMEM, "out of memory for the entity table of run %s", run->id);
    int64_t key = -1, ent = -1, se_prev = -1;
    const fp_sample *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        const fp_sample *s = &run->samples[i];
        FP_CHECK(window_ok(run, i, s->iter));
        key = next_key(g, prev, key, s);
        ent = next_entity(g, prev, ent, s);
        int64_t se =
            key < 0 || ent < 0 ? -1 : next_series(g, se_prev, (uint32_t)key, (uint32_t)ent);
        if (se < 0)
            FP_FAIL(FP_ENOMEM, "out of memory interning sample %zu of run %s", i, run->id);
        g->sample_ser[i] = (uint32_t)se;
        key_info *ki = &g->keys[key];
        ki->has_summary |= s->iter < 0;
        if (s->iter >= 0) {
            g->ser[se].windowed = true;
            ki->windowed = true;
            if (s->iter + 1 > ki->windows)
                ki->windows = s->iter + 1;
        }
        ki->raw_windows = ki->windows > 1 ? ki->windows : 1;
        prev = s;
        se_prev = se;
    }
    /* per-window values; a key whose series only hold summaries has one window */
    size_t off = 0;
    for (size_t k = 0; k < g->nkeys; k++) {
        key_info *ki = &g->keys[k];
        ki->use_summary = ki->cls && ki->cls->summary && ki->has_summary;
        if (ki->windows < 1 || ki->use_summary)
            ki->windows = 1;
    }
    /* one array: a series' windows as measured at woff; the values judged are
     * the same ones (off = woff) except where its key judges summaries, whose
     * one value gets a slot after all the windows */
    for (size_t s = 0; s < g->nser; s++)
        off += (size_t)g->keys[g->ser[s].key].raw_windows + g->keys[g->ser[s].key].use_summary;
    if (off > UINT32_MAX)
        FP_FAIL(FP_ENOMEM, "run %s: %zu value slots, past a series' 32-bit offsets", run->id, off);
    off = 0;
    for (size_t s = 0; s < g->nser; s++) {
        g->ser[s].woff = (uint32_t)off;
        off += (size_t)g->keys[g->ser[s].key].raw_windows;
    }
    for (size_t s = 0; s < g->nser; s++)
        g->ser[s].off = g->keys[g->ser[s].key].use_summary ? (uint32_t)off++ : g->ser[s].woff;
    g->vals = g->wvals = fp_malloc_huge((off + 1) * sizeof *g->vals);
    FP_CHECK_ALLOC(g->vals);
    for (size_t i = 0; i < off; i++)
        g->vals[i] = NAN;
    /* the samples of a window visit every series: fetch a series ahead of
     * its sample, or each one waits for memory (~20% of detect's time at
     * 10,000 nodes x 8) */
    enum { AHEAD = 16 };
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n)
            __builtin_prefetch(&g->ser[g->sample_ser[i + AHEAD]]);
        int32_t iter = run->samples[i].iter;
        double value = run->samples[i].value;
        const series *se = &g->ser[g->sample_ser[i]];
        if (se->windowed ? iter >= 0 : iter < 0)
            g->wvals[se->woff + (size_t)(iter > 0 ? iter : 0)] = value;
        bool use_summary = g->keys[se->key].use_summary || !se->windowed;
        if (use_summary ? iter >= 0 : iter < 0)
            continue; /* windows or the summary, not both */
        g->vals[se->off + (size_t)(use_summary ? 0 : iter)] = value;
    }
cleanup:
    return st;
}

/* Intern g->run into g (run, rules and explain set): its nodes and their SKUs,
 * then the samples' keys, tests, entities and series, and every series'
 * values. FP_ENOMEM (logged) when memory runs out; what was made so far is
 * g's, freed by fp__det_free. */
fp_status fp__det_intern(eng *g)
{
    fp_status st = setup_nodes(g);
    if (st == FP_OK)
        st = g->run->rows ? intern_rows(g) : intern_samples(g);
    ahead_end(g->ahead);
    return st;
}

/* ---- reasons ---------------------------------------------------------------------------- */

/* A new zeroed reason of owner (node index, or nnodes + entity id: see
 * fp__det_ent_owner) at the end of g's reasons, in *out; it lasts until the
 * next reason is added. FP_ENOMEM (logged) when out of memory. */
fp_status fp__det_add_reason(eng *g, uint32_t owner, fp_reason **out)
{
    fp_status st = FP_OK;
    owned_reason *t = fp_grow(g->reasons, &g->reason_cap, g->nreasons + 1, sizeof *t, 256);
    if (!t)
        FP_FAIL(FP_ENOMEM, "out of memory for reason %zu of run %s", g->nreasons + 1, g->run->id);
    g->reasons = t;
    owned_reason *o = &g->reasons[g->nreasons++];
    memset(o, 0, sizeof *o);
    o->owner = owner;
    *out = &o->r;
cleanup:
    return st;
}

/* The owner of an entity's reasons: its node's index for a node, else nnodes + ent. */
uint32_t fp__det_ent_owner(const eng *g, uint32_t ent)
{
    const ent_info *ei = &g->ents[ent];
    if (ei->kind == FP_ENT_NODE)
        return (uint32_t)ei->node;
    return (uint32_t)(g->nnodes + ent);
}

/* Raise entity ent's verdict to v where v is worse (into g->ent_v where the
 * copy of the engine has one). */
void fp__det_set_ent_verdict(eng *g, uint32_t ent, fp_verdict v)
{
    fp_verdict *to = g->ent_v ? &g->ent_v[ent] : &g->ents[ent].v;
    *to = fp__det_worse(*to, v);
}

/* A new reason of series se's entity, in *out, with its key, unit, rule,
 * evidence and verdict filled in (the measurements are the caller's); the
 * verdict of the entity is not changed. FP_ENOMEM (logged) when out of
 * memory. */
fp_status fp__det_series_reason(eng *g, const series *se, fp_evidence ev, fp_verdict v,
                                const char *rule, fp_reason **out)
{
    fp_reason *r;
    fp_status st = FP_OK;
    FP_CHECK(fp__det_add_reason(g, fp__det_ent_owner(g, se->ent), &r));
    const key_info *k = &g->keys[se->key];
    snprintf(r->key, sizeof r->key, "%s", k->text);
    snprintf(r->unit, sizeof r->unit, "%s", k->rep->unit);
    snprintf(r->rule, sizeof r->rule, "%s", rule);
    r->evidence = ev;
    r->verdict = v;
    *out = r;
cleanup:
    return st;
}

/* ---- freeing ------------------------------------------------------------------------------ */

/* Free everything g owns (not the run, rules or baselines); g may be partly made. */
void fp__det_free(eng *g)
{
    free(g->node);
    free(g->node_sku);
    table_free(&g->node_tab);
    free(g->sku);
    free(g->keys);
    free(g->tests);
    free(g->ents);
    table_free(&g->ent_tab);
    free(g->ser);
    free(g->sample_ser);
    free(g->vals); /* wvals: the same array */
    free(g->peer_rows);
    free(g->class_floor);
    free(g->reasons);
    free(g->blind);
    free(g->node_v);
    free(g->drift);
    free(g->table_bid);
}

