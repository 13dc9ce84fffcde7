/* sched.h: the one place that runs code on several threads (internal).
 *
 * Work is partitioned by item, never by thread: fn(ctx, i, tid) is called
 * once for every i in [0, n), each item writes only its own outputs, and
 * whatever is combined afterwards is combined by the caller in item order,
 * so results do not depend on the thread count or the schedule. */
#ifndef RAGSWEEP_SCHED_H
#define RAGSWEEP_SCHED_H

#include <stddef.h>

/* Threads to use: requested if >= 1, else OMP_NUM_THREADS or all cores.
 * Always 1 in the serial build. */
int rs__threads(int requested);
/* Makes n (>= 1) what rs__threads(0) answers from now on: --threads N
 * bounds the whole process, the file probes included. */
void rs__threads_set_default(int n);

/* Monotonic wall clock, in seconds (for timings, never for results). */
double rs__seconds(void);

typedef void (*rs__item_fn)(void *ctx, size_t i, int tid);

/* Runs fn for every item on `threads` threads (dynamic schedule, `chunk`
 * items at a time).  tid is in [0, threads). */
void rs__parallel_for(size_t n, int threads, size_t chunk, rs__item_fn fn, void *ctx);

/* What each thread of a team did, for timings: seconds in items (not in
 * the side task) and items done.  One cache line each, so that no two
 * threads write one line. */
typedef struct rs__thread_busy {
  double seconds;
  unsigned long long items;
  char pad[48];
} rs__thread_busy;

/* As rs__parallel_for, while one of the threads first runs side(side_ctx)
 * once (reading the next block while this one is scored).  side must not
 * touch what the items read or write.  busy: NULL, or [threads], to which
 * each thread adds its time in items and their count (a clock read per
 * chunk of items). */
void rs__parallel_for_beside(size_t n, int threads, size_t chunk, rs__item_fn fn, void *ctx, void (*side)(void *),
                             void *side_ctx, rs__thread_busy *busy);

/* Between rs__sched_hold and rs__sched_release, the calling thread keeps
 * the CPU a team pinned it to from one region to the next, instead of
 * getting its own CPU set back after each (regions of every CPU only;
 * see "where a team's threads run" in sched.c): for a loop of many short
 * regions with little between them.  They nest; release gives the set back. */
void rs__sched_hold(void);
void rs__sched_release(void);

/* Shares of the items of rs__parallel_for_shares: at most this many. */
enum { RS__SHARES_MAX = 64 };

/* As rs__parallel_for_beside, for items whose inputs each thread reads
 * itself: every thread first runs own(side_ctx, tid, team), team being
 * the threads the runtime gave (at most `threads`), then one of them
 * (the first done) runs side(side_ctx); the items come in n_shares
 * shares, share s being [cut[s], cut[s + 1]), and thread t claims the
 * chunks of the shares s = t, t + threads, ... first and then of any share
 * (rows read on one CPU and scored on another cost a third more).  As
 * everywhere here, who runs an item does not change what it writes. */
void rs__parallel_for_shares(size_t n_shares, const size_t *cut, int threads, size_t chunk, rs__item_fn fn,
                             void *ctx, void (*own)(void *, int, int), void (*side)(void *), void *side_ctx,
                             rs__thread_busy *busy);

#endif
