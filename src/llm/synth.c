/* synth.c: documents drawn, one question and reference answer asked per
 * document, near-duplicates dropped, the eval set and the JSONL written. */
#define _GNU_SOURCE
#include "llm/synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "formats/csvio.h"
#include "formats/texts.h"
#include "llm/cache.h"
#include "llm/calls.h"
#include "llm/wire.h"
#include "util/strbuf.h"

/* What became of one drawn document. */
enum {
  ITEM_PENDING,
  ITEM_OK,         /* a question and an answer */
  ITEM_UNPARSED,   /* the reply has no JSON object with string "question" and "answer" */
  ITEM_EMPTY,      /* it has them, but one is empty (or blank) */
  ITEM_TRUNCATED,  /* finish_reason "length" */
  ITEM_BAD_REPLY,  /* a 2xx body that is not a chat completion */
  ITEM_HTTP_ERROR,
  ITEM_NOT_SENT
};
static const char *const item_status_name[] = {"pending", "ok", "unparsed", "empty", "truncated",
                                               "bad_reply", "http_error", "not_sent"};

typedef struct item {
  size_t record;          /* index into the collection */
  uint8_t status;         /* ITEM_* */
  uint8_t duplicate;      /* an earlier question is a near-duplicate of this one */
  uint8_t cut;
  char *question, *answer; /* ITEM_OK: trimmed, malloc'd */
  char *note;             /* a failure: why, with the start of the reply (malloc'd) */
} item;

struct rs__synth {
  const rs__synth_cfg *cfg;
  rs__texts *texts;
  item *item;          /* [n_items], in draw order */
  rs__llm_call *call;  /* [n_items] */
  size_t n_items;
  rs__llm_cache *cache;
  rs__llm_calls_cfg calls_cfg;
  rs__llm_calls_stats cs;
  rs__synth_stats st;
};

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* --- the prompt ------------------------------------------------------------------ */

/* README, "synth", quotes these verbatim: change both together. */
static const char system_prompt[] =
    "You write questions for evaluating a search and question-answering system. "
    "You reply with one JSON object and nothing else.";

static const struct {
  const char *name, *description;
} question_types[] = {
    {"definition", "asks what something is or what a term means (\"What is ...?\")"},
    {"how-to", "asks how to do something, answered by the steps or the method (\"How do I ...?\")"},
    {"troubleshooting",
     "describes a problem, an error or a symptom and asks for its cause or its fix (\"Why does ... fail, and how do I "
     "fix it?\")"},
    {"comparison",
     "asks how two things the document describes differ, or which to choose when (\"What is the difference between "
     "... and ...?\")"},
};
enum { N_QUESTION_TYPES = sizeof question_types / sizeof question_types[0] };

static int type_index(const char *name)
{
  for (int i = 0; i < N_QUESTION_TYPES; i++)
    if (strcmp(question_types[i].name, name) == 0) return i;
  return -1;
}

/* Bytes of the first max_chars code points of s[0..n) (never inside a sequence). */
static size_t prefix_bytes(const char *s, size_t n, size_t max_chars)
{
  size_t i = 0, chars = 0;
  while (i < n && chars < max_chars) {
    i++;
    while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
    chars++;
  }
  return i;
}

/* The user message for a document and a type (malloc'd); *cut when the
 * document was cut to max_chars. */
static char *user_prompt(const char *doc, size_t max_chars, int type, int *cut)
{
  const size_t n_full = strlen(doc), n = max_chars ? prefix_bytes(doc, n_full, max_chars) : n_full;
  *cut = n < n_full;
  const char *name = question_types[type].name;
  rs__sb b = {0};
  rs__sb_printf(&b,
                "Write one %s question that the document below answers, and the answer to it.\n"
                "\n"
                "A %s question %s.\n"
                "\n"
                "Rules:\n"
                "- The question must be answerable from the document alone, and must read naturally without "
                "it: do not mention \"the document\", \"the text\" or \"the passage\".\n"
                "- The answer must be correct according to the document, complete, and at most three "
                "sentences long.\n"
                "- If the document offers nothing for this type of question, write the closest question that "
                "it does answer.\n"
                "- Write in the language of the document.\n"
                "\n"
                "Document:\n",
                name, name, question_types[type].description);
  rs__sb_add(&b, doc, n);
  rs__sb_str(&b, "\n\nReply with only this JSON object: {\"question\": \"...\", \"answer\": \"...\"}");
  return rs__sb_take(&b);
}

/* --- the draw --------------------------------------------------------------------- */

/* SplitMix64 (Steele, Lea and Flood 2014): 64-bit state, every seed fine. */
static uint64_t splitmix64(uint64_t *state)
{
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [0, m), m >= 1: draws at or past the largest multiple of m
 * below 2^64 are rejected, so no value is favoured. */
static uint64_t uniform_below(uint64_t *state, uint64_t m)
{
  const uint64_t last_accepted = UINT64_MAX - (UINT64_MAX % m + 1) % m; /* 2^64 - (2^64 mod m) - 1 */
  for (;;) {
    const uint64_t r = splitmix64(state);
    if (r <= last_accepted) return r % m;
  }
}

void rs__synth_draw(uint64_t seed, size_t *a, size_t n_all, size_t n)
{
  uint64_t state = seed;
  for (size_t i = 0; i < n && i < n_all; i++) {
    const size_t j = i + (size_t)uniform_below(&state, (uint64_t)(n_all - i));
    const size_t t = a[i];
    a[i] = a[j], a[j] = t;
  }
}

/* --- near-duplicates ----------------------------------------------------------------- */

typedef struct wordset {
  char *buf;   /* the lower-cased question, separators turned into NULs */
  char **word; /* sorted (strcmp), unique */
  size_t n;
} wordset;

static int word_byte(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80; }

static int cmp_word(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int wordset_make(const char *s, wordset *w)
{
  const size_t n = strlen(s);
  memset(w, 0, sizeof *w);
  if (!(w->buf = malloc(n + 1)) || !(w->word = malloc((n / 2 + 1) * sizeof *w->word))) {
    free(w->buf);
    return -1;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const unsigned char c = (unsigned char)s[i];
    if (!word_byte(c)) {
      w->buf[i] = '\0';
      continue;
    }
    w->buf[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (i == 0 || !word_byte((unsigned char)s[i - 1])) w->word[k++] = w->buf + i;
  }
  w->buf[n] = '\0';
  if (k > 1) qsort(w->word, k, sizeof *w->word, cmp_word);
  size_t u = 0;
  for (size_t i = 0; i < k; i++)
    if (u == 0 || strcmp(w->word[u - 1], w->word[i]) != 0) w->word[u++] = w->word[i];
  w->n = u;
  return 0;
}

static void wordset_free(wordset *w)
{
  free(w->buf);
  free(w->word);
}

/* Jaccard >= 0.8 in integers: 5 |A n B| >= 4 |A u B|. */
static int similar(const wordset *a, const wordset *b)
{
  if (a->n == 0 && b->n == 0) return 1;
  const size_t lo = a->n < b->n ? a->n : b->n, hi = a->n < b->n ? b->n : a->n;
  if (5 * lo < 4 * hi) return 0; /* |A n B| <= lo and |A u B| >= hi */
  size_t i = 0, j = 0, common = 0;
  while (i < a->n && j < b->n) {
    const int c = strcmp(a->word[i], b->word[j]);
    if (c == 0) common++, i++, j++;
    else if (c < 0) i++;
    else j++;
  }
  return 5 * common >= 4 * (a->n + b->n - common);
}

int rs__synth_near_duplicate(const char *a, const char *b)
{
  wordset wa, wb;
  if (wordset_make(a, &wa)) return -1;
  if (wordset_make(b, &wb)) {
    wordset_free(&wa);
    return -1;
  }
  const int r = similar(&wa, &wb);
  wordset_free(&wa);
  wordset_free(&wb);
  return r;
}

/* Marks every answered item whose question is a near-duplicate of an
 * earlier kept one's.  O(kept^2) set comparisons, most cut short by sizes. */
static rs_code drop_duplicates(rs__synth *s, rs_error *err)
{
  wordset *kept = rs__calloc(s->n_items, sizeof *kept);
  if (!kept) return rs__fail(err, RS_NOMEM, "out of memory for %zu questions", s->n_items);
  size_t n_kept = 0;
  rs_code rc = RS_OK;
  for (size_t i = 0; i < s->n_items && !rc; i++) {
    item *it = &s->item[i];
    if (it->status != ITEM_OK) continue;
    wordset w;
    if (wordset_make(it->question, &w)) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
      break;
    }
    for (size_t k = 0; k < n_kept && !it->duplicate; k++) it->duplicate = (uint8_t)similar(&kept[k], &w);
    if (it->duplicate) {
      s->st.duplicates++;
      wordset_free(&w);
    } else kept[n_kept++] = w;
  }
  for (size_t k = 0; k < n_kept; k++) wordset_free(&kept[k]);
  free(kept);
  return rc;
}

/* --- requests --------------------------------------------------------------------- */

static const char *doc_id(const rs__synth *s, size_t i) { return rs__texts_id(s->texts, s->item[i].record); }

static const char *doc_text(const rs__synth *s, size_t i)
{
  return rs__texts_get(s->texts, doc_id(s, i), NULL);
}

static int item_type(const rs__synth *s, size_t i) { return type_index(s->cfg->types[i % s->cfg->n_types]); }

static char *render_call(void *ctx, size_t i, const char **path, size_t *len)
{
  rs__synth *s = ctx;
  const rs__synth_cfg *cfg = s->cfg;
  int cut = 0;
  char *user = user_prompt(doc_text(s, i), cfg->max_doc_chars, item_type(s, i), &cut);
  if (!user) return NULL;
  if (cut && !s->item[i].cut) s->item[i].cut = 1, s->st.cut++;
  const rs__chat_msg msgs[2] = {{"system", system_prompt}, {"user", user}};
  const rs__chat_params params = {cfg->model, cfg->temperature, cfg->max_tokens};
  char *body = rs__chat_request(&params, msgs, 2, len);
  free(user);
  *path = "/chat/completions";
  return body;
}

/* s without leading and trailing white space, in place. */
static char *trim(char *s)
{
  size_t n = strlen(s), a = 0;
  while (a < n && (s[a] == ' ' || s[a] == '\t' || s[a] == '\n' || s[a] == '\r')) a++;
  while (n > a && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r')) n--;
  memmove(s, s + a, n - a);
  s[n - a] = '\0';
  return s;
}

/* "why: 'the start of the reply'" (malloc'd). */
static char *failure_note(const char *why, const char *reply)
{
  rs__sb b = {0};
  rs__sb_str(&b, why);
  if (reply) {
    const size_t n = strlen(reply), m = prefix_bytes(reply, n, 80);
    rs__sb_str(&b, ": '");
    for (size_t k = 0; k < m; k++) rs__sb_add(&b, reply[k] == '\n' ? " " : reply + k, 1);
    rs__sb_str(&b, m < n ? "...'" : "'");
  }
  return rs__sb_take(&b);
}

/* Reads the question and the answer out of the model's text. */
static int read_sample(item *it, const char *content)
{
  rs__reply_obj *obj = rs__reply_obj_parse(content);
  char *q = rs__reply_obj_string(obj, "question"), *a = rs__reply_obj_string(obj, "answer");
  if (!q || !a) {
    it->status = ITEM_UNPARSED;
    it->note = failure_note("no JSON object with string \"question\" and \"answer\" in the reply", content);
  } else if (!*trim(q) || !*trim(a)) {
    it->status = ITEM_EMPTY;
    it->note = failure_note(*q ? "the answer is empty" : "the question is empty", content);
  } else {
    it->status = ITEM_OK;
    it->question = q, it->answer = a;
    q = a = NULL;
  }
  rs__reply_obj_free(obj);
  free(q);
  free(a);
  return it->status == ITEM_OK ? RS_TAKE_ANSWER : RS_TAKE_NO_ANSWER;
}

static int take_call(void *ctx, size_t i, const char *body, size_t len, int cached, int64_t *prompt_tokens,
                     int64_t *completion_tokens, char **note)
{
  (void)cached;
  rs__synth *s = ctx;
  item *it = &s->item[i];
  rs__chat_reply rep;
  const rs__reply_status st = rs__chat_reply_parse(body, len, &rep);
  *prompt_tokens = rep.prompt_tokens, *completion_tokens = rep.completion_tokens;
  int t = RS_TAKE_NO_ANSWER;
  switch (st) {
  case RS_REPLY_OK: t = read_sample(it, rep.content); break;
  case RS_REPLY_TRUNCATED:
    it->status = ITEM_TRUNCATED;
    it->note = failure_note("the reply was cut off (finish_reason \"length\"; raise --max-tokens)", rep.content);
    break;
  default:
    it->status = ITEM_BAD_REPLY;
    *note = strdup(rep.error ? rep.error : "the reply is not a chat completion");
    t = RS_TAKE_BAD;
    break;
  }
  rs__chat_reply_free(&rep);
  return t;
}

static void copy_call_stats(rs__synth *s)
{
  const rs__llm_calls_stats *cs = &s->cs;
  rs__synth_stats *st = &s->st;
  st->requests = cs->requests;
  st->cached = cs->cached, st->sent = cs->sent, st->retries = cs->retries, st->done = cs->done;
  st->request_failures = cs->failed;
  st->prompt_tokens = cs->prompt_tokens, st->completion_tokens = cs->completion_tokens;
  st->est_prompt_tokens = cs->est_prompt_tokens, st->est_completion_tokens = cs->est_completion_tokens;
  st->cost = cs->cost, st->est_cost = cs->est_cost;
  st->wall_s = cs->wall_s;
  st->stopped_budget = cs->stopped_budget, st->stopped_fatal = cs->stopped_fatal;
  memcpy(st->fatal_message, cs->fatal_message, sizeof st->fatal_message);
}

static void call_progress(void *ctx, const rs__llm_calls_stats *cs)
{
  rs__synth *s = ctx;
  (void)cs;
  copy_call_stats(s);
  if (s->cfg->progress) s->cfg->progress(s->cfg->progress_ctx, &s->st);
}

/* The counts by kind, and the first failure's message. */
static void count_outcomes(rs__synth *s)
{
  rs__synth_stats *st = &s->st;
  for (size_t i = 0; i < s->n_items; i++) {
    item *it = &s->item[i];
    const rs__llm_call *c = &s->call[i];
    if (c->status == RS_CALL_HTTP_ERROR) it->status = ITEM_HTTP_ERROR;
    else if (c->status == RS_CALL_NOT_SENT) it->status = ITEM_NOT_SENT;
    else if (c->status == RS_CALL_BAD_REPLY) it->status = ITEM_BAD_REPLY;
    switch (it->status) {
    case ITEM_OK: continue;
    case ITEM_NOT_SENT: st->not_sent++; continue;
    case ITEM_UNPARSED: st->unparsed++; break;
    case ITEM_EMPTY: st->empty++; break;
    case ITEM_TRUNCATED: st->truncated++; break;
    case ITEM_BAD_REPLY: st->bad_reply++; break;
    default: st->http_error++; break;
    }
    st->failures++;
    if (!st->first_failure[0]) {
      const char *why = it->note ? it->note : c->note ? c->note : "";
      snprintf(st->first_failure, sizeof st->first_failure, "document '%s' (synth-%04zu, %s): %s: %s", doc_id(s, i),
               i + 1, s->cfg->types[i % s->cfg->n_types], item_status_name[it->status], why);
    }
  }
}

/* --- run ----------------------------------------------------------------------------- */

static int blank(const char *t)
{
  for (; *t; t++)
    if (*t != ' ' && *t != '\t' && *t != '\n' && *t != '\r') return 0;
  return 1;
}

static rs_code draw_documents(rs__synth *s, rs_error *err)
{
  const rs__synth_cfg *cfg = s->cfg;
  const size_t n_records = rs__texts_count(s->texts);
  size_t *usable = rs__malloc(rs__mul(n_records, sizeof *usable));
  if (!usable) return rs__fail(err, RS_NOMEM, "out of memory for %zu documents", n_records);
  size_t n_usable = 0;
  for (size_t r = 0; r < n_records; r++)
    if (!blank(rs__texts_get(s->texts, rs__texts_id(s->texts, r), NULL))) usable[n_usable++] = r;
  s->st.records = n_records, s->st.usable = n_usable;
  if (cfg->n > n_usable) {
    free(usable);
    return rs__fail(err, RS_USAGE, "-n %zu: %s has only %zu documents with text (%zu records); ask for at most %zu",
                    cfg->n, cfg->docs_path, n_usable, n_records, n_usable);
  }
  s->item = rs__calloc(cfg->n, sizeof *s->item);
  s->call = rs__calloc(cfg->n, sizeof *s->call);
  if (!s->item || !s->call) {
    free(usable);
    return rs__fail(err, RS_NOMEM, "out of memory for %zu documents", cfg->n);
  }
  rs__synth_draw(cfg->seed, usable, n_usable, cfg->n);
  s->n_items = cfg->n;
  for (size_t i = 0; i < cfg->n; i++) s->item[i].record = usable[i];
  s->st.drawn = cfg->n;
  free(usable);
  return RS_OK;
}

/* Completion tokens a reply usually takes: a question and a 1-3 sentence
 * answer in JSON (for --dry-run and the budget's estimates). */
enum { EXPECT_TOKENS = 120 };

rs_code rs__synth_run(const rs__synth_cfg *cfg, rs__synth **out, rs_error *err)
{
  *out = NULL;
  if (cfg->n < 1) return rs__fail(err, RS_USAGE, "-n: expected at least 1 document, found %zu", cfg->n);
  if (cfg->n_types == 0) return rs__fail(err, RS_USAGE, "--types: expected at least one type (%s)", RS_SYNTH_TYPES);
  for (size_t t = 0; t < cfg->n_types; t++)
    if (type_index(cfg->types[t]) < 0)
      return rs__fail(err, RS_USAGE, "--types: unknown question type '%s'; expected a comma-separated list of %s",
                      cfg->types[t], RS_SYNTH_TYPES);
  rs__synth *s = rs__calloc(1, sizeof *s);
  if (!s) return rs__fail(err, RS_NOMEM, "out of memory");
  const double t0 = now_s();
  s->cfg = cfg;
  *out = s;
  rs_code rc;
  if ((rc = rs__texts_load(cfg->docs_path, &s->texts, err)) || (rc = draw_documents(s, err))) return rc;
  /* A dry run creates nothing: without a cache file, nothing is cached. */
  struct stat sb;
  if (!cfg->dry_run || stat(cfg->cache_path, &sb) == 0)
    if ((rc = rs__llm_cache_open(cfg->cache_path, &s->cache, err))) return rc;
  uint32_t expect = EXPECT_TOKENS;
  if (cfg->max_tokens > 0 && (uint32_t)cfg->max_tokens < expect) expect = (uint32_t)cfg->max_tokens;
  for (size_t i = 0; i < s->n_items; i++) s->call[i].expect_tokens = expect;
  rs__llm_calls_cfg *cc = &s->calls_cfg;
  cc->http = cfg->http;
  cc->cache = s->cache;
  cc->model = cfg->model;
  cc->price_in = cfg->price_in, cc->price_out = cfg->price_out, cc->max_cost = cfg->max_cost;
  cc->dry_run = cfg->dry_run;
  cc->render = render_call;
  cc->take = take_call;
  cc->progress = call_progress;
  cc->ctx = s;
  rc = rs__llm_calls_run(cc, s->call, s->n_items, &s->cs, err);
  copy_call_stats(s);
  if (!rc && !cfg->dry_run) {
    count_outcomes(s);
    rc = drop_duplicates(s, err);
    s->st.written = s->n_items - s->st.failures - s->st.not_sent - s->st.duplicates;
  }
  s->st.wall_s = now_s() - t0;
  return rc;
}

const rs__synth_stats *rs__synth_get_stats(const rs__synth *s) { return &s->st; }

void rs__synth_free(rs__synth *s)
{
  if (!s) return;
  for (size_t i = 0; s->item && i < s->n_items; i++) {
    free(s->item[i].question);
    free(s->item[i].answer);
    free(s->item[i].note);
  }
  rs__llm_calls_clear(s->call, s->n_items);
  free(s->call);
  free(s->item);
  rs__texts_free(s->texts);
  rs__llm_cache_close(s->cache);
  free(s);
}

/* --- outputs -------------------------------------------------------------------------- */

static void json_string(rs__sb *b, const char *s) { rs__sb_json_str(b, s, strlen(s)); }

/* One line of evalset.json (with its leading separator) and of the JSONL. */
static void sample_lines(const rs__synth *s, size_t i, int first, rs__sb *ev, rs__sb *jl)
{
  const item *it = &s->item[i];
  char id[32];
  snprintf(id, sizeof id, "synth-%04zu", i + 1);
  const char *did = doc_id(s, i);
  rs__sb_str(ev, first ? "\n{\"id\":" : ",\n{\"id\":");
  json_string(ev, id);
  rs__sb_str(ev, ",\"query\":");
  json_string(ev, it->question);
  rs__sb_str(ev, ",\"relevant_doc_ids\":[");
  json_string(ev, did);
  rs__sb_str(ev, "],\"graded_relevance\":{");
  json_string(ev, did);
  rs__sb_str(ev, ":2},\"question_type\":");
  json_string(ev, s->cfg->types[i % s->cfg->n_types]);
  rs__sb_str(ev, "}");
  /* Only these fields: every other scalar field of a sample is a
   * configuration column for `rag` (rag_samples.h). */
  rs__sb_str(jl, "{\"id\":");
  json_string(jl, id);
  rs__sb_str(jl, ",\"user_input\":");
  json_string(jl, it->question);
  rs__sb_str(jl, ",\"reference\":");
  json_string(jl, it->answer);
  rs__sb_str(jl, ",\"reference_contexts\":[");
  json_string(jl, doc_text(s, i));
  rs__sb_str(jl, "],\"reference_context_ids\":[");
  json_string(jl, did);
  rs__sb_str(jl, "]}\n");
}

/* dir and base name of path (dir "." when it has no '/'). */
static rs_code split_path(const char *path, char **dir, const char **base, rs_error *err)
{
  const char *slash = strrchr(path, '/');
  *base = slash ? slash + 1 : path;
  if (!**base) return rs__fail(err, RS_USAGE, "%s: expected a file name, found a folder", path);
  *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
  return *dir ? RS_OK : rs__fail(err, RS_NOMEM, "out of memory");
}

static rs_code write_text(rs__csv *w, const rs__sb *b, rs_error *err)
{
  FILE *f = rs__csv_file(w);
  if (fwrite(rs__sb_view(b), 1, b->n, f) != b->n)
    return rs__fail(err, RS_IO, "%s: write failed", rs__csv_path(w));
  return RS_OK;
}

rs_code rs__synth_write(rs__synth *s, const char *evalset_path, const char *jsonl_path, rs_error *err)
{
  rs__sb ev = {0}, jl = {0};
  rs__sb_str(&ev, "{\"queries\":[");
  int first = 1;
  for (size_t i = 0; i < s->n_items; i++) {
    if (s->item[i].status != ITEM_OK || s->item[i].duplicate) continue;
    sample_lines(s, i, first, &ev, &jl);
    first = 0;
  }
  rs__sb_str(&ev, "\n]}\n");
  char *ev_dir = NULL, *jl_dir = NULL;
  const char *ev_base = NULL, *jl_base = NULL;
  rs__csv *ev_w = NULL, *jl_w = NULL;
  rs_code rc = RS_OK;
  if (ev.failed || jl.failed) rc = rs__fail(err, RS_NOMEM, "out of memory writing %s", evalset_path);
  if (!rc) rc = split_path(evalset_path, &ev_dir, &ev_base, err);
  if (!rc) rc = split_path(jsonl_path, &jl_dir, &jl_base, err);
  if (!rc) rc = rs__csv_create(ev_dir, ev_base, &ev_w, err);
  if (!rc) rc = rs__csv_create(jl_dir, jl_base, &jl_w, err);
  if (!rc) rc = write_text(ev_w, &ev, err);
  if (!rc) rc = write_text(jl_w, &jl, err);
  /* Renamed only when both are complete. */
  if (!rc) rc = rs__csv_commit(ev_w, err), ev_w = NULL;
  if (!rc) rc = rs__csv_commit(jl_w, err), jl_w = NULL;
  rs__csv_abort(ev_w);
  rs__csv_abort(jl_w);
  free(ev_dir);
  free(jl_dir);
  rs__sb_free(&ev);
  rs__sb_free(&jl);
  return rc;
}
