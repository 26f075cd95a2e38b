#ifndef FLEETPRINT_FINGERPRINT_RUNTAB_H
#define FLEETPRINT_FINGERPRINT_RUNTAB_H
/* Runtabs (runtab.c): a run's samples as rows of interned entities and metric
 * keys, what one /runs/<id> group holds and the form in which the store reads
 * and writes a run. Private to fingerprint/: fp__ prefix, not installed. */
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/jsonl.h"
#include "fleetprint/sample.h"
#include "intern.h"

/* A sample as stored, its start time aside: keys into the run's entity and
 * metric tables (the public fp_sample_row, so that a run read as rows takes
 * them as they are). */
typedef fp_sample_row fp__row;

/* A metric key of a run: suite.test.metric@size with its unit and direction. */
typedef struct fp__metric {
    char suite[16];
    char test[24];
    char metric[32];
    char unit[16];
    uint8_t better;
    uint64_t size;
    fp_key_shape shape; /* its rows, counted as they are written (shape.last -1: none) */
} fp__metric;

typedef struct fp__runtab {
    fp_run ctx;           /* the context; ctx.samples stays empty */
    fp__strmap entities;  /* canonical entity text */
    fp_entity *ent;       /* parsed entities by id (filled when read from a file) */
    size_t nent;          /* of ent */
    fp__strmap keys;      /* metric identity (suite, test, metric, size) */
    fp__metric *metrics;  /* by key id */
    size_t metric_cap;
    bool shapes;          /* the metrics' shapes are known (read: the file holds them) */
    uint32_t last_metric; /* key id of the last sample added */
    uint32_t last_entity; /* entity id of the last sample added as text (a view) */
    bool have_last_ent;   /* last_ent: the entity of the last fp_sample added, */
    uint32_t last_ent_id; /* and its id */
    fp_entity last_ent;
    /* by entity (metric key) id: the one that came after it last time, or
     * FP__NONE: a run's samples repeat their order window after window, so
     * the next one is most often the one predicted, found without a lookup */
    uint32_t *next_entity, *next_metric;
    size_t next_entity_cap, next_metric_cap;
    fp__row *rows;        /* the samples of a run read from a file (writes stream them) */
    double *t;            /* their start times, when read (else NULL) */
    size_t nrows, row_cap;
} fp__runtab;

/* Intern a sample's entity and metric key in t's tables: *eid and *mid are
 * the ids its row gets. FP_EINPUT with err when the sample's metric was seen
 * before with another unit or direction; FP_ENOMEM. */
fp_status fp__runtab_intern(fp__runtab *t, const fp_sample *s, uint32_t *eid, uint32_t *mid,
                            char *err, size_t errlen);
/* The same for a sample line read by fp_jsonl_sample_fast, without building
 * an fp_sample. *taken is false (FP_OK, nothing interned) when the line needs
 * the full path, which words the error if there is one: an entity that is not
 * one or not in canonical form, a metric seen with another unit or direction.
 * FP_ENOMEM. */
fp_status fp__runtab_intern_view(fp__runtab *t, const fp_jsonl_sample_view *v, uint32_t *eid,
                                 uint32_t *mid, bool *taken);
/* Metric key k as a sample: suite, test, metric, unit, better and size set,
 * the rest zero. */
void fp__runtab_key(const fp__runtab *t, uint32_t k, fp_sample *s);
/* Expand the row i into a full sample (t_start NaN when t was not read). */
void fp__runtab_sample(const fp__runtab *t, size_t i, fp_sample *s);
/* Copy a context (nodes and ranks deep-copied; samples not). */
fp_status fp__run_copy_context(fp_run *dst, const fp_run *src);
/* Move src's context into dst (its nodes, ranks and configuration are then
 * dst's; src keeps none): a large run's 800,000 ranks are 134 MB to copy. */
void fp__run_take_context(fp_run *dst, fp_run *src);
void fp__runtab_free(fp__runtab *t);

#endif
