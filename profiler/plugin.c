/* libnccl-profiler-fleetprint.so: an NCCL profiler plugin (API v1 to v5) that
 * records collective, point-to-point, proxy and kernel-channel events of a
 * running job, one JSON Lines file per process (docs/trace.md).
 *
 * Hot path: startEvent takes a slot from the communicator's preallocated event
 * pool (one atomic add and one exchange), stopEvent copies the finished record
 * into the calling thread's ring (single producer, single consumer, no lock)
 * and frees the slot. A busy slot or a full ring drops the event and counts it;
 * nothing ever waits. A background thread drains the rings into the file.
 *
 * Process-wide state: NCCL calls init once per communicator, but one writer
 * thread, one file and the list of per-thread rings belong to the process, so
 * they live in one static struct guarded by a mutex on the cold paths (init,
 * finalize, a thread's first event). This is the one place fleetprint keeps
 * mutable globals; a plugin's entry points give it no other handle. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl_profiler_abi.h"
#include "record.h"

#define FPP_EXPORT __attribute__((visibility("default")))

enum {
    DEFAULT_MASK = ncclProfileGroup | ncclProfileColl | ncclProfileP2p | ncclProfileProxyOp |
                   ncclProfileProxyStep | ncclProfileKernelCh,
    DEFAULT_RING = 1 << 14,   /* records per thread */
    DEFAULT_EVENTS = 1 << 12, /* in-flight events per communicator */
    FLUSH_NS = 20 * 1000 * 1000
};

/* ---- settings and clock ---------------------------------------------------------------- */

typedef struct settings {
    char dir[PATH_MAX - 64];
    int mask;
    uint32_t ring, events; /* powers of two */
} settings;

static uint32_t pow2_env(const char *name, uint32_t dflt)
{
    const char *s = getenv(name);
    char *end;
    unsigned long v = s && *s ? strtoul(s, &end, 0) : 0;
    if (!s || !*s || *end || v < 16 || v > (1ul << 24)) return dflt;
    uint32_t p = 16;
    while (p < v)
        p <<= 1;
    return p;
}

static settings read_settings(void)
{
    settings s = {.mask = DEFAULT_MASK};
    const char *dir = getenv("FLEETPRINT_TRACE_DIR");
    snprintf(s.dir, sizeof s.dir, "%s", dir ? dir : "");
    const char *m = getenv("FLEETPRINT_TRACE_MASK");
    if (m && strcmp(m, "all") == 0)
        s.mask = 0xfff;
    else if (m && *m)
        s.mask = (int)strtol(m, NULL, 0);
    s.ring = pow2_env("FLEETPRINT_TRACE_RING", DEFAULT_RING);
    s.events = pow2_env("FLEETPRINT_TRACE_EVENTS", DEFAULT_EVENTS);
    return s;
}

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* ---- per-thread rings ---------------------------------------------------------------------- */

typedef struct ring {
    _Atomic uint64_t head; /* written by the owning thread */
    _Atomic uint64_t tail; /* written by the writer thread */
    _Atomic uint64_t dropped;
    uint32_t mask;
    struct ring *next;
    fpp_rec *recs;
} ring;

typedef struct event event;
typedef struct ctx {
    uint64_t comm;
    uint64_t serial; /* event ids are serial << 40 | the pool's counter */
    int rank, nranks, version;
    uint32_t mask;
    _Atomic uint64_t next, dropped;
    event *pool;
    ncclDebugLogger_t logfn; /* NULL before v4 */
} ctx;

struct event {
    _Atomic int busy;
    ctx *c;
    fpp_rec r;
};

static struct proc {
    pthread_mutex_t lock;
    int refs;
    _Atomic unsigned gen; /* bumped when the rings are freed: stale thread pointers renew */
    settings set;
    FILE *out;
    pthread_t writer;
    _Atomic int stop;
    ring *_Atomic rings;
    uint64_t serials; /* communicators traced so far (under lock) */
    _Atomic uint64_t written;
} proc = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local ring *my_ring;
static _Thread_local unsigned my_gen;

/* The calling thread's ring, made on its first event; NULL when out of memory. */
static ring *thread_ring(void)
{
    if (my_ring && my_gen == proc.gen) return my_ring;
    ring *r = calloc(1, sizeof *r);
    fpp_rec *recs = r ? calloc(proc.set.ring, sizeof *recs) : NULL;
    if (!recs) {
        free(r);
        return NULL;
    }
    r->recs = recs;
    r->mask = proc.set.ring - 1;
    r->next = atomic_load(&proc.rings);
    while (!atomic_compare_exchange_weak(&proc.rings, &r->next, r))
        ;
    my_ring = r;
    my_gen = proc.gen;
    return r;
}

static void push(const fpp_rec *rec)
{
    ring *r = thread_ring();
    if (!r) return;
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (h - t > r->mask) {
        atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
        return;
    }
    r->recs[h & r->mask] = *rec;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

/* ---- the writer thread -------------------------------------------------------------------------
 */

static void drain(void)
{
    char line[1024];
    for (ring *r = atomic_load(&proc.rings); r; r = r->next) {
        uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
        uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
        for (; t < h; t++) {
            size_t n = fpp_format(&r->recs[t & r->mask], line, sizeof line);
            if (n && fwrite(line, 1, n, proc.out) == n)
                atomic_fetch_add_explicit(&proc.written, 1, memory_order_relaxed);
        }
        atomic_store_explicit(&r->tail, h, memory_order_release);
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    const struct timespec nap = {0, FLUSH_NS};
    while (!atomic_load(&proc.stop)) {
        drain();
        fflush(proc.out);
        nanosleep(&nap, NULL);
    }
    drain();
    return NULL;
}

/* World rank of this process from the launcher's environment, -1 if unknown. */
static int world_rank(void)
{
    static const char *const vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID",
                                       "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return atoi(v);
    }
    return -1;
}

/* Open the process's file and start the writer (proc.lock held). */
static int proc_start(void)
{
    char host[128] = "host", path[PATH_MAX];
    gethostname(host, sizeof host - 1);
    int wr = world_rank();
    if (wr >= 0)
        snprintf(path, sizeof path, "%s/fleetprint-trace.r%05d.jsonl", proc.set.dir, wr);
    else
        snprintf(path, sizeof path, "%s/fleetprint-trace.%s.%d.jsonl", proc.set.dir, host,
                 (int)getpid());
    proc.out = fopen(path, "w");
    if (!proc.out) return -1;
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    uint64_t mono = now_ns();
    char line[512];
    uint64_t wall_ns = (uint64_t)wall.tv_sec * UINT64_C(1000000000) + (uint64_t)wall.tv_nsec;
    size_t n = fpp_format_header(line, sizeof line, host, (int)getpid(), wr, mono, wall_ns,
                                 proc.set.mask, proc.set.ring, proc.set.events);
    fwrite(line, 1, n, proc.out);
    fflush(proc.out);
    atomic_store(&proc.stop, 0);
    if (pthread_create(&proc.writer, NULL, writer_main, NULL) != 0) {
        fclose(proc.out);
        proc.out = NULL;
        return -1;
    }
    return 0;
}

/* Stop the writer, write the footer, free the rings (proc.lock held). */
static void proc_stop(void)
{
    atomic_store(&proc.stop, 1);
    pthread_join(proc.writer, NULL);
    uint64_t dropped = 0;
    ring *r = atomic_exchange(&proc.rings, NULL);
    while (r) {
        ring *next = r->next;
        dropped += atomic_load(&r->dropped);
        free(r->recs);
        free(r);
        r = next;
    }
    proc.gen++;
    fprintf(proc.out, "{\"ev\":\"end\",\"written\":%" PRIu64 ",\"ring_dropped\":%" PRIu64 "}\n",
            atomic_load(&proc.written), dropped);
    fclose(proc.out);
    proc.out = NULL;
}

/* ---- entry points, version independent ----------------------------------------------------------
 */

static ncclResult_t do_init(void **context, int *mask, int version, uint64_t comm, const char *name,
                            int nnodes, int nranks, int rank, ncclDebugLogger_t logfn)
{
    *context = NULL;
    *mask = 0;
    pthread_mutex_lock(&proc.lock);
    if (proc.refs == 0) proc.set = read_settings();
    if (!proc.set.dir[0]) {
        pthread_mutex_unlock(&proc.lock);
        if (logfn)
            logfn(NCCL_LOG_INFO, NCCL_INIT, __FILE__, __LINE__,
                  "fleetprint profiler: FLEETPRINT_TRACE_DIR unset, not tracing");
        return ncclSuccess;
    }
    ctx *c = calloc(1, sizeof *c);
    event *pool = c ? calloc(proc.set.events, sizeof *pool) : NULL;
    if (!pool || (proc.refs == 0 && proc_start() != 0)) {
        pthread_mutex_unlock(&proc.lock);
        free(pool);
        free(c);
        if (logfn)
            logfn(NCCL_LOG_WARN, NCCL_INIT, __FILE__, __LINE__,
                  "fleetprint profiler: cannot trace into %s: %s", proc.set.dir, strerror(errno));
        return ncclSuccess; /* never fail the job over tracing */
    }
    proc.refs++;
    *c = (ctx){.comm = comm,
               .serial = ++proc.serials,
               .rank = rank,
               .nranks = nranks,
               .version = version,
               .mask = (uint32_t)(proc.set.events - 1),
               .pool = pool,
               .logfn = logfn};
    for (uint32_t i = 0; i < proc.set.events; i++)
        pool[i].c = c;
    char line[512];
    size_t n =
        fpp_format_comm(line, sizeof line, comm, name, rank, nranks, nnodes, version, now_ns());
    fwrite(line, 1, n, proc.out); /* one call: stdio's lock keeps the line whole */
    pthread_mutex_unlock(&proc.lock);
    *context = c;
    *mask = proc.set.mask;
    if (logfn)
        logfn(NCCL_LOG_INFO, NCCL_INIT, __FILE__, __LINE__,
              "fleetprint profiler: init v%d comm %016" PRIx64 " rank %d/%d, tracing into %s",
              version, comm, rank, nranks, proc.set.dir);
    return ncclSuccess;
}

static ncclResult_t do_finalize(void *context)
{
    ctx *c = context;
    if (!c) return ncclSuccess;
    pthread_mutex_lock(&proc.lock);
    char line[256];
    int n = snprintf(line, sizeof line,
                     "{\"ev\":\"comm_end\",\"comm\":\"%016" PRIx64 "\",\"rank\":%d,"
                     "\"pool_dropped\":%" PRIu64 ",\"t1\":%" PRIu64 "}\n",
                     c->comm, c->rank, atomic_load(&c->dropped), now_ns());
    fwrite(line, 1, (size_t)n, proc.out);
    if (--proc.refs == 0) proc_stop();
    pthread_mutex_unlock(&proc.lock);
    if (c->logfn)
        c->logfn(NCCL_LOG_INFO, NCCL_INIT, __FILE__, __LINE__,
                 "fleetprint profiler: finalize comm %016" PRIx64 " rank %d, %" PRIu64
                 " events dropped",
                 c->comm, c->rank, atomic_load(&c->dropped));
    free(c->pool);
    free(c);
    return ncclSuccess;
}

/* Take a slot for a new event; NULL (dropped, counted) when the slot the pool
 * hands out next is still in flight. */
static event *ev_start(ctx *c, int kind, void *parent, int rank)
{
    uint64_t id = atomic_fetch_add_explicit(&c->next, 1, memory_order_relaxed);
    event *e = &c->pool[id & c->mask];
    if (atomic_exchange_explicit(&e->busy, 1, memory_order_acquire)) {
        atomic_fetch_add_explicit(&c->dropped, 1, memory_order_relaxed);
        return NULL;
    }
    const event *p = parent;
    memset(&e->r, 0, sizeof e->r);
    e->r.kind = (uint16_t)kind;
    e->r.id = c->serial << 40 | (id + 1); /* unique in the process, no shared counter */
    /* the parent is in flight while its children start (NCCL's nesting) */
    e->r.parent = p ? p->r.id : 0;
    e->r.comm = c->comm;
    e->r.rank = rank;
    e->r.t0 = now_ns();
    return e;
}

static int kind_of(uint64_t type)
{
    for (int k = 0; k < FPP_KIND_COUNT; k++)
        if (type == (1ull << k)) return k;
    return -1;
}

static ncclResult_t do_stop(void *handle)
{
    event *e = handle;
    if (!e) return ncclSuccess;
    e->r.t1 = now_ns();
    push(&e->r);
    atomic_store_explicit(&e->busy, 0, memory_order_release);
    return ncclSuccess;
}

static void do_state(event *e, ncclProfilerEventState_t s, uint64_t trans_size, uint64_t ptimer)
{
    if (!e) return;
    uint64_t t = now_ns();
    switch (s) {
    case ncclProfilerProxyStepSendGPUWait:
    case ncclProfilerProxyStepSendPeerWait_v4:
    case ncclProfilerProxyStepSendWait:
        e->r.is_send = 1;
        e->r.state[s == ncclProfilerProxyStepSendGPUWait ? 0
                   : s == ncclProfilerProxyStepSendWait  ? 2
                                                         : 1] = t;
        break;
    case ncclProfilerProxyStepRecvWait:
    case ncclProfilerProxyStepRecvFlushWait:
    case ncclProfilerProxyStepRecvGPUWait:
        e->r.state[s - ncclProfilerProxyStepRecvWait] = t;
        break;
    case ncclProfilerKernelChStop:
        e->r.gpu1 = ptimer;
        return;
    default:
        return;
    }
    if (trans_size) e->r.count = trans_size;
}

/* ---- descriptors of every version into the record
 * ------------------------------------------------ */

static void fill_coll(event *e, uint64_t seq, const char *func, size_t count, int root,
                      const char *dtype, uint8_t nch, const char *algo, const char *proto)
{
    e->r.seq = seq;
    e->r.func = func;
    e->r.count = count;
    e->r.peer = root;
    e->r.dtype = dtype;
    e->r.nch = nch;
    e->r.algo = algo;
    e->r.proto = proto;
}

static void fill_p2p(event *e, const char *func, const char *dtype, size_t count, int peer,
                     uint8_t nch)
{
    e->r.func = func;
    e->r.dtype = dtype;
    e->r.count = count;
    e->r.peer = peer;
    e->r.nch = nch;
}

/* Proxy op and step descriptors have one layout in every version. */
static void fill_proxy(event *e, const ncclProfilerProxyOpDescr_t *op,
                       const ncclProfilerProxyStepDescr_t *step)
{
    if (e->r.kind == FPP_PROXY_OP) {
        e->r.nch = op->channelId;
        e->r.peer = op->peer;
        e->r.step = op->nSteps;
        e->r.is_send = (uint8_t)(op->isSend != 0);
    } else if (e->r.kind == FPP_PROXY_STEP) {
        e->r.step = step->step;
    }
}

/* v4 and v5 share the coll, p2p and kernel channel layouts (v5 adds fields
 * at the end); d is either descriptor. */
#define FILL_V45(e, d)                                                                             \
    do {                                                                                           \
        if ((e)->r.kind == FPP_COLL)                                                               \
            fill_coll(e, (d)->coll.seqNumber, (d)->coll.func, (d)->coll.count, (d)->coll.root,     \
                      (d)->coll.datatype, (d)->coll.nChannels, (d)->coll.algo, (d)->coll.proto);   \
        else if ((e)->r.kind == FPP_P2P)                                                           \
            fill_p2p(e, (d)->p2p.func, (d)->p2p.datatype, (d)->p2p.count, (d)->p2p.peer,           \
                     (d)->p2p.nChannels);                                                          \
        else if ((e)->r.kind == FPP_KERNEL_CH) {                                                   \
            (e)->r.nch = (d)->kernelCh.channelId;                                                  \
            (e)->r.gpu0 = (d)->kernelCh.pTimer;                                                    \
        }                                                                                          \
        fill_proxy(e, &(d)->proxyOp, &(d)->proxyStep);                                             \
    } while (0)

static ncclResult_t v5_init(void **context, uint64_t comm, int *mask, const char *name, int nnodes,
                            int nranks, int rank, ncclDebugLogger_t logfn)
{
    return do_init(context, mask, 5, comm, name, nnodes, nranks, rank, logfn);
}

static ncclResult_t v5_start(void *context, void **handle, ncclProfilerEventDescr_v5_t *d)
{
    int kind = kind_of(d->type);
    event *e = context && kind >= 0 ? ev_start(context, kind, d->parentObj, d->rank) : NULL;
    *handle = e;
    if (!e) return ncclSuccess;
    FILL_V45(e, d);
    switch (kind) {
    case FPP_COLL_API:
        fill_coll(e, 0, d->collApi.func, d->collApi.count, d->collApi.root, d->collApi.datatype, 0,
                  NULL, NULL);
        break;
    case FPP_P2P_API:
        fill_p2p(e, d->p2pApi.func, d->p2pApi.datatype, d->p2pApi.count, -1, 0);
        break;
    default:
        break;
    }
    return ncclSuccess;
}

static ncclResult_t v5_state(void *handle, ncclProfilerEventState_t s,
                             ncclProfilerEventStateArgs_v5_t *a)
{
    event *e = handle;
    uint64_t bytes = 0, ptimer = 0;
    if (e && a && e->r.kind == FPP_PROXY_STEP) bytes = a->proxyStep.transSize;
    if (e && a && e->r.kind == FPP_KERNEL_CH) ptimer = a->kernelCh.pTimer;
    do_state(e, s, bytes, ptimer);
    return ncclSuccess;
}

static ncclResult_t v4_init(void **context, int *mask, const char *name, uint64_t comm, int nnodes,
                            int nranks, int rank, ncclDebugLogger_t logfn)
{
    return do_init(context, mask, 4, comm, name, nnodes, nranks, rank, logfn);
}

static ncclResult_t v4_start(void *context, void **handle, ncclProfilerEventDescr_v4_t *d)
{
    int kind = kind_of(d->type);
    event *e = context && kind >= 0 && kind < FPP_GROUP_API
                   ? ev_start(context, kind, d->parentObj, d->rank)
                   : NULL;
    *handle = e;
    if (e) FILL_V45(e, d);
    return ncclSuccess;
}

/* ---- v3 and v2: no communicator at init; coll and p2p carry its hash --------------------------
 */

static ncclResult_t v3_init(void **context, int *mask)
{
    return do_init(context, mask, 3, 0, NULL, 0, 0, -1, NULL);
}

static ncclResult_t v2_init(void **context, int *mask)
{
    return do_init(context, mask, 2, 0, NULL, 0, 0, -1, NULL);
}

/* v2 and v3: coll and p2p carry the communicator's hash (init knows none);
 * the fields are read by name, so one macro serves both layouts. */
#define FILL_V23(e, d)                                                                             \
    do {                                                                                           \
        if ((e)->r.kind == FPP_COLL) {                                                             \
            (e)->r.comm = (d)->coll.commHash;                                                      \
            fill_coll(e, (d)->coll.seqNumber, (d)->coll.func, (d)->coll.count, (d)->coll.root,     \
                      (d)->coll.datatype, (d)->coll.nMaxChannels, (d)->coll.algo,                  \
                      (d)->coll.proto);                                                            \
        } else if ((e)->r.kind == FPP_P2P) {                                                       \
            (e)->r.comm = (d)->p2p.commHash;                                                       \
            fill_p2p(e, (d)->p2p.func, (d)->p2p.datatype, (d)->p2p.count, (d)->p2p.peer, 0);       \
        }                                                                                          \
        fill_proxy(e, &(d)->proxyOp, &(d)->proxyStep);                                             \
    } while (0)

static ncclResult_t v3_start(void *context, void **handle, ncclProfilerEventDescr_v3_t *d)
{
    int kind = kind_of(d->type);
    event *e = context && kind >= 0 && kind < FPP_GROUP_API
                   ? ev_start(context, kind, d->parentObj, d->rank)
                   : NULL;
    *handle = e;
    if (e) FILL_V23(e, d);
    return ncclSuccess;
}

static ncclResult_t v2_start(void *context, void **handle, ncclProfilerEventDescr_v2_t *d)
{
    int kind = kind_of(d->type);
    event *e = context && kind >= 0 && kind <= FPP_PROXY_CTRL
                   ? ev_start(context, kind, d->parentObj, d->rank)
                   : NULL;
    *handle = e;
    if (e) FILL_V23(e, d);
    return ncclSuccess;
}

/* v1 names functions, datatypes, algorithms and protocols by their enum
 * index in NCCL 2.23 (ncclFunc_t, ncclDataType_t, NCCL_ALGO_*, NCCL_PROTO_*). */
static const char *v1_name(uint8_t i, const char *const *names, size_t n)
{
    return i < n ? names[i] : NULL;
}
#define V1_NAME(i, names) v1_name(i, names, sizeof names / sizeof names[0])

static ncclResult_t v1_init(void **context, int *mask)
{
    return do_init(context, mask, 1, 0, NULL, 0, 0, -1, NULL);
}

static ncclResult_t v1_start(void *context, void **handle, ncclProfilerEventDescr_v1_t *d)
{
    static const char *const funcs[] = {"Broadcast", "Reduce",   "AllGather", "ReduceScatter",
                                        "AllReduce", "SendRecv", "Send",      "Recv"};
    static const char *const types[] = {"ncclInt8",    "ncclUint8",   "ncclInt32",   "ncclUint32",
                                        "ncclInt64",   "ncclUint64",  "ncclFloat16", "ncclFloat32",
                                        "ncclFloat64", "ncclBfloat16"};
    static const char *const algos[] = {"Tree",     "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                                        "NVLSTree", "PAT"};
    static const char *const protos[] = {"LL", "LL128", "Simple"};
    int kind = kind_of(d->type);
    event *e = context && kind >= 0 && kind <= FPP_PROXY_CTRL
                   ? ev_start(context, kind, d->parentObj, d->rank)
                   : NULL;
    *handle = e;
    if (!e) return ncclSuccess;
    if (kind == FPP_COLL) {
        e->r.comm = d->coll.commHash;
        fill_coll(e, d->coll.seqNumber, V1_NAME(d->coll.func, funcs), d->coll.count, d->coll.root,
                  V1_NAME(d->coll.datatype, types), d->coll.nMaxChannels,
                  V1_NAME(d->coll.algo, algos), V1_NAME(d->coll.proto, protos));
    } else if (kind == FPP_P2P) {
        e->r.comm = d->p2p.commHash;
        fill_p2p(e, V1_NAME(d->p2p.func, funcs), V1_NAME(d->p2p.datatype, types), d->p2p.count,
                 d->p2p.peer, 0);
    }
    fill_proxy(e, &d->proxyOp, &d->proxyStep);
    return ncclSuccess;
}

static ncclResult_t v23_state(void *handle, ncclProfilerEventState_t s,
                              ncclProfilerEventStateArgs_v3_t *a)
{
    (void)a; /* v2/v3 report transSize on the proxy op, not the step */
    do_state(handle, s, 0, 0);
    return ncclSuccess;
}

FPP_EXPORT const ncclProfiler_v5_t ncclProfiler_v5 = {.name = "fleetprint",
                                                      .init = v5_init,
                                                      .startEvent = v5_start,
                                                      .stopEvent = do_stop,
                                                      .recordEventState = v5_state,
                                                      .finalize = do_finalize};
FPP_EXPORT const ncclProfiler_v4_t ncclProfiler_v4 = {.name = "fleetprint",
                                                      .init = v4_init,
                                                      .startEvent = v4_start,
                                                      .stopEvent = do_stop,
                                                      .recordEventState = v5_state,
                                                      .finalize = do_finalize};
FPP_EXPORT const ncclProfiler_v3_t ncclProfiler_v3 = {.name = "fleetprint",
                                                      .init = v3_init,
                                                      .startEvent = v3_start,
                                                      .stopEvent = do_stop,
                                                      .recordEventState = v23_state,
                                                      .finalize = do_finalize};
FPP_EXPORT const ncclProfiler_v2_t ncclProfiler_v2 = {
    .name = "fleetprint",
    .init = v2_init,
    .startEvent = v2_start,
    .stopEvent = do_stop,
    .recordEventState = v23_state, /* the v2 and v3 state arguments are one type */
    .finalize = do_finalize};
FPP_EXPORT const ncclProfiler_v1_t ncclProfiler_v1 = {.name = "fleetprint",
                                                      .init = v1_init,
                                                      .startEvent = v1_start,
                                                      .stopEvent = do_stop,
                                                      .recordEventState = v23_state,
                                                      .finalize = do_finalize};
