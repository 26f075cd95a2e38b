/* Memory pattern test over device memory (host memory on the host backend):
 * a pattern is written over the whole region first and read back after, so
 * every word sits in memory while the rest is written. The device writes and
 * verifies (the backend's mem_write and mem_verify: one kernel per pass on a
 * GPU); only the error count and the first bad words come back. */
#include <string.h>

#include "fleetprint/burnin.h"
#include "fleetprint/timer.h"

const char *fp_mem_pattern_name(int p)
{
    static const char *const names[] = {"walking-ones", "walking-zeros", "address", "random"};
    return p >= 0 && p < FP_MEM_PATTERN_COUNT ? names[p] : "?";
}

fp_status fp_memtest_run(const fp_device_ops *ops, fp_device *dev, void *region, size_t bytes,
                         int p, uint64_t seed, fp_memtest_result *res)
{
    fp_status st = FP_OK;
    memset(res, 0, sizeof *res);
    res->pattern = p;
    bytes -= bytes % 16;
    res->bytes = bytes;
    double t0 = fp_clock();
    FP_CHECK(ops->mem_write(dev, p, region, bytes, seed));
    FP_CHECK(ops->mem_verify(dev, p, region, bytes, seed, &res->check));
    res->seconds = fp_clock() - t0;
cleanup:
    return st;
}
