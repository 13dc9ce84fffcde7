/* test_names.c: the named measures AnswerPresence@k and Accuracy@k.
 *
 * They reuse Success@k's and P@k's kernels but are written under their own
 * names everywhere a measure name is written (aggregate.csv, per_query.csv,
 * gates.csv, worst.csv, the leaderboard), unlike the silent aliases
 * (Hit@k is written Success@k). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "metrics/spec.h"

/* Canonical names of a spec, space-separated, or its error message. */
static char *names_of(const char *const *names, size_t n)
{
  rs__spec *s = NULL;
  rs_error err = {0};
  if (rs__spec_build(names, n, 100, &s, &err) != RS_OK) return strdup(err.msg);
  char buf[2048] = "";
  for (size_t i = 0; i < s->n_out; i++) {
    if (i) strcat(buf, " ");
    strcat(buf, s->req[i].name);
  }
  rs__spec_free(s);
  return strdup(buf);
}

Test(named_measures, canonical_names_and_errors)
{
  const char *a[] = {"AnswerPresence@{10,1,5}", "Accuracy@1..2", "AnswerPresence(rel=2)@5", "Accuracy(rel=1)@3",
                     "Success@5", "P@5", "Hit@1"};
  char *got = names_of(a, sizeof a / sizeof *a);
  /* rel=1 is the default level and is not written, as for P; Success@5
   * and P@5 are separate outputs beside the named ones. */
  cr_expect_str_eq(got, "AnswerPresence@1 AnswerPresence@5 AnswerPresence@10 Accuracy@1 Accuracy@2 "
                        "AnswerPresence(rel=2)@5 Accuracy@3 Success@5 P@5 Success@1");
  free(got);
  const struct { const char *name, *msg; } bad[] = {
      {"Accuracy", "Accuracy needs a cutoff, e.g. Accuracy@10"},
      {"AnswerPresence", "AnswerPresence needs a cutoff, e.g. AnswerPresence@10"},
      {"AnswerPresence(gain=exp)@5", "only nDCG and DCG take gain="},
      {"Accuracy@0", "cutoff 0 is not a positive integer"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    const char *one[] = {bad[i].name};
    char *msg = names_of(one, 1);
    cr_expect(strstr(msg, bad[i].msg), "%s: %s", bad[i].name, msg);
    free(msg);
  }
}

/* The names users port from ranx, ir_measures and the RAG guides, in any
 * case, are renamed to the canonical name; trec_eval's bare names keep
 * their trec_eval meaning. */
Test(named_measures, aliases_of_ranx_ir_measures_and_the_guides)
{
  const char *a[] = {"precision@5",      "recall@5",        "ndcg@10",       "mrr@10",         "map@100",
                     "hit_rate@5",       "HITRATE@3",       "hit@2",         "answerpresence@5", "ACCURACY@5",
                     "f1@5",             "r-precision",     "Bpref",         "ndcg_burges@10", "mrr",
                     "nDCG(dcg=exp-log2)@20", "nDCG(dcg='log2')@20", "P(judged_only=False)@7", "dcg_burges@3"};
  char *got = names_of(a, sizeof a / sizeof *a);
  cr_expect_str_eq(got, "P@5 R@5 nDCG@10 RR@10 AP@100 Success@5 Success@3 Success@2 AnswerPresence@5 Accuracy@5 "
                        "F1@5 Rprec bpref nDCG(gain=exp)@10 RR nDCG(gain=exp)@20 nDCG@20 P@7 DCG(gain=exp)@3");
  free(got);
  const char *trec[] = {"recall", "map", "ndcg"}; /* trec_eval's: recall's default cutoffs, AP, nDCG */
  got = names_of(trec, 3);
  cr_expect_str_eq(got, "R@5 R@10 R@15 R@20 R@30 R@100 R@200 R@500 R@1000 AP nDCG");
  free(got);
  const char *variants[] = {"P(denom=retrieved)@5", "P(rel=2,denom=retrieved)@{1,3}", "nDCG(ideal=retrieved)@10",
                            "nDCG(gain=exp,ideal=retrieved)@10", "Judged(denom=retrieved)@10", "P(denom=k)@5",
                            "nDCG(ideal=qrels)@10"};
  got = names_of(variants, sizeof variants / sizeof *variants);
  cr_expect_str_eq(got, "P(denom=retrieved)@5 P(rel=2,denom=retrieved)@1 P(rel=2,denom=retrieved)@3 "
                        "nDCG(ideal=retrieved)@10 nDCG(gain=exp,ideal=retrieved)@10 Judged(denom=retrieved)@10 P@5 "
                        "nDCG@10");
  free(got);
  const struct { const char *name, *msg; } bad[] = {
      {"R(denom=retrieved)@5", "denom= is a parameter of P and Judged, not of R"},
      {"P(ideal=retrieved)@5", "ideal= is a parameter of nDCG, not of P"},
      {"P(denom=all)@5", "denom= expects k or retrieved, found 'all'"},
      {"nDCG(ideal=retrieved)", "the retrieved variant needs a cutoff"},
      {"nDCG(dcg=exp)@5", "dcg= expects log2 or exp-log2"},
      {"nDCG(judged_only=True)@5", "judged_only=True is not supported"},
      {"nDCG(dcg=log2,foo=1)@5", "unknown parameter 'foo' (expected rel, gain, dcg or ideal)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    const char *one[] = {bad[i].name};
    char *msg = names_of(one, 1);
    cr_expect(strstr(msg, bad[i].msg), "%s: %s", bad[i].name, msg);
    free(msg);
  }
}

/* trec_eval mode names the trec_eval spelling of an ir_measures name. */
Test(named_measures, trec_eval_spelling_of_ir_measures_names)
{
  const struct { const char *name, *want; } ok[] = {
      {"nDCG@10", "-m ndcg_cut.10"},  {"nDCG@{5,10}", "-m ndcg_cut.5,10"}, {"P(rel=2)@5", "-l 2 -m P.5"},
      {"RR@10", "-M 10 -m recip_rank"}, {"AP", "-m map"},                  {"AP@100", "-m map_cut.100"},
      {"hit_rate@5", "-m success.5"}, {"recall@20", "-m recall.20"},       {"NumRelRet", "-m num_rel_ret"},
  };
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    char buf[128] = "";
    cr_expect(rs__spec_trec_spelling(ok[i].name, buf, sizeof buf), "%s: no spelling", ok[i].name);
    cr_expect_str_eq(buf, ok[i].want, "%s", ok[i].name);
  }
  const char *none[] = {"nDCG(gain=exp)@10", "F1@5", "Judged@10", "P(denom=retrieved)@5", "Foo@3", "DCG@5"};
  for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
    char buf[128] = "";
    cr_expect(!rs__spec_trec_spelling(none[i], buf, sizeof buf), "%s: got '%s'", none[i], buf);
  }
  char *argv[] = {(char *)th_bin(), "trec_eval", "-m", "nDCG@10", "/dev/null", "/dev/null", NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "'nDCG@10' is an ir_measures name: trec_eval spells it '-m ndcg_cut.10'"), "%s", r.err);
  th_free(&r);
}

/* The named measures read the very slot of the kernel value they reuse. */
Test(named_measures, share_the_kernel_slot)
{
  const char *a[] = {"AnswerPresence@5", "Success@5", "Accuracy(rel=2)@3", "P(rel=2)@3"};
  rs__spec *s = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__spec_build(a, 4, 100, &s, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(s->n_out, 4);
  cr_expect(s->req[0].plan == s->req[1].plan && s->req[0].slot == s->req[1].slot && s->req[0].kind == RS_REQ_PLAN);
  cr_expect(s->req[2].plan == s->req[3].plan && s->req[2].slot == s->req[3].slot && s->req[2].kind == RS_REQ_PLAN);
  cr_expect(s->req[0].plan != s->req[2].plan, "rel=2 is its own plan");
  rs__spec_free(s);
}

/* --- end to end on an imported corpus --------------------------------------------- */

/* q1 ranks X (unjudged), A (2), B (1); q2 ranks C (1), Y (unjudged);
 * q3 ranks D (0), Z (unjudged), E (1).
 *   Success@1 = AnswerPresence@1: q1 0, q2 1, q3 0 -> 1/3
 *   Success@2: 1, 1, 0 -> 2/3;  Success@3: 1, 1, 1 -> 1
 *   P@3 = Accuracy@3: q1 2/3, q2 1/3 (2 docs, divided by 3), q3 1/3 -> 4/9
 *   AnswerPresence(rel=2)@2: q1 1 (A at 2), q2 0, q3 0 -> 1/3
 *   Accuracy(rel=2)@3: q1 1/3, 0, 0 -> 1/9 */
#define QRELS "q1 0 A 2\nq1 0 B 1\nq2 0 C 1\nq3 0 D 0\nq3 0 E 1\n"
#define RUN                                                                                                      \
  "q1 Q0 X 1 3 s\nq1 Q0 A 2 2 s\nq1 Q0 B 3 1 s\nq2 Q0 C 1 2 s\nq2 Q0 Y 2 1 s\nq3 Q0 D 1 3 s\nq3 Q0 Z 2 2 s\n" \
  "q3 Q0 E 3 1 s\n"

typedef struct {
  char dir[64];
} tmpdir;

static void tpath(const tmpdir *t, const char *name, char *out, size_t n) { snprintf(out, n, "%s/%s", t->dir, name); }

static void write_file(const char *path, const char *text)
{
  FILE *f = fopen(path, "wb");
  cr_assert(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

static void remove_tree(const tmpdir *t)
{
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->dir);
  cr_expect_eq(system(cmd), 0);
}

/* The value text of `run,measure,` in a CSV whose lines end in
 * measure,base,cutoff,value,queries (aggregate.csv) or that of
 * run,query,measure,base,cutoff,value. */
static char *value_of(const char *csv, const char *prefix, const char *measure)
{
  static char val[64];
  char *text = th_slurp(csv, NULL), key[256];
  cr_assert(text, "cannot read %s", csv);
  snprintf(key, sizeof key, "\n%s,%s,", prefix, measure);
  char *p = strstr(text, key);
  cr_assert(p, "%s: no line %s,%s", csv, prefix, measure);
  p += strlen(key);
  p = strchr(strchr(p, ',') + 1, ',') + 1; /* base, cutoff */
  size_t n = strcspn(p, ",\n"); /* aggregate.csv's query policy column follows */
  cr_assert(n < sizeof val);
  memcpy(val, p, n);
  val[n] = '\0';
  free(text);
  return val;
}

Test(named_measures, eval_writes_names_with_kernel_values, .timeout = 60)
{
  tmpdir t = {"/tmp/ragsweep-names-XXXXXX"};
  cr_assert(mkdtemp(t.dir));
  char qrels[128], run[128], corpus[128], out[128], runarg[160], path[160];
  tpath(&t, "qrels.txt", qrels, sizeof qrels);
  tpath(&t, "run.txt", run, sizeof run);
  tpath(&t, "c.h5", corpus, sizeof corpus);
  tpath(&t, "out", out, sizeof out);
  write_file(qrels, QRELS);
  write_file(run, RUN);
  snprintf(runarg, sizeof runarg, "sys=%s", run);
  char *imp[] = {(char *)th_bin(), "import", "-o", corpus, "--qrels", qrels, runarg, NULL};
  th_result r = th_run(NULL, imp, NULL, NULL);
  cr_assert_eq(r.status, 0, "import: %s", r.err);
  th_free(&r);

  char *ev[] = {(char *)th_bin(), "eval", corpus, "-o", out, "--per-query", "--worst", "1",
                "-m", "AnswerPresence@{1,2,3}", "-m", "Accuracy@3", "-m", "AnswerPresence(rel=2)@2",
                "-m", "Accuracy(rel=2)@3", "-m", "Success@{1,2,3}", "-m", "P@3", "-m", "Success(rel=2)@2",
                "-m", "P(rel=2)@3",
                "--gate", "AnswerPresence@2>=0.5", "--gate", "Accuracy@3<0.4", NULL};
  r = th_run(NULL, ev, NULL, NULL);
  cr_assert_eq(r.status, 3, "the Accuracy gate fails (4/9 >= 0.4): exit 3; got %d: %s", r.status, r.err);
  cr_expect(strstr(r.out, "ranked by AnswerPresence@1"), "leaderboard: %s", r.out);
  cr_expect(strstr(r.out, "Accuracy@3"), "gate lines: %s", r.out);

  tpath(&t, "out/aggregate.csv", path, sizeof path);
  const struct { const char *named, *kernel, *want; } same[] = {
      {"AnswerPresence@1", "Success@1", "0.3333333333333333"},
      {"AnswerPresence@2", "Success@2", "0.6666666666666666"},
      {"AnswerPresence@3", "Success@3", "1"},
      {"Accuracy@3", "P@3", "0.4444444444444444"},
      {"AnswerPresence(rel=2)@2", "Success(rel=2)@2", "0.3333333333333333"},
      {"Accuracy(rel=2)@3", "P(rel=2)@3", "0.1111111111111111"},
  };
  for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
    char named[64];
    snprintf(named, sizeof named, "%s", value_of(path, "sys", same[i].named));
    cr_expect_str_eq(named, same[i].want, "%s", same[i].named);
    cr_expect_str_eq(value_of(path, "sys", same[i].kernel), named, "%s vs %s", same[i].named, same[i].kernel);
  }
  tpath(&t, "out/per_query.csv", path, sizeof path);
  cr_expect_str_eq(value_of(path, "sys,q1", "AnswerPresence@1"), "0");
  cr_expect_str_eq(value_of(path, "sys,q2", "AnswerPresence@1"), "1");
  cr_expect_str_eq(value_of(path, "sys,q1", "Accuracy@3"), "0.6666666666666666");
  cr_expect_str_eq(value_of(path, "sys,q3", "Accuracy@3"), "0.3333333333333333");

  tpath(&t, "out/gates.csv", path, sizeof path);
  char *gates = th_slurp(path, NULL);
  cr_assert(gates, "%s", path);
  cr_expect(strstr(gates, "sys,AnswerPresence@2 >= 0.5,AnswerPresence@2,>=,0.5,0.6666666666666666,true\n"), "%s",
            gates);
  cr_expect(strstr(gates, "sys,Accuracy@3 < 0.4,Accuracy@3,<,0.4,0.4444444444444444,false\n"), "%s", gates);
  free(gates);
  tpath(&t, "out/worst.csv", path, sizeof path);
  char *worst = th_slurp(path, NULL);
  cr_assert(worst, "%s", path);
  cr_expect(strstr(worst, "sys,worst,AnswerPresence@1,1,"), "%s", worst);
  cr_expect(strstr(worst, "sys,worst,Accuracy@3,1,"), "%s", worst);
  free(worst);
  th_free(&r);
  remove_tree(&t);
}
