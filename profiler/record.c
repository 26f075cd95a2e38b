/* The JSON Lines form of a traced NCCL event (docs/trace.md). */
#include "record.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const kind_names[FPP_KIND_COUNT] = {
#define FPP__KIND_NAME(id, name) name,
    FPP_KIND_MAP(FPP__KIND_NAME)
#undef FPP__KIND_NAME
};

const char *fpp_kind_name(int kind)
{
    return kind >= 0 && kind < FPP_KIND_COUNT ? kind_names[kind] : "?";
}

size_t fpp_dtype_size(const char *d)
{
    static const struct {
        const char *name;
        size_t size;
    } sizes[] = {
        {"ncclInt8", 1},    {"ncclUint8", 1},    {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1},
        {"ncclFloat16", 2}, {"ncclBfloat16", 2}, {"ncclInt32", 4},      {"ncclUint32", 4},
        {"ncclFloat32", 4}, {"ncclInt64", 8},    {"ncclUint64", 8},     {"ncclFloat64", 8},
    };
    for (size_t i = 0; d && i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(d, sizes[i].name) == 0) return sizes[i].size;
    return 0;
}

/* Appender that remembers overflow. */
typedef struct out {
    char *p;
    size_t len, at;
    int bad;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...)
{
    if (o->bad) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->p + o->at, o->len - o->at, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= o->len - o->at)
        o->bad = 1;
    else
        o->at += (size_t)n;
}

/* NCCL's strings are identifiers; anything else is replaced, never escaped. */
static void put_str(out *o, const char *key, const char *s)
{
    if (!s) return;
    put(o, ",\"%s\":\"", key);
    for (int i = 0; s[i] && i < 32; i++) {
        char c = s[i];
        put(o, "%c", c == '"' || c == '\\' || (unsigned char)c < 0x20 ? '_' : c);
    }
    put(o, "\"");
}

static const char *const state_names[2][FPP_NSTATES] = {
    {"recv_wait", "recv_flush_wait", "recv_gpu_wait"},
    {"send_gpu_wait", "send_peer_wait", "send_wait"},
};

size_t fpp_format(const fpp_rec *r, char *buf, size_t len)
{
    out o = {buf, len, 0, 0};
    put(&o, "{\"ev\":\"%s\",\"id\":%llu,\"parent\":%llu,\"comm\":\"%016llx\",\"rank\":%d",
        fpp_kind_name(r->kind), (unsigned long long)r->id, (unsigned long long)r->parent,
        (unsigned long long)r->comm, (int)r->rank);
    switch (r->kind) {
    case FPP_COLL:
    case FPP_P2P:
    case FPP_COLL_API:
    case FPP_P2P_API: {
        put_str(&o, "op", r->func);
        put_str(&o, "dtype", r->dtype);
        put(&o, ",\"count\":%llu,\"bytes\":%llu", (unsigned long long)r->count,
            (unsigned long long)(r->count * fpp_dtype_size(r->dtype)));
        if (r->kind == FPP_COLL)
            put(&o, ",\"seq\":%llu,\"root\":%d,\"nch\":%d", (unsigned long long)r->seq,
                (int)r->peer, (int)r->nch);
        if (r->kind == FPP_P2P) put(&o, ",\"peer\":%d,\"nch\":%d", (int)r->peer, (int)r->nch);
        put_str(&o, "algo", r->algo);
        put_str(&o, "proto", r->proto);
        break;
    }
    case FPP_PROXY_OP:
        put(&o, ",\"peer\":%d,\"send\":%d,\"ch\":%d,\"steps\":%d", (int)r->peer, (int)r->is_send,
            (int)r->nch, (int)r->step);
        break;
    case FPP_PROXY_STEP:
        put(&o, ",\"step\":%d,\"bytes\":%llu", (int)r->step, (unsigned long long)r->count);
        for (int k = 0; k < FPP_NSTATES; k++)
            if (r->state[k])
                put(&o, ",\"%s\":%llu", state_names[r->is_send ? 1 : 0][k],
                    (unsigned long long)r->state[k]);
        break;
    case FPP_KERNEL_CH:
        put(&o, ",\"ch\":%d,\"gpu_t0\":%llu,\"gpu_t1\":%llu", (int)r->nch,
            (unsigned long long)r->gpu0, (unsigned long long)r->gpu1);
        break;
    default:
        break;
    }
    put(&o, ",\"t0\":%llu,\"t1\":%llu}\n", (unsigned long long)r->t0, (unsigned long long)r->t1);
    return o.bad ? 0 : o.at;
}

size_t fpp_format_header(char *buf, size_t len, const char *host, int pid, int world_rank,
                         uint64_t mono, uint64_t wall, int mask, unsigned ring, unsigned events)
{
    out o = {buf, len, 0, 0};
    put(&o, "{\"ev\":\"header\",\"format\":\"fleetprint-nccl-trace\",\"version\":1");
    put_str(&o, "host", host);
    put(&o,
        ",\"pid\":%d,\"world_rank\":%d,\"clock\":\"CLOCK_MONOTONIC\",\"mono_ns\":%llu,"
        "\"wall_ns\":%llu,\"mask\":%d,\"ring\":%u,\"events\":%u}\n",
        pid, world_rank, (unsigned long long)mono, (unsigned long long)wall, mask, ring, events);
    return o.bad ? 0 : o.at;
}

size_t fpp_format_comm(char *buf, size_t len, uint64_t comm, const char *name, int rank, int nranks,
                       int nnodes, int api, uint64_t t)
{
    out o = {buf, len, 0, 0};
    put(&o, "{\"ev\":\"comm\",\"comm\":\"%016llx\"", (unsigned long long)comm);
    put_str(&o, "name", name ? name : "");
    put(&o, ",\"rank\":%d,\"nranks\":%d,\"nnodes\":%d,\"api\":%d,\"t0\":%llu}\n", rank, nranks,
        nnodes, api, (unsigned long long)t);
    return o.bad ? 0 : o.at;
}
