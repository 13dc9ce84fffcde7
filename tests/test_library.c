/* test_library.c: libragsweep as an outside program sees it: the .so
 * exports the public API only, the README's example builds with
 * pkg-config against the build tree and prints hand-computed values, and
 * `make install` writes a .pc that names the install prefix. */
#define _XOPEN_SOURCE 700 /* realpath, strdup, strtok_r */
#include <criterion/criterion.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "ragsweep/eval.h"

/* The build folder of the binary under test (build, build-asan, ...) and
 * the source tree above it. */
static const char *build_dir(void)
{
  static char dir[PATH_MAX];
  char bin[PATH_MAX];
  cr_assert(realpath(th_bin(), bin), "realpath %s", th_bin());
  snprintf(dir, sizeof dir, "%s", dirname(bin));
  return dir;
}

static const char *source_dir(void)
{
  static char dir[PATH_MAX];
  char b[PATH_MAX];
  snprintf(b, sizeof b, "%s", build_dir());
  snprintf(dir, sizeof dir, "%s", dirname(b));
  return dir;
}

static th_result sh(const char *script)
{
  char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
  return th_run(NULL, argv, NULL, NULL);
}

Test(library, so_exports_only_the_public_api)
{
  char cmd[PATH_MAX + 64];
  snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s/libragsweep.so'", build_dir());
  th_result r = sh(cmd);
  cr_assert_eq(r.status, 0, "%s failed: %s", cmd, r.err);
  char *listing = strdup(r.out);
  char offenders[2048] = "";
  size_t n_sym = 0;
  for (char *save = NULL, *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    const char *name = strrchr(line, ' ');
    name = name ? name + 1 : line;
    n_sym++;
    if (strncmp(name, "rs_", 3) != 0 || strncmp(name, "rs__", 4) == 0) {
      strncat(offenders, " ", sizeof offenders - strlen(offenders) - 1);
      strncat(offenders, name, sizeof offenders - strlen(offenders) - 1);
    }
  }
  cr_assert_str_eq(offenders, "", "libragsweep.so exports non-public symbols:%s", offenders);
  /* Every header's entry points are there (one or more per header). */
  static const char *const wanted[] = {"rs_code_name", "rs_plan_add", "rs_eval_topic", "rs_te_evaluate",
                                       "rs_measure_set_new", "rs_measure_set_count", "rs_measure_set_name",
                                       "rs_measure_set_eval", "rs_measure_scratch_new", "rs_measure_scratch_free",
                                       "rs_measure_set_free"};
  for (size_t i = 0; i < sizeof wanted / sizeof *wanted; i++) {
    char pat[96];
    snprintf(pat, sizeof pat, " %s\n", wanted[i]);
    cr_assert(strstr(listing, pat), "libragsweep.so does not export %s", wanted[i]);
  }
  free(listing);
  cr_assert_geq(n_sym, sizeof wanted / sizeof *wanted);
  th_free(&r);
}

/* The first C block of the README's "Using the library" section. */
static char *readme_example(void)
{
  char *readme = th_slurp(th_join(source_dir(), "README.md"), NULL);
  cr_assert(readme, "cannot read README.md in %s", source_dir());
  char *sec = strstr(readme, "### Using the library");
  cr_assert(sec, "README.md has no \"### Using the library\" section");
  char *start = strstr(sec, "```c\n");
  cr_assert(start, "no ```c block in the README's library section");
  start += 5;
  char *end = strstr(start, "```");
  cr_assert(end);
  *end = '\0';
  char *code = strdup(start);
  free(readme);
  return code;
}

Test(library, readme_example_builds_with_pkg_config_and_prints_hand_values)
{
  char *code = readme_example();
  char *dir = th_fresh_dir();
  const char *src = th_join(dir, "example.c");
  FILE *f = fopen(src, "w");
  cr_assert(f);
  fputs(code, f);
  fclose(f);
  free(code);
  /* A sanitized .so needs its runtime in the program too. */
  char cmd[4 * PATH_MAX];
  snprintf(cmd, sizeof cmd,
           "set -e; b='%s'; export PKG_CONFIG_PATH=\"$b\"; "
           "san=$(nm -D \"$b/libragsweep.so\" | grep -q __asan_init && echo -fsanitize=address,undefined || true); "
           "cc -std=c11 -Wall -Wextra -Werror $san -o '%s/example' '%s' $(pkg-config --cflags --libs ragsweep); "
           "LD_LIBRARY_PATH=\"$b\" '%s/example'",
           build_dir(), dir, src, dir);
  th_result r = sh(cmd);
  cr_assert_eq(r.status, 0, "README example: status %d\n%s\n%s", r.status, r.out, r.err);
  /* rel = 0, 2, unpooled, 1, 0 with judged grades {0:3, 1:1, 2:2}:
   * DCG@10 = 2/log2(3) + 1/log2(5) = 1.6925360652, IDCG@10 = 2 +
   * 2/log2(3) + 1/log2(4) = 3.7618595071, nDCG@10 = 0.449920; no relevant
   * doc at rank 1, one in the top 5. */
  cr_assert_str_eq(r.out, "nDCG@10 0.449920\nAnswerPresence@1 0.000000\nAnswerPresence@5 1.000000\n");
  th_free(&r);
}

Test(library, make_install_writes_a_pc_for_the_prefix)
{
  char *dest = th_fresh_dir();
  char cmd[4 * PATH_MAX];
  const char *b = build_dir();
  snprintf(cmd, sizeof cmd,
           "unset MAKEFLAGS MFLAGS MAKELEVEL; make -s -C '%s' install BUILD='%s' DESTDIR='%s' PREFIX=/opt/rs >/dev/null",
           source_dir(), strrchr(b, '/') + 1, dest);
  th_result r = sh(cmd);
  cr_assert_eq(r.status, 0, "make install: status %d\n%s", r.status, r.err);
  th_free(&r);
  char *pc = th_slurp(th_join(dest, "opt/rs/lib/pkgconfig/ragsweep.pc"), NULL);
  cr_assert(pc, "make install wrote no lib/pkgconfig/ragsweep.pc");
  cr_assert(strstr(pc, "\nprefix=/opt/rs\n"), "%s", pc);
  cr_assert(strstr(pc, "\nlibdir=${prefix}/lib\n"), "%s", pc);
  cr_assert(strstr(pc, "\nincludedir=${prefix}/include\n"), "%s", pc);
  cr_assert(strstr(pc, "\nCflags: -I${includedir}\n"), "%s", pc);
  cr_assert(strstr(pc, "\nLibs: -L${libdir} -lragsweep\n"), "%s", pc);
  cr_assert(strstr(pc, "\nLibs.private: ") && strstr(pc, "-lcsv") && strstr(pc, "-lhdf5"), "%s", pc);
  cr_assert(!strstr(pc, dest), "the .pc names DESTDIR: %s", pc);
  free(pc);
  /* The prefix's pkg-config answers with it. */
  snprintf(cmd, sizeof cmd, "PKG_CONFIG_PATH='%s/opt/rs/lib/pkgconfig' pkg-config --cflags --libs ragsweep", dest);
  r = sh(cmd);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert_str_eq(r.out, "-I/opt/rs/include -L/opt/rs/lib -lragsweep \n");
  th_free(&r);
  cr_assert(th_exists(th_join(dest, "opt/rs/lib/libragsweep.so")));
  cr_assert(th_exists(th_join(dest, "opt/rs/include/ragsweep/eval.h")));
}

/* The API's own contract, in-process (the static library). */
Test(library, measure_set_names_errors_and_missing_query)
{
  rs_error err = {0};
  const char *bad[] = {"nDCG@10", "nDGC@10"};
  cr_assert_null(rs_measure_set_new(bad, 2, &err));
  cr_assert_eq(err.code, RS_USAGE);
  cr_assert(strstr(err.msg, "nDGC@10"), "%s", err.msg);

  const char *names[] = {"P@{1,5}", "ndcg_cut.10"};
  rs_measure_set *set = rs_measure_set_new(names, 2, &err);
  cr_assert(set, "%s", err.msg);
  cr_assert_eq(rs_measure_set_count(set), 3);
  cr_assert_str_eq(rs_measure_set_name(set, 0), "P@1");
  cr_assert_str_eq(rs_measure_set_name(set, 1), "P@5");
  cr_assert_str_eq(rs_measure_set_name(set, 2), "nDCG@10");
  cr_assert_null(rs_measure_set_name(set, 3));

  rs_measure_scratch *ms = rs_measure_scratch_new(set, 4, 2, &err);
  cr_assert(ms, "%s", err.msg);
  const int32_t rel[] = {1, 0, 1, 0, 1};
  const int32_t grade[] = {0, 1};
  const uint32_t count[] = {2, 4};
  const rs_levels lv = {grade, count, 2};
  double v[3] = {-1, -1, -1};
  cr_assert_eq(rs_measure_set_eval(set, ms, rel, 5, &lv, v, &err), RS_USAGE);
  cr_assert(strstr(err.msg, "5 docs") && strstr(err.msg, "at most 4"), "%s", err.msg);
  cr_assert_eq(v[0], -1.0);
  cr_assert_eq(rs_measure_set_eval(set, ms, rel, 4, &lv, v, &err), RS_OK);
  cr_assert_eq(v[0], 1.0);
  cr_assert_eq(v[1], 2.0 / 5.0);
  /* DCG 1 + 1/log2(4); ideal: four grade-1 docs */
  const double idcg = 1.0 + 1.0 / log2(3.0) + 0.5 + 1.0 / log2(5.0);
  cr_assert(fabs(v[2] - 1.5 / idcg) < 1e-12, "nDCG@10 %.17g", v[2]);
  /* a query the run does not rank scores 0 */
  cr_assert_eq(rs_measure_set_eval(set, ms, NULL, 0, &lv, v, &err), RS_OK);
  cr_assert_eq(v[0], 0.0);
  cr_assert_eq(v[1], 0.0);
  cr_assert_eq(v[2], 0.0);

  rs_measure_set *other = rs_measure_set_new(names, 1, &err);
  cr_assert(other);
  cr_assert_eq(rs_measure_set_eval(other, ms, rel, 4, &lv, v, &err), RS_USAGE);
  rs_measure_set_free(other);
  rs_measure_scratch_free(ms);
  rs_measure_set_free(set);
}
