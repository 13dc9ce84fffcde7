/* mpi.h: ragsweep's processes under mpirun (internal).
 *
 * src/util/mpi.c is the only file that calls MPI.  Built without
 * RS_WITH_MPI (the default build), every function here is the one-process
 * case: rank 0 of 1, agreement and gathers are copies, nothing is linked.
 *
 * Rules the callers keep, so that no rank waits forever in a collective
 * the others never reach: every rank runs the same command on the same
 * inputs and calls the collectives (these functions, and HDF5's file opens
 * and closes under MPI-IO) in the same order; a failure that only some
 * ranks can see is first made everyone's with rs__mpi_agree.  Ranks other
 * than 0 have their stdout and stderr on /dev/null (rank 0 prints the
 * leaderboard, the progress and the agreed error); rs__mpi_abort still
 * reaches the terminal. */
#ifndef RAGSWEEP_UTIL_MPI_H
#define RAGSWEEP_UTIL_MPI_H

#include <stddef.h>

#include "internal.h"

/* Starts MPI (MPI_THREAD_FUNNELED: only the main thread calls MPI; the
 * OpenMP threads score).  Returns 0, or -1 after printing why. */
int rs__mpi_init(int *argc, char ***argv);
/* Ends MPI at a normal exit (every rank). */
void rs__mpi_finalize(void);

/* 1 in the MPI build (whatever the number of ranks). */
int rs__mpi_built(void);
int rs__mpi_rank(void);
int rs__mpi_size(void);

/* Every rank passes its own outcome; every rank gets the outcome of the
 * lowest rank that failed (code and message in *err), or RS_OK when none
 * did.  Shares are in rank order, so that is the failure one process
 * would have met first. */
rs_code rs__mpi_agree(rs_code rc, rs_error *err);

/* The ranks' items in rank order on rank 0 (MPI_Gatherv, nothing
 * reduced): each rank gives n items of item_size bytes; rank 0 gets
 * *out = their concatenation (free it) and counts[rank] (an array of
 * rs__mpi_size(), free it); other ranks get NULL in both.  Collective. */
rs_code rs__mpi_gather(const void *items, size_t n, size_t item_size, void **out, size_t **counts, rs_error *err);

/* Rank 0's n bytes at buf to every rank.  Collective. */
rs_code rs__mpi_bcast(void *buf, size_t n, rs_error *err);

/* Returns once every rank has called it, sleeping while it waits (a rank
 * done with its share must not take a core from the others).  Collective;
 * eval and compare call it before the collective close of their files,
 * where the ranks wait for rank 0's writing. */
void rs__mpi_wait_all(void);

/* Last resort: prints msg (on every rank's real stderr) and ends every
 * rank of the job with status. */
_Noreturn void rs__mpi_abort(int status, const char *msg);

/* The communicator the ranks open their HDF5 files on (an MPI_Comm *), for
 * H5Pset_fapl_mpio in corpus_h5.c; NULL without MPI. */
const void *rs__mpi_file_comm(void);

#endif
