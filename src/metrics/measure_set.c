/* measure_set.c: the public face of spec.c (ragsweep/eval.h).
 *
 * A thin owner around an rs__spec: the spec's hidden values (num_q_*
 * counts, worst.csv's) stay inside; callers see the n_out visible ones.
 * The scratch keeps an out buffer of the spec's full width so evaluation
 * copies the visible prefix without allocating. */
#include <stdlib.h>
#include <string.h>

#include "metrics/spec.h"
#include "ragsweep/eval.h"

/* rs__spec_build's table hint; longer rankings still evaluate exactly. */
enum { DISCOUNT_HINT = 1000 };

struct rs_measure_set {
  rs__spec *spec;
};

struct rs_measure_scratch {
  const rs_measure_set *set; /* the set it was made for */
  rs__spec_scratch ss;
  size_t cap;
  double *all; /* [spec->n_req]: visible then hidden values */
};

rs_measure_set *rs_measure_set_new(const char *const *names, size_t n, rs_error *err)
{
  if (!names || n == 0) {
    rs__fail(err, RS_USAGE, "rs_measure_set_new: no measure names given (expected at least one, e.g. \"nDCG@10\")");
    return NULL;
  }
  rs_measure_set *set = rs__calloc(1, sizeof *set);
  if (!set) {
    rs__fail(err, RS_NOMEM, "out of memory");
    return NULL;
  }
  if (rs__spec_build(names, n, DISCOUNT_HINT, &set->spec, err) != RS_OK) {
    free(set);
    return NULL;
  }
  return set;
}

void rs_measure_set_free(rs_measure_set *set)
{
  if (!set) return;
  rs__spec_free(set->spec);
  free(set);
}

size_t rs_measure_set_count(const rs_measure_set *set) { return set->spec->n_out; }

const char *rs_measure_set_name(const rs_measure_set *set, size_t i)
{
  return i < set->spec->n_out ? set->spec->req[i].name : NULL;
}

rs_measure_scratch *rs_measure_scratch_new(const rs_measure_set *set, size_t cap, size_t max_levels, rs_error *err)
{
  rs_measure_scratch *ms = rs__calloc(1, sizeof *ms);
  double *all = ms ? rs__calloc(set->spec->n_req ? set->spec->n_req : 1, sizeof *all) : NULL;
  if (!all) {
    free(ms);
    rs__fail(err, RS_NOMEM, "out of memory");
    return NULL;
  }
  if (rs__spec_scratch_init(set->spec, cap, max_levels, &ms->ss, err) != RS_OK) {
    free(all);
    free(ms);
    return NULL;
  }
  ms->set = set;
  ms->cap = cap;
  ms->all = all;
  return ms;
}

void rs_measure_scratch_free(rs_measure_scratch *ms)
{
  if (!ms) return;
  rs__spec_scratch_free(&ms->ss);
  free(ms->all);
  free(ms);
}

rs_code rs_measure_set_eval(const rs_measure_set *set, rs_measure_scratch *ms, const int32_t *rel, size_t n,
                            const rs_levels *levels, double *out, rs_error *err)
{
  if (ms->set != set)
    return rs__fail(err, RS_USAGE, "rs_measure_set_eval: the scratch was made for another measure set "
                                   "(make one with rs_measure_scratch_new for this set)");
  if (rel && n > ms->cap)
    return rs__fail(err, RS_USAGE, "rs_measure_set_eval: ranking of %zu docs, but the scratch holds at most %zu "
                                   "(make the scratch with a larger cap)", n, ms->cap);
  rs__spec_eval(set->spec, &ms->ss, rel, rel ? n : 0, NULL, 0, levels, rel == NULL, ms->all);
  memcpy(out, ms->all, set->spec->n_out * sizeof *out);
  return RS_OK;
}
