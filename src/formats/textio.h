/* textio.h: byte input from a file, gzip file or stdin (internal).
 *
 * Compression is detected from the magic bytes, not the file name, so a
 * gzip stream on stdin works too.  One rs__input is used by one thread
 * (but for rs__input_pread). */
#ifndef RAGSWEEP_TEXTIO_H
#define RAGSWEEP_TEXTIO_H

#include <stddef.h>

#include "ragsweep/error.h"

typedef struct rs__input rs__input;

/* path "-" means standard input.  The name used in messages is path. */
rs_code rs__input_open(const char *path, rs__input **out, rs_error *err);

/* Reads up to cap decompressed bytes into buf.  *got is 0 only at the end. */
rs_code rs__input_read(rs__input *in, char *buf, size_t cap, size_t *got, rs_error *err);

/* The size of a plain (not gzip) regular file, or -1 for anything else
 * (stdin, pipes, gzip): then only rs__input_read can read it. */
long long rs__input_plain_size(const rs__input *in);

/* Reads bytes [off, off + cap) of a plain regular file (rs__input_plain_size
 * >= 0) into buf; *got < cap only at the end of the file.  Unlike
 * rs__input_read, several threads may call it at once on one input. */
rs_code rs__input_pread(const rs__input *in, char *buf, size_t cap, unsigned long long off, size_t *got,
                        rs_error *err);

/* A plain regular file mapped read-only, whole: data[0, len) are its bytes
 * and data[len, len + pad) read as zeros (the pad of rs__input_map). */
typedef struct {
  const char *data;
  size_t len;
  void *base;      /* the reservation: the file's pages, then zero pages */
  size_t reserved; /* its bytes */
  size_t released; /* data[0, released) has been handed back (page multiple) */
} rs__mapped;

/* Maps a plain regular file (rs__input_plain_size >= 0) with pad zero bytes
 * readable after its end, so scanners may read a window past the last
 * line.  RS_UNSUPPORTED with no message when the input cannot be mapped
 * (gzip, stdin, a pipe, or mmap refused): read it with rs__input_read.
 * A file that shrinks while mapped raises SIGBUS when the lost pages are
 * read (rs__mapped_guard_sigbus turns that into a message). */
rs_code rs__input_map(const rs__input *in, size_t pad, rs__mapped *m, rs_error *err);

/* Drops the pages wholly before data + upto from this process (the page
 * cache keeps them), so a file read once front to back stays out of the
 * resident set.  They must not be read again. */
void rs__mapped_release(rs__mapped *m, size_t upto);

/* Unmaps; accepts a zeroed rs__mapped. */
void rs__mapped_close(rs__mapped *m);

/* For programs: installs a SIGBUS handler (unless one is set) that prints
 * "PROG: an input file shrank while it was being read" and exits with
 * status code instead of dumping core. */
void rs__mapped_guard_sigbus(const char *prog, int code);

/* The name given to open ("-" is shown as "<stdin>"). */
const char *rs__input_name(const rs__input *in);

/* Closes the input; accepts NULL. */
void rs__input_close(rs__input *in);

/* Reads a whole input into a NUL-terminated malloc'd buffer (*out_len bytes,
 * not counting the NUL). */
rs_code rs__read_all(const char *path, char **out, size_t *out_len, rs_error *err);

/* A whole input, read-only: data[0, len) are its bytes and data[len,
 * len + pad) read as zeros.  A plain regular file is mapped (rs__input_map:
 * nothing is copied and no fresh memory is touched, which on a guest whose
 * host reclaims freed pages costs more than reading the bytes); gzip,
 * stdin and pipes are read into buf. */
typedef struct {
  const char *data;
  size_t len;
  rs__mapped map;
  char *buf;
} rs__whole;

rs_code rs__whole_load(const char *path, size_t pad, rs__whole *w, rs_error *err);

/* Unmaps or frees; accepts a zeroed rs__whole. */
void rs__whole_free(rs__whole *w);

/* Called once per non-blank line (spaces and tabs only count as blank),
 * with its 1-based number and its bytes s[0..n) (no newline, no trailing CR,
 * no UTF-8 byte order mark on line 1; not NUL-terminated). */
typedef rs_code (*rs__line_fn)(void *ctx, size_t line, const char *s, size_t n, rs_error *err);

/* Reads path (as rs__input_open: a file, gzip, or "-") line by line into
 * fn, stopping at fn's first error.  The buffer widens for a long line up
 * to max_line bytes (0: no limit); a longer line is RS_UNSUPPORTED,
 * "PATH:LINE: a line longer than MAX bytes; " followed by too_long. */
rs_code rs__input_lines(const char *path, size_t max_line, const char *too_long, rs__line_fn fn, void *ctx,
                        rs_error *err);

#endif
