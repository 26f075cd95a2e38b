/* The HDF5 fingerprint store: handle, writer lock, the manifest and its
 * partition files (atomic commits: new partition, fsync, new manifest,
 * rename), the catalog of runs, the baselines' transactions, the SKU index.
 * Layout: docs/store.md. Runs (append, remove, compact, list, load):
 * store_runs.c. HDF5 helpers: h5.c. Runtabs: runtab.c. Baselines: baseline.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fleetprint/mem.h"
#include "fleetprint/log.h"
#include "h5.h"
#include "intern.h"
#include "store_handle.h"
#include "store_internal.h"

/* ---- names, ids, contexts ----------------------------------------------------------- */

/* Names of the links in a group, in name order. */
typedef struct namelist {
    char **name;
    size_t n, cap;
} namelist;

static herr_t collect_name(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    namelist *l = data;
    char **grown = fp_grow(l->name, &l->cap, l->n + 1, sizeof *grown, 64);
    if (!grown)
        return -1;
    l->name = grown;
    l->name[l->n] = strdup(name);
    return l->name[l->n++] ? 0 : -1;
}

static void namelist_free(namelist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->name[i]);
    free(l->name);
    memset(l, 0, sizeof *l);
}

static fp_status list_group(hid_t loc, const char *group, namelist *out)
{
    fp_status st = FP_OK;
    hid_t g = H5I_INVALID_HID;
    memset(out, 0, sizeof *out);
    FP_CHECK_H5(g = H5Gopen2(loc, group, H5P_DEFAULT));
    hsize_t idx = 0;
    FP_CHECK_H5(H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_name, out));
cleanup:
    if (g >= 0)
        H5Gclose(g);
    return st;
}

bool fp__store_valid_run_id(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n >= sizeof(((fp_run *)0)->id) || strcmp(id, ".") == 0 ||
        strcmp(id, "..") == 0 || strcmp(id, "latest") == 0 || strcmp(id, "all") == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (id[i] <= ' ' || id[i] > '~' || id[i] == '/')
            return false;
    return true;
}

fp_status fp__store_read_context(hid_t g, fp_run *c)
{
    fp_status st = FP_OK;
#define STR(field) FP_CHECK(fp__h5_read_attr_str(g, #field, c->field, sizeof c->field));
    STR(id)
    FP_RUN_TEXT_FIELDS(STR)
#undef STR
    FP_CHECK(fp__h5_read_attr_double(g, "time", &c->time));
    FP_CHECK(fp__h5_read_attr_double(g, "duration", &c->duration));
cleanup:
    return st;
}

/* ==== the catalog: the runs the manifest lists ======================================= */



static hid_t cat_type(bool file)
{
    hid_t s48 = fp__h5_str_type(48), sf = fp__h5_str_type(PART_NAME_MAX),
          s32 = fp__h5_str_type(32), s16 = fp__h5_str_type(16);
    hid_t i32 = file ? H5T_STD_I32LE : H5T_NATIVE_INT32, u64 = file ? H5T_STD_U64LE : H5T_NATIVE_UINT64,
          f64 = file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE, u8 = file ? H5T_STD_U8LE : H5T_NATIVE_UINT8;
    hid_t t = H5Tcreate(H5T_COMPOUND, file ? 48 + PART_NAME_MAX + 32 + 16 + 16 + 8 + 8 + 1 + 1
                                           : sizeof(cat_row));
    size_t off = 0;
    bool ok = t >= 0 && s48 >= 0 && sf >= 0 && s32 >= 0 && s16 >= 0;
#define FIELD(name, type, memoff, size)                                                    \
    do {                                                                                   \
        ok = ok && H5Tinsert(t, name, file ? off : (memoff), type) >= 0;                   \
        off += (size);                                                                     \
    } while (0)
    FIELD("id", s48, HOFFSET(cat_row, id), 48);
    FIELD("file", sf, HOFFSET(cat_row, file), PART_NAME_MAX);
    FIELD("tag", s32, HOFFSET(cat_row, tag), 32);
    FIELD("status", s16, HOFFSET(cat_row, status), 16);
    FIELD("time", f64, HOFFSET(cat_row, time), 8);
    FIELD("duration", f64, HOFFSET(cat_row, duration), 8);
    FIELD("nranks", i32, HOFFSET(cat_row, nranks), 4);
    FIELD("nnodes", i32, HOFFSET(cat_row, nnodes), 4);
    FIELD("nsamples", u64, HOFFSET(cat_row, nsamples), 8);
    FIELD("injected", u8, HOFFSET(cat_row, injected), 1);
    FIELD("emulated", u8, HOFFSET(cat_row, emulated), 1);
#undef FIELD
    H5Tclose(s48);
    H5Tclose(sf);
    H5Tclose(s32);
    H5Tclose(s16);
    if (!ok && t >= 0) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    return t;
}

void fp__store_cat_row_of(cat_row *r, const fp_run *c, uint64_t nsamples, const char *file)
{
    memset(r, 0, sizeof *r);
    memcpy(r->id, c->id, sizeof r->id);
    snprintf(r->file, sizeof r->file, "%s", file);
    memcpy(r->tag, c->tag, sizeof r->tag);
    memcpy(r->status, c->status, sizeof r->status);
    r->id[sizeof r->id - 1] = r->tag[sizeof r->tag - 1] = r->status[sizeof r->status - 1] = 0;
    r->time = c->time;
    r->duration = c->duration;
    r->nranks = c->nranks;
    r->nnodes = c->nnodes;
    r->nsamples = nsamples;
    r->injected = c->injections[0] != 0;
    r->emulated = strstr(c->device_backend, "(emulated)") != NULL;
}

/* A partition's name: 'p' (runs) or 'b' (baselines), 10 digits, ".h5". */
static bool part_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n != 14 || (name[0] != 'p' && name[0] != 'b') || strcmp(name + 11, ".h5") != 0)
        return false;
    for (size_t i = 1; i < 11; i++)
        if (name[i] < '0' || name[i] > '9')
            return false;
    return true;
}

/* ==== open, validate, lock ========================================================== */


static char *dup_printf(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s", a, b);
    return s;
}

/* The path of a partition file (or FILE itself for ""). */
void fp__store_part_path(const fp_store *s, const char *file, char *buf, size_t len)
{
    if (file[0])
        snprintf(buf, len, "%s/%s", s->parts, file);
    else
        snprintf(buf, len, "%s", s->path);
}

/* Open a file of the store read-only and check it is ours: schema 1 (a whole
 * store, or a partition) or 2 (a manifest). *schema gets the version. */
static fp_status open_checked(const char *path, hid_t *out, long long *schema)
{
    fp_status st = FP_OK;
    hid_t f = H5I_INVALID_HID;
    struct stat sb;
    *out = H5I_INVALID_HID;
    if (stat(path, &sb) != 0)
        FP_FAIL(FP_EINPUT, "%s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        FP_FAIL(FP_EINPUT, "%s: not a regular file", path);
    if (H5Fis_hdf5(path) <= 0)
        FP_FAIL(FP_EINPUT, "%s: not an HDF5 file, so not a fleetprint store", path);
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        FP_FAIL(FP_EINPUT, "%s: HDF5 cannot open it (truncated or corrupt file)", path);
    if (H5Aexists(f, "fleetprint_schema") <= 0)
        FP_FAIL(FP_EINPUT, "%s: an HDF5 file but not a fleetprint store (no fleetprint_schema)",
                path);
    if (fp__h5_read_attr_i64(f, "fleetprint_schema", schema) != FP_OK)
        FP_FAIL(FP_EINPUT, "%s: unreadable fleetprint_schema attribute", path);
    if (*schema != 1 && *schema != FP_STORE_SCHEMA)
        FP_FAIL(FP_EINPUT, "%s: store schema version %lld, this fleetprint reads versions 1 "
                           "and %d", path, *schema, FP_STORE_SCHEMA);
    if (H5Lexists(f, "runs", H5P_DEFAULT) <= 0)
        FP_FAIL(FP_EINPUT, "%s: fleetprint store without /runs (corrupt)", path);
    *out = f;
    f = H5I_INVALID_HID;
cleanup:
    if (f >= 0)
        H5Fclose(f);
    return st;
}

/* Open the partition file of a run or of the baselines. */
fp_status fp__store_open_part(const fp_store *s, const char *file, const char *what, hid_t *out)
{
    char p[4096];
    long long schema = 0;
    fp__store_part_path(s, file, p, sizeof p);
    *out = H5I_INVALID_HID;
    if (file[0] && access(p, F_OK) != 0) {
        fp_error("%s: the partition of %s is missing: %s (a store rm or compact running "
                 "meanwhile removes files: run again; if none ran, the file is lost: 'fleetprint "
                 "store check' lists what else is)", s->path, what, p);
        return FP_EINPUT;
    }
    fp_status st = open_checked(p, out, &schema);
    if (st == FP_OK && schema != 1) {
        H5Fclose(*out);
        *out = H5I_INVALID_HID;
        fp_error("%s: %s: %s is not a partition (schema %lld)", s->path, what, p, schema);
        st = FP_EINPUT;
    }
    return st;
}

static fp_status index_catalog(fp_store *s)
{
    fp_status st = FP_OK;
    fp__strmap_free(&s->ids);
    for (size_t i = 0; i < s->ncat; i++) {
        uint32_t id;
        bool added;
        FP_CHECK(fp__strmap_intern(&s->ids, s->cat[i].id, strlen(s->cat[i].id), &id, &added));
        if (!added)
            FP_FAIL(FP_EINPUT, "%s: run %s is listed twice (corrupt)", s->path, s->cat[i].id);
    }
cleanup:
    return st;
}

fp_status fp__store_cat_push(fp_store *s, const cat_row *r)
{
    fp_status st = FP_OK;
    cat_row *g = fp_grow(s->cat, &s->catcap, s->ncat + 1, sizeof *g, 64);
    FP_CHECK_ALLOC(g);
    s->cat = g;
    s->cat[s->ncat++] = *r;
cleanup:
    return st;
}

static void cat_clear(fp_store *s)
{
    free(s->cat);
    s->cat = NULL;
    s->ncat = s->catcap = 0;
    fp__strmap_free(&s->ids);
    s->has_baselines = false;
    s->baselines[0] = 0;
    s->next_part = 0;
    s->schema = 0;
    if (s->bfile >= 0)
        H5Fclose(s->bfile);
    s->bfile = H5I_INVALID_HID;
}

/* The catalog of a schema-1 file: every run group's attributes. */
static fp_status load_single(fp_store *s, hid_t f)
{
    fp_status st = FP_OK;
    namelist names = {0};
    hid_t runs = H5I_INVALID_HID, g = H5I_INVALID_HID;
    fp_run *ctx = calloc(1, sizeof *ctx);
    FP_CHECK_ALLOC(ctx);
    FP_CHECK(list_group(f, "runs", &names));
    FP_CHECK_H5(runs = H5Gopen2(f, "runs", H5P_DEFAULT));
    for (size_t i = 0; i < names.n; i++) {
        long long nr, nn, ns;
        cat_row r;
        FP_CHECK_H5(g = H5Gopen2(runs, names.name[i], H5P_DEFAULT));
        memset(ctx, 0, sizeof *ctx);
        FP_CHECK(fp__store_read_context(g, ctx));
        snprintf(ctx->id, sizeof ctx->id, "%s", names.name[i]);
        FP_CHECK(fp__h5_read_attr_i64(g, "nranks", &nr));
        FP_CHECK(fp__h5_read_attr_i64(g, "nnodes", &nn));
        FP_CHECK(fp__h5_read_attr_i64(g, "nsamples", &ns));
        ctx->nranks = (int)nr;
        ctx->nnodes = (int)nn;
        fp__store_cat_row_of(&r, ctx, (uint64_t)ns, "");
        FP_CHECK(fp__store_cat_push(s, &r));
        H5Gclose(g);
        g = H5I_INVALID_HID;
    }
    s->has_baselines = H5Lexists(f, "baselines", H5P_DEFAULT) > 0;
cleanup:
    free(ctx);
    namelist_free(&names);
    if (g >= 0)
        H5Gclose(g);
    if (runs >= 0)
        H5Gclose(runs);
    return st;
}

/* The catalog of a manifest: /catalog and the root attributes. */
static fp_status load_manifest(fp_store *s, hid_t f)
{
    fp_status st = FP_OK;
    hid_t mt = H5I_INVALID_HID;
    cat_row *rows = NULL;
    size_t n = 0;
    FP_CHECK(fp__h5_read_attr_i64(f, "next_partition", &s->next_part));
    FP_CHECK(fp__h5_read_attr_str(f, "baselines", s->baselines, sizeof s->baselines));
    s->has_baselines = s->baselines[0] != 0;
    if (s->has_baselines && !part_name_ok(s->baselines))
        FP_FAIL(FP_EINPUT, "%s: baselines file '%s' is not a partition name (corrupt)", s->path,
                s->baselines);
    FP_CHECK_H5(mt = cat_type(false));
    FP_CHECK(fp__h5_read_table(f, "catalog", mt, sizeof *rows, (void **)&rows, &n));
    for (size_t i = 0; i < n; i++) {
        cat_row *r = &rows[i];
        r->id[sizeof r->id - 1] = r->file[sizeof r->file - 1] = 0;
        r->tag[sizeof r->tag - 1] = r->status[sizeof r->status - 1] = 0;
        if (!part_name_ok(r->file) || r->file[0] != 'p')
            FP_FAIL(FP_EINPUT, "%s: catalog row %zu names partition '%s' (corrupt)", s->path, i,
                    r->file);
        FP_CHECK(fp__store_cat_push(s, r));
    }
cleanup:
    free(rows);
    if (mt >= 0)
        H5Tclose(mt);
    return st;
}

/* (Re)load the committed state of the store: what the manifest (or the one
 * file) says. Called at open and to undo a change that failed. */
static fp_status load_committed(fp_store *s)
{
    fp_status st = FP_OK;
    hid_t f = H5I_INVALID_HID;
    long long schema = 0;
    cat_clear(s);
    if (access(s->path, F_OK) != 0) {
        if (s->mode == FP_STORE_APPEND)
            return FP_OK; /* created by the first commit */
        FP_FAIL(FP_EINPUT, "%s: no such store (%s)", s->path, strerror(errno));
    }
    FP_CHECK(open_checked(s->path, &f, &schema));
    s->schema = (int)schema;
    if (schema == 1)
        FP_CHECK(load_single(s, f));
    else
        FP_CHECK(load_manifest(s, f));
    FP_CHECK(index_catalog(s));
cleanup:
    if (f >= 0)
        H5Fclose(f);
    return st;
}

static void read_lock_holder(int fd, char *buf, size_t len)
{
    ssize_t n = pread(fd, buf, len - 1, 0);
    buf[n > 0 ? n : 0] = 0;
    buf[strcspn(buf, "\n")] = 0;
    if (!buf[0])
        snprintf(buf, len, "unknown");
}

static double now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static fp_status take_lock(fp_store *s, double timeout)
{
    fp_status st = FP_OK;
    int fd = open(s->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        FP_FAIL(FP_EINPUT, "cannot write in %s (%s): a store is changed by writing beside it",
                s->dir, strerror(errno));
    double deadline = now_mono() + (timeout > 0 ? timeout : 0);
    bool said = false;
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR)
            FP_FAIL(FP_EIO, "cannot lock %s: %s", s->lock_path, strerror(errno));
        char holder[64];
        read_lock_holder(fd, holder, sizeof holder);
        if (now_mono() >= deadline)
            FP_FAIL(FP_ETIMEOUT,
                    "%s is locked by another writer (last taken by pid %s) and was not free "
                    "within %gs (--lock-timeout)",
                    s->path, holder, timeout);
        if (!said) {
            fp_info("waiting for the writer lock on %s: another writer holds it (last taken "
                    "by pid %s); waiting up to %gs", s->path, holder, timeout);
            said = true;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (said)
        fp_info("got the writer lock on %s", s->path);
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        /* the pid is only for messages; a lock file we cannot write is still a lock */
    }
    s->lock_fd = fd;
    fd = -1;
cleanup:
    if (fd >= 0)
        close(fd);
    return st;
}

static void collect_garbage(fp_store *s);

/* Before the first commit FILE.d can hold only what a first writer killed
 * before its commit left: p0000000000.h5. Anything else means FILE (the
 * manifest listing them) was removed or moved away: the files are refused
 * rather than collected as garbage. */
static fp_status check_orphans(const fp_store *s)
{
    fp_status st = FP_OK;
    DIR *d = s->schema == 0 ? opendir(s->parts) : NULL;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (part_name_ok(e->d_name) && strcmp(e->d_name, "p0000000000.h5") != 0)
            FP_FAIL(FP_EINPUT, "%s holds partition files (%s) but %s, the manifest that lists "
                               "them, is missing: put it back, or remove %s",
                    s->parts, e->d_name, s->path, s->parts);
cleanup:
    if (d)
        closedir(d);
    return st;
}

fp_status fp_store_open(fp_store **out, const char *path, fp_store_mode mode,
                        double lock_timeout_s)
{
    fp_status st = FP_OK;
    fp_store *s = NULL;
    *out = NULL;
    /* fleetprint reports HDF5 failures itself, in one line */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (!path || !path[0])
        FP_FAIL(FP_EUSAGE, "no store file given (--store FILE)");
    s = calloc(1, sizeof *s);
    FP_CHECK_ALLOC(s);
    s->lock_fd = -1;
    s->bfile = H5I_INVALID_HID;
    s->mode = mode;
    s->path = strdup(path);
    s->lock_path = dup_printf(path, ".lock");
    s->tmp_path = dup_printf(path, ".tmp");
    s->parts = dup_printf(path, ".d");
    char *copy = strdup(path), *copy2 = strdup(path);
    s->dir = copy ? strdup(dirname(copy)) : NULL;
    s->parts_rel = copy2 ? dup_printf(basename(copy2), ".d") : NULL;
    free(copy);
    free(copy2);
    FP_CHECK_ALLOC(s->path);
    FP_CHECK_ALLOC(s->lock_path);
    FP_CHECK_ALLOC(s->tmp_path);
    FP_CHECK_ALLOC(s->parts);
    FP_CHECK_ALLOC(s->dir);
    FP_CHECK_ALLOC(s->parts_rel);
    if (mode == FP_STORE_APPEND) {
        if (access(s->dir, W_OK) != 0)
            FP_FAIL(FP_EINPUT, "cannot write in %s (%s): a store is changed by writing beside it",
                    s->dir, strerror(errno));
        FP_CHECK(take_lock(s, lock_timeout_s));
    }
    FP_CHECK(load_committed(s));
    if (mode == FP_STORE_APPEND)
        FP_CHECK(check_orphans(s));
    if (mode == FP_STORE_APPEND)
        collect_garbage(s);
    *out = s;
    s = NULL;
cleanup:
    fp_store_close(s);
    return st;
}

void fp_store_close(fp_store *s)
{
    if (!s)
        return;
    cat_clear(s);
    if (s->lock_fd >= 0)
        close(s->lock_fd); /* releases the flock */
    free(s->path);
    free(s->lock_path);
    free(s->tmp_path);
    free(s->dir);
    free(s->parts);
    free(s->parts_rel);
    free(s);
}

const char *fp_store_path(const fp_store *s)
{
    return s->path;
}

fp_status fp__store_baselines_file(fp_store *s, hid_t *file)
{
    fp_status st = FP_OK;
    if (s->bfile < 0 && s->has_baselines)
        st = fp__store_open_part(s, s->baselines, "the baselines file", &s->bfile);
    *file = s->bfile;
    return st;
}

/* ==== commits: partitions, then the manifest ========================================= */

static fp_status fsync_path(const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0)
        return FP_EIO;
    int rc = fsync(fd);
    close(fd);
    return rc == 0 ? FP_OK : FP_EIO;
}

void fp_store_process_init(void)
{
    H5dont_atexit();
}

static fp_status copy_bytes(const char *from, const char *to)
{
    fp_status st = FP_OK;
    int in = open(from, O_RDONLY | O_CLOEXEC), outfd = -1;
    char *buf = NULL;
    if (in < 0)
        FP_FAIL(FP_EIO, "cannot read %s: %s", from, strerror(errno));
    outfd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (outfd < 0)
        FP_FAIL(FP_EIO, "cannot create %s: %s", to, strerror(errno));
    for (;;) {
        ssize_t n = copy_file_range(in, NULL, outfd, NULL, 1 << 30, 0);
        if (n == 0)
            break;
        if (n > 0)
            continue;
        if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
            FP_FAIL(FP_EIO, "copying %s: %s", from, strerror(errno));
        /* no in-kernel copy here: fall back to read/write from where we are */
        buf = malloc(1 << 20);
        FP_CHECK_ALLOC(buf);
        for (;;) {
            ssize_t r = read(in, buf, 1 << 20);
            if (r < 0)
                FP_FAIL(FP_EIO, "reading %s: %s", from, strerror(errno));
            if (r == 0)
                break;
            for (ssize_t w = 0; w < r;) {
                ssize_t k = write(outfd, buf + w, (size_t)(r - w));
                if (k < 0)
                    FP_FAIL(FP_EIO, "writing %s: %s", to, strerror(errno));
                w += k;
            }
        }
        break;
    }
cleanup:
    free(buf);
    if (in >= 0)
        close(in);
    if (outfd >= 0 && close(outfd) != 0 && st == FP_OK)
        st = fp__fail(FP_EIO, NULL, __FILE__, __LINE__, "writing %s: %s", to, strerror(errno));
    if (st != FP_OK && outfd >= 0)
        unlink(to); /* nothing half-written is left beside the store */
    return st;
}

static fp_status write_root_attrs(hid_t f, int schema)
{
    fp_status st = FP_OK;
    FP_CHECK(fp__h5_attr_i64(f, "fleetprint_schema", schema));
    FP_CHECK(fp__h5_attr_str(f, "fleetprint_writer", "fleetprint " FP_VERSION));
cleanup:
    return st;
}

/* Name the next partition file ('p' runs, 'b' baselines) and make sure FILE.d
 * exists. A file of that name is a leftover of a writer killed before its
 * commit: nothing lists it, so it is removed. */
static fp_status next_part(fp_store *s, char kind, char *name, char *path, size_t len)
{
    fp_status st = FP_OK;
    snprintf(name, PART_NAME_MAX, "%c%010lld.h5", kind, s->next_part++);
    fp__store_part_path(s, name, path, len);
    if (mkdir(s->parts, 0777) != 0 && errno != EEXIST)
        FP_FAIL(FP_EIO, "cannot create %s: %s", s->parts, strerror(errno));
    if (unlink(path) != 0 && errno != ENOENT)
        FP_FAIL(FP_EIO, "cannot remove stale %s: %s", path, strerror(errno));
cleanup:
    return st;
}

/* Create a partition file with the root attributes and /runs. */
fp_status fp__store_part_create(fp_store *s, char kind, char *name, hid_t *out)
{
    fp_status st = FP_OK;
    char p[4096];
    hid_t f = H5I_INVALID_HID, g = H5I_INVALID_HID, fapl = H5I_INVALID_HID;
    *out = H5I_INVALID_HID;
    FP_CHECK(next_part(s, kind, name, p, sizeof p));
    /* baselines: large tables on page boundaries, to be mapped (h5.h) */
    FP_CHECK_H5(fapl = H5Pcreate(H5P_FILE_ACCESS));
    if (kind == 'b')
        FP_CHECK_H5(H5Pset_alignment(fapl, FP__H5_ALIGN_OVER, FP__H5_ALIGN));
    f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (f < 0)
        FP_FAIL(FP_EIO, "cannot create %s%s", p, fp__io_cause());
    FP_CHECK(write_root_attrs(f, 1));
    FP_CHECK_H5(g = H5Gcreate2(f, "runs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    *out = f;
    f = H5I_INVALID_HID;
cleanup:
    fp__h5_close(fapl);
    if (g >= 0)
        H5Gclose(g);
    if (f >= 0)
        H5Fclose(f);
    return st;
}

/* Close a partition file being written and make it durable. */
fp_status fp__store_part_finish(fp_store *s, hid_t f, const char *name)
{
    fp_status st = FP_OK;
    char p[4096];
    fp__store_part_path(s, name, p, sizeof p);
    if (H5Fclose(f) < 0)
        FP_FAIL(FP_EIO, "cannot finish writing %s%s", p, fp__io_cause());
    if (fsync_path(p, O_RDONLY) != FP_OK)
        FP_FAIL(FP_EIO, "cannot fsync %s: %s", p, strerror(errno));
cleanup:
    return st;
}

/* A schema-1 store becomes partition p0000000000.h5 of a manifest: a hard
 * link to the same bytes (a copy where links are not possible). Lands with
 * the first commit; until then FILE is untouched. */
fp_status fp__store_make_partitioned(fp_store *s)
{
    fp_status st = FP_OK;
    char name[PART_NAME_MAX], p[4096];
    if (s->schema != 1)
        return FP_OK;
    FP_CHECK(next_part(s, 'p', name, p, sizeof p));
    if (link(s->path, p) != 0) {
        FP_CHECK(copy_bytes(s->path, p));
        if (fsync_path(p, O_RDONLY) != FP_OK)
            FP_FAIL(FP_EIO, "cannot fsync %s: %s", p, strerror(errno));
    }
    for (size_t i = 0; i < s->ncat; i++)
        snprintf(s->cat[i].file, sizeof s->cat[i].file, "%s", name);
    if (s->has_baselines)
        snprintf(s->baselines, sizeof s->baselines, "%s", name);
    s->schema = FP_STORE_SCHEMA;
cleanup:
    return st;
}

/* Remove the files of FILE.d that the catalog does not name: partitions of
 * writers killed before their commit, and those a commit replaced. Only
 * names of the partition pattern are touched. Failures are only warned of:
 * the store is consistent either way. */
static void collect_garbage(fp_store *s)
{
    DIR *d = opendir(s->parts);
    fp__strmap used = {0};
    if (!d)
        return;
    bool ok = true;
    for (size_t i = 0; ok && i < s->ncat; i++)
        ok = fp__strmap_intern(&used, s->cat[i].file, strlen(s->cat[i].file), &(uint32_t){0},
                               NULL) == FP_OK;
    if (ok && s->has_baselines)
        ok = fp__strmap_intern(&used, s->baselines, strlen(s->baselines), &(uint32_t){0}, NULL) ==
             FP_OK;
    for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
        if (!part_name_ok(e->d_name) || fp__strmap_find(&used, e->d_name, strlen(e->d_name)) !=
                                            FP__NONE)
            continue;
        char p[4096];
        fp__store_part_path(s, e->d_name, p, sizeof p);
        if (unlink(p) != 0)
            fp_warn("cannot remove %s, which the store no longer uses: %s", p, strerror(errno));
    }
    closedir(d);
    fp__strmap_free(&used);
}

/* Write the manifest for the in-memory catalog to FILE.tmp, fsync it, rename
 * it over FILE and fsync the directory: the commit point of every change. */
static fp_status write_manifest(fp_store *s)
{
    fp_status st = FP_OK;
    hid_t f = H5I_INVALID_HID, runs = H5I_INVALID_HID, mt = H5I_INVALID_HID,
          ft = H5I_INVALID_HID;
    char target[4096];
    if (unlink(s->tmp_path) != 0 && errno != ENOENT)
        FP_FAIL(FP_EIO, "cannot remove stale %s: %s", s->tmp_path, strerror(errno));
    f = H5Fcreate(s->tmp_path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        FP_FAIL(FP_EIO, "cannot create %s (is the directory writable?)", s->tmp_path);
    FP_CHECK(write_root_attrs(f, FP_STORE_SCHEMA));
    FP_CHECK(fp__h5_attr_i64(f, "next_partition", s->next_part));
    FP_CHECK(fp__h5_attr_str(f, "baselines", s->has_baselines ? s->baselines : ""));
    FP_CHECK_H5(ft = cat_type(true));
    FP_CHECK_H5(mt = cat_type(false));
    FP_CHECK(fp__h5_write_table(f, "catalog", ft, mt, s->cat, s->ncat));
    /* external links: h5py (and h5dump) read /runs/<id> and /baselines here */
    FP_CHECK_H5(runs = H5Gcreate2(f, "runs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    for (size_t i = 0; i < s->ncat; i++) {
        char obj[64];
        snprintf(target, sizeof target, "%s/%s", s->parts_rel, s->cat[i].file);
        snprintf(obj, sizeof obj, "/runs/%s", s->cat[i].id);
        FP_CHECK_H5(H5Lcreate_external(target, obj, runs, s->cat[i].id, H5P_DEFAULT,
                                       H5P_DEFAULT));
    }
    if (s->has_baselines) {
        snprintf(target, sizeof target, "%s/%s", s->parts_rel, s->baselines);
        FP_CHECK_H5(H5Lcreate_external(target, "/baselines", f, "baselines", H5P_DEFAULT,
                                       H5P_DEFAULT));
    }
    H5Gclose(runs);
    runs = H5I_INVALID_HID;
    herr_t closed = H5Fclose(f);
    f = H5I_INVALID_HID;
    if (closed < 0)
        FP_FAIL(FP_EIO, "cannot finish writing %s%s", s->tmp_path, fp__io_cause());
    /* the manifest keeps the permissions of the one it replaces */
    struct stat sb;
    if (stat(s->path, &sb) == 0)
        chmod(s->tmp_path, sb.st_mode & 07777);
    if (fsync_path(s->tmp_path, O_RDONLY) != FP_OK)
        FP_FAIL(FP_EIO, "cannot fsync %s: %s", s->tmp_path, strerror(errno));
    if (fsync_path(s->parts, O_RDONLY | O_DIRECTORY) != FP_OK)
        FP_FAIL(FP_EIO, "cannot fsync directory %s: %s", s->parts, strerror(errno));
    if (rename(s->tmp_path, s->path) != 0)
        FP_FAIL(FP_EIO, "cannot rename %s to %s: %s", s->tmp_path, s->path, strerror(errno));
    if (fsync_path(s->dir, O_RDONLY | O_DIRECTORY) != FP_OK)
        FP_FAIL(FP_EIO, "cannot fsync directory %s: %s", s->dir, strerror(errno));
    s->schema = FP_STORE_SCHEMA;
cleanup:
    if (runs >= 0)
        H5Gclose(runs);
    if (f >= 0)
        H5Fclose(f);
    if (mt >= 0)
        H5Tclose(mt);
    if (ft >= 0)
        H5Tclose(ft);
    if (st != FP_OK)
        unlink(s->tmp_path);
    return st;
}

/* Commit the in-memory catalog, or, when st (the change so far) failed or
 * the commit fails, go back to the committed one. Either way the files no
 * one lists any more are removed. */
fp_status fp__store_finish_change(fp_store *s, fp_status st)
{
    if (s->bfile >= 0)
        H5Fclose(s->bfile);
    s->bfile = H5I_INVALID_HID;
    if (st == FP_OK)
        st = index_catalog(s);
    if (st == FP_OK)
        st = write_manifest(s);
    if (st != FP_OK && load_committed(s) != FP_OK)
        return st; /* FILE itself is as committed; this handle is unusable */
    collect_garbage(s);
    return st;
}

/* Go back to the committed state after a change failed, and remove what the
 * change had written. */
static void rollback(fp_store *s)
{
    if (load_committed(s) == FP_OK)
        collect_garbage(s);
}

fp_status fp__store_tx_begin(fp_store *s, hid_t *tmp)
{
    fp_status st = FP_OK;
    *tmp = H5I_INVALID_HID;
    if (s->mode != FP_STORE_APPEND)
        FP_FAIL(FP_EUSAGE, "%s was opened read-only", s->path);
    FP_CHECK(fp__store_make_partitioned(s));
    FP_CHECK(fp__store_part_create(s, 'b', s->pending, tmp));
cleanup:
    if (st != FP_OK)
        rollback(s);
    return st;
}

fp_status fp__store_tx_commit(fp_store *s, hid_t tmp)
{
    fp_status st = fp__store_part_finish(s, tmp, s->pending);
    if (st == FP_OK) {
        s->has_baselines = true;
        memcpy(s->baselines, s->pending, sizeof s->baselines);
    }
    return fp__store_finish_change(s, st);
}

void fp__store_tx_abort(fp_store *s, hid_t tmp)
{
    if (tmp >= 0)
        H5Fclose(tmp);
    rollback(s);
}

/* ==== SKU index ======================================================================= */

struct fp_sku_index {
    const fp_run *run;
    fp__strmap nodes;         /* node name -> index into node_sku */
    const char **node_sku;    /* per node: its model, "mixed" or "unknown" */
    const char *all_sku;      /* over every rank */
    fp__u64map gpu;           /* (node << 32 | dev) -> rank */
};

static const char *merge_sku(const char *have, const char *model)
{
    if (!model[0])
        return have;
    if (strcmp(have, "unknown") == 0)
        return model;
    return strcmp(have, model) == 0 ? have : "mixed";
}

fp_status fp_sku_index_build(const fp_run *run, fp_sku_index **out)
{
    fp_status st = FP_OK;
    fp_sku_index *ix = calloc(1, sizeof *ix);
    *out = NULL;
    FP_CHECK_ALLOC(ix);
    ix->run = run;
    ix->all_sku = "unknown";
    ix->node_sku = calloc(run->nnodes > 0 ? (size_t)run->nnodes : 1, sizeof *ix->node_sku);
    FP_CHECK_ALLOC(ix->node_sku);
    for (int i = 0; i < run->nnodes; i++) {
        uint32_t id;
        FP_CHECK(fp__strmap_intern(&ix->nodes, run->nodes[i], strlen(run->nodes[i]), &id, NULL));
        ix->node_sku[i] = "unknown";
    }
    for (int r = 0; r < run->nranks; r++) {
        const fp_rank_info *ri = &run->ranks[r];
        if (ri->node < 0 || ri->node >= run->nnodes)
            continue;
        uint32_t nid = fp__strmap_find(&ix->nodes, run->nodes[ri->node],
                                       strlen(run->nodes[ri->node]));
        ix->node_sku[nid] = merge_sku(ix->node_sku[nid], ri->model);
        ix->all_sku = merge_sku(ix->all_sku, ri->model);
        if (ri->dev >= 0)
            FP_CHECK(fp__u64map_put(&ix->gpu, ((uint64_t)nid << 32) | (uint32_t)ri->dev,
                                    (uint32_t)r));
    }
    *out = ix;
    ix = NULL;
cleanup:
    fp_sku_index_free(ix);
    return st;
}

static const char *node_sku(const fp_sku_index *ix, const char *node, int dev)
{
    uint32_t nid = fp__strmap_find(&ix->nodes, node, strlen(node));
    if (nid == FP__NONE)
        return "unknown";
    if (dev >= 0) {
        uint32_t r = fp__u64map_get(&ix->gpu, ((uint64_t)nid << 32) | (uint32_t)dev);
        if (r != FP__NONE && ix->run->ranks[r].model[0])
            return ix->run->ranks[r].model;
    }
    return ix->node_sku[nid];
}

const char *fp_sku_index_get(const fp_sku_index *ix, const fp_entity *e)
{
    switch (e->kind) {
    case FP_ENT_GPU:
    case FP_ENT_LINK:
        return node_sku(ix, e->node, e->dev);
    case FP_ENT_NODE:
        return node_sku(ix, e->node, -1);
    case FP_ENT_RANK:
        if (e->rank >= 0 && e->rank < ix->run->nranks && ix->run->ranks[e->rank].model[0])
            return ix->run->ranks[e->rank].model;
        return node_sku(ix, e->node, -1);
    default:
        return ix->all_sku;
    }
}

void fp_sku_index_free(fp_sku_index *ix)
{
    if (!ix)
        return;
    fp__strmap_free(&ix->nodes);
    fp__u64map_free(&ix->gpu);
    free(ix->node_sku);
    free(ix);
}
