/* Device telemetry: NVML loaded at run time with dlopen (its header and
 * library are absent on build machines, so the few entry points used are
 * declared here with NVML's documented C ABI), or CPU sensors from /sys and
 * /proc on the host backend. A missing library, symbol or sensor leaves a
 * field out of the reading; nothing here can crash a run. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleetprint/burnin.h"

/* ---- the NVML entry points used ------------------------------------------------- */

typedef int nvml_ret;                 /* nvmlReturn_t: 0 success */
typedef struct nvml_dev_st *nvml_dev; /* nvmlDevice_t */
typedef struct nvml_evset_st *nvml_evset;
typedef struct nvml_event {           /* nvmlEventData_t */
    nvml_dev device;
    unsigned long long type;
    unsigned long long data;          /* the XID for XID events */
    unsigned int gpu_instance, compute_instance;
} nvml_event;

enum {
    NVML_OK = 0,
    NVML_ERR_TIMEOUT = 10,
    NVML_TEMPERATURE_GPU = 0,
    NVML_CLOCK_SM = 1,
    NVML_MEMORY_ERROR_CORRECTED = 0,
    NVML_MEMORY_ERROR_UNCORRECTED = 1,
    NVML_VOLATILE_ECC = 0,
    NVML_NVLINK_MAX_LINKS = 18,
    NVML_NVLINK_ERROR_COUNTERS = 4, /* DL replay, DL recovery, CRC flit, CRC data */
};
#define NVML_EVENT_XID_CRITICAL 0x8ULL

typedef struct nvml_api {
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    const char *(*error_string)(nvml_ret);
    nvml_ret (*by_index)(unsigned, nvml_dev *);
    nvml_ret (*by_pci)(const char *, nvml_dev *);
    nvml_ret (*temperature)(nvml_dev, int, unsigned *);
    nvml_ret (*power)(nvml_dev, unsigned *);
    nvml_ret (*clock)(nvml_dev, int, unsigned *);
    nvml_ret (*ecc)(nvml_dev, int, int, unsigned long long *);
    nvml_ret (*remapped)(nvml_dev, unsigned *, unsigned *, unsigned *, unsigned *);
    nvml_ret (*clock_reasons)(nvml_dev, unsigned long long *);
    nvml_ret (*pcie_gen)(nvml_dev, unsigned *);
    nvml_ret (*pcie_gen_max)(nvml_dev, unsigned *);
    nvml_ret (*pcie_width)(nvml_dev, unsigned *);
    nvml_ret (*pcie_width_max)(nvml_dev, unsigned *);
    nvml_ret (*pcie_replay)(nvml_dev, unsigned *);
    nvml_ret (*nvlink_state)(nvml_dev, unsigned, int *);
    nvml_ret (*nvlink_errors)(nvml_dev, unsigned, int, unsigned long long *);
    nvml_ret (*evset_create)(nvml_evset *);
    nvml_ret (*register_events)(nvml_dev, unsigned long long, nvml_evset);
    nvml_ret (*evset_wait)(nvml_evset, nvml_event *, unsigned);
    nvml_ret (*evset_free)(nvml_evset);
} nvml_api;

struct fp_telemetry {
    char source[160];
    void *lib;            /* NVML when loaded, else host sensors */
    bool inited;
    nvml_api api;
    nvml_dev dev;
    nvml_evset events;
    double xid_count, last_xid;
    char sysroot[256];
};

/* ---- fields ----------------------------------------------------------------------- */

static const fp_metric tel_metrics[FP_TEL_COUNT] = {
    [FP_TEL_TEMP] = {"temperature", "C", FP_BETTER_LOWER},
    [FP_TEL_POWER] = {"power", "W", FP_BETTER_LOWER},
    [FP_TEL_ECC_CORR] = {"ecc_corrected", "count", FP_BETTER_LOWER},
    [FP_TEL_ECC_UNCORR] = {"ecc_uncorrected", "count", FP_BETTER_LOWER},
    [FP_TEL_REMAP_CORR] = {"remapped_rows_corr", "count", FP_BETTER_LOWER},
    [FP_TEL_REMAP_UNCORR] = {"remapped_rows_uncorr", "count", FP_BETTER_LOWER},
    [FP_TEL_REMAP_PENDING] = {"remap_pending", "flag", FP_BETTER_LOWER},
    [FP_TEL_REMAP_FAILURE] = {"remap_failure", "flag", FP_BETTER_LOWER},
    [FP_TEL_XID] = {"xid_events", "count", FP_BETTER_LOWER},
    [FP_TEL_LAST_XID] = {"last_xid", "xid", FP_BETTER_LOWER},
    [FP_TEL_CLOCK_REASONS] = {"clock_event_reasons", "bits", FP_BETTER_LOWER},
    [FP_TEL_PCIE_GEN] = {"pcie_gen", "gen", FP_BETTER_HIGHER},
    [FP_TEL_PCIE_GEN_MAX] = {"pcie_gen_max", "gen", FP_BETTER_HIGHER},
    [FP_TEL_PCIE_WIDTH] = {"pcie_width", "lanes", FP_BETTER_HIGHER},
    [FP_TEL_PCIE_WIDTH_MAX] = {"pcie_width_max", "lanes", FP_BETTER_HIGHER},
    [FP_TEL_PCIE_REPLAY] = {"pcie_replays", "count", FP_BETTER_LOWER},
    [FP_TEL_NVLINK_ACTIVE] = {"nvlink_active", "links", FP_BETTER_HIGHER},
    [FP_TEL_NVLINK_ERRORS] = {"nvlink_errors", "count", FP_BETTER_LOWER},
    [FP_TEL_CPU_TEMP] = {"cpu_temperature", "C", FP_BETTER_LOWER},
    [FP_TEL_CPU_MHZ] = {"cpu_frequency", "MHz", FP_BETTER_HIGHER},
    [FP_TEL_SM_CLOCK] = {"sm_clock", "MHz", FP_BETTER_HIGHER},
};

const fp_metric *fp_tel_metric(int field)
{
    return field >= 0 && field < FP_TEL_COUNT ? &tel_metrics[field] : NULL;
}

/* NVML clock-event reason bits and their names. */
static const struct {
    uint64_t bit;
    const char *name;
    bool throttle;
} reason_bits[] = {
    {0x1, "GpuIdle", false},
    {0x2, "ApplicationsClocksSetting", false},
    {0x4, "SwPowerCap", true},
    {0x8, "HwSlowdown", true},
    {0x10, "SyncBoost", false},
    {0x20, "SwThermalSlowdown", true},
    {0x40, "HwThermalSlowdown", true},
    {0x80, "HwPowerBrakeSlowdown", true},
    {0x100, "DisplayClockSetting", false},
};

uint64_t fp_tel_throttle_mask(void)
{
    uint64_t m = 0;
    for (size_t i = 0; i < sizeof reason_bits / sizeof reason_bits[0]; i++)
        if (reason_bits[i].throttle)
            m |= reason_bits[i].bit;
    return m;
}

char *fp_tel_reasons_text(uint64_t reasons, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof reason_bits / sizeof reason_bits[0]; i++) {
        if (!(reasons & reason_bits[i].bit) || !reason_bits[i].throttle)
            continue;
        int w = snprintf(buf + at, len - at, "%s%s", at ? "," : "", reason_bits[i].name);
        if (w < 0 || (size_t)w >= len - at)
            break;
        at += (size_t)w;
    }
    return buf;
}

/* ---- NVML ------------------------------------------------------------------------- */

static void *sym(void *lib, const char *a, const char *b)
{
    void *p = dlsym(lib, a);
    return p || !b ? p : dlsym(lib, b);
}

/* Resolve the entry points; only init, shutdown and a device lookup are
 * required, the rest leave their fields out when missing. */
static bool nvml_resolve(void *lib, nvml_api *a)
{
    /* POSIX guarantees a dlsym result converts to a function pointer */
#define RESOLVE(field, name, alt) *(void **)(&a->field) = sym(lib, name, alt)
    RESOLVE(init, "nvmlInit_v2", "nvmlInit");
    RESOLVE(shutdown, "nvmlShutdown", NULL);
    RESOLVE(error_string, "nvmlErrorString", NULL);
    RESOLVE(by_index, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    RESOLVE(by_pci, "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
    RESOLVE(temperature, "nvmlDeviceGetTemperature", NULL);
    RESOLVE(power, "nvmlDeviceGetPowerUsage", NULL);
    RESOLVE(clock, "nvmlDeviceGetClockInfo", NULL);
    RESOLVE(ecc, "nvmlDeviceGetTotalEccErrors", NULL);
    RESOLVE(remapped, "nvmlDeviceGetRemappedRows", NULL);
    RESOLVE(clock_reasons, "nvmlDeviceGetCurrentClocksEventReasons",
            "nvmlDeviceGetCurrentClocksThrottleReasons");
    RESOLVE(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration", NULL);
    RESOLVE(pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration", NULL);
    RESOLVE(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth", NULL);
    RESOLVE(pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth", NULL);
    RESOLVE(pcie_replay, "nvmlDeviceGetPcieReplayCounter", NULL);
    RESOLVE(nvlink_state, "nvmlDeviceGetNvLinkState", NULL);
    RESOLVE(nvlink_errors, "nvmlDeviceGetNvLinkErrorCounter", NULL);
    RESOLVE(evset_create, "nvmlEventSetCreate", NULL);
    RESOLVE(register_events, "nvmlDeviceRegisterEvents", NULL);
    RESOLVE(evset_wait, "nvmlEventSetWait_v2", "nvmlEventSetWait");
    RESOLVE(evset_free, "nvmlEventSetFree", NULL);
#undef RESOLVE
    return a->init && a->shutdown && (a->by_index || a->by_pci);
}

static const char *nvml_err(const fp_telemetry *t, nvml_ret rc, char *buf, size_t len)
{
    const char *s = t->api.error_string ? t->api.error_string(rc) : NULL;
    snprintf(buf, len, "%s (NVML error %d)", s ? s : "unknown", rc);
    return buf;
}

static fp_status nvml_open(fp_telemetry *t, const char *path, const char *pci_bus, int index,
                           char *why, size_t len)
{
    char eb[96];
    t->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!t->lib) {
        const char *e = dlerror();
        snprintf(why, len, "cannot load NVML: %s", e ? e : path);
        return FP_EUNSUPPORTED;
    }
    if (!nvml_resolve(t->lib, &t->api)) {
        snprintf(why, len, "%s lacks nvmlInit_v2/nvmlShutdown/nvmlDeviceGetHandleBy*", path);
        return FP_EUNSUPPORTED;
    }
    nvml_ret rc = t->api.init();
    if (rc != NVML_OK) {
        snprintf(why, len, "nvmlInit failed: %s", nvml_err(t, rc, eb, sizeof eb));
        return FP_EUNSUPPORTED;
    }
    t->inited = true;
    rc = -1;
    if (pci_bus && pci_bus[0] && t->api.by_pci)
        rc = t->api.by_pci(pci_bus, &t->dev);
    if (rc != NVML_OK && t->api.by_index)
        rc = t->api.by_index((unsigned)index, &t->dev);
    if (rc != NVML_OK) {
        snprintf(why, len, "NVML has no device %d (bus '%s'): %s", index, pci_bus ? pci_bus : "",
                 nvml_err(t, rc, eb, sizeof eb));
        return FP_EUNSUPPORTED;
    }
    /* XID events: a missing event API only loses the XID fields */
    if (t->api.evset_create && t->api.register_events && t->api.evset_wait &&
        t->api.evset_create(&t->events) == NVML_OK &&
        t->api.register_events(t->dev, NVML_EVENT_XID_CRITICAL, t->events) != NVML_OK) {
        if (t->api.evset_free)
            t->api.evset_free(t->events);
        t->events = NULL;
    }
    snprintf(t->source, sizeof t->source, "nvml %s", path);
    return FP_OK;
}

static void put(fp_tel_reading *r, int f, double v)
{
    r->v[f] = v;
    r->have |= 1u << f;
}

/* The fields that change fast (the sampler's): temperature, power, SM clock. */
static void nvml_read_fast(const fp_telemetry *t, fp_tel_reading *r)
{
    const nvml_api *a = &t->api;
    unsigned u = 0;
    if (a->temperature && a->temperature(t->dev, NVML_TEMPERATURE_GPU, &u) == NVML_OK)
        put(r, FP_TEL_TEMP, u);
    if (a->power && a->power(t->dev, &u) == NVML_OK)
        put(r, FP_TEL_POWER, u / 1000.0);
    if (a->clock && a->clock(t->dev, NVML_CLOCK_SM, &u) == NVML_OK)
        put(r, FP_TEL_SM_CLOCK, u);
}

static void nvml_read(fp_telemetry *t, fp_tel_reading *r)
{
    const nvml_api *a = &t->api;
    unsigned u = 0, u2 = 0, u3 = 0, u4 = 0;
    unsigned long long ull = 0;
    nvml_read_fast(t, r);
    if (a->ecc && a->ecc(t->dev, NVML_MEMORY_ERROR_CORRECTED, NVML_VOLATILE_ECC, &ull) == NVML_OK)
        put(r, FP_TEL_ECC_CORR, (double)ull);
    if (a->ecc && a->ecc(t->dev, NVML_MEMORY_ERROR_UNCORRECTED, NVML_VOLATILE_ECC, &ull) == NVML_OK)
        put(r, FP_TEL_ECC_UNCORR, (double)ull);
    if (a->remapped && a->remapped(t->dev, &u, &u2, &u3, &u4) == NVML_OK) {
        put(r, FP_TEL_REMAP_CORR, u);
        put(r, FP_TEL_REMAP_UNCORR, u2);
        put(r, FP_TEL_REMAP_PENDING, u3 != 0);
        put(r, FP_TEL_REMAP_FAILURE, u4 != 0);
    }
    if (a->clock_reasons && a->clock_reasons(t->dev, &ull) == NVML_OK)
        put(r, FP_TEL_CLOCK_REASONS, (double)ull);
    if (a->pcie_gen && a->pcie_gen(t->dev, &u) == NVML_OK)
        put(r, FP_TEL_PCIE_GEN, u);
    if (a->pcie_gen_max && a->pcie_gen_max(t->dev, &u) == NVML_OK)
        put(r, FP_TEL_PCIE_GEN_MAX, u);
    if (a->pcie_width && a->pcie_width(t->dev, &u) == NVML_OK)
        put(r, FP_TEL_PCIE_WIDTH, u);
    if (a->pcie_width_max && a->pcie_width_max(t->dev, &u) == NVML_OK)
        put(r, FP_TEL_PCIE_WIDTH_MAX, u);
    if (a->pcie_replay && a->pcie_replay(t->dev, &u) == NVML_OK)
        put(r, FP_TEL_PCIE_REPLAY, u);
    if (a->nvlink_state) {
        int active = 0, state = 0;
        unsigned long long errs = 0;
        bool any = false;
        for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
            if (a->nvlink_state(t->dev, l, &state) != NVML_OK)
                continue; /* no such link */
            any = true;
            active += state != 0;
            for (int c = 0; a->nvlink_errors && c < NVML_NVLINK_ERROR_COUNTERS; c++)
                if (a->nvlink_errors(t->dev, l, c, &ull) == NVML_OK)
                    errs += ull;
        }
        if (any) {
            put(r, FP_TEL_NVLINK_ACTIVE, active);
            put(r, FP_TEL_NVLINK_ERRORS, (double)errs);
        }
    }
    if (t->events) {
        nvml_event ev;
        for (int i = 0; i < 1024; i++) { /* drain what is queued, never wait */
            memset(&ev, 0, sizeof ev);
            if (a->evset_wait(t->events, &ev, 0) != NVML_OK)
                break;
            if (ev.type & NVML_EVENT_XID_CRITICAL) {
                t->xid_count++;
                t->last_xid = (double)ev.data;
            }
        }
        put(r, FP_TEL_XID, t->xid_count);
        put(r, FP_TEL_LAST_XID, t->last_xid);
    }
}

/* ---- host sensors ----------------------------------------------------------------- */

static bool read_number(const char *path, double *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fscanf(f, "%lf", out) == 1;
    fclose(f);
    return ok;
}

/* Hottest of /sys/class/thermal/thermal_zone*\/temp and hwmon temp*_input
 * (millidegrees). */
static bool cpu_temperature(const char *root, double *out)
{
    static const char *const dirs[] = {"sys/class/thermal", "sys/class/hwmon"};
    bool found = false;
    double best = 0;
    for (int k = 0; k < 2; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", root, dirs[k]);
        DIR *d = opendir(path);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            for (int i = k == 0 ? 0 : 1; i <= (k == 0 ? 0 : 8); i++) {
                char p[800];
                double v;
                if (k == 0)
                    snprintf(p, sizeof p, "%s/%s/temp", path, e->d_name);
                else
                    snprintf(p, sizeof p, "%s/%s/temp%d_input", path, e->d_name, i);
                if (read_number(p, &v) && v > 0 && v < 200000) {
                    best = !found || v / 1000 > best ? v / 1000 : best;
                    found = true;
                }
            }
        }
        closedir(d);
    }
    *out = best;
    return found;
}

/* Mean of cpufreq scaling_cur_freq (kHz), else of /proc/cpuinfo "cpu MHz". */
static bool cpu_frequency(const char *root, double *out)
{
    double sum = 0;
    int n = 0;
    for (int c = 0; c < 4096; c++) {
        char p[512];
        double v;
        snprintf(p, sizeof p, "%s/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", root, c);
        if (!read_number(p, &v))
            break;
        sum += v / 1000;
        n++;
    }
    if (n == 0) {
        char p[512], line[256];
        snprintf(p, sizeof p, "%s/proc/cpuinfo", root);
        FILE *f = fopen(p, "r");
        while (f && fgets(line, sizeof line, f)) {
            double v;
            if (strncmp(line, "cpu MHz", 7) == 0 && sscanf(strchr(line, ':') ? strchr(line, ':') + 1
                                                                            : "", "%lf", &v) == 1) {
                sum += v;
                n++;
            }
        }
        if (f)
            fclose(f);
    }
    *out = n ? sum / n : 0;
    return n > 0;
}

static void host_read(const fp_telemetry *t, fp_tel_reading *r)
{
    double v;
    if (cpu_temperature(t->sysroot, &v))
        put(r, FP_TEL_CPU_TEMP, v);
    if (cpu_frequency(t->sysroot, &v))
        put(r, FP_TEL_CPU_MHZ, v);
}

/* ---- public ----------------------------------------------------------------------- */

fp_status fp_telemetry_open(fp_telemetry **out, const char *nvml, const char *pci_bus, int index,
                            const char *sysroot, char *why, size_t len)
{
    *out = NULL;
    fp_telemetry *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(why, len, "out of memory");
        return FP_ENOMEM;
    }
    snprintf(t->sysroot, sizeof t->sysroot, "%s", sysroot && *sysroot ? sysroot : "");
    if (nvml) {
        fp_status st = nvml_open(t, nvml, pci_bus, index, why, len);
        if (st != FP_OK) {
            fp_telemetry_close(t);
            return st;
        }
    } else {
        fp_tel_reading r = {0};
        host_read(t, &r);
        if (!r.have) {
            snprintf(why, len, "no CPU temperature or frequency under %s/sys or %s/proc",
                     t->sysroot, t->sysroot);
            fp_telemetry_close(t);
            return FP_EUNSUPPORTED;
        }
        snprintf(t->source, sizeof t->source, "host %.140s/sys", t->sysroot);
    }
    *out = t;
    return FP_OK;
}

const char *fp_telemetry_source(const fp_telemetry *t)
{
    return t ? t->source : "";
}

void fp_telemetry_read(fp_telemetry *t, fp_tel_reading *r)
{
    memset(r, 0, sizeof *r);
    if (!t)
        return;
    if (t->lib)
        nvml_read(t, r);
    else
        host_read(t, r);
}

void fp_telemetry_close(fp_telemetry *t)
{
    if (!t)
        return;
    if (t->events && t->api.evset_free)
        t->api.evset_free(t->events);
    if (t->inited)
        t->api.shutdown();
    if (t->lib)
        dlclose(t->lib);
    free(t);
}

/* ---- sampler thread -------------------------------------------------------------- */

struct fp_tel_sampler {
    fp_telemetry *tel;
    double period;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop;
    fp_tel_stats win;   /* this window so far; mean holds the running sum */
};

static void sample_once(fp_tel_sampler *s)
{
    fp_tel_reading r;
    memset(&r, 0, sizeof r);
    if (s->tel->lib)
        nvml_read_fast(s->tel, &r);
    else
        host_read(s->tel, &r);
    pthread_mutex_lock(&s->lock);
    fp_tel_stats *w = &s->win;
    w->samples++;
    for (int f = 0; f < FP_TEL_COUNT; f++) {
        if (!(r.have & FP_TEL_SAMPLED & 1u << f))
            continue;
        double v = r.v[f];
        bool first = !(w->have & 1u << f);
        w->min[f] = first || v < w->min[f] ? v : w->min[f];
        w->max[f] = first || v > w->max[f] ? v : w->max[f];
        w->mean[f] = (first ? 0 : w->mean[f]) + v;
        w->n[f] = (first ? 0 : w->n[f]) + 1;
        w->have |= 1u << f;
    }
    pthread_mutex_unlock(&s->lock);
}

static void *sampler_main(void *arg)
{
    fp_tel_sampler *s = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        sample_once(s);
        long ns = next.tv_nsec + (long)(s->period * 1e9);
        next.tv_sec += ns / 1000000000L;
        next.tv_nsec = ns % 1000000000L;
        pthread_mutex_lock(&s->lock);
        int rc = 0;
        while (!s->stop && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&s->wake, &s->lock, &next);
        bool stop = s->stop;
        pthread_mutex_unlock(&s->lock);
        if (stop)
            return NULL;
    }
}

fp_status fp_tel_sampler_start(fp_tel_sampler **out, fp_telemetry *t, double period)
{
    fp_status st = FP_OK;
    *out = NULL;
    fp_tel_sampler *s = calloc(1, sizeof *s);
    FP_CHECK_ALLOC(s);
    s->tel = t;
    s->period = period > 0 && period < FP_TEL_PERIOD_MAX ? period : FP_TEL_PERIOD_MAX;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->wake, &ca);
    pthread_condattr_destroy(&ca);
    /* signals stay with the other threads (burn-in's SIGINT flag is polled
     * there): the sampler starts with all of them blocked */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&s->thread, NULL, sampler_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&s->wake);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return FP_EINTERNAL;
    }
    *out = s;
cleanup:
    return st;
}

void fp_tel_sampler_take(fp_tel_sampler *s, fp_tel_stats *out)
{
    pthread_mutex_lock(&s->lock);
    *out = s->win;
    memset(&s->win, 0, sizeof s->win);
    pthread_mutex_unlock(&s->lock);
    for (int f = 0; f < FP_TEL_COUNT; f++)
        if (out->have & 1u << f)
            out->mean[f] /= out->n[f];
}

void fp_tel_sampler_stop(fp_tel_sampler *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = true;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
