/* cache.h: the LLM reply cache, an SQLite file (internal).
 *
 * A cache is a log of answers: every reply is stored, in its own committed
 * transaction, as soon as it arrives, keyed by the SHA-256 of everything
 * that produced it (computed by the caller).  The first answer stored for a
 * key wins; later puts of the same key are ignored, so a rerun never
 * changes an answer it already has.  Failed replies are stored too, with
 * their HTTP status: failures are data.
 *
 * Durability: WAL journal, synchronous=NORMAL.  A put returns after its
 * commit record is in the WAL file (written with write(), not yet
 * fsync'ed), so killing the process (even with SIGKILL) loses nothing a
 * put has returned for; only an operating-system crash or power loss can
 * lose the last commits, and never corrupts the file.
 *
 * Sharing: several processes may open one file and put at once (WAL plus a
 * 30 s busy timeout serialise the writers); separate shard files are
 * combined with rs__llm_cache_merge.  One rs__llm_cache is used by one
 * thread at a time.  The file is kept through src/util/db.h, the only
 * module that includes <sqlite3.h>.
 *
 * The file: table reply(key BLOB PRIMARY KEY (32 bytes), status, body BLOB,
 * prompt_tokens, completion_tokens, latency_ms, model, created), marked by
 * PRAGMA application_id = 0x52534c43 ("RSLC") and PRAGMA user_version =
 * RS_LLM_CACHE_VERSION. */
#ifndef RAGSWEEP_LLM_CACHE_H
#define RAGSWEEP_LLM_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define RS_LLM_CACHE_VERSION 1

typedef struct rs__llm_cache rs__llm_cache;

typedef struct rs__cache_entry {
  char *body;      /* the raw HTTP reply body, exactly as received (may be non-UTF-8); */
  size_t body_len; /* from get: malloc'd with a NUL after body_len bytes */
  long status;     /* HTTP status */
  int64_t prompt_tokens, completion_tokens; /* -1 when unknown */
  double latency_ms;
  char *model;     /* for `ragsweep cache` listings; NULL is stored as "" */
  int64_t created; /* unix seconds; a put with 0 stores the current time */
} rs__cache_entry;

/* Opens the cache at path, creating an empty one when the file does not
 * exist (the folder must exist: a missing folder is RS_IO naming it).  A
 * file that is not a ragsweep cache, or has another schema version, is
 * RS_FORMAT naming the file.  *out is set only on success. */
rs_code rs__llm_cache_open(const char *path, rs__llm_cache **out, rs_error *err);
/* As rs__llm_cache_open, but a missing file is RS_IO instead of created. */
rs_code rs__llm_cache_open_existing(const char *path, rs__llm_cache **out, rs_error *err);
/* Closes the cache; accepts NULL. */
void rs__llm_cache_close(rs__llm_cache *c);
/* The path given to open. */
const char *rs__llm_cache_path(const rs__llm_cache *c);

/* Looks key (32 bytes) up.  *found is 1 and *out filled (owned by the
 * caller: rs__cache_entry_free) when present, else *found is 0 and *out is
 * untouched. */
rs_code rs__llm_cache_get(rs__llm_cache *c, const uint8_t key[32], rs__cache_entry *out, int *found, rs_error *err);
/* Whether key is present, without reading the body (for --dry-run over
 * millions of keys). */
rs_code rs__llm_cache_has(rs__llm_cache *c, const uint8_t key[32], int *found, rs_error *err);
/* Stores one reply in its own transaction, committed before returning.
 * An existing key is kept (first answer wins); that is not an error. */
rs_code rs__llm_cache_put(rs__llm_cache *c, const uint8_t key[32], const rs__cache_entry *e, rs_error *err);
/* Copies every entry of the cache file src_path that c lacks, in one
 * transaction; *added counts them.  src_path must be a ragsweep cache of
 * the same version.  Merging twice adds nothing the second time. */
rs_code rs__llm_cache_merge(rs__llm_cache *dst, const char *src_path, uint64_t *added, rs_error *err);
/* Removes the cache file at path with its WAL and shared-memory files
 * (after a merge of a rank's cache); a missing file is not an error. */
rs_code rs__llm_cache_remove(const char *path, rs_error *err);
/* Number of entries. */
rs_code rs__llm_cache_count(rs__llm_cache *c, uint64_t *n, rs_error *err);

/* Entries per model, for listings. */
typedef struct rs__cache_model_count {
  char *model;
  uint64_t n;       /* entries */
  uint64_t n_error; /* of which the HTTP status is not 2xx */
} rs__cache_model_count;
/* Counts by model, sorted by model name (bytewise); *out is malloc'd (free
 * with rs__cache_model_counts_free). */
rs_code rs__llm_cache_models(rs__llm_cache *c, rs__cache_model_count **out, size_t *n, rs_error *err);
void rs__cache_model_counts_free(rs__cache_model_count *m, size_t n);
/* Bytes the database occupies (pages in use, including the WAL's newer
 * pages). */
rs_code rs__llm_cache_bytes(rs__llm_cache *c, uint64_t *bytes, rs_error *err);
/* SQLite's integrity check of the whole file: RS_FORMAT with its first
 * finding when the file is damaged. */
rs_code rs__llm_cache_verify(rs__llm_cache *c, rs_error *err);

/* --- how requests were sent (shards and MPI ranks) -----------------------------
 *
 * A shard of `judge --shard` or `rag --shard` (and an MPI rank) also keeps,
 * beside its replies, the outcome of every request it sent: the merge
 * writes outputs that say which requests were sent (`cached` false), with
 * their retries, and the failures the cache does not hold (HTTP errors,
 * bodies that are not replies), exactly as one process writes them.  The
 * table sent(key, status, retries, latency_ms, note, body) is created on the
 * first put only, so an ordinary cache has none; a later outcome of a key
 * replaces the earlier (a resumed shard asks a failed request again). */
typedef struct rs__sent_outcome {
  const uint8_t *key; /* 32 bytes */
  int status;         /* the caller's code (calls.h: RS_CALL_OK, RS_CALL_BAD_REPLY, RS_CALL_HTTP_ERROR) */
  int32_t retries;
  double latency_ms;
  const char *note;   /* failures: what went wrong (no secret), or NULL */
  const char *body;   /* a bad reply's body, or NULL */
  size_t body_len;
} rs__sent_outcome;

/* Stores (replaces) one outcome, committed before returning. */
rs_code rs__llm_cache_put_sent(rs__llm_cache *c, const rs__sent_outcome *o, rs_error *err);
/* Calls fn for every outcome the cache file at path holds (none when it has
 * no such table), in key order; the views are valid during the call. */
rs_code rs__llm_cache_each_sent(const char *path, rs_code (*fn)(void *ctx, const rs__sent_outcome *o, rs_error *err),
                                void *ctx, rs_error *err);

/* Frees what get allocated and zeroes *e; accepts NULL. */
void rs__cache_entry_free(rs__cache_entry *e);

#endif
