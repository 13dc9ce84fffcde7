/* csvio.h: CSV files for pandas, DuckDB and spreadsheets (internal).
 *
 * A file is written under a temporary name beside its final one and renamed
 * into place by rs__csv_commit, so a half-written CSV never looks finished.
 * Fields are quoted only when they must be (a comma, a quote, CR, LF, or
 * leading/trailing space); numbers use the shortest text that reads back to
 * the same double.  rs__csv_read streams a CSV file record by record.
 * src/formats/csvio.c is the only file that includes <csv.h>. */
#ifndef RAGSWEEP_CSVIO_H
#define RAGSWEEP_CSVIO_H

#include <stddef.h>
#include <stdio.h>

#include "internal.h"

typedef struct rs__csv rs__csv;

/* Creates dir/name (under a temporary name until committed). */
rs_code rs__csv_create(const char *dir, const char *name, rs__csv **out, rs_error *err);
/* A writer on an open stream such as stdout: name is used in messages only;
 * commit flushes the stream and abort leaves it alone (neither closes it). */
rs_code rs__csv_open_stream(FILE *f, const char *name, rs__csv **out, rs_error *err);
/* The writer's stream, for text that is not CSV (a Markdown table written
 * through the same temporary file and rename), with the rows so far
 * handed to it.  Do not close it, and do not write to it once more rows
 * are added (they are buffered until the next call or the commit). */
FILE *rs__csv_file(rs__csv *w);
/* Fields of the current row, then rs__csv_end_row. */
void rs__csv_str(rs__csv *w, const char *s);
void rs__csv_num(rs__csv *w, double v);
void rs__csv_uint(rs__csv *w, unsigned long long v);
rs_code rs__csv_end_row(rs__csv *w, rs_error *err);
/* Flushes, closes and renames into place; the final path. */
rs_code rs__csv_commit(rs__csv *w, rs_error *err);
const char *rs__csv_path(const rs__csv *w);
/* Removes the temporary file; accepts NULL. */
void rs__csv_abort(rs__csv *w);

/* --- reading ---------------------------------------------------------------
 *
 * rs__csv_read streams path (plain or gzip, textio.h; 1 MiB at a time; memory
 * does not grow with the file) through libcsv in strict mode and calls row() once per record, the
 * header included, in file order.  fields[0..n_fields-1] are the record's
 * fields with quoting removed, each NUL-terminated and writable; they and the
 * array are borrowed until row() returns (the next record reuses the same
 * buffers, so steady-state reading allocates nothing).  Fields are kept
 * verbatim: spaces are not trimmed (as pandas and Python's csv read them).
 * line is the 1-based line where the record starts; blank lines are skipped
 * but counted; CRLF and LF line ends are both accepted; a UTF-8 byte-order
 * mark at the start is skipped.
 *
 * A non-zero return from row() stops reading, and rs__csv_read returns that
 * code with *err as row() left it (so row() names path and line itself).
 * Errors of its own: RS_IO "path: cannot open: ..." or a read error;
 * RS_FORMAT "path:line: malformed CSV ..." for a quote inside an unquoted
 * field, text after a closing quote, or a quoted field left open at the end
 * of the file; RS_NOMEM.  Thread-safe for distinct ctx. */
typedef rs_code (*rs__csv_row_fn)(void *ctx, char **fields, size_t n_fields, size_t line, rs_error *err);
rs_code rs__csv_read(const char *path, rs__csv_row_fn row, void *ctx, rs_error *err);
/* As rs__csv_read, with delim separating the fields (',' or '\t': a TSV
 * file read with CSV's quoting rules, as Python's csv module writes it). */
rs_code rs__csv_read_delim(const char *path, char delim, rs__csv_row_fn row, void *ctx, rs_error *err);
/* As rs__csv_read, but stops after the first record (the header): a reader
 * that must know a file's layout before it reads the rows.  An empty file
 * calls row() never. */
rs_code rs__csv_read_header(const char *path, rs__csv_row_fn row, void *ctx, rs_error *err);

#endif
