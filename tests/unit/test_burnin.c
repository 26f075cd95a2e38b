/* Unit tests of burn-in's parts: memory patterns and the pattern test (with
 * a device whose memory corrupts a word), result digests, self comparison,
 * the cross-rank vote, degradation over time, telemetry sources. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fleetprint/burnin.h"
#include "fleetprint/kernels.h"

/* ---- a host device whose memory flips one bit of the word at a byte offset ---- */

static size_t bad_offset = (size_t)-1;
static char *bad_base;

/* The corruption happens between the write and the verify pass. */
static fp_status corrupt_verify(fp_device *d, int p, const void *region, size_t bytes,
                                uint64_t seed, fp_mem_check *out)
{
    if (bad_base)
        bad_base[bad_offset] ^= 0x10;
    return fp_device_host.mem_verify(d, p, region, bytes, seed, out);
}

static void test_patterns(void)
{
    for (uint64_t i = 0; i < 200; i++) {
        uint64_t w1 = fp_mem_word(FP_MEM_WALK_ONES, 0, i, 3);
        uint64_t w0 = fp_mem_word(FP_MEM_WALK_ZEROS, 0, i, 3);
        CHECK(__builtin_popcountll(w1) == 1 && w1 == 1ULL << ((i + 3) % 64));
        CHECK(w0 == ~w1);
        CHECK(fp_mem_word(FP_MEM_ADDRESS, 4096, i, 3) == 4096 + 8 * i);
    }
    CHECK(fp_mem_word(FP_MEM_RANDOM, 0, 5, 1) != fp_mem_word(FP_MEM_RANDOM, 0, 5, 2));
    CHECK(fp_mem_word(FP_MEM_RANDOM, 0, 5, 1) == fp_mem_word(FP_MEM_RANDOM, 0, 5, 1));
    CHECK(strcmp(fp_mem_pattern_name(FP_MEM_ADDRESS), "address") == 0);
}

static void test_memtest(void)
{
    fp_device *dev = NULL;
    CHECK(fp_device_host.open(&dev, 0, 2) == FP_OK);
    size_t bytes = (6u << 20) + 4096 + 8; /* tested: rounded down to 16 bytes */
    void *region = NULL;
    CHECK(fp_device_host.alloc(dev, bytes, &region) == FP_OK);
    fp_memtest_result res;
    for (int p = 0; p < FP_MEM_PATTERN_COUNT; p++) {
        CHECK(fp_memtest_run(&fp_device_host, dev, region, bytes, p, 7, &res) == FP_OK);
        CHECK(res.check.errors == 0 && res.check.naddr == 0 && res.bytes == bytes - 8);
        /* the pattern really is in memory */
        const uint64_t *w = region;
        CHECK(w[12345] == fp_mem_word(p, (uint64_t)(uintptr_t)region, 12345, 7));
    }
    /* memory that loses one bit of one word between the passes */
    fp_device_ops bad = fp_device_host;
    bad.mem_verify = corrupt_verify;
    bad_base = region;
    bad_offset = (5u << 20) + 8 * 3 + 2;
    for (int p = 0; p < FP_MEM_PATTERN_COUNT; p++) {
        CHECK(fp_memtest_run(&bad, dev, region, bytes, p, 7, &res) == FP_OK);
        CHECK(res.check.errors == 1 && res.check.naddr == 1);
        CHECK(res.check.addr[0] == (uint64_t)(uintptr_t)region + (5u << 20) + 8 * 3);
        CHECK((res.check.got[0] ^ res.check.want[0]) == 0x10ULL << 16);
    }
    /* many bad words: all counted, FP_MEM_ADDRS kept */
    bad_base = NULL;
    CHECK(fp_device_host.mem_write(dev, FP_MEM_RANDOM, region, 4096, 9) == FP_OK);
    for (int i = 0; i < 10; i++)
        ((uint64_t *)region)[i * 7] ^= 1;
    fp_mem_check k;
    CHECK(fp_device_host.mem_verify(dev, FP_MEM_RANDOM, region, 4096, 9, &k) == FP_OK);
    CHECK(k.errors == 10 && k.naddr == FP_MEM_ADDRS);
    fp_device_host.free(dev, region);
    fp_device_host.close(dev);
}

/* GEMM operands filled on the device: the values fp_pattern_elem gives,
 * stored in each type. */
static void test_fill_gemm(void)
{
    fp_device *dev = NULL;
    CHECK(fp_device_host.open(&dev, 0, 1) == FP_OK);
    double buf[64];
    for (int t = 0; t < FP_GEMM_TYPE_COUNT; t++) {
        CHECK(fp_device_host.fill_gemm(dev, (fp_gemm_type)t, buf, 64, 5, false) == FP_OK);
        double lo = 1, hi = -1;
        int distinct = 0;
        for (size_t i = 0; i < 64; i++) {
            double v = fp_gemm_unpack((fp_gemm_type)t, buf, i), want = fp_pattern_elem(5, i);
            /* within the rounding of the type's input format */
            CHECK(fabs(v - want) <= fabs(want) * 2 * fp_gemm_in_unit(t) + 0x1p-9);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            distinct += i > 0 && v != fp_gemm_unpack((fp_gemm_type)t, buf, i - 1);
        }
        CHECK(lo < -0.5 && hi > 0.5 && distinct > 40); /* random, not small integers */
        /* exact: the small multiples of 1/16 of fp_gemm_input, bit for bit */
        CHECK(fp_device_host.fill_gemm(dev, (fp_gemm_type)t, buf, 64, 5, true) == FP_OK);
        for (size_t i = 0; i < 64; i++)
            CHECK(fp_gemm_unpack((fp_gemm_type)t, buf, i) == fp_gemm_input(5, i));
    }
    fp_device_host.close(dev);
}

/* ---- result checks ---------------------------------------------------------------- */

static void test_digest_and_mismatch(void)
{
    enum { N = 1000 };
    double a[N], b[N];
    float f[N], g[N];
    for (int i = 0; i < N; i++)
        a[i] = b[i] = f[i] = g[i] = (float)(i % 17) * 0.25f;
    fp_digest da, db;
    fp_digest_host(a, NULL, N, 8, 0, &da);
    fp_digest_host(b, a, N, 8, 0, &db);
    CHECK(memcmp(&da, &db, sizeof da) == 0 && da.nonfinite == 0 && db.mismatch == 0);
    /* blocks cover every element once: hd.h's fp_digest_lo */
    CHECK(fp_digest_lo(0, N) == 0 && fp_digest_lo(FP_DIGEST_BLOCKS, N) == N);
    for (uint64_t i = 0; i < N; i++) {
        uint64_t blk = i * FP_DIGEST_BLOCKS / N;
        CHECK(fp_digest_lo(blk, N) <= i && i < fp_digest_lo(blk + 1, N));
    }
    /* one low mantissa bit: bitwise sees it, a 1e-3 tolerance does not */
    unsigned char *p = (unsigned char *)&b[500];
    p[1] ^= 0x04;
    fp_digest_host(b, a, N, 8, 0, &db);
    CHECK(db.mismatch == 1);
    fp_digest_host(b, a, N, 8, 1e-3, &db);
    CHECK(db.mismatch == 0);
    int diff = 0;
    for (int k = 0; k < FP_DIGEST_BLOCKS; k++)
        diff += da.hash[k] != db.hash[k];
    CHECK(diff == 1);
    /* two swapped elements change the hash (the term depends on the index) */
    double s[N];
    memcpy(s, a, sizeof s);
    s[1] = a[2];
    s[2] = a[1];
    fp_digest_host(s, NULL, N, 8, 0, &db);
    CHECK(db.hash[0] != da.hash[0] && db.sum[0] == da.sum[0]);
    b[7] = NAN;
    fp_digest_host(b, a, N, 8, 1e-3, &db);
    CHECK(db.nonfinite == 1 && db.mismatch == 1);
    g[3] = INFINITY;
    fp_digest_host(g, f, N, 4, 0, &db);
    CHECK(db.nonfinite == 1 && db.mismatch == 1);
}

static void test_vote(void)
{
    enum { R = 5 };
    fp_digest d[R];
    int dis[R];
    double c[64];
    for (int i = 0; i < 64; i++)
        c[i] = i;
    for (int r = 0; r < R; r++)
        fp_digest_host(c, NULL, 64, 8, 0, &d[r]);
    CHECK(fp_sdc_vote(d, R, 0, dis) == 0);
    for (int r = 0; r < R; r++)
        CHECK(dis[r] == 0);
    /* rank 3 differs in one element: it alone is outside the majority */
    c[40] += 1e-12;
    fp_digest_host(c, NULL, 64, 8, 0, &d[3]);
    CHECK(fp_sdc_vote(d, R, 0, dis) == 0);
    CHECK(dis[3] == 1 && dis[0] + dis[1] + dis[2] + dis[4] == 0);
    /* with a tolerance that difference is noise */
    CHECK(fp_sdc_vote(d, R, 1e-6, dis) == 0 && dis[3] == 0);
    /* a large difference is not */
    c[40] += 5;
    fp_digest_host(c, NULL, 64, 8, 0, &d[3]);
    CHECK(fp_sdc_vote(d, R, 1e-6, dis) == 0 && dis[3] == 1 && dis[0] == 0);
    /* 2 against 2: no strict majority, nobody blamed */
    fp_digest_host(c, NULL, 64, 8, 0, &d[2]);
    CHECK(fp_sdc_vote(d, 4, 0, dis) == 1 && dis[3] == 0 && dis[2] == 0 && dis[0] == 0);
    /* NaN everywhere never passes */
    c[2] = NAN;
    for (int r = 0; r < R; r++)
        fp_digest_host(c, NULL, 64, 8, 0, &d[r]);
    fp_sdc_vote(d, R, 0, dis);
    for (int r = 0; r < R; r++)
        CHECK(dis[r] >= 1);
}

static void test_degradation(void)
{
    enum { R = 4, W = 12 };
    double t[R * W];
    fp_degrade out[R];
    for (int r = 0; r < R; r++)
        for (int w = 0; w < W; w++)
            t[r * W + w] = 100 + 7 * ((w * 5 + r) % 3); /* +-7% noise */
    for (int w = 5; w < W; w++)
        t[1 * W + w] /= 2; /* rank 1 halves from window 5 */
    fp_burnin_degradation(t, R, W, 0.25, out);
    CHECK(out[1].state == 0 && out[1].degraded);
    CHECK(out[1].ratio < 0.6 && out[1].ratio > 0.4 && out[1].rel_ratio < 0.6);
    CHECK(!out[0].degraded && !out[2].degraded && !out[3].degraded);
    /* everyone else halves too (load on the whole machine): the peers explain it */
    for (int r = 0; r < R; r++)
        for (int w = 5; w < W; w++)
            t[r * W + w] = r == 1 ? t[r * W + w] : t[r * W + w] / 2;
    fp_burnin_degradation(t, R, W, 0.25, out);
    for (int r = 0; r < R; r++)
        CHECK(!out[r].degraded && out[r].slowed);
    /* too few windows: waived */
    fp_burnin_degradation(t, R, 2, 0.25, out);
    CHECK(out[0].state == 1 && !out[0].degraded);
    /* a window a rank did not finish (NaN) is skipped */
    double u[1 * 6] = {10, NAN, 10, 10, 4, 4};
    fp_burnin_degradation(u, 1, 6, 0.25, out);
    CHECK(out[0].state == 0 && out[0].degraded && fabs(out[0].ratio - 0.4) < 1e-12);
}

/* ---- telemetry -------------------------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_telemetry(void)
{
    char why[160];
    fp_telemetry *t = NULL;
    CHECK(fp_telemetry_open(&t, "/nonexistent/libnvidia-ml.so.1", "", 0, NULL, why, sizeof why) ==
          FP_EUNSUPPORTED);
    CHECK(t == NULL && strstr(why, "cannot load NVML") != NULL);
    /* a library without NVML's entry points */
    CHECK(fp_telemetry_open(&t, "libm.so.6", "", 0, NULL, why, sizeof why) == FP_EUNSUPPORTED);
    CHECK(t == NULL && strstr(why, "lacks nvmlInit") != NULL);

    /* host sensors from a made-up /sys */
    char root[] = "/tmp/fp_sysroot_XXXXXX";
    CHECK(mkdtemp(root) != NULL);
    CHECK(fp_telemetry_open(&t, NULL, "", 0, root, why, sizeof why) == FP_EUNSUPPORTED);
    CHECK(strstr(why, "no CPU temperature") != NULL);
    char p[512];
    const char *dirs[] = {"/sys", "/sys/class", "/sys/class/thermal",
                          "/sys/class/thermal/thermal_zone0", "/sys/class/thermal/thermal_zone1",
                          "/sys/devices", "/sys/devices/system", "/sys/devices/system/cpu",
                          "/sys/devices/system/cpu/cpu0", "/sys/devices/system/cpu/cpu0/cpufreq",
                          "/sys/devices/system/cpu/cpu1", "/sys/devices/system/cpu/cpu1/cpufreq"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(p, sizeof p, "%s%s", root, dirs[i]);
        mkdir(p, 0755);
    }
    snprintf(p, sizeof p, "%s/sys/class/thermal/thermal_zone0/temp", root);
    write_file(p, "45000\n");
    snprintf(p, sizeof p, "%s/sys/class/thermal/thermal_zone1/temp", root);
    write_file(p, "71500\n");
    snprintf(p, sizeof p, "%s/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", root);
    write_file(p, "2000000\n");
    snprintf(p, sizeof p, "%s/sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", root);
    write_file(p, "3000000\n");
    CHECK(fp_telemetry_open(&t, NULL, "", 0, root, why, sizeof why) == FP_OK);
    fp_tel_reading r;
    fp_telemetry_read(t, &r);
    CHECK(r.have == (1u << FP_TEL_CPU_TEMP | 1u << FP_TEL_CPU_MHZ));
    CHECK_NEAR(r.v[FP_TEL_CPU_TEMP], 71.5, 1e-12);
    CHECK_NEAR(r.v[FP_TEL_CPU_MHZ], 2500, 1e-12);
    CHECK(strncmp(fp_telemetry_source(t), "host ", 5) == 0);
    fp_telemetry_close(t);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);

    char rs[128];
    CHECK(strcmp(fp_tel_reasons_text(0x1 | 0x40 | 0x4, rs, sizeof rs),
                 "SwPowerCap,HwThermalSlowdown") == 0);
    CHECK(strcmp(fp_tel_reasons_text(0x1, rs, sizeof rs), "") == 0);
    CHECK((fp_tel_throttle_mask() & 0x1) == 0 && (fp_tel_throttle_mask() & 0x40) != 0);
    for (int f = 0; f < FP_TEL_COUNT; f++)
        CHECK(fp_tel_metric(f) && fp_tel_metric(f)->name && strlen(fp_tel_metric(f)->name) < 32);
}

int main(void)
{
    test_patterns();
    test_memtest();
    test_fill_gemm();
    test_digest_and_mismatch();
    test_vote();
    test_degradation();
    test_telemetry();
    CHECK_DONE();
}
