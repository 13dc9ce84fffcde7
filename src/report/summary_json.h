/* summary_json.h: one JSON document per evaluation for CI systems that read
 * JSON (--json FILE on eval, compare and rag; internal).
 *
 * The document says when the evaluation ran, what it read, every
 * configuration's aggregates and latency, every check of gates.csv (and
 * rag's tiers.csv) with its outcome, and the overall status, so a CI step
 * can decide from one file:
 *
 *   {"tool": "ragsweep", "version": "...", "command": "eval",
 *    "timestamp": "2026-11-23T15:10:00Z", "unix_time": 1795446600,
 *    "status": "passed", "passed": true, "exit_status": 0, "failures": 0, "checks": 3,
 *    "inputs": ["corpus.h5"], "arguments": ["eval", "corpus.h5", "-o", "out", ...],
 *    "output_dir": "out",
 *    "configurations": [{"run": "...", "attributes": {"model": "..."},
 *                        "measures": {"nDCG@10": 0.48}, "latency_ms": {"p50": 12.5, ...}}],
 *    "gates": [{"run": "...", "check": "RR@10 >= 0.7", "measure": "RR@10", "op": ">=",
 *               "threshold": "0.7", "value": 0.71, "passed": true}],
 *    "tiers": [...]}
 *
 * Written under a temporary name and renamed into place. */
#ifndef RAGSWEEP_REPORT_SUMMARY_JSON_H
#define RAGSWEEP_REPORT_SUMMARY_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "ragsweep/error.h"
#include "report/results.h"

typedef struct rs__summary_info {
  const char *command;          /* eval, compare, rag */
  const char *const *arguments; /* the command line after the program name */
  size_t n_arguments;
  const char *const *inputs;    /* the input files, as given */
  size_t n_inputs;
  int exit_status;              /* what the command returns: 0 or 3 (a check failed) */
  int64_t unix_time;
} rs__summary_info;

/* Writes the document of the folder read into r to path.  gates.csv and
 * tiers.csv are read from r->dir when present.  RS_IO, RS_FORMAT (a
 * malformed gates.csv), RS_NOMEM. */
rs_code rs__summary_json_write(const rs__results *r, const rs__summary_info *info, const char *path, rs_error *err);

#endif
