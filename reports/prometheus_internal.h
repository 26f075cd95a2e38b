#ifndef FLEETPRINT_REPORTS_PROMETHEUS_INTERNAL_H
#define FLEETPRINT_REPORTS_PROMETHEUS_INTERNAL_H
/* Shared between the Prometheus writers of reports/ only: the run's series as
 * the single textfile names them (prometheus.c), and the parts of a textfile
 * that the per-node folder (prometheus_nodes.c) writes again for a subset of
 * the entities. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fleetprint/detect.h"
#include "fleetprint/sample.h"

/* One series of a measured value: family, help, labels (run_tag, the
 * family's own label, the entity's labels, size), value in base units. */
typedef struct fp__prom_series {
    char family[96];
    char help[160];
    char labels[640];
    size_t base_end;         /* labels[0..base_end): run_tag and the family's own label */
    const fp_sample *key;     /* the series' metric key (suite, test, metric, unit, size) */
    const fp_entity *entity;  /* and its entity */
    double value;            /* in the family's base unit */
} fp__prom_series;

/* Which entities a textfile holds, for the writers that take a subset: e is
 * kept when this returns true. NULL: every entity (the single textfile). */
typedef bool (*fp__prom_holds)(const fp_entity *e, const void *arg);

/* The run's value series, one per (metric key, entity), sorted by family and
 * labels (each family's lines together): *out (free) and *n. FP_ENOMEM. */
fp_status fp__prom_collect(const fp_run *run, const char *tag, fp__prom_series **out, size_t *n);

/* Write s, with its family's HELP and TYPE lines when prev (the series
 * written before it, or NULL) is of another family. */
void fp__prom_put_series(FILE *f, const fp__prom_series *s, const fp__prom_series *prev);

/* Append name="value" to the label list buf[len] at *at (escaped). */
void fp__prom_label(char *buf, size_t len, size_t *at, const char *name, const char *value);

/* A run's device UUIDs by node name and device index: its ranks that know
 * theirs (the cuda backend) sorted so, the first rank of a device first.
 * Made once per textfile or folder: a scan of the nodes and ranks for each
 * GPU series was quadratic in the fleet (hours at 100,000 nodes). */
typedef struct fp__prom_uuids {
    const fp_run *run;
    const fp_rank_info **by;
    size_t n;
} fp__prom_uuids;

/* Make *u for run (FP_ENOMEM, logged; u is freeable either way). */
fp_status fp__prom_uuids_make(fp__prom_uuids *u, const fp_run *run);
void fp__prom_uuids_free(fp__prom_uuids *u);

/* fleetprint_verdict's state sets of the entities fp_verdicts_get(v, which[0..n))
 * (which NULL: every entity, the family's HELP even when there is none). */
void fp__prom_verdicts(FILE *f, const fp__prom_uuids *u, const fp_verdicts *v, const char *tag,
                       const size_t *which, size_t n);

/* fleetprint_config_drift_info of the nodes and devices holds keeps. */
void fp__prom_drift(FILE *f, const fp_verdicts *v, const char *tag, fp__prom_holds holds,
                    const void *arg);

/* fleetprint_node_repeat_offender and fleetprint_repeat_offender of the
 * entities holds keeps (nothing when the run was judged without history).
 * which[0..nwhich): the file's verdicts (fp_verdicts_get indices, in order),
 * whose nodes are the ones written, where a scan of every node for every
 * node's file was quadratic; NULL: the nodes holds keeps. */
void fp__prom_offenders(FILE *f, const fp__prom_uuids *u, const fp_verdicts *v, const char *tag,
                        fp__prom_holds holds, const void *arg, const size_t *which,
                        size_t nwhich);

/* The run as a whole (fleetprint_run_verdict, _duration, last success read
 * from the file at path, blind spots, breaker, confirm, run timestamp). */
void fp__prom_run_series(FILE *f, const fp_run *run, const fp_verdicts *v, const char *tag,
                         const char *path);

#endif
