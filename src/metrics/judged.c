/* metrics/judged.c: measures that look only at judged docs: bpref (and
 * gm_bpref's term) and infAP.  Unpooled docs (-1) are skipped; pooled but
 * unjudged docs (-2) are counted by infAP only. */
#include <math.h>

#include "kernel.h"

#define INFAP_EPSILON 0.00001

static double bpref(const rs__topic *t)
{
  const long R = t->R, L = t->L;
  const double denom = (double)(t->n_nonrel < R ? t->n_nonrel : R);
  long nonrel_so_far = 0;
  double sum = 0.0;
  for (size_t j = 0; j < t->n; j++) {
    int32_t r = t->rel[j];
    if (r < 0) continue;
    if (r < L) nonrel_so_far++;
    else if (nonrel_so_far > 0) sum += 1.0 - (double)(nonrel_so_far < R ? nonrel_so_far : R) / denom;
    else sum += 1.0;
  }
  return R ? sum / (double)R : sum;
}

static double infap(const rs__topic *t)
{
  const long L = t->L;
  long rel_so_far = 0, nonrel_so_far = 0, unjudged_so_far = 0;
  double ap = 0.0;
  for (size_t j = 0; j < t->n; j++) {
    int32_t r = t->rel[j];
    if (r == RS_REL_UNPOOLED) continue;
    if (r == RS_REL_UNJUDGED) {
      unjudged_so_far++;
      continue;
    }
    if (r < L) {
      nonrel_so_far++;
      continue;
    }
    rel_so_far++;
    if (j == 0) {
      ap += 1.0;
    } else {
      double fj = (double)j;
      ap += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((double)(rel_so_far - 1 + nonrel_so_far + unjudged_so_far) / fj) *
                                   (((double)(rel_so_far - 1) + INFAP_EPSILON) /
                                    ((double)(rel_so_far - 1 + nonrel_so_far) + 2 * INFAP_EPSILON));
    }
  }
  return t->R ? ap / (double)t->R : ap;
}

void rs__eval_judged(const rs__topic *t, const rs_measure_sel *m, double *out)
{
  switch (m->id) {
  case RS_M_BPREF: out[0] = bpref(t); break;
  case RS_M_GM_BPREF: {
    double b = bpref(t);
    out[0] = log(b > RS_MIN_GEO_MEAN ? b : RS_MIN_GEO_MEAN);
    break;
  }
  case RS_M_INFAP: out[0] = infap(t); break;
  default: break;
  }
}
