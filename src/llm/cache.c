/* cache.c: the LLM reply cache, an SQLite file kept through util/db.h. */
#define _POSIX_C_SOURCE 200809L
#include "llm/cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/db.h"

static const rs__db_kind CACHE_KIND = {
    .noun = "LLM cache",
    .file_name = "cache.sqlite",
    .app_id = 0x52534c43, /* "RSLC" */
    .version = RS_LLM_CACHE_VERSION,
    .schema = "CREATE TABLE reply("
              " key BLOB PRIMARY KEY NOT NULL,"
              " status INTEGER NOT NULL,"
              " body BLOB NOT NULL,"
              " prompt_tokens INTEGER NOT NULL,"
              " completion_tokens INTEGER NOT NULL,"
              " latency_ms REAL NOT NULL,"
              " model TEXT NOT NULL,"
              " created INTEGER NOT NULL) WITHOUT ROWID;",
};

struct rs__llm_cache {
  rs__db *db;
  rs__db_stmt *get, *has, *put; /* prepared once, reset after each use */
  rs__db_stmt *put_sent;        /* prepared at the first rs__llm_cache_put_sent */
};

static rs_code open_cache(const char *path, int create, rs__llm_cache **out, rs_error *err)
{
  rs__llm_cache *c = rs__calloc(1, sizeof *c);
  if (!c) return rs__fail(err, RS_NOMEM, "%s: out of memory", path);
  rs_code rc;
  if ((rc = rs__db_open(path, &CACHE_KIND, create, &c->db, err)) ||
      (rc = rs__db_prepare(c->db,
                           "SELECT status, body, prompt_tokens, completion_tokens, latency_ms, model, created"
                           " FROM reply WHERE key = ?1",
                           "cannot read a reply", 1, &c->get, err)) ||
      (rc = rs__db_prepare(c->db, "SELECT 1 FROM reply WHERE key = ?1", "cannot look a key up", 1, &c->has, err)) ||
      (rc = rs__db_prepare(c->db,
                           "INSERT OR IGNORE INTO reply(key, status, body, prompt_tokens, completion_tokens,"
                           " latency_ms, model, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                           "cannot store a reply", 1, &c->put, err))) {
    rs__llm_cache_close(c);
    return rc;
  }
  *out = c;
  return RS_OK;
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
  rs__db_stmt_free(c->get);
  rs__db_stmt_free(c->has);
  rs__db_stmt_free(c->put);
  rs__db_stmt_free(c->put_sent);
  rs__db_close(c->db);
  free(c);
}

const char *rs__llm_cache_path(const rs__llm_cache *c) { return rs__db_path(c->db); }

rs_code rs__llm_cache_get(rs__llm_cache *c, const uint8_t key[32], rs__cache_entry *out, int *found, rs_error *err)
{
  rs__db_stmt *st = c->get;
  int row = 0;
  *found = 0;
  rs__db_bind_blob(st, 1, key, 32);
  rs_code rc = rs__db_step(st, &row, err);
  if (!rc && row) {
    size_t blen = 0, mlen = 0;
    const void *b = rs__db_col_blob(st, 1, &blen);
    const char *m = rs__db_col_text(st, 5, &mlen);
    char *body = rs__malloc(blen + 1), *model = rs__malloc(mlen + 1);
    if (!body || !model) {
      free(body);
      free(model);
      rc = rs__fail(err, RS_NOMEM, "%s: out of memory for a %zu-byte reply", rs__llm_cache_path(c), blen);
      goto done;
    }
    if (blen) memcpy(body, b, blen);
    body[blen] = '\0';
    if (mlen) memcpy(model, m, mlen);
    model[mlen] = '\0';
    *out = (rs__cache_entry){.body = body,
                             .body_len = blen,
                             .status = (long)rs__db_col_int64(st, 0),
                             .prompt_tokens = rs__db_col_int64(st, 2),
                             .completion_tokens = rs__db_col_int64(st, 3),
                             .latency_ms = rs__db_col_double(st, 4),
                             .model = model,
                             .created = rs__db_col_int64(st, 6)};
    *found = 1;
  }
done:
  rs__db_reset(st);
  return rc;
}

rs_code rs__llm_cache_has(rs__llm_cache *c, const uint8_t key[32], int *found, rs_error *err)
{
  rs__db_stmt *st = c->has;
  int row = 0;
  rs__db_bind_blob(st, 1, key, 32);
  rs_code rc = rs__db_step(st, &row, err);
  if (!rc) *found = row;
  rs__db_reset(st);
  return rc;
}

rs_code rs__llm_cache_put(rs__llm_cache *c, const uint8_t key[32], const rs__cache_entry *e, rs_error *err)
{
  rs__db_stmt *st = c->put;
  int row = 0;
  if (e->body_len > (size_t)INT32_MAX)
    return rs__fail(err, RS_UNSUPPORTED, "%s: a %zu-byte reply is larger than the cache stores (2 GiB)",
                    rs__llm_cache_path(c), e->body_len);
  rs__db_bind_blob(st, 1, key, 32);
  rs__db_bind_int64(st, 2, (int64_t)e->status);
  rs__db_bind_blob(st, 3, e->body, e->body_len);
  rs__db_bind_int64(st, 4, e->prompt_tokens);
  rs__db_bind_int64(st, 5, e->completion_tokens);
  rs__db_bind_double(st, 6, e->latency_ms);
  rs__db_bind_text(st, 7, e->model ? e->model : "");
  rs__db_bind_int64(st, 8, e->created ? e->created : (int64_t)time(NULL));
  /* Autocommit: the statement is its own transaction, committed (in the
   * WAL) when step returns. */
  rs_code rc = rs__db_step(st, &row, err);
  rs__db_reset(st);
  return rc;
}

rs_code rs__llm_cache_merge(rs__llm_cache *dst, const char *src_path, uint64_t *added, rs_error *err)
{
  rs__llm_cache *src = NULL;
  rs__db_stmt *st = NULL;
  char what[600];
  int row = 0;
  rs_code rc;
  /* Open it on its own first: this checks its marks and version, and
   * names it in the error. */
  if ((rc = rs__llm_cache_open_existing(src_path, &src, err))) return rc;
  rs__llm_cache_close(src);
  snprintf(what, sizeof what, "cannot attach %s", src_path);
  if ((rc = rs__db_prepare(dst->db, "ATTACH DATABASE ?1 AS src", what, 0, &st, err))) return rc;
  rs__db_bind_text(st, 1, src_path);
  rc = rs__db_step(st, &row, err);
  rs__db_stmt_free(st);
  if (rc) return rc;
  /* One transaction: a merge is all or nothing, and the count of rows the
   * INSERT added (ignored keys are not counted) is exact. */
  snprintf(what, sizeof what, "cannot merge %s", src_path);
  if (!(rc = rs__db_begin(dst->db, what, err))) {
    if ((rc = rs__db_exec(dst->db,
                          "INSERT OR IGNORE INTO main.reply SELECT key, status, body, prompt_tokens,"
                          " completion_tokens, latency_ms, model, created FROM src.reply ORDER BY key",
                          what, err))) {
      rs__db_rollback(dst->db);
    } else {
      const uint64_t n = (uint64_t)rs__db_changes(dst->db);
      if (!(rc = rs__db_commit(dst->db, what, err))) *added = n;
    }
  }
  rs__db_exec(dst->db, "DETACH DATABASE src", "cannot detach a merged cache", NULL);
  return rc;
}

#define SENT_TABLE                                                                                       \
  "CREATE TABLE IF NOT EXISTS sent("                                                                     \
  " key BLOB PRIMARY KEY NOT NULL, status INTEGER NOT NULL, retries INTEGER NOT NULL,"                    \
  " latency_ms REAL NOT NULL, note TEXT, body BLOB) WITHOUT ROWID;"

rs_code rs__llm_cache_put_sent(rs__llm_cache *c, const rs__sent_outcome *o, rs_error *err)
{
  rs_code rc;
  if (!c->put_sent &&
      ((rc = rs__db_exec(c->db, SENT_TABLE, "cannot create the table of sent requests", err)) ||
       (rc = rs__db_prepare(c->db,
                            "INSERT OR REPLACE INTO sent(key, status, retries, latency_ms, note, body)"
                            " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                            "cannot store how a request was sent", 1, &c->put_sent, err))))
    return rc;
  rs__db_stmt *st = c->put_sent;
  int row = 0;
  rs__db_bind_blob(st, 1, o->key, 32);
  rs__db_bind_int64(st, 2, o->status);
  rs__db_bind_int64(st, 3, o->retries);
  rs__db_bind_double(st, 4, o->latency_ms);
  rs__db_bind_text(st, 5, o->note);
  if (o->body) rs__db_bind_blob(st, 6, o->body, o->body_len);
  rc = rs__db_step(st, &row, err);
  rs__db_reset(st);
  return rc;
}

rs_code rs__llm_cache_each_sent(const char *path, rs_code (*fn)(void *ctx, const rs__sent_outcome *o, rs_error *err),
                                void *ctx, rs_error *err)
{
  rs__llm_cache *c = NULL;
  rs__db_stmt *st = NULL;
  int64_t has_table = 0;
  int row = 0;
  rs_code rc = rs__llm_cache_open_existing(path, &c, err);
  if (!rc) rc = rs__db_query_int(c->db, "SELECT count(*) FROM sqlite_schema WHERE name = 'sent'", &has_table, err);
  if (!rc && has_table)
    rc = rs__db_prepare(c->db, "SELECT key, status, retries, latency_ms, note, body FROM sent ORDER BY key",
                        "cannot read the sent requests", 0, &st, err);
  while (!rc && st && !(rc = rs__db_step(st, &row, err)) && row) {
    size_t klen = 0, blen = 0;
    const void *key = rs__db_col_blob(st, 0, &klen);
    if (klen != 32) {
      rc = rs__fail(err, RS_FORMAT, "%s: a sent request with a %zu-byte key (expected 32): the file is damaged", path,
                    klen);
      break;
    }
    const void *body = rs__db_col_is_null(st, 5) ? NULL : rs__db_col_blob(st, 5, &blen);
    const rs__sent_outcome o = {key, (int)rs__db_col_int64(st, 1), (int32_t)rs__db_col_int64(st, 2),
                                rs__db_col_double(st, 3), rs__db_col_text(st, 4, NULL), body, blen};
    rc = fn(ctx, &o, err);
  }
  rs__db_stmt_free(st);
  rs__llm_cache_close(c);
  return rc;
}

rs_code rs__llm_cache_remove(const char *path, rs_error *err)
{
  static const char *const suffix[] = {"-wal", "-shm", ""}; /* the file itself last: it names the others */
  for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
    char p[4200];
    snprintf(p, sizeof p, "%s%s", path, suffix[i]);
    if (unlink(p) != 0 && errno != ENOENT) return rs__fail(err, RS_IO, "%s: cannot remove: %s", p, strerror(errno));
  }
  return RS_OK;
}

rs_code rs__llm_cache_count(rs__llm_cache *c, uint64_t *n, rs_error *err)
{
  int64_t v = 0;
  rs_code rc = rs__db_query_int(c->db, "SELECT count(*) FROM reply", &v, err);
  if (!rc) *n = (uint64_t)v;
  return rc;
}

rs_code rs__llm_cache_bytes(rs__llm_cache *c, uint64_t *bytes, rs_error *err)
{
  return rs__db_bytes(c->db, bytes, err);
}

rs_code rs__llm_cache_models(rs__llm_cache *c, rs__cache_model_count **out, size_t *n_out, rs_error *err)
{
  rs__db_stmt *st = NULL;
  rs__cache_model_count *m = NULL;
  size_t n = 0, cap = 0;
  int row = 0;
  rs_code rc = rs__db_prepare(c->db,
                              "SELECT model, count(*), sum(status < 200 OR status > 299) FROM reply"
                              " GROUP BY model ORDER BY CAST(model AS BLOB)",
                              "cannot list models", 0, &st, err);
  if (rc) return rc;
  while (!(rc = rs__db_step(st, &row, err)) && row) {
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      rs__cache_model_count *g = rs__realloc(m, rs__mul(cap, sizeof *g));
      if (!g) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
      m = g;
    }
    const char *name = rs__db_col_text(st, 0, NULL);
    if (!(m[n].model = strdup(name ? name : ""))) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
    m[n].n = (uint64_t)rs__db_col_int64(st, 1);
    m[n].n_error = (uint64_t)rs__db_col_int64(st, 2);
    n++;
  }
done:
  rs__db_stmt_free(st);
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

rs_code rs__llm_cache_verify(rs__llm_cache *c, rs_error *err) { return rs__db_verify(c->db, err); }

void rs__cache_entry_free(rs__cache_entry *e)
{
  if (!e) return;
  free(e->body);
  free(e->model);
  *e = (rs__cache_entry){0};
}
