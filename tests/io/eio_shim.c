/* LD_PRELOAD shim for the I/O-error tests: every write, pwrite, fsync, syncfs
 * and copy_file_range on a file (or folder) under FP_EIO_DIR fails with EIO,
 * as a failing disk does (a device error often shows only at fsync).
 * Everything else passes through to libc. Test-only; never linked into fleetprint. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int under_dir(int fd)
{
    const char *dir = getenv("FP_EIO_DIR");
    char link[64], target[4096];
    if (!dir || !*dir)
        return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return 0;
    target[n] = 0;
    return strncmp(target, dir, strlen(dir)) == 0;
}

#define PASS(name, ret, params, args)                                                      \
    ret name params                                                                        \
    {                                                                                      \
        if (under_dir(fd)) {                                                               \
            errno = EIO;                                                                   \
            return -1;                                                                     \
        }                                                                                  \
        ret(*real) params = (ret(*) params)dlsym(RTLD_NEXT, #name);                        \
        return real args;                                                                  \
    }

PASS(write, ssize_t, (int fd, const void *buf, size_t n), (fd, buf, n))
PASS(pwrite, ssize_t, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off))
PASS(pwrite64, ssize_t, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off))
PASS(fsync, int, (int fd), (fd))
PASS(syncfs, int, (int fd), (fd))

ssize_t copy_file_range(int in, loff_t *in_off, int fd, loff_t *out_off, size_t n,
                        unsigned flags)
{
    if (under_dir(fd)) {
        errno = EIO;
        return -1;
    }
    ssize_t (*real)(int, loff_t *, int, loff_t *, size_t, unsigned) =
        (ssize_t(*)(int, loff_t *, int, loff_t *, size_t, unsigned))dlsym(RTLD_NEXT,
                                                                          "copy_file_range");
    return real(in, in_off, fd, out_off, n, flags);
}
