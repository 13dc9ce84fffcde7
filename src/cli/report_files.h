/* report_files.h: what `eval --report` writes beside its usual outputs for
 * the HTML report (README, "The morning-after view"):
 *
 *   curves.csv        run, <attributes>, measure, base, cutoff, value,
 *                     queries: Success, R, P and nDCG at the cutoffs
 *                     1..10, 15, 20, 30, 50, 100 (those up to the runs'
 *                     depth) and trec_eval's 11 iprec_at_recall points
 *                     (base iprec_at_recall, cutoff the recall level);
 *   latency_cdf.csv   run, <attributes>, quantile, latency_ms: the
 *                     quantiles of rs__latency_cdf (0, 0.01, ..., 0.99,
 *                     0.999, 1) of every run with latencies.
 *
 * The curve values are extra values of the eval's own spec
 * (rs__spec_build_extra): the same kernel and the same sums as
 * aggregate.csv, so a value both files hold is the same double, and
 * aggregate.csv, per_query.csv, gates and worst.csv keep only the
 * measures asked for. */
#ifndef RAGSWEEP_CLI_REPORT_FILES_H
#define RAGSWEEP_CLI_REPORT_FILES_H

#include <stddef.h>

#include "engine/sweep.h"
#include "formats/csvio.h"
#include "metrics/spec.h"
#include "sweep_io.h"

/* The curve measures for runs ranking at most max_k docs (0: unknown, taken
 * as 100), as measure names for rs__spec_build_extra: *out[0..*n) each to
 * free, then the array (report_curve_names_free).  RS_NOMEM. */
rs_code report_curve_names(size_t max_k, char ***out, size_t *n, rs_error *err);
void report_curve_names_free(char **names, size_t n);

/* curves.csv into w (created and committed by the caller), for the
 * max_k given to report_curve_names. */
rs_code report_write_curves(rs__csv *w, const sweep_input *in, const rs__spec *spec, const rs__run_result *res,
                            size_t max_k, const char *policy, rs_error *err);
/* latency_cdf.csv into w: the runs whose result has a latency_cdf. */
rs_code report_write_latency_cdf(rs__csv *w, const sweep_input *in, const rs__run_result *res, rs_error *err);

#endif
