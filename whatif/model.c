/* The what-if dependency model (whatif.c's header says what it models): op
 * lookup, P2P matching and the 1F1B schedule, communication groups, and
 * building the model from a trace. Replay and analysis: whatif.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/log.h"
#include "fleetprint/stats.h"
#include "whatif_internal.h"

#define P2P_EPS 5e-5 /* clock slack when matching P2P ops to computes (s) */

/* ---- small helpers ------------------------------------------------------------------- */

static fp_status push_int(int **arr, int *n, int *cap, int v)
{
    fp_status st = FP_OK;
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 4;
        int *na = realloc(*arr, (size_t)nc * sizeof *na);
        if (!na)
            FP_FAIL(FP_ENOMEM, "out of memory growing a list of the model to %d entries", nc);
        *arr = na;
        *cap = nc;
    }
    (*arr)[(*n)++] = v;
cleanup:
    return st;
}

static int lookup(const wi_model *m, int stage, fp_wi_optype t, int seq)
{
    if (stage < 0 || stage >= m->pp || seq < 0)
        return -1;
    int k = stage * FP_WI_OPTYPE_COUNT + (int)t;
    return seq < m->lk_len[k] ? m->lk[m->lk_off[k] + seq] : -1;
}

/* v depends on u (same DP rank and step). */
static fp_status add_dep(wi_model *m, int v, int u)
{
    wi_op *o = &m->ops[v];
    o->in_model = true;
    for (int i = 0; i < o->ndeps; i++)
        if (o->deps[i] == u)
            return FP_OK;
    return push_int(&o->deps, &o->ndeps, &o->capdeps, u);
}

/* ops[0] after every op in last[], then each op after the one before it. */
static fp_status chain(wi_model *m, const int *ops, int n, const int *last, int nlast)
{
    fp_status st = FP_OK;
    for (int i = 0; i < n; i++) {
        m->ops[ops[i]].in_model = true;
        if (i == 0)
            for (int j = 0; j < nlast; j++)
                FP_CHECK(add_dep(m, ops[0], last[j]));
        else
            FP_CHECK(add_dep(m, ops[i], ops[i - 1]));
    }
cleanup:
    return st;
}

static fp_status new_group(wi_model *m, bool dp_sync, int *gid)
{
    fp_status st = FP_OK;
    if (m->ngroups == m->capgroups) {
        int nc = m->capgroups ? m->capgroups * 2 : 16;
        wi_group *ng = realloc(m->groups, (size_t)nc * sizeof *ng);
        if (!ng)
            FP_FAIL(FP_ENOMEM, "out of memory for %d communication groups", nc);
        m->groups = ng;
        m->capgroups = nc;
    }
    m->groups[m->ngroups] = (wi_group){.dp_sync = dp_sync};
    *gid = m->ngroups++;
cleanup:
    return st;
}

static fp_status group_add(wi_model *m, int gid, int op)
{
    m->ops[op].gid = gid;
    m->ops[op].in_model = true;
    wi_group *g = &m->groups[gid];
    return push_int(&g->members, &g->n, &g->cap, op);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Order of ops on a stream: start time in the reference instance, then seq_id,
 * then type name (the artifact's sort). */
static int cmp_ops(const void *a, const void *b, void *ctx)
{
    const wi_op *ops = ctx;
    const wi_op *x = &ops[*(const int *)a], *y = &ops[*(const int *)b];
    if (x->ref_start != y->ref_start)
        return x->ref_start < y->ref_start ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return strcmp(fp_wi_optype_name(x->type), fp_wi_optype_name(y->type));
}

static void sort_ops(const wi_model *m, int *idx, int n)
{
    qsort_r(idx, (size_t)n, sizeof *idx, cmp_ops, m->ops);
}

/* Ops of one stage whose type satisfies the mask, sorted; *n set. */
static int *stage_ops(const wi_model *m, int stage, unsigned mask, int *n)
{
    int *idx = malloc((size_t)(m->nops ? m->nops : 1) * sizeof *idx);
    *n = 0;
    if (!idx)
        return NULL;
    for (int v = 0; v < m->nops; v++)
        if (m->ops[v].stage == stage && (mask >> m->ops[v].type & 1u))
            idx[(*n)++] = v;
    sort_ops(m, idx, *n);
    return idx;
}

#define BIT(t) (1u << (t))
#define COMPUTE_MASK (BIT(FP_WI_FORWARD_COMPUTE) | BIT(FP_WI_BACKWARD_COMPUTE))
#define P2P_MASK                                                                           \
    (BIT(FP_WI_FORWARD_SEND) | BIT(FP_WI_FORWARD_RECV) | BIT(FP_WI_BACKWARD_SEND) |        \
     BIT(FP_WI_BACKWARD_RECV))

static fp_wi_optype p2p_type(bool fwd, bool send)
{
    return fwd ? (send ? FP_WI_FORWARD_SEND : FP_WI_FORWARD_RECV)
               : (send ? FP_WI_BACKWARD_SEND : FP_WI_BACKWARD_RECV);
}

/* Stage offset of the peer of a P2P type: forward-send goes to the next stage. */
static int p2p_delta(fp_wi_optype t)
{
    return t == FP_WI_FORWARD_SEND || t == FP_WI_BACKWARD_RECV ? 1 : -1;
}

static fp_wi_optype p2p_peer_type(fp_wi_optype t)
{
    switch (t) {
    case FP_WI_FORWARD_SEND:
        return FP_WI_FORWARD_RECV;
    case FP_WI_FORWARD_RECV:
        return FP_WI_FORWARD_SEND;
    case FP_WI_BACKWARD_SEND:
        return FP_WI_BACKWARD_RECV;
    default:
        return FP_WI_BACKWARD_SEND;
    }
}

static const char *opname(const wi_op *o, char *buf, size_t len)
{
    snprintf(buf, len, "%s seq %d on stage %d", fp_wi_optype_name(o->type), o->seq, o->stage);
    return buf;
}

/* ---- dependency model: P2P --------------------------------------------------------- */

/* Match each P2P op of one stage to its compute and mark the ones without a peer. */
static fp_status match_p2p_stage(wi_model *m, int s)
{
    fp_status st = FP_OK;
    int ncomm = 0;
    int *comm = stage_ops(m, s, P2P_MASK, &ncomm);
    FP_CHECK_ALLOC(comm);
    for (int k = 0; k < 2; k++) {
        bool fwd = k == 0;
        fp_wi_optype ct = fwd ? FP_WI_FORWARD_COMPUTE : FP_WI_BACKWARD_COMPUTE;
        int num = 0;
        double last_st = -INFINITY, first_ed = INFINITY;
        for (int v = 0; v < m->nops; v++)
            if (m->ops[v].stage == s && m->ops[v].type == ct) {
                num++;
                last_st = fmax(last_st, m->ops[v].ref_start);
                first_ed = fmin(first_ed, m->ops[v].ref_end);
            }
        if (num == 0)
            FP_CHECK(fp__wi_bad("%s: stage %d has no %s op in the reference step", m->src, s,
                                fp_wi_optype_name(ct)));
        for (int send = 0; send < 2; send++) {
            fp_wi_optype pt = p2p_type(fwd, send);
            int cnt = 0;
            for (int i = 0; i < ncomm; i++) {
                const wi_op *c = &m->ops[comm[i]];
                if (c->type == pt && (send ? c->ref_end >= first_ed - P2P_EPS
                                           : c->ref_start <= last_st + P2P_EPS))
                    cnt++;
            }
            int cid = 0;
            if (cnt != num) {
                if ((s != 0 && s != m->pp - 1) || !(cnt == 0 || cnt + 1 == num))
                    FP_CHECK(fp__wi_bad("%s: stage %d has %d %s ops for %d %s ops; the pipeline "
                                        "schedule is not supported",
                                        m->src, s, cnt, fp_wi_optype_name(pt), num,
                                        fp_wi_optype_name(ct)));
                if (!send && cnt + 1 == num)
                    cid = 1; /* the first forward-recv no-op is missing: skip its compute */
            }
            for (int i = 0; i < ncomm; i++) {
                wi_op *c = &m->ops[comm[i]];
                if (c->type != pt)
                    continue;
                if (send ? c->ref_end < first_ed - P2P_EPS : c->ref_start > last_st + P2P_EPS)
                    continue; /* recorded but never launched: a no-op at the step's edge */
                int mc = lookup(m, s, ct, cid);
                if (mc < 0) {
                    char b[96];
                    FP_CHECK(fp__wi_bad("%s: %s has no matching %s seq %d", m->src,
                                        opname(c, b, sizeof b), fp_wi_optype_name(ct), cid));
                }
                int peer_gmc = m->ops[mc].gmc + (send ? (fwd ? 1 : -1) : (fwd ? -1 : 1));
                c->noop = peer_gmc < 0 || peer_gmc >= m->vpp * m->pp;
                c->match = mc;
                cid++;
            }
        }
    }
cleanup:
    free(comm);
    return st;
}

/* Pair the k-th live send of each stage with the k-th live recv of its peer. */
static fp_status pair_p2p(wi_model *m)
{
    fp_status st = FP_OK;
    int *a = NULL, *b = NULL;
    for (int s = 0; s < m->pp; s++) {
        for (int k = 0; k < 2; k++) {
            fp_wi_optype pt = k == 0 ? FP_WI_FORWARD_SEND : FP_WI_BACKWARD_SEND;
            fp_wi_optype rt = p2p_peer_type(pt);
            int ps = ((s + p2p_delta(pt)) % m->pp + m->pp) % m->pp;
            int na = 0, nb = 0;
            free(a);
            free(b);
            b = NULL;
            a = stage_ops(m, s, BIT(pt), &na);
            FP_CHECK_ALLOC(a);
            b = stage_ops(m, ps, BIT(rt), &nb);
            FP_CHECK_ALLOC(b);
            int la = 0, lb = 0;
            for (int i = 0; i < na; i++)
                a[la] = a[i], la += !m->ops[a[i]].noop;
            for (int i = 0; i < nb; i++)
                b[lb] = b[i], lb += !m->ops[b[i]].noop;
            if (la != lb) {
                char buf[96];
                int lone = la > lb ? a[lb] : b[la];
                FP_CHECK(fp__wi_bad("%s: %s has no peer on stage %d (%d %s vs %d %s)", m->src,
                                    opname(&m->ops[lone], buf, sizeof buf),
                                    la > lb ? ps : s, la, fp_wi_optype_name(pt), lb,
                                    fp_wi_optype_name(rt)));
            }
            for (int i = 0; i < la; i++) {
                int gid;
                FP_CHECK(new_group(m, false, &gid));
                FP_CHECK(group_add(m, gid, a[i]));
                FP_CHECK(group_add(m, gid, b[i]));
            }
        }
    }
    /* ops without a peer synchronise with nobody */
    for (int v = 0; v < m->nops; v++)
        if ((P2P_MASK >> m->ops[v].type & 1u) && m->ops[v].noop) {
            int gid;
            FP_CHECK(new_group(m, false, &gid));
            FP_CHECK(group_add(m, gid, v));
        }
cleanup:
    free(a);
    free(b);
    return st;
}

/* In-worker dependencies of one stage: streams, P2P-compute order, first backward. */
static fp_status stage_streams(wi_model *m, int s)
{
    fp_status st = FP_OK;
    int nc = 0, np = 0, *comp = NULL, *comm = NULL;
    comp = stage_ops(m, s, COMPUTE_MASK, &nc);
    FP_CHECK_ALLOC(comp);
    FP_CHECK(chain(m, comp, nc, NULL, 0));
    for (int k = 0; k < 4; k++) {
        fp_wi_optype pt = p2p_type(k < 2, k % 2 == 0);
        free(comm);
        comm = stage_ops(m, s, BIT(pt), &np);
        FP_CHECK_ALLOC(comm);
        FP_CHECK(chain(m, comm, np, NULL, 0));
        for (int i = 0; i < np; i++) {
            wi_op *c = &m->ops[comm[i]];
            if (c->match < 0)
                continue;
            bool send = pt == FP_WI_FORWARD_SEND || pt == FP_WI_BACKWARD_SEND;
            if (send) {
                FP_CHECK(add_dep(m, comm[i], c->match));
            } else {
                const wi_op *mo = &m->ops[c->match];
                FP_CHECK(add_dep(m, c->match, comm[i]));
                if (mo->seq > 0) {
                    int prev = lookup(m, s, mo->type, mo->seq - 1);
                    if (prev < 0) {
                        char b[96];
                        FP_CHECK(fp__wi_bad("%s: %s has no predecessor", m->src,
                                            opname(mo, b, sizeof b)));
                    }
                    FP_CHECK(add_dep(m, comm[i], prev));
                }
            }
        }
    }
    /* the first backward send/recv waits for the forward two computes before
     * the first backward compute */
    int fb = -1;
    for (int i = 0; i < nc; i++)
        if (m->ops[comp[i]].type == FP_WI_BACKWARD_COMPUTE) {
            fb = i;
            break;
        }
    if (fb >= 2) {
        if (m->ops[comp[fb - 1]].type != FP_WI_FORWARD_COMPUTE ||
            m->ops[comp[fb - 2]].type != FP_WI_FORWARD_COMPUTE)
            FP_CHECK(fp__wi_bad("%s: stage %d: the two computes before the first backward are "
                                "not forwards; the schedule is not supported",
                                m->src, s));
        for (int k = 0; k < 2; k++) {
            int x = lookup(m, s, k ? FP_WI_BACKWARD_SEND : FP_WI_BACKWARD_RECV, 0);
            if (x >= 0)
                FP_CHECK(add_dep(m, x, comp[fb - 2]));
        }
    }
cleanup:
    free(comp);
    free(comm);
    return st;
}

/* DP communication and the end of the step on one stage. */
static fp_status stage_dp_and_tail(wi_model *m, int s)
{
    fp_status st = FP_OK;
    int n = 0, *dpc = NULL, *comp = NULL, *tail = NULL;
    int nc = 0;
    comp = stage_ops(m, s, COMPUTE_MASK, &nc);
    FP_CHECK_ALLOC(comp);
    if (m->use_dp) {
        dpc = stage_ops(m, s, BIT(FP_WI_PARAMS_ALL_GATHER) | BIT(FP_WI_GRADS_REDUCE_SCATTER), &n);
        FP_CHECK_ALLOC(dpc);
        FP_CHECK(chain(m, dpc, n, NULL, 0));
        /* the first forward of a model chunk waits for its (last) params-all-gather */
        int kag = s * FP_WI_OPTYPE_COUNT + FP_WI_PARAMS_ALL_GATHER;
        int kgr = s * FP_WI_OPTYPE_COUNT + FP_WI_GRADS_REDUCE_SCATTER;
        bool *seen = calloc((size_t)m->vpp + 1, 1);
        FP_CHECK_ALLOC(seen);
        for (int i = m->lk_len[kag] - 1; i >= 0; i--) {
            int ag = m->lk[m->lk_off[kag] + i];
            if (ag < 0)
                continue;
            int mc = m->ops[ag].mc;
            if (mc < 0 || mc >= m->vpp || seen[mc])
                continue;
            int first = -1;
            for (int j = 0; j < nc; j++)
                if (m->ops[comp[j]].type == FP_WI_FORWARD_COMPUTE && m->ops[comp[j]].mc == mc &&
                    (first < 0 || m->ops[comp[j]].ref_start < m->ops[first].ref_start))
                    first = comp[j];
            if (first < 0) {
                free(seen);
                FP_CHECK(fp__wi_bad("%s: stage %d: params-all-gather of model chunk %d has no "
                                    "forward-compute",
                                    m->src, s, mc));
            }
            st = add_dep(m, first, ag);
            if (st != FP_OK) {
                free(seen);
                goto cleanup;
            }
            seen[mc] = true;
        }
        if (m->ovlp_dp) {
            /* overlapped DP: a chunk's reduce-scatter waits for its last backward */
            memset(seen, 0, (size_t)m->vpp + 1);
            for (int i = 0; i < m->lk_len[kgr]; i++) {
                int rs = m->lk[m->lk_off[kgr] + i];
                if (rs < 0)
                    continue;
                int mc = m->ops[rs].mc;
                if (mc < 0 || mc >= m->vpp || seen[mc])
                    continue;
                int last = -1;
                for (int j = 0; j < nc; j++)
                    if (m->ops[comp[j]].type == FP_WI_BACKWARD_COMPUTE &&
                        m->ops[comp[j]].mc == mc &&
                        (last < 0 || m->ops[comp[j]].ref_end > m->ops[last].ref_end))
                        last = comp[j];
                if (last >= 0 && (st = add_dep(m, rs, last)) != FP_OK) {
                    free(seen);
                    goto cleanup;
                }
                seen[mc] = true;
            }
        }
        free(seen);
    }
    /* tail: last compute -> gc -> layernorm -> embedding -> grads -> clip -> optimizer */
    int lastc = comp[0];
    for (int j = 1; j < nc; j++)
        if (m->ops[comp[j]].ref_end > m->ops[lastc].ref_end)
            lastc = comp[j];
    int gc = lookup(m, s, FP_WI_GC, 0);
    if (gc >= 0)
        FP_CHECK(add_dep(m, gc, lastc));
    int opt = lookup(m, s, FP_WI_OPTIMIZER, 0);
    if (opt < 0)
        FP_CHECK(fp__wi_bad("%s: stage %d has no optimizer op; the end of a step cannot be "
                            "located",
                            m->src, s));
    int kgr = s * FP_WI_OPTYPE_COUNT + FP_WI_GRADS_REDUCE_SCATTER;
    tail = malloc((size_t)(m->lk_len[kgr] + 8) * sizeof *tail);
    FP_CHECK_ALLOC(tail);
    int nt = 0, last[2], nlast = 0;
    int ln = lookup(m, s, FP_WI_LAYERNORM_GRADS_ALL_REDUCE, 0);
    int emb = (s == 0 || s == m->pp - 1) ? lookup(m, s, FP_WI_EMBEDDING_GRADS_ALL_REDUCE, 0) : -1;
    int clip = lookup(m, s, FP_WI_OPTIMIZER_CLIP_MAIN_GRAD, 0);
    if (ln >= 0)
        tail[nt++] = ln;
    if (emb >= 0)
        tail[nt++] = emb;
    if (m->use_dp && m->ovlp_dp) {
        int sep = lookup(m, s, FP_WI_SEPARATE_GRADS_ALL_REDUCE, 0);
        if (sep >= 0)
            tail[nt++] = sep;
        if (m->lk_len[kgr] > 0) {
            int rs = lookup(m, s, FP_WI_GRADS_REDUCE_SCATTER, m->lk_len[kgr] - 1);
            if (rs >= 0)
                last[nlast++] = rs;
        }
    } else if (m->use_dp) {
        for (int i = 0; i < m->lk_len[kgr]; i++) {
            int rs = m->lk[m->lk_off[kgr] + i];
            if (rs >= 0)
                tail[nt++] = rs;
        }
    }
    if (clip >= 0)
        tail[nt++] = clip;
    tail[nt++] = opt;
    last[nlast++] = gc >= 0 ? gc : lastc;
    FP_CHECK(chain(m, tail, nt, last, nlast));
cleanup:
    free(dpc);
    free(comp);
    free(tail);
    return st;
}

/* Cross-worker groups of the DP collectives, the embedding and the clip. */
static fp_status sync_groups(wi_model *m)
{
    fp_status st = FP_OK;
    int gid;
    if (m->use_dp)
        for (int v = 0; v < m->nops; v++) {
            fp_wi_optype t = m->ops[v].type;
            if (t == FP_WI_PARAMS_ALL_GATHER || t == FP_WI_GRADS_REDUCE_SCATTER ||
                t == FP_WI_SEPARATE_GRADS_ALL_REDUCE) {
                FP_CHECK(new_group(m, true, &gid));
                FP_CHECK(group_add(m, gid, v));
            }
        }
    int e0 = lookup(m, 0, FP_WI_EMBEDDING_GRADS_ALL_REDUCE, 0);
    int e1 = m->pp > 1 ? lookup(m, m->pp - 1, FP_WI_EMBEDDING_GRADS_ALL_REDUCE, 0) : -1;
    if (e0 >= 0 || e1 >= 0) {
        FP_CHECK(new_group(m, false, &gid));
        if (e0 >= 0)
            FP_CHECK(group_add(m, gid, e0));
        if (e1 >= 0)
            FP_CHECK(group_add(m, gid, e1));
    }
    bool any = false;
    for (int s = 0; s < m->pp; s++) {
        int c = lookup(m, s, FP_WI_OPTIMIZER_CLIP_MAIN_GRAD, 0);
        if (c < 0)
            continue;
        if (!any)
            FP_CHECK(new_group(m, true, &gid));
        any = true;
        FP_CHECK(group_add(m, gid, c));
    }
cleanup:
    return st;
}

/* Replay order: Kahn's algorithm where a group's ops finish (and release their
 * successors) only once every member has started. */
static fp_status schedule(wi_model *m)
{
    fp_status st = FP_OK;
    int *deg = calloc((size_t)m->nops, sizeof *deg);
    int *queue = malloc((size_t)m->nops * sizeof *queue);
    int *started = calloc((size_t)(m->ngroups ? m->ngroups : 1), sizeof *started);
    m->sched_op = malloc((size_t)m->nops * sizeof *m->sched_op);
    m->sched_fin = malloc((size_t)m->nops * sizeof *m->sched_fin);
    FP_CHECK_ALLOC(deg);
    FP_CHECK_ALLOC(queue);
    FP_CHECK_ALLOC(started);
    FP_CHECK_ALLOC(m->sched_op);
    FP_CHECK_ALLOC(m->sched_fin);
    for (int v = 0; v < m->nops; v++) {
        wi_op *o = &m->ops[v];
        deg[v] = o->ndeps;
        for (int i = 0; i < o->ndeps; i++)
            FP_CHECK(push_int(&m->ops[o->deps[i]].next, &m->ops[o->deps[i]].nnext,
                              &m->ops[o->deps[i]].capnext, v));
    }
    int head = 0, tail = 0, done = 0;
    for (int v = 0; v < m->nops; v++)
        if (deg[v] == 0)
            queue[tail++] = v;
    while (head < tail) {
        int v = queue[head++];
        int g = m->ops[v].gid;
        m->sched_op[done] = v;
        m->sched_fin[done] = -1;
        done++;
        int nfin = 1;
        const int *fin = &v;
        if (g >= 0) {
            if (++started[g] < m->groups[g].n)
                continue;
            m->sched_fin[done - 1] = g;
            fin = m->groups[g].members;
            nfin = m->groups[g].n;
        }
        for (int k = 0; k < nfin; k++) {
            const wi_op *u = &m->ops[fin[k]];
            for (int i = 0; i < u->nnext; i++)
                if (--deg[u->next[i]] == 0)
                    queue[tail++] = u->next[i];
        }
    }
    if (done < m->nops) {
        int stuck = -1;
        for (int v = 0; v < m->nops && stuck < 0; v++) {
            bool seen = false;
            for (int i = 0; i < done; i++)
                seen |= m->sched_op[i] == v;
            if (!seen)
                stuck = v;
        }
        char b[96];
        FP_CHECK(fp__wi_bad("%s: the dependency model has a cycle (%s never starts); the "
                            "schedule is not supported",
                            m->src, opname(&m->ops[stuck], b, sizeof b)));
    }
cleanup:
    free(deg);
    free(queue);
    free(started);
    return st;
}

/* ---- building the model from a trace ----------------------------------------------- */

void fp__wi_model_free(wi_model *m)
{
    if (m->ops)
        for (int v = 0; v < m->nops; v++) {
            free(m->ops[v].deps);
            free(m->ops[v].next);
        }
    if (m->groups)
        for (int g = 0; g < m->ngroups; g++)
            free(m->groups[g].members);
    free(m->ops);
    free(m->groups);
    free(m->steps);
    free(m->lk_off);
    free(m->lk_len);
    free(m->lk);
    free(m->sched_op);
    free(m->sched_fin);
    free(m->worker_rank);
    memset(m, 0, sizeof *m);
}

static int step_index(const wi_model *m, int step)
{
    const int *p = bsearch(&step, m->steps, (size_t)m->nsteps, sizeof *p, cmp_int);
    return p ? (int)(p - m->steps) : -1;
}

static const char *where(const fp_wi_trace *t, size_t i, char *buf, size_t len)
{
    if (t->from_file)
        snprintf(buf, len, "%s:%d", t->source, t->line[i]);
    else
        snprintf(buf, len, "%s: row %d", t->source, t->line[i]);
    return buf;
}

/* Check rows against the meta, index steps, ops and instances. row_of[v*ninst+i]
 * receives the row of op v in instance i (= step_index * dp + dp_rank). */
/* Check the rows against the meta (ranges, one rank per worker) and index the
 * steps: m's dp, pp, worker ranks, steps, nsteps and ninst. */
static fp_status check_rows(const fp_wi_trace *t, const fp_wi_meta *meta, wi_model *m)
{
    fp_status st = FP_OK;
    char wb[300];
    m->dp = meta->dp_size;
    m->pp = meta->pp_size;
    int nw = m->dp * m->pp;
    m->worker_rank = malloc((size_t)nw * sizeof *m->worker_rank);
    FP_CHECK_ALLOC(m->worker_rank);
    for (int w = 0; w < nw; w++)
        m->worker_rank[w] = -1;
    m->steps = malloc(t->n * sizeof *m->steps);
    FP_CHECK_ALLOC(m->steps);
    for (size_t i = 0; i < t->n; i++) {
        const fp_wi_row *r = &t->rows[i];
        if (r->dp_rank >= m->dp)
            FP_CHECK(fp__wi_bad("%s: dp_rank %d out of range for dp_size %d in the meta "
                                "(inconsistent meta)",
                                where(t, i, wb, sizeof wb), r->dp_rank, m->dp));
        if (r->stage >= m->pp)
            FP_CHECK(fp__wi_bad("%s: stage %d out of range for pp_size %d in the meta "
                                "(inconsistent meta)",
                                where(t, i, wb, sizeof wb), r->stage, m->pp));
        if (r->rank >= meta->world_size)
            FP_CHECK(fp__wi_bad("%s: rank %d out of range for world_size %d in the meta "
                                "(inconsistent meta)",
                                where(t, i, wb, sizeof wb), r->rank, meta->world_size));
        if (r->mc >= meta->vpp_size)
            FP_CHECK(fp__wi_bad("%s: mc %d out of range for vpp_size %d in the meta "
                                "(inconsistent meta)",
                                where(t, i, wb, sizeof wb), r->mc, meta->vpp_size));
        int *wr = &m->worker_rank[r->stage * m->dp + r->dp_rank];
        if (*wr < 0)
            *wr = r->rank;
        else if (*wr != r->rank)
            FP_CHECK(fp__wi_bad("%s: rank %d, but dp_rank %d stage %d was rank %d before",
                                where(t, i, wb, sizeof wb), r->rank, r->dp_rank, r->stage, *wr));
        m->steps[i] = r->step;
    }
    qsort(m->steps, t->n, sizeof *m->steps, cmp_int);
    int ns = 0;
    for (size_t i = 0; i < t->n; i++)
        if (ns == 0 || m->steps[ns - 1] != m->steps[i])
            m->steps[ns++] = m->steps[i];
    m->nsteps = ns;
    m->ninst = ns * m->dp;
    for (int s = 0; s < m->pp; s++)
        for (int d = 0; d < m->dp; d++)
            if (m->worker_rank[s * m->dp + d] < 0)
                FP_CHECK(fp__wi_bad("%s: no ops for dp_rank %d stage %d, but the meta says "
                                    "dp_size %d and pp_size %d (inconsistent meta)",
                                    t->source, d, s, m->dp, m->pp));
cleanup:
    return st;
}

/* The ops of the reference instance (dp rank 0, first step): m's op lookup
 * (lk_off, lk_len, lk), ops and vpp; every stage must have ops there. */
static fp_status reference_ops(const fp_wi_trace *t, wi_model *m)
{
    fp_status st = FP_OK;
    char wb[300];
    size_t nk = (size_t)m->pp * FP_WI_OPTYPE_COUNT;
    m->lk_len = calloc(nk, sizeof *m->lk_len);
    m->lk_off = calloc(nk, sizeof *m->lk_off);
    FP_CHECK_ALLOC(m->lk_len);
    FP_CHECK_ALLOC(m->lk_off);
    int ref_step = m->steps[0];
    for (size_t i = 0; i < t->n; i++) {
        const fp_wi_row *r = &t->rows[i];
        if (r->dp_rank == 0 && r->step == ref_step) {
            int *l = &m->lk_len[(size_t)r->stage * FP_WI_OPTYPE_COUNT + r->optype];
            if ((size_t)r->seq_id >= t->n)
                FP_CHECK(fp__wi_bad("%s: seq_id %d is larger than the trace",
                                    where(t, i, wb, sizeof wb), r->seq_id));
            if (r->seq_id + 1 > *l)
                *l = r->seq_id + 1;
        }
    }
    int tot = 0;
    for (size_t k = 0; k < nk; k++) {
        m->lk_off[k] = tot;
        tot += m->lk_len[k];
    }
    m->lk = malloc((size_t)(tot ? tot : 1) * sizeof *m->lk);
    FP_CHECK_ALLOC(m->lk);
    for (int k = 0; k < tot; k++)
        m->lk[k] = -1;
    int nref = 0;
    for (size_t i = 0; i < t->n; i++)
        nref += t->rows[i].dp_rank == 0 && t->rows[i].step == ref_step;
    m->ops = calloc((size_t)nref, sizeof *m->ops);
    FP_CHECK_ALLOC(m->ops);
    m->vpp = 1;
    for (size_t i = 0; i < t->n; i++) {
        const fp_wi_row *r = &t->rows[i];
        if (r->dp_rank != 0 || r->step != ref_step)
            continue;
        int *slot = &m->lk[m->lk_off[(size_t)r->stage * FP_WI_OPTYPE_COUNT + r->optype] +
                           r->seq_id];
        if (*slot >= 0)
            FP_CHECK(fp__wi_bad("%s: duplicate %s seq %d on dp_rank 0 stage %d step %d (first at "
                                "line %d)",
                                where(t, i, wb, sizeof wb), fp_wi_optype_name(r->optype),
                                r->seq_id, r->stage, r->step, t->line[m->ops[*slot].line]));
        wi_op *o = &m->ops[m->nops];
        *o = (wi_op){.type = r->optype, .stage = r->stage, .seq = r->seq_id, .mc = r->mc,
                     .gmc = r->gmc, .line = (int)i, .ref_start = r->start_ts,
                     .ref_end = r->start_ts + r->duration, .gid = -1, .noop = true,
                     .match = -1};
        if (r->mc + 1 > m->vpp)
            m->vpp = r->mc + 1;
        *slot = m->nops++;
    }
    for (int s = 0; s < m->pp; s++) {
        bool any = false;
        for (int v = 0; v < m->nops && !any; v++)
            any = m->ops[v].stage == s;
        if (!any)
            FP_CHECK(fp__wi_bad("%s: stage %d has no ops in the reference step %d (dp_rank 0)",
                                t->source, s, ref_step));
    }
cleanup:
    return st;
}

/* Every (step, dp rank) instance holds exactly the reference ops: *row_of_out
 * (new, the caller frees) maps op v in instance i to its row,
 * row_of[v * ninst + i]. */
static fp_status index_instances(const fp_wi_trace *t, wi_model *m, int **row_of_out)
{
    fp_status st = FP_OK;
    char wb[300], b[96], b2[300];
    int *count = NULL, *row_of = NULL;
    int ref_step = m->steps[0];
    count = calloc((size_t)m->ninst, sizeof *count);
    FP_CHECK_ALLOC(count);
    for (size_t i = 0; i < t->n; i++)
        count[step_index(m, t->rows[i].step) * m->dp + t->rows[i].dp_rank]++;
    for (int i = 0; i < m->ninst; i++)
        if (count[i] != m->nops)
            FP_CHECK(fp__wi_bad("%s: step %d dp_rank %d has %d ops but the reference step %d "
                                "dp_rank 0 has %d (truncated or inconsistent trace)",
                                t->source, m->steps[i / m->dp], i % m->dp, count[i], ref_step,
                                m->nops));
    row_of = malloc((size_t)m->nops * (size_t)m->ninst * sizeof *row_of);
    FP_CHECK_ALLOC(row_of);
    for (size_t k = 0; k < (size_t)m->nops * (size_t)m->ninst; k++)
        row_of[k] = -1;
    for (size_t i = 0; i < t->n; i++) {
        const fp_wi_row *r = &t->rows[i];
        int v = lookup(m, r->stage, r->optype, r->seq_id);
        if (v < 0)
            FP_CHECK(fp__wi_bad("%s: %s seq %d on stage %d does not occur in the reference step "
                                "%d (dp_rank 0)",
                                where(t, i, wb, sizeof wb), fp_wi_optype_name(r->optype),
                                r->seq_id, r->stage, ref_step));
        int inst = step_index(m, r->step) * m->dp + r->dp_rank;
        int *slot = &row_of[(size_t)v * m->ninst + inst];
        if (*slot >= 0)
            FP_CHECK(fp__wi_bad("%s: duplicate %s (step %d dp_rank %d; first at %s)",
                                where(t, i, wb, sizeof wb), opname(&m->ops[v], b, sizeof b),
                                r->step, r->dp_rank, where(t, (size_t)*slot, b2, sizeof b2)));
        *slot = (int)i;
    }
    *row_of_out = row_of;
    row_of = NULL;
cleanup:
    free(count);
    free(row_of);
    return st;
}

/* The dependency model on the reference instance: P2P matching and pairing,
 * streams, DP and tail ops of each stage, sync groups, then the schedule.
 * Every op must find a place in it. */
static fp_status dependency_model(const fp_wi_trace *t, const fp_wi_meta *meta, wi_model *m)
{
    fp_status st = FP_OK;
    char wb[300], b[96];
    m->use_dp = m->dp * meta->dsp_size > 1;
    m->ovlp_dp = false;
    for (int v = 0; v < m->nops; v++) {
        m->use_dp |= m->ops[v].type == FP_WI_PARAMS_ALL_GATHER ||
                     m->ops[v].type == FP_WI_GRADS_REDUCE_SCATTER;
        m->ovlp_dp |= m->ops[v].type == FP_WI_SEPARATE_GRADS_ALL_REDUCE;
    }
    for (int s = 0; s < m->pp; s++)
        FP_CHECK(match_p2p_stage(m, s));
    FP_CHECK(pair_p2p(m));
    for (int s = 0; s < m->pp; s++)
        FP_CHECK(stage_streams(m, s));
    for (int s = 0; s < m->pp; s++)
        FP_CHECK(stage_dp_and_tail(m, s));
    FP_CHECK(sync_groups(m));
    for (int v = 0; v < m->nops; v++)
        if (!m->ops[v].in_model)
            FP_CHECK(fp__wi_bad("%s: %s has no place in the dependency model (first at %s)",
                                t->source, opname(&m->ops[v], b, sizeof b),
                                where(t, (size_t)m->ops[v].line, wb, sizeof wb)));
    FP_CHECK(schedule(m));
cleanup:
    return st;
}

fp_status fp__wi_build_model(const fp_wi_trace *t, const fp_wi_meta *meta, wi_model *m,
                             int **row_of_out)
{
    fp_status st = FP_OK;
    int *row_of = NULL;
    m->src = t->source;
    FP_CHECK(check_rows(t, meta, m));
    FP_CHECK(reference_ops(t, m));
    FP_CHECK(index_instances(t, m, &row_of));
    FP_CHECK(dependency_model(t, meta, m));
    *row_of_out = row_of;
    row_of = NULL;
cleanup:
    free(row_of);
    return st;
}

