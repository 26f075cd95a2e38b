/* The nccl comm backend, bootstrapped over MPI: rank 0 makes the unique id,
 * broadcasts it, each rank joins with its device (one GPU per local rank).
 * Communicators are non-blocking, so every wait polls with the world's
 * deadline and aborts the communicator on expiry. Plain C over nccl.h. */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/comm.h"
#include "fleetprint/cuda_kernels.h"
#include "fleetprint/log.h"
#include "fleetprint/timer.h"

struct fp_comm {
    fp_world *world;
    ncclComm_t comm;
    cudaStream_t stream;
    cudaStream_t compute; /* the device's stream: collectives start after its work */
    cudaEvent_t produced; /* recorded on compute, waited on by stream */
    float *scratch; /* one element, for barriers */
    int rank, size;
    bool group;      /* a group's (open_group): its own deadline, nothing diagnosed */
    double deadline;
};

struct fp_comm_req {
    cudaEvent_t done;
};

#define FP_CHECK_NCCL(expr)                                                                \
    do {                                                                                   \
        ncclResult_t fp__r = (expr);                                                       \
        if (fp__r != ncclSuccess && fp__r != ncclInProgress) {                             \
            st = fp__fail(FP_ENCCL, #expr, __FILE__, __LINE__, "%s", ncclGetErrorString(fp__r)); \
            goto cleanup;                                                                  \
        }                                                                                  \
    } while (0)

/* After an NCCL error: abort the communicator, so that it is never used
 * again (NCCL refuses, then crashes, on a communicator whose last operation
 * failed); later operations fail at once. */
static void abort_comm(fp_comm *c)
{
    if (c->comm)
        ncclCommAbort(c->comm);
    c->comm = NULL;
}

/* The deadline of a wait that begins now. */
static double deadline_of(const fp_comm *c)
{
    return c->group ? c->deadline : fp_clock() + fp_world_timeout(c->world);
}

/* A wait that reached its deadline: the world's names the ranks that never
 * arrived; a group's is abandoned by its caller. */
static fp_status expired(fp_comm *c, const char *what)
{
    return c->group ? FP_ETIMEOUT : fp_world_timed_out(c->world, what);
}

/* Poll until the communicator has no operation in progress or the deadline. */
static fp_status settle(fp_comm *c, const char *what)
{
    double deadline = deadline_of(c);
    ncclResult_t state = ncclInProgress;
    while (fp_clock() < deadline) {
        if (ncclCommGetAsyncError(c->comm, &state) != ncclSuccess || state != ncclInProgress)
            break;
        fp_sleep(1e-4);
    }
    if (state == ncclSuccess)
        return FP_OK;
    abort_comm(c);
    if (state == ncclInProgress)
        return expired(c, what);
    fp_error("NCCL error in %s: %s", what, ncclGetErrorString(state));
    return FP_ENCCL;
}

static void nccl_close(fp_comm *c)
{
    if (!c)
        return;
    if (c->comm)
        ncclCommDestroy(c->comm);
    if (c->scratch)
        cudaFree(c->scratch);
    if (c->produced)
        cudaEventDestroy(c->produced);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    free(c);
}

/* Join the communicator of id as c->rank of c->size, non-blocking, and
 * wait for it within the deadline; c->world and c->compute are set. */
static fp_status join(fp_comm *c, ncclUniqueId id, const char *what)
{
    fp_status st = FP_OK;
    FP_CHECK_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    FP_CHECK_CUDA(cudaMalloc((void **)&c->scratch, sizeof *c->scratch));
    FP_CHECK_CUDA(cudaEventCreateWithFlags(&c->produced, cudaEventDisableTiming));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    FP_CHECK_NCCL(ncclCommInitRankConfig(&c->comm, c->size, id, c->rank, &config));
    FP_CHECK(settle(c, what));
cleanup:
    return st;
}

/* A communicator over the world (members NULL: rank 0 makes the id and
 * broadcasts it) or over the group of members[0..n) (its leader makes the
 * id and hands it to the members as they meet, fp_world_meet: a
 * communicator of the group alone, with the group's deadline). */
static fp_status open_comm(fp_comm **out, fp_world *w, cudaStream_t compute, const int *members,
                           int n, int tag, double deadline)
{
    fp_status st = FP_OK;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    fp_comm *c = calloc(1, sizeof *c);
    FP_CHECK_ALLOC(c);
    c->world = w;
    c->compute = compute;
    c->group = members != NULL;
    c->deadline = deadline;
    c->size = members ? n : fp_world_size(w);
    c->rank = members ? fp_world_group_rank(members, n, fp_world_rank(w)) : fp_world_rank(w);
    if (c->rank == 0)
        FP_CHECK_NCCL(ncclGetUniqueId(&id));
    if (members) {
        FP_CHECK(fp_world_meet(w, members, n, tag, deadline, &id, (int)sizeof id));
    } else {
        MPI_Request req;
        FP_CHECK_MPI(MPI_Ibcast(&id, (int)sizeof id, MPI_BYTE, 0, fp_world_comm(w), &req));
        FP_CHECK(fp_world_wait(w, &req, 1, "NCCL bootstrap"));
    }
    FP_CHECK(join(c, id, members ? "NCCL group set-up" : "NCCL communicator set-up"));
cleanup:
    if (st != FP_OK) {
        nccl_close(c);
        c = NULL;
    }
    *out = c;
    return st;
}

static fp_status nccl_open(fp_comm **out, fp_world *w, fp_device *dev)
{
    return open_comm(out, w, (cudaStream_t)fp_device_cuda.native_stream(dev), NULL, 0, 0, 0);
}

static fp_status nccl_open_group(fp_comm **out, fp_comm *parent, const int *members, int n,
                                 int tag, double deadline)
{
    return open_comm(out, parent->world, parent->compute, members, n, tag, deadline);
}

static bool nccl_supports(fp_dtype t, fp_redop op)
{
    return t == FP_F32 || t == FP_F64 || t == FP_F16 || t == FP_BF16;
}

static ncclDataType_t nccl_type(fp_dtype t)
{
    switch (t) {
    case FP_F64: return ncclFloat64;
    case FP_F16: return ncclFloat16;
    case FP_BF16: return ncclBfloat16;
    default: return ncclFloat32;
    }
}

static ncclRedOp_t nccl_op(fp_redop op)
{
    return op == FP_MAX ? ncclMax : op == FP_MIN ? ncclMin : ncclSum;
}

static fp_status nccl_start(fp_comm *c, const fp_coll_args *a, fp_comm_req **out)
{
    fp_status st = FP_OK;
    bool in_group = false; /* between ncclGroupStart and ncclGroupEnd */
    fp_comm_req *q = NULL;
    if (!c->comm)
        FP_FAIL(FP_ENCCL, "NCCL communicator aborted after an earlier error");
    q = calloc(1, sizeof *q);
    FP_CHECK_ALLOC(q);
    ncclDataType_t t = nccl_type(a->dtype);
    size_t esz = fp_dtype_size(a->dtype);
    /* order after the work already queued on the device (a GEMM producing
     * the send buffer): an event, not a host synchronisation, so compute
     * queued later still overlaps this collective */
    FP_CHECK_CUDA(cudaEventRecord(c->produced, c->compute));
    FP_CHECK_CUDA(cudaStreamWaitEvent(c->stream, c->produced, 0));
    switch (a->coll) {
    case FP_ALLREDUCE:
        FP_CHECK_NCCL(ncclAllReduce(a->send, a->recv, a->count, t, nccl_op(a->op), c->comm, c->stream));
        break;
    case FP_ALLGATHER: {
        /* in place: the send block is this rank's slot of recv */
        const void *send = a->send == a->recv ? (const char *)a->recv + (size_t)c->rank * a->count * esz : a->send;
        FP_CHECK_NCCL(ncclAllGather(send, a->recv, a->count, t, c->comm, c->stream));
        break;
    }
    case FP_REDUCE_SCATTER: {
        void *recv = a->send == a->recv ? (char *)a->recv + (size_t)c->rank * a->count * esz : a->recv;
        FP_CHECK_NCCL(ncclReduceScatter(a->send, recv, a->count, t, nccl_op(a->op), c->comm, c->stream));
        break;
    }
    case FP_ALLTOALL: {
        /* this rank's own block is a device copy: NCCL refuses point-to-point
         * with the rank itself on a one-rank communicator (issue 12) */
        size_t block = a->count * esz, me = (size_t)c->rank;
        FP_CHECK_CUDA(cudaMemcpyAsync((char *)a->recv + me * block, (const char *)a->send + me * block,
                                      block, cudaMemcpyDeviceToDevice, c->stream));
        if (c->size == 1)
            break;
        FP_CHECK_NCCL(ncclGroupStart());
        in_group = true;
        for (int p = 0; p < c->size; p++) {
            if (p == c->rank)
                continue;
            FP_CHECK_NCCL(ncclSend((const char *)a->send + (size_t)p * block, a->count, t, p, c->comm, c->stream));
            FP_CHECK_NCCL(ncclRecv((char *)a->recv + (size_t)p * block, a->count, t, p, c->comm, c->stream));
        }
        in_group = false;
        FP_CHECK_NCCL(ncclGroupEnd());
        break;
    }
    case FP_BROADCAST:
        FP_CHECK_NCCL(ncclBroadcast(a->send, a->recv, a->count, t, a->root, c->comm, c->stream));
        break;
    case FP_REDUCE:
        FP_CHECK_NCCL(ncclReduce(a->send, a->recv, a->count, t, nccl_op(a->op), a->root, c->comm, c->stream));
        break;
    case FP_SENDRECV:
        if (a->peer == c->rank && a->recv_peer == c->rank) { /* to itself: a device copy */
            FP_CHECK_CUDA(cudaMemcpyAsync(a->recv, a->send, a->count * esz, cudaMemcpyDeviceToDevice,
                                          c->stream));
            break;
        }
        FP_CHECK_NCCL(ncclGroupStart());
        in_group = true;
        FP_CHECK_NCCL(ncclSend(a->send, a->count, t, a->peer, c->comm, c->stream));
        FP_CHECK_NCCL(ncclRecv(a->recv, a->count, t, a->recv_peer, c->comm, c->stream));
        in_group = false;
        FP_CHECK_NCCL(ncclGroupEnd());
        break;
    case FP_BARRIER:
        FP_CHECK_NCCL(ncclAllReduce(c->scratch, c->scratch, 1, ncclFloat32, ncclSum, c->comm, c->stream));
        break;
    default:
        FP_FAIL(FP_EUNSUPPORTED, "collective %s is not supported by nccl", fp_coll_name(a->coll));
    }
    FP_CHECK_CUDA(cudaEventCreateWithFlags(&q->done, cudaEventDisableTiming));
    FP_CHECK_CUDA(cudaEventRecord(q->done, c->stream));
cleanup:
    if (in_group) /* never leave a group open: it would swallow later calls */
        ncclGroupEnd();
    if (st == FP_ENCCL)
        abort_comm(c);
    if (st != FP_OK && q) {
        if (q->done)
            cudaEventDestroy(q->done);
        free(q);
        q = NULL;
    }
    *out = q;
    return st;
}

static fp_status nccl_test(fp_comm *c, fp_comm_req *q, bool *done)
{
    cudaError_t e = cudaEventQuery(q->done);
    *done = e == cudaSuccess;
    if (e != cudaSuccess && e != cudaErrorNotReady) {
        fp_error("NCCL operation failed: %s", cudaGetErrorString(e));
        return FP_ECUDA;
    }
    return FP_OK;
}

/* Wait for q; an asynchronous NCCL error (also one that lets the operation
 * "complete" with garbage) or the deadline aborts the communicator. */
static fp_status nccl_wait(fp_comm *c, fp_comm_req *q, const char *what)
{
    fp_status st = FP_OK;
    double deadline = deadline_of(c);
    bool done = false;
    while (st == FP_OK) {
        st = nccl_test(c, q, &done);
        ncclResult_t async = ncclSuccess;
        if (st == FP_OK && !c->comm) {
            fp_error("NCCL error in %s: communicator aborted after an earlier error", what);
            st = FP_ENCCL;
        } else if (st == FP_OK && ncclCommGetAsyncError(c->comm, &async) == ncclSuccess &&
                   async != ncclSuccess && async != ncclInProgress) {
            fp_error("NCCL error in %s: %s", what, ncclGetErrorString(async));
            abort_comm(c);
            st = FP_ENCCL;
        }
        if (st != FP_OK || done)
            break;
        if (fp_clock() > deadline) {
            abort_comm(c);
            st = expired(c, what);
        }
    }
    cudaEventDestroy(q->done);
    free(q);
    return st;
}

const fp_comm_ops fp_comm_nccl = {
    .name = "nccl",
    .device_buffers = true,
    .open = nccl_open,
    .close = nccl_close,
    .supports = nccl_supports,
    .start = nccl_start,
    .test = nccl_test,
    .wait = nccl_wait,
    .open_group = nccl_open_group,
};
