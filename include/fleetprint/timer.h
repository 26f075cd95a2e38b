#ifndef FLEETPRINT_TIMER_H
#define FLEETPRINT_TIMER_H
/* Monotonic host clock. */
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double fp_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Resolution of fp_clock in seconds. */
static inline double fp_clock_resolution(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sleep for s seconds (no-op for s <= 0). */
static inline void fp_sleep(double s)
{
    if (s <= 0)
        return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

#endif
