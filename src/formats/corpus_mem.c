/* corpus_mem.c: the runs of a corpus built in memory (see corpus_mem.h). */
#include "formats/corpus_mem.h"

#include <stdlib.h>
#include <string.h>

#include "llm/wire.h" /* rs__utf8_valid */

rs_code rs__mem_run_read(const rs__run *run, size_t q0, size_t n, rs__block *b, rs_error *err)
{
  const rs__run_mem *m = run->mem;
  if (q0 > run->n_rows || n > run->n_rows - q0)
    return rs__fail(err, RS_USAGE, "%s: run %s: rows %zu..%zu asked, the run has %zu", m->path, run->name, q0, q0 + n,
                    run->n_rows);
  if (n > b->cap_rows || !b->off) {
    int64_t *o = rs__realloc(b->off, rs__mul(n + 1, sizeof *o));
    if (!o) return rs__fail(err, RS_NOMEM, "out of memory for a block of %zu queries", n);
    b->off = o;
    b->cap_rows = n;
  }
  const int64_t base = m->off[q0];
  for (size_t i = 0; i <= n; i++) b->off[i] = m->off[q0 + i] - base;
  b->q0 = q0;
  b->n = n;
  if (m->row_doc) { /* rows apart: gathered into the block's own buffers, as a file's are read into them */
    int32_t *doc_buf;
    void *unused;
    rs_code rc = rs__block_room(b, (size_t)b->off[n], 0, &doc_buf, &unused, err);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++) {
      const size_t at = (size_t)b->off[i], len = (size_t)(b->off[i + 1] - b->off[i]);
      if (len) memcpy(doc_buf + at, m->row_doc[q0 + i], len * sizeof *doc_buf);
    }
    b->doc = doc_buf;
    b->score32 = NULL;
    b->score64 = NULL; /* such runs keep no scores (has_score 0) */
    return RS_OK;
  }
  /* The rows are read where they are: nothing to copy, and the block's
   * own buffers stay as they were for a later block of a file run. */
  b->doc = m->doc + base;
  b->score32 = NULL;
  b->score64 = m->score + base;
  return RS_OK;
}

rs_code rs__mem_run_read_latency(const rs__run *run, size_t q0, size_t n, double *out, rs_error *err)
{
  if (!run->mem->latency)
    return rs__fail(err, RS_FORMAT, "%s: run %s gives no latencies", run->mem->path, run->name);
  if (q0 > run->n_rows || n > run->n_rows - q0)
    return rs__fail(err, RS_USAGE, "%s: run %s: latency rows [%zu, %zu) past its %zu rows", run->mem->path, run->name, q0,
                    q0 + n, run->n_rows);
  if (n) memcpy(out, run->mem->latency + q0, rs__mul(n, sizeof *out));
  return RS_OK;
}

void rs__mem_runset_free(rs__runset *s)
{
  for (size_t i = 0; s->mem && i < s->n; i++) {
    free(s->mem[i].path);
    free(s->mem[i].off);
    free(s->mem[i].doc);
    free(s->mem[i].score);
    free(s->mem[i].latency);
    free(s->mem[i].row_doc);
    for (size_t k = 0; k < s->mem[i].n_chunk; k++) free(s->mem[i].chunk[k]);
    free(s->mem[i].chunk);
  }
  free(s->mem);
  s->mem = NULL;
}

void rs__mem_corpus_free_ids(rs__corpus *c)
{
  for (size_t i = 0; i < c->n_id_blocks; i++) free(c->id_blocks[i]);
  free(c->id_blocks);
  c->id_blocks = NULL;
  c->n_id_blocks = 0;
}

rs_code rs__mem_check_query_ids(const rs__corpus *c, rs_error *err)
{
  for (size_t i = 0; i < c->nq; i++) {
    const char *id = c->query_id[i];
    size_t bad = 0;
    if (!*id) return rs__fail(err, RS_FORMAT, "%s: query %zu (in id order): expected a query id, found an empty string",
                              c->path, i);
    if (!rs__utf8_valid(id, strlen(id), &bad))
      return rs__fail(err, RS_FORMAT, "%s: query \"%s\": expected a UTF-8 id, found byte 0x%02x at offset %zu", c->path,
                      id, (unsigned)(unsigned char)id[bad], bad);
    /* in strcmp order, so a repeated id is next to itself */
    if (i > 0 && strcmp(c->query_id[i - 1], id) == 0)
      return rs__fail(err, RS_FORMAT, "%s: expected unique query ids, found '%s' twice", c->path, id);
  }
  return RS_OK;
}
