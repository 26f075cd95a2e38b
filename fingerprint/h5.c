/* HDF5 helpers of the store: string types, attributes, whole-table reads and
 * chunked writes, string tables. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "h5.h"

/* rows per chunk of a table dataset */
#define ROWS_PER_CHUNK 32768

hid_t fp__h5_str_type(size_t width)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return t;
    if (H5Tset_size(t, width ? width : 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

/* Write a scalar attribute, replacing one of the same name: stored as
 * filetype, value given in memtype. */
static fp_status attr_write(hid_t obj, const char *name, hid_t filetype, hid_t memtype,
                            const void *value)
{
    fp_status st = FP_OK;
    hid_t space = H5I_INVALID_HID, attr = H5I_INVALID_HID;
    if (H5Aexists(obj, name) > 0)
        FP_CHECK_H5(H5Adelete(obj, name));
    FP_CHECK_H5(space = H5Screate(H5S_SCALAR));
    FP_CHECK_H5(attr = H5Acreate2(obj, name, filetype, space, H5P_DEFAULT, H5P_DEFAULT));
    FP_CHECK_H5(H5Awrite(attr, memtype, value));
cleanup:
    if (attr >= 0)
        H5Aclose(attr);
    if (space >= 0)
        H5Sclose(space);
    return st;
}

fp_status fp__h5_attr_str(hid_t obj, const char *name, const char *value)
{
    hid_t t = fp__h5_str_type(strlen(value) + 1);
    if (t < 0)
        return FP_EH5;
    fp_status st = attr_write(obj, name, t, t, value);
    H5Tclose(t);
    return st;
}

fp_status fp__h5_attr_double(hid_t obj, const char *name, double value)
{
    /* file type: IEEE little-endian; memory: native */
    return attr_write(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

fp_status fp__h5_attr_i64(hid_t obj, const char *name, long long value)
{
    return attr_write(obj, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, &value);
}

static int attr_open(hid_t obj, const char *name, hid_t *attr)
{
    htri_t ex = H5Aexists(obj, name);
    if (ex <= 0)
        return ex < 0 ? -1 : 0;
    *attr = H5Aopen(obj, name, H5P_DEFAULT);
    return *attr < 0 ? -1 : 1;
}

fp_status fp__h5_read_attr_str(hid_t obj, const char *name, char *buf, size_t len)
{
    hid_t attr = H5I_INVALID_HID, ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
    fp_status st = FP_OK;
    char *tmp = NULL;
    buf[0] = 0;
    int r = attr_open(obj, name, &attr);
    if (r <= 0)
        return r < 0 ? FP_EH5 : FP_OK;
    FP_CHECK_H5(ftype = H5Aget_type(attr));
    if (H5Tget_class(ftype) != H5T_STRING || H5Tis_variable_str(ftype) > 0)
        FP_FAIL(FP_EINPUT, "attribute '%s' is not a fixed-size string", name);
    size_t w = H5Tget_size(ftype);
    tmp = calloc(1, w + 1);
    FP_CHECK_ALLOC(tmp);
    FP_CHECK_H5(mtype = fp__h5_str_type(w + 1));
    FP_CHECK_H5(H5Aread(attr, mtype, tmp));
    snprintf(buf, len, "%s", tmp);
cleanup:
    free(tmp);
    if (mtype >= 0)
        H5Tclose(mtype);
    if (ftype >= 0)
        H5Tclose(ftype);
    H5Aclose(attr);
    return st;
}

/* Read a scalar numeric attribute in memtype; a missing one reads as 0. */
static fp_status attr_read_num(hid_t obj, const char *name, hid_t memtype, void *out)
{
    hid_t attr;
    int r = attr_open(obj, name, &attr);
    if (r <= 0)
        return r < 0 ? FP_EH5 : FP_OK;
    herr_t e = H5Aread(attr, memtype, out);
    H5Aclose(attr);
    return e < 0 ? FP_EH5 : FP_OK;
}

fp_status fp__h5_read_attr_double(hid_t obj, const char *name, double *out)
{
    *out = 0;
    return attr_read_num(obj, name, H5T_NATIVE_DOUBLE, out);
}

fp_status fp__h5_read_attr_i64(hid_t obj, const char *name, long long *out)
{
    *out = 0;
    return attr_read_num(obj, name, H5T_NATIVE_LLONG, out);
}

size_t fp__h5_chunk_rows(size_t n, size_t rowbytes)
{
    size_t chunk = n < ROWS_PER_CHUNK ? (n ? n : 1) : ROWS_PER_CHUNK;
    /* keep a chunk within HDF5's default 1 MiB chunk cache */
    while (chunk > 1 && chunk * rowbytes > (1u << 20))
        chunk /= 2;
    return chunk;
}

fp_status fp__h5_create_table(hid_t loc, const char *name, hid_t filetype, size_t n,
                              size_t chunk_rows, hid_t *out)
{
    fp_status st = FP_OK;
    hid_t space = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
    hsize_t dims[1] = {n}, maxdims[1] = {H5S_UNLIMITED}, chunk[1] = {chunk_rows};
    *out = H5I_INVALID_HID;
    FP_CHECK_H5(space = H5Screate_simple(1, dims, maxdims));
    FP_CHECK_H5(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    FP_CHECK_H5(H5Pset_chunk(dcpl, 1, chunk));
    FP_CHECK_H5(H5Pset_shuffle(dcpl));
    FP_CHECK_H5(H5Pset_deflate(dcpl, FP__H5_DEFLATE));
    FP_CHECK_H5(*out = H5Dcreate2(loc, name, filetype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
cleanup:
    fp__h5_close(dcpl);
    fp__h5_close(space);
    return st;
}

fp_status fp__h5_write_table(hid_t loc, const char *name, hid_t filetype, hid_t memtype,
                             const void *data, size_t n)
{
    fp_status st = FP_OK;
    hid_t ds = H5I_INVALID_HID;
    FP_CHECK(fp__h5_create_table(loc, name, filetype, n,
                                 fp__h5_chunk_rows(n, H5Tget_size(filetype)), &ds));
    if (n)
        FP_CHECK_H5(H5Dwrite(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
cleanup:
    fp__h5_close(ds);
    return st;
}

fp_status fp__h5_write_contiguous(hid_t loc, const char *name, hid_t filetype, hid_t memtype,
                                  const void *data, size_t n)
{
    fp_status st = FP_OK;
    hid_t space = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, ds = H5I_INVALID_HID;
    hsize_t dims[1] = {n};
    FP_CHECK_H5(space = H5Screate_simple(1, dims, NULL));
    FP_CHECK_H5(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    FP_CHECK_H5(H5Pset_layout(dcpl, H5D_CONTIGUOUS));
    FP_CHECK_H5(ds = H5Dcreate2(loc, name, filetype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    if (n)
        FP_CHECK_H5(H5Dwrite(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
cleanup:
    fp__h5_close(ds);
    fp__h5_close(dcpl);
    fp__h5_close(space);
    return st;
}

/* Whether every member of memtype lies in filetype at the same offset and
 * in the same form (byte order, size, class). */
static bool same_members(hid_t memtype, hid_t filetype)
{
    int n = H5Tget_nmembers(memtype);
    bool same = n > 0 && H5Tget_class(filetype) == H5T_COMPOUND;
    for (int i = 0; same && i < n; i++) {
        char *name = H5Tget_member_name(memtype, (unsigned)i);
        int j = name ? H5Tget_member_index(filetype, name) : -1;
        H5free_memory(name);
        hid_t a = H5Tget_member_type(memtype, (unsigned)i);
        hid_t b = j >= 0 ? H5Tget_member_type(filetype, (unsigned)j) : H5I_INVALID_HID;
        same = b >= 0 && H5Tequal(a, b) > 0 &&
               H5Tget_member_offset(memtype, (unsigned)i) ==
                   H5Tget_member_offset(filetype, (unsigned)j);
        fp__h5_close(a);
        fp__h5_close(b);
    }
    return same;
}

/* obj's file, where raw data can be mapped from it: a plain file (sec2),
 * its name into path and its user block (where file addresses start). */
static bool plain_file(hid_t obj, char *path, size_t len, hsize_t *userblock)
{
    hid_t file = H5Iget_file_id(obj);
    hid_t fapl = file >= 0 ? H5Fget_access_plist(file) : H5I_INVALID_HID;
    hid_t fcpl = file >= 0 ? H5Fget_create_plist(file) : H5I_INVALID_HID;
    ssize_t n = file >= 0 ? H5Fget_name(file, path, len) : -1;
    bool ok = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 && fcpl >= 0 &&
              H5Pget_userblock(fcpl, userblock) >= 0 && n > 0 && (size_t)n < len;
    fp__h5_close(fcpl);
    fp__h5_close(fapl);
    fp__h5_close(file);
    return ok;
}

bool fp__h5_map_bytes(hid_t obj, haddr_t addr, size_t bytes, fp__h5_map *m)
{
    char path[4096];
    hsize_t ub = 0;
    struct stat sb;
    memset(m, 0, sizeof *m);
    if (!bytes || addr == HADDR_UNDEF || !plain_file(obj, path, sizeof path, &ub))
        return false;
    off_t at = (off_t)(addr + ub);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    off_t start = at - (off_t)((size_t)at % page);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    /* cut short since it was opened: not mapped, and the read says so */
    bool ok = fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size >= at &&
              (size_t)(sb.st_size - at) >= bytes;
    size_t len = (size_t)(at - start) + bytes;
    void *map = ok ? mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, start)
                   : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    if (map == MAP_FAILED)
        return false;
    *m = (fp__h5_map){(const char *)map + (at - start), 0, 0, map, len};
    return true;
}

fp_status fp__h5_map_table(hid_t loc, const char *name, hid_t memtype, size_t rowsize,
                           fp__h5_map *m)
{
    fp_status st = FP_OK;
    hid_t ds = H5I_INVALID_HID, ft = H5I_INVALID_HID, space = H5I_INVALID_HID;
    hid_t dcpl = H5I_INVALID_HID;
    hsize_t dims[1];
    memset(m, 0, sizeof *m);
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0)
        return FP_OK; /* the read names what is missing */
    FP_CHECK_H5(ds = H5Dopen2(loc, name, H5P_DEFAULT));
    FP_CHECK_H5(ft = H5Dget_type(ds));
    FP_CHECK_H5(space = H5Dget_space(ds));
    FP_CHECK_H5(dcpl = H5Dget_create_plist(ds));
    size_t stride = H5Tget_size(ft);
    haddr_t addr = H5Dget_offset(ds);
    if (H5Sget_simple_extent_ndims(space) != 1 ||
        H5Sget_simple_extent_dims(space, dims, NULL) < 0 || !dims[0] || stride < rowsize || stride % 8 || addr % 8 || dims[0] > SIZE_MAX / stride ||
        H5Pget_layout(dcpl) != H5D_CONTIGUOUS || H5Pget_external_count(dcpl) != 0 ||
        H5Dget_storage_size(ds) != dims[0] * stride || !same_members(memtype, ft))
        goto cleanup;
    if (fp__h5_map_bytes(ds, addr, dims[0] * stride, m)) {
        m->n = (size_t)dims[0];
        m->stride = stride;
    }
cleanup:
    fp__h5_close(dcpl);
    fp__h5_close(space);
    fp__h5_close(ft);
    fp__h5_close(ds);
    return st;
}

void fp__h5_unmap(fp__h5_map *m)
{
    if (m->map)
        munmap(m->map, m->len);
    memset(m, 0, sizeof *m);
}

fp_status fp__h5_read_table(hid_t loc, const char *name, hid_t memtype, size_t rowsize,
                            void **out, size_t *n)
{
    fp_status st = FP_OK;
    hid_t ds = H5I_INVALID_HID, space = H5I_INVALID_HID;
    void *data = NULL;
    *out = NULL;
    *n = 0;
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0)
        FP_FAIL(FP_EINPUT, "dataset '%s' is missing", name);
    FP_CHECK_H5(ds = H5Dopen2(loc, name, H5P_DEFAULT));
    FP_CHECK_H5(space = H5Dget_space(ds));
    hsize_t dims[1];
    if (H5Sget_simple_extent_ndims(space) != 1)
        FP_FAIL(FP_EINPUT, "dataset '%s' is not one-dimensional", name);
    FP_CHECK_H5(H5Sget_simple_extent_dims(space, dims, NULL));
    data = fp_malloc_huge(dims[0] ? dims[0] * rowsize : 1);
    FP_CHECK_ALLOC(data);
    bool done = false;
    if (dims[0] > ROWS_PER_CHUNK) /* a long table: decompressed on two threads */
        FP_CHECK(fp__h5_read_rows(ds, memtype, rowsize, data, dims[0], &done));
    if (dims[0] && !done) {
        fp_populate(data, dims[0] * rowsize);
        memset(data, 0, dims[0] * rowsize);
        if (H5Dread(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
            FP_FAIL(FP_EINPUT, "dataset '%s' cannot be read as the expected type", name);
    }
    *out = data;
    *n = dims[0];
    data = NULL;
cleanup:
    free(data);
    if (space >= 0)
        H5Sclose(space);
    if (ds >= 0)
        H5Dclose(ds);
    return st;
}

fp_status fp__h5_read_fixed_strings(hid_t loc, const char *name, char **out, size_t *width,
                                    size_t *n)
{
    fp_status st = FP_OK;
    hid_t ds = H5I_INVALID_HID, ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
    *out = NULL;
    *n = 0;
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0)
        FP_FAIL(FP_EINPUT, "dataset '%s' is missing", name);
    FP_CHECK_H5(ds = H5Dopen2(loc, name, H5P_DEFAULT));
    FP_CHECK_H5(ftype = H5Dget_type(ds));
    if (H5Tget_class(ftype) != H5T_STRING || H5Tis_variable_str(ftype) > 0)
        FP_FAIL(FP_EINPUT, "dataset '%s' is not fixed-size strings", name);
    *width = H5Tget_size(ftype) + 1;
    FP_CHECK_H5(mtype = fp__h5_str_type(*width));
    H5Dclose(ds);
    ds = H5I_INVALID_HID;
    FP_CHECK(fp__h5_read_table(loc, name, mtype, *width, (void **)out, n));
cleanup:
    if (mtype >= 0)
        H5Tclose(mtype);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (ds >= 0)
        H5Dclose(ds);
    return st;
}

fp_status fp__h5_read_strings(hid_t loc, const char *name, fp__strmap *m)
{
    fp_status st = FP_OK;
    char *buf = NULL;
    size_t n = 0, w = 0, dup = 0;
    memset(m, 0, sizeof *m);
    FP_CHECK(fp__h5_read_fixed_strings(loc, name, &buf, &w, &n));
    st = fp__strmap_adopt(m, buf, w, n, &dup); /* buf is m's now */
    if (st == FP_OK && dup < n)
        FP_FAIL(FP_EINPUT, "dataset '%s': row %zu repeats '%s'", name, dup, buf + dup * w);
cleanup:
    return st;
}

fp_status fp__h5_write_strings(hid_t loc, const char *name, const fp__strmap *m)
{
    fp_status st = FP_OK;
    size_t w = fp__strmap_width(m);
    char *buf = calloc(m->n ? m->n : 1, w);
    hid_t t = H5I_INVALID_HID;
    FP_CHECK_ALLOC(buf);
    for (uint32_t i = 0; i < m->n; i++)
        memcpy(buf + (size_t)i * w, fp__strmap_str(m, i), strlen(fp__strmap_str(m, i)));
    FP_CHECK_H5(t = fp__h5_str_type(w));
    FP_CHECK(fp__h5_write_table(loc, name, t, t, buf, m->n));
cleanup:
    if (t >= 0)
        H5Tclose(t);
    free(buf);
    return st;
}

void fp__h5_close(hid_t id)
{
    if (id < 0)
        return;
    switch (H5Iget_type(id)) {
    case H5I_FILE:
        H5Fclose(id);
        break;
    case H5I_GROUP:
        H5Gclose(id);
        break;
    case H5I_DATASET:
        H5Dclose(id);
        break;
    case H5I_DATATYPE:
        H5Tclose(id);
        break;
    default:
        H5Idec_ref(id);
        break;
    }
}

bool fp__h5_has_member(hid_t loc, const char *name, const char *member)
{
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    hid_t t = d >= 0 ? H5Dget_type(d) : H5I_INVALID_HID;
    bool has = t >= 0 && H5Tget_member_index(t, member) >= 0;
    fp__h5_close(t);
    fp__h5_close(d);
    return has;
}

hid_t fp__h5_compound(const fp__h5_member *m, size_t n, size_t memsize, bool file)
{
    size_t packed = 0;
    for (size_t i = 0; i < n; i++)
        packed += m[i].size;
    hid_t t = H5Tcreate(H5T_COMPOUND, file ? packed : memsize);
    bool ok = t >= 0;
    for (size_t i = 0, off = 0; ok && i < n; off += m[i++].size)
        ok = m[i].type >= 0 && H5Tinsert(t, m[i].name, file ? off : m[i].memoff, m[i].type) >= 0;
    if (!ok && t >= 0) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    return t;
}
