/* test_h5_heap.c: variable-length strings read from an HDF5 file's bytes
 * (src/formats/h5_heap.c), on files built here byte by byte after the HDF5
 * file format specification: rows of (length, collection address, object
 * index), global heap collections ("GCOL", version 1, size; objects of
 * index, reference count, reserved, size, data padded to 8 bytes; index 0
 * free space).  Every string read is checked against the bytes written,
 * and every corruption against the message naming its row.  (The layout as
 * libhdf5 writes it is checked by the corpus tests: every corpus opened
 * reads its ids this way.) */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/h5_heap.h"
#include "helpers.h"

typedef struct {
  unsigned char *b;
  size_t size;
  unsigned sa, ss; /* sizeof_addr, sizeof_size */
} image;

static void put_le(image *m, size_t at, uint64_t v, unsigned k)
{
  cr_assert_leq(at + k, m->size);
  for (unsigned i = 0; i < k; i++) m->b[at + i] = (unsigned char)(v >> (8 * i));
}

static image image_new(size_t size, unsigned sa, unsigned ss)
{
  image m = {calloc(1, size), size, sa, ss};
  cr_assert(m.b);
  return m;
}

/* A collection header at `at`, size bytes; objects go from at + 8 + ss. */
static size_t coll_begin(image *m, size_t at, size_t size)
{
  memcpy(m->b + at, "GCOL", 4);
  m->b[at + 4] = 1;
  put_le(m, at + 8, size, m->ss);
  return at + 8 + m->ss;
}

/* An object at p: returns where the next one goes. */
static size_t object(image *m, size_t p, unsigned idx, const char *data, size_t len)
{
  put_le(m, p, idx, 2);
  put_le(m, p + 2, 1, 2);
  put_le(m, p + 8, len, m->ss);
  memcpy(m->b + p + 8 + m->ss, data, len);
  return p + 8 + m->ss + ((len + 7) & ~(size_t)7);
}

/* Free space from p to end (its size counts its header). */
static void free_space(image *m, size_t p, size_t end)
{
  put_le(m, p, 0, 2);
  put_le(m, p + 8, end - p, m->ss);
}

static void row(image *m, size_t rows_at, size_t i, uint32_t len, uint64_t addr, uint32_t idx)
{
  const size_t e = rows_at + i * (8 + m->sa);
  put_le(m, e, len, 4);
  put_le(m, e + 4, addr, m->sa);
  put_le(m, e + 4 + m->sa, idx, 4);
}

/* The image in a fresh file, open for reading: the rows' description. */
static rs__h5_heap_rows rows_of(const image *m, size_t rows_at, size_t n)
{
  char *path = th_join(th_fresh_dir(), "heap.h5");
  FILE *f = fopen(path, "wb");
  cr_assert(f && fwrite(m->b, 1, m->size, f) == m->size && fclose(f) == 0);
  const int fd = open(path, O_RDONLY);
  cr_assert(fd >= 0);
  return (rs__h5_heap_rows){.fd = fd, .fsize = m->size, .rows_at = rows_at, .n = n, .sizeof_addr = m->sa,
                            .sizeof_size = m->ss, .max_bytes = UINT64_MAX, .file = "heap.h5", .name = "/docs/id"};
}

static const char x294[] /* 294 bytes */ = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                           "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
                           "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz";

/* Two collections; objects out of index order, free space between two
 * objects (libhdf5 walks past it), an object two rows share. */
static image two_collections(unsigned sa, unsigned ss)
{
  image m = image_new(8192, sa, ss);
  size_t p = coll_begin(&m, 1024, 4096);
  p = object(&m, p, 3, "bb", 2);
  p = object(&m, p, 1, "\xc3\xa9", 2);
  p = object(&m, p, 2, "a\0b", 3);
  free_space(&m, p, p + 64);
  p = object(&m, p + 64, 5, "after", 5);
  free_space(&m, p, 1024 + 4096);
  p = coll_begin(&m, 5120, 1024);
  p = object(&m, p, 1, x294, sizeof x294 - 1);
  free_space(&m, p, 5120 + 1024);
  row(&m, 64, 0, 2, 1024, 3);
  row(&m, 64, 1, 0, 999999, 77); /* empty: no heap is read */
  row(&m, 64, 2, 2, 1024, 1);
  row(&m, 64, 3, 3, 1024, 2);
  row(&m, 64, 4, (uint32_t)(sizeof x294 - 1), 5120, 1);
  row(&m, 64, 5, 5, 1024, 5);
  row(&m, 64, 6, 2, 1024, 3);
  return m;
}

static void expect_two_collections(char **v)
{
  const char *want[] = {"bb", "", "\xc3\xa9", "a", x294, "after", "bb"};
  for (int i = 0; i < 7; i++) cr_expect_str_eq(v[i], want[i], "row %d", i);
  cr_expect_eq(v[3][1], '\0', "a string ends at its first NUL");
  cr_expect(v[0] != v[6], "each row has its own copy");
}

/* Reads two_collections with the given address and length sizes. */
static void read_two_collections(unsigned sa, unsigned ss)
{
  image m = two_collections(sa, ss);
  rs__h5_heap_rows r = rows_of(&m, 64, 7);
  char **v = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__h5_heap_strings(&r, &v, &err), RS_OK, "%s", err.msg);
  expect_two_collections(v);
  free(v);
  close(r.fd);
  free(m.b);
}

Test(h5_heap, strings_hand_worked) { read_two_collections(8, 8); }

Test(h5_heap, four_byte_addresses_and_lengths) { read_two_collections(4, 4); }

typedef struct {
  size_t rows[8], lens[8], n;
  char text[8][301];
} seen;

static void note(void *vs, size_t rownum, const char *s, size_t len)
{
  seen *z = vs;
  cr_assert_lt(z->n, 8);
  z->rows[z->n] = rownum;
  z->lens[z->n] = len;
  memcpy(z->text[z->n], s, len);
  z->text[z->n++][len] = '\0';
}

Test(h5_heap, visit_a_part_numbers_its_rows)
{
  image m = two_collections(8, 8);
  rs__h5_heap_rows r = rows_of(&m, 64, 7);
  r.rows_at += 2 * 16, r.n = 3, r.first_row = 2; /* rows 2..4 */
  seen z = {0};
  rs_error err = {0};
  cr_assert_eq(rs__h5_heap_visit(&r, note, &z, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(z.n, 3);
  cr_expect_eq(z.rows[0], 2);
  cr_expect_eq(z.rows[2], 4);
  cr_expect_str_eq(z.text[0], "\xc3\xa9");
  cr_expect_eq(z.lens[1], 1, "the length up to the NUL");
  cr_expect_eq(z.lens[2], sizeof x294 - 1);
  /* a part's strings pool from its own first row */
  char **v = NULL;
  cr_assert_eq(rs__h5_heap_strings(&r, &v, &err), RS_OK, "%s", err.msg);
  cr_expect_str_eq(v[0], "\xc3\xa9");
  cr_expect_str_eq(v[2], x294);
  free(v);
  close(r.fd);
  free(m.b);
}

/* One corruption of two_collections and the message it must give. */
typedef struct {
  const char *name;
  size_t at;      /* byte offset to overwrite */
  uint64_t value; /* little-endian, k bytes */
  unsigned k;
  const char *msg;
} corruption;

Test(h5_heap, corruptions_name_the_row)
{
  const corruption cases[] = {
      {"signature", 1024, 'X', 1, "heap.h5:/docs/id: row 100: no global heap collection at offset 1024"},
      {"version 2", 1028, 2, 1, "row 100: no global heap collection at offset 1024 (expected \"GCOL\", version 1)"},
      {"collection past the file", 1032, 8000, 8, "row 100: no global heap collection at offset 1024"},
      {"object past the collection", 1040 + 8, 5000, 8, "row 100: the objects of the heap collection at offset 1024 do not fit it"},
      {"free space of no size", 1040 + 3 * 24 + 8, 0, 8, "the objects of the heap collection at offset 1024 do not fit it"},
      {"index not in the collection", 64 + 12, 9, 4, "row 100: heap object 9 is not in the collection at offset 1024"},
      {"index 0", 64 + 12, 0, 4, "row 100: heap object 0 is not in the collection"},
      {"size that disagrees", 64, 3, 4, "row 100: the row declares 3 bytes, its heap object holds 2: the file is corrupt"},
      {"address past the file", 64 + 4, 9000, 8, "row 100: its heap collection address 9000 is outside the file (8192 bytes)"},
      {"address 0", 64 + 4, 0, 8, "row 100: its heap collection address 0 is outside the file"},
      {"length past the file", 64, 100000, 4, "row 100: the string declares 100000 bytes but the file has 8192 bytes"},
      {"a later row", 64 + 4 * 16 + 4, 4096, 8, "row 104: no global heap collection at offset 4096"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    image m = two_collections(8, 8);
    put_le(&m, cases[c].at, cases[c].value, cases[c].k);
    rs__h5_heap_rows r = rows_of(&m, 64, 7);
    r.first_row = 100;
    char **v = NULL;
    rs_error err = {0};
    cr_expect_eq(rs__h5_heap_strings(&r, &v, &err), RS_FORMAT, "%s: %s", cases[c].name, err.msg);
    cr_expect(strstr(err.msg, cases[c].msg), "%s: expected \"%s\" in \"%s\"", cases[c].name, cases[c].msg, err.msg);
    seen z = {0};
    memset(&err, 0, sizeof err);
    cr_expect_eq(rs__h5_heap_visit(&r, note, &z, &err), RS_FORMAT, "%s (visit)", cases[c].name);
    close(r.fd);
    free(m.b);
  }
}

Test(h5_heap, layouts_and_totals_outside_the_file_are_refused)
{
  image m = two_collections(8, 8);
  rs__h5_heap_rows r = rows_of(&m, 64, 7);
  char **v = NULL;
  rs_error err = {0};
  r.max_bytes = 200; /* the strings need 2 + 0 + 2 + 3 + 294 + 5 + 2 bytes and a NUL each: row 4 passes 200 */
  cr_expect_eq(rs__h5_heap_strings(&r, &v, &err), RS_FORMAT);
  cr_expect(strstr(err.msg, "row 4: the strings declare more than 200 bytes in all"), "%s", err.msg);
  r.max_bytes = UINT64_MAX;
  r.n = 8192 / 16;
  cr_expect_eq(rs__h5_heap_strings(&r, &v, &err), RS_FORMAT);
  cr_expect(strstr(err.msg, "512 rows at offset 64 do not fit the file (8192 bytes)"), "%s", err.msg);
  r.n = 7, r.sizeof_addr = 3;
  cr_expect_eq(rs__h5_heap_strings(&r, &v, &err), RS_UNSUPPORTED);
  close(r.fd);
  free(m.b);
}

/* More collection bytes than the reader keeps at once (256 KiB): rows name
 * 600 collections of 16 KiB in order, then the first ones again after the
 * cache has started over. */
Test(h5_heap, many_collections_read_again_after_the_cache_starts_over)
{
  enum { N_COLL = 600, COLL = 16384, PER = 40, N_ROWS = N_COLL * PER + 100 };
  const size_t rows_at = 4096, heap_at = rows_at + (size_t)N_ROWS * 16 + 4096;
  image m = image_new(heap_at + (size_t)N_COLL * COLL, 8, 8);
  char id[64];
  for (size_t c = 0; c < N_COLL; c++) {
    const size_t at = heap_at + c * COLL;
    size_t p = coll_begin(&m, at, COLL);
    for (unsigned k = 1; k <= PER; k++) {
      const int len = snprintf(id, sizeof id, "doc-%zu-%u%s", c, k, k % 7 == 0 ? "-with-a-longer-tail-past-eight" : "");
      p = object(&m, p, PER + 1 - k, id, (size_t)len); /* indices falling */
      row(&m, rows_at, c * PER + k - 1, (uint32_t)len, at, PER + 1 - k);
    }
    free_space(&m, p, at + COLL);
  }
  for (size_t i = 0; i < 100; i++) { /* the first collections again */
    const size_t c = i % 5, k = i / 5 % PER + 1;
    const int len = snprintf(id, sizeof id, "doc-%zu-%zu%s", c, k, k % 7 == 0 ? "-with-a-longer-tail-past-eight" : "");
    row(&m, rows_at, (size_t)N_COLL * PER + i, (uint32_t)len, heap_at + c * COLL, (uint32_t)(PER + 1 - k));
  }
  rs__h5_heap_rows r = rows_of(&m, rows_at, N_ROWS);
  char **v = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__h5_heap_strings(&r, &v, &err), RS_OK, "%s", err.msg);
  for (size_t i = 0; i < N_ROWS; i++) {
    const size_t c = i < (size_t)N_COLL * PER ? i / PER : (i - N_COLL * PER) % 5;
    const size_t k = i < (size_t)N_COLL * PER ? i % PER + 1 : (i - N_COLL * PER) / 5 % PER + 1;
    snprintf(id, sizeof id, "doc-%zu-%zu%s", c, k, k % 7 == 0 ? "-with-a-longer-tail-past-eight" : "");
    cr_assert_str_eq(v[i], id, "row %zu", i);
  }
  free(v);
  close(r.fd);
  free(m.b);
}

/* A collection read into the blocks of one the cache let go of must not
 * see that one's objects: 300 collections of 16 KiB (the cache, 256 KiB,
 * starts over every 9: each holds 27 KB with its index tables), each with
 * objects 1..40 of 12 bytes, then one holding
 * objects 1 and 2 only, and a row naming its object 30 with the length
 * every earlier object 30 had. */
Test(h5_heap, a_reused_block_keeps_no_object_of_the_collection_before)
{
  enum { N_COLL = 300, COLL = 16384, PER = 40, N_ROWS = N_COLL * PER + 3 };
  const size_t rows_at = 4096, heap_at = rows_at + (size_t)N_ROWS * 16 + 4096;
  image m = image_new(heap_at + (size_t)(N_COLL + 1) * COLL, 8, 8);
  char id[16];
  for (size_t c = 0; c <= N_COLL; c++) {
    const size_t at = heap_at + c * COLL;
    size_t p = coll_begin(&m, at, COLL);
    for (unsigned k = 1; k <= (c < N_COLL ? PER : 2); k++) {
      cr_assert_eq(snprintf(id, sizeof id, "d%04zu-%02u-pad", c, k), 12);
      p = object(&m, p, k, id, 12);
      if (c < N_COLL) row(&m, rows_at, c * PER + k - 1, 12, at, k);
    }
    free_space(&m, p, at + COLL);
  }
  const size_t last = heap_at + (size_t)N_COLL * COLL;
  row(&m, rows_at, (size_t)N_COLL * PER, 12, last, 1);
  row(&m, rows_at, (size_t)N_COLL * PER + 1, 12, last, 2);
  row(&m, rows_at, (size_t)N_COLL * PER + 2, 12, last, 30);
  rs__h5_heap_rows r = rows_of(&m, rows_at, N_ROWS);
  char **v = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__h5_heap_strings(&r, &v, &err), RS_FORMAT, "%s", err.msg);
  char want[160];
  snprintf(want, sizeof want, "row %d: heap object 30 is not in the collection at offset %zu", N_COLL * PER + 2, last);
  cr_expect(strstr(err.msg, want), "expected \"%s\" in \"%s\"", want, err.msg);
  /* the same rows less the last read whole, each id its own */
  r.n = N_ROWS - 1;
  memset(&err, 0, sizeof err);
  cr_assert_eq(rs__h5_heap_strings(&r, &v, &err), RS_OK, "%s", err.msg);
  for (size_t i = 0; i < r.n; i++) {
    snprintf(id, sizeof id, "d%04zu-%02zu-pad", i < (size_t)N_COLL * PER ? i / PER : (size_t)N_COLL,
             i < (size_t)N_COLL * PER ? i % PER + 1 : i - (size_t)N_COLL * PER + 1);
    cr_assert_str_eq(v[i], id, "row %zu", i);
  }
  free(v);
  close(r.fd);
  free(m.b);
}

/* The reader's live heap while it visits rows (mallinfo2: bytes in use,
 * small and mapped), its peak above the level before the visit. */
static size_t heap_in_use(void)
{
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

typedef struct {
  size_t base, peak;
} heap_watch;

static void watch_heap(void *vw, size_t rownum, const char *s, size_t len)
{
  (void)rownum, (void)s, (void)len;
  heap_watch *w = vw;
  const size_t now = heap_in_use();
  if (now > w->base && now - w->base > w->peak) w->peak = now - w->base;
}

/* Memory stays bounded whatever mix of collection sizes: 48 rounds of one
 * collection of 1 MiB, then 24 of 64 KiB.  Blocks kept for reuse must not
 * pile up round after round (a 1 MiB block taken by a 64 KiB collection,
 * kept, and a new one made for the next 1 MiB collection): the visit's
 * peak stays under 12 MiB (256 KiB of cache, as much in spare blocks, and
 * one collection of 1 MiB with its index tables: 12 MiB held when the cache
 * was 4 MiB). */
Test(h5_heap, blocks_kept_for_reuse_stay_bounded, .timeout = 60)
{
  enum { ROUNDS = 48, SMALL_PER = 24, BIG = 1 << 20, SMALL = 1 << 16 };
  const size_t per_round = 1 + SMALL_PER, n_rows = ROUNDS * per_round;
  const size_t rows_at = 4096, heap_at = rows_at + n_rows * 16 + 4096;
  const size_t total = heap_at + (size_t)ROUNDS * (BIG + SMALL_PER * (size_t)SMALL);
  image m = image_new(total, 8, 8);
  size_t at = heap_at, row_i = 0;
  char id[32];
  for (size_t r = 0; r < ROUNDS; r++)
    for (size_t k = 0; k < per_round; k++) {
      const size_t size = k == 0 ? BIG : SMALL;
      const int len = snprintf(id, sizeof id, "r%02zu-c%02zu", r, k);
      size_t p = coll_begin(&m, at, size);
      p = object(&m, p, 1, id, (size_t)len);
      free_space(&m, p, at + size);
      row(&m, rows_at, row_i++, (uint32_t)len, at, 1);
      at += size;
    }
  rs__h5_heap_rows r = rows_of(&m, rows_at, n_rows);
  free(m.b);
  heap_watch w = {.base = heap_in_use()};
  rs_error err = {0};
  cr_assert_eq(rs__h5_heap_visit(&r, watch_heap, &w, &err), RS_OK, "%s", err.msg);
  cr_expect_lt(w.peak, (size_t)12 << 20, "the visit held %zu bytes at its peak", w.peak);
  close(r.fd);
}

/* The layout libhdf5 writes: `import` writes the ids with libhdf5 (many
 * collections: 40000 doc ids of 1 to 300 bytes, UTF-8 query ids), `export`
 * reads them back from the file's bytes; the qrels come back line for line
 * (sorted: export writes them in the corpus's order). */
static int cmp_line(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char **sorted_lines(char *text, size_t *n)
{
  size_t cap = 1024;
  char **v = malloc(cap * sizeof *v);
  *n = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (*n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
    v[(*n)++] = line;
  }
  qsort(v, *n, sizeof *v, cmp_line);
  return v;
}

Test(h5_heap, ids_libhdf5_wrote_come_back_through_import_and_export, .timeout = 120)
{
  enum { NQ = 3000, ND = 40000 };
  char *dir = th_fresh_dir();
  char *qrels_path = th_join(dir, "qrels.txt"), *run_path = th_join(dir, "run.txt");
  FILE *q = fopen(qrels_path, "w"), *r = fopen(run_path, "w");
  cr_assert(q && r);
  char pad[301];
  memset(pad, 'x', 300);
  pad[300] = '\0';
  for (int d = 0; d < ND; d++) { /* every doc judged once: doc d by query d % NQ */
    const int tail = (d * 37) % 290;
    fprintf(q, "q%d-\xc3\xa9\xe4\xb8\xad 0 d%d%.*s %d\n", d % NQ, d, tail, pad, d % 3);
    if (d < NQ * 5) fprintf(r, "q%d-\xc3\xa9\xe4\xb8\xad Q0 d%d%.*s %d %d.5 sys\n", d % NQ, d, tail, pad, d / NQ + 1, 10 - d / NQ);
  }
  cr_assert(fclose(q) == 0 && fclose(r) == 0);
  char *corpus = th_join(dir, "c.h5"), *out = th_join(dir, "out");
  char *imp[] = {(char *)th_bin(), "import", "-o", corpus, "--qrels", qrels_path, run_path, NULL};
  th_result res = th_run(NULL, imp, NULL, NULL);
  cr_assert_eq(res.status, 0, "import: %s", res.err);
  th_free(&res);
  char *ex[] = {(char *)th_bin(), "export", corpus, "-o", out, NULL};
  res = th_run(NULL, ex, NULL, NULL);
  cr_assert_eq(res.status, 0, "export: %s", res.err);
  th_free(&res);
  size_t n_in = 0, n_out = 0;
  char *in_text = th_slurp(qrels_path, NULL), *out_text = th_slurp(th_join(out, "qrels.txt"), NULL);
  cr_assert(in_text && out_text);
  char **in = sorted_lines(in_text, &n_in), **back = sorted_lines(out_text, &n_out);
  cr_assert_eq(n_out, n_in);
  for (size_t i = 0; i < n_in; i++) cr_assert_str_eq(back[i], in[i], "line %zu", i);
  free(in), free(back), free(in_text), free(out_text);
}
