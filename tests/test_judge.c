/* test_judge.c: `ragsweep judge` end to end against real server processes on
 * 127.0.0.1: scripts/judge_server.py (a deterministic assessor) for the
 * 3-run x 200-query sweep, kill -9 and resume, and the cache alone; the
 * scripted stub (tests/llm_stub.py) for failures, fatal errors, budgets,
 * samples, dry runs, secrets and agreement figures worked out by hand.
 * Also `eval --qrels` on the LLM's qrels. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "llm_helpers.h"

/* ---- small helpers ---------------------------------------------------------- */

static char *tmpdir(void)
{
  char *d = strdup("/tmp/rs-judge-XXXXXX");
  cr_assert(mkdtemp(d));
  th_note_dir(d);
  return d;
}

static void put_file(const char *dir, const char *name, const char *text)
{
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

static char *get_file(const char *dir, const char *name)
{
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return th_slurp(path, NULL);
}

static int file_exists(const char *dir, const char *name)
{
  char path[512];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return stat(path, &st) == 0;
}

/* The value after "label" in the summary, e.g. count_after(out, "requests ") */
static long count_after(const char *text, const char *label)
{
  const char *p = strstr(text, label);
  cr_assert(p, "'%s' not in:\n%s", label, text);
  return strtol(p + strlen(label), NULL, 10);
}

static long lines_of(const char *text)
{
  long n = 0;
  for (const char *p = text; *p; p++) n += *p == '\n';
  return n;
}

/* agreement.csv's value of a statistic ("" when empty); NULL when absent. */
static char *stat_value(const char *csv, const char *name, char *buf, size_t cap)
{
  char key[96];
  snprintf(key, sizeof key, "\n%s,", name);
  const char *p = strstr(csv, key);
  if (!p) return NULL;
  p += strlen(key);
  size_t n = strcspn(p, "\n");
  if (n >= cap) n = cap - 1;
  memcpy(buf, p, n);
  buf[n] = '\0';
  return buf;
}

/* ---- the deterministic judging server (scripts/judge_server.py) --------------- */

typedef struct {
  pid_t pid;
  char url[64];
} jserver;

static void jserver_start(jserver *s, const char *dir, const char *delay)
{
  char port_file[512], answers[512];
  snprintf(port_file, sizeof port_file, "%s/server.port", dir);
  snprintf(answers, sizeof answers, "%s/answers.tsv", dir);
  unlink(port_file);
  s->pid = fork();
  cr_assert(s->pid >= 0);
  if (s->pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    execl("/usr/bin/python3", "python3", "scripts/judge_server.py", "--answers", answers, "--port", "0",
          "--port-file", port_file, "--delay", delay, "--max-seconds", "120", (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 200; i++) { /* at most 10 s */
    char *p = th_slurp(port_file, NULL);
    if (p) {
      snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d/v1", atoi(p));
      free(p);
      return;
    }
    usleep(50000);
  }
  kill(s->pid, SIGKILL);
  cr_assert_fail("scripts/judge_server.py did not start");
}

static void jserver_stop(jserver *s)
{
  if (s->pid <= 0) return;
  kill(s->pid, SIGTERM);
  for (int i = 0; i < 60; i++) { /* at most 3 s */
    if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
      s->pid = 0;
      return;
    }
    usleep(50000);
  }
  kill(s->pid, SIGKILL);
  waitpid(s->pid, NULL, 0);
  s->pid = 0;
}

/* ---- the 200-query demo sweep ----------------------------------------------- */

static char *demo_data(void)
{
  char *dir = tmpdir();
  char *argv[] = {"/usr/bin/python3", "scripts/judge_demo_data.py", dir, "--queries", "200", NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(r.status, 0, "judge_demo_data.py: %s", r.err);
  th_free(&r);
  return dir;
}

/* id<TAB>text files as parallel arrays (small files only). */
typedef struct {
  char **id, **text;
  size_t n;
} tsv;

static tsv read_tsv(const char *dir, const char *name)
{
  tsv t = {0};
  char *s = get_file(dir, name);
  cr_assert(s);
  size_t cap = lines_of(s) + 1;
  t.id = calloc(cap, sizeof *t.id), t.text = calloc(cap, sizeof *t.text);
  for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
    char *tab = strchr(line, '\t');
    cr_assert(tab);
    *tab = '\0';
    t.id[t.n] = strdup(line), t.text[t.n] = strdup(tab + 1), t.n++;
  }
  free(s);
  return t;
}

static void tsv_free(tsv *t)
{
  for (size_t i = 0; i < t->n; i++) free(t->id[i]), free(t->text[i]);
  free(t->id), free(t->text);
}

static const char *tsv_get(const tsv *t, const char *id)
{
  for (size_t i = 0; i < t->n; i++)
    if (strcmp(t->id[i], id) == 0) return t->text[i];
  return NULL;
}

/* Distinct (query, doc) pairs in the top 10 of the three TREC runs (written
 * in rank order): the count judge must find. */
static long expected_pairs(const char *dir)
{
  static const char *const runs[] = {"bm25.txt", "dense.txt", "hybrid.txt"};
  char **seen = NULL;
  size_t n = 0, cap = 0;
  for (int r = 0; r < 3; r++) {
    char *s = get_file(dir, runs[r]);
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
      char q[32], d[32], name[32];
      int rank;
      double score;
      cr_assert_eq(sscanf(line, "%31s Q0 %31s %d %lf %31s", q, d, &rank, &score, name), 5);
      if (rank > 10) continue;
      char key[80];
      snprintf(key, sizeof key, "%s %s", q, d);
      size_t i = 0;
      while (i < n && strcmp(seen[i], key) != 0) i++;
      if (i < n) continue;
      if (n == cap) cap = cap ? 2 * cap : 1024, seen = realloc(seen, cap * sizeof *seen);
      seen[n++] = strdup(key);
    }
    free(s);
  }
  for (size_t i = 0; i < n; i++) free(seen[i]);
  free(seen);
  return (long)n;
}

/* Every label of the LLM's qrels is the truth: 1 exactly when the passage
 * contains the query's answer string. */
static void check_labels(const char *data, const char *qrels)
{
  tsv queries = read_tsv(data, "queries.tsv"), docs = read_tsv(data, "docs.tsv"), answers = read_tsv(data, "answers.tsv");
  char *s = strdup(qrels);
  long ones = 0;
  for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
    char q[32], d[32];
    int label;
    cr_assert_eq(sscanf(line, "%31s 0 %31s %d", q, d, &label), 3, "%s", line);
    const char *answer = tsv_get(&answers, tsv_get(&queries, q));
    const int truth = strstr(tsv_get(&docs, d), answer) != NULL;
    cr_expect_eq(label, truth, "%s", line);
    ones += label;
  }
  cr_expect_gt(ones, 150, "most answers are in some run's top 10");
  free(s);
  tsv_free(&queries), tsv_free(&docs), tsv_free(&answers);
}

Test(judge, sweep_kill_resume_and_cache_only, .timeout = 240)
{
  char *data = demo_data();
  char corpus[512], out_a[512], out_b[512], qrels_path[512];
  snprintf(corpus, sizeof corpus, "%s/corpus.h5", data);
  snprintf(out_a, sizeof out_a, "%s/a", data);
  snprintf(out_b, sizeof out_b, "%s/b", data);
  jserver srv;
  jserver_start(&srv, data, "0");

  /* The uninterrupted run. */
  th_result a = th_rs_at(NULL, NULL, "judge", corpus, "-o", out_a, "--model", "demo", "--base-url", srv.url, "--concurrency", "8",
                   NULL);
  cr_assert_eq(a.status, 0, "%s%s", a.out, a.err);
  const long pairs = expected_pairs(data);
  cr_expect_eq(count_after(a.out, "retrieved, "), pairs, "%s", a.out);
  cr_expect_eq(count_after(a.out, "depth 10: "), 3 * 200 * 10, "3 runs x 200 queries x top 10 retrieved");
  cr_expect_eq(count_after(a.out, "requests "), pairs);
  cr_expect(strstr(a.out, "0 cache hits") != NULL, "%s", a.out);
  char *qrels_a = get_file(out_a, "qrels.txt");
  cr_assert(qrels_a);
  cr_expect_eq(lines_of(qrels_a), pairs, "every pair judged");
  check_labels(data, qrels_a);
  /* The server is a perfect assessor, and the people's qrels are right. */
  char *agree = get_file(out_a, "agreement.csv"), buf[64];
  cr_assert(agree);
  cr_expect_str_eq(stat_value(agree, "agreement", buf, sizeof buf), "1");
  cr_expect_str_eq(stat_value(agree, "kappa", buf, sizeof buf), "1");
  cr_expect_str_eq(stat_value(agree, "confusion_h1_l0", buf, sizeof buf), "0");
  cr_expect_str_eq(stat_value(agree, "confusion_h0_l1", buf, sizeof buf), "0");
  cr_expect_str_eq(stat_value(agree, "tau_nDCG@10", buf, sizeof buf), "1");
  free(agree);
  th_free(&a);

  /* Killed with SIGKILL part way, then resumed. */
  jserver_stop(&srv);
  jserver_start(&srv, data, "0.004");
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    int null = open("/dev/null", 1);
    dup2(null, 1), dup2(null, 2);
    execl(th_bin(), th_bin(), "judge", corpus, "-o", out_b, "--model", "demo", "--base-url", srv.url, "--concurrency",
          "2", "--quiet", (char *)NULL);
    _exit(127);
  }
  char cache_b[600];
  snprintf(cache_b, sizeof cache_b, "%s/cache.sqlite", out_b);
  /* Killed once some replies are in the cache: polled rather than a fixed
   * sleep, since a loaded machine (or ASan) can take seconds to start. */
  long kept = 0;
  for (int i = 0; i < 300 && kept == 0; i++) {
    usleep(100000);
    cr_assert_eq(waitpid(pid, NULL, WNOHANG), 0, "the first run ended before it was killed");
    if (!file_exists(out_b, "cache.sqlite")) continue;
    th_result poll = th_rs_at(NULL, NULL, "cache", "stats", cache_b, NULL);
    if (poll.status == 0) kept = count_after(poll.out, ": ");
    th_free(&poll);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  cr_expect(!file_exists(out_b, "qrels.txt"), "no output of the killed run");
  th_result stats = th_rs_at(NULL, NULL, "cache", "stats", cache_b, NULL);
  cr_assert_eq(stats.status, 0, "%s", stats.err);
  kept = count_after(stats.out, ": ");
  cr_expect_gt(kept, 0);
  cr_expect_lt(kept, pairs);
  th_free(&stats);
  th_result b = th_rs_at(NULL, NULL, "judge", corpus, "-o", out_b, "--model", "demo", "--base-url", srv.url, "--concurrency", "8",
                   NULL);
  cr_assert_eq(b.status, 0, "%s%s", b.out, b.err);
  const char *req = strstr(b.out, "requests ");
  cr_assert(req, "%s", b.out);
  cr_expect_eq(count_after(req, "requests "), pairs, "%s", b.out);
  cr_expect_eq(count_after(req, "sent, "), kept, "every reply stored before the kill is reused: %s", b.out);
  cr_expect_eq(count_after(req, ": "), pairs - kept, "only the missing requests are sent: %s", b.out);
  char *qrels_b = get_file(out_b, "qrels.txt");
  cr_expect_str_eq(qrels_b, qrels_a, "the resumed run's qrels equal the uninterrupted run's, byte for byte");
  th_free(&b);

  /* The server gone: the cache alone completes the same command. */
  jserver_stop(&srv);
  th_result c = th_rs_at(NULL, NULL, "judge", corpus, "-o", out_b, "--model", "demo", "--base-url", srv.url, NULL);
  cr_assert_eq(c.status, 0, "%s%s", c.out, c.err);
  cr_expect(strstr(c.out, ": 0 sent, ") != NULL, "%s", c.out);
  char *qrels_c = get_file(out_b, "qrels.txt");
  cr_expect_str_eq(qrels_c, qrels_a);
  th_free(&c);

  /* eval scores with the LLM's qrels: every query judged now. */
  snprintf(qrels_path, sizeof qrels_path, "%s/qrels.txt", out_a);
  th_result e = th_rs_at(NULL, NULL, "eval", corpus, "--qrels", qrels_path, "-o", out_a, "-m", "AnswerPresence@10", "-m",
                   "Accuracy@5", "--top", "0", NULL);
  cr_assert_eq(e.status, 0, "%s", e.err);
  char *agg = get_file(out_a, "aggregate.csv");
  cr_expect(strstr(agg, ",AnswerPresence@10,") != NULL, "%s", agg);
  cr_expect(strstr(agg, "hybrid,hybrid,num_q,num_q,,200,ranked\n") != NULL, "all 200 queries judged by the LLM: %s", agg);
  free(agg);
  th_free(&e);
  free(qrels_a), free(qrels_b), free(qrels_c);
  free(data);
}

/* ---- a hand-made corpus and the scripted stub ---------------------------------- */

/* q1 judges d1..d4 (grades 1, 0, 2, 0), q2 judges d5 (1) only; two runs.
 * The passages with "alpha" are the ones the stub's rules call relevant. */
static char *tiny_corpus(void)
{
  char *dir = tmpdir();
  put_file(dir, "qrels.txt", "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq1 0 d4 0\nq2 0 d5 1\n");
  put_file(dir, "A.txt", "q1 Q0 d1 1 4 A\nq1 Q0 d2 2 3 A\nq1 Q0 d3 3 2 A\nq1 Q0 d4 4 1 A\n"
                         "q2 Q0 d5 1 2 A\nq2 Q0 d6 2 1 A\n");
  put_file(dir, "B.txt", "q1 Q0 d4 1 4 B\nq1 Q0 d2 2 3 B\nq1 Q0 d3 3 2 B\nq1 Q0 d1 4 1 B\n"
                         "q2 Q0 d6 1 2 B\nq2 Q0 d5 2 1 B\n");
  put_file(dir, "queries.tsv", "q1\twhat is alpha?\nq2\twhere is alpha?\n");
  put_file(dir, "docs.tsv", "d1\talpha one\nd2\tbeta two\nd3\tgamma three\nd4\talpha four\nd5\talpha five\n"
                            "d6\tdelta six\n");
  char corpus[512], q[512], d[512], qr[512], a[512], b[512];
  snprintf(corpus, sizeof corpus, "%s/corpus.h5", dir);
  snprintf(q, sizeof q, "%s/queries.tsv", dir);
  snprintf(d, sizeof d, "%s/docs.tsv", dir);
  snprintf(qr, sizeof qr, "%s/qrels.txt", dir);
  snprintf(a, sizeof a, "A=%s/A.txt", dir);
  snprintf(b, sizeof b, "B=%s/B.txt", dir);
  th_result r = th_rs_at(NULL, NULL, "import", "-o", corpus, "--qrels", qr, "--queries", q, "--docs", d, a, b, NULL);
  cr_assert_eq(r.status, 0, "import: %s", r.err);
  th_free(&r);
  return dir;
}

#define ALPHA_RULES "{\"rules\": [{\"match\": \"Passage: alpha\", \"behaviour\": {\"content\": \"YES\"}}], " \
                    "\"default\": {\"content\": \"NO\"}}"

Test(judge, agreement_by_hand, .timeout = 60)
{
  char *dir = tiny_corpus();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, ALPHA_RULES, 60), 0);
  char corpus[512], out[512];
  snprintf(corpus, sizeof corpus, "%s/corpus.h5", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  th_result r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--base-url", stub.url, NULL);
  cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
  th_free(&r);
  /* LLM: d1 1, d2 0, d3 0, d4 1, d5 1, d6 0; sorted by query, then doc id. */
  char *qrels = get_file(out, "qrels.txt");
  cr_expect_str_eq(qrels, "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 0\nq1 0 d4 1\nq2 0 d5 1\nq2 0 d6 0\n");
  /* Five pairs have human grades: h = (1, 0, 2, 0, 1), l = (1, 0, 0, 1, 1).
   * Binary h >= 1: (1, 0, 1, 0, 1) vs (1, 0, 0, 1, 1): 3 of 5 agree.
   * kappa: po = 3/5, p(h=1) = 3/5, p(l=1) = 3/5, pe = 9/25 + 4/25 = 13/25,
   *        (15/25 - 13/25) / (12/25) = 1/6.
   * Linear weighted kappa over grades 0..2: rows h, columns l,
   *   O: (0,0) 1 [d2], (0,1) 1 [d4], (1,1) 2 [d1, d5], (2,0) 1 [d3]
   *   row sums r = (2, 2, 1), column sums c = (2, 3, 0), n = 5
   *   sum |i-j| O = 1 + 2 = 3
   *   sum |i-j| r_i c_j / n = (2*3 + 2*2 + 1*2*2 + 1*1*3) / 5 = (6 + 4 + 4 + 3) / 5 = 17/5
   *   1 - 3 / (17/5) = 1 - 15/17 = 2/17.
   * System order: nDCG@10 under the people's qrels, A: q1 (1 + 2/log2 4) /
   * ideal (2 + 1/log2 3), q2 1; B: q1 (2/log2 4 + 1/log2 5) / ideal, q2
   * 1/log2 3: A > B.  Under the LLM's: q1 both (1 + 1/log2 5) / ideal, q2 A 1,
   * B 1/log2 3: A > B.  tau = 1.  Success@10 is 1 everywhere: tau undefined. */
  char *agree = get_file(out, "agreement.csv"), buf[64];
  cr_assert(agree);
  cr_expect_str_eq(stat_value(agree, "pairs", buf, sizeof buf), "5");
  cr_expect_str_eq(stat_value(agree, "agreement", buf, sizeof buf), "0.6");
  cr_expect_float_eq(strtod(stat_value(agree, "kappa", buf, sizeof buf), NULL), 1.0 / 6.0, 1e-15);
  cr_expect_float_eq(strtod(stat_value(agree, "weighted_kappa", buf, sizeof buf), NULL), 2.0 / 17.0, 1e-15);
  cr_expect_str_eq(stat_value(agree, "confusion_h0_l0", buf, sizeof buf), "1");
  cr_expect_str_eq(stat_value(agree, "confusion_h0_l1", buf, sizeof buf), "1");
  cr_expect_str_eq(stat_value(agree, "confusion_h1_l1", buf, sizeof buf), "2");
  cr_expect_str_eq(stat_value(agree, "confusion_h2_l0", buf, sizeof buf), "1");
  cr_expect_str_eq(stat_value(agree, "confusion_h2_l1", buf, sizeof buf), "0");
  cr_expect_str_eq(stat_value(agree, "tau_nDCG@10", buf, sizeof buf), "1");
  cr_expect_str_eq(stat_value(agree, "tau_Success@10", buf, sizeof buf), "");
  free(agree);

  /* judgments.jsonl: one line per pair with the keys scripts read. */
  char *jl = get_file(out, "judgments.jsonl");
  cr_expect_eq(lines_of(jl), 6);
  json_object *first = json_tokener_parse(jl);
  cr_assert(first);
  cr_expect_str_eq(json_object_get_string(json_object_object_get(first, "query_id")), "q1");
  cr_expect_str_eq(json_object_get_string(json_object_object_get(first, "doc_id")), "d1");
  cr_expect_eq(json_object_get_int(json_object_object_get(first, "label")), 1);
  cr_expect_str_eq(json_object_get_string(json_object_object_get(first, "reply")), "YES");
  cr_expect_str_eq(json_object_get_string(json_object_object_get(first, "status")), "ok");
  cr_expect_eq(json_object_get_int(json_object_object_get(first, "prompt_tokens")), 10);
  cr_expect_eq(json_object_get_int(json_object_object_get(first, "completion_tokens")), 1);
  cr_expect(json_object_object_get_ex(first, "latency_ms", NULL));
  cr_expect_eq(json_object_get_boolean(json_object_object_get(first, "cached")), 0);
  json_object_put(first);
  free(jl);

  /* The requests: model, messages, temperature 0, JSON content type. */
  json_object *log = llm_stub_log(&stub);
  cr_expect_eq(json_object_array_length(log), 6, "each pair asked once");
  json_object *rec = json_object_array_get_idx(log, 0), *body = json_object_object_get(rec, "body");
  cr_expect_str_eq(llm_str(rec, "path"), "/v1/chat/completions");
  cr_expect_str_eq(llm_str(rec, "content_type"), "application/json");
  cr_expect_null(llm_str(rec, "authorization"), "no key, no Authorization header");
  cr_expect_str_eq(llm_str(body, "model"), "m");
  cr_expect_eq(json_object_get_double(json_object_object_get(body, "temperature")), 0.0);
  cr_expect(json_object_object_get_ex(body, "temperature", NULL), "temperature is always sent");
  json_object *msgs = json_object_object_get(body, "messages");
  cr_expect_eq(json_object_array_length(msgs), 2);
  cr_expect_str_eq(llm_str(json_object_array_get_idx(msgs, 0), "role"), "system");
  cr_expect_str_eq(llm_str(json_object_array_get_idx(msgs, 1), "role"), "user");
  json_object_put(log);

  /* eval --qrels: nDCG@10 of run A from the LLM's labels, by the formula. */
  char qrels_path[600];
  snprintf(qrels_path, sizeof qrels_path, "%s/qrels.txt", out);
  th_result e = th_rs_at(NULL, NULL, "eval", corpus, "--qrels", qrels_path, "-o", out, "-m", "nDCG@10", "--top", "0", NULL);
  cr_assert_eq(e.status, 0, "%s", e.err);
  char *agg = get_file(out, "aggregate.csv");
  const double ideal = 1.0 + 1.0 / log2(3.0), q1 = (1.0 + 1.0 / log2(5.0)) / ideal;
  char want[256];
  snprintf(want, sizeof want, "A,nDCG@10,nDCG,10,%.17g\n", (q1 + 1.0) / 2.0);
  cr_expect(strstr(agg, want) != NULL || fabs(strtod(strstr(agg, "A,nDCG@10,nDCG,10,") + 18, NULL) - (q1 + 1.0) / 2.0) < 1e-15,
            "%s", agg);
  free(agg);
  th_free(&e);
  /* An id the corpus does not know is an error that names it. */
  put_file(dir, "bad_qrels.txt", "q1 0 d1 1\nq1 0 d99 1\n");
  char bad[600];
  snprintf(bad, sizeof bad, "%s/bad_qrels.txt", dir);
  e = th_rs_at(NULL, NULL, "eval", corpus, "--qrels", bad, "-o", out, NULL);
  cr_expect_eq(e.status, 2);
  cr_expect(strstr(e.err, "d99") != NULL && strstr(e.err, "bad_qrels.txt:2") != NULL, "%s", e.err);
  th_free(&e);
  free(qrels);
  llm_stub_stop(&stub);
  free(dir);
}

Test(judge, failures_are_not_labels, .timeout = 60)
{
  char *dir = tiny_corpus();
  /* "alpha" passages get a reply without a label, "gamma" a truncated one */
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub,
                              "{\"rules\": [{\"match\": \"Passage: alpha\", \"behaviour\": {\"content\": \"Perhaps.\"}},"
                              " {\"match\": \"Passage: gamma\", \"behaviour\": {\"content\": \"Y\", \"finish_reason\": \"length\"}}],"
                              " \"default\": {\"content\": \"NO\"}}",
                              60),
               0);
  char corpus[512], out[512];
  snprintf(corpus, sizeof corpus, "%s/corpus.h5", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  th_result r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--base-url", stub.url, NULL);
  cr_expect_eq(r.status, 2, "4 of 6 pairs failed, more than 1%%: %s%s", r.out, r.err);
  cr_expect(strstr(r.err, "4 of 6 pairs") != NULL, "%s", r.err);
  cr_expect(strstr(r.out, "failures 4 (3 unparsed, 1 truncated") != NULL, "%s", r.out);
  th_free(&r);
  /* Everything is still written: the failures are out of the qrels. */
  char *qrels = get_file(out, "qrels.txt");
  cr_expect_str_eq(qrels, "q1 0 d2 0\nq2 0 d6 0\n");
  char *jl = get_file(out, "judgments.jsonl");
  cr_expect(strstr(jl, "\"doc_id\":\"d1\",\"label\":null,\"reply\":\"Perhaps.\",\"status\":\"unparsed\"") != NULL, "%s",
            jl);
  cr_expect(strstr(jl, "\"doc_id\":\"d3\",\"label\":null,\"reply\":\"Y\",\"status\":\"truncated\"") != NULL, "%s", jl);
  free(qrels), free(jl);
  /* Allowed failures: exit 0, from the cache (nothing sent again). */
  r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--base-url", stub.url, "--max-failures", "70%", NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_expect(strstr(r.out, ": 0 sent, 6 cache hits") != NULL, "%s", r.out);
  th_free(&r);
  json_object *log = llm_stub_log(&stub);
  cr_expect_eq(json_object_array_length(log), 6);
  json_object_put(log);
  llm_stub_stop(&stub);
  free(dir);
}

/* A 401 stops at once with the server's message; the key never appears in
 * any output, message or cache. */
Test(judge, fatal_error_and_secret, .timeout = 60)
{
  char *dir = tiny_corpus();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub,
                              "{\"default\": {\"status\": 401, \"error_message\": \"Incorrect API key provided: sk-test-****4242.\","
                              " \"error_type\": \"invalid_request_error\", \"error_code\": \"invalid_api_key\"}}",
                              60),
               0);
  char corpus[512], out[512];
  snprintf(corpus, sizeof corpus, "%s/corpus.h5", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  char *env[] = {"OPENAI_API_KEY=sk-test-SECRET-4242", NULL};
  th_result r = th_rs_at(NULL, env, "judge", corpus, "-o", out, "--model", "m", "--base-url", stub.url, "--concurrency", "1", NULL);
  cr_expect_eq(r.status, 2, "%s%s", r.out, r.err);
  cr_expect(strstr(r.err, "Incorrect API key provided") != NULL, "%s", r.err);
  cr_expect(strstr(r.err, "401") != NULL, "%s", r.err);
  cr_expect(!strstr(r.err, "SECRET") && !strstr(r.out, "SECRET"));
  cr_expect(!strstr(r.err, "4242") && strstr(r.err, "provided: [key]"), "a key quoted back is masked: %s", r.err);
  json_object *log = llm_stub_log(&stub);
  cr_expect_eq(json_object_array_length(log), 1, "no retry, and no other request after a 401");
  cr_expect_str_eq(llm_str(json_object_array_get_idx(log, 0), "authorization"), "Bearer sk-test-SECRET-4242");
  json_object_put(log);
  th_free(&r);
  static const char *const files[] = {"qrels.txt", "judgments.jsonl", "cache.sqlite", "cache.sqlite-wal"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", out, files[i]);
    size_t n = 0;
    char *s = th_slurp(path, &n);
    if (!s) continue;
    cr_expect(!memmem(s, n, "SECRET", 6), "the key is in %s", files[i]);
    free(s);
  }
  char *jl = get_file(out, "judgments.jsonl");
  cr_expect(strstr(jl, "\"status\":\"http_error\"") && strstr(jl, "\"status\":\"not_sent\""), "%s", jl);
  free(jl);
  llm_stub_stop(&stub);

  /* 429 insufficient_quota: the same, no retry */
  cr_assert_eq(llm_stub_start(&stub,
                              "{\"default\": {\"status\": 429, \"error_message\": \"You exceeded your current quota\","
                              " \"error_type\": \"insufficient_quota\", \"error_code\": \"insufficient_quota\"}}",
                              60),
               0);
  r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--base-url", stub.url, "--concurrency", "1", NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "exceeded your current quota") != NULL, "%s", r.err);
  log = llm_stub_log(&stub);
  cr_expect_eq(json_object_array_length(log), 1);
  json_object_put(log);
  th_free(&r);
  llm_stub_stop(&stub);
  free(dir);
}

/* The dry run sends nothing and estimates what the real run sends. */
Test(judge, dry_run_and_budget, .timeout = 60)
{
  char *dir = tiny_corpus();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, ALPHA_RULES, 60), 0);
  char corpus[512], out[512];
  snprintf(corpus, sizeof corpus, "%s/corpus.h5", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  th_result r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--base-url", stub.url, "--dry-run", "--price-in",
                   "2", "--price-out", "8", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "6 distinct pairs") != NULL, "%s", r.out);
  cr_expect(strstr(r.out, "requests 6: 0 cached, 6 to send") != NULL, "%s", r.out);
  const long est_prompt = count_after(r.out, "estimated tokens to send: ");
  th_free(&r);
  json_object *log = llm_stub_log(&stub);
  cr_expect_eq(json_object_array_length(log), 0, "a dry run sends nothing");
  json_object_put(log);
  cr_expect(!file_exists(dir, "out"), "a dry run creates nothing, not even the folder or the cache");
  /* The estimate is 4 bytes a token + 8 per request, over the bodies sent. */
  r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--base-url", stub.url, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  log = llm_stub_log(&stub);
  long want = 0;
  for (size_t i = 0; i < json_object_array_length(log); i++)
    want += ((long)strlen(llm_str(json_object_array_get_idx(log, i), "raw")) + 3) / 4 + 8;
  json_object_put(log);
  cr_expect_eq(est_prompt, want);
  r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--base-url", stub.url, "--dry-run", NULL);
  cr_expect(strstr(r.out, "requests 6: 6 cached, 0 to send") != NULL, "%s", r.out);
  th_free(&r);
  llm_stub_stop(&stub);

  /* --max-cost: at $1 a prompt token each request is estimated at about
   * $86 (a body of about 310 bytes) and costs $100 (the stub reports 100
   * tokens).  A $250 budget: the first starts (0 + 86), the second too
   * (100 + 86), the third would pass it (200 + 86): 2 sent. */
  cr_assert_eq(llm_stub_start(&stub, "{\"default\": {\"content\": \"NO\", \"usage\": {\"prompt_tokens\": 100, "
                                     "\"completion_tokens\": 1}}}", 60), 0);
  char out2[600];
  snprintf(out2, sizeof out2, "%s/out2", dir);
  r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out2, "--model", "m", "--base-url", stub.url, "--price-in", "1000000",
         "--max-cost", "250", "--concurrency", "1", NULL);
  cr_expect_eq(r.status, 2, "%s%s", r.out, r.err);
  cr_expect(strstr(r.err, "--max-cost") != NULL, "%s", r.err);
  log = llm_stub_log(&stub);
  const size_t sent = json_object_array_length(log);
  json_object_put(log);
  cr_expect_eq(sent, 2);
  cr_expect(strstr(r.out, "not sent 4") != NULL, "%s", r.out);
  char *qrels = get_file(out2, "qrels.txt");
  cr_expect_eq(lines_of(qrels), (long)sent, "what was judged is kept");
  free(qrels);
  th_free(&r);
  llm_stub_stop(&stub);
  free(dir);
}

/* --samples 3: the most frequent label, ties to the lower one; fewer than
 * half the samples with a label is a failure. */
Test(judge, samples_majority, .timeout = 60)
{
  char *dir = tiny_corpus();
  static const struct { const char *seq; const char *want; } cases[] = {
      {"[{\"content\": \"NO\"}, {\"content\": \"YES\"}, {\"content\": \"YES\"}]", "q1 0 d1 1\n"},
      {"[{\"content\": \"YES\"}, {\"content\": \"NO\"}, {\"content\": \"NO\"}]", "q1 0 d1 0\n"},
      {"[{\"content\": \"YES\"}, {\"content\": \"NO\"}, {\"content\": \"hmm\"}]", "q1 0 d1 0\n"},
      {"[{\"content\": \"hmm\"}, {\"content\": \"hmm\"}, {\"content\": \"YES\"}]", ""},
  };
  char corpus[512];
  snprintf(corpus, sizeof corpus, "%s/corpus.h5", dir);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char script[512], out[600];
    /* depth 1 over both runs gives the pairs q1 d1, q1 d4, q2 d5, q2 d6;
     * the sequence applies to q1 d1's three samples, which go first with
     * one request in flight */
    snprintf(script, sizeof script, "{\"sequence\": %s, \"default\": {\"content\": \"NO\"}}", cases[i].seq);
    snprintf(out, sizeof out, "%s/out%zu", dir, i);
    llm_stub stub;
    cr_assert_eq(llm_stub_start(&stub, script, 60), 0);
    th_result r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--base-url", stub.url, "--samples", "3",
                     "--temperature", "0.7", "--depth", "1", "--concurrency", "1", "--max-failures", "1", NULL);
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    th_free(&r);
    char *qrels = get_file(out, "qrels.txt");
    cr_expect(strncmp(qrels, cases[i].want, strlen(cases[i].want)) == 0 &&
                  (cases[i].want[0] || strncmp(qrels, "q1 0 d1", 7) != 0),
              "case %zu: %s", i, qrels);
    free(qrels);
    json_object *log = llm_stub_log(&stub);
    cr_expect_eq(json_object_array_length(log), 12, "4 pairs x 3 samples");
    json_object_put(log);
    llm_stub_stop(&stub);
  }
  free(dir);
}

Test(judge, bad_input)
{
  char *dir = tiny_corpus();
  char corpus[512], out[512], docs[512];
  snprintf(corpus, sizeof corpus, "%s/corpus.h5", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  /* a passage without text, given as a file */
  put_file(dir, "few_docs.tsv", "d1\talpha one\nd2\tbeta two\n");
  snprintf(docs, sizeof docs, "%s/few_docs.tsv", dir);
  th_result r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--docs",
                   docs, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "doc 'd3'") && strstr(r.err, "few_docs.tsv"), "%s", r.err);
  th_free(&r);
  /* nothing listens on port 9: every request fails after its retries, and
   * the run stops after 4 in a row instead of trying every pair */
  r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0",
         "--concurrency", "1", NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "4 requests in a row failed") && strstr(r.err, "http://127.0.0.1:9/v1"), "%s", r.err);
  th_free(&r);
  char *jl = get_file(out, "judgments.jsonl");
  cr_expect(strstr(jl, "\"status\":\"not_sent\"") != NULL, "%s", jl);
  free(jl);
  r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, NULL);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "--model") != NULL, "%s", r.err);
  th_free(&r);
  r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--max-failures", "2", NULL);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "--max-failures") != NULL, "%s", r.err);
  th_free(&r);
  r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--prompt", "/nonexistent.prompt", NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "/nonexistent.prompt") != NULL, "%s", r.err);
  th_free(&r);
  /* a corpus without texts: the message says how to give them */
  char plain[512], qr[512], a[512];
  snprintf(plain, sizeof plain, "%s/plain.h5", dir);
  snprintf(qr, sizeof qr, "%s/qrels.txt", dir);
  snprintf(a, sizeof a, "A=%s/A.txt", dir);
  r = th_rs_at(NULL, NULL, "import", "-o", plain, "--qrels", qr, a, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  r = th_rs_at(NULL, NULL, "judge", plain, "-o", out, "--model", "m", NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "--queries FILE") != NULL, "%s", r.err);
  th_free(&r);
  free(dir);
}

/* --prompt graded: the 0-3 labels from the final line; --max-doc-chars cuts
 * and counts; --holes-only asks only for what the people did not judge. */
Test(judge, graded_cut_and_holes, .timeout = 60)
{
  char *dir = tiny_corpus();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub,
                              "{\"rules\": [{\"match\": \"Passage: alph\", \"behaviour\": {\"content\": "
                              "\"It answers.\\nFinal score: 3\"}}], \"default\": {\"content\": \"Unrelated.\\nFinal score: 0\"}}",
                              60),
               0);
  char corpus[512], out[512];
  snprintf(corpus, sizeof corpus, "%s/corpus.h5", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  /* 4 characters of every passage: "alph", "beta", "gamm", "alph", ... */
  th_result r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out, "--model", "m", "--base-url", stub.url, "--prompt", "graded",
                   "--max-doc-chars", "4", NULL);
  cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_expect(strstr(r.out, "6 passages cut to 4 characters") != NULL, "%s", r.out);
  th_free(&r);
  char *qrels = get_file(out, "qrels.txt");
  cr_expect_str_eq(qrels, "q1 0 d1 3\nq1 0 d2 0\nq1 0 d3 0\nq1 0 d4 3\nq2 0 d5 3\nq2 0 d6 0\n");
  free(qrels);
  char *jl = get_file(out, "judgments.jsonl");
  cr_expect(strstr(jl, "\"doc_cut\":true") && !strstr(jl, "\"doc_cut\":false"), "%s", jl);
  free(jl);
  /* graded: h = (1, 0, 2, 0, 1), l = (3, 0, 0, 3, 3) over grades 0..3;
   * binary agreement as before: 3 of 5.  Linear weighted kappa:
   *   O: (0,0) 1, (0,3) 1, (1,3) 2, (2,0) 1; r = (2, 2, 1, 0), c = (2, 0, 0, 3)
   *   sum |i-j| O = 3 + 2*2 + 2 = 9
   *   sum |i-j| r_i c_j / n = (2*3*3 + 2*1*2 + 2*2*3 + 1*2*2 + 1*1*3) / 5 = (18 + 4 + 12 + 4 + 3) / 5 = 41/5
   *   1 - 9 / (41/5) = 1 - 45/41 = -4/41. */
  char *agree = get_file(out, "agreement.csv"), buf[64];
  cr_expect_str_eq(stat_value(agree, "agreement", buf, sizeof buf), "0.6");
  cr_expect_float_eq(strtod(stat_value(agree, "weighted_kappa", buf, sizeof buf), NULL), -4.0 / 41.0, 1e-15);
  cr_expect_str_eq(stat_value(agree, "confusion_h1_l3", buf, sizeof buf), "2");
  cr_expect_str_eq(stat_value(agree, "confusion_h2_l0", buf, sizeof buf), "1");
  free(agree);
  llm_stub_stop(&stub);

  /* --holes-only: the people judged every pair but (q2, d6) */
  cr_assert_eq(llm_stub_start(&stub, ALPHA_RULES, 60), 0);
  char out2[600];
  snprintf(out2, sizeof out2, "%s/holes", dir);
  r = th_rs_at(NULL, NULL, "judge", corpus, "-o", out2, "--model", "m", "--base-url", stub.url, "--holes-only", NULL);
  cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_expect(strstr(r.out, "1 distinct pairs") != NULL, "%s", r.out);
  cr_expect(strstr(r.out, "5 pairs already judged") != NULL, "%s", r.out);
  th_free(&r);
  qrels = get_file(out2, "qrels.txt");
  cr_expect_str_eq(qrels, "q2 0 d6 0\n");
  free(qrels);
  cr_expect(!file_exists(out2, "agreement.csv"), "no overlap with the people's qrels, no agreement.csv");
  json_object *log = llm_stub_log(&stub);
  cr_expect_eq(json_object_array_length(log), 1);
  json_object_put(log);
  llm_stub_stop(&stub);
  free(dir);
}
