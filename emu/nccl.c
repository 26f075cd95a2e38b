/* fpemu: NCCL on the host. Ranks are processes; a communicator is a POSIX
 * shared-memory segment named from the ncclUniqueId, in which each rank
 * publishes its operation (kind, count, and where its buffers live) and its
 * progress. Operations are queued on the CUDA stream and complete when the
 * peers have arrived, so a hung peer leaves the stream busy, as on a GPU.
 *
 * Rules kept from NCCL (each returns what NCCL returns):
 *  - send/recv on a one-rank communicator: ncclInvalidArgument at the call (the
 *    H100 failure of issue 12: alltoall and sendrecv to the rank itself);
 *  - a send to self needs a matching recv from self in the same group, and a
 *    send and a recv of one group must not overlap: ncclInvalidUsage;
 *  - invalid root/peer/type/op, NULL or non-device buffers: ncclInvalidArgument;
 *  - two ranks on one device (node, index): ncclInvalidUsage at init;
 *  - after an error the communicator is poisoned: every later call returns
 *    ncclInvalidUsage ("Attempt to use communicator before the previous
 *    operation returned ncclSuccess") until ncclCommAbort;
 *  - non-blocking communicators (config.blocking = 0) return ncclInProgress
 *    from init; ncclCommGetAsyncError reports progress and errors.
 * NCCL_DEBUG=WARN or INFO prints the reasons on stderr.
 *
 * Fault injection for tests: FPEMU_NCCL_FAIL=NAME:N makes this process's N-th
 * call NAME (AllReduce, Send, Recv, ...) fail with ncclInvalidArgument, or
 * with NAME "async" its N-th operation end with the asynchronous error
 * ncclRemoteError (as a peer dying would); FPEMU_NCCL_FAIL_RANK=R limits it
 * to communicator rank R. */
#include <fcntl.h>
#include <nccl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "emu.h"

enum { MAXR = 64, MAXG = 256 };

/* nccl.h declares these with () */
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);

typedef struct desc {
    int coll, type, op, root;
    size_t count;
    emu_where send, recv;
} desc;

enum { C_ALLREDUCE, C_ALLGATHER, C_REDUCE_SCATTER, C_BROADCAST, C_REDUCE };

typedef struct slot {
    uint64_t arrived, computed; /* operation sequence numbers, atomics */
    int joined, aborted, device, pid;
    char node[64];
    desc d;
} slot;

typedef struct chan { /* p2p from a to b */
    uint64_t posted, consumed;
    emu_where buf;
    size_t bytes;
} chan;

typedef struct seg {
    int nranks, left;
    slot s[MAXR];
    chan p[MAXR][MAXR];
} seg;

struct ncclComm {
    seg *seg;
    char name[64];
    int rank, n, device;
    bool blocking, ready, aborted;
    ncclResult_t error;
    uint64_t seq;
    uint64_t sent[MAXR], recvd[MAXR];
};

/* the calls of the open group (ncclGroupStart .. ncclGroupEnd) of this thread */
typedef struct p2p {
    bool send;
    int peer;
    char *buf;
    size_t bytes;
} p2p;

typedef struct pending {
    ncclComm_t comm;
    cudaStream_t stream;
    int np;
    p2p ops[MAXG];
} pending;

static _Thread_local struct {
    int depth;
    ncclResult_t error;
    int n;
    pending *p[16];
} G;

/* ---- logging ------------------------------------------------------------------------------- */

static void warn(ncclComm_t c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(ncclComm_t c, const char *fmt, ...)
{
    const char *dbg = getenv("NCCL_DEBUG");
    if (!dbg || (strcasecmp(dbg, "WARN") && strcasecmp(dbg, "INFO") && strcasecmp(dbg, "TRACE")))
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d [%d] NCCL WARN (fpemu) ", emu_node(), (int)getpid(), c ? c->rank : -1);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static ncclResult_t set_error(ncclComm_t c, ncclResult_t r)
{
    if (c && r != ncclSuccess && r != ncclInProgress && (c->error == ncclSuccess || c->error == ncclInProgress))
        c->error = r;
    return r;
}

/* Whether the injected failure hits this call of name (see the top). */
static bool injected(ncclComm_t c, const char *name)
{
    static int calls; /* steps run on the engine thread too */
    const char *spec = getenv("FPEMU_NCCL_FAIL"), *rank = getenv("FPEMU_NCCL_FAIL_RANK");
    size_t len = strlen(name);
    if (!spec || strncmp(spec, name, len) != 0 || spec[len] != ':')
        return false;
    if (rank && *rank && c && atoi(rank) != c->rank)
        return false;
    if (__atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST) != atoi(spec + len + 1))
        return false;
    warn(c, "%s : failure injected by FPEMU_NCCL_FAIL=%s", name, spec);
    return true;
}

/* ---- versions and strings ----------------------------------------------------------------- */

ncclResult_t ncclGetVersion(int *v)
{
    *v = NCCL_VERSION_CODE;
    return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}

const char *ncclGetLastError(ncclComm_t c)
{
    return c && c->error != ncclSuccess ? ncclGetErrorString(c->error) : "";
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    memset(id, 0, sizeof *id);
    if (getrandom(id->internal, 16, 0) != 16)
        return ncclSystemError;
    return ncclSuccess;
}

/* ---- communicators ------------------------------------------------------------------------- */

static bool joined_all(ncclComm_t c)
{
    for (int r = 0; r < c->n; r++)
        if (!__atomic_load_n(&c->seg->s[r].joined, __ATOMIC_ACQUIRE))
            return false;
    return true;
}

/* Finish the set-up once every rank has joined: refuse two ranks on one device. */
static void try_ready(ncclComm_t c)
{
    if (c->ready || c->error != ncclInProgress || !joined_all(c))
        return;
    for (int r = 0; r < c->n; r++)
        if (r != c->rank && c->seg->s[r].device == c->device &&
            !strcmp(c->seg->s[r].node, c->seg->s[c->rank].node)) {
            warn(c, "Duplicate GPU detected : rank %d and rank %d both on CUDA device %d of %s",
                 c->rank, r, c->device, c->seg->s[r].node);
            c->error = ncclInvalidUsage;
            return;
        }
    c->ready = true;
    c->error = ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *out, int n, ncclUniqueId id, int rank,
                                    ncclConfig_t *config)
{
    *out = NULL;
    if (n < 1 || n > MAXR || rank < 0 || rank >= n)
        return ncclInvalidArgument;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
        return ncclUnhandledCudaError;
    ncclComm_t c = calloc(1, sizeof *c);
    if (!c) {
        warn(NULL, "ncclCommInitRankConfig : out of memory for the communicator (%zu bytes)",
             sizeof *c);
        return ncclSystemError;
    }
    c->rank = rank;
    c->n = n;
    c->device = emu_current_device();
    c->blocking = !config || config->blocking != 0;
    c->error = ncclInProgress;
    const unsigned char *u = (const unsigned char *)id.internal;
    snprintf(c->name, sizeof c->name, "/fpemu-nccl-%02x%02x%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7]);
    int fd = shm_open(c->name, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(seg)) != 0) {
        if (fd >= 0)
            close(fd);
        free(c);
        return ncclSystemError;
    }
    c->seg = mmap(NULL, sizeof(seg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (c->seg == MAP_FAILED) {
        free(c);
        return ncclSystemError;
    }
    slot *me = &c->seg->s[rank];
    me->device = c->device;
    me->pid = getpid();
    snprintf(me->node, sizeof me->node, "%s", emu_node());
    __atomic_fetch_add(&c->seg->left, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&me->joined, 1, __ATOMIC_RELEASE);
    *out = c;
    if (!c->blocking) {
        try_ready(c);
        return c->ready ? ncclSuccess : c->error == ncclInProgress ? ncclInProgress : c->error;
    }
    while (c->error == ncclInProgress) {
        try_ready(c);
        if (c->error == ncclInProgress)
            emu_sleep(1e-4);
    }
    return c->error;
}

ncclResult_t ncclCommInitRank(ncclComm_t *out, int n, ncclUniqueId id, int rank)
{
    return ncclCommInitRankConfig(out, n, id, rank, NULL);
}

static void detach(ncclComm_t c)
{
    if (!c->seg)
        return;
    if (__atomic_sub_fetch(&c->seg->left, 1, __ATOMIC_ACQ_REL) == 0)
        shm_unlink(c->name);
    munmap(c->seg, sizeof(seg));
    c->seg = NULL;
}

/* The struct stays allocated (aborted): operations still queued on streams
 * refer to it and complete at once. */
ncclResult_t ncclCommAbort(ncclComm_t c)
{
    if (!c)
        return ncclSuccess;
    if (G.depth > 0)
        warn(c, "communicator aborted or destroyed with a group left open (ncclGroupStart without ncclGroupEnd)");
    if (c->seg)
        __atomic_store_n(&c->seg->s[c->rank].aborted, 1, __ATOMIC_RELEASE);
    c->aborted = true;
    detach(c);
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t c)
{
    return ncclCommAbort(c);
}

ncclResult_t ncclCommFinalize(ncclComm_t c)
{
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *state)
{
    if (!c)
        return ncclInvalidArgument;
    emu_progress();
    if (!c->aborted)
        try_ready(c);
    *state = c->error;
    return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t c, int *n)
{
    *n = c->n;
    return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t c, int *r)
{
    *r = c->rank;
    return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t c, int *d)
{
    *d = c->device;
    return ncclSuccess;
}

/* ---- data types ---------------------------------------------------------------------------- */

static size_t type_size(int t)
{
    switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
    }
}

static double get(const void *p, int t, size_t i)
{
    switch (t) {
    case ncclFloat64: return ((const double *)p)[i];
    case ncclFloat32: return ((const float *)p)[i];
    case ncclFloat16: return (double)((const _Float16 *)p)[i];
    case ncclBfloat16: {
        uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    case ncclInt32: return ((const int32_t *)p)[i];
    case ncclUint32: return ((const uint32_t *)p)[i];
    case ncclInt64: return (double)((const int64_t *)p)[i];
    case ncclUint64: return (double)((const uint64_t *)p)[i];
    case ncclInt8: return ((const int8_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

static void put(void *p, int t, size_t i, double v)
{
    switch (t) {
    case ncclFloat64: ((double *)p)[i] = v; break;
    case ncclFloat32: ((float *)p)[i] = (float)v; break;
    case ncclFloat16: ((_Float16 *)p)[i] = (_Float16)v; break;
    case ncclBfloat16: {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        u += 0x7fff + ((u >> 16) & 1); /* round to nearest even */
        ((uint16_t *)p)[i] = (uint16_t)(u >> 16);
        break;
    }
    case ncclInt32: ((int32_t *)p)[i] = (int32_t)v; break;
    case ncclUint32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case ncclInt64: ((int64_t *)p)[i] = (int64_t)v; break;
    case ncclUint64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case ncclInt8: ((int8_t *)p)[i] = (int8_t)v; break;
    default: ((uint8_t *)p)[i] = (uint8_t)v; break;
    }
}

static double reduce(int op, double a, double b)
{
    switch (op) {
    case ncclProd: return a * b;
    case ncclMax: return a > b ? a : b;
    case ncclMin: return a < b ? a : b;
    default: return a + b;
    }
}

/* ---- groups and argument checks ----------------------------------------------------------- */


/* Poisoned or not ready: what a call on c returns before anything else. */
static ncclResult_t usable(ncclComm_t c)
{
    if (!c || c->aborted)
        return ncclInvalidArgument;
    try_ready(c);
    if (c->error == ncclInProgress)
        return ncclInvalidUsage;
    if (c->error != ncclSuccess) {
        warn(c, "Attempt to use communicator before the previous operation returned ncclSuccess");
        return ncclInvalidUsage;
    }
    return ncclSuccess;
}

static ncclResult_t check_buf(ncclComm_t c, const void *p, size_t bytes, const char *what,
                              const char *op)
{
    if (bytes == 0)
        return ncclSuccess;
    if (!p || !emu_device_range(p, bytes, NULL)) {
        warn(c, "%s : %s %p is not a valid device pointer for %zu bytes", op, what, p, bytes);
        return ncclInvalidArgument;
    }
    return ncclSuccess;
}

/* ---- the operations on the stream --------------------------------------------------------- */

typedef struct coll_op {
    ncclComm_t comm;
    uint64_t seq;
    int phase;
    desc d;
    char *send, *recv; /* this rank's buffers */
    void *tmp;
    size_t tmp_bytes;
} coll_op;

static bool peers_at(ncclComm_t c, size_t off, uint64_t seq)
{
    for (int r = 0; r < c->n; r++) {
        const uint64_t *v = (const uint64_t *)((const char *)&c->seg->s[r] + off);
        if (__atomic_load_n(v, __ATOMIC_ACQUIRE) < seq)
            return false;
    }
    return true;
}

static size_t recv_elems(const desc *d, int n)
{
    return d->coll == C_ALLGATHER ? d->count * (size_t)n : d->count;
}

/* Compute this rank's result into tmp from every rank's send buffer. */
static ncclResult_t compute(coll_op *o)
{
    ncclComm_t c = o->comm;
    const desc *d = &o->d;
    for (int r = 0; r < c->n; r++) {
        const desc *pd = &c->seg->s[r].d;
        if (pd->coll != d->coll || pd->count != d->count || pd->type != d->type || pd->root != d->root) {
            warn(c, "rank %d called a different collective (%d count %zu) than rank %d (%d count %zu)",
                 r, pd->coll, pd->count, c->rank, d->coll, d->count);
            return ncclInvalidUsage;
        }
    }
    size_t n = recv_elems(d, c->n);
    double *acc = calloc(n ? n : 1, sizeof *acc);
    if (!acc) {
        warn(c, "collective %d : out of memory for %zu accumulator elements", d->coll, n);
        return ncclSystemError;
    }
    for (int r = 0; r < c->n; r++) {
        if (d->coll == C_BROADCAST && r != d->root)
            continue;
        const desc *pd = &c->seg->s[r].d;
        const char *src = r == c->rank ? o->send : emu_map_remote(&pd->send);
        if (!src) {
            warn(c, "collective %d : cannot map the send buffer of rank %d", d->coll, r);
            free(acc);
            return ncclSystemError;
        }
        for (size_t i = 0; i < n; i++) {
            size_t at = d->coll == C_REDUCE_SCATTER ? (size_t)c->rank * d->count + i : i;
            if (d->coll == C_ALLGATHER) {
                if (i / d->count == (size_t)r)
                    acc[i] = get(src, d->type, i % d->count);
            } else if (d->coll == C_BROADCAST) {
                acc[i] = get(src, d->type, i);
            } else {
                double v = get(src, d->type, at);
                acc[i] = r == 0 ? v : reduce(d->op, acc[i], v);
            }
        }
        if (r != c->rank)
            emu_unmap_remote((void *)src);
    }
    o->tmp = acc;
    o->tmp_bytes = n;
    return ncclSuccess;
}

static bool coll_step(emu_op *op)
{
    coll_op *o = op->blob;
    ncclComm_t c = o->comm;
    if (c->aborted || c->error != ncclSuccess)
        return true;
    slot *me = &c->seg->s[c->rank];
    if (o->phase == 0) { /* publish */
        if (injected(c, "async")) {
            set_error(c, ncclRemoteError);
            return true;
        }
        me->d = o->d;
        __atomic_store_n(&me->arrived, o->seq, __ATOMIC_RELEASE);
        o->phase = 1;
    }
    if (o->phase == 1) { /* every rank arrived: read them */
        if (!peers_at(c, offsetof(slot, arrived), o->seq))
            return false;
        ncclResult_t r = compute(o);
        if (r != ncclSuccess) {
            set_error(c, r);
            return true;
        }
        __atomic_store_n(&me->computed, o->seq, __ATOMIC_RELEASE);
        o->phase = 2;
    }
    /* every rank has read: write the result (in place is safe now) */
    if (!peers_at(c, offsetof(slot, computed), o->seq))
        return false;
    if (o->d.coll != C_REDUCE || c->rank == o->d.root)
        for (size_t i = 0; i < o->tmp_bytes; i++)
            put(o->recv, o->d.type, i, ((double *)o->tmp)[i]);
    free(o->tmp);
    o->tmp = NULL;
    return true;
}

static void coll_drop(emu_op *op)
{
    free(((coll_op *)op->blob)->tmp);
}

static ncclResult_t coll(int kind, const char *name, const void *send, void *recv, size_t count,
                         ncclDataType_t t, ncclRedOp_t op, int root, ncclComm_t c, cudaStream_t s)
{
    ncclResult_t r = usable(c);
    if (r != ncclSuccess)
        return r;
    if (injected(c, name))
        return set_error(c, ncclInvalidArgument);
    size_t esz = type_size(t);
    if (esz == 0 || (int)op < 0 || op >= ncclNumOps || root < 0 || root >= c->n) {
        warn(c, "%s : invalid type %d, op %d or root %d", name, (int)t, (int)op, root);
        return set_error(c, ncclInvalidArgument);
    }
    size_t sbytes = (kind == C_REDUCE_SCATTER ? count * (size_t)c->n : count) * esz;
    size_t rbytes = (kind == C_ALLGATHER ? count * (size_t)c->n : count) * esz;
    bool need_send = kind != C_BROADCAST || c->rank == root;
    bool need_recv = kind != C_REDUCE || c->rank == root;
    if ((need_send && (r = check_buf(c, send, sbytes, "sendbuff", name)) != ncclSuccess) ||
        (need_recv && (r = check_buf(c, recv, rbytes, "recvbuff", name)) != ncclSuccess))
        return set_error(c, r);
    if (G.depth > 0) {
        warn(c, "%s : collectives inside a group are not emulated", name);
        return set_error(c, ncclInvalidUsage);
    }
    coll_op o = {c, ++c->seq, 0, {kind, (int)t, (int)op, root, count, {0}, {0}}, (char *)send, recv, NULL, 0};
    if (need_send)
        emu_device_range(send, 1, &o.d.send);
    emu_op *e = emu_op_new(coll_step, &o, sizeof o);
    if (e)
        e->drop = coll_drop;
    else
        warn(c, "%s : out of memory queuing the operation", name);
    return emu_enqueue(s, e) == cudaSuccess ? ncclSuccess : set_error(c, ncclUnhandledCudaError);
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t t,
                           ncclRedOp_t op, ncclComm_t c, cudaStream_t s)
{
    return coll(C_ALLREDUCE, "AllReduce", send, recv, count, t, op, 0, c, s);
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t count, ncclDataType_t t,
                           ncclComm_t c, cudaStream_t s)
{
    return coll(C_ALLGATHER, "AllGather", send, recv, count, t, ncclSum, 0, c, s);
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count, ncclDataType_t t,
                               ncclRedOp_t op, ncclComm_t c, cudaStream_t s)
{
    return coll(C_REDUCE_SCATTER, "ReduceScatter", send, recv, count, t, op, 0, c, s);
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t t, int root,
                           ncclComm_t c, cudaStream_t s)
{
    return coll(C_BROADCAST, "Broadcast", send, recv, count, t, ncclSum, root, c, s);
}

ncclResult_t ncclReduce(const void *send, void *recv, size_t count, ncclDataType_t t,
                        ncclRedOp_t op, int root, ncclComm_t c, cudaStream_t s)
{
    return coll(C_REDUCE, "Reduce", send, recv, count, t, op, root, c, s);
}

/* ---- point-to-point ----------------------------------------------------------------------- */

typedef struct p2p_op {
    ncclComm_t comm;
    int np;
    p2p ops[MAXG];
    uint64_t seq[MAXG]; /* send: the posted number; recv: the number awaited */
    bool done[MAXG], posted[MAXG], started;
} p2p_op;

static bool p2p_step(emu_op *op)
{
    p2p_op *o = op->blob;
    ncclComm_t c = o->comm;
    if (c->aborted || c->error != ncclSuccess)
        return true;
    if (!o->started && (o->started = true) && injected(c, "async")) {
        set_error(c, ncclRemoteError);
        return true;
    }
    bool all = true;
    for (int i = 0; i < o->np; i++) {
        p2p *x = &o->ops[i];
        if (o->done[i])
            continue;
        if (x->peer == c->rank) { /* self: the matching recv copies */
            if (x->send) {
                o->done[i] = true;
                continue;
            }
            for (int j = 0; j < o->np; j++)
                if (o->ops[j].send && o->ops[j].peer == c->rank && o->ops[j].bytes == x->bytes)
                    memmove(x->buf, o->ops[j].buf, x->bytes);
            o->done[i] = true;
            continue;
        }
        if (x->send) {
            chan *ch = &c->seg->p[c->rank][x->peer];
            if (!o->posted[i]) {
                if (__atomic_load_n(&ch->consumed, __ATOMIC_ACQUIRE) != ch->posted) {
                    all = false;
                    continue;
                }
                emu_device_range(x->buf, 1, &ch->buf);
                ch->bytes = x->bytes;
                o->seq[i] = ch->posted + 1;
                __atomic_store_n(&ch->posted, o->seq[i], __ATOMIC_RELEASE);
                o->posted[i] = true;
            }
            o->done[i] = __atomic_load_n(&ch->consumed, __ATOMIC_ACQUIRE) >= o->seq[i];
        } else {
            chan *ch = &c->seg->p[x->peer][c->rank];
            if (__atomic_load_n(&ch->posted, __ATOMIC_ACQUIRE) <= ch->consumed) {
                all = false;
                continue;
            }
            if (ch->bytes != x->bytes) {
                warn(c, "Recv from rank %d : %zu bytes expected, %zu sent", x->peer, x->bytes, ch->bytes);
                set_error(c, ncclInvalidUsage);
                return true;
            }
            char *src = emu_map_remote(&ch->buf);
            if (!src) {
                set_error(c, ncclSystemError);
                return true;
            }
            memcpy(x->buf, src, x->bytes);
            emu_unmap_remote(src);
            __atomic_store_n(&ch->consumed, ch->consumed + 1, __ATOMIC_RELEASE);
            o->done[i] = true;
        }
        all &= o->done[i];
    }
    return all;
}

static pending *pending_for(ncclComm_t c, cudaStream_t s)
{
    for (int i = 0; i < G.n; i++)
        if (G.p[i]->comm == c)
            return G.p[i]->stream == s ? G.p[i] : NULL;
    if (G.n == 16)
        return NULL;
    pending *p = calloc(1, sizeof *p);
    if (!p) {
        warn(c, "out of memory for a group's operations (%zu bytes)", sizeof *p);
        return NULL;
    }
    p->comm = c;
    p->stream = s;
    G.p[G.n++] = p;
    return p;
}

static ncclResult_t point(bool send, void *buf, size_t count, ncclDataType_t t, int peer,
                          ncclComm_t c, cudaStream_t s)
{
    const char *name = send ? "Send" : "Recv";
    ncclResult_t r = usable(c);
    if (r != ncclSuccess)
        return G.depth ? (G.error = r) : r;
    size_t bytes = count * type_size(t);
    if (injected(c, name)) {
        r = ncclInvalidArgument;
    } else if (type_size(t) == 0 || peer < 0 || peer >= c->n) {
        warn(c, "%s : invalid type %d or peer %d", name, (int)t, peer);
        r = ncclInvalidArgument;
    } else if (c->n == 1) {
        warn(c, "%s : point-to-point on a one-rank communicator (peer is the rank itself)", name);
        r = ncclInvalidArgument;
    } else {
        r = check_buf(c, buf, bytes, "buff", name);
    }
    pending *p = r == ncclSuccess ? pending_for(c, s) : NULL;
    if (r == ncclSuccess && (!p || p->np == MAXG)) {
        warn(c, "%s : too many operations in one group", name);
        r = ncclInvalidUsage;
    }
    for (int i = 0; r == ncclSuccess && i < p->np; i++) {
        const p2p *q = &p->ops[i];
        if (q->send != send && bytes && q->bytes && (char *)buf < q->buf + q->bytes &&
            q->buf < (char *)buf + bytes) {
            warn(c, "%s : buffer overlaps the %s buffer of the same group (in-place p2p)", name,
                 q->send ? "send" : "recv");
            r = ncclInvalidUsage;
        }
    }
    if (r != ncclSuccess) {
        set_error(c, r);
        if (G.depth)
            G.error = r;
        return r;
    }
    p->ops[p->np++] = (p2p){send, peer, buf, bytes};
    return G.depth ? ncclSuccess : ncclGroupEnd();
}

ncclResult_t ncclSend(const void *buf, size_t count, ncclDataType_t t, int peer, ncclComm_t c,
                      cudaStream_t s)
{
    if (G.depth == 0)
        G.depth = 1; /* an ungrouped call is a group of one; point() ends it */
    return point(true, (void *)buf, count, t, peer, c, s);
}

ncclResult_t ncclRecv(void *buf, size_t count, ncclDataType_t t, int peer, ncclComm_t c,
                      cudaStream_t s)
{
    if (G.depth == 0)
        G.depth = 1;
    return point(false, buf, count, t, peer, c, s);
}

ncclResult_t ncclGroupStart(void)
{
    G.depth++;
    return ncclSuccess;
}

static ncclResult_t submit(pending *p)
{
    ncclComm_t c = p->comm;
    for (int i = 0; i < p->np; i++) {
        if (p->ops[i].peer != c->rank)
            continue;
        bool match = false;
        for (int j = 0; j < p->np; j++)
            match |= p->ops[j].peer == c->rank && p->ops[j].send != p->ops[i].send &&
                     p->ops[j].bytes == p->ops[i].bytes;
        if (!match) {
            warn(c, "Trying to %s self without a matching %s", p->ops[i].send ? "send to" : "recv from",
                 p->ops[i].send ? "recv" : "send");
            return set_error(c, ncclInvalidUsage);
        }
    }
    p2p_op *o = calloc(1, sizeof *o);
    if (!o) {
        warn(c, "ncclGroupEnd : out of memory for the point-to-point operation (%zu bytes)",
             sizeof *o);
        return ncclSystemError;
    }
    o->comm = c;
    o->np = p->np;
    memcpy(o->ops, p->ops, sizeof p->ops);
    emu_op *e = emu_op_new(p2p_step, o, sizeof *o);
    free(o);
    if (!e)
        warn(c, "ncclGroupEnd : out of memory queuing the point-to-point operation");
    return emu_enqueue(p->stream, e) == cudaSuccess ? ncclSuccess : set_error(c, ncclUnhandledCudaError);
}

ncclResult_t ncclGroupEnd(void)
{
    if (G.depth == 0)
        return ncclInvalidUsage;
    if (--G.depth > 0)
        return ncclSuccess;
    ncclResult_t r = G.error;
    for (int i = 0; i < G.n; i++) {
        if (r == ncclSuccess)
            r = submit(G.p[i]);
        else
            set_error(G.p[i]->comm, r);
        free(G.p[i]);
    }
    G.n = 0;
    G.error = ncclSuccess;
    return r;
}
