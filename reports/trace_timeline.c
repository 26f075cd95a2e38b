/* A live job's NCCL ops as Chrome trace JSON (Perfetto, chrome://tracing): a
 * process per rank, a thread per communicator, one complete event per op from
 * when it ran to when it ended, with its enqueue time and size in args. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fleetprint/log.h"
#include "fleetprint/report.h"

fp_status fp_tr_write_timeline(const fp_tr_job *job, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fp_error("%s: cannot write: %s", path, strerror(errno));
        return FP_EIO;
    }
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    const char *sep = "";
    for (int r = 0; r < job->nranks; r++) {
        fprintf(f,
                "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":"
                "\"rank %d (%s)\"}}",
                sep, r, r, job->host[r]);
        sep = ",\n";
    }
    for (size_t i = 0; i < job->nops; i++) {
        const fp_tr_op *o = &job->ops[i];
        const fp_tr_comm *c = &job->comms[o->comm];
        fprintf(f,
                "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
                "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"comm\":\"%016llx\",\"comm_rank\":%d,"
                "\"nranks\":%d,\"seq\":%llu,\"bytes\":%llu,\"peer\":%d,\"enqueued_us\":%.3f}}",
                sep, o->p2p ? "p2p" : "coll", o->op, o->rank, o->comm, o->t_start * 1e6,
                (o->t_end - o->t_start) * 1e6, (unsigned long long)c->hash, o->crank, c->nranks,
                (unsigned long long)o->seq, (unsigned long long)o->bytes, o->peer, o->t_enq * 1e6);
    }
    for (int c = 0; c < job->ncomms; c++)
        for (int r = 0; r < job->comms[c].nranks; r++)
            if (job->comms[c].members[r] >= 0)
                fprintf(f,
                        ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
                        "\"args\":{\"name\":\"comm %016llx (%d ranks)\"}}",
                        job->comms[c].members[r], c, (unsigned long long)job->comms[c].hash,
                        job->comms[c].nranks);
    fprintf(f, "\n]}\n");
    if (fclose(f) != 0) {
        fp_error("%s: write failed: %s", path, strerror(errno));
        return FP_EIO;
    }
    return FP_OK;
}
