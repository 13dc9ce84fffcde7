/* cache.c: the LLM reply cache in SQLite (the only includer of <sqlite3.h>). */
#define _POSIX_C_SOURCE 200809L
#include "llm/cache.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* "RSLC": tells a ragsweep cache from any other SQLite file. */
#define APP_ID 0x52534c43

struct rs__llm_cache {
  sqlite3 *db;
  char *path;
  sqlite3_stmt *get, *has, *put; /* prepared once, reset after each use */
};

static const char SCHEMA[] =
    "CREATE TABLE reply("
    " key BLOB PRIMARY KEY NOT NULL,"
    " status INTEGER NOT NULL,"
    " body BLOB NOT NULL,"
    " prompt_tokens INTEGER NOT NULL,"
    " completion_tokens INTEGER NOT NULL,"
    " latency_ms REAL NOT NULL,"
    " model TEXT NOT NULL,"
    " created INTEGER NOT NULL) WITHOUT ROWID;";

static rs_code db_fail(rs__llm_cache *c, rs_error *err, const char *what)
{
  int ext = sqlite3_extended_errcode(c->db);
  rs_code code = (ext & 0xff) == SQLITE_NOTADB || (ext & 0xff) == SQLITE_CORRUPT ? RS_FORMAT
                 : (ext & 0xff) == SQLITE_NOMEM                                  ? RS_NOMEM
                                                                                 : RS_IO;
  return rs__fail(err, code, "%s: %s: %s", c->path, what, sqlite3_errmsg(c->db));
}

/* Runs SQL that returns no rows we need. */
static rs_code exec(rs__llm_cache *c, const char *sql, rs_error *err)
{
  if (sqlite3_exec(c->db, sql, NULL, NULL, NULL) != SQLITE_OK) return db_fail(c, err, sql);
  return RS_OK;
}

/* One integer from a one-row query (a PRAGMA or a count). */
static rs_code query_int(rs__llm_cache *c, const char *sql, int64_t *out, rs_error *err)
{
  sqlite3_stmt *st = NULL;
  rs_code rc = RS_OK;
  if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(c, err, sql);
  int s = sqlite3_step(st);
  if (s == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
  else if (s == SQLITE_DONE) *out = 0;
  else rc = db_fail(c, err, sql);
  sqlite3_finalize(st);
  return rc;
}

/* Creates the schema in a fresh file, or checks the marks of an existing
 * one.  BEGIN IMMEDIATE takes the write lock first, so of two processes
 * creating the same file at once one creates and the other then sees a
 * finished cache. */
static rs_code init_or_check(rs__llm_cache *c, rs_error *err)
{
  int64_t app = 0, ver = 0, n_tables = 0;
  rs_code rc;
  if ((rc = query_int(c, "PRAGMA application_id", &app, err))) return rc;
  if ((rc = query_int(c, "PRAGMA user_version", &ver, err))) return rc;
  if (app == 0 && ver == 0) {
    if ((rc = exec(c, "BEGIN IMMEDIATE", err))) return rc;
    if ((rc = query_int(c, "PRAGMA application_id", &app, err)) ||
        (rc = query_int(c, "PRAGMA user_version", &ver, err)) ||
        (rc = query_int(c, "SELECT count(*) FROM sqlite_schema", &n_tables, err))) {
      sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
      return rc;
    }
    if (app == 0 && ver == 0 && n_tables == 0) {
      char sql[sizeof SCHEMA + 96];
      snprintf(sql, sizeof sql, "%s PRAGMA application_id=%d; PRAGMA user_version=%d;", SCHEMA, APP_ID,
               RS_LLM_CACHE_VERSION);
      if ((rc = exec(c, sql, err))) {
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
      }
    }
    if ((rc = exec(c, "COMMIT", err))) return rc;
    if ((rc = query_int(c, "PRAGMA application_id", &app, err)) ||
        (rc = query_int(c, "PRAGMA user_version", &ver, err)))
      return rc;
  }
  if (app != APP_ID)
    return rs__fail(err, RS_FORMAT,
                    "%s: not a ragsweep LLM cache: expected SQLite application_id 0x%08x, found 0x%08llx%s", c->path,
                    APP_ID, (unsigned long long)app, n_tables ? " (an SQLite file with other tables)" : "");
  if (ver != RS_LLM_CACHE_VERSION)
    return rs__fail(err, RS_FORMAT, "%s: ragsweep LLM cache schema version %lld; this ragsweep reads version %d",
                    c->path, (long long)ver, RS_LLM_CACHE_VERSION);
  return RS_OK;
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

static rs_code open_cache(const char *path, int create, rs__llm_cache **out, rs_error *err)
{
  char folder[4096];
  struct stat sb;
  if (!folder_exists(path, folder, sizeof folder))
    return rs__fail(err, RS_IO, "%s: cannot create the cache: folder %s does not exist", path, folder);
  if (!create && stat(path, &sb) != 0)
    return rs__fail(err, RS_IO, "%s: cannot open the cache: %s", path, strerror(errno));
  rs__llm_cache *c = rs__calloc(1, sizeof *c);
  if (!c || !(c->path = strdup(path))) {
    free(c);
    return rs__fail(err, RS_NOMEM, "%s: out of memory", path);
  }
  rs_code rc = RS_OK;
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path, &c->db, flags, NULL) != SQLITE_OK) {
    rc = c->db ? db_fail(c, err, "cannot open the cache") : rs__fail(err, RS_NOMEM, "%s: out of memory", path);
    goto fail;
  }
  sqlite3_extended_result_codes(c->db, 1);
  /* Shards wait for each other's write locks instead of failing. */
  sqlite3_busy_timeout(c->db, 30000);
  /* The first statement that reads the file: a file that is not SQLite at
   * all fails here with SQLITE_NOTADB. */
  int64_t app = 0;
  if (query_int(c, "PRAGMA application_id", &app, err) != RS_OK) {
    rc = rs__fail(err, RS_FORMAT, "%s: not a ragsweep LLM cache: %s", path, sqlite3_errmsg(c->db));
    goto fail;
  }
  /* WAL: readers never block the writer and a commit is one append to the
   * -wal file.  synchronous=NORMAL does not fsync at each commit, but the
   * commit is written to the file before sqlite3_step returns, so a killed
   * process loses nothing committed (only an OS crash or power loss can
   * roll back the latest commits; the file stays consistent either way).
   * One fsync per reply would cost milliseconds for no gain against the
   * failure we guard against: an interrupted or killed judge run. */
  if ((rc = exec(c, "PRAGMA journal_mode=WAL", err)) || (rc = exec(c, "PRAGMA synchronous=NORMAL", err)) ||
      (rc = init_or_check(c, err)))
    goto fail;
  if (sqlite3_prepare_v3(c->db,
                         "SELECT status, body, prompt_tokens, completion_tokens, latency_ms, model, created"
                         " FROM reply WHERE key = ?1",
                         -1, SQLITE_PREPARE_PERSISTENT, &c->get, NULL) != SQLITE_OK ||
      sqlite3_prepare_v3(c->db, "SELECT 1 FROM reply WHERE key = ?1", -1, SQLITE_PREPARE_PERSISTENT, &c->has,
                         NULL) != SQLITE_OK ||
      sqlite3_prepare_v3(c->db,
                         "INSERT OR IGNORE INTO reply(key, status, body, prompt_tokens, completion_tokens,"
                         " latency_ms, model, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                         -1, SQLITE_PREPARE_PERSISTENT, &c->put, NULL) != SQLITE_OK) {
    rc = db_fail(c, err, "cannot prepare the cache's statements");
    goto fail;
  }
  *out = c;
  return RS_OK;
fail:
  rs__llm_cache_close(c);
  return rc;
}

rs_code rs__llm_cache_open(const char *path, rs__llm_cache **out, rs_error *err)
{
  return open_cache(path, 1, out, err);
}

rs_code rs__llm_cache_open_existing(const char *path, rs__llm_cache **out, rs_error *err)
{
  return open_cache(path, 0, out, err);
}

void rs__llm_cache_close(rs__llm_cache *c)
{
  if (!c) return;
  sqlite3_finalize(c->get);
  sqlite3_finalize(c->has);
  sqlite3_finalize(c->put);
  sqlite3_close(c->db);
  free(c->path);
  free(c);
}

const char *rs__llm_cache_path(const rs__llm_cache *c) { return c->path; }

rs_code rs__llm_cache_get(rs__llm_cache *c, const uint8_t key[32], rs__cache_entry *out, int *found, rs_error *err)
{
  sqlite3_stmt *st = c->get;
  rs_code rc = RS_OK;
  *found = 0;
  sqlite3_bind_blob(st, 1, key, 32, SQLITE_STATIC);
  int s = sqlite3_step(st);
  if (s == SQLITE_ROW) {
    const size_t blen = (size_t)sqlite3_column_bytes(st, 1);
    const void *b = sqlite3_column_blob(st, 1);
    const char *m = (const char *)sqlite3_column_text(st, 5);
    const size_t mlen = (size_t)sqlite3_column_bytes(st, 5);
    char *body = rs__malloc(blen + 1), *model = rs__malloc(mlen + 1);
    if (!body || !model) {
      free(body);
      free(model);
      rc = rs__fail(err, RS_NOMEM, "%s: out of memory for a %zu-byte reply", c->path, blen);
      goto done;
    }
    if (blen) memcpy(body, b, blen);
    body[blen] = '\0';
    if (mlen) memcpy(model, m, mlen);
    model[mlen] = '\0';
    *out = (rs__cache_entry){.body = body,
                             .body_len = blen,
                             .status = (long)sqlite3_column_int64(st, 0),
                             .prompt_tokens = sqlite3_column_int64(st, 2),
                             .completion_tokens = sqlite3_column_int64(st, 3),
                             .latency_ms = sqlite3_column_double(st, 4),
                             .model = model,
                             .created = sqlite3_column_int64(st, 6)};
    *found = 1;
  } else if (s != SQLITE_DONE) {
    rc = db_fail(c, err, "cannot read a reply");
  }
done:
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return rc;
}

rs_code rs__llm_cache_has(rs__llm_cache *c, const uint8_t key[32], int *found, rs_error *err)
{
  sqlite3_stmt *st = c->has;
  rs_code rc = RS_OK;
  sqlite3_bind_blob(st, 1, key, 32, SQLITE_STATIC);
  int s = sqlite3_step(st);
  if (s == SQLITE_ROW || s == SQLITE_DONE) *found = s == SQLITE_ROW;
  else rc = db_fail(c, err, "cannot look a key up");
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return rc;
}

rs_code rs__llm_cache_put(rs__llm_cache *c, const uint8_t key[32], const rs__cache_entry *e, rs_error *err)
{
  sqlite3_stmt *st = c->put;
  rs_code rc = RS_OK;
  if (e->body_len > (size_t)INT32_MAX)
    return rs__fail(err, RS_UNSUPPORTED, "%s: a %zu-byte reply is larger than the cache stores (2 GiB)", c->path,
                    e->body_len);
  /* A zero-length blob must not be bound as NULL (the column is NOT NULL). */
  static const char empty[1] = "";
  sqlite3_bind_blob(st, 1, key, 32, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, (sqlite3_int64)e->status);
  sqlite3_bind_blob(st, 3, e->body_len ? e->body : empty, (int)e->body_len, SQLITE_STATIC);
  sqlite3_bind_int64(st, 4, e->prompt_tokens);
  sqlite3_bind_int64(st, 5, e->completion_tokens);
  sqlite3_bind_double(st, 6, e->latency_ms);
  sqlite3_bind_text(st, 7, e->model ? e->model : "", -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 8, e->created ? e->created : (int64_t)time(NULL));
  /* Autocommit: the statement is its own transaction, committed (in the
   * WAL) when step returns. */
  if (sqlite3_step(st) != SQLITE_DONE) rc = db_fail(c, err, "cannot store a reply");
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return rc;
}

rs_code rs__llm_cache_merge(rs__llm_cache *dst, const char *src_path, uint64_t *added, rs_error *err)
{
  rs__llm_cache *src = NULL;
  sqlite3_stmt *st = NULL;
  rs_code rc;
  /* Open it on its own first: this checks its marks and version, and
   * names it in the error. */
  if ((rc = rs__llm_cache_open_existing(src_path, &src, err))) return rc;
  rs__llm_cache_close(src);
  if (sqlite3_prepare_v2(dst->db, "ATTACH DATABASE ?1 AS src", -1, &st, NULL) != SQLITE_OK)
    return db_fail(dst, err, "cannot attach a cache to merge");
  sqlite3_bind_text(st, 1, src_path, -1, SQLITE_STATIC);
  int s = sqlite3_step(st);
  sqlite3_finalize(st);
  if (s != SQLITE_DONE) return rs__fail(err, RS_IO, "%s: cannot attach %s: %s", dst->path, src_path, sqlite3_errmsg(dst->db));
  /* One transaction: a merge is all or nothing, and the count of rows the
   * INSERT added (ignored keys are not counted) is exact. */
  if (!(rc = exec(dst, "BEGIN IMMEDIATE", err))) {
    if (sqlite3_exec(dst->db, "INSERT OR IGNORE INTO main.reply SELECT key, status, body, prompt_tokens,"
                              " completion_tokens, latency_ms, model, created FROM src.reply ORDER BY key",
                     NULL, NULL, NULL) != SQLITE_OK) {
      rc = rs__fail(err, RS_IO, "%s: cannot merge %s: %s", dst->path, src_path, sqlite3_errmsg(dst->db));
      sqlite3_exec(dst->db, "ROLLBACK", NULL, NULL, NULL);
    } else {
      const uint64_t n = (uint64_t)sqlite3_changes64(dst->db);
      if (!(rc = exec(dst, "COMMIT", err))) *added = n;
    }
  }
  sqlite3_exec(dst->db, "DETACH DATABASE src", NULL, NULL, NULL);
  return rc;
}

rs_code rs__llm_cache_count(rs__llm_cache *c, uint64_t *n, rs_error *err)
{
  int64_t v = 0;
  rs_code rc = query_int(c, "SELECT count(*) FROM reply", &v, err);
  if (!rc) *n = (uint64_t)v;
  return rc;
}

rs_code rs__llm_cache_bytes(rs__llm_cache *c, uint64_t *bytes, rs_error *err)
{
  int64_t pages = 0, size = 0;
  rs_code rc;
  if ((rc = query_int(c, "PRAGMA page_count", &pages, err)) || (rc = query_int(c, "PRAGMA page_size", &size, err)))
    return rc;
  *bytes = (uint64_t)pages * (uint64_t)size;
  return RS_OK;
}

rs_code rs__llm_cache_models(rs__llm_cache *c, rs__cache_model_count **out, size_t *n_out, rs_error *err)
{
  static const char sql[] = "SELECT model, count(*), sum(status < 200 OR status > 299) FROM reply"
                            " GROUP BY model ORDER BY CAST(model AS BLOB)";
  sqlite3_stmt *st = NULL;
  rs__cache_model_count *m = NULL;
  size_t n = 0, cap = 0;
  rs_code rc = RS_OK;
  int s;
  if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(c, err, "cannot list models");
  while ((s = sqlite3_step(st)) == SQLITE_ROW) {
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      rs__cache_model_count *g = rs__realloc(m, rs__mul(cap, sizeof *g));
      if (!g) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
      m = g;
    }
    const char *name = (const char *)sqlite3_column_text(st, 0);
    if (!(m[n].model = strdup(name ? name : ""))) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
    m[n].n = (uint64_t)sqlite3_column_int64(st, 1);
    m[n].n_error = (uint64_t)sqlite3_column_int64(st, 2);
    n++;
  }
  if (s != SQLITE_DONE) rc = db_fail(c, err, "cannot list models");
done:
  sqlite3_finalize(st);
  if (rc) {
    rs__cache_model_counts_free(m, n);
    return rc;
  }
  *out = m;
  *n_out = n;
  return RS_OK;
}

void rs__cache_model_counts_free(rs__cache_model_count *m, size_t n)
{
  for (size_t i = 0; m && i < n; i++) free(m[i].model);
  free(m);
}

rs_code rs__llm_cache_verify(rs__llm_cache *c, rs_error *err)
{
  sqlite3_stmt *st = NULL;
  rs_code rc = RS_OK;
  if (sqlite3_prepare_v2(c->db, "PRAGMA integrity_check(1)", -1, &st, NULL) != SQLITE_OK)
    return db_fail(c, err, "cannot check the file");
  if (sqlite3_step(st) != SQLITE_ROW) rc = db_fail(c, err, "cannot check the file");
  else {
    const char *r = (const char *)sqlite3_column_text(st, 0);
    if (!r || strcmp(r, "ok") != 0)
      rc = rs__fail(err, RS_FORMAT, "%s: the cache is damaged: %s", c->path, r ? r : "(no answer)");
  }
  sqlite3_finalize(st);
  return rc;
}

void rs__cache_entry_free(rs__cache_entry *e)
{
  if (!e) return;
  free(e->body);
  free(e->model);
  *e = (rs__cache_entry){0};
}
