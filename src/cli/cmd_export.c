/* cmd_export.c: "ragsweep export": a corpus back to TREC qrels and runs. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "formats/corpus.h"
#include "util/tmpfiles.h"

enum { EXPORT_ROWS = 4096 };

static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep export CORPUS.h5 [RUNS.h5 ...] -o DIR\n"
          "\n"
          "Writes DIR/qrels.txt (qid 0 docno grade) and DIR/<run>.txt (qid Q0 docno rank score\n"
          "run) for every run, in the stored order.  Scores are printed so that they read back\n"
          "to the same double; a run without scores gets descending ones (n, n-1, ..., 1) so\n"
          "that trec_eval keeps the stored order.  Doc ids are /docs/id, or the doc indexes\n"
          "when the corpus has none.  Export after import reproduces trec_eval's numbers.\n");
}

static int has_space(const char *s) { return strpbrk(s, " \t\r\n") != NULL || !*s; }

typedef struct {
  FILE *f;
  int tmp_h; /* rs__tmp_register handle */
  char tmp[4200], path[4200];
} out_file;

/* Files written completely but not yet renamed: every file of an export
 * takes its final name only once all are written, so a failure halfway (a
 * bad run late in the list) leaves no complete-looking qrels.txt. */
typedef struct {
  out_file *f;
  size_t n, cap;
} out_list;

static rs_code out_open(out_file *o, const char *dir, const char *name, rs_error *err)
{
  snprintf(o->path, sizeof o->path, "%s/%s", dir, name);
  snprintf(o->tmp, sizeof o->tmp, "%s/.%s.tmp.%ld", dir, name, (long)getpid());
  o->tmp_h = rs__tmp_register(o->tmp);
  if (!(o->f = fopen(o->tmp, "w"))) {
    rs__tmp_forget(o->tmp_h);
    return rs__fail(err, RS_IO, "%s: cannot create: %s", o->path, strerror(errno));
  }
  return RS_OK;
}

static void out_abort(out_file *o)
{
  if (o->f) fclose(o->f);
  o->f = NULL;
  unlink(o->tmp);
  rs__tmp_forget(o->tmp_h);
}

/* Closes o and keeps it in l for out_list_commit (o is aborted on failure). */
static rs_code out_close(out_file *o, out_list *l, rs_error *err)
{
  int bad = ferror(o->f) != 0;
  bad |= fclose(o->f) != 0;
  o->f = NULL;
  if (bad) {
    rs_code rc = rs__fail(err, RS_IO, "%s: cannot write: %s", o->path, strerror(errno));
    out_abort(o);
    return rc;
  }
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    out_file *f = realloc(l->f, cap * sizeof *f);
    if (!f) {
      out_abort(o);
      return rs__fail(err, RS_NOMEM, "out of memory");
    }
    l->f = f, l->cap = cap;
  }
  l->f[l->n++] = *o;
  return RS_OK;
}

/* Renames every file into place (ok) or removes them all; frees l. */
static rs_code out_list_finish(out_list *l, int ok, rs_error *err)
{
  rs_code rc = RS_OK;
  for (size_t i = 0; i < l->n; i++) {
    if (ok && !rc && rename(l->f[i].tmp, l->f[i].path) != 0)
      rc = rs__fail(err, RS_IO, "%s: cannot write: %s", l->f[i].path, strerror(errno));
    if (!ok || rc) unlink(l->f[i].tmp);
    rs__tmp_forget(l->f[i].tmp_h);
  }
  free(l->f);
  memset(l, 0, sizeof *l);
  return rc;
}

static const char *doc_name(const rs__corpus *c, int32_t d, char buf[16])
{
  if (c->has_docs) return c->doc_id[d];
  snprintf(buf, 16, "%" PRId32, d);
  return buf;
}

static rs_code export_qrels(const rs__corpus *c, const char *dir, out_list *l, rs_error *err)
{
  out_file o = {0};
  char buf[16];
  rs_code rc = out_open(&o, dir, "qrels.txt", err);
  if (rc) return rc;
  for (size_t q = 0; q < c->nq; q++) {
    if (c->qoff[q] == c->qoff[q + 1]) continue;
    if (has_space(c->query_id[q])) {
      rc = rs__fail(err, RS_FORMAT, "%s:/queries/id: row %zu: id \"%s\" cannot be written to a TREC file (it is empty "
                    "or holds whitespace)", c->path, q, c->query_id[q]);
      break;
    }
    for (int64_t j = c->qoff[q]; j < c->qoff[q + 1]; j++) {
      const char *d = doc_name(c, c->qdoc[j], buf);
      if (has_space(d)) {
        rc = rs__fail(err, RS_FORMAT, "%s:/docs/id: row %" PRId32 ": id \"%s\" cannot be written to a TREC file",
                      c->path, c->qdoc[j], d);
        break;
      }
      fprintf(o.f, "%s 0 %s %" PRId32 "\n", c->query_id[q], d, c->qgrade[j]);
    }
    if (rc) break;
  }
  if (rc) {
    out_abort(&o);
    return rc;
  }
  return out_close(&o, l, err);
}

static rs_code export_run(const rs__corpus *c, const rs__run *r, const char *dir, out_list *l, rs_error *err)
{
  out_file o = {0};
  rs__block b = {0};
  char name[1100], buf[16], sbuf[40];
  snprintf(name, sizeof name, "%s.txt", r->name);
  rs_code rc = out_open(&o, dir, name, err);
  for (size_t q0 = 0; q0 < r->n_rows && !rc; q0 += EXPORT_ROWS) {
    size_t n = r->n_rows - q0 < EXPORT_ROWS ? r->n_rows - q0 : EXPORT_ROWS;
    if ((rc = rs__run_read(r, q0, n, &b, err))) break;
    for (size_t i = 0; i < n && !rc; i++) {
      const size_t q = q0 + i, a = (size_t)b.off[i], len = (size_t)(b.off[i + 1] - b.off[i]);
      size_t m = 0;
      while (m < len && b.doc[a + m] != -1) m++;
      if (m && has_space(c->query_id[q]))
        rc = rs__fail(err, RS_FORMAT, "%s:/queries/id: row %zu: id \"%s\" cannot be written to a TREC file", c->path,
                      q, c->query_id[q]);
      for (size_t k = 0; k < m && !rc; k++) {
        const int32_t d = b.doc[a + k];
        if (d < 0 || (c->has_docs && (size_t)d >= c->nd)) {
          rc = rs__fail(err, RS_FORMAT, "%s:/runs/%s/doc: row %zu, column %zu: doc index %" PRId32 " out of range",
                        r->path, r->name, q, k, d);
          break;
        }
        const double s = r->has_score ? rs__block_score(&b, a + k) : (double)(m - k);
        if (isnan(s)) {
          rc = rs__fail(err, RS_FORMAT, "%s:/runs/%s/score: row %zu, column %zu: expected a number, found NaN",
                        r->path, r->name, q, k);
          break;
        }
        snprintf(sbuf, sizeof sbuf, "%.17g", s);
        fprintf(o.f, "%s Q0 %s %zu %s %s\n", c->query_id[q], doc_name(c, d, buf), k + 1, sbuf, r->name);
      }
    }
  }
  rs__block_free(&b);
  if (rc) {
    out_abort(&o);
    return rc;
  }
  return out_close(&o, l, err);
}

int rs_cli_export(int argc, char **argv)
{
  static const struct option longs[] = {{"out", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  const char *dir = NULL;
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
    if (c == 'o') dir = optarg;
    else if (c == 'h') {
      help(stdout);
      return RS_EXIT_OK;
    } else {
      fprintf(stderr, "ragsweep export: unknown option '%s' (see 'ragsweep export --help')\n", argv[optind - 1]);
      return RS_EXIT_USAGE;
    }
  }
  if (optind >= argc || !dir) {
    fprintf(stderr, "ragsweep export: expected CORPUS.h5 [RUNS.h5 ...] -o DIR\n");
    return RS_EXIT_USAGE;
  }
  rs_error err = {0};
  rs__corpus *corpus = NULL;
  rs__runset extra = {0};
  rs_code rc = rs__corpus_open(argv[optind], &corpus, &err);
  if (!rc) rc = rs__corpus_load_queries(corpus, &err);
  if (!rc) rc = rs__corpus_load_doc_ids(corpus, &err);
  if (!rc && mkdir(dir, 0777) != 0 && errno != EEXIST)
    rc = rs__fail(&err, RS_IO, "%s: cannot create: %s", dir, strerror(errno));
  out_list done = {0};
  if (!rc) rs__tmp_sweep_stale(dir);
  if (!rc) rc = export_qrels(corpus, dir, &done, &err);
  for (size_t i = 0; !rc && i < corpus->runs.n; i++) rc = export_run(corpus, &corpus->runs.run[i], dir, &done, &err);
  for (int f = optind + 1; !rc && f < argc; f++) {
    if ((rc = rs__runset_open(argv[f], corpus->nq, &extra, &err))) break;
    for (size_t i = 0; !rc && i < extra.n; i++) rc = export_run(corpus, &extra.run[i], dir, &done, &err);
    rs__runset_close(&extra);
  }
  if (rc) out_list_finish(&done, 0, NULL);
  else rc = out_list_finish(&done, 1, &err);
  rs__corpus_close(corpus);
  if (rc) {
    fprintf(stderr, "ragsweep export: %s\n", err.msg);
    return rc == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
  }
  printf("wrote %s/qrels.txt and one <run>.txt per run\n", dir);
  return RS_EXIT_OK;
}
