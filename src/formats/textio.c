/* textio.c: the only includer of <zlib.h>.  Plain files are read with
 * read(2) straight into the caller's buffer, or mapped whole; gzip streams
 * (any number of concatenated members) are inflated through a fixed
 * staging buffer. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, madvise */
#include "formats/textio.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"

enum { STAGE_SIZE = RS_IO_BLOCK };

struct rs__input {
  int fd;
  int owns_fd;
  int gzip;
  int eof; /* the underlying fd is exhausted */
  int done;
  const char *name;
  unsigned char prefix[2]; /* bytes read to sniff the format */
  size_t n_prefix;
  z_stream zs;
  unsigned char *stage;
  long long plain_size; /* a plain regular file's size, else -1 */
};

const char *rs__input_name(const rs__input *in) { return in->name; }

/* read(2) that retries on EINTR and fills as much as it can. */
static ssize_t read_full(int fd, void *buf, size_t cap)
{
  size_t got = 0;
  while (got < cap) {
    ssize_t r = read(fd, (char *)buf + got, cap - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

rs_code rs__input_open(const char *path, rs__input **out, rs_error *err)
{
  rs__input *in = rs__calloc(1, sizeof *in);
  if (!in) return rs__fail(err, RS_NOMEM, "%s: out of memory", path);
  if (strcmp(path, "-") == 0) {
    in->fd = STDIN_FILENO;
    in->name = "<stdin>";
  } else {
    in->fd = open(path, O_RDONLY);
    in->owns_fd = 1;
    in->name = path;
    if (in->fd < 0) {
      rs_code rc = rs__fail(err, RS_IO, "%s: cannot open: %s", path, strerror(errno));
      free(in);
      return rc;
    }
  }
  ssize_t r = read_full(in->fd, in->prefix, 2);
  if (r < 0) {
    rs_code rc = rs__fail(err, RS_IO, "%s: cannot read: %s", in->name, strerror(errno));
    rs__input_close(in);
    return rc;
  }
  in->n_prefix = (size_t)r;
  if (r < 2) in->eof = 1;
  struct stat st;
  in->plain_size = -1;
  if (in->owns_fd && fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode)) in->plain_size = (long long)st.st_size;
  if (r == 2 && in->prefix[0] == 0x1f && in->prefix[1] == 0x8b) {
    in->gzip = 1;
    in->stage = rs__malloc(STAGE_SIZE);
    if (!in->stage || inflateInit2(&in->zs, 15 + 16) != Z_OK) {
      rs__input_close(in);
      return rs__fail(err, RS_NOMEM, "%s: cannot start gzip decoder", path);
    }
    memcpy(in->stage, in->prefix, 2);
    in->zs.next_in = in->stage;
    in->zs.avail_in = 2;
    in->n_prefix = 0;
    in->plain_size = -1;
  }
  *out = in;
  return RS_OK;
}

static rs_code read_plain(rs__input *in, char *buf, size_t cap, size_t *got, rs_error *err)
{
  size_t n = 0;
  while (in->n_prefix && n < cap) { /* hand out the sniffed bytes first */
    buf[n++] = (char)in->prefix[0];
    in->prefix[0] = in->prefix[1];
    in->n_prefix--;
  }
  if (!in->eof && n < cap) {
    ssize_t r = read_full(in->fd, buf + n, cap - n);
    if (r < 0) return rs__fail(err, RS_IO, "%s: read error: %s", in->name, strerror(errno));
    if ((size_t)r < cap - n) in->eof = 1;
    n += (size_t)r;
  }
  *got = n;
  return RS_OK;
}

static rs_code read_gzip(rs__input *in, char *buf, size_t cap, size_t *got, rs_error *err)
{
  z_stream *zs = &in->zs;
  zs->next_out = (unsigned char *)buf;
  zs->avail_out = cap > UINT32_MAX ? UINT32_MAX : (uInt)cap;
  while (zs->avail_out > 0 && !in->done) {
    if (zs->avail_in == 0 && !in->eof) {
      ssize_t r = read_full(in->fd, in->stage, STAGE_SIZE);
      if (r < 0) return rs__fail(err, RS_IO, "%s: read error: %s", in->name, strerror(errno));
      if (r < STAGE_SIZE) in->eof = 1;
      zs->next_in = in->stage;
      zs->avail_in = (uInt)r;
    }
    int z = inflate(zs, Z_NO_FLUSH);
    if (z == Z_STREAM_END) {
      /* Another gzip member may follow (as `cat a.gz b.gz` makes). */
      if (zs->avail_in == 0 && in->eof) in->done = 1;
      else if (inflateReset(zs) != Z_OK)
        return rs__fail(err, RS_FORMAT, "%s: corrupt gzip stream", in->name);
    } else if (z == Z_BUF_ERROR) {
      if (zs->avail_in == 0 && in->eof)
        return rs__fail(err, RS_FORMAT, "%s: gzip stream is truncated", in->name);
    } else if (z != Z_OK) {
      return rs__fail(err, RS_FORMAT, "%s: corrupt gzip stream (%s)", in->name,
                      zs->msg ? zs->msg : "inflate failed");
    }
  }
  *got = (size_t)(zs->next_out - (unsigned char *)buf);
  return RS_OK;
}

long long rs__input_plain_size(const rs__input *in) { return in->plain_size; }

rs_code rs__input_map(const rs__input *in, size_t pad, rs__mapped *m, rs_error *err)
{
  (void)err;
  memset(m, 0, sizeof *m);
  const long page = sysconf(_SC_PAGESIZE);
  if (in->plain_size < 0 || page <= 0 || (unsigned long long)in->plain_size > SIZE_MAX / 2) return RS_UNSUPPORTED;
  const size_t len = (size_t)in->plain_size, p = (size_t)page;
  const size_t reserved = (len + pad + p - 1) / p * p + p;
  /* Zero pages first, then the file over their start: the bytes after the
   * file's last one are zeros whether they fall in its last page or past
   * it, and a scan may read pad of them. */
  void *base = mmap(NULL, reserved, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return RS_UNSUPPORTED;
  if (len && mmap(base, len, PROT_READ, MAP_PRIVATE | MAP_FIXED, in->fd, 0) == MAP_FAILED) {
    munmap(base, reserved);
    return RS_UNSUPPORTED;
  }
  *m = (rs__mapped){.data = base, .len = len, .base = base, .reserved = reserved};
  return RS_OK;
}

void rs__mapped_release(rs__mapped *m, size_t upto)
{
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0 || upto > m->len) return;
  const size_t to = upto / (size_t)page * (size_t)page;
  if (to <= m->released) return;
  /* Unmodified private file pages: dropping them loses nothing. */
  madvise((char *)m->base + m->released, to - m->released, MADV_DONTNEED);
  m->released = to;
}

void rs__mapped_close(rs__mapped *m)
{
  if (m->base) munmap(m->base, m->reserved);
  memset(m, 0, sizeof *m);
}

static char sigbus_msg[256];
static size_t sigbus_len;
static int sigbus_code;

static void on_sigbus(int sig)
{
  (void)sig;
  ssize_t w = write(STDERR_FILENO, sigbus_msg, sigbus_len);
  (void)w;
  _exit(sigbus_code);
}

void rs__mapped_guard_sigbus(const char *prog, int code)
{
  struct sigaction old, sa;
  if (sigaction(SIGBUS, NULL, &old) != 0 || old.sa_handler != SIG_DFL) return;
  int n = snprintf(sigbus_msg, sizeof sigbus_msg,
                   "%s: an input file shrank while it was being read (SIGBUS); run again once nothing writes it\n",
                   prog);
  sigbus_len = n < 0 ? 0 : (size_t)n < sizeof sigbus_msg ? (size_t)n : sizeof sigbus_msg - 1;
  sigbus_code = code;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigbus;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, NULL);
}

rs_code rs__input_pread(const rs__input *in, char *buf, size_t cap, unsigned long long off, size_t *got,
                        rs_error *err)
{
  size_t n = 0;
  while (n < cap) {
    ssize_t r = pread(in->fd, buf + n, cap - n, (off_t)(off + n));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return rs__fail(err, RS_IO, "%s: read error at byte %llu: %s", in->name, off + n, strerror(errno));
    if (r == 0) break;
    n += (size_t)r;
  }
  *got = n;
  return RS_OK;
}

rs_code rs__input_read(rs__input *in, char *buf, size_t cap, size_t *got, rs_error *err)
{
  return in->gzip ? read_gzip(in, buf, cap, got, err) : read_plain(in, buf, cap, got, err);
}

void rs__input_close(rs__input *in)
{
  if (!in) return;
  if (in->gzip) inflateEnd(&in->zs);
  if (in->owns_fd && in->fd >= 0) close(in->fd);
  free(in->stage);
  free(in);
}

/* The rest of in into a malloc'd buffer followed by pad zero bytes. */
static rs_code read_rest(rs__input *in, size_t pad, char **out, size_t *out_len, rs_error *err)
{
  rs_code rc = RS_OK;
  /* A plain file is read into a buffer of its size at once (no doubling
   * and copying); it may still grow while read. */
  const long long plain = rs__input_plain_size(in);
  size_t cap = plain >= RS_IO_BLOCK && (unsigned long long)plain < SIZE_MAX / 2 ? (size_t)plain + 1 : RS_IO_BLOCK, len = 0;
  char *buf = rs__malloc(cap + pad);
  if (!buf) return rs__fail(err, RS_NOMEM, "%s: out of memory", in->name);
  for (;;) {
    if (len == cap) {
      char *nb = cap > SIZE_MAX / 4 ? NULL : rs__realloc(buf, cap * 2 + pad);
      if (!nb) {
        rc = rs__fail(err, RS_NOMEM, "%s: out of memory reading %zu bytes", in->name, cap * 2);
        goto done;
      }
      buf = nb;
      cap *= 2;
    }
    size_t got = 0;
    if ((rc = rs__input_read(in, buf + len, cap - len, &got, err))) goto done;
    if (got == 0) break;
    len += got;
  }
  memset(buf + len, 0, pad);
  *out = buf;
  *out_len = len;
  buf = NULL;
done:
  free(buf);
  return rc;
}

rs_code rs__read_all(const char *path, char **out, size_t *out_len, rs_error *err)
{
  rs__input *in = NULL;
  rs_code rc = rs__input_open(path, &in, err);
  if (rc) return rc;
  rc = read_rest(in, 1, out, out_len, err);
  rs__input_close(in);
  return rc;
}

rs_code rs__whole_load(const char *path, size_t pad, rs__whole *w, rs_error *err)
{
  memset(w, 0, sizeof *w);
  rs__input *in = NULL;
  rs_code rc = rs__input_open(path, &in, err);
  if (rc) return rc;
  if (rs__input_map(in, pad, &w->map, NULL) == RS_OK) {
    w->data = w->map.data, w->len = w->map.len;
  } else if (!(rc = read_rest(in, pad ? pad : 1, &w->buf, &w->len, err))) {
    w->data = w->buf;
  }
  rs__input_close(in);
  return rc;
}

void rs__whole_free(rs__whole *w)
{
  rs__mapped_close(&w->map);
  free(w->buf);
  memset(w, 0, sizeof *w);
}

rs_code rs__input_lines(const char *path, size_t max_line, const char *too_long, rs__line_fn fn, void *ctx,
                        rs_error *err)
{
  rs__input *in = NULL;
  size_t cap = RS_IO_BLOCK, have = 0, got = 0, line = 0;
  char *buf = rs__malloc(cap);
  if (!buf) return rs__fail(err, RS_NOMEM, "%s: out of memory", path);
  rs_code rc = rs__input_open(path, &in, err);
  for (int eof = 0; !rc && !eof;) {
    if (have == cap) { /* one line longer than the buffer: widen it */
      if (max_line && cap >= max_line) {
        rc = rs__fail(err, RS_UNSUPPORTED, "%s:%zu: a line longer than %zu bytes; %s", path, line + 1, max_line,
                      too_long);
        break;
      }
      char *b = rs__realloc(buf, rs__mul(cap, 2));
      if (!b) {
        rc = rs__fail(err, RS_NOMEM, "%s:%zu: out of memory for a line of %zu bytes", path, line + 1, cap * 2);
        break;
      }
      buf = b;
      cap *= 2;
    }
    if ((rc = rs__input_read(in, buf + have, cap - have, &got, err))) break;
    eof = got == 0;
    have += got;
    size_t start = 0;
    while (!rc) {
      const char *nl = memchr(buf + start, '\n', have - start);
      if (!nl && !(eof && start < have)) break;
      size_t end = nl ? (size_t)(nl - buf) : have, n = end - start;
      const char *s = buf + start;
      line++;
      start = nl ? end + 1 : have;
      if (n && s[n - 1] == '\r') n--;
      if (line == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) s += 3, n -= 3; /* UTF-8 byte order mark */
      size_t k = 0;
      while (k < n && (s[k] == ' ' || s[k] == '\t')) k++;
      if (k < n) rc = fn(ctx, line, s, n, err);
    }
    memmove(buf, buf + start, have - start);
    have -= start;
  }
  rs__input_close(in);
  free(buf);
  return rc;
}
