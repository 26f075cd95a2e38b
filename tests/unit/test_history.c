/* History: the k-of-n repeat-offender test on hand-made histories (order,
 * window, fewer runs than n, entities judged by omission, unknown verdicts,
 * the offender flag that must not count), the rules' "history" object, the
 * detector's history evidence (raised to warn, never to fail, never lowered;
 * the verdict before history kept), and verdict records in a store:
 * appended with a run, recorded for a run without, read back as history
 * with the tag / before / runs filters, kept by rm and compact. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fleetprint/detect.h"
#include "fleetprint/history.h"
#include "fleetprint/report.h"
#include "fleetprint/store.h"

/* A run record from "entity=verdict" words (verdict p w f u; a trailing '!'
 * marks the offender flag). */
static void record(fp_run_verdicts *v, const char *words)
{
    char buf[512], *save = NULL;
    snprintf(buf, sizeof buf, "%s", words);
    for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(w, '=');
        CHECK(eq != NULL);
        *eq = 0;
        const char *code = "pwfu";
        fp_judgement j = (fp_judgement)(strchr(code, eq[1]) - code);
        bool flag = eq[2] == '!';
        CHECK(fp_run_verdicts_add(v, w, j, flag, j == FP_JUDGED_PASS ? "" : "some reason") ==
              FP_OK);
    }
}

/* A history from runs "r<i>" at times base + i, each a record string. */
static fp_history *history_of(const char *const *runs, int n, const int *order)
{
    fp_history *h = fp_history_new();
    CHECK(h != NULL);
    for (int k = 0; k < n; k++) {
        int i = order ? order[k] : k;
        fp_run_verdicts v = {0};
        char id[16];
        snprintf(id, sizeof id, "r%d", i);
        record(&v, runs[i]);
        CHECK(fp_history_add(h, id, i % 2 ? "nightly" : "preflight", 1000.0 + i, &v) == FP_OK);
        fp_run_verdicts_free(&v);
    }
    return h;
}

static void test_k_of_n(void)
{
    fp_offense o;
    /* warns in runs 0, 2, 4 of 5: 3 of its last 5 */
    const char *a[] = {"node:n5=w node:n1=p", "node:n5=p node:n1=p", "node:n5=w node:n1=p",
                       "node:n5=p node:n1=p", "node:n5=f node:n1=p"};
    fp_history *h = history_of(a, 5, NULL);
    CHECK(fp_history_runs(h) == 5);
    CHECK(fp_history_offender(h, "node:n5", 3, 5, &o));
    CHECK(o.bad == 3 && o.judged == 5 && o.first == 1000 && o.last == 1004);
    CHECK(!fp_history_offender(h, "node:n5", 4, 5, NULL));
    CHECK(!fp_history_offender(h, "node:n1", 3, 5, NULL));
    /* a window of 3: runs 2..4 hold 2 bad */
    CHECK(!fp_history_offender(h, "node:n5", 3, 3, NULL));
    CHECK(fp_history_offender(h, "node:n5", 2, 3, &o) && o.bad == 2 && o.judged == 3);
    CHECK(o.first == 1002 && o.last == 1004);
    /* k < 1, n < k: never */
    CHECK(!fp_history_offender(h, "node:n5", 0, 5, NULL));
    CHECK(!fp_history_offender(h, "node:n5", 3, 2, NULL));
    /* never seen, not an entity */
    CHECK(!fp_history_offender(h, "node:n9", 1, 5, &o) && o.judged == 0);
    fp_history_count(h, "node:n9", 5, &o);
    CHECK(o.judged == 0 && o.bad == 0);
    CHECK(fp_history_of(h, "node:n9", NULL, 0) == 0);
    CHECK(fp_history_of(h, "not an entity", NULL, 0) == 0);
    fp_history_free(h);

    /* the same runs added in another order: queries see them by time */
    static const int shuffled[] = {3, 0, 4, 1, 2};
    h = history_of(a, 5, shuffled);
    CHECK(fp_history_offender(h, "node:n5", 3, 5, &o) && o.first == 1000 && o.last == 1004);
    fp_history_entry e[5];
    CHECK(fp_history_of(h, "node:n5", e, 5) == 5);
    for (int i = 0; i < 5; i++) {
        char id[16];
        snprintf(id, sizeof id, "r%d", i);
        CHECK(strcmp(e[i].run, id) == 0 && e[i].time == 1000 + i);
    }
    CHECK(e[0].verdict == FP_JUDGED_WARN && e[1].verdict == FP_JUDGED_PASS);
    CHECK(e[4].verdict == FP_JUDGED_FAIL && strcmp(e[4].reason, "some reason") == 0);
    CHECK(strcmp(e[0].tag, "preflight") == 0 && strcmp(e[1].tag, "nightly") == 0);
    CHECK(fp_history_add(h, "r2", "", 1, NULL) == FP_EINPUT); /* twice */
    fp_history_free(h);

    /* bad long ago, clean since: 3 bad in runs 0-2, then 3 passes */
    const char *b[] = {"node:n5=f", "node:n5=w", "node:n5=w", "node:n5=p", "node:n5=p",
                       "node:n5=p"};
    h = history_of(b, 6, NULL);
    CHECK(!fp_history_offender(h, "node:n5", 3, 5, &o));
    fp_history_count(h, "node:n5", 5, &o);
    CHECK(o.bad == 2 && o.judged == 5 && o.first == 1001);
    CHECK(fp_history_offender(h, "node:n5", 3, 6, NULL));
    fp_history_free(h);

    /* fewer judged runs than n: 3 bad of 3 is 3 of its last 5 */
    h = history_of(b, 3, NULL);
    CHECK(fp_history_offender(h, "node:n5", 3, 5, &o) && o.bad == 3 && o.judged == 3);
    fp_history_free(h);
}

/* What counts as judged: listed with a verdict other than unknown; a device,
 * rank or link not listed passed where its nodes are listed; the offender
 * flag is no warn of its own. */
static void test_judged(void)
{
    fp_offense o;
    const char *a[] = {
        "node:n1=w node:n2=p gpu:n1/3=w link:n1~n2=w rank:4@n1=w",
        "node:n1=u",                                    /* n1 not judged: unknown */
        "node:n1=w node:n2=p gpu:n1/3=w link:n1~n2=f",
        "node:n2=p link:n1~n2=w",                       /* n1 not in the run */
        "node:n1=p! node:n2=p",                         /* flagged, but its own pass */
        "node:n1=w node:n2=p gpu:n1/3=w rank:4@n1=w",
    };
    fp_history *h = history_of(a, 6, NULL);
    /* node:n1: judged in 0, 2, 4, 5; bad in 0, 2, 5 */
    CHECK(fp_history_offender(h, "node:n1", 3, 5, &o) && o.judged == 4 && o.bad == 3);
    CHECK(fp_history_offender(h, "node:n1", 3, 4, NULL));
    CHECK(!fp_history_offender(h, "node:n1", 3, 3, NULL)); /* 4, 5 of runs 2, 4, 5 */
    /* gpu:n1/3: listed bad in 0, 2, 5; passed in 4 (n1 listed); run 1 does
     * not count (its node unknown), run 3 neither (its node not there) */
    CHECK(fp_history_offender(h, "gpu:n1/3", 3, 5, &o) && o.judged == 4 && o.bad == 3);
    fp_history_entry e[8];
    CHECK(fp_history_of(h, "gpu:n1/3", e, 8) == 4);
    CHECK(strcmp(e[2].run, "r4") == 0 && e[2].verdict == FP_JUDGED_PASS && e[2].reason[0] == 0);
    /* the link: listed in 0, 2, 3 (run 3 lists it though n1 is missing: it
     * was judged there); passed in 4 and 5 where both nodes are listed */
    CHECK(fp_history_offender(h, "link:n1~n2", 3, 5, &o) && o.judged == 5 && o.bad == 3);
    CHECK(!fp_history_offender(h, "link:n1~n2", 3, 2, NULL));
    /* rank 4: bad in 0 and 5 only */
    CHECK(!fp_history_offender(h, "rank:4@n1", 3, 5, &o));
    fp_history_count(h, "rank:4@n1", 5, &o);
    CHECK(o.judged == 4 && o.bad == 2);
    /* the offender flag of run 4 is carried, and is not a warn */
    CHECK(fp_history_of(h, "node:n1", e, 8) == 4);
    CHECK(e[2].offender && e[2].verdict == FP_JUDGED_PASS && !e[0].offender);
    fp_history_free(h);

    fp_run_verdicts v = {0};
    CHECK(fp_run_verdicts_add(&v, "", FP_JUDGED_PASS, false, NULL) == FP_EINPUT);
    CHECK(fp_run_verdicts_add(&v, "node:a", (fp_judgement)7, false, NULL) == FP_EINPUT);
    CHECK(v.n == 0);
    CHECK(strcmp(fp_judgement_name(FP_JUDGED_UNKNOWN), "unknown") == 0);
    CHECK(strcmp(fp_judgement_name(9), "?") == 0);
}

/* ---- rules and the detector ------------------------------------------------------- */

static fp_rules *rules_from(const char *history)
{
    char err[256], *text = NULL;
    fp_rules *r = NULL;
    const char *def = fp_rules_default_text();
    const char *at = strstr(def, "  \"history\"");
    CHECK(at != NULL);
    const char *end = strchr(at, '\n');
    size_t n = strlen(def) + strlen(history) + 64;
    text = malloc(n);
    snprintf(text, n, "%.*s  \"history\": %s,\n%s", (int)(at - def), def, history, end + 1);
    fp_status st = fp_rules_parse(text, "rules.json", &r, err, sizeof err);
    if (st != FP_OK)
        fprintf(stderr, "  (%s)\n", err);
    free(text);
    return r;
}

static void test_rules(void)
{
    char err[256];
    fp_rules *r = NULL;
    CHECK(fp_rules_load(NULL, &r, err, sizeof err) == FP_OK);
    fp_history_rule hr = fp_rules_history(r);
    CHECK(hr.k == 3 && hr.n == 5 && hr.runs == 100 && hr.tag[0] == 0);
    fp_rules_free(r);
    r = rules_from("{\"k\": 2, \"n\": 4, \"runs\": 0, \"tag\": \"nightly\"}");
    CHECK(r != NULL);
    if (r) {
        hr = fp_rules_history(r);
        CHECK(hr.k == 2 && hr.n == 4 && hr.runs == 0 && strcmp(hr.tag, "nightly") == 0);
        fp_rules_free(r);
    }
    static const char *const bad[] = {"{\"k\": 0}", "{\"k\": 4, \"n\": 3}", "{\"n\": 2.5}",
                                      "{\"runs\": -1}", "{\"kk\": 3}", "{\"tag\": 5}", "3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = rules_from(bad[i]);
        CHECK(r == NULL);
        fp_rules_free(r);
    }
}

/* Four nodes, one device each, identical GEMM figures: everything passes on
 * its own evidence; gpu:n3/0 has a wrong result when wrong is set. */
static void make_run(fp_run *run, bool wrong)
{
    fp_run_init(run);
    snprintf(run->id, sizeof run->id, "live");
    CHECK(fp_run_set_shape(run, 4, 4) == FP_OK);
    for (int i = 0; i < 4; i++) {
        snprintf(run->nodes[i], FP_NAME_MAX, "n%d", i);
        run->ranks[i].node = i;
        run->ranks[i].dev = 0;
        snprintf(run->ranks[i].model, sizeof run->ranks[i].model, "H100");
        fp_entity e = fp_entity_gpu(run->nodes[i], 0);
        fp_metric flops = {"f64_flops", "GFLOP/s", FP_BETTER_HIGHER};
        fp_metric bad = {"f64_wrong", "count", FP_BETTER_LOWER};
        fp_sample s;
        for (int w = 0; w < 4; w++) {
            fp_sample_make(&s, "kernels", "gemm", &flops, &e, 0, w, 100 + 0.1 * w, 0);
            CHECK(fp_run_add(run, &s) == FP_OK);
        }
        fp_sample_make(&s, "kernels", "gemm", &bad, &e, 0, 0, wrong && i == 3 ? 1 : 0, 0);
        CHECK(fp_run_add(run, &s) == FP_OK);
    }
}

static size_t index_of(const fp_verdicts *v, const char *text)
{
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        char buf[160];
        fp_entity_format(fp_verdicts_get(v, i)->entity, buf, sizeof buf);
        if (strcmp(buf, text) == 0)
            return i;
    }
    return (size_t)-1;
}

static void test_detect_history(void)
{
    char err[256];
    fp_rules *r = NULL;
    CHECK(fp_rules_load(NULL, &r, err, sizeof err) == FP_OK);
    /* n1 warned in 3 of 5; gpu:n2/0 failed in 3 of 5; n3 failed in 3 of 5 */
    const char *a[] = {"node:n0=p node:n1=w node:n2=w gpu:n2/0=f node:n3=f",
                       "node:n0=p node:n1=p node:n2=p node:n3=p",
                       "node:n0=p node:n1=w node:n2=w gpu:n2/0=f node:n3=f",
                       "node:n0=w node:n1=p node:n2=p node:n3=p",
                       "node:n0=p node:n1=w node:n2=w gpu:n2/0=f node:n3=f"};
    fp_history *h = history_of(a, 5, NULL);
    fp_run run;
    make_run(&run, true);
    fp_verdicts *v = NULL;
    fp_detect_opts o = {.rules = r};
    /* without history: n3 fails (its wrong result), the rest pass */
    CHECK(fp_detect(&run, &o, &v) == FP_OK);
    CHECK(!fp_verdicts_history(v, NULL, NULL, NULL) && fp_verdicts_offender_count(v) == 0);
    CHECK(fp_verdicts_node(v, "n1") == FP_PASS && fp_verdicts_node(v, "n3") == FP_FAIL);
    fp_verdicts_free(v);
    /* with it: n1 and gpu:n2/0 (and so n2) warn, n3 still fails, n0 passes */
    o.history = h;
    CHECK(fp_detect(&run, &o, &v) == FP_OK);
    int k, n;
    size_t runs;
    CHECK(fp_verdicts_history(v, &k, &n, &runs) && k == 3 && n == 5 && runs == 5);
    CHECK(fp_verdicts_node(v, "n0") == FP_PASS);
    CHECK(fp_verdicts_node(v, "n1") == FP_WARN);
    CHECK(fp_verdicts_node(v, "n2") == FP_WARN);
    CHECK(fp_verdicts_node(v, "n3") == FP_FAIL);
    CHECK(fp_verdicts_overall(v) == FP_FAIL);
    CHECK(fp_verdicts_offender_count(v) == 4); /* n1, n2, n3 and gpu:n2/0 */
    size_t n1 = index_of(v, "node:n1"), g2 = index_of(v, "gpu:n2/0"), n2 = index_of(v, "node:n2");
    size_t n3 = index_of(v, "node:n3");
    CHECK(fp_verdicts_own(v, n1) == FP_PASS && fp_verdicts_own(v, g2) == FP_PASS);
    CHECK(fp_verdicts_own(v, n2) == FP_PASS && fp_verdicts_own(v, n3) == FP_FAIL);
    CHECK(fp_verdicts_get(v, g2)->verdict == FP_WARN);
    CHECK(fp_verdicts_node_offends(v, "n2") && fp_verdicts_node_offends(v, "n1"));
    CHECK(!fp_verdicts_node_offends(v, "n0"));
    const fp_offender *first = fp_verdicts_offender(v, 0);
    CHECK(first->entity == n1 && first->own == FP_PASS && first->bad == 3 && first->judged == 5);
    CHECK(first->first == 1000 && first->last == 1004);
    const fp_entity_verdict *ev = fp_verdicts_get(v, n1);
    CHECK(ev->nreasons == 1);
    const fp_reason *why = fp_verdicts_reason(v, ev->first_reason);
    CHECK(why->evidence == FP_EV_HISTORY && why->verdict == FP_WARN);
    CHECK(strstr(why->note, "repeat offender: failed or warned in 3 of its last 5 judged runs"));
    CHECK(strcmp(fp_evidence_name(FP_EV_HISTORY), "history") == 0);

    /* the record keeps the verdicts before history, and the flag */
    fp_run_verdicts rec = {0};
    CHECK(fp_verdicts_record(v, &rec) == FP_OK);
    size_t seen = 0;
    for (size_t i = 0; i < rec.n; i++) {
        const fp_judged *j = &rec.rows[i];
        if (strcmp(j->entity, "node:n1") == 0 || strcmp(j->entity, "gpu:n2/0") == 0)
            seen += j->verdict == FP_JUDGED_PASS && j->offender && !j->reason[0];
        if (strcmp(j->entity, "node:n3") == 0)
            seen += j->verdict == FP_JUDGED_FAIL && j->offender &&
                    strstr(j->reason, "f64_wrong") && strstr(j->reason, "gpu:n3/0");
        if (strcmp(j->entity, "node:n0") == 0)
            seen += j->verdict == FP_JUDGED_PASS && !j->offender;
        CHECK(strcmp(j->entity, "gpu:n0/0") != 0); /* a passing device is not listed */
    }
    CHECK(seen == 4);
    CHECK(rec.n == 6); /* 4 nodes, gpu:n2/0 (warns), gpu:n3/0 (fails) */
    fp_run_verdicts_free(&rec);
    fp_verdicts_free(v);
    fp_run_free(&run);
    fp_history_free(h);
    fp_rules_free(r);
}

/* ---- the store ---------------------------------------------------------------------- */

static void stored_run(fp_run *run, const char *id, const char *tag, double time)
{
    make_run(run, false);
    snprintf(run->id, sizeof run->id, "%s", id);
    snprintf(run->tag, sizeof run->tag, "%s", tag);
    run->time = time;
}

static void test_store(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/h.h5", dir);
    fp_store *s = NULL;
    fp_run run;
    /* r0..r4 appended with verdicts (n1 warns in r0, r2, r4), r5 without */
    CHECK(fp_store_open(&s, path, FP_STORE_APPEND, 0) == FP_OK);
    for (int i = 0; i < 6; i++) {
        char id[16], words[128];
        snprintf(id, sizeof id, "r%d", i);
        stored_run(&run, id, i == 3 ? "nightly" : "preflight", 2000.0 + i);
        snprintf(words, sizeof words, "node:n0=p node:n1=%c gpu:n1/0=%c", i % 2 ? 'p' : 'w',
                 i % 2 ? 'p' : 'w');
        fp_run_verdicts v = {0};
        record(&v, words);
        CHECK(fp_store_append_judged(s, &run, i < 5 ? &v : NULL) == FP_OK);
        fp_run_verdicts_free(&v);
        fp_run_free(&run);
    }
    fp_store_close(s);

    CHECK(fp_store_open(&s, path, FP_STORE_READ, 0) == FP_OK);
    fp_run_verdicts got = {0};
    bool found = false;
    CHECK(fp_store_load_verdicts(s, "r2", &got, &found) == FP_OK && found && got.n == 3);
    CHECK(strcmp(got.rows[1].entity, "node:n1") == 0 && got.rows[1].verdict == FP_JUDGED_WARN);
    CHECK(strcmp(got.rows[1].reason, "some reason") == 0);
    CHECK(fp_store_load_verdicts(s, "r5", &got, &found) == FP_OK && !found && got.n == 0);
    CHECK(fp_store_load_verdicts(s, "nope", &got, &found) == FP_EINPUT);
    CHECK(fp_store_record_verdicts(s, "r5", &got) == FP_EUSAGE); /* read-only */
    fp_history *h = NULL;
    fp_offense o;
    CHECK(fp_store_load_history(s, NULL, &h) == FP_OK && fp_history_runs(h) == 5);
    CHECK(fp_history_offender(h, "node:n1", 3, 5, &o) && o.first == 2000 && o.last == 2004);
    CHECK(fp_history_offender(h, "gpu:n1/0", 3, 5, NULL));
    fp_history_free(h);
    /* before r4: r0..r3, 2 bad */
    fp_history_opts ho = {.before = "r4"};
    CHECK(fp_store_load_history(s, &ho, &h) == FP_OK && fp_history_runs(h) == 4);
    CHECK(!fp_history_offender(h, "node:n1", 3, 5, NULL));
    fp_history_free(h);
    /* the newest 3 runs (r3, r4, r5): 2 judged */
    ho = (fp_history_opts){.runs = 3};
    CHECK(fp_store_load_history(s, &ho, &h) == FP_OK && fp_history_runs(h) == 2);
    fp_history_free(h);
    /* tag preflight: r0, r1, r2, r4 */
    ho = (fp_history_opts){.tag = "preflight"};
    CHECK(fp_store_load_history(s, &ho, &h) == FP_OK && fp_history_runs(h) == 4);
    CHECK(fp_history_offender(h, "node:n1", 3, 4, NULL));
    fp_history_free(h);
    ho = (fp_history_opts){.before = "nope"};
    CHECK(fp_store_load_history(s, &ho, &h) == FP_EINPUT && h == NULL);
    fp_store_close(s);

    /* record the verdicts of r5 (stored without): one commit; a second is refused */
    CHECK(fp_store_open(&s, path, FP_STORE_APPEND, 0) == FP_OK);
    fp_run_verdicts v = {0};
    record(&v, "node:n0=p node:n1=f node:n2=u");
    CHECK(fp_store_record_verdicts(s, "r5", &v) == FP_OK);
    CHECK(fp_store_record_verdicts(s, "r5", &v) == FP_EINPUT);
    CHECK(fp_store_record_verdicts(s, "r1", &v) == FP_EINPUT); /* has them */
    CHECK(fp_store_record_verdicts(s, "nope", &v) == FP_EINPUT);
    fp_run_verdicts_free(&v);
    /* rm and compact copy the runs whole: their verdicts come along */
    const char *gone[] = {"r0"};
    CHECK(fp_store_remove(s, gone, 1) == FP_OK);
    CHECK(fp_store_compact(s, 1 << 30, NULL) == FP_OK);
    fp_store_close(s);
    CHECK(fp_store_open(&s, path, FP_STORE_READ, 0) == FP_OK);
    CHECK(fp_store_load_verdicts(s, "r5", &got, &found) == FP_OK && found && got.n == 3);
    CHECK(got.rows[1].verdict == FP_JUDGED_FAIL && got.rows[2].verdict == FP_JUDGED_UNKNOWN);
    CHECK(fp_store_load_history(s, NULL, &h) == FP_OK && fp_history_runs(h) == 5);
    /* r1..r5: n1 bad in r2, r4, r5 */
    CHECK(fp_history_offender(h, "node:n1", 3, 5, &o) && o.first == 2001 && o.last == 2005);
    fp_history_free(h);
    fp_run loaded;
    CHECK(fp_store_load_run(s, "r5", NULL, &loaded) == FP_OK && loaded.nsamples == 20);
    fp_run_free(&loaded);
    fp_run_verdicts_free(&got);
    fp_store_close(s);
}

/* Remove what nftw visits, children first. */
static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

int main(void)
{
    test_k_of_n();
    test_judged();
    test_rules();
    test_detect_history();
    char dir[] = "/tmp/fp_test_history_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    test_store(dir);
    CHECK(nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS) == 0);
    CHECK_DONE();
}
