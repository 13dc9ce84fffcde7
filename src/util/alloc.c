/* alloc.c: rs__malloc, rs__calloc, rs__realloc and the aligned ones.  Large blocks ask the
 * kernel for transparent huge pages: first touches of fresh memory are a
 * large share of a run (on virtual machines a page fault costs several
 * microseconds), and a 2 MB page takes one fault where 4 kB pages take
 * 512.  1M x 100 TREC text: 170k page faults -> 17k, 14.0 -> 10.9 s CPU.
 *
 * Only the whole 2 MB pages inside a block can be huge.  malloc puts a
 * large block 16 bytes into a fresh mapping, so up to 2 MB at its start
 * and its end went in 4 kB pages, and blocks under 4 MiB (1M topics x 4
 * bytes) were not hinted at all: reading 1M x 100 qrels took 11.5k faults.
 * rs__malloc therefore gives a block of 2 MB or more whole 2 MB pages:
 * aligned (the qrels: 7.9k faults), and the size rounded up (the whole
 * 1M x 100 text run: 8.5k -> 4.4k, peak RSS 309 -> 315 MB; the 1M HDF5
 * sweep: 7.0k -> 4.6k, 68 -> 70 MB).
 * rs__calloc does not: glibc's calloc leaves a fresh mapping untouched,
 * where an aligned block would have to be cleared, page by page, though
 * the caller may never touch most of it. */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE, posix_memalign */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

enum { HUGE_PAGE = 2 << 20, HUGE_MIN = 2 << 20 /* a smaller block holds no whole huge page */ };

/* The hint covers the whole 2 MB pages inside the block; a kernel without
 * transparent huge pages (or with them off) ignores it. */
static void *huge_hint(void *p, size_t size)
{
#ifdef MADV_HUGEPAGE
  if (p && size >= HUGE_MIN) {
    const uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    const uintptr_t b = ((uintptr_t)p + size) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (b > a) madvise((void *)a, b - a, MADV_HUGEPAGE);
  }
#endif
  return p;
}

/* size rounded up to whole units of `align` (a power of two), at an
 * address that is a multiple of it; NULL when that overflows. */
static void *malloc_aligned(size_t align, size_t size)
{
  if (size > SIZE_MAX - align) return NULL;
  const size_t whole = (size + align - 1) & ~(align - 1);
  void *p = NULL;
  if (posix_memalign(&p, align, whole ? whole : align) != 0) return NULL;
  return huge_hint(p, whole);
}

void *rs__malloc(size_t size)
{
  /* (the slack before the boundary is never touched) */
  return size >= HUGE_MIN ? malloc_aligned(HUGE_PAGE, size) : malloc(size ? size : 1);
}

void *rs__calloc(size_t n, size_t size)
{
  return huge_hint(calloc(n ? n : 1, size ? size : 1), rs__mul(n, size));
}

void *rs__realloc(void *p, size_t size) { return huge_hint(realloc(p, size ? size : 1), size); }

void *rs__malloc_lines(size_t size) { return malloc_aligned(RS_CACHE_LINE, size); }

void *rs__malloc_refilled(size_t size, size_t *room)
{
  const size_t whole = size >= RS_REFILLED_HUGE_FROM && size <= SIZE_MAX - HUGE_PAGE
                           ? (size + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1)
                           : size;
  void *p = rs__malloc(whole); /* whole 2 MB pages from there on */
  *room = p ? whole : 0;
  return p;
}

void *rs__calloc_lines(size_t n, size_t size)
{
  const size_t total = rs__mul(n, size);
  void *p = malloc_aligned(RS_CACHE_LINE, total);
  if (p) memset(p, 0, total);
  return p;
}
