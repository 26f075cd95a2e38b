#ifndef FLEETPRINT_HISTORY_H
#define FLEETPRINT_HISTORY_H
/* Verdicts across runs: what the detector concluded about each entity of a
 * run, kept with the run in the store, and the history read back from it
 * (repeat offenders: entities that failed or warned in k of their last n
 * judged runs). The store only keeps records: it knows no detector, so a
 * record is neutral -- every judged node with its verdict, and every other
 * entity (GPU, link, rank) that did not pass, each with a short reason text.
 * reports/ turns the detector's verdicts into such a record (layout and
 * guarantees: docs/store.md; the rules' k and n: docs/detect.md). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/sample.h"
#include "fleetprint/status.h"
#include "fleetprint/store.h"

/* ---- a run's verdicts ------------------------------------------------------------ */

/* A verdict as the store keeps it (u8 in the file; the detector's order). */
typedef enum fp_judgement {
    FP_JUDGED_PASS = 0,
    FP_JUDGED_WARN = 1,
    FP_JUDGED_FAIL = 2,
    FP_JUDGED_UNKNOWN = 3
} fp_judgement;

#define FP_JUDGED_ENTITY 160 /* canonical entity text: "link:" + two endpoints fits */
#define FP_JUDGED_REASON 160

/* One entity's verdict in one run. verdict is the run's own evidence, history
 * aside, so that a repeat offender's raised verdict never counts again in
 * the next run's history; offender says history flagged it in this run (the
 * verdict shown then was at least warn). */
typedef struct fp_judged {
    char entity[FP_JUDGED_ENTITY]; /* node:n3, gpu:n3/1, link:n2~n6, rank:5@n1 */
    uint8_t verdict;               /* fp_judgement */
    uint8_t offender;              /* 1: a repeat offender when judged */
    char reason[FP_JUDGED_REASON]; /* the first reason, one line; "" when none */
} fp_judged;

/* The verdicts of one run: a growable array (zero-initialise, then add). */
typedef struct fp_run_verdicts {
    fp_judged *rows;
    size_t n, cap;
} fp_run_verdicts;

/* Add a row (texts longer than the fields are cut). FP_EINPUT when entity is
 * empty or verdict is not an fp_judgement; FP_ENOMEM. */
fp_status fp_run_verdicts_add(fp_run_verdicts *v, const char *entity, fp_judgement verdict,
                              bool offender, const char *reason);

/* Free the rows; v is empty again. */
void fp_run_verdicts_free(fp_run_verdicts *v);

/* "pass", "warn", "fail", "unknown" ("?" for anything else). */
const char *fp_judgement_name(int verdict);

/* ---- writing them (FP_STORE_APPEND handles; one atomic commit each) --------------- */

/* fp_store_append with the run's verdicts (v may be NULL: none) in the same
 * commit, as /runs/<id>/verdicts of its partition. Errors as fp_store_append. */
fp_status fp_store_append_judged(fp_store *store, const fp_run *run, const fp_run_verdicts *v);

/* fp_store_append_runs with run i's verdicts v[i] in the same commit (v, or
 * v[i], NULL: none). */
fp_status fp_store_append_judged_runs(fp_store *store, const fp_run *const *runs,
                                      const fp_run_verdicts *const *v, size_t n);

/* Open path for append (waiting up to lock_timeout_s for the lock), append
 * run with its verdicts (v may be NULL), close: what a measuring command that
 * judges does with --store. Logs one line on success and on error. */
fp_status fp_store_append_judged_file(const char *path, const fp_run *run,
                                      const fp_run_verdicts *v, double lock_timeout_s);

/* Keep the verdicts of stored run id, which has none yet (an ingested or
 * simulated run, one stored by `run`): in one commit the run is copied with
 * its verdicts into a new partition, and the other runs of its old partition
 * into another one (partitions are never changed once written; the old one
 * is then deleted). FP_EINPUT (nothing written) when there is no such run or
 * it has verdicts already; FP_EUSAGE on a read-only handle. */
fp_status fp_store_record_verdicts(fp_store *store, const char *id, const fp_run_verdicts *v);

/* ---- reading them ---------------------------------------------------------------- */

/* The verdicts stored with run id into *out (emptied first; the caller frees
 * it); *found says whether the run has any (a run stored without verdicts,
 * or by an older fleetprint, has none: FP_OK, found false). FP_EINPUT when
 * there is no such run or its table cannot be read. */
fp_status fp_store_load_verdicts(fp_store *store, const char *id, fp_run_verdicts *out,
                                 bool *found);

/* The judged runs of a store, in memory: per run its id, tag, time and
 * verdicts. Made by fp_store_load_history, or by hand (tests, simulations). */
typedef struct fp_history fp_history;

typedef struct fp_history_opts {
    const char *tag;    /* only runs with this tag; NULL or "": any tag */
    const char *before; /* only runs older than this stored run (by time, then
                           id); NULL: every run */
    int runs;           /* look at the newest this many runs (after the tag and
                           before filters; judged or not); 0: all */
} fp_history_opts;

/* Read the verdicts of the runs o selects (only their partitions are
 * opened). *out is a new object the caller frees with fp_history_free; runs
 * without verdicts are left out. FP_EINPUT when o->before is not stored or a
 * verdict table cannot be read; FP_ENOMEM. */
fp_status fp_store_load_history(fp_store *store, const fp_history_opts *o, fp_history **out);

/* An empty history, to fill with fp_history_add (NULL when out of memory). */
fp_history *fp_history_new(void);

/* Add a judged run (its records are copied). Runs may come in any order:
 * queries see them by time, then id. FP_EINPUT when id is already there;
 * FP_ENOMEM. */
fp_status fp_history_add(fp_history *h, const char *id, const char *tag, double time,
                         const fp_run_verdicts *v);

void fp_history_free(fp_history *h);

/* The number of judged runs h holds. */
size_t fp_history_runs(const fp_history *h);

/* One judged run of an entity. Pointers belong to the history. */
typedef struct fp_history_entry {
    const char *run, *tag;
    double time;
    fp_judgement verdict; /* the run's own evidence */
    bool offender;        /* history flagged it in that run */
    const char *reason;   /* "" for a pass that the run did not list */
} fp_history_entry;

/* The runs of h that judged entity (canonical text), oldest first: the
 * first max of them into out (out may be NULL when max is 0); returns how
 * many there are. A run judged the entity when it lists it with a verdict
 * other than unknown; a device, rank or link it does not list passed there
 * when the run lists every node it names with such a verdict (a run lists
 * every judged node, and other entities only when they did not pass). */
size_t fp_history_of(const fp_history *h, const char *entity, fp_history_entry *out,
                     size_t max);

/* The record behind a repeat-offender test: of entity's last judged runs (at
 * most n), how many, how many of them failed or warned, and when the oldest
 * and newest of them started. */
typedef struct fp_offense {
    int judged, bad;
    double first, last; /* Unix s; 0 when judged is 0 */
} fp_offense;

/* The counts of entity's last n judged runs in h into *out. */
void fp_history_count(const fp_history *h, const char *entity, int n, fp_offense *out);

/* Whether entity failed or warned in at least k of its last n judged runs in
 * h (fewer than n judged runs count as they are: 3 bad of 3 is 3 of its last
 * 5). out (may be NULL) gets the counts when it is one (zeros otherwise: an
 * entity with fewer than k bad verdicts in all of h is told at once). False
 * when k < 1 or n < k. */
bool fp_history_offender(const fp_history *h, const char *entity, int k, int n, fp_offense *out);
/* Whether any entity of h failed or warned in k runs or more: where none
 * did, none is a repeat offender at k, and no entity needs asking. */
bool fp_history_any_suspect(const fp_history *h, int k);

#endif
