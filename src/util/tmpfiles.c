/* tmpfiles.c: the registry of live temporary files and its signal handler. */
#define _POSIX_C_SOURCE 200809L
#include "util/tmpfiles.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* A fixed table, so the handler never walks memory that malloc may be
 * changing: a slot holds a pointer or NULL, and forget clears the slot
 * before freeing what it pointed to. */
enum { TMP_SLOTS = 256 };
static char *volatile slots[TMP_SLOTS];
static int installed;

static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void on_fatal_signal(int sig)
{
  const int saved = errno;
  for (size_t i = 0; i < TMP_SLOTS; i++) {
    char *p = slots[i];
    if (p) unlink(p); /* a folder: EISDIR, left for the second pass */
  }
  for (size_t i = 0; i < TMP_SLOTS; i++) { /* folders, once the files in them are gone */
    char *p = slots[i];
    if (p) rmdir(p);
  }
  /* Die of the same signal, so the parent sees "killed by SIGINT" (a shell
   * then stops a script) rather than an ordinary exit status. */
  signal(sig, SIG_DFL);
  raise(sig);
  errno = saved;
}

static void install(void)
{
  installed = 1;
  for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++) {
    struct sigaction old, sa;
    if (sigaction(fatal_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigfillset(&sa.sa_mask); /* one cleanup at a time */
    sigaction(fatal_signals[i], &sa, NULL);
  }
}

int rs__tmp_register(const char *path)
{
  if (!installed) install();
  for (int i = 0; i < TMP_SLOTS; i++) {
    if (slots[i]) continue;
    char *copy = strdup(path);
    if (!copy) return -1;
    slots[i] = copy;
    return i;
  }
  return -1;
}

void rs__tmp_forget(int h)
{
  if (h < 0 || h >= TMP_SLOTS) return;
  char *p = slots[h];
  slots[h] = NULL;
  free(p);
}

/* ".NAME.tmp.PID" with a non-empty NAME and an all-digit PID: the pid, else 0. */
static pid_t temp_pid(const char *name)
{
  if (name[0] != '.') return 0;
  const char *t = strstr(name + 1, ".tmp.");
  if (!t || t == name + 1) return 0;
  for (const char *n; (n = strstr(t + 1, ".tmp.")) != NULL;) t = n; /* the last one: NAME may hold ".tmp." */
  const char *d = t + 5;
  if (!*d || strlen(d) > 9) return 0;
  long pid = 0;
  for (; *d; d++) {
    if (*d < '0' || *d > '9') return 0;
    pid = pid * 10 + (*d - '0');
  }
  return (pid_t)pid;
}

/* 1 when entry is ".name.tmp.<digits>" (name NULL: any name). */
static int is_temp_of(const char *entry, const char *name)
{
  if (!name) return 1;
  const size_t n = strlen(name);
  return entry[0] == '.' && strncmp(entry + 1, name, n) == 0 && strncmp(entry + 1 + n, ".tmp.", 5) == 0 &&
         strchr(entry + 1 + n + 5, '.') == NULL;
}

static size_t sweep(const char *dir, const char *name)
{
  DIR *d = opendir(dir);
  if (!d) return 0;
  size_t removed = 0;
  const pid_t self = getpid();
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    const pid_t pid = temp_pid(e->d_name);
    if (pid <= 0 || pid == self || !is_temp_of(e->d_name, name)) continue;
    /* EPERM means the process exists (another user's): keep its file. */
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    char *p = malloc(len);
    if (!p) break;
    memcpy(p, dir, strlen(dir));
    p[strlen(dir)] = '/';
    memcpy(p + strlen(dir) + 1, e->d_name, strlen(e->d_name) + 1);
    if (unlink(p) == 0) removed++;
    free(p);
  }
  closedir(d);
  return removed;
}

size_t rs__tmp_sweep_stale(const char *dir) { return sweep(dir, NULL); }

size_t rs__tmp_sweep_stale_of(const char *dir, const char *name) { return sweep(dir, name); }

rs_code rs__write_file_atomic(const char *path, const char *data, size_t len, const char *what, rs_error *err)
{
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  if (!*base) return rs__fail(err, RS_USAGE, "%s: expected a file name (such as %s), found a folder", path, what);
  const size_t dir_len = slash ? (slash == path ? 1 : (size_t)(slash - path)) : 1;
  const char *dir_src = slash ? path : ".";
  char *dir = malloc(dir_len + 1), *tmp = malloc(dir_len + strlen(base) + 40);
  rs_code rc = RS_OK;
  if (!dir || !tmp) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  memcpy(dir, dir_src, dir_len);
  dir[dir_len] = '\0';
  sprintf(tmp, "%s/.%s.tmp.%ld", dir, base, (long)getpid());
  /* Only this file's leftovers: the folder may be shared (node_exporter's
   * textfile directory, a CI workspace). */
  rs__tmp_sweep_stale_of(dir, base);
  const int h = rs__tmp_register(tmp);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    rc = rs__fail(err, RS_IO, "%s: cannot create the temporary file %s: %s (is the folder there and writable?)", path,
                  tmp, strerror(errno));
    rs__tmp_forget(h);
    goto done;
  }
  const int wrote = fwrite(data, 1, len, f) == len;
  const int saved = errno;
  if (fclose(f) != 0 || !wrote) {
    rc = rs__fail(err, RS_IO, "%s: cannot write the temporary file %s: %s", path, tmp, strerror(wrote ? errno : saved));
    unlink(tmp);
  } else if (rename(tmp, path) != 0) {
    rc = rs__fail(err, RS_IO, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
    unlink(tmp);
  }
  rs__tmp_forget(h);
done:
  free(dir);
  free(tmp);
  return rc;
}
