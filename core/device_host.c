/* The host device backend: CPU memory and OpenMP worker threads. On a CPU
 * cluster this is the real thing; on build machines it runs every suite. */
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blas.h"
#include "fleetprint/device.h"
#include "fleetprint/timer.h"

struct fp_device {
    int index;
    int threads;
    bool shared; /* ranks share cores: timers leave out waits for a core */
    double t0;
};

static fp_status host_probe(int *count, char *why, size_t len)
{
    *count = 1;
    if (len)
        why[0] = 0;
    return FP_OK;
}

static fp_status host_open(fp_device **out, int index, int threads)
{
    fp_status st = FP_OK;
    fp_device *d = calloc(1, sizeof *d);
    FP_CHECK_ALLOC(d);
    d->index = index;
    d->threads = threads > 0 ? threads : 1;
    *out = d;
cleanup:
    return st;
}

static void host_close(fp_device *d)
{
    free(d);
}

/* "model name : ..." from /proc/cpuinfo, else "cpu". */
static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "host cpu");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon += 1 + (colon[1] == ' ');
            colon[strcspn(colon, "\n")] = 0;
            snprintf(buf, len, "host: %s", colon);
            break;
        }
    }
    fclose(f);
}

static fp_status host_query(fp_device *d, fp_device_info *info)
{
    memset(info, 0, sizeof *info);
    info->index = d->index;
    cpu_model(info->model, sizeof info->model);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    info->memory = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    info->sm_count = d->threads;
    snprintf(info->runtime_version, sizeof info->runtime_version, "openmp %d", _OPENMP);
    return FP_OK;
}

static fp_status host_alloc(fp_device *d, size_t bytes, void **ptr)
{
    fp_status st = FP_OK;
    *ptr = NULL;
    if (posix_memalign(ptr, 4096, bytes ? bytes : 1) != 0)
        *ptr = NULL;
    FP_CHECK_ALLOC(*ptr);
cleanup:
    return st;
}

static void host_free(fp_device *d, void *ptr)
{
    free(ptr);
}

static fp_status host_copy(fp_device *d, void *dst, const void *src, size_t bytes, fp_copy_kind k)
{
    memcpy(dst, src, bytes);
    return FP_OK;
}

static fp_status host_sync(fp_device *d)
{
    return FP_OK;
}

static void host_share_cores(fp_device *d)
{
    d->shared = true;
}

/* Seconds this thread has spent runnable but waiting for a core: the second
 * field of /proc/thread-self/schedstat (Linux, nanoseconds); 0 where the
 * kernel does not say. Where ranks share cores, a rank the scheduler leaves
 * waiting for milliseconds would otherwise read as a slow device. With
 * several worker threads only the calling thread's (OpenMP's first
 * worker's) waits are known. Read with pread on a descriptor kept per
 * thread: about a microsecond, inside the timed region. */
static double core_wait(void)
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

/* The clock first, then the waits (and at the stop the waits, then the
 * clock): a wait is counted when the thread gets its core back, so one
 * between the two reads falls inside the region and is not taken off (the
 * time reads long, never short). Read the other way round, a wait outside
 * the region was taken off it: a kernel shorter than that wait read a
 * negative time (CI: add_bw -48.8 GB/s on one of 3 ranks on 2 cores). */
static fp_status host_timer_start(fp_device *d)
{
    double t = fp_clock();
    d->t0 = t - (d->shared ? core_wait() : 0);
    return FP_OK;
}

static fp_status host_timer_stop(fp_device *d, double *seconds)
{
    double waited = d->shared ? core_wait() : 0;
    *seconds = fp_clock() - waited - d->t0;
    return FP_OK;
}

static fp_status host_fill(fp_device *d, double *x, size_t n, double v)
{
    /* same static schedule as the kernels, so pages land near their users */
#pragma omp parallel for schedule(static) num_threads(d->threads)
    for (size_t i = 0; i < n; i++)
        x[i] = v;
    return FP_OK;
}

/* One loop per operation so the compiler vectorises each without a branch. */
static fp_status host_stream(fp_device *d, fp_stream_op op, double *restrict dst,
                             const double *restrict x, const double *restrict y, double s,
                             size_t n)
{
    switch (op) {
    case FP_STREAM_COPY:
#pragma omp parallel for schedule(static) num_threads(d->threads)
        for (size_t i = 0; i < n; i++)
            dst[i] = fp_stream_elem(FP_STREAM_COPY, x[i], 0, s);
        break;
    case FP_STREAM_SCALE:
#pragma omp parallel for schedule(static) num_threads(d->threads)
        for (size_t i = 0; i < n; i++)
            dst[i] = fp_stream_elem(FP_STREAM_SCALE, x[i], 0, s);
        break;
    case FP_STREAM_ADD:
#pragma omp parallel for schedule(static) num_threads(d->threads)
        for (size_t i = 0; i < n; i++)
            dst[i] = fp_stream_elem(FP_STREAM_ADD, x[i], y[i], s);
        break;
    case FP_STREAM_TRIAD:
#pragma omp parallel for schedule(static) num_threads(d->threads)
        for (size_t i = 0; i < n; i++)
            dst[i] = fp_stream_elem(FP_STREAM_TRIAD, x[i], y[i], s);
        break;
    }
    return FP_OK;
}

static fp_status host_count_wrong(fp_device *d, const double *x, size_t n, double expect,
                                  double tol, size_t *wrong)
{
    size_t bad = 0;
#pragma omp parallel for schedule(static) num_threads(d->threads) reduction(+ : bad)
    for (size_t i = 0; i < n; i++)
        bad += (size_t)fp_elem_wrong(x[i], expect, tol);
    *wrong = bad;
    return FP_OK;
}

/* ---- memory test and result checks ------------------------------------------- */

static fp_status host_mem_write(fp_device *d, int p, void *region, size_t bytes, uint64_t seed)
{
    uint64_t *w = region;
    const uint64_t base = (uint64_t)(uintptr_t)region;
#pragma omp parallel for schedule(static) num_threads(d->threads)
    for (size_t i = 0; i < bytes / 8; i++)
        w[i] = fp_mem_word(p, base, i, seed);
    return FP_OK;
}

/* Count a bad word and keep it while there is room (callers serialise). */
static void mem_record(fp_mem_check *out, uint64_t addr, uint64_t got, uint64_t want)
{
    if (out->naddr < FP_MEM_ADDRS) {
        out->addr[out->naddr] = addr;
        out->got[out->naddr] = got;
        out->want[out->naddr] = want;
        out->naddr++;
    }
    out->errors++;
}

static fp_status host_mem_verify(fp_device *d, int p, const void *region, size_t bytes,
                                 uint64_t seed, fp_mem_check *out)
{
    const volatile uint64_t *w = region; /* really read memory back */
    const uint64_t base = (uint64_t)(uintptr_t)region;
    memset(out, 0, sizeof *out);
#pragma omp parallel for schedule(static) num_threads(d->threads)
    for (size_t i = 0; i < bytes / 8; i++) {
        uint64_t got = w[i], want = fp_mem_word(p, base, i, seed);
        if (got != want) {
#pragma omp critical(fp_mem_record)
            mem_record(out, base + 8u * i, got, want);
        }
    }
    return FP_OK;
}

void fp_digest_host(const void *c, const void *ref, size_t n, size_t es, double tol,
                    fp_digest *out)
{
    memset(out, 0, sizeof *out);
    for (uint64_t b = 0; b < FP_DIGEST_BLOCKS; b++) {
        uint64_t h = 0;
        double s = 0, a = 0;
        for (uint64_t i = fp_digest_lo(b, n); i < fp_digest_lo(b + 1, n); i++) {
            double v = fp_result_value(c, i, (int)es);
            h += fp_digest_term(fp_result_bits(c, i, (int)es), i);
            out->nonfinite += !(v - v == 0);
            out->mismatch += ref && fp_result_differs(c, ref, i, (int)es, tol);
            s += v;
            a += fabs(v);
        }
        out->hash[b] = h;
        out->sum[b] = s;
        out->abssum[b] = a;
    }
}

static fp_status host_digest(fp_device *d, const void *c, const void *ref, size_t n, size_t es,
                             double tol, fp_digest *out)
{
    fp_digest_host(c, ref, n, es, tol, out);
    return FP_OK;
}

static fp_status host_fill_gemm(fp_device *d, fp_gemm_type t, void *dst, size_t n,
                                uint64_t seed, bool exact)
{
#pragma omp parallel for schedule(static) num_threads(d->threads)
    for (size_t i = 0; i < n; i++)
        fp_gemm_store((int)t, dst, i, fp_gemm_operand(seed, i, exact));
    return FP_OK;
}

/* ---- compute suite ------------------------------------------------------------- */

static bool host_gemm_supports(fp_device *d, fp_gemm_type t)
{
    return t == FP_GEMM_F64 || t == FP_GEMM_F32;
}

static fp_status host_gemm(fp_device *d, fp_gemm_type t, int m, int n, int k, const void *a,
                           int lda, const void *b, int ldb, void *c, int ldc)
{
    if (m < 0 || n < 0 || k < 0 || lda < (m > 1 ? m : 1) || ldb < (k > 1 ? k : 1) ||
        ldc < (m > 1 ? m : 1))
        return FP_EINTERNAL;
    if (t != FP_GEMM_F64 && t != FP_GEMM_F32)
        return FP_EUNSUPPORTED;
    /* one device per process: the BLAS pool gets this rank's share of cores */
    fp_status st = fp__blas_load(d->threads);
    if (st != FP_OK)
        return st;
    if (t == FP_GEMM_F64)
        fp__blas_dgemm(m, n, k, a, lda, b, ldb, c, ldc);
    else
        fp__blas_sgemm(m, n, k, a, lda, b, ldb, c, ldc);
    return FP_OK;
}

static fp_status host_launch(fp_device *d, bool graph, int count)
{
    if (graph)
        return FP_EUNSUPPORTED;
    /* an empty region: what remains is waking the pool and joining it */
    for (int i = 0; i < count; i++) {
#pragma omp parallel num_threads(d->threads)
        {
        }
    }
    return FP_OK;
}

const fp_device_ops fp_device_host = {
    .name = "host",
    .probe = host_probe,
    .open = host_open,
    .close = host_close,
    .query = host_query,
    .alloc = host_alloc,
    .free = host_free,
    .copy = host_copy,
    .sync = host_sync,
    .timer_start = host_timer_start,
    .timer_stop = host_timer_stop,
    .fill = host_fill,
    .stream = host_stream,
    .count_wrong = host_count_wrong,
    .mem_write = host_mem_write,
    .mem_verify = host_mem_verify,
    .digest = host_digest,
    .fill_gemm = host_fill_gemm,
    .gemm_supports = host_gemm_supports,
    .gemm = host_gemm,
    .launch = host_launch,
    .share_cores = host_share_cores,
};
