/* rag_samples.h: RAG evaluation samples in ragas's JSONL layout (internal).
 *
 * One JSON object per line, with the field names ragas uses, so files made
 * for ragas load unchanged:
 *   user_input            string   the question
 *   response              string   the generated answer
 *   retrieved_contexts    [string] the passages given to the generator
 *   reference             string   the reference answer
 *   reference_contexts    [string]
 *   retrieved_context_ids [string or integer]
 *   reference_context_ids [string or integer]
 *   id                    string or integer (optional): pairs samples across configurations
 *   latency_ms, cost_usd  number (optional)
 * Every other field whose value is a string, number or boolean is a
 * configuration column (model, chunking, reranker, ...): one file can hold a
 * whole sweep.  Its value as text: a string as it is, an integer in decimal
 * (within 64 bits), another number the shortest text that reads back the
 * same (512.0 and 5.12e2 are "512"), a boolean true or false.  Other
 * non-scalar fields are ignored; null counts as absent.  So are the
 * per-sample descriptors of ragas's test-set generator (synthesizer_name,
 * persona_name, query_style, query_length), which as columns would make
 * every sample a configuration of its own.
 * When more than one file is given, a column "file" (the file's name
 * without folder and without .jsonl / .json / .gz) is added first, so a
 * file per configuration works without configuration fields; two files of
 * one such name are RS_USAGE, and a field named "file" is then RS_FORMAT.
 *
 * A configuration is the tuple of its columns' values (an absent column is
 * ""); configurations are numbered in order of first appearance.  Within a
 * configuration a sample's key (rs__rag_sample_key: its id, else its
 * ordinal) must not repeat (RS_DUPLICATE naming both lines): an id repeated,
 * or an id equal to the position of a sample without one, would pair the
 * wrong samples across configurations.
 * A configuration field named like a column of rag's outputs (sample,
 * metric, judge, value, reason, mean, n, failures, latency_p50_ms,
 * latency_p99_ms, cost_usd_sum) is RS_FORMAT naming it: a CSV with two
 * columns of one name misleads every reader.
 * A known field of the wrong type is RS_FORMAT naming file:line and field,
 * what was expected and what was found: ids must be non-empty, text must be
 * free of \u0000, latency_ms and cost_usd finite and >= 0.  A line must be
 * UTF-8 (the outputs promise it; error at file:line:column), one strict
 * JSON object with no key twice.  Blank lines are skipped (but counted), a
 * file without a sample is RS_FORMAT; gzip is read as in textio.h; a line
 * may be up to 1 GiB long, and memory follows the bytes read, never a size
 * the file declares.  Which fields a sample must have depends on the
 * metrics asked for, so that check belongs to the caller (rs__rag). */
#ifndef RAGSWEEP_RAG_SAMPLES_H
#define RAGSWEEP_RAG_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

typedef struct rs__str_list {
  char **v;
  size_t n;
  int present; /* the field was in the object (an empty list is present) */
} rs__str_list;

typedef struct rs__rag_sample {
  char *id;          /* the id field as text, or NULL */
  uint32_t file;     /* index into rs__rag_set.files */
  size_t line;       /* 1-based line in that file */
  uint32_t config;   /* its configuration */
  uint32_t ordinal;  /* 1-based position among its configuration's samples */
  char *user_input, *response, *reference; /* NULL when absent */
  rs__str_list retrieved_contexts, reference_contexts, retrieved_context_ids, reference_context_ids;
  double latency_ms, cost_usd; /* NaN when absent */
} rs__rag_sample;

typedef struct rs__rag_set {
  rs__rag_sample *s;
  size_t n;
  char **files;          /* the paths given */
  size_t n_files;
  char **columns;        /* configuration column names, first-seen order ("file" first when added) */
  size_t n_columns;
  char **config_values;  /* [n_configs * n_columns]: the value of column c of configuration k at
                            [k * n_columns + c]; "" when absent */
  size_t n_configs;
  int has_latency, has_cost; /* some sample has the field */
} rs__rag_set;

/* Loads the files (in order) into *out; on error *out is left empty. */
rs_code rs__rag_set_load(const char *const *paths, size_t n_paths, rs__rag_set *out, rs_error *err);
void rs__rag_set_free(rs__rag_set *s);

/* The key pairing a sample across configurations: its id, else its
 * ordinal in decimal (the line number when a file holds one
 * configuration and no blank line).  Returns id or buf. */
const char *rs__rag_sample_key(const rs__rag_sample *s, char buf[24]);

#endif
