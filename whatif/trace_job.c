/* Live-job traces: read the NCCL profiler plugin's per-rank JSON Lines files
 * (docs/trace.md) and turn them into what-if rows and fleetprint samples. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "fleetprint/trace.h"
#include "fleetprint/stats.h"
#include "whatif_internal.h"

/* ---- reading -------------------------------------------------------------------------------- */

typedef struct raw_op {
    fp_tr_op op;
    uint64_t id, comm_hash;
    int64_t enq, start, end; /* ns on the file's clock; start INT64_MAX until a child says */
} raw_op;

typedef struct child {
    uint64_t parent;
    int64_t t0, t1;
} child;

typedef struct member {
    uint64_t hash;
    int crank, nranks, rank;
    char name[64];
} member;

typedef struct loader {
    raw_op *ops;
    size_t nops, cap;
    member *mem;
    size_t nmem, mcap;
    child *kids;
    size_t nkids, kcap;
} loader;

static int cmp_id(const void *a, const void *b)
{
    uint64_t x = ((const raw_op *)a)->id, y = ((const raw_op *)b)->id;
    return x < y ? -1 : x > y;
}

static bool get_u64(json_t *o, const char *k, uint64_t *v)
{
    json_t *j = json_object_get(o, k);
    if (json_is_integer(j))
        *v = (uint64_t)json_integer_value(j);
    else if (json_is_string(j))
        *v = strtoull(json_string_value(j), NULL, 16);
    else
        return false;
    return true;
}

static const char *get_str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* Read one file: its ops (times on its own clock), children and comm records. */
static fp_status load_file(loader *L, const char *path, int file, int64_t *offset, int *wrank,
                           char *host, uint64_t *dropped)
{
    fp_status st = FP_OK;
    FILE *f = fopen(path, "r");
    if (!f) {
        fp_error("%s: cannot open: %s", path, strerror(errno));
        return FP_EINPUT;
    }
    char *line = NULL;
    size_t lcap = 0;
    long lineno = 0;
    bool header = false;
    size_t first = L->nops, kid0 = L->nkids;
    json_t *j = NULL;
    while (getline(&line, &lcap, f) > 0) {
        lineno++;
        json_error_t err;
        j = json_loads(line, 0, &err);
        const char *ev = j ? get_str(j, "ev") : "";
        if (!j || !*ev) {
            fp_error("%s:%ld: not a trace record (field \"ev\"): %s", path, lineno,
                     j ? "missing" : err.text);
            st = FP_EINPUT;
            goto cleanup;
        }
        uint64_t u = 0;
        if (strcmp(ev, "header") == 0) {
            uint64_t mono = 0, wall = 0;
            if (!get_u64(j, "mono_ns", &mono) || !get_u64(j, "wall_ns", &wall)) {
                fp_error("%s:%ld: header without field mono_ns/wall_ns", path, lineno);
                st = FP_EINPUT;
                goto cleanup;
            }
            *offset = (int64_t)(wall - mono);
            *wrank = (int)json_integer_value(json_object_get(j, "world_rank"));
            snprintf(host, FP_NAME_MAX, "%s", get_str(j, "host"));
            header = true;
        } else if (!header) {
            fp_error("%s:%ld: record before the header (field \"ev\" = %s)", path, lineno, ev);
            st = FP_EINPUT;
            goto cleanup;
        } else if (strcmp(ev, "comm") == 0) {
            member *nm = fp_grow(L->mem, &L->mcap, L->nmem + 1, sizeof *nm, 16);
            FP_CHECK_ALLOC(nm);
            L->mem = nm;
            member *m = &L->mem[L->nmem++];
            get_u64(j, "comm", &m->hash);
            m->crank = (int)json_integer_value(json_object_get(j, "rank"));
            m->nranks = (int)json_integer_value(json_object_get(j, "nranks"));
            m->rank = file;
            snprintf(m->name, sizeof m->name, "%s", get_str(j, "name"));
        } else if (strcmp(ev, "coll") == 0 || strcmp(ev, "p2p") == 0) {
            raw_op *no = fp_grow(L->ops, &L->cap, L->nops + 1, sizeof *no, 1024);
            FP_CHECK_ALLOC(no);
            L->ops = no;
            raw_op *o = &L->ops[L->nops];
            memset(o, 0, sizeof *o);
            uint64_t t0, t1;
            if (!get_u64(j, "id", &o->id) || !get_u64(j, "t0", &t0) || !get_u64(j, "t1", &t1) ||
                !get_u64(j, "comm", &o->comm_hash) || t1 < t0) {
                fp_error("%s:%ld: %s record needs id, comm, t0 <= t1", path, lineno, ev);
                st = FP_EINPUT;
                goto cleanup;
            }
            o->op.p2p = ev[0] == 'p';
            snprintf(o->op.op, sizeof o->op.op, "%s", get_str(j, "op"));
            o->op.send = o->op.p2p && strcmp(o->op.op, "Send") == 0;
            if (o->op.p2p && !o->op.send && strcmp(o->op.op, "Recv") != 0) {
                fp_error("%s:%ld: p2p op \"%s\" (field op): expected Send or Recv", path, lineno,
                         o->op.op);
                st = FP_EINPUT;
                goto cleanup;
            }
            o->op.rank = file;
            o->op.crank = (int)json_integer_value(json_object_get(j, "rank"));
            o->op.peer = o->op.p2p ? (int)json_integer_value(json_object_get(j, "peer")) : -1;
            get_u64(j, "seq", &o->op.seq);
            get_u64(j, "bytes", &o->op.bytes);
            o->enq = (int64_t)t0;
            o->end = (int64_t)t1;
            o->start = INT64_MAX;
            L->nops++;
        } else if (strcmp(ev, "kernel_ch") == 0 || strcmp(ev, "proxy_op") == 0) {
            child *nk = fp_grow(L->kids, &L->kcap, L->nkids + 1, sizeof *nk, 1024);
            FP_CHECK_ALLOC(nk);
            L->kids = nk;
            uint64_t p = 0, t0 = 0, t1 = 0;
            get_u64(j, "parent", &p);
            get_u64(j, "t0", &t0);
            get_u64(j, "t1", &t1);
            L->kids[L->nkids++] = (child){p, (int64_t)t0, (int64_t)t1};
        } else if (strcmp(ev, "end") == 0 && get_u64(j, "ring_dropped", &u)) {
            *dropped += u;
        } else if (strcmp(ev, "comm_end") == 0 && get_u64(j, "pool_dropped", &u)) {
            *dropped += u;
        }
        json_decref(j);
        j = NULL;
    }
    if (!header) {
        fp_error("%s:1: no header record (field \"ev\" = header)", path);
        st = FP_EINPUT;
        goto cleanup;
    }
    /* children refine when the op ran: the first start and the last stop */
    qsort(L->ops + first, L->nops - first, sizeof *L->ops, cmp_id);
    for (size_t k = kid0; k < L->nkids; k++) {
        raw_op key = {.id = L->kids[k].parent};
        raw_op *o = bsearch(&key, L->ops + first, L->nops - first, sizeof *L->ops, cmp_id);
        if (!o) continue; /* a child of an event not traced (mask) or dropped */
        o->start = L->kids[k].t0 < o->start ? L->kids[k].t0 : o->start;
        o->end = L->kids[k].t1 > o->end ? L->kids[k].t1 : o->end;
    }
    L->nkids = kid0;
    for (size_t i = first; i < L->nops; i++) {
        raw_op *o = &L->ops[i];
        if (o->start == INT64_MAX) o->start = o->enq;
        o->enq += *offset;
        o->start += *offset;
        o->end += *offset;
    }
cleanup:
    json_decref(j);
    free(line);
    fclose(f);
    return st;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_op(const void *a, const void *b)
{
    const fp_tr_op *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->t_enq < y->t_enq ? -1 : x->t_enq > y->t_enq;
}

/* The *.jsonl files of dir, as "dir/name" in name order: (*names)[0..*nn),
 * the caller's to free even on error. FP_EINPUT (logged) when dir cannot be
 * opened or has none. */
static fp_status list_traces(const char *dir, char ***names, size_t *nn)
{
    fp_status st = FP_OK;
    size_t ncap = 0;
    DIR *d = opendir(dir);
    if (!d) {
        fp_error("%s: cannot open the trace directory: %s", dir, strerror(errno));
        st = FP_EINPUT;
        goto cleanup;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 6, ".jsonl") != 0) continue;
        char **nv = fp_grow(*names, &ncap, *nn + 1, sizeof *nv, 64);
        char *s = malloc(strlen(dir) + len + 2);
        if (!nv || !s) {
            free(s);
            if (nv) *names = nv;
            closedir(d);
            FP_FAIL(FP_ENOMEM, "%s: out of memory listing %zu trace files", dir, *nn + 1);
        }
        *names = nv;
        sprintf(s, "%s/%s", dir, de->d_name);
        (*names)[(*nn)++] = s;
    }
    closedir(d);
    if (*nn == 0) {
        fp_error("%s: no trace files (*.jsonl) in the directory", dir);
        st = FP_EINPUT;
        goto cleanup;
    }
    qsort(*names, *nn, sizeof **names, cmp_name);
cleanup:
    return st;
}

/* Whether the files' own world ranks wrank[0..nn) are 0..nn-1, each once. */
static bool own_world_ranks(const int *wrank, size_t nn)
{
    bool own = true;
    for (size_t f = 0; f < nn && own; f++) {
        own = wrank[f] >= 0 && wrank[f] < (int)nn;
        for (size_t g = 0; g < f && own; g++)
            own = wrank[g] != wrank[f];
    }
    return own;
}

/* The job's communicators from the members' records (v2/v3 plugins have
 * none: from the ops) and its ops, with world ranks (wrank[] of the files
 * where own, else the file order) and times from base (ns) in seconds. */
static fp_status gather_comms(fp_tr_job *job, const loader *L, const int *wrank, bool own,
                              int64_t base, const char *dir)
{
    fp_status st = FP_OK;
    int nn = job->nranks;
    job->ops = calloc(L->nops ? L->nops : 1, sizeof *job->ops);
    FP_CHECK_ALLOC(job->ops);
    size_t ccap = 0;
    for (size_t i = 0; i < L->nops + L->nmem; i++) {
        bool is_op = i < L->nops;
        uint64_t h = is_op ? L->ops[i].comm_hash : L->mem[i - L->nops].hash;
        int c = 0;
        while (c < job->ncomms && job->comms[c].hash != h)
            c++;
        if (c == job->ncomms) {
            fp_tr_comm *nc = fp_grow(job->comms, &ccap, (size_t)c + 1, sizeof *nc, 16);
            FP_CHECK_ALLOC(nc);
            job->comms = nc;
            job->comms[c] = (fp_tr_comm){.hash = h};
            job->ncomms++;
        }
        fp_tr_comm *cm = &job->comms[c];
        int crank = is_op ? L->ops[i].op.crank : L->mem[i - L->nops].crank;
        int who = is_op ? L->ops[i].op.rank : L->mem[i - L->nops].rank;
        who = own ? wrank[who] : who;
        int want = is_op ? crank + 1 : L->mem[i - L->nops].nranks;
        want = want > crank + 1 ? want : crank + 1;
        if (crank < 0 || want > 4 * nn + 1024) {
            fp_error("%s: communicator %016llx: rank %d of %d is out of range (field rank)", dir,
                     (unsigned long long)h, crank, want);
            st = FP_EINPUT;
            goto cleanup;
        }
        if (want > cm->nranks) {
            int *nv = realloc(cm->members, (size_t)want * sizeof *nv);
            FP_CHECK_ALLOC(nv);
            for (int k = cm->nranks; k < want; k++)
                nv[k] = -1;
            cm->members = nv;
            cm->nranks = want;
        }
        cm->members[crank] = who;
        if (!is_op && !cm->name[0])
            snprintf(cm->name, sizeof cm->name, "%s", L->mem[i - L->nops].name);
        if (is_op) {
            fp_tr_op *o = &job->ops[i];
            *o = L->ops[i].op;
            o->rank = who;
            o->comm = c;
            o->t_enq = (double)(L->ops[i].enq - base) * 1e-9;
            o->t_start = (double)(L->ops[i].start - base) * 1e-9;
            o->t_end = (double)(L->ops[i].end - base) * 1e-9;
        }
    }
    job->nops = L->nops;
cleanup:
    return st;
}

/* P2P order numbers per (rank, comm, peer, direction), in enqueue order; the
 * ops are sorted by rank, then enqueue time. */
static void number_p2p(fp_tr_job *job)
{
    for (size_t i = 0; i < job->nops; i++) {
        fp_tr_op *o = &job->ops[i];
        if (!o->p2p) continue;
        o->seq = 0;
        for (size_t k = i; k-- > 0 && job->ops[k].rank == o->rank;)
            if (job->ops[k].p2p && job->ops[k].comm == o->comm && job->ops[k].peer == o->peer &&
                job->ops[k].send == o->send) {
                o->seq = job->ops[k].seq + 1;
                break;
            }
    }
}

fp_status fp_tr_load_dir(const char *dir, fp_tr_job **out)
{
    fp_status st = FP_OK;
    *out = NULL;
    loader L = {0};
    char **names = NULL;
    size_t nn = 0;
    int64_t *offset = NULL;
    int *wrank = NULL;
    fp_tr_job *job = calloc(1, sizeof *job);
    FP_CHECK_ALLOC(job);
    FP_CHECK(list_traces(dir, &names, &nn));
    offset = calloc(nn, sizeof *offset);
    wrank = calloc(nn, sizeof *wrank);
    job->host = calloc(nn, sizeof *job->host);
    FP_CHECK_ALLOC(offset);
    FP_CHECK_ALLOC(wrank);
    FP_CHECK_ALLOC(job->host);
    job->nranks = (int)nn;
    for (size_t f = 0; f < nn; f++)
        FP_CHECK(
            load_file(&L, names[f], (int)f, &offset[f], &wrank[f], job->host[f], &job->dropped));
    /* world ranks: the files' own when they are 0..n-1, else the name order */
    bool own = own_world_ranks(wrank, nn);
    if (!own)
        fp_warn("%s: files do not name ranks 0..%zu; ranks follow the file names", dir, nn - 1);
    int64_t base = INT64_MAX;
    for (size_t i = 0; i < L.nops; i++)
        base = L.ops[i].enq < base ? L.ops[i].enq : base;
    job->wall_start = base == INT64_MAX ? 0 : (double)base * 1e-9;
    FP_CHECK(gather_comms(job, &L, wrank, own, base, dir));
    if (own) { /* hosts by world rank */
        char(*h)[FP_NAME_MAX] = calloc(nn, sizeof *h);
        FP_CHECK_ALLOC(h);
        for (size_t f = 0; f < nn; f++)
            memcpy(h[wrank[f]], job->host[f], FP_NAME_MAX);
        free(job->host);
        job->host = h;
    }
    qsort(job->ops, job->nops, sizeof *job->ops, cmp_op);
    number_p2p(job);
    if (job->dropped)
        fp_warn("%s: the plugin dropped %llu events (ring or pool full): calls may be missing", dir,
                (unsigned long long)job->dropped);
    *out = job;
    job = NULL;
cleanup:
    for (size_t f = 0; f < nn; f++)
        free(names[f]);
    free(names);
    free(offset);
    free(wrank);
    free(L.ops);
    free(L.mem);
    free(L.kids);
    fp_tr_job_free(job);
    return st;
}

void fp_tr_job_free(fp_tr_job *job)
{
    if (!job) return;
    for (int c = 0; c < job->ncomms; c++)
        free(job->comms[c].members);
    free(job->comms);
    free(job->ops);
    free(job->host);
    free(job);
}

/* ---- what-if rows -------------------------------------------------------------------------------
 */

/* Stage and DP rank of every rank, from the layout or the communicators. */
static fp_status find_layout(const fp_tr_job *job, const fp_tr_layout *lay, int *stage, int *dpr,
                             int *dp_out, int *pp_out)
{
    const int n = job->nranks;
    if (lay->dp > 0 || lay->pp > 0) {
        if (lay->dp < 1 || lay->pp < 1 || lay->dp * lay->pp != n) {
            fp_error("--dp %d --pp %d: dp * pp must equal the %d ranks traced", lay->dp, lay->pp,
                     n);
            return FP_EINPUT;
        }
        for (int r = 0; r < n; r++) {
            stage[r] = r / lay->dp;
            dpr[r] = r % lay->dp;
        }
        *dp_out = lay->dp;
        *pp_out = lay->pp;
        return FP_OK;
    }
    int pp = 1, dp = 1;
    for (int r = 0; r < n; r++)
        stage[r] = dpr[r] = -1;
    bool any_p2p = false;
    for (size_t i = 0; i < job->nops; i++) {
        const fp_tr_op *o = &job->ops[i];
        if (!o->p2p) continue;
        any_p2p = true;
        if (stage[o->rank] >= 0 && stage[o->rank] != o->crank) {
            fp_error("rank %d sends or receives on communicators where it has different ranks: "
                     "cannot tell its pipeline stage; give --dp N --pp N",
                     o->rank);
            return FP_EINPUT;
        }
        stage[o->rank] = o->crank;
        pp = o->crank + 1 > pp ? o->crank + 1 : pp;
    }
    for (int r = 0; r < n && any_p2p; r++)
        if (stage[r] < 0) {
            fp_error("rank %d has no send or receive: cannot tell its pipeline stage; "
                     "give --dp N --pp N",
                     r);
            return FP_EINPUT;
        }
    for (int r = 0; r < n; r++) {
        stage[r] = any_p2p ? stage[r] : 0;
        int best = -1;
        for (int c = 0; c < job->ncomms; c++) {
            const fp_tr_comm *cm = &job->comms[c];
            int me = -1;
            bool one_stage = true;
            for (int k = 0; k < cm->nranks && one_stage; k++) {
                int m = cm->members[k];
                one_stage = m >= 0 && m < n && stage[m] == stage[r];
                me = m == r ? k : me;
            }
            if (one_stage && me >= 0 && (best < 0 || cm->nranks > job->comms[best].nranks)) {
                best = c;
                dpr[r] = me;
            }
        }
        if (best < 0) dpr[r] = 0;
        dp = dpr[r] + 1 > dp ? dpr[r] + 1 : dp;
    }
    bool ok = dp * pp == n;
    for (int r = 0; r < n && ok; r++)
        for (int q = 0; q < r && ok; q++)
            ok = stage[q] != stage[r] || dpr[q] != dpr[r];
    if (!ok) {
        fp_error("the communicators do not form a DP %d x PP %d grid of the %d ranks; "
                 "give --dp N --pp N",
                 dp, pp, n);
        return FP_EINPUT;
    }
    *dp_out = dp;
    *pp_out = pp;
    return FP_OK;
}

/* What-if op type of an op, or -1 when the model has none for it. */
static int classify(const fp_tr_job *job, const fp_tr_op *o, const int *stage, int pp)
{
    const fp_tr_comm *cm = &job->comms[o->comm];
    if (o->p2p) {
        int peer = o->peer >= 0 && o->peer < cm->nranks ? cm->members[o->peer] : -1;
        if (peer < 0) return -1;
        bool down = stage[peer] > stage[o->rank];
        return o->send ? (down ? FP_WI_FORWARD_SEND : FP_WI_BACKWARD_SEND)
                       : (down ? FP_WI_BACKWARD_RECV : FP_WI_FORWARD_RECV);
    }
    bool seen[1024] = {false}, one = true;
    int nst = 0;
    for (int k = 0; k < cm->nranks; k++) {
        int m = cm->members[k];
        if (m < 0 || stage[m] >= 1024) return -1;
        one &= stage[m] == stage[o->rank];
        nst += !seen[stage[m]];
        seen[stage[m]] = true;
    }
    if (one)
        return strcmp(o->op, "AllGather") == 0       ? FP_WI_PARAMS_ALL_GATHER
               : strcmp(o->op, "ReduceScatter") == 0 ? FP_WI_GRADS_REDUCE_SCATTER
               : strcmp(o->op, "AllReduce") == 0     ? FP_WI_SEPARATE_GRADS_ALL_REDUCE
                                                     : -1;
    if (strcmp(o->op, "AllReduce") != 0) return -1;
    if (nst == 2 && seen[0] && seen[pp - 1]) return FP_WI_EMBEDDING_GRADS_ALL_REDUCE;
    return nst == pp ? FP_WI_OPTIMIZER_CLIP_MAIN_GRAD : -1;
}

typedef struct wi_ctx {
    const fp_tr_job *job;
    const int *stage, *dpr, *type, *step; /* per op */
    int pp;
    double sum[2]; /* single-compute gaps: forward, backward */
    int cnt[2];
    fp_wi_row *rows;
    size_t n, cap;
    int seq[FP_WI_OPTYPE_COUNT];
} wi_ctx;

static fp_status add_row(wi_ctx *w, int r, int step, int t, double start, double dur, int mc,
                         int mb, int gmc)
{
    fp_status st = FP_OK;
    fp_wi_row *nv = fp_grow(w->rows, &w->cap, w->n + 1, sizeof *nv, 4096);
    if (!nv) FP_FAIL(FP_ENOMEM, "out of memory for what-if row %zu", w->n + 1);
    w->rows = nv;
    w->rows[w->n++] = (fp_wi_row){.dp_rank = w->dpr[r],
                                  .stage = w->stage[r],
                                  .rank = r,
                                  .step = step,
                                  .optype = (fp_wi_optype)t,
                                  .start_ts = start,
                                  .duration = dur > 0 ? dur : 0,
                                  .seq_id = w->seq[t]++,
                                  .mc = mc,
                                  .mb_id = mb,
                                  .gmc = gmc};
cleanup:
    return st;
}

/* Ops [a, b) are one rank's ops of one step. Emit them and the compute the
 * stage's 1F1B program puts between its P2P batches (emit false: only gather
 * the single-compute statistics the split of adjacent computes uses). */
static fp_status one_step(wi_ctx *w, size_t a, size_t b, bool emit, fp__wi_item *prog)
{
    static const int kind_type[4] = {FP_WI_FORWARD_SEND, FP_WI_FORWARD_RECV, FP_WI_BACKWARD_SEND,
                                     FP_WI_BACKWARD_RECV};
    fp_status st = FP_OK;
    const fp_tr_op *ops = w->job->ops;
    int r = ops[a].rank, s = w->stage[r], step = w->step[a], pp = w->pp;
    size_t list[4][512];
    int nk[4] = {0};
    double pre = -1, post = -1;
    for (size_t i = a; i < b; i++) {
        int t = w->type[i];
        int k = t == FP_WI_FORWARD_SEND    ? 0
                : t == FP_WI_FORWARD_RECV  ? 1
                : t == FP_WI_BACKWARD_SEND ? 2
                : t == FP_WI_BACKWARD_RECV ? 3
                                           : -1;
        if (k >= 0 && nk[k] < 512)
            list[k][nk[k]++] = i;
        else if (k < 0 && nk[0] + nk[1] + nk[2] + nk[3] == 0)
            pre = ops[i].t_end; /* before the pipeline: params-all-gather */
        else if (k < 0 && post < 0)
            post = ops[i].t_start; /* after it: embedding, grads, clip */
    }
    int M = s == 0 ? nk[0] : nk[1];
    if (M < 1 || M > 512 / 2) {
        fp_error("rank %d step %d: %d microbatches seen: not a 1F1B pipeline step", r, step, M);
        return FP_EINPUT;
    }
    int np = fp__wi_1f1b_program(prog, s, pp, M), want[4] = {0};
    for (int i = 0; i < np; i++)
        for (int j = 0; !prog[i].compute && j < prog[i].nops; j++)
            want[prog[i].kind[j]]++;
    for (int k = 0; k < 4; k++)
        if (want[k] != nk[k]) {
            fp_error("rank %d (stage %d of %d) step %d: %d %s ops where a 1F1B schedule of %d "
                     "microbatches has %d",
                     r, s, pp, step, nk[k], fp_wi_optype_name((fp_wi_optype)kind_type[k]), M,
                     want[k]);
            return FP_EINPUT;
        }
    if (emit)
        for (size_t i = a; i < b; i++)
            if (w->type[i] >= 0) {
                bool dpc = !ops[i].p2p && w->type[i] != FP_WI_EMBEDDING_GRADS_ALL_REDUCE &&
                           w->type[i] != FP_WI_OPTIMIZER_CLIP_MAIN_GRAD;
                FP_CHECK(add_row(w, r, step, w->type[i], ops[i].t_start,
                                 ops[i].t_end - ops[i].t_start, dpc ? 0 : -1, -1, -1));
            }
    double rf = w->cnt[0] && w->cnt[1]
                    ? (w->sum[0] / w->cnt[0]) / (w->sum[0] / w->cnt[0] + w->sum[1] / w->cnt[1])
                    : 1.0 / 3; /* backward ~ twice forward */
    double cur = pre;
    int run0 = 0;
    for (int i = 0; i <= np; i++) {
        if (i < np && prog[i].compute) continue;
        double lo = cur, hi = post, end = cur;
        if (i < np) {
            hi = INFINITY;
            for (int j = 0; j < prog[i].nops; j++) {
                const fp_tr_op *o = &ops[list[prog[i].kind[j]][prog[i].mbs[j]]];
                hi = fmin(hi, o->t_start);
                end = fmax(end, o->t_end);
            }
        }
        if (lo < 0) lo = hi; /* nothing before the first compute: it cannot be timed */
        if (hi < 0) hi = lo;
        int nrun = i - run0;
        double wsum = 0;
        for (int j = run0; j < i; j++)
            wsum += prog[j].fwd ? rf : 1 - rf;
        if (!emit && nrun == 1 && hi > lo) {
            w->sum[prog[run0].fwd ? 0 : 1] += hi - lo;
            w->cnt[prog[run0].fwd ? 0 : 1]++;
        }
        double at = lo;
        for (int j = run0; emit && j < i; j++) {
            double d = nrun == 1 ? hi - lo : (hi - lo) * (prog[j].fwd ? rf : 1 - rf) / wsum;
            FP_CHECK(add_row(w, r, step,
                             prog[j].fwd ? FP_WI_FORWARD_COMPUTE : FP_WI_BACKWARD_COMPUTE, at, d, 0,
                             prog[j].mb, s));
            at += d;
        }
        if (i < np) cur = end;
        run0 = i + 1;
    }
    /* the optimizer runs after the clip until the rank's next op (the next
     * step's first): NCCL does not see it; NaN until fp_tr_whatif_rows fills
     * in the mean for a step with nothing after it */
    if (emit && w->type[b - 1] == FP_WI_OPTIMIZER_CLIP_MAIN_GRAD) {
        bool next = b < w->job->nops && ops[b].rank == r;
        double t = ops[b - 1].t_end;
        FP_CHECK(add_row(w, r, step, FP_WI_OPTIMIZER, t, 0, -1, -1, -1));
        w->rows[w->n - 1].duration = next ? fmax(0, ops[b].t_start - t) : NAN;
    }
cleanup:
    return st;
}

fp_status fp_tr_whatif_rows(const fp_tr_job *job, const fp_tr_layout *layout, fp_wi_row **rows,
                            size_t *n, fp_wi_meta *meta)
{
    fp_status st = FP_OK;
    *rows = NULL;
    *n = 0;
    int dp = 0, pp = 0;
    int *stage = malloc((size_t)job->nranks * sizeof *stage);
    int *dpr = malloc((size_t)job->nranks * sizeof *dpr);
    int *type = malloc((job->nops + 1) * sizeof *type);
    int *step = malloc((job->nops + 1) * sizeof *step);
    fp__wi_item *prog = malloc((6 * 256 + 4) * sizeof *prog);
    wi_ctx w = {.job = job, .stage = stage, .dpr = dpr, .type = type, .step = step};
    FP_CHECK_ALLOC(stage);
    FP_CHECK_ALLOC(dpr);
    FP_CHECK_ALLOC(type);
    FP_CHECK_ALLOC(step);
    FP_CHECK_ALLOC(prog);
    FP_CHECK(find_layout(job, layout, stage, dpr, &dp, &pp));
    if (pp < 2) {
        fp_error("no pipeline stages (no send/recv between ranks): the what-if model needs a "
                 "1F1B pipeline of 2 stages or more");
        st = FP_EINPUT;
        goto cleanup;
    }
    w.pp = pp;
    bool any_clip = false;
    for (size_t i = 0; i < job->nops; i++) {
        type[i] = classify(job, &job->ops[i], stage, pp);
        any_clip |= type[i] == FP_WI_OPTIMIZER_CLIP_MAIN_GRAD;
    }
    /* steps end with the clip's all-reduce (else begin with params-all-gather) */
    int nsteps = -1;
    for (size_t i = 0; i < job->nops; i++) {
        bool first = i == 0 || job->ops[i - 1].rank != job->ops[i].rank;
        bool brk = any_clip ? !first && type[i - 1] == FP_WI_OPTIMIZER_CLIP_MAIN_GRAD
                            : !first && type[i] == FP_WI_PARAMS_ALL_GATHER;
        step[i] = first ? 0 : step[i - 1] + brk;
        bool last = i + 1 == job->nops || job->ops[i + 1].rank != job->ops[i].rank;
        int ns = step[i] + (any_clip && type[i] != FP_WI_OPTIMIZER_CLIP_MAIN_GRAD ? 0 : 1);
        if (last) nsteps = nsteps < 0 || ns < nsteps ? ns : nsteps; /* whole steps on every rank */
    }
    if (nsteps < 1) {
        fp_error("no complete training step in the trace (a step ends with the all-reduce "
                 "across every stage)");
        st = FP_EINPUT;
        goto cleanup;
    }
    for (int pass = 0; pass < 2; pass++)
        for (size_t a = 0; a < job->nops;) {
            size_t b = a;
            while (b < job->nops && job->ops[b].rank == job->ops[a].rank && step[b] == step[a])
                b++;
            if (step[a] < nsteps) {
                memset(w.seq, 0, sizeof w.seq);
                FP_CHECK(one_step(&w, a, b, pass == 1, prog));
            }
            a = b;
        }
    double osum = 0;
    int on = 0;
    for (size_t i = 0; i < w.n; i++)
        if (w.rows[i].optype == FP_WI_OPTIMIZER && !isnan(w.rows[i].duration)) {
            osum += w.rows[i].duration;
            on++;
        }
    for (size_t i = 0; i < w.n; i++)
        if (w.rows[i].optype == FP_WI_OPTIMIZER && isnan(w.rows[i].duration))
            w.rows[i].duration = on ? osum / on : 0;
    *meta = (fp_wi_meta){.run_id = 0,
                         .dp_size = dp,
                         .pp_size = pp,
                         .tp_size = 1,
                         .dsp_size = 1,
                         .vpp_size = 1,
                         .world_size = job->nranks};
    snprintf(meta->trial_name, sizeof meta->trial_name, "job");
    *rows = w.rows;
    *n = w.n;
    w.rows = NULL;
cleanup:
    free(w.rows);
    free(stage);
    free(dpr);
    free(type);
    free(step);
    free(prog);
    return st;
}

/* ---- samples ----------------------------------------------------------------------------------
 */

/* The suites' test name of an NCCL op: AllReduce -> allreduce, Send -> sendrecv. */
static void test_name(const fp_tr_op *o, char *buf, size_t len)
{
    static const struct {
        const char *op, *test;
    } names[] = {
        {"AllReduce", "allreduce"}, {"AllGather", "allgather"}, {"ReduceScatter", "reduce_scatter"},
        {"AllToAll", "alltoall"},   {"Broadcast", "broadcast"}, {"Reduce", "reduce"},
        {"Send", "sendrecv"},       {"Recv", "sendrecv"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(o->op, names[i].op) == 0) {
            snprintf(buf, len, "%s", names[i].test);
            return;
        }
    snprintf(buf, len, "other");
}

typedef struct call_key {
    int comm, a, b; /* collective: a = b = -1; p2p: sender and receiver comm ranks */
    uint64_t seq;
    size_t op; /* index into job->ops */
} call_key;

static int cmp_call(const void *x, const void *y)
{
    const call_key *p = x, *q = y;
    if (p->comm != q->comm) return p->comm < q->comm ? -1 : 1;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/* Windows of one test: the next window index per test name. */
typedef struct windows {
    char name[16][24];
    int next[16];
    int n;
} windows;

static int next_window(windows *w, const char *test)
{
    int t = 0;
    while (t < w->n && strcmp(w->name[t], test) != 0)
        t++;
    if (t == 16) return 0;
    if (t == w->n) snprintf(w->name[w->n++], sizeof w->name[0], "%s", test);
    return w->next[t]++;
}

static fp_status run_context(const fp_tr_job *job, const char *command, fp_run *run)
{
    snprintf(run->tag, sizeof run->tag, "job");
    snprintf(run->status, sizeof run->status, "complete");
    snprintf(run->command, sizeof run->command, "%s", command ? command : "fleetprint trace");
    snprintf(run->device_backend, sizeof run->device_backend, "trace");
    snprintf(run->comm_backend, sizeof run->comm_backend, "nccl");
    snprintf(run->fleetprint_version, sizeof run->fleetprint_version, "%s", "trace");
    run->time = job->wall_start;
    int nnodes = 0;
    int *node = malloc((size_t)job->nranks * sizeof *node);
    fp_status st = FP_OK;
    FP_CHECK_ALLOC(node);
    for (int r = 0; r < job->nranks; r++) { /* nodes in order of first rank */
        node[r] = nnodes;
        for (int q = 0; q < r; q++)
            if (strcmp(job->host[q], job->host[r]) == 0) {
                node[r] = node[q];
                break;
            }
        nnodes += node[r] == nnodes;
    }
    st = fp_run_set_shape(run, nnodes, job->nranks);
    for (int r = 0; st == FP_OK && r < job->nranks; r++) {
        memcpy(run->nodes[node[r]], job->host[r], FP_NAME_MAX);
        run->ranks[r].node = node[r];
        run->ranks[r].dev = -1;
        for (int q = 0; q < r; q++)
            run->ranks[r].local_rank += node[q] == node[r];
    }
cleanup:
    free(node);
    return st;
}

/* time_behind: per call, each member's start minus the median start. */
static fp_status behind_samples(const fp_tr_job *job, call_key *keys, double *v, fp_run *run)
{
    static const fp_metric m_behind = {"time_behind", "us", FP_BETTER_LOWER};
    const size_t n = job->nops;
    windows win = {0};
    for (size_t i = 0; i < n; i++) {
        const fp_tr_op *o = &job->ops[i];
        keys[i] = (call_key){.comm = o->comm, .a = -1, .b = -1, .seq = o->seq, .op = i};
        if (o->p2p) {
            keys[i].a = o->send ? o->crank : o->peer;
            keys[i].b = o->send ? o->peer : o->crank;
        }
    }
    qsort(keys, n, sizeof *keys, cmp_call);
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && cmp_call(&keys[a], &keys[b]) == 0;)
            b++;
        if (b - a < 2) continue; /* a call whose peers were not traced */
        for (size_t k = a; k < b; k++)
            v[k - a] = job->ops[keys[k].op].t_start;
        double med = fp_median(v, b - a);
        char test[24];
        test_name(&job->ops[keys[a].op], test, sizeof test);
        int iter = next_window(&win, test);
        for (size_t k = a; k < b; k++) {
            const fp_tr_op *o = &job->ops[keys[k].op];
            fp_entity e = fp_entity_rank(job->host[o->rank], o->rank);
            fp_sample s;
            fp_sample_make(&s, "collectives", test, &m_behind, &e, 0, iter,
                           (o->t_start - med) * 1e6, o->t_start);
            fp_status st = fp_run_add(run, &s);
            if (st != FP_OK) return st;
        }
    }
    return FP_OK;
}

/* lateness_self: ranks of one pipeline stage run the same program, so the
 * k-th op of each comes after the same work. The time a rank spent since its
 * previous op ended, minus the median of the same over its stage's DP peers,
 * is how late it made itself: a slow worker stands out, the ranks that wait
 * for it (their wait is inside their ops) do not. Ops issued together (a
 * group of sends and receives) count once, by the first. */
static fp_status self_samples(const fp_tr_job *job, const int *stage, const size_t *first,
                              double *gap, double *v, fp_run *run)
{
    static const fp_metric m_self = {"lateness_self", "us", FP_BETTER_LOWER};
    const int nr = job->nranks;
    double last_end = 0;
    for (size_t i = 0; i < job->nops; i++) {
        const fp_tr_op *o = &job->ops[i];
        bool head = i == first[o->rank];
        gap[i] = head ? NAN : fmax(0, o->t_start - last_end);
        last_end = head ? o->t_end : fmax(last_end, o->t_end);
    }
    windows win = {0};
    for (int s = 0;; s++) {
        size_t len = SIZE_MAX;
        int members = 0, r0 = -1;
        for (int r = 0; r < nr; r++)
            if (stage[r] == s) {
                size_t l = first[r + 1] - first[r];
                len = l < len ? l : len;
                members++;
                r0 = r0 < 0 ? r : r0;
            }
        if (!members) break;
        for (size_t k = 1; members >= 2 && k < len; k++) {
            const fp_tr_op *ref = &job->ops[first[r0] + k];
            size_t m = 0;
            bool same = true;
            for (int r = 0; r < nr && same; r++)
                if (stage[r] == s) {
                    const fp_tr_op *o = &job->ops[first[r] + k];
                    same = strcmp(o->op, ref->op) == 0 && o->p2p == ref->p2p;
                    v[m++] = gap[first[r] + k];
                }
            if (!same) break; /* the programs diverge: nothing after this compares */
            const fp_tr_op *prev = &job->ops[first[r0] + k - 1];
            if (ref->t_start < prev->t_end)
                continue; /* issued with the previous op (one group): its gap is that op's */
            double med = fp_median(v, m);
            char test[24];
            test_name(ref, test, sizeof test);
            int iter = next_window(&win, test);
            for (int r = 0; r < nr; r++)
                if (stage[r] == s) {
                    const fp_tr_op *o = &job->ops[first[r] + k];
                    fp_entity e = fp_entity_rank(job->host[r], r);
                    fp_sample smp;
                    fp_sample_make(&smp, "collectives", test, &m_self, &e, 0, iter,
                                   (gap[first[r] + k] - med) * 1e6, o->t_start);
                    fp_status st = fp_run_add(run, &smp);
                    if (st != FP_OK) return st;
                }
        }
    }
    return FP_OK;
}

fp_status fp_tr_job_run(const fp_tr_job *job, const fp_tr_layout *layout, const char *command,
                        fp_run *run)
{
    fp_status st = FP_OK;
    const size_t n = job->nops;
    const int nr = job->nranks;
    call_key *keys = malloc((n + 1) * sizeof *keys);
    double *gap = malloc((n + 1) * sizeof *gap), *v = malloc((n + (size_t)nr + 1) * sizeof *v);
    int *stage = malloc((size_t)nr * sizeof *stage), *dpr = malloc((size_t)nr * sizeof *dpr);
    size_t *first = calloc((size_t)nr + 1, sizeof *first);
    fp_run_init(run);
    FP_CHECK_ALLOC(keys);
    FP_CHECK_ALLOC(gap);
    FP_CHECK_ALLOC(v);
    FP_CHECK_ALLOC(stage);
    FP_CHECK_ALLOC(dpr);
    FP_CHECK_ALLOC(first);
    FP_CHECK(run_context(job, command, run));
    for (size_t i = 0; i < n; i++)
        run->duration = fmax(run->duration, job->ops[i].t_end);
    FP_CHECK(behind_samples(job, keys, v, run));
    /* ops of rank r are [first[r], first[r + 1]) */
    for (size_t i = 0; i < n; i++)
        first[job->ops[i].rank + 1] = i + 1;
    for (int r = 0; r < nr; r++)
        first[r + 1] = first[r + 1] > first[r] ? first[r + 1] : first[r];
    int dp, pp;
    if (find_layout(job, layout, stage, dpr, &dp, &pp) != FP_OK) {
        fp_warn("no DP x PP layout: lateness_self is not computed (time_behind is)");
        goto cleanup;
    }
    FP_CHECK(self_samples(job, stage, first, gap, v, run));
cleanup:
    free(keys);
    free(gap);
    free(v);
    free(stage);
    free(dpr);
    free(first);
    return st;
}
