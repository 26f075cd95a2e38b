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

/* ---- GEMM types ------------------------------------------------------------------ */

const char *fp_gemm_type_name(fp_gemm_type t)
{
    static const char *const names[FP_GEMM_TYPE_COUNT] = {"f64", "f32", "tf32",
                                                           "f16", "bf16", "fp8"};
    return (unsigned)t < FP_GEMM_TYPE_COUNT ? names[t] : "?";
}

size_t fp_gemm_in_size(fp_gemm_type t)
{
    switch (t) {
    case FP_GEMM_F64: return 8;
    case FP_GEMM_F16:
    case FP_GEMM_BF16: return 2;
    case FP_GEMM_FP8: return 1;
    default: return 4;
    }
}

size_t fp_gemm_out_size(fp_gemm_type t)
{
    return t == FP_GEMM_F64 ? 8 : 4;
}
