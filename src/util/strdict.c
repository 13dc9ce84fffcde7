/* strdict.c: the string dictionary of strdict.h. */
#define _POSIX_C_SOURCE 200809L
#include "util/strdict.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The slot of s, or the empty slot where it would go (the table is never
 * full: n_slots is more than twice n). */
static size_t dict_pos(const rs__strdict *d, const char *s)
{
  const size_t mask = d->n_slots - 1;
  size_t i = (size_t)rs__hash_bytes(s, strlen(s)) & mask;
  while (d->slot[i] && strcmp(d->str[d->slot[i] - 1], s) != 0) i = (i + 1) & mask;
  return i;
}

long rs__strdict_find(const rs__strdict *d, const char *s)
{
  if (!d->n_slots) return -1;
  size_t i = dict_pos(d, s);
  return d->slot[i] ? (long)d->slot[i] - 1 : -1;
}

rs_code rs__strdict_add(rs__strdict *d, const char *s, uint32_t *id, rs_error *err)
{
  if (2 * (d->n + 1) >= d->n_slots) {
    size_t n_slots = d->n_slots ? 2 * d->n_slots : 64;
    uint32_t *slot = calloc(n_slots, sizeof *slot);
    if (!slot) return rs__fail(err, RS_NOMEM, "out of memory");
    free(d->slot);
    d->slot = slot;
    d->n_slots = n_slots;
    for (size_t j = 0; j < d->n; j++) d->slot[dict_pos(d, d->str[j])] = (uint32_t)(j + 1);
  }
  size_t i = dict_pos(d, s);
  if (!d->slot[i]) {
    if (d->n == d->cap) {
      size_t cap = d->cap ? 2 * d->cap : 16;
      char **ns = realloc(d->str, cap * sizeof *ns);
      if (!ns) return rs__fail(err, RS_NOMEM, "out of memory");
      d->str = ns;
      d->cap = cap;
    }
    if (d->n >= UINT32_MAX - 1 || !(d->str[d->n] = strdup(s))) return rs__fail(err, RS_NOMEM, "out of memory");
    d->slot[i] = (uint32_t)++d->n;
  }
  *id = d->slot[i] - 1;
  return RS_OK;
}

void rs__strdict_free(rs__strdict *d)
{
  for (size_t i = 0; i < d->n; i++) free(d->str[i]);
  free(d->str);
  free(d->slot);
  *d = (rs__strdict){0};
}
