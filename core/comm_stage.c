/* Device buffers over a host comm backend (--device cuda --comm mpi): where
 * MPI is CUDA-aware (MPIX_Query_cuda_support) device pointers go to MPI
 * as they are; otherwise each collective is staged through host buffers (the
 * send side copied down before, the receive side copied up after). An MPI
 * that is not CUDA-aware crashes on a device pointer (issue 12, Debian's
 * Open MPI), so device buffers never reach it. */
#include <mpi.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif
#include <stdint.h>
#include <stdlib.h>

#include "fleetprint/comm.h"
#include "fleetprint/device.h"
#include "fleetprint/log.h"
#include "fleetprint/world.h"

struct fp_comm {
    const fp_comm_ops *inner;
    fp_comm *host;     /* the host backend's communicator */
    fp_device *dev;    /* a cuda device: the only one with its own memory */
    int rank, size;
    bool direct;       /* MPI is CUDA-aware: no staging */
};

struct fp_comm_req {
    fp_comm_req *inner;
    unsigned char *host;     /* staging buffer: the union of send and recv */
    void *recv;              /* device destination of the result */
    const unsigned char *hrecv;
    size_t recv_bytes;
};

bool fp_mpi_cuda_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return false;
#endif
}

/* Bytes of the send and receive buffers of a (device.h's layout). */
static void extents(const fp_coll_args *a, int n, size_t *send, size_t *recv)
{
    size_t b = a->count * fp_dtype_size(a->dtype), all = b * (size_t)n;
    switch (a->coll) {
    case FP_ALLGATHER: *send = b; *recv = all; break;
    case FP_REDUCE_SCATTER: *send = all; *recv = b; break;
    case FP_ALLTOALL: *send = *recv = all; break;
    case FP_BARRIER: *send = *recv = 0; break;
    default: *send = *recv = b; break;
    }
}

static void stage_close(fp_comm *c)
{
    if (!c)
        return;
    if (c->host)
        c->inner->close(c->host);
    free(c);
}

static fp_status stage_open(fp_comm **out, fp_world *w, fp_device *dev)
{
    fp_status st = FP_OK;
    fp_comm *c = calloc(1, sizeof *c);
    FP_CHECK_ALLOC(c);
    c->inner = &fp_comm_mpi;
    c->dev = dev;
    c->rank = fp_world_rank(w);
    c->size = fp_world_size(w);
    c->direct = fp_mpi_cuda_aware();
    FP_CHECK(c->inner->open(&c->host, w, dev));
cleanup:
    if (st != FP_OK) {
        stage_close(c);
        c = NULL;
    }
    *out = c;
    return st;
}

static bool stage_supports(fp_dtype t, fp_redop op)
{
    return fp_comm_mpi.supports(t, op);
}

static fp_status stage_start(fp_comm *c, const fp_coll_args *a, fp_comm_req **out)
{
    fp_status st = FP_OK;
    fp_comm_req *q = calloc(1, sizeof *q);
    FP_CHECK_ALLOC(q);
    size_t sb, rb;
    extents(a, c->size, &sb, &rb);
    fp_coll_args h = *a;
    if (!c->direct && (sb || rb)) {
        /* one host buffer over the union of both ranges keeps in-place layouts */
        uintptr_t s = (uintptr_t)a->send, r = (uintptr_t)a->recv;
        uintptr_t lo = sb && (!rb || s < r) ? s : r;
        uintptr_t hi = sb && s + sb > r + rb ? s + sb : r + rb;
        if (sb && rb && (s + sb <= r || r + rb <= s)) /* apart: stage each alone */
            lo = hi = 0;
        size_t len = lo < hi ? hi - lo : sb + rb;
        q->host = malloc(len ? len : 1);
        FP_CHECK_ALLOC(q->host);
        unsigned char *hs = lo < hi ? q->host + (s - lo) : q->host;
        unsigned char *hr = lo < hi ? q->host + (r - lo) : q->host + sb;
        if (lo < hi)
            FP_CHECK(fp_device_cuda.copy(c->dev, q->host, (const void *)lo, len, FP_COPY_D2H));
        else if (sb)
            FP_CHECK(fp_device_cuda.copy(c->dev, hs, a->send, sb, FP_COPY_D2H));
        h.send = sb ? hs : NULL;
        h.recv = rb ? hr : NULL;
        /* in place, MPI leaves the result anywhere in the union (reduce-scatter:
         * at this rank's block): all of it goes back */
        q->recv = lo < hi ? (void *)lo : a->recv;
        q->hrecv = lo < hi ? q->host : hr;
        q->recv_bytes = lo < hi ? len : rb;
    }
    FP_CHECK(c->inner->start(c->host, &h, &q->inner));
cleanup:
    if (st != FP_OK && q) {
        free(q->host);
        free(q);
        q = NULL;
    }
    *out = q;
    return st;
}

static fp_status stage_test(fp_comm *c, fp_comm_req *q, bool *done)
{
    return c->inner->test(c->host, q->inner, done);
}

/* The result goes up to the device after the host backend's wait, which
 * finishes it (e.g. moves an in-place reduce-scatter's block). */
static fp_status stage_wait(fp_comm *c, fp_comm_req *q, const char *what)
{
    fp_status st = c->inner->wait(c->host, q->inner, what);
    if (st == FP_ETIMEOUT) { /* a group's deadline: MPI keeps the staging buffer */
        free(q);
        return st;
    }
    if (st == FP_OK && q->host && q->recv_bytes)
        st = fp_device_cuda.copy(c->dev, q->recv, q->hrecv, q->recv_bytes, FP_COPY_H2D);
    free(q->host);
    free(q);
    return st;
}

/* A group of the world's ranks, staged as the world is. */
static fp_status stage_open_group(fp_comm **out, fp_comm *parent, const int *members, int n,
                                  int tag, double deadline)
{
    fp_status st = FP_OK;
    fp_comm *c = calloc(1, sizeof *c);
    FP_CHECK_ALLOC(c);
    c->inner = parent->inner;
    c->dev = parent->dev;
    c->direct = parent->direct;
    c->size = n;
    c->rank = fp_world_group_rank(members, n, parent->rank);
    FP_CHECK(c->inner->open_group(&c->host, parent->host, members, n, tag, deadline));
cleanup:
    if (st != FP_OK) {
        stage_close(c);
        c = NULL;
    }
    *out = c;
    return st;
}

/* Device buffers, MPI underneath. */
const fp_comm_ops fp_comm_mpi_staged = {
    .name = "mpi",
    .device_buffers = true,
    .open = stage_open,
    .close = stage_close,
    .supports = stage_supports,
    .start = stage_start,
    .test = stage_test,
    .wait = stage_wait,
    .open_group = stage_open_group,
};

const fp_comm_ops *fp_comm_for_device(const fp_comm_ops *comm, const fp_device_ops *dev)
{
    return comm == &fp_comm_mpi && dev != &fp_device_host ? &fp_comm_mpi_staged : comm;
}
