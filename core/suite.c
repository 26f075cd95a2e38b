/* The per-rank test context: backends, injections, sample emission, timed
 * regions and collectives with deadlines. The loop over the selected tests is
 * the app's (app/tests.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleetprint/config.h"
#include "fleetprint/log.h"
#include "fleetprint/suite.h"
#include "fleetprint/timer.h"

/* ---- samples and timing ---------------------------------------------------------- */

fp_status fp_emit(fp_ctx *ctx, const fp_test *t, const fp_metric *m, const fp_entity *e,
                  uint64_t size, int iter, double value)
{
    fp_sample s;
    fp_sample_make(&s, t->suite, t->name, m, e, size, iter, value, fp_world_now(ctx->world));
    return fp_run_add(ctx->local, &s);
}

fp_status fp_timed_start(fp_ctx *ctx)
{
    return ctx->dev_ops->timer_start(ctx->dev);
}

fp_status fp_timed_stop(fp_ctx *ctx, double *seconds)
{
    fp_status st = ctx->dev_ops->timer_stop(ctx->dev, seconds);
    if (st != FP_OK)
        return st;
    double now = fp_world_now(ctx->world);
    double f = fp_inject_slow(ctx->inject, ctx->rank, now);
    if (f > 1) {
        /* the slow device really takes longer: peers waiting on it see it */
        fp_sleep((f - 1) * *seconds);
        *seconds *= f;
    }
    fp_inject_point(ctx->inject, ctx->rank, now);
    return FP_OK;
}

fp_status fp_ctx_barrier(fp_ctx *ctx, const char *what)
{
    fp_inject_point(ctx->inject, ctx->rank, fp_world_now(ctx->world));
    return fp_world_barrier(ctx->world, what);
}

fp_status fp_ctx_sync(fp_ctx *ctx, const char *what)
{
    if (!ctx->comm || !ctx->comm_ops->run)
        return fp_ctx_barrier(ctx, what);
    fp_inject_point(ctx->inject, ctx->rank, fp_world_now(ctx->world));
    fp_coll_args a = {.coll = FP_BARRIER, .dtype = FP_F32, .op = FP_SUM};
    return ctx->comm_ops->run(ctx->comm, &a, what);
}

/* Every collective starts here: an injection point, and an injected slow
 * rank arrives late by (factor - 1) x typical (the caller's shortest call so
 * far, or 1 ms when it has none). */
static void arrive(fp_ctx *ctx, double typical)
{
    double now = fp_world_now(ctx->world);
    fp_inject_point(ctx->inject, ctx->rank, now);
    double slow = fp_inject_slow(ctx->inject, ctx->rank, now);
    if (slow > 1)
        fp_sleep((slow - 1) * (typical > 0 ? typical : 1e-3));
}

/* Stretch of the slowest injected link a collective crosses. */
static double coll_link_factor(const fp_ctx *ctx, const fp_coll_args *a)
{
    if (a->coll == FP_SENDRECV) {
        double f = fp_inject_link(ctx->inject, ctx->rank, a->peer);
        double g = fp_inject_link(ctx->inject, ctx->rank, a->recv_peer);
        return f > g ? f : g;
    }
    double f = 1;
    for (int i = 0; i < ctx->inject->n; i++)
        if (ctx->inject->item[i].kind == FP_INJ_LINK && ctx->inject->item[i].factor > f)
            f = ctx->inject->item[i].factor;
    return f;
}

fp_status fp_coll_start(fp_ctx *ctx, const fp_coll_args *a, fp_coll_op *op)
{
    memset(op, 0, sizeof *op);
    arrive(ctx, 0);
    op->t0 = fp_clock();
    op->factor = coll_link_factor(ctx, a);
    return ctx->comm_ops->start(ctx->comm, a, &op->req);
}

fp_status fp_coll_test(fp_ctx *ctx, fp_coll_op *op, bool *done)
{
    *done = false;
    if (op->ready == 0) {
        bool fin = false;
        fp_status st = ctx->comm_ops->test(ctx->comm, op->req, &fin);
        if (st != FP_OK)
            return st;
        if (!fin)
            return FP_OK;
        double now = fp_clock();
        op->ready = op->t0 + op->factor * (now - op->t0);
    }
    *done = fp_clock() >= op->ready;
    return FP_OK;
}

fp_status fp_coll_wait(fp_ctx *ctx, fp_coll_op *op, const char *what)
{
    fp_status st = ctx->comm_ops->wait(ctx->comm, op->req, what);
    op->req = NULL;
    if (st != FP_OK)
        return st;
    double now = fp_clock();
    if (op->ready == 0)
        op->ready = op->t0 + op->factor * (now - op->t0);
    fp_sleep(op->ready - now);
    return FP_OK;
}

/* Where a collective leaves this rank's result: element offset and count in
 * recv (comm.h's count semantics); count 0 when the rank gets no result. */
static void result_region(const fp_coll_args *a, int rank, int nranks, size_t *off, size_t *n)
{
    *off = 0;
    *n = a->count;
    switch (a->coll) {
    case FP_ALLGATHER:
    case FP_ALLTOALL:
        *n = a->count * (size_t)nranks;
        break;
    case FP_REDUCE_SCATTER:
        if (a->send == a->recv)
            *off = a->count * (size_t)rank;
        break;
    case FP_REDUCE:
        if (rank != a->root)
            *n = 0;
        break;
    case FP_BARRIER:
        *n = 0;
        break;
    default:
        break;
    }
}

/* Flip the top exponent bit of element buf[at] (bit 6 of the most
 * significant byte in every IEEE format), on the device through the
 * backend's copies when buffers live there; twice restores it. */
static fp_status flip(fp_ctx *ctx, const fp_coll_args *a, void *buf, size_t at)
{
    size_t esz = fp_dtype_size(a->dtype);
    unsigned char *elem = (unsigned char *)buf + at * esz, tmp[8];
    if (!ctx->comm_ops->device_buffers) {
        elem[esz - 1] ^= 0x40;
        return FP_OK;
    }
    fp_status st = ctx->dev_ops->copy(ctx->dev, tmp, elem, esz, FP_COPY_D2H);
    tmp[esz - 1] ^= 0x40;
    if (st == FP_OK)
        st = ctx->dev_ops->copy(ctx->dev, elem, tmp, esz, FP_COPY_H2D);
    return st;
}

/* corrupt:rank=R: an element of R's result flipped (the first). */
static fp_status corrupt_result(fp_ctx *ctx, const fp_coll_args *a, int rank, int nranks)
{
    size_t off, n;
    result_region(a, rank, nranks, &off, &n);
    return n ? flip(ctx, a, a->recv, off) : FP_OK;
}

/* corrupt:rank=R,input=1: the first element of R's contribution flipped
 * before the call (after it again, where it is not overwritten: out of place
 * restores the input). No contribution in a barrier, or outside a
 * broadcast's root. */
static fp_status corrupt_input(fp_ctx *ctx, const fp_coll_args *a, int rank, bool after)
{
    if (!fp_inject_corrupt_input(ctx->inject, ctx->rank) || a->coll == FP_BARRIER ||
        a->count == 0 || (a->coll == FP_BROADCAST && rank != a->root) ||
        (after && a->send == a->recv))
        return FP_OK;
    /* in place, allgather's contribution is this rank's block of recv */
    size_t at = a->coll == FP_ALLGATHER && a->send == a->recv ? (size_t)rank * a->count : 0;
    return flip(ctx, a, (void *)(uintptr_t)a->send, at);
}

/* Run one collective to completion: the backend's blocking run where it has
 * one (MPI: the blocking collective, the deadline kept by the watchdog);
 * else its test spins like a blocking MPI call for a while, then its wait,
 * which polls less often as it goes, takes over with the deadline. */
static fp_status start_wait(fp_ctx *ctx, const fp_coll_args *a, const char *what)
{
    if (ctx->comm_ops->run)
        return ctx->comm_ops->run(ctx->comm, a, what);
    double spin_end = fp_clock() + fmin(1.0, 0.25 * fp_world_timeout(ctx->world));
    fp_comm_req *req = NULL;
    fp_status st = ctx->comm_ops->start(ctx->comm, a, &req);
    if (st != FP_OK)
        return st;
    for (bool done = false; st == FP_OK && !done && fp_clock() < spin_end;)
        st = ctx->comm_ops->test(ctx->comm, req, &done);
    fp_status waited = ctx->comm_ops->wait(ctx->comm, req, what); /* frees req */
    return st != FP_OK ? st : waited;
}

/* An injected slow link (link:ranks=A-B,factor=F) under a sendrecv whose
 * transfer took seconds: the rank waits (F - 1) * min(took, typical) more, as
 * a link of 1/F the bandwidth would stretch the transfer. typical caps a wait
 * that includes a peer's own injected delay, so it cannot grow from call to
 * call. Between two partners (peer == recv_peer) a one-element exchange then
 * ends the call for both together, as one transfer would, though each side
 * measured its own took. Not by repeating the transfer F times: beside a CPU
 * hog a healthy exchange is mostly a wait for the scheduler (~20 ms) while the
 * F repeats could all run in one time slice, and a 64x link read 1.06x the
 * lowest healthy link (issue 19). */
static fp_status slow_link(fp_ctx *ctx, const fp_coll_args *a, const char *what, double typical,
                           double took)
{
    double f = fp_inject_link(ctx->inject, ctx->rank, a->peer);
    double g = fp_inject_link(ctx->inject, ctx->rank, a->recv_peer);
    f = f > g ? f : g;
    if (f <= 1)
        return FP_OK;
    fp_sleep((f - 1) * (typical > 0 && typical < took ? typical : took));
    if (a->peer != a->recv_peer)
        return FP_OK;
    fp_coll_args end = *a;
    end.count = 1;
    return start_wait(ctx, &end, what);
}

fp_status fp_collective_timed(fp_ctx *ctx, const fp_coll_args *a, const char *what, double typical,
                              double *enter, double *exit)
{
    arrive(ctx, typical);
    fp_status st = corrupt_input(ctx, a, ctx->rank, false);
    if (st != FP_OK)
        return st;
    double t0 = fp_clock();
    if (enter)
        *enter = fp_world_now(ctx->world);
    st = start_wait(ctx, a, what);
    if (st == FP_OK && a->coll == FP_SENDRECV)
        st = slow_link(ctx, a, what, typical, fp_clock() - t0);
    if (exit)
        *exit = fp_world_now(ctx->world);
    if (st == FP_OK && fp_inject_corrupt(ctx->inject, ctx->rank))
        st = corrupt_result(ctx, a, ctx->rank, ctx->nranks);
    if (st == FP_OK)
        st = corrupt_input(ctx, a, ctx->rank, true);
    return st;
}

fp_status fp_collective(fp_ctx *ctx, const fp_coll_args *a, const char *what)
{
    return fp_collective_timed(ctx, a, what, 0, NULL, NULL);
}

/* ---- collectives of a group ------------------------------------------------------ */

/* How many times as long this rank makes its group's calls: its own
 * injected slowness, and that of an injected slow link from it to a member
 * of a higher rank (one end of a link waits, not both). */
static double group_factor(const fp_ctx *ctx, const int *members, int n, double now)
{
    double f = fp_inject_slow(ctx->inject, ctx->rank, now);
    for (int i = 0; i < ctx->inject->n; i++) {
        const fp_injection *in = &ctx->inject->item[i];
        int lo = in->rank < in->rank_b ? in->rank : in->rank_b;
        int hi = in->rank < in->rank_b ? in->rank_b : in->rank;
        bool both = false;
        for (int k = 0; k < n; k++)
            both = both || members[k] == hi;
        if (in->kind == FP_INJ_LINK && lo == ctx->rank && both && in->factor > f)
            f = in->factor;
    }
    return f;
}

fp_status fp_group_collective(fp_ctx *ctx, fp_comm *group, const int *members, int n,
                              const fp_coll_args *a, double typical, double *enter, double *exit)
{
    double now = fp_world_now(ctx->world);
    fp_inject_point(ctx->inject, ctx->rank, now);
    double factor = group_factor(ctx, members, n, now);
    if (typical > 0 && factor > 1) /* it arrives late */
        fp_sleep((factor - 1) * typical);
    int me = fp_world_group_rank(members, n, ctx->rank);
    fp_status st = corrupt_input(ctx, a, me, false);
    *enter = fp_world_now(ctx->world);
    fp_comm_req *req = NULL;
    if (st == FP_OK)
        st = ctx->comm_ops->start(group, a, &req);
    if (st == FP_OK)
        st = ctx->comm_ops->wait(group, req, fp_coll_name(a->coll)); /* frees req */
    *exit = fp_world_now(ctx->world);
    if (st == FP_OK && fp_inject_corrupt(ctx->inject, ctx->rank))
        st = corrupt_result(ctx, a, me, n);
    if (st == FP_OK)
        st = corrupt_input(ctx, a, me, true);
    return st;
}

/* ---- set-up --------------------------------------------------------------------- */

int fp_threads_per_rank(const fp_config *cfg, const fp_world *w)
{
    if (cfg->threads > 0)
        return cfg->threads;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int per = (int)(cores > 0 ? cores : 1) / fp_world_local_size(w);
    return per > 0 ? per : 1;
}

fp_status fp_ctx_open(fp_ctx *ctx, const fp_config *cfg, fp_world *w, fp_inject_set *inject,
                      fp_run *local)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->cfg = cfg;
    ctx->world = w;
    ctx->rank = fp_world_rank(w);
    ctx->nranks = fp_world_size(w);
    ctx->inject = inject;
    ctx->local = local;
    fp_world_configure(w, cfg->timeout, cfg->verbose, cfg->quiet);

    char err[256];
    fp_status st = fp_inject_parse(&cfg->inject, inject, err, sizeof err);
    if (st == FP_OK)
        st = fp_inject_validate(inject, ctx->nranks, err, sizeof err);
    if (st != FP_OK && ctx->rank == 0)
        fp_error("%s", err);
    if (st == FP_OK)
        st = fp_device_choose(cfg->device, &ctx->dev_ops);
    st = fp_world_agree(w, st);
    if (st != FP_OK)
        return st;

    int count = 0;
    char why[64];
    ctx->dev_ops->probe(&count, why, sizeof why);
    int index = count > 0 ? fp_world_local_rank(w) % count : 0;
    int threads = fp_threads_per_rank(cfg, w);
    st = ctx->dev_ops->open(&ctx->dev, index, threads);
    if (st == FP_OK && cfg->shared_cores && ctx->dev_ops->share_cores)
        ctx->dev_ops->share_cores(ctx->dev);
    if (st == FP_OK)
        st = ctx->dev_ops->query(ctx->dev, &ctx->dev_info);
    /* on the host backend each rank is one compute slot of its node */
    ctx->self = fp_entity_gpu(fp_world_my_node(w), ctx->dev_ops == &fp_device_host
                                                        ? fp_world_local_rank(w)
                                                        : ctx->dev_info.index);
    const char *want = cfg->comm;
    if (strcmp(want, "auto") == 0)
        want = ctx->dev_ops == &fp_device_host ? "mpi" : "nccl";
    ctx->comm_ops = fp_comm_find(want);
    if (ctx->comm_ops)
        ctx->comm_ops = fp_comm_for_device(ctx->comm_ops, ctx->dev_ops);
    if (st == FP_OK && !ctx->comm_ops) {
        st = FP_EUSAGE;
        if (ctx->rank == 0)
            fp_error("unknown comm backend '%s' (choose auto, mpi or nccl)", want);
    }
    if (st == FP_OK && ctx->comm_ops->device_buffers && ctx->dev_ops == &fp_device_host) {
        st = FP_EUSAGE;
        if (ctx->rank == 0)
            fp_error("comm backend %s needs --device cuda", want);
    }
    if (st == FP_OK)
        st = ctx->comm_ops->open(&ctx->comm, w, ctx->dev);
    st = fp_world_agree(w, st);
    if (st == FP_OK)
        fp_info("%d %s on %d %s; device %s (%s), comm %s, %d thread%s per rank; clock "
                "offsets within %.1f us",
                ctx->nranks, fp_plural(ctx->nranks, "rank", "ranks"), fp_world_nnodes(w),
                fp_plural(fp_world_nnodes(w), "node", "nodes"), ctx->dev_ops->name,
                ctx->dev_info.model, ctx->comm_ops->name, threads, threads == 1 ? "" : "s",
                fp_world_clock_error_max(w) * 1e6);
    return st;
}

void fp_ctx_close(fp_ctx *ctx)
{
    if (ctx->comm)
        ctx->comm_ops->close(ctx->comm);
    if (ctx->dev)
        ctx->dev_ops->close(ctx->dev);
    ctx->comm = NULL;
    ctx->dev = NULL;
}

void fp_ctx_describe_run(const fp_ctx *ctx, const char *tag, fp_run *run)
{
    snprintf(run->tag, sizeof run->tag, "%s", tag ? tag : "");
    snprintf(run->command, sizeof run->command, "%s", fp_world_command_line(ctx->world));
    /* an emulated device's runs say so: baselines never use them */
    snprintf(run->device_backend, sizeof run->device_backend, "%s%s", ctx->dev_ops->name,
             ctx->dev_info.emulated ? " (emulated)" : "");
    snprintf(run->comm_backend, sizeof run->comm_backend, "%s", ctx->comm_ops->name);
    snprintf(run->fleetprint_version, sizeof run->fleetprint_version, "%s", FP_VERSION);
    snprintf(run->cuda_version, sizeof run->cuda_version, "%s", ctx->dev_info.runtime_version);
    snprintf(run->driver_version, sizeof run->driver_version, "%s", ctx->dev_info.driver_version);
    snprintf(run->nccl_version, sizeof run->nccl_version, "%s", ctx->dev_info.nccl_version);
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(mpi, &len);
    mpi[strcspn(mpi, ",\n")] = 0;
    snprintf(run->mpi_version, sizeof run->mpi_version, "%.63s", mpi);
    fp_inject_describe(ctx->inject, run->injections, sizeof run->injections);
    fp_run_slurm_context(run);
}

fp_status fp_ctx_gather(fp_ctx *ctx, const char *tag, fp_run *run)
{
    fp_rank_info mine;
    memset(&mine, 0, sizeof mine);
    mine.local_rank = fp_world_local_rank(ctx->world);
    mine.dev = ctx->dev_ops == &fp_device_host ? -1 : ctx->dev_info.index;
    snprintf(mine.model, sizeof mine.model, "%s", ctx->dev_info.model);
    snprintf(mine.uuid, sizeof mine.uuid, "%s", ctx->dev_info.uuid);
    snprintf(mine.pci_bus, sizeof mine.pci_bus, "%s", ctx->dev_info.pci_bus);
    fp_status st = fp_world_gather_run(ctx->world, &mine, ctx->local->samples,
                                       ctx->local->nsamples, run);
    /* the configuration record: the node's and, off the host backend, the device's */
    if (st == FP_OK)
        st = fp_cfg_gather(ctx->world, ctx->dev_ops == &fp_device_host ? NULL : &ctx->dev_info,
                           ctx->inject, run);
    if (st != FP_OK || ctx->rank != 0)
        return st;
    fp_ctx_describe_run(ctx, tag, run);
    run->duration = fp_world_now(ctx->world);
    return FP_OK;
}
