#ifndef FLEETPRINT_HD_H
#define FLEETPRINT_HD_H
/* Per-element logic shared by host code and CUDA kernels. Under nvcc FP_HD
 * makes a function callable on both sides; under cc it is plain C, so the
 * host tests cover the exact code the kernels run. */
#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define FP_HD __host__ __device__
#else
#define FP_HD
#endif

/* STREAM operations: copy dst = x; scale dst = s*x; add dst = x + y;
 * triad dst = x + s*y. */
typedef enum fp_stream_op { FP_STREAM_COPY, FP_STREAM_SCALE, FP_STREAM_ADD, FP_STREAM_TRIAD } fp_stream_op;

static inline FP_HD double fp_stream_elem(int op, double x, double y, double s)
{
    switch (op) {
    case FP_STREAM_COPY: return x;
    case FP_STREAM_SCALE: return s * x;
    case FP_STREAM_ADD: return x + y;
    default: return x + s * y;
    }
}

/* Arrays read and written per element, as STREAM counts bytes. */
static inline FP_HD int fp_stream_arrays(int op)
{
    return op == FP_STREAM_COPY || op == FP_STREAM_SCALE ? 2 : 3;
}

/* A wrong element: differs from expect by more than tol relative, or is not finite. */
static inline FP_HD int fp_elem_wrong(double v, double expect, double tol)
{
    double d = v - expect;
    double m = expect < 0 ? -expect : expect;
    return !(d <= tol * m && -d <= tol * m) && !(v == expect);
}

/* Deterministic pseudo-random value in [-1, 1) for element i of a stream
 * seeded by seed (splitmix64): the same on every device and host. */
static inline FP_HD double fp_pattern_elem(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* ---- small floating-point formats ---------------------------------------------- */

/* Encode v in a binary format with ebits exponent bits and mbits mantissa
 * bits (bias 2^(ebits-1) - 1; f16 5/10, bf16 8/7, fp8 e4m3 4/3), rounding to
 * nearest even; subnormals kept; magnitudes past the largest finite value
 * saturate to it (e4m3 has no infinity; NaN is not produced). */
static inline FP_HD unsigned fp_minifloat_encode(double v, int ebits, int mbits)
{
    unsigned sign = v < 0 ? 1u : 0u;
    double a = v < 0 ? -v : v;
    int bias = (1 << (ebits - 1)) - 1;
    /* largest finite: all-ones exponent is reserved except for e4m3 (fp8) */
    int emax_field = (ebits == 4 && mbits == 3) ? (1 << ebits) - 1 : (1 << ebits) - 2;
    unsigned mmax = (ebits == 4 && mbits == 3) ? (1u << mbits) - 2 : (1u << mbits) - 1;
    unsigned bits;
    if (a == 0) {
        bits = 0;
    } else {
        int e = 0;
        double m = a;
        while (m >= 2.0) {
            m *= 0.5;
            e++;
        }
        while (m < 1.0) {
            m *= 2.0;
            e--;
        }
        int field = e + bias;
        double scaled;
        if (field >= 1)
            scaled = (m - 1.0) * (double)(1u << mbits);  /* normal: fraction bits */
        else {
            scaled = a; /* subnormal: multiples of 2^(1 - bias - mbits) */
            for (int i = 0; i < bias - 1 + mbits; i++)
                scaled *= 2.0;
            field = 0;
        }
        double fl = (double)(unsigned long long)scaled;
        double rest = scaled - fl;
        unsigned long long q = (unsigned long long)fl;
        if (rest > 0.5 || (rest == 0.5 && (q & 1)))
            q++;
        if (field >= 1 && q == (1ull << mbits)) { /* rounded up to the next binade */
            q = 0;
            field++;
        } else if (field == 0 && q == (1ull << mbits)) {
            q = 0;
            field = 1;
        }
        if (field > emax_field || (field == emax_field && q > mmax)) {
            field = emax_field;
            q = mmax;
        }
        bits = ((unsigned)field << mbits) | (unsigned)q;
    }
    return (sign << (ebits + mbits)) | bits;
}

/* Decode bits of the format encoded by fp_minifloat_encode (finite values;
 * an all-ones exponent other than e4m3's reads as the largest binade). */
static inline FP_HD double fp_minifloat_decode(unsigned bits, int ebits, int mbits)
{
    int bias = (1 << (ebits - 1)) - 1;
    unsigned sign = (bits >> (ebits + mbits)) & 1u;
    int field = (int)((bits >> mbits) & ((1u << ebits) - 1));
    double frac = (double)(bits & ((1u << mbits) - 1)) / (double)(1u << mbits);
    double v = field == 0 ? frac : 1.0 + frac;
    int e = (field == 0 ? 1 : field) - bias;
    for (; e > 0; e--)
        v *= 2.0;
    for (; e < 0; e++)
        v *= 0.5;
    return sign ? -v : v;
}

/* Element i of a GEMM input stream seeded by seed: one of the 31 multiples
 * of 1/16 in [-15/16, 15/16]. Four significant bits: exact in f64, f32,
 * tf32, f16, bf16 and fp8 e4m3, so every precision multiplies the same
 * numbers; products are multiples of 1/256 below 1, so every partial sum of
 * k <= 65536 of them is exact in an f32 accumulator. Not fewer bits: on an
 * H200 (torch, bf16, n = 8192) multiples of 1/4 drew 647 W against the
 * 700 W limit, multiples of 1/16 692 W, as random data does. */
static inline FP_HD double fp_gemm_input(uint64_t seed, uint64_t i)
{
    uint64_t z = seed * 0xd1b54a32d192ed03ULL + (i + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)((int)(z % 31) - 15) * 0.0625;
}

/* Element i of a GEMM operand seeded by seed: exact (fp_gemm_input: the
 * same product bits on every device) or random in [-1, 1) (fp_pattern_elem:
 * what workloads multiply, and what GEMM throughput is timed on). */
static inline FP_HD double fp_gemm_operand(uint64_t seed, uint64_t i, int exact)
{
    return exact ? fp_gemm_input(seed, i) : fp_pattern_elem(seed, i);
}

/* GEMM operand types, as fp_gemm_type numbers them: 0 f64, 1 f32, 2 tf32,
 * 3 f16, 4 bf16, 5 fp8 e4m3. Store v as element i of an array of type. */
static inline FP_HD void fp_gemm_store(int type, void *dst, uint64_t i, double v)
{
    switch (type) {
    case 0: ((double *)dst)[i] = v; break;
    case 1:
    case 2: ((float *)dst)[i] = (float)v; break;
    case 3: ((uint16_t *)dst)[i] = (uint16_t)fp_minifloat_encode(v, 5, 10); break;
    case 4: ((uint16_t *)dst)[i] = (uint16_t)fp_minifloat_encode(v, 8, 7); break;
    default: ((uint8_t *)dst)[i] = (uint8_t)fp_minifloat_encode(v, 4, 3); break;
    }
}

/* ---- memory patterns ------------------------------------------------------------ */

typedef enum fp_mem_pattern {
    FP_MEM_WALK_ONES,  /* word i: a single 1 bit at position (i + pass) mod 64 */
    FP_MEM_WALK_ZEROS, /* word i: a single 0 bit at position (i + pass) mod 64 */
    FP_MEM_ADDRESS,    /* word i: its own byte address (address-in-address) */
    FP_MEM_RANDOM,     /* word i: splitmix64 of (seed, i) */
    FP_MEM_PATTERN_COUNT
} fp_mem_pattern;

/* The 64-bit word pattern p writes at word index i of a region whose first
 * word lives at byte address base; seed varies the random pattern and the
 * walking bit's phase. The same on host and device. */
static inline FP_HD uint64_t fp_mem_word(int p, uint64_t base, uint64_t i, uint64_t seed)
{
    unsigned bit = (unsigned)((i + seed) & 63u);
    switch (p) {
    case FP_MEM_WALK_ONES: return 1ULL << bit;
    case FP_MEM_WALK_ZEROS: return ~(1ULL << bit);
    case FP_MEM_ADDRESS: return base + 8u * i;
    default: {
        uint64_t z = seed * 0xd1b54a32d192ed03ULL + (i + 1) * 0x9e3779b97f4a7c15ULL;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    }
}

/* ---- result digests (burn-in's silent-data-corruption checks) ------------------- */

/* A result of n elements is digested in FP_DIGEST_BLOCKS blocks; block b is
 * elements [fp_digest_lo(b, n), fp_digest_lo(b + 1, n)), i.e. those with
 * i * FP_DIGEST_BLOCKS / n == b. */
#define FP_DIGEST_BLOCKS 16

static inline FP_HD uint64_t fp_digest_lo(uint64_t b, uint64_t n)
{
    return (b * n + FP_DIGEST_BLOCKS - 1) / FP_DIGEST_BLOCKS;
}

/* Bits of element i of a result of es-byte elements (8: double, 4: float). */
static inline FP_HD uint64_t fp_result_bits(const void *c, uint64_t i, int es)
{
    return es == 8 ? ((const uint64_t *)c)[i] : ((const uint32_t *)c)[i];
}

static inline FP_HD double fp_result_value(const void *c, uint64_t i, int es)
{
    return es == 8 ? ((const double *)c)[i] : (double)((const float *)c)[i];
}

/* The hash of a block is the wrapping sum of this term over its elements, so
 * it does not depend on the order a device sums in; for a fixed index the
 * term is a bijection of the bits, so changing one element always changes
 * the block's hash. */
static inline FP_HD uint64_t fp_digest_term(uint64_t bits, uint64_t i)
{
    uint64_t z = bits ^ (i + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Whether element i of c differs from ref: tol 0 compares bits; otherwise
 * |c - ref| > tol |ref| or c is not finite. */
static inline FP_HD int fp_result_differs(const void *c, const void *ref, uint64_t i, int es,
                                          double tol)
{
    if (tol <= 0)
        return fp_result_bits(c, i, es) != fp_result_bits(ref, i, es);
    double v = fp_result_value(c, i, es), r = fp_result_value(ref, i, es);
    return !(v - v == 0) || fp_elem_wrong(v, r, tol);
}

/* What a memory-test verify pass found: wrong words, and the first ones
 * found (by the device's order of finding, not the lowest addresses). */
#define FP_MEM_ADDRS 4
typedef struct fp_mem_check {
    uint64_t errors;                 /* words read back wrong */
    uint64_t naddr;                  /* entries kept below (<= FP_MEM_ADDRS) */
    uint64_t addr[FP_MEM_ADDRS];     /* byte addresses of bad words */
    uint64_t got[FP_MEM_ADDRS], want[FP_MEM_ADDRS];
} fp_mem_check;

/* A digest of a result (hd.h's blocks and terms): per block the wrapping sum
 * of fp_digest_term over its elements and the sums of the values and of
 * their magnitudes; the NaN/Inf elements; and the elements that differ from
 * a reference (fp_result_differs). Ranks exchange digests, not results. */
typedef struct fp_digest {
    uint64_t hash[FP_DIGEST_BLOCKS];
    double sum[FP_DIGEST_BLOCKS];
    double abssum[FP_DIGEST_BLOCKS];
    uint64_t nonfinite;
    uint64_t mismatch;
} fp_digest;

#endif
