/* prom.c: placeholder until the Prometheus export lands (issue 15). */
#include "report/prom.h"

#include "internal.h"

rs_code rs__prom_write_file(const rs__results *r, const char *path, rs_error *err)
{
  return rs__fail(err, RS_USAGE, "--metrics-out %s: not implemented yet", path);
}

rs_code rs__prom_push(const rs__results *r, const char *url, const char *job, rs_error *err)
{
  return rs__fail(err, RS_USAGE, "--pushgateway %s: not implemented yet", url);
}
