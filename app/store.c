/* fleetprint store ls|check|show|export|ingest|rm|compact|history: look after the runs
 * of a store, and move them in and out as JSON Lines (docs/store.md). The actions are
 * fp_store_run_action (fingerprint/store_actions.c); store history, which
 * reads the rules' repeat-offender test, is here. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fleetprint/detect.h"
#include "fleetprint/history.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/store.h"

typedef struct store_cfg {
    fp_store_action a; /* what fingerprint/ does */
    int last;          /* history: only the newest N judged runs */
    const char *rules; /* history: the rules' k and n */
} store_cfg;

static const fp_opt store_opts[] = {
    {"ACTION", 0, FP_OPT_POSITIONAL, offsetof(store_cfg, a.action), NULL,
     "ls | check | show | export | ingest | rm | compact | history"},
    {"ARG", 0, FP_OPT_POSITIONAL, offsetof(store_cfg, a.arg), NULL,
     "run id, 'latest' or 'all' (show, export), JSONL file or - (ingest), ids a,b (rm), "
     "ENTITY (history: node:n3, gpu:n3/1, link:n2~n6 or a node name)"},
    {"before", 0, FP_OPT_STRING, offsetof(store_cfg, a.before), NULL,
     "rm: every run started before DATE (YYYY-MM-DD[THH:MM[:SS]], UTC)"},
    {"target-size", 0, FP_OPT_BYTES, offsetof(store_cfg, a.target), "1G",
     "compact: merge partition files smaller than this into files of about this size"},
    {"store", 0, FP_OPT_STRING, offsetof(store_cfg, a.store), NULL, "the store file (HDF5)"},
    {"tag", 0, FP_OPT_STRING, offsetof(store_cfg, a.tag), NULL,
     "ls/export/show latest/history: only runs with this tag; ingest: tag for runs without "
     "one"},
    {"last", 0, FP_OPT_INT, offsetof(store_cfg, last), NULL,
     "history: only the newest N judged runs"},
    {"rules", 'r', FP_OPT_STRING, offsetof(store_cfg, rules), NULL,
     "history: the rules file whose \"history\" k of n says who is a repeat offender"},
    {"out", 'o', FP_OPT_STRING, offsetof(store_cfg, a.out), "-",
     "export: output file, - for stdout"},
    {"baselines", 0, FP_OPT_FLAG, offsetof(store_cfg, a.baselines), NULL,
     "show/export: the baselines too"},
    {"lock-timeout", 0, FP_OPT_SECONDS, offsetof(store_cfg, a.lock_timeout), "60s",
     "how long a writer waits for another writer's lock"},
    {0},
};

/* ENTITY of store history in canonical text into buf: node:n3, gpu:n3/1,
 * link:n2~n6, or a bare node name. False when it is none of them. */
static bool entity_text(const char *arg, char *buf, size_t len)
{
    fp_entity e;
    if (strchr(arg, ':')) {
        /* history follows hardware: a rank's verdict is its node's */
        if (!fp_entity_parse(arg, &e) || e.kind == FP_ENT_GROUP || e.kind == FP_ENT_RANK)
            return false;
    } else if (fp_node_name_ok(arg)) {
        e = fp_entity_node(arg);
    } else {
        return false;
    }
    fp_entity_format(&e, buf, len);
    return true;
}

/* fleetprint store history ENTITY: the entity's verdicts over the stored runs
 * that judged it, oldest first, and whether it is a repeat offender now. */
static fp_status store_history(const store_cfg *c)
{
    fp_status st = FP_OK;
    fp_rules *rules = NULL;
    fp_store *s = NULL;
    fp_history *h = NULL;
    fp_history_entry *list = NULL;
    char ent[2 * FP_NAME_MAX + 32], err[512];
    if (!c->a.arg || !entity_text(c->a.arg, ent, sizeof ent))
        FP_FAIL(FP_EUSAGE, "store history: '%s' is not a node, device or link (node:n3, gpu:n3/1, "
                           "link:n2~n6, or a node name)", c->a.arg ? c->a.arg : "");
    if (c->last < 0)
        FP_FAIL(FP_EUSAGE, "store history: --last %d: expected N >= 0", c->last);
    if (fp_rules_load(c->rules, &rules, err, sizeof err) != FP_OK)
        FP_FAIL(FP_EINPUT, "%s", err);
    fp_history_rule hr = fp_rules_history(rules);
    const char *tag = c->a.tag && c->a.tag[0] ? c->a.tag : hr.tag[0] ? hr.tag : NULL;
    FP_CHECK(fp_store_open(&s, c->a.store, FP_STORE_READ, 0));
    fp_history_opts o = {.tag = tag};
    FP_CHECK(fp_store_load_history(s, &o, &h));
    size_t n = fp_history_of(h, ent, NULL, 0);
    list = calloc(n ? n : 1, sizeof *list);
    FP_CHECK_ALLOC(list);
    fp_history_of(h, ent, list, n);
    fp_history_listing l = {.entity = ent, .store = c->a.store, .tag = tag, .entries = list,
                            .n = n, .last = c->last, .k = hr.k, .nrule = hr.n};
    l.offender = fp_history_offender(h, ent, hr.k, hr.n, NULL);
    fp_history_count(h, ent, hr.n, &l.now);
    fp_report_history(stdout, &l);
cleanup:
    free(list);
    fp_history_free(h);
    fp_store_close(s);
    fp_rules_free(rules);
    return st;
}

static fp_status store_run(const void *config, fp_world *world)
{
    const store_cfg *c = config;
    (void)world;
    if (c->a.action && strcmp(c->a.action, "history") == 0)
        return store_history(c);
    return fp_store_run_action(&c->a);
}

const fp_command fp_cmd_store = {
    .name = "store",
    .summary = "list, check, show, export, ingest (JSON Lines), remove and compact stored runs; "
               "an entity's verdicts over time (history)",
    .opts = store_opts,
    .config_size = sizeof(store_cfg),
    .needs_world = false,
    .run = store_run,
};
