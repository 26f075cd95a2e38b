/* Output files written whole or not at all: PATH.tmp, fsync, rename. */
#include "fleetprint/outfile.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fleetprint/log.h"

static bool tmp_name(const char *path, char *buf, size_t len)
{
    return snprintf(buf, len, "%s.tmp", path) < (int)len;
}

FILE *fp_outfile_open(const char *path, fp_status *st)
{
    char tmp[4096];
    *st = FP_OK;
    if (strcmp(path, "-") == 0)
        return stdout;
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
    tmp_name(path, tmp, sizeof tmp);
    int err = 0;
    if (ok) {
        /* each step keeps the first error: a full disk shows at the flush,
         * a device error often only at fsync */
        if (fflush(f) != 0 || ferror(f))
            err = errno ? errno : EIO;
        else if (fsync(fileno(f)) != 0)
            err = errno;
    }
    if (fclose(f) != 0 && ok && !err)
        err = errno;
    if (ok && !err && rename(tmp, path) != 0)
        err = errno;
    if (!ok || err) {
        unlink(tmp);
        if (err) {
            fp_error("%s: cannot write: %s (the file is left as it was)", path, strerror(err));
            return FP_EIO;
        }
    }
    return FP_OK;
}
