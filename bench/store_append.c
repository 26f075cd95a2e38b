/* fp_bench_store_append [DIR [GB...]]: does an append cost the same at any
 * store size? For each size (default 0, 1 and 10 GB) it builds a synthetic
 * store of that size in DIR (default /tmp), appends one warm-up run (which
 * turns a schema-1 file into a manifest), then times 5 appends of a
 * 3,200-sample run the way a measuring command stores its run
 * (fp_store_append_file: open, lock, write, commit, close) and prints the
 * median. Every file it made is removed at the end.
 *
 * fp_bench_store_append --fleet NODES [DIR]: rank 0's append of one whole
 * preflight-sized run instead: the run `fleetprint simulate --nodes NODES
 * --runs 1` writes (NODES x 8 GPUs, seed 1, the default faults), held as
 * rank 0 holds a gathered run (rows: 32 bytes a sample), appended into an
 * empty store in DIR, timed (wall and CPU), with the process's resident set
 * before it (the run itself) and its peak during the append (what the
 * append adds), then read back by the manifest's sample count.
 *
 * The big stores are written the way an outside tool would write a schema-1
 * store, by the names docs/store.md documents: runs of 3.8 M samples (100 MiB
 * each, random values, uncompressed so they build at disk speed). Exit 1 when
 * a store does not hold what was appended; timings are printed, not judged. */
#include <dirent.h>
#include <errno.h>
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fleetprint/detect.h"
#include "fleetprint/store.h"

#define ROW_BYTES 28                    /* entity u32, metric u32, iter i32, value f64, t f64 */
#define RUN_ROWS (100u * 1048576 / ROW_BYTES) /* 100 MiB of samples a run */
#define SLAB_ROWS (1u << 20)
#define APPENDS 5

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* CPU seconds of this process, user and system (in-kernel copies included):
 * what an append costs when the machine is shared and wall time mostly
 * measures the wait for a core. */
static double cpu_now(void)
{
    return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int put_str_attr(hid_t obj, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    H5Tset_size(t, strlen(v) + 1);
    hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a >= 0 && H5Awrite(a, t, v) >= 0 ? 0 : -1;
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
    return rc;
}

static int put_num_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a >= 0 && H5Awrite(a, mtype, v) >= 0 ? 0 : -1;
    H5Aclose(a);
    H5Sclose(sp);
    return rc;
}

/* A 1-D dataset of n rows of type t written from data (n > 0). */
static int put_table(hid_t g, const char *name, hid_t t, const void *data, hsize_t n)
{
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(g, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = d >= 0 && H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0 ? 0 : -1;
    H5Dclose(d);
    H5Sclose(sp);
    return rc;
}

/* One run group of RUN_ROWS samples of one metric on one GPU: the schema-1
 * layout of docs/store.md, written with packed little-endian types. */
static int write_big_run(hid_t runs, int k, char *slab, uint64_t *seed)
{
    char id[32];
    snprintf(id, sizeof id, "big%04d", k);
    hid_t g = H5Gcreate2(runs, id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    double t = 1.6e9 + k * 3600.0, dur = 60;
    long long one = 1, ns = RUN_ROWS;
    int rc = g < 0;
    rc |= put_str_attr(g, "id", id) | put_str_attr(g, "tag", "nightly") |
          put_str_attr(g, "status", "complete");
    rc |= put_num_attr(g, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &t);
    rc |= put_num_attr(g, "duration", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &dur);
    rc |= put_num_attr(g, "nranks", H5T_STD_I64LE, H5T_NATIVE_LLONG, &one);
    rc |= put_num_attr(g, "nnodes", H5T_STD_I64LE, H5T_NATIVE_LLONG, &one);
    rc |= put_num_attr(g, "nsamples", H5T_STD_I64LE, H5T_NATIVE_LLONG, &ns);

    hid_t s64 = H5Tcopy(H5T_C_S1), s16 = H5Tcopy(H5T_C_S1), s24 = H5Tcopy(H5T_C_S1),
          s32 = H5Tcopy(H5T_C_S1), s48 = H5Tcopy(H5T_C_S1);
    H5Tset_size(s64, 64);
    H5Tset_size(s16, 16);
    H5Tset_size(s24, 24);
    H5Tset_size(s32, 32);
    H5Tset_size(s48, 48);
    char node[64] = "n0000";
    rc |= put_table(g, "nodes", s64, node, 1);
    hid_t rt = H5Tcreate(H5T_COMPOUND, 12 + 16 + 64 + 48 + 24);
    H5Tinsert(rt, "node", 0, H5T_STD_I32LE);
    H5Tinsert(rt, "local_rank", 4, H5T_STD_I32LE);
    H5Tinsert(rt, "dev", 8, H5T_STD_I32LE);
    H5Tinsert(rt, "clock_offset", 12, H5T_IEEE_F64LE);
    H5Tinsert(rt, "clock_error", 20, H5T_IEEE_F64LE);
    H5Tinsert(rt, "model", 28, s64);
    H5Tinsert(rt, "uuid", 92, s48);
    H5Tinsert(rt, "pci_bus", 140, s24);
    char rank[164] = {0};
    memcpy(rank + 28, "SIM-A100", 8);
    rc |= put_table(g, "ranks", rt, rank, 1);
    char ent[64] = "gpu:n0000/0";
    rc |= put_table(g, "entities", s64, ent, 1);
    hid_t mt = H5Tcreate(H5T_COMPOUND, 16 + 24 + 32 + 16 + 1 + 8);
    H5Tinsert(mt, "suite", 0, s16);
    H5Tinsert(mt, "test", 16, s24);
    H5Tinsert(mt, "metric", 40, s32);
    H5Tinsert(mt, "unit", 72, s16);
    H5Tinsert(mt, "better", 88, H5T_STD_U8LE);
    H5Tinsert(mt, "size", 89, H5T_STD_U64LE);
    char met[97] = {0};
    memcpy(met, "kernels", 7);
    memcpy(met + 16, "membw", 5);
    memcpy(met + 40, "triad_bw", 8);
    memcpy(met + 72, "GB/s", 4);
    rc |= put_table(g, "metrics", mt, met, 1);

    hid_t row = H5Tcreate(H5T_COMPOUND, ROW_BYTES);
    H5Tinsert(row, "entity", 0, H5T_STD_U32LE);
    H5Tinsert(row, "metric", 4, H5T_STD_U32LE);
    H5Tinsert(row, "iter", 8, H5T_STD_I32LE);
    H5Tinsert(row, "value", 12, H5T_IEEE_F64LE);
    H5Tinsert(row, "t", 20, H5T_IEEE_F64LE);
    hsize_t n = RUN_ROWS;
    hid_t fsp = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(g, "samples", row, fsp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    rc |= d < 0;
    for (hsize_t at = 0; !rc && at < n; at += SLAB_ROWS) {
        hsize_t cnt = n - at < SLAB_ROWS ? n - at : SLAB_ROWS;
        for (hsize_t i = 0; i < cnt; i++) {
            char *r = slab + i * ROW_BYTES;
            uint32_t zero = 0;
            int32_t iter = (int32_t)(at + i);
            double v = 700 + (double)(xorshift(seed) >> 11) * 0x1p-53 * 200, tt = (double)(at + i);
            memcpy(r, &zero, 4);
            memcpy(r + 4, &zero, 4);
            memcpy(r + 8, &iter, 4);
            memcpy(r + 12, &v, 8);
            memcpy(r + 20, &tt, 8);
        }
        hid_t msp = H5Screate_simple(1, &cnt, NULL);
        H5Sselect_hyperslab(fsp, H5S_SELECT_SET, &at, NULL, &cnt, NULL);
        rc |= H5Dwrite(d, row, msp, fsp, H5P_DEFAULT, slab) < 0;
        H5Sclose(msp);
    }
    H5Dclose(d);
    H5Sclose(fsp);
    H5Tclose(row);
    H5Tclose(mt);
    H5Tclose(rt);
    H5Tclose(s64);
    H5Tclose(s16);
    H5Tclose(s24);
    H5Tclose(s32);
    H5Tclose(s48);
    H5Gclose(g);
    return rc ? -1 : 0;
}

/* A schema-1 store of gb GB at path: 10 runs of 100 MiB a GB. */
static int build_store(const char *path, int gb)
{
    char *slab = malloc((size_t)SLAB_ROWS * ROW_BYTES);
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    long long schema = 1;
    int rc = !slab || f < 0;
    rc |= put_num_attr(f, "fleetprint_schema", H5T_STD_I64LE, H5T_NATIVE_LLONG, &schema);
    rc |= put_str_attr(f, "fleetprint_writer", "fp_bench_store_append");
    hid_t runs = H5Gcreate2(f, "runs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    for (int k = 0; !rc && k < gb * 10; k++)
        rc |= write_big_run(runs, k, slab, &seed);
    H5Gclose(runs);
    rc |= H5Fclose(f) < 0;
    free(slab);
    sync(); /* the build's dirty pages are not the appends' to write back */
    return rc ? -1 : 0;
}

/* The run every append stores: 40 nodes x 8 GPUs x 10 metrics = 3,200 samples. */
static void make_run(fp_run *run, int k)
{
    fp_run_init(run);
    snprintf(run->id, sizeof run->id, "append%02d", k);
    snprintf(run->tag, sizeof run->tag, "preflight");
    run->time = 1.9e9 + k;
    fp_run_set_shape(run, 40, 320);
    for (int n = 0; n < 40; n++) {
        snprintf(run->nodes[n], FP_NAME_MAX, "n%04d", n);
        for (int g = 0; g < 8; g++) {
            fp_rank_info *r = &run->ranks[n * 8 + g];
            r->node = n;
            r->local_rank = r->dev = g;
            snprintf(r->model, sizeof r->model, "SIM-A100");
        }
    }
    for (int m = 0; m < 10; m++) {
        char name[32];
        snprintf(name, sizeof name, "m%d", m);
        fp_metric met = {name, "GB/s", FP_BETTER_HIGHER};
        for (int n = 0; n < 40; n++)
            for (int g = 0; g < 8; g++) {
                fp_entity e = fp_entity_gpu(run->nodes[n], g);
                fp_sample s;
                fp_sample_make(&s, "kernels", "membw", &met, &e, 0, -1, 800 + n + g * 0.1 + m,
                               0.5);
                fp_run_add(run, &s);
            }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Remove a store: FILE, FILE.lock and every file of FILE.d. */
static void remove_store(const char *path)
{
    char p[4300];
    snprintf(p, sizeof p, "%.4096s.d", path);
    DIR *d = opendir(p);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        char f[4600];
        snprintf(f, sizeof f, "%s/%s", p, e->d_name);
        if (e->d_name[0] != '.' && unlink(f) != 0)
            fprintf(stderr, "could not remove %s: %s\n", f, strerror(errno));
    }
    if (d)
        closedir(d);
    rmdir(p);
    snprintf(p, sizeof p, "%.4096s.lock", path);
    unlink(p);
    unlink(path);
}

/* A field of /proc/self/status in GiB ("VmRSS", "VmHWM"), -1 if unknown. */
static double status_gib(const char *field)
{
    char line[256];
    double kib = -1;
    size_t n = strlen(field);
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':')
            kib = atof(line + n + 1);
    if (f)
        fclose(f);
    return kib < 0 ? -1 : kib / (1 << 20);
}

/* --fleet NODES: one simulated run of NODES x 8, as rows, appended as rank 0
 * appends it. */
static int fleet_append(int nodes, const char *base)
{
    char dir[4096], path[4200], err[256];
    fp_sim *sim = NULL;
    fp_run run;
    memset(&run, 0, sizeof run);
    fp_sim_opts o = {.nodes = nodes, .gpus_per_node = 8, .runs = 1, .windows = 6,
                     .link_partners = 4, .seed = 1, .shift = 1};
    snprintf(dir, sizeof dir, "%s/fp_store_append.XXXXXX", base);
    if (nodes < 1 || !mkdtemp(dir)) {
        fprintf(stderr, "--fleet %d: need NODES >= 1 and a directory in %s\n", nodes, base);
        return 2;
    }
    snprintf(path, sizeof path, "%s/fleet.h5", dir);
    int bad = fp_sim_open(&o, &sim, err, sizeof err) != FP_OK ||
              fp_sim_run_rows(sim, 0, &run) != FP_OK;
    if (!bad) {
        /* the peak from here on is the run's and the append's (Linux: writing 5
         * to clear_refs resets VmHWM to the current resident set) */
        FILE *cr = fopen("/proc/self/clear_refs", "w");
        if (cr) {
            fputs("5", cr);
            fclose(cr);
        }
        double before = status_gib("VmRSS"), a = now(), c = cpu_now();
        bad = fp_store_append_file(path, &run, 10) != FP_OK;
        double wall = now() - a, cpu = cpu_now() - c, peak = status_gib("VmHWM");
        fp_store *s = NULL;
        fp_run_summary *rows = NULL;
        size_t n = 0;
        bad |= fp_store_open(&s, path, FP_STORE_READ, 0) != FP_OK ||
               fp_store_list(s, &rows, &n) != FP_OK || n != 1 || rows[0].nsamples != run.nsamples;
        free(rows);
        fp_store_close(s);
        printf("append of one run of %d nodes x 8 (%zu samples, as rows): wall %.2f s, CPU "
               "%.2f s (%.0f samples/s); resident %.2f GiB before (the run), peak %.2f GiB "
               "during the append (+%.2f GiB)\n",
               nodes, run.nsamples, wall, cpu, (double)run.nsamples / wall, before, peak,
               peak - before);
    }
    fp_run_free(&run);
    fp_sim_free(sim);
    remove_store(path);
    rmdir(dir);
    if (bad)
        fprintf(stderr, "FAIL: the simulated run, its append or the read-back failed\n");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--fleet") == 0)
        return fleet_append(atoi(argv[2]), argc > 3 ? argv[3] : "/tmp");
    const char *base = argc > 1 ? argv[1] : "/tmp";
    int sizes[8] = {0, 1, 10}, nsizes = argc > 2 ? 0 : 3;
    for (int i = 2; i < argc && nsizes < 8; i++)
        sizes[nsizes++] = atoi(argv[i]);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/fp_store_append.XXXXXX", base);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot make a directory in %s: %s\n", base, strerror(errno));
        return 2;
    }
    static char path[8][4200];
    double t[8][APPENDS], cpu[8][APPENDS], built[8] = {0}, gib[8] = {0};
    int bad = 0, made = 0;
    fp_run runs[APPENDS + 1];
    for (int k = 0; k <= APPENDS; k++)
        make_run(&runs[k], k);
    /* all the stores first, each turned into a manifest by a warm-up append */
    for (; made < nsizes && !bad; made++) {
        snprintf(path[made], sizeof path[made], "%s/fleet%d.h5", dir, sizes[made]);
        double t0 = now();
        if (sizes[made] > 0 && build_store(path[made], sizes[made]) != 0) {
            fprintf(stderr, "cannot build a %d GB store in %s\n", sizes[made], dir);
            bad = 1;
            break;
        }
        struct stat sb;
        gib[made] = stat(path[made], &sb) == 0 ? (double)sb.st_size / (1 << 30) : 0;
        built[made] = now() - t0;
        bad |= fp_store_append_file(path[made], &runs[0], 10) != FP_OK;
    }
    /* then the timed appends, taking the sizes in turn so that the other
     * load of the machine falls on all of them alike */
    for (int k = 0; k < APPENDS && !bad; k++)
        for (int i = 0; i < nsizes && !bad; i++) {
            double a = now(), c = cpu_now();
            bad |= fp_store_append_file(path[i], &runs[k + 1], 10) != FP_OK;
            t[i][k] = now() - a;
            cpu[i][k] = cpu_now() - c;
        }
    double med[8], cmed[8];
    for (int i = 0; i < nsizes && !bad; i++) {
        fp_store *s = NULL;
        fp_run_summary *rows = NULL;
        size_t n = 0;
        fp_run back;
        size_t want = (size_t)sizes[i] * 10 + APPENDS + 1;
        bad |= fp_store_open(&s, path[i], FP_STORE_READ, 0) != FP_OK ||
               fp_store_list(s, &rows, &n) != FP_OK || n != want ||
               fp_store_load_run(s, "latest", NULL, &back) != FP_OK || back.nsamples != 3200;
        fp_run_free(&back);
        free(rows);
        fp_store_close(s);
        qsort(t[i], APPENDS, sizeof t[i][0], cmp_double);
        qsort(cpu[i], APPENDS, sizeof cpu[i][0], cmp_double);
        med[i] = t[i][APPENDS / 2];
        cmed[i] = cpu[i][APPENDS / 2];
        printf("store of %5.2f GiB (%zu runs, built in %.1f s): append of 3,200 samples: wall "
               "median %.2f ms (min %.2f, max %.2f), CPU median %.2f ms (min %.2f, max %.2f), "
               "of %d\n",
               gib[i], n, built[i], med[i] * 1e3, t[i][0] * 1e3, t[i][APPENDS - 1] * 1e3,
               cmed[i] * 1e3, cpu[i][0] * 1e3, cpu[i][APPENDS - 1] * 1e3, APPENDS);
    }
    for (int w = 0; w < 2 && !bad && nsizes > 1; w++) {
        const double *m = w ? cmed : med;
        double lo = m[0], hi = m[0];
        for (int i = 1; i < nsizes; i++) {
            lo = m[i] < lo ? m[i] : lo;
            hi = m[i] > hi ? m[i] : hi;
        }
        printf("%s medians differ by %.1f%% (largest over smallest)\n", w ? "CPU" : "wall",
               (hi / lo - 1) * 100);
    }
    for (int i = 0; i < made; i++)
        remove_store(path[i]);
    for (int k = 0; k <= APPENDS; k++)
        fp_run_free(&runs[k]);
    rmdir(dir);
    if (bad)
        fprintf(stderr, "FAIL: an append or the read-back failed\n");
    return bad;
}
