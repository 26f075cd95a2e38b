#ifndef FLEETPRINT_INJECT_H
#define FLEETPRINT_INJECT_H
/* Fault injection (--inject SPEC, repeatable): make the backends misbehave
 * on purpose for tests and demonstrations. Specs:
 *   slow:rank=R,factor=F[,after=T][,until=U]
 *                                    R's compute (and arrival) x F, from T on
 *                                    and before U (a fault that passes: a
 *                                    preflight's re-test no longer sees it)
 *   link:ranks=A-B,factor=F          traffic between A and B takes F times as long
 *   hang:rank=R,after=T              R stops making progress at T
 *   crash:rank=R[,after=T]           R dies at T
 *   bitflip:rank=R[,at=T]            one bit of R's compute results flips, from T on
 *   corrupt:rank=R[,input=1]         R's collective results are perturbed
 *                                    (input=1: R's contribution instead, so the
 *                                    result of a reduction is wrong on every rank)
 *   config:rank=R,FIELD=VALUE        R reports VALUE for configuration field FIELD
 *                                    (a field of its node or of its device; config.h)
 * Times are seconds since the run started (suffixes ms, s, m). */
#include <stdbool.h>
#include <stddef.h>

#include "fleetprint/opts.h"
#include "fleetprint/status.h"

typedef enum fp_inject_kind {
    FP_INJ_SLOW,
    FP_INJ_LINK,
    FP_INJ_HANG,
    FP_INJ_CRASH,
    FP_INJ_BITFLIP,
    FP_INJ_CORRUPT,
    FP_INJ_CONFIG,
    FP_INJ_KIND_COUNT
} fp_inject_kind;

typedef struct fp_injection {
    fp_inject_kind kind;
    int rank;        /* the rank, or endpoint A of a link */
    int rank_b;      /* endpoint B of a link, else -1 */
    double factor;   /* slow, link; 1 otherwise */
    double after;    /* seconds since start when it begins (after=, at=) */
    char field[32];  /* config: the field rank reports ... */
    char value[96];  /* ... and the value it reports */
    double until;    /* slow: seconds since start when it ends (until=); 0: never */
    bool input;      /* corrupt: R's contribution, not its result */
} fp_injection;

typedef struct fp_inject_set {
    int n;
    fp_injection item[FP_LIST_MAX];
} fp_inject_set;

/* Parse every spec. On a malformed spec returns FP_EUSAGE with err naming
 * the bad token, e.g. "--inject 'slow:rank=x': bad rank 'x'". */
fp_status fp_inject_parse(const fp_strlist *specs, fp_inject_set *out, char *err, size_t len);

/* Check ranks against the world size; FP_EUSAGE with err when out of range. */
fp_status fp_inject_validate(const fp_inject_set *s, int nranks, char *err, size_t len);

/* Compute slowdown factor for rank at time now (1 when none). */
double fp_inject_slow(const fp_inject_set *s, int rank, double now);
/* Slowdown factor of traffic between ranks a and b (1 when none). */
double fp_inject_link(const fp_inject_set *s, int a, int b);
/* True when a bitflip on rank is active at time now. */
bool fp_inject_bitflip(const fp_inject_set *s, int rank, double now);
/* True when rank's collective results are to be corrupted. */
bool fp_inject_corrupt(const fp_inject_set *s, int rank);
/* True when rank's contribution to collectives is to be corrupted (input=1). */
bool fp_inject_corrupt_input(const fp_inject_set *s, int rank);
/* True when any injection of this kind is present. */
bool fp_inject_has(const fp_inject_set *s, fp_inject_kind kind);

/* An injection point: where hangs and crashes take effect. A hang logs once
 * and never returns; a crash logs and raises SIGABRT. Otherwise returns. */
void fp_inject_point(const fp_inject_set *s, int rank, double now);

/* The specs in force as "slow:rank=5,factor=1.5;link:..." into buf. */
void fp_inject_describe(const fp_inject_set *s, char *buf, size_t len);

#endif
