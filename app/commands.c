/* The table of subcommands, in the order `fleetprint --help` lists them. */
#include <string.h>

#include "fleetprint/cli.h"

extern const fp_command fp_cmd_run;
extern const fp_command fp_cmd_preflight;
extern const fp_command fp_cmd_burnin;
extern const fp_command fp_cmd_baseline;
extern const fp_command fp_cmd_detect;
extern const fp_command fp_cmd_whatif;
extern const fp_command fp_cmd_trace;
extern const fp_command fp_cmd_admit;
extern const fp_command fp_cmd_store;
extern const fp_command fp_cmd_report;
extern const fp_command fp_cmd_simulate;
extern const fp_command fp_cmd_version;

const fp_command *const fp_commands[] = {
    &fp_cmd_run,
    &fp_cmd_preflight,
    &fp_cmd_burnin,
    &fp_cmd_baseline,
    &fp_cmd_detect,
    &fp_cmd_whatif,
    &fp_cmd_trace,
    &fp_cmd_admit,
    &fp_cmd_report,
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
