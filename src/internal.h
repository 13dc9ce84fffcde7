/* internal.h: helpers shared by the library's modules (not installed). */
#ifndef RAGSWEEP_INTERNAL_H
#define RAGSWEEP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ragsweep/error.h"

#if defined(__GNUC__)
#define RS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define RS_LIKELY(x) __builtin_expect(!!(x), 1)
#define RS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define RS_PRINTF(f, a)
#define RS_LIKELY(x) (x)
#define RS_UNLIKELY(x) (x)
#endif

/* The version, for --version, the HTTP User-Agent and the history. */
#ifndef RAGSWEEP_VERSION
#define RAGSWEEP_VERSION "0.1.0"
#endif

/* Read block of the streaming text readers (textio, csvio, texts).  `make
 * fuzz` builds with a tiny one, so block boundaries fall inside the fuzzed
 * lines and an input does not cost a fresh 1 MiB mapping under ASan. */
#ifndef RS_IO_BLOCK
#define RS_IO_BLOCK (1 << 20)
#endif

/* Fills *err (if non-NULL) with code and the formatted message; returns code. */
rs_code rs__fail(rs_error *err, rs_code code, const char *fmt, ...) RS_PRINTF(3, 4);

/* malloc/realloc that treat a zero size as one byte, so NULL means failure.
 * rs__malloc gives a block of 2 MB or more whole 2 MB pages (aligned, the
 * size rounded up), which transparent huge pages then fill: one fault
 * where an unaligned block takes hundreds of 4 kB ones (alloc.c). */
void *rs__malloc(size_t size);
void *rs__calloc(size_t n, size_t size);
void *rs__realloc(void *p, size_t size);
/* As rs__malloc, on whole cache lines (aligned, the size rounded up): an
 * array whose parts different threads write, each part a multiple of
 * RS_CACHE_LINE bytes, has no line two threads write.  Freed with free. */
enum { RS_CACHE_LINE = 64 };
void *rs__malloc_lines(size_t size);
/* As rs__malloc_lines, zeroed.  Every per-thread scratch block is taken
 * this way: from malloc, one thread's small blocks (a row's tie bits, its
 * metric sums) shared lines with the other's, and two threads took 2.94 s
 * on 100 x 100k x 100 where they now take 2.48 s (median of 6). */
void *rs__calloc_lines(size_t n, size_t size);
/* For a buffer filled again and again (a run's block): room for size bytes,
 * from 1 MiB on in whole 2 MB pages (so up to twice the size), and *room
 * the bytes given.  A 1 MiB block from malloc took 256 faults of 4 kB
 * pages on its first fill, about 11 us each on the benchmark VM. */
enum { RS_REFILLED_HUGE_FROM = 1 << 20 };
void *rs__malloc_refilled(size_t size, size_t *room);
/* n * size, or SIZE_MAX when that overflows (so the allocation fails). */
size_t rs__mul(size_t n, size_t size);

/* s[0, n), n < 8, as a little-endian word: two overlapping 4-byte loads
 * inside s from 4 bytes on, else a byte loop (the definition). */
static inline uint64_t rs__load_short_le(const char *s, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n >= 4) {
    uint32_t lo, hi;
    __builtin_memcpy(&lo, s, 4);
    __builtin_memcpy(&hi, s + n - 4, 4);
    return (uint64_t)lo | (uint64_t)hi << (8 * (n - 4));
  }
#endif
  uint64_t w = 0;
  for (size_t i = 0; i < n; i++) w |= (uint64_t)(unsigned char)s[i] << (8 * i);
  return w;
}

/* 64-bit hash of a byte string (for interning ids; not cryptographic). */
static inline uint64_t rs__hash_bytes(const char *s, size_t n)
{
  /* FNV-1a over 8-byte words with a final avalanche: fast on short ids. */
  uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    __builtin_memcpy(&w, s + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  /* The last n - i (< 8) bytes as a little-endian word.  A byte loop ran
   * once or twice on a 9- or 10-byte docno and mispredicted as the lengths
   * alternated; overlapping loads that stay inside s give the same word. */
  uint64_t tail;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n >= 8) { /* the last 8 bytes, shifted */
    uint64_t w;
    __builtin_memcpy(&w, s + n - 8, 8);
    tail = n > i ? w >> (8 * (8 - (n - i))) : 0;
  } else
#endif
    tail = rs__load_short_le(s + i, n - i);
  h = (h ^ tail) * 0x100000001b3ull;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ull;
  h ^= h >> 32;
  return h;
}

/* 1 when a[0, n) and b[0, n) are the same bytes.  Ids are short: up to 16
 * bytes are compared inline (two overlapping 8-byte words from n = 8),
 * never reading outside either range; a libc memcmp call costs more than
 * the comparison itself (8% of a 1M-topic trec_eval run). */
static inline int rs__same_bytes(const char *a, const char *b, size_t n)
{
  if (n < 8) {
    unsigned d = 0;
    for (size_t i = 0; i < n; i++) d |= (unsigned)(unsigned char)(a[i] ^ b[i]);
    return d == 0;
  }
  if (n <= 16) {
    uint64_t x, y, u, v;
    __builtin_memcpy(&x, a, 8);
    __builtin_memcpy(&y, b, 8);
    __builtin_memcpy(&u, a + n - 8, 8);
    __builtin_memcpy(&v, b + n - 8, 8);
    return ((x ^ y) | (u ^ v)) == 0;
  }
  return __builtin_memcmp(a, b, n) == 0;
}

/* Bytewise comparison with strcmp's order for strings of known length
 * that contain no NUL. */
static inline int rs__strncmp2(const char *a, size_t na, const char *b, size_t nb)
{
  size_t n = na < nb ? na : nb;
  int c = __builtin_memcmp(a, b, n);
  if (c) return c;
  return (na > nb) - (na < nb);
}

#endif
