/* corpus_mem.h: corpora built in memory (rs__import_corpus): their runs'
 * rows and latencies are served from memory, never from a file.
 * corpus_h5.c calls these for a run or corpus that has no file behind it. */
#ifndef RAGSWEEP_CORPUS_MEM_H
#define RAGSWEEP_CORPUS_MEM_H

#include "formats/corpus.h"

/* rs__run_read for run->mem: doc and score64 point into the run's own rows
 * (no copy); off is the block's. */
rs_code rs__mem_run_read(const rs__run *run, size_t q0, size_t n, rs__block *b, rs_error *err);
/* rs__run_read_latency for run->mem. */
rs_code rs__mem_run_read_latency(const rs__run *run, size_t q0, size_t n, double *out, rs_error *err);
/* Frees the rows of s->mem (rs__runset_close calls it). */
void rs__mem_runset_free(rs__runset *s);
/* Frees the blocks the doc ids of an in-memory corpus point into. */
void rs__mem_corpus_free_ids(rs__corpus *c);
/* The checks rs__corpus_open makes of /queries/id, for query ids that are
 * already in strcmp order: non-empty, UTF-8, unique. */
rs_code rs__mem_check_query_ids(const rs__corpus *c, rs_error *err);

#endif
