/* h5read.h: reading HDF5 files of other programs' layouts (internal).
 *
 * For formats that are not ragsweep corpora (ann-benchmarks' datasets and
 * results, formats/annb.h): open a file, look at its root links, describe
 * and read whole 1-D or 2-D numeric datasets, read the root attributes.
 * Implemented in src/formats/corpus_h5.c, the one file that includes
 * <hdf5.h>, with the same protections as a corpus: the file is first
 * decoded in a child process (a file that crashes or hangs libhdf5 is an
 * RS_FORMAT error naming the object), shapes are checked against the
 * file's size before anything is allocated, and HDF5 prints nothing.
 * HDF5 is not thread-safe: call these from one thread at a time. */
#ifndef RAGSWEEP_H5READ_H
#define RAGSWEEP_H5READ_H

#include <stddef.h>
#include <stdint.h>

#include "formats/corpus.h"

/* Opens path read-only.  The child decodes every object header and
 * attribute, and the data of the root-level numeric datasets listed in
 * numbers (NULL-terminated; NULL: none), the ones the caller will read:
 * opening to look at the links only costs the headers, whatever the size
 * of the data.  The generic readers read no string datasets.  Errors:
 * RS_IO (cannot open),
 * RS_FORMAT ("PATH: expected an HDF5 file, found something else", or a
 * corrupt file). */
rs_code rs__h5_open(const char *path, const char *const *numbers, rs__h5file **out, rs_error *err);
/* Accepts NULL. */
void rs__h5_close(rs__h5file *f);
/* The path given to rs__h5_open, for messages. */
const char *rs__h5_path(const rs__h5file *f);
/* 1 when the root group has a link named name (no '/'). */
int rs__h5_has(const rs__h5file *f, const char *name);

/* Which of the root links names[0..] (NULL-terminated, at most 32) path
 * has: bit i for names[i].  Looked up in a child process only, so that
 * sniffing a file neither risks this process on a corrupt file nor
 * changes libhdf5's state in it; a file that is not HDF5, cannot be read
 * or crashes the child gives 0.  When a link of go_on_if's bits is found
 * (a corpus: rs__corpus_open follows), the child goes on as the probe of
 * that open, which takes it over if it opens the same unchanged path
 * next (a later lookup or open of another file lets it go). */
uint32_t rs__h5_root_links(const char *path, const char *const *names, uint32_t go_on_if);

typedef struct rs__h5_shape {
  int rank;         /* 1 or 2 */
  uint64_t dims[2]; /* dims[1] is 1 for a 1-D dataset */
  int is_float;     /* 1: floating point; 0: signed or unsigned integer */
  size_t size;      /* bytes per element in the file (4 for float32) */
} rs__h5_shape;

/* The shape of root dataset name.  RS_FORMAT naming "PATH:/name" when it
 * is missing, not a dataset, not 1-D or 2-D, not integer or floating point
 * of at most 8 bytes, or declares more data than the file can hold. */
rs_code rs__h5_describe(const rs__h5file *f, const char *name, rs__h5_shape *out, rs_error *err);

/* Columns [0, cols) of every row of root dataset name (cols <= its
 * columns; 1 for a 1-D dataset), converted by HDF5 into out[rows * cols]
 * (row-major): to int64 from an integer dataset, to double from a float
 * dataset (exact for float32).  The dataset's class must match (an integer
 * read as double, or a float as int64, is RS_FORMAT naming it). */
rs_code rs__h5_read_i64(const rs__h5file *f, const char *name, uint64_t cols, int64_t *out, rs_error *err);
rs_code rs__h5_read_f64(const rs__h5file *f, const char *name, uint64_t cols, double *out, rs_error *err);

/* The root group's attributes, sorted by key (bytewise), read as a run's
 * are (one string or number each), and h5py's booleans (numpy.bool_: an
 * enum FALSE/TRUE) as the strings "false" and "true".  Another type is
 * RS_FORMAT naming the file and attribute.  Free with rs__attrs_free. */
rs_code rs__h5_root_attrs(const rs__h5file *f, rs__attr **out, size_t *n, rs_error *err);
/* Frees n attributes (keys, texts, the array); accepts NULL. */
void rs__attrs_free(rs__attr *a, size_t n);

#endif
