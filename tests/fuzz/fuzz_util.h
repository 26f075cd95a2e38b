#ifndef FLEETPRINT_FUZZ_UTIL_H
#define FLEETPRINT_FUZZ_UTIL_H
/* Helpers shared by the libFuzzer targets in tests/fuzz (static inline only).
 * A target turns the fuzzer's bytes into what its parser reads (a C string, a
 * file, argv), calls the parser, and checks the properties its contract
 * promises; a broken property aborts, which libFuzzer reports as a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Abort with the failed property and where it was checked. */
#define FZ_ASSERT(cond)                                                                    \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond);   \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

/* The input as a NUL-terminated string (cut at its first NUL byte, as a C
 * caller would see it). The caller frees it; NULL when out of memory. */
static inline char *fz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return NULL;
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* The input as a file the loaders can open by path: an anonymous in-memory
 * file (memfd) named /proc/self/fd/N in path. Returns the descriptor the
 * caller closes, or -1. */
static inline int fz_memfile(const uint8_t *data, size_t size, char *path, size_t len)
{
    int fd = memfd_create("fleetprint-fuzz", 0);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
