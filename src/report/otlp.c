/* otlp.c: placeholder until the OTLP export lands (issue 15). */
#include "report/otlp.h"

#include "internal.h"

rs_code rs__otlp_push(const rs__results *r, const char *url, rs_error *err)
{
  return rs__fail(err, RS_USAGE, "--otlp %s: not implemented yet", url);
}
