/* The MPI comm backend: host buffers, non-blocking MPI-3 collectives, and the
 * world's deadline on every wait. Open MPI here is not CUDA-aware, so this
 * backend never sees device buffers. */
#include <stdlib.h>
#include <string.h>

#include "fleetprint/comm.h"
#include "fleetprint/log.h"

struct fp_comm {
    fp_world *world;
    MPI_Comm comm;
};

struct fp_comm_req {
    int n;
    MPI_Request r[2];
    /* in-place reduce_scatter: MPI leaves the result at the start of recv;
     * move it to this rank's block, where NCCL puts it (comm.h) */
    char *move_to;
    const char *move_from;
    size_t move_bytes;
};

static fp_status mpi_open(fp_comm **out, fp_world *w, fp_device *dev)
{
    fp_comm *c = calloc(1, sizeof *c);
    if (!c)
        return FP_ENOMEM;
    c->world = w;
    c->comm = fp_world_comm(w);
    *out = c;
    return FP_OK;
}

static void mpi_close(fp_comm *c)
{
    free(c);
}

static bool mpi_supports(fp_dtype t, fp_redop op)
{
    return t == FP_F32 || t == FP_F64;
}

static MPI_Datatype mpi_type(fp_dtype t)
{
    return t == FP_F64 ? MPI_DOUBLE : MPI_FLOAT;
}

static MPI_Op mpi_op(fp_redop op)
{
    return op == FP_MAX ? MPI_MAX : op == FP_MIN ? MPI_MIN : MPI_SUM;
}

static fp_status mpi_start(fp_comm *c, const fp_coll_args *a, fp_comm_req **out)
{
    fp_status st = FP_OK;
    if (!mpi_supports(a->dtype, a->op) || a->count > (size_t)0x7fffffff)
        return FP_EUNSUPPORTED;
    fp_comm_req *q = calloc(1, sizeof *q);
    if (!q)
        return FP_ENOMEM;
    MPI_Datatype t = mpi_type(a->dtype);
    int n = (int)a->count, me;
    MPI_Comm_rank(c->comm, &me);
    bool in_place = a->send == a->recv;
    const void *send = in_place ? MPI_IN_PLACE : a->send;
    q->n = 1;
    switch (a->coll) {
    case FP_ALLREDUCE:
        FP_CHECK_MPI(MPI_Iallreduce(send, a->recv, n, t, mpi_op(a->op), c->comm, q->r));
        break;
    case FP_ALLGATHER:
        /* in place: this rank's block already sits at its offset in recv */
        FP_CHECK_MPI(MPI_Iallgather(send, n, t, a->recv, n, t, c->comm, q->r));
        break;
    case FP_REDUCE_SCATTER:
        FP_CHECK_MPI(MPI_Ireduce_scatter_block(send, a->recv, n, t, mpi_op(a->op), c->comm, q->r));
        if (in_place && me > 0) {
            q->move_bytes = a->count * fp_dtype_size(a->dtype);
            q->move_from = a->recv;
            q->move_to = (char *)a->recv + (size_t)me * q->move_bytes;
        }
        break;
    case FP_ALLTOALL:
        FP_CHECK_MPI(MPI_Ialltoall(send, n, t, a->recv, n, t, c->comm, q->r));
        break;
    case FP_BROADCAST:
        /* out of place: the root's send is copied into its recv first */
        if (!in_place && me == a->root) {
            size_t bytes = a->count * fp_dtype_size(a->dtype);
            for (size_t i = 0; i < bytes; i++)
                ((char *)a->recv)[i] = ((const char *)a->send)[i];
        }
        FP_CHECK_MPI(MPI_Ibcast(a->recv, n, t, a->root, c->comm, q->r));
        break;
    case FP_REDUCE:
        FP_CHECK_MPI(MPI_Ireduce(in_place && me != a->root ? a->send : send, a->recv, n, t,
                                 mpi_op(a->op), a->root, c->comm, q->r));
        break;
    case FP_SENDRECV:
        q->n = 2;
        FP_CHECK_MPI(MPI_Irecv(a->recv, n, t, a->recv_peer, 0, c->comm, &q->r[0]));
        FP_CHECK_MPI(MPI_Isend(a->send, n, t, a->peer, 0, c->comm, &q->r[1]));
        break;
    case FP_BARRIER:
        FP_CHECK_MPI(MPI_Ibarrier(c->comm, q->r));
        break;
    default:
        st = FP_EUNSUPPORTED;
    }
cleanup:
    if (st != FP_OK) {
        free(q);
        q = NULL;
    }
    *out = q;
    return st;
}

static fp_status mpi_test(fp_comm *c, fp_comm_req *q, bool *done)
{
    int flag = 0;
    if (MPI_Testall(q->n, q->r, &flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        return FP_EMPI;
    *done = flag != 0;
    return FP_OK;
}

static fp_status mpi_wait(fp_comm *c, fp_comm_req *q, const char *what)
{
    fp_status st = fp_world_wait(c->world, q->r, q->n, what);
    if (st == FP_OK && q->move_bytes)
        memmove(q->move_to, q->move_from, q->move_bytes);
    free(q);
    return st;
}

const fp_comm_ops fp_comm_mpi = {
    .name = "mpi",
    .device_buffers = false,
    .open = mpi_open,
    .close = mpi_close,
    .supports = mpi_supports,
    .start = mpi_start,
    .test = mpi_test,
    .wait = mpi_wait,
};
