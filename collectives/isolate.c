/* Isolation in rounds on a live job (docs/isolate.md, The rounds): the plan
 * (isolate_plan.c) gives each round's groups of nodes; every group runs the
 * check at once on a communicator of its own members (open_group), each
 * member tells the group's leader how it went, and each leader tells every
 * rank its group's outcome. Every step keeps the round's deadline with
 * point-to-point messages and polls, never a world collective, so a rank
 * that hangs stalls only its own group, which is abandoned at the deadline:
 * the ranks that go on all hold the same outcomes, and so the same plan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/collectives.h"
#include "fleetprint/isolate.h"
#include "fleetprint/log.h"
#include "fleetprint/stats.h"
#include "fleetprint/timer.h"

/* Tags on the world's data communicator: a round's reports and outcomes
 * (1000 + 4 x round + kind; rounds below 1000), the end's messages. */
enum { TAG_BASE = 1000, TAG_REPORT = 0, TAG_RESULT = 1, TAG_FINISHED = 9000, TAG_FINAL = 9001 };
enum { MAX_ROUNDS = 999 };

static int tag_of(int round, int kind)
{
    return TAG_BASE + 4 * round + kind;
}

/* What a member tells its leader after the check. */
typedef struct member_report {
    int completed;  /* 1: the check completed here before the deadline */
    int pad;
    long long wrong;
    double loop;    /* s per call: the median period of this rank's timed calls */
} member_report;

/* What a leader tells every rank: its group's measured outcome. */
typedef struct group_result {
    int outcome;    /* fp_iso_outcome: ok, wrong or hung */
    int pad;
    long long wrong;
    double seconds, busbw;
    double sent;    /* when the leader sent it (fp_world_now) */
} group_result;

typedef struct iso_run {
    fp_ctx *ctx;
    const fp_iso_config *cfg;
    double margin;  /* after the deadline: for the reports, then for the outcomes */
    double start;   /* when the next round starts (fp_world_now), the same on every rank */
} iso_run;

/* The next round starts this long after the last outcome of a round was
 * sent, and every group's warm-up SETUP after that (or at once when its
 * set-up took longer): the groups run their calls side by side, so none
 * runs beside fewer others (on shared cores: faster) than the rest. */
#define START_AFTER 0.05
#define SETUP 0.25

/* After a poll that timed out: the requests of reqs[0..n) that completed
 * become MPI_REQUEST_NULL, the others are freed (receives cancelled first:
 * sends are left to MPI to deliver); their number. (MPI_Testall leaves
 * every request as it was unless all completed.) */
static int give_up(MPI_Request *reqs, int n, bool receives)
{
    int lost = 0;
    for (int i = 0; i < n; i++) {
        int done = 0;
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE);
        if (done)
            continue;
        if (receives)
            MPI_Cancel(&reqs[i]);
        MPI_Request_free(&reqs[i]);
        lost++;
    }
    return lost;
}

/* ---- the check: exact inputs and their results ---------------------------------------- */

/* Small integers: every float sum over the ranks is exact. */
static double pat(uint64_t j)
{
    return (double)((j * 0x9e3779b97f4a7c15ULL) >> 61) - 3.0;
}

/* Element j of the send buffer of group rank me of n (count: comm.h's). */
static double input(fp_coll c, int me, int n, size_t count, size_t j)
{
    switch (c) {
    case FP_ALLGATHER: return pat((uint64_t)me * count + j);
    case FP_ALLTOALL: return pat(((uint64_t)me * (uint64_t)n) * count + j);
    default: return pat(j) + me % 4;
    }
}

/* Element k of the result of group rank me of n. */
static double expected(fp_coll c, int me, int n, size_t count, size_t k)
{
    double sum_b = 0; /* the ranks' offsets, me % 4, summed */
    for (int r = 0; r < 4 && r < n; r++)
        sum_b += r * (double)((n - r + 3) / 4);
    switch (c) {
    case FP_ALLGATHER: return pat(k);
    case FP_ALLTOALL: /* block p of rank p's send went to block p... of mine */
        return pat(((uint64_t)(k / count) * (uint64_t)n + (uint64_t)me) * count + k % count);
    case FP_REDUCE_SCATTER: return n * pat((uint64_t)me * count + k) + sum_b;
    default: return n * pat(k) + sum_b;
    }
}

/* Buffers where the comm backend wants them, and a host view of each. */
typedef struct check_bufs {
    void *send, *recv;
    float *hsend, *hrecv;   /* host copies (the buffers themselves on the host) */
    void *flag;             /* one element: whether to stop (check_calls) */
    float hflag[1];
    bool device;
} check_bufs;

static fp_status bufs_open(fp_ctx *ctx, check_bufs *b, size_t send_n, size_t recv_n)
{
    fp_status st = FP_OK;
    memset(b, 0, sizeof *b);
    b->device = ctx->comm_ops->device_buffers;
    b->hsend = malloc((send_n ? send_n : 1) * sizeof(float));
    b->hrecv = malloc((recv_n ? recv_n : 1) * sizeof(float));
    FP_CHECK_ALLOC(b->hsend);
    FP_CHECK_ALLOC(b->hrecv);
    if (b->device) {
        FP_CHECK(ctx->dev_ops->alloc(ctx->dev, send_n * sizeof(float), &b->send));
        FP_CHECK(ctx->dev_ops->alloc(ctx->dev, recv_n * sizeof(float), &b->recv));
        FP_CHECK(ctx->dev_ops->alloc(ctx->dev, sizeof(float), &b->flag));
    } else {
        b->send = b->hsend;
        b->recv = b->hrecv;
        b->flag = b->hflag;
    }
cleanup:
    return st;
}

/* Free the buffers; abandoned (an operation never completed): the backend
 * may still write them, so they are left to the end of the job. */
static void bufs_close(fp_ctx *ctx, check_bufs *b, bool abandoned)
{
    if (abandoned)
        return;
    if (b->device) {
        if (b->send)
            ctx->dev_ops->free(ctx->dev, b->send);
        if (b->recv)
            ctx->dev_ops->free(ctx->dev, b->recv);
        if (b->flag)
            ctx->dev_ops->free(ctx->dev, b->flag);
    }
    free(b->hsend);
    free(b->hrecv);
}

static fp_status upload(fp_ctx *ctx, const check_bufs *b, void *dst, const float *src, size_t n)
{
    return b->device ? ctx->dev_ops->copy(ctx->dev, dst, src, n * sizeof(float), FP_COPY_H2D)
                     : FP_OK;
}

enum { MAX_PERIODS = 4096, MIN_CALLS = 3 };

/* Calls of the check until the window closes at end (fp_world_now), and at
 * least MIN_CALLS: beside each, a one-element allreduce (max) of "the window
 * closed here" tells every member, so all stop after the same call. Their
 * periods (from one call's end to the next one's: every member's are the
 * group's) into took[0..*count), at most MAX_PERIODS. */
static fp_status calls_until(const iso_run *ir, fp_comm *group, const int *members, int n,
                             const fp_coll_args *a, check_bufs *b, double typical, double end,
                             double *took, int *count)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = ir->ctx;
    fp_coll_args flag = {.coll = FP_ALLREDUCE, .send = b->flag, .recv = b->flag, .count = 1,
                         .dtype = FP_F32, .op = FP_MAX};
    double enter, exit, last = fp_world_now(ctx->world);
    *count = 0;
    for (int k = 0;; k++) {
        FP_CHECK(fp_group_collective(ctx, group, members, n, a, typical, &enter, &exit));
        if (k < MAX_PERIODS)
            took[(*count)++] = exit - last;
        last = exit;
        b->hflag[0] = fp_world_now(ctx->world) >= end && k + 1 >= MIN_CALLS ? 1.0f : 0.0f;
        FP_CHECK(upload(ctx, b, b->flag, b->hflag, 1));
        fp_comm_req *req = NULL;
        FP_CHECK(ctx->comm_ops->start(group, &flag, &req));
        FP_CHECK(ctx->comm_ops->wait(group, req, "isolate: the window"));
        if (b->device)
            FP_CHECK(ctx->dev_ops->copy(ctx->dev, b->hflag, b->flag, sizeof(float), FP_COPY_D2H));
        if (b->hflag[0] > 0.5f)
            break;
    }
cleanup:
    return st;
}

/* This rank's part of the check in a group of the world ranks members[0..n):
 * the group's communicator; from go (the same moment for every group, so
 * all are timed beside the same others) warm calls for cfg->warm seconds,
 * timed calls for cfg->window, then one call on fresh buffers whose result
 * is checked. rep says whether it completed before the deadline, and the
 * median period and wrong elements when it did. */
static void check(const iso_run *ir, const int *members, int n, int round, double deadline,
                  double go, member_report *rep)
{
    fp_ctx *ctx = ir->ctx;
    const fp_iso_config *cfg = ir->cfg;
    fp_status st = FP_OK;
    fp_comm *group = NULL;
    check_bufs b = {0};
    double *took = NULL;
    memset(rep, 0, sizeof *rep);
    int me = fp_world_group_rank(members, n, ctx->rank);
    FP_CHECK(ctx->comm_ops->open_group(&group, ctx->comm, members, n, round, deadline));
    fp_coll_geom g = fp_coll_geometry(cfg->coll, cfg->bytes, sizeof(float), n);
    FP_CHECK(bufs_open(ctx, &b, g.send_elems, g.recv_elems));
    for (size_t j = 0; j < g.send_elems; j++)
        b.hsend[j] = (float)input(cfg->coll, me, n, g.count, j);
    FP_CHECK(upload(ctx, &b, b.send, b.hsend, g.send_elems));
    fp_coll_args a = {.coll = cfg->coll, .send = b.send, .recv = b.recv, .count = g.count,
                      .dtype = FP_F32, .op = FP_SUM};
    took = calloc(MAX_PERIODS, sizeof *took);
    FP_CHECK_ALLOC(took);
    double idle = go - fp_world_now(ctx->world);
    if (idle > 0 && idle <= SETUP)
        fp_sleep(idle);
    int calls;
    FP_CHECK(calls_until(ir, group, members, n, &a, &b, 0, go + cfg->warm, took, &calls));
    /* the median warm period, the first call's set-up aside: an injected
     * slow rank arrives (F - 1) x that late, its group's calls taking about
     * F times as long beside the same others */
    double typical = calls > 1 ? fp_median(took + 1, (size_t)calls - 1) : took[0];
    FP_CHECK(calls_until(ir, group, members, n, &a, &b, typical, go + cfg->warm + cfg->window,
                         took, &calls));
    rep->loop = fp_median(took, (size_t)calls);
    for (size_t k = 0; k < g.recv_elems; k++)
        b.hrecv[k] = -99.0f; /* never a result: shows one never written */
    FP_CHECK(upload(ctx, &b, b.recv, b.hrecv, g.recv_elems));
    double enter, exit;
    FP_CHECK(fp_group_collective(ctx, group, members, n, &a, typical, &enter, &exit));
    size_t cnt = g.recv_elems;
    if (cfg->coll == FP_REDUCE_SCATTER || cfg->coll == FP_ALLREDUCE)
        cnt = g.count;
    if (b.device)
        FP_CHECK(ctx->dev_ops->copy(ctx->dev, b.hrecv, b.recv, cnt * sizeof(float),
                                    FP_COPY_D2H));
    for (size_t k = 0; k < cnt; k++)
        rep->wrong += b.hrecv[k] != (float)expected(cfg->coll, me, n, g.count, k);
    rep->completed = 1;
cleanup:
    if (st != FP_OK && st != FP_ETIMEOUT)
        fp_error("isolate: round %d: the check of this rank's group failed: %s", round,
                 fp_strerror(st));
    if (group)
        ctx->comm_ops->close(group);
    bufs_close(ctx, &b, st == FP_ETIMEOUT);
    free(took);
}

/* ---- a round ------------------------------------------------------------------------------ */

/* The world ranks of group x of r, ascending, into ranks; their number. */
static int ranks_of(const fp_world *w, const fp_iso_round *r, const fp_iso_group *x, int *ranks,
                    const int *group_of_node)
{
    int k = 0, g = (int)(x - r->groups);
    for (int rank = 0; rank < fp_world_size(w); rank++)
        if (group_of_node[fp_world_node_of(w, rank)] == g)
            ranks[k++] = rank;
    return k;
}

/* A leader's end of the check: its members' reports until the deadline,
 * into its group's outcome (hung when any member's is missing or late). */
static fp_status collect(const iso_run *ir, const int *members, int n, int round,
                         const member_report *mine, double until, group_result *res)
{
    fp_status st = FP_OK;
    member_report *reps = calloc((size_t)n, sizeof *reps);
    MPI_Request *reqs = calloc((size_t)n, sizeof *reqs);
    FP_CHECK_ALLOC(reps);
    FP_CHECK_ALLOC(reqs);
    MPI_Comm comm = fp_world_comm(ir->ctx->world);
    reps[0] = *mine;
    reqs[0] = MPI_REQUEST_NULL;
    for (int i = 1; i < n; i++)
        FP_CHECK_MPI(MPI_Irecv(&reps[i], (int)sizeof reps[i], MPI_BYTE, members[i],
                               tag_of(round, TAG_REPORT), comm, &reqs[i]));
    fp_status got = fp_world_poll(reqs, n, until);
    if (got == FP_EMPI)
        FP_FAIL(FP_EMPI, "isolate: round %d: MPI failure receiving the group's reports", round);
    bool *came = calloc((size_t)n, sizeof *came);
    FP_CHECK_ALLOC(came);
    for (int i = 0; i < n; i++)
        came[i] = got == FP_OK || reqs[i] == MPI_REQUEST_NULL;
    if (got != FP_OK) { /* those that never came are given up */
        for (int i = 1; i < n; i++) {
            int done = 0;
            if (!came[i])
                MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE);
            came[i] = came[i] || done;
        }
        give_up(reqs, n, true);
    }
    memset(res, 0, sizeof *res);
    res->outcome = FP_ISO_OK;
    double slowest = 0;
    for (int i = 0; i < n; i++) {
        if (!came[i] || !reps[i].completed) {
            res->outcome = FP_ISO_HUNG;
            continue;
        }
        res->wrong += reps[i].wrong;
        slowest = reps[i].loop > slowest ? reps[i].loop : slowest;
    }
    if (res->outcome == FP_ISO_OK && res->wrong > 0)
        res->outcome = FP_ISO_WRONG;
    const fp_iso_config *cfg = ir->cfg;
    fp_coll_geom g = fp_coll_geometry(cfg->coll, cfg->bytes, sizeof(float), n);
    res->seconds = res->outcome == FP_ISO_HUNG ? NAN : slowest;
    res->busbw = res->outcome == FP_ISO_HUNG || slowest <= 0
                     ? NAN
                     : (double)g.bytes / slowest * 1e-9 * fp_coll_bus_factor(cfg->coll, n);
    free(came);
cleanup:
    free(reps);
    free(reqs);
    return st;
}

/* Every rank: the outcome of each group of r from its leader, until the
 * deadline (a group whose leader never said is hung). A leader sends its
 * own group's res to every rank. */
static fp_status exchange(iso_run *ir, fp_iso_round *r, const int *leaders, int mine,
                          const group_result *res, double until)
{
    fp_status st = FP_OK;
    fp_world *w = ir->ctx->world;
    MPI_Comm comm = fp_world_comm(w);
    int size = fp_world_size(w), me = ir->ctx->rank, tag = tag_of(r->index, TAG_RESULT);
    group_result *all = calloc((size_t)r->ngroups, sizeof *all);
    MPI_Request *reqs = calloc((size_t)r->ngroups, sizeof *reqs);
    MPI_Request *sends = calloc((size_t)size, sizeof *sends);
    group_result *out = malloc(sizeof *out); /* outlives a send that never completes */
    FP_CHECK_ALLOC(all);
    FP_CHECK_ALLOC(reqs);
    FP_CHECK_ALLOC(sends);
    FP_CHECK_ALLOC(out);
    *out = *res;
    out->sent = fp_world_now(w);
    for (int g = 0; g < r->ngroups; g++) {
        reqs[g] = MPI_REQUEST_NULL;
        if (g == mine && leaders[g] == me)
            all[g] = *out;
        else
            FP_CHECK_MPI(MPI_Irecv(&all[g], (int)sizeof all[g], MPI_BYTE, leaders[g], tag, comm,
                                   &reqs[g]));
    }
    for (int rank = 0; rank < size; rank++) {
        sends[rank] = MPI_REQUEST_NULL;
        if (mine >= 0 && leaders[mine] == me && rank != me)
            FP_CHECK_MPI(MPI_Isend(out, (int)sizeof *out, MPI_BYTE, rank, tag, comm,
                                   &sends[rank]));
    }
    fp_status got = fp_world_poll(reqs, r->ngroups, until);
    if (got == FP_EMPI)
        FP_FAIL(FP_EMPI, "isolate: round %d: MPI failure receiving the groups' outcomes",
                r->index);
    bool *came = calloc((size_t)r->ngroups, sizeof *came);
    FP_CHECK_ALLOC(came);
    for (int g = 0; g < r->ngroups; g++) {
        int done = got == FP_OK || reqs[g] == MPI_REQUEST_NULL;
        if (!done)
            MPI_Test(&reqs[g], &done, MPI_STATUS_IGNORE);
        came[g] = done;
    }
    give_up(reqs, r->ngroups, true);
    double latest = 0;
    for (int g = 0; g < r->ngroups; g++)
        latest = came[g] && all[g].sent > latest ? all[g].sent : latest;
    ir->start = latest > 0 ? latest + START_AFTER : fp_world_now(w);
    for (int g = 0; g < r->ngroups; g++) {
        fp_iso_group *x = &r->groups[g];
        if (!came[g]) { /* never came: the leader hangs */
            x->outcome = FP_ISO_HUNG;
            x->busbw = x->seconds = NAN;
            x->wrong = 0;
            continue;
        }
        x->outcome = (fp_iso_outcome)all[g].outcome;
        x->busbw = all[g].busbw;
        x->seconds = all[g].seconds;
        x->wrong = all[g].wrong;
    }
    free(came);
    /* small messages: their sends complete without their receivers */
    if (fp_world_poll(sends, size, fp_clock() + ir->margin) != FP_OK &&
        give_up(sends, size, false))
        out = NULL; /* left to MPI */
cleanup:
    free(out);
    free(all);
    free(reqs);
    free(sends);
    return st;
}

static fp_status run_round(iso_run *ir, fp_iso_round *r)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = ir->ctx;
    fp_world *w = ctx->world;
    int size = fp_world_size(w), nnodes = fp_world_nnodes(w);
    int *group_of_node = malloc((size_t)nnodes * sizeof *group_of_node);
    int *leaders = calloc((size_t)(r->ngroups ? r->ngroups : 1), sizeof *leaders);
    int *members = malloc((size_t)size * sizeof *members);
    FP_CHECK_ALLOC(group_of_node);
    FP_CHECK_ALLOC(leaders);
    FP_CHECK_ALLOC(members);
    for (int u = 0; u < nnodes; u++)
        group_of_node[u] = -1;
    for (int g = 0; g < r->ngroups; g++)
        for (int k = 0; k < r->groups[g].n; k++)
            group_of_node[r->units[r->groups[g].first + k]] = g;
    for (int g = 0; g < r->ngroups; g++) {
        ranks_of(w, r, &r->groups[g], members, group_of_node);
        leaders[g] = members[0];
    }
    int mine = group_of_node[fp_world_node_of(w, ctx->rank)];
    double wait = ir->start - fp_world_now(w);
    if (wait > 0 && wait <= START_AFTER)
        fp_sleep(wait);
    double t0 = fp_clock(), deadline = t0 + ir->cfg->timeout;
    r->started = fp_world_now(w);
    group_result res = {.outcome = FP_ISO_HUNG, .busbw = NAN, .seconds = NAN};
    if (mine >= 0) {
        int n = ranks_of(w, r, &r->groups[mine], members, group_of_node);
        member_report rep;
        check(ir, members, n, r->index, deadline, ir->start + SETUP, &rep);
        if (members[0] == ctx->rank) {
            FP_CHECK(collect(ir, members, n, r->index, &rep, deadline + ir->margin, &res));
        } else {
            MPI_Request req;
            member_report *out = malloc(sizeof *out); /* left to MPI if never sent */
            FP_CHECK_ALLOC(out);
            *out = rep;
            FP_CHECK_MPI(MPI_Isend(out, (int)sizeof *out, MPI_BYTE, members[0],
                                   tag_of(r->index, TAG_REPORT), fp_world_comm(w), &req));
            if (fp_world_poll(&req, 1, deadline + ir->margin) == FP_OK)
                free(out);
            else
                MPI_Request_free(&req);
        }
    }
    FP_CHECK(exchange(ir, r, leaders, mine, &res, deadline + 2 * ir->margin));
    r->ended = fp_world_now(w);
cleanup:
    free(group_of_node);
    free(leaders);
    free(members);
    return st;
}

/* "round 2 (column): 4 groups; 1 wrong (n1,n5,n9,n13)" on rank 0's log. */
static void log_round(const fp_world *w, const fp_iso_round *r)
{
    int counts[FP_ISO_OUTCOME_COUNT] = {0};
    char bad[256] = "";
    size_t at = 0;
    for (int g = 0; g < r->ngroups; g++) {
        const fp_iso_group *x = &r->groups[g];
        counts[x->outcome]++;
        if (x->outcome == FP_ISO_OK || at + 80 >= sizeof bad)
            continue;
        at += (size_t)snprintf(bad + at, sizeof bad - at, "%s%s %s(", at ? "; " : "",
                               fp_iso_outcome_name(x->outcome), fp_iso_role_name(x->role));
        for (int k = 0; k < x->n && at + 24 < sizeof bad; k++)
            at += (size_t)snprintf(bad + at, sizeof bad - at, "%s%s", k ? "," : "",
                                   fp_world_node_name(w, r->units[x->first + k]));
        at += (size_t)snprintf(bad + at, sizeof bad - at, ")");
    }
    fp_info("isolate: round %d (%s): %d groups, %.1f s; %d ok, %d slow, %d wrong, %d hung%s%s",
            r->index, fp_iso_role_name(r->groups[0].role), r->ngroups, r->ended - r->started,
            counts[FP_ISO_OK], counts[FP_ISO_SLOW], counts[FP_ISO_WRONG], counts[FP_ISO_HUNG],
            at ? ": " : "", bad);
}

fp_status fp_isolate_run(fp_ctx *ctx, const fp_iso_config *cfg, fp_iso_plan **out)
{
    fp_status st = FP_OK;
    fp_iso_plan *p = NULL;
    char err[256];
    *out = NULL;
    bool speak = ctx->rank == 0;
    if (!ctx->comm_ops->open_group) {
        if (speak)
            fp_error("isolate: comm backend %s cannot build group communicators",
                     ctx->comm_ops->name);
        return FP_EUSAGE;
    }
    if (cfg->coll != FP_ALLREDUCE && cfg->coll != FP_ALLGATHER &&
        cfg->coll != FP_REDUCE_SCATTER && cfg->coll != FP_ALLTOALL) {
        if (speak)
            fp_error("isolate: the check is allreduce, allgather, reduce_scatter or alltoall, "
                     "not %s", fp_coll_name(cfg->coll));
        return FP_EUSAGE;
    }
    fp_iso_opts o = {.strategy = cfg->strategy, .nunits = fp_world_nnodes(ctx->world),
                     .slow_limit = cfg->slow_limit,
                     .max_rounds = cfg->max_rounds < MAX_ROUNDS ? cfg->max_rounds : MAX_ROUNDS};
    st = fp_iso_plan_open(&o, &p, err, sizeof err);
    if (st != FP_OK) {
        if (speak)
            fp_error("isolate: %s", err);
        return st;
    }
    if (!(cfg->window > 0) || !(cfg->warm >= 0) || !(cfg->timeout > cfg->warm + cfg->window)) {
        if (speak)
            fp_error("isolate: --window must be above 0 and --timeout above --warm-window plus "
                     "--window");
        st = FP_EUSAGE;
        goto cleanup;
    }
    iso_run ir = {.ctx = ctx, .cfg = cfg, .start = fp_world_now(ctx->world),
                  .margin = cfg->timeout / 4 > 1.0 ? cfg->timeout / 4 : 1.0};
    for (fp_iso_round *r; (r = fp_iso_plan_next(p));) {
        FP_CHECK(run_round(&ir, r));
        FP_CHECK(fp_iso_plan_record(p, r));
        log_round(ctx->world, r);
    }
    *out = p;
    p = NULL;
cleanup:
    fp_iso_plan_free(p);
    return st;
}

/* ---- the end -------------------------------------------------------------------------------- */

bool fp_isolate_any_hung(const fp_iso_plan *p)
{
    for (int i = 0; i < fp_iso_plan_rounds(p); i++) {
        const fp_iso_round *r = fp_iso_plan_round(p, i);
        for (int g = 0; g < r->ngroups; g++)
            if (r->groups[g].outcome == FP_ISO_HUNG)
                return true;
    }
    return false;
}

/* Whether the node of rank was found hung. */
static bool on_hung_node(const fp_iso_plan *p, const fp_world *w, int rank)
{
    const fp_iso_finding *f;
    size_t n = fp_iso_plan_findings(p, &f);
    for (size_t i = 0; i < n; i++)
        if (!f[i].link && f[i].outcome == FP_ISO_HUNG && f[i].unit == fp_world_node_of(w, rank))
            return true;
    return false;
}

int fp_isolate_writer(const fp_iso_plan *p, const fp_world *w)
{
    for (int rank = 0; rank < fp_world_size(w); rank++)
        if (!on_hung_node(p, w, rank))
            return rank;
    return -1;
}

fp_status fp_isolate_finish(fp_ctx *ctx, const fp_iso_plan *p, fp_status st, double timeout,
                            int *finished, int *expected)
{
    fp_world *w = ctx->world;
    MPI_Comm comm = fp_world_comm(w);
    int size = fp_world_size(w), me = ctx->rank, writer = fp_isolate_writer(p, w);
    *finished = *expected = 0;
    if (writer < 0 || on_hung_node(p, w, me))
        return FP_ETIMEOUT;
    if (me != writer) {
        static const int done = 1;
        int *code = malloc(sizeof *code); /* left to MPI if the writer never says */
        MPI_Request reqs[2];
        if (!code)
            return FP_ENOMEM;
        if (MPI_Irecv(code, 1, MPI_INT, writer, TAG_FINAL, comm, &reqs[1]) != MPI_SUCCESS ||
            MPI_Isend(&done, 1, MPI_INT, writer, TAG_FINISHED, comm, &reqs[0]) != MPI_SUCCESS)
            return FP_EMPI;
        if (fp_world_poll(reqs, 2, fp_clock() + timeout) != FP_OK) {
            give_up(reqs + 1, 1, true);
            give_up(reqs, 1, false);
            fp_error("isolate: rank %d (the writer) never said how the isolation ended", writer);
            return FP_ETIMEOUT;
        }
        fp_status got = *code >= 0 && *code < FP_STATUS_COUNT ? (fp_status)*code : FP_EINTERNAL;
        free(code);
        return got;
    }
    int *flags = calloc((size_t)size, sizeof *flags), *codes = calloc((size_t)size, sizeof *codes);
    MPI_Request *reqs = calloc((size_t)size, sizeof *reqs);
    if (!flags || !codes || !reqs) {
        free(flags);
        free(codes);
        free(reqs);
        return FP_ENOMEM;
    }
    for (int rank = 0; rank < size; rank++) {
        reqs[rank] = MPI_REQUEST_NULL;
        if (rank == me || on_hung_node(p, w, rank))
            continue;
        ++*expected;
        MPI_Irecv(&flags[rank], 1, MPI_INT, rank, TAG_FINISHED, comm, &reqs[rank]);
    }
    if (fp_world_poll(reqs, size, fp_clock() + timeout) != FP_OK)
        give_up(reqs, size, true);
    char missing[256] = "", one[96];
    size_t at = 0;
    bool lost = false;
    for (int rank = 0; rank < size; rank++) {
        if (rank == me || on_hung_node(p, w, rank))
            continue;
        if (!flags[rank]) {
            if (at + 100 < sizeof missing)
                at += (size_t)snprintf(missing + at, sizeof missing - at, "%s%s", at ? ", " : "",
                                       fp_world_describe(w, rank, one, sizeof one));
            lost = true;
            continue;
        }
        ++*finished;
    }
    fp_status final = lost ? FP_ETIMEOUT : st;
    for (int rank = 0; rank < size; rank++) {
        codes[rank] = (int)final;
        if (flags[rank])
            MPI_Isend(&codes[rank], 1, MPI_INT, rank, TAG_FINAL, comm, &reqs[rank]);
    }
    if (lost)
        fp_error("isolate: %s never finished (not found hung): the job ends by abort", missing);
    if (fp_world_poll(reqs, size, fp_clock() + timeout) != FP_OK && give_up(reqs, size, false))
        codes = NULL; /* left to MPI */
    free(flags);
    free(codes);
    free(reqs);
    return final;
}
