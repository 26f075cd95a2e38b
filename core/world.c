#include "fleetprint/world.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "fleetprint/stats.h"
#include "fleetprint/timer.h"

enum { TAG_DIAG = 7001, TAG_CLOCK = 7002, TAG_ENDING = 7003 };

/* How long a rank waits for rank 0's abort once rank 0 said it is ending the
 * job (seconds). */
#define ABORT_WAIT 10.0

/* Deadline of the blocking step in progress (fp_world_step_begin/end), kept
 * by a watchdog thread; lock guards every field but thread. */
typedef struct watchdog {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool running, stop;
    bool armed;
    bool polling;        /* the main thread is in fp_world_wait, in step polled */
    long seq;            /* the armed step's number (fp_world.seq) */
    double deadline;     /* fp_clock() */
    char what[160];
    char polled[160];
} watchdog;

struct fp_world {
    int rank, size;
    int nnodes;
    int *node_of;               /* size entries */
    char (*node_names)[FP_NAME_MAX];
    int local_rank, local_size;
    double timeout;
    double origin;              /* rank 0's fp_clock() at start, on rank 0's clock */
    double *offset, *error;     /* per rank: clock offset against rank 0 and its bound */
    long seq;                   /* blocking steps entered so far */
    MPI_Comm comm, ctrl;
    bool mpi_up;
    bool owns_mpi;              /* opened MPI: closing finalizes it */
    bool multiple;              /* MPI_THREAD_MULTIPLE: the watchdog may diagnose */
    watchdog dog;
    bool peer_lost;             /* a deadline expired: Finalize would hang */
    bool diagnosing, diagnosed; /* under dog.lock: a thread diagnoses a timeout, has done */
    char command[1024];
    fp_world_timeout_fn on_timeout; /* under dog.lock; called once */
    void *on_timeout_arg;
    int *missing;               /* rank 0, after a timeout: the ranks that never arrived */
    size_t nmissing;
    char missing_step[160];
};

int fp_world_rank(const fp_world *w) { return w->rank; }
int fp_world_size(const fp_world *w) { return w->size; }
int fp_world_nnodes(const fp_world *w) { return w->nnodes; }
int fp_world_node_of(const fp_world *w, int rank) { return w->node_of[rank]; }
const char *fp_world_node_name(const fp_world *w, int node) { return w->node_names[node]; }
const char *fp_world_my_node(const fp_world *w) { return w->node_names[w->node_of[w->rank]]; }
int fp_world_local_rank(const fp_world *w) { return w->local_rank; }
int fp_world_local_size(const fp_world *w) { return w->local_size; }
double fp_world_timeout(const fp_world *w) { return w->timeout; }
MPI_Comm fp_world_comm(const fp_world *w) { return w->comm; }
double fp_world_clock_offset(const fp_world *w, int rank) { return w->offset[rank]; }
double fp_world_clock_error(const fp_world *w, int rank) { return w->error[rank]; }

int fp_world_node_size(const fp_world *w, int node)
{
    int n = 0;
    for (int r = 0; r < w->size; r++)
        n += w->node_of[r] == node;
    return n;
}

int fp_world_node_leader(const fp_world *w, int node)
{
    for (int r = 0; r < w->size; r++)
        if (w->node_of[r] == node)
            return r;
    return -1;
}

double fp_world_clock_error_max(const fp_world *w)
{
    double m = 0;
    for (int r = 0; r < w->size; r++)
        m = w->error[r] > m ? w->error[r] : m;
    return m;
}

double fp_world_now(const fp_world *w)
{
    return fp_clock() - w->offset[w->rank] - w->origin;
}

const char *fp_world_describe(const fp_world *w, int rank, char *buf, size_t len)
{
    if (rank >= 0 && rank < w->size && w->node_names)
        snprintf(buf, len, "rank %d (node %s)", rank, w->node_names[w->node_of[rank]]);
    else
        snprintf(buf, len, "rank %d", rank);
    return buf;
}

void fp_world_configure(fp_world *w, double timeout_s, bool verbose, bool quiet)
{
    pthread_mutex_lock(&w->dog.lock); /* the watchdog reads it */
    w->timeout = timeout_s > 0 ? timeout_s : 60;
    pthread_mutex_unlock(&w->dog.lock);
    fp_log_identity(w->node_names ? fp_world_my_node(w) : "?", w->rank, verbose, quiet);
}

/* ---- deadlines ---------------------------------------------------------------- */

/* What a rank reports to rank 0 after its deadline expired. */
typedef struct diag_report {
    long seq;      /* its blocking steps entered so far */
    char what[64]; /* the step it was waiting in */
} diag_report;

/* After a deadline expired: every rank that got here reports to rank 0 what
 * it was waiting in; rank 0 waits a short grace period and names the ranks
 * that never reported (they never arrived, or are gone). When every rank
 * reported, it names those stuck in another step than its own: the ranks
 * disagree on where the run is. Rank 0 also diagnoses at once when another
 * rank's report comes first (its watchdog looks for one every tick): what is
 * then its own step, or NULL outside any, and the message names the first
 * reporter's step. */
static void diagnose(fp_world *w, const char *what, long mine)
{
    double grace = w->timeout / 4 < 2.0 ? w->timeout / 4 : 2.0;
    diag_report me = {.seq = mine};
    snprintf(me.what, sizeof me.what, "%s", what ? what : "");
    if (w->rank != 0) {
        MPI_Request req;
        MPI_Isend(&me, (int)sizeof me, MPI_BYTE, 0, TAG_DIAG, w->ctrl, &req);
        double end = fp_clock() + grace;
        int done = 0;
        while (!done && fp_clock() < end) {
            MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            fp_sleep(1e-3);
        }
        if (!done)
            MPI_Cancel(&req);
        return;
    }
    diag_report *rep = calloc((size_t)w->size, sizeof *rep);
    int *got = calloc((size_t)w->size, sizeof *got);
    MPI_Request *reqs = calloc((size_t)w->size, sizeof *reqs);
    if (!rep || !got || !reqs) {
        fp_error("timeout after %.1f s in %s (no memory to diagnose)", w->timeout, what);
        goto done;
    }
    for (int r = 1; r < w->size; r++)
        MPI_Irecv(&rep[r], (int)sizeof *rep, MPI_BYTE, r, TAG_DIAG, w->ctrl, &reqs[r]);
    got[0] = 1;
    rep[0] = me;
    double end = fp_clock() + grace;
    int pending = w->size - 1;
    while (pending > 0 && fp_clock() < end) {
        for (int r = 1; r < w->size; r++) {
            if (got[r])
                continue;
            MPI_Test(&reqs[r], &got[r], MPI_STATUS_IGNORE);
            pending -= got[r];
        }
        fp_sleep(1e-3);
    }
    for (int r = 1; r < w->size && !what; r++)
        if (got[r]) {
            rep[r].what[sizeof rep[r].what - 1] = 0;
            what = rep[r].what;
            snprintf(me.what, sizeof me.what, "%s", what);
        }
    if (!what)
        what = "no step";
    /* the missing ranks; when none, the ranks waiting elsewhere */
    char names[512] = "", one[96];
    size_t nm = 0;
    int missing = 0, elsewhere = 0;
    free(w->missing);
    w->missing = calloc((size_t)w->size, sizeof *w->missing);
    w->nmissing = 0;
    snprintf(w->missing_step, sizeof w->missing_step, "%s", what);
    for (int r = 1; r < w->size; r++) {
        if (!got[r])
            MPI_Cancel(&reqs[r]);
        missing += !got[r];
        if (!got[r] && w->missing)
            w->missing[w->nmissing++] = r;
    }
    for (int r = 1; r < w->size; r++) {
        rep[r].what[sizeof rep[r].what - 1] = 0;
        bool named = missing ? !got[r] : strcmp(rep[r].what, me.what) != 0;
        elsewhere += !missing && named;
        if (named && nm + 180 < sizeof names)
            nm += (size_t)snprintf(names + nm, sizeof names - nm, "%s%s%s%s%s", nm ? ", " : "",
                                   fp_world_describe(w, r, one, sizeof one),
                                   missing ? "" : " in '", missing ? "" : rep[r].what,
                                   missing ? "" : "'");
    }
    if (missing)
        fp_error("timeout after %.1f s in %s: waiting for %s, which never arrived", w->timeout,
                 what, names);
    else if (elsewhere)
        fp_error("timeout after %.1f s in %s: every rank is alive, but %s", w->timeout, what,
                 names);
    else
        fp_error("timeout after %.1f s in %s: every rank is alive and waiting in it, but the "
                 "step did not complete", w->timeout, what);
    /* the hook runs once, whichever of the main thread and the watchdog
     * diagnosed first */
    pthread_mutex_lock(&w->dog.lock);
    fp_world_timeout_fn fn = w->on_timeout;
    void *arg = w->on_timeout_arg;
    w->on_timeout = NULL;
    pthread_mutex_unlock(&w->dog.lock);
    if (fn)
        fn(w, arg);
    /* the peers wait for rank 0 to end the job (wait_for_rank0): tell them it
     * is under way, as MPI_Abort can take a second to reach them on a busy
     * machine */
    static const int ending = 1;
    for (int r = 1; r < w->size; r++) {
        MPI_Request req;
        if (MPI_Isend(&ending, 1, MPI_INT, r, TAG_ENDING, w->ctrl, &req) == MPI_SUCCESS)
            MPI_Request_free(&req);
    }
done:
    free(rep);
    free(got);
    free(reqs);
}

/* Diagnoses a timeout once per rank, whichever of the main thread and the
 * watchdog comes first. The other waits until that diagnosis (and rank 0's
 * outputs) is done, then returns false: ending the job at once could kill
 * the outputs half written. */
static bool diagnose_timeout(fp_world *w, const char *what, long mine)
{
    watchdog *d = &w->dog;
    pthread_mutex_lock(&d->lock);
    bool first = !w->diagnosing;
    w->diagnosing = true;
    while (!first && !w->diagnosed)
        pthread_cond_wait(&d->wake, &d->lock);
    pthread_mutex_unlock(&d->lock);
    w->peer_lost = true;
    if (!first)
        return false;
    diagnose(w, what, mine);
    pthread_mutex_lock(&d->lock);
    w->diagnosed = true;
    pthread_cond_broadcast(&d->wake);
    pthread_mutex_unlock(&d->lock);
    return true;
}

fp_status fp_world_wait(fp_world *w, MPI_Request *reqs, int n, const char *what)
{
    watchdog *d = &w->dog;
    pthread_mutex_lock(&d->lock);
    w->seq++;
    d->polling = true;
    snprintf(d->polled, sizeof d->polled, "%s", what);
    pthread_mutex_unlock(&d->lock);
    double start = fp_clock(), deadline = start + w->timeout;
    int done = 0, rc;
    for (long spin = 0;; spin++) {
        rc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS || done)
            break;
        /* busy-poll the first millisecond for latency, then yield the core */
        if ((spin & 63) == 0) {
            double now = fp_clock();
            if (now > deadline)
                break;
            if (now - start > 1e-3)
                fp_sleep(now - start > 0.1 ? 1e-3 : 2e-5);
        }
    }
    pthread_mutex_lock(&d->lock);
    d->polling = false;
    pthread_mutex_unlock(&d->lock);
    if (rc != MPI_SUCCESS) {
        fp_error("MPI failure in %s", what);
        return FP_EMPI;
    }
    return done ? FP_OK : fp_world_timed_out(w, what);
}

/* After a timeout, a rank other than 0 gives rank 0 time to print its
 * diagnosis and end the job; when it has not (it may be the stuck one), the
 * caller ends the job from here. Once rank 0 said it is ending the job (and
 * MPI may be called here: probe), its abort gets longer to arrive: beside a
 * CPU hog it took over a second, and the peers said it never came (issue 19). */
static void wait_for_rank0(const fp_world *w, bool probe)
{
    if (w->rank == 0)
        return;
    double end = fp_clock() + (w->timeout / 4 < 3.0 ? w->timeout / 4 + 1.0 : 4.0);
    bool ending = false;
    while (fp_clock() < end) {
        int flag = 0;
        if (probe && !ending)
            MPI_Iprobe(0, TAG_ENDING, w->ctrl, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            ending = true;
            end = fp_clock() + ABORT_WAIT;
        }
        fp_sleep(0.01);
    }
    const char *node = w->node_names ? w->node_names[0] : "?";
    if (ending)
        fp_error("rank 0 (node %s) began ending the job %.0f s ago; aborting from here", node,
                 ABORT_WAIT);
    else
        fp_error("rank 0 (node %s) did not end the job after the timeout; aborting", node);
}

/* The watchdog's end of an expired step: the main thread (or the comm
 * thread) is inside a blocking MPI call that nothing can interrupt, so the
 * watchdog names the missing ranks (the same diagnosis as fp_world_wait's,
 * through MPI on the control communicator: MPI_THREAD_MULTIPLE) and ends the
 * job itself with the timeout's exit code. The one place outside main that
 * calls MPI_Abort: there is no caller left to return to. Returns only when
 * another thread of this rank diagnoses the timeout; that one ends the job. */
static void expire(fp_world *w, const char *what, long seq)
{
    if (w->multiple) {
        if (!diagnose_timeout(w, what, seq))
            return; /* the main thread diagnoses, and ends the job */
    } else
        fp_error("timeout after %.1f s in %s (MPI gives no MPI_THREAD_MULTIPLE here: the ranks "
                 "that never arrived cannot be named)", w->timeout, what);
    wait_for_rank0(w, w->multiple);
    MPI_Abort(MPI_COMM_WORLD, fp_status_exit_code(FP_ETIMEOUT));
}

/* Rank 0, on a watchdog tick: has another rank's deadline expired (its
 * report waits on the control communicator)? Rank 0 may be computing outside
 * any step, or have entered its step later than the reporter: it diagnoses
 * now, not when its own deadline comes, since the reporter ends the job
 * itself soon after (wait_for_rank0). Called without dog.lock: MPI may block
 * on a lock of its own that a blocking call on the main thread holds. */
static bool peer_reported(fp_world *w)
{
    if (w->rank != 0 || !w->multiple || w->size < 2)
        return false;
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_DIAG, w->ctrl, &flag, MPI_STATUS_IGNORE);
    return flag;
}

/* Wakes every tick (a twentieth of the deadline, at most 0.1 s) and checks
 * the armed step's deadline, and on rank 0 for a peer's timeout report;
 * sleeps on a condition variable in between, so the timed path pays only
 * fp_world_step_begin/end (an uncontended mutex and a clock read). */
static void *watchdog_main(void *arg)
{
    fp_world *w = arg;
    watchdog *d = &w->dog;
    pthread_mutex_lock(&d->lock);
    while (!d->stop) {
        bool expired = d->armed && fp_clock() > d->deadline;
        if (!expired && !w->diagnosing) {
            pthread_mutex_unlock(&d->lock);
            bool peer = peer_reported(w);
            pthread_mutex_lock(&d->lock);
            expired = peer && !d->stop && !w->diagnosing;
        }
        if (expired) {
            char what[sizeof d->what];
            bool in_step = d->armed || d->polling;
            long seq = d->armed ? d->seq : w->seq;
            memcpy(what, d->armed ? d->what : d->polled, sizeof what);
            pthread_mutex_unlock(&d->lock);
            expire(w, in_step ? what : NULL, seq); /* returns only when another thread diagnoses */
            return NULL;
        }
        double tick = w->timeout / 20 < 0.1 ? w->timeout / 20 : 0.1;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long ns = ts.tv_nsec + (long)(tick * 1e9);
        ts.tv_sec += ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&d->wake, &d->lock, &ts);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static fp_status watchdog_start(fp_world *w)
{
    fp_status st = FP_OK;
    watchdog *d = &w->dog;
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        FP_FAIL(FP_ENOMEM, "no memory for the deadline watchdog's clock");
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&d->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (rc != 0)
        FP_FAIL(FP_ENOMEM, "no memory for the deadline watchdog's condition variable");
    if (pthread_create(&d->thread, NULL, watchdog_main, w) != 0) {
        fp_error("cannot start the deadline watchdog thread");
        pthread_cond_destroy(&d->wake);
        return FP_EINTERNAL;
    }
    d->running = true;
cleanup:
    return st;
}

static void watchdog_stop(fp_world *w)
{
    watchdog *d = &w->dog;
    if (!d->running)
        return;
    pthread_mutex_lock(&d->lock);
    d->stop = true;
    pthread_cond_signal(&d->wake);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    pthread_cond_destroy(&d->wake);
    d->running = false;
}

void fp_world_step_begin(fp_world *w, const char *what)
{
    watchdog *d = &w->dog;
    pthread_mutex_lock(&d->lock);
    d->seq = ++w->seq;
    d->deadline = fp_clock() + w->timeout;
    d->armed = true;
    snprintf(d->what, sizeof d->what, "%s", what);
    pthread_mutex_unlock(&d->lock);
}

void fp_world_step_end(fp_world *w)
{
    pthread_mutex_lock(&w->dog.lock);
    w->dog.armed = false;
    pthread_mutex_unlock(&w->dog.lock);
}

void fp_world_on_timeout(fp_world *w, fp_world_timeout_fn fn, void *arg)
{
    pthread_mutex_lock(&w->dog.lock);
    w->on_timeout = fn;
    w->on_timeout_arg = arg;
    pthread_mutex_unlock(&w->dog.lock);
}

size_t fp_world_missing(const fp_world *w, const int **ranks, const char **step)
{
    *ranks = w->missing;
    *step = w->missing_step;
    return w->nmissing;
}

fp_status fp_world_timed_out(fp_world *w, const char *what)
{
    diagnose_timeout(w, what, w->seq);
    return FP_ETIMEOUT;
}

fp_status fp_world_barrier(fp_world *w, const char *what)
{
    MPI_Request req;
    if (MPI_Ibarrier(w->comm, &req) != MPI_SUCCESS)
        return FP_EMPI;
    return fp_world_wait(w, &req, 1, what);
}

fp_status fp_world_allgather(fp_world *w, const void *mine, void *all, int bytes, const char *what)
{
    MPI_Request req;
    if (MPI_Iallgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, w->comm, &req) != MPI_SUCCESS)
        return FP_EMPI;
    return fp_world_wait(w, &req, 1, what);
}

fp_status fp_world_bcast(fp_world *w, void *buf, int bytes, const char *what)
{
    MPI_Request req;
    if (MPI_Ibcast(buf, bytes, MPI_BYTE, 0, w->comm, &req) != MPI_SUCCESS)
        return FP_EMPI;
    return fp_world_wait(w, &req, 1, what);
}

/* ---- start-up -------------------------------------------------------------------- */

/* This rank's node name and where it came from. A name that does not fit
 * name[len] is cut short here and refused by check_node_names. */
static const char *node_identity(char *name, size_t len)
{
    const char *from = "FLEETPRINT_NODE", *env = getenv(from);
    if (!env || !*env)
        env = getenv(from = "SLURMD_NODENAME");
    if (env && *env) {
        if (strlen(env) >= len)
            snprintf(name, len, "%s", "");
        else
            snprintf(name, len, "%s", env);
        return from;
    }
    if (gethostname(name, len) != 0)
        snprintf(name, len, "localhost");
    name[len - 1] = 0;
    char *dot = strchr(name, '.'); /* short name, as Slurm knows it */
    if (dot)
        *dot = 0;
    return "the host name";
}

/* Node names go into drain files, hostlists and scontrol commands: every rank
 * refuses a run where any rank's name is not a host name (all decide alike,
 * on the same gathered names; rank 0 says which). */
typedef struct node_id {
    char name[FP_NAME_MAX];
    char from[24];
} node_id;

static fp_status check_node_names(const fp_world *w, const node_id *all)
{
    for (int r = 0; r < w->size; r++) {
        if (fp_node_name_ok(all[r].name))
            continue;
        if (w->rank == 0)
            fp_error("rank %d: node name '%s' (from %s) is not a host name: 1 to %d letters, "
                     "digits, '-', '_' or '.', starting with a letter or digit",
                     r, all[r].name[0] ? all[r].name : "(too long or empty)", all[r].from,
                     FP_NAME_MAX - 1);
        return FP_EINPUT;
    }
    return FP_OK;
}

static uint64_t name_hash(const char *name)
{
    uint64_t h = 0;
    for (const char *p = name; *p; p++)
        h = fp_mix64(h ^ (unsigned char)*p);
    return h;
}

static fp_status build_node_map(fp_world *w)
{
    fp_status st = FP_OK;
    int *slot = NULL;
    size_t mask;
    node_id mine;
    memset(&mine, 0, sizeof mine);
    snprintf(mine.from, sizeof mine.from, "%s", node_identity(mine.name, sizeof mine.name));
    node_id *all = calloc((size_t)w->size, sizeof *all);
    w->node_of = calloc((size_t)w->size, sizeof *w->node_of);
    w->node_names = calloc((size_t)w->size, FP_NAME_MAX);
    FP_CHECK_ALLOC(all);
    FP_CHECK_ALLOC(w->node_of);
    FP_CHECK_ALLOC(w->node_names);
    FP_CHECK(fp_world_allgather(w, &mine, all, (int)sizeof mine, "start-up (node names)"));
    FP_CHECK(check_node_names(w, all));
    /* nodes numbered in order of their first rank, found through an open
     * addressing table of node numbers + 1: a scan of the nodes so far per
     * rank was 800,000 x 100,000 comparisons at 100,000 nodes x 8 */
    mask = 1;
    while (mask < 2 * (size_t)w->size)
        mask <<= 1;
    slot = calloc(mask--, sizeof *slot);
    FP_CHECK_ALLOC(slot);
    for (int r = 0; r < w->size; r++) {
        size_t i = name_hash(all[r].name) & mask;
        while (slot[i] && strcmp(w->node_names[slot[i] - 1], all[r].name) != 0)
            i = (i + 1) & mask;
        if (!slot[i]) {
            slot[i] = ++w->nnodes;
            memcpy(w->node_names[slot[i] - 1], all[r].name, FP_NAME_MAX);
        }
        w->node_of[r] = slot[i] - 1;
    }
    for (int r = 0; r < w->size; r++) {
        bool same = w->node_of[r] == w->node_of[w->rank];
        w->local_size += same;
        w->local_rank += same && r < w->rank;
    }
cleanup:
    free(slot);
    free(all);
    return st;
}

/* Clock sync: at least CLOCK_ROUNDS exchanges per rank; more while the
 * bound is looser than CLOCK_TARGET_S (a TCP round trip is ~50 us, an
 * InfiniBand one a few), within CLOCK_BUDGET_S per rank and 2 s for the
 * whole world. On a busy machine an exchange is often delayed by a
 * descheduled thread (ms); more of them find one that is not: 4 ranks on a
 * 2-core machine beside 4 busy loops were within 50 us in 6 of 6 start-ups,
 * and within 100 us in 1 of 6 with 8 exchanges (the rest 1.6-5.4 ms). */
enum { CLOCK_ROUNDS = 8, CLOCK_ROUNDS_MAX = 5000 };
#define CLOCK_TARGET_S 50e-6
#define CLOCK_BUDGET_S 0.5

/* Rank 0 ping-pongs with every other rank; the exchange with the smallest
 * round trip gives the offset, with half that round trip as its error bound
 * (Cristian's algorithm). A negative time stamp ends a rank's exchanges.
 * Then everyone learns every offset. */
static fp_status sync_clocks(fp_world *w)
{
    fp_status st = FP_OK;
    w->offset = calloc((size_t)w->size, sizeof *w->offset);
    w->error = calloc((size_t)w->size, sizeof *w->error);
    double *both = NULL;
    FP_CHECK_ALLOC(w->offset);
    FP_CHECK_ALLOC(w->error);
    MPI_Request req[2];
    if (w->rank == 0) {
        double budget = w->size > 1 ? fmin(CLOCK_BUDGET_S, 2.0 / (w->size - 1)) : 0;
        for (int r = 1; r < w->size; r++) {
            double best = 1e30, start = fp_clock();
            for (int i = 0; i < CLOCK_ROUNDS || (i < CLOCK_ROUNDS_MAX && 0.5 * best > CLOCK_TARGET_S &&
                                                 fp_clock() - start < budget); i++) {
                double t0 = fp_clock(), tr;
                MPI_Irecv(&tr, 1, MPI_DOUBLE, r, TAG_CLOCK, w->ctrl, &req[0]);
                MPI_Isend(&t0, 1, MPI_DOUBLE, r, TAG_CLOCK, w->ctrl, &req[1]);
                FP_CHECK(fp_world_wait(w, req, 2, "start-up (clock sync)"));
                double t1 = fp_clock();
                if (t1 - t0 < best) {
                    best = t1 - t0;
                    w->offset[r] = tr - 0.5 * (t0 + t1);
                    w->error[r] = 0.5 * best;
                }
            }
            double end = -1;
            MPI_Isend(&end, 1, MPI_DOUBLE, r, TAG_CLOCK, w->ctrl, &req[1]);
            FP_CHECK(fp_world_wait(w, &req[1], 1, "start-up (clock sync)"));
        }
    } else {
        for (;;) {
            double t0;
            MPI_Irecv(&t0, 1, MPI_DOUBLE, 0, TAG_CLOCK, w->ctrl, &req[0]);
            FP_CHECK(fp_world_wait(w, req, 1, "start-up (clock sync)"));
            if (t0 < 0)
                break;
            double tr = fp_clock();
            MPI_Isend(&tr, 1, MPI_DOUBLE, 0, TAG_CLOCK, w->ctrl, &req[1]);
            FP_CHECK(fp_world_wait(w, &req[1], 1, "start-up (clock sync)"));
        }
    }
    both = calloc(2 * (size_t)w->size + 1, sizeof *both);
    FP_CHECK_ALLOC(both);
    if (w->rank == 0) {
        memcpy(both, w->offset, (size_t)w->size * sizeof *both);
        memcpy(both + w->size, w->error, (size_t)w->size * sizeof *both);
        both[2 * w->size] = fp_clock();
    }
    MPI_Request b;
    MPI_Ibcast(both, 2 * w->size + 1, MPI_DOUBLE, 0, w->comm, &b);
    FP_CHECK(fp_world_wait(w, &b, 1, "start-up (clock offsets)"));
    memcpy(w->offset, both, (size_t)w->size * sizeof *both);
    memcpy(w->error, both + w->size, (size_t)w->size * sizeof *both);
    w->origin = both[2 * w->size];
cleanup:
    free(both);
    return st;
}

static void record_command(fp_world *w, int argc, char **argv)
{
    for (int i = 0, n = 0; i < argc && n < (int)sizeof w->command - 1; i++)
        n += snprintf(w->command + n, sizeof w->command - (size_t)n, "%s%s", i ? " " : "",
                      argv[i]);
}

/* Everything after MPI is up: the communicators over base, the watchdog,
 * node identity and the clocks. */
static fp_status world_start(fp_world *w, MPI_Comm base, int provided)
{
    fp_status st = FP_OK;
    w->multiple = provided >= MPI_THREAD_MULTIPLE;
    FP_CHECK_MPI(MPI_Comm_rank(base, &w->rank));
    FP_CHECK_MPI(MPI_Comm_size(base, &w->size));
    FP_CHECK_MPI(MPI_Comm_dup(base, &w->comm));
    FP_CHECK_MPI(MPI_Comm_dup(base, &w->ctrl));
    MPI_Comm_set_errhandler(w->comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(w->ctrl, MPI_ERRORS_RETURN);
    fp_log_identity("?", w->rank, false, false);
    FP_CHECK(watchdog_start(w));
    FP_CHECK(build_node_map(w));
    fp_log_identity(fp_world_my_node(w), w->rank, false, false);
    FP_CHECK(sync_clocks(w));
cleanup:
    return st;
}

static fp_world *world_new(void)
{
    fp_world *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->timeout = 60;
    w->comm = w->ctrl = MPI_COMM_NULL;
    pthread_mutex_init(&w->dog.lock, NULL);
    return w;
}

fp_status fp_world_open(fp_world **out, int *argc, char ***argv)
{
    fp_status st = FP_OK;
    fp_world *w = world_new();
    *out = w;
    FP_CHECK_ALLOC(w);
    record_command(w, *argc, *argv);
    /* MULTIPLE: the watchdog diagnoses a timeout through MPI while the main
     * thread is blocked inside a collective (docs/collectives.md) */
    int provided = MPI_THREAD_SINGLE;
    FP_CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    w->mpi_up = true;
    w->owns_mpi = true;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    FP_CHECK(world_start(w, MPI_COMM_WORLD, provided));
cleanup:
    return st;
}

fp_status fp_world_open_comm(fp_world **out, MPI_Comm base)
{
    fp_status st = FP_OK;
    fp_world *w = world_new();
    *out = w;
    FP_CHECK_ALLOC(w);
    record_command(w, 0, NULL);
    int provided = MPI_THREAD_SINGLE;
    FP_CHECK_MPI(MPI_Query_thread(&provided));
    w->mpi_up = true;
    FP_CHECK(world_start(w, base, provided));
cleanup:
    return st;
}

bool fp_world_close(fp_world *w, fp_status st)
{
    if (!w)
        return false;
    bool must_abort = w->mpi_up && (w->peer_lost || st == FP_ETIMEOUT || st == FP_EPEER);
    if (must_abort)
        wait_for_rank0(w, true);
    watchdog_stop(w);
    if (w->mpi_up && !must_abort) {
        /* The run is over. A SIGTERM from here on is mpiexec ending the job
         * because a peer already exited with its verdict's code (1, 4, 5):
         * dying of it would turn this rank's same code into 143. */
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        if (w->comm != MPI_COMM_NULL)
            MPI_Comm_free(&w->comm);
        if (w->ctrl != MPI_COMM_NULL)
            MPI_Comm_free(&w->ctrl);
        if (w->owns_mpi)
            MPI_Finalize();
    }
    pthread_mutex_destroy(&w->dog.lock);
    free(w->missing);
    free(w->node_of);
    free(w->node_names);
    free(w->offset);
    free(w->error);
    free(w);
    return must_abort;
}

fp_status fp_world_agree(fp_world *w, fp_status st)
{
    if (w->peer_lost)
        return st;
    /* reduce a key that orders by severity (as fp_status_worst does) and
     * still carries the status itself */
    int code = fp_status_exit_code(st);
    int mine = (code == 5 ? 3 : code) * 64 + (int)st, worst = mine;
    MPI_Request req;
    if (MPI_Iallreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, w->comm, &req) != MPI_SUCCESS)
        return FP_EMPI;
    fp_status wst = fp_world_wait(w, &req, 1, "agreeing on the outcome");
    return wst != FP_OK ? wst : (fp_status)(worst % 64);
}

const char *fp_world_command_line(const fp_world *w)
{
    return w->command;
}

/* ---- gathering a run ---------------------------------------------------------- */

/* The gather's messages, on the data communicator: rank 0 says when to send,
 * then the rank sends its rows, metric keys, entities and rows' start times. */
enum { TAG_GATHER_GO = 7010, TAG_GATHER_ROWS, TAG_GATHER_KEYS, TAG_GATHER_ENTS, TAG_GATHER_T };

/* Rank 0 takes the ranks' tables in batches of at most this many ranks and
 * bytes of keys and entities (their rows go straight into the run's array):
 * the whole world's tables (a rank's keys repeat every other rank's) are
 * never held at once. */
#define BATCH_RANKS 1024
#define BATCH_BYTES ((size_t)32 << 20)

/* A metric key as sent: the key fields of an fp_sample (104 bytes of its 272). */
typedef struct wire_key {
    char text[FP_SAMPLE_KEY_TEXT]; /* suite .. unit */
    int32_t better;
    uint64_t size;
} wire_key;

/* A rank's samples as rows into its own tables: n[0] rows (and their start
 * times), n[1] keys, n[2] entities. */
typedef struct part {
    long long n[3];
    fp_sample_row *rows;
    double *t;
    wire_key *keys;
    fp_entity *ents;
} part;

/* This rank's samples as a part (b holds its rows and entities). */
static fp_status make_part(const fp_sample *samples, size_t n, fp_rows_builder *b, part *p)
{
    fp_status st = FP_OK;
    if (n >= INT_MAX)
        FP_FAIL(FP_ENOMEM, "%zu samples are too many for one rank to send (most: %d)", n,
                INT_MAX - 1);
    for (size_t i = 0; i < n; i++)
        if (fp_rows_builder_add(b, &samples[i]) != FP_OK)
            FP_FAIL(FP_ENOMEM, "no memory for the rows of this rank's %zu samples", n);
    p->keys = calloc(b->rows.nkeys + 1, sizeof *p->keys);
    FP_CHECK_ALLOC(p->keys);
    for (size_t k = 0; k < b->rows.nkeys; k++) {
        const fp_sample *s = &b->rows.keys[k];
        memcpy(p->keys[k].text, s->suite, sizeof p->keys[k].text);
        p->keys[k].better = (int32_t)s->better;
        p->keys[k].size = s->size;
    }
    p->n[0] = (long long)b->rows.n;
    p->n[1] = (long long)b->rows.nkeys;
    p->n[2] = (long long)b->rows.nents;
    p->rows = b->rows.row;
    p->t = b->rows.t;
    p->ents = b->rows.ents;
cleanup:
    return st;
}

/* Rank r's part into the run's tables (b): its rows, already in place, get
 * the run's key and entity ids. map has room for its keys and entities. */
static fp_status merge_part(fp_rows_builder *b, int r, const part *p, uint32_t *map)
{
    fp_status st = FP_OK;
    long long nk = p->n[1], ne = p->n[2];
    for (long long k = 0; k < nk; k++) {
        fp_sample key;
        memcpy(key.suite, p->keys[k].text, sizeof p->keys[k].text);
        key.better = (fp_better)p->keys[k].better;
        key.size = p->keys[k].size;
        if (fp_rows_builder_key(b, &key, &map[k]) != FP_OK)
            FP_FAIL(FP_ENOMEM, "no memory for the metric keys of the gathered run (rank %d)", r);
    }
    for (long long e = 0; e < ne; e++)
        if (fp_rows_builder_entity(b, &p->ents[e], &map[nk + e]) != FP_OK)
            FP_FAIL(FP_ENOMEM, "no memory for the entities of the gathered run (rank %d)", r);
    for (long long i = 0; i < p->n[0]; i++) {
        fp_sample_row *row = &p->rows[i];
        if (row->key >= nk || row->entity >= ne)
            FP_FAIL(FP_EINTERNAL, "gathering samples: row %lld of rank %d names key %u of %lld "
                                  "and entity %u of %lld", i, r, row->key, nk, row->entity, ne);
        row->key = map[row->key];
        row->entity = map[nk + row->entity];
    }
cleanup:
    return st;
}

/* Gather bytes from every rank into all (rank 0 only) with the deadline. */
static fp_status gather0(fp_world *w, const void *mine, void *all, int bytes, const char *what)
{
    MPI_Request req;
    if (MPI_Igather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, 0, w->comm, &req) != MPI_SUCCESS)
        return FP_EMPI;
    return fp_world_wait(w, &req, 1, what);
}

/* A rank other than 0: its part, once rank 0 asks for it. */
static fp_status send_part(fp_world *w, const part *p, MPI_Datatype type[3])
{
    fp_status st = FP_OK;
    MPI_Request req[4];
    int go = 0;
    FP_CHECK_MPI(MPI_Irecv(&go, 1, MPI_INT, 0, TAG_GATHER_GO, w->comm, &req[0]));
    FP_CHECK(fp_world_wait(w, req, 1, "gathering samples"));
    FP_CHECK_MPI(MPI_Isend(p->rows, (int)p->n[0], type[0], 0, TAG_GATHER_ROWS, w->comm, &req[0]));
    FP_CHECK_MPI(MPI_Isend(p->keys, (int)p->n[1], type[1], 0, TAG_GATHER_KEYS, w->comm, &req[1]));
    FP_CHECK_MPI(MPI_Isend(p->ents, (int)p->n[2], type[2], 0, TAG_GATHER_ENTS, w->comm, &req[2]));
    FP_CHECK_MPI(MPI_Isend(p->t, (int)p->n[0], MPI_DOUBLE, 0, TAG_GATHER_T, w->comm, &req[3]));
    FP_CHECK(fp_world_wait(w, req, 4, "gathering samples"));
cleanup:
    return st;
}

/* Rank 0: every other rank's part, a batch of ranks at a time, each rank's
 * rows and times received into all and all_t at its place (rank order) and
 * merged into b. */
static fp_status take_parts(fp_world *w, const long long (*counts)[3], fp_sample_row *all,
                            double *all_t, MPI_Datatype type[3], fp_rows_builder *b)
{
    fp_status st = FP_OK;
    const size_t kbytes = sizeof(wire_key), ebytes = sizeof(fp_entity);
    unsigned char *buf = NULL;
    size_t buf_cap = 0, map_cap = 0, at = (size_t)counts[0][0];
    uint32_t *map = NULL;
    part *parts = calloc(BATCH_RANKS, sizeof *parts);
    MPI_Request *req = calloc(5 * BATCH_RANKS, sizeof *req);
    static const int go = 1;
    FP_CHECK_ALLOC(parts);
    FP_CHECK_ALLOC(req);
    for (int first = 1, last; first < w->size; first = last) {
        size_t bytes = 0, off = 0;
        for (last = first; last < w->size && last - first < BATCH_RANKS; last++) {
            size_t more = (size_t)counts[last][1] * kbytes + (size_t)counts[last][2] * ebytes;
            if (last > first && bytes + more > BATCH_BYTES)
                break;
            bytes += more;
        }
        unsigned char *grown = fp_grow(buf, &buf_cap, bytes + 1, 1, 1 << 16);
        FP_CHECK_ALLOC(grown);
        buf = grown;
        int nreq = 0;
        for (int r = first; r < last; r++) {
            part *p = &parts[r - first];
            memcpy(p->n, counts[r], sizeof p->n);
            if (p->n[0] >= INT_MAX || p->n[1] >= INT_MAX || p->n[2] >= INT_MAX)
                FP_FAIL(FP_ENOMEM, "rank %d has %lld samples, too many to gather (most: %d)", r,
                        p->n[0], INT_MAX - 1);
            p->rows = all + at;
            p->t = all_t + at;
            p->keys = (wire_key *)(buf + off);
            off += (size_t)p->n[1] * kbytes;
            p->ents = (fp_entity *)(buf + off);
            off += (size_t)p->n[2] * ebytes;
            at += (size_t)p->n[0];
            FP_CHECK_MPI(MPI_Irecv(p->rows, (int)p->n[0], type[0], r, TAG_GATHER_ROWS, w->comm,
                                   &req[nreq++]));
            FP_CHECK_MPI(MPI_Irecv(p->keys, (int)p->n[1], type[1], r, TAG_GATHER_KEYS, w->comm,
                                   &req[nreq++]));
            FP_CHECK_MPI(MPI_Irecv(p->ents, (int)p->n[2], type[2], r, TAG_GATHER_ENTS, w->comm,
                                   &req[nreq++]));
            FP_CHECK_MPI(MPI_Irecv(p->t, (int)p->n[0], MPI_DOUBLE, r, TAG_GATHER_T, w->comm,
                                   &req[nreq++]));
            FP_CHECK_MPI(MPI_Isend(&go, 1, MPI_INT, r, TAG_GATHER_GO, w->comm, &req[nreq++]));
        }
        FP_CHECK(fp_world_wait(w, req, nreq, "gathering samples"));
        for (int r = first; r < last; r++) {
            const part *p = &parts[r - first];
            uint32_t *grown_map = fp_grow(map, &map_cap, (size_t)(p->n[1] + p->n[2]) + 1,
                                          sizeof *map, 256);
            FP_CHECK_ALLOC(grown_map);
            map = grown_map;
            FP_CHECK(merge_part(b, r, p, map));
        }
    }
cleanup:
    free(parts);
    free(req);
    free(map);
    free(buf);
    return st;
}

fp_status fp_world_gather_run(fp_world *w, const fp_rank_info *mine, const fp_sample *samples,
                              size_t n, fp_run *run)
{
    fp_status st = FP_OK;
    fp_rank_info *infos = NULL;
    long long (*counts)[3] = NULL;
    fp_sample_row *all = NULL;
    double *all_t = NULL;
    fp_rows_builder local, merged;
    memset(&local, 0, sizeof local);
    memset(&merged, 0, sizeof merged);
    part me;
    memset(&me, 0, sizeof me);
    MPI_Datatype type[3] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    const int type_bytes[3] = {sizeof(fp_sample_row), sizeof(wire_key), sizeof(fp_entity)};
    bool root = w->rank == 0;
    size_t size = (size_t)w->size;
    if (root) {
        infos = calloc(size, sizeof *infos);
        counts = calloc(size, sizeof *counts);
        FP_CHECK_ALLOC(infos);
        FP_CHECK_ALLOC(counts);
    }
    /* each rank its own tables (a rank's samples name few keys and
     * entities); rank 0 merges them into the run's, so that it never holds
     * the run as fp_samples: 32 bytes a sample where one takes 272 */
    FP_CHECK(make_part(samples, n, &local, &me));
    FP_CHECK(gather0(w, mine, infos, (int)sizeof *mine, "gathering rank info"));
    FP_CHECK(gather0(w, me.n, counts, (int)sizeof me.n, "gathering sample counts"));
    for (int t = 0; t < 3; t++) {
        FP_CHECK_MPI(MPI_Type_contiguous(type_bytes[t], MPI_BYTE, &type[t]));
        FP_CHECK_MPI(MPI_Type_commit(&type[t]));
    }
    if (!root) {
        FP_CHECK(send_part(w, &me, type));
        goto cleanup;
    }
    size_t total = 0;
    for (int r = 0; r < w->size; r++)
        total += (size_t)counts[r][0];
    all = fp_malloc_huge((total ? total : 1) * sizeof *all);
    all_t = fp_malloc_huge((total ? total : 1) * sizeof *all_t);
    FP_CHECK_ALLOC(all);
    FP_CHECK_ALLOC(all_t);
    if (n) {
        memcpy(all, me.rows, n * sizeof *all);
        memcpy(all_t, me.t, n * sizeof *all_t);
    }
    me.rows = all;
    me.t = all_t;
    {
        uint32_t *map = calloc((size_t)(me.n[1] + me.n[2]) + 1, sizeof *map);
        FP_CHECK_ALLOC(map);
        st = merge_part(&merged, 0, &me, map);
        free(map);
        FP_CHECK(st);
    }
    fp_rows_builder_free(&local);
    FP_CHECK(take_parts(w, (const long long(*)[3])counts, all, all_t, type, &merged));
    FP_CHECK(fp_run_set_shape(run, w->nnodes, w->size));
    for (int k = 0; k < w->nnodes; k++)
        memcpy(run->nodes[k], w->node_names[k], FP_NAME_MAX);
    for (int r = 0; r < w->size; r++) {
        run->ranks[r] = infos[r];
        run->ranks[r].node = w->node_of[r];
        run->ranks[r].clock_offset = w->offset[r];
        run->ranks[r].clock_error = w->error[r];
    }
    /* the gathered rows become the run's: no second copy of any */
    fp_run_rows *rows = fp_rows_builder_take(&merged);
    FP_CHECK_ALLOC(rows);
    rows->row = all;
    rows->t = all_t;
    rows->n = total;
    all = NULL;
    all_t = NULL;
    fp_run_set_rows(run, rows);
cleanup:
    for (int t = 0; t < 3; t++)
        if (type[t] != MPI_DATATYPE_NULL)
            MPI_Type_free(&type[t]);
    fp_rows_builder_free(&local);
    fp_rows_builder_free(&merged);
    free(me.keys);
    free(infos);
    free(counts);
    free(all);
    free(all_t);
    return st;
}
