/* spec.c: ir_measures-style and trec_eval measure names -> plans. */
#define _POSIX_C_SOURCE 200809L
#include <strings.h>
#include "metrics/spec.h"
#include "metrics/topic.h"
#include "util/strdict.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CUTOFFS_PER_NAME = 10000 };

/* Measure families with an ir_measures name. */
typedef enum {
  F_P, F_R, F_F1, F_SUCCESS, F_RR, F_AP, F_NDCG, F_DCG, F_RPREC, F_BPREF, F_JUDGED,
  F_NUMRET, F_NUMREL, F_NUMRELRET, F_TREC /* a trec_eval measure with no ir_measures name */
} family;

typedef struct {
  const char *name; /* canonical */
  family f;
  unsigned char needs_cut, takes_cut, takes_rel, takes_gain;
  unsigned char takes_variant; /* P, Judged: denom=retrieved; nDCG: ideal=retrieved */
} family_info;

static const family_info families[] = {
    {"P", F_P, 1, 1, 1, 0, 1},           {"R", F_R, 1, 1, 1, 0, 0},
    {"F1", F_F1, 1, 1, 1, 0, 0},         {"Success", F_SUCCESS, 1, 1, 1, 0, 0},
    {"RR", F_RR, 0, 1, 1, 0, 0},         {"AP", F_AP, 0, 1, 1, 0, 0},
    {"nDCG", F_NDCG, 0, 1, 0, 1, 1},     {"DCG", F_DCG, 0, 1, 0, 1, 0},
    {"Rprec", F_RPREC, 0, 0, 1, 0, 0},   {"bpref", F_BPREF, 0, 0, 1, 0, 0},
    {"Judged", F_JUDGED, 1, 1, 0, 0, 1}, {"NumRet", F_NUMRET, 0, 0, 0, 0, 0},
    {"NumRel", F_NUMREL, 0, 0, 1, 0, 0}, {"NumRelRet", F_NUMRELRET, 0, 0, 1, 0, 0},
    /* Named measures: computed by another family's kernel but written
     * under their own name (unlike the aliases below, which are renamed).
     * They come after the families above, which are indexed by family. */
    {"AnswerPresence", F_SUCCESS, 1, 1, 1, 0, 0}, {"Accuracy", F_P, 1, 1, 1, 0, 0},
};

/* Other spellings users bring from ranx, ir_measures and the RAG guides,
 * matched without regard to case (as are the names above): they are
 * renamed to the canonical name.  exp_gain: ranx's *_burges, Burges et
 * al.'s 2^grade - 1 gain. */
static const struct {
  const char *alias, *name;
  int exp_gain;
} aliases[] = {
    {"Hit", "Success", 0},      {"HitRate", "Success", 0},   {"Hit_Rate", "Success", 0},
    {"MRR", "RR", 0},           {"MAP", "AP", 0},            {"Recall", "R", 0},
    {"Precision", "P", 0},      {"R-Precision", "Rprec", 0}, {"R_Precision", "Rprec", 0},
    {"NDCG_Burges", "nDCG", 1}, {"DCG_Burges", "DCG", 1},
};

/* The variants of P, Judged (denominator) and nDCG (ideal ranking). */
enum { V_NONE, V_RETRIEVED };

/* One requested value before planning. */
typedef struct {
  family f;
  long level;   /* relevance level */
  int exp_gain; /* nDCG / DCG */
  int variant;  /* V_RETRIEVED: P and Judged over min(k, n); nDCG's ideal from the top k */
  long cut;     /* 0: none */
  char *trec;   /* F_TREC: the trec_eval argument; value index below */
  size_t trec_value;
  char *name;
} item;

typedef struct {
  item *v;
  size_t n, cap;
  rs__strdict names; /* the names pushed: a value asked for twice is output once, found in O(1) */
} item_list;

/* At most this many values in one spec (10 names of 10,000 cutoffs): a
 * bound on memory and time whatever the -m arguments say. */
enum { MAX_VALUES = 100000 };

static rs_code place_directly(rs__spec *s, rs_error *err);

static rs_code push(item_list *l, item it, rs_error *err)
{
  if (!it.name) return rs__fail(err, RS_NOMEM, "out of memory");
  if (rs__strdict_find(&l->names, it.name) >= 0) { /* a value asked for twice is output once */
    free(it.name);
    free(it.trec);
    return RS_OK;
  }
  uint32_t id;
  rs_code rc = l->n >= MAX_VALUES ? rs__fail(err, RS_USAGE, "more than %d measure values asked for; ask for fewer "
                                                               "cutoffs (-m nDCG@1..100 is 100 values)", MAX_VALUES)
                                  : rs__strdict_add(&l->names, it.name, &id, err);
  if (rc) {
    free(it.name);
    free(it.trec);
    return rc;
  }
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 32;
    item *nv = rs__realloc(l->v, rs__mul(cap, sizeof *nv));
    if (!nv) {
      free(it.name);
      free(it.trec);
      return rs__fail(err, RS_NOMEM, "out of memory");
    }
    l->v = nv;
    l->cap = cap;
  }
  l->v[l->n++] = it;
  return RS_OK;
}

static char *aprintf(const char *fmt, ...) RS_PRINTF(1, 2);
#include <stdarg.h>
static char *aprintf(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return strdup(buf);
}

/* The family named name[0..len), case and all (trec_eval's bare names
 * such as `map` or `recall` must keep their trec_eval meaning). */
static const family_info *find_family_exact(const char *name, size_t len)
{
  for (size_t i = 0; i < sizeof families / sizeof *families; i++)
    if (strlen(families[i].name) == len && memcmp(families[i].name, name, len) == 0) return &families[i];
  return NULL;
}

/* The family of name[0..len) or of an alias, in any case; *exp_gain is set
 * when the alias implies exponential gain. */
static const family_info *find_family(const char *name, size_t len, int *exp_gain)
{
  *exp_gain = 0;
  for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
    if (strlen(aliases[i].alias) == len && strncasecmp(aliases[i].alias, name, len) == 0) {
      *exp_gain = aliases[i].exp_gain;
      return find_family_exact(aliases[i].name, strlen(aliases[i].name));
    }
  for (size_t i = 0; i < sizeof families / sizeof *families; i++)
    if (strlen(families[i].name) == len && strncasecmp(families[i].name, name, len) == 0) return &families[i];
  return NULL;
}

static int parse_long(const char *s, const char *end, long *out)
{
  if (s == end) return 0;
  char buf[32];
  size_t n = (size_t)(end - s);
  if (n >= sizeof buf) return 0;
  memcpy(buf, s, n);
  buf[n] = '\0';
  char *e;
  errno = 0;
  long v = strtol(buf, &e, 10);
  if (*e || errno) return 0;
  *out = v;
  return 1;
}

/* The canonical name of one value: parameters in the order rel, gain,
 * denom / ideal, each only when it is not the default. */
static char *canonical(const family_info *fi, long level, int exp_gain, int variant, long cut)
{
  char params[96] = "", at[32] = "";
  size_t len = 0;
  if (fi->takes_rel && level != 1) len += (size_t)snprintf(params + len, sizeof params - len, ",rel=%ld", level);
  if (fi->takes_gain && exp_gain) len += (size_t)snprintf(params + len, sizeof params - len, ",gain=exp");
  if (variant == V_RETRIEVED)
    len += (size_t)snprintf(params + len, sizeof params - len, fi->f == F_NDCG ? ",ideal=retrieved" : ",denom=retrieved");
  if (cut) snprintf(at, sizeof at, "@%ld", cut);
  return len ? aprintf("%s(%s)%s", fi->name, params + 1, at) : aprintf("%s%s", fi->name, at);
}

/* A parameter value as written, without the quotes ir_measures' Python
 * syntax puts around strings (nDCG(dcg='exp-log2')). */
static int value_is(const char *v, const char *end, const char *want)
{
  if (end - v >= 2 && (*v == '\'' || *v == '"') && end[-1] == *v) v++, end--;
  return (size_t)(end - v) == strlen(want) && strncasecmp(v, want, (size_t)(end - v)) == 0;
}

/* NAME[(k=v,...)][@CUTS] */
static rs_code parse_ir(const char *arg, item_list *l, rs_error *err)
{
  const char *p = arg;
  while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '-')) p++;
  int exp_gain = 0, variant = V_NONE;
  const family_info *fi = find_family(arg, (size_t)(p - arg), &exp_gain);
  if (!fi) return rs__fail(err, RS_USAGE, "measure '%s': unknown name '%.*s' (see 'ragsweep eval --help')", arg, (int)(p - arg), arg);
  long level = 1;
  if (*p == '(') {
    const char *close = strchr(p, ')');
    if (!close) return rs__fail(err, RS_USAGE, "measure '%s': expected ')' after the parameters", arg);
    const char *q = p + 1;
    while (q < close) {
      const char *comma = memchr(q, ',', (size_t)(close - q));
      const char *end = comma ? comma : close, *eq = memchr(q, '=', (size_t)(end - q));
      if (!eq) return rs__fail(err, RS_USAGE, "measure '%s': expected key=value, found '%.*s'", arg, (int)(end - q), q);
      size_t klen = (size_t)(eq - q);
      if (klen == 3 && memcmp(q, "rel", 3) == 0) {
        if (!fi->takes_rel)
          return rs__fail(err, RS_USAGE, "measure '%s': %s takes no rel= (its gain is the grade itself)", arg, fi->name);
        if (!parse_long(eq + 1, end, &level))
          return rs__fail(err, RS_USAGE, "measure '%s': rel= expects an integer grade, found '%.*s'", arg, (int)(end - eq - 1), eq + 1);
      } else if (klen == 4 && memcmp(q, "gain", 4) == 0) {
        if (!fi->takes_gain) return rs__fail(err, RS_USAGE, "measure '%s': only nDCG and DCG take gain=", arg);
        size_t vlen = (size_t)(end - eq - 1);
        if (vlen == 3 && memcmp(eq + 1, "exp", 3) == 0) exp_gain = 1;
        else if (vlen == 6 && memcmp(eq + 1, "linear", 6) == 0) exp_gain = 0;
        else return rs__fail(err, RS_USAGE, "measure '%s': gain= expects linear or exp, found '%.*s'", arg, (int)vlen, eq + 1);
      } else if (klen == 3 && memcmp(q, "dcg", 3) == 0) { /* ir_measures' spelling of the gain */
        if (!fi->takes_gain) return rs__fail(err, RS_USAGE, "measure '%s': only nDCG and DCG take dcg=", arg);
        if (value_is(eq + 1, end, "exp-log2")) exp_gain = 1;
        else if (value_is(eq + 1, end, "log2")) exp_gain = 0;
        else return rs__fail(err, RS_USAGE, "measure '%s': dcg= expects log2 or exp-log2 (ir_measures' names), found '%.*s'", arg, (int)(end - eq - 1), eq + 1);
      } else if ((klen == 5 && memcmp(q, "denom", 5) == 0) || (klen == 5 && memcmp(q, "ideal", 5) == 0)) {
        const int is_ideal = q[0] == 'i';
        if (!fi->takes_variant || (fi->f == F_NDCG) != is_ideal)
          return rs__fail(err, RS_USAGE, "measure '%s': %.*s= is a parameter of %s, not of %s", arg, (int)klen, q,
                          is_ideal ? "nDCG" : "P and Judged", fi->name);
        if (value_is(eq + 1, end, "retrieved")) variant = V_RETRIEVED;
        else if (value_is(eq + 1, end, is_ideal ? "qrels" : "k")) variant = V_NONE;
        else return rs__fail(err, RS_USAGE, "measure '%s': %.*s= expects %s or retrieved, found '%.*s'", arg, (int)klen, q,
                             is_ideal ? "qrels" : "k", (int)(end - eq - 1), eq + 1);
      } else if (klen == 11 && memcmp(q, "judged_only", 11) == 0) { /* ir_measures' parameter, at its default */
        if (!value_is(eq + 1, end, "false") && !value_is(eq + 1, end, "0"))
          return rs__fail(err, RS_USAGE, "measure '%s': judged_only=%.*s is not supported (only the default, False)", arg,
                          (int)(end - eq - 1), eq + 1);
      } else {
        return rs__fail(err, RS_USAGE, "measure '%s': unknown parameter '%.*s' (expected rel, gain, dcg%s)", arg, (int)klen, q,
                        fi->takes_variant ? (fi->f == F_NDCG ? " or ideal" : " or denom") : "");
      }
      q = comma ? comma + 1 : close;
    }
    p = close + 1;
  }
  long cuts[MAX_CUTOFFS_PER_NAME];
  size_t n_cuts = 0;
  if (*p == '@') {
    p++;
    if (!fi->takes_cut) return rs__fail(err, RS_USAGE, "measure '%s': %s takes no cutoff", arg, fi->name);
    const char *dots = strstr(p, "..");
    if (*p == '{') {
      const char *close = strchr(p, '}');
      if (!close || close[1]) return rs__fail(err, RS_USAGE, "measure '%s': expected a cutoff list like @{1,5,10}", arg);
      const char *q = p + 1;
      while (q < close) {
        const char *comma = memchr(q, ',', (size_t)(close - q));
        const char *end = comma ? comma : close;
        if (n_cuts == MAX_CUTOFFS_PER_NAME || !parse_long(q, end, &cuts[n_cuts]))
          return rs__fail(err, RS_USAGE, "measure '%s': expected positive integer cutoffs, found '%.*s'", arg, (int)(end - q), q);
        n_cuts++;
        q = comma ? comma + 1 : close;
      }
    } else if (dots) {
      long a, b;
      if (!parse_long(p, dots, &a) || !parse_long(dots + 2, p + strlen(p), &b) || a < 1 || b < a ||
          b - a >= MAX_CUTOFFS_PER_NAME)
        return rs__fail(err, RS_USAGE, "measure '%s': expected a cutoff range like @1..100 (at most %d cutoffs)", arg,
                        MAX_CUTOFFS_PER_NAME);
      for (long k = a; k <= b; k++) cuts[n_cuts++] = k;
    } else {
      if (!parse_long(p, p + strlen(p), &cuts[0]))
        return rs__fail(err, RS_USAGE, "measure '%s': expected a positive integer cutoff after '@', found '%s'", arg, p);
      n_cuts = 1;
    }
    for (size_t i = 0; i < n_cuts; i++)
      if (cuts[i] < 1) return rs__fail(err, RS_USAGE, "measure '%s': cutoff %ld is not a positive integer", arg, cuts[i]);
    /* ascending, so @{10,5} and @5 @10 list the same way */
    for (size_t i = 1; i < n_cuts; i++)
      for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
        long t = cuts[j];
        cuts[j] = cuts[j - 1];
        cuts[j - 1] = t;
      }
  } else if (*p) {
    return rs__fail(err, RS_USAGE, "measure '%s': unexpected '%s' (expected (params) or @cutoff)", arg, p);
  }
  if (fi->needs_cut && !n_cuts)
    return rs__fail(err, RS_USAGE, "measure '%s': %s needs a cutoff, e.g. %s@10", arg, fi->name, fi->name);
  if (variant == V_RETRIEVED && !n_cuts)
    return rs__fail(err, RS_USAGE, "measure '%s': the retrieved variant needs a cutoff, e.g. %s@10", arg, arg);
  if (!n_cuts)
    return push(l, (item){.f = fi->f, .level = level, .exp_gain = exp_gain, .name = canonical(fi, level, exp_gain, V_NONE, 0)}, err);
  for (size_t i = 0; i < n_cuts; i++) {
    rs_code rc = push(l, (item){.f = fi->f, .level = level, .exp_gain = exp_gain, .variant = variant, .cut = cuts[i],
                                .name = canonical(fi, level, exp_gain, variant, cuts[i])}, err);
    if (rc) return rc;
  }
  return RS_OK;
}

/* trec_eval spelling: validated by the trec_eval parser itself. */
static rs_code parse_trec(const char *arg, item_list *l, rs_error *err)
{
  rs_plan tmp;
  rs_plan_init(&tmp);
  rs_code rc = rs_plan_add(&tmp, arg, err);
  if (!rc) rc = rs_plan_finish(&tmp, 0, err);
  if (rc) {
    rs_plan_free(&tmp);
    /* The trec_eval parser's reason, copied: rs__fail writes into err->msg. */
    char why[sizeof err->msg] = "";
    if (err) snprintf(why, sizeof why, "%s", err->msg);
    return rs__fail(err, RS_USAGE, "measure '%s': unknown (expected an ir_measures name such as nDCG@10, or a trec_eval "
                    "measure such as ndcg_cut.10): %s", arg, why);
  }
  for (size_t s = 0; s < tmp.n_sel && !rc; s++) {
    const rs_measure_sel *m = &tmp.sel[s];
    const char *param = strchr(arg, '.');
    family f = F_TREC;
    switch (m->id) {
    case RS_M_RUNID:
    case RS_M_NUM_Q:
    case RS_M_RELSTRING:
      rc = rs__fail(err, RS_USAGE, "measure '%s': %s is not a per-query number; eval reports num_q itself", arg,
                    rs_measure_name(m->id));
      continue;
    case RS_M_P: f = F_P; break;
    case RS_M_RECALL: f = F_R; break;
    case RS_M_SUCCESS: f = F_SUCCESS; break;
    case RS_M_MAP_CUT: f = F_AP; break;
    case RS_M_NDCG_CUT: f = F_NDCG; break;
    case RS_M_MAP: f = F_AP; break;
    case RS_M_RECIP_RANK: f = F_RR; break;
    case RS_M_NDCG: f = param ? F_TREC : F_NDCG; break; /* custom gains have no ir_measures name */
    case RS_M_RPREC: f = F_RPREC; break;
    case RS_M_BPREF: f = F_BPREF; break;
    case RS_M_NUM_RET: f = F_NUMRET; break;
    case RS_M_NUM_REL: f = F_NUMREL; break;
    case RS_M_NUM_REL_RET: f = F_NUMRELRET; break;
    default: break;
    }
    if (f == F_TREC) {
      for (size_t k = 0; k < m->n_values && !rc; k++)
        rc = push(l, (item){.f = F_TREC, .level = 1, .trec = strdup(arg), .trec_value = k, .name = strdup(m->names[k])},
                  err);
      continue;
    }
    const family_info *fi = &families[f];
    const int cut = m->id == RS_M_P || m->id == RS_M_RECALL || m->id == RS_M_SUCCESS || m->id == RS_M_MAP_CUT ||
                    m->id == RS_M_NDCG_CUT;
    if (!cut) {
      rc = push(l, (item){.f = f, .level = 1, .name = canonical(fi, 1, 0, V_NONE, 0)}, err);
      continue;
    }
    for (size_t k = 0; k < m->n_values && !rc; k++)
      rc = push(l, (item){.f = f, .level = 1, .cut = m->cut[k], .name = canonical(fi, 1, 0, V_NONE, m->cut[k])}, err);
  }
  rs_plan_free(&tmp);
  return rc;
}

/* 1 when trec_eval's parser takes arg as it stands. */
static int is_trec_name(const char *arg)
{
  rs_plan tmp;
  rs_plan_init(&tmp);
  rs_error e = {0};
  const int ok = rs_plan_add(&tmp, arg, &e) == RS_OK;
  rs_plan_free(&tmp);
  return ok;
}

static rs_code parse_name(const char *arg, item_list *l, rs_error *err)
{
  if (strpbrk(arg, "@(")) return parse_ir(arg, l, err);
  size_t len = strcspn(arg, ".");
  const family_info *fi = find_family_exact(arg, len);
  int exp_gain;
  /* Bare names shared by both (P, Rprec, bpref) and ir_measures names
   * without a cutoff (RR, AP, nDCG) read as ir_measures; then trec_eval's
   * names (map, recall: its default cutoffs); then the aliases in any case
   * (mrr, r-precision). */
  if (fi && !arg[len] && fi != &families[F_P]) return parse_ir(arg, l, err);
  if (!arg[len] && !is_trec_name(arg) && find_family(arg, len, &exp_gain)) return parse_ir(arg, l, err);
  return parse_trec(arg, l, err);
}

int rs__spec_trec_spelling(const char *name, char *buf, size_t len)
{
  /* parse_ir reads bare names too (AP, nDCG, mrr); trec_eval's own bare
   * names never get here, as its parser took them. */
  if (len == 0) return 0;
  item_list l = {0};
  rs_error e = {0};
  int ok = parse_ir(name, &l, &e) == RS_OK && l.n > 0;
  const item *it = ok ? &l.v[0] : NULL;
  const char *trec = NULL;
  if (ok && !it->exp_gain && it->variant == V_NONE) switch (it->f) {
    case F_P: trec = "P"; break;
    case F_R: trec = "recall"; break;
    case F_SUCCESS: trec = "success"; break;
    case F_AP: trec = it->cut ? "map_cut" : "map"; break;
    case F_NDCG: trec = it->cut ? "ndcg_cut" : "ndcg"; break;
    case F_RR: trec = "recip_rank"; break;
    case F_RPREC: trec = "Rprec"; break;
    case F_BPREF: trec = "bpref"; break;
    case F_NUMRET: trec = "num_ret"; break;
    case F_NUMREL: trec = "num_rel"; break;
    case F_NUMRELRET: trec = "num_rel_ret"; break;
    default: break;
    }
  ok = trec != NULL;
  size_t n = 0;
  if (ok && it->level != 1) n += (size_t)snprintf(buf + n, len - n, "-l %ld ", it->level);
  if (ok && it->f == F_RR && it->cut && n < len) n += (size_t)snprintf(buf + n, len - n, "-M %ld ", it->cut);
  if (ok && n < len) n += (size_t)snprintf(buf + n, len - n, "-m %s", trec);
  const int cut = ok && it->cut && it->f != F_RR;
  for (size_t i = 0; cut && i < l.n && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%c%ld", i ? ',' : '.', l.v[i].cut);
  ok = ok && n < len;
  for (size_t i = 0; i < l.n; i++) {
    free(l.v[i].name);
    free(l.v[i].trec);
  }
  free(l.v);
  rs__strdict_free(&l.names);
  return ok;
}

/* --- planning -------------------------------------------------------------- */

/* What one plan (one relevance level) must compute. */
typedef struct {
  long level;
  const char *trec; /* a pass-through plan's argument, or NULL */
  /* cutoff sets of P, recall, success, map_cut, ndcg_cut */
  long *cuts[5];
  size_t n_cuts[5];
  int map, recip_rank, ndcg, rprec, bpref, num_ret, num_rel, num_rel_ret;
} plan_need;

static const rs_measure_id cut_ids[5] = {RS_M_P, RS_M_RECALL, RS_M_SUCCESS, RS_M_MAP_CUT, RS_M_NDCG_CUT};

/* The room of an array grown by grow_room: n rounded up to a power of two
 * (at least 4), so appending one at a time copies O(n) in all. */
static int needs_room(size_t n) { return n < 4 ? n == 0 : (n & (n - 1)) == 0; }
static size_t grow_room(size_t n) { return n < 4 ? 4 : 2 * n; }

static rs_code need_cut(plan_need *pn, int which, long k, rs_error *err)
{
  for (size_t i = 0; i < pn->n_cuts[which]; i++)
    if (pn->cuts[which][i] == k) return RS_OK;
  long *nc = pn->cuts[which];
  if (needs_room(pn->n_cuts[which]) &&
      !(nc = rs__realloc(pn->cuts[which], rs__mul(grow_room(pn->n_cuts[which]), sizeof *nc))))
    return rs__fail(err, RS_NOMEM, "out of memory");
  pn->cuts[which] = nc;
  nc[pn->n_cuts[which]++] = k;
  return RS_OK;
}

static int cmp_long(const void *a, const void *b)
{
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

static rs_code add_cut_measure(rs_plan *plan, rs_measure_id id, long *cuts, size_t n, rs_error *err)
{
  qsort(cuts, n, sizeof *cuts, cmp_long);
  size_t len = strlen(rs_measure_name(id)) + 2 + n * 21;
  char *arg = rs__malloc(len), *p = arg;
  if (!arg) return rs__fail(err, RS_NOMEM, "out of memory");
  p += sprintf(p, "%s.", rs_measure_name(id));
  for (size_t i = 0; i < n; i++) p += sprintf(p, i ? ",%ld" : "%ld", cuts[i]);
  rs_code rc = rs_plan_add(plan, arg, err);
  free(arg);
  return rc;
}

static size_t slot_of(const rs_plan *plan, rs_measure_id id, long cut)
{
  const rs_measure_sel *m = &plan->sel[plan->chosen[id] - 1];
  if (!cut) return m->slot;
  size_t k = 0;
  while (m->cut[k] != cut) k++;
  return m->slot + k;
}

static plan_need *need_for(plan_need **needs, size_t *n, long level, const char *trec, rs_error *err)
{
  for (size_t i = 0; i < *n; i++)
    if ((*needs)[i].level == level && ((!trec && !(*needs)[i].trec) || (trec && (*needs)[i].trec &&
                                                                       strcmp(trec, (*needs)[i].trec) == 0)))
      return &(*needs)[i];
  plan_need *nn = rs__realloc(*needs, rs__mul(*n + 1, sizeof *nn));
  if (!nn) {
    rs__fail(err, RS_NOMEM, "out of memory");
    return NULL;
  }
  *needs = nn;
  memset(&nn[*n], 0, sizeof nn[*n]);
  nn[*n].level = level;
  nn[*n].trec = trec;
  return &nn[(*n)++];
}

void rs__spec_free(rs__spec *s)
{
  if (!s) return;
  for (size_t i = 0; i < s->n_plans; i++) {
    rs_plan_free(&s->plans[i].plan);
    free(s->plans[i].rag);
    rs__fused_free(s->plans[i].fused);
  }
  free(s->plans);
  for (size_t i = 0; i < s->n_req; i++) free(s->req[i].name);
  free(s->req);
  free(s->work_at);
  free(s->dup_from);
  free(s->dup_to);
  free(s->f1);
  free(s);
}

rs_code rs__spec_build(const char *const *names, size_t n_names, size_t max_ranking, rs__spec **out, rs_error *err)
{
  return rs__spec_build_extra(names, n_names, NULL, 0, max_ranking, out, err);
}

size_t rs__spec_find_value(const rs__spec *s, const char *name)
{
  for (size_t k = 0; k < s->n_req; k++)
    if (strcmp(s->req[k].name, name) == 0) return k; /* hidden names start with a space: never a match */
  return SIZE_MAX;
}

rs_code rs__spec_build_extra(const char *const *names, size_t n_names, const char *const *extra, size_t n_extra,
                             size_t max_ranking, rs__spec **out, rs_error *err)
{
  item_list l = {0};
  plan_need *needs = NULL;
  size_t n_needs = 0;
  rs__spec *s = rs__calloc(1, sizeof *s);
  rs_code rc = s ? RS_OK : rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < n_names && !rc; i++) rc = parse_name(names[i], &l, err);
  if (!rc && l.n == 0) rc = rs__fail(err, RS_USAGE, "no measures given");
  const size_t n_visible = l.n;
  /* Hidden values behind the num_q_* counts of aggregate.csv. */
  if (!rc) rc = push(&l, (item){.f = F_P, .level = 1, .cut = 1, .name = strdup(" P@1")}, err);
  if (!rc) rc = push(&l, (item){.f = F_NUMRELRET, .level = 1, .name = strdup(" NumRelRet")}, err);
  /* ... and behind worst.csv: the first relevant rank (1 / RR) and NumRel. */
  if (!rc) rc = push(&l, (item){.f = F_RR, .level = 1, .name = strdup(" RR")}, err);
  if (!rc) rc = push(&l, (item){.f = F_NUMREL, .level = 1, .name = strdup(" NumRel")}, err);
  /* Extra values after the hidden ones; one already asked for is not
   * computed twice (push drops a name met before). */
  for (size_t i = 0; i < n_extra && !rc; i++) rc = parse_name(extra[i], &l, err);
  if (rc) goto done;

  /* 1. What each plan computes. */
  size_t *plan_of = rs__calloc(l.n, sizeof *plan_of);
  if (!plan_of) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
  for (size_t i = 0; i < l.n && !rc; i++) {
    item *it = &l.v[i];
    int trec_plan = it->f == F_TREC;
    plan_need *pn = need_for(&needs, &n_needs, it->level, trec_plan ? it->trec : NULL, err);
    if (!pn) { rc = RS_NOMEM; break; }
    plan_of[i] = (size_t)(pn - needs);
    switch (it->f) {
    case F_P:
      if (it->variant == V_NONE) rc = need_cut(pn, 0, it->cut, err);
      break;
    case F_R: rc = need_cut(pn, 1, it->cut, err); break;
    case F_F1:
      if (!(rc = need_cut(pn, 0, it->cut, err))) rc = need_cut(pn, 1, it->cut, err);
      break;
    case F_SUCCESS: rc = need_cut(pn, 2, it->cut, err); break;
    case F_AP:
      if (it->cut) rc = need_cut(pn, 3, it->cut, err);
      else pn->map = 1;
      break;
    case F_NDCG:
      if (!it->exp_gain && it->variant == V_NONE) {
        if (it->cut) rc = need_cut(pn, 4, it->cut, err);
        else pn->ndcg = 1;
      }
      break;
    case F_RR: pn->recip_rank |= !it->cut; break;
    case F_RPREC: pn->rprec = 1; break;
    case F_BPREF: pn->bpref = 1; break;
    case F_NUMRET: pn->num_ret = 1; break;
    case F_NUMREL: pn->num_rel = 1; break;
    case F_NUMRELRET: pn->num_rel_ret = 1; break;
    case F_DCG:
    case F_JUDGED:
    case F_TREC: break;
    }
  }
  /* 2. The plans. */
  if (!rc && !(s->plans = rs__calloc(n_needs, sizeof *s->plans))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t p = 0; p < n_needs && !rc; p++) {
    plan_need *pn = &needs[p];
    rs_plan *plan = &s->plans[p].plan;
    rs_plan_init(plan);
    s->n_plans++;
    plan->relevance_level = pn->level;
    if (pn->trec) rc = rs_plan_add(plan, pn->trec, err);
    for (int w = 0; w < 5 && !rc; w++)
      if (pn->n_cuts[w]) rc = add_cut_measure(plan, cut_ids[w], pn->cuts[w], pn->n_cuts[w], err);
    const struct { int on; const char *name; } plain[] = {
        {pn->map, "map"}, {pn->recip_rank, "recip_rank"}, {pn->ndcg, "ndcg"}, {pn->rprec, "Rprec"},
        {pn->bpref, "bpref"}, {pn->num_ret, "num_ret"}, {pn->num_rel, "num_rel"}, {pn->num_rel_ret, "num_rel_ret"}};
    for (size_t k = 0; k < sizeof plain / sizeof *plain && !rc; k++)
      if (plain[k].on) rc = rs_plan_add(plan, plain[k].name, err);
    if (!rc) rc = rs_plan_finish(plan, max_ranking, err);
  }
  /* 3. Requests: slots, rag measures, names. */
  if (!rc && !(s->req = rs__calloc(l.n, sizeof *s->req))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < l.n && !rc; i++) {
    item *it = &l.v[i];
    rs__spec_plan *sp = &s->plans[plan_of[i]];
    const rs_plan *plan = &sp->plan;
    rs__req *r = &s->req[i];
    r->plan = plan_of[i];
    r->kind = RS_REQ_PLAN;
    r->summary = RS_SUM_MEAN;
    rs_rag_measure rag = {.cutoff = it->cut ? it->cut : LONG_MAX, .level = it->level, .exp_gain = it->exp_gain};
    int is_rag = 0;
    switch (it->f) {
    case F_P:
      if (it->variant == V_RETRIEVED) is_rag = 1, rag.kind = RS_RAG_P_RETRIEVED;
      else r->slot = slot_of(plan, RS_M_P, it->cut);
      break;
    case F_R: r->slot = slot_of(plan, RS_M_RECALL, it->cut); break;
    case F_F1:
      r->kind = RS_REQ_F1;
      r->slot_p = slot_of(plan, RS_M_P, it->cut);
      r->slot_r = slot_of(plan, RS_M_RECALL, it->cut);
      break;
    case F_SUCCESS: r->slot = slot_of(plan, RS_M_SUCCESS, it->cut); break;
    case F_AP: r->slot = it->cut ? slot_of(plan, RS_M_MAP_CUT, it->cut) : slot_of(plan, RS_M_MAP, 0); break;
    case F_NDCG:
      if (it->variant == V_RETRIEVED) is_rag = 1, rag.kind = RS_RAG_NDCG_IDEAL_RETRIEVED;
      else if (it->exp_gain) is_rag = 1, rag.kind = RS_RAG_NDCG;
      else r->slot = it->cut ? slot_of(plan, RS_M_NDCG_CUT, it->cut) : slot_of(plan, RS_M_NDCG, 0);
      break;
    case F_RR:
      if (it->cut) is_rag = 1, rag.kind = RS_RAG_RR_CUT;
      else r->slot = slot_of(plan, RS_M_RECIP_RANK, 0);
      break;
    case F_DCG: is_rag = 1, rag.kind = RS_RAG_DCG; break;
    case F_JUDGED: is_rag = 1, rag.kind = it->variant == V_RETRIEVED ? RS_RAG_JUDGED_RETRIEVED : RS_RAG_JUDGED; break;
    case F_RPREC: r->slot = slot_of(plan, RS_M_RPREC, 0); break;
    case F_BPREF: r->slot = slot_of(plan, RS_M_BPREF, 0); break;
    case F_NUMRET: r->slot = slot_of(plan, RS_M_NUM_RET, 0), r->summary = RS_SUM_TOTAL; break;
    case F_NUMREL: r->slot = slot_of(plan, RS_M_NUM_REL, 0), r->summary = RS_SUM_TOTAL; break;
    case F_NUMRELRET: r->slot = slot_of(plan, RS_M_NUM_REL_RET, 0), r->summary = RS_SUM_TOTAL; break;
    case F_TREC: {
      const rs_measure_sel *m = &plan->sel[0];
      r->slot = m->slot + it->trec_value;
      r->summary = rs_measure_summary(m->id);
      break;
    }
    }
    if (is_rag) {
      rs_rag_measure *nr = sp->rag;
      if (needs_room(sp->n_rag) && !(nr = rs__realloc(sp->rag, rs__mul(grow_room(sp->n_rag), sizeof *nr)))) {
        rc = rs__fail(err, RS_NOMEM, "out of memory");
        break;
      }
      sp->rag = nr;
      r->kind = RS_REQ_RAG;
      r->slot = sp->n_rag;
      nr[sp->n_rag++] = rag;
    }
    r->name = it->name;
    it->name = NULL;
    s->n_req++;
  }
  if (!rc) {
    s->n_out = n_visible;
    s->hidden_p1 = n_visible;
    s->hidden_relret = n_visible + 1;
    s->hidden_rr = n_visible + 2;
    s->hidden_numrel = n_visible + 3;
    for (size_t p = 0; p < s->n_plans; p++) {
      s->plans[p].out = s->n_work;
      s->n_work += s->plans[p].plan.n_values + s->plans[p].n_rag;
      /* after the last rag measure is pushed: the program points at them */
      s->plans[p].fused = rs__fused_build(&s->plans[p].plan, s->plans[p].rag, s->plans[p].n_rag);
    }
    for (size_t i = 0; i < s->n_req; i++) {
      rs__req *r = &s->req[i];
      const rs__spec_plan *sp = &s->plans[r->plan];
      r->at = sp->out + (r->kind == RS_REQ_RAG ? sp->plan.n_values : 0) + r->slot;
      r->at_p = sp->out + r->slot_p, r->at_r = sp->out + r->slot_r;
    }
    s->work_at = rs__malloc(rs__mul(s->n_req, sizeof *s->work_at));
    s->f1 = rs__malloc(rs__mul(s->n_req, sizeof *s->f1));
    if (!s->work_at || !s->f1) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
    } else {
      for (size_t i = 0; i < s->n_req; i++) {
        const rs__req *r = &s->req[i];
        s->work_at[i] = r->kind == RS_REQ_F1 ? r->at_p : r->at;
        if (r->kind == RS_REQ_F1) s->f1[s->n_f1++] = i;
      }
      rc = place_directly(s, err);
    }
  }
  free(plan_of);
done:
  for (size_t i = 0; i < l.n; i++) {
    free(l.v[i].name);
    free(l.v[i].trec);
  }
  free(l.v);
  rs__strdict_free(&l.names);
  for (size_t i = 0; i < n_needs; i++)
    for (int w = 0; w < 5; w++) free(needs[i].cuts[w]);
  free(needs);
  if (rc) {
    rs__spec_free(s);
    return rc;
  }
  *out = s;
  return RS_OK;
}

rs_code rs__spec_scratch_init(const rs__spec *s, size_t cap, size_t max_levels, rs__spec_scratch *ss, rs_error *err)
{
  memset(ss, 0, sizeof *ss);
  ss->ms = rs__calloc_lines(s->n_plans, sizeof *ss->ms); /* per thread: whole lines (rs__calloc_lines) */
  ss->work = rs__calloc_lines(s->n_work, sizeof *ss->work);
  if (!ss->ms || !ss->work) {
    rs__spec_scratch_free(ss);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  for (size_t p = 0; p < s->n_plans; p++) {
    rs_code rc = rs_scratch_init(&ss->ms[p], &s->plans[p].plan, cap, max_levels, err);
    if (rc) {
      rs__spec_scratch_free(ss);
      return rc;
    }
    ss->n_plans++;
  }
  return RS_OK;
}

void rs__spec_scratch_free(rs__spec_scratch *ss)
{
  if (!ss) return;
  for (size_t p = 0; p < ss->n_plans; p++) rs_scratch_free(&ss->ms[p]);
  free(ss->ms);
  free(ss->work);
  memset(ss, 0, sizeof *ss);
}

/* Direct writes for a spec of one fused plan and no F1 (see rs__spec): the
 * place of each work vector value is the first req that reads it; every
 * value must be read by one (else the copy stays). */
static rs_code place_directly(rs__spec *s, rs_error *err)
{
  if (s->n_plans != 1 || !s->plans[0].fused || s->n_f1 || s->n_work == 0) return RS_OK;
  size_t *place = rs__malloc(rs__mul(s->n_work, sizeof *place));
  s->dup_from = rs__malloc(rs__mul(s->n_req ? s->n_req : 1, sizeof *s->dup_from));
  s->dup_to = rs__malloc(rs__mul(s->n_req ? s->n_req : 1, sizeof *s->dup_to));
  if (!place || !s->dup_from || !s->dup_to) {
    free(place);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  for (size_t w = 0; w < s->n_work; w++) place[w] = SIZE_MAX;
  size_t n_dup = 0;
  for (size_t i = 0; i < s->n_req; i++) {
    const size_t w = s->work_at[i];
    if (place[w] == SIZE_MAX) place[w] = i;
    else s->dup_from[n_dup] = place[w], s->dup_to[n_dup++] = i;
  }
  int every = 1;
  for (size_t w = 0; w < s->n_work; w++) every &= place[w] != SIZE_MAX;
  if (every) {
    rs__fused_place(s->plans[0].fused, place);
    s->direct = 1, s->n_dup = n_dup;
  }
  free(place);
  return RS_OK;
}

void rs__spec_eval(const rs__spec *s, rs__spec_scratch *ss, const int32_t *rel, size_t n, const int32_t *judged,
                   size_t n_judged, const rs_levels *lv, int missing, double *out)
{
  static const int32_t dummy = RS_REL_UNPOOLED;
  if (s->direct && !missing && judged && s->plans[0].fused) {
    rs__fused_eval(s->plans[0].fused, &s->plans[0].plan, rel, n, judged, n_judged, lv, &ss->ms[0], out);
    for (size_t j = 0; j < s->n_dup; j++) out[s->dup_to[j]] = out[s->dup_from[j]];
    return;
  }
  for (size_t p = 0; p < s->n_plans; p++) {
    const rs__spec_plan *sp = &s->plans[p];
    double *w = ss->work + sp->out;
    if (!missing && judged && sp->fused) {
      rs__fused_eval(sp->fused, &sp->plan, rel, n, judged, n_judged, lv, &ss->ms[p], w);
      continue;
    }
    if (missing) rs_eval_topic_missing(&sp->plan, lv, &ss->ms[p], w, NULL);
    else rs__eval_topic_judged(&sp->plan, rel, n, judged, n_judged, lv, &ss->ms[p], w, NULL);
    if (sp->n_rag) /* the dummy scores 0 on every rag measure, as under -c */
      rs_eval_rag(&sp->plan, sp->rag, sp->n_rag, missing ? &dummy : rel, missing ? 1 : n, lv, w + sp->plan.n_values);
  }
  const double *restrict w = ss->work;
  const size_t *restrict at = s->work_at;
  for (size_t i = 0; i < s->n_req; i++) out[i] = w[at[i]];
  for (size_t j = 0; j < s->n_f1; j++) {
    const rs__req *r = &s->req[s->f1[j]];
    const double P = w[r->at_p], R = w[r->at_r];
    out[s->f1[j]] = P + R > 0.0 ? 2.0 * P * R / (P + R) : 0.0;
  }
}
