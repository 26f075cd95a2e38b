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
#include "fleetprint/world.h"

/* A started collective: queued for the comm thread until done; a group's,
 * its requests in flight. */
struct fp_comm_req {
    fp_coll_args a;
    fp_status st;
    bool done;
    fp_comm_req *next;
    MPI_Request req[2];
    int nreq;
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
    /* a group communicator (open_group): non-blocking calls polled against
     * its own deadline; broken once one missed it */
    bool group, broken;
    int size;
    double deadline;
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

/* ---- the calls ------------------------------------------------------------------- */

/* Issue collective a: the blocking call when req is NULL, else the
 * non-blocking one, its requests into req[0..*nreq) (a group's collectives:
 * polled against the group's deadline). finish() completes what MPI leaves
 * undone once it is over. */
static fp_status issue(fp_comm *c, const fp_coll_args *a, MPI_Request *req, int *nreq)
{
    fp_status st = FP_OK;
    MPI_Datatype t = mpi_type(a->dtype);
    MPI_Op op = mpi_op(a->op);
    MPI_Comm comm = c->comm;
    int n = (int)a->count, me = c->rank;
    bool in_place = a->send == a->recv;
    const void *send = in_place ? MPI_IN_PLACE : a->send;
    size_t bytes = a->count * fp_dtype_size(a->dtype);
    if (nreq)
        *nreq = 1;
    switch (a->coll) {
    case FP_ALLREDUCE:
        FP_CHECK_MPI(req ? MPI_Iallreduce(send, a->recv, n, t, op, comm, req)
                         : MPI_Allreduce(send, a->recv, n, t, op, comm));
        break;
    case FP_ALLGATHER:
        /* in place: this rank's block already sits at its offset in recv */
        FP_CHECK_MPI(req ? MPI_Iallgather(send, n, t, a->recv, n, t, comm, req)
                         : MPI_Allgather(send, n, t, a->recv, n, t, comm));
        break;
    case FP_REDUCE_SCATTER:
        FP_CHECK_MPI(req ? MPI_Ireduce_scatter_block(send, a->recv, n, t, op, comm, req)
                         : MPI_Reduce_scatter_block(send, a->recv, n, t, op, comm));
        break;
    case FP_ALLTOALL:
        FP_CHECK_MPI(req ? MPI_Ialltoall(send, n, t, a->recv, n, t, comm, req)
                         : MPI_Alltoall(send, n, t, a->recv, n, t, comm));
        break;
    case FP_BROADCAST:
        /* out of place: the root's send is copied into its recv first */
        if (!in_place && me == a->root)
            memcpy(a->recv, a->send, bytes);
        FP_CHECK_MPI(req ? MPI_Ibcast(a->recv, n, t, a->root, comm, req)
                         : MPI_Bcast(a->recv, n, t, a->root, comm));
        break;
    case FP_REDUCE:
        send = in_place && me != a->root ? a->send : send;
        FP_CHECK_MPI(req ? MPI_Ireduce(send, a->recv, n, t, op, a->root, comm, req)
                         : MPI_Reduce(send, a->recv, n, t, op, a->root, comm));
        break;
    case FP_SENDRECV:
        if (req) {
            *nreq = 2;
            FP_CHECK_MPI(MPI_Irecv(a->recv, n, t, a->recv_peer, 0, comm, &req[1]));
            FP_CHECK_MPI(MPI_Isend(a->send, n, t, a->peer, 0, comm, &req[0]));
        } else {
            FP_CHECK_MPI(MPI_Sendrecv(a->send, n, t, a->peer, 0, a->recv, n, t, a->recv_peer, 0,
                                      comm, MPI_STATUS_IGNORE));
        }
        break;
    case FP_BARRIER:
        FP_CHECK_MPI(req ? MPI_Ibarrier(comm, req) : MPI_Barrier(comm));
        break;
    default:
        st = FP_EUNSUPPORTED;
    }
cleanup:
    return st;
}

/* After a completed reduce-scatter in place MPI leaves the result at the
 * start of recv: move it to this rank's block, where NCCL puts it (comm.h). */
static void finish(const fp_comm *c, const fp_coll_args *a)
{
    size_t bytes = a->count * fp_dtype_size(a->dtype);
    if (a->coll == FP_REDUCE_SCATTER && a->send == a->recv && c->rank > 0)
        memmove((char *)a->recv + (size_t)c->rank * bytes, a->recv, bytes);
}

static fp_status blocking(fp_comm *c, const fp_coll_args *a)
{
    fp_status st = issue(c, a, NULL, NULL);
    if (st == FP_OK)
        finish(c, a);
    return st;
}

static fp_status mpi_run(fp_comm *c, const fp_coll_args *a, const char *what)
{
    if (!mpi_supports(a->dtype, a->op) || a->count > (size_t)0x7fffffff || c->group)
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
    if (c->group) { /* issued now, polled by test and wait */
        st = c->broken ? FP_ETIMEOUT : issue(c, a, q->req, &q->nreq);
        if (st != FP_OK)
            free(q);
        else
            *out = q;
        return st;
    }
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
    if (c->group) {
        int flag = 0;
        if (!q->done && MPI_Testall(q->nreq, q->req, &flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return FP_EMPI;
        if (flag) {
            finish(c, &q->a);
            q->done = true;
        }
        *done = q->done;
        return FP_OK;
    }
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
    if (c->group) { /* the group's deadline; after it, MPI keeps the requests */
        fp_status st = q->done ? FP_OK : fp_world_poll(q->req, q->nreq, c->deadline);
        if (st == FP_OK && !q->done)
            finish(c, &q->a);
        c->broken = c->broken || st == FP_ETIMEOUT;
        if (st == FP_EMPI)
            fp_error("MPI failure in %s", what);
        free(q);
        return st;
    }
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

/* Every started collective must have been waited for. A group's
 * communicator is freed unless an operation on it never completed (MPI
 * still holds it: left to the end of the job). */
static void mpi_close(fp_comm *c)
{
    if (c->group && !c->broken && c->comm != MPI_COMM_NULL)
        MPI_Comm_free(&c->comm);
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

/* The members meet (fp_world_meet), so that MPI_Comm_create_group, which
 * blocks until every member calls it, is called only once all of them are
 * known to come; then the communicator of the group alone. */
static fp_status mpi_open_group(fp_comm **out, fp_comm *parent, const int *members, int n,
                                int tag, double deadline)
{
    fp_status st = FP_OK;
    MPI_Group all = MPI_GROUP_NULL, mine = MPI_GROUP_NULL;
    fp_comm *c = NULL;
    *out = NULL;
    FP_CHECK(mpi_open(&c, parent->world, NULL));
    c->group = true;
    c->comm = MPI_COMM_NULL;
    c->deadline = deadline;
    c->size = n;
    c->rank = fp_world_group_rank(members, n, parent->rank);
    char ready = 1;
    FP_CHECK(fp_world_meet(c->world, members, n, tag, deadline, &ready, 1));
    MPI_Comm world = fp_world_comm(c->world);
    FP_CHECK_MPI(MPI_Comm_group(world, &all));
    FP_CHECK_MPI(MPI_Group_incl(all, n, members, &mine));
    FP_CHECK_MPI(MPI_Comm_create_group(world, mine, 20000 + tag, &c->comm));
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
cleanup:
    if (all != MPI_GROUP_NULL)
        MPI_Group_free(&all);
    if (mine != MPI_GROUP_NULL)
        MPI_Group_free(&mine);
    if (st != FP_OK && c) {
        mpi_close(c);
        c = NULL;
    }
    *out = c;
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
    .run = mpi_run,
    .open_group = mpi_open_group,
};
