/* A stand-in for libnvidia-ml.so: exports the NVML entry points fleetprint
 * loads, with NVML's C ABI, and reports a healthy GPU -- except on the node
 * named by $FAKE_NVML_FAULTY_NODE (compared with $FLEETPRINT_NODE), whose
 * GPU gains uncorrected ECC errors on every read after the first, raises
 * XID 79 ("fallen off the bus") once, and reports HW thermal slowdown.
 * Built only for tests. */
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct fake_dev *nvmlDevice_t;
typedef struct fake_set *nvmlEventSet_t;
typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

enum { OK = 0, NOT_INIT = 1, INVALID = 2, TIMEOUT = 10 };

struct fake_dev {
    int faulty;
    unsigned reads;       /* uncorrected-ECC queries so far */
    int xid_sent;
};

/* one device per process, like the single GPU a rank owns */
static struct fake_dev dev0;
static int inited;

static int faulty_here(void)
{
    const char *bad = getenv("FAKE_NVML_FAULTY_NODE"), *me = getenv("FLEETPRINT_NODE");
    return bad && me && strcmp(bad, me) == 0;
}

/* the prototypes keep -Wmissing-prototypes quiet in a library without a header */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t r);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *dev);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *t);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *mhz);
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
                                         unsigned long long *count);
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *corr, unsigned *unc,
                                       unsigned *pending, unsigned *failure);
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r);
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned *v);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned *v);
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned *v);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned *v);
nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned *v);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int *active);
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned link, int counter,
                                             unsigned long long *v);
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                      nvmlEventSet_t set);
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned timeout_ms);
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);

nvmlReturn_t nvmlInit_v2(void)
{
    inited = 1;
    memset(&dev0, 0, sizeof dev0);
    dev0.faulty = faulty_here();
    return OK;
}

nvmlReturn_t nvmlShutdown(void)
{
    inited = 0;
    return OK;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
    return r == OK ? "Success" : r == TIMEOUT ? "Timeout" : "Fake error";
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *dev)
{
    if (!inited)
        return NOT_INIT;
    if (index != 0)
        return INVALID;
    *dev = &dev0;
    return OK;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *t)
{
    *t = d->faulty ? 84 : 61;
    return OK;
}

/* Power cycles through 300, 400, ..., 700 W call by call, so the burn-in
 * sampler's per-window minimum, mean and maximum differ. */
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw)
{
    static _Atomic unsigned calls;
    *mw = 300000 + 100000 * (calls++ % 5);
    return OK;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *mhz)
{
    *mhz = type == 1 ? 1980 : 2619; /* NVML_CLOCK_SM, else memory */
    return OK;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
                                         unsigned long long *count)
{
    if (type == 1) {
        *count = d->faulty ? 2ULL * d->reads : 0;
        d->reads++;
    } else {
        *count = 0;
    }
    return OK;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *corr, unsigned *unc,
                                       unsigned *pending, unsigned *failure)
{
    *corr = 0;
    *unc = d->faulty && d->reads > 1 ? 1 : 0;
    *pending = *unc;
    *failure = 0;
    return OK;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r)
{
    *r = d->faulty && d->reads > 1 ? 0x40ULL : 0; /* HwThermalSlowdown */
    return OK;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned *v)
{
    *v = 5;
    return OK;
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned *v)
{
    *v = 5;
    return OK;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned *v)
{
    *v = 16;
    return OK;
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned *v)
{
    *v = 16;
    return OK;
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned *v)
{
    *v = 0;
    return OK;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int *active)
{
    if (link >= 18)
        return INVALID;
    *active = 1;
    return OK;
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned link, int counter,
                                             unsigned long long *v)
{
    *v = 0;
    return OK;
}

static struct fake_set {
    int registered;
} set0;

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    *set = &set0;
    return OK;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set)
{
    set->registered = (types & 0x8ULL) != 0;
    return OK;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned timeout_ms)
{
    if (!set->registered || !dev0.faulty || dev0.xid_sent || dev0.reads < 2)
        return TIMEOUT;
    dev0.xid_sent = 1;
    memset(data, 0, sizeof *data);
    data->device = &dev0;
    data->eventType = 0x8ULL;
    data->eventData = 79;
    return OK;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    set->registered = 0;
    return OK;
}

/* ---- the configuration record's entry points (core/config.c): an H100-like
 * set-up, the same on every node -- the tests inject what differs ------------ */

nvmlReturn_t nvmlSystemGetDriverVersion(char *out, unsigned len);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *out, unsigned len);
nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *out, unsigned len);
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int *current, int *pending);
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *mode);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *current, unsigned *pending);
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned *mw);
nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned *mw);
nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t d, int type, unsigned *mhz);
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, int *mode);

static nvmlReturn_t text(char *out, unsigned len, const char *s)
{
    if (!inited)
        return NOT_INIT;
    if (!out || strlen(s) + 1 > len)
        return INVALID;
    memcpy(out, s, strlen(s) + 1);
    return OK;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *out, unsigned len)
{
    return text(out, len, "580.159.04");
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    *v = 13000;
    return inited ? OK : NOT_INIT;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *out, unsigned len)
{
    (void)d;
    return text(out, len, "Emulated GPU (fpemu)");
}

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *out, unsigned len)
{
    (void)d;
    return text(out, len, "96.00.99.00.01");
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int *current, int *pending)
{
    (void)d;
    *current = *pending = 1;
    return inited ? OK : NOT_INIT;
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *mode)
{
    (void)d;
    *mode = 1;
    return inited ? OK : NOT_INIT;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *current, unsigned *pending)
{
    (void)d;
    *current = *pending = 0;
    return inited ? OK : NOT_INIT;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned *mw)
{
    (void)d;
    *mw = 700000;
    return inited ? OK : NOT_INIT;
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned *mw)
{
    (void)d;
    *mw = 700000;
    return inited ? OK : NOT_INIT;
}

nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t d, int type, unsigned *mhz)
{
    (void)d;
    *mhz = type == 2 ? 2619 : 1980; /* memory, graphics */
    return inited ? OK : NOT_INIT;
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, int *mode)
{
    (void)d;
    *mode = 0;
    return inited ? OK : NOT_INIT;
}
