/* omp_env.c: the check of OMP_NUM_THREADS shared by both programs. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

/* OMP_NUM_THREADS is read by the OpenMP runtime, so every command is bound
 * by it: 99999 threads overflow the stack in GOMP_parallel.  The same cap as
 * --threads (1..4096) for each entry of its comma-separated list. */
int rs_cli_omp_env_ok(const char *prog)
{
  const char *v = getenv("OMP_NUM_THREADS");
  if (!v) return 1;
  const char *p = v;
  for (;;) {
    long n = 0;
    int digits = 0;
    while (*p == ' ') p++;
    while (*p >= '0' && *p <= '9' && digits < 6) n = n * 10 + (*p++ - '0'), digits++;
    while (*p == ' ') p++;
    if (!digits || n < 1 || n > 4096 || (*p && *p != ',')) break;
    if (!*p) return 1;
    p++;
  }
  fprintf(stderr, "%s: OMP_NUM_THREADS: expected an integer from 1 to 4096 (or a comma-separated list of them), "
                  "found '%s'\n", prog, v);
  return 0;
}
