/* test_texts.c: text collections (TSV, JSONL, gzip, BEIR titles, errors),
 * /docs/text in the corpus (import --docs/--queries round trip, a corpus
 * written by h5py, layout errors) and `ragsweep cache` end to end. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/corpus.h"
#include "formats/import.h"
#include "formats/texts.h"
#include "helpers.h"
#include "llm/cache.h"
#include "util/strbuf.h"
#include "util/sha256.h"

static void expect_text(const rs__texts *t, const char *id, const char *want, size_t want_len)
{
  size_t len = 12345;
  const char *got = rs__texts_get(t, id, &len);
  cr_assert_not_null(got, "id %s missing", id);
  cr_assert_eq(len, want_len, "id %s: length %zu, expected %zu", id, len, want_len);
  cr_assert_eq(memcmp(got, want, want_len), 0, "id %s: got \"%s\"", id, got);
  cr_assert_eq(got[len], '\0');
}

#define TSV "d1\tone\r\nd2\ttwo\tthree\n\n  \nd3\t\nd10\tten"

Test(texts, tsv)
{
  rs__texts *t = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__texts_load(th_write_temp(0, "c.tsv", TSV), &t, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__texts_count(t), 4);
  expect_text(t, "d1", "one", 3);          /* the CR is dropped */
  expect_text(t, "d2", "two\tthree", 9);   /* later tabs belong to the text */
  expect_text(t, "d3", "", 0);
  expect_text(t, "d10", "ten", 3);         /* last line without a newline */
  cr_assert_null(rs__texts_get(t, "d4", NULL));
  cr_assert_null(rs__texts_get(t, "d", NULL));
  rs__texts_free(t);
}

Test(texts, gzip_gives_the_same)
{
  const char *plain = th_write_temp(0, "c.tsv", TSV);
  char gz_path[300];
  snprintf(gz_path, sizeof gz_path, "%s.gz", plain);
  gzFile gz = gzopen(gz_path, "wb");
  cr_assert_not_null(gz);
  gzwrite(gz, TSV, (unsigned)strlen(TSV));
  gzclose(gz);
  rs__texts *t = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__texts_load(gz_path, &t, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__texts_count(t), 4);
  expect_text(t, "d2", "two\tthree", 9);
  expect_text(t, "d10", "ten", 3);
  rs__texts_free(t);
}

Test(texts, jsonl_beir_layout)
{
  const char *p = th_write_temp(0, "corpus.jsonl",
                                "\n  {\"_id\": \"a\", \"title\": \"Title A\", \"text\": \"Body of a.\", \"metadata\": {}}\n"
                                "{\"id\": 7, \"text\": \"seven\"}\n"
                                "{\"docid\": \"z\", \"title\": \"\", \"text\": \"no title\"}\r\n"
                                "{\"_id\": \"n\", \"title\": null, \"text\": \"null title\"}\n"
                                "{\"id\": \"p\", \"contents\": \"pyserini \\u00e9\\n2\"}\n");
  rs__texts *t = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__texts_load(p, &t, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__texts_count(t), 5);
  expect_text(t, "a", "Title A\n\nBody of a.", 19);
  expect_text(t, "7", "seven", 5);
  expect_text(t, "z", "no title", 8);
  expect_text(t, "n", "null title", 10);
  expect_text(t, "p", "pyserini \xc3\xa9\n2", 13);
  rs__texts_free(t);
}

Test(texts, many_records_grow_the_table)
{
  /* 5000 records: the table and pool grow several times. */
  size_t cap = 5000 * 40, n = 0;
  char *buf = malloc(cap);
  cr_assert_not_null(buf);
  for (int i = 0; i < 5000; i++) n += (size_t)snprintf(buf + n, cap - n, "doc%d\ttext of %d\n", i, i * 3);
  rs__texts *t = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__texts_load(th_write_temp(0, "many.tsv", buf), &t, &err), RS_OK, "%s", err.msg);
  free(buf);
  cr_assert_eq(rs__texts_count(t), 5000);
  expect_text(t, "doc0", "text of 0", 9);
  expect_text(t, "doc4999", "text of 14997", 13);
  expect_text(t, "doc2500", "text of 7500", 12);
  cr_assert_null(rs__texts_get(t, "doc5000", NULL));
  rs__texts_free(t);
}

struct text_reject {
  char name[40];
  char file[24];
  char text[200];
  int code;
  char message[160]; /* must appear in the message (after the folder) */
};

ParameterizedTestParameters(texts, rejects)
{
  static struct text_reject cases[] = {
      {"tsv without tab", "c.tsv", "d1\tone\nd2 two\n", RS_FORMAT,
       "c.tsv:2: expected \"id<TAB>text\", found no tab in \"d2 two\""},
      {"tsv empty id", "c.tsv", "d1\tone\n\tnothing\n", RS_FORMAT, "c.tsv:2: expected an id before the tab, found an empty id"},
      {"tsv duplicate", "c.tsv", "d1\tone\nd2\ttwo\n\nd1\tagain\n", RS_DUPLICATE,
       "c.tsv:4: id \"d1\" repeats line 1; expected each id once"},
      {"jsonl duplicate int/string", "c.jsonl", "{\"_id\": 5, \"text\": \"a\"}\n{\"_id\": \"5\", \"text\": \"b\"}\n",
       RS_DUPLICATE, "c.jsonl:2: id \"5\" repeats line 1"},
      {"jsonl no text", "c.jsonl", "{\"_id\": \"a\", \"text\": \"x\"}\n{\"_id\": \"b\", \"title\": \"t\"}\n", RS_FORMAT,
       "c.jsonl:2: id \"b\": no \"text\"; expected \"text\" (or \"contents\") with a string"},
      {"jsonl no id", "c.jsonl", "{\"text\": \"x\"}\n", RS_FORMAT,
       "c.jsonl:1: no id; expected \"_id\", \"id\" or \"docid\" with a string or an integer"},
      {"jsonl empty id", "c.jsonl", "{\"_id\": \"\", \"text\": \"x\"}\n", RS_FORMAT,
       "c.jsonl:1: \"_id\": expected a non-empty id without NUL bytes, found string \"\""},
      {"jsonl id array", "c.jsonl", "{\"_id\": [1], \"text\": \"x\"}\n", RS_FORMAT,
       "c.jsonl:1: \"_id\": expected a string or an integer, found array"},
      {"jsonl text number", "c.jsonl", "{\"_id\": \"a\", \"text\": 3}\n", RS_FORMAT,
       "c.jsonl:1: id \"a\": \"text\": expected a string, found number 3"},
      {"jsonl title number", "c.jsonl", "{\"_id\": \"a\", \"title\": 1, \"text\": \"x\"}\n", RS_FORMAT,
       "c.jsonl:1: id \"a\": \"title\": expected a string or null, found number 1"},
      {"jsonl bad json", "c.jsonl", "{\"_id\": \"a\", \"text\": \"x\"}\n{\"_id\": \"b\" \"text\": \"y\"}\n", RS_FORMAT,
       "c.jsonl:2:13: not valid JSON"},
      {"jsonl cut line", "c.jsonl", "{\"_id\": \"a\", \"text\": \"x\"}\n{\"_id\": \"b\", \"te\n", RS_FORMAT,
       "c.jsonl:2: not valid JSON: the line ends inside a value"},
      {"jsonl two objects", "c.jsonl", "{\"_id\": \"a\", \"text\": \"x\"} {\"_id\": \"b\"}\n", RS_FORMAT,
       "c.jsonl:1:27: unexpected data after the JSON object: found '{'"},
      {"jsonl not an object", "c.jsonl", "{\"_id\": \"a\", \"text\": \"x\"}\n[1, 2]\n", RS_FORMAT,
       "c.jsonl:2: expected a JSON object, found array"},
  };
  return cr_make_param_array(struct text_reject, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct text_reject *c, texts, rejects)
{
  rs__texts *t = NULL;
  rs_error err = {0};
  rs_code rc = rs__texts_load(th_write_temp(1, c->file, c->text), &t, &err);
  cr_assert_eq(rc, c->code, "%s: code %d (%s)", c->name, rc, err.msg);
  cr_assert_null(t);
  cr_assert(strstr(err.msg, c->message), "%s: message \"%s\"", c->name, err.msg);
}

Test(texts, missing_file)
{
  rs__texts *t = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__texts_load("/nonexistent/x.tsv", &t, &err), RS_IO);
  cr_assert(strstr(err.msg, "/nonexistent/x.tsv"), "%s", err.msg);
}

/* ---- import --docs / --queries ------------------------------------------- */

#define QRELS "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
#define RUN "q1 Q0 d1 1 2.0 t\nq1 Q0 d4 2 1.0 t\nq2 Q0 d3 1 5.0 t\n"
#define DOCS "d4\tfour\nd3\tthree\nd2\ttwo\r\nd1\tone\nd9\tnot in the corpus\n"
#define QUERIES "{\"_id\": \"q2\", \"text\": \"second?\"}\n{\"_id\": \"q1\", \"title\": \"T\", \"text\": \"first?\"}\n"

static th_result run_import(const char *out, const char *qsrc_flag, const char *qsrc, const char *docs,
                            const char *queries)
{
  char *argv[16];
  int n = 0;
  argv[n++] = (char *)th_bin();
  argv[n++] = "import";
  argv[n++] = "-o";
  argv[n++] = (char *)out;
  argv[n++] = (char *)qsrc_flag;
  argv[n++] = (char *)qsrc;
  if (docs) argv[n++] = "--docs", argv[n++] = (char *)docs;
  if (queries) argv[n++] = "--queries", argv[n++] = (char *)queries;
  argv[n++] = (char *)th_write_temp(2, "run.txt", RUN);
  argv[n] = NULL;
  return th_run(NULL, argv, NULL, NULL);
}

Test(import_texts, round_trip)
{
  char qrels[256], docs[256], queries[256], out[300];
  snprintf(qrels, sizeof qrels, "%s", th_write_temp(3, "qrels.txt", QRELS));
  snprintf(docs, sizeof docs, "%s", th_write_temp(3, "docs.tsv", DOCS));
  snprintf(queries, sizeof queries, "%s", th_write_temp(3, "queries.jsonl", QUERIES));
  snprintf(out, sizeof out, "%s.h5", qrels);
  th_result r = run_import(out, "--qrels", qrels, docs, queries);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "(1 run, query texts, doc texts)"), "%s", r.out);
  th_free(&r);

  rs__corpus *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__corpus_open(out, &c, &err), RS_OK, "%s", err.msg);
  cr_assert(c->has_doc_text && c->has_text);
  cr_assert_null(c->doc_text);                         /* read on demand only */
  cr_assert_eq(rs__corpus_load_doc_texts(c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__corpus_load_doc_texts(c, &err), RS_OK); /* once */
  cr_assert_eq(c->nd, 4);
  /* import writes /docs/id in strcmp order: the probe saw it, so opening did not read it */
  cr_assert(c->doc_ids_sorted);
  cr_assert_null(c->doc_id);
  cr_assert_str_eq(rs__corpus_did(c, 2), "d3"); /* read on first use */
  cr_assert_eq(rs__corpus_load_doc_ids(c, &err), RS_OK, "%s", err.msg);
  const char *want_id[] = {"d1", "d2", "d3", "d4"}, *want_text[] = {"one", "two", "three", "four"};
  for (size_t i = 0; i < 4; i++) {
    cr_assert_str_eq(c->doc_id[i], want_id[i]);
    cr_assert_str_eq(c->doc_text[i], want_text[i]);
  }
  cr_assert_eq(rs__corpus_load_queries(c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(c->nq, 2);
  cr_assert_str_eq(c->query_id[0], "q1");
  cr_assert_str_eq(c->query_text[0], "T\n\nfirst?");
  cr_assert_str_eq(c->query_text[1], "second?");
  rs__corpus_close(c);

  char *argv[] = {(char *)th_bin(), "check", out, NULL};
  r = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "4 docs; 3 judgments; 1 runs; query texts; doc texts)"), "%s", r.out);
  th_free(&r);
}

Test(import_texts, queries_override_json_and_docs_absent)
{
  char json[256], queries[256], out[300];
  snprintf(json, sizeof json, "%s",
           th_write_temp(4, "set.json",
                         "{\"queries\": [{\"id\": \"q1\", \"query\": \"from json\", \"relevant_doc_ids\": [\"d1\"]},"
                         " {\"id\": \"q2\", \"query\": \"json two\", \"graded_relevance\": {\"d3\": 2}}]}"));
  snprintf(queries, sizeof queries, "%s", th_write_temp(4, "q.tsv", "q2\tfrom tsv 2\nq1\tfrom tsv 1\n"));
  snprintf(out, sizeof out, "%s.h5", json);
  th_result r = run_import(out, "--json", json, NULL, queries);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  rs__corpus *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__corpus_open(out, &c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__corpus_load_queries(c, &err), RS_OK, "%s", err.msg);
  cr_assert_str_eq(c->query_text[0], "from tsv 1");
  cr_assert_str_eq(c->query_text[1], "from tsv 2");
  cr_assert_eq(c->has_doc_text, 0);
  cr_assert_eq(rs__corpus_load_doc_texts(c, &err), RS_FORMAT);
  cr_assert(strstr(err.msg, "no /docs/text; expected the doc texts (ragsweep import --docs FILE writes them)"), "%s",
            err.msg);
  rs__corpus_close(c);
}

Test(import_texts, missing_texts_are_errors)
{
  char qrels[256], docs[256], queries[256], out[300];
  snprintf(qrels, sizeof qrels, "%s", th_write_temp(5, "qrels.txt", QRELS));
  /* d4 is only retrieved, not judged: it needs a text all the same. */
  snprintf(docs, sizeof docs, "%s", th_write_temp(5, "docs.tsv", "d1\tone\nd2\ttwo\nd3\tthree\n"));
  snprintf(queries, sizeof queries, "%s", th_write_temp(5, "queries.tsv", "q1\tfirst\n"));
  snprintf(out, sizeof out, "%s.h5", qrels);
  th_result r = run_import(out, "--qrels", qrels, docs, NULL);
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "docs.tsv: no text for doc \"d4\"; expected a text for every doc of the corpus"), "%s",
            r.err);
  th_free(&r);
  r = run_import(out, "--qrels", qrels, NULL, queries);
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "queries.tsv: no text for query \"q2\"; expected a text for every query of the corpus"),
            "%s", r.err);
  th_free(&r);
  FILE *f = fopen(out, "rb"); /* nothing was left behind */
  cr_assert_null(f);
}

/* ---- a corpus written by h5py ------------------------------------------- */

static const char *h5py_corpus(int slot, const char *name, const char *docs_text_expr)
{
  static char path[8][300];
  snprintf(path[slot], sizeof path[slot], "%s", th_write_temp(slot, name, ""));
  char script[1500];
  snprintf(script, sizeof script,
           "import h5py, numpy as np\n"
           "with h5py.File('%s', 'w') as f:\n"
           "    f.attrs['format'], f.attrs['version'] = 'ragsweep-corpus', np.int64(1)\n"
           "    f['queries/id'] = np.array(['q1', 'q2'], dtype=h5py.string_dtype())\n"
           "    f['docs/id'] = np.array([b'd0', b'd1', b'd2'])\n"
           "    %s\n"
           "    f['qrels/offsets'] = np.array([0, 2, 3], dtype=np.int64)\n"
           "    f['qrels/doc'] = np.array([0, 2, 1], dtype=np.int32)\n"
           "    f['qrels/grade'] = np.array([2, 1, 1], dtype=np.int32)\n",
           path[slot], docs_text_expr);
  const char *py = th_write_temp(slot, "make.py", script);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s", py);
  cr_assert_eq(system(cmd), 0, "h5py failed");
  return path[slot];
}

Test(corpus_texts, h5py_written)
{
  const char *p = h5py_corpus(6, "c.h5",
                              "f['docs/text'] = np.array(['zero', 'un \\u00e9', 'two\\n\\nlines'], "
                              "dtype=h5py.string_dtype())");
  rs__corpus *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__corpus_open(p, &c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(c->has_doc_text, 1);
  cr_assert_eq(rs__corpus_load_doc_texts(c, &err), RS_OK, "%s", err.msg);
  cr_assert_str_eq(c->doc_text[0], "zero");
  cr_assert_str_eq(c->doc_text[1], "un \xc3\xa9");
  cr_assert_str_eq(c->doc_text[2], "two\n\nlines");
  rs__corpus_close(c);
  /* Fixed-length byte strings too. */
  p = h5py_corpus(6, "fixed.h5", "f['docs/text'] = np.array([b'a', b'bb', b'ccc'])");
  cr_assert_eq(rs__corpus_open(p, &c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__corpus_load_doc_texts(c, &err), RS_OK, "%s", err.msg);
  cr_assert_str_eq(c->doc_text[2], "ccc");
  rs__corpus_close(c);
}

Test(corpus_texts, layout_errors)
{
  const char *p = h5py_corpus(7, "short.h5", "f['docs/text'] = np.array(['zero', 'one'], dtype=h5py.string_dtype())");
  rs__corpus *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__corpus_open(p, &c, &err), RS_FORMAT);
  cr_assert(strstr(err.msg, "short.h5:/docs/text: expected 3 strings (one per doc of /docs/id), found 2"), "%s",
            err.msg);
  char *argv[] = {(char *)th_bin(), "check", (char *)p, NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.out, "INVALID") && strstr(r.out, "/docs/text: expected 3 strings"), "%s", r.out);
  th_free(&r);
  p = h5py_corpus(7, "ints.h5", "f['docs/text'] = np.array([1, 2, 3], dtype=np.int32)");
  cr_assert_eq(rs__corpus_open(p, &c, &err), RS_FORMAT);
  cr_assert(strstr(err.msg, "ints.h5:/docs/text: expected 1-D strings, found 1-D integer"), "%s", err.msg);
  p = h5py_corpus(7, "noid.h5", "del f['docs/id']; f['docs/text'] = np.array([b'a', b'b', b'c'])");
  cr_assert_eq(rs__corpus_open(p, &c, &err), RS_FORMAT);
  cr_assert(strstr(err.msg, "noid.h5:/docs/text: expected /docs/id beside it"), "%s", err.msg);
}

/* ---- ragsweep cache ------------------------------------------------------- */

static void fill(const char *path, int from, int to, const char *model, long status)
{
  rs__llm_cache *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__llm_cache_open(path, &c, &err), RS_OK, "%s", err.msg);
  for (int i = from; i < to; i++) {
    uint8_t key[32];
    char id[16];
    rs__sha256(id, (size_t)snprintf(id, sizeof id, "k%d", i), key);
    rs__cache_entry e = {.body = "{}", .body_len = 2, .status = status, .prompt_tokens = -1,
                         .completion_tokens = -1, .latency_ms = 1, .model = (char *)model, .created = 1};
    cr_assert_eq(rs__llm_cache_put(c, key, &e, &err), RS_OK, "%s", err.msg);
  }
  rs__llm_cache_close(c);
}

Test(cache_cli, stats_and_merge)
{
  char a[256], b[256], dst[256];
  snprintf(a, sizeof a, "%s", th_write_temp(0, "a.cache", ""));
  snprintf(b, sizeof b, "%s", th_write_temp(0, "b.cache", ""));
  snprintf(dst, sizeof dst, "%s", th_write_temp(0, "dst.cache", ""));
  remove(a), remove(b), remove(dst);
  fill(a, 0, 10, "gpt-a", 200);
  fill(a, 10, 12, "gpt-a", 429);
  fill(b, 5, 20, "model-b", 200); /* k5..k11 are in a already */
  char *merge[] = {(char *)th_bin(), "cache", "merge", dst, a, b, NULL};
  th_result r = th_run(NULL, merge, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  char want[600];
  snprintf(want, sizeof want, "%s: 12 entries added\n%s: 8 entries added\n%s: 20 entries added, 20 in all\n", a, b,
           dst);
  cr_assert_str_eq(r.out, want);
  th_free(&r);
  r = th_run(NULL, merge, NULL, NULL);
  snprintf(want, sizeof want, "%s: 0 entries added\n%s: 0 entries added\n%s: 0 entries added, 20 in all\n", a, b, dst);
  cr_assert_str_eq(r.out, want);
  th_free(&r);
  char *stats[] = {(char *)th_bin(), "cache", "stats", dst, NULL};
  r = th_run(NULL, stats, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, ": 20 entries, "), "%s", r.out);
  cr_assert(strstr(r.out, "\n  model gpt-a: 12 entries, 2 failed\n  model model-b: 8 entries, 0 failed\n"), "%s",
            r.out);
  th_free(&r);
}

Test(cache_cli, errors)
{
  char *usage[] = {(char *)th_bin(), "cache", "stats", NULL};
  th_result r = th_run(NULL, usage, NULL, NULL);
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "expected 'stats CACHE' or 'merge DST SRC [SRC ...]'"), "%s", r.err);
  th_free(&r);
  char *missing[] = {(char *)th_bin(), "cache", "stats", "/nonexistent/c.cache", NULL};
  r = th_run(NULL, missing, NULL, NULL);
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "/nonexistent/c.cache"), "%s", r.err);
  th_free(&r);
  const char *txt = th_write_temp(1, "notes.txt", "not a cache, just some text that is long enough for a header....."
                                                   "...................................................\n");
  char *bad[] = {(char *)th_bin(), "cache", "stats", (char *)txt, NULL};
  r = th_run(NULL, bad, NULL, NULL);
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "notes.txt: not a ragsweep LLM cache"), "%s", r.err);
  th_free(&r);
}

/* Direct input interns doc ids in parts, ranges of strcmp order cut from a
 * sample of the judged docs, one part a thread: at 1, 2 and 8 threads the
 * corpus must have the same doc ids, strictly rising, and the judgments
 * and rankings the same doc numbers, each naming its id.  judge_all: all
 * of the run's ids are judged too, else only those of one stem, so that
 * the sample (and its common prefix) covers some: ids outside it fall
 * before or after every part. */
static void check_parts_agree(int judge_all, int slot)
{
  rs__sb qrels = {0}, run = {0};
  static const char *const stem[] = {"doc", "document-group-A-", "document-group-A-x", "zz", "A", "d\xc3\xa9"};
  for (size_t s = 0; s < sizeof stem / sizeof stem[0]; s++)
    for (int k = 0; k < 400; k++) {
      char id[96];
      snprintf(id, sizeof id, "%s%d", stem[s], k * 53 % 1000);
      if (judge_all || s == 1) rs__sb_printf(&qrels, "q%d 0 %s %d\n", k % 5, id, k % 3);
      rs__sb_printf(&run, "q%d Q0 %s %d %d t\n", k % 5, id, k, 10000 - (int)s * 400 - k);
    }
  /* ranked last: a proper prefix of the narrow sample's common prefix, and that prefix itself */
  static const char *const last[] = {"document-group-A", "document-group-A-"};
  rs__sb_printf(&run, "q0 Q0 %s 998 5 t\nq0 Q0 %s 999 4 t\n", last[0], last[1]);
  char q[256], r[256];
  snprintf(q, sizeof q, "%s", th_write_temp(slot, "qrels.txt", rs__sb_view(&qrels)));
  snprintf(r, sizeof r, "%s", th_write_temp(slot + 1, "run.txt", rs__sb_view(&run)));
  const rs__import_run ir = {.name = "run", .path = r};
  static const int threads[] = {1, 2, 8};
  rs__corpus *c[3] = {0};
  rs_error err = {0};
  for (int t = 0; t < 3; t++) {
    const rs__import_cfg cfg = {.qrels_path = q, .runs = &ir, .n_runs = 1, .threads = threads[t]};
    cr_assert_eq(rs__import_corpus(&cfg, &c[t], &err), RS_OK, "%s", err.msg);
  }
  cr_assert_gt(c[0]->nd, 2000, "%zu docs", c[0]->nd);
  for (size_t i = 1; i < c[0]->nd; i++)
    cr_assert_lt(strcmp(c[0]->doc_id[i - 1], c[0]->doc_id[i]), 0, "doc %zu '%s' is not before '%s'", i - 1,
                 c[0]->doc_id[i - 1], c[0]->doc_id[i]);
  const rs__run_mem *m0 = c[0]->runs.run[0].mem;
  const size_t nnz = (size_t)c[0]->qoff[c[0]->nq], ranked = (size_t)m0->off[c[0]->nq];
  cr_assert_gt(ranked, 0);
  for (int t = 1; t < 3; t++) {
    cr_assert_eq(c[t]->nd, c[0]->nd, "%d threads", threads[t]);
    for (size_t i = 0; i < c[0]->nd; i++) cr_assert_str_eq(c[t]->doc_id[i], c[0]->doc_id[i], "doc %zu", i);
    cr_assert_eq((size_t)c[t]->qoff[c[t]->nq], nnz);
    cr_assert_arr_eq(c[t]->qdoc, c[0]->qdoc, nnz * sizeof *c[0]->qdoc, "judged docs at %d threads", threads[t]);
    const rs__run_mem *m = c[t]->runs.run[0].mem;
    cr_assert_eq((size_t)m->off[c[t]->nq], ranked);
    cr_assert_arr_eq(m->doc, m0->doc, ranked * sizeof *m0->doc, "ranked docs at %d threads", threads[t]);
  }
  /* Every number names its id: each judged (query, doc) of the input is in
   * its query's row, and each ranking holds the query's ids by falling
   * score (the order they were written in). */
  size_t next[5] = {0};
  for (size_t s = 0; s < sizeof stem / sizeof stem[0]; s++)
    for (int k = 0; k < 400; k++) {
      char id[96];
      snprintf(id, sizeof id, "%s%d", stem[s], k * 53 % 1000);
      const size_t qi = (size_t)(k % 5); /* q0..q4: rows in strcmp order */
      const int64_t rank_at = m0->off[qi] + (int64_t)next[qi]++;
      cr_assert_str_eq(c[0]->doc_id[m0->doc[rank_at]], id, "q%zu, rank %zu", qi, next[qi]);
      if (!judge_all && s != 1) continue;
      int64_t k2 = c[0]->qoff[qi];
      while (k2 < c[0]->qoff[qi + 1] && strcmp(c[0]->doc_id[c[0]->qdoc[k2]], id) != 0) k2++;
      cr_assert_lt(k2, c[0]->qoff[qi + 1], "q%zu: judged doc %s is not in its row", qi, id);
    }
  for (size_t i = 0; i < 2; i++) cr_assert_str_eq(c[0]->doc_id[m0->doc[m0->off[0] + (int64_t)next[0]++]], last[i]);
  cr_assert_eq(m0->off[0] + (int64_t)next[0], m0->off[1]);
  for (int t = 0; t < 3; t++) rs__corpus_close(c[t]);
  rs__sb_free(&qrels);
  rs__sb_free(&run);
}

Test(import_texts, doc_id_parts_agree_at_any_thread_count) { check_parts_agree(1, 0); }
Test(import_texts, doc_id_parts_from_a_narrow_sample_agree) { check_parts_agree(0, 0); }

/* import numbers doc ids in strcmp order with a radix sort of 8 bytes at a
 * time, then of the next 8 within each run of ids equal so far (more than
 * 64 such ids go a level deeper): ids that share 8, 16 and 24 bytes by the
 * hundred, ids that are prefixes of one another, and bytes above 0x7f
 * (strcmp compares them unsigned) must come out strictly rising, every
 * one of them. */
Test(import_texts, doc_ids_in_strcmp_order_through_every_sort_level)
{
  rs__sb qrels = {0}, run = {0};
  static const char *const stem[] = {"doc", "document", "document-group-A-", "document-group-A-longer-",
                                     "document-group-B-", "d\xc3\xa9", "docum\xc3\xa9nt-", "12345678"};
  size_t n_ids = 0;
  for (size_t s = 0; s < sizeof stem / sizeof stem[0]; s++)
    for (int k = 0; k < 300; k++) {
      char id[96];
      snprintf(id, sizeof id, "%s%d", stem[s], k * 37 % 1000); /* 300 distinct ids a stem, not in order */
      rs__sb_printf(&qrels, "q%d 0 %s %d\n", k % 7, id, k % 3);
      rs__sb_printf(&run, "q%d Q0 %s %d %d.5 t\n", k % 7, id, k, 1000 - k);
      n_ids++;
    }
  char q[256], r[256], out[300];
  snprintf(q, sizeof q, "%s", th_write_temp(5, "qrels.txt", rs__sb_view(&qrels)));
  snprintf(r, sizeof r, "%s", th_write_temp(6, "run.txt", rs__sb_view(&run)));
  snprintf(out, sizeof out, "%s.h5", q);
  char *argv[] = {(char *)th_bin(), "import", "-o", out, "--qrels", q, r, NULL};
  th_result res = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(res.status, 0, "%s", res.err);
  th_free(&res);
  rs__corpus *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__corpus_open(out, &c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__corpus_load_doc_ids(c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(c->nd, n_ids, "%zu docs, expected %zu", c->nd, n_ids);
  for (size_t i = 1; i < c->nd; i++)
    cr_assert_lt(strcmp(c->doc_id[i - 1], c->doc_id[i]), 0, "doc %zu '%s' is not before doc %zu '%s'", i - 1,
                 c->doc_id[i - 1], i, c->doc_id[i]);
  /* The corpus built in memory (a direct eval's) has the same ids in the
   * same order, and says they are sorted, so the sweep does not check. */
  const rs__import_run ir = {.name = "run", .path = r};
  const rs__import_cfg cfg = {.qrels_path = q, .runs = &ir, .n_runs = 1, .threads = 2};
  rs__corpus *m = NULL;
  cr_assert_eq(rs__import_corpus(&cfg, &m, &err), RS_OK, "%s", err.msg);
  cr_assert(m->doc_ids_sorted);
  cr_assert_eq(m->nd, c->nd);
  for (size_t i = 0; i < m->nd; i++) cr_assert_str_eq(m->doc_id[i], c->doc_id[i], "doc %zu", i);
  rs__corpus_close(m);
  rs__corpus_close(c);
  rs__sb_free(&qrels);
  rs__sb_free(&run);
}

/* eval and compare build their corpus with rows_only: no doc id is
 * interned; a judged doc is numbered by the place of its judgment among
 * its query's (here the qrels' order, which is docno order), any other
 * doc by the query's judgment count plus its rank, and each row is stored
 * in trec_eval's order (score descending, ties by docno descending),
 * without its scores.
 * Worked by hand:
 *   q0: judged d4; not ranked                         -> row empty
 *   q1: judged d1 (0), d3 (1), d9 (2); ranked d7 0.9, d2 0.7, then the
 *       tie at 0.5 d9 before d1                       -> 3, 4, 2, 0
 *   q2: judged d1 (0); tie at 0.3: d5 before d1       -> 1, 0
 *   q3: not judged                                    -> left out
 * The same rows come from a run that interleaves q1 and q2 (read again
 * whole), at one and at two threads, and a block read gathers them. */
static void expect_local_rows(const rs__corpus *c, const char *what)
{
  static const int64_t off[] = {0, 0, 4, 6};
  static const int32_t doc[] = {3, 4, 2, 0, 1, 0};
  static const int32_t qdoc[] = {0, 0, 1, 2, 0}, qgrade[] = {1, 0, 2, 1, 1};
  cr_assert(c->rows_ranked, "%s", what);
  cr_assert_eq(c->has_docs, 0, "%s", what);
  cr_assert_eq(c->nq, 3, "%s", what);
  cr_assert_arr_eq(c->qoff, ((int64_t[]){0, 1, 4, 5}), 4 * sizeof(int64_t), "%s", what);
  cr_assert_arr_eq(c->qdoc, qdoc, sizeof qdoc, "%s: judged docs", what);
  cr_assert_arr_eq(c->qgrade, qgrade, sizeof qgrade, "%s: grades", what);
  const rs__run_mem *m = c->runs.run[0].mem;
  cr_assert_eq(c->runs.run[0].has_score, 0, "%s", what);
  cr_assert_arr_eq(m->off, off, sizeof off, "%s: row offsets", what);
  cr_assert_null(m->row_doc[0], "%s", what);
  for (size_t q = 1; q < 3; q++)
    for (int64_t i = off[q]; i < off[q + 1]; i++)
      cr_assert_eq(m->row_doc[q][i - off[q]], doc[i], "%s: q%zu rank %lld", what, q, (long long)(i - off[q]));
  rs__block b = {0};
  rs_error err = {0};
  for (size_t q0 = 0; q0 < 3; q0++) {
    cr_assert_eq(rs__run_read(&c->runs.run[0], q0, 3 - q0, &b, &err), RS_OK, "%s", err.msg);
    cr_assert(!b.score32 && !b.score64, "%s", what);
    for (size_t i = 0; i <= 3 - q0; i++) cr_assert_eq(b.off[i], off[q0 + i] - off[q0], "%s: block from row %zu", what, q0);
    for (int64_t k = 0; k < off[3] - off[q0]; k++)
      cr_assert_eq(b.doc[k], doc[off[q0] + k], "%s: block from row %zu, doc %lld", what, q0, (long long)k);
  }
  rs__block_free(&b);
}

Test(import_texts, rows_only_numbers_docs_within_their_query)
{
  const char *qrels = th_write_temp(0, "qrels.txt", "q0 0 d4 1\nq1 0 d1 0\nq1 0 d3 2\nq1 0 d9 1\nq2 0 d1 1\n");
  const char *in_order = th_write_temp(1, "run.txt",
                                       "q1 Q0 d1 1 0.5 t\nq1 Q0 d7 2 0.9 t\nq1 Q0 d9 3 0.5 t\nq1 Q0 d2 4 0.7 t\n"
                                       "q2 Q0 d5 1 0.3 t\nq2 Q0 d1 2 0.3 t\nq3 Q0 d1 1 1.0 t\n");
  const char *interleaved = th_write_temp(2, "interleaved.txt",
                                          "q1 Q0 d1 1 0.5 t\nq1 Q0 d7 2 0.9 t\nq2 Q0 d5 1 0.3 t\nq3 Q0 d1 1 1.0 t\n"
                                          "q1 Q0 d9 3 0.5 t\nq2 Q0 d1 2 0.3 t\nq1 Q0 d2 4 0.7 t\n");
  char q[256], runs[2][256];
  snprintf(q, sizeof q, "%s", qrels);
  snprintf(runs[0], sizeof runs[0], "%s", in_order);
  snprintf(runs[1], sizeof runs[1], "%s", interleaved);
  for (int r = 0; r < 2; r++)
    for (int threads = 1; threads <= 2; threads++) {
      const rs__import_run ir = {.name = "run", .path = runs[r]};
      const rs__import_cfg cfg = {.qrels_path = q, .runs = &ir, .n_runs = 1, .threads = threads, .rows_only = 1};
      rs__corpus *c = NULL;
      rs_error err = {0};
      cr_assert_eq(rs__import_corpus(&cfg, &c, &err), RS_OK, "%s", err.msg);
      char what[64];
      snprintf(what, sizeof what, "%s, %d thread%s", r ? "interleaved" : "in order", threads, threads > 1 ? "s" : "");
      expect_local_rows(c, what);
      rs__corpus_close(c);
    }
  /* Without rows_only the same rows hold doc ids, numbered in strcmp order
   * (d1 d2 d3 d4 d5 d7 d9 -> 0..6). */
  const rs__import_run ir = {.name = "run", .path = runs[0]};
  const rs__import_cfg cfg = {.qrels_path = q, .runs = &ir, .n_runs = 1, .threads = 2};
  rs__corpus *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__import_corpus(&cfg, &c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(c->rows_ranked, 0);
  cr_assert_eq(c->nd, 7);
  cr_assert_arr_eq(c->runs.run[0].mem->doc, ((int32_t[]){5, 1, 6, 0, 4, 0}), 6 * sizeof(int32_t));
  rs__corpus_close(c);
}
