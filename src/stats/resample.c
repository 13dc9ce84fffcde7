/* resample.c: randomization tests and bootstrap intervals on per-query
 * differences, deterministic at any thread count (see resample.h). */
#include "stats/resample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sched.h"
#include "stats/stats.h"

/* --- Philox4x32-10 --------------------------------------------------------- */

void rs__philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
  uint32_t x0 = ctr[0], x1 = ctr[1], x2 = ctr[2], x3 = ctr[3], k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; round++) {
    const uint64_t p0 = (uint64_t)0xD2511F53u * x0, p1 = (uint64_t)0xCD9E8D57u * x2;
    const uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0, y1 = (uint32_t)p1;
    const uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1, y3 = (uint32_t)p0;
    x0 = y0, x1 = y1, x2 = y2, x3 = y3;
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  out[0] = x0, out[1] = x1, out[2] = x2, out[3] = x3;
}

/* Stream domains: the fourth counter word keeps the permutation bits and
 * the bootstrap draws apart. */
enum { DOMAIN_PERM = 0x7065726du, DOMAIN_BOOT = 0x626f6f74u };

/* |s| at least as extreme as |obs|.  Sign patterns with mathematically
 * equal statistics (ties, common with discrete measures) can differ in the
 * last bits because the terms are added in another order; tol (far above
 * that rounding, far below any real gap) counts them as equal. */
static inline int as_extreme(double s, double obs, double tol) { return fabs(s) >= fabs(obs) - tol; }

static double tolerance(const double *d, size_t n)
{
  double a = 0.0;
  for (size_t i = 0; i < n; i++) a += fabs(d[i]);
  return 1e-11 * a;
}

double rs__perm_p_exact(const double *d, size_t n)
{
  if (n == 0 || n > 30) return NAN;
  double obs = 0.0;
  for (size_t i = 0; i < n; i++) obs += d[i];
  const double tol = tolerance(d, n);
  const uint64_t n_pat = (uint64_t)1 << n;
  uint64_t count = 0;
  for (uint64_t m = 0; m < n_pat; m++) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (m >> i & 1) ? -d[i] : d[i];
    count += (uint64_t)as_extreme(s, obs, tol);
  }
  return (double)count / (double)n_pat;
}

/* --- randomization test ------------------------------------------------------ */

/* Queries per block: one Philox call gives one sign bit per query. */
#define BLOCK 128
#define GROUPS (BLOCK / 4)
/* Permutations per task: enough to amortise building the sign tables
 * (512 sums per block and comparison) over 32 lookups per permutation. */
#define PERM_TASK_MAX 256

typedef struct perm_scratch {
  double *acc;     /* [perms in task][n_cmp] */
  uint32_t *bits;  /* [perms in task][4] */
  double *table;   /* [GROUPS][16] */
} perm_scratch;

typedef struct perm_job {
  const double *const *d;
  size_t n_cmp, n, n_perm, per_task;
  uint32_t key[2];
  const double *obs, *tol;
  size_t *count; /* [tasks][n_cmp] */
  perm_scratch *scratch;
} perm_job;

/* table[g][m] = sum over the 4 queries j of group g of (bit j of m ? d : -d),
 * added in query order; queries past n count as 0. */
static void build_tables(const double *restrict d, size_t first, size_t n, double *restrict table)
{
  for (size_t g = 0; g < GROUPS; g++) {
    double v[4];
    for (size_t j = 0; j < 4; j++) {
      const size_t i = first + 4 * g + j;
      v[j] = i < n ? d[i] : 0.0;
    }
    double *t = table + 16 * g;
    for (unsigned m = 0; m < 16; m++) {
      double s = (m & 1) ? v[0] : -v[0];
      s += (m & 2) ? v[1] : -v[1];
      s += (m & 4) ? v[2] : -v[2];
      s += (m & 8) ? v[3] : -v[3];
      t[m] = s;
    }
  }
}

/* The signed sum of one block under 128 sign bits (bit set: +d). */
static inline double block_sum(const double *restrict table, const uint32_t bits[4])
{
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  for (size_t w = 0; w < 4; w++) {
    const uint32_t b = bits[w];
    const double *t = table + 16 * 8 * w;
    s0 += t[0 * 16 + (b & 15)];
    s1 += t[1 * 16 + (b >> 4 & 15)];
    s2 += t[2 * 16 + (b >> 8 & 15)];
    s3 += t[3 * 16 + (b >> 12 & 15)];
    s0 += t[4 * 16 + (b >> 16 & 15)];
    s1 += t[5 * 16 + (b >> 20 & 15)];
    s2 += t[6 * 16 + (b >> 24 & 15)];
    s3 += t[7 * 16 + (b >> 28)];
  }
  return (s0 + s1) + (s2 + s3);
}

static void perm_task(void *ctx, size_t task, int tid)
{
  const perm_job *j = ctx;
  perm_scratch *sc = &j->scratch[tid];
  const size_t p0 = task * j->per_task;
  const size_t np = p0 + j->per_task < j->n_perm ? j->per_task : j->n_perm - p0;
  memset(sc->acc, 0, np * j->n_cmp * sizeof *sc->acc);
  for (size_t first = 0; first < j->n; first += BLOCK) {
    const uint32_t block = (uint32_t)(first / BLOCK);
    for (size_t p = 0; p < np; p++) {
      const uint32_t ctr[4] = {(uint32_t)(p0 + p), (uint32_t)((uint64_t)(p0 + p) >> 32), block, DOMAIN_PERM};
      rs__philox4x32_10(ctr, j->key, sc->bits + 4 * p);
    }
    for (size_t c = 0; c < j->n_cmp; c++) {
      build_tables(j->d[c], first, j->n, sc->table);
      double *acc = sc->acc + c;
      for (size_t p = 0; p < np; p++) acc[p * j->n_cmp] += block_sum(sc->table, sc->bits + 4 * p);
    }
  }
  size_t *count = j->count + task * j->n_cmp;
  for (size_t c = 0; c < j->n_cmp; c++) {
    size_t k = 0;
    for (size_t p = 0; p < np; p++) k += (size_t)as_extreme(sc->acc[p * j->n_cmp + c], j->obs[c], j->tol[c]);
    count[c] = k;
  }
}

static rs_code perm_test(const rs__resample_cfg *cfg, int threads, const double *const *d, size_t n_cmp, size_t n,
                         double *p_perm, rs_error *err)
{
  rs_code rc = RS_OK;
  /* Small tasks when there are few permutations, so both cores get work;
   * the results do not depend on the split. */
  size_t per_task = cfg->n_perm / (8 * (size_t)threads);
  per_task = per_task < 16 ? 16 : per_task > PERM_TASK_MAX ? PERM_TASK_MAX : per_task;
  const size_t n_tasks = (cfg->n_perm + per_task - 1) / per_task;
  perm_job j = {.d = d, .n_cmp = n_cmp, .n = n, .n_perm = cfg->n_perm, .per_task = per_task,
                .key = {(uint32_t)cfg->seed, (uint32_t)(cfg->seed >> 32)}};
  double *obs = rs__calloc(n_cmp, sizeof *obs), *tol = rs__calloc(n_cmp, sizeof *tol);
  double *table = rs__malloc(GROUPS * 16 * sizeof *table);
  j.count = rs__calloc(rs__mul(n_tasks, n_cmp), sizeof *j.count);
  j.scratch = rs__calloc((size_t)threads, sizeof *j.scratch);
  if (!obs || !tol || !table || !j.count || !j.scratch) goto nomem;
  for (int t = 0; t < threads; t++) {
    perm_scratch *sc = &j.scratch[t];
    sc->acc = rs__malloc(rs__mul(per_task * n_cmp, sizeof *sc->acc));
    sc->bits = rs__malloc(per_task * 4 * sizeof *sc->bits);
    sc->table = rs__malloc(GROUPS * 16 * sizeof *sc->table);
    if (!sc->acc || !sc->bits || !sc->table) goto nomem;
  }
  /* The observed statistic, through the same tables (every bit set), so
   * the identity permutation reproduces it exactly. */
  static const uint32_t all_plus[4] = {~0u, ~0u, ~0u, ~0u};
  for (size_t c = 0; c < n_cmp; c++) {
    double s = 0.0;
    for (size_t first = 0; first < n; first += BLOCK) {
      build_tables(d[c], first, n, table);
      s += block_sum(table, all_plus);
    }
    obs[c] = s;
    tol[c] = tolerance(d[c], n);
  }
  j.obs = obs;
  j.tol = tol;
  rs__parallel_for(n_tasks, threads, 1, perm_task, &j);
  for (size_t c = 0; c < n_cmp; c++) {
    size_t k = 0;
    for (size_t t = 0; t < n_tasks; t++) k += j.count[t * n_cmp + c];
    p_perm[c] = ((double)k + 1.0) / ((double)cfg->n_perm + 1.0);
  }
  goto done;
nomem:
  rc = rs__fail(err, RS_NOMEM, "out of memory (randomization test: %zu comparisons)", n_cmp);
done:
  for (int t = 0; j.scratch && t < threads; t++) {
    free(j.scratch[t].acc);
    free(j.scratch[t].bits);
    free(j.scratch[t].table);
  }
  free(j.scratch);
  free(j.count);
  free(table);
  free(tol);
  free(obs);
  return rc;
}

/* --- bootstrap ------------------------------------------------------------------- */

/* Replicates per task: their draws are made once and reused for every
 * comparison, and their sums are independent chains. */
#define BOOT_TASK 4

typedef struct boot_job {
  const double *const *d;
  size_t n_cmp, n, n_boot;
  uint32_t key[2];
  uint32_t **idx;  /* per thread: [BOOT_TASK][n] */
  double *means;   /* [n_cmp][n_boot] */
} boot_job;

/* The n uniform indices of replicate r (Lemire's multiply-and-reject: the
 * rejected draws are exactly those that would bias the result). */
static void draw_indices(const uint32_t key[2], uint64_t r, uint32_t n, uint32_t *restrict out)
{
  const uint32_t reject_below = (uint32_t)(-n) % n;
  uint32_t ctr[4] = {(uint32_t)r, (uint32_t)(r >> 32), 0, DOMAIN_BOOT}, word[4];
  size_t got = 0;
  while (got < n) {
    rs__philox4x32_10(ctr, key, word);
    ctr[2]++; /* n < 2^32 draws need fewer than 2^31 blocks, so this never wraps */
    for (int w = 0; w < 4 && got < n; w++) {
      const uint64_t m = (uint64_t)word[w] * n;
      if ((uint32_t)m < reject_below) continue;
      out[got++] = (uint32_t)(m >> 32);
    }
  }
}

static void boot_task(void *ctx, size_t task, int tid)
{
  const boot_job *j = ctx;
  uint32_t *idx = j->idx[tid];
  const size_t r0 = task * BOOT_TASK, nr = r0 + BOOT_TASK <= j->n_boot ? BOOT_TASK : j->n_boot - r0;
  for (size_t r = 0; r < nr; r++) draw_indices(j->key, r0 + r, (uint32_t)j->n, idx + r * j->n);
  for (size_t c = 0; c < j->n_cmp; c++) {
    const double *restrict d = j->d[c];
    double *means = j->means + c * j->n_boot + r0;
    if (nr == BOOT_TASK) {
      const uint32_t *i0 = idx, *i1 = idx + j->n, *i2 = idx + 2 * j->n, *i3 = idx + 3 * j->n;
      double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
      for (size_t i = 0; i < j->n; i++) {
        s0 += d[i0[i]];
        s1 += d[i1[i]];
        s2 += d[i2[i]];
        s3 += d[i3[i]];
      }
      means[0] = s0 / (double)j->n, means[1] = s1 / (double)j->n;
      means[2] = s2 / (double)j->n, means[3] = s3 / (double)j->n;
    } else {
      for (size_t r = 0; r < nr; r++) {
        double s = 0.0;
        for (size_t i = 0; i < j->n; i++) s += d[idx[r * j->n + i]];
        means[r] = s / (double)j->n;
      }
    }
  }
}

static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static rs_code bootstrap(const rs__resample_cfg *cfg, int threads, const double *const *d, size_t n_cmp, size_t n,
                         double *lo, double *hi, rs_error *err)
{
  rs_code rc = RS_OK;
  boot_job j = {.d = d, .n_cmp = n_cmp, .n = n, .n_boot = cfg->n_boot,
                .key = {(uint32_t)cfg->seed, (uint32_t)(cfg->seed >> 32)}};
  j.means = rs__malloc(rs__mul(n_cmp, rs__mul(cfg->n_boot, sizeof *j.means)));
  j.idx = rs__calloc((size_t)threads, sizeof *j.idx);
  if (!j.means || !j.idx) goto nomem;
  for (int t = 0; t < threads; t++)
    if (!(j.idx[t] = rs__malloc(rs__mul(BOOT_TASK * n, sizeof **j.idx)))) goto nomem;
  rs__parallel_for((cfg->n_boot + BOOT_TASK - 1) / BOOT_TASK, threads, 1, boot_task, &j);
  const double tail = (1.0 - cfg->level) / 2.0;
  for (size_t c = 0; c < n_cmp; c++) {
    double *m = j.means + c * cfg->n_boot;
    qsort(m, cfg->n_boot, sizeof *m, cmp_double);
    lo[c] = rs__quantile_sorted(m, cfg->n_boot, tail);
    hi[c] = rs__quantile_sorted(m, cfg->n_boot, 1.0 - tail);
  }
  goto done;
nomem:
  rc = rs__fail(err, RS_NOMEM, "out of memory (bootstrap: %zu comparisons x %zu replicates)", n_cmp, cfg->n_boot);
done:
  for (int t = 0; j.idx && t < threads; t++) free(j.idx[t]);
  free(j.idx);
  free(j.means);
  return rc;
}

rs_code rs__resample(const rs__resample_cfg *cfg, const double *const *d, size_t n_cmp, size_t n, double *p_perm,
                     double *ci_low, double *ci_high, rs_error *err)
{
  for (size_t c = 0; c < n_cmp; c++) p_perm[c] = ci_low[c] = ci_high[c] = NAN;
  if (n == 0 || n_cmp == 0) return RS_OK;
  if (n >= ((size_t)1 << 32))
    return rs__fail(err, RS_USAGE, "resampling supports up to 2^32 - 1 queries, got %zu", n);
  if (!(cfg->level > 0.0 && cfg->level < 1.0))
    return rs__fail(err, RS_USAGE, "interval level must be between 0 and 1, got %g", cfg->level);
  const int threads = rs__threads(cfg->threads);
  rs_code rc = RS_OK;
  if (cfg->n_perm) rc = perm_test(cfg, threads, d, n_cmp, n, p_perm, err);
  if (!rc && cfg->n_boot) rc = bootstrap(cfg, threads, d, n_cmp, n, ci_low, ci_high, err);
  return rc;
}
