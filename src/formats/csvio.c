/* csvio.c: CSV files in and out; the only file that includes <csv.h> (libcsv). */
#define _POSIX_C_SOURCE 200809L
#include "formats/csvio.h"

#include "formats/numparse.h"
#include "formats/textio.h"
#include "util/tmpfiles.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rows are put together in a buffer of the writer's own and handed to
 * stdio ROW_BUFFER bytes at a time: a character or field at a time through
 * fputc and fputs (a lock each) was a third of writing per_query.csv (1M
 * queries x 14 measures, 14M rows: about 5 s on one thread). */
enum { ROW_BUFFER = 1 << 16 };

struct rs__csv {
  FILE *f;
  char *buf; /* [ROW_BUFFER]: bytes not yet given to f */
  size_t n;
  char *path, *tmp;
  int n_fields; /* in the current row */
  int stream;   /* f is borrowed (rs__csv_open_stream): never closed or renamed */
  int tmp_h;    /* rs__tmp_register handle: the temporary file goes on SIGINT/SIGTERM */
};

rs_code rs__csv_create(const char *dir, const char *name, rs__csv **out, rs_error *err)
{
  rs__csv *w = rs__calloc(1, sizeof *w);
  size_t len = strlen(dir) + strlen(name) + 40;
  if (!w || !(w->path = rs__malloc(len)) || !(w->tmp = rs__malloc(len)) || !(w->buf = rs__malloc(ROW_BUFFER))) {
    if (w) free(w->path), free(w->tmp);
    free(w);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  snprintf(w->path, len, "%s/%s", dir, name);
  snprintf(w->tmp, len, "%s/.%s.tmp.%ld", dir, name, (long)getpid());
  /* A killed earlier run's leftovers go first: they are never finished files. */
  rs__tmp_sweep_stale(dir);
  w->tmp_h = rs__tmp_register(w->tmp);
  if (!(w->f = fopen(w->tmp, "w"))) {
    rs__tmp_forget(w->tmp_h);
    rs_code rc = rs__fail(err, RS_IO, "%s: cannot create: %s", w->tmp, strerror(errno));
    free(w->path);
    free(w->tmp);
    free(w->buf);
    free(w);
    return rc;
  }
  *out = w;
  return RS_OK;
}

rs_code rs__csv_open_stream(FILE *f, const char *name, rs__csv **out, rs_error *err)
{
  rs__csv *w = rs__calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(name)) || !(w->tmp = strdup(name)) || !(w->buf = rs__malloc(ROW_BUFFER))) {
    if (w) free(w->path), free(w->tmp);
    free(w);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  w->f = f;
  w->stream = 1;
  w->tmp_h = -1;
  *out = w;
  return RS_OK;
}

/* The buffered bytes to the stream (whose own errors ferror keeps). */
static void flush_rows(rs__csv *w)
{
  if (w->n) fwrite(w->buf, 1, w->n, w->f);
  w->n = 0;
}

static void put(rs__csv *w, const char *s, size_t n)
{
  if (n > ROW_BUFFER - w->n) {
    flush_rows(w);
    if (n > ROW_BUFFER) {
      fwrite(s, 1, n, w->f);
      return;
    }
  }
  memcpy(w->buf + w->n, s, n);
  w->n += n;
}

FILE *rs__csv_file(rs__csv *w)
{
  flush_rows(w);
  return w->f;
}

static int needs_quotes(const char *s, size_t n)
{
  if (!n) return 0;
  if (s[0] == ' ' || s[n - 1] == ' ') return 1;
  return strpbrk(s, ",\"\r\n") != NULL;
}

void rs__csv_str(rs__csv *w, const char *s)
{
  const size_t n = strlen(s);
  if (w->n_fields++) put(w, ",", 1);
  if (needs_quotes(s, n)) {
    flush_rows(w);
    csv_fwrite(w->f, s, n); /* quotes it and doubles its quotes */
  } else {
    put(w, s, n);
  }
}

void rs__csv_num(rs__csv *w, double v)
{
  char buf[32];
  rs__format_double(v, buf);
  rs__csv_str(w, buf);
}

void rs__csv_uint(rs__csv *w, unsigned long long v)
{
  char buf[32];
  snprintf(buf, sizeof buf, "%llu", v);
  rs__csv_str(w, buf);
}

rs_code rs__csv_end_row(rs__csv *w, rs_error *err)
{
  put(w, "\n", 1);
  w->n_fields = 0;
  if (ferror(w->f)) return rs__fail(err, RS_IO, "%s: write failed: %s", w->tmp, strerror(errno));
  return RS_OK;
}

const char *rs__csv_path(const rs__csv *w) { return w->path; }

static void free_csv(rs__csv *w)
{
  rs__tmp_forget(w->tmp_h);
  free(w->path);
  free(w->tmp);
  free(w->buf);
  free(w);
}

rs_code rs__csv_commit(rs__csv *w, rs_error *err)
{
  rs_code rc = RS_OK;
  flush_rows(w);
  if (w->stream) {
    if (fflush(w->f) != 0 || ferror(w->f)) rc = rs__fail(err, RS_IO, "%s: write failed: %s", w->path, strerror(errno));
    free_csv(w);
    return rc;
  }
  if (fflush(w->f) != 0 || ferror(w->f) || fsync(fileno(w->f)) != 0) {
    rc = rs__fail(err, RS_IO, "%s: write failed: %s", w->tmp, strerror(errno));
    fclose(w->f);
    unlink(w->tmp);
  } else if (fclose(w->f) != 0) {
    rc = rs__fail(err, RS_IO, "%s: close failed: %s", w->tmp, strerror(errno));
    unlink(w->tmp);
  } else if (rename(w->tmp, w->path) != 0) {
    rc = rs__fail(err, RS_IO, "%s: cannot rename into place: %s", w->path, strerror(errno));
    unlink(w->tmp);
  }
  free_csv(w);
  return rc;
}

void rs__csv_abort(rs__csv *w)
{
  if (!w) return;
  if (!w->stream) {
    fclose(w->f);
    unlink(w->tmp);
  }
  free_csv(w);
}

/* --- reading ------------------------------------------------------------------- */

/* The parser is fed one physical line at a time, so the callbacks always know
 * which line they are on (libcsv does not report positions). */
typedef struct {
  const char *path;
  rs__csv_row_fn row;
  void *ctx;
  rs_error *err;
  rs_code rc;          /* first error of row() or of an allocation; later callbacks do nothing */
  size_t line;         /* the line being fed, 1-based */
  size_t start;        /* line where the current record starts */
  size_t last_end;     /* line where the last record ended */
  char *text;          /* the current record's fields, each followed by a NUL */
  size_t len, cap;
  size_t *off;         /* start of each field in text */
  char **fields;       /* off turned into pointers when the record is complete */
  size_t n, cap_fields;
  size_t n_records, max_records; /* records handed to row(); stop after max_records */
} reader;

static int no_space(unsigned char c)
{
  (void)c;
  return 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
  if (need <= *cap) return 1;
  size_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *np = rs__realloc(*p, rs__mul(c, elem));
  if (!np) return 0;
  *p = np;
  *cap = c;
  return 1;
}

static void on_field(void *s, size_t n, void *data)
{
  reader *r = data;
  if (r->rc) return;
  if (r->n == 0) {
    /* A quoted first field may span lines; the record starts where it does. */
    size_t nl = 0;
    for (const char *p = s, *end = (const char *)s + n; p && (p = memchr(p, '\n', (size_t)(end - p))); p++) nl++;
    r->start = r->line - nl;
  }
  size_t cap_off = r->cap_fields;
  if (!grow((void **)&r->text, &r->cap, r->len + n + 1, 1) ||
      !grow((void **)&r->off, &cap_off, r->n + 1, sizeof *r->off) ||
      !grow((void **)&r->fields, &r->cap_fields, r->n + 1, sizeof *r->fields)) {
    r->rc = rs__fail(r->err, RS_NOMEM, "out of memory");
    return;
  }
  if (n) memcpy(r->text + r->len, s, n);
  r->off[r->n++] = r->len;
  r->len += n;
  r->text[r->len++] = '\0';
}

static void on_row(int c, void *data)
{
  reader *r = data;
  (void)c;
  r->last_end = r->line;
  if (!r->rc) {
    for (size_t i = 0; i < r->n; i++) r->fields[i] = r->text + r->off[i];
    r->rc = r->row(r->ctx, r->fields, r->n, r->start, r->err);
    r->n_records++;
  }
  r->n = 0;
  r->len = 0;
}

static rs_code parse_failed(reader *r, struct csv_parser *p, int at_end)
{
  if (csv_error(p) == CSV_ENOMEM || csv_error(p) == CSV_ETOOBIG)
    return rs__fail(r->err, RS_NOMEM, "%s:%zu: out of memory (a field too large?)", r->path, r->line);
  if (at_end)
    return rs__fail(r->err, RS_FORMAT,
                    "%s:%zu: malformed CSV: the file ends inside a quoted field (opened after line %zu)", r->path,
                    r->line, r->last_end);
  return rs__fail(r->err, RS_FORMAT,
                  "%s:%zu: malformed CSV in field %zu: a quote inside an unquoted field, or text after a closing "
                  "quote (quote the whole field and double the quotes inside it)",
                  r->path, r->line, r->n + 1);
}

enum { READ_BLOCK = RS_IO_BLOCK };

static rs_code read_records(const char *path, unsigned char delim, rs__csv_row_fn row, void *ctx, size_t max_records,
                            rs_error *err)
{
  reader r = {.path = path, .row = row, .ctx = ctx, .err = err, .line = 1, .max_records = max_records};
  struct csv_parser p;
  int parser_ready = 0;
  char *block = NULL;
  rs__input *f = NULL;
  rs_code orc = rs__input_open(path, &f, err); /* plain or gzip, "PATH: cannot open: ..." */
  if (orc) return orc;
  if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI) != 0) {
    r.rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  parser_ready = 1;
  if (!(block = rs__malloc(READ_BLOCK))) {
    r.rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  csv_set_space_func(&p, no_space); /* keep spaces: " a" is " a", as in pandas */
  csv_set_delim(&p, delim);
  /* libcsv grows a field's buffer by its block size at each step (128
   * bytes by default): a long field (a passage, a JSON column) then costs
   * quadratic copying, 0.4 s for the longest test field and minutes under
   * ASan.  64 KiB steps keep it linear in practice. */
  csv_set_blk_size(&p, 1 << 16);
  int first = 1, ends_with_newline = 0;
  size_t got = 0;
  while (!r.rc && r.n_records < max_records) {
    if ((r.rc = rs__input_read(f, block, READ_BLOCK, &got, err)) || got == 0) break;
    const char *s = block, *end = block + got;
    if (first && got >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) s += 3; /* UTF-8 byte-order mark */
    first = 0;
    while (s < end && !r.rc && r.n_records < max_records) {
      const char *nl = memchr(s, '\n', (size_t)(end - s));
      const size_t n = (size_t)((nl ? nl + 1 : end) - s);
      if (csv_parse(&p, s, n, on_field, on_row, &r) != n) {
        if (!r.rc) r.rc = parse_failed(&r, &p, 0);
        break;
      }
      if (nl) r.line++;
      ends_with_newline = nl != NULL;
      s += n;
    }
  }
  if (!r.rc && r.n_records < max_records) {
    if (ends_with_newline) r.line--; /* the line after the final newline is not a line */
    if (csv_fini(&p, on_field, on_row, &r) != 0 && !r.rc) r.rc = parse_failed(&r, &p, 1);
  }
done:
  if (parser_ready) csv_free(&p);
  free(block);
  free(r.text);
  free(r.off);
  free(r.fields);
  rs__input_close(f);
  return r.rc;
}

rs_code rs__csv_read(const char *path, rs__csv_row_fn row, void *ctx, rs_error *err)
{
  return read_records(path, ',', row, ctx, SIZE_MAX, err);
}

rs_code rs__csv_read_delim(const char *path, char delim, rs__csv_row_fn row, void *ctx, rs_error *err)
{
  return read_records(path, (unsigned char)delim, row, ctx, SIZE_MAX, err);
}

rs_code rs__csv_read_header(const char *path, rs__csv_row_fn row, void *ctx, rs_error *err)
{
  return read_records(path, ',', row, ctx, 1, err);
}
