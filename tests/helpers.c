#define _XOPEN_SOURCE 700
#define _POSIX_C_SOURCE 200809L
#include "helpers.h"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Absolute, since the tests run the binary in other folders. */
static const char *absolute(const char *path, char *buf, size_t size)
{
  char *r = realpath(path, NULL);
  if (!r) return path;
  snprintf(buf, size, "%s", r);
  free(r);
  return buf;
}

const char *th_bin(void)
{
  static char buf[4096];
  const char *b = getenv("RAGSWEEP_BIN");
  return absolute(b && *b ? b : "build/ragsweep", buf, sizeof buf);
}

const char *th_trec_eval_bin(void)
{
  static char buf[4096];
  const char *b = getenv("RAGSWEEP_TREC_EVAL_BIN");
  if (b && *b) return absolute(b, buf, sizeof buf);
  snprintf(buf, sizeof buf, "%s", th_bin());
  char *slash = strrchr(buf, '/');
  snprintf(slash ? slash + 1 : buf, sizeof buf - (size_t)(slash ? slash + 1 - buf : 0), "trec_eval");
  return buf;
}

const char *th_serial_bin(void)
{
  static char buf[4096];
  const char *b = getenv("RAGSWEEP_SERIAL_BIN");
  return b && *b ? absolute(b, buf, sizeof buf) : NULL;
}

const char *th_conformance_dir(void)
{
  static char path[4096];
  const char *d = getenv("RAGSWEEP_CONFORMANCE");
  snprintf(path, sizeof path, "%s", d && *d ? d : "../shared/conformance");
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
  return path;
}

char *th_slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap) {
      char *nb = realloc(buf, 2 * cap + 1);
      if (!nb) { free(buf); buf = NULL; break; }
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (!buf) return NULL;
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

th_result th_run(const char *dir, char *const argv[], char *const env[], const char *stdin_path)
{
  th_result r = {0};
  char out_path[] = "/tmp/ragsweep-test-outXXXXXX", err_path[] = "/tmp/ragsweep-test-errXXXXXX";
  int ofd = mkstemp(out_path), efd = mkstemp(err_path);
  pid_t pid = fork();
  if (pid == 0) {
    int ifd = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);
    if (ifd < 0 || dup2(ifd, 0) < 0 || dup2(ofd, 1) < 0 || dup2(efd, 2) < 0) _exit(126);
    if (dir && chdir(dir) != 0) _exit(126);
    for (int i = 0; env && env[i]; i++) {
      char name[256];
      const char *eq = strchr(env[i], '=');
      if (!eq || (size_t)(eq - env[i]) >= sizeof name) continue;
      memcpy(name, env[i], (size_t)(eq - env[i]));
      name[eq - env[i]] = '\0';
      setenv(name, eq + 1, 1);
    }
    execv(argv[0], argv);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  close(ofd);
  close(efd);
  r.out = th_slurp(out_path, &r.out_len);
  r.err = th_slurp(err_path, NULL);
  unlink(out_path);
  unlink(err_path);
  return r;
}

int th_split(char *args, const char *prog, const char *sub, char **argv, int max)
{
  int n = 0;
  argv[n++] = (char *)prog;
  if (sub) argv[n++] = (char *)sub;
  for (char *tok = strtok(args, " "); tok && n < max - 1; tok = strtok(NULL, " ")) argv[n++] = tok;
  argv[n] = NULL;
  return n;
}

void th_free(th_result *r)
{
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

const char *th_write_temp(int slot, const char *name, const char *text)
{
  static char dirs[8][64];
  static char paths[8][256];
  if (slot < 0 || slot >= 8) return NULL; /* a test asking for more slots fails on the NULL, not elsewhere */
  if (!dirs[slot][0]) {
    snprintf(dirs[slot], sizeof dirs[slot], "/tmp/ragsweep-test-%d-XXXXXX", slot);
    if (!mkdtemp(dirs[slot])) return NULL;
    th_note_dir(dirs[slot]);
  }
  snprintf(paths[slot], sizeof paths[slot], "%s/%s", dirs[slot], name);
  FILE *f = fopen(paths[slot], "wb");
  if (!f) return NULL;
  fputs(text, f);
  fclose(f);
  return paths[slot];
}

char *th_ring_slot(void)
{
  static char ring[64][4096];
  static unsigned next;
  return ring[next++ % 64];
}

/* The folders to remove at exit.  A `make test` that left them made some
 * 2,500 folders in /tmp (3 GB), every run, until the disk was full. */
enum { MAX_NOTED_DIRS = 256 };
static char noted_dir[MAX_NOTED_DIRS][128];
static int n_noted;
static pid_t noted_by; /* a child forked by a test (exit, not _exit) must not remove its parent's */

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
  (void)st, (void)type, (void)ftw;
  remove(path);
  return 0;
}

static void remove_noted_dirs(void)
{
  if (getpid() != noted_by || getenv("RAGSWEEP_TEST_KEEP")) return;
  for (int i = 0; i < n_noted; i++) nftw(noted_dir[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void th_note_dir(const char *dir)
{
  if (noted_by != getpid()) { /* first in this process (a forked test inherits none to remove) */
    if (noted_by == 0) atexit(remove_noted_dirs);
    noted_by = getpid();
    n_noted = 0;
  }
  if (n_noted < MAX_NOTED_DIRS && strlen(dir) < sizeof noted_dir[0]) strcpy(noted_dir[n_noted++], dir);
}

char *th_fresh_dir(void)
{
  char *d = th_ring_slot();
  strcpy(d, "/tmp/ragsweep-test-XXXXXX");
  cr_assert(mkdtemp(d), "mkdtemp");
  th_note_dir(d);
  return d;
}

char *th_join(const char *dir, const char *name)
{
  char buf[4096], *p = th_ring_slot();
  snprintf(buf, sizeof buf, "%s/%s", dir, name);
  return strcpy(p, buf);
}

int th_exists(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0;
}

/* ragsweep with the arguments first, then ap's up to a NULL (at most 62). */
static th_result rs_args(const char *dir, char *const *env, const char *first, va_list ap)
{
  char *argv[64];
  int n = 0;
  argv[n++] = (char *)th_bin();
  for (const char *a = first; a && n < 63; a = va_arg(ap, const char *)) argv[n++] = (char *)a;
  argv[n] = NULL;
  return th_run(dir, argv, env, NULL);
}

th_result th_rs(const char *first, ...)
{
  va_list ap;
  va_start(ap, first);
  th_result r = rs_args(NULL, NULL, first, ap);
  va_end(ap);
  return r;
}

th_result th_rs_at(const char *dir, char *const *env, ...)
{
  va_list ap;
  va_start(ap, env);
  const char *first = va_arg(ap, const char *);
  th_result r = rs_args(dir, env, first, ap);
  va_end(ap);
  return r;
}

int th_strcmp_n(const char *a, size_t na, const char *b, size_t nb)
{
  char *x = malloc(na + 1), *y = malloc(nb + 1);
  if (!x || !y) abort();
  memcpy(x, a, na), x[na] = '\0';
  memcpy(y, b, nb), y[nb] = '\0';
  const int c = strcmp(x, y);
  free(x), free(y);
  return c;
}

void th_sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
  nanosleep(&ts, NULL);
}
