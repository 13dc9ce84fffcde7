/* h5_heap.h: variable-length strings of an HDF5 file read from its bytes
 * (internal).
 *
 * A contiguous dataset of variable-length strings holds, per row, a 4-byte
 * length and a global heap ID: the address of a heap collection and a
 * 4-byte object index (HDF5 file format, "Variable-length data" and
 * "Global Heap").  libhdf5 resolves each ID through its metadata cache, a
 * lookup and a malloc per string (1M query ids: 0.2 s); here each
 * collection is read once with pread and its objects are indexed, so the
 * ids of a corpus cost a pass over their bytes.  Nothing here calls
 * libhdf5: corpus_h5.c decides when a dataset has this layout and gives its
 * place in the file.  Every length, address and index is checked against
 * the file, so a corrupt file is an error, never a read out of bounds. */
#ifndef RAGSWEEP_H5_HEAP_H
#define RAGSWEEP_H5_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "ragsweep/error.h"

/* Where a dataset's rows are and how the file encodes them. */
typedef struct {
  int fd;               /* the file, open for pread */
  uint64_t fsize;       /* its size in bytes */
  uint64_t rows_at;     /* the offset of row 0 */
  size_t n;             /* the rows */
  size_t first_row;     /* the number of the row at rows_at (a part of a dataset), for messages and fn */
  unsigned sizeof_addr; /* bytes of a file address (2, 4 or 8) */
  unsigned sizeof_size; /* bytes of a length (2, 4 or 8) */
  uint64_t max_bytes;   /* refuse rows that declare more bytes than this in all */
  const char *file;     /* for messages */
  const char *name;     /* the dataset, for messages */
} rs__h5_heap_rows;

/* Called with each row's string in row order: s[0, len), len up to its
 * first NUL byte; s is valid during the call only.  When len > 0, the 8
 * bytes s[0, 8) can be read whatever len (a collection is held with 8
 * bytes to spare), so that a short string can be loaded as one word. */
typedef void (*rs__h5_heap_fn)(void *ctx, size_t row, const char *s, size_t len);

/* Hands every row's string to fn, holding at most 4 MiB of the heap's
 * collections at once (and as much again in blocks kept for reuse).  Errors as rs__h5_heap_strings; fn has been called for the rows
 * before the failing one. */
rs_code rs__h5_heap_visit(const rs__h5_heap_rows *rows, rs__h5_heap_fn fn, void *ctx, rs_error *err);

/* Reads the n strings of the rows into *out: n pointers followed by the
 * strings, one allocation (free(*out) frees all), as read_strings gives
 * them: a string ends at its first NUL byte, a row of length 0 is "".
 * Errors: RS_FORMAT naming the file, the dataset and the row (a length, an
 * address or an index that the file does not hold; a heap collection that
 * is not one), RS_IO, RS_NOMEM. */
rs_code rs__h5_heap_strings(const rs__h5_heap_rows *rows, char ***out, rs_error *err);

#endif
