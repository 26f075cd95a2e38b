#ifndef FLEETPRINT_DETECT_H
#define FLEETPRINT_DETECT_H
/* The detector: verdicts per entity (pass, warn, fail, unknown) with reasons,
 * from three kinds of evidence -- peers in the live run, the entity's own
 * baseline (drift) and its SKU's baseline (fleet) -- under thresholds read from
 * a rules file (JSON, docs/detect.md). It demarcates node vs GPU vs link,
 * names late ranks, and writes drain and exclude lists for schedulers.
 *
 * Also here: the fleet simulator (`fleetprint simulate`) that makes runs with
 * realistic noise and known faults to measure the detector's accuracy. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fleetprint/sample.h"
#include "fleetprint/status.h"

typedef struct fp_baselines fp_baselines; /* fleetprint/store.h */
typedef struct fp_history fp_history;     /* fleetprint/history.h */

/* ---- rules ------------------------------------------------------------------------- */

typedef struct fp_rules fp_rules;

/* The built-in default rules, as JSON text (the documented defaults). */
const char *fp_rules_default_text(void);

/* Parse rules from JSON text; origin names the source in messages ("rules.json").
 * On success *out is a new object the caller frees with fp_rules_free. On bad
 * input returns FP_EINPUT with a one-line message naming origin, line and
 * column or the bad field in err; *out is NULL. */
fp_status fp_rules_parse(const char *text, const char *origin, fp_rules **out, char *err,
                         size_t errlen);

/* Load rules from a file, or the defaults when path is NULL. Errors as
 * fp_rules_parse (a missing or unreadable file is FP_EINPUT). */
fp_status fp_rules_load(const char *path, fp_rules **out, char *err, size_t errlen);

void fp_rules_free(fp_rules *rules);

/* The name of the rule that judges metric key ("suite.test.metric@size"):
 * the first value rule that matches, else the first class; NULL when none
 * matches. The string belongs to rules. */
const char *fp_rules_classify(const fp_rules *rules, const char *key);

/* ---- verdicts ------------------------------------------------------------------------ */

typedef enum fp_verdict { FP_PASS, FP_WARN, FP_FAIL, FP_UNKNOWN } fp_verdict;

/* "pass", "warn", "fail", "unknown". */
const char *fp_verdict_name(fp_verdict v);

typedef enum fp_evidence {
    FP_EV_PEERS,   /* against the other entities of the same SKU in the live run */
    FP_EV_DRIFT,   /* against the entity's own baseline */
    FP_EV_FLEET,   /* against the SKU's baseline */
    FP_EV_VALUE,   /* an absolute value rule (wrong results, ECC, temperature) */
    FP_EV_MISSING, /* the result is missing */
    FP_EV_LINKS,   /* the node is slow with most of its link partners */
    FP_EV_GPUS,    /* the node has failing devices */
    FP_EV_LATE,    /* the rank arrives late at collectives */
    FP_EV_CONFIG,  /* the node's configuration record against its SKU's majority */
    FP_EV_REFERENCE, /* against the reference catalog's figure for the device model */
    FP_EV_HISTORY, /* a repeat offender: failed or warned in k of its last n judged runs */
    FP_EV_COUNT
} fp_evidence;

/* "peers", "drift", "fleet", "value", "missing", "links", "gpus", "late",
 * "config", "reference", "history". */
const char *fp_evidence_name(fp_evidence e);

/* Why an entity is not a plain pass. deviation is the fraction worse than
 * expected (0.3: 30% worse, in the metric's own better direction), z the
 * robust score (negative: worse). windows_bad of windows were out of bounds.
 * band is the spread one window is expected to show (in the metric's unit:
 * expected +- band); ref_runs x ref_windows the values behind expected (for
 * peers: ref_runs 0, ref_windows the peers). */
typedef struct fp_reason {
    char key[96];        /* metric key, suite.test.metric[@size] */
    char unit[16];
    char rule[32];       /* name of the rule class or value rule */
    fp_evidence evidence;
    fp_verdict verdict;
    double value;        /* the live value (median over windows) */
    double expected;     /* what peers / baseline say */
    double band;         /* expected +- band (NaN: none) */
    int ref_runs, ref_windows;
    double deviation;
    double z;
    int windows_bad, windows;
    char note[112];      /* free text: "link n2~n6", "cost others 12.3 ms" */
    bool retest;         /* found by the re-test of a confirm pass (fp_verdicts_confirm) */
    /* a host-side metric (its class says "host": pageable copies, small
     * copies, launch latency) that fails on baseline evidence alone: held to
     * warn ("host-side metric: needs a re-test to fail on baseline
     * evidence") unless fp_detect_opts.confirmed; a re-test decides */
    bool needs_retest;
    /* a link's fail that a node explains (slow with most partners, or failing
     * on its own evidence): now warn. A re-test reads it back (confirm.c): the
     * link stays slow when that end proves fine with nodes that passed. */
    bool explained;
} fp_reason;

/* The entity is the judged run's (or one the verdicts hold): valid as long as
 * both the fp_verdicts and the run it was judged on. */
typedef struct fp_entity_verdict {
    const fp_entity *entity;
    fp_verdict verdict;
    size_t first_reason, nreasons; /* into the reasons of the fp_verdicts */
} fp_entity_verdict;

typedef struct fp_verdicts fp_verdicts;

/* ---- the reference catalog ------------------------------------------------------------
 * Expected figures per device model, each with its source (a vendor
 * specification, a measured run with date and commit, or a fleet's
 * baselines): docs/references.md. The built-in catalog is JSON text in the
 * binary (detect/references.c; docs/references.json is its copy). */
typedef struct fp_references fp_references;

/* The built-in catalog, as JSON text. */
const char *fp_references_default_text(void);

/* Parse a catalog from JSON text; origin names it in messages. On bad input
 * FP_EINPUT with one line naming origin and the field
 * ("refs.json: models[1].figures[0].value: expected a number > 0"); *out
 * NULL. The caller frees *out with fp_references_free. */
fp_status fp_references_parse(const char *text, const char *origin, fp_references **out,
                              char *err, size_t errlen);

/* Load a catalog file, or the built-in catalog when path is NULL. Errors as
 * fp_references_parse (an unreadable file is FP_EINPUT). */
fp_status fp_references_load(const char *path, fp_references **out, char *err, size_t errlen);

void fp_references_free(fp_references *refs);

/* The expected value of metric key (fp_sample_key) on device model, with
 * its catalog model's name and source in words ("measured 2026-11-23 at
 * 0d2aaf3"), or false when the catalog has no figure for it. A figure
 * applies to the keys of its metric (suite.test.metric) whose size is at
 * least its min_size. */
bool fp_references_find(const fp_references *refs, const char *model, const char *key,
                        double *value, const char **name, const char **source);

/* A catalog entry for sku from a store's baselines: its SKU baselines'
 * summaries (the best of each run, median over runs) or medians, each with
 * source {"kind": "baseline", ...} naming origin (the store), the date the
 * baselines were built and the runs behind the figure. Keys of a rule class
 * that is ignored or per-call (late, absolute) are left out. *text is new
 * JSON text (a whole catalog, fp_references_parse reads it) the caller frees.
 * FP_EINPUT when no baseline of sku exists, naming the SKUs that do. */
fp_status fp_references_from_baselines(const fp_baselines *b, const fp_rules *rules,
                                       const char *sku, const char *origin, char **text,
                                       char *err, size_t errlen);

/* ---- configuration drift, as judged (fp_detect with the run's records) ------------- */

typedef struct fp_config_drift {
    char node[FP_NAME_MAX];
    int dev;               /* -1: a field of the node */
    char field[32];
    char value[96];        /* the node's (device's) value */
    char expected[96];     /* the majority's, its own max, or its previous run's */
    char against[16];      /* "fleet", "max", "ecc", "previous" */
    int count, total;      /* fleet: the majority's share of its SKU's records */
    double since;          /* previous: the previous run's start (Unix time) */
    fp_verdict verdict;    /* pass: informational */
} fp_config_drift;

/* The differing fields of the run's configuration records, in node order. */
size_t fp_verdicts_drift_count(const fp_verdicts *v);
const fp_config_drift *fp_verdicts_drift(const fp_verdicts *v, size_t i);

typedef struct fp_detect_opts {
    const fp_rules *rules;            /* required */
    const fp_baselines *baselines;    /* NULL: peer evidence only */
    /* The ranks shared CPU cores when they measured (emulated nodes on one
     * host): timing verdicts then need the rules' "contended" thresholds.
     * contended_note says why (shown with every verdict it changed). */
    bool contended;
    const char *contended_note;
    /* Record the passing evidence of this entity too (canonical text, e.g.
     * "node:n3", which also covers its devices, links and ranks), for
     * `detect --explain`; NULL: only what is not a pass. */
    const char *explain;
    /* The circuit breaker's share of the run's nodes (0..1], overriding the
     * rules' "breaker.max_drain"; 0: the rules' (fp_verdicts_breaker). */
    double max_drain;
    /* The reference catalog (reference evidence), or NULL: none. */
    const fp_references *references;
    /* The store's previous run (its configuration records), or NULL: the
     * records are compared with the run's majority only. */
    const fp_run *previous;
    /* The verdicts of the runs judged before this one (fleetprint/history.h:
     * fp_store_load_history with the rules' fp_rules_history), or NULL: no
     * history evidence. A repeat offender gets a history reason and is
     * raised to at least warn (see fp_verdicts_offender). */
    const fp_history *history;
    /* A re-test confirmed this run's suspects (preflight's second pass):
     * host-side metrics may then fail on baseline evidence alone. false:
     * such fails warn with needs_retest set (fp_reason). */
    bool confirmed;
    /* The run interned ahead (fp_detect_prepare, with this run and rules),
     * or NULL: fp_detect interns it. fp_detect takes what it made; the
     * caller still frees it with fp_detect_prep_free. */
    struct fp_detect_prep *prepared;
} fp_detect_opts;

/* Intern run (its nodes, keys, entities, series and values: the first part of
 * fp_detect) on a thread of its own, while the caller reads what else the
 * detector needs (baselines, history) from the store: HDF5 stays on the
 * caller's thread. run, pack and rules are only read, and must not change
 * until fp_detect took it or fp_detect_prep_free. pack: NULL, or the run's
 * rows packed (fp_store_load_run_packed), which only this reads: fp_detect
 * needs the run prepared then. Without a thread to be had, it interns here.
 * FP_ENOMEM. */
typedef struct fp_detect_prep fp_detect_prep;
struct fp_row_pack;
fp_status fp_detect_prepare(const fp_run *run, const struct fp_row_pack *pack,
                            const fp_rules *rules, fp_detect_prep **out);
/* Wait for the interning and free what fp_detect did not take; NULL is fine. */
void fp_detect_prep_free(fp_detect_prep *p);

/* The verdicts of a run that timed out: the nodes of the ranks that never
 * arrived in step fail, each with the reason "hung: never arrived in <step>"
 * (rule "hung", evidence missing) per missing rank, and so do those ranks;
 * the other nodes are unknown (they arrived, nothing was judged). With no
 * missing rank, group:world fails (the step did not complete). run needs only
 * its context (nodes, ranks) and must outlive *out, which the caller frees
 * with fp_verdicts_free. The overall verdict is fail. FP_ENOMEM. */
fp_status fp_verdicts_hung(const fp_run *run, const int *ranks, size_t n, const char *step,
                           fp_verdicts **out);

/* Run the detector on run. On success *out is a new object the caller frees
 * with fp_verdicts_free. The run is only read and must outlive *out. With
 * baselines, their evidence is judged on a second thread beside peer
 * evidence (the verdicts do not depend on it). FP_EINPUT when the run has
 * no samples; FP_ENOMEM. */
fp_status fp_detect(const fp_run *run, const fp_detect_opts *opts, fp_verdicts **out);

void fp_verdicts_free(fp_verdicts *v);

/* The worst verdict over every entity (unknown counts as pass when other
 * evidence exists; a run where nothing could be judged is unknown). */
fp_verdict fp_verdicts_overall(const fp_verdicts *v);

/* Entities judged, in a stable order: nodes first (in run order), then the
 * rest. Pointers stay valid until fp_verdicts_free. */
size_t fp_verdicts_count(const fp_verdicts *v);
const fp_entity_verdict *fp_verdicts_get(const fp_verdicts *v, size_t i);
const fp_reason *fp_verdicts_reason(const fp_verdicts *v, size_t i);

/* The verdict of one node by name, or FP_UNKNOWN when not judged. */
fp_verdict fp_verdicts_node(const fp_verdicts *v, const char *node);

/* Names of the nodes whose verdict is at least min (FP_FAIL: the nodes to
 * drain), in run order; the array and the names belong to v. */
size_t fp_verdicts_nodes_at(const fp_verdicts *v, fp_verdict min, const char *const **names);

/* The status a command exits with: FP_EFAIL when anything failed, else FP_OK. */
fp_status fp_verdicts_status(const fp_verdicts *v);

/* ---- the circuit breaker -------------------------------------------------------------
 * When one run would drain more than a small share of its nodes, a stale
 * baseline, a broken test or a fleet-wide change (a driver, a power cap) is
 * likelier than that many broken nodes: the breaker trips and nothing is
 * drained. The verdicts stay as judged (the nodes still fail, the run exits
 * 1); only the drain and exclude lists are written empty. */
typedef struct fp_breaker {
    bool tripped;
    size_t failing;   /* failing nodes */
    size_t nodes;     /* nodes judged */
    double max_drain; /* it trips when failing > max_drain x nodes ... */
    int max_nodes;    /* ... and failing > max_nodes */
} fp_breaker;

/* Judge the breaker on v's failing nodes with the rules' "breaker" limits;
 * max_drain in (0, 1] overrides the rules' share (0: the rules'; 1: never
 * trips). fp_detect applies it; call it on verdicts made otherwise
 * (fp_verdicts_hung). */
void fp_verdicts_apply_breaker(fp_verdicts *v, const fp_rules *rules, double max_drain);

/* The breaker as last applied (all zero, not tripped, when never applied). */
const fp_breaker *fp_verdicts_breaker(const fp_verdicts *v);

/* "12 of 64 nodes fail: more than --max-drain (5% and 2 nodes); nothing
 * drained. Suspect the baselines, the test, or a fleet-wide change" into buf. */
char *fp_breaker_text(const fp_breaker *b, char *buf, size_t len);

/* A key whose peers spread so widely on this run that a value at the rule's
 * fail threshold could not fail: peer evidence fails a value only where it
 * also lies z robust deviations from the peers' median. limit is the factor
 * of that median a value must lie beyond to fail (below it where higher is
 * better, above it where lower is), rule_limit the factor the rule's fail
 * threshold names (0.6 where a 40% drop fails). A fault between the two only
 * warns, or passes: the run's blind spot, shown beside its verdicts. */
typedef struct fp_blind_spot {
    char key[96];
    char rule[32];
    fp_entity_kind kind; /* of the peers judged against each other */
    int peers;
    double spread;       /* the peers' robust spread as a factor (1.5: +-50%) */
    double limit, rule_limit;
} fp_blind_spot;

/* The blind spots of peer evidence on this run, in key order. */
size_t fp_verdicts_blind_count(const fp_verdicts *v);
const fp_blind_spot *fp_verdicts_blind(const fp_verdicts *v, size_t i);

/* The number of nodes judged: the first entities of fp_verdicts_get. */
size_t fp_verdicts_node_count(const fp_verdicts *v);

/* True when e is the entity named by text (canonical, "gpu:n3/1"), or text
 * names a node ("node:n3") and e is that node or one of its devices, ranks
 * or links: what `--explain` shows. */
bool fp_entity_in(const fp_entity *e, const char *text);

/* ---- history: repeat offenders ----------------------------------------------------------- */

/* The rules' "history" object: an entity that failed or warned in at least k
 * of its last n judged runs is a repeat offender; history reads at most the
 * newest runs stored runs (0: history is off), only those tagged tag when
 * tag is not "" (docs/detect.md). */
typedef struct fp_history_rule {
    int k, n, runs;
    char tag[32];
} fp_history_rule;

/* The rules' history settings (the defaults: 3 of 5, 100 runs, any tag). */
fp_history_rule fp_rules_history(const fp_rules *rules);

/* A repeat offender of a judged run. It has a reason of evidence
 * FP_EV_HISTORY ("repeat offender: failed or warned in 3 of its last 5
 * judged runs (...)"), and a verdict of at least warn: history raises a pass
 * (or an unknown) to warn and leaves a warn or fail as it is, so history
 * alone never fails an entity. Nodes, devices and links are judged so (a
 * rank's warn is its node's, and rank numbers change from job to job; a
 * group is no hardware); a device or intra-node link raised to warn raises
 * its node to warn too, as its own warn would. */
typedef struct fp_offender {
    size_t entity;      /* its index for fp_verdicts_get */
    fp_verdict own;     /* its verdict on this run's own evidence */
    int bad, judged;    /* failed or warned in bad of its last judged (<= n) runs */
    double first, last; /* when the oldest and the newest of those runs started */
} fp_offender;

/* Whether the run was judged with history (fp_detect_opts.history), and then
 * the rules' k and n and the judged runs the history held. */
bool fp_verdicts_history(const fp_verdicts *v, int *k, int *n, size_t *runs);

/* The repeat offenders, in entity order. */
size_t fp_verdicts_offender_count(const fp_verdicts *v);
const fp_offender *fp_verdicts_offender(const fp_verdicts *v, size_t i);

/* Entity i's verdict on this run's own evidence, history aside (what a
 * stored record keeps, so history never feeds on itself). */
fp_verdict fp_verdicts_own(const fp_verdicts *v, size_t i);

/* Whether a node (by name), one of its devices or an intra-node link of it is
 * a repeat offender of this run. */
bool fp_verdicts_node_offends(const fp_verdicts *v, const char *node);

/* ---- confirmation: a re-test before acting (detect/confirm.c) --------------------------- */

/* Before a verdict becomes an action (a drain, an exclude list, a failed CI
 * job) the failures are measured again (docs/confirm.md): the failing tests
 * run once more, a failing link is measured again beside each of its ends
 * paired with nodes that passed, and only what fails again fails. */

#define FP_CONFIRM_TESTS 16

/* What a run's failures ask a re-test to measure (fp_confirm_plan_make). */
typedef struct fp_confirm_plan {
    int ntests;
    char tests[FP_CONFIRM_TESTS][24]; /* fp_sample.test names, in the run's order */
    int nsuspects;                    /* failing entities a re-test can judge */
    int nhung;                        /* failing ones it cannot: hangs (the watchdog's) */
    /* The link sweep (when "links" is a test): node pairs, as indices into
     * the run's nodes: each failing link, then each of its ends and each
     * node slow with its link partners paired with nodes that passed. */
    int npairs;
    int (*pairs)[2];
    bool *spare;  /* per node: it passed the gate (pass or warn), so it may partner
                     a suspect (passing ones first) and serve in reference links */
    bool *inside; /* per node: a link inside it failed (measure its inner links) */
    char note[160]; /* what it could not plan ("no node passed to pair n3 with") */
} fp_confirm_plan;

/* The plan of a re-test of run from its verdicts v (rules as judged): the
 * tests of every failing reason (a late rank: every collective with late-rank
 * records; the "hung" rule: none) and the link pairs above, each end of a
 * failing link with max(2, node_links.min_links) partners that passed (or,
 * when too few did, only warned), a node slow with its partners with one
 * more. ntests 0: nothing to re-test.
 * Deterministic. *plan is initialised here; free with fp_confirm_plan_free.
 * FP_ENOMEM. */
fp_status fp_confirm_plan_make(const fp_verdicts *v, const fp_run *run, const fp_rules *rules,
                               fp_confirm_plan *plan);
void fp_confirm_plan_free(fp_confirm_plan *plan);

typedef enum fp_confirm_outcome {
    FP_CONFIRM_REPRODUCED,     /* failed again: it fails */
    FP_CONFIRM_NOT_REPRODUCED, /* did not fail again: it warns ("did not reproduce on re-test") */
    FP_CONFIRM_NOT_RETESTED,   /* its tests did not run again: its fail stands */
    FP_CONFIRM_FOUND           /* an end of a failing link, slow with nodes that passed
                                  too on re-test: the node's fault, it fails */
} fp_confirm_outcome;

/* "reproduced", "not_reproduced", "not_retested", "found". */
const char *fp_confirm_outcome_name(fp_confirm_outcome o);

typedef struct fp_confirm_item {
    fp_entity entity;
    fp_confirm_outcome outcome;
    bool certain; /* a wrong result (a value rule) failed: it fails whatever the re-test says */
} fp_confirm_item;

/* The confirm pass of a run: what ran, what it cost and, per failing entity,
 * what the re-test said. The caller fills all but items. */
typedef struct fp_confirm_info {
    bool ran;               /* a re-test ran (false: note says why not) */
    char note[192];         /* why it did not run, or what it left out */
    char run_id[48];        /* the re-test run (stored with the run it confirms) */
    char tests[192];        /* the tests it ran, comma-separated */
    int npairs;             /* node pairs of its link sweep (reference links included) */
    int iters, warmup;      /* its settings (0: not known, a stored re-test) */
    int link_passes, link_iters; /* its link sweep's (0: none, or not known) */
    double first_seconds;   /* the first pass: measuring, from the first test to the verdict */
    double seconds;         /* the re-test: planning, measuring and judging */
    double budget_seconds;  /* the most it was planned to take (0: none) */
    size_t nitems;
    const fp_confirm_item *items; /* per failing entity; owned by the verdicts */
} fp_confirm_info;

/* The verdicts of a run whose failures were measured again: first (the
 * run's own) with every failing entity judged by the re-test's verdicts
 * (retest, of the re-test run; NULL when info->ran is false). A failing
 * entity whose tests ran again fails only when the same entity fails in
 * retest; otherwise it warns, its failing reasons warn with the note "did
 * not reproduce on re-test". A wrong result (value rule) fails either way,
 * its note says whether it reproduced. A node that passed but fails in retest
 * with link evidence while an end of a failing link (or a node slow with its
 * partners) is found: it fails. Entities whose tests did not run again keep
 * their fail ("not re-tested"). The re-test's reasons of these entities are
 * added (fp_reason.retest). Everything else is first's. *out is new (free
 * with fp_verdicts_free), reads first's run (which must outlive it) and
 * carries a copy of info with its items. FP_ENOMEM. */
fp_status fp_verdicts_confirm(const fp_verdicts *first, const fp_verdicts *retest,
                              const fp_confirm_info *info, fp_verdicts **out);

/* The confirm pass behind v, or NULL when v is one run's verdicts alone. */
const fp_confirm_info *fp_verdicts_confirm_info(const fp_verdicts *v);

/* ---- verdicts that a search named (fleetprint isolate; detect/named.c) ------------------ */

/* One reason an entity was named: a node or a link found by isolation. */
typedef struct fp_named {
    fp_entity entity;
    fp_reason reason;  /* its verdict is the entity's (the worst of its reasons) */
} fp_named;

/* The verdicts of a run in which nothing was judged against peers or
 * baselines but some entities were named: every node of run, in run order,
 * passes unless named, when it takes the worst verdict of its reasons; the
 * other named entities (links) follow, in the order first named. The
 * overall verdict is the worst. run needs only its context (nodes) and must
 * outlive *out (free with fp_verdicts_free). FP_ENOMEM. */
fp_status fp_verdicts_named(const fp_run *run, const fp_named *named, size_t n,
                            fp_verdicts **out);

/* The fraction worse than peers at which rules fail metric key (0.2: a value
 * 20% below the peers' median), by the class that judges it; on contended
 * runs at least the contended one, as fp_detect uses them. NaN when no
 * relative class judges key. */
double fp_rules_peer_fail(const fp_rules *rules, const char *key, bool contended);

/* ---- fleet simulation --------------------------------------------------------------------- */

typedef enum fp_sim_fault_kind {
    FP_SIM_SLOW_GPU,     /* one device slower by 10..50% */
    FP_SIM_SLOW_NODE,    /* every device and link of a node slower */
    FP_SIM_BAD_LINK,     /* one node pair's link slower */
    FP_SIM_SDC,          /* wrong GEMM results on one device */
    FP_SIM_THROTTLE,     /* a device slows down from a window on to the end */
    FP_SIM_INTERMITTENT, /* a device is slow in one episode of 2-3 windows */
    FP_SIM_HOST_DIP,     /* a healthy node's host-side metrics (pageable copies,
                            launches) 25-40% worse for the whole live run: no fault */
    FP_SIM_FAIL_SLOW,    /* one device's GEMM 8-12% slow in every run, history too */
    FP_SIM_SLOW_LAUNCH,  /* one device's launch latency 1.5-1.7x in every run */
    FP_SIM_SPLIT,        /* a node among many slow together: devices and links 2x
                            (spread evenly over the fleet: each SKU alike) */
    FP_SIM_KIND_COUNT
} fp_sim_fault_kind;

typedef struct fp_sim_fault {
    fp_sim_fault_kind kind;
    int node, gpu;     /* gpu -1: the whole node */
    int peer;          /* bad link: the other node; else -1 */
    double factor;     /* value multiplier while active (< 1) */
    int from, to;      /* active windows [from, to) of the live run */
} fp_sim_fault;

typedef struct fp_sim_opts {
    int nodes, gpus_per_node;
    int runs;            /* runs in all; the last one carries the faults */
    int windows;         /* iterations per run */
    int link_partners;   /* sweep partners per node beyond 32 nodes (all pairs up to 32) */
    uint64_t seed;
    const char *faults;  /* "slow-gpu=1%,slow-node=0.3%,bad-link=20,..." ; NULL: default */
    /* every device's GEMM and memory bandwidth times this in the last run (a
     * driver or the room moved the fleet after its baselines); 0 or 1: none */
    double shift;
} fp_sim_opts;

typedef struct fp_sim fp_sim;

/* The default fault mix (documented in docs/detect.md). */
const char *fp_sim_default_faults(void);

/* Make a fleet: node and device offsets, link pairs, and the faults of its
 * last run, all from the seed. Runs are made one at a time by fp_sim_run, so
 * a fleet of any size needs memory for one run only. On success *out is a new
 * object (free with fp_sim_free). FP_EUSAGE with a one-line message in err
 * for bad options or a bad fault spec ("--faults 'slow-gpu=x': bad count"). */
fp_status fp_sim_open(const fp_sim_opts *o, fp_sim **out, char *err, size_t errlen);
void fp_sim_free(fp_sim *sim);

/* Number of runs, and run r (0 = oldest; the last carries the faults) into
 * run, which this call initialises (the caller fp_run_free()s it). The same
 * seed gives the same run. FP_ENOMEM. */
int fp_sim_runs(const fp_sim *sim);
fp_status fp_sim_run(const fp_sim *sim, int r, fp_run *run);
/* The same run as rows (run->rows, the form rank 0 gathers a run in): 32
 * bytes a sample where an fp_sample takes 272. */
fp_status fp_sim_run_rows(const fp_sim *sim, int r, fp_run *run);

/* The faults injected into the last run (owned by sim). */
size_t fp_sim_faults(const fp_sim *sim, const fp_sim_fault **faults);

/* "slow-gpu", "slow-node", "bad-link", "sdc", "throttle", "intermittent",
 * "host-dip", "fail-slow", "slow-launch", "split". */
const char *fp_sim_fault_name(fp_sim_fault_kind k);

/* True when the fault makes its node faulty (all but bad links and host-side
 * dips, which a healthy node shows). */
bool fp_sim_fault_is_node(const fp_sim_fault *f);

/* Node-level accuracy of verdicts on the last run against the truth: a node
 * is predicted faulty when it fails, truly faulty when a node fault is on it.
 * Links: failing link entities against the bad links. */
typedef struct fp_sim_score {
    size_t tp, fp, fn, tn;
    double precision, recall, f1;
    size_t link_tp, link_fp, link_fn; /* failing links vs bad links */
} fp_sim_score;
void fp_sim_score_verdicts(const fp_sim *sim, const fp_verdicts *v, fp_sim_score *out);

/* Write the ground truth as JSON: {"faulty_nodes":[..], "bad_links":[..],
 * "faults":[{kind, entity, factor, from, to}]}. FP_EIO naming path on error. */
fp_status fp_sim_write_truth(const fp_sim *sim, const char *path);

#endif
