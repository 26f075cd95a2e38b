/* The output of `fleetprint admit`: the chosen nodes as a hostlist, the job's
 * shape and the placement scores against first-fit, as text and as JSON. */
#include <jansson.h>
#include <stdio.h>

#include "fleetprint/report.h"

/* ---- admit's answer ------------------------------------------------------------------------ */

static void print_row(FILE *out, const char *name, const fp_admit_score *s)
{
    fprintf(out, "%-10s %9d %9d %9.2f   %9d %9d %9.2f\n", name, s->dp_spread, s->pp_spread,
           s->objective, s->dp_leaf_spread, s->pp_leaf_spread, s->leaf_objective);
}

static json_t *score_json(const fp_admit_score *s)
{
    return json_pack("{s:i, s:i, s:f, s:i, s:i, s:f, s:i}", "dp_spread", s->dp_spread,
                     "pp_spread", s->pp_spread, "objective", s->objective, "dp_leaf_spread",
                     s->dp_leaf_spread, "pp_leaf_spread", s->pp_leaf_spread, "leaf_objective",
                     s->leaf_objective, "warned_nodes", s->warned);
}

fp_status fp_report_admit_json(const char *path, const char *topology, const fp_admit_shape *sh,
                            const fp_topology *t, const fp_placement *ours,
                            const fp_placement *ff, const char *hostlist)
{
    json_t *nodes = json_array();
    for (int k = 0; k < ours->n; k++)
        json_array_append_new(nodes, json_string(fp_topology_node_name(t, ours->node[k])));
    json_t *root = json_pack(
        "{s:s, s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f}, s:s, s:s, s:o, s:o, s:o}",
        "topology", topology, "job", "nodes", sh->nodes, "dp", sh->dp, "pp", sh->pp, "tp",
        sh->tp, "gpus_per_node", sh->gpus_per_node, "dp_group_nodes", sh->cols,
        "pp_group_nodes", sh->rows, "alpha", sh->alpha, "hostlist", hostlist, "rank_order",
        "tp fastest, then dp, then pp: node k is pp stage k / dp_group_nodes", "nodes", nodes,
        "ours", score_json(&ours->score), "first_fit", score_json(&ff->score));
    return fp_json_write(root, path);
}

void fp_report_admit_console(FILE *out, const fp_admit_shape *sh, const char *hostlist,
                             const fp_placement *ours, const fp_placement *ff)
{
    fprintf(out, "hostlist   %s\n", hostlist);
    fprintf(out, "job        %d nodes: DP %d x PP %d x TP %d on %d GPUs per node; a DP group "
           "is %d nodes, a PP group %d; alpha %.2f\n",
           sh->nodes, sh->dp, sh->pp, sh->tp, sh->gpus_per_node, sh->cols, sh->rows, sh->alpha);
    fprintf(out, "rank order node k is PP stage k / %d, DP position k %% %d\n", sh->cols, sh->cols);
    fprintf(out, "%-10s %9s %9s %9s   %9s %9s %9s\n", "placement", "DP pods", "PP pods",
           "objective", "DP leaves", "PP leaves", "leaf obj");
    print_row(out, "ours", &ours->score);
    print_row(out, "first-fit", &ff->score);
}
