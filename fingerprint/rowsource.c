/* Row sources: a table of fixed-size rows read a chunk at a time, the
 * reverse of a row sink (rowsink.c). Each chunk is read raw with
 * H5Dread_chunk on the caller's thread (HDF5 is not built thread-safe), then
 * inflated and unshuffled by the caller and one worker together, each byte
 * put straight where the memory type wants it: no type conversion, and both
 * cores decompress. A 100,000-node run's 22.4 M rows (627 MB, 143 MB on disk)
 * read in a fraction of H5Dread's 2.4 s.
 *
 * It reads only what it can read exactly as H5Dread would: a chunked 1-D
 * dataset whose filters are shuffle and deflate (either, both or none), and
 * a memory type whose members are, by name, byte for byte some of the file
 * type's (the bytes of the others are skipped, as H5Dread drops them).
 * Anything else is left to H5Dread (fp__h5_read_table). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef FP_HAVE_LIBDEFLATE
#include <libdeflate.h>
#else
#include <zlib.h>
#endif

#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "h5.h"

enum { BATCH = 32,      /* raw chunks read before they are decoded */
       MAX_BYTES = 512, /* a file row's largest size this reads */
       BLOCK = 128      /* rows unshuffled together */ };
#define SKIP SIZE_MAX /* a file byte no memory member takes */

typedef struct raw_chunk {
    unsigned char *buf;
    size_t cap, len;
    uint32_t mask; /* filters skipped for this chunk (bit = pipeline position) */
    uint64_t index;
} raw_chunk;

typedef struct source {
    size_t filebytes, rowsize, chunk_rows, n;
    int shuffle, deflate; /* pipeline positions, -1: not in the pipeline */
    size_t to[MAX_BYTES]; /* where each byte of a file row goes in a memory row, or SKIP */
    size_t placed;        /* bytes of a memory row the file fills */
    unsigned char *dst;
    raw_chunk raw[BATCH];
    size_t nraw;
    atomic_size_t next; /* the next raw chunk to decode */
    atomic_int failed;  /* a chunk would not decode: its index + 1 */
} source;

/* ---- the layout ----------------------------------------------------------------------- */

/* Fill s->to for memtype against filetype: true when every memory member
 * comes from the file's member of that name, of an equal type. */
static bool map_bytes(source *s, hid_t filetype, hid_t memtype)
{
    if (H5Tequal(filetype, memtype) > 0) {
        for (size_t j = 0; j < s->filebytes; j++)
            s->to[j] = j;
        s->placed = s->filebytes;
        return s->rowsize == s->filebytes;
    }
    if (H5Tget_class(filetype) != H5T_COMPOUND || H5Tget_class(memtype) != H5T_COMPOUND)
        return false;
    int nf = H5Tget_nmembers(filetype), nm = H5Tget_nmembers(memtype);
    if (nm <= 0 || nf < nm)
        return false;
    for (size_t j = 0; j < s->filebytes; j++)
        s->to[j] = SKIP;
    s->placed = 0;
    bool ok = true;
    for (unsigned i = 0; ok && i < (unsigned)nm; i++) {
        char *name = H5Tget_member_name(memtype, i);
        int f = name ? H5Tget_member_index(filetype, name) : -1;
        hid_t mt = H5Tget_member_type(memtype, i);
        hid_t ft = f >= 0 ? H5Tget_member_type(filetype, (unsigned)f) : H5I_INVALID_HID;
        ok = f >= 0 && mt >= 0 && ft >= 0 && H5Tequal(mt, ft) > 0;
        size_t size = ok ? H5Tget_size(ft) : 0;
        size_t from = ok ? H5Tget_member_offset(filetype, (unsigned)f) : 0;
        size_t to = ok ? H5Tget_member_offset(memtype, i) : 0;
        ok = ok && from + size <= s->filebytes && to + size <= s->rowsize;
        for (size_t b = 0; ok && b < size; b++)
            s->to[from + b] = to + b;
        s->placed += size;
        fp__h5_close(mt);
        fp__h5_close(ft);
        H5free_memory(name);
    }
    return ok;
}

/* The dataset's filters, where they are shuffle and deflate only. */
static bool read_filters(source *s, hid_t ds)
{
    hid_t dcpl = H5Dget_create_plist(ds);
    bool ok = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED;
    hsize_t chunk[1];
    ok = ok && H5Pget_chunk(dcpl, 1, chunk) == 1 && chunk[0] > 0;
    s->chunk_rows = ok ? (size_t)chunk[0] : 0;
    int n = ok ? H5Pget_nfilters(dcpl) : 0;
    s->shuffle = s->deflate = -1;
    for (int i = 0; ok && i < n; i++) {
        unsigned flags, conf;
        size_t nv = 0;
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &nv, NULL, 0, NULL, &conf);
        if (id == H5Z_FILTER_SHUFFLE && s->shuffle < 0 && s->deflate < 0)
            s->shuffle = i; /* shuffled before it is deflated, as rowsink writes */
        else if (id == H5Z_FILTER_DEFLATE && s->deflate < 0)
            s->deflate = i;
        else
            ok = false;
    }
    fp__h5_close(dcpl);
    return ok;
}

/* ---- decoding ---------------------------------------------------------------------------- */

static bool skipped(const raw_chunk *c, int filter)
{
    return filter < 0 || (c->mask >> filter & 1u);
}

/* One thread's inflater: libdeflate's where the build has it (it inflates
 * a whole buffer about twice as fast), else zlib's. */
typedef struct inflater {
    unsigned char *out; /* a chunk's bytes */
#ifdef FP_HAVE_LIBDEFLATE
    struct libdeflate_decompressor *d;
#endif
} inflater;

static bool inflater_init(inflater *z, size_t bytes)
{
    z->out = malloc(bytes);
#ifdef FP_HAVE_LIBDEFLATE
    z->d = libdeflate_alloc_decompressor();
    return z->out && z->d;
#else
    return z->out != NULL;
#endif
}

static void inflater_free(inflater *z)
{
    free(z->out);
#ifdef FP_HAVE_LIBDEFLATE
    if (z->d)
        libdeflate_free_decompressor(z->d);
#endif
}

/* Inflate the zlib stream in[0..len) into exactly bytes of z->out. */
static bool inflate_exactly(inflater *z, const unsigned char *in, size_t len, size_t bytes)
{
#ifdef FP_HAVE_LIBDEFLATE
    size_t got = 0;
    return libdeflate_zlib_decompress(z->d, in, len, z->out, bytes, &got) ==
               LIBDEFLATE_SUCCESS &&
           got == bytes;
#else
    uLongf got = bytes;
    return uncompress(z->out, &got, in, len) == Z_OK && got == bytes;
#endif
}

/* Decode raw chunk c into dst, where its first row goes, inflating with z:
 * its rows in *rows. */
static bool decode_into(const source *s, const raw_chunk *c, inflater *z, unsigned char *dst,
                        size_t *rows_out)
{
    size_t bytes = s->chunk_rows * s->filebytes;
    const unsigned char *src = c->buf;
    if (!skipped(c, s->deflate)) {
        if (!inflate_exactly(z, c->buf, c->len, bytes))
            return false;
        src = z->out;
    } else if (c->len != bytes) {
        return false;
    }
    size_t first = (size_t)c->index * s->chunk_rows;
    size_t rows = s->n - first < s->chunk_rows ? s->n - first : s->chunk_rows;
    bool shuffled = !skipped(c, s->shuffle);
    *rows_out = rows;
    /* a block of rows at a time, so the rows being filled stay in the
     * first-level cache while each of their bytes is placed */
    for (size_t r0 = 0; r0 < rows; r0 += BLOCK) {
        size_t m = rows - r0 < BLOCK ? rows - r0 : BLOCK;
        unsigned char *d0 = dst + r0 * s->rowsize;
        if (s->rowsize > s->placed) /* padding, as fp__h5_read_table leaves it */
            memset(d0, 0, m * s->rowsize);
        for (size_t j = 0; j < s->filebytes; j++) {
            if (s->to[j] == SKIP)
                continue;
            unsigned char *d = d0 + s->to[j];
            if (shuffled) { /* byte j of every row together (H5Z__filter_shuffle) */
                const unsigned char *from = src + j * s->chunk_rows + r0;
                for (size_t i = 0; i < m; i++, d += s->rowsize)
                    *d = from[i];
            } else {
                const unsigned char *from = src + r0 * s->filebytes + j;
                for (size_t i = 0; i < m; i++, d += s->rowsize, from += s->filebytes)
                    *d = *from;
            }
        }
    }
    return true;
}

/* Decode raw chunk c into its rows of s->dst, inflating with z. */
static bool decode(source *s, const raw_chunk *c, inflater *z)
{
    size_t first = (size_t)c->index * s->chunk_rows, rows;
    size_t most = s->n - first < s->chunk_rows ? s->n - first : s->chunk_rows;
    unsigned char *dst = s->dst + first * s->rowsize;
    fp_populate(dst, most * s->rowsize); /* fresh, most often */
    return decode_into(s, c, z, dst, &rows);
}

/* Decode at most most raw chunks, while any is left. */
static void decode_some(source *s, size_t most)
{
    inflater z;
    bool ok = inflater_init(&z, s->chunk_rows * s->filebytes);
    for (size_t i; most-- > 0 && (i = atomic_fetch_add(&s->next, 1)) < s->nraw;) {
        if (!ok || !decode(s, &s->raw[i], &z)) {
            int none = 0;
            atomic_compare_exchange_strong(&s->failed, &none, (int)(s->raw[i].index + 1));
        }
    }
    inflater_free(&z);
}

/* Decode raw chunks until none is left (the caller and the worker both). */
static void *decode_all(void *arg)
{
    decode_some(arg, SIZE_MAX);
    return NULL;
}

/* ---- reading ------------------------------------------------------------------------------- */

/* Read raw chunk index into r; r->len 0: the chunk was never written (its
 * rows are the fill value, which H5Dread supplies). */
static fp_status read_raw(source *s, hid_t ds, uint64_t index, raw_chunk *r)
{
    fp_status st = FP_OK;
    hsize_t off[1] = {index * s->chunk_rows}, size = 0;
    r->len = 0;
    FP_CHECK_H5(H5Dget_chunk_storage_size(ds, off, &size));
    if (size == 0)
        return FP_OK;
    if (size > r->cap) {
        unsigned char *grown = realloc(r->buf, size);
        FP_CHECK_ALLOC(grown);
        r->buf = grown;
        r->cap = size;
    }
    FP_CHECK_H5(H5Dread_chunk(ds, H5P_DEFAULT, off, &r->mask, r->buf));
    r->len = size;
    r->index = index;
cleanup:
    return st;
}

/* s set up for the n rows of ds read as memtype (rowsize bytes a row): false
 * where the layout is not one read here. */
static bool source_open(source *s, hid_t ds, hid_t memtype, size_t rowsize, size_t n)
{
    memset(s, 0, sizeof *s);
    hid_t ftype = H5Dget_type(ds);
    s->filebytes = ftype >= 0 ? H5Tget_size(ftype) : 0;
    s->rowsize = rowsize;
    s->n = n;
    bool ok = s->filebytes > 0 && s->filebytes <= MAX_BYTES && H5Tget_size(memtype) == rowsize &&
              read_filters(s, ds) && map_bytes(s, ftype, memtype);
    fp__h5_close(ftype);
    return ok && n > 0;
}

/* Decode s->raw[0, s->nraw) on this thread and a worker: 0, or the index + 1
 * of a chunk that would not decode. */
static int decode_batch(source *s)
{
    atomic_store(&s->next, 0);
    atomic_store(&s->failed, 0);
    /* libdeflate picks its code for this CPU on first use and keeps it in a
     * global: a chunk here first, or the worker races to set it too */
    decode_some(s, 1);
    pthread_t worker;
    bool threaded = s->nraw > 1 && pthread_create(&worker, NULL, decode_all, s) == 0;
    decode_all(s);
    if (threaded)
        pthread_join(worker, NULL);
    return atomic_load(&s->failed);
}

/* FP_EINPUT (logged): chunk c of ds (file, path) would not decode. */
static fp_status corrupt(const char *file, const char *path, size_t c, size_t chunk_rows)
{
    fp_error("%s: dataset %s: chunk %zu (rows from %zu) cannot be decompressed (corrupt)", file,
             path, c, c * chunk_rows);
    return FP_EINPUT;
}

static void dataset_names(hid_t ds, char *file, size_t flen, char *path, size_t plen)
{
    snprintf(file, flen, "?");
    snprintf(path, plen, "?");
    H5Fget_name(ds, file, flen);
    H5Iget_name(ds, path, plen);
}

fp_status fp__h5_read_rows(hid_t ds, hid_t memtype, size_t rowsize, void *dst, size_t n,
                           bool *done)
{
    fp_status st = FP_OK;
    source s;
    *done = false;
    if (!source_open(&s, ds, memtype, rowsize, n))
        return FP_OK; /* not a layout read here: H5Dread reads it */
    s.dst = dst;
    uint64_t chunks = (n + s.chunk_rows - 1) / s.chunk_rows;
    for (uint64_t c = 0; c < chunks; c += s.nraw) {
        s.nraw = chunks - c < BATCH ? (size_t)(chunks - c) : BATCH;
        for (size_t i = 0; i < s.nraw; i++) {
            FP_CHECK(read_raw(&s, ds, c + i, &s.raw[i]));
            if (!s.raw[i].len)
                goto cleanup; /* a chunk never written: H5Dread reads the table */
        }
        int bad = decode_batch(&s);
        if (bad) {
            char file[512], path[256];
            dataset_names(ds, file, sizeof file, path, sizeof path);
            st = corrupt(file, path, (size_t)bad - 1, s.chunk_rows);
            goto cleanup;
        }
    }
    *done = true;
cleanup:
    for (size_t i = 0; i < BATCH; i++)
        free(s.raw[i].buf);
    return st;
}

/* ---- packed tables ------------------------------------------------------------------------ */

struct fp__pack {
    source s; /* the layout (its raw chunks and dst unused) */
    /* chunk c as stored: len[c] bytes at base + at[c], base either bytes
     * (every chunk read, back to back) or in map (the file's bytes that
     * hold them, mapped) */
    const unsigned char *base;
    unsigned char *bytes;
    fp__h5_map map;
    size_t *at, *len;
    uint32_t *mask; /* chunk c's filters skipped */
    size_t nchunks;
    char file[512], path[256]; /* the dataset, for messages */
};

struct fp__unpacker {
    inflater z;
};

void fp__pack_free(fp__pack *p)
{
    if (!p)
        return;
    free(p->bytes);
    fp__h5_unmap(&p->map);
    free(p->at);
    free(p->len);
    free(p->mask);
    free(p);
}

/* Map the chunks of p (of dataset ds) from its file where they lie in one
 * stretch no more than twice their size (one run's, as appended): no copy
 * and no fresh memory; false where not (they are read). */
static bool map_chunks(fp__pack *p, hid_t ds)
{
    haddr_t lo = HADDR_UNDEF, hi = 0;
    size_t total = 0;
    for (size_t c = 0; c < p->nchunks; c++) {
        hsize_t at[1] = {c * p->s.chunk_rows}, size = 0;
        haddr_t addr;
        if (H5Dget_chunk_info_by_coord(ds, at, &p->mask[c], &addr, &size) < 0 ||
            addr == HADDR_UNDEF || size != p->len[c])
            return false;
        p->at[c] = (size_t)addr; /* made relative to lo below */
        lo = addr < lo ? addr : lo;
        hi = addr + size > hi ? addr + size : hi;
        total += (size_t)size;
    }
    if (!p->nchunks || hi - lo > 2 * (haddr_t)total || !fp__h5_map_bytes(ds, lo, hi - lo, &p->map))
        return false;
    for (size_t c = 0; c < p->nchunks; c++)
        p->at[c] -= (size_t)lo;
    p->base = p->map.rows;
    return true;
}

fp_status fp__h5_read_packed(hid_t ds, hid_t memtype, size_t rowsize, size_t n, fp__pack **out)
{
    fp_status st = FP_OK;
    *out = NULL;
    fp__pack *p = calloc(1, sizeof *p);
    FP_CHECK_ALLOC(p);
    if (!source_open(&p->s, ds, memtype, rowsize, n))
        goto cleanup; /* not a layout read here */
    p->nchunks = (n + p->s.chunk_rows - 1) / p->s.chunk_rows;
    p->at = malloc((p->nchunks + 1) * sizeof *p->at);
    p->len = malloc((p->nchunks + 1) * sizeof *p->len);
    p->mask = malloc((p->nchunks + 1) * sizeof *p->mask);
    FP_CHECK_ALLOC(p->at);
    FP_CHECK_ALLOC(p->len);
    FP_CHECK_ALLOC(p->mask);
    size_t total = 0;
    for (size_t c = 0; c < p->nchunks; c++) {
        hsize_t at[1] = {c * p->s.chunk_rows}, size = 0;
        FP_CHECK_H5(H5Dget_chunk_storage_size(ds, at, &size));
        if (size == 0)
            goto cleanup; /* a chunk never written: H5Dread reads the table */
        p->len[c] = (size_t)size;
        total += (size_t)size;
    }
    if (!map_chunks(p, ds)) {
        for (size_t c = 0; c < p->nchunks; c++)
            p->at[c] = c ? p->at[c - 1] + p->len[c - 1] : 0;
        p->base = p->bytes = fp_malloc_huge(total);
        FP_CHECK_ALLOC(p->bytes);
        fp_populate(p->bytes, total);
    }
    for (size_t c = 0; p->bytes && c < p->nchunks; c++) {
        hsize_t at[1] = {c * p->s.chunk_rows};
        FP_CHECK_H5(H5Dread_chunk(ds, H5P_DEFAULT, at, &p->mask[c], p->bytes + p->at[c]));
    }
    dataset_names(ds, p->file, sizeof p->file, p->path, sizeof p->path);
    *out = p;
    p = NULL;
cleanup:
    fp__pack_free(p);
    return st;
}

size_t fp__pack_chunks(const fp__pack *p)
{
    return p->nchunks;
}

size_t fp__pack_chunk_rows(const fp__pack *p)
{
    return p->s.chunk_rows;
}

/* Chunk c of p as a raw chunk (its bytes p's). */
static raw_chunk pack_chunk(const fp__pack *p, size_t c)
{
    return (raw_chunk){.buf = (unsigned char *)(p->base + p->at[c]), .len = p->len[c],
                       .mask = p->mask[c], .index = c};
}

fp_status fp__unpacker_open(const fp__pack *p, fp__unpacker **out)
{
    fp__unpacker *u = malloc(sizeof *u);
    *out = NULL;
    if (!u || !inflater_init(&u->z, p->s.chunk_rows * p->s.filebytes)) {
        if (u)
            inflater_free(&u->z);
        free(u);
        return FP_ENOMEM;
    }
    *out = u;
    return FP_OK;
}

void fp__unpacker_free(fp__unpacker *u)
{
    if (!u)
        return;
    inflater_free(&u->z);
    free(u);
}

bool fp__pack_try(const fp__pack *p, size_t c, fp__unpacker *u, void *dst, size_t *rows)
{
    raw_chunk rc = pack_chunk(p, c);
    *rows = 0;
    return decode_into(&p->s, &rc, &u->z, dst, rows);
}

fp_status fp__pack_decode(const fp__pack *p, size_t c, fp__unpacker *u, void *dst, size_t *rows)
{
    if (!fp__pack_try(p, c, u, dst, rows))
        return corrupt(p->file, p->path, c, p->s.chunk_rows);
    return FP_OK;
}

fp_status fp__pack_unpack(const fp__pack *p, void *dst)
{
    source s;
    memcpy(&s, &p->s, sizeof s); /* the layout; the batch is set below */
    s.dst = dst;
    for (size_t c = 0; c < p->nchunks; c += s.nraw) {
        s.nraw = p->nchunks - c < BATCH ? p->nchunks - c : BATCH;
        for (size_t i = 0; i < s.nraw; i++)
            s.raw[i] = pack_chunk(p, c + i); /* views: nothing here is freed */
        int bad = decode_batch(&s);
        if (bad)
            return corrupt(p->file, p->path, (size_t)bad - 1, s.chunk_rows);
    }
    return FP_OK;
}
