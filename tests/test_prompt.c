/* test_prompt.c: judging prompts (src/llm/prompt.h): rendering, cuts at
 * code points, prompt files, and reading labels out of replies. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm/prompt.h"

static int parse(const rs__prompt *p, const char *reply)
{
  int label = -7;
  return rs__prompt_parse(p, reply, &label) ? label : -1;
}

Test(prompt, binary_labels)
{
  rs__prompt p;
  rs_error err = {0};
  cr_assert_eq(rs__prompt_load("binary", &p, &err), RS_OK);
  cr_assert(p.yes_no);
  cr_assert_eq(p.max_label, 1);
  static const struct { const char *reply; int label; } cases[] = {
      {"YES", 1}, {"NO", 0}, {"yes", 1}, {"No.", 0}, {"**Yes**", 1}, {"\"NO\"", 0}, {"  Yes, the passage says so.", 1},
      {"No, it does not.", 0}, {"The answer is yes", 1}, {"I would say no.", 0},
      /* no label: both words, neither, or only inside other words */
      {"Yes and no", 1}, /* the first word decides */
      {"Maybe yes, maybe no", -1}, {"", -1}, {"Maybe", -1}, {"Nothing here; yesterday", -1}, {"Not relevant", -1},
      {"NONE", -1}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    cr_expect_eq(parse(&p, cases[i].reply), cases[i].label, "reply '%s': expected %d, got %d", cases[i].reply,
                 cases[i].label, parse(&p, cases[i].reply));
  int label;
  cr_expect_eq(rs__prompt_parse(&p, NULL, &label), 0);
  rs__prompt_free(&p);
}

Test(prompt, graded_labels)
{
  rs__prompt p;
  rs_error err = {0};
  cr_assert_eq(rs__prompt_load("graded", &p, &err), RS_OK);
  cr_assert(!p.yes_no);
  cr_assert_eq(p.max_label, 3);
  static const struct { const char *reply; int label; } cases[] = {
      {"The passage gives the answer.\nFinal score: 3", 3},
      {"Final score: 1", 1},
      {"##final score: 2", 2}, /* UMBRELA's own output format */
      {"final score:2", 2},
      {"**Final score:** 0", 0},
      {"Score 3 at first... no.\nFinal score: 2\n", 2},
      {"Final score: 1\nOn reflection, Final score: 2", 2}, /* the last one counts */
      {"2", 2},
      {" 3. ", 3},
      /* no label */
      {"Final score: 4", -1},
      {"Final score: 2.5", -1},
      {"Final score: 12", -1},
      {"Final score: high", -1},
      {"I think it is a 2 or a 3.", -1},
      {"", -1},
      {"-1", -1}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    cr_expect_eq(parse(&p, cases[i].reply), cases[i].label, "reply '%s': expected %d, got %d", cases[i].reply,
                 cases[i].label, parse(&p, cases[i].reply));
  rs__prompt_free(&p);
}

Test(prompt, render_and_cut)
{
  rs__prompt p;
  rs_error err = {0};
  cr_assert_eq(rs__prompt_load("binary", &p, &err), RS_OK);
  int cut = -1;
  char *s = rs__prompt_render(&p, "who?", "a passage", 0, &cut);
  cr_assert_str_eq(s, "Question: who?\n\nPassage: a passage\n\nCan an answer to the question be derived from this "
                      "passage? Reply with exactly one word: YES or NO.");
  cr_expect_eq(cut, 0);
  free(s);
  /* "héllo wörld": the cut counts code points and never splits one */
  s = rs__prompt_render(&p, "q", "h\xc3\xa9llo w\xc3\xb6rld", 2, &cut);
  cr_expect(strstr(s, "Passage: h\xc3\xa9\n") != NULL, "%s", s);
  cr_expect_eq(cut, 1);
  free(s);
  s = rs__prompt_render(&p, "q", "h\xc3\xa9llo", 5, &cut);
  cr_expect(strstr(s, "Passage: h\xc3\xa9llo\n") != NULL);
  cr_expect_eq(cut, 0, "exactly max_chars code points is not a cut");
  free(s);
  rs__prompt_free(&p);
}

static char *write_tmp(const char *text)
{
  char *path = strdup("/tmp/rs_prompt_XXXXXX");
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  return path;
}

Test(prompt, user_file)
{
  char *path = write_tmp("# a 0..4 scale\n"
                         "labels: 0..4\n"
                         "system: You grade passages.\n"
                         "label-prefix: Grade\n"
                         "\n"
                         "Q={query}\nD={document}\nEnd with 'Grade: N'.\n");
  rs__prompt p;
  rs_error err = {0};
  cr_assert_eq(rs__prompt_load(path, &p, &err), RS_OK, "%s", err.msg);
  cr_expect_eq(p.kind, RS_PROMPT_FILE);
  cr_expect_eq(p.max_label, 4);
  cr_expect_str_eq(p.system, "You grade passages.");
  int cut;
  char *s = rs__prompt_render(&p, "x", "y", 0, &cut);
  cr_expect_str_eq(s, "Q=x\nD=y\nEnd with 'Grade: N'.\n");
  free(s);
  cr_expect_eq(parse(&p, "reasons...\nGrade: 4"), 4);
  cr_expect_eq(parse(&p, "Grade: 5"), -1);
  cr_expect_eq(parse(&p, "Final score: 2"), -1, "the declared prefix, not the built-in one");
  rs__prompt_free(&p);
  unlink(path);
  free(path);

  path = write_tmp("labels: yes/no\n\n{query} | {document}\n");
  cr_assert_eq(rs__prompt_load(path, &p, &err), RS_OK, "%s", err.msg);
  cr_expect(p.yes_no);
  cr_expect_null(p.system);
  cr_expect_eq(parse(&p, "YES"), 1);
  rs__prompt_free(&p);
  unlink(path);
  free(path);
}

Test(prompt, bad_files)
{
  static const struct { const char *text, *fragment; } cases[] = {
      {"system: x\n\n{query} {document}\n", "declares no label scale"},
      {"labels: 1..3\n\n{query} {document}\n", "labels: expected 'yes/no' or '0..N'"},
      {"labels: 0..3\n\n{query} only\n", "must contain {query} and {document}"},
      {"labels: 0..3\ncolour: blue\n\n{query} {document}\n", "unknown key 'colour'"},
      {"labels: 0..3\nno colon here\n\n{query} {document}\n", "expected 'key: value'"},
      {"labels: 0..3\n", "expected a blank line"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *path = write_tmp(cases[i].text);
    rs__prompt p;
    rs_error err = {0};
    cr_expect_eq(rs__prompt_load(path, &p, &err), RS_FORMAT, "case %zu", i);
    cr_expect(strstr(err.msg, cases[i].fragment) != NULL, "case %zu: %s", i, err.msg);
    cr_expect(strstr(err.msg, path) != NULL, "the message names the file: %s", err.msg);
    unlink(path);
    free(path);
  }
  rs__prompt p;
  rs_error err = {0};
  cr_expect_eq(rs__prompt_load("/nonexistent/prompt.txt", &p, &err), RS_IO);
  cr_expect(strstr(err.msg, "expected 'binary', 'graded' or a prompt file") != NULL, "%s", err.msg);
}
