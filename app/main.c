/* fleetprint: validate GPU clusters. Dispatches argv[1] to a subcommand.
 * Only this file ends the process or calls MPI_Abort. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "fleetprint/store.h"
#include "fleetprint/world.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: fleetprint <command> [options]\n\ncommands:\n");
    for (int i = 0; fp_commands[i]; i++)
        fprintf(out, "  %-10s %s\n", fp_commands[i]->name, fp_commands[i]->summary);
    fprintf(out, "\n'fleetprint <command> --help' describes a command's options; 'fleetprint --man'\n"
                 "writes the manual page, 'fleetprint --completion bash' the bash completion.\n"
                 "exit codes: 0 pass, 1 fail found, 2 usage or input error, 3 cannot run here,\n"
                 "            4 internal error or timeout, 5 interrupted (partial results kept)\n");
}

/* Before MPI starts, tell from the launcher's environment whether this is a
 * rank other than 0, so usage errors print once. */
static int launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                       "SLURM_PROCID", NULL};
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

int main(int argc, char **argv)
{
    fp_store_process_init();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--man") == 0) {
        fp_print_man(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--completion") == 0 && argc == 3 && strcmp(argv[2], "bash") == 0) {
        fp_print_bash_completion(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0)
        argv[1] = "version";
    bool speak = launcher_rank() == 0;
    const fp_command *cmd = fp_command_find(argv[1]);
    if (!cmd) {
        if (speak)
            fprintf(stderr, "fleetprint: unknown command '%s' (see fleetprint --help)\n", argv[1]);
        return 2;
    }
    void *cfg = calloc(1, cmd->config_size);
    if (!cfg)
        return 4;
    char err[512];
    fp_status st = fp_opts_parse(cmd->opts, argc - 2, argv + 2, cfg, err, sizeof err);
    if (st != FP_OK) {
        if (err[0])
            fp_command_foreign_option(cmd, argc - 2, argv + 2, err, sizeof err);
        if (speak && !err[0])
            fp_opts_usage(stdout, cmd->name, cmd->summary, cmd->opts);
        else if (speak)
            fprintf(stderr, "fleetprint %s: %s\n", cmd->name, err);
        free(cfg);
        return err[0] ? fp_status_exit_code(st) : 0;
    }
    fp_world *world = NULL;
    if (cmd->check && cmd->check(cfg, speak) != FP_OK) {
        free(cfg);
        return fp_status_exit_code(FP_EUSAGE);
    }
    if (cmd->needs_world)
        st = fp_world_open(&world, &argc, &argv);
    if (st == FP_OK)
        st = cmd->run(cfg, world);
    int code = fp_status_exit_code(st);
    if (fp_world_close(world, st))
        MPI_Abort(MPI_COMM_WORLD, code);
    free(cfg);
    return code;
}
