/* idsort.h: doc ids put in strcmp order by a radix sort (internal).
 *
 * No comparator and no state outside the call: two sorts may run on two
 * threads at once (qsort has no context argument in C11, and a comparator
 * reaching the ids through a file-scope pointer was not safe so). */
#ifndef RAGSWEEP_UTIL_IDSORT_H
#define RAGSWEEP_UTIL_IDSORT_H

#include <stddef.h>
#include <stdint.h>

/* The first min(n, 8) bytes of s as a big-endian number, zeros after: the
 * integer order of two such keys is the strcmp order of their ids (the
 * first differing byte decides both, and an id that ends first has a 0
 * where the other has a non-zero byte). */
static inline uint64_t rs__id_key(const char *s, size_t n)
{
  uint64_t k = 0;
  size_t i = 0;
  for (; i < 8 && i < n; i++) k = k << 8 | (unsigned char)s[i];
  for (; i < 8; i++) k <<= 8; /* one shift at a time: an empty id would shift by 64 */
  return k;
}

/* Sorts num[0, n), indexes into id[] (NUL-terminated ids), into strcmp
 * order of their ids; equal ids end up next to each other.  pre, pre2 (n
 * each) and num2 (n) are scratch. */
void rs__sort_ids(char *const *id, uint32_t *num, size_t n, uint64_t *pre, uint64_t *pre2, uint32_t *num2);

#endif
