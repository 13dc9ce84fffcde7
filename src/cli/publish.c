/* publish.c: the morning-after outputs of eval, compare and rag (see
 * publish.h).  Parsing and reporting only; the work is in src/report/. */
#define _GNU_SOURCE
#include "publish.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "internal.h"
#include "llm/http.h"
#include "report/history.h"
#include "report/html.h"
#include "report/otlp.h"
#include "report/prom.h"
#include "report/results.h"
#include "report/summary_json.h"
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
  case PUBLISH_OPT_PUSH_LABEL: {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) return bad(cmd, "--push-label", "KEY=VALUE such as instance=ci-3", arg);
    if (o->n_push_label == PUBLISH_MAX_PUSH_LABELS)
      return bad(cmd, "--push-label", "at most 16 grouping labels", arg);
    o->push_label[o->n_push_label++] = arg;
    return PUBLISH_HANDLED;
  }
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
  case PUBLISH_OPT_JSON:
    if (!*arg) return bad(cmd, "--json", "a file name such as results.json", arg);
    o->json = arg;
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
  if (o->n_push_label && !o->pushgateway) {
    fprintf(stderr, "ragsweep %s: --push-label is a grouping label of the Pushgateway: give --pushgateway URL too\n",
            cmd);
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
  return o->report || o->metrics_out || o->pushgateway || o->otlp || o->history || o->json;
}

/* The command line as the JSON document records it: URLs with their
 * passwords masked (--base-url, --pushgateway and --otlp may carry one). */
static char **redacted_arguments(const publish_run *run)
{
  char **a = calloc((size_t)run->argc + 1, sizeof *a);
  for (int i = 0; a && i < run->argc; i++) {
    char shown[2048];
    if (strstr(run->argv[i], "://")) rs__http_url_redacted(run->argv[i], shown, sizeof shown);
    else snprintf(shown, sizeof shown, "%s", run->argv[i]);
    if (!(a[i] = strdup(shown))) {
      for (int j = 0; j < i; j++) free(a[j]);
      free(a);
      return NULL;
    }
  }
  return a;
}

static rs_code write_json(const publish_opts *o, const publish_run *run, const rs__results *res, rs_error *err)
{
  char **args = redacted_arguments(run);
  const char **inputs = calloc(run->n_inputs + 1, sizeof *inputs);
  if (!args || !inputs) {
    free(inputs);
    for (int i = 0; args && i < run->argc; i++) free(args[i]);
    free(args);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  size_t n_inputs = 0;
  for (size_t i = 0; i < run->n_inputs; i++) inputs[n_inputs++] = run->inputs[i];
  if (run->extra_input) inputs[n_inputs++] = run->extra_input;
  const rs__summary_info info = {.command = run->cmd,
                                 .arguments = (const char *const *)args,
                                 .n_arguments = (size_t)run->argc,
                                 .inputs = inputs,
                                 .n_inputs = n_inputs,
                                 .exit_status = run->exit_status,
                                 .unix_time = (int64_t)time(NULL)};
  rs_code rc = rs__summary_json_write(res, &info, o->json, err);
  for (int i = 0; i < run->argc; i++) free(args[i]);
  free(args);
  free(inputs);
  return rc;
}

int publish_outputs(const publish_opts *o, const publish_run *run, FILE *out)
{
  if (!publish_any(o)) return run->exit_status;
  const char *const cmd = run->cmd, *const out_dir = run->out_dir;
  rs_error err = {0};
  rs__results res = {0};
  int failed = 0;
  rs_code rc = rs__results_load(out_dir, &res, &err);
  if (rc) {
    fprintf(stderr, "ragsweep %s: %s (the CSV outputs in %s are written)\n", cmd, err.msg, out_dir);
    rs__results_free(&res);
    return RS_EXIT_INPUT;
  }
/* Each output on its own: a failure is reported and the next one tried. */
#define PUBLISH_STEP(call, ...)                                                                                    \
  do {                                                                                                             \
    if ((rc = (call))) {                                                                                           \
      fprintf(stderr, "ragsweep %s: %s (the CSV outputs in %s are written)\n", cmd, err.msg, out_dir);              \
      failed = 1;                                                                                                  \
    } else {                                                                                                       \
      fprintf(out, __VA_ARGS__);                                                                                   \
    }                                                                                                              \
  } while (0)
  if (o->metrics_out) PUBLISH_STEP(rs__prom_write_file(&res, o->metrics_out, &err), "wrote %s\n", o->metrics_out);
  if (o->pushgateway) {
    rs__prom_label grouping[PUBLISH_MAX_PUSH_LABELS];
    char names[PUBLISH_MAX_PUSH_LABELS][256];
    for (size_t i = 0; i < o->n_push_label; i++) {
      const char *eq = strchr(o->push_label[i], '=');
      snprintf(names[i], sizeof names[i], "%.*s", (int)(eq - o->push_label[i]), o->push_label[i]);
      grouping[i] = (rs__prom_label){names[i], eq + 1};
    }
    const char *job = o->push_job ? o->push_job : "ragsweep";
    char shown[512];
    rs__http_url_redacted(o->pushgateway, shown, sizeof shown);
    PUBLISH_STEP(rs__prom_push(&res, o->pushgateway, job, grouping, o->n_push_label, &err),
                 "pushed the metrics to %s (job %s, command %s)\n", shown, job, cmd);
  }
  if (o->otlp) {
    char shown[512];
    rs__http_url_redacted(o->otlp, shown, sizeof shown);
    PUBLISH_STEP(rs__otlp_push(&res, o->otlp, &err), "pushed the metrics to %s (OTLP)\n", shown);
  }
  if (o->history) {
    int64_t id = 0;
    PUBLISH_STEP(rs__history_append(o->history, &res, cmd, o->label, (int64_t)time(NULL), &id, &err),
                 "appended evaluation %lld to the history %s%s%s\n", (long long)id, o->history,
                 o->label ? ", label " : "", o->label ? o->label : "");
  }
  if (o->json) PUBLISH_STEP(write_json(o, run, &res, &err), "wrote %s\n", o->json);
  if (o->report) {
    rs__sb b = {0};
    rs__sb_str(&b, out_dir);
    rs__sb_str(&b, "/report.html");
    char *path = rs__sb_take(&b);
    const char *dirs[] = {out_dir};
    if (!path) {
      fprintf(stderr, "ragsweep %s: out of memory\n", cmd);
      failed = 1;
    } else {
      PUBLISH_STEP(rs__report_write(dirs, 1, NULL, path, &err), "wrote %s\n", path);
    }
    free(path);
  }
#undef PUBLISH_STEP
  rs__results_free(&res);
  return failed ? RS_EXIT_INPUT : run->exit_status;
}
