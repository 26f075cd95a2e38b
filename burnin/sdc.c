/* Result checks of burn-in: the cross-rank majority vote over the digests
 * the devices made of their results, and the judgement
 * of throughput degradation over time. Pure functions: no MPI, no device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/burnin.h"
#include "fleetprint/stats.h"

/* ---- cross-rank vote ---------------------------------------------------------- */

/* Median of n values copied into tmp. */
static double median_of(const double *v, int n, double *tmp)
{
    memcpy(tmp, v, (size_t)n * sizeof *tmp);
    return fp_median(tmp, (size_t)n);
}

int fp_sdc_vote(const fp_digest *all, int nranks, double tol, int *disagree)
{
    memset(disagree, 0, (size_t)nranks * sizeof *disagree);
    double *vals = malloc(2 * (size_t)nranks * sizeof *vals);
    if (!vals)
        return FP_DIGEST_BLOCKS; /* cannot judge: no blame */
    int no_majority = 0;
    for (int b = 0; b < FP_DIGEST_BLOCKS; b++) {
        /* the value the most ranks share, and how many share it */
        int best = -1, best_count = 0;
        if (tol <= 0) {
            for (int r = 0; r < nranks; r++) {
                int count = 0;
                for (int q = 0; q < nranks; q++)
                    count += all[q].hash[b] == all[r].hash[b];
                if (count > best_count)
                    best = r, best_count = count;
            }
        } else {
            for (int r = 0; r < nranks; r++)
                vals[r] = all[r].sum[b];
            double med = median_of(vals, nranks, vals + nranks);
            for (int r = 0; r < nranks; r++)
                vals[r] = all[r].abssum[b];
            double mag = median_of(vals, nranks, vals + nranks);
            double lim = tol * (mag > 0 ? mag : 1);
            best_count = 0;
            for (int r = 0; r < nranks; r++)
                best_count += fabs(all[r].sum[b] - med) <= lim;
            best = -2;
            for (int r = 0; r < nranks; r++)
                if (fabs(all[r].sum[b] - med) > lim || !isfinite(all[r].sum[b]))
                    vals[r] = 1;
                else
                    vals[r] = 0;
        }
        if (2 * best_count <= nranks) {
            no_majority++;
            continue;
        }
        for (int r = 0; r < nranks; r++) {
            bool out = best >= 0 ? all[r].hash[b] != all[best].hash[b] : vals[r] != 0;
            disagree[r] += out;
        }
    }
    for (int r = 0; r < nranks; r++)
        if (all[r].nonfinite > 0 && disagree[r] == 0)
            disagree[r] = 1; /* NaN/Inf never pass, even when every rank has them */
    free(vals);
    return no_majority;
}

/* ---- degradation over time ------------------------------------------------------ */

/* Median of the finite values among v[lo, hi); NaN when none. */
static double window_median(const double *v, int lo, int hi, double *tmp)
{
    int n = 0;
    for (int i = lo; i < hi; i++)
        if (isfinite(v[i]))
            tmp[n++] = v[i];
    if (n == 0)
        return NAN;
    return median_of(tmp, n, tmp + n);
}

void fp_burnin_degradation(const double *tput, int nranks, int nwin, double threshold,
                           fp_degrade *out)
{
    memset(out, 0, (size_t)nranks * sizeof *out);
    int third = nwin / 3;
    size_t cells = (size_t)nranks * (size_t)(nwin > 0 ? nwin : 1);
    double *rel = malloc(cells * sizeof *rel);
    double *tmp = malloc(2 * (size_t)(nwin > nranks ? nwin : nranks) * sizeof *tmp + 16);
    bool judged = nwin >= FP_BURNIN_DEGRADE_MIN_WINDOWS && third >= 1 && rel && tmp;
    /* each window against the median of all ranks in the same window: load
     * that slows every rank alike (a shared machine, the fleet's cooling)
     * cancels out, what is left is the rank's own change */
    for (int w = 0; judged && w < nwin; w++) {
        for (int r = 0; r < nranks; r++)
            tmp[nwin + r] = tput[(size_t)r * (size_t)nwin + (size_t)w];
        double med = window_median(tmp + nwin, 0, nranks, tmp);
        for (int r = 0; r < nranks; r++)
            rel[(size_t)r * (size_t)nwin + (size_t)w] =
                med > 0 ? tput[(size_t)r * (size_t)nwin + (size_t)w] / med : NAN;
    }
    for (int r = 0; r < nranks; r++) {
        fp_degrade *d = &out[r];
        d->ratio = d->rel_ratio = NAN;
        d->state = 1;
        if (!judged)
            continue;
        const double *row = tput + (size_t)r * (size_t)nwin, *rrow = rel + (size_t)r * (size_t)nwin;
        d->early = window_median(row, 0, third, tmp);
        d->late = window_median(row, nwin - third, nwin, tmp);
        d->ratio = d->early > 0 ? d->late / d->early : NAN;
        double re = window_median(rrow, 0, third, tmp), rl = window_median(rrow, nwin - third, nwin, tmp);
        d->rel_ratio = re > 0 ? rl / re : NAN;
        if (!isfinite(d->ratio) || !isfinite(d->rel_ratio))
            continue;
        d->state = 0;
        bool self_drop = d->ratio < 1 - threshold;
        /* alone, a rank has no peers to compare with */
        d->degraded = nranks < 2 ? self_drop : d->rel_ratio < 1 - threshold;
        d->slowed = self_drop && !d->degraded;
    }
    free(rel);
    free(tmp);
}
