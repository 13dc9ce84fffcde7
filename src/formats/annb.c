/* annb.c: ann-benchmarks datasets and results (see annb.h for the layouts). */
#define _POSIX_C_SOURCE 200809L
#include "formats/annb.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/h5read.h"

static const char *const result_links[] = {"neighbors", "distances", "times"};

rs__annb_kind rs__annb_kind_of(const char *path)
{
  static const char *const names[] = {"train", "test", "neighbors", "distances", "times", "runs", "qrels", NULL};
  enum { TRAIN = 1, TEST = 2, NEIGHBORS = 4, DISTANCES = 8, TIMES = 16, RUNS = 32, QRELS = 64 };
  /* The links are looked up in a forked child (about 10 ms, most of it
   * libhdf5 zeroing its caches in fresh pages), and eval asks twice of its
   * first input: the last answer is kept for the same unchanged file. */
  static _Thread_local struct {
    int valid;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    uint32_t has;
  } last;
  struct stat st;
  const int known = stat(path, &st) == 0;
  uint32_t has;
  if (known && last.valid && last.dev == st.st_dev && last.ino == st.st_ino && last.size == st.st_size &&
      last.mtime.tv_sec == st.st_mtim.tv_sec && last.mtime.tv_nsec == st.st_mtim.tv_nsec) {
    has = last.has;
  } else {
    has = rs__h5_root_links(path, names, QRELS); /* a corpus: its open follows */
    last.valid = 0;
    if (known)
      last.valid = 1, last.dev = st.st_dev, last.ino = st.st_ino, last.size = st.st_size, last.mtime = st.st_mtim,
      last.has = has;
  }
  /* A ragsweep corpus or run file has /runs or /qrels; never take one for
   * ann-benchmarks, whatever else it holds. */
  if (has & (RUNS | QRELS)) return RS_ANNB_NONE;
  if ((has & (TRAIN | TEST | NEIGHBORS | DISTANCES)) == (TRAIN | TEST | NEIGHBORS | DISTANCES)) return RS_ANNB_DATASET;
  if (!(has & (TRAIN | TEST)) && (has & (NEIGHBORS | DISTANCES | TIMES)) == (NEIGHBORS | DISTANCES | TIMES))
    return RS_ANNB_RESULT;
  return RS_ANNB_NONE;
}

/* The shape of a required dataset; "what" says what the file is for messages. */
static rs_code need(rs__h5file *f, const char *name, const char *what, rs__h5_shape *s, rs_error *err)
{
  if (!rs__h5_has(f, name))
    return rs__fail(err, RS_FORMAT, "%s: missing dataset /%s (%s)", rs__h5_path(f), name, what);
  return rs__h5_describe(f, name, s, err);
}

static const char dataset_what[] = "an ann-benchmarks dataset holds train, test, neighbors and distances";
static const char result_what[] = "an ann-benchmarks result holds neighbors, distances and times";

/* Reads integer indexes [rows * cols] and checks lo <= v < hi. */
static rs_code read_indexes(rs__h5file *f, const char *name, size_t rows, size_t cols, int64_t lo, int64_t hi,
                            int32_t **out, rs_error *err)
{
  int64_t *v = rs__malloc(rs__mul(rows, rs__mul(cols, sizeof *v)));
  int32_t *n32 = rs__malloc(rs__mul(rows, rs__mul(cols, sizeof *n32)));
  rs_code rc = RS_OK;
  if (!v || !n32) {
    rc = rs__fail(err, RS_NOMEM, "%s:/%s: out of memory", rs__h5_path(f), name);
    goto done;
  }
  if ((rc = rs__h5_read_i64(f, name, cols, v, err))) goto done;
  for (size_t i = 0; i < rows * cols; i++) {
    if (v[i] < lo || v[i] >= hi) {
      rc = rs__fail(err, RS_FORMAT, "%s:/%s: row %zu, column %zu: expected %s index of train below %" PRId64
                    ", found %" PRId64, rs__h5_path(f), name, i / cols, i % cols, lo < 0 ? "-1 or an" : "an", hi, v[i]);
      goto done;
    }
    n32[i] = (int32_t)v[i];
  }
  *out = n32;
  n32 = NULL;
done:
  free(v);
  free(n32);
  return rc;
}

void rs__annb_dataset_close(rs__annb_dataset *d)
{
  if (!d) return;
  free(d->path);
  free(d->neighbors);
  free(d->distances);
  free(d->distance);
  free(d);
}

rs_code rs__annb_dataset_open(const char *path, rs__annb_dataset **out, rs_error *err)
{
  static const char *const numbers[] = {"neighbors", "distances", NULL};
  rs__h5file *f = NULL;
  rs__annb_dataset *d = NULL;
  rs__attr *attrs = NULL;
  size_t n_attrs = 0;
  rs__h5_shape train, test, nb, di;
  rs_code rc = rs__h5_open(path, numbers, &f, err);
  if (rc) return rc;
  if ((rc = need(f, "train", dataset_what, &train, err)) || (rc = need(f, "test", dataset_what, &test, err)) ||
      (rc = need(f, "neighbors", dataset_what, &nb, err)) || (rc = need(f, "distances", dataset_what, &di, err)))
    goto done;
  if (nb.rank != 2 || nb.is_float || di.rank != 2 || !di.is_float) {
    const int bad_nb = nb.rank != 2 || nb.is_float;
    rc = rs__fail(err, RS_FORMAT, "%s:/%s: expected a 2-D dataset of %s [queries, K], found %d-D %s", path,
                  bad_nb ? "neighbors" : "distances", bad_nb ? "integers" : "floating point numbers",
                  bad_nb ? nb.rank : di.rank, (bad_nb ? nb.is_float : di.is_float) ? "floating point" : "integers");
    goto done;
  }
  if (nb.dims[0] != test.dims[0] || di.dims[0] != test.dims[0]) {
    const int bad_nb = nb.dims[0] != test.dims[0];
    rc = rs__fail(err, RS_FORMAT, "%s:/%s: expected %" PRIu64 " rows (one per row of /test), found %" PRIu64, path,
                  bad_nb ? "neighbors" : "distances", test.dims[0], bad_nb ? nb.dims[0] : di.dims[0]);
    goto done;
  }
  if (di.dims[1] != nb.dims[1] || nb.dims[1] == 0) {
    rc = rs__fail(err, RS_FORMAT, "%s:/distances: expected the shape of /neighbors [%" PRIu64 ", %" PRIu64
                  "] with at least one column, found [%" PRIu64 ", %" PRIu64 "]", path, nb.dims[0], nb.dims[1],
                  di.dims[0], di.dims[1]);
    goto done;
  }
  if (test.dims[0] == 0) {
    rc = rs__fail(err, RS_FORMAT, "%s:/test: expected at least one query, found none", path);
    goto done;
  }
  if (train.dims[0] > INT32_MAX) {
    rc = rs__fail(err, RS_UNSUPPORTED, "%s:/train: at most %d points are supported, found %" PRIu64, path, INT32_MAX,
                  train.dims[0]);
    goto done;
  }
  if (!(d = rs__calloc(1, sizeof *d)) || !(d->path = strdup(path))) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  d->nq = (size_t)test.dims[0];
  d->k = (size_t)nb.dims[1];
  d->n_train = (size_t)train.dims[0];
  d->distances_f32 = di.size <= 4;
  if ((rc = read_indexes(f, "neighbors", d->nq, d->k, 0, (int64_t)d->n_train, &d->neighbors, err))) goto done;
  if (!(d->distances = rs__malloc(rs__mul(d->nq, rs__mul(d->k, sizeof *d->distances))))) {
    rc = rs__fail(err, RS_NOMEM, "%s:/distances: out of memory", path);
    goto done;
  }
  if ((rc = rs__h5_read_f64(f, "distances", d->k, d->distances, err))) goto done;
  if ((rc = rs__h5_root_attrs(f, &attrs, &n_attrs, err))) goto done;
  for (size_t i = 0; i < n_attrs; i++)
    if (strcmp(attrs[i].key, "distance") == 0 && !(d->distance = strdup(attrs[i].text))) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
      goto done;
    }
  *out = d;
  d = NULL;
done:
  rs__attrs_free(attrs, n_attrs);
  rs__annb_dataset_close(d);
  rs__h5_close(f);
  return rc;
}

const rs__attr *rs__annb_attr(const rs__annb_result *r, const char *key)
{
  for (size_t i = 0; i < r->n_attrs; i++)
    if (strcmp(r->attrs[i].key, key) == 0) return &r->attrs[i];
  return NULL;
}

void rs__annb_result_close(rs__annb_result *r)
{
  if (!r) return;
  free(r->path);
  free(r->name);
  free(r->neighbors);
  free(r->distances);
  free(r->times);
  rs__attrs_free(r->attrs, r->n_attrs);
  free(r);
}

/* The file name without its folder and a .hdf5 / .h5 extension. */
static char *name_from_path(const char *path)
{
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen(base);
  if (n > 5 && strcmp(base + n - 5, ".hdf5") == 0) n -= 5;
  else if (n > 3 && strcmp(base + n - 3, ".h5") == 0) n -= 3;
  return strndup(base, n);
}

static int cmp_i32(const void *a, const void *b)
{
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Each row as the runner writes it (store_results): the returned points,
 * each once (it asserts so), then -1 padding only. */
static rs_code check_rankings(const rs__annb_result *r, rs_error *err)
{
  int32_t *sorted = rs__malloc(rs__mul(r->cols, sizeof *sorted));
  rs_code rc = RS_OK;
  if (!sorted) return rs__fail(err, RS_NOMEM, "%s: out of memory", r->path);
  for (size_t q = 0; q < r->nq && !rc; q++) {
    const int32_t *row = r->neighbors + q * r->cols;
    size_t n = 0;
    while (n < r->cols && row[n] >= 0) n++;
    for (size_t j = n; j < r->cols && !rc; j++)
      if (row[j] >= 0)
        rc = rs__fail(err, RS_FORMAT, "%s:/neighbors: row %zu: expected -1 padding only at the end, found %" PRId32
                      " in column %zu after -1 in column %zu", r->path, q, row[j], j, n);
    if (rc) break;
    memcpy(sorted, row, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_i32);
    for (size_t j = 1; j < n && !rc; j++)
      if (sorted[j] == sorted[j - 1])
        rc = rs__fail(err, RS_FORMAT, "%s:/neighbors: row %zu: point %" PRId32 " is returned twice (ann-benchmarks' "
                      "runner refuses duplicate candidates)", r->path, q, sorted[j]);
  }
  free(sorted);
  return rc;
}

rs_code rs__annb_result_open(const char *path, const char *name, const rs__annb_dataset *ds, rs__annb_result **out,
                             rs_error *err)
{
  static const char *const numbers[] = {"neighbors", "distances", "times", NULL};
  rs__h5file *f = NULL;
  rs__annb_result *r = NULL;
  rs__h5_shape nb, di, tm;
  rs_code rc = rs__h5_open(path, numbers, &f, err);
  if (rc) return rc;
  if (!(r = rs__calloc(1, sizeof *r)) || !(r->path = strdup(path))) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < sizeof result_links / sizeof *result_links; i++)
    if (!rs__h5_has(f, result_links[i])) {
      rc = rs__fail(err, RS_FORMAT, "%s: missing dataset /%s (%s)", path, result_links[i], result_what);
      goto done;
    }
  if ((rc = rs__h5_describe(f, "neighbors", &nb, err)) || (rc = rs__h5_describe(f, "distances", &di, err)) ||
      (rc = rs__h5_describe(f, "times", &tm, err)))
    goto done;
  /* Rows first: a result of another dataset is the likeliest mistake. */
  const struct { const char *name; const rs__h5_shape *s; } rows[] = {{"neighbors", &nb}, {"distances", &di}, {"times", &tm}};
  for (size_t i = 0; i < 3; i++)
    if (rows[i].s->dims[0] != ds->nq) {
      rc = rs__fail(err, RS_FORMAT, "%s:/%s: expected %zu rows, one per query of %s, found %" PRIu64
                    " (a result of another dataset, or of part of its queries?)", path, rows[i].name, ds->nq,
                    ds->path, rows[i].s->dims[0]);
      goto done;
    }
  if (nb.rank != 2 || nb.is_float) {
    rc = rs__fail(err, RS_FORMAT, "%s:/neighbors: expected a 2-D dataset of integers [queries, count], found %d-D %s",
                  path, nb.rank, nb.is_float ? "floating point" : "integers");
    goto done;
  }
  if (di.rank != 2 || !di.is_float || di.dims[1] != nb.dims[1]) {
    rc = rs__fail(err, RS_FORMAT, "%s:/distances: expected floating point numbers of the shape of /neighbors [%" PRIu64
                  ", %" PRIu64 "], found %d-D %s [%" PRIu64 ", %" PRIu64 "]", path, nb.dims[0], nb.dims[1], di.rank,
                  di.is_float ? "floating point" : "integers", di.dims[0], di.rank == 2 ? di.dims[1] : 0);
    goto done;
  }
  if (tm.rank != 1 || !tm.is_float) {
    rc = rs__fail(err, RS_FORMAT, "%s:/times: expected a 1-D dataset of seconds (floating point), found %d-D %s", path,
                  tm.rank, tm.is_float ? "floating point" : "integers");
    goto done;
  }
  r->nq = ds->nq;
  r->cols = (size_t)nb.dims[1];
  if ((rc = rs__h5_root_attrs(f, &r->attrs, &r->n_attrs, err))) goto done;
  const rs__attr *count = rs__annb_attr(r, "count");
  if (!count) {
    rc = rs__fail(err, RS_FORMAT, "%s: missing root attribute count (the number of neighbours the run was asked for)",
                  path);
    goto done;
  }
  if (count->kind != RS_ATTR_INT || count->num < 1 || count->num > (double)ds->k) {
    rc = rs__fail(err, RS_FORMAT, "%s: attribute count: expected an integer from 1 to %zu (the true neighbours per "
                  "query in %s:/distances), found %s%s", path, ds->k, ds->path, count->kind == RS_ATTR_STRING ? "the string " : "",
                  count->text);
    goto done;
  }
  r->count = (size_t)count->num;
  /* The name: given, else the attribute, else the file's. */
  const rs__attr *an = rs__annb_attr(r, "name");
  r->name = name ? strdup(name) : an ? strdup(an->text) : name_from_path(path);
  if (!r->name) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  if (!*r->name || strchr(r->name, '/')) {
    rc = rs__fail(err, RS_FORMAT, "%s: run name '%s'%s: expected a non-empty name without '/'; name the run with "
                  "NAME=%s", path, r->name, name ? "" : an ? " (attribute name)" : " (from the file name)", path);
    goto done;
  }
  if (an) { /* the name is the run column, not a configuration column */
    const size_t i = (size_t)(an - r->attrs);
    free(r->attrs[i].key);
    free(r->attrs[i].text);
    memmove(&r->attrs[i], &r->attrs[i + 1], (r->n_attrs - i - 1) * sizeof *r->attrs);
    r->n_attrs--;
  }
  if ((rc = read_indexes(f, "neighbors", r->nq, r->cols, -1, (int64_t)ds->n_train, &r->neighbors, err))) goto done;
  if ((rc = check_rankings(r, err))) goto done;
  if (!(r->distances = rs__malloc(rs__mul(r->nq, rs__mul(r->cols, sizeof *r->distances)))) ||
      !(r->times = rs__malloc(rs__mul(r->nq, sizeof *r->times)))) {
    rc = rs__fail(err, RS_NOMEM, "%s: out of memory", path);
    goto done;
  }
  if ((rc = rs__h5_read_f64(f, "distances", r->cols, r->distances, err)) ||
      (rc = rs__h5_read_f64(f, "times", 1, r->times, err)))
    goto done;
  *out = r;
  r = NULL;
done:
  rs__annb_result_close(r);
  rs__h5_close(f);
  return rc;
}

/* --- writing a corpus --------------------------------------------------- */

rs_code rs__annb_write_corpus(const rs__annb_dataset *ds, const rs__annb_result *const *res, size_t n, size_t depth,
                              const char *out_path, rs_error *err)
{
  rs__h5w *w = NULL;
  char **qid = NULL, *qid_pool = NULL;
  int64_t *off = NULL;
  int32_t *doc = NULL;
  int8_t *grade = NULL;
  const size_t nq = ds->nq, nnz = nq * depth;
  rs_code rc = RS_OK;
  if (depth > ds->k) return rs__fail(err, RS_USAGE, "%s: %zu judged neighbours asked, the dataset has %zu", ds->path, depth, ds->k);
  if (!(qid = rs__malloc(rs__mul(nq, sizeof *qid))) || !(qid_pool = rs__malloc(rs__mul(nq, 21))) ||
      !(off = rs__malloc(rs__mul(nq + 1, sizeof *off))) || !(doc = rs__malloc(rs__mul(nnz, sizeof *doc))) ||
      !(grade = rs__malloc(rs__mul(nnz, sizeof *grade)))) {
    rc = rs__fail(err, RS_NOMEM, "%s: out of memory", out_path);
    goto done;
  }
  for (size_t q = 0; q < nq; q++) {
    qid[q] = qid_pool + 21 * q;
    snprintf(qid[q], 21, "%zu", q);
    off[q] = (int64_t)(q * depth);
    for (size_t j = 0; j < depth; j++) {
      doc[q * depth + j] = ds->neighbors[q * ds->k + j];
      grade[q * depth + j] = 1;
    }
  }
  off[nq] = (int64_t)nnz;
  if ((rc = rs__h5w_create(out_path, 1, &w, err))) goto done;
  const uint64_t d_off[1] = {nq + 1}, d_nnz[1] = {nnz};
  if ((rc = rs__h5w_strings(w, "/queries/id", (const char *const *)qid, nq, 0, err)) ||
      (rc = rs__h5w_array(w, "/qrels/offsets", RS_DT_I64, 1, d_off, off, err)) ||
      (rc = rs__h5w_array(w, "/qrels/doc", RS_DT_I32, 1, d_nnz, doc, err)) ||
      (rc = rs__h5w_array(w, "/qrels/grade", RS_DT_I8, 1, d_nnz, grade, err)))
    goto done;
  for (size_t i = 0; i < n; i++) {
    const rs__annb_result *r = res[i];
    char group[4200], dset[4300];
    snprintf(group, sizeof group, "/runs/%s", r->name);
    const uint64_t d_doc[2] = {r->nq, r->cols}, d_lat[1] = {r->nq};
    snprintf(dset, sizeof dset, "%s/doc", group);
    if ((rc = rs__h5w_array(w, dset, RS_DT_I32, 2, d_doc, r->neighbors, err))) goto done;
    snprintf(dset, sizeof dset, "%s/latency", group);
    if ((rc = rs__h5w_array(w, dset, RS_DT_F64, 1, d_lat, r->times, err))) goto done;
    for (size_t a = 0; a < r->n_attrs; a++)
      if ((rc = rs__h5w_attr(w, group, &r->attrs[a], err))) goto done;
  }
  rc = rs__h5w_commit(w, err);
  w = NULL;
done:
  rs__h5w_abort(w);
  free(qid);
  free(qid_pool);
  free(off);
  free(doc);
  free(grade);
  return rc;
}
