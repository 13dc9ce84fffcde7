/* judge_ranks.c: `judge` across MPI ranks (see judge_ranks.h). */
#define _GNU_SOURCE
#include "llm/judge_ranks.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/cache.h"
#include "llm/calls.h"
#include "util/mpi.h"

/* What a rank tells rank 0 when its share is done. */
typedef struct rank_report {
  int32_t stopped_budget, stopped_fatal;
  char fatal_message[512];
} rank_report;

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void rank_cache_path(const char *cache, size_t rank, char *out, size_t cap)
{
  snprintf(out, cap, "%s.rank%zu", cache, rank);
}

/* "CACHE.rank<digits>" exactly (not its -wal or -shm). */
static int is_rank_cache(const char *name, const char *base)
{
  const size_t nb = strlen(base);
  if (strncmp(name, base, nb) != 0 || strncmp(name + nb, ".rank", 5) != 0 || !name[nb + 5]) return 0;
  for (const char *p = name + nb + 5; *p; p++)
    if (*p < '0' || *p > '9') return 0;
  return 1;
}

/* Rank 0: the rank caches in the folder of cache (leftovers of a killed job,
 * or this job's), merged into it, their sent requests added to *replay
 * (when replay is not NULL), and removed. */
static rs_code merge_rank_caches(const char *cache, rs__llm_replay **replay, rs_error *err)
{
  const char *slash = strrchr(cache, '/');
  char dir[4096];
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - cache) : 1, slash ? cache : ".");
  if (slash == cache) snprintf(dir, sizeof dir, "/");
  const char *base = slash ? slash + 1 : cache;
  DIR *d = opendir(dir);
  if (!d) return RS_OK; /* no folder yet: no leftovers */
  char **found = NULL;
  size_t n = 0, cap = 0;
  rs_code rc = RS_OK;
  for (struct dirent *e; !rc && (e = readdir(d));) {
    if (!is_rank_cache(e->d_name, base)) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      char **f = rs__realloc(found, rs__mul(cap, sizeof *f));
      if (!f) {
        rc = rs__fail(err, RS_NOMEM, "out of memory");
        break;
      }
      found = f;
    }
    const size_t len = strlen(dir) + strlen(e->d_name) + 2;
    if (!(found[n] = rs__malloc(len))) rc = rs__fail(err, RS_NOMEM, "out of memory");
    else snprintf(found[n++], len, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  rs__llm_cache *dst = NULL;
  if (!rc && n) rc = rs__llm_cache_open(cache, &dst, err);
  for (size_t i = 0; i < n && !rc; i++) {
    uint64_t added = 0;
    rc = rs__llm_cache_merge(dst, found[i], &added, err);
    if (!rc && replay) rc = rs__llm_replay_add(replay, found[i], err);
    if (!rc) rc = rs__llm_cache_remove(found[i], err);
  }
  rs__llm_cache_close(dst);
  for (size_t i = 0; i < n; i++) free(found[i]);
  free(found);
  return rc;
}

rs_code rs__judge_run_ranks(const rs__judge_cfg *cfg, rs__judge **out, rs_error *err)
{
  *out = NULL;
  const double t0 = now_s();
  const size_t rank = (size_t)rs__mpi_rank(), n_ranks = (size_t)rs__mpi_size();
  rs_code rc = RS_OK;
  if (cfg->dry_run) { /* the look-ups only: rank 0's, as one process */
    if (rank == 0) rc = rs__judge_run(cfg, out, err);
    return rs__mpi_agree(rc, err);
  }
  /* Rank 0: leftovers first, then which requests the job's cache answers. */
  rs__judge *look = NULL;
  uint64_t n_req = 0;
  uint8_t *skip = NULL;
  if (rank == 0) {
    rc = merge_rank_caches(cfg->cache_path, NULL, err);
    rs__judge_cfg dry = *cfg;
    dry.dry_run = 1, dry.share_n = 0, dry.progress = NULL, dry.max_cost = -1;
    if (!rc) rc = rs__judge_run(&dry, &look, err);
    if (!rc) n_req = rs__judge_get_stats(look)->pairs * (uint64_t)cfg->samples;
  }
  if ((rc = rs__mpi_agree(rc, err))) goto done;
  if ((rc = rs__mpi_bcast(&n_req, sizeof n_req, err))) goto done;
  if (!(skip = rs__calloc(n_req ? (size_t)n_req : 1, 1))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  if (!rc && look) rs__judge_cached_requests(look, skip);
  rs__judge_free(look);
  look = NULL;
  if ((rc = rs__mpi_agree(rc, err)) || (rc = rs__mpi_bcast(skip, (size_t)n_req, err))) goto done;

  /* Every rank: its share, into its own cache. */
  char path[4200];
  rank_cache_path(cfg->cache_path, rank, path, sizeof path);
  rs__judge_cfg mine = *cfg;
  mine.share_i = rank, mine.share_n = n_ranks, mine.skip = skip, mine.record_sent = 1, mine.cache_path = path;
  if (cfg->max_cost >= 0) mine.max_cost = cfg->max_cost / (double)n_ranks;
  if (rank != 0) mine.progress = NULL;
  rs__judge *part = NULL;
  rc = rs__judge_run(&mine, &part, err);
  rank_report me = {0};
  if (part) {
    const rs__judge_stats *s = rs__judge_get_stats(part);
    me.stopped_budget = s->stopped_budget, me.stopped_fatal = s->stopped_fatal;
    memcpy(me.fatal_message, s->fatal_message, sizeof me.fatal_message);
  }
  rs__judge_free(part); /* closes the rank's cache before rank 0 reads it */
  if ((rc = rs__mpi_agree(rc, err))) goto done;
  rank_report *all = NULL;
  size_t *counts = NULL;
  if ((rc = rs__mpi_gather(&me, 1, sizeof me, (void **)&all, &counts, err))) goto done;
  free(counts);

  /* Rank 0: the ranks' answers into the job's cache, then one process's run
   * of all pairs, offline. */
  if (rank == 0) {
    rs__llm_replay *replay = NULL;
    rc = merge_rank_caches(cfg->cache_path, &replay, err);
    rs__judge_cfg whole = *cfg;
    whole.share_n = 0, whole.offline = 1, whole.replay = replay;
    if (!rc) rc = rs__judge_run(&whole, out, err);
    for (size_t r = 0; !rc && r < n_ranks; r++)
      rs__judge_note_ranks(*out, all[r].stopped_budget, all[r].stopped_fatal, all[r].fatal_message, now_s() - t0);
    /* The judge keeps cfg; the replay is consulted only during the run. */
    rs__llm_replay_free(replay);
  }
  free(all);
done:
  free(skip);
  rs__judge_free(look);
  return rc;
}
