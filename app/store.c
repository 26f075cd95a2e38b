/* fleetprint store ls|check|show|export|ingest|rm|compact: look after the runs of a store,
 * and move them in and out as JSON Lines (docs/store.md). The actions are
 * fp_store_run_action (fingerprint/store_actions.c). */
#include "cli.h"
#include "fleetprint/store.h"

static const fp_opt store_opts[] = {
    {"ACTION", 0, FP_OPT_POSITIONAL, offsetof(fp_store_action, action), NULL,
     "ls | check | show | export | ingest | rm | compact"},
    {"ARG", 0, FP_OPT_POSITIONAL, offsetof(fp_store_action, arg), NULL,
     "run id, 'latest' or 'all' (show, export), JSONL file or - (ingest), ids a,b (rm)"},
    {"before", 0, FP_OPT_STRING, offsetof(fp_store_action, before), NULL,
     "rm: every run started before DATE (YYYY-MM-DD[THH:MM[:SS]], UTC)"},
    {"target-size", 0, FP_OPT_BYTES, offsetof(fp_store_action, target), "1G",
     "compact: merge partition files smaller than this into files of about this size"},
    {"store", 0, FP_OPT_STRING, offsetof(fp_store_action, store), NULL, "the store file (HDF5)"},
    {"tag", 0, FP_OPT_STRING, offsetof(fp_store_action, tag), NULL,
     "ls/export/show latest: only runs with this tag; ingest: tag for runs without one"},
    {"out", 'o', FP_OPT_STRING, offsetof(fp_store_action, out), "-", "export: output file, - for stdout"},
    {"baselines", 0, FP_OPT_FLAG, offsetof(fp_store_action, baselines), NULL,
     "show/export: the baselines too"},
    {"lock-timeout", 0, FP_OPT_SECONDS, offsetof(fp_store_action, lock_timeout), "60s",
     "how long a writer waits for another writer's lock"},
    {0},
};

static fp_status store_run(const void *config, fp_world *world)
{
    return fp_store_run_action(config);
}

const fp_command fp_cmd_store = {
    .name = "store",
    .summary = "list, check, show, export, ingest (JSON Lines), remove and compact stored runs",
    .opts = store_opts,
    .config_size = sizeof(fp_store_action),
    .needs_world = false,
    .run = store_run,
};
