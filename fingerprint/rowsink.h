#ifndef FLEETPRINT_FINGERPRINT_ROWSINK_H
#define FLEETPRINT_FINGERPRINT_ROWSINK_H
/* Row sinks (rowsink.c): a 1-D table of fixed-size rows streamed into an HDF5
 * dataset a chunk at a time, so a table of any length is never held whole.
 * The dataset is what fp__h5_write_table writes (chunked, unlimited,
 * shuffle + deflate(1); a long table in chunks of 32,768 rows of a sample,
 * 896 KiB): readers cannot tell them apart. Private to
 * fingerprint/: fp__ prefix, not installed. */
#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/status.h"

typedef struct fp__rowsink fp__rowsink;

/* A sink for dataset name in loc, rows of filetype (a fixed-size type; rows
 * are given in its file layout, byte for byte). Nothing is created in the
 * file until the first chunk is full or the sink is closed. On error returns
 * FP_ENOMEM and *out is NULL. loc and filetype stay the caller's and must
 * stay open until fp__rowsink_close. */
fp_status fp__rowsink_open(hid_t loc, const char *name, hid_t filetype, fp__rowsink **out);

/* Room for the next row (H5Tget_size(filetype) bytes, to be filled before the
 * next call): NULL when writing the chunk it completed failed (the error is
 * logged; every later call fails too). */
void *fp__rowsink_next(fp__rowsink *k);

/* Write every chunk that is whole and release the filter's buffers and
 * thread until the next row: a sink waiting for rows (a run whose lines
 * stopped coming for now) keeps only its rows not yet written. FP_EH5/FP_EIO
 * as fp__rowsink_close. */
fp_status fp__rowsink_park(fp__rowsink *k);

/* FP_OK, or the failure that made fp__rowsink_next return NULL. */
fp_status fp__rowsink_status(const fp__rowsink *k);
/* Rows added so far. */
uint64_t fp__rowsink_rows(const fp__rowsink *k);

/* Write what is left and give the dataset its final length. A table that
 * never filled a chunk is written whole, its chunk its own length (as
 * fp__h5_write_table does). The sink stays the caller's to free. FP_EH5 or
 * FP_EIO (logged) when a write failed, now or earlier. */
fp_status fp__rowsink_close(fp__rowsink *k);

/* Free the sink (closing nothing in the file if fp__rowsink_close was not
 * called: the caller abandons the file). NULL is fine. */
void fp__rowsink_free(fp__rowsink *k);

#endif
