/* fpemu: the CUDA runtime entry points fleetprint calls, on the host.
 *
 * Streams are FIFO queues of operations run by a progress engine (on every
 * enqueue, query and synchronisation); device memory is a memfd mapping that
 * is PROT_NONE except while the engine runs, so host code reading a device
 * pointer gets SIGSEGV as on a GPU. Events record the device's clock when the
 * engine completes them: the host's monotonic time less the time the engine
 * waited for a core while it ran kernels and copies (a GPU does not stop when
 * its host thread is descheduled; on ranks that share cores that wait was
 * 2-4x a kernel's own time, read as a slow device). Devices: FPEMU_GPUS per
 * process (default: the local ranks, OMPI_COMM_WORLD_LOCAL_SIZE, else 1),
 * FPEMU_MEM_MB each (default 256). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "emu.h"
#include "fpemu.h"

enum { MAX_ALLOCS = 4096, MAX_ARGS = 4096 };

struct CUstream_st {
    emu_op *head, *tail;
    cudaGraph_t capture; /* capturing into this graph */
    struct CUstream_st *next;
};

struct CUevent_st {
    unsigned flags;
    uint64_t recorded, completed; /* record generations */
    double time;
};

struct CUgraph_st {
    emu_op *head, *tail;
};
struct CUgraphExec_st {
    struct CUgraph_st g;
};

typedef struct alloc {
    char *base;
    size_t size, map_size;
    int fd, device;
    bool remote;
} alloc;

static struct {
    pthread_mutex_t lock;
    bool ready;
    int ngpus, device_rr;
    size_t mem;
    struct CUstream_st legacy;
    struct CUstream_st *streams;
    alloc allocs[MAX_ALLOCS];
    int nallocs;
    cudaError_t last;
    int in_progress;
    unsigned peer_enabled[64];
    double waited; /* seconds kernels and copies waited for a core (core_waited) */
    pthread_cond_t work; /* signalled when an operation is queued */
    pthread_t engine;
} E = {.lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, .work = PTHREAD_COND_INITIALIZER};

static _Thread_local int cur_device;

/* ---- helpers ----------------------------------------------------------------------------- */

double emu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Seconds the calling thread has waited, runnable, for a core: the second
 * field of /proc/thread-self/schedstat; 0 where the kernel does not say. */
static double core_waited(void)
{
    static _Thread_local int fd = -2;
    if (fd == -2)
        fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    char buf[96];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    unsigned long long run, wait;
    if (n <= 0)
        return 0;
    buf[n] = 0;
    return sscanf(buf, "%llu %llu", &run, &wait) == 2 ? (double)wait * 1e-9 : 0;
}

/* The device's clock: the host's less the device work's waits (E.lock held). */
static double device_now(void)
{
    return emu_now() - E.waited;
}

void emu_sleep(double seconds)
{
    struct timespec t = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&t, NULL);
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

static bool busy(void);

/* The device's own progress: queued operations advance while the host thread
 * is elsewhere (in MPI, sleeping), as a GPU's do; e.g. an NCCL operation whose
 * peers arrive later completes without a host call. */
static void *engine(void *unused)
{
    for (;;) {
        pthread_mutex_lock(&E.lock);
        while (!busy())
            pthread_cond_wait(&E.work, &E.lock);
        pthread_mutex_unlock(&E.lock);
        emu_progress();
        emu_sleep(5e-5);
    }
    return unused;
}

static void init(void)
{
    pthread_mutex_lock(&E.lock);
    if (E.ready) {
        pthread_mutex_unlock(&E.lock);
        return;
    }
    E.ngpus = env_int("FPEMU_GPUS", env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1));
    if (E.ngpus < 0)
        E.ngpus = 0;
    E.mem = (size_t)env_int("FPEMU_MEM_MB", 256) << 20;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_create(&E.engine, &attr, engine, NULL);
    pthread_attr_destroy(&attr);
    E.ready = true;
    pthread_mutex_unlock(&E.lock);
}

const char *emu_node(void)
{
    static _Thread_local char name[256];
    const char *n = getenv("FLEETPRINT_NODE");
    if (n && *n)
        return n;
    if (gethostname(name, sizeof name) != 0)
        snprintf(name, sizeof name, "localhost");
    return name;
}

int emu_current_device(void)
{
    return cur_device;
}

static cudaError_t fail(cudaError_t e)
{
    E.last = e;
    return e;
}

static void protect_all(int prot)
{
    for (int i = 0; i < E.nallocs; i++)
        if (E.allocs[i].base)
            mprotect(E.allocs[i].base, E.allocs[i].map_size, prot);
}

static alloc *find_alloc(const void *p)
{
    for (int i = 0; i < E.nallocs; i++) {
        alloc *a = &E.allocs[i];
        if (a->base && (const char *)p >= a->base && (const char *)p < a->base + a->size)
            return a;
    }
    return NULL;
}

bool emu_device_range(const void *p, size_t bytes, emu_where *w)
{
    pthread_mutex_lock(&E.lock);
    alloc *a = find_alloc(p);
    bool ok = a && (size_t)((const char *)p - a->base) + bytes <= a->size;
    if (ok && w)
        *w = (emu_where){getpid(), a->fd, a->size, (size_t)((const char *)p - a->base)};
    pthread_mutex_unlock(&E.lock);
    return ok;
}

static alloc *new_slot(void)
{
    for (int i = 0; i < E.nallocs; i++)
        if (!E.allocs[i].base)
            return &E.allocs[i];
    return E.nallocs < MAX_ALLOCS ? &E.allocs[E.nallocs++] : NULL;
}

static size_t page_round(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

static size_t device_used(int dev)
{
    size_t used = 0;
    for (int i = 0; i < E.nallocs; i++)
        if (E.allocs[i].base && !E.allocs[i].remote && E.allocs[i].device == dev)
            used += E.allocs[i].map_size;
    return used;
}

void *emu_map_remote(const emu_where *w)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", w->pid, w->fd);
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return NULL;
    pthread_mutex_lock(&E.lock);
    void *p = NULL;
    alloc *a = new_slot();
    if (a) {
        size_t ms = page_round(w->size);
        void *m = mmap(NULL, ms, E.in_progress ? PROT_READ | PROT_WRITE : PROT_NONE, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED) {
            *a = (alloc){m, w->size, ms, fd, cur_device, true};
            p = (char *)m + w->offset;
            fd = -1;
        }
    }
    pthread_mutex_unlock(&E.lock);
    if (fd >= 0)
        close(fd);
    return p;
}

void emu_unmap_remote(void *p)
{
    pthread_mutex_lock(&E.lock);
    alloc *a = find_alloc(p);
    if (a && a->remote) {
        munmap(a->base, a->map_size);
        close(a->fd);
        a->base = NULL;
    }
    pthread_mutex_unlock(&E.lock);
}

/* ---- the progress engine ------------------------------------------------------------------ */

emu_op *emu_op_new(bool (*step)(emu_op *), const void *blob, size_t size)
{
    emu_op *op = calloc(1, sizeof *op + size);
    if (!op)
        return NULL;
    op->step = step;
    op->blob = op + 1;
    op->blob_size = size;
    if (blob && size)
        memcpy(op->blob, blob, size);
    return op;
}

static void op_free(emu_op *op)
{
    if (op->drop)
        op->drop(op);
    free(op);
}

static bool progress_stream(struct CUstream_st *s)
{
    bool any = false;
    while (s->head && s->head->step(s->head)) {
        emu_op *op = s->head;
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        op_free(op);
        any = true;
    }
    return any;
}

void emu_progress(void)
{
    pthread_mutex_lock(&E.lock);
    if (E.in_progress++ == 0)
        protect_all(PROT_READ | PROT_WRITE);
    bool any = true;
    while (any) {
        any = progress_stream(&E.legacy);
        for (struct CUstream_st *s = E.streams; s; s = s->next)
            any |= progress_stream(s);
    }
    if (--E.in_progress == 0)
        protect_all(PROT_NONE);
    pthread_mutex_unlock(&E.lock);
}

static bool busy(void)
{
    bool any = E.legacy.head != NULL;
    for (struct CUstream_st *s = E.streams; s && !any; s = s->next)
        any = s->head != NULL;
    return any;
}

static struct CUstream_st *stream_of(cudaStream_t s)
{
    return s ? s : &E.legacy;
}

static void append(emu_op **head, emu_op **tail, emu_op *op)
{
    op->next = NULL;
    if (*tail)
        (*tail)->next = op;
    else
        *head = op;
    *tail = op;
}

cudaError_t emu_enqueue(cudaStream_t s, emu_op *op)
{
    if (!op)
        return fail(cudaErrorMemoryAllocation);
    init();
    pthread_mutex_lock(&E.lock);
    struct CUstream_st *st = stream_of(s);
    if (st->capture)
        append(&st->capture->head, &st->capture->tail, op);
    else
        append(&st->head, &st->tail, op);
    pthread_cond_signal(&E.work);
    pthread_mutex_unlock(&E.lock);
    emu_progress();
    return cudaSuccess;
}

/* ---- kernels ------------------------------------------------------------------------------ */

struct launch {
    void (*body)(void *);
    size_t size;
    const char *what; /* the kernel's name, for a debugger */
};

static bool launch_step(emu_op *op)
{
    struct launch *l = op->blob;
    double w = core_waited();
    l->body((char *)op->blob + sizeof *l);
    E.waited += core_waited() - w;
    return true;
}

cudaError_t fpemu_launch_named(cudaStream_t s, void (*body)(void *args), const void *args,
                               size_t args_size, const char *what)
{
    emu_op *op = NULL;
    if (args_size > MAX_ARGS)
        return fail(cudaErrorInvalidValue);
    if (E.last != cudaSuccess && E.last == cudaErrorIllegalAddress)
        return fail(E.last);
    if (!(op = emu_op_new(launch_step, NULL, sizeof(struct launch) + args_size)))
        return fail(cudaErrorMemoryAllocation);
    *(struct launch *)op->blob = (struct launch){body, args_size, what};
    memcpy((char *)op->blob + sizeof(struct launch), args, args_size);
    return emu_enqueue(s, op); /* records its own failure */
}

cudaError_t fpemu_launch(cudaStream_t s, void (*body)(void *args), const void *args,
                         size_t args_size)
{
    return fpemu_launch_named(s, body, args, args_size, "emulated kernel");
}

void fpemu_atomic_add_f32(float *p, float v)
{
    float old = *p, want;
    do {
        want = old + v;
    } while (!__atomic_compare_exchange(p, &old, &want, false, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST));
}

void fpemu_atomic_add_f64(double *p, double v)
{
    double old = *p, want;
    do {
        want = old + v;
    } while (!__atomic_compare_exchange(p, &old, &want, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
}

void fpemu_atomic_add_u64(unsigned long long *p, unsigned long long v)
{
    __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}

/* ---- devices ------------------------------------------------------------------------------ */

cudaError_t cudaGetDeviceCount(int *count)
{
    init();
    *count = E.ngpus;
    return E.ngpus > 0 ? cudaSuccess : fail(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device)
{
    init();
    if (device < 0 || device >= E.ngpus)
        return fail(cudaErrorInvalidDevice);
    cur_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    *device = cur_device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
    init();
    if (device < 0 || device >= E.ngpus)
        return fail(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "Emulated GPU (fpemu)");
    /* a UUID from the node name and index: the same device in every process of the node */
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = emu_node(); *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    memcpy(p->uuid.bytes, &h, sizeof h);
    memcpy(p->uuid.bytes + 8, &device, sizeof device);
    p->totalGlobalMem = E.mem;
    p->multiProcessorCount = 4;
    p->major = 9;
    p->minor = 0;
    p->pciBusID = device + 1;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    init();
    if (device < 0 || device >= E.ngpus)
        return fail(cudaErrorInvalidDevice);
    *value = attr == cudaDevAttrComputeCapabilityMajor   ? 9
             : attr == cudaDevAttrMultiProcessorCount   ? 4
             : attr == cudaDevAttrWarpSize              ? 32
                                                        : 0;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
    init();
    if (device < 0 || device >= E.ngpus || peer < 0 || peer >= E.ngpus)
        return fail(cudaErrorInvalidDevice);
    *can = device != peer;
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags)
{
    init();
    if (peer < 0 || peer >= E.ngpus || peer == cur_device || cur_device >= 64)
        return fail(cudaErrorInvalidDevice);
    if (E.peer_enabled[cur_device] & (1u << peer))
        return fail(cudaErrorPeerAccessAlreadyEnabled);
    E.peer_enabled[cur_device] |= 1u << peer;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    for (;;) {
        emu_progress();
        pthread_mutex_lock(&E.lock);
        bool b = busy();
        pthread_mutex_unlock(&E.lock);
        if (!b)
            return cudaSuccess;
        emu_sleep(1e-4);
    }
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = E.last;
    E.last = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    return E.last;
}

/* ---- memory ------------------------------------------------------------------------------- */

cudaError_t cudaMalloc(void **ptr, size_t size)
{
    init();
    *ptr = NULL;
    if (E.ngpus == 0)
        return fail(cudaErrorNoDevice);
    if (size == 0)
        return cudaSuccess;
    size_t ms = page_round(size);
    pthread_mutex_lock(&E.lock);
    cudaError_t e = cudaErrorMemoryAllocation;
    alloc *a = device_used(cur_device) + ms <= E.mem ? new_slot() : NULL;
    int fd = a ? memfd_create("fpemu-device", MFD_CLOEXEC) : -1;
    if (fd >= 0 && ftruncate(fd, (off_t)ms) == 0) {
        void *m = mmap(NULL, ms, E.in_progress ? PROT_READ | PROT_WRITE : PROT_NONE, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED) {
            *a = (alloc){m, size, ms, fd, cur_device, false};
            *ptr = m;
            fd = -1;
            e = cudaSuccess;
        }
    }
    if (fd >= 0)
        close(fd);
    pthread_mutex_unlock(&E.lock);
    return e == cudaSuccess ? e : fail(e);
}

cudaError_t cudaFree(void *ptr)
{
    if (!ptr)
        return cudaSuccess;
    cudaDeviceSynchronize(); /* as the real one: implicit synchronisation */
    pthread_mutex_lock(&E.lock);
    alloc *a = find_alloc(ptr);
    cudaError_t e = cudaErrorInvalidValue;
    if (a && !a->remote && a->base == ptr) {
        munmap(a->base, a->map_size);
        close(a->fd);
        a->base = NULL;
        e = cudaSuccess;
    }
    pthread_mutex_unlock(&E.lock);
    return e == cudaSuccess ? e : fail(e);
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    *ptr = malloc(size ? size : 1);
    return *ptr ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaFreeHost(void *ptr)
{
    free(ptr);
    return cudaSuccess;
}

struct copy {
    void *dst;
    const void *src;
    size_t bytes;
    int value; /* memset: -1 for a copy */
};

static bool copy_step(emu_op *op)
{
    struct copy *c = op->blob;
    double w = core_waited();
    if (c->value >= 0)
        memset(c->dst, c->value, c->bytes);
    else
        memmove(c->dst, c->src, c->bytes);
    E.waited += core_waited() - w;
    return true;
}

/* The device side(s) of a copy must lie inside device allocations. */
static cudaError_t check_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind k)
{
    bool dd = emu_device_range(dst, bytes, NULL), sd = emu_device_range(src, bytes, NULL);
    switch (k) {
    case cudaMemcpyHostToDevice: return dd && !sd ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyDeviceToHost: return sd && !dd ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyDeviceToDevice: return sd && dd ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyHostToHost: return !sd && !dd ? cudaSuccess : cudaErrorInvalidValue;
    default: return cudaSuccess;
    }
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind k,
                            cudaStream_t s)
{
    if (bytes == 0)
        return cudaSuccess;
    cudaError_t e = check_copy(dst, src, bytes, k);
    if (e != cudaSuccess)
        return fail(e);
    struct copy c = {dst, src, bytes, -1};
    return emu_enqueue(s, emu_op_new(copy_step, &c, sizeof c));
}

cudaError_t cudaStreamSynchronize(cudaStream_t s);

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind k)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, k, NULL);
    return e == cudaSuccess ? cudaStreamSynchronize(NULL) : e;
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dd, const void *src, int sd, size_t bytes,
                                cudaStream_t s)
{
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s);
}

cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t s)
{
    if (bytes == 0)
        return cudaSuccess;
    if (!emu_device_range(dst, bytes, NULL))
        return fail(cudaErrorInvalidValue);
    struct copy c = {dst, NULL, bytes, value & 0xff};
    return emu_enqueue(s, emu_op_new(copy_step, &c, sizeof c));
}

cudaError_t cudaMemset(void *dst, int value, size_t bytes)
{
    cudaError_t e = cudaMemsetAsync(dst, value, bytes, NULL);
    return e == cudaSuccess ? cudaStreamSynchronize(NULL) : e;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *p)
{
    memset(attr, 0, sizeof *attr);
    pthread_mutex_lock(&E.lock);
    alloc *a = find_alloc(p);
    if (a) {
        attr->type = cudaMemoryTypeDevice;
        attr->device = a->device;
        attr->devicePointer = (void *)p;
    } else {
        attr->type = cudaMemoryTypeUnregistered;
        attr->device = -2;
    }
    pthread_mutex_unlock(&E.lock);
    return cudaSuccess;
}

/* IPC: the handle names the memfd of the allocation in its owner process. */
struct ipc {
    uint32_t magic;
    emu_where w;
};

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *h, void *p)
{
    struct ipc i = {0xfe11, {0}};
    _Static_assert(sizeof i <= sizeof *h, "IPC handle too small");
    if (!emu_device_range(p, 1, &i.w))
        return fail(cudaErrorInvalidValue);
    i.w.offset = 0; /* CUDA's handles name the allocation's base */
    memset(h, 0, sizeof *h);
    memcpy(h, &i, sizeof i);
    return cudaSuccess;
}

cudaError_t cudaIpcOpenMemHandle(void **p, cudaIpcMemHandle_t h, unsigned flags)
{
    struct ipc i;
    memcpy(&i, &h, sizeof i);
    if (i.magic != 0xfe11)
        return fail(cudaErrorInvalidValue);
    if (i.w.pid == getpid())
        return fail(cudaErrorDeviceUninitialized); /* CUDA refuses own-process handles */
    *p = emu_map_remote(&i.w);
    return *p ? cudaSuccess : fail(cudaErrorMapBufferObjectFailed);
}

cudaError_t cudaIpcCloseMemHandle(void *p)
{
    emu_unmap_remote(p);
    return cudaSuccess;
}

/* ---- streams and events ------------------------------------------------------------------- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    struct CUstream_st *st = calloc(1, sizeof *st);
    if (!st)
        return fail(cudaErrorMemoryAllocation);
    pthread_mutex_lock(&E.lock);
    st->next = E.streams;
    E.streams = st;
    pthread_mutex_unlock(&E.lock);
    *s = st;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    return cudaStreamCreateWithFlags(s, 0);
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!s)
        return fail(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&E.lock);
    for (struct CUstream_st **p = &E.streams; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    while (s->head) { /* work not yet run is dropped: the stream is gone */
        emu_op *op = s->head;
        s->head = op->next;
        op_free(op);
    }
    pthread_mutex_unlock(&E.lock);
    free(s);
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
    emu_progress();
    return stream_of(s)->head ? cudaErrorNotReady : cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    while (cudaStreamQuery(s) == cudaErrorNotReady)
        emu_sleep(1e-4);
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *ev, unsigned flags)
{
    *ev = calloc(1, sizeof **ev);
    if (!*ev)
        return fail(cudaErrorMemoryAllocation);
    (*ev)->flags = flags;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *ev)
{
    return cudaEventCreateWithFlags(ev, 0);
}

cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
    free(ev);
    return cudaSuccess;
}

struct record {
    cudaEvent_t ev;
    uint64_t gen;
};

static bool record_step(emu_op *op)
{
    struct record *r = op->blob;
    r->ev->time = device_now();
    if (r->ev->completed < r->gen)
        r->ev->completed = r->gen;
    return true;
}

cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s)
{
    if (!ev)
        return fail(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&E.lock);
    struct record r = {ev, ++ev->recorded};
    pthread_mutex_unlock(&E.lock);
    return emu_enqueue(s, emu_op_new(record_step, &r, sizeof r));
}

static bool wait_step(emu_op *op)
{
    struct record *r = op->blob;
    return r->ev->completed >= r->gen;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t ev, unsigned flags)
{
    if (!ev)
        return fail(cudaErrorInvalidResourceHandle);
    struct record r = {ev, ev->recorded};
    return emu_enqueue(s, emu_op_new(wait_step, &r, sizeof r));
}

/* Not ready: yield the CPU a little, as a GPU would not take the host's, so
 * that polling ranks on few cores leave time to their peers. */
cudaError_t cudaEventQuery(cudaEvent_t ev)
{
    emu_progress();
    if (ev->completed >= ev->recorded)
        return cudaSuccess;
    emu_sleep(2e-5);
    return cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    while (cudaEventQuery(ev) == cudaErrorNotReady)
        emu_sleep(1e-4);
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    if ((a->flags | b->flags) & cudaEventDisableTiming)
        return fail(cudaErrorInvalidResourceHandle);
    if (!a->recorded || !b->recorded)
        return fail(cudaErrorInvalidResourceHandle);
    if (a->completed < a->recorded || b->completed < b->recorded)
        return fail(cudaErrorNotReady);
    *ms = (float)((b->time - a->time) * 1e3);
    return cudaSuccess;
}

/* ---- graphs: capture records the stream's operations, a launch replays copies ---------------- */

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    if (!s)
        return fail(cudaErrorStreamCaptureUnsupported);
    if (s->capture)
        return fail(cudaErrorIllegalState);
    s->capture = calloc(1, sizeof *s->capture);
    return s->capture ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    if (!s || !s->capture)
        return fail(cudaErrorIllegalState);
    *g = s->capture;
    s->capture = NULL;
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    while (g && g->head) {
        emu_op *op = g->head;
        g->head = op->next;
        op_free(op);
    }
    free(g);
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long flags)
{
    *x = calloc(1, sizeof **x);
    if (!*x)
        return fail(cudaErrorMemoryAllocation);
    for (emu_op *op = g->head; op; op = op->next) {
        emu_op *c = emu_op_new(op->step, op->blob, op->blob_size);
        if (!c)
            return fail(cudaErrorMemoryAllocation);
        append(&(*x)->g.head, &(*x)->g.tail, c);
    }
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x)
{
    if (x) {
        x->g.tail = NULL;
        while (x->g.head) {
            emu_op *op = x->g.head;
            x->g.head = op->next;
            op_free(op);
        }
    }
    free(x);
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s)
{
    for (emu_op *op = x->g.head; op; op = op->next) {
        cudaError_t e = emu_enqueue(s, emu_op_new(op->step, op->blob, op->blob_size));
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

/* ---- error strings ------------------------------------------------------------------------ */

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorPeerAccessAlreadyEnabled: return "peer access is already enabled";
    default: return "emulated CUDA error";
    }
}

const char *cudaGetErrorName(cudaError_t e)
{
    return cudaGetErrorString(e);
}
