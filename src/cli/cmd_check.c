/* cmd_check.c: "ragsweep check": validate files against the corpus format. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "formats/corpus.h"
#include "formats/qrels_map.h"
#include "metrics/spec.h"
#include "engine/sweep.h"
#include "sweep_io.h"

static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep check CORPUS.h5 [RUNS.h5 ...] [--qrels FILE]\n"
          "\n"
          "Validates a corpus and run files against format version 1 (README, \"Corpus format\"):\n"
          "root attributes; datasets, ranks, shapes and types (/queries/text and /docs/text, when\n"
          "present, hold one readable string per query and per doc); qrels offsets (monotonic,\n"
          "from 0 to the number of judgments), doc indexes in range, no doc judged twice for a query;\n"
          "for every run, a row per query, doc indexes in range, -1 only as trailing padding, no\n"
          "doc twice in a ranking, no NaN score, finite non-negative latencies.  --qrels FILE\n"
          "checks TREC qrels as 'eval --qrels FILE' reads them against this corpus: four fields\n"
          "a line, integer grades, every query and doc known to the corpus, no doc judged twice.\n"
          "Prints one line per file and run; every problem names the file, dataset and row.\n"
          "\n"
          "exit status: 0 all valid; 1 usage; 2 a problem was found.\n");
}

static void describe(const rs__run *r)
{
  if (r->csr) printf("CSR, %zu queries, %llu docs", r->n_rows, (unsigned long long)r->n_docs);
  else printf("dense %zu x %zu", r->n_rows, r->k);
  printf("%s%s", r->has_score ? ", scores" : ", no scores (stored order)", r->has_latency ? ", latency" : "");
  if (r->n_attrs) {
    printf(", ");
    for (size_t a = 0; a < r->n_attrs; a++) printf("%s%s=%s", a ? " " : "", r->attrs[a].key, r->attrs[a].text);
  }
}

/* The run names seen so far and the file of each, so that a name repeated
 * across files is reported as eval and compare would reject it. */
typedef struct {
  char **name, **path;
  size_t n, cap;
} seen_runs;

/* The file that already holds a run named r->name, or NULL after recording it
 * (also NULL when memory is short: the check is then skipped). */
static const char *seen_before(seen_runs *s, const rs__run *r)
{
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->name[i], r->name) == 0) return s->path[i];
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    char **n = realloc(s->name, cap * sizeof *n);
    if (!n) return NULL;
    s->name = n;
    char **p = realloc(s->path, cap * sizeof *p);
    if (!p) return NULL;
    s->path = p;
    s->cap = cap;
  }
  char *name = strdup(r->name), *path = strdup(r->path);
  if (!name || !path) {
    free(name);
    free(path);
    return NULL;
  }
  s->name[s->n] = name, s->path[s->n] = path, s->n++;
  return NULL;
}

static void seen_free(seen_runs *s)
{
  for (size_t i = 0; i < s->n; i++) free(s->name[i]), free(s->path[i]);
  free(s->name);
  free(s->path);
}

/* Streams every row of a run through the engine's checks. */
static int check_run(const rs__corpus *c, const rs__spec *spec, const rs__run *r, seen_runs *seen)
{
  rs__sweep_cfg cfg = {.spec = spec};
  rs__run_result res = {0};
  rs_error err = {0};
  printf("  run %s: ", r->name);
  const char *other = seen_before(seen, r);
  if (other) {
    printf("INVALID\n    run '%s' is in both %s and %s; run names must be unique (eval and compare reject it)\n",
           r->name, other, r->path);
    return 1;
  }
  if (check_run_attrs(r, &err) || rs__sweep(&cfg, c, &r, 1, &res, &err)) {
    printf("INVALID\n    %s\n", err.msg);
    return 1;
  }
  printf("ok (");
  describe(r);
  printf(")\n");
  rs__run_result_free(&res);
  return 0;
}

/* Checks TREC qrels against the corpus as eval and compare --qrels read them. */
static int check_qrels_file(const rs__corpus *c, const char *path)
{
  rs_error err = {0};
  int64_t *qoff = NULL;
  int32_t *qdoc = NULL, *qgrade = NULL;
  if (rs__qrels_map_file(c, path, &qoff, &qdoc, &qgrade, &err)) {
    printf("%s: INVALID\n  %s\n", path, err.msg);
    return 1;
  }
  size_t judged = 0;
  for (size_t q = 0; q < c->nq; q++) judged += qoff[q + 1] > qoff[q];
  printf("%s: ok (qrels: %lld judgments, %zu of the corpus's %zu queries judged)\n", path, (long long)qoff[c->nq],
         judged, c->nq);
  free(qoff);
  free(qdoc);
  free(qgrade);
  return 0;
}

int rs_cli_check(int argc, char **argv)
{
  /* --qrels FILE (or --qrels=FILE) may stand anywhere; the rest are files. */
  const char *qrels_path = NULL;
  int n_files = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--qrels") == 0 || strncmp(argv[i], "--qrels=", 8) == 0) {
      if (argv[i][7] == '=') qrels_path = argv[i] + 8;
      else if (i + 1 < argc) qrels_path = argv[++i];
      else {
        fprintf(stderr, "ragsweep check: --qrels: expected a file name after it\n");
        return RS_EXIT_USAGE;
      }
      if (!*qrels_path) {
        fprintf(stderr, "ragsweep check: --qrels: expected a file name, found an empty one\n");
        return RS_EXIT_USAGE;
      }
      continue;
    }
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      help(stdout);
      return RS_EXIT_OK;
    }
    if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "ragsweep check: unknown option '%s'\n", argv[i]);
      help(stderr);
      return RS_EXIT_USAGE;
    }
    argv[++n_files] = argv[i];
  }
  argc = n_files + 1;
  if (argc < 2) {
    help(stderr);
    return RS_EXIT_USAGE;
  }
  rs_error err = {0};
  rs__corpus *c = NULL;
  rs__spec *spec = NULL;
  int bad = 0;
  /* The texts are read whole: that checks every string can be read. */
  if (rs__corpus_open(argv[1], &c, &err) || rs__corpus_load_queries(c, &err) ||
      (c->has_doc_text && rs__corpus_load_doc_texts(c, &err))) {
    rs__corpus_close(c);
    printf("%s: INVALID\n  %s\n", argv[1], err.msg);
    if (argc > 2 || qrels_path)
      printf("(run files and qrels are checked against a valid corpus: fix %s first)\n", argv[1]);
    return RS_EXIT_INPUT;
  }
  size_t nnz = (size_t)c->qoff[c->nq], judged = 0;
  for (size_t q = 0; q < c->nq; q++) judged += c->qoff[q + 1] > c->qoff[q];
  printf("%s: ok (corpus: %zu queries, %zu judged; %s%zu docs; %zu judgments; %zu runs%s%s)\n", argv[1], c->nq, judged,
         c->has_docs ? "" : "no /docs/id, ", c->nd, nnz, c->runs.n, c->has_text ? "; query texts" : "",
         c->has_doc_text ? "; doc texts" : "");
  const char *const names[] = {"NumRet"};
  if (rs__spec_build(names, 1, 1000, &spec, &err)) {
    printf("internal error: %s\n", err.msg);
    rs__corpus_close(c);
    return RS_EXIT_INPUT;
  }
  if (qrels_path) bad |= check_qrels_file(c, qrels_path);
  seen_runs seen = {0};
  for (size_t i = 0; i < c->runs.n; i++) bad |= check_run(c, spec, &c->runs.run[i], &seen);
  for (int f = 2; f < argc; f++) {
    rs__runset rs = {0};
    if (rs__runset_open(argv[f], c->nq, &rs, &err)) {
      printf("%s: INVALID\n  %s\n", argv[f], err.msg);
      bad = 1;
      continue;
    }
    printf("%s: ok (%zu runs)\n", argv[f], rs.n);
    for (size_t i = 0; i < rs.n; i++) bad |= check_run(c, spec, &rs.run[i], &seen);
    rs__runset_close(&rs);
  }
  seen_free(&seen);
  rs__spec_free(spec);
  rs__corpus_close(c);
  printf("%s\n", bad ? "problems found" : "all valid");
  return bad ? RS_EXIT_INPUT : RS_EXIT_OK;
}
