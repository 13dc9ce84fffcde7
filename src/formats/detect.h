/* detect.h: what kind of input a path is (internal).
 *
 * eval, compare, judge and import take their inputs in several formats
 * (README section 3, "Input formats"); rs__detect looks at a path and says
 * which one it is, from the content, never the name:
 *
 *   a folder                 a BEIR folder when it holds qrels/ and
 *                            corpus.jsonl or queries.jsonl
 *   HDF5 (the signature at 0, 512, 1024, ... bytes)
 *                            ann-benchmarks dataset or result files (the
 *                            hook in detect.c), else RS_INPUT_HDF5: a
 *                            ragsweep corpus or run file as far as
 *                            detection goes.  Nothing here opens the file
 *                            with libhdf5: a corrupt file can crash it, and
 *                            corpus_h5.c does that safely, in a forked probe.
 *   text (gzip decompressed), by the first line that is not blank and not
 *   a '#' comment:
 *     '{' and a JSON object with query_id/qid and doc_ids/docs: JSONL run
 *     '{' with a "queries" member (or a '{' that does not close on its line,
 *         with "queries" in the first bytes): JSON evaluation set
 *     '{' and _id/id/docid with text/contents: a JSONL text collection
 *     a header with query_id (or qid) and doc_id (or docid) separated by
 *         tabs, else commas: a CSV/TSV run (delim says which)
 *     the header query-id, corpus-id, score (tabs): BEIR qrels
 *     6 or more fields, the 4th an integer and the 5th a number: TREC run
 *     4 fields, the 4th an integer: TREC qrels
 *
 * Anything else is RS_INPUT_UNKNOWN, with a short description of what was
 * found (binary bytes, an empty file, the first line) for the message that
 * lists the formats (rs__detect_fail).  "-" (standard input) is not read:
 * it is RS_INPUT_UNKNOWN with found "standard input" and the caller decides
 * (import reads it as a TREC run, as before). */
#ifndef RAGSWEEP_DETECT_H
#define RAGSWEEP_DETECT_H

#include <stddef.h>

#include "internal.h"

typedef enum {
  RS_INPUT_UNKNOWN = 0,
  RS_INPUT_HDF5,          /* HDF5 not claimed by the ann-benchmarks hook: a ragsweep corpus or run file */
  RS_INPUT_ANNB_DATASET,  /* ann-benchmarks dataset (train, test, neighbors, distances) */
  RS_INPUT_ANNB_RESULT,   /* ann-benchmarks result (neighbors, distances, attributes algo, name, ...) */
  RS_INPUT_TREC_RUN,      /* qid Q0 docno rank score tag */
  RS_INPUT_TREC_QRELS,    /* qid iter docno grade */
  RS_INPUT_BEIR_QRELS,    /* TSV with the header query-id, corpus-id, score */
  RS_INPUT_JSONL_RUN,     /* {"query_id", "doc_ids", "scores", "latency_ms"} a line */
  RS_INPUT_CSV_RUN,       /* CSV or TSV with a header naming query_id and doc_id */
  RS_INPUT_BEIR_DIR,      /* corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv */
  RS_INPUT_JSON_EVALSET,  /* {"queries": [...]} (evalset.h) */
  RS_INPUT_TEXTS,         /* a JSONL text collection (id, text): not a run */
  RS_INPUT_N_KINDS
} rs__input_kind;

typedef struct rs__detected {
  rs__input_kind kind;
  char delim;      /* RS_INPUT_CSV_RUN, RS_INPUT_BEIR_QRELS: ',' or '\t' */
  int text;        /* a file of text lines (empty included), not binary, not a folder */
  char found[200]; /* what the start of the input looks like, for messages */
} rs__detected;

/* Looks at path.  RS_IO when it cannot be opened or read ("PATH: cannot
 * open: ..."); every readable input is RS_OK with out->kind set, unknown
 * ones included. */
rs_code rs__detect(const char *path, rs__detected *out, rs_error *err);

/* "TREC run", "BEIR folder", ...: the kind in a few words, for messages. */
const char *rs__input_kind_name(rs__input_kind k);
/* The same with its article: "a TREC run", "an HDF5 file", "TREC qrels". */
const char *rs__input_kind_article(rs__input_kind k);

/* One line per accepted format with its shape, for help texts and the
 * message about an unrecognised input. */
#define RS_INPUT_FORMATS_RUNS                                                                  \
  "a TREC run (qid Q0 docno rank score tag), a JSONL run ({\"query_id\", \"doc_ids\", "        \
  "\"scores\", \"latency_ms\"} a line) or a CSV/TSV run (a header naming query_id, doc_id "   \
  "and optionally rank, score, latency_ms)"
#define RS_INPUT_FORMATS_JUDGMENTS                                                             \
  "TREC qrels (qid 0 docno grade), BEIR qrels (TSV: query-id, corpus-id, score), a JSON "      \
  "eval set ({\"queries\": [...]}) or a BEIR folder (corpus.jsonl, queries.jsonl, qrels/)"

/* RS_FORMAT: "PATH: not a ROLE ragsweep reads (found: FOUND); expected
 * EXPECTED" for an unknown input, "PATH: a TREC run, not a ROLE; expected
 * EXPECTED" for a known one.  role: "run", "qrels", ...; expected: one of the lists above,
 * or any text. */
rs_code rs__detect_fail(rs_error *err, const char *path, const rs__detected *d, const char *role,
                        const char *expected);

#endif
