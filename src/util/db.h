/* db.h: the SQLite files ragsweep keeps (internal): the LLM reply cache
 * (src/llm/cache.c) and the history (src/report/history.c).  src/util/db.c
 * is the only file that includes <sqlite3.h>; the modules above it speak
 * SQL through this thin layer, which adds what every such file needs:
 *
 *  - marks: a file is created with a schema, PRAGMA application_id and
 *    PRAGMA user_version, and every open checks them, so a file of another
 *    application, of another ragsweep file kind or of another schema
 *    version is refused with a message that says which;
 *  - sharing: WAL journal (readers never block the writer) and a 30 s busy
 *    timeout, so several processes (shards of a judge run, nightly jobs
 *    appending to one history) can write one file at once: their write
 *    transactions are serialised, none fails for being second;
 *  - messages: every error names the file and what was being done
 *    ("history.sqlite: cannot append an evaluation: database is locked").
 *
 * Durability: synchronous=NORMAL.  A commit is in the WAL file (written,
 * not fsync'ed) when it returns, so killing the process loses nothing
 * committed; an operating-system crash or power loss can lose the last
 * commits but never corrupts the file.
 *
 * One rs__db (and its statements) is used by one thread at a time. */
#ifndef RAGSWEEP_UTIL_DB_H
#define RAGSWEEP_UTIL_DB_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

typedef struct rs__db rs__db;
typedef struct rs__db_stmt rs__db_stmt;

/* What a kind of file holds. */
typedef struct rs__db_kind {
  const char *noun;      /* in messages: "not a ragsweep <noun>", "cannot create the <noun>" */
  const char *file_name; /* a typical file name, for the message about a folder given as the file */
  uint32_t app_id;       /* PRAGMA application_id: tells this kind from any other SQLite file */
  int version;           /* PRAGMA user_version: the schema's version */
  const char *schema;    /* the statements that create a fresh file (without the PRAGMAs) */
} rs__db_kind;

/* Opens the file at path as a file of `kind`.  With create, a missing file
 * is created with the kind's schema (the folder must exist); without, a
 * missing file is RS_IO.  Of several processes creating one file at once,
 * one creates and the others find it made.  Errors, each naming path:
 * RS_IO for a missing folder or file, a folder given as the file, a file
 * that cannot be opened or written; RS_FORMAT for a file that is not SQLite,
 * an SQLite file of another application ("not a ragsweep <noun>") or
 * another schema version; RS_NOMEM.  *out is set only on success. */
rs_code rs__db_open(const char *path, const rs__db_kind *kind, int create, rs__db **out, rs_error *err);
/* Closes the file (finalize its statements first); accepts NULL. */
void rs__db_close(rs__db *db);
/* The path given to open. */
const char *rs__db_path(const rs__db *db);

/* Runs sql (one or more statements, rows ignored); `what` says what it is
 * for in a message ("path: what: SQLite's reason"). */
rs_code rs__db_exec(rs__db *db, const char *sql, const char *what, rs_error *err);
/* The first column of the first row of sql, as an integer (0 when there is
 * no row): a PRAGMA or a count. */
rs_code rs__db_query_int(rs__db *db, const char *sql, int64_t *out, rs_error *err);

/* Transactions.  begin takes the write lock at once (BEGIN IMMEDIATE),
 * waiting up to the busy timeout for another writer, so a transaction
 * never fails halfway for being second.  rollback accepts a database with
 * no open transaction. */
rs_code rs__db_begin(rs__db *db, const char *what, rs_error *err);
rs_code rs__db_commit(rs__db *db, const char *what, rs_error *err);
void rs__db_rollback(rs__db *db);
/* Rows changed by the latest INSERT, UPDATE or DELETE. */
int64_t rs__db_changes(const rs__db *db);
/* The rowid of the latest INSERT on this connection. */
int64_t rs__db_last_id(const rs__db *db);

/* Prepared statements.  `what` (copied) names the statement's purpose in
 * messages; persistent: kept for many uses (SQLite's hint). */
rs_code rs__db_prepare(rs__db *db, const char *sql, const char *what, int persistent, rs__db_stmt **out,
                       rs_error *err);
/* Finalizes; accepts NULL. */
void rs__db_stmt_free(rs__db_stmt *st);

/* Parameters, numbered from 1.  Text and blobs are not copied: they must
 * stay valid until the statement is reset.  A NULL text binds SQL NULL, as
 * does a NaN double (SQLite's rule); a zero-length blob binds an empty
 * blob, not NULL.  A failed bind (a blob over 2 GiB) is reported by the
 * next step. */
void rs__db_bind_int64(rs__db_stmt *st, int i, int64_t v);
void rs__db_bind_double(rs__db_stmt *st, int i, double v);
void rs__db_bind_text(rs__db_stmt *st, int i, const char *s);
void rs__db_bind_blob(rs__db_stmt *st, int i, const void *p, size_t n);

/* Runs the statement one step: *row is 1 when a row is ready to read, 0
 * when the statement is done.  Errors name the file and the statement's
 * `what`: RS_FORMAT for a damaged file, RS_NOMEM, RS_IO otherwise. */
rs_code rs__db_step(rs__db_stmt *st, int *row, rs_error *err);
/* Makes the statement ready to run again and clears its parameters. */
void rs__db_reset(rs__db_stmt *st);

/* Columns of the current row, numbered from 0.  Text and blobs are views
 * valid until the next step or reset; a NULL column reads as 0, NaN, NULL
 * text and an empty blob. */
int rs__db_col_is_null(rs__db_stmt *st, int i);
int64_t rs__db_col_int64(rs__db_stmt *st, int i);
double rs__db_col_double(rs__db_stmt *st, int i);
const char *rs__db_col_text(rs__db_stmt *st, int i, size_t *len);
const void *rs__db_col_blob(rs__db_stmt *st, int i, size_t *len);

/* Bytes the file's pages take (pages in use, the WAL's newer pages
 * included). */
rs_code rs__db_bytes(rs__db *db, uint64_t *bytes, rs_error *err);
/* SQLite's integrity check of the whole file: RS_FORMAT with its first
 * finding ("path: the <noun> is damaged: ...") when the file is damaged. */
rs_code rs__db_verify(rs__db *db, rs_error *err);

#endif
