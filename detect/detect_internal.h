#ifndef FLEETPRINT_DETECT_INTERNAL_H
#define FLEETPRINT_DETECT_INTERNAL_H
/* Shared between the files of detect/ only: the parsed rules (rules.c), the
 * verdict set's layout (filled by detect.c), and the engine's state and steps:
 * the engine's helpers (engine.c), the evidence phases (evidence.c,
 * demarcate.c) and the driver that runs them (detect.c). */
#include <stdbool.h>
#include <stddef.h>

#include "fleetprint/detect.h"

#define FP_RULE_PATTERNS 8
#define FP_RULE_CLASSES 64

typedef struct fp_pattern_list {
    int n;
    char item[FP_RULE_PATTERNS][96];
} fp_pattern_list;

/* A relative (or absolute) variance rule for a class of metrics. */
typedef struct fp_rule_class {
    char name[32];
    fp_pattern_list patterns;
    bool absolute;     /* thresholds in the metric's unit instead of fractions */
    bool ignore;       /* keys of this class are not judged */
    bool summary;      /* judge the run's summary value (iter -1) when there is one */
    bool noisy;        /* inherently noisy: persistence only, never one window; on
                          contended runs it only warns */
    bool late;         /* late-rank records: warn/fail are fractions of all calls
                          in which an entity was the last to arrive */
    double warn, fail; /* how much worse than expected warns / fails */
    double z;          /* and how many robust standard deviations */
    /* the cost floor: a persistent deficit this large (and beyond z) fails,
     * fail is then a ceiling (what a synchronous job on the entity loses;
     * without "cost": fail) */
    double cost;
    /* the spread between runs the class's metrics show at least (a fraction;
     * 0: none), the default a young store is judged by (learn_floors) */
    double run_spread;
    bool host;          /* host-side metric: no fail on baseline evidence alone
                           unless a re-test confirmed it (fp_detect_opts.confirmed) */
    uint64_t max_size;  /* matches only keys whose @size is at most this (0: any) */
    /* on contended runs, where the class has a "contended" object (else all
     * -1: the rules' warn and fail, the class's z) */
    double contended_warn, contended_fail, contended_z;
} fp_rule_class;

/* The "config" section: glob patterns over configuration field names, per
 * verdict (fail, warn, and pass: informational); the first list whose
 * pattern matches a field decides, a field none matches is not judged. */
#define FP_CFG_PATTERNS 32
typedef struct fp_config_rules {
    int n[3];
    char item[3][FP_CFG_PATTERNS][32];
} fp_config_rules;

/* An absolute value rule: a value above max (or below min) is a verdict. */
typedef struct fp_value_rule {
    char name[32];
    fp_pattern_list patterns;
    double max, min;
    fp_verdict verdict;
} fp_value_rule;

struct fp_rules {
    int min_peers;
    int persist_min;
    double persist_fraction;
    double strong_factor, strong_fraction;
    double cost_fraction; /* windows out at the cost floor (below fail) a fail needs */
    double scale_floor;
    int node_link_min;
    double node_link_fraction;
    double node_gpu_fraction;
    fp_verdict missing;
    double contended_warn, contended_fail; /* relative thresholds on contended runs */
    int base_min_runs;      /* fewer runs behind an entity baseline: no drift evidence */
    double base_prior_runs; /* weight (in runs) of the SKU's spread in an entity's */
    double base_noisy;      /* a baseline spread above this: judged on windows only */
    double breaker_max_drain; /* the circuit breaker: share of nodes ... */
    int breaker_max_nodes;    /* ... and count of nodes a run may drain */
    fp_history_rule history; /* repeat offenders (history.c) */
    double base_spread_prior; /* weight (in entity-runs) of a class's run_spread
                                 against the store's between-run spread */
    int nclasses, nvalues;
    fp_rule_class classes[FP_RULE_CLASSES];
    fp_value_rule values[FP_RULE_CLASSES];
    fp_config_rules config;   /* which configuration fields fail, warn, inform */
    double reference_warn, reference_fail; /* how far below a catalog figure */
};

/* First value rule / class whose patterns match key (NULL: none). */
const fp_value_rule *fp__rules_value(const fp_rules *r, const char *key);
const fp_rule_class *fp__rules_class(const fp_rules *r, const char *key);
bool fp__glob(const char *pattern, const char *text);

struct fp_verdicts {
    const fp_run *run;
    fp_entity_verdict *ents;
    size_t nents;
    fp_entity *made; /* the entities the verdicts made (the nodes'), not the run's */
    size_t nmade;
    fp_reason *reasons;
    size_t nreasons;
    fp_verdict overall;
    const char **fail_nodes, **warn_nodes; /* names in run order */
    size_t nfail_nodes, nwarn_nodes;
    char (*node_names)[FP_NAME_MAX]; /* every node judged, verdict order */
    size_t nnodes;
    fp_blind_spot *blind;
    size_t nblind;
    fp_breaker breaker;
    fp_config_drift *drift;
    size_t ndrift;
    /* history (history.c): whether it was read, the offenders, and the
     * verdicts before it (NULL when history changed none) */
    bool history;
    int hist_k, hist_n;
    size_t hist_runs;
    fp_offender *offenders;
    size_t noffenders;
    fp_verdict *own;
    fp_confirm_info *confirm; /* NULL, or the confirm pass behind them (confirm.c) */
};

/* e kept in v->made (room for it allocated): its address there. */
static inline const fp_entity *fp__det_made(fp_verdicts *v, fp_entity e)
{
    v->made[v->nmade] = e;
    return &v->made[v->nmade++];
}

/* ---- the engine's state (engine.c, evidence.c, demarcate.c, detect.c) ------------------ */

/* Open-addressing table of indices; the caller compares candidates. A
 * slot's index and hash lie together: one cache line a probe. */
typedef struct table_slot {
    uint32_t index; /* index + 1; 0 = empty */
    uint32_t hash;  /* the low half of the item's hash (it holds the probe's bits) */
} table_slot;

typedef struct table {
    table_slot *slot;
    size_t mask;
    size_t used;
} table;

typedef struct ent_info {
    const fp_entity *e;
    fp_entity_kind kind; /* e's, kept beside the indices for fast scans */
    int32_t node, peer;  /* node indices; peer only for links */
    int32_t next;        /* the entity that followed it in the samples (interning) */
    int32_t first_ser;   /* its newest series, -1: none (chained by series.ent_next) */
    int32_t sku;
    fp_verdict v;
    bool explain;       /* record its passing evidence too (--explain) */
    /* windows (bit min(w, 63)) where at least one / two of its series are
     * out of bounds against peers: corroboration of a short episode */
    uint64_t bad1, bad2;
} ent_info;

typedef struct key_info {
    const fp_sample *rep;
    int32_t next; /* the key that followed it in the samples (interning) */
    char text[96];
    int32_t windows;
    int32_t raw_windows; /* windows as measured (the summary aside), at least 1 */
    int32_t test;
    bool windowed;
    bool has_summary;
    bool use_summary; /* judge only the summary values (class option) */
    const fp_value_rule *vrule;
    const fp_rule_class *cls;
} key_info;

typedef struct series {
    uint32_t key, ent;
    int32_t next;     /* the series that followed it in the samples (interning) */
    int32_t ent_next; /* the entity's series made before it, -1: none */
    uint32_t off;     /* first of key.windows values (a run's slots fit 32 bits) */
    uint32_t woff;    /* first of key.raw_windows values in wvals */
    bool windowed;    /* has per-window samples (else one summary) */
    bool drift_judged; /* judged against its own baseline of min_runs runs */
    uint8_t peers;     /* against its peers: PEERS_NONE, _IN (in bounds), _OUT (in a
                          window, at the warn level) */
    fp_verdict drift;  /* that verdict, a transient far window aside */
    double persist;    /* with drift_judged: how much worse its own baseline is than
                          its SKU's (its persistent deficit; NaN: unknown) */
} series;

/* How a series fared against its peers (series.peers). */
enum { PEERS_NONE, PEERS_IN, PEERS_OUT };

/* Why a failing reason's verdict waits for all evidence (a bit set). */
enum {
    HOLD_EPISODE = 1, /* fewer than a persistent share of windows: fails only
                         where another series of the entity agrees */
    HOLD_DRIFT = 2,   /* peers or fleet against an entity with its own baseline:
                         fails unless drift saw no change and its persistent
                         deficit is below the cost floor */
    HOLD_SHARED = 4,  /* a run summary on shared cores: fails only where a
                         series of another test of the entity agrees */
    HOLD_HOST = 8     /* a host-side metric against its peers: fails only where
                         the node's other devices do not share the deficit */
};

typedef struct owned_reason {
    uint32_t owner; /* node index, or nnodes + entity id */
    uint32_t ser;   /* the series judged (held reasons) */
    uint64_t mask;  /* its out-of-bounds windows (held reasons) */
    int hold;       /* HOLD_* bits: a fail that release() decides */
    fp_reason r;
} owned_reason;

typedef struct eng {
    const fp_run *run;
    const struct fp_row_pack *pack; /* NULL, or the run's rows, packed (run->rows->row NULL) */
    struct fp__ahead *ahead;        /* NULL, or chunks of pack decoded ahead (fp__det_ahead_*) */
    const fp_rules *rules;
    const fp_baselines *base;
    /* the baseline entity id of each entity of the run's table (rows), found
     * while the run was interned ahead; NULL: none (looked up by name) */
    uint32_t *table_bid;
    bool contended;
    const char *contended_note;
    /* nodes: the run's, then any named only by samples */
    char (*node)[FP_NAME_MAX];
    int32_t *node_sku;
    size_t nnodes, node_cap;
    table node_tab;
    /* SKUs */
    char (*sku)[FP_NAME_MAX];
    size_t nsku;
    /* interned keys, tests, entities, series */
    key_info *keys;
    size_t nkeys, key_cap;
    char (*tests)[48];
    size_t ntests;
    ent_info *ents;
    size_t nents;
    table ent_tab;
    struct {
        uint32_t e1; /* entity + 1 of the run's table; 0: none */
        uint64_t hash;
    } ent_ahead[8];  /* hashes of entities about to be interned (row_entity) */
    series *ser;
    size_t nser;
    uint32_t *sample_ser;
    double *vals;  /* the values judged, at series.off */
    double *wvals; /* per-window values at series.woff (a summary-only series: its
                      summary); the same array as vals, off = woff but for a key
                      judged on summaries */
    double *peer_rows;   /* peer evidence's scratch: a key's values and their logs, then
                            3 values a series for its split (largest key's) */
    double *class_floor; /* per rule class: the spread floor learned from the baselines */
    double *run_floor;   /* per rule class: the between-run spread floor (learn_floors;
                            in class_floor's block, on the baseline thread only) */
    bool confirmed;      /* host-side fails on baseline evidence stand (a re-test) */
    const char *explain;
    /* output */
    owned_reason *reasons;
    size_t nreasons, reason_cap;
    fp_blind_spot *blind; /* peer evidence's blind spots (judge_peers) */
    size_t nblind, blind_cap;
    uint64_t (*bad)[2]; /* NULL, or where a copy's bad1, bad2 go instead of ents[] */
    fp_verdict *ent_v; /* NULL, or where entity verdicts go instead of ents[].v
                          (a thread's copy of the engine) */
    fp_verdict *node_v;
    const fp_references *refs;  /* NULL: no reference evidence */
    const fp_run *previous;     /* NULL: no configuration record to compare with */
    fp_config_drift *drift;     /* configuration drift found (config.c) */
    size_t ndrift, drift_cap;
} eng;

/* Per-window judgement of one series against a centre and scale. */
typedef struct window_score {
    double loss, z, value, expected;
    double band; /* expected +- band: the scale in the metric's unit */
    int level; /* -1 no value, 0 ok, else out of bounds: LVL_* (evidence.c) */
} window_score;

/* Late-rank records: in each collective call the last rank to arrive has a
 * record. Over all calls of every collective, a rank that was the last in a
 * fraction of them at least the class's warn / fail (and at least twice its
 * fair share 1/N) is a straggler: magnitude-free, so it holds on fast fabrics
 * and on cores shared by many ranks alike (Mycroft counts the same way). */
typedef struct late_tally {
    const fp_rule_class *cls; /* the first late class met */
    uint32_t *count;          /* per entity: calls in which it was last */
    uint64_t calls;           /* calls seen over all late keys */
} late_tally;

/* ---- the engine's steps, shared by its files ------------------------------------------- */
/* Each is documented where it is defined. fp_detect (detect.c) runs them in
 * order: interning, then per key value, peer and late-rank evidence,
 * baselines (on a thread of their own), release of held fails, missing
 * results, demarcation, assembly. The calls go one way: detect.c calls the
 * others; evidence.c and demarcate.c call only engine.c; engine.c calls none
 * of them. */

/* engine.c: interning, reasons and verdicts */
fp_status fp__det_intern(eng *g);
/* Chunks of a packed run decoded ahead of its interning, by a thread that
 * would otherwise wait for it. fp__det_ahead_new where the interning has
 * not started (NULL: none, it decodes them all); fp__det_ahead_help on the
 * helping thread, until the interning has ended or needs no more (it says
 * nothing: a chunk that will not decode is decoded again, and reported, by
 * the interning); fp__det_ahead_free once the interning has ended. */
struct fp__ahead *fp__det_ahead_new(const eng *g);
void fp__det_ahead_help(struct fp__ahead *a);
void fp__det_ahead_free(struct fp__ahead *a);
void fp__det_free(eng *g);
fp_verdict fp__det_worse(fp_verdict a, fp_verdict b);
int64_t fp__det_series_find(const eng *g, uint32_t key, uint32_t ent);
fp_status fp__det_add_reason(eng *g, uint32_t owner, fp_reason **out);
uint32_t fp__det_ent_owner(const eng *g, uint32_t ent);
void fp__det_set_ent_verdict(eng *g, uint32_t ent, fp_verdict v);
fp_status fp__det_series_reason(eng *g, const series *se, fp_evidence ev, fp_verdict v,
                                const char *rule, fp_reason **out);

/* evidence.c: value rules, peers, baselines, release of held fails */
fp_status fp__det_judge_value(eng *g, const series *se);
fp_status fp__det_judge_peers(eng *g, const key_info *k, const uint32_t *sers, size_t m,
                              double *buf, window_score *ws);
/* Drift and fleet evidence in two steps, so that two threads can share the
 * second: the plan (the class floors into g, each series' baselines, the
 * fleet-wide shifts), then the judging of series [s0, s1), by any copy of
 * the engine that shares g's class floors. */
typedef struct fp__base_plan {
    const struct fp_baseline **bl; /* per series s: bl[2s] its entity's, bl[2s+1] its SKU's */
    double *shift;          /* per key x SKU group: drift's, fleet's */
} fp__base_plan;
fp_status fp__det_base_plan(eng *g, fp__base_plan *p);
fp_status fp__det_base_judge(eng *g, const fp__base_plan *p, size_t s0, size_t s1,
                             window_score *ws);
void fp__det_base_plan_free(fp__base_plan *p);
fp_status fp__det_release(eng *g);

/* config.c: the "config" section of the rules, and configuration drift (after
 * demarcation: it raises node verdicts) */
struct json_t;
fp_status fp__rules_parse_config(const struct json_t *root, const char *origin, fp_rules *r,
                                 char *err, size_t errlen);
fp_status fp__det_judge_config(eng *g);

/* reference.c: the "reference" section of the rules, and reference evidence
 * (before demarcation, like every series' evidence) */
fp_status fp__rules_parse_reference(const struct json_t *root, const char *origin, fp_rules *r,
                                    char *err, size_t errlen);
fp_status fp__det_judge_reference(eng *g, double *buf);

/* detect.c: give v (made from from's entities, in the same order: the confirm
 * pass) from's configuration drift, history and breaker limits, the breaker
 * judged again on v's failing nodes. FP_ENOMEM. */
fp_status fp__det_keep_extras(fp_verdicts *v, const fp_verdicts *from);

/* history.c: repeat offenders, after demarcation and before assembly; what
 * it found goes into the assembled verdicts by fp__det_history_finish */
typedef struct det_offender {
    uint32_t owner;     /* node index, or nnodes + entity id */
    fp_verdict own;
    int bad, judged;
    double first, last;
} det_offender;
typedef struct det_history {
    det_offender *off;
    size_t n, cap;
    fp_verdict *node_own, *ent_own; /* verdicts before history */
    bool changed;
} det_history;
fp_status fp__det_judge_history(eng *g, const fp_history *h, det_history *out);
fp_status fp__det_history_finish(const eng *g, const fp_history *h, det_history *d,
                                 fp_verdicts *v);
void fp__det_history_free(det_history *d);

/* demarcate.c: missing results, demarcation, late ranks */
fp_status fp__det_judge_missing(eng *g, const uint32_t *key_first, const uint32_t *by_key);
fp_status fp__det_demarcate(eng *g);
void fp__det_tally_late(const eng *g, const key_info *k, const uint32_t *sers, size_t m,
                        late_tally *t);
fp_status fp__det_judge_late(eng *g, const late_tally *t);

#endif
