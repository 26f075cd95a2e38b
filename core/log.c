#include "fleetprint/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static struct {
    char node[64];
    int rank;
    bool verbose;
    bool quiet;
} ident = {"", -1, false, false};

const char *fp_plural(long long n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

void fp_log_identity(const char *node, int rank, bool verbose, bool quiet)
{
    snprintf(ident.node, sizeof ident.node, "%s", node ? node : "");
    ident.rank = rank;
    ident.verbose = verbose;
    ident.quiet = quiet;
}

int fp_log_rank(void)
{
    return ident.rank;
}

const char *fp_log_node(void)
{
    return ident.node;
}

void fp_log(fp_log_level level, const char *fmt, ...)
{
    static const char *const names[] = {"debug", "info", "warning", "error"};
    if (level == FP_LOG_DEBUG && !ident.verbose)
        return;
    if (level == FP_LOG_INFO && (ident.quiet || (!ident.verbose && ident.rank > 0)))
        return;
    char line[1024];
    int n;
    if (ident.rank >= 0)
        n = snprintf(line, sizeof line, "fleetprint[%s r%d] ", ident.node, ident.rank);
    else
        n = snprintf(line, sizeof line, "fleetprint: ");
    if (level != FP_LOG_INFO)
        n += snprintf(line + n, sizeof line - (size_t)n, "%s: ", names[level]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    /* one write per line so lines from many ranks do not interleave */
    size_t len = strlen(line);
    if (len + 1 < sizeof line) {
        line[len] = '\n';
        line[len + 1] = 0;
    }
    fputs(line, stderr);
    fflush(stderr);
}
