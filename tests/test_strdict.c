/* test_strdict.c: the string dictionary (src/util/strdict.c): ids in
 * first-appearance order, lookups, and growth past several rehashes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "util/strdict.h"

Test(strdict, ids_in_first_appearance_order)
{
  rs__strdict d = {0};
  rs_error err = {0};
  uint32_t id = 99;
  cr_assert_eq(rs__strdict_find(&d, "a"), -1, "an empty dictionary finds nothing");
  const char *in[] = {"bge", "e5", "bge", "", "e5", "gte"};
  const uint32_t want[] = {0, 1, 0, 2, 1, 3};
  for (size_t i = 0; i < 6; i++) {
    cr_assert_eq(rs__strdict_add(&d, in[i], &id, &err), RS_OK);
    cr_assert_eq(id, want[i], "%s: id %u", in[i], id);
  }
  cr_assert_eq(d.n, 4);
  cr_assert_str_eq(d.str[2], "");
  cr_assert_eq(rs__strdict_find(&d, "gte"), 3);
  cr_assert_eq(rs__strdict_find(&d, "e5"), 1);
  cr_assert_eq(rs__strdict_find(&d, "bg"), -1, "a prefix is another string");
  rs__strdict_free(&d);
  cr_assert(d.n == 0 && d.str == NULL && d.n_slots == 0);
  rs__strdict_free(&d); /* twice: still fine */
}

Test(strdict, grows_past_rehashes)
{
  rs__strdict d = {0};
  rs_error err = {0};
  char s[32];
  uint32_t id;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < 5000; i++) {
      snprintf(s, sizeof s, "q%d", i);
      cr_assert_eq(rs__strdict_add(&d, s, &id, &err), RS_OK);
      cr_assert_eq(id, (uint32_t)i, "%s (pass %d): id %u", s, pass, id);
    }
  cr_assert_eq(d.n, 5000);
  cr_assert(d.n_slots > 2 * d.n && (d.n_slots & (d.n_slots - 1)) == 0, "%zu slots", d.n_slots);
  cr_assert_eq(rs__strdict_find(&d, "q4999"), 4999);
  cr_assert_eq(rs__strdict_find(&d, "q5000"), -1);
  rs__strdict_free(&d);
}
