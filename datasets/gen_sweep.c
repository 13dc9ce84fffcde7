/* gen_sweep.c: a seeded generator of synthetic sweep corpora at any scale.
 *
 *   gen_sweep -o corpus.h5 [--queries N] [--k K] [--docs N] [--seed S]
 *             [--grid 'model=a,b;chunk=256,512;reranker=none,ce'] [--runs N]
 *             [--runs-per-file M] [--no-latency]
 *
 * Every configuration of the grid (the cartesian product, cycled when
 * --runs asks for more) becomes one run /runs/<name> whose attributes are
 * the grid's keys.  Qrels are graded 0..3 the way RAG evaluation sets look:
 * one to a few relevant passages per query, grade 3 rare, plus some judged
 * non-relevant ones.  A run's quality comes from its configuration (known
 * models, chunk sizes and rerankers have fixed effects; unknown values a
 * hashed one), so the sweep has a real winner; quality decides how many
 * relevant docs are retrieved and how high.  Latencies are lognormal, with
 * a median that grows with the model and the reranker.  Output depends on
 * the seed only: every (run, query) draws from its own counter-based
 * stream.  With --runs-per-file M the runs go to OUT_runs_NNN.h5 files of
 * M runs each (as a sweep's jobs would write them). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/corpus.h"

enum { ROWS_PER_WRITE = 8192, MAX_KEYS = 8, MAX_VALUES = 32 };

/* --- counter-based random numbers (splitmix64) ----------------------------- */

typedef struct {
  uint64_t s;
} rng;

static uint64_t mix(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static rng stream(uint64_t seed, uint64_t a, uint64_t b) { return (rng){mix(seed ^ mix(a * 0x9e3779b97f4a7c15ull + b))}; }
static uint64_t next_u64(rng *r) { return mix(r->s += 0x9e3779b97f4a7c15ull); }
static double next_unit(rng *r) { return (double)(next_u64(r) >> 11) * 0x1.0p-53; } /* [0, 1) */
static uint64_t next_below(rng *r, uint64_t n) { return next_u64(r) % n; }
static double next_normal(rng *r)
{
  double u = next_unit(r), v = next_unit(r);
  return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

/* --- the grid ------------------------------------------------------------------ */

typedef struct {
  char *key[MAX_KEYS];
  char *val[MAX_KEYS][MAX_VALUES];
  size_t n_keys, n_val[MAX_KEYS];
} grid;

static int parse_grid(char *spec, grid *g)
{
  for (char *part = strtok(spec, ";"); part; part = strtok(NULL, ";")) {
    char *eq = strchr(part, '=');
    if (!eq || g->n_keys == MAX_KEYS) return 0;
    *eq = '\0';
    g->key[g->n_keys] = part;
    size_t nv = 0;
    for (char *v = eq + 1, *comma; v; v = comma ? comma + 1 : NULL) {
      comma = strchr(v, ',');
      if (comma) *comma = '\0';
      if (nv == MAX_VALUES || !*v) return 0;
      g->val[g->n_keys][nv++] = v;
    }
    g->n_val[g->n_keys++] = nv;
  }
  return g->n_keys > 0;
}

static int is_number(const char *s)
{
  char *end;
  errno = 0;
  strtol(s, &end, 10);
  return *s && !*end && !errno;
}

/* Known effects on quality (and latency); others get a small hashed one. */
static void effect(const char *key, const char *val, double *quality, double *log_latency)
{
  static const struct { const char *val; double q, lat_ms; } known[] = {
      {"bge-large", 0.14, 38}, {"e5-large", 0.12, 36},  {"bge-base", 0.08, 22}, {"e5-base", 0.06, 21},
      {"bge-small", 0.02, 12}, {"minilm", -0.08, 6},   {"bm25", -0.12, 4},     {"cross-encoder", 0.10, 55},
      {"colbert", 0.07, 30},   {"none", 0.0, 0},       {"128", -0.03, 0},      {"256", 0.02, 0},
      {"512", 0.0, 0},         {"1024", -0.05, 0},     {"hybrid", 0.05, 8},    {"dense", 0.0, 0}};
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (strcmp(val, known[i].val) == 0) {
      *quality += known[i].q;
      if (known[i].lat_ms > 0) *log_latency = log(exp(*log_latency) + known[i].lat_ms / 1000.0);
      return;
    }
  if (strcmp(key, "top_k") == 0) return; /* top_k truncates the ranking instead */
  uint64_t h = mix(strlen(val));
  for (const char *p = val; *p; p++) h = mix(h ^ (unsigned char)*p);
  *quality += ((double)(h % 1000) / 1000.0 - 0.5) * 0.1;
}

/* --- generation ---------------------------------------------------------------- */

typedef struct {
  size_t nq, k, nd, n_runs, runs_per_file, grid_size;
  uint64_t seed;
  int latency;
  const char *out;
  grid g;
} params;

typedef struct {
  int64_t *off;
  int32_t *doc;
  int8_t *grade;
} qrels;

/* 1 to 6 relevant docs (mostly 1-2), grades 1..3, and 0 to 5 judged non-relevant. */
static rs_code make_qrels(const params *p, qrels *q, rs_error *err)
{
  q->off = malloc((p->nq + 1) * sizeof *q->off);
  q->doc = malloc(p->nq * 11 * sizeof *q->doc);
  q->grade = malloc(p->nq * 11 * sizeof *q->grade);
  if (!q->off || !q->doc || !q->grade) return rs__fail(err, RS_NOMEM, "out of memory for qrels");
  size_t n = 0;
  for (size_t i = 0; i < p->nq; i++) {
    rng r = stream(p->seed, 0xA11CE, i);
    q->off[i] = (int64_t)n;
    size_t n_rel = 1;
    while (n_rel < 6 && next_unit(&r) < 0.35) n_rel++;
    size_t n_non = next_below(&r, 6), a = n;
    for (size_t j = 0; j < n_rel + n_non; j++) {
      int32_t d;
      int fresh;
      do { /* distinct within the query */
        d = (int32_t)next_below(&r, p->nd);
        fresh = 1;
        for (size_t t = a; t < n; t++) fresh &= q->doc[t] != d;
      } while (!fresh);
      double u = next_unit(&r);
      q->doc[n] = d;
      q->grade[n++] = (int8_t)(j < n_rel ? (u < 0.12 ? 3 : u < 0.45 ? 2 : 1) : 0);
    }
  }
  q->off[p->nq] = (int64_t)n;
  return RS_OK;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Row of query i for a run of the given quality: relevant docs placed by
 * quality, judged non-relevant ones sprinkled, random docs elsewhere. */
static void make_row(const params *p, const qrels *q, size_t run, size_t i, double quality, size_t top_k,
                     int32_t *doc, float *score)
{
  rng r = stream(p->seed, run + 1, i);
  const size_t k = p->k;
  for (size_t j = 0; j < k; j++) doc[j] = -1;
  const size_t a = (size_t)q->off[i], b = (size_t)q->off[i + 1];
  for (size_t t = a; t < b; t++) {
    const int g = q->grade[t];
    /* better runs find more relevant docs, and rank them higher */
    double find = g > 0 ? quality * (0.75 + 0.08 * g) : 0.35;
    if (next_unit(&r) >= find) continue;
    double scale = g > 0 ? 0.5 + (double)k * pow(1.0 - quality, 2.0) * 0.6 : (double)k * 0.3;
    size_t pos = (size_t)(-log(1.0 - next_unit(&r)) * scale);
    while (pos < k && doc[pos] != -1) pos++;
    if (pos < k) doc[pos] = q->doc[t];
  }
  /* Fillers: an arithmetic progression mod nd with a step coprime to nd is
   * distinct by construction; skip the query's judged docs. */
  uint64_t base = next_below(&r, p->nd), step = 1 + next_below(&r, p->nd - 1 ? p->nd - 1 : 1);
  while (gcd(step, p->nd) != 1) step++;
  uint64_t cur = base;
  for (size_t j = 0; j < k; j++) {
    if (doc[j] != -1) continue;
    for (;;) {
      int32_t d = (int32_t)cur;
      cur = (cur + step) % p->nd;
      int judged = 0;
      for (size_t t = a; t < b; t++) judged |= q->doc[t] == d;
      if (!judged) {
        doc[j] = d;
        break;
      }
    }
  }
  /* Scores fall with rank, quantised so that about one rank in ten ties
   * with the one above: trec_eval's tie-breaking then matters. */
  for (size_t j = 0; j < k; j++) {
    size_t jj = (j % 10 == 9) ? j - 1 : j;
    score[j] = (float)(round((1.0 - 0.5 * (double)jj / (double)k) * 4096.0) / 4096.0);
  }
  for (size_t j = top_k; j < k; j++) doc[j] = -1, score[j] = 0.0f;
}

static void config_of(const params *p, size_t run, size_t *choice)
{
  size_t x = run;
  for (size_t kk = p->g.n_keys; kk-- > 0;) {
    choice[kk] = x % p->g.n_val[kk];
    x /= p->g.n_val[kk];
  }
}

static rs_code write_run(const params *p, const qrels *q, rs__h5w *w, size_t run, int32_t *doc, float *score,
                         float *lat, rs_error *err)
{
  size_t choice[MAX_KEYS];
  config_of(p, run, choice);
  char name[256] = "", group[300], path[340];
  double quality = 0.55, log_lat = log(0.004);
  size_t top_k = p->k;
  for (size_t kk = 0; kk < p->g.n_keys; kk++) {
    const char *v = p->g.val[kk][choice[kk]];
    size_t l = strlen(name);
    snprintf(name + l, sizeof name - l, "%s%s", l ? "_" : "", v);
    effect(p->g.key[kk], v, &quality, &log_lat);
    if (strcmp(p->g.key[kk], "top_k") == 0 && is_number(v) && (size_t)atol(v) < top_k) top_k = (size_t)atol(v);
  }
  if (p->n_runs > p->grid_size) { /* cycling the grid repeats names: number them */
    size_t l = strlen(name);
    snprintf(name + l, sizeof name - l, "%s%03zu", l ? "_" : "run", run);
  }
  if (quality < 0.05) quality = 0.05;
  if (quality > 0.95) quality = 0.95;
  snprintf(group, sizeof group, "/runs/%s", name);
  rs_code rc;
  for (size_t kk = 0; kk < p->g.n_keys; kk++) {
    const char *v = p->g.val[kk][choice[kk]];
    rs__attr a = {.key = p->g.key[kk], .kind = is_number(v) ? RS_ATTR_INT : RS_ATTR_STRING, .text = (char *)v,
                  .num = atof(v)};
    if ((rc = rs__h5w_attr(w, group, &a, err))) return rc;
  }
  char dset_doc[340], dset_score[340];
  snprintf(dset_doc, sizeof dset_doc, "%s/doc", group);
  snprintf(dset_score, sizeof dset_score, "%s/score", group);
  if ((rc = rs__h5w_rows_begin(w, dset_doc, RS_DT_I32, p->nq, p->k, err)) ||
      (rc = rs__h5w_rows_begin(w, dset_score, RS_DT_F32, p->nq, p->k, err)))
    return rc;
  for (size_t i0 = 0; i0 < p->nq; i0 += ROWS_PER_WRITE) {
    size_t n = p->nq - i0 < ROWS_PER_WRITE ? p->nq - i0 : ROWS_PER_WRITE;
    for (size_t i = 0; i < n; i++) make_row(p, q, run, i0 + i, quality, top_k, doc + i * p->k, score + i * p->k);
    if ((rc = rs__h5w_rows(w, dset_doc, RS_DT_I32, i0, n, p->k, doc, err)) ||
        (rc = rs__h5w_rows(w, dset_score, RS_DT_F32, i0, n, p->k, score, err)))
      return rc;
  }
  if (p->latency) {
    const double sigma = 0.35;
    for (size_t i = 0; i < p->nq; i++) {
      rng r = stream(p->seed, 0x1A7E + run, i);
      lat[i] = (float)exp(log_lat + sigma * next_normal(&r));
    }
    snprintf(path, sizeof path, "%s/latency", group);
    uint64_t dims[1] = {p->nq};
    if ((rc = rs__h5w_array(w, path, RS_DT_F32, 1, dims, lat, err))) return rc;
  }
  return RS_OK;
}

static rs_code generate(const params *p, rs_error *err)
{
  qrels q = {0};
  rs__h5w *w = NULL;
  char **ids = NULL, *pool = NULL;
  int32_t *doc = malloc(ROWS_PER_WRITE * p->k * sizeof *doc);
  float *score = malloc(ROWS_PER_WRITE * p->k * sizeof *score), *lat = malloc(p->nq * sizeof *lat);
  rs_code rc = doc && score && lat ? (rs_code)make_qrels(p, &q, err) : rs__fail(err, RS_NOMEM, "out of memory");
  if (rc) goto done;
  size_t n_ids = p->nq > p->nd ? p->nq : p->nd;
  ids = malloc(n_ids * sizeof *ids);
  pool = malloc(n_ids * 16);
  if (!ids || !pool) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
  if ((rc = rs__h5w_create(p->out, 1, &w, err))) goto done;
  for (size_t i = 0; i < p->nq; i++) ids[i] = pool + 16 * i, snprintf(ids[i], 16, "q%07zu", i);
  if ((rc = rs__h5w_strings(w, "/queries/id", (const char *const *)ids, p->nq, 0, err))) goto done;
  for (size_t i = 0; i < p->nd; i++) ids[i] = pool + 16 * i, snprintf(ids[i], 16, "doc%08zu", i);
  if ((rc = rs__h5w_strings(w, "/docs/id", (const char *const *)ids, p->nd, 11, err))) goto done;
  uint64_t nnz = (uint64_t)q.off[p->nq], dims[1] = {p->nq + 1};
  if ((rc = rs__h5w_array(w, "/qrels/offsets", RS_DT_I64, 1, dims, q.off, err))) goto done;
  dims[0] = nnz;
  if ((rc = rs__h5w_array(w, "/qrels/doc", RS_DT_I32, 1, dims, q.doc, err)) ||
      (rc = rs__h5w_array(w, "/qrels/grade", RS_DT_I8, 1, dims, q.grade, err)))
    goto done;
  if (p->runs_per_file == 0) {
    for (size_t r = 0; r < p->n_runs && !rc; r++) rc = write_run(p, &q, w, r, doc, score, lat, err);
    if (rc) goto done;
    rc = rs__h5w_commit(w, err);
    w = NULL;
    goto done;
  }
  rc = rs__h5w_commit(w, err);
  w = NULL;
  for (size_t f = 0; !rc && f * p->runs_per_file < p->n_runs; f++) {
    char path[4096];
    size_t len = strlen(p->out);
    if (len > 3 && strcmp(p->out + len - 3, ".h5") == 0) len -= 3;
    snprintf(path, sizeof path, "%.*s_runs_%03zu.h5", (int)len, p->out, f);
    if ((rc = rs__h5w_create(path, 0, &w, err))) break;
    for (size_t r = f * p->runs_per_file; r < (f + 1) * p->runs_per_file && r < p->n_runs && !rc; r++)
      rc = write_run(p, &q, w, r, doc, score, lat, err);
    if (rc) break;
    rc = rs__h5w_commit(w, err);
    w = NULL;
  }
done:
  rs__h5w_abort(w);
  free(q.off);
  free(q.doc);
  free(q.grade);
  free(ids);
  free(pool);
  free(doc);
  free(score);
  free(lat);
  return rc;
}

static void usage(FILE *f)
{
  fprintf(f, "usage: gen_sweep -o OUT.h5 [--queries N] [--k K] [--docs N] [--seed S] [--grid SPEC]\n"
             "                 [--runs N] [--runs-per-file M] [--no-latency]\n"
             "  --grid 'model=bge-small,e5-base;chunk=256,512;reranker=none,cross-encoder'\n"
             "         (default: the demo's 4 models x 3 chunk sizes x 2 rerankers = 24 runs)\n"
             "  --runs N  number of runs (default: the grid's size; cycles through it)\n");
}

static int parse_size(const char *s, size_t min, size_t *out)
{
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || *end || errno || v < min) return 0;
  *out = (size_t)v;
  return 1;
}

int main(int argc, char **argv)
{
  static const struct option longs[] = {{"queries", required_argument, 0, 'q'}, {"k", required_argument, 0, 'k'},
                                        {"docs", required_argument, 0, 'd'},    {"seed", required_argument, 0, 's'},
                                        {"grid", required_argument, 0, 'g'},    {"runs", required_argument, 0, 'r'},
                                        {"runs-per-file", required_argument, 0, 'f'},
                                        {"no-latency", no_argument, 0, 'L'},    {"help", no_argument, 0, 'h'},
                                        {0, 0, 0, 0}};
  char default_grid[] = "model=bge-large,bge-small,e5-base,minilm;chunk=256,512,1024;reranker=none,cross-encoder";
  char *grid_spec = default_grid;
  params p = {.nq = 20000, .k = 100, .nd = 0, .seed = 42, .latency = 1};
  size_t seed = 42;
  int c;
  while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
    int ok = 1;
    switch (c) {
    case 'o': p.out = optarg; break;
    case 'q': ok = parse_size(optarg, 1, &p.nq); break;
    case 'k': ok = parse_size(optarg, 1, &p.k); break;
    case 'd': ok = parse_size(optarg, 2, &p.nd); break;
    case 's': ok = parse_size(optarg, 0, &seed); break;
    case 'g': grid_spec = optarg; break;
    case 'r': ok = parse_size(optarg, 1, &p.n_runs); break;
    case 'f': ok = parse_size(optarg, 1, &p.runs_per_file); break;
    case 'L': p.latency = 0; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 1;
    }
    if (!ok) {
      fprintf(stderr, "gen_sweep: invalid value '%s' for %s\n", optarg, argv[optind - 1]);
      return 1;
    }
  }
  p.seed = seed;
  if (!p.out || optind != argc || !parse_grid(grid_spec, &p.g)) {
    usage(stderr);
    return 1;
  }
  size_t grid_size = 1;
  for (size_t k = 0; k < p.g.n_keys; k++) grid_size *= p.g.n_val[k];
  if (!p.n_runs) p.n_runs = grid_size;
  p.grid_size = grid_size;
  if (!p.nd) p.nd = 20 * p.nq > 1000 ? 20 * p.nq : 1000;
  if (p.nd <= p.k + 20 || p.nd > INT32_MAX) {
    fprintf(stderr, "gen_sweep: --docs must be > K + 20 and < 2^31\n");
    return 1;
  }
  rs_error err = {0};
  if (generate(&p, &err)) {
    fprintf(stderr, "gen_sweep: %s\n", err.msg);
    return 2;
  }
  return 0;
}
