/* test_corpus_ids.c: a corpus's ids as the open reads and checks them.
 * Query ids unique (rising ids, or else hashes bucketed on all threads),
 * whatever rows a duplicate sits in, at one thread and two.  Fixed-length ids, read from
 * the file's bytes, against what libhdf5 hands over for each padding
 * (written here with libhdf5, in layouts our writer never makes), and
 * their order checked in parts.  A run compressed by a filter plugin (LZ4,
 * Debian's hdf5-filter-plugin, which scripts/install-deps.sh installs for
 * the tests): read as its plain copy, and named at open when the plugin
 * cannot be found. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hdf5.h>

#include "engine/sched.h"
#include "formats/corpus.h"
#include "helpers.h"

/* A corpus of the nq query ids qid[]: one doc, one judgment, one run
 * ranking the doc for every query. */
static char *write_ids(const char *const *qid, size_t nq)
{
  char *path = th_join(th_fresh_dir(), "many.h5");
  int64_t *qoff = calloc(nq + 1, sizeof *qoff);
  int32_t *doc = calloc(nq, sizeof *doc);
  cr_assert(qoff && doc);
  for (size_t i = 0; i < nq; i++) qoff[i + 1] = 1; /* query 0 judges doc 0 */
  rs_error err = {0};
  rs__h5w *w = NULL;
  cr_assert_eq(rs__h5w_create(path, 1, &w, &err), RS_OK, "%s", err.msg);
  const char *const did[] = {"d0"};
  int32_t qdoc[] = {0}, qgrade[] = {1};
  cr_assert_eq(rs__h5w_strings(w, "/queries/id", qid, nq, 0, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_strings(w, "/docs/id", did, 1, 0, &err), RS_OK, "%s", err.msg);
  uint64_t dims[2] = {nq + 1, 1};
  cr_assert_eq(rs__h5w_array(w, "/qrels/offsets", RS_DT_I64, 1, dims, qoff, &err), RS_OK, "%s", err.msg);
  dims[0] = 1;
  cr_assert_eq(rs__h5w_array(w, "/qrels/doc", RS_DT_I32, 1, dims, qdoc, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_array(w, "/qrels/grade", RS_DT_I32, 1, dims, qgrade, &err), RS_OK, "%s", err.msg);
  dims[0] = nq;
  cr_assert_eq(rs__h5w_array(w, "/runs/sys/doc", RS_DT_I32, 2, dims, doc, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_commit(w, &err), RS_OK, "%s", err.msg);
  free(qoff);
  free(doc);
  return path;
}

/* nq query ids "q%06zu", rising (or falling: "q%06zu" of nq - 1 - row),
 * row dup_of's id again at row dup_at when dup_at < nq (write_ids). */
static char *write_query_ids(size_t nq, size_t dup_of, size_t dup_at, int falling)
{
  char **qid = calloc(nq, sizeof *qid);
  cr_assert(qid);
  for (size_t i = 0; i < nq; i++) {
    qid[i] = malloc(16);
    cr_assert(qid[i]);
    const size_t row = i == dup_at ? dup_of : i;
    snprintf(qid[i], 16, "q%06zu", falling ? nq - 1 - row : row);
  }
  char *path = write_ids((const char *const *)qid, nq);
  for (size_t i = 0; i < nq; i++) free(qid[i]);
  free(qid);
  return path;
}

static char *write_many_queries(size_t nq, size_t dup_of, size_t dup_at)
{
  return write_query_ids(nq, dup_of, dup_at, 0);
}

enum { MANY = 150000 }; /* past the two parts of 65536 rows the checks split at two threads */

static rs_code open_at(const char *path, int threads, rs_error *err)
{
  rs__threads_set_default(threads);
  rs__corpus *c = NULL;
  const rs_code rc = rs__corpus_open(path, &c, err);
  rs__corpus_close(c);
  return rc;
}

/* Rising ids pass on their order, falling ones on their hashes. */
Test(corpus_ids, many_distinct_query_ids_pass_at_one_thread_and_two, .timeout = 60)
{
  for (int falling = 0; falling <= 1; falling++) {
    const char *path = write_query_ids(MANY, MANY, MANY, falling);
    for (int t = 1; t <= 2; t++) {
      rs_error err = {0};
      cr_expect_eq(open_at(path, t, &err), RS_OK, "%s ids, %d threads: %s", falling ? "falling" : "rising", t, err.msg);
    }
  }
}

/* At two threads the ids are read in two parts of 75000 rows, each of
 * which rises here: the duplicate is where they meet, in falling ids too. */
Test(corpus_ids, a_duplicate_where_the_parts_meet_is_found, .timeout = 60)
{
  for (int falling = 0; falling <= 1; falling++) {
    const char *path = write_query_ids(MANY, 74999, 75000, falling);
    char want[128];
    snprintf(want, sizeof want, "rows 74999 and 75000: expected unique query ids, found 'q%06zu' twice",
             falling ? (size_t)MANY - 1 - 74999 : (size_t)74999);
    for (int t = 1; t <= 2; t++) {
      rs_error err = {0};
      cr_expect_eq(open_at(path, t, &err), RS_FORMAT, "%d threads: %s", t, err.msg);
      cr_expect(strstr(err.msg, want), "%d threads: expected \"%s\" in \"%s\"", t, want, err.msg);
    }
  }
}

/* A duplicate in each half, and one across the halves: each is found and
 * named by its rows, at one thread and two. */
Test(corpus_ids, a_duplicate_query_id_is_found_wherever_it_sits, .timeout = 120)
{
  static const struct {
    size_t of, at;
  } dups[] = {{3, 70000}, {3, MANY - 1}, {80000, 149000}, {0, 1}};
  for (size_t k = 0; k < sizeof dups / sizeof *dups; k++) {
    const char *path = write_many_queries(MANY, dups[k].of, dups[k].at);
    char want[128];
    snprintf(want, sizeof want, "rows %zu and %zu: expected unique query ids, found 'q%06zu' twice", dups[k].of,
             dups[k].at, dups[k].of);
    for (int t = 1; t <= 2; t++) {
      rs_error err = {0};
      cr_expect_eq(open_at(path, t, &err), RS_FORMAT, "q%06zu at row %zu, %d threads: %s", dups[k].of, dups[k].at, t,
                   err.msg);
      cr_expect(strstr(err.msg, want), "%d threads: expected \"%s\" in \"%s\"", t, want, err.msg);
    }
  }
}

/* Ids of 1 to 12 bytes, ASCII and not, rising in strcmp order across the
 * 8 bytes that are compared as one word: they pass; the same with one id
 * again (next to its first, or after longer and shorter ones), or out of
 * order, fail or pass as their bytes say. */
Test(corpus_ids, ids_short_and_long_rise_in_strcmp_order)
{
  const char *const rising[] = {"a", "ab", "abcdefg", "abcdefgh", "abcdefgh0", "abcdefghi", "abcdefgi",
                                "b", "bb", "b\xc3\xa9", "zzzzzzzzzzzz"};
  const size_t n = sizeof rising / sizeof *rising;
  for (size_t i = 1; i < n; i++) cr_assert_lt(strcmp(rising[i - 1], rising[i]), 0, "the list itself, at %zu", i);
  const char *path = write_ids(rising, n);
  for (int t = 1; t <= 2; t++) {
    rs_error err = {0};
    cr_expect_eq(open_at(path, t, &err), RS_OK, "%d threads: %s", t, err.msg);
  }
  static const struct {
    size_t of, at; /* rising[of] again at row at (the rows after it move down) */
  } dups[] = {{3, 4}, {3, 7}, {5, 6}, {0, 11}, {9, 10}};
  for (size_t k = 0; k < sizeof dups / sizeof *dups; k++) {
    const char *ids[16];
    for (size_t i = 0, j = 0; i <= n; i++) ids[i] = i == dups[k].at ? rising[dups[k].of] : rising[j++];
    char want[128];
    snprintf(want, sizeof want, "rows %zu and %zu: expected unique query ids, found '%s' twice", dups[k].of,
             dups[k].at, rising[dups[k].of]);
    path = write_ids(ids, n + 1);
    for (int t = 1; t <= 2; t++) {
      rs_error err = {0};
      cr_expect_eq(open_at(path, t, &err), RS_FORMAT, "dup %zu, %d threads: %s", k, t, err.msg);
      cr_expect(strstr(err.msg, want), "dup %zu, %d threads: expected \"%s\" in \"%s\"", k, t, want, err.msg);
    }
  }
  /* out of order but distinct: checked on hashes, and passes */
  const char *const swapped[] = {"abcdefgh", "abcdefg", "b\xc3\xa9", "bb", "zzzzzzzzzzzz", "a"};
  path = write_ids(swapped, sizeof swapped / sizeof *swapped);
  rs_error err = {0};
  cr_expect_eq(open_at(path, 1, &err), RS_OK, "%s", err.msg);
}

/* --- fixed-length ids ------------------------------------------------------ */

/* A corpus of nd docs whose /docs/id holds n_rows rows of w bytes each
 * (bytes), of padding pad, written with libhdf5 after the rest. */
static char *write_fixed_docs(const char *bytes, size_t nd, size_t w, H5T_str_t pad)
{
  char *path = th_join(th_fresh_dir(), "fixed.h5");
  rs_error err = {0};
  rs__h5w *wr = NULL;
  const char *const qid[] = {"q1"};
  int64_t qoff[] = {0, 1};
  int32_t qdoc[] = {0}, qgrade[] = {1}, doc[] = {0};
  cr_assert_eq(rs__h5w_create(path, 1, &wr, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_strings(wr, "/queries/id", qid, 1, 0, &err), RS_OK, "%s", err.msg);
  uint64_t dims[2] = {2, 1};
  cr_assert_eq(rs__h5w_array(wr, "/qrels/offsets", RS_DT_I64, 1, dims, qoff, &err), RS_OK, "%s", err.msg);
  dims[0] = 1;
  cr_assert_eq(rs__h5w_array(wr, "/qrels/doc", RS_DT_I32, 1, dims, qdoc, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_array(wr, "/qrels/grade", RS_DT_I32, 1, dims, qgrade, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_array(wr, "/runs/sys/doc", RS_DT_I32, 2, dims, doc, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_commit(wr, &err), RS_OK, "%s", err.msg);
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), t = H5Tcopy(H5T_C_S1);
  hsize_t n = nd;
  hid_t sp = H5Screate_simple(1, &n, NULL);
  cr_assert(f >= 0 && t >= 0 && sp >= 0);
  cr_assert(H5Tset_size(t, w) >= 0 && H5Tset_strpad(t, pad) >= 0);
  hid_t g = H5Gcreate2(f, "docs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t d = H5Dcreate2(f, "/docs/id", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert(g >= 0 && d >= 0);
  cr_assert(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes) >= 0);
  H5Dclose(d), H5Gclose(g), H5Sclose(sp), H5Tclose(t);
  cr_assert(H5Fclose(f) >= 0);
  return path;
}

/* What libhdf5 hands over for row i: the dataset read into its own type,
 * then cut as read_strings documents (first NUL; trailing spaces when the
 * type pads with spaces). */
static void libhdf5_row(const char *path, size_t i, char *out, size_t cap)
{
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "/docs/id", H5P_DEFAULT);
  hid_t ft = H5Dget_type(d), fs = H5Dget_space(d);
  const size_t w = H5Tget_size(ft);
  hsize_t at = i, one = 1;
  hid_t ms = H5Screate_simple(1, &one, NULL);
  char *buf = calloc(1, w + 1);
  cr_assert(buf && w < cap && H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL, &one, NULL) >= 0);
  cr_assert(H5Dread(d, ft, ms, fs, H5P_DEFAULT, buf) >= 0);
  size_t l = strnlen(buf, w);
  while (H5Tget_strpad(ft) == H5T_STR_SPACEPAD && l > 0 && buf[l - 1] == ' ') l--;
  memcpy(out, buf, l);
  out[l] = '\0';
  free(buf);
  H5Sclose(ms), H5Sclose(fs), H5Tclose(ft), H5Dclose(d), H5Fclose(f);
}

/* Rows of 6 bytes: full width (no NUL), a NUL then bytes after it, short
 * ones, trailing and only spaces; each padding. */
Test(corpus_ids, fixed_length_ids_from_the_bytes_are_what_libhdf5_hands_over)
{
  static const char rows[] = "abcdef"
                             "ab\0xyz"
                             "b\0\0\0\0\0"
                             "c  \0\0\0"
                             "d     "
                             "      "
                             "\xc3\xa9t\xc3\xa9";
  static const struct {
    H5T_str_t pad;
    const char *want[7];
  } cases[] = {
      {H5T_STR_NULLPAD, {"abcdef", "ab", "b", "c  ", "d     ", "      ", "\xc3\xa9t\xc3\xa9"}},
      {H5T_STR_NULLTERM, {"abcdef", "ab", "b", "c  ", "d     ", "      ", "\xc3\xa9t\xc3\xa9"}},
      {H5T_STR_SPACEPAD, {"abcdef", "ab", "b", "c", "d", "", "\xc3\xa9t\xc3\xa9"}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    const char *path = write_fixed_docs(rows, 7, 6, cases[k].pad);
    rs_error err = {0};
    rs__corpus *c = NULL;
    cr_assert_eq(rs__corpus_open(path, &c, &err), RS_OK, "pad %d: %s", (int)cases[k].pad, err.msg);
    cr_assert_eq(rs__corpus_load_doc_ids(c, &err), RS_OK, "%s", err.msg);
    cr_assert_eq(c->nd, 7);
    for (size_t i = 0; i < 7; i++) {
      char via[16];
      libhdf5_row(path, i, via, sizeof via);
      cr_expect_str_eq(via, cases[k].want[i], "pad %d row %zu: libhdf5", (int)cases[k].pad, i);
      cr_expect_str_eq(c->doc_id[i], cases[k].want[i], "pad %d row %zu: ragsweep", (int)cases[k].pad, i);
    }
    cr_expect_eq(c->doc_ids_sorted, 0, "pad %d: row 1 ('ab') is below row 0", (int)cases[k].pad);
    rs__corpus_close(c);
  }
}

/* Sorted or not, as strcmp sees the ids libhdf5 hands over: rows of w
 * bytes made by id(i), with one row made to fall at row `fall` (none when
 * fall >= n), at one thread and two. */
static void expect_order(size_t n, size_t w, H5T_str_t pad, size_t fall, int sorted)
{
  char *bytes = calloc(n, w);
  cr_assert(bytes);
  for (size_t i = 0; i < n; i++) {
    char id[32];
    snprintf(id, sizeof id, "d%07zu", i == fall ? i - 2 : i);
    memcpy(bytes + i * w, id, strlen(id));
    if (pad == H5T_STR_SPACEPAD) memset(bytes + i * w + strlen(id), ' ', w - strlen(id));
  }
  const char *path = write_fixed_docs(bytes, n, w, pad);
  free(bytes);
  for (int t = 1; t <= 2; t++) {
    rs__threads_set_default(t);
    rs_error err = {0};
    rs__corpus *c = NULL;
    cr_assert_eq(rs__corpus_open(path, &c, &err), RS_OK, "%s", err.msg);
    cr_expect_eq(c->doc_ids_sorted, sorted, "%zu rows, falling at %zu, %d threads", n, fall, t);
    cr_expect_eq(c->doc_id == NULL, sorted, "ids kept by the open only when not sorted (for the ties)");
    rs__corpus_close(c);
  }
}

Test(corpus_ids, fixed_length_ids_in_order_are_found_so_on_all_threads, .timeout = 60)
{
  enum { N = 100000 }; /* parts of 50000 rows at two threads; reads of 128 KiB (11915 rows of 11 bytes) */
  expect_order(N, 11, H5T_STR_NULLPAD, N, 1);
  expect_order(N, 12, H5T_STR_SPACEPAD, N, 1);
  expect_order(N, 11, H5T_STR_NULLPAD, 50000, 0); /* the first row of the second part */
  expect_order(N, 11, H5T_STR_NULLPAD, 49999, 0); /* the last row of the first */
  expect_order(N, 11, H5T_STR_NULLPAD, 11915, 0); /* the first row of a part's second read */
  expect_order(N, 11, H5T_STR_NULLPAD, 61915, 0); /* the same in the second part (two threads) */
  expect_order(N, 11, H5T_STR_NULLTERM, N - 1, 0);
  expect_order(N, 11, H5T_STR_NULLPAD, 2, 0); /* equal to row 0 */
}

/* Pairs of rows in order or not, as strcmp orders what libhdf5 hands over:
 * bytes after a NUL do not count, bytes compare unsigned, and the last
 * bytes of a row past a multiple of 8 count as the rest. */
Test(corpus_ids, fixed_length_order_is_strcmp_order_of_the_strings)
{
  static const struct {
    const char *rows; /* two rows of w bytes */
    size_t w;
    int sorted;
  } cases[] = {
      {"ab\0xyz" "ab\0zzz", 6, 0},              /* equal before their NULs */
      {"ab\0xyzzz" "ab\0zzzzz", 8, 0},          /* the same in a whole word */
      {"ab\0zzzzz" "ab\0xyzzz", 8, 0},
      {"ab\0\0\0\0\0\0" "abc\0\0\0\0\0", 8, 1},    /* the NUL where they differ */
      {"abc\0\0\0\0\0" "ab\0\0\0\0\0\0", 8, 0},
      {"ab\0zzz" "abc\0\0\0", 6, 1},           /* a prefix first */
      {"abc\0\0\0" "ab\0zzz", 6, 0},
      {"abcdefgh12" "abcdefgh1\0", 10, 0},      /* past the first 8 bytes */
      {"abcdefgh1\0" "abcdefgh12", 10, 1},
      {"abcdefgh\0q" "abcdefgh\0a", 10, 0},    /* equal: a NUL at byte 8 */
      {"abcdefgZ" "abcdefga", 8, 1},             /* 'Z' < 'a' */
      {"\xc3\xa9\0\0\0\0\0\0" "z\0\0\0\0\0\0\0", 8, 0}, /* unsigned: 0xc3 > 'z' */
      {"z\0\0\0\0\0\0\0" "\xc3\xa9\0\0\0\0\0\0", 8, 1},
      {"same-id-1234567" "same-id-1234567", 15, 0},
      {"same-id-1234567" "same-id-1234568", 15, 1},
      /* 9 to 16 bytes (the first 8 and the last 8 as two numbers) */
      {"abcdefgh1" "abcdefgh2", 9, 1},
      {"abcdefgh2" "abcdefgh1", 9, 0},
      {"abcdefghij\0x" "abcdefghij\0y", 12, 0},  /* equal: a NUL in the last word, bytes after it differ */
      {"abcdefghij\0y" "abcdefghi\0\0x", 12, 0}, /* the second ends first */
      {"abcdefghi\0\0x" "abcdefghij\0a", 12, 1},
      {"abcdefgh\0\0\0\0\0\0\0z" "abcdefgh\0\0\0\0\0\0\0a", 16, 0}, /* a NUL at byte 8 */
      {"abcdefghijklmno\x7f" "abcdefghijklmno\x80", 16, 1}, /* unsigned, in the last byte */
      {"abcdefghijklmno\x80" "abcdefghijklmno\x7f", 16, 0},
      {"abc\0wxyz12345" "abc\0wxyz12346", 13, 0},     /* equal in the first word, whatever follows */
      {"abb\0wxyz12345" "abc\0wxyz12344", 13, 1},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    for (int pad = 0; pad < 2; pad++) {
      const char *path = write_fixed_docs(cases[k].rows, 2, cases[k].w, pad ? H5T_STR_NULLTERM : H5T_STR_NULLPAD);
      rs_error err = {0};
      rs__corpus *c = NULL;
      cr_assert_eq(rs__corpus_open(path, &c, &err), RS_OK, "%s", err.msg);
      cr_expect_eq(c->doc_ids_sorted, cases[k].sorted, "case %zu, pad %d", k, pad);
      cr_assert_eq(rs__corpus_load_doc_ids(c, &err), RS_OK, "%s", err.msg);
      cr_expect_eq(strcmp(c->doc_id[0], c->doc_id[1]) < 0, cases[k].sorted, "case %zu: strcmp of the ids read", k);
      rs__corpus_close(c);
    }
}

/* --- qrels copied from the file's bytes --------------------------------- */

/* Grades stored in signed 8 and 16 bits come out as libhdf5 converts them
 * to int32 (the file's bytes widened), and so do the offsets and docs
 * beside them (stored as read: copied); unsigned grades are refused. */
Test(corpus_ids, narrow_grades_are_widened_as_libhdf5_does)
{
  static const int32_t want[][4] = {{-1, 0, 3, 127}, {-128, 1, -2, 100}, {-300, 0, 2, 30000}, {0, 1, 200, 255}};
  const hid_t types[] = {H5T_STD_I8LE, H5T_STD_I8LE, H5T_STD_I16LE, H5T_STD_U8LE};
  for (size_t k = 0; k < 4; k++) {
    char *path = th_join(th_fresh_dir(), "grades.h5");
    rs_error err = {0};
    rs__h5w *wr = NULL;
    const char *const qid[] = {"q1", "q2"}, *const did[] = {"d0", "d1", "d2"};
    int64_t qoff[] = {0, 3, 4};
    int32_t qdoc[] = {0, 1, 2, 1}, doc[] = {0, 1};
    cr_assert_eq(rs__h5w_create(path, 1, &wr, &err), RS_OK, "%s", err.msg);
    cr_assert_eq(rs__h5w_strings(wr, "/queries/id", qid, 2, 0, &err), RS_OK, "%s", err.msg);
    cr_assert_eq(rs__h5w_strings(wr, "/docs/id", did, 3, 0, &err), RS_OK, "%s", err.msg);
    uint64_t dims[2] = {3, 1};
    cr_assert_eq(rs__h5w_array(wr, "/qrels/offsets", RS_DT_I64, 1, dims, qoff, &err), RS_OK, "%s", err.msg);
    dims[0] = 4;
    cr_assert_eq(rs__h5w_array(wr, "/qrels/doc", RS_DT_I32, 1, dims, qdoc, &err), RS_OK, "%s", err.msg);
    dims[0] = 2;
    cr_assert_eq(rs__h5w_array(wr, "/runs/sys/doc", RS_DT_I32, 2, dims, doc, &err), RS_OK, "%s", err.msg);
    cr_assert_eq(rs__h5w_commit(wr, &err), RS_OK, "%s", err.msg);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hsize_t n = 4;
    hid_t sp = H5Screate_simple(1, &n, NULL), d = H5Dcreate2(f, "/qrels/grade", types[k], sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert(f >= 0 && d >= 0);
    cr_assert(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, want[k]) >= 0);
    H5Dclose(d), H5Sclose(sp), H5Fclose(f);
    rs__corpus *c = NULL;
    if (k == 3) {
      cr_expect_eq(rs__corpus_open(path, &c, &err), RS_FORMAT);
      cr_expect(strstr(err.msg, "grades.h5:/qrels/grade: expected signed integers, found unsigned integer of 1 bytes"), "%s",
                err.msg);
      continue;
    }
    cr_assert_eq(rs__corpus_open(path, &c, &err), RS_OK, "type %zu: %s", k, err.msg);
    for (size_t i = 0; i < 4; i++) {
      cr_expect_eq(c->qgrade[i], want[k][i], "type %zu, row %zu: %d", k, i, c->qgrade[i]);
      cr_expect_eq(c->qdoc[i], qdoc[i], "type %zu: doc of row %zu", k, i);
    }
    for (size_t i = 0; i < 3; i++) cr_expect_eq(c->qoff[i], qoff[i]);
    rs__corpus_close(c);
  }
}

/* --- a run through a filter plugin ------------------------------------------ */

enum { LZ4_FILTER = 32004 }; /* the registered id of the LZ4 filter */

/* The rows of the runs below (two queries, four columns). */
static const int32_t LZ4_DOC[2][4] = {{0, 1, 2, 3}, {4, 2, -1, -1}};
static const float LZ4_SCORE[2][4] = {{0.9f, 0.8f, 0.5f, 0.1f}, {0.7f, 0.2f, 0.0f, 0.0f}};

/* Into file f: group (its parent existing) holding those rows chunked and
 * compressed by the LZ4 plugin. */
static void write_lz4_group(hid_t f, const char *group)
{
  hsize_t shape[2] = {2, 4}, chunk[2] = {1, 4};
  hid_t sp = H5Screate_simple(2, shape, NULL), pl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t g = H5Gcreate2(f, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert(f >= 0 && sp >= 0 && pl >= 0 && g >= 0);
  cr_assert(H5Pset_chunk(pl, 2, chunk) >= 0 && H5Pset_filter(pl, LZ4_FILTER, H5Z_FLAG_MANDATORY, 0, NULL) >= 0);
  hid_t d = H5Dcreate2(g, "doc", H5T_STD_I32LE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
  cr_assert(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, LZ4_DOC) >= 0);
  H5Dclose(d);
  d = H5Dcreate2(g, "score", H5T_IEEE_F32LE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
  cr_assert(d >= 0 && H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, LZ4_SCORE) >= 0);
  H5Dclose(d), H5Gclose(g), H5Pclose(pl), H5Sclose(sp);
}

/* Two queries, five docs, and runs "plain" and (with_lz4) "lz4" of the
 * same rows, the second chunked and compressed by the LZ4 plugin. */
static char *write_corpus_plain_and(int with_lz4)
{
  char *path = th_join(th_fresh_dir(), "lz4.h5");
  rs_error err = {0};
  rs__h5w *wr = NULL;
  const char *const qid[] = {"q1", "q2"}, *const did[] = {"d0", "d1", "d2", "d3", "d4"};
  int64_t qoff[] = {0, 2, 3};
  int32_t qdoc[] = {1, 3, 4}, qgrade[] = {2, 1, 1};
  cr_assert_eq(rs__h5w_create(path, 1, &wr, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_strings(wr, "/queries/id", qid, 2, 0, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_strings(wr, "/docs/id", did, 5, 0, &err), RS_OK, "%s", err.msg);
  uint64_t dims[2] = {3, 0};
  cr_assert_eq(rs__h5w_array(wr, "/qrels/offsets", RS_DT_I64, 1, dims, qoff, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_array(wr, "/qrels/doc", RS_DT_I32, 1, dims, qdoc, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_array(wr, "/qrels/grade", RS_DT_I32, 1, dims, qgrade, &err), RS_OK, "%s", err.msg);
  dims[0] = 2, dims[1] = 4;
  cr_assert_eq(rs__h5w_array(wr, "/runs/plain/doc", RS_DT_I32, 2, dims, LZ4_DOC, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_array(wr, "/runs/plain/score", RS_DT_F32, 2, dims, LZ4_SCORE, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_commit(wr, &err), RS_OK, "%s", err.msg);
  cr_assert(H5Zfilter_avail(LZ4_FILTER) > 0, "the LZ4 filter plugin is not installed (Debian: hdf5-filter-plugin)");
  if (!with_lz4) return path;
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  write_lz4_group(f, "/runs/lz4");
  cr_assert(H5Fclose(f) >= 0);
  return path;
}

static char *write_lz4_run(void) { return write_corpus_plain_and(1); }

/* The aggregate.csv rows of one run, without the run's name. */
static char *rows_of_run(const char *csv, const char *run)
{
  char *out = calloc(1, strlen(csv) + 1);
  cr_assert(out);
  const size_t rl = strlen(run);
  for (const char *line = csv; *line;) {
    const char *end = strchr(line, '\n');
    const size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
    if (len > rl && strncmp(line, run, rl) == 0 && line[rl] == ',') strncat(out, line + rl, len - rl);
    line += len;
  }
  return out;
}

/* argv of eval of inputs[0..n) (a corpus, then run files) into out, quiet. */
static void eval_argv(char **argv, char *const *inputs, size_t n, char *out)
{
  size_t a = 0;
  argv[a++] = (char *)th_bin();
  argv[a++] = "eval";
  for (size_t i = 0; i < n; i++) argv[a++] = inputs[i];
  argv[a++] = "-o", argv[a++] = out, argv[a++] = "--quiet", argv[a] = NULL;
}

/* eval of inputs[0..n) (a corpus, then run files) with env (or NULL):
 * run lz4's rows of aggregate.csv must be run plain's, which must have an
 * nDCG@10 row. */
static void expect_lz4_scored_as_plain(char *const *inputs, size_t n, char **env, const char *lz4)
{
  char *out = th_join(th_fresh_dir(), "out"), *argv[8];
  eval_argv(argv, inputs, n, out);
  th_result r = th_run(NULL, argv, env, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err ? r.err : "");
  th_free(&r);
  char *csv = th_slurp(th_join(out, "aggregate.csv"), NULL);
  cr_assert_not_null(csv);
  char *plain = rows_of_run(csv, "plain"), *packed = rows_of_run(csv, lz4);
  cr_expect(strstr(plain, ",nDCG@10,"), "no nDCG@10 row for plain:\n%s", csv);
  cr_expect_str_eq(packed, plain, "%s scores otherwise (%s):\n%s", lz4, env ? env[0] : "", csv);
  free(plain), free(packed), free(csv);
}

/* The same eval with the plugin out of reach: exit 2 with message in
 * stderr, nothing written. */
static void expect_filter_named(char *const *inputs, size_t n, const char *env_extra, const char *message)
{
  char *out = th_join(th_fresh_dir(), "out"), *argv[8];
  eval_argv(argv, inputs, n, out);
  char *no_plugins[] = {"HDF5_PLUGIN_PATH=/nonexistent", (char *)env_extra, NULL};
  th_result r = th_run(NULL, argv, no_plugins, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(r.err && strstr(r.err, message) && strstr(r.err, "HDF5_PLUGIN_PATH"), "stderr (%s): %s",
            env_extra ? env_extra : "", r.err ? r.err : "");
  struct stat st;
  cr_expect_neq(stat(out, &st), 0, "%s was written", out);
  th_free(&r);
}

Test(corpus_ids, a_run_through_a_filter_plugin, .timeout = 60)
{
  char *path = write_lz4_run();
  expect_lz4_scored_as_plain(&path, 1, NULL, "lz4");
  expect_filter_named(&path, 1, NULL,
                      "lz4.h5:/runs/lz4/doc: compressed with HDF5 filter 32004 (\"HDF5 lz4 filter\"), "
                      "which this libhdf5 cannot apply");
}

/* A run file whose runs are read through libhdf5 (the LZ4 copy, chunked
 * and compressed) is opened by ragsweep itself, not from what its probe
 * found (see run_layout_write): scored as the corpus's plain copy, and,
 * with the plugin out of reach, the dataset named at open. */
Test(corpus_ids, a_run_file_through_a_filter_plugin, .timeout = 60)
{
  char *corpus = write_corpus_plain_and(0), *runs = th_join(th_fresh_dir(), "runs.h5");
  hid_t f = H5Fcreate(runs, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t top = H5Gcreate2(f, "/runs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert(f >= 0 && top >= 0);
  write_lz4_group(f, "/runs/lz4_file");
  H5Gclose(top);
  cr_assert(H5Fclose(f) >= 0);

  char *inputs[] = {corpus, runs};
  for (int threads = 1; threads <= 2; threads++) {
    char env_threads[32];
    snprintf(env_threads, sizeof env_threads, "OMP_NUM_THREADS=%d", threads);
    char *env[] = {env_threads, NULL};
    expect_lz4_scored_as_plain(inputs, 2, env, "lz4_file");
    expect_filter_named(inputs, 2, env_threads, "runs.h5:/runs/lz4_file/doc: compressed with HDF5 filter 32004");
  }
}
