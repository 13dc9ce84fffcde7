/* cmd_cache.c: "ragsweep cache": inspect and merge LLM reply caches. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "llm/cache.h"

static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep cache stats CACHE\n"
          "       ragsweep cache merge DST SRC [SRC ...]\n"
          "\n"
          "The LLM reply cache is an SQLite file written by 'ragsweep judge': one entry per\n"
          "request, keyed by the SHA-256 of the request, first answer kept.\n"
          "\n"
          "  stats   entries, size on disk, and entries per model (with how many are failed\n"
          "          replies, HTTP status not 2xx); checks the file's integrity\n"
          "  merge   copies into DST (created if missing) every entry of each SRC that DST\n"
          "          lacks, e.g. the caches of shards run on separate machines; prints what\n"
          "          each SRC added.  Merging again adds nothing.\n"
          "\n"
          "exit status: 0 done; 1 usage; 2 a file is missing, unreadable or not a cache.\n");
}

static int stats(const char *path)
{
  rs__llm_cache *c = NULL;
  rs__cache_model_count *m = NULL;
  size_t nm = 0;
  uint64_t n = 0, bytes = 0;
  rs_error err = {0};
  int code = RS_EXIT_INPUT;
  if (rs__llm_cache_open_existing(path, &c, &err) || rs__llm_cache_verify(c, &err) ||
      rs__llm_cache_count(c, &n, &err) || rs__llm_cache_bytes(c, &bytes, &err) ||
      rs__llm_cache_models(c, &m, &nm, &err)) {
    fprintf(stderr, "ragsweep cache: %s\n", err.msg);
    goto done;
  }
  printf("%s: %" PRIu64 " entries, %.1f MiB (%" PRIu64 " bytes)\n", path, n, (double)bytes / (1024.0 * 1024.0), bytes);
  for (size_t i = 0; i < nm; i++)
    printf("  model %s: %" PRIu64 " entries, %" PRIu64 " failed\n", m[i].model[0] ? m[i].model : "(none)", m[i].n,
           m[i].n_error);
  code = RS_EXIT_OK;
done:
  rs__cache_model_counts_free(m, nm);
  rs__llm_cache_close(c);
  return code;
}

static int merge(int argc, char **argv)
{
  rs__llm_cache *dst = NULL;
  rs_error err = {0};
  uint64_t total = 0, n = 0;
  int code = RS_EXIT_INPUT;
  /* Every source is checked before DST is created: a bad source leaves no
   * new empty cache behind. */
  for (int i = 1; i < argc; i++) {
    rs__llm_cache *src = NULL;
    if (rs__llm_cache_open_existing(argv[i], &src, &err)) {
      fprintf(stderr, "ragsweep cache: %s\n", err.msg);
      return RS_EXIT_INPUT;
    }
    rs__llm_cache_close(src);
  }
  if (rs__llm_cache_open(argv[0], &dst, &err)) {
    fprintf(stderr, "ragsweep cache: %s\n", err.msg);
    return RS_EXIT_INPUT;
  }
  for (int i = 1; i < argc; i++) {
    uint64_t added = 0;
    if (rs__llm_cache_merge(dst, argv[i], &added, &err)) {
      fprintf(stderr, "ragsweep cache: %s\n", err.msg);
      goto done;
    }
    printf("%s: %" PRIu64 " entries added\n", argv[i], added);
    total += added;
  }
  if (rs__llm_cache_count(dst, &n, &err)) {
    fprintf(stderr, "ragsweep cache: %s\n", err.msg);
    goto done;
  }
  printf("%s: %" PRIu64 " entries added, %" PRIu64 " in all\n", argv[0], total, n);
  code = RS_EXIT_OK;
done:
  rs__llm_cache_close(dst);
  return code;
}

int rs_cli_cache(int argc, char **argv)
{
  if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
    help(stdout);
    return RS_EXIT_OK;
  }
  if (argc == 3 && strcmp(argv[1], "stats") == 0) return stats(argv[2]);
  if (argc >= 4 && strcmp(argv[1], "merge") == 0) return merge(argc - 2, argv + 2);
  fprintf(stderr, "ragsweep cache: expected 'stats CACHE' or 'merge DST SRC [SRC ...]' (see 'ragsweep cache --help')\n");
  return RS_EXIT_USAGE;
}
