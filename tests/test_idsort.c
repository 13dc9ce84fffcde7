/* test_idsort.c: the radix sort of doc ids (util/idsort.h) against strcmp. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/idsort.h"

typedef struct {
  char **id;
  size_t n;
  uint32_t *num;
  unsigned seed;
} id_set;

static unsigned next_rand(unsigned *s)
{
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

/* n ids that share long prefixes by the hundred (8, 16, 24 bytes and
 * more), are prefixes of one another, hold bytes above 0x7f, include the
 * empty id, and repeat (one in eight is a copy of an earlier one). */
static void make_ids(id_set *s, size_t n, unsigned seed)
{
  static const char *const stem[] = {"", "d", "doc", "document", "document-group-A", "document-group-A-longer-stem-",
                                     "\xc3\xa9t\xc3\xa9", "12345678", "1234567", "zz"};
  s->n = n, s->seed = seed;
  s->id = calloc(n, sizeof *s->id);
  s->num = calloc(n, sizeof *s->num);
  cr_assert(s->id && s->num);
  for (size_t i = 0; i < n; i++) {
    unsigned r = next_rand(&seed);
    if (i > 0 && r % 8 == 0) {
      s->id[i] = strdup(s->id[next_rand(&seed) % i]);
    } else {
      char buf[96];
      const char *st = stem[r % (sizeof stem / sizeof stem[0])];
      const unsigned tail = next_rand(&seed) % 4;
      if (tail == 0) snprintf(buf, sizeof buf, "%s", st);
      else snprintf(buf, sizeof buf, "%s%u", st, next_rand(&seed) % (tail == 1 ? 10u : tail == 2 ? 1000u : 10000000u));
      s->id[i] = strdup(buf);
    }
    cr_assert(s->id[i]);
    s->num[i] = (uint32_t)i;
  }
}

static void *sort_set(void *vs)
{
  id_set *s = vs;
  uint64_t *pre = malloc(s->n * sizeof *pre), *pre2 = malloc(s->n * sizeof *pre2);
  uint32_t *num2 = malloc(s->n * sizeof *num2);
  if (pre && pre2 && num2) rs__sort_ids(s->id, s->num, s->n, pre, pre2, num2);
  free(pre), free(pre2), free(num2);
  return NULL;
}

/* num is a permutation of the ids in strcmp order (equal ids together). */
static void check_sorted(const id_set *s)
{
  char *seen = calloc(s->n, 1);
  cr_assert(seen);
  for (size_t i = 0; i < s->n; i++) {
    cr_assert_lt(s->num[i], s->n);
    cr_assert_eq(seen[s->num[i]], 0, "index %u twice", s->num[i]);
    seen[s->num[i]] = 1;
    if (i) {
      const char *a = s->id[s->num[i - 1]], *b = s->id[s->num[i]];
      cr_assert_leq(strcmp(a, b), 0, "'%s' before '%s' (position %zu, seed %u)", a, b, i, s->seed);
    }
  }
  free(seen);
}

static void free_set(id_set *s)
{
  for (size_t i = 0; i < s->n; i++) free(s->id[i]);
  free(s->id);
  free(s->num);
}

Test(idsort, strcmp_order_with_shared_prefixes_and_repeats)
{
  for (unsigned seed = 1; seed <= 5; seed++) {
    id_set s;
    make_ids(&s, 20000 + seed * 977, seed);
    sort_set(&s);
    check_sorted(&s);
    free_set(&s);
  }
}

/* Two sorts at once on two threads: nothing is shared between calls (the
 * qsort comparator it replaced in the sweep reached its ids through a
 * file-scope pointer). */
Test(idsort, two_threads_at_once)
{
  id_set s[2];
  make_ids(&s[0], 60000, 11);
  make_ids(&s[1], 60000, 12);
  pthread_t t[2];
  for (int i = 0; i < 2; i++) cr_assert_eq(pthread_create(&t[i], NULL, sort_set, &s[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 2; i++) {
    check_sorted(&s[i]);
    free_set(&s[i]);
  }
}

Test(idsort, key_order_is_strcmp_order)
{
  cr_assert_eq(rs__id_key("", 0), 0);
  cr_assert_lt(rs__id_key("ab", 2), rs__id_key("ab\x01", 3));
  cr_assert_lt(rs__id_key("abcdefg", 7), rs__id_key("abcdefgh", 8));
  cr_assert_eq(rs__id_key("abcdefghZ", 9), rs__id_key("abcdefgh", 8), "only the first 8 bytes count");
  cr_assert_lt(rs__id_key("z", 1), rs__id_key("\xc3", 1), "bytes compare unsigned, as strcmp does");
}
