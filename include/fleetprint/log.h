#ifndef FLEETPRINT_LOG_H
#define FLEETPRINT_LOG_H
/* Logging to stderr, each line prefixed with node and rank:
 *   fleetprint[n2 r5] error: ...
 * By default only rank 0 prints info lines; warnings and errors print on every
 * rank; --verbose makes every rank print everything. */
#include <stdbool.h>

typedef enum fp_log_level { FP_LOG_DEBUG, FP_LOG_INFO, FP_LOG_WARN, FP_LOG_ERROR } fp_log_level;

/* Set this process's identity for log prefixes. Called once by the runtime
 * after MPI start-up, before any thread starts; rank -1 means "no MPI". This is
 * the one process-wide setting fleetprint keeps, read-only once set. */
/* one when n is 1, else many: "%d %s", n, fp_plural(n, "rank", "ranks"). */
const char *fp_plural(long long n, const char *one, const char *many);

void fp_log_identity(const char *node, int rank, bool verbose, bool quiet);

/* This process's rank as set by fp_log_identity, or -1. */
int fp_log_rank(void);
/* This process's node name as set by fp_log_identity, or "". */
const char *fp_log_node(void);

void fp_log(fp_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define fp_debug(...) fp_log(FP_LOG_DEBUG, __VA_ARGS__)
#define fp_info(...) fp_log(FP_LOG_INFO, __VA_ARGS__)
#define fp_warn(...) fp_log(FP_LOG_WARN, __VA_ARGS__)
#define fp_error(...) fp_log(FP_LOG_ERROR, __VA_ARGS__)

#endif
