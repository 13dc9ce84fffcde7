/* cmd_history.c: "ragsweep history FILE": the trend of every run and
 * measure of a history database, its tidy series as CSV, and degradation
 * alerts (exit 3 when one fires, as gates do).  The reading and the alert
 * rule are in src/report/history.c and alert.c; this file parses, formats
 * and prints. */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "formats/csvio.h"
#include "gate.h"
#include "report/alert.h"
#include "report/history.h"
#include "sweep_io.h"
#include "util/strbuf.h"

/* The sparkline shows at most this many of a series' latest values. */
#define SPARK_MAX 20
/* Labels longer than this are shortened in the trend table. */
#define LABEL_MAX 20

static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep history FILE [options]\n"
          "\n"
          "The trend of every configuration (run) and measure in a history database, which\n"
          "'ragsweep eval', 'compare' and 'rag' append to with --history FILE [--label TEXT].\n"
          "Per run and measure: the number of evaluations, the first and the latest value with\n"
          "their labels, the mean of the values before the latest (--window of them), the\n"
          "latest's change from that mean, and a sparkline of the last %d values.\n"
          "\n"
          "options:\n"
          "      --run NAME         only this run (repeatable)\n"
          "  -m, --measure NAME     only this measure (repeatable): as 'eval -m' spells it\n"
          "                         (nDCG@10, ndcg_cut.10, R@{5,10}), or a name as the file has\n"
          "                         it (faithfulness, latency_p95_ms); default: all but num_q*\n"
          "      --last N           only the last N evaluations of each series (trend and CSV)\n"
          "      --window N         the trend's mean: of the N values before the latest (default %d)\n"
          "      --format text|csv  csv: the tidy series on stdout instead of the trend\n"
          "      --csv FILE         also write the tidy series to FILE:\n"
          "                         evaluation,time,label,run,measure,value\n"
          "      --alert SPEC       MEASURE[:window=N]:drop=D, or :rise=D where lower is better\n"
          "                         (latency); D a number or a percentage of the mean (5%%);\n"
          "                         window defaults to %d.  Fires, on each run with the measure,\n"
          "                         when latest < mean - drop (latest > mean + rise), the mean\n"
          "                         being of the up to N values before the latest; repeatable.\n"
          "                         The trend then shows the alerted measures (unless -m is given).\n"
          "  -h, --help             this help\n"
          "\n"
          "examples:\n"
          "  ragsweep eval sweep.h5 -o out --history hist.sqlite --label \"$(git rev-parse --short HEAD)\"\n"
          "  ragsweep history hist.sqlite -m nDCG@10 --last 30\n"
          "  ragsweep history hist.sqlite --alert 'nDCG@10:window=20:drop=0.02' \\\n"
          "                               --alert 'latency_p95_ms:window=10:rise=15%%'\n"
          "\n"
          "exit status: 0 ok, no alert fired; 1 usage (unknown option, run or measure; a bad\n"
          "alert); 2 the file is missing, unreadable or not a history; 3 an alert fired.\n",
          SPARK_MAX, RS_ALERT_DEFAULT_WINDOW, RS_ALERT_DEFAULT_WINDOW);
}

enum { OPT_RUN = 256, OPT_LAST, OPT_WINDOW, OPT_FORMAT, OPT_CSV, OPT_ALERT };

typedef struct history_opts {
  const char *path;
  const char **runs, **measures, **alert_text;
  size_t n_runs, n_measures, n_alerts;
  size_t last, window;
  int csv_stdout;
  const char *csv_path;
} history_opts;

/* --- formatting --------------------------------------------------------------------- */

static void fmt_value(double v, char out[32])
{
  if (isnan(v)) snprintf(out, 32, "NaN");
  else snprintf(out, 32, "%.4f", v);
}

/* A signed change; one that rounds to zero is +0.0000 (the mean of equal
 * values can differ from them in the last bit). */
static void fmt_change(double d, char out[32])
{
  snprintf(out, 32, "%+.4f", d);
  if (strcmp(out, "-0.0000") == 0) snprintf(out, 32, "+0.0000");
}

/* The evaluation's label, else its time; shortened to LABEL_MAX bytes at a
 * UTF-8 character boundary. */
static void fmt_label(const rs__history_eval *e, char out[LABEL_MAX + 8])
{
  const char *s = e->label ? e->label : e->time;
  size_t n = strlen(s);
  if (n <= LABEL_MAX) {
    memcpy(out, s, n + 1);
    return;
  }
  n = LABEL_MAX - 1;
  while (n && ((unsigned char)s[n] & 0xc0) == 0x80) n--;
  memcpy(out, s, n);
  memcpy(out + n, "\xE2\x80\xA6", 4); /* … */
}

/* Width in columns of UTF-8 text (one per character). */
static int text_width(const char *s)
{
  int w = 0;
  for (; *s; s++) w += ((unsigned char)*s & 0xc0) != 0x80;
  return w;
}

static void print_padded(const char *s, int width)
{
  fputs(s, stdout);
  for (int i = text_width(s); i < width; i++) putchar(' ');
}

/* ▁▂▃▄▅▆▇█ over v[0..n): the lowest value is ▁, the highest █, linearly
 * between (rounded to the nearest of the eight); a flat series is all ▄;
 * a NaN is a space. */
static void sparkline(const double *v, size_t n, rs__sb *b)
{
  static const char *const bar[8] = {"\xE2\x96\x81", "\xE2\x96\x82", "\xE2\x96\x83", "\xE2\x96\x84",
                                     "\xE2\x96\x85", "\xE2\x96\x86", "\xE2\x96\x87", "\xE2\x96\x88"};
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++)
    if (!isnan(v[i])) lo = v[i] < lo ? v[i] : lo, hi = v[i] > hi ? v[i] : hi;
  for (size_t i = 0; i < n; i++) {
    if (isnan(v[i])) {
      rs__sb_str(b, " ");
      continue;
    }
    const int level = hi > lo ? (int)floor((v[i] - lo) / (hi - lo) * 7.0 + 0.5) : 3;
    rs__sb_str(b, bar[level < 0 ? 0 : level > 7 ? 7 : level]);
  }
}

/* --- the trend table ---------------------------------------------------------------- */

typedef struct trend_row {
  const char *run, *measure;
  size_t n;
  char first[64], latest[64], mean[48], change[32];
  char *spark;
} trend_row;

/* The values of points[a..b) (one series) into v. */
static void series_values(const rs__history_series *s, size_t a, size_t b, double *v)
{
  for (size_t i = a; i < b; i++) v[i - a] = s->points[i].value;
}

static size_t series_end(const rs__history_series *s, size_t a)
{
  size_t b = a + 1;
  while (b < s->n_points && s->points[b].run == s->points[a].run && s->points[b].measure == s->points[a].measure) b++;
  return b;
}

static int print_trend(const rs__history_series *s, const history_opts *o)
{
  size_t n_rows = 0;
  for (size_t a = 0; a < s->n_points; a = series_end(s, a)) n_rows++;
  trend_row *rows = calloc(n_rows ? n_rows : 1, sizeof *rows);
  double *v = calloc(s->n_points ? s->n_points : 1, sizeof *v);
  if (!rows || !v) {
    free(rows), free(v);
    fprintf(stderr, "ragsweep history: out of memory\n");
    return RS_EXIT_INPUT;
  }
  int w_run = 3, w_measure = 7, w_first = 5, w_latest = 6, w_mean = 4, w_change = 6;
  size_t r = 0, max_spark = 0;
  for (size_t a = 0, b; a < s->n_points; a = b, r++) {
    b = series_end(s, a);
    const size_t n = b - a;
    series_values(s, a, b, v);
    trend_row *t = &rows[r];
    t->run = s->runs.str[s->points[a].run];
    t->measure = s->measures.str[s->points[a].measure];
    t->n = n;
    char val[32], lab[LABEL_MAX + 8];
    fmt_value(v[0], val), fmt_label(&s->evals[s->points[a].eval], lab);
    snprintf(t->first, sizeof t->first, "%s %s", val, lab);
    fmt_value(v[n - 1], val), fmt_label(&s->evals[s->points[b - 1].eval], lab);
    snprintf(t->latest, sizeof t->latest, "%s %s", val, lab);
    size_t used = 0;
    const double m = rs__alert_window_mean(v, n - 1, o->window, &used);
    if (used) {
      fmt_value(m, val);
      snprintf(t->mean, sizeof t->mean, "%s (%zu)", val, used);
      fmt_change(v[n - 1] - m, t->change);
    } else {
      snprintf(t->mean, sizeof t->mean, "-");
      snprintf(t->change, sizeof t->change, "-");
    }
    const size_t k = n < SPARK_MAX ? n : SPARK_MAX;
    rs__sb sb = {0};
    sparkline(v + n - k, k, &sb);
    t->spark = rs__sb_take(&sb);
    if (k > max_spark) max_spark = k;
#define WIDEN(w, str) if (text_width(str) > (w)) (w) = text_width(str)
    WIDEN(w_run, t->run);
    WIDEN(w_measure, t->measure);
    WIDEN(w_first, t->first);
    WIDEN(w_latest, t->latest);
    WIDEN(w_mean, t->mean);
    WIDEN(w_change, t->change);
#undef WIDEN
  }
  if (w_run > 40) w_run = 40;
  char mean_head[32], last_head[32];
  snprintf(mean_head, sizeof mean_head, "mean");
  snprintf(last_head, sizeof last_head, "last %zu", max_spark);
  print_padded("run", w_run), fputs("  ", stdout), print_padded("measure", w_measure);
  printf("  %5s  ", "evals");
  print_padded("first", w_first), fputs("  ", stdout), print_padded("latest", w_latest);
  printf("  %*s  %*s  %s\n", w_mean, mean_head, w_change, "change", last_head);
  for (r = 0; r < n_rows; r++) {
    const trend_row *t = &rows[r];
    print_padded(t->run, w_run), fputs("  ", stdout), print_padded(t->measure, w_measure);
    printf("  %5zu  ", t->n);
    print_padded(t->first, w_first), fputs("  ", stdout), print_padded(t->latest, w_latest);
    printf("  %*s  %*s  %s\n", w_mean, t->mean, w_change, t->change, t->spark ? t->spark : "");
    free(t->spark);
  }
  printf("mean: of the up to %zu values before the latest (the number in parentheses); change: latest - mean\n",
         o->window);
  free(rows);
  free(v);
  return RS_EXIT_OK;
}

/* --- CSV ---------------------------------------------------------------------------- */

static rs_code write_csv(rs__csv *w, const rs__history_series *s, rs_error *err)
{
  static const char *const hdr[] = {"evaluation", "time", "label", "run", "measure", "value"};
  rs_code rc = RS_OK;
  for (size_t i = 0; i < sizeof hdr / sizeof *hdr; i++) rs__csv_str(w, hdr[i]);
  if ((rc = rs__csv_end_row(w, err))) return rc;
  for (size_t i = 0; i < s->n_points && !rc; i++) {
    const rs__history_point *p = &s->points[i];
    const rs__history_eval *e = &s->evals[p->eval];
    rs__csv_uint(w, (unsigned long long)e->id);
    rs__csv_str(w, e->time);
    rs__csv_str(w, e->label ? e->label : "");
    rs__csv_str(w, s->runs.str[p->run]);
    rs__csv_str(w, s->measures.str[p->measure]);
    if (isnan(p->value)) rs__csv_str(w, "");
    else rs__csv_num(w, p->value);
    rc = rs__csv_end_row(w, err);
  }
  return rc;
}

static rs_code csv_to_file(const char *path, const rs__history_series *s, rs_error *err)
{
  /* FILE is written as DIR/.NAME.tmp.PID and renamed when complete. */
  const char *slash = strrchr(path, '/');
  char dir[4096];
  if (!slash) snprintf(dir, sizeof dir, ".");
  else if (slash == path) snprintf(dir, sizeof dir, "/");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  rs__csv *w = NULL;
  rs_code rc = rs__csv_create(dir, slash ? slash + 1 : path, &w, err);
  if (!rc) rc = write_csv(w, s, err);
  if (!rc) return rs__csv_commit(w, err);
  rs__csv_abort(w);
  return rc;
}

/* --- alerts ------------------------------------------------------------------------- */

typedef struct alert_load {
  rs__alert a;
  rs__history_series s;
} alert_load;

/* Checks every alert on every series it selects; prints a ✓/✗ line each
 * and the tally on f.  *fired counts the ✗. */
static void check_alerts(const alert_load *al, size_t n_alerts, FILE *f, size_t *fired)
{
  int w_check = 1, w_run = 1;
  size_t checked = 0;
  double *v = NULL;
  size_t cap = 0;
  for (size_t i = 0; i < n_alerts; i++) {
    const rs__history_series *s = &al[i].s;
    for (size_t a = 0; a < s->n_points; a = series_end(s, a)) {
      char check[256];
      rs__alert_text(&al[i].a, s->measures.str[s->points[a].measure], check, sizeof check);
      if (text_width(check) > w_check) w_check = text_width(check);
      if (text_width(s->runs.str[s->points[a].run]) > w_run) w_run = text_width(s->runs.str[s->points[a].run]);
    }
    if (s->n_points > cap) cap = s->n_points;
  }
  if (w_run > 40) w_run = 40;
  if (w_check > 60) w_check = 60;
  v = calloc(cap ? cap : 1, sizeof *v);
  *fired = 0;
  for (size_t i = 0; v && i < n_alerts; i++) {
    const rs__alert *a = &al[i].a;
    const rs__history_series *s = &al[i].s;
    for (size_t lo = 0, hi; lo < s->n_points; lo = hi) {
      hi = series_end(s, lo);
      series_values(s, lo, hi, v);
      rs__alert_result res;
      rs__alert_check(a, v, hi - lo, &res);
      const rs__history_eval *e = &s->evals[s->points[hi - 1].eval];
      char check[256], detail[512], m[32], lim[32], chg[32];
      rs__alert_text(a, s->measures.str[s->points[lo].measure], check, sizeof check);
      fmt_value(res.mean, m), fmt_value(res.limit, lim), fmt_change(res.change, chg);
      const char *lab = e->label ? e->label : "(no label)";
      if (isnan(res.latest))
        snprintf(detail, sizeof detail, "no value in the latest evaluation (%s, %s)", lab, e->time);
      else if (res.n_prev == 0)
        snprintf(detail, sizeof detail, "no history yet: the first value (%s, %s)", lab, e->time);
      else if (res.fired)
        snprintf(detail, sizeof detail, "%s %.4f %s the mean %s of the previous %zu (limit %s); latest: %s, %s",
                 a->rise ? "rose" : "fell", fabs(res.change), a->rise ? "above" : "below", m, res.n_prev, lim, lab,
                 e->time);
      else
        snprintf(detail, sizeof detail, "mean %s of the previous %zu, change %s (limit %s)", m, res.n_prev, chg, lim);
      gate_print_line(f, !res.fired, w_check, check, w_run, s->runs.str[s->points[lo].run], res.latest, detail);
      checked++;
      *fired += (size_t)res.fired;
    }
  }
  free(v);
  fprintf(f, "alerts: %zu of %zu checks fired\n", *fired, checked);
}

/* --- the command -------------------------------------------------------------------- */

static int parse_args(int argc, char **argv, history_opts *o)
{
  static const struct option longs[] = {
      {"run", required_argument, 0, OPT_RUN},       {"measure", required_argument, 0, 'm'},
      {"last", required_argument, 0, OPT_LAST},     {"window", required_argument, 0, OPT_WINDOW},
      {"format", required_argument, 0, OPT_FORMAT}, {"csv", required_argument, 0, OPT_CSV},
      {"alert", required_argument, 0, OPT_ALERT},   {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  optind = 1;
  int c;
  long n;
  while ((c = getopt_long(argc, argv, "m:h", longs, NULL)) != -1) {
    switch (c) {
    case OPT_RUN: o->runs[o->n_runs++] = optarg; break;
    case 'm': o->measures[o->n_measures++] = optarg; break;
    case OPT_ALERT: o->alert_text[o->n_alerts++] = optarg; break;
    case OPT_CSV: o->csv_path = optarg; break;
    case OPT_LAST:
    case OPT_WINDOW:
      if (!parse_count(optarg, 1, &n)) {
        fprintf(stderr, "ragsweep history: %s: expected an integer >= 1, found '%s'\n",
                c == OPT_LAST ? "--last" : "--window", optarg);
        return RS_EXIT_USAGE;
      }
      if (c == OPT_LAST) o->last = (size_t)n;
      else o->window = (size_t)n;
      break;
    case OPT_FORMAT:
      if (strcmp(optarg, "csv") != 0 && strcmp(optarg, "text") != 0) {
        fprintf(stderr, "ragsweep history: --format: expected text or csv, found '%s'\n", optarg);
        return RS_EXIT_USAGE;
      }
      o->csv_stdout = strcmp(optarg, "csv") == 0;
      break;
    case 'h': help(stdout); return -1;
    default: fprintf(stderr, "(see 'ragsweep history --help')\n"); return RS_EXIT_USAGE;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "ragsweep history: expected one history FILE%s (see 'ragsweep history --help')\n",
            optind < argc ? ", found several" : "");
    return RS_EXIT_USAGE;
  }
  o->path = argv[optind];
  return RS_EXIT_OK;
}

int rs_cli_history(int argc, char **argv)
{
  const size_t cap = (size_t)argc + 1;
  history_opts o = {.window = RS_ALERT_DEFAULT_WINDOW};
  alert_load *al = NULL;
  rs__history_series s = {0};
  rs_error err = {0};
  rs_code rc = RS_OK;
  int status = RS_EXIT_OK;
  o.runs = calloc(cap, sizeof *o.runs);
  o.measures = calloc(cap, sizeof *o.measures);
  o.alert_text = calloc(cap, sizeof *o.alert_text);
  if (!o.runs || !o.measures || !o.alert_text || !(al = calloc(cap, sizeof *al))) {
    fprintf(stderr, "ragsweep history: out of memory\n");
    status = RS_EXIT_INPUT;
    goto done;
  }
  if ((status = parse_args(argc, argv, &o)) != RS_EXIT_OK) {
    if (status < 0) status = RS_EXIT_OK; /* --help */
    goto done;
  }
  for (size_t i = 0; i < o.n_alerts; i++)
    if ((rc = rs__alert_parse(o.alert_text[i], &al[i].a, &err))) goto fail;
  /* With alerts and no -m, the trend shows the alerted measures. */
  const char **shown = o.measures;
  size_t n_shown = o.n_measures;
  if (!n_shown && o.n_alerts) {
    for (size_t i = 0; i < o.n_alerts; i++) o.measures[i] = al[i].a.measure;
    n_shown = o.n_alerts;
  }
  /* The alerts' series first, so an alert's unknown measure is reported
   * as the alert's. */
  for (size_t i = 0; i < o.n_alerts; i++) {
    const char *m[1] = {al[i].a.measure};
    const rs__history_filter af = {.runs = o.runs, .n_runs = o.n_runs, .measures = m, .n_measures = 1};
    if ((rc = rs__history_series_load(o.path, &af, &al[i].s, &err))) {
      char msg[sizeof err.msg];
      snprintf(msg, sizeof msg, "%s", err.msg);
      rs__fail(&err, rc, "--alert %s: %s", o.alert_text[i], msg);
      goto fail;
    }
  }
  const rs__history_filter f = {.runs = o.runs, .n_runs = o.n_runs, .measures = shown, .n_measures = n_shown,
                                .last = o.last};
  if ((rc = rs__history_series_load(o.path, &f, &s, &err))) goto fail;
  if (o.csv_path && (rc = csv_to_file(o.csv_path, &s, &err))) goto fail;
  if (o.csv_stdout) {
    rs__csv *w = NULL;
    if ((rc = rs__csv_open_stream(stdout, "stdout", &w, &err))) goto fail;
    if ((rc = write_csv(w, &s, &err))) {
      rs__csv_abort(w);
      goto fail;
    }
    if ((rc = rs__csv_commit(w, &err))) goto fail;
  } else {
    if (s.n_evals == 0) printf("%s: no evaluations yet\n", o.path);
    else
      printf("%s: %zu evaluation%s, %s (%s) to %s (%s)\n\n", o.path, s.n_evals, s.n_evals == 1 ? "" : "s",
             s.evals[0].time, s.evals[0].label ? s.evals[0].label : "no label", s.evals[s.n_evals - 1].time,
             s.evals[s.n_evals - 1].label ? s.evals[s.n_evals - 1].label : "no label");
    if (s.n_points && (status = print_trend(&s, &o)) != RS_EXIT_OK) goto done;
  }
  if (o.csv_path && !o.csv_stdout) printf("wrote %s\n", o.csv_path);
  if (o.n_alerts) {
    size_t fired = 0;
    /* With the CSV on stdout, the alert lines go to stderr. */
    FILE *f_alert = o.csv_stdout ? stderr : stdout;
    if (!o.csv_stdout) putchar('\n');
    check_alerts(al, o.n_alerts, f_alert, &fired);
    if (fired) status = RS_EXIT_GATE;
  }
  goto done;
fail:
  fprintf(stderr, "ragsweep history: %s\n", err.msg);
  status = rc == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
done:
  for (size_t i = 0; al && i < o.n_alerts; i++) {
    rs__alert_free(&al[i].a);
    rs__history_series_free(&al[i].s);
  }
  free(al);
  rs__history_series_free(&s);
  free(o.runs);
  free(o.measures);
  free(o.alert_text);
  return status;
}
