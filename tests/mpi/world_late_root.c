/* A rank never reaches a blocking step, and rank 0 reaches it late: rank 0
 * computes for 5 s outside any step while ranks 1 and 3 wait in the step
 * under a 2 s deadline. Their deadlines expire first; each reports to rank 0
 * and gives it min(2/4 + 1, 4) = 1.5 s after its grace to end the job. Rank 0
 * must diagnose on their reports (naming rank 2, which never arrived), not at
 * its own deadline at 7 s, long after they aborted naming no one
 * (world_late_root.sh checks the output; this exits only through the abort). */
#include <mpi.h>
#include <stdio.h>

#include "fleetprint/timer.h"
#include "fleetprint/world.h"

int main(int argc, char **argv)
{
    fp_world *w = NULL;
    fp_status st = fp_world_open(&w, &argc, &argv);
    if (st != FP_OK) {
        fp_world_close(w, st);
        return fp_status_exit_code(st);
    }
    fp_world_configure(w, 2.0, false, false);
    int rank = fp_world_rank(w);
    if (rank == 2)
        for (;;)
            fp_sleep(1.0); /* stuck outside MPI: never arrives */
    if (rank == 0)
        fp_sleep(5.0); /* busy outside any step */
    fp_world_step_begin(w, "the late-root barrier");
    MPI_Barrier(fp_world_comm(w));
    fp_world_step_end(w);
    printf("rank %d: the barrier completed without rank 2\n", rank);
    fp_world_close(w, FP_OK);
    return 1;
}
