#ifndef FLEETPRINT_DETECT_WHATIF_INTERNAL_H
#define FLEETPRINT_DETECT_WHATIF_INTERNAL_H
/* Shared between the detect/whatif*.c files only; not a public header. */
#include "fleetprint/whatif.h"

struct fp_wi_trace {
    char source[256]; /* file name or caller's label, for error messages */
    bool from_file;   /* line[] holds file line numbers (else row numbers) */
    size_t n;
    fp_wi_row *rows;
    int *line; /* [n] line of each row in the source */
};

/* Log one "bad input" line and return FP_EINPUT. */
fp_status fp__wi_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
