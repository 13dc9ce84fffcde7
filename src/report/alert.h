/* alert.h: degradation alerts on a history's series (internal), for
 * `ragsweep history --alert 'nDCG@10:window=20:drop=0.02'`.
 *
 * The rule: on one series (one run, one measure, oldest value first), the
 * latest value is compared with the mean m of the values before it, at
 * most `window` of them (the most recent; fewer when fewer exist; values
 * that are NaN are passed over).  With drop=D the alert fires when
 *     latest < m - D          (drop=P%: latest < m - P/100 * |m|),
 * with rise=D (for measures where lower is better, such as latency) when
 *     latest > m + D          (rise=P%: latest > m + P/100 * |m|).
 * A change of exactly D is not an alert; differences within 1e-9 * max(1, |m|)
 * of the limit count as exact (the values are decimal texts whose binary
 * differences carry rounding: 0.80 - 0.78 is 0.020000000000000018).
 * A series with no earlier value passes ("no history yet"); a latest value
 * that is NaN fires (the evaluation had no number for it).  Nothing here
 * prints. */
#ifndef RAGSWEEP_REPORT_ALERT_H
#define RAGSWEEP_REPORT_ALERT_H

#include <stddef.h>

#include "ragsweep/error.h"

#define RS_ALERT_DEFAULT_WINDOW 20

typedef struct rs__alert {
  char *measure;     /* as written: resolved against a history as -m is */
  size_t window;     /* >= 1 (default RS_ALERT_DEFAULT_WINDOW) */
  int rise;          /* 0: drop= (higher is better); 1: rise= (lower is better) */
  double amount;     /* >= 0: absolute, or a fraction of |m| when relative */
  int relative;      /* given as a percentage */
  char *amount_text; /* as given: "0.02", "5%" */
} rs__alert;

/* Parses "MEASURE[:window=N]:drop=NUMBER[%]" (or rise= instead of drop=;
 * keys in any order).  The measure is the text before the first ':' outside
 * parentheses.  RS_USAGE with a message that quotes text and says what was
 * expected (window an integer >= 1, drop or rise a number >= 0 or a
 * percentage, no unknown or repeated key, one of drop and rise); RS_NOMEM.
 * *a is zeroed on failure. */
rs_code rs__alert_parse(const char *text, rs__alert *a, rs_error *err);
void rs__alert_free(rs__alert *a);
/* The alert's canonical text for measure (which may be a name the alert's
 * measure expanded to): "nDCG@10:window=20:drop=0.02", in buf. */
void rs__alert_text(const rs__alert *a, const char *measure, char *buf, size_t cap);

/* The mean of the last (at most) window non-NaN values of v[0..n), summed
 * oldest first; *n_used counts them (0: the mean is NaN). */
double rs__alert_window_mean(const double *v, size_t n, size_t window, size_t *n_used);

typedef struct rs__alert_result {
  int fired;
  size_t n_prev; /* values in the mean; 0: no history yet */
  double latest; /* the last value (NaN: none) */
  double mean;   /* m (NaN when n_prev is 0) */
  double limit;  /* m - drop, or m + rise */
  double change; /* latest - m */
} rs__alert_result;

/* Applies a to the series v[0..n) (n >= 1, oldest first). */
void rs__alert_check(const rs__alert *a, const double *v, size_t n, rs__alert_result *out);

#endif
