/* Confirmation before acting (docs/confirm.md) on hand-made runs: the slow
 * injection that ends (until=), the link sweep's list of node pairs and its
 * reference links, what a re-test plans from a run's failures, and the
 * verdicts once it has measured them again: only what fails again fails, a
 * wrong result fails either way, a link end slow with nodes that passed is
 * the node's fault. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fleetprint/collectives.h"
#include "fleetprint/detect.h"
#include "fleetprint/inject.h"

enum { NODES = 8, WINDOWS = 6 };

/* A fleet of NODES nodes n0.. with one H100 each, no samples yet. */
static void fleet(fp_run *run)
{
    fp_run_init(run);
    CHECK(fp_run_set_shape(run, NODES, NODES) == FP_OK);
    for (int i = 0; i < NODES; i++) {
        snprintf(run->nodes[i], FP_NAME_MAX, "n%d", i);
        run->ranks[i].node = i;
        snprintf(run->ranks[i].model, sizeof run->ranks[i].model, "H100");
    }
}

/* One sample; *wrong* counts are better lower, the rest higher. */
static void put(fp_run *run, const char *suite, const char *test, const char *metric,
                fp_entity e, int iter, double v)
{
    bool count = strstr(metric, "wrong") != NULL;
    fp_metric m = {metric, count ? "count" : "GB/s", count ? FP_BETTER_LOWER : FP_BETTER_HIGHER};
    fp_sample s;
    fp_sample_make(&s, suite, test, &m, &e, 0, iter, v, 0);
    CHECK(fp_run_add(run, &s) == FP_OK);
}

/* About +-1%, the same for the same (a, b). */
static double noise(int a, int b)
{
    unsigned x = (unsigned)(a * 2654435761u) ^ (unsigned)(b * 40503u + 7);
    x ^= x >> 13;
    return 1 + ((double)(x % 201) / 100.0 - 1) * 0.01;
}

/* Memory bandwidth and GEMM of every device; node slow's at factor; node
 * wrong's GEMM wrong by one element (-1: none). */
static void devices(fp_run *run, int slow, double factor, int wrong)
{
    fleet(run);
    for (int i = 0; i < NODES; i++) {
        fp_entity e = fp_entity_gpu(run->nodes[i], 0);
        double f = i == slow ? factor : 1;
        for (int w = 0; w < WINDOWS; w++) {
            put(run, "kernels", "membw", "triad_bw", e, w, 20 * f * noise(i, w));
            put(run, "kernels", "gemm", "f64_flops", e, w, 50 * f * noise(w, i));
        }
        put(run, "kernels", "gemm", "f64_wrong", e, -1, i == wrong ? 1 : 0);
    }
}

/* The link sweep over pairs[np] (node indices; NULL: all pairs; a pair
 * again adds nothing: its figure is one median), the links slow[nslow] at lf
 * and every link of node s at sf. */
static void links_at(fp_run *run, const int (*pairs)[2], int np, const int (*slow)[2],
                     int nslow, double lf, int s, double sf)
{
    fleet(run);
    int all[NODES * NODES][2], n = 0;
    for (int x = 0; !pairs && x < NODES; x++)
        for (int y = x + 1; y < NODES; y++) {
            all[n][0] = x;
            all[n++][1] = y;
        }
    if (!pairs) {
        pairs = (const int (*)[2])all;
        np = n;
    }
    bool seen[NODES][NODES] = {{false}};
    for (int i = 0; i < np; i++) {
        int x = pairs[i][0] < pairs[i][1] ? pairs[i][0] : pairs[i][1];
        int y = pairs[i][0] < pairs[i][1] ? pairs[i][1] : pairs[i][0];
        if (seen[x][y])
            continue;
        seen[x][y] = true;
        double f = x == s || y == s ? sf : 1;
        for (int k = 0; k < nslow; k++)
            if ((x == slow[k][0] && y == slow[k][1]) || (x == slow[k][1] && y == slow[k][0]))
                f = lf;
        fp_entity e = fp_entity_link(run->nodes[x], -1, run->nodes[y], -1);
        for (int w = 0; w < 5; w++)
            put(run, "collectives", "links", "bw_inter", e, w, 10 * f * noise(x * NODES + y, w));
    }
}

/* links_at with the one link a~b at lf (a < 0: none). */
static void links(fp_run *run, const int (*pairs)[2], int np, int a, int b, double lf, int s,
                  double sf)
{
    const int slow[1][2] = {{a, b}};
    links_at(run, pairs, np, slow, a >= 0, lf, s, sf);
}

static fp_verdicts *judge(const fp_run *run, const fp_rules *r)
{
    fp_detect_opts o = {.rules = r};
    fp_verdicts *v = NULL;
    CHECK(fp_detect(run, &o, &v) == FP_OK);
    return v;
}

/* The verdict of the entity named text in v, FP_UNKNOWN when absent. */
static fp_verdict verdict_of(const fp_verdicts *v, const char *text)
{
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        char name[160];
        if (strcmp(fp_entity_format(fp_verdicts_get(v, i)->entity, name, sizeof name), text) == 0)
            return fp_verdicts_get(v, i)->verdict;
    }
    return FP_UNKNOWN;
}

/* The outcome of the confirm item named text, or -1. */
static int outcome_of(const fp_verdicts *v, const char *text)
{
    const fp_confirm_info *c = fp_verdicts_confirm_info(v);
    for (size_t i = 0; c && i < c->nitems; i++) {
        char name[160];
        if (strcmp(fp_entity_format(&c->items[i].entity, name, sizeof name), text) == 0)
            return (int)c->items[i].outcome;
    }
    return -1;
}

/* Whether a reason of the entity named text has note (a substring) and
 * comes from the re-test when retest. */
static bool has_note(const fp_verdicts *v, const char *text, const char *note, bool retest)
{
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        char name[160];
        if (strcmp(fp_entity_format(ev->entity, name, sizeof name), text) != 0)
            continue;
        for (size_t k = 0; k < ev->nreasons; k++) {
            const fp_reason *r = fp_verdicts_reason(v, ev->first_reason + k);
            if (strstr(r->note, note) && r->retest == retest)
                return true;
        }
    }
    return false;
}

/* Judge first with a re-test run (NULL: none ran) of tests. */
static fp_verdicts *confirm(const fp_verdicts *first, const fp_run *retest, const char *tests,
                            const fp_rules *r)
{
    fp_confirm_info info = {.ran = retest != NULL, .seconds = 1, .first_seconds = 8};
    snprintf(info.tests, sizeof info.tests, "%s", tests);
    fp_verdicts *rv = retest ? judge(retest, r) : NULL, *out = NULL;
    CHECK(fp_verdicts_confirm(first, rv, &info, &out) == FP_OK);
    fp_verdicts_free(rv);
    return out;
}

static void test_until(void)
{
    char err[256], desc[256];
    fp_inject_set set;
    fp_strlist in = {.n = 1, .item = {"slow:rank=3,factor=2,until=10s"}};
    CHECK(fp_inject_parse(&in, &set, err, sizeof err) == FP_OK);
    CHECK(fp_inject_slow(&set, 3, 5) == 2 && fp_inject_slow(&set, 3, 10) == 1);
    CHECK(fp_inject_slow(&set, 3, 11) == 1 && fp_inject_slow(&set, 2, 5) == 1);
    fp_inject_describe(&set, desc, sizeof desc);
    CHECK(strcmp(desc, "slow:rank=3,factor=2,until=10s") == 0);
    in.item[0] = desc; /* the recorded spec parses back */
    CHECK(fp_inject_parse(&in, &set, err, sizeof err) == FP_OK && set.item[0].until == 10);
    static const char *const bad[][2] = {
        {"slow:rank=3,factor=2,until=x", "bad until 'x'"},
        {"slow:rank=3,factor=2,until=0s", "bad until '0s'"},
        {"slow:rank=3,factor=2,after=5s,until=5s", "until=5s is not later than after=5s"},
        {"slow:rank=3,factor=2,until=1s,until=2s", "until= given twice"},
        {"hang:rank=1,after=1s,until=2s", "unknown key 'until' for hang"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        in.item[0] = bad[i][0];
        CHECK(fp_inject_parse(&in, &set, err, sizeof err) == FP_EUSAGE && strstr(err, bad[i][1]));
    }
}

static void test_pairs(void)
{
    const char *names[NODES] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};
    bool inside[NODES];
    int (*pairs)[2] = NULL, np = 0;
    char err[256];
    CHECK(fp_link_pairs_is_list("n2~n6") && fp_link_pairs_is_list("n5"));
    CHECK(!fp_link_pairs_is_list("all") && !fp_link_pairs_is_list("k=3") &&
          !fp_link_pairs_is_list("random=2"));
    CHECK(fp_link_pairs_parse("n2~n6,n0~n2,n5", names, NODES, &pairs, &np, inside, err,
                              sizeof err) == FP_OK);
    CHECK(np == 2 && pairs[0][0] == 2 && pairs[0][1] == 6 && pairs[1][0] == 0 && inside[5] &&
          !inside[2]);
    free(pairs);
    static const char *const bad[][2] = {{"n2~n9", "no node 'n9'"},
                                         {"n2~n2", "pairs a node with itself"},
                                         {"n2~n6,,n1~n3", "an empty entry"},
                                         {"n3,n3", "is given twice"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(fp_link_pairs_parse(bad[i][0], names, NODES, &pairs, &np, inside, err,
                                  sizeof err) == FP_EUSAGE &&
              strstr(err, bad[i][1]) && !pairs);
    }

    /* a pair given again is measured again */
    CHECK(fp_link_pairs_parse("n2~n6,n6~n2", names, NODES, &pairs, &np, inside, err,
                              sizeof err) == FP_OK && np == 2);
    free(pairs);

    /* a re-test's list: the listed pairs keep their rounds; the idle spare
     * nodes of each round are paired among themselves, the same pairs in as
     * many rounds as they can; a list written in round order packs again
     * into the same rounds */
    const int listed[][2] = {{2, 6}, {2, 0}, {2, 1}, {6, 3}, {6, 4}};
    bool spare[NODES] = {true, true, false, true, true, true, false, true};
    fp_link_plan p;
    CHECK(fp_link_plan_pairs(listed, 5, NODES, spare, &p, err, sizeof err) == FP_OK);
    CHECK(p.nrounds == 3 && p.npairs > 5);
    int per_round[3] = {0}, seen[NODES][NODES] = {{0}}, repeated = 0;
    for (int i = 0; i < p.npairs; i++) {
        int a = p.pair[i][0], b = p.pair[i][1];
        CHECK(i == 0 || p.round[i] >= p.round[i - 1]);
        bool is_listed = false;
        for (int k = 0; k < 5; k++)
            is_listed |= (listed[k][0] == a && listed[k][1] == b) ||
                         (listed[k][0] == b && listed[k][1] == a);
        CHECK(is_listed ? seen[a][b] == 0 : spare[a] && spare[b]);
        repeated += seen[a][b]++ > 0;
        per_round[p.round[i]]++;
        for (int k = 0; k < i; k++) /* disjoint within a round */
            CHECK(p.round[k] != p.round[i] || (p.pair[k][0] != a && p.pair[k][1] != a &&
                                               p.pair[k][0] != b && p.pair[k][1] != b));
    }
    for (int r = 0; r < 3; r++) /* 8 nodes: every round as full as the first pass's */
        CHECK(per_round[r] == NODES / 2);
    CHECK(repeated > 0);
    fp_link_plan again;
    CHECK(fp_link_plan_pairs((const int (*)[2])p.pair, p.npairs, NODES, NULL, &again, err,
                             sizeof err) == FP_OK);
    CHECK(again.nrounds == p.nrounds && again.npairs == p.npairs);
    for (int i = 0; i < p.npairs; i++)
        CHECK(again.round[i] == p.round[i]);
    fp_link_plan_free(&again);
    fp_link_plan_free(&p);
    const int self[][2] = {{3, 3}};
    CHECK(fp_link_plan_pairs(self, 1, NODES, NULL, &p, err, sizeof err) == FP_EUSAGE);
}

/* A slow device: the plan re-runs its tests; a re-test without the fault
 * warns it ("did not reproduce on re-test"), one with it fails it; without a
 * re-test (or one that left a test out) its fail stands. */
static void test_devices(const fp_rules *r)
{
    fp_run first, again;
    devices(&first, 5, 0.5, -1);
    fp_verdicts *v = judge(&first, r);
    CHECK(fp_verdicts_node(v, "n5") == FP_FAIL);
    fp_confirm_plan plan;
    CHECK(fp_confirm_plan_make(v, &first, r, &plan) == FP_OK);
    CHECK(plan.ntests == 2 && strcmp(plan.tests[0], "membw") == 0 &&
          strcmp(plan.tests[1], "gemm") == 0);
    CHECK(plan.npairs == 0 && plan.nsuspects >= 2 && plan.nhung == 0);
    fp_confirm_plan_free(&plan);

    devices(&again, -1, 1, -1);
    fp_verdicts *c = confirm(v, &again, "membw,gemm", r);
    CHECK(fp_verdicts_node(c, "n5") == FP_WARN && fp_verdicts_overall(c) == FP_WARN);
    CHECK(outcome_of(c, "node:n5") == FP_CONFIRM_NOT_REPRODUCED);
    CHECK(outcome_of(c, "gpu:n5/0") == FP_CONFIRM_NOT_REPRODUCED);
    CHECK(has_note(c, "gpu:n5/0", "did not reproduce on re-test", false));
    const char *const *names;
    CHECK(fp_verdicts_nodes_at(c, FP_FAIL, &names) == 0 && fp_verdicts_status(c) == FP_OK);
    fp_verdicts_free(c);

    /* gemm left out of a clean re-test: the device's fail stands, and so does
     * its node's, though the node's own reason (membw) did not reproduce */
    c = confirm(v, &again, "membw", r);
    CHECK(outcome_of(c, "gpu:n5/0") == FP_CONFIRM_NOT_RETESTED);
    CHECK(fp_verdicts_node(c, "n5") == FP_FAIL);
    CHECK(outcome_of(c, "node:n5") == FP_CONFIRM_NOT_RETESTED);
    fp_verdicts_free(c);
    fp_run_free(&again);

    devices(&again, 5, 0.5, -1);
    c = confirm(v, &again, "membw,gemm", r);
    CHECK(fp_verdicts_node(c, "n5") == FP_FAIL);
    CHECK(outcome_of(c, "node:n5") == FP_CONFIRM_REPRODUCED);
    CHECK(fp_verdicts_nodes_at(c, FP_FAIL, &names) == 1 && strcmp(names[0], "n5") == 0);
    bool both = false; /* the first pass's reasons and the re-test's */
    for (size_t i = 0; i < fp_verdicts_count(c); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(c, i);
        if (ev->entity->kind != FP_ENT_GPU || strcmp(ev->entity->node, "n5") != 0)
            continue;
        bool mine = false, again_ = false;
        for (size_t k = 0; k < ev->nreasons; k++) {
            mine |= !fp_verdicts_reason(c, ev->first_reason + k)->retest;
            again_ |= fp_verdicts_reason(c, ev->first_reason + k)->retest;
        }
        both = mine && again_;
    }
    CHECK(both);
    fp_verdicts_free(c);

    c = confirm(v, NULL, "", r);
    CHECK(fp_verdicts_node(c, "n5") == FP_FAIL);
    CHECK(outcome_of(c, "node:n5") == FP_CONFIRM_NOT_RETESTED);
    CHECK(!fp_verdicts_confirm_info(c)->ran && !fp_verdicts_confirm_info(v));
    fp_verdicts_free(c);
    fp_run_free(&again);
    fp_verdicts_free(v);
    fp_run_free(&first);
}

/* A wrong result fails whether it repeats or not, and says which. */
static void test_wrong(const fp_rules *r)
{
    fp_run first, again;
    devices(&first, -1, 1, 3);
    devices(&again, -1, 1, -1);
    fp_verdicts *v = judge(&first, r);
    CHECK(fp_verdicts_node(v, "n3") == FP_FAIL);
    fp_verdicts *c = confirm(v, &again, "membw,gemm", r);
    CHECK(fp_verdicts_node(c, "n3") == FP_FAIL && verdict_of(c, "gpu:n3/0") == FP_FAIL);
    CHECK(outcome_of(c, "gpu:n3/0") == FP_CONFIRM_NOT_REPRODUCED);
    const fp_confirm_info *info = fp_verdicts_confirm_info(c);
    CHECK(info->nitems >= 2 && info->items[0].certain);
    CHECK(has_note(c, "gpu:n3/0", "a wrong result fails regardless", false));
    fp_verdicts_free(c);
    fp_verdicts_free(v);
    fp_run_free(&first);
    fp_run_free(&again);
}

/* A slow link: the plan measures it again with each end beside nodes that
 * passed. Slow again alone: the link fails, no node does. Its end slow with
 * the good partners too: that node is found and fails, the link warns. Slow
 * again with one noisy partner an end: still the link. Fast again: the link
 * warns. */
static void test_links(const fp_rules *r)
{
    fp_run first, again;
    links(&first, NULL, 0, 2, 6, 0.25, -1, 1);
    fp_verdicts *v = judge(&first, r);
    CHECK(verdict_of(v, "link:n2~n6") == FP_FAIL && fp_verdicts_node(v, "n2") == FP_PASS);
    fp_confirm_plan plan;
    CHECK(fp_confirm_plan_make(v, &first, r, &plan) == FP_OK);
    CHECK(plan.ntests == 1 && strcmp(plan.tests[0], "links") == 0);
    CHECK(plan.npairs == 5 && plan.pairs[0][0] == 2 && plan.pairs[0][1] == 6);
    CHECK(!plan.spare[2] && !plan.spare[6] && plan.spare[0] && plan.spare[7]);
    for (int i = 1; i < plan.npairs; i++) /* each end with partners that passed */
        CHECK((plan.pairs[i][0] == 2 || plan.pairs[i][0] == 6) && plan.spare[plan.pairs[i][1]]);
    fp_link_plan lp;
    char err[160];
    CHECK(fp_link_plan_pairs((const int (*)[2])plan.pairs, plan.npairs, NODES, plan.spare, &lp,
                             err, sizeof err) == FP_OK);

    links(&again, (const int (*)[2])lp.pair, lp.npairs, 2, 6, 0.25, -1, 1);
    fp_verdicts *c = confirm(v, &again, "links", r);
    CHECK(verdict_of(c, "link:n2~n6") == FP_FAIL);
    CHECK(outcome_of(c, "link:n2~n6") == FP_CONFIRM_REPRODUCED);
    CHECK(fp_verdicts_node(c, "n2") == FP_PASS && fp_verdicts_node(c, "n6") == FP_PASS);
    CHECK(outcome_of(c, "node:n2") == -1);
    fp_verdicts_free(c);
    fp_run_free(&again);

    links(&again, (const int (*)[2])lp.pair, lp.npairs, -1, -1, 1, 2, 0.3);
    c = confirm(v, &again, "links", r);
    CHECK(fp_verdicts_node(c, "n2") == FP_FAIL && outcome_of(c, "node:n2") == FP_CONFIRM_FOUND);
    CHECK(has_note(c, "node:n2", "slow with nodes that passed too", true));
    CHECK(verdict_of(c, "link:n2~n6") == FP_WARN && fp_verdicts_node(c, "n6") == FP_PASS);
    const char *const *names;
    CHECK(fp_verdicts_nodes_at(c, FP_FAIL, &names) == 1 && strcmp(names[0], "n2") == 0);
    fp_verdicts_free(c);
    fp_run_free(&again);

    /* slow again, and each end slow with one of its two partners that passed
     * besides (noise on shared cores; seen in CI): 2 of 3 links slow makes
     * each end a culprit in the re-test alone, but neither is slow with most
     * nodes that passed, so the link fails and no node does */
    int extra[3][2] = {{2, 6}, {-1, -1}, {-1, -1}};
    for (int i = 1; i < plan.npairs; i++) {
        int k = plan.pairs[i][0] == 2 ? 1 : 2;
        if (extra[k][0] < 0)
            memcpy(extra[k], plan.pairs[i], sizeof extra[k]);
    }
    CHECK(extra[1][0] == 2 && extra[2][0] == 6);
    links_at(&again, (const int (*)[2])lp.pair, lp.npairs, (const int (*)[2])extra, 3, 0.25, -1,
             1);
    fp_verdicts *alone = judge(&again, r);
    CHECK(fp_verdicts_node(alone, "n2") == FP_FAIL && fp_verdicts_node(alone, "n6") == FP_FAIL);
    fp_verdicts_free(alone);
    c = confirm(v, &again, "links", r);
    CHECK(verdict_of(c, "link:n2~n6") == FP_FAIL);
    CHECK(outcome_of(c, "link:n2~n6") == FP_CONFIRM_REPRODUCED);
    CHECK(has_note(c, "link:n2~n6", "both ends fine with most nodes that passed", true));
    CHECK(fp_verdicts_node(c, "n2") == FP_PASS && fp_verdicts_node(c, "n6") == FP_PASS);
    fp_verdicts_free(c);
    fp_run_free(&again);

    links(&again, (const int (*)[2])lp.pair, lp.npairs, -1, -1, 1, -1, 1);
    c = confirm(v, &again, "links", r);
    CHECK(verdict_of(c, "link:n2~n6") == FP_WARN && fp_verdicts_overall(c) == FP_WARN);
    CHECK(outcome_of(c, "link:n2~n6") == FP_CONFIRM_NOT_REPRODUCED);
    fp_verdicts_free(c);
    fp_run_free(&again);
    fp_link_plan_free(&lp);
    fp_confirm_plan_free(&plan);
    fp_verdicts_free(v);
    fp_run_free(&first);
}

/* A hang is the watchdog's verdict: nothing to re-test. */
static void test_hang(const fp_rules *r)
{
    fp_run run;
    fleet(&run);
    const int missing[] = {4};
    fp_verdicts *v = NULL;
    CHECK(fp_verdicts_hung(&run, missing, 1, "links round", &v) == FP_OK);
    fp_confirm_plan plan;
    CHECK(fp_confirm_plan_make(v, &run, r, &plan) == FP_OK);
    CHECK(plan.ntests == 0 && plan.nhung >= 1 && plan.nsuspects == 0);
    fp_confirm_plan_free(&plan);
    fp_verdicts_free(v);
    fp_run_free(&run);
}

int main(void)
{
    char err[256];
    fp_rules *r = NULL;
    CHECK(fp_rules_load(NULL, &r, err, sizeof err) == FP_OK);
    test_until();
    test_pairs();
    test_devices(r);
    test_wrong(r);
    test_links(r);
    test_hang(r);
    fp_rules_free(r);
    CHECK_DONE();
}
