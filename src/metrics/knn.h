/* knn.h: ann-benchmarks' distance-based recall (internal).
 *
 * ann-benchmarks (erikbern/ann-benchmarks, ann_benchmarks/plotting/
 * metrics.py at commit f402b2cc17b980d7cd45241ab5a7a4cc0f965e55,
 * get_recall_values) scores query i of a run that was asked for `count`
 * neighbours by counting the first `count` distances the run reports that
 * lie within a threshold of the true count-th nearest distance:
 *
 *   t_i     = threshold(dataset_distances[i], count, epsilon)
 *   hits_i  = #{ d in run_distances[i][:count] : d <= t_i }
 *   k-nn    = mean_i(hits_i) / count
 *
 * with knn_threshold  = data[count - 1] + epsilon      (k-nn, epsilon 1e-3)
 * and  epsilon_threshold = data[count - 1] * (1 + epsilon) ("epsilon" 0.01,
 * "largeepsilon" 0.1).  Ties at the threshold count (<=); a NaN or an
 * infinite padding distance never does.
 *
 * The threshold is computed in the precision of the stored ground-truth
 * distances, as the NumPy that commit pins (numpy==2.2.4, NEP 50) does:
 * data[count - 1] is a numpy scalar of the dataset's dtype and epsilon a
 * Python float, so for float32 distances (every downloadable
 * ann-benchmarks dataset) the sum or product is rounded to float32, and for
 * float64 distances it is a double.  The comparison d <= t is exact either
 * way (numpy compares a float32 and a float64 as doubles).  Under NumPy 1.x
 * the float32 case was computed in double; the two differ only for a
 * distance within one float32 ulp of the threshold.
 *
 * hits_i are integers, so the mean is exact whatever the order: it is the
 * integer sum / nq / count, as np.mean(recalls) / float(count). */
#ifndef RAGSWEEP_KNN_H
#define RAGSWEEP_KNN_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
  RS_KNN_ADD, /* data[count - 1] + epsilon: "k-nn" */
  RS_KNN_MUL  /* data[count - 1] * (1 + epsilon): "epsilon", "largeepsilon" */
} rs__knn_rule;

/* One run against its ground truth: row-major arrays, borrowed.  Values
 * of truth are those of the stored dataset (exact doubles of float32
 * values when truth_f32). */
typedef struct rs__knn_input {
  const double *truth; /* [nq * truth_cols]: true distances, ascending per row */
  size_t truth_cols;   /* >= count */
  int truth_f32;       /* truth was stored as float32: thresholds in float32 */
  const double *found; /* [nq * found_cols]: the run's reported distances */
  size_t found_cols;
  size_t nq;
  size_t count; /* the run's count attribute, 1 <= count <= truth_cols */
  rs__knn_rule rule;
  double epsilon;
} rs__knn_input;

/* The threshold of a row whose count-th true distance is kth. */
double rs__knn_threshold(double kth, int truth_f32, rs__knn_rule rule, double epsilon);

/* hits_q for query q (no allocation, no side effect). */
uint32_t rs__knn_hits(const rs__knn_input *in, size_t q);

/* hits[q] for every query, on `threads` threads (each query writes its own
 * slot, so the result does not depend on the thread count). */
void rs__knn_all(const rs__knn_input *in, int threads, uint32_t *hits);

/* ann-benchmarks' aggregate: (sum of hits / nq) / count; 0 when nq is 0. */
double rs__knn_mean(const uint32_t *hits, size_t nq, size_t count);

#endif
