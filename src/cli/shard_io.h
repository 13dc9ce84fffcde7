/* shard_io.h: the shard folder that `eval --shard I/N` (and `compare
 * --shard I/N`) writes, and its reading by `ragsweep merge`.
 *
 * A shard folder holds three files, each written under a temporary name
 * and renamed; manifest.txt goes last (and an older one is removed first),
 * so a folder with a manifest is a finished shard:
 *
 *   values.bin    the share's per-query records, in the order evaluated:
 *                 result (uint64), query (uint64), then the spec's values
 *                 (doubles), native byte order (engine/shard.h); or, when
 *                 the command writes no per-query file, its block records
 *                 (a 1024-query unit's sums: about 1/1000 of the bytes);
 *                 the manifest's record-kind says which
 *   latency.bin   a latency record (rs__shard_latency_put) for every result
 *                 whose latencies the share owns
 *   manifest.txt  text, one "key value" per line: first the part every shard
 *                 of one evaluation has in common -- format, version, byte
 *                 order, the command, the working folder, the command line's
 *                 words that define the evaluation (one "arg" line each,
 *                 %XX-escaped), each input's size and modification time,
 *                 result, query and value counts, the measure set's SHA-256,
 *                 the unit size and count, the share count N -- then, after
 *                 the line "this-shard", the shard's own: its index I and the
 *                 counts and byte sizes of its two files.
 *
 * merge builds the common part again from the stored command line (the
 * inputs stat'ed anew, the measure set built anew) and asks every shard's
 * to equal it, so shards of other inputs, options, versions or share
 * counts, or inputs changed since, are refused with the first line that
 * differs. */
#ifndef RAGSWEEP_CLI_SHARD_IO_H
#define RAGSWEEP_CLI_SHARD_IO_H

#include <stddef.h>
#include <stdint.h>

#include "engine/shard.h"
#include "metrics/spec.h"

#define SHARD_MANIFEST "manifest.txt"
#define SHARD_VALUES "values.bin"
#define SHARD_LATENCY "latency.bin"

/* The common part of a manifest (malloc'd text): cmd, the words of the
 * command line that define the evaluation, its input paths (positional
 * words, "NAME=PATH" taken as PATH when no file has the whole word, and
 * --qrels), the measure set, n_results × n_queries, the plan and the share
 * count n. */
rs_code shard_manifest_common(const char *cmd, char *const *words, size_t n_words, char *const *inputs,
                              size_t n_inputs, const rs__spec *spec, size_t n_results, size_t n_queries,
                              const rs__shard_plan *plan, size_t n, char **out, rs_error *err);

/* The common part of a judge or rag shard manifest: cmd, the words, the
 * inputs, then the command's own lines (text of "key value\n" lines: what
 * the shares are cut from) and the share count n. */
rs_code shard_manifest_llm(const char *cmd, char *const *words, size_t n_words, char *const *inputs, size_t n_inputs,
                           const char *lines, size_t n, char **out, rs_error *err);

/* --- writing a shard ------------------------------------------------------------- */

/* A judge or rag shard folder holds its own reply cache (cache.sqlite, with
 * the table of the requests it sent: llm/cache.h) and manifest.txt.
 * begin: creates dir, removes an older manifest; commit: writes the manifest
 * (common, "this-shard", "shard I", then own's lines) under a temporary
 * name, renamed. */
#define SHARD_CACHE "cache.sqlite"
rs_code shard_llm_begin(const char *dir, rs_error *err);
rs_code shard_llm_commit(const char *dir, const char *common, size_t i, const char *own, rs_error *err);

typedef struct shard_writer shard_writer;

/* Creates dir if needed, removes an older manifest, opens the temporary
 * files; n_vals values per record. */
rs_code shard_writer_open(const char *dir, size_t n_vals, int blocks, shard_writer **out, rs_error *err);
/* An rs__sweep_cfg.per_query callback (ctx: the writer). */
rs_code shard_writer_record(void *ctx, size_t result, size_t query, const double *v, rs_error *err);
/* An rs__sweep_cfg.per_block callback (ctx: the writer opened with blocks). */
rs_code shard_writer_block(void *ctx, size_t result, const rs__block_sum *b, rs_error *err);
rs_code shard_writer_latency(shard_writer *w, size_t result, const rs__latency *lat, const double *cdf,
                             rs_error *err);
/* Renames the data files into place, then writes the manifest (common, then
 * this shard's lines); frees w, also on failure. */
rs_code shard_writer_commit(shard_writer *w, const char *common, size_t i, rs_error *err);
/* Removes the temporary files and frees w; accepts NULL. */
void shard_writer_abort(shard_writer *w);
/* Records and latency records written so far. */
size_t shard_writer_n_records(const shard_writer *w);

/* --- reading shards (merge) ------------------------------------------------------- */

typedef struct shard_set {
  size_t n;         /* shards, in index order */
  char **dir;       /* [n] absolute folder paths */
  char *common;     /* their common manifest part */
  char *cmd;        /* eval or compare */
  char *cwd;        /* the working folder of the shards */
  char **words;     /* the stored command line (unescaped) */
  size_t n_words;
  size_t *n_records, *n_latency; /* [n] (eval and compare) */
  char **own;                    /* [n] each shard's own manifest lines (after "this-shard") */
} shard_set;

/* A shard's own "key N" (1 when present and a number) or "key VALUE" line. */
int shard_own_size(const shard_set *s, size_t i, const char *key, size_t *out);
const char *shard_own_value(const shard_set *s, size_t i, const char *key, size_t *len);

/* Reads the manifests of dirs[0..n_dirs), in any order, and checks they
 * are shards of one evaluation, each index 0..N-1 exactly once: RS_FORMAT
 * naming the folders otherwise (a missing or repeated index, a differing
 * manifest line). */
rs_code shard_set_open(char *const *dirs, size_t n_dirs, shard_set *s, rs_error *err);
void shard_set_close(shard_set *s);

/* The results of the merged evaluation: checks that common (built anew
 * by the merging command) equals the shards', then feeds every shard's
 * records, in index order, to rs__shard_merge (per_query sees each as
 * rs__sweep passes it) and their latencies.  res[0..n_results) are filled
 * as rs__sweep fills them. */
rs_code shard_set_replay(const shard_set *s, const char *common, const rs__spec *spec, rs__run_result *res,
                         size_t n_results, size_t n_queries,
                         rs_code (*per_query)(void *ctx, size_t run, size_t query, const double *v, rs_error *err),
                         void *ctx, rs_error *err);

/* --- the commands' shared steps -------------------------------------------------------- */

struct sweep_input;

/* After getopt_long returned option code c (with argument arg, or NULL):
 * marks in drop[] the words of orig (argv as given, before getopt permuted
 * its pointers) that the option took, so that the words which define an
 * evaluation can be stored without -o, --shard, --threads and the like. */
void shard_drop_option_words(char *const *orig, int argc, char *const *argv, const char *arg, unsigned char *drop);

/* --shard I/N: evaluates share i of n of in's runs (cfg as for rs__sweep;
 * its per_query and per_block are taken) and writes the shard folder dir
 * with the manifest's common part; prints what it wrote.  per_query: the
 * merge will want every query's values (per-query files, compare's
 * tests), else block sums are stored. */
rs_code shard_write(const char *dir, rs__sweep_cfg *cfg, const struct sweep_input *in, const rs__shard_plan *plan,
                    size_t i, size_t n, int per_query, const char *common, rs_error *err);

/* The shards' stored command line as argv for the merging command: cmd,
 * the stored words, -o out_dir, and --quiet when quiet; *argc counts
 * them.  The array is malloc'd (free it alone: the words are s's and
 * static strings); NULL when out of memory. */
char **shard_merge_argv(const shard_set *s, const char *cmd, const char *out_dir, int quiet, int *argc);

/* The merges of `ragsweep merge`, by the shards' command (cmd_eval.c,
 * cmd_compare.c): the command's own outputs in out_dir, from the shards'
 * values; the command's exit status. */
int eval_merge(const shard_set *s, const char *out_dir, int quiet);
int compare_merge(const shard_set *s, const char *out_dir);
int judge_merge(const shard_set *s, const char *out_dir, int quiet);

/* The merges of judge and rag shards, in steps:
 * complete: every shard finished its share; otherwise a message naming the
 *   first that stopped (its --max-cost, an error that cannot heal), how many
 *   `what` (pairs, values) it did not ask, and how to resume it; 0.
 * merge_caches: every shard's cache into the job's cache_path (created if
 *   missing; first answer wins) and their sent requests into *replay.
 * report_missing: after the offline run, a line per shard whose counts[i]
 *   `what` no cache answered; 1 when there was one. */
struct rs__llm_replay;
int shard_llm_complete(const shard_set *m, const char *what);
rs_code shard_llm_merge_caches(const shard_set *m, const char *cache_path, struct rs__llm_replay **replay, int quiet,
                               rs_error *err);
int shard_llm_report_missing(const shard_set *m, const uint64_t *counts, const char *what);
int rag_merge(const shard_set *s, const char *out_dir, int quiet);

#endif
