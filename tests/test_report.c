/* test_report.c: `ragsweep report` and `eval --report`.  Hand-made folders
 * whose every value is known give the exact cells, points and series
 * counts of the page; the chart scales are checked directly; a generated
 * sweep shows that eval's extra files repeat aggregate.csv's and
 * latency.csv's doubles and change none of its other outputs; bad input
 * names the path, exits 2 and leaves no file. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "report/folder.h"
#include "report/html.h"
#include "report/svg.h"

/* --- hand-made folders ------------------------------------------------------------------ */

/* Two runs; one name and one attribute need escaping in HTML. */
#define RUN_A "\"a<b&\"\"c'\""
#define E_AGG                                        \
  "run,model,chunk,measure,value,queries\n"          \
  RUN_A ",m<1,256,nDCG@10,0.5,ranked\n"              \
  RUN_A ",m<1,256,R@10,0.75,ranked\n"                \
  RUN_A ",m<1,256,num_q,4,ranked\n"                  \
  "base,m2,512,nDCG@10,0.25,ranked\n"                \
  "base,m2,512,R@10,0.5,ranked\n"                    \
  "base,m2,512,num_q,4,ranked\n"
#define E_LAT                                                          \
  "run,model,chunk,n,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,p999_ms,max_ms\n" \
  RUN_A ",m<1,256,4,12.5,10,20,25,30,31,32\n"                          \
  "base,m2,512,4,6.25,5,8,9,10,10.5,11\n"
#define E_CDF                              \
  "run,model,chunk,quantile,latency_ms\n"  \
  RUN_A ",m<1,256,0,1\n"                   \
  RUN_A ",m<1,256,0.5,10\n"                \
  RUN_A ",m<1,256,1,32\n"                  \
  "base,m2,512,0,2\n"                      \
  "base,m2,512,0.5,5\n"                    \
  "base,m2,512,1,11\n"
/* a's precision falls 1, 0.9, ..., 0 over recall 0..1; base's is 0.5. */
#define IP(run, attrs, r, v) run "," attrs ",iprec_at_recall_" r ",iprec_at_recall," r "," v ",ranked\n"
#define E_CURVES                                                                                           \
  "run,model,chunk,measure,base,cutoff,value,queries\n"                                                    \
  RUN_A ",m<1,256,nDCG@1,nDCG,1,0.25,ranked\n" RUN_A ",m<1,256,nDCG@5,nDCG,5,0.4,ranked\n"                  \
  RUN_A ",m<1,256,nDCG@10,nDCG,10,0.5,ranked\n"                                                            \
  IP(RUN_A, "m<1,256", "0.00", "1") IP(RUN_A, "m<1,256", "0.10", "0.9") IP(RUN_A, "m<1,256", "0.20", "0.8") \
  IP(RUN_A, "m<1,256", "0.30", "0.7") IP(RUN_A, "m<1,256", "0.40", "0.6") IP(RUN_A, "m<1,256", "0.50", "0.5") \
  IP(RUN_A, "m<1,256", "0.60", "0.4") IP(RUN_A, "m<1,256", "0.70", "0.3") IP(RUN_A, "m<1,256", "0.80", "0.2") \
  IP(RUN_A, "m<1,256", "0.90", "0.1") IP(RUN_A, "m<1,256", "1.00", "0")                                       \
  "base,m2,512,nDCG@1,nDCG,1,0.125,ranked\nbase,m2,512,nDCG@5,nDCG,5,0.2,ranked\n"                          \
  "base,m2,512,nDCG@10,nDCG,10,0.25,ranked\n"                                                              \
  IP("base", "m2,512", "0.00", "0.5") IP("base", "m2,512", "0.10", "0.5") IP("base", "m2,512", "0.20", "0.5") \
  IP("base", "m2,512", "0.30", "0.5") IP("base", "m2,512", "0.40", "0.5") IP("base", "m2,512", "0.50", "0.5") \
  IP("base", "m2,512", "0.60", "0.5") IP("base", "m2,512", "0.70", "0.5") IP("base", "m2,512", "0.80", "0.5") \
  IP("base", "m2,512", "0.90", "0.5") IP("base", "m2,512", "1.00", "0.5")
/* a's nDCG@10 per query: 0.25, 0.5, 0.5, 0.75 (mean 0.5, sd sqrt(0.125/3));
 * base's: 0.25 four times (sd 0). */
#define E_PQ                                                                                       \
  "run,query,measure,value\n"                                                                      \
  RUN_A ",q1,nDCG@10,0.25\n" RUN_A ",q2,nDCG@10,0.5\n" RUN_A ",q3,nDCG@10,0.5\n"                    \
  RUN_A ",q4,nDCG@10,0.75\n" RUN_A ",q1,R@10,1\n"                                                   \
  "base,q1,nDCG@10,0.25\nbase,q2,nDCG@10,0.25\nbase,q3,nDCG@10,0.25\nbase,q4,nDCG@10,0.25\n"
#define E_GATES                                              \
  "run,check,measure,op,threshold,value,pass\n"              \
  RUN_A ",nDCG@10 >= 0.3,nDCG@10,>=,0.3,0.5,true\n"          \
  "base,nDCG@10 >= 0.3,nDCG@10,>=,0.3,0.25,false\n"
#define E_WORST                                                       \
  "run,list,measure,position,query,value,first_relevant_rank,num_rel\n" \
  RUN_A ",worst,nDCG@10,1,q<1>,0,,1\n"                                 \
  RUN_A ",no_relevant_retrieved,,1,q<1>,,,1\n"                         \
  "base,worst,nDCG@10,1,q<1>,0.125,3,1\n"
#define E_TEXTS "query,text\nq<1>,\"<script>alert('x')</script> & \"\"why\"\"\"\n"

#define C_AGG                               \
  "run,model,chunk,measure,value,queries\n" \
  RUN_A ",m<1,256,nDCG@10,0.5,all\n"        \
  RUN_A ",m<1,256,num_q,4,all\n"            \
  "base,m2,512,nDCG@10,0.25,all\n"          \
  "base,m2,512,num_q,4,all\n"
#define C_CMP                                                                                                     \
  "run,model,chunk,baseline,measure,n,mean,baseline_mean,diff,ci_low,ci_high,effect_size,t,p_ttest,p_perm,"      \
  "p_ttest_adj,p_perm_adj,queries\n"                                                                              \
  RUN_A ",m<1,256,base,nDCG@10,4,0.5,0.25,0.25,0.125,0.375,1.2,2.5,0.04,0.02,0.04,0.02,all\n"

#define R_AGG                                                                              \
  "retriever,chunking,metric,mean,n,failures,undefined,latency_p50_ms,latency_p99_ms\n"   \
  "bm25,fixed,faithfulness,0.75,10,0,0,100,200\n"                                          \
  "bm25,fixed,tone,4.5,10,0,0,100,200\n"                                                   \
  "dense,semantic,faithfulness,0.875,10,0,0,150,300\n"                                     \
  "dense,semantic,tone,4.75,10,0,0,150,300\n"

#define J_AGREE                                                                                                    \
  "statistic,value\npairs,10\nagreement,0.8\nkappa,0.6\nweighted_kappa,0.55\nconfusion_h0_l0,5\nconfusion_h0_l1,1\n" \
  "confusion_h1_l0,1\nconfusion_h1_l1,3\ntau_nDCG@10,1\ntau_Success@10,\n"
#define J_QRELS "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\nq2 0 d4 0\nq2 0 d5 0\n"

static void put(const char *dir, const char *name, const char *text)
{
  FILE *f = fopen(th_join(dir, name), "w");
  cr_assert(f, "cannot write %s/%s", dir, name);
  fputs(text, f);
  fclose(f);
}

static char *eval_folder(void)
{
  char *d = th_fresh_dir();
  put(d, "aggregate.csv", E_AGG);
  put(d, "latency.csv", E_LAT);
  put(d, "latency_cdf.csv", E_CDF);
  put(d, "curves.csv", E_CURVES);
  put(d, "per_query.csv", E_PQ);
  put(d, "gates.csv", E_GATES);
  put(d, "worst.csv", E_WORST);
  put(d, "query_texts.csv", E_TEXTS);
  return d;
}

static char *compare_folder(void)
{
  char *d = th_fresh_dir();
  put(d, "aggregate.csv", C_AGG);
  put(d, "compare.csv", C_CMP);
  return d;
}

static th_result report(char **dirs, size_t n, const char *out, const char *extra)
{
  char *argv[32];
  int k = 0;
  argv[k++] = (char *)th_bin();
  argv[k++] = "report";
  for (size_t i = 0; i < n; i++) argv[k++] = dirs[i];
  argv[k++] = "-o";
  argv[k++] = (char *)out;
  if (extra) {
    argv[k++] = "--lead";
    argv[k++] = (char *)extra;
  }
  argv[k] = NULL;
  return th_run(NULL, argv, NULL, NULL);
}

/* The figure with this id: its data-series, and the number of .series
 * elements between its start and </figure>. */
static void series_count(const char *html, const char *id, size_t want)
{
  char key[256];
  snprintf(key, sizeof key, "<figure class=\"chart\" id=\"%s\" data-series=\"", id);
  const char *p = strstr(html, key);
  cr_assert(p, "no figure %s", id);
  const size_t declared = strtoul(p + strlen(key), NULL, 10);
  const char *end = strstr(p, "</figure>");
  cr_assert(end, "figure %s is not closed", id);
  size_t n = 0, svgs = 0;
  for (const char *q = p; (q = strstr(q, "class=\"series\"")) && q < end; q++) n++;
  for (const char *q = p; (q = strstr(q, "<svg ")) && q < end; q++) svgs++;
  cr_expect_eq(declared, want, "%s: data-series %zu, expected %zu", id, declared, want);
  cr_expect_eq(n, want, "%s: %zu .series elements, expected %zu", id, n, want);
  cr_expect_eq(svgs, 1, "%s: %zu svg elements", id, svgs);
  cr_expect(strstr(p, "<figcaption>") && strstr(p, "<figcaption>") < end, "%s: no figcaption", id);
}

static size_t count(const char *html, const char *needle)
{
  size_t n = 0;
  for (const char *q = html; (q = strstr(q, needle)); q++) n++;
  return n;
}

/* --- scales --------------------------------------------------------------------------------- */

Test(report_scale, linear_log_and_ticks)
{
  const rs__scale x = rs__scale_linear(0, 1, 64, 624), y = rs__scale_linear(0, 1, 312, 16);
  cr_expect_eq(rs__scale_map(&x, 0.0), 64.0);
  cr_expect_eq(rs__scale_map(&x, 0.5), 344.0);
  cr_expect_eq(rs__scale_map(&x, 1.0), 624.0);
  cr_expect_eq(rs__scale_map(&y, 0.25), 238.0);
  const rs__scale lg = rs__scale_log(1, 100, 0, 200);
  cr_expect(fabs(rs__scale_map(&lg, 10.0) - 100.0) < 1e-12);
  double t[16];
  size_t n = rs__scale_ticks(&x, t, 16);
  cr_assert_eq(n, 6);
  for (size_t i = 0; i < n; i++) cr_expect(fabs(t[i] - 0.2 * (double)i) < 1e-12, "tick %zu: %g", i, t[i]);
  n = rs__scale_ticks(&lg, t, 16);
  const double want[] = {1, 2, 5, 10, 20, 50, 100};
  cr_assert_eq(n, 7);
  for (size_t i = 0; i < n; i++) cr_expect(fabs(t[i] - want[i]) < 1e-9, "log tick %zu: %g", i, t[i]);
  cr_expect(fabs(rs__nice_ceil(0.37) - 0.4) < 1e-12);
  cr_expect(fabs(rs__nice_ceil(173.2) - 200.0) < 1e-9);
  cr_expect_eq(rs__nice_ceil(0.0), 1.0);
  char buf[32];
  rs__svg_fmt(45.6, buf);
  cr_expect_str_eq(buf, "45.6");
  rs__svg_fmt(-0.01, buf);
  cr_expect_str_eq(buf, "0.0");
}

Test(report_scale, plot_scales_from_data)
{
  /* y from 0 to the nice ceiling of the largest value; x on log10 when asked. */
  const double xs[] = {1, 10, 100}, ys[] = {0.1, 0.3, 0.37};
  const rs__series s = {.name = "s", .x = xs, .y = ys, .n = 3};
  const rs__plot p = {.x_axis = RS__AXIS_LOG, .x_min = 1, .x_max = 100, .y_min = NAN, .y_max = NAN};
  rs__scale x, y;
  rs__plot_scales(&p, &s, 1, &x, &y);
  cr_expect_eq(x.d0, 1.0);
  cr_expect_eq(x.d1, 100.0);
  cr_expect_eq(y.d0, 0.0);
  cr_expect(fabs(y.d1 - 0.4) < 1e-12);
  cr_expect_eq(x.r0, RS__SVG_LEFT);
  cr_expect_eq(x.r1, RS__SVG_W - RS__SVG_RIGHT);
  cr_expect_eq(y.r0, RS__SVG_H - RS__SVG_BOTTOM);
  cr_expect_eq(y.r1, RS__SVG_TOP);
}

Test(report_scale, t_quantile)
{
  /* Student's t, two-sided 5%: 3.182446305284263 at 3 df, 2.228138851986274 at 10 df. */
  cr_expect(fabs(rs__t_quantile2(0.05, 3) - 3.182446305284263) < 1e-9);
  cr_expect(fabs(rs__t_quantile2(0.05, 10) - 2.228138851986274) < 1e-9);
  cr_expect(isnan(rs__t_quantile2(0.05, 0)));
}

Test(report_scale, okabe_ito_styles)
{
  cr_expect_str_eq(rs__series_style(0).colour, "#E69F00");
  cr_expect_str_eq(rs__series_style(7).colour, "#000000");
  cr_expect_str_eq(rs__series_style(8).colour, "#E69F00");
  cr_expect_str_eq(rs__series_style(0).dash, "");
  cr_expect_str_neq(rs__series_style(8).dash, "");
  cr_expect_neq(rs__series_style(8).marker, rs__series_style(0).marker);
  cr_expect_neq(rs__series_style(16).marker, rs__series_style(8).marker);
}

/* --- the page of hand-made folders ------------------------------------------------------------ */

Test(report, hand_made_folders)
{
  char *dirs[] = {eval_folder(), compare_folder()};
  char *out = th_join(th_fresh_dir(), "r.html");
  th_result r = report(dirs, 2, out, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "wrote "), "%s", r.out);
  th_free(&r);
  char *html = th_slurp(out, NULL);
  cr_assert(html);
  /* One file: no URL of any scheme but the empty data: icon, no external reference. */
  cr_expect_null(strstr(html, "http"), "a URL in the page");
  cr_expect_null(strstr(html, "src="), "an external source");
  cr_expect_eq(count(html, "href=\""), count(html, "href=\"#") + 1, "a link that is not an anchor");
  cr_expect(strstr(html, "<link rel=\"icon\" href=\"data:,\">"));
  cr_expect(strstr(html, "@media print"));

  /* The charts and their series. */
  series_count(html, "chart-f1-heatmap-model-chunk", 1);
  series_count(html, "chart-f1-curve-ndcg", 2);
  series_count(html, "chart-f1-pr", 2);
  series_count(html, "chart-f1-latency-cdf", 2);
  series_count(html, "chart-f1-quality-latency", 2);
  series_count(html, "chart-f2-heatmap-model-chunk", 1);
  series_count(html, "chart-f2-forest-ndcg-10", 1);
  cr_expect_eq(count(html, "<figure class=\"chart\""), 7, "R@10 has one cutoff: no curve");

  /* The leaderboard: a first (0.5), the exact value in data-value, 4 digits shown. */
  const char *lb = strstr(html, "id=\"f1-lb\"");
  cr_assert(lb);
  const char *a = strstr(lb, "<td class=\"num lead\" data-value=\"0.5\">0.5000</td>");
  const char *b = strstr(lb, "<td class=\"num lead\" data-value=\"0.25\">0.2500</td>");
  cr_expect(a && b && a < b, "leaderboard order or cells");
  /* The t-interval: 0.5 -/+ 3.182446305284263 * sqrt(0.125/3) / 2 = [0.1752, 0.8248];
   * base has sd 0. */
  cr_expect(strstr(lb, ">[0.1752, 0.8248]</td>"), "a's interval");
  cr_expect(strstr(lb, ">[0.2500, 0.2500]</td>"), "base's interval");
  /* R@10, p95, queries, the no-relevant-retrieved count. */
  cr_expect(strstr(lb, "<td class=\"num\" data-value=\"0.75\">0.7500</td><td class=\"num\" data-value=\"25\">25.00</td>"
                       "<td class=\"num\" data-value=\"4\">4</td><td class=\"num\" data-value=\"1\">1</td></tr>"));
  cr_expect(strstr(html, "<table class=\"sortable\" id=\"f1-lb\">"));

  /* The compare folder: the difference, its interval, p_perm_adj and the mark. */
  const char *lb2 = strstr(html, "id=\"f2-lb\"");
  cr_assert(lb2);
  cr_expect(strstr(lb2, "<td class=\"num\" data-value=\"0.25\">+0.2500</td><td class=\"num\" data-value=\"0.125\">"
                        "[0.1250, 0.3750]</td><td class=\"num\" data-value=\"0.02\">0.02</td>"
                        "<td class=\"better\" data-value=\"1\">&#9650;</td>"));
  cr_expect(strstr(lb2, "<td>baseline</td>"));

  /* Escaping: names, attributes (and their JSON), query texts. */
  cr_expect_null(strstr(html, "a<b"), "a raw run name");
  cr_expect_null(strstr(html, "<script>alert"), "a raw query text");
  cr_expect(strstr(html, "a&lt;b&amp;&quot;c&#39;"));
  cr_expect(strstr(html, "data-attrs=\"{&quot;model&quot;:&quot;m&lt;1&quot;,&quot;chunk&quot;:&quot;256&quot;}\""));
  cr_expect(strstr(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;why&quot;"));
  cr_expect(strstr(html, "<option value=\"m&lt;1\">m&lt;1</option>"), "the filter's values");

  /* Gates: one check passes, one fails. */
  cr_expect(strstr(html, "1 of 2 checks failed"));
  cr_expect_eq(count(html, "<td class=\"pass\" data-value=\"1\">&#10003;</td>"), 1);
  cr_expect_eq(count(html, "<td class=\"fail\" data-value=\"0\">&#10007;</td>"), 1);
  free(html);
}

/* The PR curve of a: recall r -> precision 1 - r, drawn at the scale's
 * pixels (x 0..1 over the plot's width, y 0..1 over its height). */
Test(report, pr_points_at_their_coordinates)
{
  char *dirs[] = {eval_folder()};
  char *out = th_join(th_fresh_dir(), "r.html");
  th_result r = report(dirs, 1, out, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *html = th_slurp(out, NULL);
  cr_assert(html);
  const rs__scale x = rs__scale_linear(0, 1, RS__SVG_LEFT, RS__SVG_W - RS__SVG_RIGHT);
  const rs__scale y = rs__scale_linear(0, 1, RS__SVG_H - RS__SVG_BOTTOM, RS__SVG_TOP);
  char d[1024] = "d=\"", buf[32];
  for (int i = 0; i <= 10; i++) {
    strcat(d, i ? "L" : "M");
    rs__svg_fmt(rs__scale_map(&x, i / 10.0), buf);
    strcat(d, buf);
    strcat(d, ",");
    rs__svg_fmt(rs__scale_map(&y, 1.0 - i / 10.0), buf);
    strcat(d, buf);
  }
  strcat(d, "\"");
  cr_expect(strstr(d, "M64.0,16.0L120.0,45.6L176.0,75.2"), "%s", d);
  const char *pr = strstr(html, "id=\"chart-f1-pr\"");
  cr_assert(pr);
  const char *hit = strstr(pr, d);
  cr_expect(hit && hit < strstr(pr, "</figure>"), "the PR path %s is not in the PR chart", d);
  /* base's flat 0.5: y = 164.0 at every recall. */
  cr_expect(strstr(pr, "M64.0,164.0L120.0,164.0L176.0,164.0"));
  free(html);
}

Test(report, rag_and_judge_folders)
{
  char *rag = th_fresh_dir(), *judge = th_fresh_dir();
  put(rag, "aggregate.csv", R_AGG);
  put(judge, "agreement.csv", J_AGREE);
  put(judge, "qrels.txt", J_QRELS);
  char *dirs[] = {rag, judge};
  char *out = th_join(th_fresh_dir(), "r.html");
  th_result r = report(dirs, 2, out, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *html = th_slurp(out, NULL);
  cr_assert(html);
  cr_expect(strstr(html, "<h2>rag: <code>"));
  cr_expect(strstr(html, "<h2>judge: <code>"));
  series_count(html, "chart-f1-metrics-unit", 2);
  series_count(html, "chart-f1-metrics-tone", 2);
  series_count(html, "chart-f1-heatmap-retriever-chunking", 1);
  series_count(html, "chart-f1-quality-latency", 2);
  series_count(html, "chart-f2-confusion", 1);
  series_count(html, "chart-f2-labels", 1);
  /* dense/semantic leads on faithfulness; its p50 and p99. */
  const char *lb = strstr(html, "id=\"f1-lb\"");
  cr_assert(lb);
  cr_expect(strstr(lb, "dense/semantic</td><td>dense</td><td>semantic</td>"
                       "<td class=\"num lead\" data-value=\"0.875\">0.8750</td>"
                       "<td class=\"num\" data-value=\"4.75\">4.7500</td>"
                       "<td class=\"num\" data-value=\"150\">150.00</td><td class=\"num\" data-value=\"300\">300.00</td>"));
  /* The confusion matrix cells and the label counts (3 at 0, 1 at 1, 1 at 2). */
  const char *cm = strstr(html, "id=\"chart-f2-confusion\"");
  cr_assert(cm);
  cr_expect(strstr(cm, "<title>human 0 \xc3\x97 LLM 1: 1</title>"));
  cr_expect(strstr(cm, "<title>human 1 \xc3\x97 LLM 1: 3</title>"));
  cr_expect(strstr(html, "qrels.txt: 5 labelled pairs."));
  cr_expect(strstr(html, "<title>pairs \xc2\xb7 label 0: 3</title>"));
  cr_expect(strstr(html, "<title>pairs \xc2\xb7 label 2: 1</title>"));
  cr_expect(strstr(html, "<td>kappa</td><td class=\"num\" data-value=\"0.6\">0.6</td>"));
  free(html);
}

Test(report, history_hook)
{
  const rs__report_point pts[] = {
      {"b", "nDCG@10", "v2", 1700086400.0, 0.5},  {"a", "nDCG@10", "v1", 1700000000.0, 0.25},
      {"a", "nDCG@10", "v2", 1700086400.0, 0.375}, {"a", "RR@10", NULL, 1700000000.0, 0.125},
  };
  char *out = th_join(th_fresh_dir(), "h.html");
  const rs__report_opts o = {.title = "nightly", .history = pts, .n_history = 4, .history_source = "h.sqlite"};
  rs_error err = {0};
  cr_assert_eq(rs__report_write(NULL, 0, &o, out, &err), RS_OK, "%s", err.msg);
  char *html = th_slurp(out, NULL);
  cr_assert(html);
  series_count(html, "chart-history-1", 2);
  series_count(html, "chart-history-2", 1);
  cr_expect(strstr(html, "<title>nightly</title>"));
  /* a's two points in time order: 1700000000 then 1700086400. */
  const char *a = strstr(strstr(html, "id=\"chart-history-1\""), "data-name=\"a\"");
  cr_assert(a);
  cr_expect(strstr(a, "<path fill=\"none\" stroke-width=\"1.8\" d=\"M"));
  free(html);
}

/* --- bad input ---------------------------------------------------------------------------------- */

static void expect_no_temp(const char *dir)
{
  DIR *d = opendir(dir);
  cr_assert(d);
  struct dirent *e;
  while ((e = readdir(d))) cr_expect_null(strstr(e->d_name, ".tmp."), "temporary file %s left in %s", e->d_name, dir);
  closedir(d);
}

Test(report, bad_input_exits_2_naming_the_path)
{
  char *outdir = th_fresh_dir();
  char *out = th_join(outdir, "r.html");
  put(outdir, "r.html", "old report\n");
  /* A missing folder. */
  char *missing[] = {"/nonexistent/ragsweep-report"};
  th_result r = report(missing, 1, out, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "/nonexistent/ragsweep-report: cannot read the folder"), "%s", r.err);
  th_free(&r);
  /* A folder with nothing of ours. */
  char *empty[] = {th_fresh_dir()};
  r = report(empty, 1, out, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, empty[0]) && strstr(r.err, "no aggregate.csv"), "%s", r.err);
  cr_expect(strstr(r.err, "'ragsweep judge'"), "says which command writes what: %s", r.err);
  th_free(&r);
  /* A malformed compare.csv after a good folder: its path and line. */
  char *bad = compare_folder();
  put(bad, "compare.csv",
      "run,baseline,measure,n,mean,baseline_mean,diff,ci_low,ci_high,p_ttest,p_perm,p_ttest_adj,p_perm_adj\n"
      "base,base,nDCG@10,4,0.25,0.25,zero,,,,,,\n");
  char *two[] = {eval_folder(), bad};
  r = report(two, 2, out, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, th_join(bad, "compare.csv:2: expected a number in column 'diff', found 'zero'")), "%s",
            r.err);
  th_free(&r);
  /* A malformed CSV (a quote inside a field) in aggregate.csv. */
  char *broken = th_fresh_dir();
  put(broken, "aggregate.csv", "run,measure,value\nx,nDCG@10,0.5\"oops\n");
  r = report(&broken, 1, out, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, th_join(broken, "aggregate.csv:2")), "%s", r.err);
  th_free(&r);
  /* A lead no folder has: usage. */
  char *good[] = {eval_folder()};
  r = report(good, 1, out, "nDCG@3");
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "--lead nDCG@3: no folder has this measure; expected one of: nDCG@10, R@10"), "%s", r.err);
  th_free(&r);
  /* Every failure left the old file alone and no temporary file. */
  char *text = th_slurp(out, NULL);
  cr_expect_str_eq(text, "old report\n");
  free(text);
  expect_no_temp(outdir);
  /* No -o: usage. */
  char *argv[] = {(char *)th_bin(), "report", good[0], NULL};
  r = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(r.status, 1);
  th_free(&r);
}

/* --- eval --report on a generated sweep --------------------------------------------------------- */

static const char *gen_corpus(void)
{
  static char path[4096];
  if (*path) return path;
  char *dir = th_fresh_dir();
  snprintf(path, sizeof path, "%s/sweep.h5", dir);
  char gen[4096];
  snprintf(gen, sizeof gen, "%s", th_bin());
  char *slash = strrchr(gen, '/');
  cr_assert(slash);
  strcpy(slash + 1, "gen_sweep");
  char *argv[] = {gen, "-o", path, "--queries", "400", "--k", "30", "--seed", "7", "--grid",
                  "model=a,b;chunk=128,256", NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(r.status, 0, "gen_sweep: %s", r.err);
  th_free(&r);
  return path;
}

/* The CSV rows of path as lines (a ring-free copy; small files). */
static char *field_of(const char *line, int k)
{
  static char buf[256];
  const char *p = line;
  for (int i = 0; i < k; i++) p = strchr(p, ',') + 1;
  size_t n = strcspn(p, ",\n");
  memcpy(buf, p, n);
  buf[n] = '\0';
  return buf;
}

/* The line of path that starts with prefix and contains needle. */
static char *line_with(const char *text, const char *prefix, const char *needle)
{
  static char buf[1024];
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
    size_t n = strcspn(p, "\n");
    if (strncmp(p, prefix, strlen(prefix)) == 0 && n < sizeof buf) {
      memcpy(buf, p, n);
      buf[n] = '\0';
      if (strstr(buf, needle)) return buf;
    }
  }
  return NULL;
}

Test(report_eval, extra_files_repeat_the_doubles_and_change_nothing, .timeout = 120)
{
  const char *corpus = gen_corpus();
  char *plain = th_fresh_dir(), *rep = th_fresh_dir();
  char *a1[] = {(char *)th_bin(), "eval", (char *)corpus, "-o", plain, "--per-query", "--worst", "2", "--gate",
                "nDCG@10>=0.2", "--top", "0", "--quiet", NULL};
  char *a2[] = {(char *)th_bin(), "eval", (char *)corpus, "-o", rep, "--per-query", "--worst", "2", "--gate",
                "nDCG@10>=0.2", "--top", "0", "--quiet", "--report", NULL};
  th_result r1 = th_run(NULL, a1, NULL, NULL), r2 = th_run(NULL, a2, NULL, NULL);
  cr_assert(r1.status == 0 || r1.status == 3, "%s", r1.err);
  cr_assert_eq(r2.status, r1.status, "%s", r2.err);
  cr_expect(strstr(r2.out, "/report.html"), "%s", r2.out);
  th_free(&r1);
  th_free(&r2);
  /* The extra values change none of the other files. */
  static const char *const same[] = {"aggregate.csv", "latency.csv", "per_query.csv", "worst.csv", "gates.csv"};
  for (size_t i = 0; i < 5; i++) {
    char *x = th_slurp(th_join(plain, same[i]), NULL), *y = th_slurp(th_join(rep, same[i]), NULL);
    cr_assert(x && y, "%s", same[i]);
    cr_expect_str_eq(x, y, "%s differs with --report", same[i]);
    free(x);
    free(y);
  }
  cr_expect(!th_exists(th_join(plain, "curves.csv")) && !th_exists(th_join(plain, "report.html")));
  char *agg = th_slurp(th_join(rep, "aggregate.csv"), NULL), *cur = th_slurp(th_join(rep, "curves.csv"), NULL);
  char *lat = th_slurp(th_join(rep, "latency.csv"), NULL), *cdf = th_slurp(th_join(rep, "latency_cdf.csv"), NULL);
  cr_assert(agg && cur && lat && cdf);
  cr_expect(strncmp(cur, "run,chunk,model,measure,base,cutoff,value,queries\n", 50) == 0, "%.80s", cur);
  const char *runs[] = {"a_128", "a_256", "b_128", "b_256"};
  for (size_t i = 0; i < 4; i++) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s,", runs[i]);
    /* Every measure both files hold is the same text, so the same double. */
    static const char *const shared[] = {",nDCG@10,", ",nDCG@5,", ",R@10,", ",P@5,", ",Success@1,", ",R@100,"};
    for (size_t k = 0; k < 6; k++) {
      char *in_agg = line_with(agg, prefix, shared[k]);
      if (strcmp(shared[k], ",R@100,") == 0) { /* depth 30: no R@100 curve point */
        cr_expect(!line_with(cur, prefix, shared[k]));
        continue;
      }
      cr_assert(in_agg, "%s%s in aggregate.csv", prefix, shared[k]);
      char want[64];
      snprintf(want, sizeof want, "%s", field_of(in_agg, 6));
      char *in_cur = line_with(cur, prefix, shared[k]);
      cr_assert(in_cur, "%s%s in curves.csv", prefix, shared[k]);
      cr_expect_str_eq(field_of(in_cur, 6), want, "%s%s", prefix, shared[k]);
    }
    cr_expect(line_with(cur, prefix, ",Success@30,Success,30,"), "cutoffs up to the depth");
    cr_expect(line_with(cur, prefix, ",iprec_at_recall_1.00,iprec_at_recall,1,"));
    /* Quantiles 0.5, 0.95, 0.999 and 1 are latency.csv's p50, p95, p999 and max. */
    char *l = line_with(lat, prefix, ",");
    cr_assert(l, "%s in latency.csv", prefix);
    char p50[40], p95[40], p999[40], mx[40];
    snprintf(p50, sizeof p50, "%s", field_of(l, 5));
    snprintf(p95, sizeof p95, "%s", field_of(l, 7));
    snprintf(p999, sizeof p999, "%s", field_of(l, 9));
    snprintf(mx, sizeof mx, "%s", field_of(l, 10));
    const char *q[] = {",0.5,", ",0.95,", ",0.999,", ",1,"};
    const char *want[] = {p50, p95, p999, mx};
    for (size_t k = 0; k < 4; k++) {
      char *c = line_with(cdf, prefix, q[k]);
      cr_assert(c, "%s%s in latency_cdf.csv", prefix, q[k]);
      cr_expect_str_eq(field_of(c, 4), want[k], "%s quantile %s", prefix, q[k]);
    }
  }
  cr_expect_eq(count(cdf, "\n"), 1 + 4 * 102, "102 quantiles per run");
  free(agg);
  free(cur);
  free(lat);
  free(cdf);
  /* The report of that folder: dense curves, a CDF of 102 points. */
  char *html = th_slurp(th_join(rep, "report.html"), NULL);
  cr_assert(html);
  series_count(html, "chart-f1-curve-success", 4);
  series_count(html, "chart-f1-curve-ndcg", 4);
  series_count(html, "chart-f1-pr", 4);
  series_count(html, "chart-f1-latency-cdf", 4);
  series_count(html, "chart-f1-heatmap-chunk-model", 1);
  free(html);
  /* A re-run without --report removes the report's files. */
  char *a3[] = {(char *)th_bin(), "eval", (char *)corpus, "-o", rep, "--top", "0", "--quiet", NULL};
  th_result r3 = th_run(NULL, a3, NULL, NULL);
  cr_assert_eq(r3.status, 0, "%s", r3.err);
  th_free(&r3);
  cr_expect(!th_exists(th_join(rep, "curves.csv")) && !th_exists(th_join(rep, "latency_cdf.csv")) &&
            !th_exists(th_join(rep, "report.html")));
}

/* `report --history FILE`: the database's series, one chart per measure
 * and one line per configuration, with or without folders. */
Test(report_eval, history_database_as_time_series, .timeout = 120)
{
  const char *corpus = gen_corpus();
  char *dir = th_fresh_dir(), *db = th_join(dir, "h.sqlite"), *out = th_join(dir, "e");
  for (int i = 0; i < 3; i++) {
    char label[16];
    snprintf(label, sizeof label, "v%d", i + 1);
    char *a[] = {(char *)th_bin(), "eval", (char *)corpus, "-o", out, "-m", "nDCG@10", "-m", "R@5", "--top", "0",
                 "--quiet", "--history", db, "--label", label, NULL};
    th_result r = th_run(NULL, a, NULL, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    th_free(&r);
  }
  char *html_path = th_join(dir, "r.html");
  char *b[] = {(char *)th_bin(), "report", out, "--history", db, "-o", html_path, NULL};
  th_result r = th_run(NULL, b, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *html = th_slurp(html_path, NULL);
  cr_assert(html);
  /* Measures in bytewise order: R@5, latency_p50_ms, latency_p95_ms,
   * latency_p99_ms, nDCG@10; each with every run of the sweep. */
  size_t runs = 0;
  for (const char *q = strstr(html, "id=\"chart-history-1\""); q && (q = strstr(q + 1, "data-name=\"")) &&
                                                                  q < strstr(strstr(html, "id=\"chart-history-1\""), "</figure>");)
    runs++;
  cr_expect_gt(runs, 1);
  for (int m = 1; m <= 5; m++) {
    char id[32];
    snprintf(id, sizeof id, "chart-history-%d", m);
    series_count(html, id, runs);
  }
  cr_expect(!strstr(html, "chart-history-6"));
  cr_expect(strstr(html, db), "the source is named");
  free(html);
  /* The history alone, one measure; a measure it lacks is a usage error. */
  char *c[] = {(char *)th_bin(), "report", "--history", db, "-m", "nDCG@10", "-o", html_path, NULL};
  r = th_run(NULL, c, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  html = th_slurp(html_path, NULL);
  series_count(html, "chart-history-1", runs);
  cr_expect(!strstr(html, "chart-history-2"));
  free(html);
  char *d[] = {(char *)th_bin(), "report", "--history", db, "-m", "Success@7", "-o", html_path, NULL};
  r = th_run(NULL, d, NULL, NULL);
  cr_expect_eq(r.status, 1, "%s", r.err);
  cr_expect(strstr(r.err, "Success@7"), "%s", r.err);
  th_free(&r);
}

Test(report_eval, query_texts_beside_worst)
{
  const char *q = th_write_temp(5, "q.qrels", "q1 0 d1 1\nq2 0 d2 1\n");
  const char *run = th_write_temp(6, "r.run", "q1 Q0 d1 1 3 x\nq2 Q0 d3 1 2 x\n");
  const char *texts = th_write_temp(7, "queries.tsv", "q1\tfirst\nq2\tWhat is <b> & \"this\"?\n");
  char *dir = th_fresh_dir();
  char *corpus = th_join(dir, "c.h5"), runarg[4200];
  snprintf(runarg, sizeof runarg, "r=%s", run);
  char *imp[] = {(char *)th_bin(), "import", "-o", corpus, "--qrels", (char *)q, "--queries", (char *)texts, runarg,
                 NULL};
  th_result r = th_run(NULL, imp, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *out = th_join(dir, "out");
  char *ev[] = {(char *)th_bin(), "eval", corpus, "-o", out, "-m", "RR", "--worst", "1", "--top", "0", "--report", NULL};
  r = th_run(NULL, ev, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  /* Only the query worst.csv names (q2), with its text as written. */
  char *t = th_slurp(th_join(out, "query_texts.csv"), NULL);
  cr_assert(t);
  cr_expect_str_eq(t, "query,text\nq2,\"What is <b> & \"\"this\"\"?\"\n");
  free(t);
  char *html = th_slurp(th_join(out, "report.html"), NULL);
  cr_assert(html);
  cr_expect(strstr(html, "<td class=\"qtext\">What is &lt;b&gt; &amp; &quot;this&quot;?</td>"));
  free(html);
}
