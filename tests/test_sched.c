/* test_sched.c: where the threads of rs__parallel_for's teams run.  A
 * team as large as the process's CPU set has thread k on its k-th CPU; any
 * other team (a larger one, a nested one), and any process whose user
 * chose a binding, is left to the kernel; the calling thread gets its own
 * CPU set back.  And what each thread of a team tells it did (the busy
 * counts behind eval --timing).  Each test runs
 * in its own process (Criterion forks one per test), so each starts with
 * no thread placed yet. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/sched.h"

#ifdef _OPENMP /* the serial build runs every item on the caller */
enum { N_ITEMS = 256 };

/* What one item saw: its thread, and that thread's CPU set. */
typedef struct {
  int tid;
  int ok;
  cpu_set_t cpus;
} item_seen;

/* Set once a worker (a thread other than the caller) has run an item. */
static atomic_int worker_came;

static void note_item(void *ctx, size_t i, int tid)
{
  item_seen *seen = ctx;
  seen[i].tid = tid;
  seen[i].ok = pthread_getaffinity_np(pthread_self(), sizeof seen[i].cpus, &seen[i].cpus) == 0;
  if (tid > 0) atomic_store(&worker_came, 1);
  /* 100 us an item, and the caller waits (up to 2 s) until a worker has
   * come: on a busy machine a new thread may start many ms late, and a
   * test that saw only the caller would check nothing. */
  struct timespec pause = {0, 100000};
  for (int round = 0; round < 20000; round++) {
    nanosleep(&pause, NULL);
    if (tid > 0 || atomic_load(&worker_came)) break;
  }
}

/* The calling thread's CPUs, and the k-th of them in *cpu_of[k]. */
static int cpus_of_caller(cpu_set_t *all, int *cpu_of)
{
  cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof *all, all), 0);
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, all)) cpu_of[n++] = c;
  return n;
}

static int workers_seen(const item_seen *seen)
{
  int n = 0;
  for (size_t i = 0; i < N_ITEMS; i++) n += seen[i].tid > 0;
  return n;
}

/* Every item ran on its thread's own CPU: thread k on the k-th. */
static void assert_placed(const item_seen *seen, const int *cpu_of)
{
  cr_assert_gt(workers_seen(seen), 0, "no item ran on a worker: the test saw only the caller");
  for (size_t i = 0; i < N_ITEMS; i++) {
    cr_assert(seen[i].ok);
    cr_assert_eq(CPU_COUNT(&seen[i].cpus), 1, "item %zu (thread %d) may run on %d CPUs", i, seen[i].tid,
                 CPU_COUNT(&seen[i].cpus));
    cr_assert(CPU_ISSET(cpu_of[seen[i].tid], &seen[i].cpus), "item %zu: thread %d is not on CPU %d", i, seen[i].tid,
              cpu_of[seen[i].tid]);
  }
}

/* Every item's thread kept the kernel's choice: all of the caller's CPUs. */
static void assert_left_alone(const item_seen *seen, const cpu_set_t *all)
{
  cr_assert_gt(workers_seen(seen), 0, "no item ran on a worker: the test saw only the caller");
  for (size_t i = 0; i < N_ITEMS; i++)
    cr_assert(seen[i].ok && CPU_EQUAL(&seen[i].cpus, all), "item %zu (thread %d) may run on %d CPUs, not %d", i,
              seen[i].tid, CPU_COUNT(&seen[i].cpus), CPU_COUNT(all));
}

/* The caller's CPUs (see cpus_of_caller); skips the test on one CPU. */
static int cpus_to_place(cpu_set_t *all, int *cpu_of)
{
  const int n = cpus_of_caller(all, cpu_of);
  if (n < 2) cr_skip_test("one CPU: nothing to place");
  return n;
}

static void assert_caller_has(const cpu_set_t *all)
{
  cpu_set_t after;
  cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
  cr_assert(CPU_EQUAL(&after, all), "the calling thread kept %d of its %d CPUs", CPU_COUNT(&after), CPU_COUNT(all));
}

Test(sched, a_team_of_every_cpu_has_a_cpu_per_thread)
{
  static int cpu_of[CPU_SETSIZE];
  cpu_set_t all;
  const int n = cpus_to_place(&all, cpu_of);
  static item_seen seen[N_ITEMS];
  rs__parallel_for(N_ITEMS, n, 1, note_item, seen);
  assert_placed(seen, cpu_of);
  assert_caller_has(&all);
}

/* Between rs__sched_hold and rs__sched_release the caller stays on its
 * CPU from one region to the next (no unpin and pin between them), the
 * workers on theirs; holds nest, and the last release gives the caller
 * its own CPU set back. */
Test(sched, a_held_caller_keeps_its_cpu_between_regions)
{
  static int cpu_of[CPU_SETSIZE];
  cpu_set_t all;
  const int n = cpus_to_place(&all, cpu_of);
  static item_seen seen[N_ITEMS];
  rs__sched_hold();
  rs__sched_hold();
  for (int round = 0; round < 3; round++) {
    memset(seen, 0, sizeof seen);
    atomic_store(&worker_came, 0);
    rs__parallel_for(N_ITEMS, n, 1, note_item, seen);
    assert_placed(seen, cpu_of);
    cpu_set_t between;
    cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof between, &between), 0);
    cr_assert(CPU_COUNT(&between) == 1 && CPU_ISSET(cpu_of[0], &between),
              "round %d: the held caller may run on %d CPUs, not on CPU %d alone", round, CPU_COUNT(&between),
              cpu_of[0]);
    if (round == 1) rs__sched_release(); /* the inner hold: the outer one still holds */
  }
  rs__sched_release();
  assert_caller_has(&all);
  rs__sched_release(); /* one release too many: nothing to give back */
  assert_caller_has(&all);
}

static cpu_set_t side_cpus;
static int side_ok;
static void note_side(void *ctx)
{
  (void)ctx;
  side_ok = pthread_getaffinity_np(pthread_self(), sizeof side_cpus, &side_cpus) == 0;
}

Test(sched, the_team_with_a_side_task_is_placed_too)
{
  static int cpu_of[CPU_SETSIZE];
  cpu_set_t all;
  const int n = cpus_to_place(&all, cpu_of);
  static item_seen seen[N_ITEMS];
  rs__parallel_for_beside(N_ITEMS, n, 1, note_item, seen, note_side, NULL, NULL);
  assert_placed(seen, cpu_of);
  cr_assert(side_ok);
  cr_assert_eq(CPU_COUNT(&side_cpus), 1, "the side task may run on %d CPUs", CPU_COUNT(&side_cpus));
  assert_caller_has(&all);
}

/* Each calling thread has a runtime pool of its own, started before its
 * first team (sched.c, start_pool): a second caller's teams are placed as
 * the first's are, and both get their CPU sets back. */
typedef struct {
  int n;
  item_seen *seen;
  cpu_set_t before, after;
  int ok;
} second_caller;

static void *call_from_second_thread(void *arg)
{
  second_caller *c = arg;
  c->ok = pthread_getaffinity_np(pthread_self(), sizeof c->before, &c->before) == 0;
  atomic_store(&worker_came, 0);
  rs__parallel_for(N_ITEMS, c->n, 1, note_item, c->seen);
  c->ok = c->ok && pthread_getaffinity_np(pthread_self(), sizeof c->after, &c->after) == 0;
  return NULL;
}

Test(sched, a_second_calling_thread_has_its_team_placed_too)
{
  static int cpu_of[CPU_SETSIZE];
  cpu_set_t all;
  const int n = cpus_to_place(&all, cpu_of);
  static item_seen first[N_ITEMS], second[N_ITEMS];
  rs__parallel_for(N_ITEMS, n, 1, note_item, first);
  assert_placed(first, cpu_of);
  second_caller c = {.n = n, .seen = second};
  pthread_t other;
  cr_assert_eq(pthread_create(&other, NULL, call_from_second_thread, &c), 0);
  cr_assert_eq(pthread_join(other, NULL), 0);
  cr_assert(c.ok);
  assert_placed(second, cpu_of);
  cr_assert(CPU_EQUAL(&c.before, &c.after), "the second caller kept %d of its %d CPUs", CPU_COUNT(&c.after),
            CPU_COUNT(&c.before));
  assert_caller_has(&all);
}

/* An item that runs a loop of its own, on a team of every CPU: nested, the
 * runtime gives that loop a team of one, on the item's thread, which must
 * keep its CPU rather than take the first one. */
static int n_cpus_seen;
static item_seen inner_seen[N_ITEMS][2];
static void note_nested(void *ctx, size_t i, int tid)
{
  note_item(ctx, i, tid);
  rs__parallel_for(2, n_cpus_seen, 1, note_item, inner_seen[i]);
}

Test(sched, a_nested_loop_keeps_its_threads_cpu)
{
  static int cpu_of[CPU_SETSIZE];
  cpu_set_t all;
  n_cpus_seen = cpus_to_place(&all, cpu_of);
  static item_seen seen[N_ITEMS];
  rs__parallel_for(N_ITEMS, n_cpus_seen, 1, note_nested, seen);
  assert_placed(seen, cpu_of);
  for (size_t i = 0; i < N_ITEMS; i++)
    for (int k = 0; k < 2; k++)
      cr_assert(inner_seen[i][k].ok && CPU_EQUAL(&inner_seen[i][k].cpus, &seen[i].cpus),
                "item %zu (thread %d, CPU %d): its nested loop ran with %d CPUs, not its thread's", i, seen[i].tid,
                cpu_of[seen[i].tid], CPU_COUNT(&inner_seen[i][k].cpus));
  assert_caller_has(&all);
}

/* A team larger than the CPU set (or smaller: other processes may hold
 * the other CPUs) keeps the kernel's choice: every thread may run on all. */
Test(sched, a_team_of_more_threads_than_cpus_is_left_alone)
{
  static int cpu_of[CPU_SETSIZE];
  cpu_set_t all;
  const int n = cpus_of_caller(&all, cpu_of);
  static item_seen seen[N_ITEMS];
  rs__parallel_for(N_ITEMS, n + 1, 1, note_item, seen);
  assert_left_alone(seen, &all);
}

Test(sched, a_binding_the_user_chose_is_left_alone)
{
  static int cpu_of[CPU_SETSIZE];
  cpu_set_t all;
  const int n = cpus_to_place(&all, cpu_of);
  cr_assert_eq(setenv("OMP_PROC_BIND", "false", 1), 0);
  static item_seen seen[N_ITEMS];
  rs__parallel_for(N_ITEMS, n, 1, note_item, seen);
  assert_left_alone(seen, &all);
}

/* rs__parallel_for_beside's busy counts: each thread's items add up to
 * every item once, and its time in them covers at least the items' own
 * (each sleeps 200 us); the side task's time is not counted. */
typedef struct {
  atomic_int done[N_ITEMS];
  atomic_int by[4];
} busy_items;

static void sleep_item(void *ctx, size_t i, int tid)
{
  busy_items *b = ctx;
  atomic_fetch_add(&b->done[i], 1);
  atomic_fetch_add(&b->by[tid < 4 ? tid : 3], 1);
  struct timespec pause = {0, 200000};
  nanosleep(&pause, NULL);
}

static void sleep_side(void *ctx)
{
  (void)ctx;
  struct timespec pause = {0, 50000000}; /* 50 ms: far more than any thread's share of the items could hide */
  nanosleep(&pause, NULL);
}

Test(sched, busy_counts_add_up_to_every_item_once)
{
  for (int threads = 1; threads <= 3; threads++) {
    static busy_items b;
    memset(&b, 0, sizeof b);
    rs__thread_busy busy[3];
    memset(busy, 0, sizeof busy);
    const double t0 = rs__seconds();
    rs__parallel_for_beside(N_ITEMS, threads, 4, sleep_item, &b, sleep_side, NULL, busy);
    const double wall = rs__seconds() - t0;
    unsigned long long items = 0;
    double seconds = 0.0;
    for (int t = 0; t < threads; t++) {
      cr_assert_eq(busy[t].items, (unsigned long long)atomic_load(&b.by[t]), "%d threads: thread %d", threads, t);
      items += busy[t].items, seconds += busy[t].seconds;
    }
    for (int t = threads; t < 3; t++) cr_assert_eq(busy[t].items, 0);
    cr_assert_eq(items, N_ITEMS, "%d threads: %llu items counted", threads, items);
    for (size_t i = 0; i < N_ITEMS; i++) cr_assert_eq(atomic_load(&b.done[i]), 1, "item %zu", i);
    cr_assert_geq(seconds, N_ITEMS * 200e-6, "%d threads: %.4f s in items", threads, seconds);
    /* the side task's 50 ms are not in any thread's count: all of it
     * together stays under the wall time less the side task, per thread */
    cr_assert_leq(seconds, threads * wall - 0.05 + 1e-3, "%d threads: %.4f s in items, %.4f s wall", threads,
                  seconds, wall);
  }
}
#endif
