#ifndef FLEETPRINT_TOPOLOGY_H
#define FLEETPRINT_TOPOLOGY_H
/* The switch tree of a cluster, read from Slurm's topology.conf (tree plugin):
 *
 *   # comment
 *   SwitchName=s0 Nodes=n[0-31] LinkSpeed=200
 *   SwitchName=p0 Switches=s[0-3]
 *
 * Keys are case-insensitive; values are hostlist expressions. A switch with
 * Nodes= is a leaf (level 0); a switch with Switches= sits one level above its
 * highest child. A node's "pod" (Arnold's minipod, the spine level) is the
 * parent of its leaf, or the leaf itself when the leaf has no parent.
 *
 * Rejected, with the line number: unknown keys, a line without SwitchName,
 * duplicate switch names, a switch with both Nodes= and Switches=, unknown
 * child switches, a switch under two parents, cycles, a node under two
 * leaves. Nodes are numbered in the order the file first names them. */
#include <stddef.h>

#include "fleetprint/status.h"

typedef struct fp_topology fp_topology;

/* Parse topology.conf text. name is used in messages ("topology.conf:7: ...").
 * On error returns FP_EINPUT with a one-line message in err and *out NULL;
 * FP_ENOMEM when out of memory. The caller frees *out with fp_topology_free. */
fp_status fp_topology_parse(const char *text, const char *name, fp_topology **out, char *err,
                            size_t errlen);

/* Read and parse a file. A file that cannot be read is FP_EINPUT too, with
 * the reason in err. */
fp_status fp_topology_load(const char *path, fp_topology **out, char *err, size_t errlen);

/* Free a topology. NULL is fine. */
void fp_topology_free(fp_topology *t);

/* Nodes: count, name, index by name (-1 when unknown), leaf switch, pod. */
int fp_topology_nodes(const fp_topology *t);
const char *fp_topology_node_name(const fp_topology *t, int node);
int fp_topology_node_find(const fp_topology *t, const char *name);
int fp_topology_node_leaf(const fp_topology *t, int node);
int fp_topology_node_pod(const fp_topology *t, int node);

/* Switches: count, name, level (0 for leaves), parent (-1 at the top), the
 * LinkSpeed text as written ("" when absent) and the line it was defined on. */
int fp_topology_switches(const fp_topology *t);
const char *fp_topology_switch_name(const fp_topology *t, int sw);
int fp_topology_switch_level(const fp_topology *t, int sw);
int fp_topology_switch_parent(const fp_topology *t, int sw);
const char *fp_topology_switch_link_speed(const fp_topology *t, int sw);
int fp_topology_switch_line(const fp_topology *t, int sw);

/* Height of the tree: 1 + the highest switch level (0 for an empty tree). */
int fp_topology_levels(const fp_topology *t);

#endif
