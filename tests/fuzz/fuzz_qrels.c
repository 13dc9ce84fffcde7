/* fuzz_qrels: TREC qrels text (plain or gzip, detected by magic) through
 * rs__qrels_read; every topic it stored must then be found again through
 * its id table, and each topic's judgments must lie in the arrays in
 * docno order, equal docnos only where a duplicate is noted.
 * The strict reading (ragsweep's commands) must accept only what
 * trec_eval's reading accepts, with the same judgments. */
#include "fuzz.h"
#include "formats/qrels.h"

/* strcmp of two docnos, which are not NUL-terminated (they point into
 * the file): each as far as its first NUL. */
static int doc_cmp(const rs__qrels *q, size_t j, size_t k)
{
  const size_t a = strnlen(q->doc[j], q->doc_len[j]), b = strnlen(q->doc[k], q->doc_len[k]);
  const int c = memcmp(q->doc[j], q->doc[k], a < b ? a : b);
  return c ? c : (a > b) - (a < b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fz_file f;
  rs__qrels *q = NULL;
  rs_error err = {0};
  fz_file_open(&f, data, size);
  if (rs__qrels_read(f.path, RS_NUMBERS_AS_TREC_EVAL, 1, &q, &err) == RS_OK) {
    for (size_t t = 0; t < q->n_topics; t++) {
      const char *id = q->topic_id[t];
      size_t len = q->topic_len[t];
      if (rs__qrels_topic(q, id, len, rs__hash_bytes(id, len)) != (long)t) abort();
      if (q->count[t] == 0 || q->first[t] + q->count[t] > q->n_judged) abort();
      for (size_t j = q->first[t] + 1; j < q->first[t] + q->count[t]; j++) { /* docno order; equal only as the dup */
        const int c = doc_cmp(q, j - 1, j);
        if (c > 0 || (c == 0 && q->dup[t] == SIZE_MAX)) abort();
      }
    }
  } else if (err.msg[0] == '\0') {
    abort(); /* every failure must say why */
  }
  rs__qrels *strict = NULL;
  rs_error serr = {0};
  if (rs__qrels_read(f.path, RS_NUMBERS_STRICT, 1, &strict, &serr) == RS_OK) {
    if (!q || strict->n_judged != q->n_judged || strict->n_topics != q->n_topics) abort();
    for (size_t j = 0; j < q->n_judged; j++)
      if (strict->grade[j] != q->grade[j]) abort();
  } else if (serr.msg[0] == '\0') {
    abort();
  }
  rs__qrels_free(strict);
  rs__qrels_free(q);
  fz_file_close(&f);
  return 0;
}
