#include <string.h>

#include "fleetprint/device.h"
#include "fleetprint/log.h"

fp_status fp_device_choose(const char *want, const fp_device_ops **out)
{
    char why[256] = "";
    int count = 0;
    if (strcmp(want, "auto") == 0) {
        fp_status st = fp_device_cuda.probe(&count, why, sizeof why);
        if (st == FP_OK && count > 0) {
            fp_info("device: auto chose cuda (%d GPU%s visible)", count, count == 1 ? "" : "s");
            *out = &fp_device_cuda;
        } else {
            fp_info("device: auto chose host (%s)", why[0] ? why : "no GPU visible");
            *out = &fp_device_host;
        }
        return FP_OK;
    }
    const fp_device_ops *ops = fp_device_find(want);
    if (!ops) {
        fp_error("unknown device backend '%s' (choose auto, host or cuda)", want);
        return FP_EUSAGE;
    }
    fp_status st = ops->probe(&count, why, sizeof why);
    if (st != FP_OK || count == 0) {
        fp_error("device %s cannot run here: %s", want, why[0] ? why : "no device visible");
        return FP_ENODEV;
    }
    *out = ops;
    return FP_OK;
}
