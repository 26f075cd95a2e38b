#ifndef FLEETPRINT_OPTS_H
#define FLEETPRINT_OPTS_H
/* Command-line options: each command declares a const table of fp_opt rows that
 * say where each value lands in the command's config struct (offsetof). One
 * parser fills the struct once; the command then only reads it (const). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fleetprint/status.h"

#define FP_LIST_MAX 32

/* A repeatable string option (--inject A --inject B); items point into argv. */
typedef struct fp_strlist {
    int n;
    const char *item[FP_LIST_MAX];
} fp_strlist;

typedef enum fp_opt_type {
    FP_OPT_FLAG,       /* bool, no argument */
    FP_OPT_INT,        /* int */
    FP_OPT_DOUBLE,     /* double */
    FP_OPT_STRING,     /* const char * */
    FP_OPT_BYTES,      /* uint64_t; accepts K, M, G, T suffixes (powers of 1024) */
    FP_OPT_SECONDS,    /* double seconds; accepts ms, s, m, h suffixes */
    FP_OPT_LIST,       /* fp_strlist, repeatable */
    FP_OPT_POSITIONAL, /* const char *, filled by bare words in table order */
} fp_opt_type;

typedef struct fp_opt {
    const char *name;   /* long name without dashes; for positionals, the metavar */
    char short_name;    /* single-letter alias or 0 */
    fp_opt_type type;
    size_t offset;      /* offsetof(config struct, field) */
    const char *defval; /* default, parsed like a command-line value; NULL: zero */
    const char *help;
} fp_opt;

/* Parse argv[0..argc) (argv[0] is the first argument after the command name)
 * into cfg according to opts (terminated by a row with name NULL). Applies
 * defaults first. Returns FP_OK, FP_EUSAGE with a one-line message naming the
 * bad token in err, or FP_EUSAGE with err "" when --help was asked for. */
fp_status fp_opts_parse(const fp_opt *opts, int argc, char **argv, void *cfg, char *err,
                        size_t errlen);

/* The row of opts that the command-line word arg names ("--name", "--name=value"
 * or "-c"); NULL when it names none (or is not an option). */
const fp_opt *fp_opts_find(const fp_opt *opts, const char *arg);

/* Print "usage: fleetprint CMD [options]" and one line per option. */
void fp_opts_usage(FILE *out, const char *cmd, const char *summary, const fp_opt *opts);

/* The argument option o takes, as help shows it: "N", "SIZE", "TIME", ...;
 * for a string FILE, DIR, DATE or ENTITY where its help names one, else the
 * option's name in capitals, written into buf (len bytes); "" for a flag. */
const char *fp_opts_placeholder(const fp_opt *o, char *buf, size_t len);

/* Value parsers shared with other modules; each returns false on bad text. */
bool fp_parse_bytes(const char *text, uint64_t *out);
bool fp_parse_seconds(const char *text, double *out);
bool fp_parse_int(const char *text, int *out);
bool fp_parse_double(const char *text, double *out);

#endif
