/* fleetprint version: this build's version, backends and library versions. */
#include <hdf5.h>
#include <jansson.h>
#include <mpi.h>
#include <stdio.h>

#include "cli.h"
#include "fleetprint/comm.h"

static fp_status version_run(const void *config, fp_world *world)
{
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(mpi, &len);
    for (int i = 0; i < len; i++)
        if (mpi[i] == '\n' || mpi[i] == ',')
            mpi[i] = 0;
    unsigned maj, min, rel;
    H5get_libversion(&maj, &min, &rel);
    printf("fleetprint %s\n", FP_VERSION);
    printf("device backends:");
    for (int i = 0; fp_device_backends[i]; i++)
        printf(" %s", fp_device_backends[i]->name);
    printf("\ncomm backends:");
    for (int i = 0; fp_comm_backends[i]; i++)
        printf(" %s", fp_comm_backends[i]->name);
    printf("\nmpi: %s\nhdf5: %u.%u.%u\njansson: %s\n", mpi, maj, min, rel, JANSSON_VERSION);
    return FP_OK;
}

static const fp_opt version_opts[] = {{0}};

const fp_command fp_cmd_version = {
    .name = "version",
    .summary = "print the version, the backends built in and library versions",
    .opts = version_opts,
    .config_size = 1,
    .run = version_run,
};
