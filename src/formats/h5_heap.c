/* h5_heap.c: variable-length strings read from an HDF5 file's bytes (see
 * h5_heap.h).  The layout, from the HDF5 file format specification:
 *
 *   row:         length (4 bytes), collection address (sizeof_addr),
 *                object index (4 bytes); all little-endian
 *   collection:  "GCOL", version 1, 3 reserved bytes, its size in bytes
 *                (sizeof_size, header included), then objects
 *   object:      index (2 bytes), reference count (2), reserved (4),
 *                data size (sizeof_size), data padded to 8 bytes;
 *                index 0 is free space, its size counting its header
 *
 * The objects of a collection are walked as libhdf5 walks them
 * (H5HG__cache_heap_deserialize): to the collection's end, past free
 * space, a tail too short for an object header ending the walk, a later
 * object of an index replacing an earlier one.  Rows and collections are
 * read with pread; nothing is mapped. */
#define _POSIX_C_SOURCE 200809L
#include "formats/h5_heap.h"

#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ROWS_PER_READ = 4096, ROW_MAX = 4 + 8 + 4 };

typedef struct {
  uint64_t addr;         /* 0: an empty slot (the superblock is at 0: no collection starts there) */
  unsigned char *bytes;  /* the collection, whole (bytes_cap bytes held) */
  size_t bytes_cap;
  uint64_t *obj_at;      /* [n_idx]: where object idx's data starts in bytes, 0 when there is none */
  uint64_t *obj_size;    /* [n_idx]: its size */
  uint32_t n_idx;
} heap_coll;

/* A block the cache let go of, kept for the next collection: freed to
 * malloc, the blocks of a whole cache at the top of the heap were given
 * back to the kernel (trimmed) and faulted in again at the next one, 20 ms
 * of reading 1M ids. */
typedef struct {
  unsigned char *bytes; /* with its capacity */
  size_t bytes_cap;
  uint64_t *obj_at, *obj_size; /* [n_idx] each */
  uint32_t n_idx;
} heap_spare;

/* The collections read so far, by address (open addressing): a dataset's
 * rows name few collections, most rows the one the row before named. */
typedef struct {
  const rs__h5_heap_rows *rows;
  heap_coll *slot;
  size_t cap, used;
  uint64_t bytes; /* held by the collections in slot (their blocks' capacity), index tables included */
  const heap_coll *last;
  heap_spare *spare; /* [n_spare]: blocks of collections cleared, spare_bytes in all */
  size_t n_spare, cap_spare;
  uint64_t spare_bytes;
} heap_cache;

/* The collection bytes kept at once: past this the cache starts again
 * empty, its blocks kept for the next collections (heap_spare, up to as
 * many bytes again), so memory stays bounded whatever the file (rows in
 * collection order, as writers leave them, read each collection once) and
 * the same pages serve every round.  Fresh pages are what a larger cache
 * costs: at 32 MiB they were a third of reading 1M ids; from 4 MiB to 1 MiB,
 * a 1M x 100 sweep took 2,345 -> 1,446 page faults (the main process and
 * its probes) and its open 0.118 -> 0.104 s.  At 256 KiB the 1M query ids
 * (368 collections of 64 KiB, each 107 KiB with its index tables) take 458
 * collection reads, not 412, and 114 page faults, not 298 (227, not 586,
 * on two threads): a fault costs about 11 us on a virtual machine. */
#define HEAP_CACHE_BYTES ((uint64_t)1 << 18)

/* The n-byte (2, 4 or 8) little-endian number at p.  Fixed-width loads: a
 * byte loop of runtime width was most of the time of reading 1M ids. */
static inline uint64_t le_bytes(const unsigned char *p, unsigned n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint16_t v2;
  uint32_t v4;
  uint64_t v8;
  switch (n) {
  case 2: memcpy(&v2, p, 2); return v2;
  case 4: memcpy(&v4, p, 4); return v4;
  case 8: memcpy(&v8, p, 8); return v8;
  default: break;
  }
#endif
  uint64_t v = 0;
  for (unsigned i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

static rs_code corrupt(const rs__h5_heap_rows *r, size_t row, rs_error *err, const char *what)
{
  return rs__fail(err, RS_FORMAT, "%s:%s: row %zu: %s: the file is corrupt; write it again (ragsweep import) or restore it",
                  r->file, r->name, r->first_row + row, what);
}

static rs_code read_at(const rs__h5_heap_rows *r, void *buf, size_t n, uint64_t off, rs_error *err)
{
  size_t done = 0;
  while (done < n) {
    const ssize_t got = pread(r->fd, (char *)buf + done, n - done, (off_t)(off + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      return rs__fail(err, RS_IO, "%s:%s: cannot read %zu bytes at offset %" PRIu64 ": %s", r->file, r->name, n, off,
                      got < 0 ? strerror(errno) : "the file is shorter");
    done += (size_t)got;
  }
  return RS_OK;
}

static size_t slot_of(const heap_cache *c, uint64_t addr)
{
  size_t i = (size_t)((addr >> 3) * 0x9E3779B97F4A7C15ull >> 17) & (c->cap - 1);
  while (c->slot[i].addr && c->slot[i].addr != addr) i = (i + 1) & (c->cap - 1);
  return i;
}

static int cache_grow(heap_cache *c)
{
  const size_t cap = c->cap ? c->cap * 2 : 64;
  heap_coll *old = c->slot;
  const size_t old_cap = c->cap;
  if (!(c->slot = rs__calloc(cap, sizeof *c->slot))) {
    c->slot = old;
    return 0;
  }
  c->cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].addr) c->slot[slot_of(c, old[i].addr)] = old[i];
  free(old);
  c->last = NULL;
  return 1;
}

static void spare_free(heap_spare *b)
{
  free(b->bytes);
  free(b->obj_at);
  free(b->obj_size);
}

static uint64_t spare_size(const heap_spare *b)
{
  return (uint64_t)b->bytes_cap + (uint64_t)b->n_idx * (sizeof *b->obj_at + sizeof *b->obj_size);
}

/* Empties the cache; its blocks become spares while they hold at most
 * HEAP_CACHE_BYTES in all (the others are freed), so that files mixing
 * large and small collections cannot pile blocks up round after round. */
static void cache_clear(heap_cache *c)
{
  for (size_t i = 0; i < c->cap; i++) {
    heap_coll *h = &c->slot[i];
    if (!h->addr) continue;
    heap_spare b = {h->bytes, h->bytes_cap, h->obj_at, h->obj_size, h->n_idx};
    if (c->n_spare == c->cap_spare) {
      const size_t cap = c->cap_spare ? 2 * c->cap_spare : 64;
      heap_spare *g = rs__realloc(c->spare, rs__mul(cap, sizeof *g));
      if (g) c->spare = g, c->cap_spare = cap;
    }
    if (c->n_spare < c->cap_spare && c->spare_bytes + spare_size(&b) <= HEAP_CACHE_BYTES) {
      c->spare[c->n_spare++] = b;
      c->spare_bytes += spare_size(&b);
    } else {
      spare_free(&b);
    }
    memset(h, 0, sizeof *h);
  }
  c->used = 0;
  c->bytes = 0;
  c->last = NULL;
}

static void cache_free(heap_cache *c)
{
  cache_clear(c);
  for (size_t i = 0; i < c->n_spare; i++) spare_free(&c->spare[i]);
  free(c->spare);
  free(c->slot);
}

/* The blocks for a collection of `size` bytes into h: the last spare's
 * (its byte block only if large enough and not far larger), else new ones.
 * The index tables come back zeroed (0: no object of that index). */
static int take_blocks(heap_cache *c, heap_coll *h, uint64_t size)
{
  const size_t want = (size_t)size + 8; /* + 8: a short string is read as one word (c_string_len) */
  if (c->n_spare) {
    heap_spare b = c->spare[--c->n_spare];
    c->spare_bytes -= spare_size(&b);
    if (b.bytes_cap < want || b.bytes_cap > 2 * want + 65536) {
      free(b.bytes);
      b.bytes = NULL, b.bytes_cap = 0;
    }
    /* tables far longer than this collection can fill would cost more to
     * zero than to allocate (a collection may name index 65535) */
    if ((uint64_t)b.n_idx > 2 * (size / 24 + 1) + 64) {
      free(b.obj_at), free(b.obj_size);
      b.obj_at = b.obj_size = NULL, b.n_idx = 0;
    }
    h->bytes = b.bytes, h->bytes_cap = b.bytes_cap;
    h->obj_at = b.obj_at, h->obj_size = b.obj_size, h->n_idx = b.n_idx;
    if (h->obj_at) memset(h->obj_at, 0, (size_t)h->n_idx * sizeof *h->obj_at);
  }
  if (!h->bytes) {
    if (!(h->bytes = rs__malloc(want))) return 0;
    h->bytes_cap = want;
  }
  return 1;
}

/* Records object idx of h (data at `at`, size bytes), growing its tables
 * to hold the index (indices are 16-bit).  0 when memory runs out. */
static int note_object(heap_coll *h, uint32_t idx, uint64_t at, uint64_t size, uint64_t coll_size)
{
  if (idx >= h->n_idx) {
    /* Writers number a collection's objects from 1: as many indices as
     * objects fit (each at least a header and 8 bytes) is one allocation. */
    const uint64_t fit = coll_size / 24 + 1;
    uint32_t n = h->n_idx ? h->n_idx : fit < 65536 ? (uint32_t)fit : 65536;
    while (n <= idx) n *= 2;
    uint64_t *a = rs__realloc(h->obj_at, rs__mul(n, sizeof *a));
    if (a) h->obj_at = a;
    uint64_t *z = rs__realloc(h->obj_size, rs__mul(n, sizeof *z));
    if (z) h->obj_size = z;
    if (!a || !z) return 0;
    memset(h->obj_at + h->n_idx, 0, (n - h->n_idx) * sizeof *a); /* 0: no object of that index */
    h->n_idx = n;
  }
  h->obj_at[idx] = at;
  h->obj_size[idx] = size;
  return 1;
}

/* Walks the objects of collection bytes[0, size) into h's tables.  -1 when
 * an object runs past the collection's end, -2 when memory runs out. */
static int walk_objects(const unsigned char *bytes, uint64_t size, unsigned sizeof_size, heap_coll *h)
{
  const uint64_t obj_header = 8 + (uint64_t)sizeof_size;
  uint64_t p = 8 + (uint64_t)sizeof_size;
  while (p < size) {
    if (size - p < obj_header) break; /* too short for an object: free space */
    const uint32_t idx = (uint32_t)le_bytes(bytes + p, 2);
    const uint64_t osize = le_bytes(bytes + p + 8, sizeof_size);
    if (idx == 0) { /* free space, its size counting its header */
      if (osize < obj_header) return -1; /* libhdf5 would walk in place forever */
      if (osize >= size - p) break;
      p += osize;
      continue;
    }
    if (osize > size - p - obj_header) return -1;
    const uint64_t padded = (osize + 7) & ~(uint64_t)7;
    if (!note_object(h, idx, p + obj_header, osize, size)) return -2;
    p += obj_header + padded < size - p ? obj_header + padded : size - p;
  }
  return 0;
}

/* The collection at addr into *out, read and indexed on first use (row:
 * the row that names it, for messages). */
static rs_code collection(heap_cache *c, uint64_t addr, size_t row, const heap_coll **out, rs_error *err)
{
  const rs__h5_heap_rows *r = c->rows;
  rs_code rc;
  if (c->last && c->last->addr == addr) {
    *out = c->last;
    return RS_OK;
  }
  if (c->cap) {
    const size_t i = slot_of(c, addr);
    if (c->slot[i].addr) {
      *out = c->last = &c->slot[i];
      return RS_OK;
    }
  }
  const unsigned header = 8 + r->sizeof_size;
  char what[160];
  unsigned char head[16];
  if (addr == 0 || addr > r->fsize || r->fsize - addr < header) {
    snprintf(what, sizeof what, "its heap collection address %" PRIu64 " is outside the file (%" PRIu64 " bytes)", addr,
             r->fsize);
    return corrupt(r, row, err, what);
  }
  if ((rc = read_at(r, head, header, addr, err))) return rc;
  const uint64_t size = le_bytes(head + 8, r->sizeof_size);
  if (memcmp(head, "GCOL", 4) != 0 || head[4] != 1 || size < header || size > r->fsize - addr) {
    snprintf(what, sizeof what, "no global heap collection at offset %" PRIu64 " (expected \"GCOL\", version 1)", addr);
    return corrupt(r, row, err, what);
  }
  if (c->used && c->bytes + size > HEAP_CACHE_BYTES) cache_clear(c);
  heap_coll h = {.addr = addr};
  if (!take_blocks(c, &h, size)) {
    rc = rs__fail(err, RS_NOMEM, "%s:%s: out of memory for a heap collection of %" PRIu64 " bytes", r->file, r->name,
                  size);
    goto fail;
  }
  memset(h.bytes + size, 0, 8);
  if ((rc = read_at(r, h.bytes, (size_t)size, addr, err))) goto fail;
  const int walked = walk_objects(h.bytes, size, r->sizeof_size, &h);
  if (walked == -1) {
    snprintf(what, sizeof what, "the objects of the heap collection at offset %" PRIu64 " do not fit it", addr);
    rc = corrupt(r, row, err, what);
    goto fail;
  }
  if (walked || (4 * (c->used + 1) > 3 * c->cap && !cache_grow(c))) {
    rc = rs__fail(err, RS_NOMEM, "%s:%s: out of memory", r->file, r->name);
    goto fail;
  }
  const size_t i = slot_of(c, addr);
  c->slot[i] = h;
  c->used++;
  /* the tables count too: a collection of 4 KiB may name index 65535 */
  c->bytes += h.bytes_cap + (uint64_t)h.n_idx * (sizeof *h.obj_at + sizeof *h.obj_size);
  *out = c->last = &c->slot[i];
  return RS_OK;
fail:
  free(h.bytes);
  free(h.obj_at);
  free(h.obj_size);
  return rc;
}

/* The length of the C string libhdf5 makes of an object's len bytes at s:
 * up to the first NUL.  A string of 8 bytes or less is tested as one word
 * (s has 8 readable bytes: see collection), where memchr's call was a
 * tenth of the time. */
static inline size_t c_string_len(const char *s, size_t len)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
  if (len <= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    const uint64_t keep = len == 8 ? ~0ull : (1ull << (8 * len)) - 1;
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    const uint64_t zero = (w - ones) & ~w & highs & keep; /* the lowest flagged byte is exact */
    return zero ? (size_t)(__builtin_ctzll(zero) >> 3) : len;
  }
#endif
  const char *nul = memchr(s, '\0', len);
  return nul ? (size_t)(nul - s) : len;
}

/* Checks the layout of the rows (their place in the file). */
static rs_code check_rows(const rs__h5_heap_rows *r, rs_error *err)
{
  const unsigned sa = r->sizeof_addr, esize = 4 + sa + 4;
  if ((sa != 2 && sa != 4 && sa != 8) || (r->sizeof_size != 2 && r->sizeof_size != 4 && r->sizeof_size != 8))
    return rs__fail(err, RS_UNSUPPORTED, "%s:%s: file addresses of %u bytes and lengths of %u are not supported", r->file,
                    r->name, sa, r->sizeof_size);
  if (r->rows_at > r->fsize || r->n > (r->fsize - r->rows_at) / esize)
    return rs__fail(err, RS_FORMAT, "%s:%s: %zu rows at offset %" PRIu64 " do not fit the file (%" PRIu64 " bytes)", r->file,
                    r->name, r->n, r->rows_at, r->fsize);
  return RS_OK;
}

/* Pass 1 of rs__h5_heap_strings: the bytes the strings need (their
 * lengths plus a NUL each) into *total, each length checked first (a
 * corrupt one must not size an allocation). */
static rs_code sum_lengths(const rs__h5_heap_rows *r, unsigned char *buf, uint64_t *total, rs_error *err)
{
  const unsigned esize = 4 + r->sizeof_addr + 4;
  rs_code rc = RS_OK;
  *total = 0;
  for (size_t i0 = 0; i0 < r->n && !rc; i0 += ROWS_PER_READ) {
    const size_t k = r->n - i0 < ROWS_PER_READ ? r->n - i0 : ROWS_PER_READ;
    if ((rc = read_at(r, buf, k * esize, r->rows_at + (uint64_t)i0 * esize, err))) break;
    for (size_t i = 0; i < k; i++) {
      const uint64_t len = le_bytes(buf + i * esize, 4);
      if (len > r->fsize || (*total += len + 1) > r->max_bytes) {
        char what[160];
        if (len > r->fsize)
          snprintf(what, sizeof what, "the string declares %" PRIu64 " bytes but the file has %" PRIu64 " bytes", len,
                   r->fsize);
        else
          snprintf(what, sizeof what, "the strings declare more than %" PRIu64 " bytes in all", r->max_bytes);
        return corrupt(r, i0 + i, err, what);
      }
    }
  }
  return rc;
}

/* Pass 2: each row's string to fn, from its collection. */
static rs_code visit_rows(const rs__h5_heap_rows *r, unsigned char *buf, rs__h5_heap_fn fn, void *ctx, rs_error *err)
{
  const unsigned sa = r->sizeof_addr, esize = 4 + sa + 4;
  heap_cache cache = {.rows = r};
  rs_code rc = RS_OK;
  for (size_t i0 = 0; i0 < r->n && !rc; i0 += ROWS_PER_READ) {
    const size_t k = r->n - i0 < ROWS_PER_READ ? r->n - i0 : ROWS_PER_READ;
    if ((rc = read_at(r, buf, k * esize, r->rows_at + (uint64_t)i0 * esize, err))) break;
    for (size_t i = 0; i < k; i++) {
      const unsigned char *e = buf + i * esize;
      const uint64_t len = le_bytes(e, 4);
      if (len == 0) { /* libhdf5 reads no heap for an empty row either */
        fn(ctx, r->first_row + i0 + i, "", 0);
        continue;
      }
      if (len > r->fsize) {
        char what[160];
        snprintf(what, sizeof what, "the string declares %" PRIu64 " bytes but the file has %" PRIu64 " bytes", len,
                 r->fsize);
        rc = corrupt(r, i0 + i, err, what);
        break;
      }
      const uint64_t addr = le_bytes(e + 4, sa), idx = le_bytes(e + 4 + sa, 4);
      const heap_coll *h = NULL;
      if ((rc = collection(&cache, addr, i0 + i, &h, err))) break;
      char what[160];
      if (idx == 0 || idx >= h->n_idx || !h->obj_at[idx]) {
        snprintf(what, sizeof what, "heap object %" PRIu64 " is not in the collection at offset %" PRIu64, idx, addr);
        rc = corrupt(r, i0 + i, err, what);
        break;
      }
      if (h->obj_size[idx] != len) {
        snprintf(what, sizeof what, "the row declares %" PRIu64 " bytes, its heap object holds %" PRIu64, len,
                 h->obj_size[idx]);
        rc = corrupt(r, i0 + i, err, what);
        break;
      }
      const char *s = (const char *)h->bytes + h->obj_at[idx];
      fn(ctx, r->first_row + i0 + i, s, c_string_len(s, (size_t)len)); /* a C string, as libhdf5 hands it over */
    }
  }
  cache_free(&cache);
  return rc;
}

rs_code rs__h5_heap_visit(const rs__h5_heap_rows *r, rs__h5_heap_fn fn, void *ctx, rs_error *err)
{
  rs_code rc = check_rows(r, err);
  if (rc) return rc;
  unsigned char *buf = rs__malloc((size_t)ROWS_PER_READ * ROW_MAX);
  if (!buf) return rs__fail(err, RS_NOMEM, "%s:%s: out of memory", r->file, r->name);
  rc = visit_rows(r, buf, fn, ctx, err);
  free(buf);
  return rc;
}

typedef struct {
  char **v;
  char *dst;
  size_t row0; /* the row of v[0] */
} pool_fill;

static void fill_pool(void *vp, size_t row, const char *s, size_t len)
{
  pool_fill *p = vp;
  memcpy(p->dst, s, len);
  p->dst[len] = '\0';
  p->v[row - p->row0] = p->dst;
  p->dst += len + 1;
}

rs_code rs__h5_heap_strings(const rs__h5_heap_rows *r, char ***out, rs_error *err)
{
  rs_code rc = check_rows(r, err);
  if (rc) return rc;
  uint64_t total = 0;
  char **v = NULL;
  unsigned char *buf = rs__malloc((size_t)ROWS_PER_READ * ROW_MAX);
  if (!buf) return rs__fail(err, RS_NOMEM, "%s:%s: out of memory", r->file, r->name);
  if ((rc = sum_lengths(r, buf, &total, err))) goto done;
  if (!(v = rs__malloc(rs__mul(r->n, sizeof *v) + (size_t)total))) {
    rc = rs__fail(err, RS_NOMEM, "%s:%s: out of memory for %zu strings", r->file, r->name, r->n);
    goto done;
  }
  pool_fill p = {v, (char *)(v + r->n), r->first_row};
  if (!(rc = visit_rows(r, buf, fill_pool, &p, err))) *out = v;
done:
  free(buf);
  if (rc) free(v);
  return rc;
}
