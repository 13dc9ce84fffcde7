/* textio.h: byte input from a file, gzip file or stdin (internal).
 *
 * Compression is detected from the magic bytes, not the file name, so a
 * gzip stream on stdin works too.  One rs__input is used by one thread. */
#ifndef RAGSWEEP_TEXTIO_H
#define RAGSWEEP_TEXTIO_H

#include <stddef.h>

#include "ragsweep/error.h"

typedef struct rs__input rs__input;

/* path "-" means standard input.  The name used in messages is path. */
rs_code rs__input_open(const char *path, rs__input **out, rs_error *err);

/* Reads up to cap decompressed bytes into buf.  *got is 0 only at the end. */
rs_code rs__input_read(rs__input *in, char *buf, size_t cap, size_t *got, rs_error *err);

/* The name given to open ("-" is shown as "<stdin>"). */
const char *rs__input_name(const rs__input *in);

/* Closes the input; accepts NULL. */
void rs__input_close(rs__input *in);

/* Reads a whole input into a NUL-terminated malloc'd buffer (*out_len bytes,
 * not counting the NUL). */
rs_code rs__read_all(const char *path, char **out, size_t *out_len, rs_error *err);

#endif
