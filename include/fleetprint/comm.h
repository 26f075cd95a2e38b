#ifndef FLEETPRINT_COMM_H
#define FLEETPRINT_COMM_H
/* Communication backends (mpi, nccl): one start/test/wait interface over all
 * collectives, so one driver loop serves every test, and an optional blocking
 * run. Every wait and run has the world's deadline. */
#include <stdbool.h>
#include <stddef.h>

#include "fleetprint/device.h"
#include "fleetprint/status.h"
#include "fleetprint/world.h"

typedef enum fp_dtype { FP_F32, FP_F64, FP_F16, FP_BF16, FP_DTYPE_COUNT } fp_dtype;
typedef enum fp_redop { FP_SUM, FP_MAX, FP_MIN, FP_REDOP_COUNT } fp_redop;
typedef enum fp_coll {
    FP_ALLREDUCE,
    FP_ALLGATHER,      /* count: elements each rank contributes */
    FP_REDUCE_SCATTER, /* count: elements each rank receives; in place, the
                          result lands in this rank's block, recv + rank * count */
    FP_ALLTOALL,       /* count: elements sent to each peer */
    FP_BROADCAST,
    FP_REDUCE,
    FP_SENDRECV,       /* send to peer, receive from recv_peer */
    FP_BARRIER,
    FP_COLL_COUNT
} fp_coll;

size_t fp_dtype_size(fp_dtype t);
const char *fp_dtype_name(fp_dtype t);   /* "float", "double", "half", "bfloat16" */
const char *fp_redop_name(fp_redop op);  /* "sum", "max", "min" */
const char *fp_coll_name(fp_coll c);     /* "allreduce", ... */

typedef struct fp_coll_args {
    fp_coll coll;
    const void *send;
    void *recv;          /* == send for in place (allgather: this rank's block
                            already sits at its offset in recv) */
    size_t count;
    fp_dtype dtype;
    fp_redop op;
    int root;            /* broadcast, reduce */
    int peer;            /* sendrecv: send to */
    int recv_peer;       /* sendrecv: receive from */
} fp_coll_args;

typedef struct fp_comm fp_comm;
typedef struct fp_comm_req fp_comm_req;

typedef struct fp_comm_ops {
    const char *name;
    bool device_buffers;  /* true: buffers live in device memory */
    /* Open over the world's ranks; dev is this rank's device. */
    fp_status (*open)(fp_comm **out, fp_world *w, fp_device *dev);
    void (*close)(fp_comm *c);
    bool (*supports)(fp_dtype t, fp_redop op);
    /* Start a collective; *req is valid until wait. */
    fp_status (*start)(fp_comm *c, const fp_coll_args *a, fp_comm_req **req);
    /* Drive progress; *done true when complete (req still needs wait). */
    fp_status (*test)(fp_comm *c, fp_comm_req *req, bool *done);
    /* Wait until complete or the deadline; frees req either way. On timeout,
     * names the ranks that never arrived and returns FP_ETIMEOUT. */
    fp_status (*wait)(fp_comm *c, fp_comm_req *req, const char *what);
    /* Optional (NULL: callers use start + wait). Run a collective to
     * completion on the calling thread with one blocking call, the deadline
     * kept by the world's watchdog (fp_world_step_begin: on expiry the job
     * ends, exit 4, naming the ranks that never arrived); what names it.
     * Not while started collectives are still unwaited. */
    fp_status (*run)(fp_comm *c, const fp_coll_args *a, const char *what);
    /* Optional (NULL: the backend has no groups). Open a communicator over
     * the world ranks members[0..n) (ascending, this rank among them), built
     * by its members alone (fp_world_meet first, then MPI_Comm_create_group,
     * or ncclCommInitRank with an id of the group's own): no other rank takes
     * part, so a rank outside the group that hangs cannot stall it. parent
     * is this backend's communicator over the world; tag (0..999) as
     * fp_world_meet's. A group communicator keeps the deadline it was
     * opened with (an fp_clock() time) instead of the world's: its set-up
     * and every wait end there with FP_ETIMEOUT, naming nobody and ending
     * nothing, and the caller abandons the group. Its collectives are
     * allreduce, allgather, reduce_scatter, alltoall and barrier, through
     * start, test and wait (no run); ranks in them are group ranks (the index
     * in members). close after a timeout releases what it can without the
     * members that never came and leaves the rest to the end of the job: an
     * operation that never completed keeps its buffers (do not free them). */
    fp_status (*open_group)(fp_comm **out, fp_comm *parent, const int *members, int n,
                            int tag, double deadline);
} fp_comm_ops;

extern const fp_comm_ops fp_comm_mpi, fp_comm_nccl;
extern const fp_comm_ops *const fp_comm_backends[];

/* Backend by name ("mpi", "nccl"), or NULL. */
const fp_comm_ops *fp_comm_find(const char *name);

/* The mpi backend for device buffers (core/comm_stage.c): device pointers go
 * to MPI where it is CUDA-aware, else every collective is staged through
 * host buffers. */
extern const fp_comm_ops fp_comm_mpi_staged;

/* Whether this MPI takes device pointers (MPIX_Query_cuda_support where
 * <mpi-ext.h> has it; false otherwise). */
bool fp_mpi_cuda_aware(void);

/* The backend a run with device backend dev uses for comm: the staged mpi
 * backend for mpi on a device with its own memory, else comm itself. */
const fp_comm_ops *fp_comm_for_device(const fp_comm_ops *comm, const fp_device_ops *dev);

#endif
