/* Isolation's outputs besides the verdicts: the round table (console and
 * JSON), with the findings and the rounds and seconds it took. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/hostlist.h"
#include "fleetprint/report.h"

/* The nodes of group x of r as a hostlist (malloc'd; NULL without memory). */
static char *group_nodes(const fp_run *run, const fp_iso_round *r, const fp_iso_group *x)
{
    const char **names = malloc((size_t)(x->n ? x->n : 1) * sizeof *names);
    if (!names)
        return NULL;
    for (int k = 0; k < x->n; k++) {
        int u = r->units[x->first + k];
        names[k] = u >= 0 && u < run->nnodes ? run->nodes[u] : "?";
    }
    char *list = fp_hostlist_compress(names, (size_t)x->n);
    free(names);
    return list;
}

static const char *node_of(const fp_run *run, int u)
{
    return u >= 0 && u < run->nnodes ? run->nodes[u] : "?";
}

/* A note's nodes as a hostlist, "..." after the first FP_ISO_NOTE_UNITS
 * (malloc'd; NULL without memory). */
static char *note_nodes(const fp_run *run, const fp_iso_note *x)
{
    const char *names[FP_ISO_NOTE_UNITS];
    int n = x->nunits < FP_ISO_NOTE_UNITS ? x->nunits : FP_ISO_NOTE_UNITS;
    for (int k = 0; k < n; k++)
        names[k] = node_of(run, x->units[k]);
    char *list = fp_hostlist_compress(names, (size_t)n);
    if (list && x->nunits > n) {
        char *more = malloc(strlen(list) + 32);
        if (more)
            sprintf(more, "%s and %d more", list, x->nunits - n);
        free(list);
        list = more;
    }
    return list;
}

void fp_report_isolate_console(FILE *out, const fp_iso_plan *p, const fp_run *run,
                               const char *strategy)
{
    fprintf(out, "%-5s %-7s %-24s %-7s %12s %12s %10s\n", "round", "role", "nodes", "outcome",
            "busbw GB/s", "expected", "time ms");
    for (int i = 0; i < fp_iso_plan_rounds(p); i++) {
        const fp_iso_round *r = fp_iso_plan_round(p, i);
        for (int g = 0; g < r->ngroups; g++) {
            const fp_iso_group *x = &r->groups[g];
            char *nodes = group_nodes(run, r, x);
            fprintf(out, "%-5d %-7s %-24s %-7s %12.4g %12.4g %10.4g\n", r->index,
                    fp_iso_role_name(x->role), nodes ? nodes : "?",
                    fp_iso_outcome_name(x->outcome), x->busbw, x->expected, x->seconds * 1e3);
            free(nodes);
        }
    }
    const fp_iso_finding *f;
    size_t n = fp_iso_plan_findings(p, &f);
    for (size_t i = 0; i < n; i++) {
        if (f[i].link)
            fprintf(out, "named: link %s~%s %s (passes apart, fails together in round %d)\n",
                    node_of(run, f[i].unit), node_of(run, f[i].peer),
                    fp_iso_outcome_name(f[i].outcome), f[i].confirmed);
        else
            fprintf(out, "named: %s %s (named after round %d, confirmed in round %d)\n",
                    node_of(run, f[i].unit), fp_iso_outcome_name(f[i].outcome), f[i].named,
                    f[i].confirmed);
    }
    const fp_iso_note *notes;
    size_t nn = fp_iso_plan_notes(p, &notes);
    for (size_t i = 0; i < nn; i++) {
        char *nodes = note_nodes(run, &notes[i]);
        fprintf(out, "note: %s: %s\n", nodes ? nodes : "?", notes[i].what);
        free(nodes);
    }
    int named = fp_iso_plan_named_round(p), rounds = fp_iso_plan_rounds(p);
    if (n)
        fprintf(out, "isolate (%s): %zu named in %d round%s (%.1f s); %d round%s in all (%.1f s)\n",
                strategy, n, named, named == 1 ? "" : "s", fp_iso_plan_seconds(p, named), rounds,
                rounds == 1 ? "" : "s", fp_iso_plan_seconds(p, rounds));
    else
        fprintf(out, "isolate (%s): nothing named in %d round%s (%.1f s)%s\n", strategy, rounds,
                rounds == 1 ? "" : "s", fp_iso_plan_seconds(p, rounds),
                fp_iso_plan_truncated(p) ? "; stopped at --max-rounds with suspects left" : "");
}

static json_t *num(double d)
{
    return isfinite(d) ? json_real(d) : json_null();
}

fp_status fp_report_isolate_json(const fp_iso_plan *p, const fp_run *run, const char *strategy,
                                 const char *path)
{
    json_t *root = json_object(), *table = json_array(), *finds = json_array();
    json_t *notes_j = json_array();
    for (int i = 0; i < fp_iso_plan_rounds(p); i++) {
        const fp_iso_round *r = fp_iso_plan_round(p, i);
        json_t *groups = json_array();
        for (int g = 0; g < r->ngroups; g++) {
            const fp_iso_group *x = &r->groups[g];
            json_t *nodes = json_array();
            for (int k = 0; k < x->n; k++)
                json_array_append_new(nodes, json_string(node_of(run, r->units[x->first + k])));
            json_array_append_new(
                groups, json_pack("{s:s, s:o, s:s, s:o, s:o, s:o, s:I}", "role",
                                  fp_iso_role_name(x->role), "nodes", nodes, "outcome",
                                  fp_iso_outcome_name(x->outcome), "busbw", num(x->busbw),
                                  "expected", num(x->expected), "seconds", num(x->seconds),
                                  "wrong", (json_int_t)x->wrong));
        }
        json_array_append_new(table, json_pack("{s:i, s:o, s:o, s:o}", "round", r->index,
                                               "started", num(r->started), "ended",
                                               num(r->ended), "groups", groups));
    }
    const fp_iso_finding *f;
    size_t n = fp_iso_plan_findings(p, &f);
    for (size_t i = 0; i < n; i++) {
        json_t *one = json_pack("{s:s, s:s, s:s, s:i, s:i}", "kind", f[i].link ? "link" : "node",
                                "node", node_of(run, f[i].unit), "outcome",
                                fp_iso_outcome_name(f[i].outcome), "named_round", f[i].named,
                                "confirmed_round", f[i].confirmed);
        if (f[i].link)
            json_object_set_new(one, "peer", json_string(node_of(run, f[i].peer)));
        json_array_append_new(finds, one);
    }
    const fp_iso_note *notes;
    size_t nn = fp_iso_plan_notes(p, &notes);
    for (size_t i = 0; i < nn; i++) {
        char *nodes = note_nodes(run, &notes[i]);
        json_array_append_new(notes_j, json_pack("{s:s, s:s}", "nodes", nodes ? nodes : "?",
                                                 "note", notes[i].what));
        free(nodes);
    }
    int named = fp_iso_plan_named_round(p), rounds = fp_iso_plan_rounds(p);
    json_object_set_new(root, "run", json_string(run->id));
    json_object_set_new(root, "strategy", json_string(strategy));
    json_object_set_new(root, "rounds_to_isolate", json_integer(named));
    json_object_set_new(root, "rounds", json_integer(rounds));
    json_object_set_new(root, "seconds_to_isolate", num(fp_iso_plan_seconds(p, named)));
    json_object_set_new(root, "seconds", num(fp_iso_plan_seconds(p, rounds)));
    json_object_set_new(root, "truncated", json_boolean(fp_iso_plan_truncated(p)));
    json_object_set_new(root, "findings", finds);
    json_object_set_new(root, "notes", notes_j);
    json_object_set_new(root, "table", table);
    return fp_json_write(root, path);
}
