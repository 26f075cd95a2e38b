/* fleetprint isolate: find the node (or link) that makes a whole-group
 * collective slow, wrong or hang, in rounds of groups that each run the
 * check on a communicator of their own (docs/isolate.md); and the isolation
 * that preflight --isolate runs when its collectives fail without a culprit.
 * Exit 0 nothing named, 1 named (the drain file lists the nodes), 4 a rank
 * hangs (named, outputs written, every other rank finished; the job ends by
 * abort). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "fleetprint/isolate.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/store.h"
#include "fleetprint/timer.h"

/* ==== the isolation ================================================================== */

/* What each rank tells the others at the start: where it runs, for the run
 * context and for telling whether ranks share cores. */
typedef struct rank_start {
    fp_rank_info info;
    fp_app_host where;
    int rules_ok;       /* rank 0: the rules loaded */
    double peer_fail;   /* rank 0: the collective class's fail fraction; contended next */
    double peer_fail_contended;
} rank_start;

/* The check's collective by name. */
static bool coll_parse(const char *name, fp_coll *out)
{
    static const fp_coll ok[] = {FP_ALLREDUCE, FP_ALLGATHER, FP_REDUCE_SCATTER, FP_ALLTOALL};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(name, fp_coll_name(ok[i])) == 0) {
            *out = ok[i];
            return true;
        }
    return false;
}

static fp_status isolate_check(const isolate_opts *io, bool speak, const char *cmd)
{
    fp_iso_strategy s;
    fp_coll c;
    const char *bad = !fp_iso_strategy_parse(io->strategy, &s) ? "--strategy"
                      : !coll_parse(io->collective, &c)      ? "--collective"
                      : !(io->window > 0)                     ? "--window"
                      : !(io->warm >= 0)                      ? "--warm-window"
                      : io->max_rounds < 2 || io->max_rounds > 999 ? "--max-rounds"
                                                                  : NULL;
    if (bad && speak)
        fprintf(stderr, "fleetprint %s: %s: expected %s\n", cmd, bad,
                strcmp(bad, "--strategy") == 0     ? "grid, bisect or auto"
                : strcmp(bad, "--collective") == 0 ? "allreduce, allgather, reduce_scatter or "
                                                     "alltoall"
                : strcmp(bad, "--max-rounds") == 0 ? "2 to 999"
                                                   : "a time above 0");
    return bad ? FP_EUSAGE : FP_OK;
}

/* One reason per finding: hung as preflight's timeout says it, wrong by the
 * wrong-results value rule, slow by the collective class against the other
 * groups of the confirming round. */
static fp_named named_of(const fp_iso_plan *p, const fp_iso_finding *f, const fp_run *run,
                         const fp_iso_config *cfg, const char *rule)
{
    fp_named nm;
    memset(&nm, 0, sizeof nm);
    nm.entity = f->link ? fp_entity_link(run->nodes[f->unit], -1, run->nodes[f->peer], -1)
                        : fp_entity_node(run->nodes[f->unit]);
    fp_reason *r = &nm.reason;
    const fp_iso_round *round = fp_iso_plan_round(p, f->confirmed - 1);
    const fp_iso_group *g = &round->groups[f->group];
    r->verdict = FP_FAIL;
    r->value = r->expected = r->band = r->deviation = r->z = NAN;
    r->windows = r->windows_bad = 1;
    const char *what = fp_coll_name(cfg->coll);
    char how[64];
    if (f->link)
        snprintf(how, sizeof how, "passes apart, fails together in round %d", f->confirmed);
    else
        snprintf(how, sizeof how, "named after round %d, confirmed in round %d", f->named,
                 f->confirmed);
    switch (f->outcome) {
    case FP_ISO_HUNG:
        snprintf(r->key, sizeof r->key, "isolate.%s.completion", what);
        snprintf(r->rule, sizeof r->rule, "hung");
        r->evidence = FP_EV_MISSING;
        snprintf(r->note, sizeof r->note, "hung: never completed the %s check; %s", what, how);
        break;
    case FP_ISO_WRONG:
        snprintf(r->key, sizeof r->key, "isolate.%s.wrong@%llu", what,
                 (unsigned long long)cfg->bytes);
        snprintf(r->unit, sizeof r->unit, "count");
        snprintf(r->rule, sizeof r->rule, "wrong-results");
        r->evidence = FP_EV_VALUE;
        r->value = (double)g->wrong;
        r->expected = 0;
        snprintf(r->note, sizeof r->note, "wrong elements in its groups; %s", how);
        break;
    default:
        snprintf(r->key, sizeof r->key, "isolate.%s.busbw@%llu", what,
                 (unsigned long long)cfg->bytes);
        snprintf(r->unit, sizeof r->unit, "GB/s");
        snprintf(r->rule, sizeof r->rule, "%s", rule);
        r->evidence = FP_EV_PEERS;
        r->value = g->busbw;
        r->expected = g->expected;
        r->deviation = g->expected > 0 ? 1 - g->busbw / g->expected : NAN;
        r->ref_windows = round->ngroups - 1;
        snprintf(r->note, sizeof r->note, "slow beside the other groups of each round; %s", how);
        break;
    }
    return nm;
}

/* The run of an isolation on the writer: the world's nodes and ranks, the
 * context, and the samples: per group of every round its busbw and time
 * (isolate.isolation_group.*, iter = round), and the rounds and seconds it
 * took (isolate.isolation.*). */
static fp_status build_run(const fp_ctx *ctx, const fp_iso_plan *p, const fp_iso_config *cfg,
                           const rank_start *all, const char *tag, fp_run *run)
{
    fp_status st = FP_OK;
    const fp_world *w = ctx->world;
    FP_CHECK(fp_run_set_shape(run, fp_world_nnodes(w), fp_world_size(w)));
    for (int k = 0; k < fp_world_nnodes(w); k++)
        snprintf(run->nodes[k], FP_NAME_MAX, "%s", fp_world_node_name(w, k));
    for (int r = 0; r < fp_world_size(w); r++) {
        run->ranks[r] = all[r].info;
        run->ranks[r].node = fp_world_node_of(w, r);
        run->ranks[r].clock_offset = fp_world_clock_offset(w, r);
        run->ranks[r].clock_error = fp_world_clock_error(w, r);
    }
    fp_ctx_describe_run(ctx, tag, run);
    static const fp_metric busbw = {"busbw", "GB/s", FP_BETTER_HIGHER};
    static const fp_metric time = {"time", "us", FP_BETTER_LOWER};
    for (int i = 0; i < fp_iso_plan_rounds(p); i++) {
        const fp_iso_round *r = fp_iso_plan_round(p, i);
        for (int g = 0; g < r->ngroups; g++) {
            const fp_iso_group *x = &r->groups[g];
            if (!isfinite(x->busbw))
                continue; /* hung: nothing measured */
            char name[FP_NAME_MAX];
            snprintf(name, sizeof name, "r%d-%s%d", r->index, fp_iso_role_name(x->role), g);
            fp_entity e = fp_entity_group(name);
            fp_sample s;
            fp_sample_make(&s, "isolate", "isolation_group", &busbw, &e, cfg->bytes, r->index,
                           x->busbw, r->started);
            FP_CHECK(fp_run_add(run, &s));
            fp_sample_make(&s, "isolate", "isolation_group", &time, &e, cfg->bytes, r->index,
                           x->seconds * 1e6, r->started);
            FP_CHECK(fp_run_add(run, &s));
        }
    }
    const fp_iso_finding *f;
    int named = fp_iso_plan_named_round(p), rounds = fp_iso_plan_rounds(p);
    const fp_metric m[] = {{"rounds", "count", FP_BETTER_LOWER},
                           {"rounds_total", "count", FP_BETTER_LOWER},
                           {"seconds", "s", FP_BETTER_LOWER},
                           {"seconds_total", "s", FP_BETTER_LOWER},
                           {"culprits", "count", FP_BETTER_LOWER}};
    const double v[] = {named, rounds, fp_iso_plan_seconds(p, named),
                        fp_iso_plan_seconds(p, rounds),
                        (double)fp_iso_plan_findings(p, &f)};
    fp_entity e = fp_entity_group("isolation");
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        fp_sample s;
        fp_sample_make(&s, "isolate", "isolation", &m[i], &e, cfg->bytes, -1, v[i],
                       fp_world_now(w));
        FP_CHECK(fp_run_add(run, &s));
    }
    run->duration = fp_world_now(w);
cleanup:
    return st;
}

/* The writer's part: the run, the round table, the named verdicts and every
 * output; the status the job ends with (before the hang is counted). */
static fp_status write_all(const fp_ctx *ctx, const fp_iso_plan *p, const fp_iso_config *cfg,
                           const rank_start *all, const isolate_opts *io,
                           const measure_out *mo, const detect_out *o, const char *note)
{
    fp_status st = FP_OK;
    fp_run run;
    fp_run_init(&run);
    fp_verdicts *v = NULL;
    fp_named *named = NULL;
    const char *strategy = fp_iso_strategy_name(cfg->strategy);
    FP_CHECK(build_run(ctx, p, cfg, all, mo->tag, &run));
    snprintf(run.contended, sizeof run.contended, "%s", note ? note : "");
    snprintf(run.status, sizeof run.status, "%s", fp_isolate_any_hung(p) ? "timeout" : "complete");
    const fp_iso_finding *f;
    size_t n = fp_iso_plan_findings(p, &f);
    named = calloc(n ? n : 1, sizeof *named);
    FP_CHECK_ALLOC(named);
    for (size_t i = 0; i < n; i++)
        named[i] = named_of(p, &f[i], &run, cfg, "collective");
    FP_CHECK(fp_verdicts_named(&run, named, n, &v));
    if (!o->quiet) {
        fp_report_isolate_console(stdout, p, &run, strategy);
        fp_verdicts_print(stdout, v, &run);
    }
    if (o->explain)
        st = fp_verdicts_explain(stdout, v, o->explain);
    fflush(stdout);
    if (io->rounds_json)
        st = fp_status_worst(st, fp_report_isolate_json(p, &run, strategy, io->rounds_json));
    if (io->run_json)
        st = fp_status_worst(st, fp_report_json(&run, io->run_json));
    st = fp_status_worst(st, fp_app_write_outputs(&run, v, o));
    if (mo->store)
        st = fp_status_worst(st, fp_store_append_file(mo->store, &run, cfg->timeout));
    if (st == FP_OK)
        st = fp_verdicts_status(v);
cleanup:
    fp_verdicts_free(v);
    free(named);
    fp_run_free(&run);
    return st;
}

fp_status fp_app_isolate(const fp_config *rt, const isolate_opts *io, const measure_out *mo,
                         const detect_out *o, fp_world *w)
{
    fp_status st = FP_OK;
    fp_inject_set inject;
    fp_run local;
    fp_ctx ctx;
    fp_rules *rules = NULL;
    fp_iso_plan *p = NULL;
    rank_start mine, *all = NULL;
    bool hung = false;
    fp_run_init(&local);
    memset(&ctx, 0, sizeof ctx);
    memset(&mine, 0, sizeof mine);
    int rank = fp_world_rank(w), size = fp_world_size(w);
    if (rank == 0) {
        mine.rules_ok = fp_app_load_rules(o->rules, &rules) == FP_OK;
        if (rules) {
            char key[96];
            snprintf(key, sizeof key, "collectives.%s.busbw_f32_sum_oop", io->collective);
            mine.peer_fail = fp_rules_peer_fail(rules, key, false);
            mine.peer_fail_contended = fp_rules_peer_fail(rules, key, true);
        }
    }
    st = fp_ctx_open(&ctx, rt, w, &inject, &local);
    all = calloc((size_t)size, sizeof *all);
    if (st == FP_OK && !all)
        st = FP_ENOMEM;
    st = fp_world_agree(w, st);
    FP_CHECK(st);
    mine.info.local_rank = fp_world_local_rank(w);
    mine.info.dev = ctx.dev_ops == &fp_device_host ? -1 : ctx.dev_info.index;
    snprintf(mine.info.model, sizeof mine.info.model, "%s", ctx.dev_info.model);
    snprintf(mine.info.uuid, sizeof mine.info.uuid, "%s", ctx.dev_info.uuid);
    snprintf(mine.info.pci_bus, sizeof mine.info.pci_bus, "%s", ctx.dev_info.pci_bus);
    fp_app_host_of(rt, w, &mine.where);
    FP_CHECK(fp_world_allgather(w, &mine, all, (int)sizeof mine, "isolate: start"));
    if (!all[0].rules_ok) { /* rank 0 said why */
        st = FP_EINPUT;
        goto cleanup;
    }
    char note[112] = "";
    fp_app_host *hosts = malloc((size_t)size * sizeof *hosts);
    FP_CHECK_ALLOC(hosts);
    for (int r = 0; r < size; r++)
        hosts[r] = all[r].where;
    bool shared = fp_app_contended(hosts, size, note, sizeof note);
    free(hosts);
    double fail = shared ? all[0].peer_fail_contended : all[0].peer_fail;
    if (!isfinite(fail))
        fail = shared ? 0.6 : 0.2; /* no relative class judges collectives: the defaults' */
    fp_iso_config cfg = {.slow_limit = io->results_only ? 0 : 1 - fail,
                         .max_rounds = io->max_rounds, .bytes = io->bytes, .warm = io->warm,
                         .window = io->window, .timeout = rt->timeout};
    fp_iso_strategy_parse(io->strategy, &cfg.strategy);
    coll_parse(io->collective, &cfg.coll);
    if (cfg.bytes == 0) /* 64 MiB where devices have memory of their own, else 1 MiB */
        cfg.bytes = ctx.comm_ops->device_buffers ? 64ull << 20 : 1ull << 20;
    if (rank == 0 && io->results_only)
        fp_info("isolate: %s of %llu B over %d nodes, strategy %s; wrong results and hangs "
                "only (the job's check returned wrong results): no group is judged slow",
                fp_coll_name(cfg.coll), (unsigned long long)cfg.bytes, fp_world_nnodes(w),
                io->strategy);
    else if (rank == 0)
        fp_info("isolate: %s of %llu B over %d nodes, strategy %s; a group is slow below "
                "%.2fx its round's other groups (%s)", fp_coll_name(cfg.coll),
                (unsigned long long)cfg.bytes, fp_world_nnodes(w), io->strategy, cfg.slow_limit,
                shared ? note : "the collective class's peer rule");
    double t0 = fp_clock();
    FP_CHECK(fp_isolate_run(&ctx, &cfg, &p));
    hung = fp_isolate_any_hung(p);
    int writer = fp_isolate_writer(p, w);
    fp_status verdict = FP_OK;
    if (rank == writer)
        verdict = write_all(&ctx, p, &cfg, all, io, mo, o, shared ? note : NULL);
    int finished = 0, expected = 0;
    st = fp_isolate_finish(&ctx, p, hung ? FP_ETIMEOUT : verdict, cfg.timeout, &finished,
                           &expected);
    if (rank == writer && hung)
        fp_error("isolate: %d of %d ranks off the hung nodes finished in %.1f s; the hung ranks "
                 "never return: the job ends with exit 4", finished + 1, expected + 1,
                 fp_clock() - t0);
    else if (rank == writer)
        fp_info("isolate: %d of %d ranks finished in %.1f s", finished + 1, expected + 1,
                fp_clock() - t0);
cleanup:
    /* a hung rank may hold the world's communicators: the job ends by abort */
    if (!hung)
        fp_ctx_close(&ctx);
    fp_iso_plan_free(p);
    fp_rules_free(rules);
    fp_run_free(&local);
    free(all);
    return st;
}

/* ==== preflight --isolate ================================================================ */

bool fp_app_isolate_wanted(const fp_run *run, const fp_rules *rules, const fp_baselines *base,
                           const char *contended_note, char *why, size_t len, bool *wrong)
{
    fp_verdicts *v = NULL;
    fp_detect_opts d = {.rules = rules, .baselines = base, .contended = contended_note != NULL,
                        .contended_note = contended_note};
    why[0] = 0;
    *wrong = false;
    if (fp_detect(run, &d, &v) != FP_OK)
        return false;
    /* a collective of the whole job failed: a failing reason on its keys,
     * wrong results first (the most telling) */
    const char *key = NULL;
    for (int pass = 0; pass < 2 && !key; pass++)
        for (size_t i = 0; i < fp_verdicts_count(v) && !key; i++) {
            const fp_entity_verdict *ev = fp_verdicts_get(v, i);
            for (size_t k = 0; k < ev->nreasons && !key; k++) {
                const fp_reason *r = fp_verdicts_reason(v, ev->first_reason + k);
                if (r->verdict == FP_FAIL && strncmp(r->key, "collectives.", 12) == 0 &&
                    strncmp(r->key, "collectives.links.", 18) != 0 &&
                    (pass == 1 || strstr(r->key, "wrong")))
                    key = r->key;
            }
        }
    const char *const *names;
    size_t nfail = fp_verdicts_nodes_at(v, FP_FAIL, &names), nodes = fp_verdicts_node_count(v);
    /* without a culprit: no node fails, or more than half do (the failure
     * spread over the job, not one node standing out) */
    if (key && (nfail == 0 || 2 * nfail > nodes)) {
        snprintf(why, len, "%.96s fails with %zu of %zu nodes failing: no culprit named", key,
                 nfail, nodes);
        *wrong = strstr(key, "wrong") != NULL;
    }
    fp_verdicts_free(v);
    return why[0] != 0;
}

fp_status fp_app_isolate_after(const char *strategy, const fp_config *rt, const measure_out *mo,
                               const detect_out *o, fp_world *w, fp_status st, const char *why,
                               bool wrong)
{
    if (st == FP_ETIMEOUT || !strategy)
        return st; /* a hung rank is named already, and cannot take part */
    /* rank 0's: 1 isolate, 2 its results were wrong */
    int want = fp_world_rank(w) == 0 && why && why[0] ? 1 | (wrong ? 2 : 0) : 0, *all = NULL;
    all = calloc((size_t)fp_world_size(w), sizeof *all);
    if (!all)
        return FP_ENOMEM;
    fp_status got = fp_world_allgather(w, &want, all, (int)sizeof want, "preflight --isolate");
    want = all[0];
    free(all);
    if (got != FP_OK)
        return got;
    if (!want)
        return st;
    if (fp_world_rank(w) == 0)
        fp_warn("preflight: %s: isolating in rounds (--isolate %s); its outputs replace "
                "preflight's", why, strategy);
    isolate_opts io = {.strategy = strategy, .collective = "allreduce", .warm = 0.5,
                       .window = 1.0, .max_rounds = 32, .results_only = (want & 2) != 0};
    measure_out imo = {.tag = "isolate", .store = mo->store};
    return fp_app_isolate(rt, &io, &imo, o, w);
}

fp_status fp_app_isolate_check(const char *strategy, bool speak)
{
    fp_iso_strategy s;
    if (!strategy || fp_iso_strategy_parse(strategy, &s))
        return FP_OK;
    if (speak)
        fprintf(stderr, "fleetprint preflight: --isolate '%s': expected grid, bisect or auto\n",
                strategy);
    return FP_EUSAGE;
}

/* ==== fleetprint isolate ================================================================= */

typedef struct isolate_cfg {
    fp_config base;
    isolate_opts iso;
    measure_out run;
    detect_out out;
} isolate_cfg;

#define IC(field) offsetof(isolate_cfg, base.field)
#define IO(field) offsetof(isolate_cfg, iso.field)
static const fp_opt isolate_opts_table[] = {
    {"strategy", 0, FP_OPT_STRING, IO(strategy), "auto",
     "grid (rows, then columns), bisect (halves, cross-boundary probes) or auto (rows; "
     "columns for one fault, bisect for several)"},
    {"collective", 0, FP_OPT_STRING, IO(collective), "allreduce",
     "the check every group runs: allreduce, allgather, reduce_scatter or alltoall"},
    {"size", 0, FP_OPT_BYTES, IO(bytes), "0",
     "the check's size (0: 64M where devices have their own memory, else 1M)"},
    {"window", 0, FP_OPT_SECONDS, IO(window), "1s",
     "time the check's calls for this long in each round (every group the same moments)"},
    {"warm-window", 0, FP_OPT_SECONDS, IO(warm), "0.5s",
     "warm-up calls for this long before the window"},
    {"max-rounds", 0, FP_OPT_INT, IO(max_rounds), "32", "stop after this many rounds"},
    FP_OPTS_BACKENDS(isolate_cfg, base),
    {"timeout", 0, FP_OPT_SECONDS, IC(timeout), "30s",
     "each round's deadline: a group not done by then is hung and abandoned"},
    {"inject", 0, FP_OPT_LIST, IC(inject), NULL, "inject a fault (repeatable; see README)"},
    {"tag", 0, FP_OPT_STRING, offsetof(isolate_cfg, run.tag), "isolate", "tag of the run"},
    {"store", 0, FP_OPT_STRING, offsetof(isolate_cfg, run.store), NULL,
     "append the run (rounds, time to isolate, per-group busbw) to this HDF5 store"},
    FP_DETECT_OUT_OPTS(isolate_cfg, out),
    {"rounds-json", 0, FP_OPT_STRING, IO(rounds_json), NULL,
     "write the round table and the findings as JSON to FILE"},
    {"run-json", 0, FP_OPT_STRING, IO(run_json), NULL,
     "also write the run's samples as JSON to FILE"},
    FP_OPTS_LOGGING(isolate_cfg, base),
    {0},
};
#undef IC
#undef IO

static fp_status isolate_check_cfg(const void *config, bool speak)
{
    return isolate_check(&((const isolate_cfg *)config)->iso, speak, "isolate");
}

static fp_status isolate_main(const void *config, fp_world *w)
{
    const isolate_cfg *c = config;
    detect_out out = c->out;
    out.quiet = out.quiet || c->base.quiet;
    out.command = "isolate";
    return fp_app_isolate(&c->base, &c->iso, &c->run, &out, w);
}

const fp_command fp_cmd_isolate = {
    .name = "isolate",
    .summary = "find the node or link behind a failing collective in rounds of groups",
    .opts = isolate_opts_table,
    .config_size = sizeof(isolate_cfg),
    .needs_world = true,
    .run = isolate_main,
    .check = isolate_check_cfg,
};
