/* Fuzz target: Slurm topology.conf (admit/topology.c, fp_topology_parse).
 * Properties: a rejected file has a message starting with the file name; an
 * accepted one is a tree: every node has a leaf switch that is found by name,
 * every parent is a valid switch one level or more above its child, walking up
 * ends, and the level count bounds every switch's level. */
#include "fleetprint/topology.h"

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    char *text = fz_cstr(data, size);
    if (!text)
        return 0;
    char err[256];
    fp_topology *t = NULL;
    fp_status st = fp_topology_parse(text, "fuzz.conf", &t, err, sizeof err);
    if (st != FP_OK) {
        FZ_ASSERT(t == NULL);
        FZ_ASSERT(strncmp(err, "fuzz.conf", 9) == 0);
        free(text);
        return 0;
    }
    int nsw = fp_topology_switches(t), nn = fp_topology_nodes(t), levels = fp_topology_levels(t);
    FZ_ASSERT(nsw >= 0 && nn >= 0 && levels >= 0 && levels <= nsw);
    for (int s = 0; s < nsw; s++) {
        const char *name = fp_topology_switch_name(t, s);
        FZ_ASSERT(name && name[0]);
        FZ_ASSERT(fp_topology_switch_link_speed(t, s) != NULL);
        FZ_ASSERT(fp_topology_switch_line(t, s) >= 1);
        int lvl = fp_topology_switch_level(t, s);
        FZ_ASSERT(lvl >= 0 && lvl < levels);
        int p = fp_topology_switch_parent(t, s);
        FZ_ASSERT(p >= -1 && p < nsw && p != s);
        if (p >= 0)
            FZ_ASSERT(fp_topology_switch_level(t, p) > lvl);
        int steps = 0;
        for (int x = s; x >= 0; x = fp_topology_switch_parent(t, x))
            FZ_ASSERT(++steps <= nsw);
    }
    for (int i = 0; i < nn; i++) {
        const char *name = fp_topology_node_name(t, i);
        FZ_ASSERT(name && name[0]);
        FZ_ASSERT(fp_topology_node_find(t, name) == i);
        int leaf = fp_topology_node_leaf(t, i);
        FZ_ASSERT(leaf >= 0 && leaf < nsw && fp_topology_switch_level(t, leaf) == 0);
        int pod = fp_topology_node_pod(t, i);
        FZ_ASSERT(pod == leaf || pod == fp_topology_switch_parent(t, leaf));
    }
    fp_topology_free(t);
    free(text);
    return 0;
}
