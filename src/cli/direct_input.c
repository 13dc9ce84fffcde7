/* direct_input.c: text inputs for eval, compare and judge through a
 * corpus built in memory (see direct_input.h). */
#define _GNU_SOURCE
#include "direct_input.h"
#include "util/mpi.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/detect.h"
#include "util/strbuf.h"

char *direct_run_name(const char *path)
{
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char *name = strdup(base);
  if (!name) return NULL;
  static const char *const exts[] = {".gz", ".txt", ".run", ".trec", ".tsv", ".csv", ".jsonl", ".json"};
  for (int again = 1; again;) {
    again = 0;
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
      size_t l = strlen(name), e = strlen(exts[i]);
      if (l > e && strcmp(name + l - e, exts[i]) == 0) name[l - e] = '\0', again = 1;
    }
  }
  return name;
}

void direct_plan_free(direct_plan *p)
{
  for (size_t i = 0; p->runs && i < p->n_runs; i++) free((char *)p->runs[i].name);
  free(p->runs);
  memset(p, 0, sizeof *p);
}

/* NAME=PATH or PATH.  A '=' splits the argument unless the whole of it is
 * an existing file (a path that holds '='). */
static rs_code parse_run(char *arg, rs__import_run *r, rs_error *err)
{
  char *eq = strchr(arg, '=');
  struct stat st;
  if (eq && eq != arg && stat(arg, &st) != 0) {
    if (!(r->name = strndup(arg, (size_t)(eq - arg)))) return rs__fail(err, RS_NOMEM, "out of memory");
    r->path = eq + 1;
  } else {
    if (!(r->name = direct_run_name(arg))) return rs__fail(err, RS_NOMEM, "out of memory");
    r->path = arg;
  }
  if (!*r->name || strchr(r->name, '/') || strcmp(r->name, ".") == 0 || strcmp(r->name, "..") == 0)
    return rs__fail(err, RS_USAGE, "run name '%s' (from %s): expected a non-empty name without '/' (NAME=PATH sets it)",
                    r->name, r->path);
  return RS_OK;
}

/* The part of a run argument that is a path. */
static const char *path_of(const char *arg)
{
  const char *eq = strchr(arg, '=');
  struct stat st;
  return eq && eq != arg && stat(arg, &st) != 0 ? eq + 1 : arg;
}

/* The BEIR folder's files; qrels/SPLIT.tsv must be there. */
static rs_code beir_files(direct_plan *p, const char *dir, const char *split, rs_error *err)
{
  struct stat st;
  snprintf(p->beir_qrels, sizeof p->beir_qrels, "%s/qrels/%s.tsv", dir, split);
  snprintf(p->beir_queries, sizeof p->beir_queries, "%s/queries.jsonl", dir);
  snprintf(p->beir_corpus, sizeof p->beir_corpus, "%s/corpus.jsonl", dir);
  if (stat(p->beir_queries, &st) != 0) p->beir_queries[0] = '\0';
  if (stat(p->beir_corpus, &st) != 0) p->beir_corpus[0] = '\0';
  if (stat(p->beir_qrels, &st) == 0) return RS_OK;
  /* Say which splits there are. */
  rs__sb have = {0};
  char qdir[4200];
  snprintf(qdir, sizeof qdir, "%s/qrels", dir);
  DIR *d = opendir(qdir);
  for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
    const size_t l = strlen(e->d_name);
    if (l > 4 && strcmp(e->d_name + l - 4, ".tsv") == 0) rs__sb_printf(&have, "%s%.*s", have.n ? ", " : "", (int)(l - 4), e->d_name);
  }
  if (d) closedir(d);
  rs_code rc = rs__fail(err, RS_IO, "%s: no qrels for the split '%s'; the folder has: %s (choose one with --split NAME)",
                        p->beir_qrels, split, have.n ? rs__sb_view(&have) : "none");
  rs__sb_free(&have);
  return rc;
}

static int is_judgments(rs__input_kind k)
{
  return k == RS_INPUT_TREC_QRELS || k == RS_INPUT_BEIR_QRELS || k == RS_INPUT_JSON_EVALSET || k == RS_INPUT_BEIR_DIR;
}

rs_code direct_plan_make(direct_plan *p, char **pos, size_t n_pos, const direct_opts *o, rs_error *err)
{
  memset(p, 0, sizeof *p);
  if (n_pos == 0) return rs__fail(err, RS_USAGE, "expected inputs (see 'ragsweep %s --help')", o->cmd);
  rs__detected d;
  const char *first = path_of(pos[0]);
  rs_code rc = rs__detect(first, &d, err);
  if (rc) return rc;
  /* ann-benchmarks files: eval and import take them before this (annb_cli.h). */
  if (d.kind == RS_INPUT_ANNB_RESULT)
    return rs__fail(err, RS_USAGE, "%s: an ann-benchmarks result first; give its dataset first, then the results "
                    "('ragsweep eval DATASET.hdf5 RESULT.hdf5 ... -o OUT')", first);
  if (d.kind == RS_INPUT_ANNB_DATASET)
    return rs__fail(err, RS_USAGE, "%s: ann-benchmarks files are read by eval and import; 'ragsweep import -o "
                    "corpus.h5 DATASET.hdf5 RESULT.hdf5 ...' makes a corpus that %s reads (id-based measures)",
                    first, o->cmd);
  if (d.kind == RS_INPUT_HDF5) {
    p->corpus = 1;
    return RS_OK;
  }
  size_t r0 = 0;
  /* With --qrels every positional is a run; a BEIR folder (never a run)
   * keeps its texts and split, --qrels replacing its qrels. */
  if (is_judgments(d.kind) && first == pos[0] && (!o->qrels_path || d.kind == RS_INPUT_BEIR_DIR)) {
    r0 = 1;
    if (d.kind == RS_INPUT_BEIR_DIR) {
      p->beir_dir = pos[0];
      if ((rc = beir_files(p, pos[0], o->split ? o->split : "test", err))) return rc;
      p->qrels_path = o->qrels_path ? o->qrels_path : p->beir_qrels;
    } else {
      p->qrels_path = pos[0];
    }
  } else {
    p->qrels_path = o->qrels_path;
    if (d.kind == RS_INPUT_UNKNOWN && ((!d.text && !o->qrels_path) || (!o->qrels_path && !o->queries_path)))
      return rs__fail(err, RS_FORMAT,
                      "%s: not an input ragsweep reads (found: %s); expected a ragsweep corpus (HDF5), judgments "
                      "then runs, or --qrels QRELS then runs.  Judgments: TREC qrels, BEIR qrels (TSV), a JSON eval "
                      "set or a BEIR folder; runs: TREC, JSONL or CSV/TSV (see 'ragsweep %s --help')",
                      first, d.found, o->cmd);
    if (!o->qrels_path && !o->queries_path) {
      return rs__fail(err, RS_USAGE,
                      "%s: %s, and runs are scored against judgments: give them first ('ragsweep %s QRELS RUN "
                      "...' with TREC qrels, BEIR qrels, a JSON eval set or a BEIR folder), or with --qrels QRELS",
                      first, rs__input_kind_article(d.kind), o->cmd);
    }
  }
  if (r0 == n_pos && !o->runs_optional)
    return rs__fail(err, RS_USAGE, "%s: judgments without runs; expected 'ragsweep %s %s RUN [RUN ...]'", pos[0],
                    o->cmd, pos[0]);
  p->n_runs = n_pos - r0;
  if (!(p->runs = calloc(p->n_runs ? p->n_runs : 1, sizeof *p->runs))) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < p->n_runs; i++)
    if ((rc = parse_run(pos[r0 + i], &p->runs[i], err))) return rc;
  return RS_OK;
}

rs_code sweep_input_open_args(sweep_input *in, char **pos, size_t n_pos, const direct_opts *o, direct_plan *plan,
                              rs_error *err)
{
  direct_plan own, *p = plan ? plan : &own;
  rs_code rc = direct_plan_make(p, pos, n_pos, o, err);
  if (rc) goto done;
  if (!p->corpus && rs__mpi_size() > 1) {
    /* The ranks share the work of one corpus file (engine/sweep_ranks.c);
     * each would otherwise parse every text input whole for its share. */
    rc = rs__fail(err, RS_USAGE,
                  "%s: under MPI, '%s' reads an HDF5 corpus and run files; convert the text inputs once with "
                  "'ragsweep import -o corpus.h5 --qrels QRELS RUN ...', then run 'mpirun ... ragsweep %s corpus.h5'",
                  pos[0], o->cmd, o->cmd);
    goto done;
  }
  if (p->corpus) {
    /* A corpus, its run files, and --qrels in place of its qrels.  What a
     * run file that does not open is (text runs, ann-benchmarks files) is
     * looked for only then: detecting an HDF5 file costs a forked child. */
    if ((rc = sweep_input_open(in, pos[0], pos + 1, n_pos - 1, err))) {
      rs__detected d;
      rs_error detect_err;
      const size_t bad = in->corpus && in->n_files < n_pos - 1 ? 1 + in->n_files : 0;
      if (bad && rs__detect(pos[bad], &d, &detect_err) == RS_OK && d.kind != RS_INPUT_HDF5 &&
          d.kind != RS_INPUT_UNKNOWN)
        rc = rs__fail(err, RS_USAGE,
                      "%s: %s after the corpus %s; a corpus takes run files in HDF5.  Score text runs with their "
                      "judgments ('ragsweep %s --qrels QRELS RUN ...'), or add them to the corpus with 'ragsweep "
                      "import'",
                      pos[bad], rs__input_kind_article(d.kind), pos[0], o->cmd);
      goto done;
    }
    if (o->qrels_path) rc = sweep_input_use_qrels(in, o->qrels_path, err);
    goto done;
  }
  size_t *dropped = calloc(p->n_runs, sizeof *dropped), *no_latency = calloc(p->n_runs, sizeof *no_latency);
  rs__corpus *c = NULL;
  if (!dropped || !no_latency) rc = rs__fail(err, RS_NOMEM, "out of memory");
  if (!rc) {
    const rs__import_cfg cfg = {.qrels_path = p->qrels_path,
                                .queries_path = p->qrels_path ? NULL : o->queries_path,
                                .runs = p->runs,
                                .n_runs = p->n_runs,
                                .threads = o->threads,
                                .dropped = dropped,
                                .no_latency = no_latency,
                                .rows_only = o->rows_only};
    rc = rs__import_corpus(&cfg, &c, err);
  }
  if (!rc) {
    for (size_t i = 0; i < p->n_runs; i++) {
      if (dropped[i])
        fprintf(stderr, "ragsweep %s: note: run %s: %zu topic%s not in %s %s left out\n", o->cmd, p->runs[i].name,
                dropped[i], dropped[i] == 1 ? "" : "s", o->queries_path, dropped[i] == 1 ? "was" : "were");
      if (no_latency[i])
        fprintf(stderr, "ragsweep %s: note: run %s gives no latency_ms for %zu of the judged queries (it does not "
                        "rank them), so latency.csv leaves the run out\n", o->cmd, p->runs[i].name, no_latency[i]);
    }
    rc = sweep_input_adopt(in, c, err); /* in owns c, also after an error */
  }
  free(dropped);
  free(no_latency);
done:
  if (p == &own) direct_plan_free(&own);
  return rc;
}
