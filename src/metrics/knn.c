/* knn.c: ann-benchmarks' distance-based recall (see knn.h for the source). */
#include "metrics/knn.h"

#include "engine/sched.h"

double rs__knn_threshold(double kth, int truth_f32, rs__knn_rule rule, double epsilon)
{
  if (truth_f32) {
    /* numpy 2: float32 scalar op Python float -> float32 arithmetic, the
     * Python float first rounded to float32 (NEP 50).  (1 + epsilon) is a
     * Python expression, so it is a double before the rounding. */
    const float d = (float)kth;
    const float r = rule == RS_KNN_ADD ? d + (float)epsilon : d * (float)(1.0 + epsilon);
    return (double)r;
  }
  return rule == RS_KNN_ADD ? kth + epsilon : kth * (1.0 + epsilon);
}

uint32_t rs__knn_hits(const rs__knn_input *in, size_t q)
{
  const double t = rs__knn_threshold(in->truth[q * in->truth_cols + in->count - 1], in->truth_f32, in->rule, in->epsilon);
  const double *restrict row = in->found + q * in->found_cols;
  const size_t n = in->count < in->found_cols ? in->count : in->found_cols; /* run_distances[i][:count] */
  uint32_t hits = 0;
  for (size_t j = 0; j < n; j++) hits += row[j] <= t;
  return hits;
}

typedef struct {
  const rs__knn_input *in;
  uint32_t *hits;
} knn_job;

static void knn_item(void *ctx, size_t q, int tid)
{
  (void)tid;
  knn_job *j = ctx;
  j->hits[q] = rs__knn_hits(j->in, q);
}

void rs__knn_all(const rs__knn_input *in, int threads, uint32_t *hits)
{
  knn_job j = {in, hits};
  rs__parallel_for(in->nq, threads, 256, knn_item, &j);
}

double rs__knn_mean(const uint32_t *hits, size_t nq, size_t count)
{
  if (nq == 0) return 0.0;
  uint64_t sum = 0; /* exact: np.mean sums these integer-valued doubles exactly below 2^53 */
  for (size_t q = 0; q < nq; q++) sum += hits[q];
  return (double)sum / (double)nq / (double)count;
}
