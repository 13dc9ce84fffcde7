/* gate.h: quality gates for CI ("RR@10>=0.70"), on eval and compare.
 *
 * A gate names one measure, a comparison and a threshold.  Every gate is
 * checked for every configuration; the CLI prints a ✓/✗ line for each and
 * writes gates.csv, and any failure makes the command exit with
 * RS_EXIT_GATE (3), which no error uses. */
#ifndef RAGSWEEP_CLI_GATE_H
#define RAGSWEEP_CLI_GATE_H

#include <stddef.h>
#include <stdio.h>

#include "formats/csvio.h"
#include "metrics/spec.h"
#include "engine/sweep.h"

typedef enum { GATE_GE, GATE_GT, GATE_LE, GATE_LT } gate_op;

typedef struct gate {
  char *measure; /* canonical name (nDCG@10 for ndcg_cut.10) */
  gate_op op;
  double threshold;
  char *threshold_text; /* as given */
} gate;

/* Parses "MEASURE OP NUMBER" (OP: >= > <= <; spaces allowed). */
rs_code gate_parse(const char *text, gate *g, rs_error *err);
/* As gate_parse, but the measure is kept as written (trimmed), not checked
 * against the trec measure names: rag's metrics (faithfulness,
 * factual_correctness(mode=f1), ...), which the caller matches as plain
 * strings. */
rs_code gate_parse_plain(const char *text, gate *g, rs_error *err);
void gate_free(gate *g);
const char *gate_op_text(gate_op op);
int gate_pass(const gate *g, double value);

/* One checked line: printed as "✓ RR@10 >= 0.70  run  0.7312" and written
 * to gates.csv (run, check, measure, op, threshold, value, pass). */
typedef struct gate_report {
  rs__csv *csv;
  size_t n_checked, n_failed;
  int name_width, check_width;
} gate_report;

/* One ✓/✗ line on f, "  ✓ CHECK  RUN  VALUE", then two spaces and detail
 * when it is non-NULL (the history's alerts say why).  Gates and alerts
 * print through it, so their lines look alike. */
void gate_print_line(FILE *f, int pass, int check_width, const char *check, int name_width, const char *run,
                     double value, const char *detail);
/* Widths: of the run names and of the check texts (for aligned lines). */
rs_code gate_report_open(gate_report *r, const char *dir, int name_width, int check_width, rs_error *err);
/* Width of the checks of gates g (for gate_report_open). */
int gates_width(const gate *g, size_t n_gates);
rs_code gate_report_line(gate_report *r, const char *run, const char *check, const char *measure, const char *op,
                         const char *threshold, double value, int pass, rs_error *err);
/* Prints the tally and renames gates.csv into place. */
rs_code gate_report_commit(gate_report *r, rs_error *err);
void gate_report_abort(gate_report *r);

#endif

/* The spec of names[0..n) plus the measure of every gate not among them
 * (so a gated measure is always computed), and the extra values
 * extra[0..n_extra) of rs__spec_build_extra (NULL, 0: none). */
rs_code gate_spec(const char **names, size_t n, const gate *g, size_t n_gates, const char *const *extra,
                  size_t n_extra, size_t max_ranking, rs__spec **out, rs_error *err);
/* The visible value of spec named name, or SIZE_MAX. */
size_t spec_find(const rs__spec *spec, const char *name);
/* Checks every gate on every run's value res[r].value[k], where k is the
 * gate's measure among measures[0..n_measures). */
rs_code gates_check(gate_report *r, const gate *g, size_t n_gates, const char *const *measures, size_t n_measures,
                    const char *const *run_names, size_t n_runs, const rs__run_result *res, rs_error *err);
