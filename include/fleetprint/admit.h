#ifndef FLEETPRINT_ADMIT_H
#define FLEETPRINT_ADMIT_H
/* Topology-aware job admission (Arnold, arXiv 2509.15940): choose which free,
 * healthy nodes a job gets, and in which rank order, so that its data-parallel
 * (DP) and pipeline-parallel (PP) groups touch the fewest pods (spine switches).
 *
 * A job is a grid of nodes: PP stages are rows, and each row (one DP group) is
 * the nodes holding dp × tp / gpus_per_node GPUs' worth of ranks (TP stays
 * inside a node; a node holds gpus_per_node / tp DP ranks). Rank order is
 * Megatron's default (tp fastest, then dp, then pp), so the k-th node of the
 * answer is row k / cols, column k % cols. A DP group is a row, a PP group a
 * column. Spread of a group = distinct pods it touches; the objective is
 *   alpha * max row spread + (1 - alpha) * max column spread,
 * ties broken by the same figure counted on leaf switches. */
#include <stdint.h>

#include "fleetprint/hostlist.h"
#include "fleetprint/status.h"
#include "fleetprint/topology.h"

/* The job's shape. Zero fields are derived by fp_admit_resolve. */
typedef struct fp_admit_shape {
    int nodes;         /* N, nodes wanted */
    int dp, pp, tp;    /* parallel degrees in ranks (GPUs) */
    int gpus_per_node; /* default 8 */
    double alpha;      /* weight of DP spread, in [0, 1] */
    int rows, cols;    /* filled by fp_admit_resolve: pp, and nodes per DP group */
} fp_admit_shape;

/* Complete and check a shape: tp defaults to gpus_per_node, pp to 1, dp to
 * what fills N nodes. Requires tp to divide gpus_per_node, the grid to fill
 * exactly N nodes and 0 <= alpha <= 1. On error FP_EUSAGE with a one-line
 * message in err naming the option. */
fp_status fp_admit_resolve(fp_admit_shape *shape, char *err, size_t errlen);

/* What each topology node may be used for. */
enum { FP_ADMIT_UNAVAILABLE = 0, FP_ADMIT_HEALTHY = 1, FP_ADMIT_WARNED = 2 };

/* Health verdicts per node, as the store's latest verdicts give them: nodes
 * in fail are never admitted, nodes in warn only when healthy nodes do not
 * suffice. Either may be NULL (nothing known). */
typedef struct fp_admit_health {
    const fp_hostlist *fail;
    const fp_hostlist *warn;
} fp_admit_health;

/* A source of health verdicts (the store provides one): append the names of
 * failing and warned nodes to fail and warn. Returns FP_OK or the error that
 * stops admission. */
typedef fp_status (*fp_admit_health_fn)(void *ctx, fp_hostlist *fail, fp_hostlist *warn);

/* Fill avail[0..nodes) (caller-allocated, one byte per topology node): free
 * nodes are those in free (all nodes when free is NULL), minus exclude and
 * health->fail; of those, health->warn ones are WARNED. Names in free that
 * the topology does not know are an input error (FP_EINPUT, message in err);
 * unknown names in exclude or the health lists are ignored. */
fp_status fp_admit_availability(const fp_topology *t, const fp_hostlist *free_nodes,
                                const fp_hostlist *exclude, const fp_admit_health *health,
                                unsigned char *avail, char *err, size_t errlen);

typedef enum fp_admit_method {
    FP_ADMIT_TOPO,       /* ours: constructions + local search over pods, then leaves */
    FP_ADMIT_FIRST_FIT,  /* the first N usable nodes in topology order */
    FP_ADMIT_BEST_FIT,   /* fewest pods by free capacity, nodes in topology order */
    FP_ADMIT_RANDOM_FIT, /* N usable nodes at random, in topology order */
} fp_admit_method;

/* Spreads of a placement (see the top of this file). */
typedef struct fp_admit_score {
    int dp_spread, pp_spread;           /* max over DP / PP groups, pods */
    int dp_leaf_spread, pp_leaf_spread; /* the same on leaf switches */
    double objective, leaf_objective;   /* alpha-weighted */
    int warned;                         /* warned nodes used */
} fp_admit_score;

/* A placement: node[k] is the topology index of the k-th node in rank order. */
typedef struct fp_placement {
    int n;
    int *node;
    fp_admit_score score;
} fp_placement;

/* Choose shape->nodes nodes with method (shape resolved). Only nodes with
 * avail != UNAVAILABLE are used, healthy ones unless they are too few. seed
 * drives random-fit and the local search (same seed, same answer). Returns
 * FP_EFAIL with a message in err when too few nodes are usable, FP_ENOMEM.
 * out->node is malloc'd; release with fp_placement_clear. */
fp_status fp_admit_place(const fp_topology *t, const fp_admit_shape *shape,
                         const unsigned char *avail, fp_admit_method method, uint64_t seed,
                         fp_placement *out, char *err, size_t errlen);

/* Score nodes[0..rows*cols) in rank order. FP_ENOMEM only. */
fp_status fp_admit_score_nodes(const fp_topology *t, const fp_admit_shape *shape,
                               const int *node, const unsigned char *avail,
                               fp_admit_score *out);

/* Free a placement's nodes and zero it. */
void fp_placement_clear(fp_placement *p);

/* Name of a method ("topo", "first-fit", ...). */
const char *fp_admit_method_name(fp_admit_method m);

#endif
