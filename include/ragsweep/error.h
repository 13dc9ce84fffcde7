/* ragsweep/error.h: the one error type of the library.
 *
 * Every fallible function returns an rs_code and, when given a non-NULL
 * rs_error *, fills it with a message that names the file, line, dataset or
 * row it is about, what was expected and what was found.  The library never
 * prints and never exits; the CLI adds "ragsweep: " and picks exit codes. */
#ifndef RAGSWEEP_ERROR_H
#define RAGSWEEP_ERROR_H

/* The library is built with -fvisibility=hidden: only what these headers
 * mark RS_API is exported by libragsweep.so. */
#ifndef RS_API
#if defined(__GNUC__) || defined(__clang__)
#define RS_API __attribute__((visibility("default")))
#else
#define RS_API
#endif
#endif

#define RS_ERROR_LIST(X)                                                      \
  X(OK, "success")                                                            \
  X(NOMEM, "out of memory")                                                   \
  X(IO, "cannot open or read input")                                          \
  X(FORMAT, "input does not have the expected layout or type")               \
  X(USAGE, "invalid argument or option")                                      \
  X(DUPLICATE, "duplicate document in a ranking or in the judgments")        \
  X(MISSING, "a judged topic has no ranking in the run")                      \
  X(UNSUPPORTED, "feature not supported")

typedef enum {
#define RS_ENUM_(name, text) RS_##name,
  RS_ERROR_LIST(RS_ENUM_)
#undef RS_ENUM_
      RS_N_CODES
} rs_code;

typedef struct rs_error {
  rs_code code;
  char msg[512];
} rs_error;

/* Static description of a code; never NULL. */
RS_API const char *rs_code_name(rs_code code);

#endif
