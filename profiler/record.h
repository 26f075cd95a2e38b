#ifndef FLEETPRINT_PROFILER_RECORD_H
#define FLEETPRINT_PROFILER_RECORD_H
/* One traced NCCL event as the profiler plugin keeps it in its ring, and its
 * JSON Lines form (docs/trace.md). Shared by the plugin and by the test tools
 * that write synthetic traces, so both write exactly one format. */
#include <stddef.h>
#include <stdint.h>

/* X(enum suffix, "ev" name) */
#define FPP_KIND_MAP(X)                                                                            \
    X(GROUP, "group")                                                                              \
    X(COLL, "coll")                                                                                \
    X(P2P, "p2p") X(PROXY_OP, "proxy_op") X(PROXY_STEP, "proxy_step") X(PROXY_CTRL, "proxy_ctrl")  \
        X(KERNEL_CH, "kernel_ch") X(NET_PLUGIN, "net_plugin") X(GROUP_API, "group_api")            \
            X(COLL_API, "coll_api") X(P2P_API, "p2p_api") X(KERNEL_LAUNCH, "kernel_launch")

/* Kinds in the order of NCCL's event type bits: kind k is type 1 << k. */
typedef enum fpp_kind {
#define FPP__KIND_ENUM(id, name) FPP_##id,
    FPP_KIND_MAP(FPP__KIND_ENUM)
#undef FPP__KIND_ENUM
        FPP_KIND_COUNT
} fpp_kind;

enum { FPP_NSTATES = 3 }; /* proxy step wait states kept per direction */

typedef struct fpp_rec {
    uint16_t kind;               /* fpp_kind */
    uint8_t nch;                 /* channels (coll, p2p) or channel id (proxy op, kernel ch) */
    uint8_t is_send;             /* proxy op */
    int32_t rank;                /* rank in the communicator */
    int32_t peer;                /* p2p and proxy op: peer; coll: root */
    int32_t step;                /* proxy step: step; proxy op: number of steps */
    uint64_t id;                 /* unique in the process, > 0 */
    uint64_t parent;             /* id of the parent event, 0 for none */
    uint64_t comm;               /* communicator hash */
    uint64_t seq;                /* coll: NCCL's sequence number on the communicator */
    uint64_t count;              /* elements (coll, p2p, api events); proxy step: bytes moved */
    uint64_t t0, t1;             /* start and stop, ns of CLOCK_MONOTONIC */
    uint64_t gpu0, gpu1;         /* kernel ch: GPU globaltimer at start and stop (0: none) */
    uint64_t state[FPP_NSTATES]; /* proxy step: when each wait state was entered (0: never) */
    const char *func, *dtype, *algo, *proto; /* NCCL's static strings, or NULL */
} fpp_rec;

/* The "ev" name of a kind, "?" when out of range. */
const char *fpp_kind_name(int kind);

/* Bytes per element of an NCCL datatype name ("ncclFloat32"); 0 when unknown. */
size_t fpp_dtype_size(const char *dtype);

/* Write rec as one JSON line (with '\n') into buf of len bytes; returns the
 * length written, or 0 when it does not fit. */
size_t fpp_format(const fpp_rec *rec, char *buf, size_t len);

/* The first line of a trace file: who wrote it and the clock anchor
 * (CLOCK_MONOTONIC ns mono taken with CLOCK_REALTIME ns wall). Returns the
 * length, 0 when it does not fit. */
size_t fpp_format_header(char *buf, size_t len, const char *host, int pid, int world_rank,
                         uint64_t mono, uint64_t wall, int mask, unsigned ring, unsigned events);

/* A communicator's line, written when the plugin's init sees it. */
size_t fpp_format_comm(char *buf, size_t len, uint64_t comm, const char *name, int rank, int nranks,
                       int nnodes, int api, uint64_t t);

#endif
