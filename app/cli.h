#ifndef FLEETPRINT_APP_CLI_H
#define FLEETPRINT_APP_CLI_H
/* Subcommands. Each command's file in app/ defines one const fp_command;
 * commands.c lists them and main dispatches on argv[1]. Only app/ includes
 * this header. */
#include <stdbool.h>
#include <stddef.h>

#include "fleetprint/opts.h"
#include "fleetprint/status.h"

typedef struct fp_world fp_world;

typedef struct fp_command {
    const char *name;
    const char *summary;
    const fp_opt *opts;  /* parsed into a zeroed struct of config_size bytes */
    size_t config_size;
    bool needs_world;    /* true: MPI is started and a world is passed to run */
    /* Runs the command with its parsed, read-only config. world is NULL unless
     * needs_world. Returns the status the process exits with. */
    fp_status (*run)(const void *config, fp_world *world);
    /* NULL, or checks the parsed config before MPI and devices start (names
     * that must exist): FP_EUSAGE, with a one-line error when speak. */
    fp_status (*check)(const void *config, bool speak);
} fp_command;

/* The command table, terminated by a row with name NULL. */
extern const fp_command *const fp_commands[];

/* Look a command up by name; NULL when unknown. */
const fp_command *fp_command_find(const char *name);

/* When argv[0..argc) (the words after the command's name) holds an option that
 * cmd does not take but other commands do, write "option '--X' does not apply
 * to CMD (an option of A, B)" to err and return true; else leave err alone and
 * return false. Used to explain a parse error. */
bool fp_command_foreign_option(const fp_command *cmd, int argc, char **argv, char *err,
                               size_t errlen);

#endif
