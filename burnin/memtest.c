/* Memory pattern test over device memory (host memory on the host backend):
 * a pattern is written over the whole region first and read back after, so
 * every word sits in memory while the rest is written. Words are generated
 * and compared on the host, moved through the backend's copy in chunks. */
#include <stdlib.h>
#include <string.h>

#include "fleetprint/burnin.h"
#include "fleetprint/timer.h"

/* Host staging chunk (bytes, a multiple of 8). */
#define CHUNK_BYTES (4u << 20)

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
    bytes -= bytes % 8;
    res->bytes = bytes;
    uint64_t *buf = malloc(CHUNK_BYTES);
    FP_CHECK_ALLOC(buf);
    const uint64_t base = (uint64_t)(uintptr_t)region;
    const size_t words = bytes / 8, chunk = CHUNK_BYTES / 8;
    double t0 = fp_clock();

    /* write everything */
    for (size_t at = 0; at < words; at += chunk) {
        size_t n = words - at < chunk ? words - at : chunk;
        for (size_t j = 0; j < n; j++) {
            uint64_t w = fp_mem_word(p, base, at + j, seed);
            buf[j] = w;
            res->sum_written += fp_mem_check_term(w, at + j);
        }
        FP_CHECK(ops->copy(dev, (char *)region + at * 8, buf, n * 8, FP_COPY_H2D));
    }
    FP_CHECK(ops->sync(dev));

    /* read everything back */
    for (size_t at = 0; at < words; at += chunk) {
        size_t n = words - at < chunk ? words - at : chunk;
        FP_CHECK(ops->copy(dev, buf, (char *)region + at * 8, n * 8, FP_COPY_D2H));
        for (size_t j = 0; j < n; j++) {
            uint64_t want = fp_mem_word(p, base, at + j, seed);
            res->sum_read += fp_mem_check_term(buf[j], at + j);
            if (buf[j] == want)
                continue;
            if (res->naddr < FP_MEMTEST_ADDRS) {
                res->addr[res->naddr] = base + 8u * (at + j);
                res->got[res->naddr] = buf[j];
                res->want[res->naddr] = want;
                res->naddr++;
            }
            res->errors++;
        }
    }
    res->seconds = fp_clock() - t0;
cleanup:
    free(buf);
    return st;
}
