/* output_csv.c: the only file that includes <csv.h> (libcsv). */
#define _POSIX_C_SOURCE 200809L
#include "output_csv.h"

#include "numparse.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rs__csv {
  FILE *f;
  char *path, *tmp;
  int n_fields; /* in the current row */
};

rs_code rs__csv_create(const char *dir, const char *name, rs__csv **out, rs_error *err)
{
  rs__csv *w = rs__calloc(1, sizeof *w);
  size_t len = strlen(dir) + strlen(name) + 40;
  if (!w || !(w->path = rs__malloc(len)) || !(w->tmp = rs__malloc(len))) {
    if (w) free(w->path);
    free(w);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  snprintf(w->path, len, "%s/%s", dir, name);
  snprintf(w->tmp, len, "%s/.%s.tmp.%ld", dir, name, (long)getpid());
  if (!(w->f = fopen(w->tmp, "w"))) {
    rs_code rc = rs__fail(err, RS_IO, "%s: cannot create: %s", w->tmp, strerror(errno));
    free(w->path);
    free(w->tmp);
    free(w);
    return rc;
  }
  *out = w;
  return RS_OK;
}

static int needs_quotes(const char *s)
{
  if (!*s) return 0;
  if (s[0] == ' ' || s[strlen(s) - 1] == ' ') return 1;
  return strpbrk(s, ",\"\r\n") != NULL;
}

void rs__csv_str(rs__csv *w, const char *s)
{
  if (w->n_fields++) fputc(',', w->f);
  if (needs_quotes(s)) csv_fwrite(w->f, s, strlen(s)); /* quotes it and doubles its quotes */
  else fputs(s, w->f);
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
  fputc('\n', w->f);
  w->n_fields = 0;
  if (ferror(w->f)) return rs__fail(err, RS_IO, "%s: write failed: %s", w->tmp, strerror(errno));
  return RS_OK;
}

const char *rs__csv_path(const rs__csv *w) { return w->path; }

static void free_csv(rs__csv *w)
{
  free(w->path);
  free(w->tmp);
  free(w);
}

rs_code rs__csv_commit(rs__csv *w, rs_error *err)
{
  rs_code rc = RS_OK;
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
  fclose(w->f);
  unlink(w->tmp);
  free_csv(w);
}
