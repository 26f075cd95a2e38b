/* fp_world_gather_run keeps rows: every rank makes known samples (keys and
 * entities repeated within and across ranks, a rank with none, a rank whose
 * 240,000 entities fill a batch of the gather alone), rank 0 gathers them and
 * checks that the run is rows whose samples are every rank's in rank order,
 * byte for byte, each key and entity once in its tables, numbered in the
 * order first met. Then that a store keeps the rows-run exactly as the same
 * samples appended as samples. A second gather: a metric with another unit
 * on one rank is a key of its own, and the store refuses both forms alike.
 * gather_rows.sh runs it on 5 ranks; rank 0's exit code is the verdict. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fleetprint/store.h"
#include "fleetprint/world.h"

#define BIG_RANK 1
#define BIG_ENTS 240000
#define EMPTY_RANK 3

static void add(fp_run *run, const char *suite, const char *test, const fp_metric *m,
                const fp_entity *e, uint64_t size, int iter, double value, double t)
{
    fp_sample s;
    fp_sample_make(&s, suite, test, m, e, size, iter, value, t);
    fp_run_add(run, &s);
}

/* Rank r's samples (of size ranks, two a node) into run. */
static void make_samples(int r, int size, fp_run *run)
{
    static const fp_metric triad = {"triad_bw", "GB/s", FP_BETTER_HIGHER},
                           busbw = {"busbw", "GB/s", FP_BETTER_HIGHER},
                           lat = {"latency", "us", FP_BETTER_LOWER},
                           link = {"bw_inter", "GB/s", FP_BETTER_HIGHER},
                           copy = {"copy_bw", "GB/s", FP_BETTER_HIGHER};
    char node[16], peer[16], name[32];
    int nodes = (size + 1) / 2;
    snprintf(node, sizeof node, "n%d", r / 2);
    snprintf(peer, sizeof peer, "n%d", (r / 2 + 1) % nodes);
    if (r == EMPTY_RANK)
        return;
    fp_entity gpu = fp_entity_gpu(node, r % 2), rank = fp_entity_rank(node, r),
              world = fp_entity_group("world"), lk = fp_entity_link(node, -1, peer, -1);
    for (int w = -1; w < 3; w++) { /* the windows, then the summary */
        int iter = w < 2 ? w + 1 : -1;
        add(run, "kernels", "membw", &triad, &gpu, 0, iter, 1000 * r + w + 0.25, r + 0.1 * w);
        add(run, "collectives", "allreduce", &busbw, &rank, 1 << 20, iter, r + w * 1e-3, w);
        add(run, "collectives", "allreduce", &busbw, &world, 4 << 20, iter, -r - w, w);
        add(run, "collectives", "links", &link, &lk, 4 << 20, iter, 40 + r, w + 0.5);
    }
    /* a key only even ranks have, named after the rank: keys met late */
    snprintf(name, sizeof name, "lat_r%d", r - r % 2);
    fp_metric mine = {name, "us", FP_BETTER_LOWER};
    add(run, "kernels", "launch", &mine, &gpu, 0, -1, 3.5 * r, 9);
    add(run, "kernels", "launch", &lat, &gpu, 0, -1, 2.5 * r, 9);
    for (int d = 0; r == BIG_RANK && d < BIG_ENTS; d++) {
        fp_entity e = fp_entity_gpu("big", d);
        add(run, "kernels", "copy", &copy, &e, 0, -1, d * 0.5, d);
    }
}

/* The second gather's: one sample each, rank 2's metric in another unit. */
static void make_units(int r, fp_run *run)
{
    fp_metric m = {"busbw", r == 2 ? "MB/s" : "GB/s", FP_BETTER_HIGHER};
    fp_entity e = fp_entity_group("world");
    add(run, "collectives", "alltoall", &m, &e, 0, -1, r, 0);
}

static bool same_sample(const fp_sample *a, const fp_sample *b)
{
    return memcmp(a->suite, b->suite, offsetof(fp_sample, better)) == 0 &&
           a->better == b->better && memcmp(&a->entity, &b->entity, sizeof a->entity) == 0 &&
           a->size == b->size && a->iter == b->iter &&
           memcmp(&a->value, &b->value, sizeof a->value) == 0 &&
           memcmp(&a->t_start, &b->t_start, sizeof a->t_start) == 0;
}

static int cmp_entity(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(fp_entity));
}

/* run (gathered) against want (every rank's samples, in rank order). */
static void check_gathered(const fp_run *run, const fp_run *want)
{
    const fp_run_rows *rows = run->rows;
    CHECK(rows && !run->samples && run->nsamples == want->nsamples);
    if (!rows || run->nsamples != want->nsamples)
        return;
    CHECK(rows->n == want->nsamples);
    size_t bad = 0;
    uint32_t next_key = 0, next_ent = 0;
    for (size_t i = 0; i < run->nsamples; i++) {
        fp_sample s;
        fp_run_sample(run, i, &s);
        if (!same_sample(&s, &want->samples[i]) && bad++ < 5)
            fprintf(stderr, "sample %zu differs from the one rank sent\n", i);
        /* ids in the order first met: a new one is the next */
        const fp_sample_row *x = &rows->row[i];
        if (x->key > next_key || x->entity > next_ent)
            bad++;
        next_key += x->key == next_key;
        next_ent += x->entity == next_ent;
    }
    CHECK(bad == 0);
    CHECK(next_key == rows->nkeys && next_ent == rows->nents);
    /* each key and entity once */
    for (size_t a = 0; a < rows->nkeys; a++)
        for (size_t b = a + 1; b < rows->nkeys; b++)
            CHECK(!(strcmp(rows->keys[a].suite, rows->keys[b].suite) == 0 &&
                    strcmp(rows->keys[a].test, rows->keys[b].test) == 0 &&
                    strcmp(rows->keys[a].metric, rows->keys[b].metric) == 0 &&
                    strcmp(rows->keys[a].unit, rows->keys[b].unit) == 0 &&
                    rows->keys[a].size == rows->keys[b].size));
    fp_entity *sorted = malloc((rows->nents + 1) * sizeof *sorted);
    CHECK(sorted != NULL);
    if (sorted) {
        memcpy(sorted, rows->ents, rows->nents * sizeof *sorted);
        qsort(sorted, rows->nents, sizeof *sorted, cmp_entity);
        for (size_t e = 1; e < rows->nents; e++)
            CHECK(cmp_entity(&sorted[e - 1], &sorted[e]) != 0);
    }
    free(sorted);
}

/* Append run to a new store at path; load it back as rows into *back. */
static fp_status store_and_load(const char *path, const fp_run *run, fp_run *back)
{
    fp_store *s = NULL;
    fp_status st = fp_store_append_file(path, run, 10);
    if (st == FP_OK)
        st = fp_store_open(&s, path, FP_STORE_READ, 0);
    if (st == FP_OK)
        st = fp_store_load_run_rows(s, run->id, NULL, true, back);
    fp_store_close(s);
    return st;
}

/* The rows-run and the same samples as a run of samples, stored: the same
 * tables and rows come back. */
static void check_stored(const fp_run *run, const fp_run *want, const char *dir)
{
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/rows.h5", dir);
    snprintf(b, sizeof b, "%s/samples.h5", dir);
    fp_run ra, rb;
    fp_run_init(&ra);
    fp_run_init(&rb);
    CHECK(store_and_load(a, run, &ra) == FP_OK);
    CHECK(store_and_load(b, want, &rb) == FP_OK);
    const fp_run_rows *x = ra.rows, *y = rb.rows;
    CHECK(x && y);
    if (x && y) {
        CHECK(x->n == want->nsamples && x->n == y->n && x->nkeys == y->nkeys &&
              x->nents == y->nents);
        CHECK(x->n == y->n && memcmp(x->row, y->row, x->n * sizeof *x->row) == 0);
        CHECK(x->nkeys == y->nkeys && memcmp(x->keys, y->keys, x->nkeys * sizeof *x->keys) == 0);
        CHECK(x->nents == y->nents && memcmp(x->ents, y->ents, x->nents * sizeof *x->ents) == 0);
    }
    CHECK(ra.nranks == want->nranks && ra.nnodes == want->nnodes);
    fp_run_free(&ra);
    fp_run_free(&rb);
}

/* Gather the samples of set which (0: make_samples, 1: make_units) of every
 * rank into run; on rank 0, want gets every rank's, in rank order. */
static fp_status gather(fp_world *w, int which, fp_run *run, fp_run *want)
{
    int rank = fp_world_rank(w), size = fp_world_size(w);
    fp_run mine;
    fp_run_init(&mine);
    if (which == 0)
        make_samples(rank, size, &mine);
    else
        make_units(rank, &mine);
    fp_rank_info info;
    memset(&info, 0, sizeof info);
    info.dev = rank % 2;
    fp_status st = fp_world_gather_run(w, &info, mine.samples, mine.nsamples, run);
    fp_run_free(&mine);
    for (int r = 0; rank == 0 && r < size; r++) {
        if (which == 0)
            make_samples(r, size, want);
        else
            make_units(r, want);
    }
    return st;
}

/* The gathered run's context with want's samples (borrowed: not to be freed). */
static fp_run as_samples(const fp_run *run, const fp_run *want)
{
    fp_run v = *run;
    v.rows = NULL;
    v.samples = want->samples;
    v.nsamples = v.cap = want->nsamples;
    return v;
}

int main(int argc, char **argv)
{
    fp_world *w = NULL;
    fp_status st = fp_world_open(&w, &argc, &argv);
    if (st != FP_OK) {
        fp_world_close(w, st);
        return fp_status_exit_code(st);
    }
    fp_world_configure(w, 30, false, true);
    int rank = fp_world_rank(w);
    char dir[] = "/tmp/fp_gather_rows.XXXXXX";
    fp_run run, want;
    fp_run_init(&run);
    fp_run_init(&want);
    st = gather(w, 0, &run, &want);
    CHECK(st == FP_OK);
    if (rank == 0 && st == FP_OK) {
        CHECK(fp_world_size(w) > EMPTY_RANK);
        check_gathered(&run, &want);
        CHECK(run.nranks == fp_world_size(w) && run.nnodes == fp_world_nnodes(w));
        CHECK(run.ranks[3].dev == 1 && run.ranks[3].node == fp_world_node_of(w, 3));
        CHECK(mkdtemp(dir) != NULL);
        fp_run v = as_samples(&run, &want);
        check_stored(&run, &v, dir);
    }
    fp_run_free(&run);
    fp_run_free(&want);
    fp_run_init(&run);
    fp_run_init(&want);
    if (st == FP_OK)
        st = gather(w, 1, &run, &want);
    CHECK(st == FP_OK);
    if (rank == 0 && st == FP_OK) {
        check_gathered(&run, &want);
        /* rank 2's MB/s is a key of its own; the store refuses either form */
        CHECK(run.rows && run.rows->nkeys == 2);
        char a[512], b[512];
        snprintf(a, sizeof a, "%s/units-rows.h5", dir);
        snprintf(b, sizeof b, "%s/units-samples.h5", dir);
        fp_run v = as_samples(&run, &want);
        CHECK(fp_store_append_file(a, &run, 10) == FP_EINPUT);
        CHECK(fp_store_append_file(b, &v, 10) == FP_EINPUT);
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
    }
    fp_run_free(&run);
    fp_run_free(&want);
    if (rank == 0)
        printf("gather_rows: %s\n", check_failures ? "FAIL" : "ok");
    st = fp_world_agree(w, st != FP_OK ? st : check_failures ? FP_EFAIL : FP_OK);
    fp_world_close(w, st);
    return fp_status_exit_code(st);
}
