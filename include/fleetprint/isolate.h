#ifndef FLEETPRINT_ISOLATE_H
#define FLEETPRINT_ISOLATE_H
/* Isolation in rounds (fleetprint isolate, docs/isolate.md): when a job's
 * whole-group collective is slow, wrong or hangs and no node stands out, the
 * suspect nodes are split into groups, every group runs the same check at the
 * same time on a communicator of its own, and the outcomes of one round
 * choose the next round's groups, until each fault is named and confirmed.
 *
 * Two parts:
 *  - the plan (isolate_plan.c): the strategies' pure logic over units 0..n-1
 *    (the nodes), the slow judgement and the inference from outcomes; no MPI,
 *    so the unit tests and bench/isolate_sim drive it with a fault oracle;
 *  - the run (isolate.c): the rounds on a live job, each group's
 *    communicator built from its members alone (comm.h, open_group), a hung
 *    group abandoned at its deadline. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/comm.h"
#include "fleetprint/status.h"
#include "fleetprint/suite.h"

/* ---- the plan ---------------------------------------------------------------------- */

typedef enum fp_iso_strategy {
    FP_ISO_GRID,   /* rows, then columns; then candidates paired with passed nodes */
    FP_ISO_BISECT, /* halve every suspect set at once, cross-boundary probes */
    FP_ISO_AUTO,   /* rows first; columns when at most one row fails, else bisect */
    FP_ISO_STRATEGY_COUNT
} fp_iso_strategy;

/* "grid", "bisect", "auto"; parse: false on other text. */
const char *fp_iso_strategy_name(fp_iso_strategy s);
bool fp_iso_strategy_parse(const char *text, fp_iso_strategy *out);

/* A group's outcome: the worst of what it showed, in this order. */
typedef enum fp_iso_outcome {
    FP_ISO_OK,
    FP_ISO_SLOW,  /* busbw below the slow limit x the other groups' median */
    FP_ISO_WRONG, /* a wrong element on any member */
    FP_ISO_HUNG,  /* not complete at the round's deadline */
    FP_ISO_OUTCOME_COUNT
} fp_iso_outcome;

/* "ok", "slow", "wrong", "hung". */
const char *fp_iso_outcome_name(fp_iso_outcome o);

/* Why a group is in its round. */
typedef enum fp_iso_role {
    FP_ISO_ROW,     /* grid: a row */
    FP_ISO_COLUMN,  /* grid: a column */
    FP_ISO_HALF,    /* bisect: a half of a suspect set (padded with passed units) */
    FP_ISO_PROBE,   /* a part or a cross-boundary union of a set whose fault needs two units */
    FP_ISO_LINK,    /* the two ends of a link candidate again, once each passed with others */
    FP_ISO_PAIR,    /* one candidate with units that passed: its confirmation */
    FP_ISO_CONTROL, /* units that passed, beside the others: peers for the slow judgement */
    FP_ISO_ROLE_COUNT
} fp_iso_role;

/* "row", "column", "half", "probe", "link", "pair", "control". */
const char *fp_iso_role_name(fp_iso_role r);

typedef struct fp_iso_group {
    fp_iso_role role;
    int first, n;         /* its units: the round's units[first .. first + n) */
    int subject;          /* pair: the candidate confirmed by it; else -1 */
    /* measured, filled by the caller before fp_iso_plan_record */
    fp_iso_outcome outcome; /* FP_ISO_OK, FP_ISO_WRONG or FP_ISO_HUNG */
    double busbw;           /* GB/s (nccl-tests' bus factor for the group's ranks); NaN: hung */
    double seconds;         /* per call: the slowest member's median period; NaN: hung */
    long long wrong;        /* wrong elements over its members */
    /* judged by fp_iso_plan_record */
    double expected;        /* the median busbw of the round's other groups (NaN: none) */
} fp_iso_group;

typedef struct fp_iso_round {
    int index;              /* 1, 2, ... */
    int ngroups;
    fp_iso_group *groups;
    int nunits;             /* units placed in groups; the rest rest */
    int *units;
    double started, ended;  /* the caller's clock (s), for the outputs; the plan ignores them */
} fp_iso_round;

typedef struct fp_iso_opts {
    fp_iso_strategy strategy;
    int nunits;             /* 4 or more */
    double slow_limit;      /* slow below this x the other groups' median busbw (0 < x < 1;
                               0: no group is judged slow) */
    int max_rounds;         /* the plan ends after this many rounds, however far it got */
} fp_iso_opts;

/* What isolation named: a node that fails in every group it is in, or a
 * link: two units that failed together, then passed apart (each with a unit
 * that passed), then failed together again (the round that confirms it). */
typedef struct fp_iso_finding {
    bool link;
    int unit, peer;         /* peer: the link's other end; -1 for a node */
    fp_iso_outcome outcome; /* how its confirming group failed */
    int named;              /* the round after which it was the only suspect of a failing group */
    int confirmed;          /* the round whose group of it and units that passed failed */
    int group;              /* that group, in that round */
} fp_iso_finding;

typedef struct fp_iso_plan fp_iso_plan;

/* A plan over o->nunits units. FP_EUSAGE with a one-line err for fewer than
 * 4 units, a slow limit outside (0, 1) or max_rounds < 2; FP_ENOMEM. Free
 * with fp_iso_plan_free. Deterministic: every rank makes the same plan from
 * the same outcomes. */
fp_status fp_iso_plan_open(const fp_iso_opts *o, fp_iso_plan **out, char *err, size_t len);
void fp_iso_plan_free(fp_iso_plan *p);

/* The next round to run, or NULL when isolation is over (every suspect
 * named and confirmed, cleared, or left unresolved; or max_rounds reached).
 * The round belongs to p; the caller fills its groups' measured fields, then
 * calls fp_iso_plan_record before asking for another. */
fp_iso_round *fp_iso_plan_next(fp_iso_plan *p);

/* Judge the round the caller measured: groups whose busbw lies below the
 * slow limit x the median of the round's other groups (those that did not
 * hang) become slow; then units of passing groups are cleared and the
 * suspects narrowed (docs/isolate.md, The plan). FP_EINTERNAL when r is not
 * the round fp_iso_plan_next gave last. */
fp_status fp_iso_plan_record(fp_iso_plan *p, fp_iso_round *r);

/* The rounds run so far (recorded or not), oldest first. */
int fp_iso_plan_rounds(const fp_iso_plan *p);
const fp_iso_round *fp_iso_plan_round(const fp_iso_plan *p, int i);

/* The findings, in the order they were confirmed (belong to p). */
size_t fp_iso_plan_findings(const fp_iso_plan *p, const fp_iso_finding **out);

/* The round after which every finding was named (0: none): the rounds it
 * took to isolate, confirmation aside. */
int fp_iso_plan_named_round(const fp_iso_plan *p);

/* Seconds from the start of round 1 to the end of round `round` (1-based;
 * 0 or none run: 0), on the clock the caller stamped the rounds with. */
double fp_iso_plan_seconds(const fp_iso_plan *p, int round);

/* A suspicion that ended without a finding: its units (the first
 * FP_ISO_NOTE_UNITS of nunits) and why ("a candidate of round 2, passed with
 * units that passed in round 3"). */
#define FP_ISO_NOTE_UNITS 8
typedef struct fp_iso_note {
    int units[FP_ISO_NOTE_UNITS];
    int nunits;
    char what[128];
} fp_iso_note;

/* The suspicions that ended without a finding (belong to p), and whether
 * the plan stopped at max_rounds with suspects left. */
size_t fp_iso_plan_notes(const fp_iso_plan *p, const fp_iso_note **out);
bool fp_iso_plan_truncated(const fp_iso_plan *p);

/* Whether unit u passed in some group (cleared). */
bool fp_iso_plan_cleared(const fp_iso_plan *p, int u);

/* A known fault, for simulations: a unit (peer -1) or a link, and how the
 * groups that hold it (both ends of a link) fail; slow divides their busbw
 * by factor. */
typedef struct fp_iso_fault {
    int unit, peer;
    fp_iso_outcome outcome; /* slow, wrong or hung */
    double factor;
} fp_iso_fault;

/* Fill the measured fields of r's groups as the faults f[0..n) make them on
 * a fleet whose every group reaches busbw (GB/s): a group takes the worst
 * outcome of the faults it holds (a slow one as ok at busbw / factor, for
 * fp_iso_plan_record to judge), seconds = 1 / busbw. For the tests and
 * bench/isolate_sim. */
void fp_iso_simulate(fp_iso_round *r, const fp_iso_fault *f, size_t n, double busbw);

/* ---- the run -------------------------------------------------------------------------- */

/* What isolation runs: the plan's settings and the check every group runs. */
typedef struct fp_iso_config {
    fp_iso_strategy strategy;
    double slow_limit;      /* fp_iso_opts */
    int max_rounds;
    fp_coll coll;           /* allreduce, allgather, reduce_scatter or alltoall (float sum) */
    uint64_t bytes;         /* the check's size (nccl-tests' size of the buffer) */
    double warm, window;    /* seconds of untimed, then timed calls per round, the same
                               moments for every group */
    double timeout;         /* each round's deadline (s), set-up and check together */
} fp_iso_config;

/* Run isolation over the nodes of ctx's world (units = nodes, in world
 * order; a group holds every rank of its nodes). Every rank calls it; a rank
 * that hangs never returns, and the others go on without it: each round's
 * outcomes reach every rank from the groups' leaders, so every rank that
 * returns holds the same plan (*out, freed with fp_iso_plan_free). Nothing
 * here needs the world's collectives after the start, nor its watchdog.
 * FP_EUSAGE (one line on rank 0) when the comm backend has no groups or the
 * check is not one of the four; FP_ENOMEM. */
fp_status fp_isolate_run(fp_ctx *ctx, const fp_iso_config *cfg, fp_iso_plan **out);

/* Whether any round of p had a hung group: a rank may be stuck, and the job
 * must end by abort (exit 4), not by MPI_Finalize. */
bool fp_isolate_any_hung(const fp_iso_plan *p);

/* The lowest rank of a unit p did not find hung: the one that writes the
 * outputs (rank 0 unless its node hangs); -1 when every unit hangs. units of
 * ranks: the world's node_of. */
int fp_isolate_writer(const fp_iso_plan *p, const fp_world *w);

/* The end of an isolation, every rank that returned from fp_isolate_run: the
 * ranks not on a node found hung tell the writer they finished, and get the
 * writer's status back (the writer passes its own, st). Waits at most
 * timeout. *finished and *expected (the writer's) count the ranks that did
 * and should have; the writer logs those that never did. Returns the
 * writer's status, or FP_ETIMEOUT when it never came. */
fp_status fp_isolate_finish(fp_ctx *ctx, const fp_iso_plan *p, fp_status st, double timeout,
                            int *finished, int *expected);

#endif
