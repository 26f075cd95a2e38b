/* Row sinks: a table streamed into an HDF5 dataset a chunk at a time.
 *
 * A full chunk goes through the dataset's filters (shuffle, then deflate at
 * level 1, byte for byte what HDF5's own filters make of it) on a worker
 * thread, while the caller fills the next chunk: a store ingest parses on one
 * core and compresses on the other. The filtered chunk is then written with
 * H5Dwrite_chunk from the caller's thread, so HDF5 is only ever called from
 * one thread (the library is not built thread-safe). Memory: four chunk
 * buffers, whatever the table's length; the chunk being filled grows to its
 * size, and a parked sink (fp__rowsink_park) keeps only its rows not yet
 * written. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fleetprint/log.h"
#include "h5.h"
#include "rowsink.h"

struct fp__rowsink {
    hid_t loc, filetype, ds;
    char name[64];
    size_t rowbytes, chunk_rows, chunk_bytes;
    unsigned char *fill; /* the chunk being filled */
    size_t nfill, fill_cap; /* its rows, and the rows it has room for */
    uint64_t handed;     /* chunks handed to the filter so far */
    uint64_t total;      /* rows in all, once closed (the last chunk is padded) */
    bool closed;
    fp_status st;        /* the first failure: every later call fails */

    /* the chunk being filtered (on the worker when there is one) */
    unsigned char *job_in, *scratch, *job_out;
    uLong job_cap;
    uLongf job_len;
    uint64_t job_chunk;  /* its index */
    int job_zrc;         /* zlib's answer */
    bool job_pending;    /* handed to the filter, not yet written */

    /* the worker: job_ready (set by the caller) and job_done (by the worker)
     * under mu */
    bool threaded, job_ready, job_done, quit;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* ---- filtering ------------------------------------------------------------------- */

/* HDF5's shuffle filter: byte j of every row, for j = 0 .. rowbytes-1, in
 * turn (H5Z__filter_shuffle; a chunk is always a whole number of rows). */
static void shuffle(const unsigned char *src, unsigned char *dst, size_t rowbytes, size_t rows)
{
    for (size_t j = 0; j < rowbytes; j++) {
        const unsigned char *s = src + j;
        unsigned char *d = dst + j * rows;
        for (size_t i = 0; i < rows; i++, s += rowbytes)
            d[i] = *s;
    }
}

static void filter_job(fp__rowsink *k)
{
    shuffle(k->job_in, k->scratch, k->rowbytes, k->chunk_rows);
    k->job_len = k->job_cap;
    k->job_zrc = compress2(k->job_out, &k->job_len, k->scratch, k->chunk_bytes, FP__H5_DEFLATE);
}

static void *worker_main(void *arg)
{
    fp__rowsink *k = arg;
    pthread_mutex_lock(&k->mu);
    for (;;) {
        while (!k->job_ready && !k->quit)
            pthread_cond_wait(&k->cv, &k->mu);
        if (!k->job_ready)
            break;
        k->job_ready = false;
        pthread_mutex_unlock(&k->mu);
        filter_job(k);
        pthread_mutex_lock(&k->mu);
        k->job_done = true;
        pthread_cond_broadcast(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

/* Give the worker the job handed off (quit false) or tell it to end. */
static void tell_worker(fp__rowsink *k, bool quit)
{
    pthread_mutex_lock(&k->mu);
    if (quit) {
        k->quit = true;
    } else {
        k->job_done = false;
        k->job_ready = true;
    }
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

/* ---- writing ------------------------------------------------------------------------ */

/* Wait for the chunk being filtered and write it, the dataset first grown
 * to end with it (with the table's last row once the sink is closed). */
static fp_status write_job(fp__rowsink *k)
{
    fp_status st = FP_OK;
    uint64_t rows = k->closed ? k->total : k->handed * k->chunk_rows;
    if (k->threaded) {
        pthread_mutex_lock(&k->mu);
        while (!k->job_done)
            pthread_cond_wait(&k->cv, &k->mu);
        pthread_mutex_unlock(&k->mu);
    }
    k->job_pending = false;
    if (k->job_zrc != Z_OK)
        FP_FAIL(FP_EINTERNAL, "compressing chunk %llu of table '%s': zlib error %d",
                (unsigned long long)k->job_chunk, k->name, k->job_zrc);
    hsize_t dims[1] = {rows}, offset[1] = {k->job_chunk * k->chunk_rows};
    FP_CHECK_H5(H5Dset_extent(k->ds, dims));
    FP_CHECK_H5(H5Dwrite_chunk(k->ds, H5P_DEFAULT, 0, offset, k->job_len, k->job_out));
cleanup:
    return st;
}

/* Room for rows rows in the chunk being filled (at most a chunk). */
static fp_status grow_fill(fp__rowsink *k, size_t rows)
{
    fp_status st = FP_OK;
    if (rows <= k->fill_cap)
        return FP_OK;
    size_t cap = k->fill_cap ? k->fill_cap : 1024;
    while (cap < rows)
        cap *= 2;
    cap = cap < k->chunk_rows ? cap : k->chunk_rows;
    unsigned char *grown = realloc(k->fill, cap * k->rowbytes);
    FP_CHECK_ALLOC(grown);
    k->fill = grown;
    k->fill_cap = cap;
cleanup:
    return st;
}

/* The filter's buffers and its worker: made for the first full chunk, and
 * again after a park. */
static fp_status start_filter(fp__rowsink *k)
{
    fp_status st = FP_OK;
    if (k->ds < 0)
        FP_CHECK(fp__h5_create_table(k->loc, k->name, k->filetype, 0, k->chunk_rows, &k->ds));
    if (!k->job_in) {
        k->job_cap = compressBound(k->chunk_bytes);
        k->job_in = malloc(k->chunk_bytes);
        k->scratch = malloc(k->chunk_bytes);
        k->job_out = malloc(k->job_cap);
        FP_CHECK_ALLOC(k->job_in);
        FP_CHECK_ALLOC(k->scratch);
        FP_CHECK_ALLOC(k->job_out);
    }
    if (!k->threaded) {
        /* without a thread the chunk is filtered in line: slower, as correct */
        k->quit = k->job_ready = false;
        k->threaded = pthread_create(&k->thread, NULL, worker_main, k) == 0;
    }
cleanup:
    return st;
}

/* Write the chunk the filter has, if any, end the worker and free the
 * filter's buffers. */
static fp_status stop_filter(fp__rowsink *k)
{
    fp_status st = k->job_pending ? write_job(k) : FP_OK;
    if (k->threaded) {
        tell_worker(k, true);
        pthread_join(k->thread, NULL);
        k->threaded = false;
    }
    free(k->job_in);
    free(k->scratch);
    free(k->job_out);
    k->job_in = k->scratch = k->job_out = NULL;
    return st;
}

/* Hand the chunk in fill (nfill rows; a short last one is padded with zero
 * rows, HDF5's fill value) to the filter, after writing the one before. */
static fp_status hand_off(fp__rowsink *k)
{
    fp_status st = FP_OK;
    FP_CHECK(start_filter(k));
    FP_CHECK(grow_fill(k, k->chunk_rows));
    if (k->job_pending)
        FP_CHECK(write_job(k));
    memset(k->fill + k->nfill * k->rowbytes, 0, (k->chunk_rows - k->nfill) * k->rowbytes);
    unsigned char *t = k->job_in;
    k->job_in = k->fill;
    k->fill = t;
    k->fill_cap = k->chunk_rows;
    k->job_chunk = k->handed++;
    k->job_pending = true;
    k->nfill = 0;
    if (k->threaded)
        tell_worker(k, false);
    else
        filter_job(k);
cleanup:
    return st;
}

/* ---- the API ------------------------------------------------------------------------ */

fp_status fp__rowsink_open(hid_t loc, const char *name, hid_t filetype, fp__rowsink **out)
{
    fp_status st = FP_OK;
    fp__rowsink *k = calloc(1, sizeof *k);
    *out = NULL;
    FP_CHECK_ALLOC(k);
    k->loc = loc;
    k->filetype = filetype;
    k->ds = H5I_INVALID_HID;
    snprintf(k->name, sizeof k->name, "%s", name);
    k->rowbytes = H5Tget_size(filetype);
    if (k->rowbytes == 0)
        FP_FAIL(FP_EH5, "table '%s': its row type has no size", name);
    /* the chunks fp__h5_write_table makes of a long table */
    k->chunk_rows = fp__h5_chunk_rows(SIZE_MAX, k->rowbytes);
    k->chunk_bytes = k->chunk_rows * k->rowbytes;
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    *out = k;
    k = NULL;
cleanup:
    free(k);
    return st;
}

void *fp__rowsink_next(fp__rowsink *k)
{
    if (k->nfill == k->fill_cap && k->st == FP_OK)
        k->st = k->nfill == k->chunk_rows ? hand_off(k) : grow_fill(k, k->nfill + 1);
    if (k->st != FP_OK)
        return NULL;
    return k->fill + k->rowbytes * k->nfill++;
}

fp_status fp__rowsink_park(fp__rowsink *k)
{
    if (k->st != FP_OK)
        return k->st;
    k->st = stop_filter(k);
    /* keep the rows not written yet, and no more */
    if (!k->nfill) {
        free(k->fill);
        k->fill = NULL;
        k->fill_cap = 0;
    } else if (k->nfill < k->fill_cap) {
        unsigned char *kept = realloc(k->fill, k->nfill * k->rowbytes);
        if (kept) {
            k->fill = kept;
            k->fill_cap = k->nfill;
        }
    }
    return k->st;
}

fp_status fp__rowsink_status(const fp__rowsink *k)
{
    return k->st;
}

uint64_t fp__rowsink_rows(const fp__rowsink *k)
{
    return k->closed ? k->total : k->handed * k->chunk_rows + k->nfill;
}

fp_status fp__rowsink_close(fp__rowsink *k)
{
    fp_status st = k->st;
    uint64_t rows = fp__rowsink_rows(k);
    if (st != FP_OK)
        return st;
    k->total = rows;
    k->closed = true;
    if (!k->handed) {
        /* a short table: written whole, as fp__h5_write_table writes one */
        FP_CHECK(fp__h5_write_table(k->loc, k->name, k->filetype, k->filetype, k->fill,
                                    k->nfill));
        goto cleanup;
    }
    if (k->nfill)
        FP_CHECK(hand_off(k));
    FP_CHECK(stop_filter(k)); /* the last chunk written, the dataset ends at its last row */
cleanup:
    k->st = st != FP_OK ? st : FP_EUSAGE; /* closed: nothing more goes in */
    return st;
}

void fp__rowsink_free(fp__rowsink *k)
{
    if (!k)
        return;
    k->job_pending = false; /* abandoned: nothing more is written */
    stop_filter(k);
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    fp__h5_close(k->ds);
    free(k->fill);
    free(k);
}
