#include "fleetprint/progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fleetprint/timer.h"

void fp_progress_begin(fp_progress *p, const char *what, double total, bool enabled)
{
    memset(p, 0, sizeof *p);
    p->what = what;
    p->total = total;
    p->start = p->last = fp_clock();
    p->every = 10;
    p->tty = isatty(STDERR_FILENO) == 1;
    p->enabled = enabled;
}

static void line(const fp_progress *p, double done, const char *detail, const char *end)
{
    double el = fp_clock() - p->start;
    char eta[48] = "";
    if (p->total > 0 && done > 0 && done < p->total)
        snprintf(eta, sizeof eta, ", ETA %.0f s", el * (p->total - done) / done);
    if (p->total > 0)
        fprintf(stderr, "%s%s: %.0f/%.0f (%3.0f%%) after %.0f s%s%s%s%s", p->tty ? "\r\033[K" : "",
                p->what, done, p->total, 100.0 * done / p->total, el, eta, detail ? ": " : "",
                detail ? detail : "", end);
    else
        fprintf(stderr, "%s%s: %.0f after %.0f s%s%s%s", p->tty ? "\r\033[K" : "", p->what, done,
                el, detail ? ": " : "", detail ? detail : "", end);
    fflush(stderr);
}

void fp_progress_update(fp_progress *p, double done, const char *detail)
{
    if (!p->enabled)
        return;
    double now = fp_clock();
    if (!p->tty && now - p->last < p->every)
        return;
    p->last = now;
    line(p, done, detail, p->tty ? "" : "\n");
}

void fp_progress_end(fp_progress *p, const char *detail)
{
    if (!p->enabled)
        return;
    line(p, p->total, detail, "\n");
}
