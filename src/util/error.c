/* error.c: code names and rs__fail. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

static const char *const code_names[RS_N_CODES] = {
#define RS_NAME_(name, text) text,
    RS_ERROR_LIST(RS_NAME_)
#undef RS_NAME_
};

const char *rs_code_name(rs_code code)
{
  if ((unsigned)code >= RS_N_CODES) return "unknown error";
  return code_names[code];
}

rs_code rs__fail(rs_error *err, rs_code code, const char *fmt, ...)
{
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return code;
}

size_t rs__mul(size_t n, size_t size)
{
  if (size && n > SIZE_MAX / size) return SIZE_MAX;
  return n * size;
}
