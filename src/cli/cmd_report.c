/* cmd_report.c: "ragsweep report": one self-contained HTML page of the
 * output folders of eval, compare, rag and judge.  Parsing only; the work
 * is in src/report/html.c. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report/html.h"

static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep report DIR [DIR ...] -o REPORT.html [options]\n"
          "\n"
          "Writes one HTML file showing what eval, compare, rag and judge wrote into their\n"
          "output folders: a leaderboard with intervals and significance marks, measure-vs-k\n"
          "curves, precision-recall curves, latency percentiles and CDFs, quality against\n"
          "latency, attribute heatmaps, compare's differences (forest plots, adjusted\n"
          "p-values), gates, the worst queries, rag's generation metrics and judge's\n"
          "agreement.  The file needs nothing else: no network, no other file; it opens\n"
          "offline and prints.  Charts are SVG; a small script sorts the tables and filters\n"
          "configurations by attribute.\n"
          "\n"
          "A folder is recognised by its files: aggregate.csv (eval, compare, rag; compare\n"
          "has compare.csv beside it), or qrels.txt / judgments.jsonl / agreement.csv\n"
          "(judge).  'eval --report' also writes curves.csv and latency_cdf.csv, which give\n"
          "dense curves; without them the report draws what aggregate.csv and latency.csv\n"
          "have.\n"
          "\n"
          "options:\n"
          "  -o, --out FILE       the HTML file (written under a temporary name, then renamed)\n"
          "      --title TEXT     the page's title (default: ragsweep report)\n"
          "      --lead MEASURE   the measure that ranks the leaderboard and fills the heatmaps\n"
          "                       and the quality-latency chart (default: each folder's first\n"
          "                       measure in aggregate.csv)\n"
          "      --baseline RUN   with compare folders: the baseline whose comparisons to show\n"
          "                       (default: the first baseline of compare.csv)\n"
          "      --history FILE   also chart the history database of 'eval --history' over time:\n"
          "                       one chart per measure, one line per configuration\n"
          "  -m, --measure NAME   with --history: a measure to chart (repeatable; default: all but\n"
          "                       the num_q counts)\n"
          "  -h, --help           this help\n"
          "\n"
          "exit status: 0 ok; 1 usage; 2 a folder missing, unrecognised or malformed.\n");
}

enum { OPT_TITLE = 256, OPT_LEAD, OPT_BASELINE, OPT_HISTORY };

int rs_cli_report(int argc, char **argv)
{
  static const struct option longs[] = {{"out", required_argument, 0, 'o'},
                                        {"title", required_argument, 0, OPT_TITLE},
                                        {"lead", required_argument, 0, OPT_LEAD},
                                        {"baseline", required_argument, 0, OPT_BASELINE},
                                        {"history", required_argument, 0, OPT_HISTORY},
                                        {"measure", required_argument, 0, 'm'},
                                        {"help", no_argument, 0, 'h'},
                                        {0, 0, 0, 0}};
  rs__report_opts o = {0};
  const char *out = NULL;
  const char **measures = calloc((size_t)argc + 1, sizeof *measures);
  size_t n_measures = 0;
  if (!measures) {
    fprintf(stderr, "ragsweep report: out of memory\n");
    return RS_EXIT_INPUT;
  }
  int c;
  optind = 1;
  opterr = 0;
  int status = RS_EXIT_OK;
  while ((c = getopt_long(argc, argv, "o:m:h", longs, NULL)) != -1) {
    switch (c) {
    case 'o': out = optarg; break;
    case 'm': measures[n_measures++] = optarg; break;
    case OPT_HISTORY: o.history_path = optarg; break;
    case OPT_TITLE: o.title = optarg; break;
    case OPT_LEAD: o.lead = optarg; break;
    case OPT_BASELINE: o.baseline = optarg; break;
    case 'h': help(stdout); goto done;
    case ':':
      fprintf(stderr, "ragsweep report: option '%s' needs a value (see 'ragsweep report --help')\n", argv[optind - 1]);
      status = RS_EXIT_USAGE;
      goto done;
    default:
      fprintf(stderr, "ragsweep report: unknown option '%s' (see 'ragsweep report --help')\n", argv[optind - 1]);
      status = RS_EXIT_USAGE;
      goto done;
    }
  }
  /* A history alone is a report too: the trend without a folder. */
  if ((optind >= argc && !o.history_path) || !out || !*out) {
    fprintf(stderr, "ragsweep report: expected DIR [DIR ...] -o REPORT.html, or --history FILE -o REPORT.html (see "
                    "'ragsweep report --help')\n");
    status = RS_EXIT_USAGE;
    goto done;
  }
  if (n_measures && !o.history_path) {
    fprintf(stderr, "ragsweep report: -m chooses the history's measures: give --history FILE too\n");
    status = RS_EXIT_USAGE;
    goto done;
  }
  o.history_measures = measures;
  o.n_history_measures = n_measures;
  rs_error err = {0};
  const rs_code rc = rs__report_write((const char *const *)argv + optind, (size_t)(argc - optind), &o, out, &err);
  if (rc) {
    fprintf(stderr, "ragsweep report: %s\n", err.msg);
    status = rc == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
    goto done;
  }
  printf("wrote %s\n", out);
done:
  free(measures);
  return status;
}
