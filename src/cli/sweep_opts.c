/* sweep_opts.c: the options `eval` and `compare` share (see sweep_opts.h). */
#define _GNU_SOURCE
#include "sweep_opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "engine/sched.h"
#include "sweep_io.h"

int sweep_opts_init(sweep_opts *o, int argc, size_t n_default_measures, int all_queries)
{
  *o = (sweep_opts){.all_queries = all_queries};
  /* Every word of argv could be a -m or a --gate: room for all of them. */
  o->measures = calloc((size_t)argc + n_default_measures + 1, sizeof *o->measures);
  o->gate_text = calloc((size_t)argc + 1, sizeof *o->gate_text);
  o->depths = calloc(SWEEP_MAX_DEPTHS, sizeof *o->depths);
  if (!o->measures || !o->gate_text || !o->depths) {
    sweep_opts_free(o);
    return -1;
  }
  return 0;
}

void sweep_opts_free(sweep_opts *o)
{
  free(o->measures);
  free(o->gate_text);
  free(o->depths);
  o->measures = NULL;
  o->gate_text = NULL;
  o->depths = NULL;
}

static sweep_opt_result bad(const char *cmd, const char *opt, const char *expected, const char *found)
{
  fprintf(stderr, "ragsweep %s: %s: expected %s, found '%s' (see 'ragsweep %s --help')\n", cmd, opt, expected, found,
          cmd);
  return SWEEP_OPT_BAD;
}

/* --depths K1,K2,...: distinct whole numbers, 1 to SWEEP_MAX_DEPTH, in the
 * order given (the virtual runs follow it); a second --depths adds to the
 * first. */
static sweep_opt_result parse_depths(sweep_opts *o, const char *arg, const char *cmd)
{
  const char *p = arg;
  for (;;) {
    char *end;
    errno = 0;
    const long k = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
    if (k < 1 || k > SWEEP_MAX_DEPTH || errno || (*end != ',' && *end != '\0'))
      return bad(cmd, "--depths", "whole numbers from 1 to 100000000 separated by commas (--depths 10,20,50)", arg);
    for (size_t i = 0; i < o->n_depths; i++)
      if (o->depths[i] == (size_t)k) {
        fprintf(stderr, "ragsweep %s: --depths: %ld is given twice (see 'ragsweep %s --help')\n", cmd, k, cmd);
        return SWEEP_OPT_BAD;
      }
    if (o->n_depths == SWEEP_MAX_DEPTHS) {
      fprintf(stderr, "ragsweep %s: --depths: at most %d depths, found more in '%s'\n", cmd, SWEEP_MAX_DEPTHS, arg);
      return SWEEP_OPT_BAD;
    }
    o->depths[o->n_depths++] = (size_t)k;
    if (*end == '\0') return SWEEP_OPT_HANDLED;
    p = end + 1;
  }
}

sweep_opt_result sweep_opts_parse(sweep_opts *o, int c, const char *arg, const char *cmd)
{
  switch (c) {
  case 'o': o->out_dir = arg; break;
  case 'm': o->measures[o->n_measures++] = arg; break;
  case SWEEP_OPT_TIMING: o->timing = 1; break;
  case SWEEP_OPT_GATE: o->gate_text[o->n_gates++] = arg; break;
  case SWEEP_OPT_QRELS: o->qrels_path = arg; break;
  case SWEEP_OPT_SPLIT: o->split = arg; break;
  case SWEEP_OPT_QUERIES:
    if (strcmp(arg, "judged") == 0) o->all_queries = 0;
    else if (strcmp(arg, "all") == 0) o->all_queries = 1;
    else return bad(cmd, "--queries", "judged or all", arg);
    break;
  case SWEEP_OPT_TIES:
    if (strcmp(arg, "trec") == 0) o->ties_stored = 0;
    else if (strcmp(arg, "stored") == 0) o->ties_stored = 1;
    else return bad(cmd, "--ties", "trec or stored", arg);
    break;
  case SWEEP_OPT_THREADS:
    /* The cap of trec_eval mode's --threads: more is a typo, not a machine. */
    if (!parse_count(arg, 1, &o->threads) || o->threads > SWEEP_MAX_THREADS) {
      o->threads = 0;
      return bad(cmd, "--threads", "an integer from 1 to 4096", arg);
    }
    rs__threads_set_default((int)o->threads);
    break;
  case SWEEP_OPT_DEPTHS: return parse_depths(o, arg, cmd);
  case SWEEP_OPT_WORST:
    if (!parse_count(arg, 1, &o->n_worst)) return bad(cmd, "--worst", "an integer of at least 1", arg);
    break;
  default: return SWEEP_OPT_NOT_MINE;
  }
  return SWEEP_OPT_HANDLED;
}

void sweep_opts_default_measures(sweep_opts *o, const char *const *defaults, size_t n)
{
  if (o->n_measures) return;
  for (size_t i = 0; i < n; i++) o->measures[o->n_measures++] = defaults[i];
}

rs_code sweep_opts_gates(const sweep_opts *o, int plain_names, gate **out, rs_error *err)
{
  gate *g = calloc(o->n_gates + 1, sizeof *g);
  if (!g) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < o->n_gates; i++) {
    rs_code rc = plain_names ? gate_parse_plain(o->gate_text[i], &g[i], err) : gate_parse(o->gate_text[i], &g[i], err);
    if (rc) {
      for (size_t j = 0; j < i; j++) gate_free(&g[j]);
      free(g);
      return rc;
    }
  }
  *out = g;
  return RS_OK;
}
