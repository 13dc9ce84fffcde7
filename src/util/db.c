/* db.c: SQLite for the files ragsweep keeps (see db.h); the only includer
 * of <sqlite3.h>. */
#define _POSIX_C_SOURCE 200809L
#include "util/db.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* How long a writer waits for another's write lock before giving up: a
 * history append or a cache put holds it for milliseconds, a cache merge
 * for seconds. */
#define BUSY_TIMEOUT_MS 30000

struct rs__db {
  sqlite3 *db;
  char *path;
  const rs__db_kind *kind;
};

struct rs__db_stmt {
  rs__db *db;
  sqlite3_stmt *st;
  char *what;
  int bind_rc; /* the first failed bind, reported by the next step */
};

/* SQLite's result code as ours: a file that is not a database or is
 * damaged is the input's fault (RS_FORMAT); anything else is I/O. */
static rs_code code_of(int sqlite_rc)
{
  switch (sqlite_rc & 0xff) {
  case SQLITE_NOTADB:
  case SQLITE_CORRUPT: return RS_FORMAT;
  case SQLITE_NOMEM: return RS_NOMEM;
  default: return RS_IO;
  }
}

static rs_code db_fail(rs__db *d, rs_error *err, const char *what)
{
  return rs__fail(err, code_of(sqlite3_extended_errcode(d->db)), "%s: %s: %s", d->path, what, sqlite3_errmsg(d->db));
}

const char *rs__db_path(const rs__db *d) { return d->path; }

rs_code rs__db_exec(rs__db *d, const char *sql, const char *what, rs_error *err)
{
  if (sqlite3_exec(d->db, sql, NULL, NULL, NULL) != SQLITE_OK) return db_fail(d, err, what);
  return RS_OK;
}

rs_code rs__db_query_int(rs__db *d, const char *sql, int64_t *out, rs_error *err)
{
  sqlite3_stmt *st = NULL;
  rs_code rc = RS_OK;
  if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(d, err, sql);
  int s = sqlite3_step(st);
  if (s == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
  else if (s == SQLITE_DONE) *out = 0;
  else rc = db_fail(d, err, sql);
  sqlite3_finalize(st);
  return rc;
}

rs_code rs__db_begin(rs__db *d, const char *what, rs_error *err) { return rs__db_exec(d, "BEGIN IMMEDIATE", what, err); }

rs_code rs__db_commit(rs__db *d, const char *what, rs_error *err) { return rs__db_exec(d, "COMMIT", what, err); }

void rs__db_rollback(rs__db *d)
{
  if (!sqlite3_get_autocommit(d->db)) sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
}

int64_t rs__db_changes(const rs__db *d) { return (int64_t)sqlite3_changes64(d->db); }

int64_t rs__db_last_id(const rs__db *d) { return (int64_t)sqlite3_last_insert_rowid(d->db); }

/* --- opening ----------------------------------------------------------------------- */

/* Puts the file in WAL mode (a no-op when it is already).  The change needs
 * the file to itself, and SQLite answers SQLITE_BUSY at once, without the
 * busy handler, while another process holds a lock (two nightly jobs
 * creating the same history): retried here for as long as the busy timeout. */
static rs_code set_wal(rs__db *d, rs_error *err)
{
  for (int waited_ms = 0;; waited_ms += 20) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(d->db, "PRAGMA journal_mode=WAL", -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    const int wal = rc == SQLITE_ROW && sqlite3_column_text(st, 0) &&
                    strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
    sqlite3_finalize(st);
    if (wal) return RS_OK;
    const int busy = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED || rc == SQLITE_ROW;
    if (!busy || waited_ms >= BUSY_TIMEOUT_MS) return db_fail(d, err, "cannot switch to the WAL journal");
    struct timespec pause = {0, 20 * 1000000L};
    nanosleep(&pause, NULL);
  }
}

/* The file's marks and its count of tables, read in one read transaction:
 * as three statements (three transactions) they could straddle another
 * process's creation of the file and see its tables but not yet its marks,
 * then reject the file as foreign (two processes opening one new LLM cache:
 * 39 failures in 300 before, 0 in 300 after). */
static rs_code read_marks(rs__db *d, int64_t *app, int64_t *ver, int64_t *n_tables, rs_error *err)
{
  rs_code rc = rs__db_exec(d, "BEGIN", "cannot read the file", err);
  if (rc) return rc;
  if ((rc = rs__db_query_int(d, "PRAGMA application_id", app, err)) ||
      (rc = rs__db_query_int(d, "PRAGMA user_version", ver, err)) ||
      (rc = rs__db_query_int(d, "SELECT count(*) FROM sqlite_schema", n_tables, err))) {
    rs__db_rollback(d);
    return rc;
  }
  return rs__db_commit(d, "cannot read the file", err);
}

/* Creates the schema in a fresh file, or checks the marks of an existing
 * one.  BEGIN IMMEDIATE takes the write lock first, so of two processes
 * creating the same file at once one creates and the other then sees a
 * finished file. */
static rs_code init_or_check(rs__db *d, rs_error *err)
{
  const rs__db_kind *k = d->kind;
  int64_t app = 0, ver = 0, n_tables = 0;
  rs_code rc;
  if ((rc = read_marks(d, &app, &ver, &n_tables, err))) return rc;
  if (app == 0 && ver == 0 && n_tables == 0) {
    /* Fresh: WAL first (it cannot change inside a transaction), then the
     * schema and the marks in one transaction. */
    if ((rc = set_wal(d, err)) || (rc = rs__db_begin(d, "cannot lock the new file", err)))
      return rc;
    if ((rc = rs__db_query_int(d, "PRAGMA application_id", &app, err)) ||
        (rc = rs__db_query_int(d, "PRAGMA user_version", &ver, err)) ||
        (rc = rs__db_query_int(d, "SELECT count(*) FROM sqlite_schema", &n_tables, err))) {
      rs__db_rollback(d);
      return rc;
    }
    if (app == 0 && ver == 0 && n_tables == 0) {
      char marks[96];
      snprintf(marks, sizeof marks, "PRAGMA application_id=%ld; PRAGMA user_version=%d;", (long)k->app_id,
               k->version);
      if ((rc = rs__db_exec(d, k->schema, "cannot create the tables", err)) ||
          (rc = rs__db_exec(d, marks, "cannot mark the file", err))) {
        rs__db_rollback(d);
        return rc;
      }
    }
    if ((rc = rs__db_commit(d, "cannot create the tables", err))) return rc;
    if ((rc = rs__db_query_int(d, "PRAGMA application_id", &app, err)) ||
        (rc = rs__db_query_int(d, "PRAGMA user_version", &ver, err)))
      return rc;
  }
  if (app != (int64_t)k->app_id)
    return rs__fail(err, RS_FORMAT, "%s: not a ragsweep %s: expected SQLite application_id 0x%08lx, found 0x%08llx%s",
                    d->path, k->noun, (unsigned long)k->app_id, (unsigned long long)app,
                    n_tables ? " (an SQLite file with other tables)" : "");
  if (ver != k->version)
    return rs__fail(err, RS_FORMAT, "%s: ragsweep %s schema version %lld; this ragsweep reads version %d", d->path,
                    k->noun, (long long)ver, k->version);
  /* Checked before: a foreign SQLite file is never switched to WAL.  A
   * no-op on our files, which are made in WAL mode. */
  return set_wal(d, err);
}

/* The folder part of path exists (for a clearer message than SQLite's
 * "unable to open database file"). */
static int folder_exists(const char *path, char *folder, size_t cap)
{
  const char *slash = strrchr(path, '/');
  if (!slash) return 1;
  size_t n = slash == path ? 1 : (size_t)(slash - path);
  if (n >= cap) return 1;
  memcpy(folder, path, n);
  folder[n] = '\0';
  struct stat sb;
  return stat(folder, &sb) == 0 && S_ISDIR(sb.st_mode);
}

void rs__db_close(rs__db *d)
{
  if (!d) return;
  sqlite3_close(d->db);
  free(d->path);
  free(d);
}

rs_code rs__db_open(const char *path, const rs__db_kind *kind, int create, rs__db **out, rs_error *err)
{
  char folder[4096];
  struct stat sb;
  if (!folder_exists(path, folder, sizeof folder))
    return rs__fail(err, RS_IO, "%s: cannot create the %s: folder %s does not exist", path, kind->noun, folder);
  const int exists = stat(path, &sb) == 0;
  if (!create && !exists) return rs__fail(err, RS_IO, "%s: cannot open the %s: %s", path, kind->noun, strerror(errno));
  if (exists && S_ISDIR(sb.st_mode))
    return rs__fail(err, RS_IO, "%s: is a folder; expected the %s's file (such as %s/%s)", path, kind->noun, path,
                    kind->file_name);
  rs__db *d = rs__calloc(1, sizeof *d);
  if (!d || !(d->path = strdup(path))) {
    free(d);
    return rs__fail(err, RS_NOMEM, "%s: out of memory", path);
  }
  d->kind = kind;
  rs_code rc = RS_OK;
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path, &d->db, flags, NULL) != SQLITE_OK) {
    if (!d->db) {
      rc = rs__fail(err, RS_NOMEM, "%s: out of memory", path);
      goto fail;
    }
    char what[64];
    snprintf(what, sizeof what, "cannot %s the %s", create && !exists ? "create" : "open", kind->noun);
    rc = db_fail(d, err, what);
    goto fail;
  }
  sqlite3_extended_result_codes(d->db, 1);
  /* Writers wait for each other's write locks instead of failing. */
  sqlite3_busy_timeout(d->db, BUSY_TIMEOUT_MS);
  /* The first statement that reads the file: a file that is not SQLite at
   * all fails here with SQLITE_NOTADB. */
  int64_t app = 0;
  if ((rc = rs__db_query_int(d, "PRAGMA application_id", &app, err)) != RS_OK) {
    if (rc == RS_FORMAT)
      rc = rs__fail(err, RS_FORMAT, "%s: not a ragsweep %s: %s", path, kind->noun, sqlite3_errmsg(d->db));
    goto fail;
  }
  /* synchronous=NORMAL does not fsync at each commit, but the commit is
   * written to the WAL before sqlite3_step returns, so a killed process
   * loses nothing committed (only an OS crash or power loss can roll back
   * the latest commits; the file stays consistent either way).  One fsync
   * per reply would cost milliseconds for no gain against the failure we
   * guard against: an interrupted or killed run. */
  if ((rc = rs__db_exec(d, "PRAGMA synchronous=NORMAL", "cannot set the journal's synchronous mode", err)) ||
      (rc = init_or_check(d, err)))
    goto fail;
  *out = d;
  return RS_OK;
fail:
  rs__db_close(d);
  return rc;
}

/* --- statements -------------------------------------------------------------------- */

rs_code rs__db_prepare(rs__db *d, const char *sql, const char *what, int persistent, rs__db_stmt **out,
                       rs_error *err)
{
  rs__db_stmt *s = rs__calloc(1, sizeof *s);
  if (!s || !(s->what = strdup(what))) {
    free(s);
    return rs__fail(err, RS_NOMEM, "%s: out of memory", d->path);
  }
  s->db = d;
  if (sqlite3_prepare_v3(d->db, sql, -1, persistent ? SQLITE_PREPARE_PERSISTENT : 0, &s->st, NULL) != SQLITE_OK) {
    rs_code rc = db_fail(d, err, what);
    rs__db_stmt_free(s);
    return rc;
  }
  *out = s;
  return RS_OK;
}

void rs__db_stmt_free(rs__db_stmt *s)
{
  if (!s) return;
  sqlite3_finalize(s->st);
  free(s->what);
  free(s);
}

static void bound(rs__db_stmt *s, int rc)
{
  if (rc != SQLITE_OK && s->bind_rc == SQLITE_OK) s->bind_rc = rc;
}

void rs__db_bind_int64(rs__db_stmt *s, int i, int64_t v) { bound(s, sqlite3_bind_int64(s->st, i, (sqlite3_int64)v)); }

void rs__db_bind_double(rs__db_stmt *s, int i, double v) { bound(s, sqlite3_bind_double(s->st, i, v)); }

void rs__db_bind_text(rs__db_stmt *s, int i, const char *t)
{
  bound(s, t ? sqlite3_bind_text(s->st, i, t, -1, SQLITE_STATIC) : sqlite3_bind_null(s->st, i));
}

void rs__db_bind_blob(rs__db_stmt *s, int i, const void *p, size_t n)
{
  /* A zero-length blob must not be bound as NULL (NOT NULL columns). */
  static const char empty[1] = "";
  if (n > (size_t)INT_MAX) {
    bound(s, SQLITE_TOOBIG);
    return;
  }
  bound(s, sqlite3_bind_blob(s->st, i, n ? p : empty, (int)n, SQLITE_STATIC));
}

rs_code rs__db_step(rs__db_stmt *s, int *row, rs_error *err)
{
  *row = 0;
  if (s->bind_rc != SQLITE_OK)
    return rs__fail(err, code_of(s->bind_rc), "%s: %s: %s", s->db->path, s->what, sqlite3_errstr(s->bind_rc));
  int r = sqlite3_step(s->st);
  if (r == SQLITE_ROW) *row = 1;
  else if (r != SQLITE_DONE) return db_fail(s->db, err, s->what);
  return RS_OK;
}

void rs__db_reset(rs__db_stmt *s)
{
  sqlite3_reset(s->st);
  sqlite3_clear_bindings(s->st);
  s->bind_rc = SQLITE_OK;
}

int rs__db_col_is_null(rs__db_stmt *s, int i) { return sqlite3_column_type(s->st, i) == SQLITE_NULL; }

int64_t rs__db_col_int64(rs__db_stmt *s, int i) { return (int64_t)sqlite3_column_int64(s->st, i); }

double rs__db_col_double(rs__db_stmt *s, int i)
{
  /* SQLite stores a NaN as NULL; read it back as one. */
  return sqlite3_column_type(s->st, i) == SQLITE_NULL ? (double)NAN : sqlite3_column_double(s->st, i);
}

const char *rs__db_col_text(rs__db_stmt *s, int i, size_t *len)
{
  const char *t = (const char *)sqlite3_column_text(s->st, i);
  if (len) *len = t ? (size_t)sqlite3_column_bytes(s->st, i) : 0;
  return t;
}

const void *rs__db_col_blob(rs__db_stmt *s, int i, size_t *len)
{
  const void *b = sqlite3_column_blob(s->st, i);
  *len = (size_t)sqlite3_column_bytes(s->st, i);
  return b ? b : "";
}

/* --- whole-file -------------------------------------------------------------------- */

rs_code rs__db_bytes(rs__db *d, uint64_t *bytes, rs_error *err)
{
  int64_t pages = 0, size = 0;
  rs_code rc;
  if ((rc = rs__db_query_int(d, "PRAGMA page_count", &pages, err)) ||
      (rc = rs__db_query_int(d, "PRAGMA page_size", &size, err)))
    return rc;
  *bytes = (uint64_t)pages * (uint64_t)size;
  return RS_OK;
}

rs_code rs__db_verify(rs__db *d, rs_error *err)
{
  sqlite3_stmt *st = NULL;
  rs_code rc = RS_OK;
  if (sqlite3_prepare_v2(d->db, "PRAGMA integrity_check(1)", -1, &st, NULL) != SQLITE_OK)
    return db_fail(d, err, "cannot check the file");
  if (sqlite3_step(st) != SQLITE_ROW) rc = db_fail(d, err, "cannot check the file");
  else {
    const char *r = (const char *)sqlite3_column_text(st, 0);
    if (!r || strcmp(r, "ok") != 0)
      rc = rs__fail(err, RS_FORMAT, "%s: the %s is damaged: %s", d->path, d->kind->noun, r ? r : "(no answer)");
  }
  sqlite3_finalize(st);
  return rc;
}
