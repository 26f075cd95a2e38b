/* Output files written whole or not at all: PATH.tmp, fsync, rename; a path
 * that is not a regular file (a device, a FIFO, a symbolic link such as
 * /dev/stderr) is written in place, never replaced. */
#include "fleetprint/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fleetprint/log.h"

static bool tmp_name(const char *path, char *buf, size_t len)
{
    return snprintf(buf, len, "%s.tmp", path) < (int)len;
}

/* Whether path exists as something other than a regular file: renaming a
 * temporary over /dev/null, a FIFO or a link would replace it. */
static bool in_place(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
}

FILE *fp_outfile_open(const char *path, fp_status *st)
{
    char tmp[4096];
    *st = FP_OK;
    if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0)
        return stdout; /* its own descriptor: opening it again would truncate a log */
    if (in_place(path)) {
        FILE *f = fopen(path, "w");
        if (!f) {
            fp_error("%s: cannot write: %s", path, strerror(errno));
            *st = FP_EIO;
        }
        return f;
    }
    if (!tmp_name(path, tmp, sizeof tmp)) {
        fp_error("%s: path too long", path);
        *st = FP_EUSAGE;
        return NULL;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fp_error("%s: cannot write: %s", tmp, strerror(errno));
        *st = FP_EIO;
    }
    return f;
}

fp_status fp_outfile_close(FILE *f, const char *path, bool ok)
{
    char tmp[4096];
    if (f == stdout) {
        if (fflush(stdout) != 0 && ok) {
            fp_error("stdout: cannot write: %s", strerror(errno));
            return FP_EIO;
        }
        return FP_OK;
    }
    int err = 0;
    if (ok) {
        /* each step keeps the first error: a full disk shows at the flush,
         * a device error often only at fsync (which a FIFO or a terminal
         * does not take: EINVAL) */
        if (fflush(f) != 0 || ferror(f))
            err = errno ? errno : EIO;
        else if (fsync(fileno(f)) != 0 && errno != EINVAL)
            err = errno;
    }
    if (fclose(f) != 0 && ok && !err)
        err = errno;
    bool direct = in_place(path); /* as fp_outfile_open found it */
    tmp_name(path, tmp, sizeof tmp);
    if (ok && !err && !direct && rename(tmp, path) != 0)
        err = errno;
    if (direct) {
        if (err) {
            fp_error("%s: cannot write: %s", path, strerror(err));
            return FP_EIO;
        }
        return FP_OK;
    }
    if (!ok || err) {
        unlink(tmp);
        if (err) {
            fp_error("%s: cannot write: %s (the file is left as it was)", path, strerror(err));
            return FP_EIO;
        }
    }
    return FP_OK;
}

void fp_outfile_writeback(FILE *f)
{
    if (fflush(f) != 0)
        return; /* the error stays on f: close reports it */
#ifdef SYNC_FILE_RANGE_WRITE
    (void)sync_file_range(fileno(f), 0, 0, SYNC_FILE_RANGE_WRITE); /* a pipe: ESPIPE */
#endif
}
