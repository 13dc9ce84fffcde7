/* trec_eval_main.c: the trec_eval program, the drop-in for trec_eval 10.0,
 * linked apart from ragsweep.  It needs the text engine only (libc, libm,
 * the OpenMP runtime and zlib), so it loads 5 shared libraries where
 * ragsweep loads 11 (HDF5 linked in from its archive, with libsz, SQLite,
 * json-c, libcsv; libcurl only when a command makes a request).  It once
 * loaded 41, through libhdf5.so's libcurl and TLS, Kerberos, LDAP: on a VM
 * where a page fault costs 11-25 us, starting took 20 ms of a 10k query
 * run's 90 ms.  `ragsweep trec_eval` is the same command. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "formats/textio.h"

/* The ranks mpirun (Open MPI, or a PMI launcher) says this process is one
 * of: this program is not an MPI program, and each rank would print the
 * whole evaluation. */
static long launcher_ranks(void)
{
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) return strtol(v, NULL, 10);
  }
  return 1;
}

int main(int argc, char **argv)
{
  if (!rs_cli_omp_env_ok("trec_eval")) return RS_EXIT_USAGE;
  if (launcher_ranks() > 1) {
    fprintf(stderr, "trec_eval: does not split its work across MPI ranks; run it as one process\n");
    return RS_EXIT_USAGE;
  }
  rs__mapped_guard_sigbus("trec_eval", RS_EXIT_INPUT); /* runs and qrels are read through mappings */
  return rs_cli_trec_eval(argc, argv, "trec_eval");
}
