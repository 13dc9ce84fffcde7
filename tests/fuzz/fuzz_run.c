/* fuzz_run: a TREC run (plain or gzip, detected by magic) evaluated by the
 * trec_eval engine (rs_te_evaluate, every measure of all_trec) against a
 * fixed qrels that judges topics 1, 2 and 10, then written out as
 * trec_eval prints it.  A 64-byte read block puts block boundaries inside
 * almost every line (the default 32 MiB block would also make each input
 * cost ~100 ms under ASan); -c, -J and reading the run mapped or with
 * read(2) follow the input's size, so both settings of each are fuzzed.  Every fourth input is also read as `import` reads
 * runs (rs__te_rankings, strict numbers), which must fail with a message
 * or hand over rankings. */
#include "fuzz.h"
#include "ragsweep/trec_eval.h"
#include "formats/trecrun.h"

static fz_file qrels;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  static const char text[] = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d1 0\n2 0 d4 1\n10 0 x 3\n";
  fz_file_open(&qrels, text, sizeof text - 1);
  if (!(devnull = fopen("/dev/null", "w"))) abort();
  return 0;
}

static void count_ranking(void *ctx, int tid, size_t topic, const char *const *doc, const uint32_t *doc_len,
                          const double *score, const uint32_t *order, const int32_t *judged, size_t n)
{
  (void)topic, (void)doc, (void)doc_len;
  if (tid != 0) abort(); /* one thread */
  for (size_t i = 0; i < n; i++) {
    if (score[order[i]] != score[order[i]]) abort(); /* strict reading lets no NaN through */
    if (judged[i] < -1) abort();
  }
  __atomic_add_fetch((size_t *)ctx, n, __ATOMIC_RELAXED);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fz_file f;
  rs_error err = {0};
  rs_te_config cfg = {.threads = 1, .block_bytes = 64, .complete = (int)(size & 1), .map_run = (size & 4) != 0};
  rs_te_result *res = NULL;
  rs_plan_init(&cfg.plan);
  cfg.plan.judged_only = (size & 2) != 0;
  if (rs_plan_add(&cfg.plan, "all_trec", &err) || rs_plan_finish(&cfg.plan, 0, &err)) abort();
  fz_file_open(&f, data, size);
  if (rs_te_evaluate(&cfg, qrels.path, f.path, &res, &err) == RS_OK) {
    (void)rs_te_status(res, &err);
    if (rs_te_write(&cfg, res, 1, 1, devnull)) abort();
    rs_te_result_free(res);
  } else if (err.msg[0] == '\0') {
    abort();
  }
  rs_plan_free(&cfg.plan);
  if ((size & 3) == 3) {
    size_t ranked = 0;
    rs_error serr = {0};
    if (rs__te_rankings(qrels.path, f.path, RS_NUMBERS_STRICT, 1, count_ranking, &ranked, NULL, &serr) != RS_OK &&
        serr.msg[0] == '\0')
      abort();
  }
  fz_file_close(&f);
  return 0;
}
