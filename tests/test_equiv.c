/* test_equiv.c: on the conformance data, imported into corpora,
 *   - `ragsweep eval` gives trec_eval's numbers for every equivalent measure,
 *     per query and overall, at relevance levels 1 and 2, under
 *     --queries=all (trec_eval -c) and --queries=judged (plain trec_eval,
 *     where 10.0 accepts the run);
 *   - `ragsweep export` after `import` gives TREC files on which trec_eval
 *     prints what it prints on the originals (-q -c -m all_trec).
 * Values are compared as trec_eval prints them (%.4f, or %ld for counts). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

struct pair {
  char dataset[64], qrels[64], run[64];
};

static struct pair pairs[] = {
    {"dl-hard-passage", "qrels.dl-hard-passage.txt", "run.bm25.txt"},
    {"dl-hard-passage", "qrels.dl-hard-passage.txt", "run.bm25+t5-zs.txt"},
    {"rag24-test", "qrels.rag24.test.txt", "run.rag24.txt"},
    {"trec-covid-round5", "qrels.covid-round5.txt", "run.bm25.covid-r5.txt"},
    {"trec_eval-test", "qrels.test", "results.test"},
    {"webtrack-2011-2014", "qrels.wt11-14.txt", "run.ql.wt11-14.txt"},
};

ParameterizedTestParameters(equiv, eval_equals_trec_eval)
{
  return cr_make_param_array(struct pair, pairs, sizeof pairs / sizeof *pairs);
}

/* trec_eval output name -> our canonical name, for level 1 and level 2. */
static const char *const map1[][2] = {
    {"P_5", "P@5"},         {"P_10", "P@10"},           {"P_20", "P@20"},        {"recall_10", "R@10"},
    {"recall_100", "R@100"}, {"recall_1000", "R@1000"}, {"map", "AP"},           {"map_cut_10", "AP@10"},
    {"map_cut_100", "AP@100"}, {"ndcg", "nDCG"},        {"ndcg_cut_5", "nDCG@5"}, {"ndcg_cut_10", "nDCG@10"},
    {"ndcg_cut_20", "nDCG@20"}, {"recip_rank", "RR"},   {"Rprec", "Rprec"},      {"bpref", "bpref"},
    {"success_1", "Success@1"}, {"success_5", "Success@5"}, {"success_10", "Success@10"},
    {"num_ret", "NumRet"},  {"num_rel", "NumRel"},      {"num_rel_ret", "NumRelRet"}, {"infAP", "infAP"},
    {"iprec_at_recall_0.00", "iprec_at_recall_0.00"},   {"iprec_at_recall_0.50", "iprec_at_recall_0.50"},
    {"gm_map", "gm_map"},       {"num_nonrel_judged_ret", "num_nonrel_judged_ret"},
};
static const char *const map2[][2] = {
    {"P_10", "P(rel=2)@10"}, {"recall_100", "R(rel=2)@100"}, {"map", "AP(rel=2)"}, {"recip_rank", "RR(rel=2)"},
    {"bpref", "bpref(rel=2)"}, {"Rprec", "Rprec(rel=2)"}, {"num_rel", "NumRel(rel=2)"},
    {"num_rel_ret", "NumRelRet(rel=2)"},
};
#define TE_MEASURES1 "-m", "P.5,10,20", "-m", "recall.10,100,1000", "-m", "map", "-m", "map_cut.10,100", "-m", "ndcg", \
    "-m", "ndcg_cut.5,10,20", "-m", "recip_rank", "-m", "Rprec", "-m", "bpref", "-m", "success.1,5,10", "-m",        \
    "num_ret", "-m", "num_rel", "-m", "num_rel_ret", "-m", "infAP", "-m", "iprec_at_recall.0,0.5", "-m", "gm_map", \
    "-m", "num_nonrel_judged_ret"
#define TE_MEASURES2 "-m", "P.10", "-m", "recall.100", "-m", "map", "-m", "recip_rank", "-m", "bpref", "-m", "Rprec", \
    "-m", "num_rel", "-m", "num_rel_ret"

typedef struct {
  char key[200]; /* query \t measure */
  double v;
} entry;

static int cmp_entry(const void *a, const void *b) { return strcmp(((const entry *)a)->key, ((const entry *)b)->key); }

/* Loads per_query.csv (plain ids) and aggregate.csv ("all" as the query). */
static entry *load(const char *out, size_t *n)
{
  char path[4096];
  size_t cap = 1 << 16, k = 0;
  entry *e = malloc(cap * sizeof *e);
  for (int f = 0; f < 2; f++) {
    snprintf(path, sizeof path, "%s/%s", out, f ? "aggregate.csv" : "per_query.csv");
    char *text = th_slurp(path, NULL);
    cr_assert(text, "%s", path);
    char *save = NULL;
    strtok_r(text, "\n", &save); /* header */
    for (char *line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
      if (f) *strrchr(line, ',') = '\0'; /* aggregate.csv ends with the query policy */
      char *v = strrchr(line, ',');
      *v++ = '\0';
      *strrchr(line, ',') = '\0'; /* cutoff */
      *strrchr(line, ',') = '\0'; /* base */
      char *m = strrchr(line, ',');
      *m++ = '\0';
      const char *q = "all";
      if (!f) q = strchr(line, ',') + 1;
      if (k == cap) e = realloc(e, (cap *= 2) * sizeof *e);
      snprintf(e[k].key, sizeof e[k].key, "%s\t%s", q, m);
      e[k++].v = strtod(v, NULL);
    }
    free(text);
  }
  qsort(e, k, sizeof *e, cmp_entry);
  *n = k;
  return e;
}

/* Compares every line of trec_eval's -q output that has a mapped name. */
static size_t compare(const char *te_out, const char *const (*map)[2], size_t n_map, const entry *e, size_t n,
                      int skip_num_rel_all, const char *what)
{
  size_t checked = 0;
  char *text = strdup(te_out), *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char name[64], topic[128], value[64];
    if (sscanf(line, "%63s %127s %63s", name, topic, value) != 3) continue;
    const char *ours = NULL;
    for (size_t i = 0; i < n_map; i++)
      if (strcmp(map[i][0], name) == 0) ours = map[i][1];
    if (!ours || (skip_num_rel_all && strcmp(name, "num_rel") == 0 && strcmp(topic, "all") == 0)) continue;
    entry key;
    snprintf(key.key, sizeof key.key, "%s\t%s", topic, ours);
    const entry *hit = bsearch(&key, e, n, sizeof *e, cmp_entry);
    cr_assert(hit, "%s: no value for %s (%s) of %s", what, ours, name, topic);
    char mine[64];
    if (strchr(value, '.')) snprintf(mine, sizeof mine, "%.4f", hit->v);
    else snprintf(mine, sizeof mine, "%ld", (long)hit->v);
    cr_expect_str_eq(mine, value, "%s: %s (%s) of topic %s", what, ours, name, topic);
    checked++;
  }
  free(text);
  return checked;
}

ParameterizedTest(struct pair *p, equiv, eval_equals_trec_eval, .timeout = 120)
{
  const char *conf = th_conformance_dir();
  if (!conf) cr_skip_test("no conformance data (../shared/conformance)");
  char dir[4096], qrels[4096], run[4096], corpus[4200], out[4200], exp[4200];
  snprintf(dir, sizeof dir, "%s/%s", conf, p->dataset);
  snprintf(qrels, sizeof qrels, "%s/%s", dir, p->qrels);
  snprintf(run, sizeof run, "%s/%s", dir, p->run);
  char tmp[] = "/tmp/ragsweep-equiv-XXXXXX";
  cr_assert(mkdtemp(tmp));
  th_note_dir(tmp);
  snprintf(corpus, sizeof corpus, "%s/c.h5", tmp);
  snprintf(out, sizeof out, "%s/out", tmp);
  snprintf(exp, sizeof exp, "%s/exp", tmp);
  char runarg[4200];
  snprintf(runarg, sizeof runarg, "sys=%s", run);
  char *imp[] = {(char *)th_bin(), "import", "-o", corpus, "--qrels", qrels, runarg, NULL};
  th_result r = th_run(NULL, imp, NULL, NULL);
  cr_assert_eq(r.status, 0, "import: %s", r.err);
  th_free(&r);

  for (int all = 1; all >= 0; all--) {
#define EV_MEASURES "-m", "P@{5,10,20}", "-m", "R@{10,100,1000}", "-m", "AP", "-m", "AP@{10,100}", "-m", "nDCG", "-m", \
    "nDCG@{5,10,20}", "-m", "RR", "-m", "Rprec", "-m", "bpref", "-m", "Success@{1,5,10}", "-m", "NumRet", "-m", "NumRel", \
    "-m", "NumRelRet", "-m", "infAP", "-m", "iprec_at_recall.0,0.5", "-m", "gm_map", "-m", "num_nonrel_judged_ret",     \
    "-m", "P(rel=2)@10", "-m", "R(rel=2)@100", "-m", "AP(rel=2)", "-m", "RR(rel=2)", "-m", "bpref(rel=2)", "-m",        \
    "Rprec(rel=2)", "-m", "NumRel(rel=2)", "-m", "NumRelRet(rel=2)"
    char *ev[] = {(char *)th_bin(), "eval", corpus, "-o", out, "--quiet", "--per-query",
                  all ? "--queries=all" : "--queries=judged", EV_MEASURES, NULL};
    r = th_run(NULL, ev, NULL, NULL);
    cr_assert_eq(r.status, 0, "eval: %s", r.err);
    th_free(&r);
    /* The direct eval of the text files numbers docs within each query
     * and keeps the rows in trec_eval's order (no doc ids: see
     * rs__corpus.rows_ranked): it must write the same files, byte for
     * byte, as the eval of the corpus import wrote, with its doc ids. */
    char direct[4300];
    snprintf(direct, sizeof direct, "%s/direct", tmp);
    char *dv[] = {(char *)th_bin(), "eval", qrels, runarg, "-o", direct, "--quiet", "--per-query",
                  all ? "--queries=all" : "--queries=judged", EV_MEASURES, NULL};
    r = th_run(NULL, dv, NULL, NULL);
    cr_assert_eq(r.status, 0, "direct eval: %s", r.err);
    th_free(&r);
    static const char *const same[] = {"aggregate.csv", "per_query.csv"};
    for (size_t f = 0; f < 2; f++) {
      char a[4400], b[4400];
      snprintf(a, sizeof a, "%s/%s", out, same[f]);
      snprintf(b, sizeof b, "%s/%s", direct, same[f]);
      char *ta = th_slurp(a, NULL), *tb = th_slurp(b, NULL);
      cr_assert(ta && tb, "%s or %s missing", a, b);
      cr_assert_gt(strlen(ta), 100, "%s", a);
      cr_expect_str_eq(tb, ta, "%s: direct eval (%s) differs from the imported corpus's", same[f],
                       all ? "--queries=all" : "--queries=judged");
      free(ta);
      free(tb);
    }
    size_t n;
    entry *e = load(out, &n);
    char *te1[] = {(char *)th_bin(), "trec_eval", "-q", all ? "-c" : "-q", TE_MEASURES1, qrels, run, NULL};
    char *te2[] = {(char *)th_bin(), "trec_eval", "-q", "-l", "2", all ? "-c" : "-q", TE_MEASURES2, qrels, run, NULL};
    th_result t1 = th_run(NULL, te1, NULL, NULL), t2 = th_run(NULL, te2, NULL, NULL);
    if (!all && t1.status == 4) { /* 10.0 rejects a run that misses a judged topic */
      th_free(&t1);
      th_free(&t2);
      free(e);
      continue;
    }
    cr_assert_eq(t1.status, 0, "%s", t1.err);
    cr_assert_eq(t2.status, 0, "%s", t2.err);
    size_t c1 = compare(t1.out, map1, sizeof map1 / sizeof *map1, e, n, 0, all ? "-c" : "plain");
    /* -c's summary num_rel counts grades > 0 whatever -l says (README): not NumRel(rel=2). */
    size_t c2 = compare(t2.out, map2, sizeof map2 / sizeof *map2, e, n, all, all ? "-c -l 2" : "-l 2");
    cr_expect_gt(c1, 25, "only %zu values compared", c1);
    cr_expect_gt(c2, 12, "only %zu values compared", c2);
    th_free(&t1);
    th_free(&t2);
    free(e);
  }

  /* export after import: trec_eval prints the same (but the run tag) */
  char *ex[] = {(char *)th_bin(), "export", corpus, "-o", exp, NULL};
  r = th_run(NULL, ex, NULL, NULL);
  cr_assert_eq(r.status, 0, "export: %s", r.err);
  th_free(&r);
  char eq[4300], er[4300];
  snprintf(eq, sizeof eq, "%s/qrels.txt", exp);
  snprintf(er, sizeof er, "%s/sys.txt", exp);
  char *a[] = {(char *)th_bin(), "trec_eval", "-q", "-c", "-m", "all_trec", qrels, run, NULL};
  char *b[] = {(char *)th_bin(), "trec_eval", "-q", "-c", "-m", "all_trec", eq, er, NULL};
  th_result ra = th_run(NULL, a, NULL, NULL), rb = th_run(NULL, b, NULL, NULL);
  cr_assert_eq(ra.status, 0);
  cr_assert_eq(rb.status, 0, "%s", rb.err);
  /* drop the runid line, the only one that names the run */
  for (th_result *x = &ra; x; x = x == &ra ? &rb : NULL) {
    char *l = strstr(x->out, "runid");
    cr_assert(l);
    char *nl = strchr(l, '\n');
    memmove(l, nl + 1, strlen(nl + 1) + 1);
  }
  cr_expect(strcmp(ra.out, rb.out) == 0, "trec_eval output differs after export");
  th_free(&ra);
  th_free(&rb);
}
