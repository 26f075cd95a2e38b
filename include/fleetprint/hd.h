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

#endif
