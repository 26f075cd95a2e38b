#ifndef FLEETPRINT_OUTFILE_H
#define FLEETPRINT_OUTFILE_H
/* The one way fleetprint writes an output file (reports, JSON, traces,
 * drain lists, exports): whole or not at all. The text goes to PATH.tmp
 * beside path; closing checks every write, fsyncs and renames it over path.
 * A reader (node_exporter, a dashboard, the sbatch script) never sees half a
 * file, and a full disk or an I/O error leaves path as it was. A path that
 * exists as something else than a regular file (/dev/null, a FIFO, a
 * symbolic link such as /dev/stderr) is written in place: renaming over it
 * would replace the device or the link with a file. */
#include <stdbool.h>
#include <stdio.h>

#include "fleetprint/status.h"

/* Open path for writing ("-" or "/dev/stdout": stdout, written directly).
 * Returns the stream, or NULL after logging one line naming path and the
 * cause (*st: FP_EIO, or FP_EUSAGE for a path too long). */
FILE *fp_outfile_open(const char *path, fp_status *st);

/* Finish the file f = fp_outfile_open(path): flush, fsync and rename over
 * path. ok false (the caller's own step failed) abandons it: the temporary is
 * removed and path is left as it was, and FP_OK is returned (the caller has
 * its own error). A failed write logs one line naming path and the cause
 * ("no space left on device") and returns FP_EIO, the temporary removed.
 * f is closed in every case (stdout is flushed, not closed). */
fp_status fp_outfile_close(FILE *f, const char *path, bool ok);

/* Hand what f holds so far to the disk without waiting (its buffer flushed,
 * write-back started), for a writer of many MiB to call every few: the
 * fsync at fp_outfile_close then waits for the last part only (a 30 MB
 * verdict file: 0.04-0.05 s at the end on one VM). Errors show at close. */
void fp_outfile_writeback(FILE *f);

#endif
