/* gate.c: parsing and reporting quality gates. */
#define _GNU_SOURCE
#include "gate.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/spec.h"
#include "sweep_io.h"

const char *gate_op_text(gate_op op)
{
  static const char *const t[] = {">=", ">", "<=", "<"};
  return t[op];
}

int gate_pass(const gate *g, double v)
{
  switch (g->op) {
  case GATE_GE: return v >= g->threshold;
  case GATE_GT: return v > g->threshold;
  case GATE_LE: return v <= g->threshold;
  case GATE_LT: return v < g->threshold;
  }
  return 0;
}

void gate_free(gate *g)
{
  if (!g) return;
  free(g->measure);
  free(g->threshold_text);
  memset(g, 0, sizeof *g);
}

static char *trimmed(const char *s, size_t n)
{
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  return strndup(s, n);
}

/* Splits text at its operator into *g (threshold parsed) and *name (the
 * trimmed measure as written, malloc'd). */
static rs_code gate_split(const char *text, gate *g, char **name, rs_error *err)
{
  memset(g, 0, sizeof *g);
  *name = NULL;
  /* The operator is the first '<' or '>' outside parentheses (P(rel=2)@5
   * has an '=' of its own). */
  const char *op = NULL;
  int depth = 0;
  for (const char *p = text; *p && !op; p++) {
    if (*p == '(') depth++;
    else if (*p == ')') depth--;
    else if (depth == 0 && (*p == '<' || *p == '>')) op = p;
  }
  if (!op)
    return rs__fail(err, RS_USAGE, "gate '%s': expected MEASURE>=VALUE (or >, <=, <), found no comparison", text);
  const int eq = op[1] == '=';
  g->op = *op == '>' ? (eq ? GATE_GE : GATE_GT) : (eq ? GATE_LE : GATE_LT);
  *name = trimmed(text, (size_t)(op - text));
  g->threshold_text = trimmed(op + 1 + eq, strlen(op + 1 + eq));
  rs_code rc = RS_OK;
  if (!*name || !g->threshold_text)
    rc = rs__fail(err, RS_NOMEM, "out of memory");
  else if (!parse_real(g->threshold_text, &g->threshold))
    rc = rs__fail(err, RS_USAGE, "gate '%s': expected a number after '%s', found '%s'", text, gate_op_text(g->op),
                  g->threshold_text);
  else if (**name == '\0')
    rc = rs__fail(err, RS_USAGE, "gate '%s': no measure before '%s'", text, gate_op_text(g->op));
  if (rc) {
    free(*name);
    *name = NULL;
    gate_free(g);
  }
  return rc;
}

rs_code gate_parse(const char *text, gate *g, rs_error *err)
{
  char *name;
  rs_code rc = gate_split(text, g, &name, err);
  if (rc) return rc;
  rs__spec *spec = NULL;
  const char *names[1] = {name};
  if ((rc = rs__spec_build(names, 1, 1000, &spec, err)) != RS_OK && err) {
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    rs__fail(err, rc, "gate '%s': %s", text, msg);
  } else if (!rc) {
    if (spec->n_out != 1)
      rc = rs__fail(err, RS_USAGE, "gate '%s': '%s' names %zu measures; a gate checks one", text, name, spec->n_out);
    else if (!(g->measure = strdup(spec->req[0].name)))
      rc = rs__fail(err, RS_NOMEM, "out of memory");
  }
  rs__spec_free(spec);
  free(name);
  if (rc) gate_free(g);
  return rc;
}

rs_code gate_parse_plain(const char *text, gate *g, rs_error *err)
{
  char *name;
  rs_code rc = gate_split(text, g, &name, err);
  if (!rc) g->measure = name;
  return rc;
}

int gates_width(const gate *g, size_t n_gates)
{
  size_t w = 0;
  for (size_t i = 0; i < n_gates; i++) {
    size_t l = strlen(g[i].measure) + strlen(gate_op_text(g[i].op)) + strlen(g[i].threshold_text) + 2;
    if (l > w) w = l;
  }
  return (int)w;
}

rs_code gate_report_open(gate_report *r, const char *dir, int name_width, int check_width, rs_error *err)
{
  memset(r, 0, sizeof *r);
  r->name_width = name_width > 40 ? 40 : name_width;
  r->check_width = check_width > 60 ? 60 : check_width;
  rs_code rc = rs__csv_create(dir, "gates.csv", &r->csv, err);
  if (rc) return rc;
  static const char *const hdr[] = {"run", "check", "measure", "op", "threshold", "value", "pass"};
  for (size_t i = 0; i < sizeof hdr / sizeof *hdr; i++) rs__csv_str(r->csv, hdr[i]);
  return rs__csv_end_row(r->csv, err);
}

void gate_print_line(FILE *f, int pass, int check_width, const char *check, int name_width, const char *run,
                     double value, const char *detail)
{
  fprintf(f, "  %s %-*s  %-*s  %.4f%s%s\n", pass ? "\xE2\x9C\x93" : "\xE2\x9C\x97", check_width, check, name_width, run,
          value, detail ? "  " : "", detail ? detail : "");
}

rs_code gate_report_line(gate_report *r, const char *run, const char *check, const char *measure, const char *op,
                         const char *threshold, double value, int pass, rs_error *err)
{
  gate_print_line(stdout, pass, r->check_width, check, r->name_width, run, value, NULL);
  r->n_checked++;
  r->n_failed += !pass;
  const char *cols[] = {run, check, measure, op, threshold};
  for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) rs__csv_str(r->csv, cols[i]);
  rs__csv_num(r->csv, value);
  rs__csv_str(r->csv, pass ? "true" : "false");
  return rs__csv_end_row(r->csv, err);
}

rs_code gate_report_commit(gate_report *r, rs_error *err)
{
  printf("gates: %zu of %zu checks failed\n", r->n_failed, r->n_checked);
  rs_code rc = rs__csv_commit(r->csv, err);
  r->csv = NULL;
  return rc;
}

void gate_report_abort(gate_report *r)
{
  rs__csv_abort(r->csv);
  r->csv = NULL;
}

size_t spec_find(const rs__spec *spec, const char *name)
{
  for (size_t k = 0; k < spec->n_out; k++)
    if (strcmp(spec->req[k].name, name) == 0) return k;
  return SIZE_MAX;
}

rs_code gate_spec(const char **names, size_t n, const gate *g, size_t n_gates, const char *const *extra,
                  size_t n_extra, size_t max_ranking, rs__spec **out, rs_error *err)
{
  rs_code rc = rs__spec_build_extra(names, n, extra, n_extra, max_ranking, out, err);
  if (rc || n_gates == 0) return rc;
  const char **all = rs__calloc(n + n_gates, sizeof *all);
  if (!all) return rs__fail(err, RS_NOMEM, "out of memory");
  memcpy(all, names, n * sizeof *names);
  size_t n_all = n;
  for (size_t i = 0; i < n_gates; i++) {
    int seen = spec_find(*out, g[i].measure) != SIZE_MAX;
    for (size_t j = n; j < n_all && !seen; j++) seen = strcmp(all[j], g[i].measure) == 0;
    if (!seen) all[n_all++] = g[i].measure;
  }
  if (n_all > n) {
    rs__spec_free(*out);
    *out = NULL;
    rc = rs__spec_build_extra(all, n_all, extra, n_extra, max_ranking, out, err);
  }
  free(all);
  return rc;
}

rs_code gates_check(gate_report *r, const gate *g, size_t n_gates, const char *const *measures, size_t n_measures,
                    const char *const *run_names, size_t n_runs, const rs__run_result *res, rs_error *err)
{
  rs_code rc = RS_OK;
  for (size_t i = 0; i < n_gates && !rc; i++) {
    size_t k = 0;
    while (k < n_measures && strcmp(measures[k], g[i].measure) != 0) k++;
    char check[128];
    snprintf(check, sizeof check, "%s %s %s", g[i].measure, gate_op_text(g[i].op), g[i].threshold_text);
    for (size_t run = 0; run < n_runs && !rc; run++) {
      const double v = res[run].value[k];
      rc = gate_report_line(r, run_names[run], check, g[i].measure, gate_op_text(g[i].op), g[i].threshold_text, v,
                            gate_pass(&g[i], v), err);
    }
  }
  return rc;
}
