/* html.c: placeholder until the HTML report lands (issue 15). */
#include "report/html.h"

#include "internal.h"

rs_code rs__report_write(const char *const *dirs, size_t n_dirs, const char *history_db, const char *out_path,
                         rs_error *err)
{
  return rs__fail(err, RS_USAGE, "%s: the HTML report is not implemented yet", out_path);
}
