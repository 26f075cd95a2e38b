#ifndef FLEETPRINT_DETECT_INTERNAL_H
#define FLEETPRINT_DETECT_INTERNAL_H
/* Shared between the files of detect/ only: the parsed rules and the
 * verdict set's layout. */
#include <stdbool.h>
#include <stddef.h>

#include "fleetprint/detect.h"

#define FP_RULE_PATTERNS 8
#define FP_RULE_CLASSES 64

typedef struct fp_pattern_list {
    int n;
    char item[FP_RULE_PATTERNS][96];
} fp_pattern_list;

/* A relative (or absolute) variance rule for a class of metrics. */
typedef struct fp_rule_class {
    char name[32];
    fp_pattern_list patterns;
    bool absolute;     /* thresholds in the metric's unit instead of fractions */
    bool ignore;       /* keys of this class are not judged */
    bool summary;      /* judge the run's summary value (iter -1) when there is one */
    bool noisy;        /* inherently noisy: persistence only, never one window; on
                          contended runs it only warns */
    bool late;         /* late-rank records: warn/fail are fractions of all calls
                          in which an entity was the last to arrive */
    double warn, fail; /* how much worse than expected warns / fails */
    double z;          /* and how many robust standard deviations */
} fp_rule_class;

/* An absolute value rule: a value above max (or below min) is a verdict. */
typedef struct fp_value_rule {
    char name[32];
    fp_pattern_list patterns;
    double max, min;
    fp_verdict verdict;
} fp_value_rule;

struct fp_rules {
    int min_peers;
    int persist_min;
    double persist_fraction;
    double strong_factor, strong_fraction;
    double scale_floor;
    int node_link_min;
    double node_link_fraction;
    double node_gpu_fraction;
    fp_verdict missing;
    double contended_warn, contended_fail; /* relative thresholds on contended runs */
    int base_min_runs;      /* fewer runs behind an entity baseline: no drift evidence */
    double base_prior_runs; /* weight (in runs) of the SKU's spread in an entity's */
    double base_noisy;      /* a baseline spread above this: judged on windows only */
    int nclasses, nvalues;
    fp_rule_class classes[FP_RULE_CLASSES];
    fp_value_rule values[FP_RULE_CLASSES];
};

/* First value rule / class whose patterns match key (NULL: none). */
const fp_value_rule *fp__rules_value(const fp_rules *r, const char *key);
const fp_rule_class *fp__rules_class(const fp_rules *r, const char *key);
bool fp__glob(const char *pattern, const char *text);

struct fp_verdicts {
    const fp_run *run;
    fp_entity_verdict *ents;
    size_t nents;
    fp_reason *reasons;
    size_t nreasons;
    fp_verdict overall;
    const char **fail_nodes, **warn_nodes; /* names in run order */
    size_t nfail_nodes, nwarn_nodes;
    char (*node_names)[FP_NAME_MAX]; /* every node judged, verdict order */
    size_t nnodes;
};

#endif
