/* history.c: placeholder until the history lands (issue 15). */
#include "report/history.h"

#include "internal.h"

rs_code rs__history_append(const char *path, const rs__results *r, const char *command, const char *label,
                           double unix_time, rs_error *err)
{
  return rs__fail(err, RS_USAGE, "--history %s: not implemented yet", path);
}
