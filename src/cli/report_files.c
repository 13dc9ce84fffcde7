/* report_files.c: curves.csv and latency_cdf.csv for `eval --report` (see
 * report_files.h). */
#define _GNU_SOURCE
#include "report_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* The families drawn as measure-vs-k curves, and their cutoffs: dense at
 * the top of the ranking where RAG reads, sparse further down. */
static const char *const curve_family[] = {"Success", "R", "P", "nDCG"};
enum { N_FAMILIES = sizeof curve_family / sizeof *curve_family };
static const long curve_cut[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 30, 50, 100};
enum { N_CUTS = sizeof curve_cut / sizeof *curve_cut };
/* trec_eval's interpolated precision at recall 0.0, 0.1, ..., 1.0. */
#define IPREC "iprec_at_recall"
enum { N_IPREC = 11 };

static size_t n_cuts_for(size_t max_k)
{
  const long depth = max_k ? (long)max_k : 100;
  size_t n = 0;
  while (n < N_CUTS && curve_cut[n] <= depth) n++;
  return n ? n : 1;
}

void report_curve_names_free(char **names, size_t n)
{
  for (size_t i = 0; names && i < n; i++) free(names[i]);
  free(names);
}

rs_code report_curve_names(size_t max_k, char ***out, size_t *n, rs_error *err)
{
  const size_t n_cuts = n_cuts_for(max_k);
  char **names = rs__calloc(N_FAMILIES + 1, sizeof *names);
  if (!names) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t f = 0; f < N_FAMILIES; f++) {
    rs__sb b = {0};
    rs__sb_printf(&b, "%s@{", curve_family[f]);
    for (size_t i = 0; i < n_cuts; i++) rs__sb_printf(&b, i ? ",%ld" : "%ld", curve_cut[i]);
    rs__sb_str(&b, "}");
    if (!(names[f] = rs__sb_take(&b))) {
      report_curve_names_free(names, f);
      return rs__fail(err, RS_NOMEM, "out of memory");
    }
  }
  if (!(names[N_FAMILIES] = strdup(IPREC))) {
    report_curve_names_free(names, N_FAMILIES);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  *out = names;
  *n = N_FAMILIES + 1;
  return RS_OK;
}

static void header(rs__csv *w, const sweep_input *in, const char *const *tail, size_t n_tail)
{
  rs__csv_str(w, "run");
  for (size_t k = 0; k < in->n_keys; k++) rs__csv_str(w, in->keys[k]);
  for (size_t i = 0; i < n_tail; i++) rs__csv_str(w, tail[i]);
}

static rs_code curve_row(rs__csv *w, const sweep_input *in, size_t r, const char *measure, const char *base,
                         double cutoff, double value, const char *policy, rs_error *err)
{
  csv_run_columns(w, in, r);
  rs__csv_str(w, measure);
  rs__csv_str(w, base);
  rs__csv_num(w, cutoff);
  rs__csv_num(w, value);
  rs__csv_str(w, policy);
  return rs__csv_end_row(w, err);
}

rs_code report_write_curves(rs__csv *w, const sweep_input *in, const rs__spec *spec, const rs__run_result *res,
                            size_t max_k, const char *policy, rs_error *err)
{
  /* The cutoffs of report_curve_names: a measure the user asked for past
   * the runs' depth (R@100 of a top-30 run) stays in aggregate.csv only. */
  const size_t n_cuts = n_cuts_for(max_k);
  static const char *const tail[] = {"measure", "base", "cutoff", "value", "queries"};
  header(w, in, tail, sizeof tail / sizeof *tail);
  rs_code rc = rs__csv_end_row(w, err);
  for (size_t r = 0; r < in->n_runs && !rc; r++) {
    for (size_t f = 0; f < N_FAMILIES && !rc; f++)
      for (size_t i = 0; i < n_cuts && !rc; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s@%ld", curve_family[f], curve_cut[i]);
        const size_t k = rs__spec_find_value(spec, name);
        if (k == SIZE_MAX)
          return rs__fail(err, RS_FORMAT, "curves.csv: the spec lacks %s (an internal error; please report it)", name);
        rc = curve_row(w, in, r, name, curve_family[f], (double)curve_cut[i], res[r].value[k], policy, err);
      }
    for (int i = 0; i < N_IPREC && !rc; i++) {
      char name[64];
      snprintf(name, sizeof name, IPREC "_%3.2f", i / 10.0);
      const size_t k = rs__spec_find_value(spec, name);
      if (k == SIZE_MAX)
        return rs__fail(err, RS_FORMAT, "curves.csv: the spec lacks %s (an internal error; please report it)", name);
      rc = curve_row(w, in, r, name, IPREC, i / 10.0, res[r].value[k], policy, err);
    }
  }
  return rc;
}

rs_code report_write_latency_cdf(rs__csv *w, const sweep_input *in, const rs__run_result *res, rs_error *err)
{
  static const char *const tail[] = {"quantile", "latency_ms"};
  header(w, in, tail, sizeof tail / sizeof *tail);
  rs_code rc = rs__csv_end_row(w, err);
  for (size_t r = 0; r < in->n_runs && !rc; r++) {
    if (!res[r].latency_cdf) continue;
    for (size_t i = 0; i < RS__LATENCY_CDF_N && !rc; i++) {
      csv_run_columns(w, in, r);
      rs__csv_num(w, rs__latency_cdf_quantile(i));
      rs__csv_num(w, res[r].latency_cdf[i] * 1000.0);
      rc = rs__csv_end_row(w, err);
    }
  }
  return rc;
}
