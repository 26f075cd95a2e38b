#include "fleetprint/status.h"
#include "fleetprint/log.h"

#include <errno.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int exit_code;
    const char *msg;
} status_table[FP_STATUS_COUNT] = {
#define FP__STATUS_ROW(name, code, msg) {#name, code, msg},
    FP_STATUS_MAP(FP__STATUS_ROW)
#undef FP__STATUS_ROW
};

static int valid(fp_status st)
{
    return (int)st >= 0 && st < FP_STATUS_COUNT;
}

const char *fp_strerror(fp_status st)
{
    return valid(st) ? status_table[st].msg : "unknown status";
}

const char *fp_status_name(fp_status st)
{
    return valid(st) ? status_table[st].name : "EUNKNOWN";
}

int fp_status_exit_code(fp_status st)
{
    return valid(st) ? status_table[st].exit_code : 4;
}

fp_status fp_status_worst(fp_status a, fp_status b)
{
    int ca = fp_status_exit_code(a), cb = fp_status_exit_code(b);
    /* exit codes are ordered by severity except that "interrupted" (5) ranks
     * below errors (4) and above a failed check (1). */
    int ra = ca == 5 ? 3 : ca, rb = cb == 5 ? 3 : cb;
    return rb > ra ? b : a;
}

const char *fp__io_cause(void)
{
    switch (errno) {
    case ENOSPC: return ": no space left on device";
    case EDQUOT: return ": disk quota exceeded";
    case EIO: return ": input/output error";
    case EROFS: return ": read-only file system";
    case EFBIG: return ": file too large";
    default: return "";
    }
}

fp_status fp__fail(fp_status st, const char *expr, const char *file, int line, const char *fmt,
                   ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    /* a usage or input error is the user's to fix, an I/O error (a full disk)
     * the machine's: the detail names the file, line or field and the cause;
     * our source location is only for errors that are ours */
    if (fp_status_exit_code(st) == 2 || st == FP_EIO)
        fp_error("%s", detail);
    else if (expr)
        fp_error("%s: %s (%s at %s:%d)", fp_strerror(st), detail, expr, file, line);
    else
        fp_error("%s (%s:%d)", detail, file, line);
    return st;
}

const char *fp__mpi_errstr(int rc, char *buf, int len)
{
    if (MPI_Error_string(rc, buf, &len) != MPI_SUCCESS)
        snprintf(buf, (size_t)len, "MPI error %d", rc);
    return buf;
}
