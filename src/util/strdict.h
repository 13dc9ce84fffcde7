/* strdict.h: distinct strings with their first-appearance order as ids
 * (internal): interning the values of a column, the names of runs.
 *
 * A zero-initialised rs__strdict is empty and valid.  Lookups through a
 * const rs__strdict may run on several threads at once; adds may not. */
#ifndef RAGSWEEP_UTIL_STRDICT_H
#define RAGSWEEP_UTIL_STRDICT_H

#include <stddef.h>
#include <stdint.h>

#include "ragsweep/error.h"

typedef struct rs__strdict {
  char **str;     /* [n] the strings (owned), by id */
  size_t n, cap;
  uint32_t *slot; /* open addressing: id + 1, 0 = empty */
  size_t n_slots; /* a power of two, more than twice n */
} rs__strdict;

/* The id of s, or -1 when it is not in d. */
long rs__strdict_find(const rs__strdict *d, const char *s);
/* Sets *id to the id of s, adding a copy of s (with the next id) when it is
 * new.  RS_NOMEM when out of memory (d is unchanged but still valid). */
rs_code rs__strdict_add(rs__strdict *d, const char *s, uint32_t *id, rs_error *err);
/* Frees the strings and the table; accepts an empty dictionary. */
void rs__strdict_free(rs__strdict *d);

#endif
