#ifndef FLEETPRINT_STATUS_H
#define FLEETPRINT_STATUS_H
/* One status type for every fallible function, generated from one list
 * (libuv's UV_ERRNO_MAP), and the exit code each status ends a command with. */

#include <errno.h>

/* X(name, exit code, message) */
#define FP_STATUS_MAP(X)                                                                   \
    X(OK, 0, "ok")                                                                         \
    X(EFAIL, 1, "a check failed")                                                          \
    X(EUSAGE, 2, "usage error")                                                            \
    X(EINPUT, 2, "bad input")                                                              \
    X(ENODEV, 3, "no usable device")                                                       \
    X(EUNSUPPORTED, 3, "not supported here")                                               \
    X(ETIMEOUT, 4, "timeout")                                                              \
    X(EPEER, 4, "a peer rank failed")                                                      \
    X(ENOMEM, 4, "out of memory")                                                          \
    X(EIO, 4, "I/O error")                                                                 \
    X(EMPI, 4, "MPI error")                                                                \
    X(ECUDA, 4, "CUDA error")                                                              \
    X(ENCCL, 4, "NCCL error")                                                              \
    X(EH5, 4, "HDF5 error")                                                                \
    X(EINTERNAL, 4, "internal error")                                                      \
    X(EINTR, 5, "interrupted")

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fp_status {
#define FP__STATUS_ENUM(name, code, msg) FP_##name,
    FP_STATUS_MAP(FP__STATUS_ENUM)
#undef FP__STATUS_ENUM
        FP_STATUS_COUNT
} fp_status;

/* Short text for a status ("timeout"). Never NULL. */
const char *fp_strerror(fp_status st);

/* Symbolic name of a status ("ETIMEOUT"). Never NULL. */
const char *fp_status_name(fp_status st);

/* Process exit code for a status: 0 pass, 1 fail found, 2 usage or input error,
 * 3 environment cannot run the test, 4 internal error or timeout, 5 interrupted. */
int fp_status_exit_code(fp_status st);

/* The worse of two statuses, for combining the outcomes of several steps:
 * an error outranks a failed check, which outranks success. */
fp_status fp_status_worst(fp_status a, fp_status b);

/* Record an error with its context (expression, file:line) and a formatted
 * detail, log it on this rank, and return st. Used by the FP_CHECK macros.
 * A usage or input error (exit code 2) and an I/O error (FP_EIO) log the detail
 * alone: it must name the flag, file, line or field (and the cause), and our
 * source location would be noise. */
fp_status fp__fail(fp_status st, const char *expr, const char *file, int line, const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));

/* ": No space left on device" when errno says the storage failed (ENOSPC,
 * EDQUOT, EIO, EROFS, EFBIG), else "": appended to the message of a write
 * that failed inside a library (HDF5) so a full disk is named as one. */
const char *fp__io_cause(void);

#ifdef __cplusplus
}
#endif

/* Check macros: on failure set the local `st`, log with context, goto cleanup.
 * Every function using them declares `fp_status st = FP_OK;` and `cleanup:`. */
#define FP_CHECK(expr)                                                                     \
    do {                                                                                   \
        fp_status fp__st = (expr);                                                         \
        if (fp__st != FP_OK) {                                                             \
            st = fp__st;                                                                   \
            goto cleanup;                                                                  \
        }                                                                                  \
    } while (0)

#define FP_FAIL(code, ...)                                                                 \
    do {                                                                                   \
        st = fp__fail((code), NULL, __FILE__, __LINE__, __VA_ARGS__);                      \
        goto cleanup;                                                                      \
    } while (0)

#define FP_CHECK_ALLOC(ptr)                                                                \
    do {                                                                                   \
        if ((ptr) == NULL) {                                                               \
            st = fp__fail(FP_ENOMEM, #ptr, __FILE__, __LINE__, "allocation failed");       \
            goto cleanup;                                                                  \
        }                                                                                  \
    } while (0)

/* MPI: the error string comes from MPI_Error_string. */
const char *fp__mpi_errstr(int rc, char *buf, int len);
#define FP_CHECK_MPI(expr)                                                                 \
    do {                                                                                   \
        int fp__rc = (expr);                                                               \
        if (fp__rc != 0 /* MPI_SUCCESS */) {                                               \
            char fp__buf[256];                                                             \
            st = fp__fail(FP_EMPI, #expr, __FILE__, __LINE__, "%s",                        \
                          fp__mpi_errstr(fp__rc, fp__buf, (int)sizeof fp__buf));           \
            goto cleanup;                                                                  \
        }                                                                                  \
    } while (0)

/* HDF5: negative return values are failures; HDF5's own stack is printed only
 * in verbose mode. */
#define FP_CHECK_H5(expr)                                                                  \
    do {                                                                                   \
        errno = 0;                                                                         \
        if ((long long)(expr) < 0) {                                                       \
            st = fp__fail(FP_EH5, #expr, __FILE__, __LINE__, "HDF5 call failed%s",          \
                          fp__io_cause());                                                 \
            goto cleanup;                                                                  \
        }                                                                                  \
    } while (0)

#endif
