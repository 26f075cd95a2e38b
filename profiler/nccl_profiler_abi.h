#ifndef FLEETPRINT_PROFILER_NCCL_PROFILER_ABI_H
#define FLEETPRINT_PROFILER_NCCL_PROFILER_ABI_H
/* The NCCL profiler plugin ABI, versions 1 to 5, written from NCCL's
 * documentation (ext-profiler/README.md and the profiler_vN headers). NCCL
 * 2.23 looks for ncclProfiler_v1, 2.24 for v2, 2.25 for v3, 2.26-2.27 for v4,
 * 2.28 for v5
 * (each newest first, then the older ones it still accepts). Only the layout
 * matters: these structs are what NCCL passes, so field order and types must
 * match NCCL's exactly. No NCCL header is needed to build against this. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef int ncclResult_t; /* an enum in nccl.h: 0 is ncclSuccess */
enum { ncclSuccess = 0 };

typedef enum {
    NCCL_LOG_NONE = 0,
    NCCL_LOG_VERSION = 1,
    NCCL_LOG_WARN = 2,
    NCCL_LOG_INFO = 3
} ncclDebugLogLevel;
enum { NCCL_INIT = 1 }; /* debug subsystem flag */
typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file,
                                  int line, const char *fmt, ...);

/* Event types (descriptor.type and the activation mask). */
enum {
    ncclProfileGroup = 1 << 0,
    ncclProfileColl = 1 << 1,
    ncclProfileP2p = 1 << 2,
    ncclProfileProxyOp = 1 << 3,
    ncclProfileProxyStep = 1 << 4,
    ncclProfileProxyCtrl = 1 << 5,
    ncclProfileKernelCh = 1 << 6,     /* v3+ */
    ncclProfileNetPlugin = 1 << 7,    /* v3+ */
    ncclProfileGroupApi = 1 << 8,     /* v5 */
    ncclProfileCollApi = 1 << 9,      /* v5 */
    ncclProfileP2pApi = 1 << 10,      /* v5 */
    ncclProfileKernelLaunch = 1 << 11 /* v5 */
};

/* Event state transitions passed to recordEventState. */
typedef enum {
    ncclProfilerProxyOpSendPosted = 0,
    ncclProfilerProxyOpSendRemFifoWait = 1,
    ncclProfilerProxyOpSendTransmitted = 2,
    ncclProfilerProxyOpSendDone = 3,
    ncclProfilerProxyOpRecvPosted = 4,
    ncclProfilerProxyOpRecvReceived = 5,
    ncclProfilerProxyOpRecvTransmitted = 6,
    ncclProfilerProxyOpRecvDone = 7,
    ncclProfilerProxyStepSendGPUWait = 8,
    ncclProfilerProxyStepSendWait = 9,
    ncclProfilerProxyStepRecvWait = 10,
    ncclProfilerProxyStepRecvFlushWait = 11,
    ncclProfilerProxyStepRecvGPUWait = 12,
    ncclProfilerProxyCtrlIdle = 13,
    ncclProfilerProxyCtrlActive = 14,
    ncclProfilerProxyCtrlSleep = 15,
    ncclProfilerProxyCtrlWakeup = 16,
    ncclProfilerProxyCtrlAppend = 17,
    ncclProfilerProxyCtrlAppendEnd = 18,
    ncclProfilerProxyOpInProgress_v4 = 19,
    ncclProfilerProxyStepSendPeerWait_v4 = 20,
    ncclProfilerNetPluginUpdate = 21,
    ncclProfilerKernelChStop = 22,
    ncclProfilerGroupStartApiStop = 23,
    ncclProfilerGroupEndApiStart = 24
} ncclProfilerEventState_t;

/* The table of entry points NCCL looks up as ncclProfiler_vN: the same five
 * functions in every version, over that version's descriptor and arguments. */
#define NCCL__PROFILER_TABLE(V, INIT_PARAMS, DESCR, STATE_ARGS)                                    \
    typedef struct {                                                                               \
        const char *name;                                                                          \
        ncclResult_t(*init) INIT_PARAMS;                                                           \
        ncclResult_t (*startEvent)(void *context, void **eHandle, DESCR *eDescr);                  \
        ncclResult_t (*stopEvent)(void *eHandle);                                                  \
        ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_t eState,           \
                                         STATE_ARGS *eStateArgs);                                  \
        ncclResult_t (*finalize)(void *context);                                                   \
    } ncclProfiler_##V##_t

/* Descriptor parts every version shares. */
typedef struct {
    pid_t pid; /* of the originating process */
    uint8_t channelId;
    int peer; /* remote rank */
    int nSteps;
    int chunkSize;
    int isSend;
} ncclProfilerProxyOpDescr_t;
typedef struct {
    int step;
} ncclProfilerProxyStepDescr_t;
typedef struct {
    int64_t id;
    void *data;
} ncclProfilerNetPluginDescr_t;

/* ---- v5 (NCCL 2.28) ---------------------------------------------------------------- */

typedef struct {
    uint64_t type;
    void *parentObj;
    int rank;
    union {
        struct {
            bool graphCaptured;
            int groupDepth;
        } groupApi;
        struct {
            const char *func;
            size_t count;
            const char *datatype;
            int root;
            void *stream;
            bool graphCaptured;
        } collApi;
        struct {
            const char *func;
            size_t count;
            const char *datatype;
            void *stream;
            bool graphCaptured;
        } p2pApi;
        struct {
            void *stream;
        } kernelLaunch;
        struct {
            uint64_t seqNumber;
            const char *func;
            const void *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t nChannels;
            uint8_t nWarps;
            const char *algo;
            const char *proto;
            void *parentGroup;
        } coll;
        struct {
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
            uint8_t nChannels;
            void *parentGroup;
        } p2p;
        ncclProfilerProxyOpDescr_t proxyOp;
        ncclProfilerProxyStepDescr_t proxyStep;
        struct {
            uint8_t channelId;
            uint64_t pTimer;
        } kernelCh;
        ncclProfilerNetPluginDescr_t netPlugin;
    };
} ncclProfilerEventDescr_v5_t;

typedef union {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
    struct {
        void *data;
    } netPlugin;
    struct {
        uint64_t pTimer;
    } kernelCh;
} ncclProfilerEventStateArgs_v5_t;

NCCL__PROFILER_TABLE(v5,
                     (void **context, uint64_t commId, int *eActivationMask, const char *commName,
                      int nNodes, int nranks, int rank, ncclDebugLogger_t logfn),
                     ncclProfilerEventDescr_v5_t, ncclProfilerEventStateArgs_v5_t);

/* ---- v4 (NCCL 2.26, 2.27) ------------------------------------------------------------ */

typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        struct {
            uint64_t seqNumber;
            const char *func;
            const void *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t nChannels;
            uint8_t nWarps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
            uint8_t nChannels;
        } p2p;
        ncclProfilerProxyOpDescr_t proxyOp;
        ncclProfilerProxyStepDescr_t proxyStep;
        struct {
            uint8_t channelId;
            uint64_t pTimer;
        } kernelCh;
        ncclProfilerNetPluginDescr_t netPlugin;
    };
} ncclProfilerEventDescr_v4_t;

typedef ncclProfilerEventStateArgs_v5_t ncclProfilerEventStateArgs_v4_t; /* same union */

NCCL__PROFILER_TABLE(v4,
                     (void **context, int *eActivationMask, const char *commName, uint64_t commHash,
                      int nNodes, int nranks, int rank, ncclDebugLogger_t logfn),
                     ncclProfilerEventDescr_v4_t, ncclProfilerEventStateArgs_v4_t);

/* ---- v3 (NCCL 2.25) and v2 (NCCL 2.24) ------------------------------------------------ */

typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t commHash;
            uint64_t seqNumber;
            const char *func;
            const void *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t nMaxChannels;
            uint8_t nWarps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *name;
            uint64_t commHash;
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
        } p2p;
        ncclProfilerProxyOpDescr_t proxyOp;
        ncclProfilerProxyStepDescr_t proxyStep;
        struct {
            uint8_t channelId;
        } kernelCh;
        ncclProfilerNetPluginDescr_t netPlugin;
    };
} ncclProfilerEventDescr_v3_t;

typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t commHash;
            uint64_t seqNumber;
            const char *func;
            const void *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            const char *datatype;
            size_t trafficBytes;
            uint8_t nMaxChannels;
            uint8_t nWarps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *name;
            uint64_t commHash;
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
        } p2p;
        ncclProfilerProxyOpDescr_t proxyOp;
        ncclProfilerProxyStepDescr_t proxyStep;
    };
} ncclProfilerEventDescr_v2_t;

/* ---- v1 (NCCL 2.23): function, datatype, algorithm and protocol are enum indices ---- */

typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t commHash;
            uint64_t seqNumber;
            uint8_t func; /* ncclFunc_t */
            const void *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            uint8_t datatype; /* ncclDataType_t */
            uint32_t op;
            size_t trafficBytes;
            uint8_t nMaxChannels;
            uint8_t nWarps;
            uint8_t algo;
            uint8_t proto;
            int isCollnet;
            int isNvls;
        } coll;
        struct {
            const char *name;
            uint64_t commHash;
            uint8_t func;
            void *buff;
            uint8_t datatype;
            size_t count;
            int peer;
        } p2p;
        ncclProfilerProxyOpDescr_t proxyOp;
        ncclProfilerProxyStepDescr_t proxyStep;
    };
} ncclProfilerEventDescr_v1_t;

typedef union {
    struct {
        size_t transSize;
        int steps;
    } proxyOp;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
} ncclProfilerEventStateArgs_v3_t;
typedef ncclProfilerEventStateArgs_v3_t ncclProfilerEventStateArgs_v2_t;
typedef ncclProfilerEventStateArgs_v3_t ncclProfilerEventStateArgs_v1_t;

NCCL__PROFILER_TABLE(v3, (void **context, int *eActivationMask), ncclProfilerEventDescr_v3_t,
                     ncclProfilerEventStateArgs_v3_t);

NCCL__PROFILER_TABLE(v2, (void **context, int *eActivationMask), ncclProfilerEventDescr_v2_t,
                     ncclProfilerEventStateArgs_v2_t);
NCCL__PROFILER_TABLE(v1, (void **context, int *eActivationMask), ncclProfilerEventDescr_v1_t,
                     ncclProfilerEventStateArgs_v1_t);

#endif
