/* test_qrels_read.c: the qrels reader (src/formats/qrels.c) gives the same
 * tables, and the same first error, whether its line pass runs on one
 * share of the text or on several (one a thread, for texts of 512 KiB and
 * more).  The texts put comment lines, split topics and bad lines where
 * the shares meet.  Also: the topic each one's lines are followed by in
 * the file (rs__qrels.next_in_file). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/qrels.h"
#include "metrics/topic.h"
#include "helpers.h"

typedef struct {
  char *s;
  size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    const int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    cr_assert_geq(n, 0);
    if ((size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    t->cap = t->cap ? 2 * t->cap + (size_t)n : 1 << 20;
    t->s = realloc(t->s, t->cap);
    cr_assert(t->s);
  }
}

/* n judgment lines of 20 bytes each: topics of 1 to 5 lines in a shuffled
 * order, each line "qNNNNNN 0 dNNNNNN G\n" with G in 0..3 (docs repeat
 * within a topic now and then: its duplicate is noted). */
static void put_judgments(text *t, unsigned *seed, size_t n, unsigned topic0)
{
  unsigned topic = topic0;
  for (size_t i = 0; i < n;) {
    const unsigned lines = 1 + (unsigned)rand_r(seed) % 5;
    for (unsigned k = 0; k < lines && i < n; k++, i++)
      put(t, "q%06u 0 d%06u %u\n", topic % 1000000u, (unsigned)rand_r(seed) % 1000000u, (unsigned)rand_r(seed) % 4);
    topic = (topic * 7919u + 13u) % 1000000u; /* shuffled, and some topics come back later */
  }
}

static void expect_same_tables(const rs__qrels *a, const rs__qrels *b, int threads)
{
  cr_assert_eq(a->n_topics, b->n_topics, "%d threads", threads);
  cr_assert_eq(a->n_judged, b->n_judged, "%d threads", threads);
  cr_expect_eq(a->n_positive_lines, b->n_positive_lines, "%d threads", threads);
  size_t bad = 0;
  for (size_t t = 0; t < a->n_topics; t++) {
    bad += strcmp(a->topic_id[t], b->topic_id[t]) != 0 || a->first[t] != b->first[t] || a->count[t] != b->count[t] || a->dup[t] != b->dup[t] ||
           a->next_in_file[t] != b->next_in_file[t];
  }
  for (size_t j = 0; j < a->n_judged; j++)
    bad += th_strcmp_n(a->doc[j], a->doc_len[j], b->doc[j], b->doc_len[j]) != 0 || a->grade[j] != b->grade[j];
  bad += a->max_count != b->max_count || a->max_grade != b->max_grade;
  cr_expect_eq(bad, 0, "%d threads: %zu entries differ from one thread's", threads, bad);
}

/* Reads path at 1 thread, then at 2, 3 and 4: the same tables, or the same
 * error.  Returns the 1-thread error message (empty on success). */
static void read_everywhere(const char *path, char *msg1, size_t cap)
{
  rs__qrels *one = NULL;
  rs_error e1 = {0};
  const rs_code rc1 = rs__qrels_read(path, RS_NUMBERS_AS_TREC_EVAL, 1, &one, &e1);
  snprintf(msg1, cap, "%s", rc1 ? e1.msg : "");
  for (int threads = 2; threads <= 4; threads++) {
    rs__qrels *many = NULL;
    rs_error e = {0};
    const rs_code rc = rs__qrels_read(path, RS_NUMBERS_AS_TREC_EVAL, threads, &many, &e);
    cr_assert_eq(rc, rc1, "%d threads: code %d, one thread %d (%s / %s)", threads, rc, rc1, e.msg, e1.msg);
    if (rc) cr_expect_str_eq(e.msg, e1.msg, "%d threads", threads);
    else expect_same_tables(one, many, threads);
    rs__qrels_free(many);
  }
  rs__qrels_free(one);
}

/* The qrels text, written to a file, read alike at 1 to 4 threads without
 * an error (read_everywhere); the tables of the read at 2 threads. */
static rs__qrels *read_well_everywhere(const char *qrels_text)
{
  const char *path = th_write_temp(0, "qrels.txt", qrels_text);
  char msg[512];
  read_everywhere(path, msg, sizeof msg);
  cr_expect_str_eq(msg, "");
  rs__qrels *q = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__qrels_read(path, RS_NUMBERS_AS_TREC_EVAL, 2, &q, &err), RS_OK, "%s", err.msg);
  return q;
}

/* 2 x 60000 judgment lines around a middle of 'mid' (a comment of 100
 * bytes first, so that half the text falls in it and the second share
 * starts at the line after it). */
static const char *write_around(const char *mid, int slot)
{
  text t = {0};
  unsigned seed = 42;
  put_judgments(&t, &seed, 60000, 1);
  put(&t, "#%098d\n", 0); /* 100 bytes */
  put(&t, "%s", mid);
  put_judgments(&t, &seed, 60000, 500000);
  const size_t half = t.len / 2;
  cr_assert(half >= 60000 * 20 && half < 60000 * 20 + 100, "the middle falls in the long comment");
  const char *path = th_write_temp(slot, "qrels.txt", t.s);
  free(t.s);
  return path;
}

Test(qrels_read, shares_give_the_same_tables)
{
  char msg[512];
  read_everywhere(write_around("", 0), msg, sizeof msg); /* a share starts after a comment */
  cr_expect_str_eq(msg, "");
  read_everywhere(write_around("q999999 0 dsplit 2\n", 1), msg, sizeof msg); /* and with a judgment */
  cr_expect_str_eq(msg, "");
}

/* A text of 600 KB, as the qrels of 10k queries: shared out at two threads
 * and more too, with the same tables. */
Test(qrels_read, a_text_under_1_mib_is_shared_out_too)
{
  text t = {0};
  unsigned seed = 7;
  put_judgments(&t, &seed, 30000, 3);
  cr_assert_eq(t.len, 30000u * 20);
  char msg[512];
  read_everywhere(th_write_temp(0, "qrels.txt", t.s), msg, sizeof msg);
  cr_expect_str_eq(msg, "");
  free(t.s);
}

/* A topic whose lines are together, cut in two only by where the text is
 * shared out, stays one group: its judgments are not gathered, so every
 * thread count gives one thread's tables, first[] in file order.  18001
 * topics of 7 lines of 20 bytes, in an order strcmp does not keep (a
 * gathering would put them in topic order); at two threads the second
 * share starts at line 63004, inside the 9001st topic. */
Test(qrels_read, a_topic_cut_by_the_shares_stays_in_place)
{
  text t = {0};
  for (unsigned i = 0; i < 18001; i++)
    for (unsigned k = 0; k < 7; k++) put(&t, "t%06u 0 d%06u %u\n", (i * 7919u + 13u) % 1000000u, k, (i + k) % 3);
  cr_assert_eq(t.len, 18001u * 7 * 20);
  rs__qrels *q = read_well_everywhere(t.s);
  size_t bad = 0;
  for (size_t r = 0; r < q->n_topics; r++) { /* in place: topic r's lines are where the file has them */
    const char *line = q->doc[q->first[r]] - 3 - q->topic_len[r];
    bad += q->count[r] != 7 || memcmp(line, q->topic_id[r], q->topic_len[r]) != 0 ||
           q->first[r] * 20 != (size_t)(line - q->text);
  }
  cr_expect_eq(q->n_topics, 18001);
  cr_expect_eq(bad, 0, "%zu topics not in place", bad);
  rs__qrels_free(q);
  free(t.s);
}

/* Every topic in three groups of lines (the file lists the topics three
 * times over): after sorting, a topic's three keys are side by side, and
 * at two threads the keys are named in two parts whose border falls
 * between a topic's keys (60003 keys, cut at 30001).  Each thread count
 * gives one thread's tables; each topic has its three lines, gathered in
 * file order, and is named by its first. */
Test(qrels_read, parts_of_the_keys_cut_inside_a_topic)
{
  enum { N_TOPICS = 20001 };
  text t = {0};
  for (unsigned pass = 0; pass < 3; pass++)
    for (unsigned i = 0; i < N_TOPICS; i++) put(&t, "t%06u 0 d%u_%06u %u\n", (i * 7919u + 13u) % 1000000u, pass, i, pass);
  rs__qrels *q = read_well_everywhere(t.s);
  cr_assert_eq(q->n_topics, N_TOPICS);
  size_t bad = 0;
  for (size_t r = 0; r < q->n_topics; r++) {
    bad += q->count[r] != 3 || (r > 0 && strcmp(q->topic_id[r - 1], q->topic_id[r]) >= 0);
    for (size_t k = 0; k < 3 && q->count[r] == 3; k++) { /* docnos d0_, d1_, d2_ in order, grade = pass */
      const size_t j = q->first[r] + k;
      bad += q->grade[j] != (int32_t)k || q->doc[j][1] != (char)('0' + k) ||
             memcmp(q->doc[j] - 3 - q->topic_len[r], q->topic_id[r], q->topic_len[r]) != 0;
    }
  }
  cr_expect_eq(bad, 0, "%zu topics wrong", bad);
  rs__qrels_free(q);
  free(t.s);
}

Test(qrels_read, shares_tell_the_first_error)
{
  char msg[512];
  /* a second comment right where the second share starts */
  read_everywhere(write_around("# again\n", 0), msg, sizeof msg);
  cr_expect(strstr(msg, ":60002: two consecutive comment lines"), "%s", msg);
  /* a bad line there */
  read_everywhere(write_around("q1 0 d1\n", 1), msg, sizeof msg);
  cr_expect(strstr(msg, ":60002: malformed qrels line: expected 4 fields 'qid iter docno grade', found 3"), "%s", msg);
  /* bad lines in both shares: the first is told */
  text t = {0};
  unsigned seed = 7;
  put_judgments(&t, &seed, 1000, 3);
  put(&t, "q1 0 d1 x y\n");
  put_judgments(&t, &seed, 120000, 9);
  put(&t, "broken\n");
  put_judgments(&t, &seed, 1000, 11);
  read_everywhere(th_write_temp(2, "qrels.txt", t.s), msg, sizeof msg);
  cr_expect(strstr(msg, ":1001: malformed qrels line: expected 4 fields 'qid iter docno grade', found 5"), "%s", msg);
  free(t.s);
  /* a comment as the file's last line, after shares */
  text u = {0};
  put_judgments(&u, &seed, 150000, 5);
  put(&u, "# the end\n");
  read_everywhere(th_write_temp(3, "qrels.txt", u.s), msg, sizeof msg);
  cr_expect(strstr(msg, ":150001: a comment is the last line of the qrels"), "%s", msg);
  free(u.s);
}

/* next_in_file follows the groups of lines in the file, not the topics'
 * strcmp order; a topic split in two groups points after its last. */
Test(qrels_read, next_topic_in_file_order)
{
  const char *lines = "q2 0 a 1\nq10 0 b 1\nq1 0 c 0\nq10 0 d 1\nq3 0 e 2\n";
  rs__qrels *q = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__qrels_read(th_write_temp(0, "qrels.txt", lines), RS_NUMBERS_STRICT, 1, &q, &err), RS_OK, "%s",
               err.msg);
  cr_assert_eq(q->n_topics, 4);
  /* strcmp order: q1 q10 q2 q3 */
  cr_expect_str_eq(q->topic_id[0], "q1");
  cr_expect_str_eq(q->topic_id[1], "q10");
  cr_expect_eq(q->next_in_file[2], 1, "q2 is followed by q10");
  cr_expect_eq(q->next_in_file[0], 1, "q1 is followed by q10's second group");
  cr_expect_eq(q->next_in_file[1], 3, "q10's last group is followed by q3");
  cr_expect_eq(q->next_in_file[3], UINT32_MAX, "q3 ends the file");
  rs__qrels_free(q);
}

/* Topic ids of 1 to 20 bytes over an alphabet with bytes above 0x7f, many
 * sharing their first 8 bytes (runs of one head longer and shorter than
 * 16), each in one to three groups of lines: the topics come out in
 * strcmp order, once each, named by their first line in the file. */
Test(qrels_read, topics_in_strcmp_order_named_by_their_first_line)
{
  enum { N_IDS = 3000 };
  static char ids[N_IDS][24];
  static const char alphabet[] = "ab_09\x80\xff";
  unsigned seed = 99;
  for (int i = 0; i < N_IDS; i++) {
    const int len = 1 + (int)(rand_r(&seed) % 20);
    char head[16]; /* i % 3: 0 random, 1 one of 200 heads (runs of a few), 2 one head (a run of ~1000) */
    snprintf(head, sizeof head, i % 3 == 1 ? "p%03dabcd" : "qrelsqre", (i / 3) % 200);
    for (int j = 0; j < len; j++)
      ids[i][j] = i % 3 && j < 8 ? head[j] : alphabet[rand_r(&seed) % (sizeof alphabet - 1)];
    ids[i][len] = '\0';
  }
  text t = {0};
  for (int pass = 0; pass < 3; pass++)
    for (int i = 0; i < N_IDS; i++)
      if (pass == 0 || rand_r(&seed) % 4 == 0) put(&t, "%s 0 d%d_%d 1\n", ids[i], pass, i);
  rs__qrels *q = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__qrels_read(th_write_temp(0, "qrels.txt", t.s), RS_NUMBERS_STRICT, 1, &q, &err), RS_OK, "%s",
               err.msg);
  size_t distinct = 0;
  for (int i = 0; i < N_IDS; i++) {
    int seen = 0;
    for (int k = 0; k < i && !seen; k++) seen = strcmp(ids[k], ids[i]) == 0;
    distinct += !seen;
  }
  cr_assert_eq(q->n_topics, distinct);
  size_t bad_order = 0, bad_name = 0;
  for (size_t r = 0; r < q->n_topics; r++) {
    bad_order += r > 0 && strcmp(q->topic_id[r - 1], q->topic_id[r]) >= 0;
    /* its first line: the lowest of its judgments' docnos (they point
     * into the file), whose line is "<id> 0 <docno> 1" */
    const char *first_doc = NULL;
    for (size_t j = q->first[r]; j < q->first[r] + q->count[r]; j++)
      if (!first_doc || q->doc[j] < first_doc) first_doc = q->doc[j];
    cr_assert(first_doc);
    const size_t len = strlen(q->topic_id[r]);
    const char *first = first_doc - 3 - len;
    bad_name += len != q->topic_len[r] || first < q->text || memcmp(first, q->topic_id[r], len) != 0 ||
                (first > q->text && first[-1] != '\n');
  }
  cr_expect_eq(bad_order, 0, "%zu topics out of strcmp order", bad_order);
  cr_expect_eq(bad_name, 0, "%zu topics not named by their first line", bad_name);
  free(t.s);
  rs__qrels_free(q);
}

/* Within each topic the docnos come out in strcmp order (compared on their
 * first 8 bytes as one number, then the rest), the first duplicate is
 * noted, and rs__levels_of counts the grade levels: docnos of 1 to 14
 * bytes over an alphabet with bytes above 0x7f, many sharing 8 bytes, some
 * repeated, in topics of 1 to 40 lines with grades -1 to 3. */
Test(qrels_read, docnos_in_strcmp_order_and_the_first_duplicate)
{
  static const char alphabet[] = "az09_\x80\xff";
  unsigned seed = 5;
  text t = {0};
  for (unsigned topic = 0; topic < 400; topic++) {
    const unsigned n = 1 + rand_r(&seed) % 40;
    char docs[40][16];
    for (unsigned k = 0; k < n; k++) {
      if (k > 0 && rand_r(&seed) % 50 == 0) { /* a repeat */
        memcpy(docs[k], docs[rand_r(&seed) % k], sizeof docs[k]);
      } else {
        const unsigned len = 1 + rand_r(&seed) % 14;
        for (unsigned j = 0; j < len; j++)
          docs[k][j] = j < 8 && topic % 2 ? "sharedhd"[j] : alphabet[rand_r(&seed) % (sizeof alphabet - 1)];
        docs[k][len] = '\0';
      }
      put(&t, "t%u 0 %s %d\n", topic, docs[k], (int)(k % 5) - 1);
    }
  }
  rs__qrels *q = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__qrels_read(th_write_temp(0, "qrels.txt", t.s), RS_NUMBERS_AS_TREC_EVAL, 1, &q, &err), RS_OK, "%s",
               err.msg);
  free(t.s);
  cr_assert_eq(q->n_topics, 400);
  size_t bad = 0, dups = 0, max_count = 0;
  for (size_t r = 0; r < q->n_topics; r++) {
    size_t want_dup = SIZE_MAX;
    for (size_t j = q->first[r] + 1; j < q->first[r] + q->count[r]; j++) {
      const int c = th_strcmp_n(q->doc[j - 1], q->doc_len[j - 1], q->doc[j], q->doc_len[j]);
      bad += c > 0;
      if (c == 0 && want_dup == SIZE_MAX) want_dup = j;
    }
    bad += q->dup[r] != want_dup;
    dups += want_dup != SIZE_MAX;
    /* its grade levels (rs__levels_of): grades 0..3 counted by hand, -1
     * (judged not relevant) not a level */
    size_t count[5] = {0, 0, 0, 0, 0}, n_levels = 0;
    for (size_t j = q->first[r]; j < q->first[r] + q->count[r]; j++) count[q->grade[j] + 1]++;
    int32_t lg[40];
    uint32_t lc[40];
    const rs_levels lv = rs__levels_of(q->grade + q->first[r], q->count[r], lg, lc);
    for (int g = 0; g <= 3; g++) {
      if (!count[g + 1]) continue;
      bad += n_levels >= lv.n || lv.grade[n_levels] != g || lv.count[n_levels] != count[g + 1];
      n_levels++;
    }
    bad += lv.n != n_levels;
    max_count = q->count[r] > max_count ? q->count[r] : max_count;
  }
  cr_expect_eq(q->max_grade, 3);
  cr_expect_eq(q->max_count, max_count);
  cr_expect_eq(max_count, 40);
  cr_expect_eq(bad, 0, "%zu docnos out of order or duplicates missed", bad);
  cr_expect_gt(dups, 10, "%zu topics with a repeated docno", dups);
}

/* A NUL inside a docno token (not white space, so part of the token) ends
 * the docno for trec_eval's strcmp: "ab\0zz" and "ab\0yy" are one docno,
 * a duplicate, and so are "abcdefgh\0x" and "abcdefgh". */
Test(qrels_read, a_nul_inside_a_docno_ends_it)
{
  static const char lines[][32] = {"t1 0 ab\0zz 1\n", "t1 0 ab\0yy 1\n", "t2 0 abcdefgh\0x 1\n", "t2 0 abcdefgh 0\n",
                                   "t3 0 ab\0zz 1\n", "t3 0 abc 1\n"};
  static const size_t lens[] = {13, 13, 18, 16, 13, 11};
  const char *path = th_write_temp(0, "qrels.txt", "");
  FILE *f = fopen(path, "wb");
  cr_assert(f);
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) cr_assert_eq(fwrite(lines[i], 1, lens[i], f), lens[i]);
  cr_assert_eq(fclose(f), 0);
  rs__qrels *q = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__qrels_read(path, RS_NUMBERS_AS_TREC_EVAL, 1, &q, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(q->n_topics, 3);
  cr_expect_neq(q->dup[0], SIZE_MAX, "t1: ab twice");
  cr_expect_neq(q->dup[1], SIZE_MAX, "t2: abcdefgh twice");
  cr_expect_eq(q->dup[2], SIZE_MAX, "t3: ab and abc differ");
  cr_expect(q->doc_len[q->first[2]] == 5 && memcmp(q->doc[q->first[2]], "ab\0zz", 5) == 0, "t3: ab before abc");
  rs__qrels_free(q);
}
