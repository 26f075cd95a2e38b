/* fleetprint baseline build: robust baselines from stored runs;
 * fleetprint baseline update: a new run folded into them (docs/store.md);
 * fleetprint baseline export-reference: a reference catalog entry from them. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "fleetprint/detect.h"
#include "fleetprint/log.h"
#include "fleetprint/outfile.h"
#include "fleetprint/store.h"

typedef struct baseline_cfg {
    const char *action;
    const char *store;
    const char *tag;
    int last;
    const char *since;
    double reject;
    double lock_timeout;
    const char *sku;
    const char *out;
    const char *run;
} baseline_cfg;

static const fp_opt baseline_opts[] = {
    {"ACTION", 0, FP_OPT_POSITIONAL, offsetof(baseline_cfg, action), NULL,
     "build (baselines from the store's runs), update (fold --run into the stored baselines "
     "without reading the runs before it) or export-reference (a reference catalog entry from "
     "the baselines of --sku)"},
    {"store", 0, FP_OPT_STRING, offsetof(baseline_cfg, store), NULL, "the store file (HDF5)"},
    {"tag", 0, FP_OPT_STRING, offsetof(baseline_cfg, tag), NULL,
     "only runs with this tag (update: the tag the baselines must have been built for)"},
    {"last", 0, FP_OPT_INT, offsetof(baseline_cfg, last), NULL,
     "only the newest N runs (update: the N the baselines must have been built with)"},
    {"since", 0, FP_OPT_STRING, offsetof(baseline_cfg, since), NULL,
     "only runs started at or after DATE (YYYY-MM-DD[THH:MM[:SS]], UTC)"},
    {"reject", 0, FP_OPT_DOUBLE, offsetof(baseline_cfg, reject), "3.5",
     "drop values more than K robust sigmas (1.4826 MAD) from the median; 0 keeps all"},
    {"lock-timeout", 0, FP_OPT_SECONDS, offsetof(baseline_cfg, lock_timeout), "60s",
     "how long to wait for another writer's lock"},
    {"sku", 0, FP_OPT_STRING, offsetof(baseline_cfg, sku), NULL,
     "export-reference: the device model (SKU) whose baselines become the catalog entry"},
    {"out", 'o', FP_OPT_STRING, offsetof(baseline_cfg, out), "-",
     "export-reference: write the catalog to FILE ('-': stdout)"},
    {"run", 0, FP_OPT_STRING, offsetof(baseline_cfg, run), "latest",
     "update: the run to fold in (ID, or latest: the newest of the baselines' tag)"},
    {0},
};

/* baseline export-reference: the SKU baselines of c->sku as a catalog entry. */
static fp_status export_reference(const baseline_cfg *c)
{
    fp_status st = FP_OK;
    fp_store *s = NULL;
    fp_baselines *b = NULL;
    fp_rules *rules = NULL;
    char *text = NULL, err[512];
    if (!c->store || !c->sku)
        FP_FAIL(FP_EUSAGE, "baseline export-reference: needs --store FILE and --sku MODEL");
    FP_CHECK(fp_store_open(&s, c->store, FP_STORE_READ, 0));
    FP_CHECK(fp_store_load_baselines(s, &b));
    if (fp_rules_load(NULL, &rules, err, sizeof err) != FP_OK)
        FP_FAIL(FP_EINTERNAL, "%s", err);
    if ((st = fp_references_from_baselines(b, rules, c->sku, c->store, &text, err, sizeof err)) !=
        FP_OK) {
        fp_error("%s", err);
        goto cleanup;
    }
    FILE *f = fp_outfile_open(c->out, &st);
    if (!f)
        goto cleanup;
    bool ok = fprintf(f, "%s\n", text) > 0;
    FP_CHECK(fp_outfile_close(f, c->out, ok));
    if (strcmp(c->out, "-") != 0)
        fp_info("baseline export-reference: %s's figures from %s written to %s", c->sku, c->store,
                c->out);
cleanup:
    free(text);
    fp_rules_free(rules);
    fp_baselines_free(b);
    fp_store_close(s);
    return st;
}

/* baseline update: c->run folded into the stored baselines. Exit 2 with one
 * line telling to run baseline build where the store has no update state. */
static fp_status update(const baseline_cfg *c)
{
    fp_status st = FP_OK;
    fp_store *s = NULL;
    if (!c->store)
        FP_FAIL(FP_EUSAGE, "baseline update: which store? (--store FILE)");
    if (c->last < 0)
        FP_FAIL(FP_EUSAGE, "baseline update: --last must be positive, not %d", c->last);
    if (c->since)
        FP_FAIL(FP_EUSAGE, "baseline update: --since is the build's; an update keeps the "
                           "baselines' own selection");
    FP_CHECK(fp_store_open(&s, c->store, FP_STORE_APPEND, c->lock_timeout));
    fp_baseline_update_opts o = {.run = c->run, .tag = c->tag, .last = c->last};
    fp_baseline_summary sum = {0};
    FP_CHECK(fp_store_update_baselines(s, &o, &sum));
    if (sum.runs_added)
        fp_info("baselines updated: %zu run%s folded in, %zu dropped past --last, %zu in all: "
                "%zu per (metric, entity), %zu per (metric, SKU), %llu values rejected as "
                "outliers", sum.runs_added, sum.runs_added == 1 ? "" : "s", sum.runs_dropped,
                sum.runs_used, sum.entity_rows, sum.sku_rows,
                (unsigned long long)sum.values_rejected);
cleanup:
    fp_store_close(s);
    return st;
}

static fp_status baseline_run(const void *config, fp_world *world)
{
    const baseline_cfg *c = config;
    fp_status st = FP_OK;
    fp_store *s = NULL;
    fp_baseline_opts o = {.tag = c->tag, .last = c->last, .reject = c->reject};
    if (!c->action)
        FP_FAIL(FP_EUSAGE, "baseline: which action? (actions: build, update, export-reference; "
                           "usage: fleetprint baseline build --store FILE)");
    if (strcmp(c->action, "export-reference") == 0)
        return export_reference(c);
    if (strcmp(c->action, "update") == 0)
        return update(c);
    if (strcmp(c->action, "build") != 0)
        FP_FAIL(FP_EUSAGE, "baseline: unknown action '%s' (actions: build, update, "
                           "export-reference)", c->action);
    if (!c->store)
        FP_FAIL(FP_EUSAGE, "baseline build: which store? (--store FILE)");
    if (c->last < 0)
        FP_FAIL(FP_EUSAGE, "baseline build: --last must be positive, not %d", c->last);
    if (c->last && c->since)
        FP_FAIL(FP_EUSAGE, "baseline build: give --last or --since, not both");
    if (c->since && !fp_store_parse_date(c->since, &o.since))
        FP_FAIL(FP_EUSAGE, "baseline build: --since '%s' is not a date (YYYY-MM-DD[THH:MM[:SS]])",
                c->since);
    if (!(c->reject >= 0))
        FP_FAIL(FP_EUSAGE, "baseline build: --reject must be >= 0");
    FP_CHECK(fp_store_open(&s, c->store, FP_STORE_APPEND, c->lock_timeout));
    fp_baseline_summary sum;
    FP_CHECK(fp_store_build_baselines(s, &o, &sum));
    fp_info("baselines from %zu run%s (%zu skipped: incomplete, fault-injected or emulated): %zu per "
            "(metric, entity), %zu per (metric, SKU), %llu values rejected as outliers",
            sum.runs_used, sum.runs_used == 1 ? "" : "s", sum.runs_skipped, sum.entity_rows,
            sum.sku_rows, (unsigned long long)sum.values_rejected);
cleanup:
    fp_store_close(s);
    return st;
}

const fp_command fp_cmd_baseline = {
    .name = "baseline",
    .summary = "build robust baselines (per entity and per SKU) from stored runs, or update them",
    .opts = baseline_opts,
    .config_size = sizeof(baseline_cfg),
    .needs_world = false,
    .run = baseline_run,
};
