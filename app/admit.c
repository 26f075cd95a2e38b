/* `fleetprint admit`: topology-aware choice of nodes for a DP x PP job.
 * Reads topology.conf, works out which nodes are usable (--free, --exclude,
 * health verdicts), places the job with ours and with first-fit, and prints
 * the hostlist in rank order with the spreads of both (and JSON on request). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fleetprint/admit.h"
#include "fleetprint/detect.h"
#include "fleetprint/history.h"
#include "fleetprint/hostlist.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/store.h"
#include "fleetprint/topology.h"

typedef struct admit_cfg {
    const char *topology;
    int nodes, dp, pp, tp, gpus_per_node, seed;
    double alpha;
    fp_strlist free_nodes, exclude, fail_nodes, warn_nodes;
    const char *store;
    const char *tag;
    const char *rules;
    const char *json;
} admit_cfg;

static const fp_opt admit_opts[] = {
    {"topology", 0, FP_OPT_STRING, offsetof(admit_cfg, topology), NULL,
     "Slurm topology.conf (tree plugin) describing the switches (required)"},
    {"nodes", 'N', FP_OPT_INT, offsetof(admit_cfg, nodes), NULL, "nodes the job needs"},
    {"dp", 0, FP_OPT_INT, offsetof(admit_cfg, dp), NULL,
     "data-parallel degree in ranks (default: fills --nodes)"},
    {"pp", 0, FP_OPT_INT, offsetof(admit_cfg, pp), "1", "pipeline-parallel degree"},
    {"tp", 0, FP_OPT_INT, offsetof(admit_cfg, tp), NULL,
     "tensor-parallel degree, inside a node (default: --gpus-per-node)"},
    {"gpus-per-node", 0, FP_OPT_INT, offsetof(admit_cfg, gpus_per_node), "8", "GPUs per node"},
    {"alpha", 'a', FP_OPT_DOUBLE, offsetof(admit_cfg, alpha), "0.5",
     "weight of the DP spread; 1 - alpha weighs the PP spread"},
    {"free", 0, FP_OPT_LIST, offsetof(admit_cfg, free_nodes), NULL,
     "hostlist or @FILE (@-: stdin) of free nodes (repeatable; default: every node in the "
     "topology)"},
    {"exclude", 'x', FP_OPT_LIST, offsetof(admit_cfg, exclude), NULL,
     "hostlist or @FILE of nodes never to use (repeatable)"},
    {"fail-nodes", 0, FP_OPT_LIST, offsetof(admit_cfg, fail_nodes), NULL,
     "hostlist or @FILE of nodes failing their health verdicts: never used (repeatable)"},
    {"warn-nodes", 0, FP_OPT_LIST, offsetof(admit_cfg, warn_nodes), NULL,
     "hostlist or @FILE of warned nodes: used only when healthy nodes do not suffice "
     "(repeatable)"},
    {"store", 0, FP_OPT_STRING, offsetof(admit_cfg, store), NULL,
     "also take failing and warned nodes from the detector's verdicts on the store's latest run"},
    {"tag", 0, FP_OPT_STRING, offsetof(admit_cfg, tag), NULL,
     "with --store: the latest run with this tag (e.g. preflight, nightly)"},
    {"rules", 'r', FP_OPT_STRING, offsetof(admit_cfg, rules), NULL,
     "with --store: the rules file the detector judges with (default: the built-in rules)"},
    {"seed", 0, FP_OPT_INT, offsetof(admit_cfg, seed), "1", "seed of the local search"},
    {"json", 0, FP_OPT_STRING, offsetof(admit_cfg, json), NULL,
     "also write the answer as JSON to this file ('-': standard output)"},
    {0},
};

/* Expand every item of a repeatable hostlist option into one list; NULL list
 * when the option was not given. */
static fp_status gather(const char *opt, const fp_strlist *items, fp_hostlist **out)
{
    *out = NULL;
    if (items->n == 0)
        return FP_OK;
    fp_hostlist *hl = fp_hostlist_new();
    if (!hl) {
        fp_error("--%s: out of memory", opt);
        return FP_ENOMEM;
    }
    for (int i = 0; i < items->n; i++) {
        char err[256];
        fp_status st = fp_hostlist_append_arg(hl, items->item[i], err, sizeof err);
        if (st != FP_OK) {
            fp_error("--%s '%s': %s", opt, items->item[i], err);
            fp_hostlist_free(hl);
            return st;
        }
    }
    *out = hl;
    return FP_OK;
}

/* Health from the command line: --fail-nodes and --warn-nodes. ctx is the
 * admit_cfg. */
static fp_status health_from_options(void *ctx, fp_hostlist *fail, fp_hostlist *warn)
{
    const admit_cfg *c = ctx;
    char err[256];
    for (int i = 0; i < c->fail_nodes.n; i++)
        if (fp_hostlist_append_arg(fail, c->fail_nodes.item[i], err, sizeof err) != FP_OK) {
            fp_error("--fail-nodes '%s': %s", c->fail_nodes.item[i], err);
            return FP_EUSAGE;
        }
    for (int i = 0; i < c->warn_nodes.n; i++)
        if (fp_hostlist_append_arg(warn, c->warn_nodes.item[i], err, sizeof err) != FP_OK) {
            fp_error("--warn-nodes '%s': %s", c->warn_nodes.item[i], err);
            return FP_EUSAGE;
        }
    return FP_OK;
}

/* Add the nodes at verdict v to list. */
static fp_status add_nodes(const fp_verdicts *v, fp_verdict which, fp_hostlist *list)
{
    const char *const *names;
    size_t n = fp_verdicts_nodes_at(v, which, &names);
    for (size_t i = 0; i < n; i++) {
        char err[256];
        if (which == FP_WARN && fp_verdicts_node(v, names[i]) != FP_WARN)
            continue; /* nodes_at(WARN) also lists the failing ones */
        if (fp_hostlist_append(list, names[i], err, sizeof err) != FP_OK) {
            fp_error("admit: node name '%s' from the store: %s", names[i], err);
            return FP_EINPUT;
        }
    }
    return FP_OK;
}

/* Health from the store: the detector's verdicts on the latest run (with
 * --tag, the latest so tagged) against the store's baselines and the history
 * of the runs before it, under the rules of --rules (default: built in). Failing nodes are never
 * used, warned ones last: a repeat offender (history evidence) warns. */
static fp_status health_from_store(void *ctx, fp_hostlist *fail, fp_hostlist *warn)
{
    const admit_cfg *c = ctx;
    fp_status st = FP_OK;
    fp_store *store = NULL;
    fp_baselines *base = NULL;
    fp_rules *rules = NULL;
    fp_verdicts *v = NULL;
    fp_history *hist = NULL;
    fp_run run;
    char err[512];
    fp_run_init(&run);
    FP_CHECK(fp_store_open(&store, c->store, FP_STORE_READ, 0));
    FP_CHECK(fp_store_load_run(store, "latest", c->tag, &run));
    FP_CHECK(fp_store_load_baselines(store, &base));
    if (fp_rules_load(c->rules, &rules, err, sizeof err) != FP_OK)
        FP_FAIL(c->rules ? FP_EINPUT : FP_EINTERNAL, "admit: %s", err);
    fp_history_rule hr = fp_rules_history(rules);
    if (hr.runs > 0) {
        fp_history_opts ho = {.tag = hr.tag, .before = run.id, .runs = hr.runs};
        FP_CHECK(fp_store_load_history(store, &ho, &hist));
    }
    fp_detect_opts opts = {.rules = rules, .baselines = base, .history = hist};
    FP_CHECK(fp_detect(&run, &opts, &v));
    FP_CHECK(add_nodes(v, FP_FAIL, fail));
    FP_CHECK(add_nodes(v, FP_WARN, warn));
    size_t offenders = 0;
    for (size_t i = 0; i < fp_verdicts_node_count(v); i++)
        offenders += fp_verdicts_node_offends(v, fp_verdicts_get(v, i)->entity->node);
    fp_info("admit: health from run %s in %s: %zu failing, %zu warned node(s) (%zu repeat "
            "offender%s: history)", run.id, c->store, fp_hostlist_count(fail),
            fp_hostlist_count(warn), offenders, offenders == 1 ? "" : "s");
cleanup:
    fp_history_free(hist);
    fp_verdicts_free(v);
    fp_rules_free(rules);
    fp_baselines_free(base);
    fp_store_close(store);
    fp_run_free(&run);
    return st;
}

/* ---- the command ------------------------------------------------------------------- */

static fp_status admit_run(const void *config, fp_world *world)
{
    const admit_cfg *c = config;
    fp_status st = FP_OK;
    fp_topology *t = NULL;
    fp_hostlist *free_nodes = NULL, *exclude = NULL, *fail = NULL, *warn = NULL;
    unsigned char *avail = NULL;
    fp_placement ours = {0}, ff = {0};
    char *hostlist = NULL;
    char err[512] = "";

    if (!c->topology) {
        fp_error("admit: --topology FILE is required");
        return FP_EUSAGE;
    }
    fp_admit_shape sh = {.nodes = c->nodes, .dp = c->dp, .pp = c->pp, .tp = c->tp,
                         .gpus_per_node = c->gpus_per_node, .alpha = c->alpha};
    if (fp_admit_resolve(&sh, err, sizeof err) != FP_OK) {
        fp_error("admit: %s", err);
        return FP_EUSAGE;
    }
    st = fp_topology_load(c->topology, &t, err, sizeof err);
    if (st != FP_OK) {
        fp_error("%s", err);
        return st;
    }
    FP_CHECK(gather("free", &c->free_nodes, &free_nodes));
    FP_CHECK(gather("exclude", &c->exclude, &exclude));
    FP_CHECK_ALLOC(fail = fp_hostlist_new());
    FP_CHECK_ALLOC(warn = fp_hostlist_new());
    FP_CHECK(health_from_options((void *)c, fail, warn));
    if (c->store)
        FP_CHECK(health_from_store((void *)c, fail, warn));
    fp_admit_health health = {.fail = fail, .warn = warn};
    FP_CHECK_ALLOC(avail = malloc((size_t)fp_topology_nodes(t) + 1));
    st = fp_admit_availability(t, free_nodes, exclude, &health, avail, err, sizeof err);
    if (st != FP_OK) {
        fp_error("admit: %s", err);
        goto cleanup;
    }
    st = fp_admit_place(t, &sh, avail, FP_ADMIT_TOPO, (uint64_t)c->seed, &ours, err, sizeof err);
    if (st != FP_OK) {
        fp_error("admit: %s", err);
        goto cleanup;
    }
    FP_CHECK(fp_admit_place(t, &sh, avail, FP_ADMIT_FIRST_FIT, 0, &ff, err, sizeof err));

    const char **names = malloc((size_t)ours.n * sizeof *names);
    FP_CHECK_ALLOC(names);
    for (int k = 0; k < ours.n; k++)
        names[k] = fp_topology_node_name(t, ours.node[k]);
    hostlist = fp_hostlist_compress(names, (size_t)ours.n);
    free(names);
    FP_CHECK_ALLOC(hostlist);

    if (!c->json || strcmp(c->json, "-") != 0) {
        fp_report_admit_console(stdout, &sh, hostlist, &ours, &ff);
    }
    if (ours.score.warned)
        fp_warn("admit: %d warned node(s) used: too few healthy nodes are free",
                ours.score.warned);
    if (c->json)
        FP_CHECK(fp_report_admit_json(c->json, c->topology, &sh, t, &ours, &ff, hostlist));

cleanup:
    free(hostlist);
    fp_placement_clear(&ours);
    fp_placement_clear(&ff);
    free(avail);
    fp_hostlist_free(free_nodes);
    fp_hostlist_free(exclude);
    fp_hostlist_free(fail);
    fp_hostlist_free(warn);
    fp_topology_free(t);
    return st;
}

const fp_command fp_cmd_admit = {
    .name = "admit",
    .summary = "topology-aware choice of nodes for a DP x PP job",
    .opts = admit_opts,
    .config_size = sizeof(admit_cfg),
    .needs_world = false,
    .run = admit_run,
};
