/* test_llm_shard.c: `judge --shard I/N` and `rag --shard I/N`, merged by
 * `ragsweep merge`, against one process on the scripted stub
 * (tests/llm_stub.py, 127.0.0.1): shard counts 1..7 merged in shuffled
 * order give one process's files (judgments.jsonl and calls.jsonl up to
 * latency_ms, the measured time of each request), the merge sends no
 * request, a missing, repeated, foreign, stopped or emptied shard is a clear
 * error, a shard killed part way resumes without asking again what its
 * cache holds, and no API key reaches a manifest. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "llm_helpers.h"

static void put(const char *dir, const char *name, const char *text)
{
  FILE *f = fopen(th_join(dir, name), "wb");
  cr_assert(f, "%s/%s", dir, name);
  fputs(text, f);
  fclose(f);
}

static size_t stub_requests(const llm_stub *s)
{
  json_object *log = llm_stub_log(s);
  const size_t n = json_object_array_length(log);
  json_object_put(log);
  return n;
}

/* The file with every "latency_ms":NUMBER (a measured time) blanked. */
static char *without_latency(const char *path)
{
  char *s = th_slurp(path, NULL);
  cr_assert(s, "%s is missing", path);
  char *w = s;
  for (const char *p = s; *p;) {
    if (strncmp(p, "\"latency_ms\":", 13) == 0) {
      memcpy(w, p, 13), w += 13, p += 13;
      while (*p && *p != ',' && *p != '}') p++;
      continue;
    }
    *w++ = *p++;
  }
  *w = '\0';
  return s;
}

static void same_file(const char *a_dir, const char *b_dir, const char *name, int exact)
{
  char *a = exact ? th_slurp(th_join(a_dir, name), NULL) : without_latency(th_join(a_dir, name));
  char *b = exact ? th_slurp(th_join(b_dir, name), NULL) : without_latency(th_join(b_dir, name));
  cr_assert(a && b, "%s: missing in %s or %s", name, a_dir, b_dir);
  cr_expect_str_eq(b, a, "%s/%s differs from the one-process %s/%s", b_dir, name, a_dir, name);
  free(a), free(b);
}

/* 9 queries, 3 runs of depth 5 over 24 passages (the pairs counted here as
 * they are written).  The stub answers YES for "alpha" passages, NO for the
 * others, an unparsable reply for "beta", HTTP 500 for "gamma" (with
 * --max-retries 0: an http_error) and a body that is not JSON for "delta",
 * so every outcome a merge must carry over is there.  The people's qrels
 * grade each query's first doc of R0 (agreement.csv). */
#define JUDGE_RULES                                                                                      \
  "{\"rules\": [{\"match\": \"Passage: gamma\", \"behaviour\": {\"status\": 500, \"error_message\": \"boom\"}}," \
  " {\"match\": \"Passage: beta\", \"behaviour\": {\"content\": \"maybe\"}},"                             \
  " {\"match\": \"Passage: delta\", \"behaviour\": {\"body\": \"not json\"}},"                            \
  " {\"match\": \"Passage: alpha\", \"behaviour\": {\"content\": \"YES\"}}], \"default\": {\"content\": \"NO\"}}"

static const char *const words[] = {"alpha", "plain", "alpha", "beta", "plain", "gamma", "alpha", "delta"};

static size_t n_pairs; /* distinct (query, doc) pairs of judge_data's runs */

static int run_doc(int r, int q, int k) { return 1 + (q * 5 + k * (r + 2) + (k > 2 ? r : 0)) % 24; }

static char *judge_data(void)
{
  char *dir = th_fresh_dir();
  char buf[8192];
  size_t n = 0;
  for (int d = 1; d <= 24; d++) n += (size_t)snprintf(buf + n, sizeof buf - n, "d%d\t%s passage %d\n", d, words[d % 8], d);
  put(dir, "docs.tsv", buf);
  n = 0;
  for (int q = 1; q <= 9; q++) n += (size_t)snprintf(buf + n, sizeof buf - n, "q%d\twhat about %d?\n", q, q);
  put(dir, "queries.tsv", buf);
  n = 0;
  for (int q = 1; q <= 9; q++) n += (size_t)snprintf(buf + n, sizeof buf - n, "q%d 0 d%d %d\n", q, run_doc(0, q, 0), q % 3);
  put(dir, "qrels.txt", buf);
  unsigned char seen[10][25] = {{0}};
  n_pairs = 0;
  for (int r = 0; r < 3; r++) {
    n = 0;
    for (int q = 1; q <= 9; q++)
      for (int k = 0; k < 5; k++) {
        const int d = run_doc(r, q, k);
        if (!seen[q][d]) seen[q][d] = 1, n_pairs++;
        n += (size_t)snprintf(buf + n, sizeof buf - n, "q%d Q0 d%d %d %d R%d\n", q, d, k + 1, 10 - k, r);
      }
    char name[16];
    snprintf(name, sizeof name, "R%d.txt", r);
    put(dir, name, buf);
  }
  th_result r = th_rs_at(dir, NULL, "import", "-o", "corpus.h5", "--qrels", "qrels.txt", "--queries", "queries.tsv",
                      "--docs", "docs.tsv", "R0=R0.txt", "R1=R1.txt", "R2=R2.txt", NULL);
  cr_assert_eq(r.status, 0, "import: %s", r.err);
  th_free(&r);
  return dir;
}

/* floor(pairs·i/n): where share i of n starts. */
static size_t share_start(size_t pairs, size_t i, size_t n) { return pairs * i / n; }

#define JUDGE_ARGS(out) "judge", "corpus.h5", "--depth", "5", "-o", out, "--model", "m", "--base-url", stub.url, "--max-retries", "0", \
                        "--max-failures", "50%", "--quiet"

/* The shard folders' names in a shuffled order: i·3 mod n when n is not a
 * multiple of 3, else reversed. */
static void shuffled(const char *prefix, int n, char names[][64], char **argv)
{
  for (int k = 0; k < n; k++) {
    const int i = n % 3 ? (k * 3) % n : n - 1 - k;
    snprintf(names[k], 64, "%s/%d", prefix, i);
    argv[k] = names[k];
  }
}

static th_result merge_shards(const char *dir, const char *prefix, int n, const char *out)
{
  char names[8][64];
  char *argv[16];
  int a = 0;
  argv[a++] = (char *)th_bin();
  argv[a++] = "merge";
  shuffled(prefix, n, names, argv + a);
  a += n;
  argv[a++] = "-o";
  argv[a++] = (char *)out;
  argv[a] = NULL;
  return th_run(dir, argv, NULL, NULL);
}

Test(llm_shard, judge_shards_1_to_7_equal_one_process, .timeout = 240)
{
  char *dir = judge_data();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, JUDGE_RULES, 200), 0);
  th_result one = th_rs_at(dir, NULL, JUDGE_ARGS("one"), NULL);
  cr_assert_eq(one.status, 0, "%s%s", one.out, one.err);
  const size_t pairs = stub_requests(&stub);
  cr_expect_eq(pairs, n_pairs, "every distinct pair of the three runs is asked once");
  char *jl = th_slurp(th_join(dir, "one/judgments.jsonl"), NULL);
  cr_expect(strstr(jl, "\"status\":\"http_error\"") && strstr(jl, "\"status\":\"bad_reply\"") &&
                strstr(jl, "\"status\":\"unparsed\"") && strstr(jl, "\"status\":\"ok\""),
            "every outcome occurs: %s", jl);
  free(jl);
  th_free(&one);
  for (int n = 1; n <= 7; n++) {
    char prefix[32], out[32], spec[16];
    snprintf(prefix, sizeof prefix, "s%d", n);
    snprintf(out, sizeof out, "m%d", n);
    const size_t before = stub_requests(&stub);
    for (int i = 0; i < n; i++) {
      char sdir[64];
      snprintf(sdir, sizeof sdir, "%s/%d", prefix, i);
      snprintf(spec, sizeof spec, "%d/%d", i, n);
      th_result s = th_rs_at(dir, NULL, JUDGE_ARGS(sdir), "--shard", spec, NULL);
      cr_assert_eq(s.status, 0, "shard %s: %s%s", spec, s.out, s.err);
      th_free(&s);
    }
    cr_expect_eq(stub_requests(&stub) - before, pairs, "the %d shards ask every pair once", n);
    const size_t before_merge = stub_requests(&stub);
    th_result m = merge_shards(dir, prefix, n, out);
    cr_assert_eq(m.status, 0, "merge of %d: %s%s", n, m.out, m.err);
    char want[64];
    snprintf(want, sizeof want, "requests %zu: %zu sent, 0 cache hits", pairs, pairs);
    cr_expect(strstr(m.out, want), "the sends are the shards' (%s): %s", want, m.out);
    th_free(&m);
    cr_expect_eq(stub_requests(&stub), before_merge, "the merge sends nothing");
    char one_dir[512], m_dir[512];
    snprintf(one_dir, sizeof one_dir, "%s/one", dir);
    snprintf(m_dir, sizeof m_dir, "%s/%s", dir, out);
    same_file(one_dir, m_dir, "qrels.txt", 1);
    same_file(one_dir, m_dir, "agreement.csv", 1);
    same_file(one_dir, m_dir, "judgments.jsonl", 0);
  }
  /* A merge again, into the same folder: nothing to send, the same files. */
  th_result again = merge_shards(dir, "s3", 3, "m3");
  cr_expect_eq(again.status, 0, "%s", again.err);
  th_free(&again);
  llm_stub_stop(&stub);
}

Test(llm_shard, judge_merge_errors, .timeout = 120)
{
  char *dir = judge_data();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, JUDGE_RULES, 100), 0);
  for (int i = 0; i < 3; i++) {
    char sdir[32], spec[16];
    snprintf(sdir, sizeof sdir, "s/%d", i);
    snprintf(spec, sizeof spec, "%d/3", i);
    th_result s = th_rs_at(dir, NULL, JUDGE_ARGS(sdir), "--price-in", "1000", "--shard", spec, NULL);
    cr_assert_eq(s.status, 0, "%s", s.err);
    th_free(&s);
  }
  th_result r = th_rs_at(dir, NULL, "merge", "s/0", "s/2", "-o", "out", NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "shard 1 of 3 is missing") && strstr(r.err, "--shard 1/3"), "%s", r.err);
  th_free(&r);
  r = th_rs_at(dir, NULL, "merge", "s/0", "s/1", "s/2", "s/1", "-o", "out", NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "shard 1 of 3 is given twice"), "%s", r.err);
  th_free(&r);
  /* A foreign shard: another --depth. */
  th_result f = th_rs_at(dir, NULL, JUDGE_ARGS("other/1"), "--price-in", "1000", "--depth", "3", "--shard", "1/3", NULL);
  cr_assert_eq(f.status, 0, "%s", f.err);
  th_free(&f);
  const size_t asked = stub_requests(&stub);
  r = th_rs_at(dir, NULL, "merge", "s/0", "other/1", "s/2", "-o", "out", NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "are not shards of one evaluation") && strstr(r.err, "'arg --depth'"), "%s", r.err);
  th_free(&r);
  /* A shard whose cache lost its replies: the merge names it and the
   * count, and sends nothing. */
  cr_assert_eq(rename(th_join(dir, "s/1/cache.sqlite"), th_join(dir, "s1-cache.sqlite")), 0);
  th_result e = th_rs_at(dir, NULL, "cache", "merge", "s/1/cache.sqlite", "s/0/cache.sqlite", NULL); /* another shard's replies */
  cr_assert_eq(e.status, 0, "%s", e.err);
  th_free(&e);
  r = th_rs_at(dir, NULL, "merge", "s/0", "s/1", "s/2", "-o", "lost", NULL);
  cr_expect_eq(r.status, 2);
  char want[96];
  snprintf(want, sizeof want, "): %zu pairs without an answer in its cache", share_start(n_pairs, 2, 3) - share_start(n_pairs, 1, 3));
  cr_expect(strstr(r.err, "shard 1 of 3 (") && strstr(r.err, want), "%s: %s", want, r.err);
  cr_expect(!th_exists(th_join(dir, "lost/qrels.txt")), "no outputs");
  th_free(&r);
  cr_expect_eq(stub_requests(&stub), asked, "no merge sent a request");
  /* A shard stopped by its budget says so, and the merge refuses it; run
   * again with a larger budget, it resumes and the merge goes through. */
  th_result b = th_rs_at(dir, NULL, JUDGE_ARGS("b/1"), "--price-in", "1000", "--shard", "1/3", "--max-cost", "0.05",
                      "--concurrency", "1", NULL);
  cr_expect_eq(b.status, 2, "%s", b.err);
  th_free(&b);
  char *man = th_slurp(th_join(dir, "b/1/manifest.txt"), NULL);
  cr_assert(man);
  cr_expect(strstr(man, "\nstopped budget\n"), "%s", man);
  free(man);
  r = th_rs_at(dir, NULL, "merge", "s/0", "b/1", "s/2", "-o", "out", NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "shard 1 of 3 (") && strstr(r.err, "stopped before its share was done (budget)") &&
                strstr(r.err, "--shard 1/3"), "%s", r.err);
  th_free(&r);
  b = th_rs_at(dir, NULL, JUDGE_ARGS("b/1"), "--price-in", "1000", "--shard", "1/3", NULL);
  cr_expect_eq(b.status, 0, "%s", b.err);
  th_free(&b);
  r = th_rs_at(dir, NULL, "merge", "s/0", "b/1", "s/2", "-o", "out", NULL);
  cr_expect_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  llm_stub_stop(&stub);
}

Test(llm_shard, judge_shard_killed_resumes, .timeout = 120)
{
  char *dir = judge_data();
  llm_stub stub;
  /* Every reply after 0.15 s, one at a time: the kill comes part way. */
  cr_assert_eq(llm_stub_start(&stub, "{\"default\": {\"content\": \"YES\", \"delay\": 0.15}}", 100), 0);
  th_result one = th_rs_at(dir, NULL, JUDGE_ARGS("one"), NULL);
  cr_assert_eq(one.status, 0, "%s", one.err);
  th_free(&one);
  const size_t base = stub_requests(&stub);
  const char *bin = th_bin(); /* before the chdir: without RAGSWEEP_BIN it is build/ragsweep, from here */
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    if (chdir(dir) != 0) _exit(126);
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execl(bin, bin, JUDGE_ARGS("s/0"), "--shard", "0/2", "--concurrency", "1", (char *)NULL);
    _exit(127);
  }
  const long share = (long)share_start(n_pairs, 1, 2); /* shard 0 of 2 */
  /* Killed once the stub has answered a few of its requests. */
  for (int i = 0; i < 300 && stub_requests(&stub) < base + 4; i++) usleep(50000);
  usleep(100000);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  cr_expect(!th_exists(th_join(dir, "s/0/manifest.txt")), "a killed shard is not a finished one");
  th_result early = th_rs_at(dir, NULL, "merge", "s/0", "-o", "x", NULL);
  cr_expect_eq(early.status, 2);
  th_free(&early);
  th_result st = th_rs_at(dir, NULL, "cache", "stats", th_join(dir, "s/0/cache.sqlite"), NULL);
  cr_assert_eq(st.status, 0, "%s", st.err);
  const long kept = strtol(strstr(st.out, ": ") + 2, NULL, 10);
  th_free(&st);
  cr_expect_gt(kept, 0);
  const size_t sent_before_kill = stub_requests(&stub) - base;
  th_result again = th_rs_at(dir, NULL, JUDGE_ARGS("s/0"), "--shard", "0/2", NULL);
  cr_assert_eq(again.status, 0, "%s", again.err);
  char want[64];
  snprintf(want, sizeof want, "requests %ld: %ld sent, %ld cache hits", share, share - kept, kept);
  cr_expect(strstr(again.out, want), "only what the cache lacks is asked (%s): %s", want, again.out);
  th_free(&again);
  cr_expect_eq(stub_requests(&stub) - base, sent_before_kill + (size_t)(share - kept));
  th_result s1 = th_rs_at(dir, NULL, JUDGE_ARGS("s/1"), "--shard", "1/2", NULL);
  cr_assert_eq(s1.status, 0, "%s", s1.err);
  th_free(&s1);
  th_result m = th_rs_at(dir, NULL, "merge", "s/1", "s/0", "-o", "merged", NULL);
  cr_assert_eq(m.status, 0, "%s", m.err);
  th_free(&m);
  char one_dir[512], m_dir[512];
  snprintf(one_dir, sizeof one_dir, "%s/one", dir);
  snprintf(m_dir, sizeof m_dir, "%s/merged", dir);
  same_file(one_dir, m_dir, "qrels.txt", 1);
  same_file(one_dir, m_dir, "judgments.jsonl", 0); /* the resumed shard's replies were sent by the job: cached false */
  llm_stub_stop(&stub);
}

Test(llm_shard, judge_shard_dry_run_and_secrets, .timeout = 60)
{
  char *dir = judge_data();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, JUDGE_RULES, 60), 0);
  th_result d = th_rs_at(dir, NULL, JUDGE_ARGS("s/2"), "--shard", "2/3", "--dry-run", "--price-in", "1000000", NULL);
  cr_assert_eq(d.status, 0, "%s", d.err);
  char want[2][96];
  const size_t lo = share_start(n_pairs, 2, 3), hi = n_pairs;
  snprintf(want[0], sizeof want[0], "shard 2/3: pairs %zu..%zu (%zu pairs)", lo, hi, hi - lo);
  snprintf(want[1], sizeof want[1], "requests %zu: 0 cached, %zu to send", hi - lo, hi - lo);
  cr_expect(strstr(d.out, want[0]) && strstr(d.out, want[1]), "%s, %s: %s", want[0], want[1], d.out);
  cr_expect(!th_exists(th_join(dir, "s")), "a dry run writes nothing");
  th_free(&d);
  char *env[] = {"OPENAI_API_KEY=sk-test-secret-4242", NULL};
  th_result s = th_rs_at(dir, env, JUDGE_ARGS("s/2"), "--shard", "2/3", NULL);
  cr_assert_eq(s.status, 0, "%s", s.err);
  th_free(&s);
  char *man = th_slurp(th_join(dir, "s/2/manifest.txt"), NULL);
  cr_assert(man);
  cr_expect(!strstr(man, "secret-4242"), "the key is not in the manifest: %s", man);
  cr_expect(!strstr(man, "--quiet") && !strstr(man, "--max-retries"), "per-shard options are not stored: %s", man);
  free(man);
  th_result u = th_rs_at(dir, NULL, "judge", "corpus.h5", "-o", "u", "--model", "m", "--base-url",
                      "http://user:pw@127.0.0.1:9/v1", "--shard", "0/2", NULL);
  cr_expect_eq(u.status, 1);
  cr_expect(strstr(u.err, "credentials or a query string"), "%s", u.err);
  th_free(&u);
  llm_stub_stop(&stub);
}

/* ---- rag ---------------------------------------------------------------------- */

#define RAG_RULES                                                                                            \
  "{\"rules\": [{\"match\": \"You split answers into statements\", \"behaviour\": {\"content\": "           \
  "\"{\\\"statements\\\": [\\\"s1\\\", \\\"s2\\\"]}\"}},"                                                    \
  " {\"match\": \"You check statements\", \"behaviour\": {\"content\": "                                     \
  "\"{\\\"verdicts\\\": [{\\\"verdict\\\": 1}, {\\\"verdict\\\": 0}]}\"}},"                                  \
  " {\"match\": \"Context: ctx 3\", \"behaviour\": {\"status\": 500}},"                                      \
  " {\"match\": \"You judge retrieved passages\", \"behaviour\": {\"content\": "                             \
  "\"{\\\"reason\\\": \\\"r\\\", \\\"verdict\\\": 1}\"}}], \"default\": {\"content\": \"{}\"}}"

Test(llm_shard, rag_shards_1_to_7_equal_one_process, .timeout = 240)
{
  char *dir = th_fresh_dir();
  char buf[16384];
  size_t n = 0;
  /* Two configurations of 9 samples; the references' statements are asked
   * once for both (one request, the other a cache hit). */
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < 9; i++)
      n += (size_t)snprintf(buf + n, sizeof buf - n,
                            "{\"id\": %d, \"retriever\": \"%s\", \"user_input\": \"q%d?\", \"response\": \"answer %d %s\", "
                            "\"retrieved_contexts\": [\"ctx %d\", \"other %d\"], \"reference\": \"ref %d\", "
                            "\"latency_ms\": %d}\n",
                            i, c ? "b" : "a", i, i, c ? "b" : "a", i, i, i, 10 + 3 * i + c);
  put(dir, "rag.jsonl", buf);
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, RAG_RULES, 200), 0);
#define RAG_ARGS(out) "rag", "rag.jsonl", "-o", out, "--model", "m", "--base-url", stub.url, "-m", "faithfulness", \
                      "-m", "context_precision", "-m", "factual_correctness", "--max-retries", "0",               \
                      "--max-failures", "50%", "--quiet"
  th_result one = th_rs_at(dir, NULL, RAG_ARGS("one"), NULL);
  cr_assert_eq(one.status, 0, "%s%s", one.out, one.err);
  th_free(&one);
  const size_t sent = stub_requests(&stub);
  char *calls = th_slurp(th_join(dir, "one/calls.jsonl"), NULL);
  cr_expect(strstr(calls, "\"status\":\"http_error\"") && strstr(calls, "\"cached\":true"), "%s", calls);
  free(calls);
  for (int k = 1; k <= 7; k++) {
    char prefix[32], out[32], spec[16];
    snprintf(prefix, sizeof prefix, "s%d", k);
    snprintf(out, sizeof out, "m%d", k);
    const size_t before = stub_requests(&stub);
    for (int i = 0; i < k; i++) {
      char sdir[64];
      snprintf(sdir, sizeof sdir, "%s/%d", prefix, i);
      snprintf(spec, sizeof spec, "%d/%d", i, k);
      th_result s = th_rs_at(dir, NULL, RAG_ARGS(sdir), "--shard", spec, NULL);
      cr_assert_eq(s.status, 0, "shard %s: %s%s", spec, s.out, s.err);
      th_free(&s);
    }
    cr_expect_eq(stub_requests(&stub) - before, sent, "the %d shards ask what one process asks", k);
    const size_t before_merge = stub_requests(&stub);
    th_result m = merge_shards(dir, prefix, k, out);
    cr_assert_eq(m.status, 0, "merge of %d: %s%s", k, m.out, m.err);
    th_free(&m);
    cr_expect_eq(stub_requests(&stub), before_merge, "the merge sends nothing");
    char one_dir[512], m_dir[512];
    snprintf(one_dir, sizeof one_dir, "%s/one", dir);
    snprintf(m_dir, sizeof m_dir, "%s/%s", dir, out);
    same_file(one_dir, m_dir, "per_sample.csv", 1);
    same_file(one_dir, m_dir, "aggregate.csv", 1);
    same_file(one_dir, m_dir, "latency.csv", 1);
    same_file(one_dir, m_dir, "calls.jsonl", 0);
  }
  llm_stub_stop(&stub);
}
