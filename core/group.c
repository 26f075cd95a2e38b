/* Steps among some ranks of the world, without the others (fp_world_poll,
 * fp_world_meet): isolation's groups meet and build their communicators
 * from their own members only, so a rank outside a group that hangs cannot
 * stall it, and a group that hangs is abandoned at its deadline. */
#include <stdlib.h>

#include "fleetprint/log.h"
#include "fleetprint/timer.h"
#include "fleetprint/world.h"

/* Tags of a meeting on the data communicator: apart from the tag 0 of the
 * link sweep and from those isolation's exchanges use (1000..9999). */
enum { TAG_MEET = 10000 };

int fp_world_group_rank(const int *members, int n, int rank)
{
    for (int i = 0; i < n; i++)
        if (members[i] == rank)
            return i;
    return -1;
}

fp_status fp_world_poll(MPI_Request *reqs, int n, double deadline)
{
    double start = fp_clock();
    for (long spin = 0;; spin++) {
        int done = 0;
        if (MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return FP_EMPI;
        if (done)
            return FP_OK;
        /* busy-poll the first millisecond for latency, then yield the core */
        if ((spin & 63) == 0) {
            double now = fp_clock();
            if (now > deadline)
                return FP_ETIMEOUT;
            if (now - start > 1e-3)
                fp_sleep(now - start > 0.1 ? 1e-3 : 2e-5);
        }
    }
}

/* Give up on the receives of reqs[0..n) that did not complete (cancelled,
 * then freed) and on the sends (freed: MPI still delivers them). */
static void abandon(MPI_Request *reqs, const bool *recv, int n)
{
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        int done = 0;
        MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE);
        if (done)
            continue;
        if (recv[i])
            MPI_Cancel(&reqs[i]);
        MPI_Request_free(&reqs[i]);
    }
}

fp_status fp_world_meet(fp_world *w, const int *members, int n, int tag, double deadline,
                        void *payload, int bytes)
{
    fp_status st = FP_OK;
    MPI_Comm comm = fp_world_comm(w);
    int me = fp_world_rank(w), leader = members[0];
    int hello = TAG_MEET + 2 * tag, answer = hello + 1;
    static const char greeting = 1;
    char *got = NULL;
    MPI_Request *reqs = calloc((size_t)(2 * n), sizeof *reqs);
    bool *recv = calloc((size_t)(2 * n), sizeof *recv);
    FP_CHECK_ALLOC(reqs);
    FP_CHECK_ALLOC(recv);
    for (int i = 0; i < 2 * n; i++)
        reqs[i] = MPI_REQUEST_NULL;
    if (me != leader) {
        FP_CHECK_MPI(MPI_Isend(&greeting, 1, MPI_CHAR, leader, hello, comm, &reqs[0]));
        FP_CHECK_MPI(MPI_Irecv(payload, bytes, MPI_BYTE, leader, answer, comm, &reqs[1]));
        recv[1] = true;
        st = fp_world_poll(reqs, 2, deadline);
        if (st != FP_OK)
            abandon(reqs, recv, 2);
        goto cleanup;
    }
    got = calloc((size_t)n, 1);
    FP_CHECK_ALLOC(got);
    for (int i = 1; i < n; i++) {
        FP_CHECK_MPI(MPI_Irecv(&got[i], 1, MPI_CHAR, members[i], hello, comm, &reqs[i]));
        recv[i] = true;
    }
    /* answer only with time to spare: a member that received its answer is
     * sure every other one receives its own before the deadline */
    double left = deadline - fp_clock(), spare = left / 5 < 1.0 ? left / 5 : 1.0;
    st = fp_world_poll(reqs + 1, n - 1, deadline - spare);
    if (st != FP_OK) {
        abandon(reqs + 1, recv + 1, n - 1);
        goto cleanup;
    }
    for (int i = 1; i < n; i++)
        FP_CHECK_MPI(MPI_Isend(payload, bytes, MPI_BYTE, members[i], answer, comm, &reqs[n + i]));
    st = fp_world_poll(reqs + n + 1, n - 1, deadline);
    if (st != FP_OK)
        abandon(reqs + n + 1, recv + n + 1, n - 1);
cleanup:
    free(got);
    free(reqs);
    free(recv);
    return st;
}
