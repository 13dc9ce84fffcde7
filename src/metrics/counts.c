/* metrics/counts.c: measures of the retrieved set as a whole (counts, set_*,
 * utility) and relstring. */
#include "kernel.h"

static inline long min_l(long a, long b) { return a < b ? a : b; }

void rs__eval_counts(const rs__topic *t, const rs_measure_sel *m, double *out, char *relstring)
{
  const long ret = (long)t->n, R = t->R, relret = t->rel_ret;
  switch (m->id) {
  case RS_M_NUM_RET: out[0] = (double)ret; break;
  case RS_M_NUM_REL: out[0] = (double)R; break;
  case RS_M_NUM_REL_RET: out[0] = (double)relret; break;
  case RS_M_NUM_NONREL_JUDGED_RET: out[0] = (double)t->nonrel_ret; break;
  case RS_M_SET_P: out[0] = ret ? (double)relret / (double)ret : 0.0; break;
  case RS_M_SET_RELATIVE_P: out[0] = ret && R ? (double)relret / (double)min_l(ret, R) : 0.0; break;
  case RS_M_SET_RECALL: out[0] = R ? (double)relret / (double)R : 0.0; break;
  case RS_M_SET_MAP:
    out[0] = ret && R ? ((double)relret * (double)relret) / ((double)ret * (double)R) : 0.0;
    break;
  case RS_M_SET_F: {
    /* trec_eval weights with beta as given, not beta squared. */
    out[0] = 0.0;
    if (relret) {
      double P = (double)relret / (double)ret, Rc = (double)relret / (double)R, x = m->dparam[0];
      out[0] = (x + 1.0) * P * Rc / (x * P + Rc);
    }
    break;
  }
  case RS_M_UTILITY: {
    const double *p = m->dparam;
    out[0] = p[0] * (double)relret + p[1] * (double)(ret - relret) + p[2] * (double)(R - relret) +
             p[3] * (double)(t->plan->n_docs_coll + relret - ret - R);
    break;
  }
  case RS_M_RELSTRING: {
    size_t len = t->plan->relstring_len < t->n ? t->plan->relstring_len : t->n;
    for (size_t i = 0; i < len; i++) {
      int32_t r = t->rel[i];
      relstring[i] = r > 9 ? '>' : r >= 0 ? (char)('0' + r) : r == RS_REL_UNPOOLED ? '-' : r == RS_REL_UNJUDGED ? '.' : '<';
    }
    relstring[len] = '\0';
    out[0] = 0.0;
    break;
  }
  default: break;
  }
}
