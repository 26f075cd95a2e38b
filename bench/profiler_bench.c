/* Cost of the NCCL profiler plugin's callbacks: ns per startEvent + stopEvent
 * pair of a collective event, at 1 and at N threads (each thread its own
 * communicator, as NCCL's per-communicator threads are), with the writer
 * thread draining to a file meanwhile. Events a full ring refuses are counted
 * and reported: the drop path is part of the bounded cost.
 * usage: profiler_bench PLUGIN.so [pairs per thread [threads...]] */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl_profiler_abi.h"

typedef struct job {
    const ncclProfiler_v5_t *p;
    void *ctx;
    long pairs;
    double ns, cpu_ns;
} job;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *worker(void *arg)
{
    job *j = arg;
    ncclProfilerEventDescr_v5_t e = {.type = ncclProfileColl, .rank = 0};
    e.coll.func = "AllReduce";
    e.coll.datatype = "ncclFloat32";
    e.coll.count = 1 << 20;
    double t0 = now(), c0 = cpu_now();
    for (long i = 0; i < j->pairs; i++) {
        void *h;
        e.coll.seqNumber = (uint64_t)i;
        j->p->startEvent(j->ctx, &h, &e);
        j->p->stopEvent(h);
    }
    j->ns = (now() - t0) / (double)j->pairs;
    j->cpu_ns = (cpu_now() - c0) / (double)j->pairs;
    return NULL;
}

static int run(const ncclProfiler_v5_t *p, int threads, long pairs)
{
    job jobs[64];
    pthread_t tid[64];
    int mask;
    for (int t = 0; t < threads; t++) {
        jobs[t] = (job){.p = p, .pairs = pairs};
        if (p->init(&jobs[t].ctx, 0x100 + (uint64_t)t, &mask, "bench", 1, threads, t, NULL) ||
            !jobs[t].ctx) {
            fprintf(stderr, "profiler_bench: plugin init failed (FLEETPRINT_TRACE_DIR?)\n");
            return 4;
        }
    }
    for (int t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, worker, &jobs[t]);
    double sum = 0, worst = 0, cpu = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        sum += jobs[t].ns;
        cpu += jobs[t].cpu_ns;
        worst = jobs[t].ns > worst ? jobs[t].ns : worst;
    }
    for (int t = 0; t < threads; t++)
        p->finalize(jobs[t].ctx);
    /* wall time counts the time a thread waited for a core; CPU time is the cost */
    printf("threads %2d  pairs/thread %ld  ns per start/stop pair: CPU %.1f  wall mean %.1f"
           "  wall worst thread %.1f\n",
           threads, pairs, cpu / threads, sum / threads, worst);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: profiler_bench PLUGIN.so [pairs [threads...]]\n");
        return 2;
    }
    long pairs = argc > 2 ? atol(argv[2]) : 1000000;
    char dir[] = "/tmp/fp_profbench_XXXXXX";
    if (!mkdtemp(dir)) return 4;
    setenv("FLEETPRINT_TRACE_DIR", dir, 1);
    if (!getenv("FLEETPRINT_TRACE_RING")) setenv("FLEETPRINT_TRACE_RING", "65536", 1);
    void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    const ncclProfiler_v5_t *p = so ? dlsym(so, "ncclProfiler_v5") : NULL;
    if (!p) {
        fprintf(stderr, "profiler_bench: %s\n", dlerror());
        return 2;
    }
    printf("profiler callbacks, %ld online CPUs%s\n", sysconf(_SC_NPROCESSORS_ONLN),
           " (the trace file is written meanwhile; see its \"end\" line for drops)");
    int rc = 0;
    if (argc <= 3) {
        rc |= run(p, 1, pairs);
        rc |= run(p, 8, pairs);
    }
    for (int a = 3; a < argc && !rc; a++)
        rc |= run(p, atoi(argv[a]) > 64 ? 64 : atoi(argv[a]), pairs);
    fflush(stdout);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "grep -h '\"end\"' %s/*.jsonl; rm -rf %s", dir, dir);
    if (system(cmd) != 0) rc = 4;
    return rc;
}
