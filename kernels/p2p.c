/* p2p: bandwidth between the devices of one node. cuda: the first rank of
 * each node measures every ordered device pair with peer copies, one way
 * and both ways at once; host backend: ranks of a node paired (local 0-1,
 * 2-3, ...) exchange --max-bytes both ways through the comm backend, and
 * the received data is checked. */
#include <stdlib.h>

#include "fleetprint/kernels.h"
#include "fleetprint/log.h"
#include "fleetprint/timer.h"

static const fp_metric uni_metric = {"uni_bw", "GB/s", FP_BETTER_HIGHER};
static const fp_metric bidir_metric = {"bidir_bw", "GB/s", FP_BETTER_HIGHER};
static const fp_metric wrong_metric = {"wrong", "count", FP_BETTER_LOWER};

/* cuda: every ordered pair of this node's devices, from its first rank. */
static fp_status device_pairs(fp_ctx *ctx, const fp_test *t, size_t bytes)
{
    fp_status st = FP_OK;
    int count = 0;
    char why[128];
    const char *node = fp_world_my_node(ctx->world);
    int iters = FP_SUITE_CFG(fp_kernels_config, ctx)->sweep.iters;
    if (fp_world_local_rank(ctx->world) == 0 && ctx->dev_ops->probe(&count, why, sizeof why) == FP_OK)
        for (int s = 0; s < count; s++)
            for (int d = 0; d < count; d++) {
                if (s == d)
                    continue;
                fp_entity link = fp_entity_link(node, s, node, d);
                for (int bidir = 0; bidir < 2; bidir++) {
                    double sec = 0;
                    st = ctx->dev_ops->peer_copy(ctx->dev, s, d, bytes, bidir, iters, &sec);
                    if (st == FP_EUNSUPPORTED) {
                        fp_info("p2p: no peer access from device %d to %d", s, d);
                        st = FP_OK;
                        break;
                    }
                    if (st != FP_OK)
                        return st;
                    double gbs = (bidir ? 2.0 : 1.0) * (double)bytes * iters / sec * 1e-9;
                    st = fp_emit(ctx, t, bidir ? &bidir_metric : &uni_metric, &link, bytes, -1, gbs);
                    if (st != FP_OK)
                        return st;
                }
            }
    /* the other ranks of the node wait here */
    return fp_ctx_barrier(ctx, "p2p");
}

/* host: local ranks 2i and 2i+1 of each node exchange through the comm backend. */
static fp_status rank_pairs(fp_ctx *ctx, const fp_test *t, size_t bytes)
{
    fp_status st = FP_OK;
    fp_world *w = ctx->world;
    const fp_sweep *sw = &FP_SUITE_CFG(fp_kernels_config, ctx)->sweep;
    int me = fp_world_local_rank(w), node = fp_world_node_of(w, ctx->rank);
    int partner_local = me ^ 1, partner = -1;
    /* the world rank of my partner: ranks of a node in order */
    for (int r = 0, seen = 0; r < ctx->nranks; r++)
        if (fp_world_node_of(w, r) == node && seen++ == partner_local)
            partner = r;
    size_t n = bytes / sizeof(double), wrong = 0;
    double *send = NULL, *recv = NULL, best = 0;
    FP_CHECK(ctx->dev_ops->alloc(ctx->dev, n * sizeof(double), (void **)&send));
    FP_CHECK(ctx->dev_ops->alloc(ctx->dev, n * sizeof(double), (void **)&recv));
    for (size_t i = 0; i < n; i++)
        send[i] = fp_pattern_elem((uint64_t)ctx->rank, i);
    fp_entity link = fp_entity_link(fp_world_my_node(w), me, fp_world_my_node(w), partner_local);
    for (int it = 0; it < sw->warmup + sw->iters; it++) {
        FP_CHECK(fp_ctx_barrier(ctx, "p2p"));
        if (partner < 0)
            continue; /* an odd rank out sits this one out */
        fp_coll_args a = {.coll = FP_SENDRECV, .send = send, .recv = recv, .count = n,
                          .dtype = FP_F64, .peer = partner, .recv_peer = partner};
        double t0 = fp_clock();
        FP_CHECK(fp_collective(ctx, &a, "p2p exchange"));
        double sec = fp_clock() - t0;
        if (it < sw->warmup)
            continue;
        double gbs = 2.0 * (double)bytes / sec * 1e-9;
        best = gbs > best ? gbs : best;
        FP_CHECK(fp_emit(ctx, t, &bidir_metric, &link, bytes, it - sw->warmup, gbs));
    }
    if (partner >= 0) {
        FP_CHECK(fp_emit(ctx, t, &bidir_metric, &link, bytes, -1, best));
        if (sw->check) {
            for (size_t i = 0; i < n; i++)
                wrong += recv[i] != fp_pattern_elem((uint64_t)partner, i);
            if (wrong)
                fp_error("p2p: %zu wrong elements received from rank %d", wrong, partner);
            ctx->wrong += (long long)wrong;
            FP_CHECK(fp_emit(ctx, t, &wrong_metric, &link, bytes, -1, (double)wrong));
        }
    } else if (me == 0 && ctx->rank == fp_world_node_leader(w, node)) {
        fp_info("p2p: node %s has one rank: nothing to pair", fp_world_my_node(w));
    }
cleanup:
    if (send)
        ctx->dev_ops->free(ctx->dev, send);
    if (recv)
        ctx->dev_ops->free(ctx->dev, recv);
    return st;
}

static fp_status p2p_run(fp_ctx *ctx, const fp_test *t)
{
    size_t bytes = (size_t)FP_SUITE_CFG(fp_kernels_config, ctx)->sweep.max_bytes & ~(size_t)7;
    if (bytes < 8) {
        if (ctx->rank == 0)
            fp_error("p2p: --max-bytes must be at least 8");
        return FP_EUSAGE;
    }
    return ctx->dev_ops->peer_copy ? device_pairs(ctx, t, bytes) : rank_pairs(ctx, t, bytes);
}

const fp_test fp_test_p2p = {
    .suite = "kernels",
    .name = "p2p",
    .summary = "bandwidth between the devices (cuda) or ranks (host) of one node",
    .run = p2p_run,
};
