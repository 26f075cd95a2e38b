/* The skeleton of the measuring commands (run, preflight, burnin): open the
 * test context on every rank, measure, agree, gather the run to rank 0,
 * report and store it there, and agree on the exit status. */
#include "app.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleetprint/log.h"
#include "fleetprint/history.h"
#include "fleetprint/store.h"

/* Append run (with its verdicts, judged: NULL for none) and more (its
 * re-test: NULL for none) to the store at path in one commit. */
static fp_status store_run(const char *path, const fp_run *run, const fp_run_verdicts *judged,
                           const fp_run *more, double lock_timeout)
{
    fp_store *s = NULL;
    const fp_run *runs[2] = {run, more};
    const fp_run_verdicts *v[2] = {judged, NULL};
    fp_status st = fp_store_open(&s, path, FP_STORE_APPEND, lock_timeout);
    if (st == FP_OK)
        st = fp_store_append_judged_runs(s, runs, v, more ? 2 : 1);
    fp_store_close(s);
    if (st == FP_OK && judged)
        fp_info("stored run %s (%zu samples, the verdicts of %zu entities)%s%s in %s", run->id,
                run->nsamples, judged->n, more ? " and its re-test " : "", more ? more->id : "",
                path);
    else if (st == FP_OK)
        fp_info("stored run %s (%zu samples)%s%s in %s", run->id, run->nsamples,
                more ? " and its re-test " : "", more ? more->id : "", path);
    return st;
}

void fp_app_host_of(const fp_config *cfg, const fp_world *w, fp_app_host *h)
{
    memset(h, 0, sizeof *h);
    gethostname(h->host, sizeof h->host - 1);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    h->cores = cores > 0 ? (int)cores : 1;
    h->threads = fp_threads_per_rank(cfg, w);
}

bool fp_app_contended(const fp_app_host *all, int n, char *note, size_t len)
{
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int j = 0; j < n; j++)
            want += strcmp(all[i].host, all[j].host) == 0 ? all[j].threads : 0;
        if (want > all[i].cores) {
            snprintf(note, len, "%d threads on %d cores of host %.40s", want, all[i].cores,
                     all[i].host);
            return true;
        }
    }
    return false;
}

fp_status fp_app_contention(fp_world *w, fp_config *cfg, const char *command, char *note,
                            size_t len)
{
    fp_status st = FP_OK;
    fp_app_host mine, *all = NULL;
    fp_app_host_of(cfg, w, &mine);
    int n = fp_world_size(w);
    note[0] = 0;
    all = calloc((size_t)n, sizeof *all);
    FP_CHECK_ALLOC(all);
    FP_CHECK(fp_world_allgather(w, &mine, all, (int)sizeof mine, "checking for shared cores"));
    cfg->shared_cores = fp_app_contended(all, n, note, len);
    if (cfg->shared_cores && fp_world_rank(w) == 0)
        fp_warn("%s: ranks share CPU cores (%s): host kernels are timed without their waits "
                "for a core, and timing rules use the contended thresholds", command, note);
cleanup:
    free(all);
    return st;
}

fp_status fp_measure(const fp_config *cfg, const measure_out *out, fp_world *w,
                     const fp_measure_steps *steps, void *arg)
{
    fp_inject_set inject;
    fp_run local, run;
    fp_ctx ctx;
    fp_run_init(&local);
    fp_run_init(&run);
    fp_status st = fp_ctx_open(&ctx, cfg, w, &inject, &local);
    if (st == FP_OK)
        st = steps->measure(&ctx, arg);
    if (st != FP_ETIMEOUT)
        st = fp_world_agree(w, st);
    if (st == FP_OK && steps->collect)
        st = steps->collect(&ctx, arg);
    if (st == FP_OK)
        st = fp_ctx_gather(&ctx, out->tag, &run);
    if (st == FP_OK && steps->confirm)
        st = steps->confirm(&ctx, &run, arg);
    if (st == FP_OK && ctx.rank == 0) {
        st = steps->report(&run, arg);
        /* a failed or interrupted run is stored too (marked so: baselines skip
         * it): history, and the health that admit --store reads */
        if ((st == FP_OK || st == FP_EFAIL || st == FP_EINTR) && out->store) {
            const fp_run *more = steps->also_store ? steps->also_store(arg) : NULL;
            const fp_run_verdicts *judged = steps->verdicts ? steps->verdicts(arg) : NULL;
            fp_status stored = store_run(out->store, &run, judged, more, cfg->timeout);
            st = stored == FP_OK ? st : stored;
        }
    }
    /* every rank exits with rank 0's verdict */
    if (st != FP_ETIMEOUT)
        st = fp_world_agree(w, st);
    if (steps->release)
        steps->release(arg);
    fp_ctx_close(&ctx);
    fp_run_free(&local);
    fp_run_free(&run);
    return st;
}
