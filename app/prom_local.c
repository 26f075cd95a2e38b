/* preflight --prometheus-local DIR: each node's textfile written on the node
 * itself, so no file crosses nodes (docs/prometheus.md, "One file per node").
 * Rank 0 judges the run and renders every node's file (reports'
 * fp_prom_files_render) as the verdict outputs are written; after the report
 * step it broadcasts their sizes and scatters each text to its node's first
 * rank (one MPI_Iscatterv, waited on with the world's deadline), which writes
 * it into DIR on its host. Rank 0 writes the run file into its own DIR. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "fleetprint/log.h"

bool fp_app_prom_local_dir(const char *pattern, const char *node, char *buf, size_t len)
{
    size_t at = 0;
    for (const char *p = pattern; *p; p++) {
        const char *put = p;
        size_t n = 1;
        if (*p == '%') {
            p++;
            if (*p == 'n') {
                put = node;
                n = strlen(node);
            } else if (*p != '%') {
                return false;
            }
        }
        if (at + n >= len)
            return false;
        memcpy(buf + at, put, n);
        at += n;
    }
    buf[at] = 0;
    return len > 0;
}

fp_status fp_app_prom_local_render(const fp_run *run, const fp_verdicts *v, const detect_out *o)
{
    char from[4096];
    fp_prom_files files = {0};
    if (!o->prom_local_dir || !o->prom_local_node)
        return FP_OK; /* not rank 0 of a preflight: nothing to render */
    snprintf(from, sizeof from, "%s/fleetprint-run.prom", o->prom_local_dir);
    fp_status st = fp_prom_files_render(run, v, o->command, from, &files);
    if (st == FP_OK && o->prom_local) {
        fp_prom_files_free(o->prom_local);
        *o->prom_local = files; /* handed over */
        return FP_OK;
    }
    /* a timeout: no collective can hand the files out; rank 0 keeps its own */
    fp_prom_files mine = {0};
    fp_prom_file pick[2];
    for (size_t i = 0; st == FP_OK && i < files.n; i++)
        if (!files.file[i].node[0] || strcmp(files.file[i].node, o->prom_local_node) == 0)
            pick[mine.n++] = files.file[i];
    mine.file = pick;
    if (st == FP_OK)
        st = fp_prom_files_write(&mine, o->prom_local_dir);
    fp_prom_files_free(&files);
    return st;
}

/* The index of node's file in files, or -1 (files are in run order, which is
 * the world's: the guess is tried first). */
static long file_of(const fp_prom_files *files, const char *node, int guess)
{
    if (guess >= 0 && (size_t)guess < files->n && strcmp(files->file[guess].node, node) == 0)
        return guess;
    for (size_t i = 0; i < files->n; i++)
        if (strcmp(files->file[i].node, node) == 0)
            return (long)i;
    return -1;
}

/* Rank 0: the texts in rank order for MPI_Iscatterv (each node's to its
 * first rank), with counts and displacements. FP_ENOMEM, FP_EINPUT when they
 * do not fit an int. */
static fp_status pack(const fp_world *w, const fp_prom_files *files, const int *len, char **send,
                      int *counts, int *displs)
{
    int size = fp_world_size(w);
    long long total = 0;
    for (int r = 0; r < size; r++) {
        int node = fp_world_node_of(w, r);
        counts[r] = fp_world_node_leader(w, node) == r ? len[node] : 0;
        displs[r] = (int)total;
        total += counts[r];
        if (total > INT_MAX) {
            fp_error("--prometheus-local: the nodes' files come to more than %d bytes", INT_MAX);
            return FP_EINPUT;
        }
    }
    *send = malloc((size_t)total + 1);
    if (!*send)
        return FP_ENOMEM;
    for (int r = 0; r < size; r++) {
        int node = fp_world_node_of(w, r);
        long k = counts[r] ? file_of(files, fp_world_node_name(w, node), node) : -1;
        if (k >= 0)
            memcpy(*send + displs[r], files->file[k].text, (size_t)counts[r]);
    }
    return FP_OK;
}

fp_status fp_app_prom_local_write(fp_world *w, const char *pattern, const fp_prom_files *files)
{
    int rank = fp_world_rank(w), size = fp_world_size(w), nnodes = fp_world_nnodes(w);
    int me = fp_world_node_of(w, rank);
    bool leader = fp_world_node_leader(w, me) == rank;
    int *len = calloc((size_t)nnodes + 1, sizeof *len); /* len[nnodes]: 1 when rendered */
    int *counts = rank == 0 ? malloc((size_t)size * sizeof *counts) : NULL;
    int *displs = rank == 0 ? malloc((size_t)size * sizeof *displs) : NULL;
    char *send = NULL, *mine = NULL, dir[4096];
    fp_status st = FP_OK;
    if (!len || (rank == 0 && (!counts || !displs)))
        st = FP_ENOMEM;
    for (int k = 0; st == FP_OK && rank == 0 && k < nnodes; k++) {
        long i = file_of(files, fp_world_node_name(w, k), k);
        size_t n = i >= 0 ? files->file[i].len : 0;
        if (n > INT_MAX) {
            fp_error("--prometheus-local: the file of node %s is too large to send",
                     fp_world_node_name(w, k));
            st = FP_EINPUT;
        }
        len[k] = (int)n;
    }
    if (st == FP_OK && rank == 0)
        len[nnodes] = files->n > 0;
    if (st == FP_OK && rank == 0)
        st = pack(w, files, len, &send, counts, displs);
    /* rank 0's trouble is everyone's, so no rank waits on a scatter it skips */
    st = fp_world_agree(w, st);
    if (st == FP_OK)
        st = fp_world_bcast(w, len, (int)(((size_t)nnodes + 1) * sizeof *len),
                            "prometheus-local: the sizes of the nodes' files");
    if (st != FP_OK || !len[nnodes])
        goto cleanup;
    int mylen = leader ? len[me] : 0;
    mine = malloc((size_t)mylen + 1);
    if (!mine) {
        st = FP_ENOMEM; /* the scatter still runs: with nowhere to put it, receive nothing */
        mylen = 0;
    }
    MPI_Request req;
    if (MPI_Iscatterv(send, counts, displs, MPI_BYTE, mine, mylen, MPI_BYTE, 0, fp_world_comm(w),
                      &req) != MPI_SUCCESS) {
        fp_error("MPI failure in prometheus-local: the nodes' files");
        st = FP_EMPI;
        goto cleanup;
    }
    fp_status got = fp_world_wait(w, &req, 1, "prometheus-local: the nodes' files");
    st = fp_status_worst(st, got);
    if (got != FP_OK)
        goto cleanup;
    if (st == FP_OK && leader) {
        fp_prom_file out[2] = {{.text = mine, .len = (size_t)mylen}};
        fp_prom_files local = {.n = 1, .file = out};
        snprintf(out[0].name, sizeof out[0].name, "fleetprint-%s.prom", fp_world_my_node(w));
        if (rank == 0 && files->n) /* the run file: the last */
            out[local.n++] = files->file[files->n - 1];
        if (!fp_app_prom_local_dir(pattern, fp_world_my_node(w), dir, sizeof dir)) {
            fp_error("--prometheus-local '%s': expected a folder, %%n for the node's name",
                     pattern);
            st = FP_EUSAGE;
        } else {
            st = fp_prom_files_write(&local, dir);
        }
    }
    st = fp_world_agree(w, st);
cleanup:
    free(len);
    free(counts);
    free(displs);
    free(send);
    free(mine);
    return st;
}
