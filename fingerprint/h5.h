#ifndef FLEETPRINT_FINGERPRINT_H5_H
#define FLEETPRINT_FINGERPRINT_H5_H
/* The store's HDF5 helpers (h5.c): fixed-size string types, scalar
 * attributes, whole-table reads and chunked writes, string tables. Private to
 * fingerprint/: fp__ prefix, not installed. */
#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>

#include "fleetprint/status.h"
#include "intern.h"

/* A fixed-size NUL-terminated string type of width bytes (caller closes). */
hid_t fp__h5_str_type(size_t width);
/* Scalar attributes. */
fp_status fp__h5_attr_str(hid_t obj, const char *name, const char *value);
fp_status fp__h5_attr_double(hid_t obj, const char *name, double value);
fp_status fp__h5_attr_i64(hid_t obj, const char *name, long long value);
/* Read attributes; a missing one gives "" / 0 and FP_OK when optional. */
fp_status fp__h5_read_attr_str(hid_t obj, const char *name, char *buf, size_t len);
fp_status fp__h5_read_attr_double(hid_t obj, const char *name, double *out);
fp_status fp__h5_read_attr_i64(hid_t obj, const char *name, long long *out);

/* The deflate level of every table. */
#define FP__H5_DEFLATE 1
/* Rows per chunk of a table of n rows of rowbytes each: n up to 32,768 rows,
 * within HDF5's default 1 MiB chunk cache. */
size_t fp__h5_chunk_rows(size_t n, size_t rowbytes);
/* Create dataset name: n rows of filetype along an unlimited dimension, in
 * chunks of chunk_rows, shuffled and deflated; *out is the open dataset (the
 * caller closes it). */
fp_status fp__h5_create_table(hid_t loc, const char *name, hid_t filetype, size_t n,
                              size_t chunk_rows, hid_t *out);
/* Write n rows of memtype as dataset name (file type filetype), chunked along
 * an unlimited dimension and compressed (shuffle + deflate). n may be 0. */
fp_status fp__h5_write_table(hid_t loc, const char *name, hid_t filetype, hid_t memtype,
                             const void *data, size_t n);
/* Write n rows of memtype as dataset name (file type filetype) in one
 * contiguous block, uncompressed: a table fp__h5_map_table can map where its
 * file type lays each row out as memory does (the file created with
 * FP__H5_ALIGN). n may be 0. */
fp_status fp__h5_write_contiguous(hid_t loc, const char *name, hid_t filetype, hid_t memtype,
                                  const void *data, size_t n);
/* Where a file's large datasets begin: set on its file access list when it
 * is created, so that a contiguous table lies on a page boundary. */
#define FP__H5_ALIGN_OVER ((hsize_t)1 << 20)
#define FP__H5_ALIGN 4096
/* A table mapped read-only from its file (fp__h5_map_table): n rows of
 * stride bytes from rows, in a mapping of len bytes at map. */
typedef struct fp__h5_map {
    const void *rows;
    size_t n, stride;
    void *map;
    size_t len;
} fp__h5_map;
/* Map 1-D dataset name of loc where its rows can be used as they lie in the
 * file: contiguous, in a plain file, each member of memtype (rowsize bytes)
 * at the same offset and of the same form in the file's row type (which may
 * hold more after them), rows and offset 8-byte aligned. The rows are shared
 * with the page cache: no copy, no fresh memory. m->map NULL (FP_OK) where
 * the table is not so (read it instead). */
fp_status fp__h5_map_table(hid_t loc, const char *name, hid_t memtype, size_t rowsize,
                           fp__h5_map *m);
void fp__h5_unmap(fp__h5_map *m);
/* Map bytes [addr, addr + bytes) of obj's file (a plain file, which holds
 * them: checked against its size) read-only into m (m->rows: addr's byte);
 * false where it cannot be (read it instead). */
bool fp__h5_map_bytes(hid_t obj, haddr_t addr, size_t bytes, fp__h5_map *m);
/* Read a 1-D dataset into a new array of *n rows of memtype (caller frees);
 * a long table of a layout fp__h5_read_rows reads is decompressed on two
 * threads. FP_EINPUT naming the dataset when it is missing, not 1-D or a
 * chunk is corrupt. */
fp_status fp__h5_read_table(hid_t loc, const char *name, hid_t memtype, size_t rowsize,
                            void **out, size_t *n);
/* rowsource.c: read the n rows of open 1-D dataset ds into dst (n rows of
 * memtype, rowsize bytes each), decompressing on two threads. *done false
 * (FP_OK): its filters, types or chunks are not what this reads, and H5Dread
 * must; FP_EINPUT naming the file, dataset and chunk that will not decode. */
fp_status fp__h5_read_rows(hid_t ds, hid_t memtype, size_t rowsize, void *dst, size_t n,
                           bool *done);
/* A table kept as stored (its chunks compressed), for a reader that takes
 * it once, in order, a chunk at a time, where the rows held whole would be
 * all of its memory (rowsource.c). */
typedef struct fp__pack fp__pack;
typedef struct fp__unpacker fp__unpacker;
/* The n rows of open 1-D dataset ds, to be read as memtype (rowsize bytes a
 * row), packed into *out: NULL (FP_OK) where fp__h5_read_rows would not read
 * it (H5Dread must). */
fp_status fp__h5_read_packed(hid_t ds, hid_t memtype, size_t rowsize, size_t n, fp__pack **out);
size_t fp__pack_chunks(const fp__pack *p);
size_t fp__pack_chunk_rows(const fp__pack *p);
/* An inflater's room for one thread's reads of p's chunks. FP_ENOMEM. */
fp_status fp__unpacker_open(const fp__pack *p, fp__unpacker **out);
void fp__unpacker_free(fp__unpacker *u);
/* Chunk c of p into dst (room for fp__pack_chunk_rows rows), its rows in
 * *rows; FP_EINPUT (logged, naming file, dataset and chunk) where it will
 * not decode. */
fp_status fp__pack_decode(const fp__pack *p, size_t c, fp__unpacker *u, void *dst, size_t *rows);
/* The same, saying nothing: false where the chunk will not decode. */
bool fp__pack_try(const fp__pack *p, size_t c, fp__unpacker *u, void *dst, size_t *rows);
/* Every row of p into dst, on two threads; FP_EINPUT as fp__pack_decode. */
fp_status fp__pack_unpack(const fp__pack *p, void *dst);
void fp__pack_free(fp__pack *p);
/* Read a 1-D fixed-string dataset as *n strings of *width bytes each, NUL
 * terminated, in one new array (*out, caller frees). */
fp_status fp__h5_read_fixed_strings(hid_t loc, const char *name, char **out, size_t *width,
                                    size_t *n);
/* Read a 1-D fixed-string dataset into a strmap (ids = row numbers; repeated
 * strings are an error). */
fp_status fp__h5_read_strings(hid_t loc, const char *name, fp__strmap *m);
/* Write a strmap as a 1-D fixed-string dataset (row = id). */
fp_status fp__h5_write_strings(hid_t loc, const char *name, const fp__strmap *m);
/* One member of a compound type: its name, type, offset in the memory
 * struct and size in the file (packed: members back to back). */
typedef struct fp__h5_member {
    const char *name;
    hid_t type;
    size_t memoff, size;
} fp__h5_member;
/* A compound type of the n members m: the memory layout (native, memsize
 * bytes) or the file layout (packed). Caller closes; H5I_INVALID_HID on
 * error. The members' types stay the caller's. */
hid_t fp__h5_compound(const fp__h5_member *m, size_t n, size_t memsize, bool file);
/* Close any identifier (file, group, dataset, type, ...) that is not
 * H5I_INVALID_HID, for cleanup paths: errors are not reported. */
void fp__h5_close(hid_t id);
/* Whether compound dataset name in loc has a member of that name: files of
 * older versions lack some that later ones write (false: no such dataset). */
bool fp__h5_has_member(hid_t loc, const char *name, const char *member);

#endif
