#ifndef FLEETPRINT_BURNIN_H
#define FLEETPRINT_BURNIN_H
/* burnin: sustained GEMM stress on every device with result-consistency
 * (silent data corruption) checks against the device's own first result and
 * against the other ranks, memory pattern tests, degradation of throughput
 * over time, and device telemetry (NVML loaded at run time, CPU sensors from
 * /sys on the host backend). The command is `fleetprint burnin`
 * (burnin/burnin.c); docs/burnin.md is the user's guide.
 *
 * The section up to "C API" is per-element logic usable from .cu files. */
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/hd.h"

/* ---- C API (not for .cu files) --------------------------------------------------- */
#ifndef __CUDACC__
#include <stdbool.h>
#include <stdio.h>

#include "fleetprint/device.h"
#include "fleetprint/sample.h"
#include "fleetprint/status.h"
#include "fleetprint/suite.h"

/* ---- thresholds (defaults of the options that override them) ---------------------- */

/* Relative tolerance of result comparisons; 0 is bitwise. Burn-in's inputs
 * are multiples of 1/16 in [-15/16, 15/16], so every product and partial
 * sum of the GEMM is exact in its accumulation type (k <= 65536) and the
 * result has the same bits whatever the summation order, algorithm or
 * device: bitwise is the right default. */
#define FP_BURNIN_SDC_TOL_DEFAULT "0"
/* A rank is degraded over time when, relative to its peers window by
 * window, its late windows run below (1 - threshold) x its early ones (see
 * fp_burnin_degradation). */
#define FP_BURNIN_DEGRADE_DEFAULT "0.25"
/* Fewest windows for which degradation is judged: early and late thirds of
 * at least two windows each, so one noisy window cannot decide. */
#define FP_BURNIN_DEGRADE_MIN_WINDOWS 6
/* Temperature above which a device is warned about (degrees C; SuperBench). */
#define FP_BURNIN_TEMP_WARN_C 85.0
/* Memory tested when --memory-fraction is auto: cuda share of device memory,
 * host bytes (the host's "device memory" is all of RAM, shared). */
#define FP_BURNIN_MEM_FRACTION_CUDA 0.5
#define FP_BURNIN_MEM_BYTES_HOST (32ULL << 20)

/* burnin's config: the runtime's settings first (fp_ctx_open reads them),
 * then its own. */
typedef struct fp_burnin_config {
    fp_config base;
    int gemm_size;           /* timed problem n = m = k; 0 = per device */
    double duration;         /* seconds of stress */
    double interval;         /* seconds per window */
    double memory_fraction;  /* of device memory for the pattern test; -1 auto, 0 none */
    const char *gemm_type;   /* auto, f64, f32, tf32, f16, bf16, fp8 */
    double sdc_tol;          /* relative tolerance; 0 = bitwise */
    double degrade;          /* degradation threshold (fraction) */
    const char *nvml;        /* NVML library to load; NULL: $FLEETPRINT_NVML or the system's */
} fp_burnin_config;

/* ---- memory test (burnin/memtest.c) ----------------------------------------------- */

typedef struct fp_memtest_result {
    int pattern;                         /* fp_mem_pattern */
    uint64_t bytes;                      /* bytes tested */
    fp_mem_check check;                  /* errors and the first bad words */
    double seconds;                      /* both passes, wall time */
} fp_memtest_result;

/* "walking-ones", "walking-zeros", "address", "random". */
const char *fp_mem_pattern_name(int p);

/* Test bytes (rounded down to a multiple of 16) of device memory at region
 * with pattern p: the device writes the whole region (ops->mem_write), then
 * reads it all back and compares every word (ops->mem_verify), counting
 * errors and keeping the first bad addresses. ops/dev is the device; region
 * was allocated by the caller with ops->alloc. FP_OK unless the device
 * failed (wrong words are results, not errors). */
fp_status fp_memtest_run(const fp_device_ops *ops, fp_device *dev, void *region, size_t bytes,
                         int p, uint64_t seed, fp_memtest_result *res);

/* ---- result checks (burnin/sdc.c) ------------------------------------------------- */

/* Results are checked on the device (the backend's digest op: an fp_digest
 * of the result against the reference, device.h); ranks exchange digests. */

/* Cross-rank vote over the digests of nranks ranks that computed the same
 * product: for each block the value a strict majority agrees on (tol 0: the
 * same hash; else sums within tol x the block's median magnitude sum of the
 * block's median). disagree[r] gets the blocks rank r is outside the majority
 * of (or, for nonfinite elements, at least 1). Returns the blocks that had no
 * strict majority (every rank then gets no blame for them). */
int fp_sdc_vote(const fp_digest *all, int nranks, double tol, int *disagree);

/* Degradation of one rank's throughput over time. */
typedef struct fp_degrade {
    int state;         /* 0 judged, 1 waived (too few windows) */
    bool degraded;     /* slower late than early, relative to its peers */
    bool slowed;       /* slower late than early, but so were its peers: a note, not a verdict */
    double early;      /* median of the first third of its windows (GFLOP/s) */
    double late;       /* median of the last third */
    double ratio;      /* late / early */
    double rel_ratio;  /* late / early of its throughput over the peers' per window */
} fp_degrade;

/* Judge every rank from tput (nranks rows of nwin window throughputs,
 * row-major; NaN for a window a rank did not finish) with the threshold:
 * each window is divided by the median of all ranks in that window, and a
 * rank is degraded when its late third's median of that relative throughput
 * is below (1 - threshold) x its early third's (alone: its plain
 * throughput). Fewer than FP_BURNIN_DEGRADE_MIN_WINDOWS windows: waived.
 * out has nranks entries. */
void fp_burnin_degradation(const double *tput, int nranks, int nwin, double threshold,
                           fp_degrade *out);

/* ---- telemetry (burnin/telemetry.c) ------------------------------------------------ */

/* Fields a reading may hold. */
typedef enum fp_tel_field {
    FP_TEL_TEMP,           /* GPU (or CPU package) temperature, C */
    FP_TEL_POWER,          /* W */
    FP_TEL_ECC_CORR,       /* ECC corrected errors, volatile count */
    FP_TEL_ECC_UNCORR,     /* ECC uncorrected errors, volatile count */
    FP_TEL_REMAP_CORR,     /* rows remapped for corrected errors */
    FP_TEL_REMAP_UNCORR,   /* rows remapped for uncorrected errors */
    FP_TEL_REMAP_PENDING,  /* a remap waits for a reset (0/1) */
    FP_TEL_REMAP_FAILURE,  /* a remap failed (0/1) */
    FP_TEL_XID,            /* critical XID events since telemetry opened */
    FP_TEL_LAST_XID,       /* the last XID number seen, 0 none */
    FP_TEL_CLOCK_REASONS,  /* NVML clock-event (throttle) reason bits */
    FP_TEL_PCIE_GEN,       /* current PCIe generation */
    FP_TEL_PCIE_GEN_MAX,
    FP_TEL_PCIE_WIDTH,     /* current link width (lanes) */
    FP_TEL_PCIE_WIDTH_MAX,
    FP_TEL_PCIE_REPLAY,    /* PCIe replay counter */
    FP_TEL_NVLINK_ACTIVE,  /* NVLink links up */
    FP_TEL_NVLINK_ERRORS,  /* NVLink replay + recovery + CRC errors, all links */
    FP_TEL_CPU_TEMP,       /* host: hottest CPU sensor, C */
    FP_TEL_CPU_MHZ,        /* host: mean CPU core frequency, MHz */
    FP_TEL_SM_CLOCK,       /* GPU SM clock, MHz */
    FP_TEL_COUNT
} fp_tel_field;

typedef struct fp_tel_reading {
    uint32_t have;              /* bit f set when field f was read */
    double v[FP_TEL_COUNT];
} fp_tel_reading;

typedef struct fp_telemetry fp_telemetry;

/* Metric (name, unit, better) a field is recorded as. */
const fp_metric *fp_tel_metric(int field);

/* Names of the throttling bits set in NVML clock-event reasons into buf
 * ("HwThermalSlowdown,SwPowerCap"), "" when none; returns buf. */
char *fp_tel_reasons_text(uint64_t reasons, char *buf, size_t len);
/* The reason bits that mean a device is being slowed by hardware or heat
 * (not idle, not an application clock setting). */
uint64_t fp_tel_throttle_mask(void);

/* Open telemetry for one device. nvml: the NVML library to dlopen, or NULL
 * for none; with none, host CPU sensors under sysroot ("/" normally) are
 * read. pci_bus names the GPU ("" to use index). On FP_EUNSUPPORTED (no
 * NVML, no sensors) why says why and *out is NULL: the caller records
 * telemetry as waived. Never crashes on a missing library or symbol. */
fp_status fp_telemetry_open(fp_telemetry **out, const char *nvml, const char *pci_bus, int index,
                            const char *sysroot, char *why, size_t len);
/* "nvml <path>" or "host /sys". */
const char *fp_telemetry_source(const fp_telemetry *t);
/* Take a reading: every field the source has (others are left out of have);
 * XID events are drained and counted. */
void fp_telemetry_read(fp_telemetry *t, fp_tel_reading *r);
/* Release the library and its handles. NULL is fine. */
void fp_telemetry_close(fp_telemetry *t);

/* ---- telemetry sampler: a thread reading the fast-changing fields ---- */

/* The fields the sampler follows (those the source has): temperature,
 * power, SM clock; CPU temperature and frequency on the host. */
#define FP_TEL_SAMPLED                                                                    \
    (1u << FP_TEL_TEMP | 1u << FP_TEL_POWER | 1u << FP_TEL_SM_CLOCK | 1u << FP_TEL_CPU_TEMP | \
     1u << FP_TEL_CPU_MHZ)
/* Longest period between two samples (seconds). */
#define FP_TEL_PERIOD_MAX 0.1

/* Statistics of the samples of one window, per field (valid where have). */
typedef struct fp_tel_stats {
    uint32_t have;
    int samples;                /* readings taken in the window */
    int n[FP_TEL_COUNT];        /* readings that had the field */
    double min[FP_TEL_COUNT], mean[FP_TEL_COUNT], max[FP_TEL_COUNT];
} fp_tel_stats;

typedef struct fp_tel_sampler fp_tel_sampler;

/* Start a thread that reads t's FP_TEL_SAMPLED fields every period seconds
 * (at most FP_TEL_PERIOD_MAX) until stopped. t stays the caller's and must
 * outlive the sampler; fp_telemetry_read may run beside it (NVML is
 * thread-safe, the sampler reads no event queue). FP_ENOMEM or FP_EINTERNAL
 * when the thread cannot start (*out NULL). */
fp_status fp_tel_sampler_start(fp_tel_sampler **out, fp_telemetry *t, double period);
/* The statistics since the last take (or the start), and a new window. */
void fp_tel_sampler_take(fp_tel_sampler *s, fp_tel_stats *out);
/* Stop and join the thread, and free the sampler. NULL is fine. */
void fp_tel_sampler_stop(fp_tel_sampler *s);

/* ---- verdicts (burnin/burnin.c fills them; reports/burnin_report.c prints) ---- */

typedef enum fp_burnin_outcome {
    FP_BURNIN_PASS,
    FP_BURNIN_WARN,
    FP_BURNIN_FAIL,
} fp_burnin_outcome;

/* One rank's burn-in verdict; fixed size, gathered to rank 0. */
typedef struct fp_burnin_verdict {
    int rank;
    fp_entity entity;            /* the rank's device */
    int outcome;                 /* fp_burnin_outcome */
    bool sdc_suspect;
    int first_bad_interval;      /* -1: none */
    long long self_mismatch;     /* elements differing from its first result, all windows */
    long long peer_mismatch;     /* blocks outside the majority, all windows */
    long long nonfinite;
    int windows;                 /* windows completed */
    fp_degrade degrade;
    long long mem_errors;
    uint64_t mem_first_addr;
    bool telemetry_waived;
    char telemetry[160];         /* its source, or why it was waived */
    fp_tel_reading tel_start, tel_end;
    uint64_t clock_reasons_seen; /* OR of the reasons of every reading */
    char reasons[768];           /* "; "-separated, "" when all passed */
} fp_burnin_verdict;

/* ---- one burn-in on every rank (burnin/burnin.c) ---------------------------------- */

typedef struct fp_burnin fp_burnin;

/* What a burn-in left on every rank once the verdicts were gathered. */
typedef struct fp_burnin_result {
    fp_burnin_verdict *all; /* nranks verdicts in rank order; the caller frees */
    int nranks;
    int done, planned;      /* windows completed and planned */
    bool interrupted;       /* a SIGINT or SIGTERM ended it early */
    bool failed;            /* some rank's outcome is fail */
} fp_burnin_result;

/* Check cfg (FP_EUSAGE, one line naming the option on rank 0) and catch
 * SIGINT/SIGTERM until fp_burnin_end, so a signal ends the windows early and
 * partial results are kept. *out is new; fp_burnin_end frees it. */
fp_status fp_burnin_begin(const fp_burnin_config *cfg, int rank, fp_burnin **out);

/* The memory test, then the windows of GEMM stress with result votes, throughput
 * and telemetry on ctx's device, then this rank's verdict. Collective over
 * ctx's world; samples go to ctx's run. */
fp_status fp_burnin_run(fp_burnin *bi, fp_ctx *ctx);

/* Gather every rank's verdict into res (collective; res->all is new). */
fp_status fp_burnin_verdicts(fp_burnin *bi, fp_burnin_result *res);

/* Free the device buffers and telemetry and restore the signal handlers. NULL is fine. */
void fp_burnin_end(fp_burnin *bi);

/* "pass", "warn", "fail". */
const char *fp_burnin_outcome_name(int outcome);

#endif /* __CUDACC__ */
#endif
