#ifndef FLEETPRINT_CONFIG_H
#define FLEETPRINT_CONFIG_H
/* The configuration record of a run: per node (kernel and OS, CPU model and
 * governor, memory, hugepages, MPI library, InfiniBand port rates) and per
 * device (driver, CUDA runtime and driver API, NCCL, cuBLAS, name, VBIOS,
 * ECC, persistence and MIG modes, power limits, application clocks, PCIe
 * link, NUMA node, CPU affinity, compute mode), collected by each rank where
 * the platform exposes it and gathered into the run (fp_run.config, an
 * fp_cfg_item per field). A field the platform lacks is absent, never zero.
 * NVML is loaded with dlopen ($FLEETPRINT_NVML, else libnvidia-ml.so.1);
 * the node's fields come from uname, /proc and /sys. docs/config.md lists
 * every field and its source. */
#include <stdbool.h>
#include <stddef.h>

#include "fleetprint/device.h"
#include "fleetprint/inject.h"
#include "fleetprint/sample.h"
#include "fleetprint/status.h"
#include "fleetprint/world.h"

/* Where a field belongs. */
typedef enum fp_cfg_scope { FP_CFG_NODE, FP_CFG_GPU } fp_cfg_scope;

/* What the record knows of a field: its scope, its unit ("" for text) and
 * whether it is a level where lower is worse (a power limit, a clock, a
 * PCIe link, memory): only a value below its peers' counts as a fault. */
typedef struct fp_cfg_field {
    const char *name; /* "ib_rate." is a prefix: one field per port */
    fp_cfg_scope scope;
    const char *unit;
    bool floor;
} fp_cfg_field;

/* The field named name (an "ib_rate.<dev>/<port>" matches its prefix), or
 * NULL when the record has no such field. */
const fp_cfg_field *fp_cfg_field_find(const char *name);
/* Whether name is a field of the record (fp_cfg_field_find != NULL). */
bool fp_cfg_field_known(const char *name);
/* Every field name, comma-separated, for messages. */
const char *fp_cfg_field_list(void);

/* A growing list of items. */
typedef struct fp_cfg_list {
    fp_cfg_item *item;
    size_t n, cap;
} fp_cfg_list;

/* Set field of (node, dev) to value in l, replacing an item already there;
 * a value of "" removes it (absent). FP_ENOMEM. */
fp_status fp_cfg_put(fp_cfg_list *l, int node, int dev, const char *field, const char *value);
void fp_cfg_list_free(fp_cfg_list *l);

/* The node's fields, read under sysroot ("" for /): uname (kernel), the
 * os-release file (os), cpuinfo (cpu_model, cpus), cpufreq (cpu_governor),
 * meminfo (memory_total, hugepages_total, hugepage_size), the THP setting,
 * the MPI library (mpi_version, only with an empty sysroot) and every
 * InfiniBand port's rate (class/infiniband). Items get node -1, dev -1.
 * What cannot be read is left out. FP_ENOMEM. */
fp_status fp_cfg_collect_node(fp_cfg_list *l, const char *sysroot);

/* A device's fields from its backend's info and NVML (nvml: the library to
 * dlopen, NULL: $FLEETPRINT_NVML, else libnvidia-ml.so.1), its NUMA node and
 * CPU affinity from sysfs under sysroot. Items get node -1, dev info->index.
 * Without NVML only what the backend knows. FP_ENOMEM. */
fp_status fp_cfg_collect_device(fp_cfg_list *l, const fp_device_info *info, const char *nvml,
                                const char *sysroot);

/* This rank's record into run->config on rank 0, every rank taking part:
 * the node's fields from the lowest rank of each node, each rank's device's
 * fields where dev is not NULL (device backends other than host), with the
 * config injections of inj applied (a node field by the node's lowest rank
 * for any rank of the node, a device field by the rank itself). Deadline as
 * every step of w. FP_ENOMEM, FP_ETIMEOUT. */
fp_status fp_cfg_gather(fp_world *w, const fp_device_info *dev, const fp_inject_set *inj,
                        fp_run *run);

/* The value of field for (node, dev) in run's record, or NULL when absent. */
const char *fp_cfg_get(const fp_run *run, int node, int dev, const char *field);

#endif
