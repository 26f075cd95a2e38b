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

/* Read /runs/<id> of the current file into t (zeroed first; freed by caller). */
fp_status fp__store_read_runtab(fp_store *s, const char *id, fp__runtab *t);
/* Whether stored run id can be read: FP_OK, or FP_EINPUT with the reason in why
 * (a phrase naming the file). Cheap: its partition file exists. deep: the run is
 * read whole and holds as many samples as the manifest lists (read errors are
 * logged as they happen). */
fp_status fp__store_run_readable(fp_store *s, const char *id, bool deep, char *why, size_t len);
/* Append runtabs in one commit (the engine behind fp_store_append_runs). */
fp_status fp__store_append_runtabs(fp_store *s, fp__runtab *const *tabs, size_t n);
/* The same with each run's verdicts (judged NULL, or judged[i] NULL: none),
 * written beside it in the same partition (fp__store_write_verdicts). */
fp_status fp__store_append_judged(fp_store *s, fp__runtab *const *tabs,
                                  const fp_run_verdicts *const *judged, size_t n);

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
