#ifndef FLEETPRINT_STORE_INTERNAL_H
#define FLEETPRINT_STORE_INTERNAL_H
/* What the store (store.c, store_runs.c) gives the other files of
 * fingerprint/ (baseline.c, store_actions.c): stored runs read and appended as
 * runtabs, and the baselines file with the transactions that replace it. The
 * handle's fields: store_handle.h. Private to fingerprint/: fp__ prefix, not
 * installed. */
#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>

#include "fleetprint/history.h"
#include "fleetprint/store.h"
#include "runtab.h"

/* ---- runs ------------------------------------------------------------------------- */

/* Read /runs/<id> of the current file into t (zeroed first; freed by caller),
 * the samples' start times too when times is true. */
fp_status fp__store_read_runtab(fp_store *s, const char *id, bool times, fp__runtab *t);
/* Whether stored run id can be read: FP_OK, or FP_EINPUT with the reason in why
 * (a phrase naming the file). Cheap: its partition file exists. deep: the run is
 * read whole and holds as many samples as the manifest lists (read errors are
 * logged as they happen). */
fp_status fp__store_run_readable(fp_store *s, const char *id, bool deep, char *why, size_t len);

/* ---- appends, streamed (store_append.c) ---------------------------------------------
 * An append writes its runs into one new partition while their samples arrive
 * (a chunk of rows at a time, never the whole run) and lands with one commit:
 *   fp__append_begin, then per run fp__append_run and its samples
 *   (fp__apprun_add, fp__apprun_add_view), then fp__append_commit;
 *   fp__append_free abandons whatever was not committed. */
typedef struct fp__append fp__append;
typedef struct fp__apprun fp__apprun;

/* Start an append to s (an FP_STORE_APPEND handle: FP_EUSAGE otherwise).
 * Nothing is written until the first run. */
fp_status fp__append_begin(fp_store *s, fp__append **out);
/* Start run id: its group in the new partition (created with the first run).
 * FP_EINPUT with the reason in err (not logged) when id is not a valid run
 * id, is already stored, or was started before in this append; FP_EH5,
 * FP_EIO, FP_ENOMEM logged. *out belongs to the append. */
fp_status fp__append_run(fp__append *a, const char *id, fp__apprun **out, char *err,
                         size_t errlen);
/* The run's context, written at the commit: fp__append_run gives it the id
 * and status "complete"; the caller fills the rest (the id must stay). */
fp_run *fp__apprun_context(fp__apprun *r);
/* Samples added to the run so far. */
uint64_t fp__apprun_samples(const fp__apprun *r);
/* Add one sample. FP_EINPUT with err when its metric was seen with another
 * unit or direction in this run; FP_EH5/FP_EIO (logged) when writing fails. */
fp_status fp__apprun_add(fp__apprun *r, const fp_sample *s, char *err, size_t errlen);
/* Add one sample line read by fp_jsonl_sample_fast. *taken false when it
 * needs the full path (fp__runtab_intern_view: nothing added); errors as
 * fp__apprun_add. */
fp_status fp__apprun_add_view(fp__apprun *r, const fp_jsonl_sample_view *v, bool *taken);
/* Write what is left of every run (judged NULL, or judged[i] NULL: run i,
 * in the order started, has no verdicts), finish the partition and commit:
 * the runs land all together or, on error, not at all. An append with no
 * run commits nothing. */
fp_status fp__append_commit(fp__append *a, const fp_run_verdicts *const *judged);
/* Free the append; one not committed is abandoned: its partition is removed
 * and the store is as committed before it. NULL is fine. */
void fp__append_free(fp__append *a);

/* ---- verdicts (history.c) ---------------------------------------------------------- */

/* Write v as the verdicts of run id, whose group is in runs (a partition's
 * /runs being written), with attributes recorded (now) and by (which commit
 * wrote them: "append", "detect --record"). */
fp_status fp__store_write_verdicts(hid_t runs, const char *id, const fp_run_verdicts *v,
                                   const char *by);
/* FP_OK when stored run id has no verdicts or they can be read; else
 * FP_EINPUT with the reason in why (store check). */
fp_status fp__store_verdicts_readable(fp_store *s, const char *id, char *why, size_t len);

/* ---- transactions ------------------------------------------------------------------ */

/* Open (once; the handle keeps it) the file holding /baselines: *file is
 * H5I_INVALID_HID when the store has no baselines. FP_EINPUT when the file is
 * missing or not a partition. */
fp_status fp__store_baselines_file(fp_store *s, hid_t *file);

/* Start replacing the baselines: *tmp is a new, empty partition file, open
 * read-write, into which the caller writes /baselines. */
fp_status fp__store_tx_begin(fp_store *s, hid_t *tmp);
/* Close and fsync the new file and commit a manifest naming it as the
 * baselines (the old baselines file is removed). On failure the store is as
 * it was and the new file is removed. tmp is closed either way. */
fp_status fp__store_tx_commit(fp_store *s, hid_t tmp);
/* Drop the new file. */
void fp__store_tx_abort(fp_store *s, hid_t tmp);

#endif
