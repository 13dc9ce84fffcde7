/* mpi.c: the only file that calls MPI (see mpi.h).  Without RS_WITH_MPI it
 * is the one-process case and needs no MPI headers or libraries. */
#define _POSIX_C_SOURCE 200809L
#include "util/mpi.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef RS_WITH_MPI
#include <mpi.h>

static int g_rank, g_size = 1, g_up;
static int g_stderr = 2; /* the real stderr of a silenced rank */
static MPI_Comm g_comm = MPI_COMM_NULL;

int rs__mpi_init(int *argc, char ***argv)
{
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "ragsweep: MPI_Init_thread failed; run under mpirun, or use the build without MPI (make)\n");
    return -1;
  }
  g_up = 1;
  /* Errors come back as codes (turned into messages here), not as
   * MPI's default abort from inside a call. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (g_rank != 0) {
    /* One voice: rank 0 prints for the job. */
    fflush(stdout);
    fflush(stderr);
    g_stderr = dup(2);
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
      close(null);
    }
  }
  return 0;
}

void rs__mpi_finalize(void)
{
  if (!g_up) return;
  fflush(stdout);
  if (g_comm != MPI_COMM_NULL) MPI_Comm_free(&g_comm);
  MPI_Finalize();
  g_up = 0;
}

int rs__mpi_built(void) { return 1; }
int rs__mpi_rank(void) { return g_rank; }
int rs__mpi_size(void) { return g_size; }

/* Waits for a nonblocking collective without spinning.  A blocking one
 * polls at full speed; a rank whose share is done would then take a core
 * from the ranks still scoring whenever the job has more ranks than idle
 * cores.  Polls back off from 50 us to 2 ms: at most 2 ms late. */
static int wait_gently(MPI_Request *req)
{
  long ns = 50000;
  for (;;) {
    int done = 0;
    const int st = MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (st != MPI_SUCCESS || done) return st;
    const struct timespec t = {0, ns};
    nanosleep(&t, NULL);
    if (ns < 2000000) ns *= 2;
  }
}

static rs_code mpi_failed(int status, const char *what, rs_error *err)
{
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(status, text, &len);
  return rs__fail(err, RS_IO, "MPI: %s failed on rank %d of %d: %s", what, g_rank, g_size, text);
}

rs_code rs__mpi_agree(rs_code rc, rs_error *err)
{
  if (!g_up || g_size == 1) return rc;
  int mine = rc ? g_rank : g_size, first = g_size;
  MPI_Request req;
  int st = MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, g_comm, &req);
  if (st == MPI_SUCCESS) st = wait_gently(&req);
  if (st != MPI_SUCCESS) rs__mpi_abort(2, "ragsweep: MPI: the ranks could not exchange their status (MPI_Allreduce)");
  if (first == g_size) return RS_OK;
  struct {
    int code;
    char msg[sizeof err->msg];
  } m = {0};
  if (g_rank == first) {
    m.code = (int)rc;
    if (err) memcpy(m.msg, err->msg, sizeof m.msg);
    m.msg[sizeof m.msg - 1] = '\0';
  }
  st = MPI_Ibcast(&m, (int)sizeof m, MPI_BYTE, first, g_comm, &req);
  if (st == MPI_SUCCESS) st = wait_gently(&req);
  if (st != MPI_SUCCESS) rs__mpi_abort(2, "ragsweep: MPI: the ranks could not exchange an error (MPI_Bcast)");
  if (err) {
    err->code = (rs_code)m.code;
    memcpy(err->msg, m.msg, sizeof err->msg);
  }
  return (rs_code)m.code;
}

rs_code rs__mpi_gather(const void *items, size_t n, size_t item_size, void **out, size_t **counts, rs_error *err)
{
  *out = NULL;
  *counts = NULL;
  if (n > INT_MAX || item_size > INT_MAX || item_size == 0)
    return rs__fail(err, RS_UNSUPPORTED, "MPI: rank %d holds %zu items of %zu bytes; at most %d items a rank", g_rank,
                    n, item_size, INT_MAX);
  /* Items, not bytes, are counted: MPI's counts and displacements are ints. */
  MPI_Datatype item;
  int st = MPI_Type_contiguous((int)item_size, MPI_BYTE, &item);
  if (st == MPI_SUCCESS) st = MPI_Type_commit(&item);
  if (st != MPI_SUCCESS) return mpi_failed(st, "MPI_Type_contiguous", err);
  int mine = (int)n, *cnt = NULL, *disp = NULL;
  rs_code rc = RS_OK;
  if (g_rank == 0 && (!(cnt = calloc((size_t)g_size, sizeof *cnt)) || !(disp = calloc((size_t)g_size, sizeof *disp))))
    rc = rs__fail(err, RS_NOMEM, "MPI: out of memory for %d ranks' counts", g_size);
  /* Every rank reaches the count gather, whatever rank 0's allocation did. */
  MPI_Request req;
  st = MPI_Igather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, g_comm, &req);
  if (st == MPI_SUCCESS) st = wait_gently(&req);
  if (st != MPI_SUCCESS && !rc) rc = mpi_failed(st, "MPI_Gather", err);
  size_t total = 0;
  unsigned char *all = NULL;
  if (g_rank == 0 && !rc) {
    for (int r = 0; r < g_size; r++) {
      if (total > (size_t)INT_MAX - (size_t)cnt[r]) {
        rc = rs__fail(err, RS_UNSUPPORTED, "MPI: more than %d items to gather on rank 0", INT_MAX);
        break;
      }
      disp[r] = (int)total;
      total += (size_t)cnt[r];
    }
    if (!rc && !(all = malloc(rs__mul(total ? total : 1, item_size))))
      rc = rs__fail(err, RS_NOMEM, "MPI: out of memory for %zu gathered items of %zu bytes", total, item_size);
  }
  /* Rank 0's trouble is everyone's before the gather itself. */
  rc = rs__mpi_agree(rc, err);
  if (!rc) {
    /* Every rank is here now (the count gather and the agreement above
     * waited for the slowest), so the transfer itself is waited for
     * busily: a large message moves in fragments, each sent only when the
     * receiver next polls, and gentle polls (up to 2 ms apart) made a
     * 150 MB gather take seconds. */
    st = MPI_Gatherv(items, mine, item, all, cnt, disp, item, 0, g_comm);
    if (st != MPI_SUCCESS) rc = mpi_failed(st, "MPI_Gatherv", err);
  }
  MPI_Type_free(&item);
  if (!rc && g_rank == 0) {
    size_t *c = malloc((size_t)g_size * sizeof *c);
    if (!c) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
    } else {
      for (int r = 0; r < g_size; r++) c[r] = (size_t)cnt[r];
      *out = all;
      *counts = c;
      all = NULL;
    }
  }
  free(all);
  free(cnt);
  free(disp);
  return rc;
}

rs_code rs__mpi_bcast(void *buf, size_t n, rs_error *err)
{
  if (!g_up || g_size == 1) return RS_OK;
  unsigned char *p = buf;
  while (n) { /* in pieces: counts are ints */
    const int part = n > (1u << 30) ? 1 << 30 : (int)n;
    const int st = MPI_Bcast(p, part, MPI_BYTE, 0, g_comm);
    if (st != MPI_SUCCESS) return mpi_failed(st, "MPI_Bcast", err);
    p += part;
    n -= (size_t)part;
  }
  return RS_OK;
}

void rs__mpi_wait_all(void)
{
  if (!g_up || g_size == 1) return;
  MPI_Request req;
  int st = MPI_Ibarrier(g_comm, &req);
  if (st == MPI_SUCCESS) st = wait_gently(&req);
  if (st != MPI_SUCCESS) rs__mpi_abort(2, "ragsweep: MPI: the ranks could not meet (MPI_Ibarrier)");
}

_Noreturn void rs__mpi_abort(int status, const char *msg)
{
  if (msg) {
    char line[1024];
    const int len = snprintf(line, sizeof line, "%s (rank %d of %d; ending every rank)\n", msg, g_rank, g_size);
    if (len > 0 && write(g_stderr, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1) < 0) {
      /* nowhere left to say it */
    }
  }
  if (g_up) MPI_Abort(MPI_COMM_WORLD, status);
  _exit(status);
}

const void *rs__mpi_file_comm(void) { return g_up ? (const void *)&g_comm : NULL; }

#else /* the one-process build */

int rs__mpi_init(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  return 0;
}
void rs__mpi_finalize(void) {}
int rs__mpi_built(void) { return 0; }
int rs__mpi_rank(void) { return 0; }
int rs__mpi_size(void) { return 1; }
rs_code rs__mpi_agree(rs_code rc, rs_error *err)
{
  (void)err;
  return rc;
}

rs_code rs__mpi_gather(const void *items, size_t n, size_t item_size, void **out, size_t **counts, rs_error *err)
{
  *out = NULL;
  *counts = NULL;
  unsigned char *all = malloc(rs__mul(n ? n : 1, item_size ? item_size : 1));
  size_t *c = malloc(sizeof *c);
  if (!all || !c) {
    free(all);
    free(c);
    return rs__fail(err, RS_NOMEM, "out of memory for %zu items of %zu bytes", n, item_size);
  }
  if (n) memcpy(all, items, n * item_size);
  c[0] = n;
  *out = all;
  *counts = c;
  return RS_OK;
}

rs_code rs__mpi_bcast(void *buf, size_t n, rs_error *err)
{
  (void)buf;
  (void)n;
  (void)err;
  return RS_OK;
}

void rs__mpi_wait_all(void) {}

_Noreturn void rs__mpi_abort(int status, const char *msg)
{
  if (msg) fprintf(stderr, "%s\n", msg);
  fflush(NULL);
  _exit(status);
}

const void *rs__mpi_file_comm(void) { return NULL; }

#endif
