/* isolate_sim: rounds and modelled time to isolate faulty nodes at 1,000,
 * 10,000 and 100,000 nodes with 1, 2 and 4 faults, for grid, bisect and
 * auto (isolation's plan, collectives/isolate_plan.c, against known faults)
 * and for the pairwise sweep's ring and all-pairs schedules.
 *
 *   mpirun -np 2 build/bench/isolate_sim [--seeds 5] [--size 64M] [--ranks-per-node 8]
 *   build/bench/isolate_sim --smoke      (1,000 nodes, no timing: a ctest)
 *
 * The time model is measured here, and says so: MPI_Allreduce of 8 KiB and
 * 4 MiB over the launched ranks (2: one per core) fits t(r, m) = a log2(r) +
 * b m 2(r - 1)/r for r ranks and m bytes, and MPI_Comm_create_group over
 * them gives the set-up c log2(r). A round costs its largest group's set-up
 * and CALLS calls of the check (warm-up, timed and checked); every group of
 * a round runs at once. A cluster's fabric has other a, b and c: the times
 * scale with them, the rounds do not.
 *
 * Strategies: grid, bisect and auto run the plan round by round, each
 * round's outcomes from the faults (wrong results at random nodes). ring
 * pairs each node with the next (2 rounds of pairs, 3 when odd) and names a
 * node whose both pairs fail, then pairs each named node with one that
 * passed (a third round: adjacent faults leave a healthy node between them
 * named); all-pairs runs the round-robin tournament (n - 1 rounds) and names
 * the nodes that fail with every partner. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/isolate.h"
#include "fleetprint/stats.h"
#include "fleetprint/timer.h"

enum { CALLS = 16, MAX_FAULTS = 4, REPS = 21 };

typedef struct model {
    double a, b, c;     /* s, s/B, s: latency, inverse bandwidth, set-up per log2(ranks) */
    double bytes;       /* the check's size */
    int ranks_per_node;
} model;

/* Seconds of a round whose largest group holds units nodes. */
static double round_cost(const model *m, int units)
{
    double r = (double)units * m->ranks_per_node, lg = log2(r > 1 ? r : 2);
    return m->c * lg + CALLS * (m->a * lg + m->b * m->bytes * 2 * (r - 1) / r);
}

/* ---- measuring the model ------------------------------------------------------------- */

static double time_allreduce(MPI_Comm comm, size_t bytes)
{
    size_t n = bytes / sizeof(float);
    float *send = calloc(n, sizeof *send), *recv = calloc(n, sizeof *recv);
    double t[REPS];
    for (int i = 0; i < REPS + 2; i++) {
        MPI_Barrier(comm);
        double t0 = fp_clock();
        MPI_Allreduce(send, recv, (int)n, MPI_FLOAT, MPI_SUM, comm);
        double dt = fp_clock() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (i >= 2)
            t[i - 2] = dt;
    }
    free(send);
    free(recv);
    return fp_median(t, REPS);
}

static double time_create_group(MPI_Comm comm)
{
    MPI_Group g;
    MPI_Comm_group(comm, &g);
    double t[REPS];
    for (int i = 0; i < REPS; i++) {
        MPI_Comm c;
        MPI_Barrier(comm);
        double t0 = fp_clock();
        MPI_Comm_create_group(comm, g, 100 + i, &c);
        double dt = fp_clock() - t0;
        MPI_Comm_free(&c);
        MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, comm);
        t[i] = dt;
    }
    MPI_Group_free(&g);
    return fp_median(t, REPS);
}

/* a and b from two sizes at the launched ranks r; c from group creation. */
static void measure(model *m, int ranks)
{
    const double m1 = 8 << 10, m2 = 4 << 20;
    double t1 = time_allreduce(MPI_COMM_WORLD, (size_t)m1);
    double t2 = time_allreduce(MPI_COMM_WORLD, (size_t)m2);
    double f = 2.0 * (ranks - 1) / ranks, lg = log2(ranks);
    m->b = (t2 - t1) / ((m2 - m1) * f);
    m->b = m->b > 0 ? m->b : 0;
    m->a = (t1 - m->b * m1 * f) / lg;
    m->a = m->a > 0 ? m->a : 0;
    m->c = time_create_group(MPI_COMM_WORLD) / lg;
}

/* ---- one case ------------------------------------------------------------------------ */

typedef struct result {
    double named, total, seconds; /* rounds to name, in all; modelled seconds in all */
    bool right;                   /* exactly the faults named */
} result;

static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static void faults_of(int n, int k, uint64_t seed, fp_iso_fault *f)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 0; i < k; i++) {
        int u;
        bool again;
        do {
            u = (int)(rnd(&s) % (uint64_t)n);
            again = false;
            for (int j = 0; j < i; j++)
                again = again || f[j].unit == u;
        } while (again);
        f[i] = (fp_iso_fault){u, -1, FP_ISO_WRONG, 1};
    }
}

static bool is_fault(const fp_iso_fault *f, int k, int u)
{
    for (int i = 0; i < k; i++)
        if (f[i].unit == u)
            return true;
    return false;
}

static int run_plan(fp_iso_strategy s, int n, const fp_iso_fault *f, int k, const model *m,
                    result *out)
{
    fp_iso_opts o = {.strategy = s, .nunits = n, .slow_limit = 0.4, .max_rounds = 200};
    fp_iso_plan *p = NULL;
    char err[160];
    if (fp_iso_plan_open(&o, &p, err, sizeof err) != FP_OK) {
        fprintf(stderr, "isolate_sim: %s\n", err);
        return 1;
    }
    out->seconds = 0;
    for (fp_iso_round *r; (r = fp_iso_plan_next(p));) {
        int largest = 0;
        for (int g = 0; g < r->ngroups; g++)
            largest = r->groups[g].n > largest ? r->groups[g].n : largest;
        out->seconds += round_cost(m, largest);
        fp_iso_simulate(r, f, (size_t)k, 10);
        if (fp_iso_plan_record(p, r) != FP_OK) {
            fp_iso_plan_free(p);
            return 1;
        }
    }
    const fp_iso_finding *fd;
    size_t nf = fp_iso_plan_findings(p, &fd);
    out->right = nf == (size_t)k;
    for (size_t i = 0; i < nf; i++)
        out->right = out->right && !fd[i].link && is_fault(f, k, fd[i].unit);
    out->named = fp_iso_plan_named_round(p);
    out->total = fp_iso_plan_rounds(p);
    fp_iso_plan_free(p);
    return 0;
}

/* ring: pairs (u, u+1 mod n); a node whose both pairs fail is named, each
 * named one paired with a node that passed in a last round. */
static void run_ring(int n, const fp_iso_fault *f, int k, const model *m, result *out)
{
    int rounds = n % 2 ? 3 : 2, named = 0, wrong = 0;
    for (int u = 0; u < n; u++) {
        int prev = (u + n - 1) % n, next = (u + 1) % n;
        bool me = is_fault(f, k, u);
        bool a = me || is_fault(f, k, prev), b = me || is_fault(f, k, next);
        if (a && b) {
            named++;
            wrong += !is_fault(f, k, u); /* a ghost: confirmation clears it */
        }
    }
    out->named = rounds;
    out->total = rounds + (named > 0);
    out->seconds = out->total * round_cost(m, 2);
    out->right = named - wrong == k;
}

/* all-pairs: every pair once in n - 1 rounds (n when odd); exact. */
static void run_all_pairs(int n, const model *m, result *out)
{
    out->named = out->total = n % 2 ? n : n - 1;
    out->seconds = out->total * round_cost(m, 2);
    out->right = true;
}

int main(int argc, char **argv)
{
    int seeds = 5, size = 1, rank = 0;
    bool smoke = false;
    model m = {.a = 1e-5, .b = 1e-10, .c = 1e-4, .bytes = 64.0 * (1 << 20), .ranks_per_node = 8};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0) {
            smoke = true;
        } else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
            seeds = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            char *end;
            double v = strtod(argv[++i], &end);
            m.bytes = v * (*end == 'G'   ? 1 << 30
                           : *end == 'M' ? 1 << 20
                           : *end == 'K' ? 1 << 10
                                         : 1);
        } else if (strcmp(argv[i], "--ranks-per-node") == 0 && i + 1 < argc) {
            m.ranks_per_node = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: mpirun -np 2 isolate_sim [--seeds N] [--size BYTES] "
                            "[--ranks-per-node R] | isolate_sim --smoke\n");
            return 2;
        }
    }
    if (seeds < 1 || m.ranks_per_node < 1 || !(m.bytes >= 4)) {
        fprintf(stderr, "isolate_sim: --seeds, --size and --ranks-per-node must be positive\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!smoke && size < 2) {
        if (rank == 0)
            fprintf(stderr, "isolate_sim: the time model is measured over MPI ranks: launch it "
                            "with mpirun -np 2 (or --smoke, untimed)\n");
        MPI_Finalize();
        return 2;
    }
    if (!smoke)
        measure(&m, size);
    if (rank != 0) {
        MPI_Finalize();
        return 0;
    }
    printf("isolate_sim: rounds and modelled time to isolate wrong results at random nodes, "
           "mean of %d seeds\n", smoke ? 1 : seeds);
    if (smoke)
        printf("time model: not measured (--smoke): a = %.3g s, b = %.3g s/B, c = %.3g s\n",
               m.a, m.b, m.c);
    else
        printf("time model, measured on this machine (MPI_Allreduce of 8 KiB and 4 MiB and "
               "MPI_Comm_create_group over %d ranks of host MPI):\n  a round = its largest "
               "group's set-up c*log2(r) + %d calls of t(r, m) = a*log2(r) + b*m*2(r-1)/r, "
               "r = nodes x %d ranks,\n  m = %.0f MiB: a = %.3g us, b = %.3g ns/B (%.3g GB/s), "
               "c = %.3g us\n", size, CALLS, m.ranks_per_node, m.bytes / (1 << 20), m.a * 1e6,
               m.b * 1e9, m.b > 0 ? 1e-9 / m.b : 0, m.c * 1e6);
    printf("%-7s %-6s %-9s %8s %8s %12s %6s\n", "nodes", "faults", "strategy", "named", "rounds",
           "model s", "right");
    static const int sizes[] = {1000, 10000, 100000}, counts[] = {1, 2, 4};
    static const fp_iso_strategy plans[] = {FP_ISO_GRID, FP_ISO_BISECT, FP_ISO_AUTO};
    int bad = 0;
    for (int si = 0; si < (smoke ? 1 : 3); si++) {
        for (int ci = 0; ci < 3; ci++) {
            int n = sizes[si], k = counts[ci];
            for (int strat = 0; strat < 5; strat++) {
                result sum = {0}, one = {0};
                int right = 0, runs = smoke ? 1 : seeds;
                for (int seed = 0; seed < runs; seed++) {
                    fp_iso_fault f[MAX_FAULTS];
                    faults_of(n, k, (uint64_t)seed + 1, f);
                    if (strat < 3)
                        bad += run_plan(plans[strat], n, f, k, &m, &one);
                    else if (strat == 3)
                        run_ring(n, f, k, &m, &one);
                    else
                        run_all_pairs(n, &m, &one);
                    sum.named += one.named;
                    sum.total += one.total;
                    sum.seconds += one.seconds;
                    right += one.right;
                }
                const char *name = strat < 3 ? fp_iso_strategy_name(plans[strat])
                                   : strat == 3 ? "ring" : "all-pairs";
                printf("%-7d %-6d %-9s %8.1f %8.1f %12.4g %3d/%d\n", n, k, name,
                       sum.named / runs, sum.total / runs, sum.seconds / runs, right, runs);
                fflush(stdout);
                if (smoke && strat < 3 && right != runs) {
                    fprintf(stderr, "smoke: %s did not name exactly the %d faults\n", name, k);
                    bad++;
                }
            }
        }
    }
    MPI_Finalize();
    return bad ? 1 : 0;
}
