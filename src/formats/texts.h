/* texts.h: text collections, id -> text, for queries or documents (internal).
 *
 * Two layouts, told apart by the first non-blank byte of the (decompressed)
 * file: '{' means JSONL, anything else TSV.  gzip is detected from the
 * magic bytes (textio.h).
 *
 *   TSV (the MS MARCO collection.tsv / queries.tsv layout): one record per
 *   line, "id<TAB>text", no header.  The text is everything after the first
 *   tab (further tabs are kept); a trailing CR is dropped.
 *
 *   JSONL (the BEIR corpus.jsonl / queries.jsonl layout): one object per
 *   line with the id under "_id", "id" or "docid" (string or integer),
 *   "text" (or "contents") and an optional "title" (evalset.h,
 *   rs__json_text_record).  A non-empty title is joined to the text as
 *   "TITLE\n\nTEXT": the judge shows the passage to a model, and a blank
 *   line keeps the title readable as a heading instead of running it into
 *   the first sentence.  An empty or null title leaves the text as it is.
 *
 * In both, blank lines are skipped, an id must be non-empty, and an id that
 * repeats is RS_DUPLICATE naming both lines.  Errors name file:line, what
 * was expected and what was found.  A loaded rs__texts is read-only and may
 * be shared by threads. */
#ifndef RAGSWEEP_TEXTS_H
#define RAGSWEEP_TEXTS_H

#include <stddef.h>

#include "internal.h"

typedef struct rs__texts rs__texts;

/* Reads path ("-" is standard input).  *out is set only on success. */
rs_code rs__texts_load(const char *path, rs__texts **out, rs_error *err);
/* The text of id (NUL-terminated; *len its length when len is non-NULL),
 * borrowed until rs__texts_free, or NULL when the collection lacks id. */
const char *rs__texts_get(const rs__texts *t, const char *id, size_t *len);
/* Number of records. */
size_t rs__texts_count(const rs__texts *t);
/* The id of record i (0 <= i < rs__texts_count, file order), borrowed
 * until rs__texts_free: lets a caller take the ids as the set of queries. */
const char *rs__texts_id(const rs__texts *t, size_t i);
/* The file name given to load, for messages. */
const char *rs__texts_path(const rs__texts *t);
/* Frees the collection; accepts NULL. */
void rs__texts_free(rs__texts *t);

#endif
