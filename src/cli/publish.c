/* publish.c: the morning-after outputs of eval, compare and rag (see
 * publish.h).  Parsing and reporting only; the work is in src/report/. */
#define _GNU_SOURCE
#include "publish.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "internal.h"
#include "report/history.h"
#include "report/html.h"
#include "report/otlp.h"
#include "report/prom.h"
#include "report/results.h"
#include "util/strbuf.h"

static publish_result bad(const char *cmd, const char *opt, const char *expected, const char *found)
{
  fprintf(stderr, "ragsweep %s: %s: expected %s, found '%s' (see 'ragsweep %s --help')\n", cmd, opt, expected,
          found, cmd);
  return PUBLISH_BAD;
}

static int is_http_url(const char *s)
{
  return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0;
}

publish_result publish_opts_parse(publish_opts *o, int c, const char *arg, const char *cmd)
{
  switch (c) {
  case PUBLISH_OPT_REPORT: o->report = 1; return PUBLISH_HANDLED;
  case PUBLISH_OPT_METRICS_OUT:
    if (!*arg) return bad(cmd, "--metrics-out", "a file name such as ragsweep.prom", arg);
    o->metrics_out = arg;
    return PUBLISH_HANDLED;
  case PUBLISH_OPT_PUSHGATEWAY:
    if (!is_http_url(arg)) return bad(cmd, "--pushgateway", "an http:// or https:// URL such as http://127.0.0.1:9091", arg);
    o->pushgateway = arg;
    return PUBLISH_HANDLED;
  case PUBLISH_OPT_PUSH_JOB:
    if (!*arg || strchr(arg, '/')) return bad(cmd, "--push-job", "a job name without '/'", arg);
    o->push_job = arg;
    return PUBLISH_HANDLED;
  case PUBLISH_OPT_OTLP:
    if (!is_http_url(arg))
      return bad(cmd, "--otlp", "an http:// or https:// URL such as http://127.0.0.1:4318/v1/metrics", arg);
    o->otlp = arg;
    return PUBLISH_HANDLED;
  case PUBLISH_OPT_HISTORY:
    if (!*arg) return bad(cmd, "--history", "a database file name such as history.sqlite", arg);
    o->history = arg;
    return PUBLISH_HANDLED;
  case PUBLISH_OPT_LABEL:
    o->label = arg;
    return PUBLISH_HANDLED;
  default: return PUBLISH_NOT_MINE;
  }
}

int publish_opts_check(const publish_opts *o, const char *cmd, int report_allowed)
{
  if (o->label && !o->history) {
    fprintf(stderr, "ragsweep %s: --label names a history entry: give --history FILE too (see 'ragsweep %s --help')\n",
            cmd, cmd);
    return -1;
  }
  if (o->push_job && !o->pushgateway) {
    fprintf(stderr, "ragsweep %s: --push-job is the Pushgateway's job: give --pushgateway URL too\n", cmd);
    return -1;
  }
  if (o->report && !report_allowed) {
    fprintf(stderr, "ragsweep %s: --report: not on this command; run 'ragsweep report OUTDIR -o report.html'\n", cmd);
    return -1;
  }
  return 0;
}

int publish_any(const publish_opts *o)
{
  return o->report || o->metrics_out || o->pushgateway || o->otlp || o->history;
}

int publish_outputs(const publish_opts *o, const char *cmd, const char *out_dir, FILE *out)
{
  if (!publish_any(o)) return RS_EXIT_OK;
  rs_error err = {0};
  rs__results res = {0};
  rs_code rc = rs__results_load(out_dir, &res, &err);
  int status = RS_EXIT_OK;
  if (rc) goto fail;
  if (o->metrics_out) {
    if ((rc = rs__prom_write_file(&res, o->metrics_out, &err))) goto fail;
    fprintf(out, "wrote %s\n", o->metrics_out);
  }
  if (o->pushgateway) {
    if ((rc = rs__prom_push(&res, o->pushgateway, o->push_job ? o->push_job : "ragsweep", &err))) goto fail;
    fprintf(out, "pushed the metrics to %s (job %s)\n", o->pushgateway, o->push_job ? o->push_job : "ragsweep");
  }
  if (o->otlp) {
    if ((rc = rs__otlp_push(&res, o->otlp, &err))) goto fail;
    fprintf(out, "pushed the metrics to %s (OTLP)\n", o->otlp);
  }
  if (o->history) {
    if ((rc = rs__history_append(o->history, &res, cmd, o->label, (double)time(NULL), &err))) goto fail;
    fprintf(out, "appended to the history %s%s%s\n", o->history, o->label ? ", label " : "", o->label ? o->label : "");
  }
  if (o->report) {
    rs__sb b = {0};
    rs__sb_str(&b, out_dir);
    rs__sb_str(&b, "/report.html");
    char *path = rs__sb_take(&b);
    if (!path) {
      rc = rs__fail(&err, RS_NOMEM, "out of memory");
      goto fail;
    }
    const char *dirs[] = {out_dir};
    rc = rs__report_write(dirs, 1, NULL, path, &err); /* defaults: lead and baseline from the folder */
    if (!rc) fprintf(out, "wrote %s\n", path);
    free(path);
    if (rc) goto fail;
  }
  rs__results_free(&res);
  return status;
fail:
  fprintf(stderr, "ragsweep %s: %s (the CSV outputs in %s are written)\n", cmd, err.msg, out_dir);
  rs__results_free(&res);
  return RS_EXIT_INPUT;
}
