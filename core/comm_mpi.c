/* The MPI comm backend: host buffers and the blocking MPI collectives, the
 * tuned algorithms applications and the MPI benchmarks use (Open MPI's
 * non-blocking ones go through libnbc, slower at 1-16 MiB). The world's
 * watchdog keeps the deadline of every call (fp_world_step_begin). Started
 * collectives (start/test/wait: compute-communication overlap) run on a comm
 * thread that issues the same blocking calls in start order, so they progress
 * while the caller computes; a caller that waits runs them itself when the
 * comm thread has not taken them yet. Open MPI here is not CUDA-aware, so this backend
 * never sees device buffers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/comm.h"
#include "fleetprint/log.h"

/* A started collective: queued for the comm thread until done. */
struct fp_comm_req {
    fp_coll_args a;
    fp_status st;
    bool done;
    fp_comm_req *next;
};

struct fp_comm {
    fp_world *world;
    MPI_Comm comm;
    int rank;
    /* the comm thread (started with the first start); lock guards the rest */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work, finished;
    fp_comm_req *head, *tail; /* started, not yet done, in start order */
    bool busy;                /* the head is running */
    bool running, stop;
};

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

/* ---- blocking calls ------------------------------------------------------------- */

static fp_status blocking(fp_comm *c, const fp_coll_args *a)
{
    fp_status st = FP_OK;
    MPI_Datatype t = mpi_type(a->dtype);
    int n = (int)a->count, me = c->rank;
    bool in_place = a->send == a->recv;
    const void *send = in_place ? MPI_IN_PLACE : a->send;
    size_t bytes = a->count * fp_dtype_size(a->dtype);
    switch (a->coll) {
    case FP_ALLREDUCE:
        FP_CHECK_MPI(MPI_Allreduce(send, a->recv, n, t, mpi_op(a->op), c->comm));
        break;
    case FP_ALLGATHER:
        /* in place: this rank's block already sits at its offset in recv */
        FP_CHECK_MPI(MPI_Allgather(send, n, t, a->recv, n, t, c->comm));
        break;
    case FP_REDUCE_SCATTER:
        FP_CHECK_MPI(MPI_Reduce_scatter_block(send, a->recv, n, t, mpi_op(a->op), c->comm));
        /* in place, MPI leaves the result at the start of recv; move it to
         * this rank's block, where NCCL puts it (comm.h) */
        if (in_place && me > 0)
            memmove((char *)a->recv + (size_t)me * bytes, a->recv, bytes);
        break;
    case FP_ALLTOALL:
        FP_CHECK_MPI(MPI_Alltoall(send, n, t, a->recv, n, t, c->comm));
        break;
    case FP_BROADCAST:
        /* out of place: the root's send is copied into its recv first */
        if (!in_place && me == a->root)
            memcpy(a->recv, a->send, bytes);
        FP_CHECK_MPI(MPI_Bcast(a->recv, n, t, a->root, c->comm));
        break;
    case FP_REDUCE:
        FP_CHECK_MPI(MPI_Reduce(in_place && me != a->root ? a->send : send, a->recv, n, t,
                                mpi_op(a->op), a->root, c->comm));
        break;
    case FP_SENDRECV:
        FP_CHECK_MPI(MPI_Sendrecv(a->send, n, t, a->peer, 0, a->recv, n, t, a->recv_peer, 0,
                                  c->comm, MPI_STATUS_IGNORE));
        break;
    case FP_BARRIER:
        FP_CHECK_MPI(MPI_Barrier(c->comm));
        break;
    default:
        st = FP_EUNSUPPORTED;
    }
cleanup:
    return st;
}

static fp_status mpi_run(fp_comm *c, const fp_coll_args *a, const char *what)
{
    if (!mpi_supports(a->dtype, a->op) || a->count > (size_t)0x7fffffff)
        return FP_EUNSUPPORTED;
    fp_world_step_begin(c->world, what);
    fp_status st = blocking(c, a);
    fp_world_step_end(c->world);
    return st;
}

/* ---- the comm thread -------------------------------------------------------------- */

/* Run the oldest started collective, unless one is running already (they
 * must run in start order, one at a time): called with lock held, by the
 * comm thread or by a waiting caller that helps (a start followed at once
 * by its wait then costs no hand-over between threads). */
static void run_head(fp_comm *c)
{
    fp_comm_req *q = c->head;
    c->busy = true;
    pthread_mutex_unlock(&c->lock);
    char what[64];
    snprintf(what, sizeof what, "%s (started, running beside compute)", fp_coll_name(q->a.coll));
    fp_status st = mpi_run(c, &q->a, what);
    pthread_mutex_lock(&c->lock);
    q->st = st;
    q->done = true;
    c->busy = false;
    c->head = q->next;
    if (!c->head)
        c->tail = NULL;
    pthread_cond_broadcast(&c->finished);
    pthread_cond_signal(&c->work);
}

static void *comm_thread(void *arg)
{
    fp_comm *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->stop && (!c->head || c->busy))
            pthread_cond_wait(&c->work, &c->lock);
        if (!c->head || c->busy)
            break;
        run_head(c);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

static fp_status mpi_start(fp_comm *c, const fp_coll_args *a, fp_comm_req **out)
{
    fp_status st = FP_OK;
    *out = NULL;
    if (!mpi_supports(a->dtype, a->op) || a->count > (size_t)0x7fffffff || a->coll < 0 ||
        a->coll >= FP_COLL_COUNT)
        return FP_EUNSUPPORTED;
    fp_comm_req *q = calloc(1, sizeof *q);
    FP_CHECK_ALLOC(q);
    q->a = *a;
    pthread_mutex_lock(&c->lock);
    if (!c->running) {
        if (pthread_create(&c->thread, NULL, comm_thread, c) != 0) {
            pthread_mutex_unlock(&c->lock);
            free(q);
            fp_error("cannot start the MPI comm thread");
            return FP_EINTERNAL;
        }
        c->running = true;
    }
    if (c->tail)
        c->tail->next = q;
    else
        c->head = q;
    c->tail = q;
    pthread_cond_signal(&c->work);
    pthread_mutex_unlock(&c->lock);
    *out = q;
cleanup:
    return st;
}

static fp_status mpi_test(fp_comm *c, fp_comm_req *q, bool *done)
{
    pthread_mutex_lock(&c->lock);
    *done = q->done;
    pthread_mutex_unlock(&c->lock);
    return FP_OK;
}

/* Runs the collectives started before q and q itself where the comm thread
 * has not taken them yet; else sleeps until they are done. No deadline of its
 * own: every blocking call has the watchdog's. */
static fp_status mpi_wait(fp_comm *c, fp_comm_req *q, const char *what)
{
    pthread_mutex_lock(&c->lock);
    while (!q->done) {
        if (!c->busy)
            run_head(c); /* q or one started before it: help */
        else
            pthread_cond_wait(&c->finished, &c->lock);
    }
    fp_status st = q->st;
    pthread_mutex_unlock(&c->lock);
    if (st != FP_OK && st != FP_EUNSUPPORTED)
        fp_error("MPI failure in %s", what);
    free(q);
    return st;
}

/* ---- open and close --------------------------------------------------------------- */

static fp_status mpi_open(fp_comm **out, fp_world *w, fp_device *dev)
{
    fp_status st = FP_OK;
    fp_comm *c = calloc(1, sizeof *c);
    FP_CHECK_ALLOC(c);
    c->world = w;
    c->comm = fp_world_comm(w);
    c->rank = fp_world_rank(w);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->work, NULL);
    pthread_cond_init(&c->finished, NULL);
    *out = c;
cleanup:
    return st;
}

/* Every started collective must have been waited for. */
static void mpi_close(fp_comm *c)
{
    if (c->running) {
        pthread_mutex_lock(&c->lock);
        c->stop = true;
        pthread_cond_signal(&c->work);
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->thread, NULL);
    }
    pthread_cond_destroy(&c->work);
    pthread_cond_destroy(&c->finished);
    pthread_mutex_destroy(&c->lock);
    free(c);
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
    .run = mpi_run,
};
