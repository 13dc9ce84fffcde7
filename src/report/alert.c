/* alert.c: degradation alerts on a history's series (see alert.h). */
#define _GNU_SOURCE
#include "report/alert.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define EXPECTED "expected MEASURE:window=N:drop=NUMBER (or rise=NUMBER; NUMBER may be a percentage such as 5%)"

void rs__alert_free(rs__alert *a)
{
  if (!a) return;
  free(a->measure);
  free(a->amount_text);
  *a = (rs__alert){0};
}

static char *trimmed(const char *s, size_t n)
{
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  return strndup(s, n);
}

/* A finite number >= 0 spelling all of s. */
static int parse_amount(const char *s, double *out)
{
  char *end;
  errno = 0;
  const double v = strtod(s, &end);
  if (end == s || *end || errno == ERANGE || !isfinite(v) || v < 0) return 0;
  *out = v;
  return 1;
}

/* One key=value of the alert (the text between two ':'). */
static rs_code parse_pair(const char *text, const char *pair, rs__alert *a, int *have_window, rs_error *err)
{
  const char *eq = strchr(pair, '=');
  if (!eq)
    return rs__fail(err, RS_USAGE, "alert '%s': expected KEY=VALUE (window, drop or rise) after ':', found '%s'",
                    text, pair);
  const size_t klen = (size_t)(eq - pair);
  const char *val = eq + 1;
  if (klen == 6 && strncmp(pair, "window", 6) == 0) {
    if (*have_window) return rs__fail(err, RS_USAGE, "alert '%s': window is given twice", text);
    char *end;
    errno = 0;
    const long long w = strtoll(val, &end, 10);
    if (end == val || *end || errno == ERANGE || w < 1 || !isdigit((unsigned char)*val))
      return rs__fail(err, RS_USAGE, "alert '%s': window must be an integer >= 1 (the number of earlier values "
                                     "averaged), found '%s'", text, val);
    a->window = (size_t)w;
    *have_window = 1;
    return RS_OK;
  }
  const int rise = klen == 4 && strncmp(pair, "rise", 4) == 0;
  if (rise || (klen == 4 && strncmp(pair, "drop", 4) == 0)) {
    if (a->amount_text)
      return rs__fail(err, RS_USAGE, "alert '%s': give one of drop= and rise=, once (drop for measures where higher "
                                     "is better, rise where lower is, such as latency)", text);
    const size_t n = strlen(val);
    a->relative = n > 0 && val[n - 1] == '%';
    char *num = strndup(val, a->relative ? n - 1 : n);
    if (!num || !(a->amount_text = strdup(val))) {
      free(num);
      return rs__fail(err, RS_NOMEM, "out of memory");
    }
    const int ok = parse_amount(num, &a->amount);
    free(num);
    if (!ok)
      return rs__fail(err, RS_USAGE, "alert '%s': %s must be a number >= 0 (such as 0.02) or a percentage of the "
                                     "mean (such as 5%%), found '%s'", text, rise ? "rise" : "drop", val);
    if (a->relative) a->amount /= 100.0;
    a->rise = rise;
    return RS_OK;
  }
  return rs__fail(err, RS_USAGE, "alert '%s': unknown key '%.*s' (expected window, drop or rise)", text, (int)klen,
                  pair);
}

rs_code rs__alert_parse(const char *text, rs__alert *a, rs_error *err)
{
  *a = (rs__alert){.window = RS_ALERT_DEFAULT_WINDOW};
  /* The measure ends at the first ':' outside parentheses (rag's
   * factual_correctness(mode=f1) has an '=' of its own). */
  const char *colon = NULL;
  int depth = 0;
  for (const char *p = text; *p && !colon; p++) {
    if (*p == '(') depth++;
    else if (*p == ')') depth--;
    else if (depth == 0 && *p == ':') colon = p;
  }
  if (!colon) return rs__fail(err, RS_USAGE, "alert '%s': %s, found no ':'", text, EXPECTED);
  if (!(a->measure = trimmed(text, (size_t)(colon - text)))) return rs__fail(err, RS_NOMEM, "out of memory");
  rs_code rc = RS_OK;
  if (!*a->measure) rc = rs__fail(err, RS_USAGE, "alert '%s': %s, found no measure before ':'", text, EXPECTED);
  int have_window = 0;
  for (const char *p = colon + 1; !rc;) {
    const char *q = strchr(p, ':');
    char *pair = trimmed(p, q ? (size_t)(q - p) : strlen(p));
    if (!pair) rc = rs__fail(err, RS_NOMEM, "out of memory");
    else rc = parse_pair(text, pair, a, &have_window, err);
    free(pair);
    if (!q) break;
    p = q + 1;
  }
  if (!rc && !a->amount_text) rc = rs__fail(err, RS_USAGE, "alert '%s': %s, found neither drop= nor rise=", text, EXPECTED);
  if (rc) rs__alert_free(a);
  return rc;
}

void rs__alert_text(const rs__alert *a, const char *measure, char *buf, size_t cap)
{
  snprintf(buf, cap, "%s:window=%zu:%s=%s", measure, a->window, a->rise ? "rise" : "drop", a->amount_text);
}

double rs__alert_window_mean(const double *v, size_t n, size_t window, size_t *n_used)
{
  /* Find where the window starts, then sum oldest first: a fixed order, so
   * the mean is the same bits as a reader's left-to-right sum. */
  size_t from = n, used = 0;
  while (from > 0 && used < window)
    if (!isnan(v[--from])) used++;
  double sum = 0;
  for (size_t i = from; i < n; i++)
    if (!isnan(v[i])) sum += v[i];
  *n_used = used;
  return used ? sum / (double)used : NAN;
}

void rs__alert_check(const rs__alert *a, const double *v, size_t n, rs__alert_result *out)
{
  *out = (rs__alert_result){.latest = n ? v[n - 1] : NAN, .mean = NAN, .limit = NAN, .change = NAN};
  if (n == 0) return;
  out->mean = rs__alert_window_mean(v, n - 1, a->window, &out->n_prev);
  if (isnan(out->latest)) {
    out->fired = 1; /* the latest evaluation had no number */
    return;
  }
  if (out->n_prev == 0) return; /* no history yet */
  const double m = out->mean, step = a->relative ? a->amount * fabs(m) : a->amount;
  const double tol = 1e-9 * (fabs(m) > 1 ? fabs(m) : 1);
  out->change = out->latest - m;
  out->limit = a->rise ? m + step : m - step;
  out->fired = a->rise ? out->latest > out->limit + tol : out->latest < out->limit - tol;
}
