/* bench/core.c: bench_core, the metric-core microbenchmark.
 *
 * Times rs__spec_eval, the per-query scoring behind `ragsweep eval`, on
 * seeded synthetic rankings held in memory, so that neither parsing nor
 * I/O is in the figures; each query is given the ranks of its judged docs,
 * as the sweep's join gives them (before 2026-11-28 it was not, and the
 * kernel scanned the whole ranking for them).  For K = 10, 100 and 1000 docs per query it times
 * each measure family at the cutoffs {1}, {10} and 1..K, the measures
 * without a cutoff, and the default set (the headline), on one thread:
 * median and best of --repeat passes over all queries, and the latency of
 * single queries.  Every timed configuration is then checked query by query
 * and value by value against a naive reference written here from the
 * definitions (README, "Measure reference"), so a wrong kernel cannot win.
 * Finally the default set at K = 100 is timed on 1 .. all threads, and the
 * outputs at every thread count must equal the 1-thread outputs to the bit.
 *
 * The table goes to stdout; the rows are appended to a CSV file only when
 * every check has passed.  Exit status: 0 ok; 1 a check failed (or memory
 * or the CSV file did); 2 usage. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "engine/sched.h"
#include "metrics/spec.h"

enum {
  PAIRS_PER_CELL = 20000000, /* (query, doc) pairs per K: NQ = PAIRS_PER_CELL / K */
  QUICK_DIVISOR = 20,
  LATENCY_QUERIES = 20000, /* queries timed one by one */
  WARMUP_QUERIES = 1000,
  PAR_CHUNK = 64, /* queries per claim in the scaling runs */
  MIN_JUDGED = 5,
  MAX_JUDGED = 40,
  N_GRADES = 4, /* grades 0..3; also rs__spec_scratch_init's max_levels */
  REL_LEVEL = 1 /* the spec's default relevance level: relevant = grade >= 1 */
};

#define MAX_ABS_DIFF 1e-9
/* The naive reference is 10-1000x slower than the kernel; once its passes
 * have taken this long, the median of the passes done so far is reported. */
#define NAIVE_BUDGET_S 2.0

static const size_t cell_k[] = {10, 100, 1000};
static const size_t scaling_k = 100;

/* --- options and machine ---------------------------------------------------- */

typedef struct options {
  int quick;
  size_t queries; /* 0: PAIRS_PER_CELL / K (divided by QUICK_DIVISOR under --quick) */
  int repeat;
  uint64_t seed;
  const char *out;
} options;

typedef struct machine {
  char cpu[256]; /* commas and quotes replaced, so it is one CSV field */
  long cores;
  char date[32]; /* UTC, ISO 8601 */
} machine;

static void usage(FILE *f)
{
  fprintf(f,
          "usage: bench_core [--quick] [--queries N] [--repeat N] [--seed N] [--out PATH]\n"
          "  --quick       20x fewer queries (and 3 passes unless --repeat is given)\n"
          "  --queries N   queries per K (default: 20M pairs / K: 2M, 200k, 20k)\n"
          "  --repeat N    timed passes per configuration (default 5)\n"
          "  --seed N      data seed (default 42)\n"
          "  --out PATH    CSV file the rows are appended to (default bench/results/core.csv)\n"
          "exit status: 0 ok, 1 a check failed, 2 usage\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
  if (!s || *s < '0' || *s > '9') return 0; /* strtoull would accept " -1" */
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || errno) return 0;
  *out = (uint64_t)v;
  return 1;
}

/* Returns 0, or the exit status: 2 for bad usage, -1 after --help. */
static int parse_options(int argc, char **argv, options *o)
{
  *o = (options){.repeat = 0, .seed = 42, .out = "bench/results/core.csv"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return -1;
    }
    if (strcmp(a, "--quick") == 0) {
      o->quick = 1;
      continue;
    }
    static const char *const with_value[] = {"--queries", "--repeat", "--seed", "--out"};
    const char *val = NULL;
    size_t which = 0;
    for (; which < sizeof with_value / sizeof *with_value; which++) {
      size_t len = strlen(with_value[which]);
      if (strncmp(a, with_value[which], len) != 0) continue;
      if (a[len] == '=') val = a + len + 1;
      else if (a[len] == '\0' && i + 1 < argc) val = argv[++i];
      else if (a[len] != '\0') continue;
      break;
    }
    if (which == sizeof with_value / sizeof *with_value) {
      fprintf(stderr, "bench_core: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
    if (!val) {
      fprintf(stderr, "bench_core: %s needs a value\n", a);
      return 2;
    }
    uint64_t v = 0;
    switch (which) {
    case 0:
      if (!parse_u64(val, &v) || v < 1 || v > 100000000) {
        fprintf(stderr, "bench_core: --queries expects an integer in 1..100000000, found '%s'\n", val);
        return 2;
      }
      o->queries = (size_t)v;
      break;
    case 1:
      if (!parse_u64(val, &v) || v < 1 || v > 1000) {
        fprintf(stderr, "bench_core: --repeat expects an integer in 1..1000, found '%s'\n", val);
        return 2;
      }
      o->repeat = (int)v;
      break;
    case 2:
      if (!parse_u64(val, &v)) {
        fprintf(stderr, "bench_core: --seed expects a non-negative integer, found '%s'\n", val);
        return 2;
      }
      o->seed = v;
      break;
    default:
      if (!*val) {
        fprintf(stderr, "bench_core: --out expects a path\n");
        return 2;
      }
      o->out = val;
      break;
    }
  }
  if (o->repeat == 0) o->repeat = o->quick ? 3 : 5;
  return 0;
}

static void read_machine(machine *m)
{
  snprintf(m->cpu, sizeof m->cpu, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) != 0) continue;
      const char *p = strchr(line, ':');
      if (!p) continue;
      p++;
      while (*p == ' ' || *p == '\t') p++;
      snprintf(m->cpu, sizeof m->cpu, "%s", p);
      break;
    }
    fclose(f);
  }
  for (char *c = m->cpu; *c; c++) {
    if (*c == '\n' || *c == '\r') *c = '\0';
    else if (*c == ',' || *c == '"' || (unsigned char)*c < ' ') *c = ' ';
    if (!*c) break;
  }
  m->cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (m->cores < 1) m->cores = rs__threads(0);
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  else snprintf(m->date, sizeof m->date, "unknown");
}

/* --- synthetic data ------------------------------------------------------- */

/* splitmix64's finaliser: a bijection with good avalanche, so hashing
 * distinct counters gives independent-looking draws. */
static uint64_t mix64(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Draw number ctr of one query is a pure function of (seed, K, query, ctr):
 * the data depends only on the seed, not on the order of generation. */
typedef struct qrng {
  uint64_t key, ctr;
} qrng;

static qrng qrng_for(uint64_t seed, size_t k, size_t q)
{
  return (qrng){mix64(mix64(mix64(seed) ^ (uint64_t)k) ^ (uint64_t)q), 0};
}

static uint64_t qrng_next(qrng *r) { return mix64(r->key ^ mix64(r->ctr++)); }

static double uniform01(qrng *r) { return (double)(qrng_next(r) >> 11) * 0x1.0p-53; }

static size_t below(qrng *r, size_t n) { return (size_t)(((qrng_next(r) >> 32) * (uint64_t)n) >> 32); }

/* One K cell, struct-of-arrays: the rankings back to back, and each query's
 * qrels summary (rs_levels) CSR-style. */
typedef struct dataset {
  size_t k, nq;
  int32_t *rel;      /* [nq * k] */
  size_t *lv_off;    /* [nq + 1] */
  int32_t *lv_grade; /* [lv_off[nq]] ascending per query */
  uint32_t *lv_count;
  size_t max_judged; /* the most judged docs of any query */
  /* The ranks of each query's retrieved judged docs, ascending, as the
   * sweep's join hands them to rs__spec_eval: query q's are
   * judged[judged_off[q], judged_off[q + 1]). */
  size_t *judged_off;
  int32_t *judged;
} dataset;

static void dataset_free(dataset *d)
{
  free(d->rel);
  free(d->lv_off);
  free(d->lv_grade);
  free(d->lv_count);
  free(d->judged_off);
  free(d->judged);
  memset(d, 0, sizeof *d);
}

/* A RAG-like query: 5..40 judged docs, grades mostly 0 and 1.  Each judged
 * doc is retrieved with probability 0.7 (relevant) or 0.5 (judged
 * non-relevant), the relevant ones skewed towards the top; every other rank
 * holds an unpooled doc.  The levels count all judged docs, retrieved or
 * not, so they are consistent with the ranking by construction. */
static void gen_query(qrng *r, int32_t *restrict rel, size_t k, uint32_t count[N_GRADES], size_t *n_judged_out)
{
  for (size_t i = 0; i < k; i++) rel[i] = RS_REL_UNPOOLED;
  for (int g = 0; g < N_GRADES; g++) count[g] = 0;
  const size_t n_judged = MIN_JUDGED + below(r, MAX_JUDGED - MIN_JUDGED + 1);
  size_t placed = 0;
  for (size_t j = 0; j < n_judged; j++) {
    const double u = uniform01(r);
    const int32_t g = u < 0.45 ? 0 : u < 0.80 ? 1 : u < 0.93 ? 2 : 3;
    count[g]++;
    if (placed == k || uniform01(r) >= (g > 0 ? 0.7 : 0.5)) continue;
    const double v = uniform01(r);
    size_t i = (size_t)((double)k * (g > 0 ? v * v : v));
    if (i >= k) i = k - 1;
    while (rel[i] != RS_REL_UNPOOLED) i = i + 1 == k ? 0 : i + 1; /* the next free rank */
    rel[i] = g;
    placed++;
  }
  *n_judged_out = n_judged;
}

static int dataset_make(size_t k, size_t nq, uint64_t seed, dataset *d)
{
  memset(d, 0, sizeof *d);
  d->k = k;
  d->nq = nq;
  d->rel = malloc(rs__mul(rs__mul(nq, k), sizeof *d->rel));
  d->lv_off = malloc(rs__mul(nq + 1, sizeof *d->lv_off));
  d->lv_grade = malloc(rs__mul(rs__mul(nq, N_GRADES), sizeof *d->lv_grade));
  d->lv_count = malloc(rs__mul(rs__mul(nq, N_GRADES), sizeof *d->lv_count));
  d->judged_off = malloc(rs__mul(nq + 1, sizeof *d->judged_off));
  d->judged = malloc(rs__mul(rs__mul(nq, k < MAX_JUDGED ? k : MAX_JUDGED), sizeof *d->judged));
  if (!d->rel || !d->lv_off || !d->lv_grade || !d->lv_count || !d->judged_off || !d->judged) {
    fprintf(stderr, "bench_core: out of memory for %zu queries x %zu docs\n", nq, k);
    dataset_free(d);
    return 1;
  }
  size_t pos = 0, jpos = 0;
  for (size_t q = 0; q < nq; q++) {
    qrng r = qrng_for(seed, k, q);
    uint32_t count[N_GRADES];
    size_t n_judged;
    gen_query(&r, d->rel + q * k, k, count, &n_judged);
    if (n_judged > d->max_judged) d->max_judged = n_judged;
    d->judged_off[q] = jpos;
    for (size_t i = 0; i < k; i++)
      if (d->rel[q * k + i] >= 0) d->judged[jpos++] = (int32_t)i;
    d->lv_off[q] = pos;
    for (int g = 0; g < N_GRADES; g++)
      if (count[g]) {
        d->lv_grade[pos] = g;
        d->lv_count[pos] = count[g];
        pos++;
      }
  }
  d->lv_off[nq] = pos;
  d->judged_off[nq] = jpos;
  return 0;
}

static rs_levels levels_of(const dataset *d, size_t q)
{
  const size_t a = d->lv_off[q];
  return (rs_levels){.grade = d->lv_grade + a, .count = d->lv_count + a, .n = d->lv_off[q + 1] - a};
}

/* rs__spec_eval on query q given its judged ranks, as the sweep calls it
 * (metrics/topic.h; the default set then takes metrics/fused.h). */
static void eval_query(const dataset *d, const rs__spec *spec, rs__spec_scratch *ss, size_t q, double *out)
{
  const rs_levels lv = levels_of(d, q);
  const size_t j0 = d->judged_off[q];
  rs__spec_eval(spec, ss, d->rel + q * d->k, d->k, d->judged + j0, d->judged_off[q + 1] - j0, &lv, 0, out);
}

/* --- the naive reference ------------------------------------------------------ */

/* Straight from the definitions, sharing nothing with the library: every
 * value loops over the top k of the ranking itself, recounts R and N from
 * the levels, and nDCG expands and sorts the ideal grades every time. */
typedef enum {
  NV_P, NV_R, NV_F1, NV_SUCCESS, NV_RR, NV_AP, NV_NDCG, NV_RPREC, NV_BPREF, NV_NUMRET, NV_NUMREL, NV_NUMRELRET
} naive_kind;

typedef struct naive_item {
  naive_kind kind;
  long cut; /* 0: no cutoff (the whole ranking) */
} naive_item;

static const struct {
  const char *name;
  naive_kind kind;
  int cut; /* 1: required, 0: optional, -1: none */
} naive_names[] = {
    {"P", NV_P, 1},          {"R", NV_R, 1},           {"F1", NV_F1, 1},           {"Success", NV_SUCCESS, 1},
    {"RR", NV_RR, 0},        {"AP", NV_AP, 0},         {"nDCG", NV_NDCG, 0},       {"Rprec", NV_RPREC, -1},
    {"bpref", NV_BPREF, -1}, {"NumRet", NV_NUMRET, -1}, {"NumRel", NV_NUMREL, -1}, {"NumRelRet", NV_NUMRELRET, -1},
};

/* Maps a spec output name ("nDCG@10", "AP", " P@1") to its computation.
 * The spec names its hidden values with a leading space. */
static int naive_parse(const char *name, naive_item *it)
{
  const char *s = name;
  while (*s == ' ') s++;
  const char *at = strchr(s, '@');
  const size_t len = at ? (size_t)(at - s) : strlen(s);
  for (size_t i = 0; i < sizeof naive_names / sizeof *naive_names; i++) {
    if (strlen(naive_names[i].name) != len || strncmp(naive_names[i].name, s, len) != 0) continue;
    it->kind = naive_names[i].kind;
    it->cut = 0;
    if (!at) return naive_names[i].cut != 1;
    if (naive_names[i].cut < 0 || at[1] < '1' || at[1] > '9') return 0;
    char *end;
    errno = 0;
    it->cut = strtol(at + 1, &end, 10);
    return !*end && !errno && it->cut >= 1;
  }
  return 0;
}

static size_t naive_top(long cut, size_t n) { return cut == 0 || (size_t)cut > n ? n : (size_t)cut; }

static long naive_R(const rs_levels *lv)
{
  long r = 0;
  for (size_t j = 0; j < lv->n; j++)
    if (lv->grade[j] >= REL_LEVEL) r += (long)lv->count[j];
  return r;
}

static long naive_N(const rs_levels *lv)
{
  long n = 0;
  for (size_t j = 0; j < lv->n; j++)
    if (lv->grade[j] >= 0 && lv->grade[j] < REL_LEVEL) n += (long)lv->count[j];
  return n;
}

static long naive_relret(const int32_t *rel, size_t top)
{
  long c = 0;
  for (size_t i = 0; i < top; i++)
    if (rel[i] >= REL_LEVEL) c++;
  return c;
}

static int cmp_grade_desc(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x < y) - (x > y);
}

/* DCG over the top k with gain = grade and discount log2(rank + 1); the
 * ideal is every judged grade > 0, highest first, cut at k too. */
static double naive_ndcg(const int32_t *rel, size_t n, long cut, const rs_levels *lv, int32_t *ideal)
{
  const size_t top = naive_top(cut, n);
  double dcg = 0.0;
  for (size_t i = 0; i < top; i++)
    if (rel[i] > 0) dcg += (double)rel[i] / log2((double)i + 2.0);
  size_t m = 0;
  for (size_t j = 0; j < lv->n; j++)
    for (uint32_t c = 0; c < lv->count[j]; c++) ideal[m++] = lv->grade[j];
  qsort(ideal, m, sizeof *ideal, cmp_grade_desc);
  const size_t itop = naive_top(cut, m);
  double idcg = 0.0;
  for (size_t i = 0; i < itop; i++)
    if (ideal[i] > 0) idcg += (double)ideal[i] / log2((double)i + 2.0);
  return idcg > 0.0 ? dcg / idcg : 0.0;
}

/* trec_eval's bpref: walk the judged docs; a relevant doc scores
 * 1 - min(n, R) / min(N, R), n being the judged non-relevant docs above
 * it (1 when n = 0); the sum is divided by R. */
static double naive_bpref(const int32_t *rel, size_t n, const rs_levels *lv)
{
  const long R = naive_R(lv), N = naive_N(lv);
  const double denom = (double)(N < R ? N : R);
  long nonrel_above = 0;
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (rel[i] < 0) continue;
    if (rel[i] < REL_LEVEL) {
      nonrel_above++;
    } else if (nonrel_above == 0) {
      sum += 1.0;
    } else {
      sum += 1.0 - (double)(nonrel_above < R ? nonrel_above : R) / denom;
    }
  }
  return R ? sum / (double)R : 0.0;
}

static double naive_value(naive_item it, const int32_t *rel, size_t n, const rs_levels *lv, int32_t *ideal)
{
  const size_t top = naive_top(it.cut, n);
  switch (it.kind) {
  case NV_P: return (double)naive_relret(rel, top) / (double)it.cut; /* k counts past a short ranking */
  case NV_R: {
    const long R = naive_R(lv);
    return R ? (double)naive_relret(rel, top) / (double)R : 0.0;
  }
  case NV_F1: {
    const long R = naive_R(lv), relret = naive_relret(rel, top);
    const double p = (double)relret / (double)it.cut, r = R ? (double)relret / (double)R : 0.0;
    return p + r > 0.0 ? 2.0 * p * r / (p + r) : 0.0;
  }
  case NV_SUCCESS: return naive_relret(rel, top) > 0 ? 1.0 : 0.0;
  case NV_RR:
    for (size_t i = 0; i < top; i++)
      if (rel[i] >= REL_LEVEL) return 1.0 / (double)(i + 1);
    return 0.0;
  case NV_AP: {
    const long R = naive_R(lv);
    double sum = 0.0;
    long seen = 0;
    for (size_t i = 0; i < top; i++)
      if (rel[i] >= REL_LEVEL) {
        seen++;
        sum += (double)seen / (double)(i + 1);
      }
    return R ? sum / (double)R : 0.0;
  }
  case NV_NDCG: return naive_ndcg(rel, n, it.cut, lv, ideal);
  case NV_RPREC: {
    /* relevant in the top min(R, ret), divided by R (not by min(R, ret)) */
    const long R = naive_R(lv);
    if (R == 0 || n == 0) return 0.0;
    return (double)naive_relret(rel, naive_top(R, n)) / (double)R;
  }
  case NV_BPREF: return naive_bpref(rel, n, lv);
  case NV_NUMRET: return (double)n;
  case NV_NUMREL: return (double)naive_R(lv);
  case NV_NUMRELRET: return (double)naive_relret(rel, n);
  }
  return 0.0;
}

/* --- passes over all queries ------------------------------------------------- */

typedef struct run_ctx {
  const dataset *d;
  const rs__spec *spec;
  rs__spec_scratch *ss; /* [threads], allocated before any timing */
  const naive_item *items;
  size_t n_req;
  int32_t *ideal; /* [d->max_judged] naive nDCG's ideal grades */
  double *kout, *nout; /* [nq * n_req] kernel and naive outputs */
} run_ctx;

static void kernel_range(const run_ctx *c, size_t a, size_t b)
{
  for (size_t q = a; q < b; q++) eval_query(c->d, c->spec, &c->ss[0], q, c->kout + q * c->n_req);
}

static void kernel_pass(const run_ctx *c) { kernel_range(c, 0, c->d->nq); }

static void naive_pass(const run_ctx *c)
{
  const size_t k = c->d->k;
  for (size_t q = 0; q < c->d->nq; q++) {
    const rs_levels lv = levels_of(c->d, q);
    double *out = c->nout + q * c->n_req;
    for (size_t i = 0; i < c->n_req; i++) out[i] = naive_value(c->items[i], c->d->rel + q * k, k, &lv, c->ideal);
  }
}

static void par_item(void *ctx, size_t q, int tid)
{
  const run_ctx *c = ctx;
  eval_query(c->d, c->spec, &c->ss[tid], q, c->kout + q * c->n_req);
}

typedef struct timing {
  double median, best;
} timing;

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts t[0..n) in place. */
static timing summarise(double *t, int n)
{
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  const double median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  return (timing){.median = median, .best = t[0]};
}

/* Up to `passes` timed passes; with budget_s > 0, stops once that much time
 * has been spent (after at least one pass). */
static timing time_passes(void (*pass)(const run_ctx *), const run_ctx *c, int passes, double budget_s)
{
  double t[1000];
  double spent = 0.0;
  int n = 0;
  while (n < passes) {
    const double t0 = rs__seconds();
    pass(c);
    t[n] = rs__seconds() - t0;
    spent += t[n++];
    if (budget_s > 0.0 && spent >= budget_s) break;
  }
  return summarise(t, n);
}

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v[0..n), n >= 1. */
static uint64_t percentile(const uint64_t *v, size_t n, double p)
{
  size_t r = (size_t)ceil(p * (double)n);
  return v[r ? r - 1 : 0];
}

typedef struct latency {
  uint64_t p50, p99, max;
} latency;

/* Times the first min(nq, LATENCY_QUERIES) queries one at a time.  Each
 * figure includes the cost of one clock_gettime pair (about 20-35 ns through
 * the vDSO), which matters only for the cheapest sets at K = 10. */
static int measure_latency(const run_ctx *c, latency *out)
{
  const size_t n = c->d->nq < LATENCY_QUERIES ? c->d->nq : LATENCY_QUERIES;
  uint64_t *lat = malloc(rs__mul(n, sizeof *lat));
  if (!lat) {
    fprintf(stderr, "bench_core: out of memory for %zu latencies\n", n);
    return 1;
  }
  for (size_t q = 0; q < n; q++) {
    const uint64_t t0 = now_ns();
    kernel_range(c, q, q + 1);
    lat[q] = now_ns() - t0;
  }
  qsort(lat, n, sizeof *lat, cmp_u64);
  *out = (latency){.p50 = percentile(lat, n, 0.50), .p99 = percentile(lat, n, 0.99), .max = lat[n - 1]};
  free(lat);
  return 0;
}

/* Every value of every query within MAX_ABS_DIFF of the naive one (NaN
 * fails too); otherwise prints the first mismatch. */
static int check_outputs(const run_ctx *c, const char *label, double *max_diff)
{
  double worst = 0.0;
  for (size_t q = 0; q < c->d->nq; q++)
    for (size_t i = 0; i < c->n_req; i++) {
      const double a = c->kout[q * c->n_req + i], b = c->nout[q * c->n_req + i], diff = fabs(a - b);
      if (!(diff <= MAX_ABS_DIFF)) {
        fprintf(stderr,
                "bench_core: MISMATCH K=%zu set %s: query %zu, '%s': kernel %.17g, naive %.17g (|diff| %.3g > %g)\n",
                c->d->k, label, q, c->spec->req[i].name, a, b, diff, MAX_ABS_DIFF);
        return 1;
      }
      if (diff > worst) worst = diff;
    }
  *max_diff = worst;
  return 0;
}

/* --- configurations -------------------------------------------------------- */

/* The spec, its naive table, scratch and both output arrays of one set. */
typedef struct config {
  rs__spec *spec;
  naive_item *items;
  rs__spec_scratch *ss;
  int n_ss;
  int32_t *ideal;
  double *kout, *nout;
} config;

static void config_free(config *cf)
{
  for (int t = 0; t < cf->n_ss; t++) rs__spec_scratch_free(&cf->ss[t]);
  free(cf->ss);
  free(cf->items);
  free(cf->ideal);
  free(cf->kout);
  free(cf->nout);
  rs__spec_free(cf->spec);
  memset(cf, 0, sizeof *cf);
}

static int config_make(const dataset *d, const char *label, const char *const *names, size_t n_names, int threads,
                       config *cf, run_ctx *c)
{
  rs_error err = {RS_OK, ""};
  memset(cf, 0, sizeof *cf);
  if (rs__spec_build(names, n_names, d->k, &cf->spec, &err) != RS_OK) {
    fprintf(stderr, "bench_core: set %s: %s\n", label, err.msg);
    return 1;
  }
  const size_t n_req = cf->spec->n_req, n_out = rs__mul(d->nq, n_req);
  cf->items = malloc(rs__mul(n_req, sizeof *cf->items));
  cf->ss = calloc((size_t)threads, sizeof *cf->ss);
  cf->ideal = malloc(rs__mul(d->max_judged ? d->max_judged : 1, sizeof *cf->ideal));
  cf->kout = malloc(rs__mul(n_out, sizeof *cf->kout));
  cf->nout = malloc(rs__mul(n_out, sizeof *cf->nout));
  if (!cf->items || !cf->ss || !cf->ideal || !cf->kout || !cf->nout) {
    fprintf(stderr, "bench_core: set %s: out of memory for %zu x %zu values\n", label, d->nq, n_req);
    config_free(cf);
    return 1;
  }
  for (size_t i = 0; i < n_req; i++)
    if (!naive_parse(cf->spec->req[i].name, &cf->items[i])) {
      fprintf(stderr, "bench_core: set %s: the naive reference has no definition for '%s'\n", label,
              cf->spec->req[i].name);
      config_free(cf);
      return 1;
    }
  for (; cf->n_ss < threads; cf->n_ss++)
    if (rs__spec_scratch_init(cf->spec, d->k, N_GRADES, &cf->ss[cf->n_ss], &err) != RS_OK) {
      fprintf(stderr, "bench_core: set %s: %s\n", label, err.msg);
      config_free(cf);
      return 1;
    }
  /* Fault the output pages in now, so the first timed pass does not pay. */
  memset(cf->kout, 0, n_out * sizeof *cf->kout);
  memset(cf->nout, 0, n_out * sizeof *cf->nout);
  *c = (run_ctx){.d = d, .spec = cf->spec, .ss = cf->ss, .items = cf->items, .n_req = n_req, .ideal = cf->ideal,
                 .kout = cf->kout, .nout = cf->nout};
  return 0;
}

typedef struct row {
  timing kernel, naive;
  latency lat;
  double max_diff, pairs_per_s;
  size_t n_out;
} row;

static void print_kernel_header(void)
{
  printf("%5s %-14s %5s %8s %9s %9s %9s %7s %7s %8s %10s %8s %9s\n", "K", "measures", "vals", "queries", "median_s",
         "best_s", "Mpairs/s", "p50_ns", "p99_ns", "max_ns", "naive_Mp/s", "x_naive", "max_diff");
}

static int bench_set(const options *o, const dataset *d, const char *label, const char *const *names,
                     size_t n_names, const machine *mc, FILE *csv, row *res)
{
  config cf;
  run_ctx c;
  if (config_make(d, label, names, n_names, 1, &cf, &c)) return 1;
  const double pairs = (double)d->nq * (double)d->k;
  row r = {.n_out = cf.spec->n_out};

  kernel_range(&c, 0, d->nq < WARMUP_QUERIES ? d->nq : WARMUP_QUERIES);
  r.kernel = time_passes(kernel_pass, &c, o->repeat, 0.0);
  if (measure_latency(&c, &r.lat)) {
    config_free(&cf);
    return 1;
  }
  r.naive = time_passes(naive_pass, &c, o->repeat, NAIVE_BUDGET_S);
  if (check_outputs(&c, label, &r.max_diff)) {
    config_free(&cf);
    return 1;
  }
  const double kps = pairs / r.kernel.median, nps = pairs / r.naive.median, ratio = r.naive.median / r.kernel.median;
  r.pairs_per_s = kps;
  printf("%5zu %-14s %5zu %8zu %9.4f %9.4f %9.1f %7llu %7llu %8llu %10.2f %8.1f %9.2g\n", d->k, label, r.n_out, d->nq,
         r.kernel.median, r.kernel.best, kps / 1e6, (unsigned long long)r.lat.p50, (unsigned long long)r.lat.p99,
         (unsigned long long)r.lat.max, nps / 1e6, ratio, r.max_diff);
  fflush(stdout);
  fprintf(csv, "%s,%s,%ld,kernel,%zu,%s,%zu,1,%.6f,%.6f,%.0f,%llu,%llu,%llu,%.0f,%.2f,%.3g\n", mc->date, mc->cpu,
          mc->cores, d->k, label, d->nq, r.kernel.median, r.kernel.best, kps, (unsigned long long)r.lat.p50,
          (unsigned long long)r.lat.p99, (unsigned long long)r.lat.max, nps, ratio, r.max_diff);
  config_free(&cf);
  if (res) *res = r;
  return 0;
}

static const char *const default_names[] = {RS_DEFAULT_MEASURES};
static const char *const cut_families[] = {"P", "R", "Success", "RR", "AP", "nDCG", "F1"};
static const char *const plain_measures[] = {"RR", "AP", "Rprec", "bpref", "nDCG"};

/* The default set, then each family at {1}, {10} and 1..K, then the
 * measures without a cutoff. */
static int bench_cell(const options *o, const dataset *d, const machine *mc, FILE *csv, row *headline)
{
  if (bench_set(o, d, "default", default_names, sizeof default_names / sizeof *default_names, mc, csv, headline))
    return 1;
  for (size_t f = 0; f < sizeof cut_families / sizeof *cut_families; f++)
    for (int which = 0; which < 3; which++) {
      char name[48];
      if (which == 0) snprintf(name, sizeof name, "%s@1", cut_families[f]);
      else if (which == 1) snprintf(name, sizeof name, "%s@10", cut_families[f]);
      else snprintf(name, sizeof name, "%s@1..%zu", cut_families[f], d->k);
      const char *const one[] = {name};
      if (bench_set(o, d, name, one, 1, mc, csv, NULL)) return 1;
    }
  for (size_t p = 0; p < sizeof plain_measures / sizeof *plain_measures; p++)
    if (bench_set(o, d, plain_measures[p], &plain_measures[p], 1, mc, csv, NULL)) return 1;
  return 0;
}

/* The default set on 1 .. rs__threads(0) threads.  The 1-thread outputs
 * are checked against the naive reference, and every other thread count
 * must reproduce them bit for bit. */
static int bench_scaling(const options *o, const dataset *d, const machine *mc, FILE *csv)
{
  const int threads = rs__threads(0);
  config cf;
  run_ctx c;
  if (config_make(d, "default", default_names, sizeof default_names / sizeof *default_names, threads, &cf, &c))
    return 1;
  const size_t bytes = d->nq * c.n_req * sizeof *c.kout;
  double *first = malloc(bytes);
  int rc = 0;
  if (!first) {
    fprintf(stderr, "bench_core: out of memory for the 1-thread outputs\n");
    config_free(&cf);
    return 1;
  }
  const double pairs = (double)d->nq * (double)d->k;
  double t1 = 0.0;
  printf("\nthread scaling: default set, K=%zu, %zu queries, chunks of %d queries\n", d->k, d->nq, PAR_CHUNK);
  printf("%7s %9s %9s %9s %8s %10s\n", "threads", "median_s", "best_s", "Mpairs/s", "speedup", "efficiency");
  for (int t = 1; t <= threads && !rc; t++) {
    double times[1000];
    memset(c.kout, 0, bytes);
    rs__parallel_for(d->nq < WARMUP_QUERIES ? d->nq : WARMUP_QUERIES, t, PAR_CHUNK, par_item, &c);
    for (int r = 0; r < o->repeat; r++) {
      const double t0 = rs__seconds();
      rs__parallel_for(d->nq, t, PAR_CHUNK, par_item, &c);
      times[r] = rs__seconds() - t0;
    }
    const timing tm = summarise(times, o->repeat);
    if (t == 1) {
      double max_diff;
      naive_pass(&c);
      if (check_outputs(&c, "default (scaling)", &max_diff)) {
        rc = 1;
        break;
      }
      memcpy(first, c.kout, bytes);
      t1 = tm.median;
    } else if (memcmp(first, c.kout, bytes) != 0) {
      size_t at = 0;
      while (at < d->nq * c.n_req && memcmp(&first[at], &c.kout[at], sizeof *first) == 0) at++;
      fprintf(stderr, "bench_core: outputs on %d threads differ from 1 thread: query %zu, '%s': %.17g vs %.17g\n", t,
              at / c.n_req, c.spec->req[at % c.n_req].name, c.kout[at], first[at]);
      rc = 1;
      break;
    }
    const double speedup = t1 / tm.median;
    printf("%7d %9.4f %9.4f %9.1f %8.2f %9.0f%%\n", t, tm.median, tm.best, pairs / tm.median / 1e6, speedup,
           100.0 * speedup / t);
    fprintf(csv, "%s,%s,%ld,scaling,%zu,default,%zu,%d,%.6f,%.6f,%.0f,,,,,,\n", mc->date, mc->cpu, mc->cores, d->k,
            d->nq, t, tm.median, tm.best, pairs / tm.median);
  }
  free(first);
  config_free(&cf);
  return rc;
}

/* --- main ------------------------------------------------------------------- */

static int append_csv(FILE *rows, const char *path)
{
  FILE *f = fopen(path, "a");
  if (!f) {
    fprintf(stderr, "bench_core: cannot append to %s: %s\n", path, strerror(errno));
    return 1;
  }
  int rc = 0;
  if (fseek(f, 0, SEEK_END) != 0 || ftell(f) == 0)
    fputs("date,cpu,cores,section,k,measures,queries,threads,median_s,best_s,pairs_per_s,p50_ns,p99_ns,max_ns,"
          "naive_pairs_per_s,speedup_vs_naive,max_abs_diff\n",
          f);
  rewind(rows);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, rows)) > 0)
    if (fwrite(buf, 1, n, f) != n) rc = 1;
  if (ferror(rows)) rc = 1;
  if (fclose(f) != 0) rc = 1;
  if (rc) fprintf(stderr, "bench_core: writing %s failed\n", path);
  return rc;
}

int main(int argc, char **argv)
{
  options o;
  int rc = parse_options(argc, argv, &o);
  if (rc) return rc < 0 ? 0 : rc;

  /* Fail on an unwritable --out now, not after minutes of timing; a file
   * created only for this probe is removed again. */
  FILE *probe = fopen(o.out, "r");
  const int existed = probe != NULL;
  if (probe) fclose(probe);
  if (!(probe = fopen(o.out, "a"))) {
    fprintf(stderr, "bench_core: --out %s: cannot append: %s\n", o.out, strerror(errno));
    return 2;
  }
  fclose(probe);
  if (!existed) remove(o.out);

  machine mc;
  read_machine(&mc);
  FILE *csv = tmpfile(); /* rows wait here until every check has passed */
  if (!csv) {
    fprintf(stderr, "bench_core: cannot create a temporary file: %s\n", strerror(errno));
    return 1;
  }
  printf("machine: %s, %ld cores; %s\n", mc.cpu, mc.cores, mc.date);
  printf("bench_core: rs__spec_eval on one thread, %d passes (median, best); latency over %d single queries "
         "(timer included); naive: median of up to %d passes within %.0f s; seed %llu\n",
         o.repeat, LATENCY_QUERIES, o.repeat, NAIVE_BUDGET_S, (unsigned long long)o.seed);
  printf("default set:");
  for (size_t i = 0; i < sizeof default_names / sizeof *default_names; i++) printf(" %s", default_names[i]);
  printf("\n\n");
  print_kernel_header();

  row headline = {0};
  int have_headline = 0;
  for (size_t ci = 0; ci < sizeof cell_k / sizeof *cell_k && !rc; ci++) {
    const size_t k = cell_k[ci];
    size_t nq = o.queries ? o.queries : PAIRS_PER_CELL / k / (o.quick ? QUICK_DIVISOR : 1);
    dataset d;
    if (dataset_make(k, nq, o.seed, &d)) {
      rc = 1;
      break;
    }
    row r;
    rc = bench_cell(&o, &d, &mc, csv, &r);
    if (!rc && k == scaling_k) {
      headline = r;
      have_headline = 1;
      rc = bench_scaling(&o, &d, &mc, csv);
      if (!rc && ci + 1 < sizeof cell_k / sizeof *cell_k) {
        printf("\n");
        print_kernel_header();
      }
    }
    dataset_free(&d);
  }
  if (!rc && have_headline) {
    printf("\nheadline: default set (%zu values) at K=%zu: %.1f M pairs/s per core, %.1fx the naive reference, "
           "p99 %llu ns per query\n",
           headline.n_out, scaling_k, headline.pairs_per_s / 1e6, headline.naive.median / headline.kernel.median,
           (unsigned long long)headline.lat.p99);
  }
  if (!rc) {
    rc = append_csv(csv, o.out);
    if (!rc) printf("appended to %s\n", o.out);
  }
  fclose(csv);
  return rc ? 1 : 0;
}
