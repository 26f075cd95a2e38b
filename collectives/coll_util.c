/* The collective suite's pure parts: metric names, nccl-tests' bus factors,
 * buffer geometry, the size sweep, and 16-bit floats on the host. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fleetprint/collectives.h"

/* ---- variants and metric names ----------------------------------------------- */

static const char *const short_names[FP_DTYPE_COUNT] = {"f32", "f64", "f16", "bf16"};

const char *fp_dtype_short(fp_dtype t)
{
    return (int)t >= 0 && t < FP_DTYPE_COUNT ? short_names[t] : "?";
}

char *fp_coll_metric_name(char *buf, size_t len, const char *fig, const fp_coll_variant *v)
{
    const char *op = v->op < FP_REDOP_COUNT ? fp_redop_name(v->op) : "none";
    snprintf(buf, len, "%s_%s_%s_%s", fig, fp_dtype_short(v->dtype), op,
             v->in_place ? "ip" : "oop");
    return buf;
}

/* The last '_'-separated word of text[0..*end), moved out: *end shrinks. */
static bool last_word(const char *text, size_t *end, char *word, size_t len)
{
    size_t e = *end, b = e;
    while (b > 0 && text[b - 1] != '_')
        b--;
    if (b == 0 || b == e || e - b >= len)
        return false;
    memcpy(word, text + b, e - b);
    word[e - b] = 0;
    *end = b - 1;
    return true;
}

bool fp_coll_metric_parse(const char *metric, char *fig, size_t len, fp_coll_variant *v)
{
    char place[8], op[8], type[8];
    size_t end = strlen(metric);
    if (!last_word(metric, &end, place, sizeof place) || !last_word(metric, &end, op, sizeof op) ||
        !last_word(metric, &end, type, sizeof type) || end == 0 || end >= len)
        return false;
    if (strcmp(place, "ip") == 0)
        v->in_place = true;
    else if (strcmp(place, "oop") == 0)
        v->in_place = false;
    else
        return false;
    int t = -1, o = -1;
    for (int i = 0; i < FP_DTYPE_COUNT; i++)
        if (strcmp(type, short_names[i]) == 0)
            t = i;
    for (int i = 0; i < FP_REDOP_COUNT; i++)
        if (strcmp(op, fp_redop_name((fp_redop)i)) == 0)
            o = i;
    if (strcmp(op, "none") == 0)
        o = FP_REDOP_COUNT;
    if (t < 0 || o < 0)
        return false;
    v->dtype = (fp_dtype)t;
    v->op = (fp_redop)o;
    memcpy(fig, metric, end);
    fig[end] = 0;
    return true;
}

/* ---- sizes and figures ------------------------------------------------------- */

double fp_coll_bus_factor(fp_coll c, int n)
{
    if (n < 1)
        return 0;
    switch (c) {
    case FP_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case FP_ALLGATHER:
    case FP_REDUCE_SCATTER:
    case FP_ALLTOALL:
        return (double)(n - 1) / n;
    default:
        return 1;
    }
}

fp_coll_geom fp_coll_geometry(fp_coll c, uint64_t bytes, size_t esz, int n)
{
    fp_coll_geom g = {0};
    size_t elems = (size_t)(bytes / esz), ranks = (size_t)(n > 0 ? n : 1);
    switch (c) {
    case FP_ALLGATHER:
        g.count = elems / ranks;
        g.send_elems = g.count;
        g.recv_elems = g.count * ranks;
        break;
    case FP_REDUCE_SCATTER:
        g.count = elems / ranks;
        g.send_elems = g.count * ranks;
        g.recv_elems = g.count * ranks; /* room for in place */
        break;
    case FP_ALLTOALL:
        g.count = elems / ranks;
        g.send_elems = g.recv_elems = g.count * ranks;
        break;
    default:
        g.count = g.send_elems = g.recv_elems = elems;
        break;
    }
    g.bytes = (uint64_t)(c == FP_ALLGATHER ? g.recv_elems
                         : c == FP_REDUCE_SCATTER || c == FP_ALLTOALL ? g.send_elems
                                                                       : g.count) *
              esz;
    return g;
}

fp_status fp_coll_sizes(uint64_t min, uint64_t max, double factor, uint64_t *sizes, int cap,
                        int *n, char *err, size_t len)
{
    *n = 0;
    if (min > max) {
        snprintf(err, len, "--min-bytes %llu is larger than --max-bytes %llu",
                 (unsigned long long)min, (unsigned long long)max);
        return FP_EUSAGE;
    }
    if (!(factor > 1) || !isfinite(factor)) {
        snprintf(err, len, "--step-factor must be larger than 1 (got %g)", factor);
        return FP_EUSAGE;
    }
    for (uint64_t s = min;;) {
        if (*n == cap) {
            snprintf(err, len,
                     "-b %llu -e %llu -f %g makes more than %d sizes: raise --step-factor",
                     (unsigned long long)min, (unsigned long long)max, factor, cap);
            return FP_EUSAGE;
        }
        sizes[(*n)++] = s;
        double next = s == 0 ? 1 : ceil((double)s * factor);
        if (next > (double)max)
            break;
        s = (uint64_t)next > s ? (uint64_t)next : s + 1;
    }
    return FP_OK;
}

/* ---- 16-bit floats --------------------------------------------------------------- */

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t fp_half_from_double(double v)
{
    uint32_t x = float_bits((float)v);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t a = x & 0x7fffffff;
    if (a >= 0x7f800000) /* inf, nan */
        return (uint16_t)(sign | 0x7c00 | (a > 0x7f800000 ? 0x200 : 0));
    if (a >= 0x477ff000) /* 65520 and above round to inf */
        return (uint16_t)(sign | 0x7c00);
    if (a < 0x38800000) /* below 2^-14: subnormal (1024 rounds up to the least normal) */
        return (uint16_t)(sign | (uint16_t)nearbyint((double)bits_float(a) * 16777216.0));
    uint32_t h = ((((a >> 23) - 127 + 15) << 10) | ((a & 0x7fffff) >> 13));
    uint32_t rest = a & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
        h++; /* a carry into the exponent is the right result */
    return (uint16_t)(sign | h);
}

double fp_half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0)
        v = ldexp(m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}

uint16_t fp_bf16_from_double(double v)
{
    uint32_t x = float_bits((float)v);
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x40); /* keep nan a nan */
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

double fp_bf16_to_double(uint16_t h)
{
    return bits_float((uint32_t)h << 16);
}

fp_status fp_coll_in_time(fp_ctx *ctx, double t0, bool *go)
{
    double deadline = FP_SUITE_CFG(fp_coll_config, ctx)->deadline;
    *go = true;
    if (deadline <= 0)
        return FP_OK;
    double now = fp_world_now(ctx->world);
    int more = now + (now - t0) <= deadline;
    fp_status st = fp_world_bcast(ctx->world, &more, (int)sizeof more, "the sweep's deadline");
    *go = more != 0;
    return st;
}
