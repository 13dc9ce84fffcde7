/* bench/floor.c: bench_floor, the machine's floor for a workload: the
 * least a program must do to look at every byte of its input once.
 *
 *   bench_floor --sum      [--threads T] [--repeat N] FILE...
 *   bench_floor --newlines [--threads T] [--repeat N] FILE...
 *   bench_floor --cpus     [--repeat N]
 *
 * --sum (the HDF5 floor): the files' bytes, taken as one sequence, are cut
 * into T equal shares; each thread preads its share into one reused buffer
 * (faulted in before the clock starts) and sums it as 64-bit words.
 * --newlines (the text floor): the same, counting newlines with memchr.
 * A first untimed pass brings the files into the page cache; then N timed
 * passes.  Prints "best_s median_s bytes result" on one line; the result
 * (sum or newline count) proves the bytes were looked at.  Exit 2 on bad
 * usage, 1 when a file cannot be read.
 *
 * --cpus (no files): the speed of each CPU this process may run on, one
 * line each, "cpu alu_best_s alu_median_s cache_best_s cache_median_s":
 * two fixed loops, pinned to that CPU, N times each while the other CPUs
 * idle.  On a VM the host may run one vCPU slower than another (its
 * physical core shared with a busy neighbour); a two-thread run then
 * cannot reach twice one thread's speed whatever the program does, and a
 * one-thread run's time depends on the vCPU it landed on.  The integer
 * loop keeps eight independent chains in registers (the core alone); the
 * cache loop does what a row's join does, a byte load and store a step at
 * a hashed slot of a 16 KB table, beside a stream of loads from 2 MB (the
 * caches too, which a neighbour on the same core shares). */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

enum { BUF_BYTES = 1 << 20 }; /* per thread: fits L2, large enough that syscalls do not count */

typedef struct {
  int fd;
  uint64_t size, start; /* start: offset of the file in the sequence */
} file_part;

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t sum_words(const char *p, size_t n)
{
  uint64_t s = 0, w;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    memcpy(&w, p + i, 8);
    s += w;
  }
  for (; i < n; i++) s += (unsigned char)p[i];
  return s;
}

static uint64_t count_newlines(const char *p, size_t n)
{
  uint64_t c = 0;
  const char *end = p + n;
  while ((p = memchr(p, '\n', (size_t)(end - p)))) c++, p++;
  return c;
}

/* Bytes [a, b) of the sequence through buf; -1 on a read error. */
static int64_t pass_share(const file_part *f, int n_files, uint64_t a, uint64_t b, char *buf, int newlines,
                          uint64_t *result)
{
  uint64_t r = 0;
  for (int i = 0; i < n_files && a < b; i++) {
    const uint64_t fa = f[i].start, fb = f[i].start + f[i].size;
    if (b <= fa || a >= fb) continue;
    uint64_t at = (a > fa ? a : fa) - fa;
    const uint64_t stop = (b < fb ? b : fb) - fa;
    while (at < stop) {
      const size_t want = stop - at < BUF_BYTES ? (size_t)(stop - at) : BUF_BYTES;
      const ssize_t got = pread(f[i].fd, buf, want, (off_t)at);
      if (got <= 0) return -1;
      r += newlines ? count_newlines(buf, (size_t)got) : sum_words(buf, (size_t)got);
      at += (uint64_t)got;
    }
  }
  *result += r;
  return 0;
}

static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The fixed loop of --cpus: 100M rounds of eight independent
 * shift-xor-add chains (about 0.2 s on a 2026 core); the empty asm keeps
 * every chain live and the loop from being folded. */
static double alu_loop_s(void)
{
  uint64_t x0 = 1, x1 = 2, x2 = 3, x3 = 4, x4 = 5, x5 = 6, x6 = 7, x7 = 8;
  const double t0 = now_s();
  for (uint64_t i = 0; i < 100000000u; i++) {
    x0 += (x0 >> 3) ^ i, x1 += (x1 >> 5) ^ i, x2 += (x2 >> 7) ^ i, x3 += (x3 >> 9) ^ i;
    x4 ^= (x4 << 1) ^ i, x5 ^= (x5 << 3) ^ i, x6 += (x6 << 2) ^ i, x7 -= (x7 >> 1) ^ i;
    __asm__ volatile("" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5), "+r"(x6), "+r"(x7));
  }
  return now_s() - t0;
}

/* The cache loop of --cpus: 200M steps (about 0.12 s). */
static double cache_loop_s(uint8_t *restrict table, const uint64_t *restrict stream, size_t stream_words)
{
  uint64_t acc = 0;
  const double t0 = now_s();
  for (uint64_t i = 0; i < 200000000u; i++) {
    const uint32_t h = (uint32_t)(i * 2654435761u) >> 18; /* 14 bits: 16 KB of byte slots */
    acc += table[h] + stream[i & (stream_words - 1)];
    table[h] = (uint8_t)i;
  }
  __asm__ volatile("" : : "r"(acc));
  return now_s() - t0;
}

/* --cpus: each allowed CPU in turn, the loops pinned to it. */
static int cpu_speeds(int repeat)
{
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    fprintf(stderr, "bench_floor: cannot read this process's CPUs: %s\n", strerror(errno));
    return 1;
  }
  enum { STREAM_WORDS = (2 << 20) / 8 };
  double *secs = calloc((size_t)repeat, sizeof *secs), *cache = calloc((size_t)repeat, sizeof *cache);
  uint8_t *table = calloc(1 << 14, 1);
  uint64_t *stream = malloc(STREAM_WORDS * sizeof *stream);
  if (!secs || !cache || !table || !stream) {
    fprintf(stderr, "bench_floor: out of memory\n");
    free(secs), free(cache), free(table), free(stream);
    return 1;
  }
  for (size_t k = 0; k < STREAM_WORDS; k++) stream[k] = k;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &allowed)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
      fprintf(stderr, "bench_floor: cannot run on CPU %d: %s\n", c, strerror(errno));
      free(secs), free(cache), free(table), free(stream);
      return 1;
    }
    for (int k = 0; k < repeat; k++) secs[k] = alu_loop_s(), cache[k] = cache_loop_s(table, stream, STREAM_WORDS);
    qsort(secs, (size_t)repeat, sizeof *secs, cmp_double);
    qsort(cache, (size_t)repeat, sizeof *cache, cmp_double);
    printf("%d %.6f %.6f %.6f %.6f\n", c, secs[0], secs[(repeat - 1) / 2], cache[0], cache[(repeat - 1) / 2]);
  }
  (void)sched_setaffinity(0, sizeof allowed, &allowed);
  free(secs), free(cache), free(table), free(stream);
  return 0;
}

int main(int argc, char **argv)
{
  int threads = 1, repeat = 5, newlines = -1, cpus = 0, i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (strcmp(argv[i], "--cpus") == 0) cpus = 1;
    else if (strcmp(argv[i], "--sum") == 0) newlines = 0;
    else if (strcmp(argv[i], "--newlines") == 0) newlines = 1;
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = atoi(argv[++i]);
    else break;
  }
  if (cpus && newlines < 0 && i == argc && repeat >= 1) return cpu_speeds(repeat);
  if (cpus || newlines < 0 || i >= argc || threads < 1 || repeat < 1) {
    fprintf(stderr, "usage: bench_floor --sum|--newlines [--threads T] [--repeat N] FILE...\n"
                    "       bench_floor --cpus [--repeat N]\n");
    return 2;
  }
  const int n_files = argc - i;
  file_part *f = calloc((size_t)n_files, sizeof *f);
  if (!f) return 1;
  uint64_t total = 0;
  for (int k = 0; k < n_files; k++) {
    struct stat st;
    f[k].fd = open(argv[i + k], O_RDONLY);
    if (f[k].fd < 0 || fstat(f[k].fd, &st) < 0) {
      fprintf(stderr, "bench_floor: %s: cannot open: %s\n", argv[i + k], strerror(errno));
      return 1;
    }
    f[k].size = (uint64_t)st.st_size;
    f[k].start = total;
    total += f[k].size;
  }
  double *secs = calloc((size_t)repeat + 1, sizeof *secs);
  uint64_t result = 0;
  int failed = 0;
  for (int pass = 0; pass <= repeat; pass++) { /* pass 0: warm-up, not timed */
    uint64_t res = 0;
    double t0 = 0.0;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) reduction(+ : res) reduction(| : failed)
#endif
    {
      int tid = 0, nt = 1;
#ifdef _OPENMP
      tid = omp_get_thread_num();
      nt = omp_get_num_threads();
#endif
      char *buf = malloc(BUF_BYTES);
      if (!buf) failed = 1;
      else memset(buf, 0, BUF_BYTES); /* faulted in before the clock starts */
#ifdef _OPENMP
#pragma omp barrier
#pragma omp single
#endif
      t0 = now_s();
      const uint64_t a = total / (uint64_t)nt * (uint64_t)tid, b = tid + 1 == nt ? total : total / (uint64_t)nt * (uint64_t)(tid + 1);
      if (buf && pass_share(f, n_files, a, b, buf, newlines, &res) < 0) failed = 1;
      free(buf);
    }
    secs[pass] = now_s() - t0;
    result = res;
  }
  if (failed) {
    fprintf(stderr, "bench_floor: a read failed\n");
    return 1;
  }
  qsort(secs + 1, (size_t)repeat, sizeof *secs, cmp_double);
  printf("%.6f %.6f %llu %llu\n", secs[1], secs[1 + (repeat - 1) / 2], (unsigned long long)total,
         (unsigned long long)result);
  for (int k = 0; k < n_files; k++) close(f[k].fd);
  free(f);
  free(secs);
  return 0;
}
