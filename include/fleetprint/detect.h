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
    FP_EV_COUNT
} fp_evidence;

/* "peers", "drift", "fleet", "value", "missing", "links", "gpus", "late". */
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
} fp_reason;

typedef struct fp_entity_verdict {
    fp_entity entity;
    fp_verdict verdict;
    size_t first_reason, nreasons; /* into the reasons of the fp_verdicts */
} fp_entity_verdict;

typedef struct fp_verdicts fp_verdicts;

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
} fp_detect_opts;

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

/* The faults injected into the last run (owned by sim). */
size_t fp_sim_faults(const fp_sim *sim, const fp_sim_fault **faults);

/* "slow-gpu", "slow-node", "bad-link", "sdc", "throttle", "intermittent". */
const char *fp_sim_fault_name(fp_sim_fault_kind k);

/* True when the fault makes its node faulty (all but bad links). */
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
