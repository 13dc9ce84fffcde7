/* test_mpi_shim.c: util/mpi.h in the default build (no MPI): one rank,
 * agreement passes the rank's own outcome through, a gather is a copy with
 * its count.  The MPI build itself is tested by tests/mpi/run.sh (make
 * test-mpi), which runs mpirun. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "util/mpi.h"

Test(mpi_shim, one_rank)
{
  cr_assert_eq(rs__mpi_built(), 0);
  cr_assert_eq(rs__mpi_rank(), 0);
  cr_assert_eq(rs__mpi_size(), 1);
  cr_assert_null(rs__mpi_file_comm());
}

Test(mpi_shim, agree_keeps_the_outcome)
{
  rs_error err = {0};
  cr_assert_eq(rs__mpi_agree(RS_OK, &err), RS_OK);
  rs__fail(&err, RS_FORMAT, "c.h5:/runs/a/doc: row 7");
  cr_assert_eq(rs__mpi_agree(RS_FORMAT, &err), RS_FORMAT);
  cr_assert_str_eq(err.msg, "c.h5:/runs/a/doc: row 7");
}

Test(mpi_shim, gather_is_a_copy)
{
  const double v[3] = {0.25, 1.0 / 3.0, -2.5};
  void *out = NULL;
  size_t *counts = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__mpi_gather(v, 3, sizeof *v, &out, &counts, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(counts[0], 3);
  cr_assert_eq(memcmp(out, v, sizeof v), 0);
  free(out);
  free(counts);
  /* Nothing to gather still gives a count (0) and a buffer to free. */
  cr_assert_eq(rs__mpi_gather(NULL, 0, 8, &out, &counts, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(counts[0], 0);
  cr_assert_not_null(out);
  free(out);
  free(counts);
}
