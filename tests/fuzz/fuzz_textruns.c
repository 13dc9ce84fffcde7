/* fuzz_textruns: the inputs issue 16 added, on one input: the first byte
 * picks the reader (JSONL run, CSV run, TSV run, BEIR qrels, the input
 * detector, the --alert parser), the rest is the file or the text.  On
 * success a converted run must be TREC text the strict run reader takes
 * line by line (six fields); a parsed alert must keep its promises
 * (window >= 1, amount >= 0 and finite). */
#include "fuzz.h"
#include "formats/detect.h"
#include "formats/textruns.h"
#include "report/alert.h"

#include <math.h>

/* Every line of a converted run has six space-separated fields. */
static void check_trec(const char *text, size_t fields_per_line)
{
  size_t fields = 0, in_field = 0;
  for (const char *p = text; *p; p++) {
    if (*p == '\n') {
      if (in_field) fields++;
      if (fields != fields_per_line) abort();
      fields = in_field = 0;
    } else if (*p == ' ' || *p == '\t') {
      if (in_field) fields++;
      in_field = 0;
    } else {
      in_field = 1;
    }
  }
  if (in_field || fields) abort(); /* the last line ends with '\n' */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size == 0) return 0;
  const unsigned which = data[0] % 6;
  data++, size--;
  rs_error err = {0};
  if (which == 5) {
    char *text = fz_str(data, size);
    rs__alert a;
    if (rs__alert_parse(text, &a, &err) == RS_OK) {
      if (a.window < 1 || !(a.amount >= 0) || !isfinite(a.amount) || !a.measure) abort();
      char buf[64];
      rs__alert_text(&a, a.measure, buf, sizeof buf);
      if (strlen(buf) >= sizeof buf) abort();
      rs__alert_free(&a);
    } else if (!err.msg[0]) {
      abort();
    }
    free(text);
    return 0;
  }
  fz_file f;
  fz_file_open(&f, data, size);
  char *out = NULL;
  size_t out_len = 0;
  FILE *mem = open_memstream(&out, &out_len);
  if (!mem) abort();
  rs__run_latency *lat = NULL;
  rs_code rc = RS_OK;
  switch (which) {
  case 0: rc = rs__jsonl_run_to_trec(f.path, mem, &lat, &err); break;
  case 1: rc = rs__csv_run_to_trec(f.path, ',', mem, &lat, &err); break;
  case 2: rc = rs__csv_run_to_trec(f.path, '\t', mem, &lat, &err); break;
  case 3: rc = rs__beir_qrels_to_trec(f.path, '\t', mem, &err); break;
  case 4: {
    rs__detected d;
    rc = rs__detect(f.path, &d, &err);
    if (!rc && !rs__input_kind_name(d.kind)) abort();
    break;
  }
  }
  fclose(mem);
  if (rc && !err.msg[0]) abort();
  if (!rc && which <= 2) check_trec(out ? out : "", 6);
  if (!rc && which == 3) check_trec(out ? out : "", 4);
  rs__run_latency_free(lat);
  free(out);
  fz_file_close(&f);
  return 0;
}
