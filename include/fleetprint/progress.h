#ifndef FLEETPRINT_PROGRESS_H
#define FLEETPRINT_PROGRESS_H
/* Progress of long work on rank 0: a live line rewritten in place when
 * stderr is a terminal, plain lines at most every `every` seconds otherwise
 * (for logs and cron mail). */
#include <stdbool.h>

typedef struct fp_progress {
    const char *what;   /* "burn-in" */
    double total;       /* units of work in all (seconds, steps ...); 0 unknown */
    double start;       /* fp_clock() at begin */
    double last;        /* fp_clock() at the last line */
    double every;       /* seconds between plain lines */
    bool tty;
    bool enabled;       /* false: prints nothing (other ranks, --quiet) */
} fp_progress;

/* Start: enabled only where enabled is true (typically rank 0, not quiet). */
void fp_progress_begin(fp_progress *p, const char *what, double total, bool enabled);

/* Report done units with a detail text ("median 812 GFLOP/s, 0 errors").
 * Prints elapsed/total, percent and ETA when total is known. */
void fp_progress_update(fp_progress *p, double done, const char *detail);

/* Finish the line (a newline on a terminal) with a final detail. */
void fp_progress_end(fp_progress *p, const char *detail);

#endif
