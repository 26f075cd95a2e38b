/* The manual page and the bash completion, both written from the command
 * table and the commands' option tables, so they list what the parser takes. */
#include <stdio.h>
#include <string.h>

#include "app.h"

/* text with roff's specials escaped: '-' as \-, '\' as \e, a leading '.' or
 * '\'' guarded */
static void roff(FILE *out, const char *text)
{
    if (text[0] == '.' || text[0] == '\'')
        fputs("\\&", out);
    for (const char *p = text; *p; p++) {
        if (*p == '-')
            fputs("\\-", out);
        else if (*p == '\\')
            fputs("\\e", out);
        else
            fputc(*p, out);
    }
}

static void man_option(FILE *out, const fp_opt *o)
{
    fputs(".TP\n", out);
    if (o->type == FP_OPT_POSITIONAL) {
        fputs(".I ", out);
        roff(out, o->name);
    } else {
        fputs("\\fB", out);
        if (o->short_name)
            fprintf(out, "\\-%c\\fR, \\fB", o->short_name);
        fputs("\\-\\-", out);
        roff(out, o->name);
        fputs("\\fR", out);
        char meta[40];
        const char *arg = fp_opts_placeholder(o, meta, sizeof meta);
        if (arg[0]) {
            fputs(" \\fI", out);
            roff(out, arg);
            fputs("\\fR", out);
        }
    }
    fputc('\n', out);
    roff(out, o->help ? o->help : "");
    if (o->defval) {
        fputs(" (default ", out);
        roff(out, o->defval);
        fputc(')', out);
    }
    fputc('\n', out);
}

void fp_print_man(FILE *out)
{
    fprintf(out, ".TH FLEETPRINT 1 \"\" \"fleetprint %s\" \"User Commands\"\n", FP_VERSION);
    fputs(".SH NAME\nfleetprint \\- validate GPU clusters: kernels, collectives, burn-in, "
          "fingerprints and verdicts\n.SH SYNOPSIS\n.B fleetprint\n.I command\n[options]\n"
          ".SH DESCRIPTION\nLaunched under MPI (mpirun, srun), fleetprint measures every GPU, "
          "node and link, stores the results in an HDF5 store and judges them against "
          "baselines and peers. Each command takes only its own options; another "
          "command's option exits 2.\n.SH COMMANDS\n",
          out);
    for (int i = 0; fp_commands[i]; i++) {
        const fp_command *c = fp_commands[i];
        fprintf(out, ".SS \"fleetprint %s\"\n", c->name);
        roff(out, c->summary);
        fputc('\n', out);
        for (const fp_opt *o = c->opts; o->name; o++)
            man_option(out, o);
    }
    fputs(".SH EXIT STATUS\n.TP\n0\npass\n.TP\n1\na check failed\n.TP\n2\nusage or input "
          "error\n.TP\n3\nthe environment cannot run it\n.TP\n4\ninternal error or "
          "timeout\n.TP\n5\ninterrupted (partial results kept)\n.SH SEE ALSO\nThe README and "
          "docs/ of the fleetprint sources (installed under share/doc/fleetprint).\n",
          out);
}

void fp_print_bash_completion(FILE *out)
{
    fputs("# bash completion for fleetprint (fleetprint --completion bash)\n"
          "_fleetprint() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} words\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        words=\"",
          out);
    for (int i = 0; fp_commands[i]; i++)
        fprintf(out, "%s%s", i ? " " : "", fp_commands[i]->name);
    fputs(" --help --version\"\n"
          "    else\n"
          "        case ${COMP_WORDS[1]} in\n",
          out);
    for (int i = 0; fp_commands[i]; i++) {
        const fp_command *c = fp_commands[i];
        fprintf(out, "        %s) words=\"", c->name);
        for (const fp_opt *o = c->opts; o->name; o++)
            if (o->type != FP_OPT_POSITIONAL)
                fprintf(out, "--%s ", o->name);
        fputs("--help\";;\n", out);
    }
    fputs("        *) return;;\n"
          "        esac\n"
          "        [[ $cur == -* ]] || { COMPREPLY=(); compopt -o default 2>/dev/null; return; }\n"
          "    fi\n"
          "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
          "}\n"
          "complete -F _fleetprint fleetprint\n",
          out);
}
