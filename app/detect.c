/* fleetprint detect: verdicts for a stored run or a run file (read by
 * fingerprint/runfile.c); the detection and outputs that report and preflight
 * share. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "fleetprint/detect.h"
#include "fleetprint/hostlist.h"
#include "fleetprint/jsonl.h"
#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "fleetprint/report.h"
#include "fleetprint/store.h"
#include "fleetprint/timer.h"

/* ==== shared: rules, baselines, outputs ============================================ */

fp_status fp_app_write_outputs(const fp_run *run, const fp_verdicts *v, const detect_out *o)
{
    fp_status st = FP_OK;
    if (o->json)
        st = fp_status_worst(st, fp_verdicts_write_json(v, run, o->json));
    if (o->drain)
        st = fp_status_worst(st, fp_verdicts_write_hostlist(v, o->drain));
    if (o->exclude)
        st = fp_status_worst(st, fp_verdicts_write_hostlist(v, o->exclude));
    if (o->junit)
        st = fp_status_worst(st, fp_verdicts_write_junit(v, run, o->junit));
    if (o->html)
        st = fp_status_worst(st, fp_report_html(run, v, o->html));
    if (o->prometheus && fp_prometheus_is_dir(o->prometheus))
        st = fp_status_worst(st, fp_report_prometheus_dir(run, v, o->command, o->prometheus));
    else if (o->prometheus)
        st = fp_status_worst(st, fp_report_prometheus(run, v, o->command, o->prometheus));
    if (o->prometheus_local)
        st = fp_status_worst(st, fp_app_prom_local_render(run, v, o));
    const char *const *names;
    size_t nfail = fp_verdicts_nodes_at(v, FP_FAIL, &names);
    char line[256];
    if (fp_verdicts_breaker(v)->tripped)
        fp_error("%s", fp_breaker_text(fp_verdicts_breaker(v), line, sizeof line));
    else if (fp_verdicts_overall(v) == FP_FAIL) {
        char *expr = fp_hostlist_compress(names, nfail);
        fp_error("detect: FAIL -- %zu failing node%s%s%s", nfail, nfail == 1 ? "" : "s",
                 nfail ? ": " : " (a link or group fails; see above)", expr ? expr : "");
        free(expr);
    }
    return st;
}

typedef struct json_job {
    const fp_verdicts *v;
    const fp_run *run;
    const char *path;
    pthread_t thread;
    bool running;
    fp_status st;
} json_job;

static void *json_main(void *arg)
{
    json_job *j = arg;
    j->st = fp_verdicts_write_json(j->v, j->run, j->path);
    return NULL;
}

/* Detect on run with optional baselines, print, write the outputs. Returns
 * FP_EFAIL when something failed, FP_OK when all passed, or an error. */
fp_status fp_app_detect_and_report(const fp_run *run, const fp_rules *rules,
                                   const fp_baselines *base, const detect_out *o,
                                   const char *contended)
{
    fp_verdicts *v = NULL;
    fp_references *refs = NULL;
    char err[512];
    if (!contended && run->contended[0])
        contended = run->contended;
    fp_status st = fp_references_load(o->references, &refs, err, sizeof err);
    if (st != FP_OK) {
        fp_error("%s", err);
        return st;
    }
    fp_detect_opts d = {.rules = rules, .baselines = base, .contended = contended != NULL,
                        .contended_note = contended, .explain = o->explain,
                        .max_drain = o->max_drain, .references = refs, .previous = o->previous,
                        .history = o->history, .prepared = o->prepared};
    double t0 = fp_clock();
    st = fp_detect(run, &d, &v);
    if (st == FP_OK && o->retest_args)
        st = fp_app_write_retest_args(run, v, rules, o->retest_args);
    if (st == FP_OK && o->confirm) /* only what fails again fails */
        st = fp_app_confirm_apply(&d, o->confirm, &v);
    fp_references_free(refs);
    if (st != FP_OK) {
        fp_verdicts_free(v);
        return st;
    }
    double secs = fp_clock() - t0;
    /* the verdict JSON (30 MB at 100,000 nodes x 8) is written on a thread
     * of its own while the table is printed */
    json_job jj = {.v = v, .run = run, .path = o->json, .st = FP_OK};
    detect_out rest = *o;
    if (o->json && !o->quiet && pthread_create(&jj.thread, NULL, json_main, &jj) == 0) {
        jj.running = true;
        rest.json = NULL;
    }
    if (!o->quiet)
        fp_verdicts_print(stdout, v, run);
    if (o->explain)
        st = fp_verdicts_explain(stdout, v, o->explain);
    if (jj.running)
        pthread_join(jj.thread, NULL);
    st = fp_status_worst(st, jj.st);
    fp_info("detect: %zu samples, %zu entities in %.3f s (%s evidence%s%s)", run->nsamples,
            fp_verdicts_count(v), secs, base ? "peer, drift and fleet" : "peer",
            contended ? "; contended thresholds: " : "", contended ? contended : "");
    st = fp_status_worst(st, fp_app_write_outputs(run, v, &rest));
    if (st == FP_OK && o->record)
        st = fp_verdicts_record(v, o->record);
    if (st == FP_OK)
        st = fp_verdicts_status(v);
    fp_verdicts_free(v);
    return st;
}

fp_status fp_app_previous_run(fp_store *store, const fp_run *run, fp_run *prev, bool *found)
{
    fp_run_summary *rows = NULL;
    size_t n = 0;
    *found = false;
    fp_status st = fp_store_list(store, &rows, &n);
    const fp_run_summary *best = NULL;
    for (size_t i = 0; st == FP_OK && i < n; i++)
        if (rows[i].time < run->time && !rows[i].injected && strcmp(rows[i].id, run->id) != 0)
            best = &rows[i];
    if (best) { /* its configuration, to compare a run's with */
        st = fp_store_load_run_config(store, best->id, prev);
        *found = st == FP_OK;
    }
    free(rows);
    return st;
}

fp_status fp_app_check_max_drain(double max_drain)
{
    if (max_drain >= 0 && max_drain <= 1)
        return FP_OK;
    fp_error("--max-drain %g: expected a share of the run's nodes in 0..1 (0: the rules' "
             "breaker.max_drain; 1: the breaker never trips)", max_drain);
    return FP_EUSAGE;
}

fp_status fp_app_load_history(fp_store *store, const fp_rules *rules, const char *before,
                              fp_history **out)
{
    fp_history_rule hr = fp_rules_history(rules);
    fp_history_opts o = {.tag = hr.tag, .before = before, .runs = hr.runs};
    *out = NULL;
    if (hr.runs == 0)
        return FP_OK;
    fp_status st = fp_store_load_history(store, &o, out);
    if (st != FP_OK)
        fp_error("%s: cannot read the verdicts of its runs (history): %s", fp_store_path(store),
                 fp_strerror(st));
    return st;
}

fp_status fp_app_load_rules(const char *path, fp_rules **out)
{
    char err[512];
    fp_status st = fp_rules_load(path, out, err, sizeof err);
    if (st != FP_OK)
        fp_error("%s", err);
    return st;
}

/* ==== fleetprint detect ================================================================ */

static const fp_opt detect_opts[] = {
    FP_DETECT_INPUT_OPTS,
    FP_DETECT_OUT_OPTS(detect_cfg, out),
    {"contended", 0, FP_OPT_FLAG, offsetof(detect_cfg, contended), NULL,
     "the run's ranks shared CPU cores: use the rules' contended thresholds (default: as the "
     "run recorded, which preflight does)"},
    {"retest-args", 0, FP_OPT_STRING, offsetof(detect_cfg, out.retest_args), NULL,
     "write the options of `fleetprint run` that re-test what failed to FILE (empty when "
     "nothing did; see docs/confirm.md)"},
    {"confirm", 0, FP_OPT_STRING, offsetof(detect_cfg, confirm), "auto",
     "auto: a run stored with its re-test is judged with it (only what failed again fails); "
     "off: the run alone"},
    {"classify", 0, FP_OPT_FLAG, offsetof(detect_cfg, classify), NULL,
     "read metric keys (suite.test.metric@size), one a line, from stdin and print the rule "
     "that judges each"},
    {"print-rules", 0, FP_OPT_FLAG, offsetof(detect_cfg, print_rules), NULL,
     "print the default rules file and exit"},
    {"print-references", 0, FP_OPT_FLAG, offsetof(detect_cfg, print_references), NULL,
     "print the reference catalog (the built-in one, or --references FILE checked) and exit"},
    {"quiet", 'q', FP_OPT_FLAG, offsetof(detect_cfg, out.quiet), NULL,
     "no per-entity lines, only the verdict"},
    {"record", 0, FP_OPT_FLAG, offsetof(detect_cfg, record), NULL,
     "with --store: keep these verdicts with the run (one that has none yet: ingested, "
     "simulated), so history can use it"},
    {0},
};

/* The catalog at path (NULL: the built-in one), checked, as its text. */
static fp_status print_references(const char *path)
{
    fp_references *refs = NULL;
    char err[512];
    fp_status st = fp_references_load(path, &refs, err, sizeof err);
    fp_references_free(refs);
    if (st != FP_OK) {
        fp_error("%s", err);
        return st;
    }
    if (!path) {
        fputs(fp_references_default_text(), stdout);
        return FP_OK;
    }
    FILE *f = fopen(path, "rb");
    char buf[4096];
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, stdout);
    if (f)
        fclose(f);
    return f ? FP_OK : FP_EINPUT;
}

/* Keep rec as the verdicts of stored run id (detect --record): one atomic
 * commit, waiting up to a minute for the writers' lock. */
static fp_status record_verdicts(const char *path, const char *id, const fp_run_verdicts *rec)
{
    fp_store *s = NULL;
    fp_status st = fp_store_open(&s, path, FP_STORE_APPEND, 60);
    if (st == FP_OK)
        st = fp_store_record_verdicts(s, id, rec);
    fp_store_close(s);
    if (st == FP_OK)
        fp_info("detect: kept the verdicts of %zu entities with run %s in %s", rec->n, id, path);
    return st;
}

fp_status fp_app_detect_as(const detect_cfg *c, const char *command)
{
    fp_status st = FP_OK;
    fp_rules *rules = NULL;
    fp_store *store = NULL;
    fp_baselines *base = NULL;
    fp_run run, prev, retest;
    bool have_prev = false;
    fp_history *hist = NULL;
    fp_run_verdicts record = {0};
    fp_detect_prep *prep = NULL;
    fp_row_pack *pack = NULL;
    fp_run_init(&run);
    fp_run_init(&prev);
    run.id[0] = 0;
    memset(&retest, 0, sizeof retest);
    detect_confirm dc;
    memset(&dc, 0, sizeof dc);
    bool retested = false;
    if (c->print_rules) {
        fputs(fp_rules_default_text(), stdout);
        goto cleanup;
    }
    if (c->print_references) {
        FP_CHECK(print_references(c->out.references));
        goto cleanup;
    }
    if (c->classify) {
        char line[256];
        FP_CHECK(fp_app_load_rules(c->out.rules, &rules));
        while (fgets(line, sizeof line, stdin)) {
            line[strcspn(line, "\r\n")] = 0;
            const char *rule = line[0] ? fp_rules_classify(rules, line) : NULL;
            if (line[0])
                printf("%s %s\n", line, rule ? rule : "-");
        }
        goto cleanup;
    }
    if (!c->store == !c->input)
        FP_FAIL(FP_EUSAGE, "detect needs one of --store FILE or --input FILE");
    /* its phases free arrays the next ones need again: at 100,000 nodes x 8,
     * 20,000 fewer page faults (of 33,000) and 0.16-0.18 s less of 3.2-3.4 */
    fp_mem_keep_freed();
    FP_CHECK(fp_app_check_max_drain(c->out.max_drain));
    if (c->record && !c->store)
        FP_FAIL(FP_EUSAGE, "detect --record keeps the verdicts in the store: it needs --store "
                           "FILE");
    bool confirm = !c->confirm || strcmp(c->confirm, "auto") == 0;
    if (c->confirm && !confirm && strcmp(c->confirm, "off") != 0)
        FP_FAIL(FP_EUSAGE, "--confirm '%s': expected auto or off", c->confirm);
    FP_CHECK(fp_app_load_rules(c->out.rules, &rules));
    if (c->store) {
        FP_CHECK(fp_store_open(&store, c->store, FP_STORE_READ, 0));
        fp_run_free(&run);
        /* as rows: a ninth of the memory; the samples' start times only for
         * the re-test's timing. Where only the verdicts are written, the rows
         * stay packed as stored, for interning alone: no output reads them */
        const detect_out *o = &c->out;
        if (o->retest_args || o->junit || o->html || o->prometheus || o->prometheus_local)
            FP_CHECK(fp_store_load_run_rows(store, c->run, c->tag, o->retest_args != NULL, &run));
        else
            FP_CHECK(fp_store_load_run_packed(store, c->run, c->tag, &run, &pack));
        fp_run_free(&prev);
        if (run.nconfig) /* the records to compare this run's with */
            FP_CHECK(fp_app_previous_run(store, &run, &prev, &have_prev));
        if (confirm && strcmp(run.status, FP_RUN_RETEST) != 0)
            FP_CHECK(fp_app_find_retest(store, &run, &retest, &retested));
        if (retested && pack) { /* the confirm pass reads them */
            FP_CHECK(fp_row_pack_unpack(pack, &run));
            fp_row_pack_free(pack);
            pack = NULL;
        }
        /* the run interned on a second thread while the rest is read */
        FP_CHECK(fp_detect_prepare(&run, pack, rules, &prep));
        if (!c->no_baselines) {
            FP_CHECK(fp_store_load_baselines(store, &base));
            if (fp_baselines_entity_count(base) + fp_baselines_sku_count(base) == 0) {
                fp_info("%s has no baselines (fleetprint baseline build): peer evidence only",
                        c->store);
                fp_baselines_free(base);
                base = NULL;
            }
        }
        FP_CHECK(fp_app_load_history(store, rules, run.id, &hist));
        if (c->record) {
            bool found = false;
            FP_CHECK(fp_store_load_verdicts(store, run.id, &record, &found));
            if (found)
                FP_FAIL(FP_EINPUT, "detect --record: run %s in %s has its verdicts already (%zu "
                                   "entities): nothing written", run.id, c->store, record.n);
        }
    } else {
        fp_run_free(&run);
        FP_CHECK(fp_runfile_read(c->input, c->run, &run));
    }
    detect_out out = c->out;
    out.command = command;
    out.previous = have_prev ? &prev : NULL;
    out.history = hist;
    out.record = c->record ? &record : NULL;
    out.prepared = prep;
    if (retested) { /* stored with its re-test: judged as the preflight was (docs/confirm.md) */
        fp_info("%s: run %s was re-tested by run %s: only what failed again fails", command,
                run.id, retest.id);
        dc.retest = &retest;
        dc.info.ran = true;
        snprintf(dc.info.run_id, sizeof dc.info.run_id, "%s", retest.id);
        size_t len = 0;
        for (size_t i = 0; i < retest.nsamples; i++) { /* its tests, in order */
            const char *t = fp_run_ref(&retest, i).key->test, *have = dc.info.tests;
            bool seen = false;
            for (const char *p = have; *p && !seen;) {
                size_t m = strcspn(p, ",");
                seen = m == strlen(t) && strncmp(p, t, m) == 0;
                p += m + (p[m] == ',');
            }
            if (!seen && len + strlen(t) + 2 < sizeof dc.info.tests)
                len += (size_t)snprintf(dc.info.tests + len, sizeof dc.info.tests - len, "%s%s",
                                        len ? "," : "", t);
        }
        dc.info.first_seconds = run.duration;
        dc.info.seconds = retest.duration;
        out.confirm = &dc;
    }
    st = fp_app_detect_and_report(&run, rules, base, &out, c->contended ? "--contended" : NULL);
    if (c->record && (st == FP_OK || st == FP_EFAIL)) {
        /* the only write of detect: one commit, with the writers' lock */
        fp_store_close(store);
        store = NULL;
        fp_status kept = record_verdicts(c->store, run.id, &record);
        st = kept == FP_OK ? st : kept;
    }
cleanup:
    fp_detect_prep_free(prep); /* first: it reads the run and its rows */
    fp_row_pack_free(pack);
    fp_run_verdicts_free(&record);
    fp_history_free(hist);
    fp_run_free(&retest);
    fp_baselines_free(base);
    fp_store_close(store);
    fp_rules_free(rules);
    fp_run_free(&run);
    fp_run_free(&prev);
    return st;
}

static fp_status detect_main(const void *config, fp_world *w)
{
    (void)w;
    return fp_app_detect_as(config, "detect");
}

const fp_command fp_cmd_detect = {
    .name = "detect",
    .summary = "verdicts for a stored run: peers, drift and fleet evidence; drain lists",
    .opts = detect_opts,
    .config_size = sizeof(detect_cfg),
    .needs_world = false,
    .run = detect_main,
};

