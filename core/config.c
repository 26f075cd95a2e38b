/* The configuration record: what each node and device is set up as, read
 * where the platform exposes it (uname, /proc, /sys, NVML through dlopen,
 * the device backend's info), gathered into the run. A field that cannot be
 * read is left out of the record: absent, never zero. */
#include "fleetprint/config.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "fleetprint/log.h"
#include "fleetprint/mem.h"

/* ---- the fields ------------------------------------------------------------------- */

static const fp_cfg_field fields[] = {
    {"kernel", FP_CFG_NODE, "", false},
    {"os", FP_CFG_NODE, "", false},
    {"cpu_model", FP_CFG_NODE, "", false},
    {"cpus", FP_CFG_NODE, "", true},
    {"cpu_governor", FP_CFG_NODE, "", false},
    {"memory_total", FP_CFG_NODE, "MiB", true},
    {"hugepages_total", FP_CFG_NODE, "", false},
    {"hugepage_size", FP_CFG_NODE, "kB", false},
    {"thp", FP_CFG_NODE, "", false},
    {"mpi_version", FP_CFG_NODE, "", false},
    {"ib_rate.", FP_CFG_NODE, "Gb/s", true},
    {"gpu_name", FP_CFG_GPU, "", false},
    {"driver_version", FP_CFG_GPU, "", false},
    {"cuda_runtime", FP_CFG_GPU, "", false},
    {"cuda_driver", FP_CFG_GPU, "", false},
    {"nccl_version", FP_CFG_GPU, "", false},
    {"cublas_version", FP_CFG_GPU, "", false},
    {"vbios", FP_CFG_GPU, "", false},
    {"ecc_mode", FP_CFG_GPU, "", false},
    {"ecc_pending", FP_CFG_GPU, "", false},
    {"persistence_mode", FP_CFG_GPU, "", false},
    {"mig_mode", FP_CFG_GPU, "", false},
    {"mig_pending", FP_CFG_GPU, "", false},
    {"power_limit", FP_CFG_GPU, "W", true},
    {"power_limit_default", FP_CFG_GPU, "W", true},
    {"app_clock_graphics", FP_CFG_GPU, "MHz", true},
    {"app_clock_memory", FP_CFG_GPU, "MHz", true},
    {"pcie_gen", FP_CFG_GPU, "", true},
    {"pcie_gen_max", FP_CFG_GPU, "", false},
    {"pcie_width", FP_CFG_GPU, "lanes", true},
    {"pcie_width_max", FP_CFG_GPU, "lanes", false},
    {"numa_node", FP_CFG_GPU, "", false},
    {"cpu_affinity", FP_CFG_GPU, "", false},
    {"compute_mode", FP_CFG_GPU, "", false},
};
#define NFIELDS (sizeof fields / sizeof fields[0])

const fp_cfg_field *fp_cfg_field_find(const char *name)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        size_t n = strlen(fields[i].name);
        bool prefix = fields[i].name[n - 1] == '.';
        if (prefix ? strncmp(name, fields[i].name, n) == 0 && name[n]
                   : strcmp(name, fields[i].name) == 0)
            return &fields[i];
    }
    return NULL;
}

bool fp_cfg_field_known(const char *name)
{
    return fp_cfg_field_find(name) != NULL;
}

const char *fp_cfg_field_list(void)
{
    return "kernel, os, cpu_model, cpus, cpu_governor, memory_total, hugepages_total, "
           "hugepage_size, thp, mpi_version, ib_rate.<dev>/<port>, gpu_name, driver_version, "
           "cuda_runtime, cuda_driver, nccl_version, cublas_version, vbios, ecc_mode, "
           "ecc_pending, persistence_mode, mig_mode, mig_pending, power_limit, "
           "power_limit_default, app_clock_graphics, app_clock_memory, pcie_gen, pcie_gen_max, "
           "pcie_width, pcie_width_max, numa_node, cpu_affinity, compute_mode";
}

/* ---- lists ------------------------------------------------------------------------ */

fp_status fp_cfg_put(fp_cfg_list *l, int node, int dev, const char *field, const char *value)
{
    fp_status st = FP_OK;
    size_t i = 0;
    while (i < l->n && !(l->item[i].node == node && l->item[i].dev == dev &&
                         strcmp(l->item[i].field, field) == 0))
        i++;
    if (!value[0]) { /* absent: remove */
        if (i < l->n)
            l->item[i] = l->item[--l->n];
        return FP_OK;
    }
    if (i == l->n) {
        fp_cfg_item *t = fp_grow(l->item, &l->cap, l->n + 1, sizeof *t, 32);
        FP_CHECK_ALLOC(t);
        l->item = t;
        memset(&l->item[l->n++], 0, sizeof *t);
    }
    fp_cfg_item *it = &l->item[i];
    it->node = node;
    it->dev = dev;
    snprintf(it->field, sizeof it->field, "%s", field);
    snprintf(it->value, sizeof it->value, "%s", value);
cleanup:
    return st;
}

void fp_cfg_list_free(fp_cfg_list *l)
{
    free(l->item);
    memset(l, 0, sizeof *l);
}

const char *fp_cfg_get(const fp_run *run, int node, int dev, const char *field)
{
    for (size_t i = 0; i < run->nconfig; i++) {
        const fp_cfg_item *it = &run->config[i];
        if (it->node == node && it->dev == dev && strcmp(it->field, field) == 0)
            return it->value;
    }
    return NULL;
}

/* ---- the node ---------------------------------------------------------------------- */

/* The first line of root/path without its newline into out; false when unreadable
 * or empty. */
static bool read_line(const char *root, const char *path, char *out, size_t len)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", root, path);
    FILE *f = fopen(p, "r");
    if (!f)
        return false;
    bool ok = fgets(out, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        out[strcspn(out, "\r\n")] = 0;
    return ok && out[0];
}

/* The value after "key" and its ':' (or '=') in the first matching line of
 * root/path, trimmed, unquoted. */
static bool read_keyed(const char *root, const char *path, const char *key, char sep, char *out,
                       size_t len)
{
    char p[512], line[512];
    snprintf(p, sizeof p, "%s%s", root, path);
    FILE *f = fopen(p, "r");
    bool found = false;
    size_t kl = strlen(key);
    while (f && !found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) != 0)
            continue;
        char *v = line + kl;
        while (*v == ' ' || *v == '\t')
            v++;
        if (*v != sep)
            continue;
        v++;
        while (*v == ' ' || *v == '\t' || *v == '"')
            v++;
        v[strcspn(v, "\"\r\n")] = 0;
        for (size_t e = strlen(v); e > 0 && isspace((unsigned char)v[e - 1]); e--)
            v[e - 1] = 0;
        snprintf(out, len, "%s", v);
        found = out[0] != 0;
    }
    if (f)
        fclose(f);
    return found;
}

static size_t count_cpus(const char *root)
{
    char p[512], line[256];
    snprintf(p, sizeof p, "%s/proc/cpuinfo", root);
    FILE *f = fopen(p, "r");
    size_t n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strncmp(line, "processor", 9) == 0;
    if (f)
        fclose(f);
    return n;
}

/* Every InfiniBand port's rate: ib_rate.<device>/<port> = "400 Gb/sec (4X NDR)". */
static fp_status collect_ib(fp_cfg_list *l, const char *root)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/sys/class/infiniband", root);
    DIR *d = opendir(dir);
    fp_status st = FP_OK;
    struct dirent *e;
    while (d && st == FP_OK && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char pdir[800];
        snprintf(pdir, sizeof pdir, "%s/%s/ports", dir, e->d_name);
        DIR *pd = opendir(pdir);
        struct dirent *pe;
        while (pd && st == FP_OK && (pe = readdir(pd))) {
            char path[1024], rate[96], field[32];
            if (pe->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%s/rate", e->d_name,
                     pe->d_name);
            int n = snprintf(field, sizeof field, "ib_rate.%s/%s", e->d_name, pe->d_name);
            if (n > 0 && (size_t)n < sizeof field && read_line(root, path, rate, sizeof rate))
                st = fp_cfg_put(l, -1, -1, field, rate);
        }
        if (pd)
            closedir(pd);
    }
    if (d)
        closedir(d);
    return st;
}

fp_status fp_cfg_collect_node(fp_cfg_list *l, const char *sysroot)
{
    const char *root = sysroot ? sysroot : "";
    char v[256];
    fp_status st = FP_OK;
    struct utsname u;
    if (root[0] ? read_line(root, "/proc/sys/kernel/osrelease", v, sizeof v)
                : uname(&u) == 0 && snprintf(v, sizeof v, "%s", u.release) > 0)
        FP_CHECK(fp_cfg_put(l, -1, -1, "kernel", v));
    if (read_keyed(root, "/etc/os-release", "PRETTY_NAME", '=', v, sizeof v))
        FP_CHECK(fp_cfg_put(l, -1, -1, "os", v));
    if (read_keyed(root, "/proc/cpuinfo", "model name", ':', v, sizeof v))
        FP_CHECK(fp_cfg_put(l, -1, -1, "cpu_model", v));
    size_t cpus = count_cpus(root);
    if (cpus) {
        snprintf(v, sizeof v, "%zu", cpus);
        FP_CHECK(fp_cfg_put(l, -1, -1, "cpus", v));
    }
    if (read_line(root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", v, sizeof v))
        FP_CHECK(fp_cfg_put(l, -1, -1, "cpu_governor", v));
    static const struct {
        const char *key, *field;
        double scale; /* meminfo's kB into the field's unit */
    } mem[] = {{"MemTotal", "memory_total", 1.0 / 1024},
               {"HugePages_Total", "hugepages_total", 1},
               {"Hugepagesize", "hugepage_size", 1}};
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++) {
        double x;
        if (read_keyed(root, "/proc/meminfo", mem[i].key, ':', v, sizeof v) &&
            sscanf(v, "%lf", &x) == 1) {
            snprintf(v, sizeof v, "%.0f", x * mem[i].scale);
            FP_CHECK(fp_cfg_put(l, -1, -1, mem[i].field, v));
        }
    }
    /* "always [madvise] never": the bracketed one is in force */
    if (read_line(root, "/sys/kernel/mm/transparent_hugepage/enabled", v, sizeof v)) {
        char *a = strchr(v, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b) {
            *b = 0;
            FP_CHECK(fp_cfg_put(l, -1, -1, "thp", a + 1));
        }
    }
    if (!root[0]) {
        char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        if (MPI_Get_library_version(mpi, &len) == MPI_SUCCESS) {
            mpi[strcspn(mpi, ",\n")] = 0;
            FP_CHECK(fp_cfg_put(l, -1, -1, "mpi_version", mpi));
        }
    }
    FP_CHECK(collect_ib(l, root));
cleanup:
    return st;
}

/* ---- a device: NVML ------------------------------------------------------------------ */

/* The NVML entry points the record reads, with NVML's documented C ABI (the
 * header is absent on build machines); any may be missing. */
typedef int nvml_ret;
typedef struct nvml_dev_st *nvml_dev;
typedef struct nvml_api {
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    nvml_ret (*by_pci)(const char *, nvml_dev *);
    nvml_ret (*by_index)(unsigned, nvml_dev *);
    nvml_ret (*driver)(char *, unsigned);
    nvml_ret (*cuda_driver)(int *);
    nvml_ret (*name)(nvml_dev, char *, unsigned);
    nvml_ret (*vbios)(nvml_dev, char *, unsigned);
    nvml_ret (*ecc)(nvml_dev, int *, int *);
    nvml_ret (*persistence)(nvml_dev, int *);
    nvml_ret (*mig)(nvml_dev, unsigned *, unsigned *);
    nvml_ret (*power_enforced)(nvml_dev, unsigned *);
    nvml_ret (*power_default)(nvml_dev, unsigned *);
    nvml_ret (*app_clock)(nvml_dev, int, unsigned *);
    nvml_ret (*pcie_gen)(nvml_dev, unsigned *);
    nvml_ret (*pcie_gen_max)(nvml_dev, unsigned *);
    nvml_ret (*pcie_width)(nvml_dev, unsigned *);
    nvml_ret (*pcie_width_max)(nvml_dev, unsigned *);
    nvml_ret (*compute_mode)(nvml_dev, int *);
} nvml_api;

enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_MEM = 2 };

static void nvml_resolve(void *lib, nvml_api *a)
{
    static const struct {
        size_t off;
        const char *name, *alt;
    } syms[] = {
        {offsetof(nvml_api, init), "nvmlInit_v2", "nvmlInit"},
        {offsetof(nvml_api, shutdown), "nvmlShutdown", NULL},
        {offsetof(nvml_api, by_pci), "nvmlDeviceGetHandleByPciBusId_v2",
         "nvmlDeviceGetHandleByPciBusId"},
        {offsetof(nvml_api, by_index), "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"},
        {offsetof(nvml_api, driver), "nvmlSystemGetDriverVersion", NULL},
        {offsetof(nvml_api, cuda_driver), "nvmlSystemGetCudaDriverVersion_v2",
         "nvmlSystemGetCudaDriverVersion"},
        {offsetof(nvml_api, name), "nvmlDeviceGetName", NULL},
        {offsetof(nvml_api, vbios), "nvmlDeviceGetVbiosVersion", NULL},
        {offsetof(nvml_api, ecc), "nvmlDeviceGetEccMode", NULL},
        {offsetof(nvml_api, persistence), "nvmlDeviceGetPersistenceMode", NULL},
        {offsetof(nvml_api, mig), "nvmlDeviceGetMigMode", NULL},
        {offsetof(nvml_api, power_enforced), "nvmlDeviceGetEnforcedPowerLimit",
         "nvmlDeviceGetPowerManagementLimit"},
        {offsetof(nvml_api, power_default), "nvmlDeviceGetPowerManagementDefaultLimit", NULL},
        {offsetof(nvml_api, app_clock), "nvmlDeviceGetApplicationsClock", NULL},
        {offsetof(nvml_api, pcie_gen), "nvmlDeviceGetCurrPcieLinkGeneration", NULL},
        {offsetof(nvml_api, pcie_gen_max), "nvmlDeviceGetMaxPcieLinkGeneration", NULL},
        {offsetof(nvml_api, pcie_width), "nvmlDeviceGetCurrPcieLinkWidth", NULL},
        {offsetof(nvml_api, pcie_width_max), "nvmlDeviceGetMaxPcieLinkWidth", NULL},
        {offsetof(nvml_api, compute_mode), "nvmlDeviceGetComputeMode", NULL},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(lib, syms[i].name);
        if (!p && syms[i].alt)
            p = dlsym(lib, syms[i].alt);
        /* POSIX guarantees a dlsym result converts to a function pointer */
        memcpy((char *)a + syms[i].off, &p, sizeof p);
    }
}

static const char *enabled(int mode)
{
    return mode ? "Enabled" : "Disabled";
}

/* NVML's fields of the device at pci_bus (else index) into l. */
static fp_status collect_nvml(fp_cfg_list *l, const fp_device_info *info, const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fp_debug("config: no NVML (%s): its fields are left out", path);
        return FP_OK;
    }
    nvml_api a;
    memset(&a, 0, sizeof a);
    nvml_resolve(lib, &a);
    fp_status st = FP_OK;
    nvml_dev d = NULL;
    bool up = a.init && a.shutdown && a.init() == 0;
    bool found = up && ((a.by_pci && info->pci_bus[0] && a.by_pci(info->pci_bus, &d) == 0) ||
                        (a.by_index && a.by_index((unsigned)info->index, &d) == 0));
    char s[96];
    unsigned u = 0, u2 = 0;
    int m = 0, m2 = 0;
    int dev = info->index;
#define PUT(field, ...)                                                                    \
    do {                                                                                   \
        snprintf(s, sizeof s, __VA_ARGS__);                                                \
        FP_CHECK(fp_cfg_put(l, -1, dev, field, s));                                        \
    } while (0)
    if (up && a.driver && a.driver(s, sizeof s) == 0)
        FP_CHECK(fp_cfg_put(l, -1, dev, "driver_version", s));
    if (up && a.cuda_driver && a.cuda_driver(&m) == 0 && m > 0)
        PUT("cuda_driver", "%d.%d", m / 1000, m % 1000 / 10);
    if (found) {
        if (a.name && a.name(d, s, sizeof s) == 0)
            FP_CHECK(fp_cfg_put(l, -1, dev, "gpu_name", s));
        if (a.vbios && a.vbios(d, s, sizeof s) == 0)
            FP_CHECK(fp_cfg_put(l, -1, dev, "vbios", s));
        if (a.ecc && a.ecc(d, &m, &m2) == 0) {
            PUT("ecc_mode", "%s", enabled(m));
            PUT("ecc_pending", "%s", enabled(m2));
        }
        if (a.persistence && a.persistence(d, &m) == 0)
            PUT("persistence_mode", "%s", enabled(m));
        if (a.mig && a.mig(d, &u, &u2) == 0) {
            PUT("mig_mode", "%s", enabled((int)u));
            PUT("mig_pending", "%s", enabled((int)u2));
        }
        if (a.power_enforced && a.power_enforced(d, &u) == 0)
            PUT("power_limit", "%.0f", u / 1000.0);
        if (a.power_default && a.power_default(d, &u) == 0)
            PUT("power_limit_default", "%.0f", u / 1000.0);
        if (a.app_clock && a.app_clock(d, NVML_CLOCK_GRAPHICS, &u) == 0)
            PUT("app_clock_graphics", "%u", u);
        if (a.app_clock && a.app_clock(d, NVML_CLOCK_MEM, &u) == 0)
            PUT("app_clock_memory", "%u", u);
        if (a.pcie_gen && a.pcie_gen(d, &u) == 0)
            PUT("pcie_gen", "%u", u);
        if (a.pcie_gen_max && a.pcie_gen_max(d, &u) == 0)
            PUT("pcie_gen_max", "%u", u);
        if (a.pcie_width && a.pcie_width(d, &u) == 0)
            PUT("pcie_width", "%u", u);
        if (a.pcie_width_max && a.pcie_width_max(d, &u) == 0)
            PUT("pcie_width_max", "%u", u);
        static const char *const modes[] = {"Default", "Exclusive_Thread", "Prohibited",
                                            "Exclusive_Process"};
        if (a.compute_mode && a.compute_mode(d, &m) == 0 && m >= 0 && m < 4)
            PUT("compute_mode", "%s", modes[m]);
    }
#undef PUT
cleanup:
    if (up)
        a.shutdown();
    dlclose(lib);
    return st;
}

fp_status fp_cfg_collect_device(fp_cfg_list *l, const fp_device_info *info, const char *nvml,
                                const char *sysroot)
{
    const char *root = sysroot ? sysroot : "";
    int dev = info->index;
    fp_status st = FP_OK;
    /* the backend's own, first: NVML's driver and name replace them below */
    if (info->driver_version[0] && !strchr(info->driver_version, '('))
        FP_CHECK(fp_cfg_put(l, -1, dev, "driver_version", info->driver_version));
    static const struct {
        const char *field;
        size_t off;
    } own[] = {{"gpu_name", offsetof(fp_device_info, model)},
               {"cuda_runtime", offsetof(fp_device_info, runtime_version)},
               {"cuda_driver", offsetof(fp_device_info, driver_api_version)},
               {"nccl_version", offsetof(fp_device_info, nccl_version)},
               {"cublas_version", offsetof(fp_device_info, blas_version)}};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        FP_CHECK(fp_cfg_put(l, -1, dev, own[i].field, (const char *)info + own[i].off));
    if (!nvml || !nvml[0])
        nvml = getenv("FLEETPRINT_NVML");
    FP_CHECK(collect_nvml(l, info, nvml && nvml[0] ? nvml : "libnvidia-ml.so.1"));
    /* sysfs names the PCI device with a 4-digit domain: "0000:17:00.0" */
    const char *bus = info->pci_bus;
    size_t bl = strlen(bus);
    if (bl >= 12) {
        char path[160], v[96];
        char lower[16];
        snprintf(lower, sizeof lower, "%s", bus + bl - 12);
        for (char *p = lower; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", lower);
        if (read_line(root, path, v, sizeof v))
            FP_CHECK(fp_cfg_put(l, -1, dev, "numa_node", v));
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/local_cpulist", lower);
        if (read_line(root, path, v, sizeof v))
            FP_CHECK(fp_cfg_put(l, -1, dev, "cpu_affinity", v));
    }
cleanup:
    return st;
}

/* ---- gathering ------------------------------------------------------------------------ */

/* The config injections of inj that this rank applies: node fields of any
 * rank of its node when it leads the node, device fields of its own. */
static fp_status apply_injections(fp_world *w, const fp_device_info *dev,
                                  const fp_inject_set *inj, fp_cfg_list *l)
{
    int me = fp_world_rank(w), node = fp_world_node_of(w, me);
    bool leader = fp_world_node_leader(w, node) == me;
    fp_status st = FP_OK;
    for (int i = 0; inj && i < inj->n; i++) {
        const fp_injection *in = &inj->item[i];
        if (in->kind != FP_INJ_CONFIG)
            continue;
        const fp_cfg_field *f = fp_cfg_field_find(in->field);
        if (!f)
            continue;
        if (f->scope == FP_CFG_NODE && leader && fp_world_node_of(w, in->rank) == node) {
            FP_CHECK(fp_cfg_put(l, -1, -1, in->field, in->value));
            fp_info("injected config on node %s: %s = %s", fp_world_my_node(w), in->field,
                    in->value);
        } else if (f->scope == FP_CFG_GPU && in->rank == me) {
            if (!dev) {
                fp_warn("--inject config:rank=%d,%s=...: a device field, and rank %d has no "
                        "device (host backend): not injected", me, in->field, me);
                continue;
            }
            FP_CHECK(fp_cfg_put(l, -1, dev->index, in->field, in->value));
            fp_info("injected config on rank %d (device %d): %s = %s", me, dev->index, in->field,
                    in->value);
        }
    }
cleanup:
    return st;
}

fp_status fp_cfg_gather(fp_world *w, const fp_device_info *dev, const fp_inject_set *inj,
                        fp_run *run)
{
    fp_status st = FP_OK;
    fp_cfg_list mine = {0};
    int size = fp_world_size(w), me = fp_world_rank(w);
    int *counts = calloc((size_t)size, sizeof *counts), *bytes = NULL, *displs = NULL;
    fp_cfg_item *all = NULL;
    FP_CHECK_ALLOC(counts);
    if (fp_world_node_leader(w, fp_world_node_of(w, me)) == me)
        FP_CHECK(fp_cfg_collect_node(&mine, ""));
    if (dev)
        FP_CHECK(fp_cfg_collect_device(&mine, dev, NULL, ""));
    FP_CHECK(apply_injections(w, dev, inj, &mine));
    int n = (int)mine.n;
    FP_CHECK(fp_world_allgather(w, &n, counts, (int)sizeof n, "gathering configuration counts"));
    size_t total = 0;
    for (int r = 0; r < size; r++)
        total += (size_t)counts[r];
    if (me == 0) {
        bytes = calloc((size_t)size, sizeof *bytes);
        displs = calloc((size_t)size, sizeof *displs);
        all = malloc((total ? total : 1) * sizeof *all);
        FP_CHECK_ALLOC(bytes);
        FP_CHECK_ALLOC(displs);
        FP_CHECK_ALLOC(all);
        for (int r = 0, off = 0; r < size; r++) {
            bytes[r] = counts[r] * (int)sizeof *all;
            displs[r] = off;
            off += bytes[r];
        }
    }
    MPI_Request req;
    FP_CHECK_MPI(MPI_Igatherv(mine.item, n * (int)sizeof *mine.item, MPI_BYTE, all, bytes,
                              displs, MPI_BYTE, 0, fp_world_comm(w), &req));
    FP_CHECK(fp_world_wait(w, &req, 1, "gathering configuration records"));
    if (me == 0) {
        for (int r = 0, k = 0; r < size; r++)
            for (int i = 0; i < counts[r]; i++, k++) {
                all[k].node = fp_world_node_of(w, r);
                all[k].field[sizeof all[k].field - 1] = 0;
                all[k].value[sizeof all[k].value - 1] = 0;
            }
        FP_CHECK(fp_run_set_config(run, all, total));
    }
cleanup:
    fp_cfg_list_free(&mine);
    free(counts);
    free(bytes);
    free(displs);
    free(all);
    return st;
}
