/* The table of subcommands. A command not built yet is listed with
 * UNBUILT(): it answers --help and exits 2 saying it is not built. */
#include <string.h>

#include "fleetprint/cli.h"
#include "fleetprint/log.h"

extern const fp_command fp_cmd_run;
extern const fp_command fp_cmd_preflight;
extern const fp_command fp_cmd_burnin;
extern const fp_command fp_cmd_baseline;
extern const fp_command fp_cmd_detect;
extern const fp_command fp_cmd_whatif;
extern const fp_command fp_cmd_admit;
extern const fp_command fp_cmd_store;
extern const fp_command fp_cmd_simulate;
extern const fp_command fp_cmd_version;

static const fp_opt no_opts[] = {{0}};

static fp_status not_built(const void *config, fp_world *world)
{
    fp_error("this subcommand is not built yet in this version");
    return FP_ENOTBUILT;
}

#define UNBUILT(id, cmd, text)                                                             \
    static const fp_command id = {.name = cmd, .summary = text, .opts = no_opts,           \
                                  .config_size = 1, .run = not_built}

UNBUILT(cmd_report, "report", "render stored results (not built yet)");

const fp_command *const fp_commands[] = {
    &fp_cmd_run,
    &fp_cmd_preflight,
    &fp_cmd_burnin,
    &fp_cmd_baseline,
    &fp_cmd_detect,
    &fp_cmd_whatif,
    &fp_cmd_admit,
    &cmd_report,
    &fp_cmd_store,
    &fp_cmd_simulate,
    &fp_cmd_version,
    NULL,
};

const fp_command *fp_command_find(const char *name)
{
    for (int i = 0; fp_commands[i]; i++)
        if (strcmp(fp_commands[i]->name, name) == 0)
            return fp_commands[i];
    return NULL;
}
