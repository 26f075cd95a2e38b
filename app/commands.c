/* The table of subcommands, in the order `fleetprint --help` lists them. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

extern const fp_command fp_cmd_run;
extern const fp_command fp_cmd_preflight;
extern const fp_command fp_cmd_isolate;
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
    &fp_cmd_isolate,
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

bool fp_command_foreign_option(const fp_command *cmd, int argc, char **argv, char *err,
                               size_t errlen)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return false;
        if (a[0] != '-' || !a[1] || isdigit((unsigned char)a[1]))
            continue; /* a positional argument or a negative number */
        const fp_opt *o = fp_opts_find(cmd->opts, a);
        if (o) {
            if (o->type != FP_OPT_FLAG && !strchr(a, '='))
                i++; /* its value */
            continue;
        }
        char owners[256] = "";
        size_t len = 0;
        for (int k = 0; fp_commands[k]; k++)
            if (fp_commands[k] != cmd && fp_opts_find(fp_commands[k]->opts, a) && len < sizeof owners)
                len += (size_t)snprintf(owners + len, sizeof owners - len, "%s%s", len ? ", " : "",
                                        fp_commands[k]->name);
        if (!owners[0])
            return false; /* no command's option: the parser's "unknown option" stands */
        int name_len = (int)strcspn(a, "=");
        snprintf(err, errlen, "option '%.*s' does not apply to %s (an option of %s)", name_len, a,
                 cmd->name, owners);
        return true;
    }
    return false;
}
