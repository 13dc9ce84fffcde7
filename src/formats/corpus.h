/* corpus.h: sweep corpora and run files in HDF5 (internal API), and
 * corpora built in memory from text inputs (rs__import_corpus, import.h:
 * no file; runs.file is NULL and the rows are read from memory by
 * corpus_mem.c through the same rs__run_read).
 *
 * The format (version 1) is specified in README.md, "Corpus format".  A
 * corpus holds the queries, the optional external doc ids, the qrels in CSR
 * form and any number of runs; a run file holds runs only and follows the
 * query order of the corpus it is evaluated with.
 *
 * Opening a file reads what every evaluation needs whole (ids, qrels) and
 * checks the layout of every run (datasets present, ranks, shapes, types,
 * row counts); the rows of the runs are then read in blocks of queries with
 * rs__run_read, so memory does not grow with the size of the runs.
 * src/formats/corpus_h5.c is the only file that includes <hdf5.h>, and HDF5 is not
 * thread-safe: every function here must be called by one thread at a time. */
#ifndef RAGSWEEP_CORPUS_H
#define RAGSWEEP_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define RS_CORPUS_FORMAT "ragsweep-corpus"
#define RS_CORPUS_VERSION 1

/* A configuration attribute of a run (the group's HDF5 attributes). */
typedef enum { RS_ATTR_STRING, RS_ATTR_INT, RS_ATTR_FLOAT } rs__attr_kind;

typedef struct rs__attr {
  char *key;
  rs__attr_kind kind;
  char *text; /* the value as CSV text: the string, or the number printed */
  double num; /* numeric value (RS_ATTR_INT, RS_ATTR_FLOAT) */
} rs__attr;

typedef struct rs__h5file rs__h5file;

/* The rows of a run held in memory (a corpus built by rs__import_corpus):
 * CSR over the queries, in the order and types import writes them. */
typedef struct rs__run_mem {
  char *path;       /* the text run it was read from, for messages */
  int64_t *off;     /* [n_rows + 1] */
  int32_t *doc;     /* [off[n_rows]] doc indexes, or NULL when the rows are apart (row_doc) */
  double *score;    /* [off[n_rows]], or NULL likewise */
  double *latency;  /* [n_rows] seconds, or NULL */
  /* Rows kept where the import read them (rows_ranked corpora): row q is
   * row_doc[q], off[q + 1] - off[q] docs, in chunks (owned) that hold
   * them all; rs__run_read gathers a block's rows.  Such runs keep no
   * scores (rs__run.has_score 0): the rows are ranked already. */
  const int32_t **row_doc;
  char **chunk;
  size_t n_chunk;
} rs__run_mem;

/* One run: where it lives and its layout; its rows are read with rs__run_read. */
typedef struct rs__run {
  char *name;
  const char *path; /* the file, for messages */
  rs__h5file *file; /* owning file (not owned here) */
  rs__attr *attrs;  /* sorted by key (bytewise) */
  size_t n_attrs;
  size_t n_rows;    /* queries (must equal the corpus's nq) */
  int csr;          /* 1: offsets + 1-D doc; 0: dense [n_rows, k] */
  size_t k;         /* dense: columns */
  uint64_t n_docs;  /* csr: length of doc */
  int has_score, has_latency;
  int score_f32;    /* scores stored as float32 (else float64) */
  /* Byte offsets in the file of doc and score when they can be copied with
   * pread (contiguous, unfiltered, native int32 / float32 / float64), else 0. */
  uint64_t doc_addr, score_addr;
  /* Likewise for latency (latency_f32: stored as float32), read in steps
   * beside a sweep's scoring: through HDF5, each step's open and
   * conversion cost about 130 instructions a row. */
  uint64_t latency_addr;
  int latency_f32;
  /* A run in memory: its rows (owned by the runset), else NULL.  csr, k
   * and n_docs then describe the layout import would write, which sizes
   * the engine's blocks as it would for the file. */
  const rs__run_mem *mem;
  /* eval --depths: a virtual run is source's rows, each ranking cut at its
   * top depth docs once ranked.  Virtual runs of one source follow each
   * other in a sweep, whose engine reads the rows once for all of them.
   * A run of a file: source NULL, depth 0 (the whole ranking). */
  const struct rs__run *source;
  size_t depth;
} rs__run;

/* A set of opened runs, from one file, or held in memory (file NULL). */
typedef struct rs__runset {
  rs__h5file *file;
  rs__run *run;
  size_t n;
  rs__run_mem *mem; /* [n] the rows of runs in memory (owned), or NULL */
} rs__runset;

typedef struct rs__corpus {
  char *path;
  size_t nq;
  char **query_id; /* [nq] (pointers into one pool); NULL until rs__corpus_load_queries */
  int has_text;
  char **query_text; /* [nq] or NULL; likewise */
  size_t nd;        /* docs: length of /docs/id, or 0 when absent */
  int has_docs;
  char **doc_id;    /* [nd] or NULL; NULL until rs__corpus_load_doc_ids when doc_ids_sorted */
  int doc_ids_sorted; /* /docs/id known to be in strcmp order (the probe decoded it): read only when needed */
  int has_doc_text;  /* /docs/text is present (its layout checked at open) */
  char **doc_text;  /* [nd] (one pool), NULL until rs__corpus_load_doc_texts */
  /* qrels, CSR over queries: judgments of query i are [qoff[i], qoff[i+1]) */
  int64_t *qoff;    /* [nq + 1] */
  int32_t *qdoc;    /* doc indexes */
  int32_t *qgrade;
  rs__runset runs;  /* the corpus's own runs */
  /* Built in memory by rs__import_corpus (no file; runs.file is NULL):
   * everything above is loaded, and doc_id points into id_blocks (owned). */
  int in_memory;
  char **id_blocks;
  size_t n_id_blocks;
  /* Built in memory with rows_only (import.h): each row is stored in its
   * ranking order (trec_eval's: ties already broken by docno), and doc
   * numbers are local to a query: a judged doc is the place of its
   * judgment among the query's, any other doc of a row is the query's
   * judgment count plus its rank.  There is no /docs/id (has_docs is 0),
   * and the runs keep no scores (has_score 0), so the engine ranks each
   * row in its stored order, as for any run without scores, and never
   * compares the local numbers across a tie. */
  int rows_ranked;
} rs__corpus;

/* Opens a corpus: checks root attributes, reads ids and qrels, checks the
 * qrels (offsets monotonic from 0 to nnz, doc indexes in range, no doc
 * judged twice for a query) and the layout of every run.  Errors name the
 * file, dataset and row. */
rs_code rs__corpus_open(const char *path, rs__corpus **out, rs_error *err);
void rs__corpus_close(rs__corpus *c);

/* Reads /queries/id (and /queries/text) if not read yet.  Opening only
 * checks their layout, so that a sweep which prints no query never pays
 * for reading a million variable-length strings. */
rs_code rs__corpus_load_queries(rs__corpus *c, rs_error *err);

/* Reads /docs/text (strings [nd], in the order of /docs/id) once; later
 * calls do nothing.  A corpus without it is RS_FORMAT naming the file. */
rs_code rs__corpus_load_doc_texts(rs__corpus *c, rs_error *err);

/* The id of query q, for messages: read on first use; "?" if unreadable. */
const char *rs__corpus_qid(const rs__corpus *c, size_t q);

/* Reads /docs/id if not read yet.  When the probe of the file found the ids
 * in strcmp order (as import and gen_sweep write them), opening does not
 * read them: ties are then broken on doc indexes, and a sweep that names
 * no doc never pays for 2M variable-length strings. */
rs_code rs__corpus_load_doc_ids(rs__corpus *c, rs_error *err);

/* The id of doc d (has_docs), for messages: read on first use; "?" if unreadable. */
const char *rs__corpus_did(const rs__corpus *c, int32_t d);

/* Opens a file of runs to be evaluated against a corpus of nq queries
 * (a corpus file is also accepted: its runs are taken, its qrels ignored). */
rs_code rs__runset_open(const char *path, size_t nq, rs__runset *out, rs_error *err);
/* rs__runset_open of paths[0..n) into out[0..n), with the files' checks
 * run side by side (up to one per thread); *n_open: the files opened, the
 * first ones (on an error, those before the file it names). */
rs_code rs__runsets_open(char *const *paths, size_t n, size_t nq, rs__runset *out, size_t *n_open, rs_error *err);
void rs__runset_close(rs__runset *s);

/* Rows [q0, q0 + n) of a run.  Docs are int32 (-1 pads a dense row);
 * scores are float32 or float64 as stored (exactly one of score32 and
 * score64 is set when the run has scores).  doc and the scores point into
 * the block's own buffers, reused from block to block: a dataset stored
 * contiguous, unfiltered and in the machine's own types is copied into
 * them with pread, others are read by HDF5 (see rs__run_read). */
typedef struct rs__block {
  size_t q0, n;
  int64_t *off; /* [n + 1]: row i is doc[off[i] .. off[i+1]) */
  const int32_t *doc;
  const float *score32;
  const double *score64;
  /* owned storage: the docs, then the scores (rs__block_room) */
  void *buf;
  size_t cap_rows, cap_bytes;
} rs__block;

/* The score of element i of the block (rows are off[r]..off[r+1]). */
static inline double rs__block_score(const rs__block *b, size_t i)
{
  return b->score32 ? (double)b->score32[i] : b->score64[i];
}

/* Room in b's buffer for `docs` doc indexes, then score_bytes of scores
 * (on a cache line), at *doc and *score; what it held is not kept. */
rs_code rs__block_room(rs__block *b, size_t docs, size_t score_bytes, int32_t **doc, void **score, rs_error *err);
/* Reads rows into b, growing its buffers when needed. */
rs_code rs__run_read(const rs__run *run, size_t q0, size_t n, rs__block *b, rs_error *err);
/* 1 when rs__run_read reads the run's rows with pread alone (a dense run
 * of a file, its datasets at direct addresses): k docs a row, and no
 * libhdf5 call, so several threads may read blocks of it at once. */
int rs__run_read_is_pread_only(const rs__run *run);
void rs__block_free(rs__block *b);

/* Reads rows [q0, q0 + n) of the run's latency dataset (seconds) into
 * out[0..n). */
rs_code rs__run_read_latency(const rs__run *run, size_t q0, size_t n, double *out, rs_error *err);

/* --- writing ------------------------------------------------------------ */

typedef enum { RS_DT_I8, RS_DT_I32, RS_DT_I64, RS_DT_F32, RS_DT_F64 } rs__dtype;

typedef struct rs__h5w rs__h5w;

/* Creates a file under a temporary name beside path; rs__h5w_commit renames
 * it into place, rs__h5w_abort removes it.  corpus: also write the root
 * attributes format and version. */
rs_code rs__h5w_create(const char *path, int corpus, rs__h5w **out, rs_error *err);
rs_code rs__h5w_commit(rs__h5w *w, rs_error *err);
void rs__h5w_abort(rs__h5w *w);

/* Whole datasets; intermediate groups are created.  fixed_len > 0 writes
 * fixed-length strings of that size, else variable-length strings. */
rs_code rs__h5w_strings(rs__h5w *w, const char *dset, const char *const *s, size_t n, size_t fixed_len,
                        rs_error *err);
rs_code rs__h5w_array(rs__h5w *w, const char *dset, rs__dtype type, int rank, const uint64_t *dims,
                      const void *data, rs_error *err);
/* A 2-D dataset written in row blocks: create it, then write rows. */
rs_code rs__h5w_rows_begin(rs__h5w *w, const char *dset, rs__dtype type, uint64_t rows, uint64_t cols,
                           rs_error *err);
rs_code rs__h5w_rows(rs__h5w *w, const char *dset, rs__dtype type, uint64_t row0, uint64_t n_rows,
                     uint64_t cols, const void *data, rs_error *err);
/* A group (created if needed) attribute: a string, an integer or a double. */
rs_code rs__h5w_attr(rs__h5w *w, const char *group, const rs__attr *a, rs_error *err);

#endif
