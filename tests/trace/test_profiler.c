/* The NCCL profiler plugin driven through its entry points, as NCCL drives it:
 * dlopen the .so, take the ncclProfiler_vN symbols, and play synthetic event
 * streams that follow the nesting NCCL's ext-profiler documentation gives
 * (v5: GroupApi > CollApi/P2pApi > KernelLaunch; Group > Coll/P2p > ProxyOp >
 * ProxyStep; Coll/P2p > KernelCh; ProxyCtrl on its own), several
 * communicators, nested groups and dropped events. Checks the file written.
 * usage: test_profiler PLUGIN.so */
#include <dirent.h>
#include <dlfcn.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fleetprint/trace.h"
#include "nccl_profiler_abi.h"

static char dir[256];

/* Every JSON line of the one trace file in dir (cleared after reading). */
static json_t *read_trace(void)
{
    json_t *all = json_array();
    DIR *d = opendir(dir);
    struct dirent *de;
    int files = 0;
    while (d && (de = readdir(d))) {
        if (!strstr(de->d_name, ".jsonl")) continue;
        files++;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "r");
        char line[2048];
        while (f && fgets(line, sizeof line, f)) {
            json_error_t err;
            json_t *j = json_loads(line, 0, &err);
            CHECK(j != NULL);
            if (j) json_array_append_new(all, j);
        }
        if (f) fclose(f);
        unlink(path);
    }
    if (d) closedir(d);
    CHECK(files == 1);
    return all;
}

static size_t count_ev(json_t *all, const char *ev)
{
    size_t i, n = 0;
    json_t *j;
    json_array_foreach(all, i, j) n += strcmp(json_string_value(json_object_get(j, "ev")), ev) == 0;
    return n;
}

static json_t *find_ev(json_t *all, const char *ev, size_t nth)
{
    size_t i;
    json_t *j;
    json_array_foreach(all, i,
                       j) if (strcmp(json_string_value(json_object_get(j, "ev")), ev) == 0 &&
                              nth-- == 0) return j;
    return NULL;
}

static json_int_t num(json_t *j, const char *k)
{
    return json_integer_value(json_object_get(j, k));
}

/* v5: two communicators, every event type, a group nested in a group. */
static void test_v5(const ncclProfiler_v5_t *p)
{
    void *world = NULL, *dp = NULL, *h[16] = {0};
    int mask = 0;
    CHECK(p->init(&world, 0x1111, &mask, "world", 2, 8, 3, NULL) == ncclSuccess);
    CHECK(world != NULL && (mask & ncclProfileColl) && (mask & ncclProfileP2p));
    CHECK(p->init(&dp, 0x2222, &mask, "dp", 1, 2, 1, NULL) == ncclSuccess);
    ncclProfilerEventDescr_v5_t e = {.type = ncclProfileGroupApi, .rank = 3};
    e.groupApi.groupDepth = 1;
    p->startEvent(world, &h[0], &e); /* ncclGroupStart */
    e.groupApi.groupDepth = 2;
    e.parentObj = h[0];
    p->startEvent(world, &h[1], &e); /* a nested ncclGroupStart */
    e = (ncclProfilerEventDescr_v5_t){.type = ncclProfileCollApi, .parentObj = h[1], .rank = 3};
    e.collApi.func = "AllReduce";
    e.collApi.count = 1024;
    e.collApi.datatype = "ncclFloat32";
    p->startEvent(world, &h[2], &e);
    p->stopEvent(h[2]);
    p->recordEventState(h[0], ncclProfilerGroupStartApiStop, NULL);
    p->stopEvent(h[1]);
    p->stopEvent(h[0]);
    e = (ncclProfilerEventDescr_v5_t){.type = ncclProfileKernelLaunch, .rank = 3};
    p->startEvent(world, &h[3], &e);
    p->stopEvent(h[3]);
    /* the task side: group > coll > proxy op > proxy steps, coll > kernel ch */
    e = (ncclProfilerEventDescr_v5_t){.type = ncclProfileGroup, .rank = 3};
    p->startEvent(world, &h[4], &e);
    e = (ncclProfilerEventDescr_v5_t){.type = ncclProfileColl, .parentObj = h[4], .rank = 3};
    e.coll.seqNumber = 7;
    e.coll.func = "AllReduce";
    e.coll.count = 1024;
    e.coll.datatype = "ncclFloat32";
    e.coll.nChannels = 2;
    e.coll.algo = "Ring";
    e.coll.proto = "Simple";
    p->startEvent(world, &h[5], &e);
    e = (ncclProfilerEventDescr_v5_t){.type = ncclProfileKernelCh, .parentObj = h[5], .rank = 3};
    e.kernelCh.channelId = 1;
    e.kernelCh.pTimer = 1000;
    p->startEvent(world, &h[6], &e);
    e = (ncclProfilerEventDescr_v5_t){.type = ncclProfileProxyOp, .parentObj = h[5], .rank = 3};
    e.proxyOp.peer = 4;
    e.proxyOp.nSteps = 2;
    e.proxyOp.isSend = 1;
    e.proxyOp.channelId = 1;
    p->startEvent(world, &h[7], &e);
    for (int s = 0; s < 2; s++) {
        e = (ncclProfilerEventDescr_v5_t){
            .type = ncclProfileProxyStep, .parentObj = h[7], .rank = 3};
        e.proxyStep.step = s;
        p->startEvent(world, &h[8], &e);
        ncclProfilerEventStateArgs_v5_t a = {.proxyStep = {.transSize = 2048}};
        p->recordEventState(h[8], ncclProfilerProxyStepSendGPUWait, &a);
        p->recordEventState(h[8], ncclProfilerProxyStepSendWait, &a);
        p->stopEvent(h[8]);
    }
    p->stopEvent(h[7]);
    ncclProfilerEventStateArgs_v5_t ka = {.kernelCh = {.pTimer = 5000}};
    p->recordEventState(h[6], ncclProfilerKernelChStop, &ka);
    p->stopEvent(h[6]);
    p->stopEvent(h[5]);
    p->stopEvent(h[4]);
    /* a send on the second communicator, and the proxy's control thread */
    e = (ncclProfilerEventDescr_v5_t){.type = ncclProfileP2p, .rank = 1};
    e.p2p.func = "Send";
    e.p2p.count = 256;
    e.p2p.datatype = "ncclBfloat16";
    e.p2p.peer = 0;
    p->startEvent(dp, &h[9], &e);
    p->stopEvent(h[9]);
    e = (ncclProfilerEventDescr_v5_t){.type = ncclProfileProxyCtrl, .rank = 1};
    p->startEvent(dp, &h[10], &e);
    p->recordEventState(h[10], ncclProfilerProxyCtrlSleep, NULL);
    p->stopEvent(h[10]);
    CHECK(p->finalize(dp) == ncclSuccess);
    CHECK(p->finalize(world) == ncclSuccess);

    /* what `fleetprint trace` reads of it: the ops, when they ran, the comms */
    fp_tr_job *job = NULL;
    CHECK(fp_tr_load_dir(dir, &job) == FP_OK);
    if (job) {
        CHECK(job->nranks == 1 && job->nops == 2 && job->ncomms == 2 && job->dropped == 0);
        const fp_tr_op *coll = job->ops[0].p2p ? &job->ops[1] : &job->ops[0];
        const fp_tr_op *send = job->ops[0].p2p ? &job->ops[0] : &job->ops[1];
        CHECK(!coll->p2p && coll->seq == 7 && coll->bytes == 4096 && coll->crank == 3);
        /* it ran from its kernel channel's start; it ended at the last stop */
        CHECK(coll->t_start > coll->t_enq && coll->t_end >= coll->t_start);
        CHECK(send->p2p && send->send && send->peer == 0 && send->bytes == 512);
        CHECK(job->comms[coll->comm].hash == 0x1111 && job->comms[coll->comm].nranks == 8);
        CHECK(job->comms[send->comm].hash == 0x2222 && job->comms[send->comm].members[1] == 0);
    }
    fp_tr_job_free(job);

    json_t *all = read_trace();
    CHECK(count_ev(all, "header") == 1 && count_ev(all, "end") == 1);
    CHECK(count_ev(all, "comm") == 2 && count_ev(all, "comm_end") == 2);
    CHECK(count_ev(all, "group_api") == 2 && count_ev(all, "coll_api") == 1);
    CHECK(count_ev(all, "kernel_launch") == 1 && count_ev(all, "group") == 1);
    CHECK(count_ev(all, "coll") == 1 && count_ev(all, "kernel_ch") == 1);
    CHECK(count_ev(all, "proxy_op") == 1 && count_ev(all, "proxy_step") == 2);
    CHECK(count_ev(all, "p2p") == 1 && count_ev(all, "proxy_ctrl") == 1);
    json_t *coll = find_ev(all, "coll", 0), *grp = find_ev(all, "group", 0);
    json_t *op = find_ev(all, "proxy_op", 0), *st = find_ev(all, "proxy_step", 1);
    json_t *kc = find_ev(all, "kernel_ch", 0), *p2p = find_ev(all, "p2p", 0);
    json_t *inner = find_ev(all, "group_api", 0), *outer = find_ev(all, "group_api", 1);
    CHECK(num(inner, "parent") == num(outer, "id")); /* the nested group stops first */
    CHECK(num(coll, "parent") == num(grp, "id"));
    CHECK(num(op, "parent") == num(coll, "id") && num(st, "parent") == num(op, "id"));
    CHECK(num(kc, "parent") == num(coll, "id"));
    CHECK(num(coll, "seq") == 7 && num(coll, "bytes") == 4096 && num(coll, "rank") == 3);
    CHECK(strcmp(json_string_value(json_object_get(coll, "comm")), "0000000000001111") == 0);
    CHECK(strcmp(json_string_value(json_object_get(coll, "op")), "AllReduce") == 0);
    CHECK(num(coll, "t1") >= num(coll, "t0") && num(coll, "t0") >= num(grp, "t0"));
    CHECK(num(st, "bytes") == 2048 && num(st, "send_wait") >= num(st, "send_gpu_wait") &&
          num(st, "send_gpu_wait") > 0);
    CHECK(num(kc, "gpu_t0") == 1000 && num(kc, "gpu_t1") == 5000);
    CHECK(num(p2p, "peer") == 0 && num(p2p, "bytes") == 512);
    CHECK(strcmp(json_string_value(json_object_get(p2p, "comm")), "0000000000002222") == 0);
    CHECK(num(find_ev(all, "end", 0), "ring_dropped") == 0);
    json_decref(all);
}

/* Events beyond the pool (never stopped) and beyond the ring are dropped and
 * counted; the caller never waits. */
static void test_drops(const ncclProfiler_v5_t *p)
{
    setenv("FLEETPRINT_TRACE_EVENTS", "16", 1);
    setenv("FLEETPRINT_TRACE_RING", "16", 1);
    void *c = NULL, *h[40];
    int mask = 0;
    p->init(&c, 0x3333, &mask, "x", 1, 2, 0, NULL);
    ncclProfilerEventDescr_v5_t e = {.type = ncclProfileColl};
    e.coll.func = "AllGather";
    for (int i = 0; i < 20; i++) /* 16 in flight, then 4 refused */
        p->startEvent(c, &h[i], &e);
    CHECK(h[15] != NULL && h[16] == NULL && h[19] == NULL);
    for (int i = 0; i < 20; i++)
        p->stopEvent(h[i]);
    for (int k = 0; k < 200; k++) { /* far more than the ring holds between drains */
        void *x;
        p->startEvent(c, &x, &e);
        p->stopEvent(x);
    }
    p->finalize(c);
    unsetenv("FLEETPRINT_TRACE_EVENTS");
    unsetenv("FLEETPRINT_TRACE_RING");
    json_t *all = read_trace();
    json_int_t ring_dropped = num(find_ev(all, "end", 0), "ring_dropped");
    CHECK(num(find_ev(all, "comm_end", 0), "pool_dropped") == 4);
    CHECK(ring_dropped > 0);
    CHECK((json_int_t)count_ev(all, "coll") + ring_dropped == 216);
    json_decref(all);
}

/* v4, v3 and v1 descriptors: the communicator comes from init (v4) or from
 * the event (v3, v1, whose init knows nothing of it). */
static void test_old_versions(void *so)
{
    const ncclProfiler_v4_t *p4 = dlsym(so, "ncclProfiler_v4");
    const ncclProfiler_v3_t *p3 = dlsym(so, "ncclProfiler_v3");
    CHECK(p4 && p3 && dlsym(so, "ncclProfiler_v2"));
    if (!p4 || !p3) return;
    void *c4 = NULL, *c3 = NULL, *h;
    int mask;
    p4->init(&c4, &mask, "v4", 0x4444, 1, 2, 1, NULL);
    ncclProfilerEventDescr_v4_t e4 = {.type = ncclProfileP2p, .rank = 1};
    e4.p2p.func = "Recv";
    e4.p2p.peer = 0;
    e4.p2p.count = 8;
    e4.p2p.datatype = "ncclFloat64";
    p4->startEvent(c4, &h, &e4);
    p4->stopEvent(h);
    p3->init(&c3, &mask);
    ncclProfilerEventDescr_v3_t e3 = {.type = ncclProfileColl, .rank = 2};
    e3.coll.commHash = 0x5555;
    e3.coll.func = "ReduceScatter";
    e3.coll.seqNumber = 3;
    e3.coll.count = 4;
    e3.coll.datatype = "ncclInt8";
    p3->startEvent(c3, &h, &e3);
    p3->stopEvent(h);
    /* v1 (NCCL 2.23) gives enum indices: 4 is ncclFuncAllReduce, 7 ncclFloat32 */
    const ncclProfiler_v1_t *p1 = dlsym(so, "ncclProfiler_v1");
    CHECK(p1 != NULL);
    void *c1 = NULL;
    if (p1) {
        p1->init(&c1, &mask);
        ncclProfilerEventDescr_v1_t e1 = {.type = ncclProfileColl, .rank = 0};
        e1.coll.commHash = 0x6666;
        e1.coll.func = 4;
        e1.coll.datatype = 7;
        e1.coll.count = 2;
        e1.coll.algo = 1;
        e1.coll.proto = 2;
        p1->startEvent(c1, &h, &e1);
        p1->stopEvent(h);
        p1->finalize(c1);
    }
    p3->finalize(c3);
    p4->finalize(c4);
    json_t *all = read_trace();
    json_t *p2p = find_ev(all, "p2p", 0), *coll = find_ev(all, "coll", 0);
    CHECK(p2p && num(p2p, "bytes") == 64 &&
          strcmp(json_string_value(json_object_get(p2p, "comm")), "0000000000004444") == 0);
    CHECK(coll && num(coll, "seq") == 3 && num(coll, "rank") == 2 &&
          strcmp(json_string_value(json_object_get(coll, "comm")), "0000000000005555") == 0);
    json_t *v1coll = find_ev(all, "coll", 1);
    CHECK(v1coll && strcmp(json_string_value(json_object_get(v1coll, "op")), "AllReduce") == 0 &&
          num(v1coll, "bytes") == 8 &&
          strcmp(json_string_value(json_object_get(v1coll, "algo")), "Ring") == 0 &&
          strcmp(json_string_value(json_object_get(v1coll, "proto")), "Simple") == 0);
    json_decref(all);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_profiler PLUGIN.so\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "/tmp/fp_profiler_XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    setenv("FLEETPRINT_TRACE_DIR", dir, 1);
    unsetenv("RANK");
    void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    CHECK(so != NULL);
    if (!so) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    const ncclProfiler_v5_t *p5 = dlsym(so, "ncclProfiler_v5");
    CHECK(p5 && strcmp(p5->name, "fleetprint") == 0);
    if (p5) {
        test_v5(p5);
        test_drops(p5);
    }
    test_old_versions(so);
    /* without FLEETPRINT_TRACE_DIR the plugin loads, activates nothing, writes nothing */
    unsetenv("FLEETPRINT_TRACE_DIR");
    void *c = (void *)1;
    int mask = -1;
    CHECK(p5 && p5->init(&c, 1, &mask, "off", 1, 1, 0, NULL) == ncclSuccess && c == NULL &&
          mask == 0);
    dlclose(so);
    rmdir(dir);
    CHECK_DONE();
}
