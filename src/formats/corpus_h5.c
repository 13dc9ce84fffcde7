/* corpus_h5.c: the only file that includes <hdf5.h>.  Opens corpora and run
 * files, checks their layout against format version 1, reads ids and qrels
 * whole and run rows in blocks (hyperslabs); writes corpora for import and
 * the generator.  HDF5 prints nothing: its automatic error stack printing
 * is switched off, and every failure becomes one rs_error that names the
 * file and the dataset. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#define _POSIX_C_SOURCE 200809L
#include "formats/corpus.h"
#include "formats/corpus_mem.h"
#include "formats/h5read.h"
#include "formats/h5_heap.h"
#include "formats/numparse.h"
#include "engine/sched.h"
#include "llm/wire.h" /* rs__utf8_valid */
#include "util/mpi.h"
#include "util/simd.h"
#include "util/tmpfiles.h"

#include <hdf5.h>
#include <inttypes.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

struct rs__h5file {
  hid_t fid;
  char *path;
  /* For pread of contiguous datasets: the file opened a second time, its
   * size, and whether HDF5 addresses are file offsets (default driver, no
   * user block: can_copy). */
  int fd;
  uint64_t size;
  int can_map;
  /* The probe found /queries/id non-empty, UTF-8 and unique (see
   * qid_check): the open need not read the ids to check them. */
  int qids_ok;
  int docs_sorted; /* the probe decoded /docs/id: strictly increasing in strcmp order */
  /* The ids (/queries/id, /docs/id) are read from the file's bytes when
   * their layout allows (rs__h5_heap_strings, or fixed-length ones as they
   * lie: fixed_rows_of; heap_ids: not when files are
   * opened through MPI-IO, see opens_with_mpio); heap_skipped: the ones the
   * probe therefore left undecoded (HEAP_QIDS, HEAP_DOCS), which libhdf5
   * must never read here. */
  int heap_ids;
  unsigned heap_skipped;
  /* A corpus is read while its probe still decodes the string datasets
   * (open_corpus_file): the probe, then its verdict (see file_settle). */
  struct probe_run *pending;
  rs_code probe_rc;
  rs_error probe_err;
};

static void h5_quiet(void)
{
  static int done;
  if (!done) {
    /* No library shutdown at exit: after a failed write (a full disk) it
     * would flush the file again and segfault in H5F__close_cb.  Every file
     * is closed explicitly; the operating system releases the rest. */
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    done = 1;
  }
}

static herr_t find_errno(unsigned n, const H5E_error2_t *e, void *ven)
{
  (void)n;
  int *en = ven;
  const char *p = e->desc ? strstr(e->desc, "errno = ") : NULL;
  if (p && !*en) *en = atoi(p + 8);
  return 0;
}

/* ": <the system's reason>" for HDF5's last failure, or "": HDF5 writes
 * "errno = N" into the description of a failed system call (e.g. 28, No
 * space left on device).  Only N is taken: the description also names the
 * temporary file, which messages never show. */
static const char *h5_reason(void)
{
  static char buf[160];
  int en = 0;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_errno, &en);
  if (en <= 0) return "";
  snprintf(buf, sizeof buf, ": %s", strerror(en));
  return buf;
}

static void close_id(hid_t id)
{
  if (id < 0) return;
  switch (H5Iget_type(id)) {
  case H5I_DATASET: H5Dclose(id); break;
  case H5I_DATASPACE: H5Sclose(id); break;
  case H5I_DATATYPE: H5Tclose(id); break;
  case H5I_GROUP: H5Gclose(id); break;
  case H5I_ATTR: H5Aclose(id); break;
  case H5I_GENPROP_LST: H5Pclose(id); break;
  case H5I_FILE: H5Fclose(id); break;
  default: break;
  }
}

static const char *class_name(H5T_class_t c)
{
  switch (c) {
  case H5T_INTEGER: return "integer";
  case H5T_FLOAT: return "float";
  case H5T_STRING: return "string";
  case H5T_COMPOUND: return "compound";
  case H5T_ENUM: return "enum (boolean?)";
  case H5T_ARRAY: return "array";
  case H5T_VLEN: return "variable-length sequence";
  case H5T_OPAQUE: return "opaque";
  case H5T_BITFIELD: return "bitfield";
  case H5T_REFERENCE: return "reference";
  default: return "unknown type";
  }
}

/* The most a dataset may declare, in bytes, for a file of file_size bytes.
 * Data in a file is at most deflate-compressed, and deflate cannot expand
 * more than 1032:1; a larger declaration means chunks that were never
 * written (fill values), which would make us allocate memory the file does
 * not back.  1 MiB of slack keeps tiny files with empty datasets fine. */
static uint64_t declared_max(uint64_t file_size)
{
  const uint64_t ratio = 1100;
  if (file_size > (UINT64_MAX - (1u << 20)) / ratio) return UINT64_MAX;
  return file_size * ratio + (1u << 20);
}

/* Elements times element size, saturating. */
static uint64_t declared_bytes(int rank, const hsize_t *dims, size_t esize)
{
  uint64_t b = esize ? esize : 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] && b > UINT64_MAX / dims[i]) return UINT64_MAX;
    b *= dims[i];
  }
  return rank >= 0 ? b : UINT64_MAX;
}

/* The size of the file holding object id, or 0 if unknown. */
static uint64_t file_size_of(hid_t id)
{
  hid_t fid = H5Iget_file_id(id);
  hsize_t sz = 0;
  if (fid < 0) return 0;
  if (H5Fget_filesize(fid, &sz) < 0) sz = 0;
  H5Fclose(fid);
  return (uint64_t)sz;
}

/* Describes a dataset: its type class, element size, signedness and shape. */
typedef struct {
  H5T_class_t cls;
  size_t size;
  int is_signed;
  int rank;
  hsize_t dims[2];
} dset_info;

/* A dataset compressed by a filter this libhdf5 cannot apply (its plugin
 * not installed, or not on HDF5_PLUGIN_PATH) fails here, with the filter
 * named, rather than at its first read as "cannot read rows". */
static rs_code check_filters(hid_t d, const char *file, const char *name, rs_error *err)
{
  const hid_t p = H5Dget_create_plist(d);
  if (p < 0) return RS_OK; /* then the read says what is wrong */
  const int n = H5Pget_nfilters(p);
  rs_code rc = RS_OK;
  for (int i = 0; i < n && !rc; i++) {
    unsigned flags = 0, config = 0;
    size_t n_values = 0;
    char what[64] = "";
    const H5Z_filter_t id = H5Pget_filter2(p, (unsigned)i, &flags, &n_values, NULL, sizeof what, what, &config);
    if (id < 0 || H5Zfilter_avail(id) > 0) continue;
    what[strcspn(what, ";")] = '\0'; /* "HDF5 lz4 filter; see http://..." */
    for (char *c = what; *c; c++)      /* the name is the file's: printable bytes only */
      if (*c < 0x20 || *c > 0x7e) *c = '?';
    rc = rs__fail(err, RS_UNSUPPORTED,
                  "%s:%s: compressed with HDF5 filter %d%s%s%s, which this libhdf5 cannot apply; install its "
                  "plugin (Debian: hdf5-filter-plugin for LZ4 and bzip2, hdf5-filter-plugin-blosc-serial for Blosc) "
                  "or point HDF5_PLUGIN_PATH at it",
                  file, name, (int)id, *what ? " (\"" : "", what, *what ? "\")" : "");
  }
  H5Pclose(p);
  return rc;
}

static rs_code dset_describe(hid_t d, const char *file, const char *name, dset_info *di, rs_error *err)
{
  hid_t t = H5Dget_type(d), s = H5Dget_space(d);
  rs_code rc = RS_OK;
  if (t < 0 || s < 0) {
    rc = rs__fail(err, RS_IO, "%s:%s: cannot read the dataset's type or shape", file, name);
    goto done;
  }
  di->cls = H5Tget_class(t);
  di->size = H5Tget_size(t);
  di->is_signed = di->cls == H5T_INTEGER ? H5Tget_sign(t) == H5T_SGN_2 : 1;
  int r = H5Sget_simple_extent_ndims(s);
  if (r < 0 || r > 2) {
    rc = rs__fail(err, RS_FORMAT, "%s:%s: expected a 1-D or 2-D dataset, found rank %d", file, name, r);
    goto done;
  }
  di->rank = r;
  di->dims[0] = di->dims[1] = 0;
  H5Sget_simple_extent_dims(s, di->dims, NULL);
  /* Checked before anything is sized from the shape: a 16 KB file may
   * declare [2, 2^31] elements (unwritten chunks read as the fill value). */
  const uint64_t fsize = file_size_of(d), bytes = declared_bytes(r, di->dims, di->size);
  if (fsize && bytes > declared_max(fsize)) {
    rc = rs__fail(err, RS_FORMAT,
                  "%s:%s: the dataset declares %" PRIu64 " bytes of data but the file has %" PRIu64
                  " bytes (more than compression can explain: unwritten chunks?); refusing to allocate it",
                  file, name, bytes, fsize);
    goto done;
  }
  rc = check_filters(d, file, name, err);
done:
  close_id(t);
  close_id(s);
  return rc;
}

static int link_exists(hid_t loc, const char *name) { return H5Lexists(loc, name, H5P_DEFAULT) > 0; }

/* Opens dataset `name` under loc, which must exist; shows `shown` in messages. */
static rs_code open_dset(hid_t loc, const char *file, const char *shown, const char *name, hid_t *out,
                         rs_error *err)
{
  if (!link_exists(loc, name)) return rs__fail(err, RS_FORMAT, "%s: missing dataset %s", file, shown);
  hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
  if (d < 0) return rs__fail(err, RS_FORMAT, "%s:%s: expected a dataset, cannot open it as one", file, shown);
  *out = d;
  return RS_OK;
}

/* Checks a numeric dataset: class, rank and (when non-zero) its lengths. */
static rs_code expect_numeric(const dset_info *di, const char *file, const char *name, H5T_class_t cls, int rank,
                              hsize_t dim0, const char *what, rs_error *err)
{
  if (di->cls != cls || (cls == H5T_INTEGER && !di->is_signed) || di->size > 8)
    return rs__fail(err, RS_FORMAT, "%s:%s: expected %s, found %s%s of %zu bytes", file, name, what,
                    di->cls == H5T_INTEGER && !di->is_signed ? "unsigned " : "", class_name(di->cls), di->size);
  if (di->rank != rank) {
    if (rank == 1)
      return rs__fail(err, RS_FORMAT, "%s:%s: expected a 1-D dataset, found rank %d", file, name, di->rank);
    return rs__fail(err, RS_FORMAT, "%s:%s: expected a 2-D dataset [queries, K], found rank %d", file, name,
                    di->rank);
  }
  if (dim0 && di->dims[0] != dim0)
    return rs__fail(err, RS_FORMAT, "%s:%s: expected %" PRIu64 " rows, found %" PRIu64, file, name, (uint64_t)dim0,
                    (uint64_t)di->dims[0]);
  return RS_OK;
}

/* Reads rows [r0, r0 + n) of a 1-D or 2-D dataset (all columns) as mtype. */
static rs_code read_rows(hid_t d, const char *file, const char *name, hid_t mtype, int rank, hsize_t r0, hsize_t n,
                         hsize_t cols, void *buf, rs_error *err)
{
  if (n == 0 || (rank == 2 && cols == 0)) return RS_OK;
  hid_t fs = H5Dget_space(d), ms = -1;
  hsize_t start[2] = {r0, 0}, count[2] = {n, cols};
  rs_code rc = RS_OK;
  if (fs < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
      (ms = H5Screate_simple(rank, count, NULL)) < 0 || H5Dread(d, mtype, ms, fs, H5P_DEFAULT, buf) < 0)
    rc = rs__fail(err, RS_IO, "%s:%s: cannot read rows %" PRIu64 "..%" PRIu64, file, name, (uint64_t)r0,
                  (uint64_t)(r0 + n - 1));
  close_id(ms);
  close_id(fs);
  return rc;
}

/* Reads n bytes at off in the file (short: the file is shorter than its
 * datasets say, or changed while it was read). */
static rs_code pread_all(int fd, void *buf, size_t n, uint64_t off, const char *file, const char *name, rs_error *err)
{
  size_t done = 0;
  while (done < n) {
    const ssize_t got = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      return rs__fail(err, RS_IO, "%s:%s: cannot read %zu bytes at offset %" PRIu64 ": %s", file, name, n, off,
                      got < 0 ? strerror(errno) : "the file is shorter than its datasets say");
    done += (size_t)got;
  }
  return RS_OK;
}

/* --- strings ----------------------------------------------------------- */

/* Copies n strings into one pool: out[i] points into it. */
static rs_code pool_strings(const char *const *src, const size_t *len, size_t n, char ***out, rs_error *err)
{
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += len[i] + 1;
  char **v = rs__malloc(rs__mul(n, sizeof *v) + total);
  if (!v) return rs__fail(err, RS_NOMEM, "out of memory for %zu strings", n);
  char *p = (char *)(v + n);
  for (size_t i = 0; i < n; i++) {
    if (len[i]) memcpy(p, src[i], len[i]);
    p[len[i]] = '\0';
    v[i] = p;
    p += len[i] + 1;
  }
  *out = v;
  return RS_OK;
}

/* Checks that the opened dataset d is 1-D strings (`want` of them unless
 * want is SIZE_MAX) and gives its length. */
static rs_code check_strings(hid_t d, const char *file, const char *name, size_t want, size_t *n_out, rs_error *err)
{
  dset_info di;
  rs_code rc = dset_describe(d, file, name, &di, err);
  if (rc) return rc;
  if (di.cls != H5T_STRING || di.rank != 1)
    return rs__fail(err, RS_FORMAT, "%s:%s: expected 1-D strings, found %d-D %s", file, name, di.rank,
                    class_name(di.cls));
  if (want != SIZE_MAX && (size_t)di.dims[0] != want)
    return rs__fail(err, RS_FORMAT, "%s:%s: expected %zu strings (%s), found %zu", file, name, want,
                    strncmp(name, "/docs/", 6) == 0 ? "one per doc of /docs/id" : "one per query", (size_t)di.dims[0]);
  *n_out = (size_t)di.dims[0];
  return RS_OK;
}

/* As check_strings, for a dataset given by name: its layout, not its data. */
static rs_code describe_strings(hid_t loc, const char *file, const char *name, size_t want, size_t *n_out,
                                rs_error *err)
{
  hid_t d = -1;
  rs_code rc = open_dset(loc, file, name, name, &d, err);
  if (!rc) rc = check_strings(d, file, name, want, n_out, err);
  close_id(d);
  return rc;
}

/* Where 1-D dataset d's rows start in the file when they lie there as
 * they are, each esize bytes (0: the caller's own row size, given after
 * the file's address and length sizes are known): contiguous storage, no
 * filter or external file, no user block (HDF5 addresses are file offsets:
 * the caller also knows the driver, see can_copy), at least one row, all
 * rows inside the file (fsize bytes).  0 when libhdf5 must read them. */
static uint64_t rows_in_place(hid_t d, uint64_t fsize, uint64_t esize, size_t *n_out, unsigned *sizeof_addr_out,
                              unsigned *sizeof_size_out)
{
  uint64_t at = 0;
  hid_t s = H5Dget_space(d), dcpl = H5Dget_create_plist(d), fid = H5Iget_file_id(d), fcpl = -1;
  size_t sizeof_addr = 0, sizeof_size = 0;
  hsize_t n = 0, userblock = 1;
  if (s >= 0 && H5Sget_simple_extent_ndims(s) == 1 && H5Sget_simple_extent_dims(s, &n, NULL) == 1 && n > 0 &&
      dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_nfilters(dcpl) == 0 &&
      H5Pget_external_count(dcpl) == 0 && fid >= 0 && (fcpl = H5Fget_create_plist(fid)) >= 0 &&
      H5Pget_sizes(fcpl, &sizeof_addr, &sizeof_size) >= 0 && H5Pget_userblock(fcpl, &userblock) >= 0 &&
      userblock == 0 && (sizeof_addr == 2 || sizeof_addr == 4 || sizeof_addr == 8) &&
      (sizeof_size == 2 || sizeof_size == 4 || sizeof_size == 8)) {
    const haddr_t a = H5Dget_offset(d);
    if (!esize) esize = 4 + (uint64_t)sizeof_addr + 4; /* a variable-length string's row (h5_heap.h) */
    if (a != HADDR_UNDEF && a > 0 && a <= fsize && n <= (fsize - a) / esize) {
      at = (uint64_t)a;
      *n_out = (size_t)n;
      *sizeof_addr_out = (unsigned)sizeof_addr;
      *sizeof_size_out = (unsigned)sizeof_size;
    }
  }
  close_id(fcpl);
  close_id(fid);
  close_id(dcpl);
  close_id(s);
  return at;
}

/* The place of 1-D dataset d's variable-length strings when
 * rs__h5_heap_strings can read them from the file (fsize bytes): see
 * rows_in_place.  1 with rows' place and encoding set (not fd, max_bytes,
 * file, name); 0 when libhdf5 must read them. */
static int heap_rows_of(hid_t d, uint64_t fsize, rs__h5_heap_rows *rows)
{
  hid_t t = H5Dget_type(d);
  const int vlen = t >= 0 && H5Tis_variable_str(t) > 0;
  close_id(t);
  size_t n = 0;
  unsigned sa = 0, ss = 0;
  const uint64_t at = vlen ? rows_in_place(d, fsize, 0, &n, &sa, &ss) : 0;
  if (!at) return 0;
  memset(rows, 0, sizeof *rows);
  rows->fsize = fsize;
  rows->rows_at = at;
  rows->n = n;
  rows->sizeof_addr = sa;
  rows->sizeof_size = ss;
  return 1;
}

/* The memory type read_strings reads fixed-length strings of file type ft
 * into: the file's own size, padding and character set. */
static hid_t fixed_string_type(hid_t ft)
{
  hid_t mt = H5Tcopy(H5T_C_S1);
  if (mt >= 0 && (H5Tset_cset(mt, H5Tget_cset(ft)) < 0 || H5Tset_size(mt, H5Tget_size(ft)) < 0 ||
                  H5Tset_strpad(mt, H5Tget_strpad(ft)) < 0)) {
    H5Tclose(mt);
    mt = -1;
  }
  return mt;
}

/* 1-D fixed-length strings in the file as read_strings reads them. */
typedef struct {
  uint64_t at;     /* the first row's offset in the file */
  size_t n, width; /* rows, and bytes a row */
  int space_pad;   /* trailing spaces are padding (fixed_len) */
} fixed_rows;

/* 1 with *fr set when dataset d's fixed-length strings can be read from
 * the file's bytes (rows_in_place): their file type equals the memory type
 * read_strings asks for, so libhdf5 converts nothing and hands over the
 * bytes the file holds.  0 when libhdf5 must read them. */
static int fixed_rows_of(hid_t d, uint64_t fsize, fixed_rows *fr)
{
  hid_t ft = H5Dget_type(d), mt = -1;
  int ok = 0;
  if (ft >= 0 && H5Tget_class(ft) == H5T_STRING && H5Tis_variable_str(ft) == 0 && (mt = fixed_string_type(ft)) >= 0 &&
      H5Tequal(ft, mt) > 0) {
    const size_t w = H5Tget_size(ft);
    size_t n = 0;
    unsigned sa = 0, ss = 0;
    const uint64_t at = w > 0 ? rows_in_place(d, fsize, w, &n, &sa, &ss) : 0;
    if (at) {
      *fr = (fixed_rows){.at = at, .n = n, .width = w, .space_pad = H5Tget_strpad(ft) == H5T_STR_SPACEPAD};
      ok = 1;
    }
  }
  close_id(mt);
  close_id(ft);
  return ok;
}

/* The first variable-length string of dataset d (in the file at path,
 * fsize bytes) that declares more bytes than the file has, or -1.
 * libhdf5 allocates and clears a buffer of the declared length before it
 * reads a string: one corrupt length in a 17 KB file costs it 800 MB and
 * seconds (up to 4 GiB).  In contiguous storage each row is a 4-byte
 * little-endian length and a global heap ID (heap_rows_of), so the lengths
 * are read from the file here first.  Other layouts are left to libhdf5
 * (-1). */
static int64_t vlen_too_long(const char *path, hid_t d, uint64_t fsize, uint32_t *len_out)
{
  int64_t bad = -1;
  int fd = -1;
  unsigned char *buf = NULL;
  rs__h5_heap_rows rows;
  if (!heap_rows_of(d, fsize, &rows)) return -1;
  const uint64_t esize = 4 + (uint64_t)rows.sizeof_addr + 4, addr = rows.rows_at, n = rows.n;
  enum { PER_READ = 4096 };
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || !(buf = malloc(PER_READ * esize))) goto done;
  for (uint64_t i0 = 0; i0 < n && bad < 0; i0 += PER_READ) {
    const uint64_t k = n - i0 < PER_READ ? n - i0 : PER_READ;
    if (pread(fd, buf, (size_t)(k * esize), (off_t)(addr + i0 * esize)) != (ssize_t)(k * esize)) break;
    for (uint64_t i = 0; i < k; i++) {
      const unsigned char *e = buf + i * esize;
      const uint32_t len = (uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24;
      if (len > fsize) {
        bad = (int64_t)(i0 + i);
        *len_out = len;
        break;
      }
    }
  }
done:
  free(buf);
  if (fd >= 0) close(fd);
  return bad;
}

/* strcmp's order of two strings given with their lengths (no NUL inside). */
static int cmp_counted(const char *a, size_t la, const char *b, size_t lb)
{
  const int c = memcmp(a, b, la < lb ? la : lb);
  return c ? c : (la > lb) - (la < lb);
}

/* The length read_strings gives a fixed-length string of w bytes: up to
 * its first NUL, less trailing spaces when the type pads with spaces. */
static size_t fixed_len(const char *s, size_t w, int space_pad)
{
  const char *nul = memchr(s, '\0', w);
  size_t l = nul ? (size_t)(nul - s) : w;
  while (space_pad && l > 0 && s[l - 1] == ' ') l--;
  return l;
}

/* n fixed-length strings of w bytes at fbuf into a pool, as C strings
 * (fixed_len): straight in (w + 1 bytes a string at most), no pointer and
 * length arrays for millions of doc ids. */
static rs_code pool_fixed(const char *fbuf, size_t n, size_t w, int space_pad, char ***out, const char *file,
                          const char *name, rs_error *err)
{
  char **v = rs__malloc(rs__mul(n, sizeof *v) + rs__mul(n, w + 1));
  if (!v) return rs__fail(err, RS_NOMEM, "%s:%s: out of memory for %zu strings", file, name, n);
  char *p = (char *)(v + n);
  for (size_t i = 0; i < n; i++) {
    const char *src = fbuf + i * w;
    const size_t l = fixed_len(src, w, space_pad);
    memcpy(p, src, l);
    p[l] = '\0';
    v[i] = p;
    p += l + 1;
  }
  *out = v;
  return RS_OK;
}

/* Reads a 1-D string dataset (variable- or fixed-length) into a pool. */
static rs_code read_strings(hid_t loc, const char *file, const char *name, size_t want, char ***out, size_t *n_out,
                            rs_error *err)
{
  hid_t d = -1, ft = -1, mt = -1, space = -1;
  char **vbuf = NULL, *fbuf = NULL;
  const char **ptr = NULL;
  size_t *len = NULL;
  size_t n = 0;
  rs_code rc = open_dset(loc, file, name, name, &d, err);
  if (rc || (rc = check_strings(d, file, name, want, &n, err))) goto done;
  ft = H5Dget_type(d);
  space = H5Dget_space(d);
  mt = H5Tcopy(H5T_C_S1);
  H5Tset_cset(mt, H5Tget_cset(ft));
  if (H5Tis_variable_str(ft) > 0) {
    const uint64_t fsize = file_size_of(d);
    uint32_t len_bad = 0;
    const int64_t row_bad = vlen_too_long(file, d, fsize, &len_bad);
    if (row_bad >= 0) {
      rc = rs__fail(err, RS_FORMAT,
                    "%s:%s: row %" PRId64 ": the string declares %" PRIu32 " bytes but the file has %" PRIu64
                    " bytes: the file is corrupt; write it again (ragsweep import) or restore it",
                    file, name, row_bad, len_bad, fsize);
      goto done;
    }
    ptr = rs__malloc(rs__mul(n, sizeof *ptr));
    len = rs__malloc(rs__mul(n, sizeof *len));
    if (!ptr || !len) { rc = rs__fail(err, RS_NOMEM, "%s:%s: out of memory for %zu strings", file, name, n); goto done; }
    H5Tset_size(mt, H5T_VARIABLE);
    vbuf = rs__calloc(n, sizeof *vbuf);
    if (!vbuf) { rc = rs__fail(err, RS_NOMEM, "%s:%s: out of memory", file, name); goto done; }
    if (n && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, vbuf) < 0) {
      /* A read that fails part way has already handed over some strings:
       * done reclaims them (vbuf was zeroed, so the rest read as NULL). */
      rc = rs__fail(err, RS_IO, "%s:%s: cannot read the strings", file, name);
      goto done;
    }
    for (size_t i = 0; i < n; i++) {
      ptr[i] = vbuf[i] ? vbuf[i] : "";
      len[i] = strlen(ptr[i]);
    }
  } else {
    const size_t w = H5Tget_size(ft);
    H5Tset_size(mt, w);
    H5Tset_strpad(mt, H5Tget_strpad(ft));
    fbuf = rs__malloc(rs__mul(n, w));
    if (!fbuf) { rc = rs__fail(err, RS_NOMEM, "%s:%s: out of memory", file, name); goto done; }
    if (n && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, fbuf) < 0) {
      rc = rs__fail(err, RS_IO, "%s:%s: cannot read the strings", file, name);
      goto done;
    }
    if (!(rc = pool_fixed(fbuf, n, w, H5Tget_strpad(ft) == H5T_STR_SPACEPAD, out, file, name, err))) *n_out = n;
    goto done;
  }
  if ((rc = pool_strings(ptr, len, n, out, err))) goto done;
  *n_out = n;
done:
  if (vbuf) {
    H5Dvlen_reclaim(mt, space, H5P_DEFAULT, vbuf);
    free(vbuf);
  }
  free(fbuf);
  free(ptr);
  free(len);
  close_id(mt);
  close_id(space);
  close_id(ft);
  close_id(d);
  return rc;
}

/* --- attributes ---------------------------------------------------------- */

typedef struct {
  const char *file;
  const char *group;
  int bools; /* accept h5py's booleans (read as "true" / "false") */
  rs__attr *a;
  size_t n, cap;
  rs_code rc;
  rs_error *err;
} attr_walk;

/* 1 for the type h5py writes for a numpy.bool_: an enum over a 1-byte
 * integer with the members FALSE = 0 and TRUE = 1. */
static int is_h5py_bool(hid_t t)
{
  if (H5Tget_class(t) != H5T_ENUM || H5Tget_size(t) != 1 || H5Tget_nmembers(t) != 2) return 0;
  signed char v = 0;
  return H5Tenum_valueof(t, "FALSE", &v) >= 0 && v == 0 && H5Tenum_valueof(t, "TRUE", &v) >= 0 && v == 1;
}

static herr_t collect_attr(hid_t loc, const char *name, const H5A_info_t *info, void *vw)
{
  (void)info;
  attr_walk *w = vw;
  hid_t at = H5Aopen(loc, name, H5P_DEFAULT), t = -1, s = -1, mt = -1;
  rs__attr a = {0};
  if (at < 0) {
    w->rc = rs__fail(w->err, RS_IO, "%s:%s: cannot open attribute '%s'", w->file, w->group, name);
    return -1;
  }
  t = H5Aget_type(at);
  s = H5Aget_space(at);
  H5T_class_t cls = H5Tget_class(t);
  hssize_t npts = H5Sget_simple_extent_npoints(s);
  const int boolean = w->bools && cls == H5T_ENUM && is_h5py_bool(t);
  if (npts != 1 || (cls != H5T_STRING && cls != H5T_INTEGER && cls != H5T_FLOAT && !boolean)) {
    w->rc = rs__fail(w->err, RS_FORMAT,
                     "%s:%s: attribute '%s': expected one string or number, found %lld value(s) of type %s", w->file,
                     w->group, name, (long long)npts, class_name(cls));
    goto fail;
  }
  a.key = strdup(name);
  if (!a.key) goto nomem;
  if (cls == H5T_STRING) {
    a.kind = RS_ATTR_STRING;
    mt = H5Tcopy(H5T_C_S1);
    H5Tset_cset(mt, H5Tget_cset(t));
    if (H5Tis_variable_str(t) > 0) {
      char *v = NULL;
      H5Tset_size(mt, H5T_VARIABLE);
      if (H5Aread(at, mt, &v) < 0) goto ioerr;
      a.text = strdup(v ? v : "");
      H5free_memory(v);
    } else {
      size_t sz = H5Tget_size(t);
      H5Tset_size(mt, sz);
      H5Tset_strpad(mt, H5Tget_strpad(t));
      char *v = rs__calloc(sz + 1, 1);
      if (!v) goto nomem;
      if (H5Aread(at, mt, v) < 0) {
        free(v);
        goto ioerr;
      }
      a.text = v;
    }
    if (!a.text) goto nomem;
  } else if (boolean) {
    /* Read through the file's own enum type (1 byte, values 0 and 1). */
    signed char v = 0;
    if (H5Aread(at, t, &v) < 0) goto ioerr;
    a.kind = RS_ATTR_STRING;
    if (!(a.text = strdup(v ? "true" : "false"))) goto nomem;
  } else if (cls == H5T_INTEGER) {
    long long v = 0;
    if (H5Aread(at, H5T_NATIVE_LLONG, &v) < 0) goto ioerr;
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    a.kind = RS_ATTR_INT;
    a.num = (double)v;
    if (!(a.text = strdup(buf))) goto nomem;
  } else {
    double v = 0;
    if (H5Aread(at, H5T_NATIVE_DOUBLE, &v) < 0) goto ioerr;
    a.kind = RS_ATTR_FLOAT;
    a.num = v;
    char buf[32];
    rs__format_double(v, buf);
    if (!(a.text = strdup(buf))) goto nomem;
  }
  if (w->n == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 8;
    rs__attr *na = rs__realloc(w->a, rs__mul(cap, sizeof *na));
    if (!na) goto nomem;
    w->a = na;
    w->cap = cap;
  }
  w->a[w->n++] = a;
  close_id(mt);
  close_id(s);
  close_id(t);
  close_id(at);
  return 0;
ioerr:
  w->rc = rs__fail(w->err, RS_IO, "%s:%s: cannot read attribute '%s'", w->file, w->group, name);
  goto fail;
nomem:
  w->rc = rs__fail(w->err, RS_NOMEM, "out of memory");
fail:
  free(a.key);
  free(a.text);
  close_id(mt);
  close_id(s);
  close_id(t);
  close_id(at);
  return -1;
}

static int cmp_attr(const void *x, const void *y)
{
  return strcmp(((const rs__attr *)x)->key, ((const rs__attr *)y)->key);
}

static void free_attrs(rs__attr *a, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    free(a[i].key);
    free(a[i].text);
  }
  free(a);
}

/* --- runs ---------------------------------------------------------------- */

typedef struct {
  char **name;
  size_t n, cap;
  int oom;
} name_list;

static herr_t collect_name(hid_t g, const char *name, const H5L_info_t *info, void *vl)
{
  (void)g;
  (void)info;
  name_list *l = vl;
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    char **nn = rs__realloc(l->name, rs__mul(cap, sizeof *nn));
    if (!nn) { l->oom = 1; return -1; }
    l->name = nn;
    l->cap = cap;
  }
  if (!(l->name[l->n] = strdup(name))) { l->oom = 1; return -1; }
  l->n++;
  return 0;
}

static void free_run(rs__run *r)
{
  free(r->name);
  free_attrs(r->attrs, r->n_attrs);
}

/* Where a dataset's elements start in the file when they can be copied
 * from it as they are: contiguous storage, no filter or external file, the
 * machine's own type, aligned, inside a file of fsize bytes.  0 otherwise
 * (the superblock is at 0, so no dataset starts there).  The caller must
 * know that HDF5 addresses are file offsets (see can_copy). */
static uint64_t contiguous_addr(hid_t d, hid_t native, size_t esize, uint64_t n_elems, uint64_t fsize)
{
  uint64_t addr = 0;
  hid_t dcpl = H5Dget_create_plist(d), type = H5Dget_type(d);
  if (n_elems == 0 || dcpl < 0 || type < 0 || H5Pget_layout(dcpl) != H5D_CONTIGUOUS || H5Pget_nfilters(dcpl) != 0 ||
      H5Pget_external_count(dcpl) != 0 || H5Tequal(type, native) <= 0)
    goto done;
  haddr_t a = H5Dget_offset(d);
  /* Elements must be aligned to be used in place (h5py's files often are
   * not: those datasets are read through HDF5). */
  if (a == HADDR_UNDEF || a == 0 || a % esize != 0 || a > fsize || n_elems > (fsize - a) / esize) goto done;
  addr = (uint64_t)a;
done:
  close_id(type);
  close_id(dcpl);
  return addr;
}

/* 1 when HDF5 addresses in file fid are offsets in the file: the default
 * driver and no user block. */
static int can_copy(hid_t fid)
{
  hid_t fcpl = H5Fget_create_plist(fid), fapl = H5Fget_access_plist(fid);
  hsize_t userblock = 1;
  const int ok = fcpl >= 0 && fapl >= 0 && H5Pget_userblock(fcpl, &userblock) >= 0 && userblock == 0 &&
                 H5Pget_driver(fapl) == H5FD_SEC2;
  close_id(fcpl);
  close_id(fapl);
  return ok;
}

/* Reads element 0 of d through HDF5 into out (esize bytes). */
static int read_first(hid_t d, hid_t native, void *out)
{
  hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, (hsize_t[]){1}, NULL);
  int ndims = fs >= 0 ? H5Sget_simple_extent_ndims(fs) : -1;
  hsize_t start[2] = {0, 0}, count[2] = {1, 1};
  const int ok = ndims >= 1 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
                 H5Dread(d, native, ms, fs, H5P_DEFAULT, out) >= 0;
  close_id(ms);
  close_id(fs);
  return ok;
}

/* The byte offset of a dataset's elements in the file when rs__run_read
 * can copy them with pread (contiguous_addr), else 0.  The first element is
 * read both ways and compared, so a wrong address can never be used. */
static uint64_t direct_addr(const rs__h5file *f, hid_t d, hid_t native, size_t esize, uint64_t n_elems)
{
  if (!f->can_map) return 0;
  const uint64_t a = contiguous_addr(d, native, esize, n_elems, f->size);
  unsigned char via_hdf5[8], via_file[8];
  if (!a || !read_first(d, native, via_hdf5) || pread(f->fd, via_file, esize, (off_t)a) != (ssize_t)esize ||
      memcmp(via_hdf5, via_file, esize) != 0)
    return 0;
  return a;
}

/* Checks the layout of /runs/<name> and fills r. */
static rs_code open_run(rs__h5file *f, hid_t runs, const char *name, size_t nq, rs__run *r, rs_error *err)
{
  char shown[600];
  rs_code rc = RS_OK;
  hid_t g = -1, d = -1;
  dset_info di;
  memset(r, 0, sizeof *r);
  r->path = f->path;
  r->file = f;
  if (!(r->name = strdup(name))) return rs__fail(err, RS_NOMEM, "out of memory");
  if ((g = H5Gopen2(runs, name, H5P_DEFAULT)) < 0) {
    rc = rs__fail(err, RS_FORMAT, "%s:/runs/%s: expected a group holding a run's datasets", f->path, name);
    goto done;
  }
#define SHOW(ds) (snprintf(shown, sizeof shown, "/runs/%s/%s", name, ds), shown)
  r->csr = link_exists(g, "offsets");
  if (r->csr) {
    if ((rc = open_dset(g, f->path, SHOW("offsets"), "offsets", &d, err))) goto done;
    if ((rc = dset_describe(d, f->path, shown, &di, err)) ||
        (rc = expect_numeric(&di, f->path, shown, H5T_INTEGER, 1, nq + 1, "integer offsets [nq + 1]", err)))
      goto done;
    close_id(d);
    d = -1;
  }
  if ((rc = open_dset(g, f->path, SHOW("doc"), "doc", &d, err))) goto done;
  if ((rc = dset_describe(d, f->path, shown, &di, err))) goto done;
  if ((rc = expect_numeric(&di, f->path, shown, H5T_INTEGER, r->csr ? 1 : 2, r->csr ? 0 : nq,
                           "int32 or int64 doc indexes", err)))
    goto done;
  if (di.size != 4 && di.size != 8) { /* the format says int32 or int64 */
    rc = rs__fail(err, RS_FORMAT, "%s:%s: expected int32 or int64 doc indexes, found %zu-byte integers", f->path,
                  shown, di.size);
    goto done;
  }
  r->n_rows = nq;
  if (r->csr) r->n_docs = di.dims[0];
  else r->k = (size_t)di.dims[1];
  const hsize_t d0 = di.dims[0], d1 = di.dims[1];
  const uint64_t n_elems = (uint64_t)d0 * (r->csr ? 1 : (uint64_t)d1);
  r->doc_addr = direct_addr(f, d, H5T_NATIVE_INT32, sizeof(int32_t), n_elems);
  close_id(d);
  d = -1;
  if ((r->has_score = link_exists(g, "score"))) {
    if ((rc = open_dset(g, f->path, SHOW("score"), "score", &d, err)) ||
        (rc = dset_describe(d, f->path, shown, &di, err)) ||
        (rc = expect_numeric(&di, f->path, shown, H5T_FLOAT, r->csr ? 1 : 2, 0, "float32 or float64 scores", err)))
      goto done;
    if (di.dims[0] != d0 || (!r->csr && di.dims[1] != d1)) {
      rc = rs__fail(err, RS_FORMAT, "%s:%s: expected the shape of doc [%" PRIu64 ", %" PRIu64 "], found [%" PRIu64
                    ", %" PRIu64 "]", f->path, shown, (uint64_t)d0, (uint64_t)(r->csr ? 0 : d1),
                    (uint64_t)di.dims[0], (uint64_t)(r->csr ? 0 : di.dims[1]));
      goto done;
    }
    r->score_f32 = di.size <= 4;
    r->score_addr = direct_addr(f, d, r->score_f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, di.size, n_elems);
    close_id(d);
    d = -1;
  }
  if ((r->has_latency = link_exists(g, "latency"))) {
    if ((rc = open_dset(g, f->path, SHOW("latency"), "latency", &d, err)) ||
        (rc = dset_describe(d, f->path, shown, &di, err)) ||
        (rc = expect_numeric(&di, f->path, shown, H5T_FLOAT, 1, nq, "float32 or float64 latencies in seconds", err)))
      goto done;
    r->latency_f32 = di.size <= 4;
    r->latency_addr = direct_addr(f, d, r->latency_f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, di.size, nq);
    close_id(d);
    d = -1;
  }
#undef SHOW
  snprintf(shown, sizeof shown, "/runs/%s", name);
  attr_walk w = {.file = f->path, .group = shown, .err = err};
  hsize_t idx = 0;
  if (H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &w) < 0) {
    free_attrs(w.a, w.n);
    rc = w.rc ? w.rc : rs__fail(err, RS_IO, "%s:%s: cannot list the attributes", f->path, shown);
    goto done;
  }
  if (w.n) qsort(w.a, w.n, sizeof *w.a, cmp_attr);
  r->attrs = w.a;
  r->n_attrs = w.n;
done:
  close_id(d);
  close_id(g);
  if (rc) free_run(r);
  return rc;
}

static rs_code open_runs(rs__h5file *f, size_t nq, int required, rs__runset *out, rs_error *err)
{
  rs_code rc = RS_OK;
  name_list l = {0};
  hid_t runs = -1;
  out->file = f;
  out->run = NULL;
  out->n = 0;
  if (!link_exists(f->fid, "runs")) {
    if (required) return rs__fail(err, RS_FORMAT, "%s: missing group /runs (a run file holds /runs/<name>/...)", f->path);
    return RS_OK;
  }
  if ((runs = H5Gopen2(f->fid, "runs", H5P_DEFAULT)) < 0)
    return rs__fail(err, RS_FORMAT, "%s:/runs: expected a group", f->path);
  hsize_t idx = 0;
  if (H5Literate(runs, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_name, &l) < 0) {
    rc = l.oom ? rs__fail(err, RS_NOMEM, "out of memory") : rs__fail(err, RS_IO, "%s:/runs: cannot list", f->path);
    goto done;
  }
  if (!(out->run = rs__calloc(l.n, sizeof *out->run))) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
  for (size_t i = 0; i < l.n; i++) {
    if ((rc = open_run(f, runs, l.name[i], nq, &out->run[i], err))) goto done;
    out->n++;
  }
done:
  for (size_t i = 0; i < l.n; i++) free(l.name[i]);
  free(l.name);
  close_id(runs);
  if (rc) {
    for (size_t i = 0; i < out->n; i++) free_run(&out->run[i]);
    free(out->run);
    out->run = NULL;
    out->n = 0;
  }
  return rc;
}

/* --- isolation from libhdf5's own crashes --------------------------------
 *
 * libhdf5 1.10 can segfault decoding a corrupt file (variable-length strings,
 * attributes, object headers, chunk indexes, filter pipelines).  Before the
 * process opens a file, a forked child opens it and decodes every piece the
 * process will later ask HDF5 for: every object header and attribute, every
 * string dataset, and every numeric dataset the process reads (qrels, run
 * offsets, doc, score, latency), block by block into one fixed buffer.  A
 * child that dies by a signal makes the open an RS_FORMAT error naming the
 * object it was decoding; a child that merely finds an error leaves the
 * message to the ordinary checks of the parent. */

enum { PROBE_WHAT = 512, PROBE_BLOCK = 65536, PROBE_NUMBER_BYTES = 1 << 20 };

typedef struct {
  char what[PROBE_WHAT]; /* the object being decoded, shared with the parent */
  const char *skip;      /* a dataset not to read (read later, probed then) */
  const char *path;      /* the file */
  const char *only;      /* if set: read this dataset only */
  const char *const *numbers; /* if set: the numeric datasets the parent reads (NULL-terminated), in place of a corpus's */
  const char *const *links;   /* if set: only look up these root links (NULL-terminated; at most 32) */
  uint32_t links_found;       /* ... bit i: links[i] exists (written by the child) */
  /* ... and when one of these bits is found, tell the parent (a byte 'l'
   * to the pipe) and go on as the probe of the open that follows, with
   * the settings below (see rs__h5_root_links). */
  uint32_t go_on_if;
  uint64_t fsize;
  int can_copy; /* the file's addresses are offsets (can_copy) */
  volatile uint64_t progress; /* bumped by the child at every step, watched by the parent */
  /* Under MPI the ranks share the decoding of data: rank `part` of `parts`
   * decodes the datasets whose position in the visit is part mod parts
   * (headers and attributes: every rank).  The same bytes give the same
   * libhdf5 outcome on every rank, and the outcomes are agreed before the
   * file is opened, so every dataset any rank reads has been decoded. */
  unsigned part, parts;
  uint64_t n_strings, n_numbers; /* datasets of each kind with data to decode, so far in the visit */
  uint64_t n_objects;            /* objects begun, so far in the visit (the same order in every part) */
  /* Set by the parent: string datasets are decoded after the visit of
   * every object (see probe_deferred), and the child writes a byte to its
   * pipe between the two, so that the parent can go on with what the
   * visit has made safe (headers, attributes, numbers) meanwhile. */
  int defer_strings;
  int qids_ok;     /* written by the child: see qid_check */
  int docs_sorted; /* written by the child that decoded /docs/id: see probe_strings */
  /* Written by the child: the first string dataset the parent reads whose
   * H5Dread failed (its place in the visit: unreadable_at - 1).  The parent
   * then refuses the file without decoding it: libhdf5 1.10.8 leaks the
   * strings it had converted before such a failure. */
  char unreadable[PROBE_WHAT];
  uint64_t unreadable_at;
  /* Set by the parent: ids in the layout rs__h5_heap_strings reads are
   * not decoded by libhdf5 here (the parent never asks libhdf5 for them);
   * the child notes which it left (HEAP_QIDS, HEAP_DOCS). */
  int heap_ids;
  unsigned heap_skipped;
  /* Set by the parent for a run file probed in a lane (rs__runsets_open):
   * where the child writes the file's runs as open_runs finds them with the
   * corpus's nq queries (run_layout_write), so that the parent need not
   * open the file with libhdf5 at all (layout_cap bytes; NULL: not asked). */
  unsigned char *layout;
  size_t layout_cap, nq;
} probe_state;

enum { HEAP_QIDS = 1, HEAP_DOCS = 2 };

/* What the children of a probe found (probe_finish). */
typedef struct {
  uint32_t links_found; /* bit i: links[i] exists */
  int qids_ok;          /* qid_check passed (the child decoded /queries/id) */
  int docs_sorted;      /* /docs/id rises in strcmp order (the child decoded it) */
  unsigned heap_skipped;
} probe_found;

/* A child that makes no step for this long is stuck in libhdf5 (some
 * corrupt heaps make it loop forever); one step is one attribute, one
 * block of PROBE_BLOCK strings or of PROBE_NUMBER_BYTES of numbers,
 * milliseconds each. */
#define PROBE_STALL_SECONDS 10.0

static void probe_mark(probe_state *ps, const char *obj, const char *attr)
{
  snprintf(ps->what, sizeof ps->what, "%s%s%s", obj, attr ? " attribute " : "", attr ? attr : "");
  ps->progress++;
}

/* The checks of check_query_ids, made by the child as it decodes
 * /queries/id anyway, so that an aggregate-only sweep never reads the ids
 * (1M of them: 0.5 s through libhdf5, then a sort of the strings).  Each id
 * must be non-empty and UTF-8; uniqueness is checked on 64-bit hashes:
 * distinct hashes prove distinct ids, and two equal ones (a duplicate, or a
 * 1-in-10^7 collision at 1M ids) only send the parent to its own exact
 * check, which names the rows.  The hashes are kept in row order and
 * checked at the end, bucket by bucket of their top bits, each bucket in a
 * table that stays in the cache: one table of all of them missed the cache
 * at nearly every id (1M ids: about 0.1 s of stalls).  Variable-length
 * strings only: fixed-length ones are left to the parent's padding rules. */
typedef struct {
  uint64_t *hash; /* [cap]: the ids' hashes, in row order (NULL: the ids are only checked and counted) */
  size_t n, cap;
  int bad;        /* an id failed, or memory could not be had */
} qid_check;

/* rs__hash_bytes: 8 bytes a step and a final avalanche, so the top bits
 * that qid_hashes_distinct buckets on are well mixed. */
static uint64_t id_hash(const char *s, size_t len) { return rs__hash_bytes(s, len); }

static int qid_check_init(qid_check *q, size_t n)
{
  if (!(q->hash = rs__malloc(rs__mul(n ? n : 1, sizeof *q->hash)))) return 0;
  q->cap = n;
  return 1;
}

/* id (NULL for a NULL string) of len bytes. */
static void qid_check_one(qid_check *q, const char *id, size_t len)
{
  size_t at = 0;
  if (q->bad) return;
  if (!id || !len || !rs__utf8_valid(id, len, &at) || q->n == q->cap) {
    q->bad = 1;
    return;
  }
  if (q->hash) q->hash[q->n] = id_hash(id, len);
  q->n++;
}

/* 1 when the n hashes are distinct.  Bucketed by their top QID_BUCKET_BITS
 * (a counting sort into a second array), then each bucket goes into an
 * open-addressing table keyed by the low bits, whose slots belong to the
 * bucket that stamped them (nothing is cleared between buckets).  On
 * `threads` threads, each pass split in parts: the rows for the count and
 * the scatter (each part writes its own ranges, in bucket-major order), the
 * buckets for the check.  The answer does not depend on the split; the
 * probe child passes 1 (no OpenMP after fork). */
enum { QID_BUCKET_BITS = 12, QID_DISTINCT_PARTS = 16 };

typedef struct {
  const uint64_t *hash;
  size_t n, parts;
  size_t *pos;      /* [parts][n_buckets]: part p's next slot in bucket b */
  size_t *end;      /* [n_buckets]: where bucket b ends in sorted */
  uint64_t *sorted; /* [n]: the hashes, bucket by bucket */
  size_t longest;   /* the largest bucket */
  int distinct[QID_DISTINCT_PARTS];
} distinct_pass;

static inline size_t qid_bucket(uint64_t h) { return (size_t)(h >> (64 - QID_BUCKET_BITS)); }
static inline size_t part_begin(size_t n, size_t parts, size_t p) { return n / parts * p + (p < n % parts ? p : n % parts); }

static void count_part(void *vd, size_t p, int tid)
{
  (void)tid;
  distinct_pass *d = vd;
  size_t *restrict count = d->pos + p * ((size_t)1 << QID_BUCKET_BITS);
  for (size_t i = part_begin(d->n, d->parts, p), e = part_begin(d->n, d->parts, p + 1); i < e; i++)
    count[qid_bucket(d->hash[i])]++;
}

static void scatter_part(void *vd, size_t p, int tid)
{
  (void)tid;
  distinct_pass *d = vd;
  size_t *restrict pos = d->pos + p * ((size_t)1 << QID_BUCKET_BITS);
  uint64_t *restrict sorted = d->sorted;
  for (size_t i = part_begin(d->n, d->parts, p), e = part_begin(d->n, d->parts, p + 1); i < e; i++)
    sorted[pos[qid_bucket(d->hash[i])]++] = d->hash[i];
}

/* The buckets of part p, each through one table of slots stamped by the
 * bucket that filled them. */
static void check_buckets(void *vd, size_t p, int tid)
{
  (void)tid;
  distinct_pass *d = vd;
  const size_t n_buckets = (size_t)1 << QID_BUCKET_BITS;
  size_t cap = 16;
  while (cap < 2 * d->longest) cap *= 2;
  uint64_t *key = malloc(cap * sizeof *key);
  uint32_t *stamp = calloc(cap, sizeof *stamp);
  int distinct = key && stamp;
  const size_t mask = cap - 1;
  for (size_t b = part_begin(n_buckets, d->parts, p), e = part_begin(n_buckets, d->parts, p + 1); b < e && distinct; b++) {
    const uint32_t mark = (uint32_t)b + 1;
    for (size_t i = b ? d->end[b - 1] : 0; i < d->end[b]; i++) {
      const uint64_t x = d->sorted[i];
      size_t h = (size_t)x & mask;
      while (stamp[h] == mark && key[h] != x) h = (h + 1) & mask;
      if (stamp[h] == mark) {
        distinct = 0;
        break;
      }
      stamp[h] = mark, key[h] = x;
    }
  }
  free(key);
  free(stamp);
  d->distinct[p] = distinct;
}

static int qid_hashes_distinct(const uint64_t *hash, size_t n, int threads)
{
  const size_t n_buckets = (size_t)1 << QID_BUCKET_BITS;
  distinct_pass d = {.hash = hash, .n = n, .parts = threads > 1 ? (size_t)threads : 1};
  if (d.parts > QID_DISTINCT_PARTS) d.parts = QID_DISTINCT_PARTS;
  if (d.parts > 1 && n < ((size_t)1 << 16) * d.parts) d.parts = 1; /* too few to be worth a region */
  int distinct = 0;
  d.pos = calloc(d.parts * n_buckets, sizeof *d.pos);
  d.end = malloc(n_buckets * sizeof *d.end);
  d.sorted = rs__malloc(rs__mul(n ? n : 1, sizeof *d.sorted));
  if (!d.pos || !d.end || !d.sorted) goto done;
  rs__parallel_for(d.parts, (int)d.parts, 1, count_part, &d);
  size_t at = 0;
  for (size_t b = 0; b < n_buckets; b++) {
    const size_t first = at;
    for (size_t p = 0; p < d.parts; p++) {
      const size_t k = d.pos[p * n_buckets + b];
      d.pos[p * n_buckets + b] = at;
      at += k;
    }
    d.end[b] = at;
    d.longest = at - first > d.longest ? at - first : d.longest;
  }
  rs__parallel_for(d.parts, (int)d.parts, 1, scatter_part, &d);
  rs__parallel_for(d.parts, (int)d.parts, 1, check_buckets, &d);
  distinct = 1;
  for (size_t p = 0; p < d.parts; p++) distinct &= d.distinct[p];
done:
  free(d.pos);
  free(d.end);
  free(d.sorted);
  return distinct;
}

/* Reads a 1-D string dataset in blocks, as read_strings does (not when a
 * length is impossible: read_strings refuses that file); with qc set,
 * passes each string to it.  With sorted set, *sorted = 1 when every
 * string was read (none NULL) and they rise strictly in strcmp order, as
 * read_strings would give them.  Returns 1 when libhdf5 failed to read a
 * block (the same bytes fail the parent's read of the whole dataset). */
static int probe_strings(const char *path, hid_t d, uint64_t fsize, probe_state *ps, qid_check *qc, int *sorted)
{
  /* The last string of the previous block.  On the stack: the probe
   * allocates nothing libhdf5 does not, so that a corrupt file faults in
   * the child as it would in the parent (longer ids are left to the
   * parent's own check). */
  char prev[256];
  size_t prev_len = 0;
  int in_order = sorted != NULL, has_prev = 0, read_failed = 0;
  hid_t ft = H5Dget_type(d), fs = H5Dget_space(d), mt = -1, ms = -1;
  hsize_t dims[2] = {0, 0};
  if (ft < 0 || fs < 0 || H5Sget_simple_extent_ndims(fs) != 1) goto done;
  H5Sget_simple_extent_dims(fs, dims, NULL);
  const size_t w = H5Tget_size(ft);
  if (declared_bytes(1, dims, w) > declared_max(fsize)) goto done;
  const int vlen = H5Tis_variable_str(ft) > 0, space_pad = !vlen && H5Tget_strpad(ft) == H5T_STR_SPACEPAD;
  uint32_t len_bad = 0;
  if (vlen && vlen_too_long(path, d, fsize, &len_bad) >= 0) goto done;
  if (qc && (!vlen || !qid_check_init(qc, (size_t)dims[0]))) qc = NULL;
  mt = H5Tcopy(H5T_C_S1);
  H5Tset_cset(mt, H5Tget_cset(ft));
  H5Tset_size(mt, vlen ? H5T_VARIABLE : w);
  if (!vlen) H5Tset_strpad(mt, H5Tget_strpad(ft));
  const size_t esize = vlen ? sizeof(char *) : w;
  void *buf = malloc(rs__mul(PROBE_BLOCK, esize ? esize : 1));
  if (!buf) goto done;
  hsize_t r_done = 0;
  for (hsize_t r0 = 0; r0 < dims[0]; r0 += PROBE_BLOCK) {
    hsize_t n = dims[0] - r0 < PROBE_BLOCK ? dims[0] - r0 : PROBE_BLOCK;
    memset(buf, 0, (size_t)n * esize);
    close_id(ms);
    if ((ms = H5Screate_simple(1, &n, NULL)) < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &r0, NULL, &n, NULL) < 0)
      break;
    if (H5Dread(d, mt, ms, fs, H5P_DEFAULT, buf) < 0) {
      read_failed = 1; /* what libhdf5 converted before failing is lost in it: no reclaim can reach it */
      break;
    }
    ((probe_state *)ps)->progress++;
    const char *last = has_prev ? prev : NULL;
    size_t last_len = prev_len;
    for (hsize_t i = 0; i < n && (vlen || in_order); i++) {
      const char *p = vlen ? ((char **)buf)[i] : (const char *)buf + i * w;
      const size_t len = !p ? 0 : vlen ? strlen(p) : fixed_len(p, w, space_pad);
      if (qc) qid_check_one(qc, p, len); /* qc: variable-length only */
      if (in_order) in_order = p && (!last || cmp_counted(last, last_len, p, len) < 0);
      last = p, last_len = len;
    }
    if (in_order && n) { /* keep the block's last string: the block is reused (or reclaimed) below */
      if (last_len >= sizeof prev) in_order = 0;
      else memcpy(prev, last, last_len), prev_len = last_len, has_prev = 1;
    }
    if (vlen) H5Dvlen_reclaim(mt, ms, H5P_DEFAULT, buf);
    r_done = r0 + n;
  }
  free(buf);
  /* every block read, and every id passed */
  if (qc) ps->qids_ok = r_done == dims[0] && !qc->bad && qc->n == dims[0] && qid_hashes_distinct(qc->hash, qc->n, 1);
  if (sorted) *sorted = in_order && r_done == dims[0];
done:
  if (qc) free(qc->hash);
  close_id(ms);
  close_id(mt);
  close_id(fs);
  close_id(ft);
  return read_failed;
}

/* 1 for the numeric datasets the parent reads: /qrels/{offsets,doc,grade}
 * and /runs/NAME/{offsets,doc,score,latency} of a corpus, or the list the
 * caller of rs__h5_open gave.  Others are never read, so a fault in their
 * data could not reach the parent. */
static int parent_reads_numbers(const probe_state *ps, const char *name)
{
  if (ps->numbers) {
    for (const char *const *n = ps->numbers; *n; n++)
      if (name[0] == '/' && strcmp(name + 1, *n) == 0) return 1;
    return 0;
  }
  if (strncmp(name, "/qrels/", 7) == 0)
    return strcmp(name + 7, "offsets") == 0 || strcmp(name + 7, "doc") == 0 || strcmp(name + 7, "grade") == 0;
  if (strncmp(name, "/runs/", 6) != 0) return 0;
  const char *leaf = strchr(name + 6, '/');
  if (!leaf || leaf == name + 6) return 0;
  leaf++;
  return strcmp(leaf, "offsets") == 0 || strcmp(leaf, "doc") == 0 || strcmp(leaf, "score") == 0 ||
         strcmp(leaf, "latency") == 0;
}

/* Reads a 1-D or 2-D numeric dataset whole, in blocks of at most
 * PROBE_NUMBER_BYTES (rows, and columns when one row is larger), into one
 * buffer of that size: the storage (chunk index, filters) is decoded as the
 * parent's reads will decode it, with memory bounded whatever the file
 * declares.  The file's own type in native order: no conversion. */
static void probe_numbers(hid_t d, uint64_t fsize, probe_state *ps)
{
  hid_t ft = H5Dget_type(d), fs = H5Dget_space(d), mt = -1, ms = -1;
  hsize_t dims[2] = {0, 0};
  void *buf = NULL;
  const int rank = fs >= 0 ? H5Sget_simple_extent_ndims(fs) : -1;
  if (ft < 0 || rank < 1 || rank > 2) goto done;
  const H5T_class_t cls = H5Tget_class(ft);
  const size_t fsz = H5Tget_size(ft);
  if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || fsz == 0 || fsz > 8) goto done; /* the parent refuses the rest */
  H5Sget_simple_extent_dims(fs, dims, NULL);
  if (declared_bytes(rank, dims, fsz) > declared_max(fsize)) goto done; /* the parent refuses it */
  if ((mt = H5Tget_native_type(ft, H5T_DIR_ASCEND)) < 0) goto done;
  const size_t esize = H5Tget_size(mt);
  if (esize == 0 || esize > 16 || !(buf = malloc(PROBE_NUMBER_BYTES))) goto done;
  const hsize_t cols = rank == 2 ? dims[1] : 1, per_buf = PROBE_NUMBER_BYTES / esize;
  const hsize_t col_step = cols < per_buf ? cols : per_buf;
  const hsize_t row_step = col_step ? (per_buf / col_step ? per_buf / col_step : 1) : 1;
  for (hsize_t r0 = 0; r0 < dims[0] && col_step; r0 += row_step) {
    for (hsize_t c0 = 0; c0 < cols; c0 += col_step) {
      hsize_t start[2] = {r0, c0}, count[2] = {dims[0] - r0 < row_step ? dims[0] - r0 : row_step,
                                               cols - c0 < col_step ? cols - c0 : col_step};
      close_id(ms);
      if ((ms = H5Screate_simple(rank, count, NULL)) < 0 ||
          H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
          H5Dread(d, mt, ms, fs, H5P_DEFAULT, buf) < 0)
        goto done; /* an error, not a fault: the parent's read reports it */
      ps->progress++;
    }
  }
done:
  free(buf);
  close_id(ms);
  close_id(mt);
  close_id(fs);
  close_id(ft);
}

static herr_t probe_attr(hid_t loc, const char *name, const H5A_info_t *info, void *vps)
{
  (void)info;
  probe_state *ps = vps;
  char obj[PROBE_WHAT];
  snprintf(obj, sizeof obj, "%s", ps->what);
  const size_t keep = strcspn(obj, " ");
  obj[keep] = '\0';
  probe_mark(ps, obj, name);
  hid_t at = H5Aopen(loc, name, H5P_DEFAULT), t = -1, s = -1, mt = -1;
  if (at < 0) goto done;
  t = H5Aget_type(at);
  s = H5Aget_space(at);
  if (t < 0 || s < 0) goto done;
  const hssize_t npts = H5Sget_simple_extent_npoints(s);
  const H5T_class_t cls = H5Tget_class(t);
  /* The parent reads one value of a string or number; read the same. */
  if (npts != 1) goto done;
  if (cls == H5T_STRING) {
    mt = H5Tcopy(H5T_C_S1);
    H5Tset_cset(mt, H5Tget_cset(t));
    if (H5Tis_variable_str(t) > 0) {
      char *v = NULL;
      H5Tset_size(mt, H5T_VARIABLE);
      if (H5Aread(at, mt, &v) >= 0 && v) {
        (void)strlen(v);
        H5free_memory(v);
      }
    } else {
      const size_t sz = H5Tget_size(t);
      char *v = sz < (1u << 24) ? calloc(sz + 1, 1) : NULL;
      H5Tset_size(mt, sz);
      H5Tset_strpad(mt, H5Tget_strpad(t));
      if (v) H5Aread(at, mt, v);
      free(v);
    }
  } else if (cls == H5T_INTEGER) {
    long long v;
    H5Aread(at, H5T_NATIVE_LLONG, &v);
  } else if (cls == H5T_FLOAT) {
    double v;
    H5Aread(at, H5T_NATIVE_DOUBLE, &v);
  } else if (is_h5py_bool(t)) {
    signed char v;
    H5Aread(at, t, &v);
  }
done:
  close_id(mt);
  close_id(s);
  close_id(t);
  close_id(at);
  probe_mark(ps, obj, NULL);
  return 0;
}

/* The type in which the parent copies dataset `name` with pread, or -1:
 * /runs/NAME/doc as int32, /runs/NAME/score as float or double (as
 * open_run), and only from a file whose addresses are offsets. */
/* The number of elements of a dataset's space s (0 when unknown). */
static uint64_t dataset_elems(hid_t s)
{
  const hssize_t n = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
  return n > 0 ? (uint64_t)n : 0;
}

/* When the parent's H5Dread of numeric dataset d (file type t, space s)
 * decodes nothing beyond its first element, reads that element and returns
 * 1: contiguous storage inside the file, no filter or external file, the
 * machine's own type (no conversion).  Such a read is one plain read of the
 * file's bytes, which libhdf5 never interprets; reading element 0 exercises
 * all the layout decoding it will do (at 1M queries the whole reads of
 * /qrels were 43 MB of the probe's work).  0 otherwise: the caller decodes
 * it whole. */
static int probe_plain_numbers(const probe_state *ps, hid_t d, hid_t t, hid_t s)
{
  if (!ps->can_copy || t < 0) return 0;
  const H5T_class_t cls = H5Tget_class(t);
  if (cls != H5T_INTEGER && cls != H5T_FLOAT) return 0;
  const hid_t native = H5Tget_native_type(t, H5T_DIR_ASCEND);
  const size_t esize = native >= 0 ? H5Tget_size(native) : 0;
  unsigned char first[16];
  const int plain = esize > 0 && esize <= sizeof first &&
                    contiguous_addr(d, native, esize, dataset_elems(s), ps->fsize) != 0;
  if (plain) read_first(d, native, first);
  close_id(native);
  return plain;
}

static hid_t copied_type(const probe_state *ps, const char *name, hid_t t)
{
  if (ps->numbers || !ps->can_copy || strncmp(name, "/runs/", 6) != 0) return -1;
  const char *leaf = strrchr(name, '/') + 1;
  if (strcmp(leaf, "doc") == 0) return H5T_NATIVE_INT32;
  if (strcmp(leaf, "score") == 0) return H5Tget_size(t) <= 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  return -1;
}


/* Decodes the strings of dataset o (named name). */
/* The string datasets of a corpus the parent reads (read_strings): one
 * that libhdf5 cannot read fails the probe.  Others (a user's own) are
 * decoded for faults only: the parent never reads them. */
static int parent_reads_strings(const char *name)
{
  static const char *const read[] = {"/queries/id", "/queries/text", "/docs/id", "/docs/text"};
  for (size_t i = 0; i < sizeof read / sizeof *read; i++)
    if (strcmp(name, read[i]) == 0) return 1;
  return 0;
}

static void probe_string_object(probe_state *ps, hid_t o, const char *name)
{
  qid_check qc = {0};
  const int is_qids = !ps->only && strcmp(name, "/queries/id") == 0;
  const int is_dids = !ps->only && strcmp(name, "/docs/id") == 0;
  rs__h5_heap_rows rows;
  fixed_rows fixed;
  if ((is_qids || is_dids) && ps->heap_ids && ps->can_copy &&
      (heap_rows_of(o, ps->fsize, &rows) || fixed_rows_of(o, ps->fsize, &fixed))) {
    ps->heap_skipped |= is_qids ? HEAP_QIDS : HEAP_DOCS; /* the parent reads them from the bytes, not with libhdf5 */
    return;
  }
  if (probe_strings(ps->path, o, ps->fsize, ps, is_qids ? &qc : NULL, is_dids ? &ps->docs_sorted : NULL) &&
      !ps->unreadable_at && parent_reads_strings(name)) {
    snprintf(ps->unreadable, sizeof ps->unreadable, "%s", name);
    ps->unreadable_at = ps->n_objects + 1;
  }
}

/* The string datasets left for after the visit (defer_strings), in static
 * storage: the child allocates nothing libhdf5 does not.  A file with more
 * has the rest decoded in place. */
enum { PROBE_DEFERRED_MAX = 8 };
static struct {
  char name[PROBE_WHAT];
  uint64_t at; /* its n_objects in the visit */
} probe_deferred[PROBE_DEFERRED_MAX];
static unsigned probe_n_deferred;

static int defer_string(probe_state *ps, const char *name)
{
  if (!ps->defer_strings || probe_n_deferred == PROBE_DEFERRED_MAX || strlen(name) >= PROBE_WHAT) return 0;
  snprintf(probe_deferred[probe_n_deferred].name, PROBE_WHAT, "%s", name);
  probe_deferred[probe_n_deferred++].at = ps->n_objects;
  return 1;
}

/* Decodes object `name` under loc: its header, attributes and, for a string
 * dataset or a numeric one the parent reads, its data. */
static void probe_object(hid_t loc, const char *name, probe_state *ps)
{
  ps->n_objects++;
  probe_mark(ps, name, NULL);
  hid_t o = H5Oopen(loc, name, H5P_DEFAULT), t = -1, s = -1, pl = -1;
  if (o < 0) return;
  hsize_t idx = 0;
  H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_INC, &idx, probe_attr, ps);
  if (H5Iget_type(o) == H5I_DATASET) {
    t = H5Dget_type(o);
    s = H5Dget_space(o);
    pl = H5Dget_create_plist(o);
    const int want = ps->only ? strcmp(name, ps->only) == 0 : !(ps->skip && strcmp(name, ps->skip) == 0);
    /* The generic readers (ps->numbers) read no strings. */
    const int strings = t >= 0 && H5Tget_class(t) == H5T_STRING && want && !ps->numbers;
    const int numbers = !strings && t >= 0 && want && !ps->only && parent_reads_numbers(ps, name);
    /* The parts share the decoding (MPI ranks, or the children of one
     * process): part `part` of `parts` takes every parts-th dataset of
     * strings and every parts-th of numbers, so that the string datasets,
     * the costly ones (/docs/id and /queries/id), go to different parts. */
    const int mine = ps->parts <= 1 || (strings ? ps->n_strings++ % ps->parts == ps->part
                                                : numbers ? ps->n_numbers++ % ps->parts == ps->part : 0);
    if (strings && mine && !defer_string(ps, name)) {
      probe_string_object(ps, o, name);
    } else if (numbers && mine) {
      /* A run's doc or score that the parent copies with pread (see
       * direct_addr) is never decoded by HDF5 beyond its first element:
       * reading that one is the probe (the rest is plain bytes, checked by
       * score_row).  Nor is any other contiguous dataset in the machine's
       * own type (probe_plain_numbers).  The others are decoded whole. */
      unsigned char first[8];
      const hid_t native = copied_type(ps, name, t);
      if (native >= 0 && contiguous_addr(o, native, H5Tget_size(native), dataset_elems(s), ps->fsize))
        read_first(o, native, first);
      else if (native >= 0 || !probe_plain_numbers(ps, o, t, s))
        probe_numbers(o, ps->fsize, ps);
    }
  }
  close_id(pl);
  close_id(s);
  close_id(t);
  close_id(o);
}

static herr_t probe_link(hid_t g, const char *name, const H5L_info_t *info, void *vps)
{
  probe_state *ps = vps;
  char full[PROBE_WHAT];
  if (info->type != H5L_TYPE_HARD) return 0; /* the parent follows no other links */
  snprintf(full, sizeof full, "/%s", name);
  probe_object(g, full, ps);
  return 0;
}

/* 1 when this process opens files through MPI-IO (parallel HDF5 under
 * MPI, even at one rank): HDF5 addresses are then not read with pread, so
 * the ids are read through libhdf5 (after the probe has decoded them). */
static int opens_with_mpio(void)
{
#if defined(RS_WITH_MPI) && defined(H5_HAVE_PARALLEL)
  return rs__mpi_file_comm() != NULL;
#else
  return 0;
#endif
}

/* 1 when now is the file a was: the same device and inode, size and mtime. */
static int same_file_unchanged(const struct stat *a, const struct stat *now)
{
  return a->st_dev == now->st_dev && a->st_ino == now->st_ino && a->st_size == now->st_size &&
         a->st_mtim.tv_sec == now->st_mtim.tv_sec && a->st_mtim.tv_nsec == now->st_mtim.tv_nsec;
}

/* What the probe of f found, into f (see probe_found); heap_ids as
 * probe_state_set tells the children. */
static void file_takes_found(rs__h5file *f, const probe_found *found)
{
  f->qids_ok = found->qids_ok;
  f->docs_sorted = found->docs_sorted && rs__mpi_size() <= 1; /* ranks read /docs/id together, at open */
  f->heap_skipped = found->heap_skipped;
  f->heap_ids = !opens_with_mpio();
}

/* --- a run file's runs, as its probe found them ---------------------------
 *
 * A run file's datasets are read with pread when they lie in the file as
 * they are (direct addresses: nearly always, import writes them so), and
 * then the parent needs nothing of libhdf5 after the open.  The lane child
 * that probes the file has it open anyway: it runs open_runs there and
 * writes what it found into shared memory, and the parent builds the runs
 * from that, with one descriptor of its own and no libhdf5 state (its
 * H5Fopen and open_runs took 5 of the 7.5 ms a run file of 10 runs cost
 * at one thread; a sweep of 500 run files held 500 metadata caches of
 * 512 KiB and two descriptors each).  Any other file (a run in CSR, a
 * dataset compressed or not in the machine's type, an error) is opened by
 * the parent as before, which then reports the error itself.  The file's
 * identity (device, inode, size, mtime) is written too: a file replaced
 * between the child's look and the parent's open is opened as before. */
typedef struct {
  struct stat st; /* the file's, as the child opened it (parent and child are one program) */
  uint32_t n_runs;
} run_layout_head;

typedef struct { /* a run's fixed part; its name and attributes follow */
  uint64_t k, doc_addr, score_addr, latency_addr;
  uint32_t name_len, n_attrs;
  uint8_t has_score, score_f32, has_latency, latency_f32;
} run_layout_run;

typedef struct {
  unsigned char *b;
  size_t cap, at;
  int full;
} layout_buf;

static void layout_put(layout_buf *w, const void *p, size_t len)
{
  if (w->full || len > w->cap - w->at) {
    w->full = 1;
    return;
  }
  memcpy(w->b + w->at, p, len);
  w->at += len;
}

static void layout_put_str(layout_buf *w, const char *s)
{
  const uint32_t len = (uint32_t)strlen(s);
  layout_put(w, &len, sizeof len);
  layout_put(w, s, len);
}

/* The child's part: the runs of the file open as fid, into ps->layout, its
 * first 8 bytes the size written (0: none, the parent opens the file). */
static void run_layout_write(hid_t fid, const char *path, probe_state *ps)
{
  probe_mark(ps, "/runs", NULL);
  rs__h5file f = {.fid = fid, .path = (char *)path, .fd = open(path, O_RDONLY | O_CLOEXEC)};
  struct stat st;
  rs__runset rs = {0};
  rs_error err;
  layout_buf w = {ps->layout, ps->layout_cap, sizeof(uint64_t), 0};
  if (f.fd < 0 || fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) goto done;
  f.size = (uint64_t)st.st_size;
  f.can_map = can_copy(fid);
  if (open_runs(&f, ps->nq, 1, &rs, &err)) goto done;
  const run_layout_head head = {st, (uint32_t)rs.n};
  layout_put(&w, &head, sizeof head);
  for (size_t i = 0; i < rs.n && !w.full; i++) {
    const rs__run *r = &rs.run[i];
    if (r->csr || !r->doc_addr || (r->has_score && !r->score_addr) || (r->has_latency && !r->latency_addr) ||
        r->n_rows != ps->nq) {
      w.full = 1; /* read through libhdf5: the parent opens the file */
      break;
    }
    const run_layout_run fixed = {r->k,
                                  r->doc_addr,
                                  r->score_addr,
                                  r->latency_addr,
                                  (uint32_t)strlen(r->name),
                                  (uint32_t)r->n_attrs,
                                  (uint8_t)r->has_score,
                                  (uint8_t)r->score_f32,
                                  (uint8_t)r->has_latency,
                                  (uint8_t)r->latency_f32};
    layout_put(&w, &fixed, sizeof fixed);
    layout_put(&w, r->name, fixed.name_len);
    for (size_t a = 0; a < r->n_attrs; a++) {
      const uint32_t kind = (uint32_t)r->attrs[a].kind;
      layout_put_str(&w, r->attrs[a].key);
      layout_put(&w, &kind, sizeof kind);
      layout_put(&w, &r->attrs[a].num, sizeof r->attrs[a].num);
      layout_put_str(&w, r->attrs[a].text);
    }
  }
  if (!w.full) {
    const uint64_t written = w.at;
    memcpy(ps->layout, &written, sizeof written);
  }
done:
  for (size_t i = 0; i < rs.n; i++) free_run(&rs.run[i]);
  free(rs.run);
  if (f.fd >= 0) close(f.fd);
}

typedef struct {
  const unsigned char *b;
  size_t end, at;
  int bad;
} layout_read;

static void layout_get(layout_read *r, void *p, size_t len)
{
  if (r->bad || len > r->end - r->at) {
    r->bad = 1;
    memset(p, 0, len);
    return;
  }
  memcpy(p, r->b + r->at, len);
  r->at += len;
}

static char *layout_get_str(layout_read *r, uint32_t len)
{
  char *s = NULL;
  if (r->bad || len > r->end - r->at || !(s = malloc((size_t)len + 1))) {
    r->bad = 1;
    return NULL;
  }
  memcpy(s, r->b + r->at, len);
  s[len] = '\0';
  r->at += len;
  return s;
}

/* The parent's part: the runs of path from the layout its probe wrote
 * (found: what the probe found), into out, with the file opened for pread
 * only.  0 when there is none, or the file is no longer the one the child
 * looked at: the caller opens the file as before. */
static int run_layout_take(const char *path, const unsigned char *layout, const probe_found *found, size_t nq,
                           rs__runset *out)
{
  uint64_t written;
  memcpy(&written, layout, sizeof written);
  if (written == 0) return 0;
  layout_read r = {layout, (size_t)written, sizeof written, 0};
  run_layout_head head;
  layout_get(&r, &head, sizeof head);
  struct stat st;
  rs__h5file *f = rs__calloc(1, sizeof *f);
  if (!f) return 0;
  f->fid = H5I_INVALID_HID; /* never opened with libhdf5 here */
  f->fd = open(path, O_RDONLY | O_CLOEXEC);
  if (r.bad || f->fd < 0 || fstat(f->fd, &st) != 0 || !same_file_unchanged(&head.st, &st) ||
      !(f->path = strdup(path)) || !(out->run = rs__calloc(head.n_runs ? head.n_runs : 1, sizeof *out->run)))
    goto fail;
  f->size = (uint64_t)st.st_size;
  f->can_map = 1;
  file_takes_found(f, found);
  out->file = f;
  out->n = 0;
  for (uint32_t i = 0; i < head.n_runs && !r.bad; i++) {
    run_layout_run fixed;
    layout_get(&r, &fixed, sizeof fixed);
    rs__run *run = &out->run[out->n++];
    run->path = f->path, run->file = f;
    run->name = layout_get_str(&r, fixed.name_len);
    run->n_rows = nq, run->k = (size_t)fixed.k;
    run->has_score = fixed.has_score, run->score_f32 = fixed.score_f32;
    run->has_latency = fixed.has_latency, run->latency_f32 = fixed.latency_f32;
    run->doc_addr = fixed.doc_addr, run->score_addr = fixed.score_addr, run->latency_addr = fixed.latency_addr;
    if (r.bad || (fixed.n_attrs && !(run->attrs = rs__calloc(fixed.n_attrs, sizeof *run->attrs)))) {
      r.bad = 1;
      break;
    }
    for (uint32_t a = 0; a < fixed.n_attrs && !r.bad; a++) {
      rs__attr *at = &run->attrs[run->n_attrs++];
      uint32_t len, kind;
      layout_get(&r, &len, sizeof len);
      at->key = layout_get_str(&r, len);
      layout_get(&r, &kind, sizeof kind);
      at->kind = (rs__attr_kind)kind;
      layout_get(&r, &at->num, sizeof at->num);
      layout_get(&r, &len, sizeof len);
      at->text = layout_get_str(&r, len);
    }
  }
  if (!r.bad && r.at == r.end) return 1;
  for (size_t i = 0; i < out->n; i++) free_run(&out->run[i]);
fail:
  free(out->run);
  memset(out, 0, sizeof *out);
  if (f->fd >= 0) close(f->fd);
  free(f->path);
  free(f);
  return 0;
}

/* What a probe child does to one file: decodes everything, telling the
 * parent what it reached through visit_fd (see probe_poll).  Returns when
 * done, or when libhdf5 does not open the file (the parent's own open then
 * says why); leaves when the parent is gone. */
static void probe_visit_file(const char *path, probe_state *ps, int visit_fd)
{
  probe_n_deferred = 0;
  probe_mark(ps, "the superblock", NULL);
  if (ps->links && H5Fis_hdf5(path) <= 0) return;
  hid_t fid = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (fid < 0) return;
  if (ps->links) {
    for (unsigned i = 0; i < 32 && ps->links[i]; i++)
      if (link_exists(fid, ps->links[i])) ps->links_found |= 1u << i;
    if (!(ps->links_found & ps->go_on_if)) {
      H5Fclose(fid);
      return;
    }
    const char told = 'l';
    if (write(visit_fd, &told, 1) != 1) _exit(0); /* the parent is gone */
  }
  ps->fsize = file_size_of(fid);
  ps->can_copy = can_copy(fid);
  probe_object(fid, "/", ps);
  H5Lvisit(fid, H5_INDEX_NAME, H5_ITER_INC, probe_link, ps);
  if (ps->defer_strings) {
    /* Every object has been visited (by every child alike): the strings
     * come after all of them in the order failures are told in. */
    const uint64_t visited = ps->n_objects;
    const char done = 'v';
    if (write(visit_fd, &done, 1) != 1) _exit(0); /* the parent is gone */
    for (unsigned i = 0; i < probe_n_deferred; i++) {
      ps->n_objects = visited + probe_deferred[i].at;
      probe_mark(ps, probe_deferred[i].name, NULL);
      hid_t o = H5Oopen(fid, probe_deferred[i].name, H5P_DEFAULT);
      if (o < 0) continue;
      probe_string_object(ps, o, probe_deferred[i].name);
      close_id(o);
    }
  }
  if (ps->layout) run_layout_write(fid, path, ps);
  probe_mark(ps, "the file's closing", NULL);
  H5Fclose(fid);
}

/* A child's set-up: a fault ends it with its signal, and libhdf5 prints
 * nothing. */
static void probe_child_setup(void)
{
  /* A sanitizer's handler would turn the fault into an exit status. */
  signal(SIGSEGV, SIG_DFL);
  signal(SIGBUS, SIG_DFL);
  signal(SIGFPE, SIG_DFL);
  signal(SIGILL, SIG_DFL);
  signal(SIGABRT, SIG_DFL);
  h5_quiet();
}

/* The child of one probe: decodes its file, then leaves without atexit
 * handlers or stdio flushes (they belong to the parent). */
static void probe_child(const char *path, probe_state *ps, int visit_fd)
{
  probe_child_setup();
  probe_visit_file(path, ps, visit_fd);
  _exit(0);
}

/* Runs the probe of path in a child; only (if set) limits the strings read
 * to that dataset, skip (if set) excludes one. */
static rs_code probe_file_links(const char *path, const char *only, const char *skip, const char *const *numbers,
                                const char *const *links, int split, probe_found *found, rs_error *err);

static rs_code probe_file(const char *path, const char *only, const char *skip, const char *const *numbers,
                          rs_error *err)
{
  return probe_file_links(path, only, skip, numbers, NULL, 0, NULL, err);
}

enum { PROBE_MAX_CHILDREN = 4 };

/* Probe children to run at once in one process: one per thread, up to
 * PROBE_MAX_CHILDREN (1M x 100: the probe is a third of a one-thread run). */
static unsigned probe_parallelism(void)
{
  const int t = rs__threads(0);
  return t < 1 ? 1 : t > PROBE_MAX_CHILDREN ? PROBE_MAX_CHILDREN : (unsigned)t;
}

/* One probe under way: its children, started by probe_start and waited
 * for by probe_finish, so that the probes of several files can run beside
 * each other and beside the parent's own work (rs__runsets_open,
 * open_corpus_file). */
typedef struct probe_run {
  const char *path;
  char *own_path;  /* path's copy, when the probe outlives its caller's string (rs__h5_root_links) */
  probe_state *ps; /* [n_child], shared with the children */
  size_t map_bytes;
  unsigned n_child, started;
  pid_t pid[PROBE_MAX_CHILDREN];
  int fd[PROBE_MAX_CHILDREN]; /* read ends of the children's pipes */
  int running[PROBE_MAX_CHILDREN], visited[PROBE_MAX_CHILDREN], told_links[PROBE_MAX_CHILDREN], quiet_ms[PROBE_MAX_CHILDREN];
  uint64_t seen[PROBE_MAX_CHILDREN]; /* progress at the last look */
  int stalled;                       /* the child that made no progress, if one did (else -1) */
  rs_code rc;                        /* a failure to start (the children started are still waited for) */
  rs_error err;
} probe_run;

/* What a child is asked to decode of path (see probe_state), the part of
 * parts it takes; heap_ids as file_takes_found sets it for the parent. */
static void probe_state_set(probe_state *ps, const char *path, const char *only, const char *skip,
                            const char *const *numbers, const char *const *links, unsigned part, unsigned parts,
                            int defer_strings)
{
  ps->only = only;
  ps->skip = skip;
  ps->numbers = numbers;
  ps->links = links;
  ps->path = path;
  ps->part = part;
  ps->parts = parts;
  ps->defer_strings = defer_strings;
  ps->heap_ids = !opens_with_mpio();
}

/* The states of a probe of n_child children, none started yet (links:
 * for the first child only). */
static void probe_prepare(probe_run *pr, const char *path, const char *only, const char *skip,
                          const char *const *numbers, const char *const *links, unsigned n_child, int split,
                          int defer_strings)
{
  memset(pr, 0, sizeof *pr);
  pr->path = path;
  pr->stalled = -1;
  pr->n_child = n_child;
  pr->map_bytes = n_child * sizeof(probe_state);
  probe_state *ps = mmap(NULL, pr->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (ps == MAP_FAILED) {
    pr->rc = rs__fail(&pr->err, RS_NOMEM, "%s: cannot map memory to check the file: %s", path, strerror(errno));
    return;
  }
  pr->ps = ps;
  memset(ps, 0, pr->map_bytes);
  for (unsigned i = 0; i < n_child; i++)
    probe_state_set(&ps[i], path, only, skip, numbers, i == 0 ? links : NULL,
                    n_child > 1 ? i : split ? (unsigned)rs__mpi_rank() : 0,
                    n_child > 1 ? n_child : split ? (unsigned)rs__mpi_size() : 1, defer_strings);
}

/* Starts the children of a prepared probe up to `upto`. */
static void probe_spawn(probe_run *pr, unsigned upto)
{
  if (pr->rc || !pr->ps) return;
  probe_state *ps = pr->ps;
  const char *path = pr->path;
  /* Each child holds the write end of a pipe: its end (exit or signal)
   * wakes the parent's poll at once, as does the byte that ends its visit
   * (defer_strings), and the poll's timeout watches for a stall. */
  for (; pr->started < upto; pr->started++) {
    int fds[2];
    if (pipe(fds) < 0) {
      pr->rc = rs__fail(&pr->err, RS_IO, "%s: cannot start the process that checks the file: %s", path, strerror(errno));
      break;
    }
    const pid_t parent = getpid(), p = fork();
    if (p < 0) {
      pr->rc = rs__fail(&pr->err, RS_IO, "%s: cannot start the process that checks the file: %s", path, strerror(errno));
      close(fds[0]);
      close(fds[1]);
      break;
    }
    if (p == 0) {
#ifdef __linux__
      /* A child stuck in libhdf5 must not outlive a parent killed before
       * it could stop it (kill -9, a timeout): it would spin for ever. */
      prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
      if (getppid() != parent) _exit(0); /* the parent is already gone */
      close(fds[0]);
      probe_child(path, &ps[pr->started], fds[1]);
    }
    close(fds[1]);
    const unsigned i = pr->started;
    pr->pid[i] = p, pr->fd[i] = fds[0], pr->running[i] = 1;
  }
}

static void probe_start(probe_run *pr, const char *path, const char *only, const char *skip,
                        const char *const *numbers, const char *const *links, int split, int defer_strings)
{
  const unsigned n_child = split && !links && rs__mpi_size() <= 1 ? probe_parallelism() : 1;
  probe_prepare(pr, path, only, skip, numbers, links, n_child, split, defer_strings);
  probe_spawn(pr, n_child);
}

/* Watches the children until every one has exited (or, with
 * UNTIL_VISITED, ended its visit or exited; with UNTIL_LINKS, told its
 * links or exited), or one makes no progress for PROBE_STALL_SECONDS
 * (pr->stalled). */
enum { UNTIL_EXITED, UNTIL_VISITED, UNTIL_LINKS };
/* A poll of 250 ms that saw nothing from a child: 1 when its progress
 * (ps->progress) has not moved for longer than PROBE_STALL_SECONDS (it
 * hangs); *seen and *quiet_ms carry the count between polls. */
static int probe_quiet_too_long(const probe_state *ps, uint64_t *seen, int *quiet_ms)
{
  const uint64_t now = ps->progress;
  *quiet_ms = now == *seen ? *quiet_ms + 250 : 0;
  *seen = now;
  return *quiet_ms > (int)(PROBE_STALL_SECONDS * 1000);
}

static void probe_poll(probe_run *pr, int until)
{
  for (;;) {
    struct pollfd pfd[PROBE_MAX_CHILDREN];
    unsigned map[PROBE_MAX_CHILDREN], n = 0, waiting = 0;
    for (unsigned i = 0; i < pr->started; i++) {
      if (!pr->running[i]) continue;
      waiting += !(until == UNTIL_VISITED ? pr->visited[i] : until == UNTIL_LINKS ? pr->told_links[i] : 0);
      pfd[n] = (struct pollfd){.fd = pr->fd[i], .events = POLLIN}, map[n++] = i;
    }
    if (!waiting || pr->stalled >= 0) return;
    const int ready = poll(pfd, n, 250);
    if (ready < 0 && errno != EINTR) return;
    for (unsigned k = 0; ready > 0 && k < n; k++) {
      if (!pfd[k].revents) continue;
      char b;
      const ssize_t got = read(pfd[k].fd, &b, 1);
      if (got == 1 && b == 'l') pr->told_links[map[k]] = 1;
      else if (got == 1) pr->visited[map[k]] = 1;
      else if (got == 0 || (errno != EINTR && errno != EAGAIN)) pr->running[map[k]] = 0; /* EOF: the child is gone */
    }
    if (ready != 0) continue;
    for (unsigned i = 0; i < pr->started; i++)
      if (pr->running[i] && probe_quiet_too_long(&pr->ps[i], &pr->seen[i], &pr->quiet_ms[i])) pr->stalled = (int)i;
  }
}

/* 1 when every child has ended its visit and is now decoding the deferred
 * strings, or is done: what the parent reads other than those strings is
 * safe.  0 when a child ended otherwise (failed, or found the file
 * unopenable): probe_finish tells. */
static int probe_visited(probe_run *pr)
{
  if (pr->rc || !pr->started) return 0;
  probe_poll(pr, UNTIL_VISITED);
  if (pr->stalled >= 0) return 0;
  for (unsigned i = 0; i < pr->started; i++)
    if (!pr->visited[i]) return 0;
  return 1;
}

/* Waits for a child, however often a signal interrupts the wait: 1 with
 * its wait status in *status, 0 when it cannot be waited for. */
static int reap_child(pid_t pid, int *status)
{
  while (waitpid(pid, status, 0) < 0)
    if (errno != EINTR) return 0;
  return 1;
}

/* Kills a probe's children and reaps them (a failure elsewhere made its
 * verdict moot). */
static void probe_cancel(probe_run *pr)
{
  for (unsigned i = 0; i < pr->started; i++) {
    kill(pr->pid[i], SIGKILL);
    close(pr->fd[i]);
    reap_child(pr->pid[i], NULL);
  }
  if (pr->ps) munmap(pr->ps, pr->map_bytes);
  free(pr->own_path);
  memset(pr, 0, sizeof *pr);
}

/* How the children ps[0..started) of a probe of path ended (status: each
 * one's wait status; stalled: the one that made no progress, or -1), from
 * rc on (a failure to start, already in *err): the child that failed first
 * in the visit, else the string dataset found unreadable first, else RS_OK
 * with what the children found (into *found if set; zeros on a failure). */
static rs_code probe_verdict(const char *path, probe_state *ps, unsigned started, const int *status, int stalled,
                             rs_code rc, probe_found *found, rs_error *err)
{
  /* Of the children that failed, the one that stopped earliest in the
   * visit is told: the object a single child would have stopped at. */
  int told = -1;
  for (unsigned i = 0; i < started; i++) {
    const int failed = (int)i == stalled || (stalled < 0 && ((WIFEXITED(status[i]) && WEXITSTATUS(status[i]) != 0) ||
                                                             WIFSIGNALED(status[i])));
    if (failed && (told < 0 || ps[i].n_objects < ps[told].n_objects)) told = (int)i;
  }
  if (told >= 0 && !rc) {
    probe_state *c = &ps[told];
    const int st = status[told];
    c->what[PROBE_WHAT - 1] = '\0';
    if (told == stalled)
      rc = rs__fail(err, RS_FORMAT,
                    "%s: libhdf5 hung decoding %s (no progress for %.0f s): the file is corrupt; write it again "
                    "(ragsweep import) or restore it",
                    path, c->what[0] ? c->what : "the file", PROBE_STALL_SECONDS);
    else if (WIFEXITED(st)) /* the child only ever exits 0: another status is a sanitizer (or libhdf5) stopping it */
      rc = rs__fail(err, RS_FORMAT,
                    "%s: libhdf5 crashed decoding %s (exit status %d): the file is corrupt; write it again "
                    "(ragsweep import) or restore it",
                    path, c->what[0] ? c->what : "the file", WEXITSTATUS(st));
    else
      rc = rs__fail(err, RS_FORMAT,
                    "%s: libhdf5 crashed decoding %s (signal %d): the file is corrupt; write it again "
                    "(ragsweep import) or restore it",
                    path, c->what[0] ? c->what : "the file", WTERMSIG(st));
  }
  /* No child crashed: the string dataset that failed first in the visit,
   * as one child would have found it. */
  int unreadable = -1;
  for (unsigned i = 0; i < started && !rc; i++)
    if (ps[i].unreadable_at && (unreadable < 0 || ps[i].unreadable_at < ps[unreadable].unreadable_at))
      unreadable = (int)i;
  if (unreadable >= 0) {
    probe_state *c = &ps[unreadable];
    c->unreadable[PROBE_WHAT - 1] = '\0';
    rc = rs__fail(err, RS_FORMAT,
                  "%s:%s: libhdf5 cannot decode the strings: the file is corrupt; write it again (ragsweep import) "
                  "or restore it",
                  path, c->unreadable);
  }
  if (found) {
    memset(found, 0, sizeof *found);
    if (!rc && started) found->links_found = ps[0].links_found;
    for (unsigned i = 0; i < started && !rc; i++) { /* each set by the child that read the dataset */
      found->qids_ok |= ps[i].qids_ok;
      found->docs_sorted |= ps[i].docs_sorted;
      found->heap_skipped |= ps[i].heap_skipped;
    }
  }
  return rc;
}

/* Waits for a probe's children and tells how they ended (probe_verdict). */
static rs_code probe_finish(probe_run *pr, probe_found *found, rs_error *err)
{
  const unsigned started = pr->started;
  int status[PROBE_MAX_CHILDREN] = {0};
  rs_code rc = pr->rc;
  if (rc && err) *err = pr->err;
  probe_poll(pr, UNTIL_EXITED);
  const int stalled = pr->stalled;
  if (stalled >= 0)
    for (unsigned i = 0; i < started; i++) kill(pr->pid[i], SIGKILL);
  for (unsigned i = 0; i < started; i++) {
    close(pr->fd[i]);
    if (!reap_child(pr->pid[i], &status[i])) {
      if (!rc) rc = rs__fail(err, RS_IO, "%s: lost the process that checks the file: %s", pr->path, strerror(errno));
      status[i] = 0;
    }
  }
  rc = probe_verdict(pr->path, pr->ps, started, status, stalled, rc, found, err);
  if (pr->ps) munmap(pr->ps, pr->map_bytes);
  free(pr->own_path);
  memset(pr, 0, sizeof *pr);
  return rc;
}

/* The probe rs__h5_root_links left going on, for the open of its file
 * that follows (probe_adopt): one process-wide slot, used by the thread
 * that opens files (this file is single-threaded, see corpus.h). */
static struct {
  probe_run *pr;
  struct stat st; /* its file's, at the look-up */
} kept_probe;

static void kept_probe_drop(void)
{
  if (!kept_probe.pr) return;
  probe_cancel(kept_probe.pr);
  free(kept_probe.pr);
  kept_probe.pr = NULL;
}

/* The probe kept for path if it is of this file, unchanged, and started
 * for as many children as an open now starts (its others are started
 * here); else NULL (and a kept probe of another file is let go). */
static probe_run *probe_adopt(const char *path)
{
  probe_run *pr = kept_probe.pr;
  if (!pr) return NULL;
  struct stat st;
  if (strcmp(pr->path, path) != 0 || stat(path, &st) != 0 || !same_file_unchanged(&kept_probe.st, &st) ||
      pr->n_child != probe_parallelism() || rs__mpi_size() > 1) {
    kept_probe_drop();
    return NULL;
  }
  kept_probe.pr = NULL;
  probe_spawn(pr, pr->n_child);
  return pr;
}

/* As probe_file; with links set, the child only looks up those root links
 * and reports them in found->links_found.  found (if set): what the
 * children found (probe_finish).  split: share the decoding with the other
 * MPI ranks, or, in one process, among one child per thread
 * (probe_parallelism). */
static rs_code probe_file_links(const char *path, const char *only, const char *skip, const char *const *numbers,
                                const char *const *links, int split, probe_found *found, rs_error *err)
{
  probe_run pr;
  probe_start(&pr, path, only, skip, numbers, links, split, 0);
  return probe_finish(&pr, found, err);
}

/* What must hold before a file is probed: it opens, and it is HDF5.
 * numbers: as open_file_reading. */
static rs_code check_openable(const char *path, const char *const *numbers, rs_error *err)
{
  h5_quiet();
  FILE *probe = fopen(path, "rb");
  if (!probe && errno == EMFILE) { /* a file stays open for the whole sweep (see run_layout_write) */
    struct rlimit l = {0};
    getrlimit(RLIMIT_NOFILE, &l);
    return rs__fail(err, RS_IO,
                    "%s: cannot open: too many files open at once (this process may have %llu); raise the limit "
                    "(ulimit -n) or put more runs in each run file",
                    path, (unsigned long long)l.rlim_cur);
  }
  if (!probe) return rs__fail(err, RS_IO, "%s: cannot open: %s", path, strerror(errno));
  fclose(probe);
  if (H5Fis_hdf5(path) > 0) return RS_OK;
  if (numbers) return rs__fail(err, RS_FORMAT, "%s: expected an HDF5 file, found something else", path);
  return rs__fail(err, RS_FORMAT,
                  "%s: expected an HDF5 corpus, found something else; for TREC files run "
                  "'ragsweep import -o corpus.h5 --qrels qrels.txt run.txt' (or eval --qrels ...)",
                  path);
}

/* Starts the probe of a file (see probe_file_links): /docs/text (maybe
 * gigabytes) is probed when it is read.  split: the file's data is shared
 * among the children of one per thread, or under MPI among the ranks. */
static void probe_start_open(probe_run *pr, const char *path, const char *const *numbers, int split)
{
  probe_start(pr, path, NULL, numbers ? NULL : "/docs/text", numbers, NULL, split, 1);
}

/* Opens path read-only once its probe has passed (rc: the probe's
 * verdict; found: what it found, NULL when it is still running). */
static rs_code open_probed(const char *path, rs_code rc, const probe_found *found, rs__h5file **out, rs_error *err)
{
  /* Under MPI the open below is collective: every rank goes on, or none. */
  if ((rc = rs__mpi_agree(rc, err))) return rc;
  rs__h5file *f = rs__calloc(1, sizeof *f);
  if (!f || !(f->path = strdup(path))) {
    free(f);
    rs__mpi_abort(RS_NOMEM, "ragsweep: out of memory opening an HDF5 file"); /* the others are in H5Fopen */
  }
  hid_t fapl = H5P_DEFAULT;
#if defined(RS_WITH_MPI) && defined(H5_HAVE_PARALLEL)
  /* Parallel HDF5: every rank opens the file through MPI-IO and reads its
   * own hyperslabs (independent transfers, the default). */
  if (opens_with_mpio()) {
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_mpio(fapl, *(const MPI_Comm *)rs__mpi_file_comm(), MPI_INFO_NULL) < 0)
      rs__mpi_abort(RS_IO, "ragsweep: cannot set up MPI-IO file access (H5Pset_fapl_mpio)");
  }
#endif
  f->fid = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  if (fapl != H5P_DEFAULT) H5Pclose(fapl);
  if ((rc = rs__mpi_agree(f->fid < 0 ? rs__fail(err, RS_IO, "%s: cannot open as HDF5", path) : RS_OK, err))) {
    if (f->fid >= 0) H5Fclose(f->fid);
    free(f->path);
    free(f);
    return rc;
  }
  struct stat st;
  f->fd = open(path, O_RDONLY | O_CLOEXEC);
  if (f->fd >= 0 && fstat(f->fd, &st) == 0 && S_ISREG(st.st_mode)) {
    f->size = (uint64_t)st.st_size;
    f->can_map = can_copy(f->fid); /* not under MPI-IO: rows are then read by HDF5 as hyperslabs */
  }
  file_takes_found(f, found ? found : &(probe_found){0});
  *out = f;
  return RS_OK;
}

/* Opens path read-only after the probe.  numbers: NULL for a corpus or run
 * file, else the root-level numeric datasets the caller will read (the
 * probe decodes those instead of a corpus's). */
static rs_code open_file_reading(const char *path, const char *const *numbers, rs__h5file **out, rs_error *err)
{
  probe_found found = {0};
  rs_code rc = check_openable(path, numbers, err);
  if (!rc) {
    probe_run pr;
    probe_start_open(&pr, path, numbers, 1);
    rc = probe_finish(&pr, &found, err);
  }
  return open_probed(path, rc, &found, out, err);
}

static rs_code open_file(const char *path, rs__h5file **out, rs_error *err)
{
  return open_file_reading(path, NULL, out, err);
}

/* Waits for pr to end (and frees it), then opens path as its verdict says. */
static rs_code open_after_probe(probe_run *pr, const char *path, rs__h5file **out, rs_error *err)
{
  probe_found found = {0};
  const rs_code rc = probe_finish(pr, &found, err);
  free(pr);
  return open_probed(path, rc, &found, out, err);
}

/* Open with its probe still decoding the string datasets: the probe runs
 * beside the reading of the qrels (1M queries: the parent's 0.1 s of qrels
 * beside the child's 0.2 s of query ids).  Everything the visit decoded
 * (headers, attributes, the numbers the parent reads) is safe to read at
 * once; the strings only after file_settle.  One thread, or MPI (whose
 * ranks agree on the probe before the collective open): as open_file. */
static rs_code open_corpus_file(const char *path, rs__h5file **out, rs_error *err)
{
  /* The probe the lookup of its links left going on (it has found the
   * file to be HDF5 and opened it), else a new one. */
  probe_run *pr = probe_adopt(path);
  rs_code rc;
  if (rs__mpi_size() > 1 || rs__threads(0) <= 1)
    return pr ? open_after_probe(pr, path, out, err) : open_file(path, out, err);
  if (!pr) {
    if ((rc = check_openable(path, NULL, err))) return rc;
    if (!(pr = rs__malloc(sizeof *pr))) return rs__fail(err, RS_NOMEM, "out of memory");
    probe_start_open(pr, path, NULL, 1);
  }
  if (!probe_visited(pr)) /* a child failed in its visit, or found the file unopenable: as open_file */
    return open_after_probe(pr, path, out, err);
  if ((rc = open_probed(path, RS_OK, NULL, out, err))) {
    rs_error probe_err;
    const rs_code probe_rc = probe_finish(pr, NULL, &probe_err);
    free(pr);
    if (probe_rc && err) *err = probe_err;
    return probe_rc ? probe_rc : rc;
  }
  (*out)->pending = pr;
  return RS_OK;
}

/* Ends the probe open_corpus_file left running, once: its verdict, and
 * what its decoding of the strings found (qids_ok, docs_sorted), into f.
 * Called before anything reads a string dataset of f, and at the end of
 * the open, whose error it replaces when it fails (as the probe's error
 * came first when the probe ran before the open). */
static rs_code file_settle(rs__h5file *f, rs_error *err)
{
  if (!f) return RS_OK;
  if (f->pending) {
    probe_found found = {0};
    f->probe_rc = probe_finish(f->pending, &found, &f->probe_err);
    free(f->pending);
    f->pending = NULL;
    file_takes_found(f, &found);
  }
  if (f->probe_rc && err) *err = f->probe_err;
  return f->probe_rc;
}

static void close_file(rs__h5file *f)
{
  if (!f) return;
  if (f->pending) {
    probe_cancel(f->pending);
    free(f->pending);
  }
  if (f->fd >= 0) close(f->fd);
  if (f->fid >= 0) H5Fclose(f->fid);
  free(f->path);
  free(f);
}

/* The runs of an opened run file into out; on an error the file is closed. */
static rs_code runset_of(rs__h5file *f, size_t nq, rs__runset *out, rs_error *err)
{
  rs_code rc = open_runs(f, nq, 1, out, err);
  if (rc) {
    close_file(f);
    out->file = NULL;
  }
  return rc;
}

rs_code rs__runset_open(const char *path, size_t nq, rs__runset *out, rs_error *err)
{
  rs__h5file *f = NULL;
  rs_code rc = open_file(path, &f, err);
  return rc ? rc : runset_of(f, nq, out, err);
}

/* The run files' probes run in lanes, one per thread up to
 * PROBE_MAX_CHILDREN: the child of lane L probes files L, L + lanes, ...
 * one after another (a child of its own for each file cost as much again
 * as its decoding: the fork, the parent's pages shared and written again,
 * libhdf5's caches in fresh pages), and the parent opens each file in the
 * given order once its lane has passed it.  With more than one thread the
 * lanes run ahead of the parent; with one, a lane's child waits for the
 * parent's go before each file, so that one process works at a time.
 * (A run file's own data is small: every child of a split probe decodes
 * every header, so splitting a file costs more than it saves.)
 * libhdf5 may corrupt a child's memory on one file and fault on a later
 * one: a child that dies or hangs on any file but its first is not
 * believed, and that file and the rest of its lane get a child each, whose
 * verdict stands. */
typedef struct {
  pid_t pid;
  int fd;       /* read end of the child's pipe: 'v' (visit done), 'd' (file done) */
  int go_fd;    /* the parent's end of the go channel, with one thread (else -1) */
  size_t done;  /* files of the lane the child has finished (from the lane's first) */
  int alive;
  int solo; /* the lane's child failed: a child each for its remaining files */
} probe_lane;

typedef struct {
  char *const *paths;
  size_t n, lanes;
  probe_state *ps; /* [n], shared with the children */
  size_t map_bytes;
  unsigned char *layouts; /* [n][RUN_LAYOUT_BYTES], shared likewise (see run_layout_write), or NULL */
  probe_lane lane[PROBE_MAX_CHILDREN];
} probe_lanes;

/* Room for a run file's layout: about 500 runs with a few attributes each
 * (a file with more is opened by the parent); pages are touched only as
 * written. */
enum { RUN_LAYOUT_BYTES = 64 << 10 };

/* The child of a lane: probes its files, telling the parent the end of
 * each ('d'). */
static void lane_child(const probe_lanes *pl, size_t lane, int go_fd, int out_fd)
{
  probe_child_setup();
  for (size_t i = lane; i < pl->n; i += pl->lanes) {
    char go;
    if (go_fd >= 0 && read(go_fd, &go, 1) != 1) _exit(0); /* the parent is gone, or done */
    probe_visit_file(pl->paths[i], &pl->ps[i], out_fd);
    const char done = 'd';
    if (write(out_fd, &done, 1) != 1) _exit(0);
  }
  _exit(0);
}

/* Starts lane L's child; on a failure the lane goes solo, whose probes
 * then tell it. */
static void lane_start(probe_lanes *pl, size_t L, int gated)
{
  probe_lane *ln = &pl->lane[L];
  int out[2] = {-1, -1}, go[2] = {-1, -1};
  *ln = (probe_lane){.fd = -1, .go_fd = -1};
  /* The go channel is a socket, so that a go to a child that died
   * (send with MSG_NOSIGNAL) fails rather than raising SIGPIPE. */
  if (pipe(out) < 0 || (gated && socketpair(AF_UNIX, SOCK_STREAM, 0, go) < 0)) goto fail;
  const pid_t parent = getpid(), p = fork();
  if (p < 0) goto fail;
  if (p == 0) {
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* as probe_spawn's children */
#endif
    if (getppid() != parent) _exit(0);
    close(out[0]);
    if (gated) close(go[1]);
    lane_child(pl, L, gated ? go[0] : -1, out[1]);
  }
  close(out[1]);
  if (gated) close(go[0]);
  ln->pid = p, ln->fd = out[0], ln->go_fd = gated ? go[1] : -1, ln->alive = 1;
  return;
fail:
  for (int k = 0; k < 2; k++) {
    if (out[k] >= 0) close(out[k]);
    if (go[k] >= 0) close(go[k]);
  }
  ln->solo = 1;
}

/* Ends lane L's child (killed first unless it is done) and reaps it; its
 * wait status into *status if set. */
static void lane_stop(probe_lane *ln, int kill_it, int *status)
{
  int st = 0;
  if (!ln->alive) return;
  if (kill_it) kill(ln->pid, SIGKILL);
  close(ln->fd);
  if (ln->go_fd >= 0) close(ln->go_fd);
  if (!reap_child(ln->pid, &st)) st = 0;
  if (status) *status = st;
  ln->alive = 0;
}

/* The verdict on file i of its lane: waits until the lane's child has
 * passed it, else (the child died or hung on it) tells why, as a probe of
 * its own would have, when it was the child's first file, and asks a probe
 * of its own otherwise. */
static rs_code lane_verdict(probe_lanes *pl, size_t i, probe_found *found, rs_error *err)
{
  probe_lane *ln = &pl->lane[i % pl->lanes];
  const size_t place = i / pl->lanes;
  probe_state *ps = &pl->ps[i];
  if (ln->alive && ln->go_fd >= 0) {
    const char go = 'g';
    if (send(ln->go_fd, &go, 1, MSG_NOSIGNAL) != 1) lane_stop(ln, 1, NULL), ln->solo = 1;
  }
  int quiet_ms = 0, stalled = 0, gone = 0, lost = 0;
  uint64_t seen = ps->progress;
  while (ln->alive && ln->done <= place && !stalled && !gone && !lost) {
    struct pollfd pfd = {.fd = ln->fd, .events = POLLIN};
    const int ready = poll(&pfd, 1, 250);
    if (ready > 0) {
      char b;
      const ssize_t got = read(ln->fd, &b, 1);
      if (got == 1) ln->done += b == 'd';
      else if (got == 0) gone = 1; /* EOF: the child ended */
      else lost = errno != EINTR && errno != EAGAIN;
    } else if (ready == 0) {
      stalled = probe_quiet_too_long(ps, &seen, &quiet_ms);
    } else {
      lost = errno != EINTR;
    }
  }
  if (ln->alive && ln->done > place) return probe_verdict(pl->paths[i], ps, 1, (int[]){0}, -1, RS_OK, found, err);
  if (ln->alive) {
    int status = 0;
    lane_stop(ln, 1, &status);
    if (place == 0 && !lost) /* a fresh child ended or hung: its verdict stands */
      return probe_verdict(pl->paths[i], ps, 1, &status, stalled ? 0 : -1, RS_OK, found, err);
    ln->solo = 1;
  }
  if (ps->layout) memset(ps->layout, 0, sizeof(uint64_t)); /* from a child not believed: the parent opens the file */
  probe_run pr;
  probe_start_open(&pr, pl->paths[i], NULL, 0);
  return probe_finish(&pr, found, err);
}

rs_code rs__runsets_open(char *const *paths, size_t n, size_t nq, rs__runset *out, size_t *n_open, rs_error *err)
{
  *n_open = 0;
  if (rs__mpi_size() > 1) { /* one file at a time, every rank in step */
    for (size_t i = 0; i < n; i++) {
      rs_code rc = rs__runset_open(paths[i], nq, &out[i], err);
      if (rc) return rc;
      ++*n_open;
    }
    return RS_OK;
  }
  if (n == 0) return RS_OK;
  const unsigned threads = probe_parallelism();
  probe_lanes pl = {.paths = paths, .n = n, .lanes = n < threads ? n : threads};
  pl.map_bytes = rs__mul(n, sizeof(probe_state));
  probe_state *ps = mmap(NULL, pl.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (ps == MAP_FAILED)
    return rs__fail(err, RS_NOMEM, "%s: cannot map memory to check the file: %s", paths[0], strerror(errno));
  pl.ps = ps;
  const size_t layout_bytes = rs__mul(n, RUN_LAYOUT_BYTES);
  unsigned char *layouts = mmap(NULL, layout_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  pl.layouts = layouts == MAP_FAILED ? NULL : layouts; /* without: every file opened by the parent */
  for (size_t i = 0; i < n; i++) { /* as probe_start_open's one child for a file's own probe */
    probe_state_set(&ps[i], paths[i], NULL, "/docs/text", NULL, NULL, 0, 1, 1);
    if (pl.layouts) ps[i].layout = pl.layouts + i * (size_t)RUN_LAYOUT_BYTES, ps[i].layout_cap = RUN_LAYOUT_BYTES;
    ps[i].nq = nq;
  }
  for (size_t L = 0; L < pl.lanes; L++) lane_start(&pl, L, threads == 1);
  rs_code rc = RS_OK;
  for (size_t i = 0; i < n && !rc; i++) {
    probe_found found = {0};
    rs__h5file *f = NULL;
    if ((rc = check_openable(paths[i], NULL, err)) || (rc = lane_verdict(&pl, i, &found, err))) break;
    if ((ps[i].layout && run_layout_take(paths[i], ps[i].layout, &found, nq, &out[i])) ||
        (!(rc = open_probed(paths[i], RS_OK, &found, &f, err)) && !(rc = runset_of(f, nq, &out[i], err))))
      ++*n_open;
  }
  for (size_t L = 0; L < pl.lanes; L++) lane_stop(&pl.lane[L], rc != RS_OK, NULL);
  if (pl.layouts) munmap(pl.layouts, layout_bytes);
  munmap(ps, pl.map_bytes);
  return rc;
}

void rs__runset_close(rs__runset *s)
{
  if (!s) return;
  for (size_t i = 0; i < s->n; i++) free_run(&s->run[i]);
  free(s->run);
  rs__mem_runset_free(s);
  close_file(s->file);
  memset(s, 0, sizeof *s);
}

/* --- corpus -------------------------------------------------------------- */

static rs_code read_root_attrs(rs__h5file *f, rs_error *err)
{
  attr_walk w = {.file = f->path, .group = "/", .err = err};
  hsize_t idx = 0;
  rs_code rc = RS_OK;
  if (H5Aiterate2(f->fid, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &w) < 0) {
    rc = w.rc ? w.rc : rs__fail(err, RS_IO, "%s: cannot list the root attributes", f->path);
    goto done;
  }
  const rs__attr *fmt = NULL, *ver = NULL;
  for (size_t i = 0; i < w.n; i++) {
    if (strcmp(w.a[i].key, "format") == 0) fmt = &w.a[i];
    if (strcmp(w.a[i].key, "version") == 0) ver = &w.a[i];
  }
  if (!fmt || fmt->kind != RS_ATTR_STRING || strcmp(fmt->text, RS_CORPUS_FORMAT) != 0) {
    rc = rs__fail(err, RS_FORMAT, "%s: root attribute 'format': expected the string \"%s\", found %s%s%s", f->path,
                  RS_CORPUS_FORMAT, fmt ? "\"" : "none", fmt ? fmt->text : "", fmt ? "\"" : "");
    goto done;
  }
  if (!ver || ver->kind != RS_ATTR_INT || ver->num != RS_CORPUS_VERSION) {
    const int str = ver && ver->kind == RS_ATTR_STRING;
    rc = rs__fail(err, RS_FORMAT, "%s: root attribute 'version': expected the integer %d, found %s%s%s%s", f->path,
                  RS_CORPUS_VERSION, str ? "the string \"" : "", ver ? ver->text : "none", str ? "\"" : "",
                  ver && ver->kind == RS_ATTR_FLOAT ? " (a float)" : "");
    goto done;
  }
done:
  free_attrs(w.a, w.n);
  return rc;
}

/* Integers copied from the file's bytes in pieces on all threads (1M
 * queries: the qrels' 50 MB were a serial tenth of the open through
 * libhdf5).  Signed elements of in_size bytes go to int32 or int64 slots
 * of out_size bytes: as they are when the sizes match, else widened
 * (grades of 8 or 16 bits), as libhdf5 converts them. */
enum { COPY_PIECE_BYTES = 4 << 20, WIDEN_BLOCK = 1 << 14 };
typedef struct {
  int fd;
  uint64_t at;
  size_t n, in_size, out_size, per_piece;
  unsigned char *out;
  const char *file, *name;
  rs_code *rc;
  rs_error *err;
} int_copy;

static void copy_piece(void *vc, size_t k, int tid)
{
  (void)tid;
  const int_copy *c = vc;
  const size_t i0 = k * c->per_piece, n = c->n - i0 < c->per_piece ? c->n - i0 : c->per_piece;
  if (c->in_size == c->out_size) {
    c->rc[k] = pread_all(c->fd, c->out + i0 * c->out_size, n * c->in_size, c->at + (uint64_t)i0 * c->in_size, c->file,
                         c->name, &c->err[k]);
    return;
  }
  unsigned char *in = malloc(WIDEN_BLOCK * c->in_size);
  c->rc[k] = in ? RS_OK : rs__fail(&c->err[k], RS_NOMEM, "%s:%s: out of memory", c->file, c->name);
  int32_t *out = (int32_t *)(void *)(c->out + i0 * c->out_size); /* widening: int32 slots (read_grades) */
  for (size_t a = 0; a < n && !c->rc[k]; a += WIDEN_BLOCK) {
    const size_t m = n - a < WIDEN_BLOCK ? n - a : WIDEN_BLOCK;
    if ((c->rc[k] = pread_all(c->fd, in, m * c->in_size, c->at + (uint64_t)(i0 + a) * c->in_size, c->file, c->name,
                              &c->err[k])))
      break;
    if (c->in_size == 1)
      for (size_t j = 0; j < m; j++) out[a + j] = (int8_t)in[j];
    else
      for (size_t j = 0; j < m; j++) {
        int16_t v;
        memcpy(&v, in + 2 * j, 2);
        out[a + j] = v;
      }
  }
  free(in);
}

/* The native type of integer file type t when libhdf5 would read it into
 * mtype (esize bytes) by copying it or widening it: t itself as native, or
 * for int32 slots signed 8 and 16 bits.  -1 otherwise (a narrowing libhdf5
 * would clamp, another byte order). */
static hid_t copyable_ints(hid_t t, hid_t mtype, size_t esize)
{
  if (H5Tequal(t, mtype) > 0) return mtype;
  if (esize != 4 || H5Tget_class(t) != H5T_INTEGER) return -1;
  const hid_t narrow[] = {H5T_NATIVE_SCHAR, H5T_NATIVE_SHORT}; /* (unsigned ones are refused: expect_numeric) */
  for (size_t i = 0; i < sizeof narrow / sizeof *narrow; i++)
    if (H5Tequal(t, narrow[i]) > 0) return narrow[i];
  return -1;
}

/* *copied = 1 when the n integers of d were copied into buf (mtype, esize
 * bytes each) from the file's bytes (direct_addr); 0: libhdf5 reads them. */
static rs_code copy_ints(const rs__h5file *f, hid_t d, const char *file, const char *name, hid_t mtype, size_t esize,
                         size_t n, void *buf, int *copied, rs_error *err)
{
  *copied = 0;
  if (!f->can_map || n == 0) return RS_OK;
  hid_t t = H5Dget_type(d);
  const hid_t src = t >= 0 ? copyable_ints(t, mtype, esize) : -1;
  const size_t in_size = src >= 0 ? H5Tget_size(src) : 0;
  close_id(t);
  const uint64_t at = src >= 0 ? direct_addr(f, d, src, in_size, n) : 0;
  if (!at) return RS_OK;
  const size_t per_piece = COPY_PIECE_BYTES / in_size, pieces = (n + per_piece - 1) / per_piece;
  int_copy c = {.fd = f->fd, .at = at, .n = n, .in_size = in_size, .out_size = esize, .per_piece = per_piece,
                .out = buf, .file = file, .name = name,
                .rc = rs__calloc(pieces, sizeof *c.rc), .err = rs__calloc(pieces, sizeof *c.err)};
  rs_code rc = RS_OK;
  if (!c.rc || !c.err) rc = rs__fail(err, RS_NOMEM, "%s:%s: out of memory", file, name);
  else rs__parallel_for(pieces, rs__threads(0), 1, copy_piece, &c);
  for (size_t k = 0; k < pieces && !rc; k++) /* the first piece that failed */
    if ((rc = c.rc[k]) && err) *err = c.err[k];
  free(c.rc);
  free(c.err);
  *copied = !rc;
  return rc;
}

/* Reads an integer 1-D dataset whole, converting to mtype (int64 or int32). */
static rs_code read_ints(const rs__h5file *f, const char *file, const char *name, hid_t mtype, size_t esize,
                         size_t want, void **out, size_t *n_out, rs_error *err)
{
  hid_t d = -1;
  dset_info di;
  void *buf = NULL;
  int copied = 0;
  rs_code rc = open_dset(f->fid, file, name, name, &d, err);
  if (rc || (rc = dset_describe(d, file, name, &di, err)) ||
      (rc = expect_numeric(&di, file, name, H5T_INTEGER, 1, want == SIZE_MAX ? 0 : want, "signed integers", err)))
    goto done;
  const size_t n = (size_t)di.dims[0];
  if (!(buf = rs__malloc(rs__mul(n, esize)))) { rc = rs__fail(err, RS_NOMEM, "%s:%s: out of memory", file, name); goto done; }
  if ((rc = copy_ints(f, d, file, name, mtype, esize, n, buf, &copied, err))) goto done;
  if (!copied && (rc = read_rows(d, file, name, mtype, 1, 0, n, 1, buf, err))) goto done;
  *out = buf;
  *n_out = n;
  buf = NULL;
done:
  free(buf);
  close_id(d);
  return rc;
}

/* /qrels/grade as int32.  Grades stored in at most 32 signed bits, or
 * fewer unsigned ones, are converted by HDF5 straight to int32 (nothing to
 * clamp).  Wider ones are read as int64 and narrowed here: HDF5's own
 * conversion would clamp a grade of 2^40 silently (trec_eval mode rejects
 * grades beyond 32 bits).  The direct read touches half the memory (1M
 * queries: 20 of 40 MB, fresh pages being a large part of an open). */
static rs_code read_grades(const rs__h5file *f, const char *file, size_t want, int32_t **out, size_t *n_out, rs_error *err)
{
  static const char name[] = "/qrels/grade";
  hid_t d = -1;
  dset_info di;
  void *p = NULL;
  size_t n = 0;
  rs_code rc = open_dset(f->fid, file, name, name, &d, err);
  if (!rc) rc = dset_describe(d, file, name, &di, err);
  close_id(d);
  if (rc) return rc;
  if (di.cls == H5T_INTEGER && (di.size < 4 || (di.size == 4 && di.is_signed))) {
    if ((rc = read_ints(f, file, name, H5T_NATIVE_INT32, sizeof(int32_t), want, &p, &n, err))) return rc;
    *out = p;
    *n_out = n;
    return RS_OK;
  }
  if ((rc = read_ints(f, file, name, H5T_NATIVE_INT64, sizeof(int64_t), want, &p, &n, err))) return rc;
  const int64_t *g64 = p;
  int32_t *g32 = p; /* in place: element i is read before element i is written */
  for (size_t i = 0; i < n; i++) {
    if (g64[i] < INT32_MIN || g64[i] > INT32_MAX) {
      rc = rs__fail(err, RS_FORMAT, "%s:%s: row %zu: expected a grade that fits 32 bits, found %" PRId64, file, name, i,
                    g64[i]);
      free(p);
      return rc;
    }
    g32[i] = (int32_t)g64[i];
  }
  *out = p;
  *n_out = n;
  return RS_OK;
}

enum { QCHECK_BLOCK = 4096, QCHECK_PAIRWISE_MAX = 48, QCHECK_RANGE = 1, QCHECK_DUP = 2 };

typedef struct {
  int64_t bad;     /* first row with a problem, or -1 */
  int why;         /* QCHECK_RANGE or QCHECK_DUP */
  int32_t max_doc; /* highest doc index judged in the block */
} qcheck_block;

typedef struct {
  const rs__corpus *c;
  qcheck_block *blk;
} qcheck_ctx;

/* The checks of one query, judgments [a, b), row by row: 1 at its first
 * problem (into out).  A query of at most QCHECK_PAIRWISE_MAX judgments
 * has its docs compared pairwise in cache; longer ones are left to the
 * caller. */
static inline int qcheck_query(const int32_t *qdoc, int64_t a, int64_t b, uint32_t limit, int32_t *max_doc,
                               qcheck_block *out)
{
  for (int64_t j = a; j < b; j++) {
    const int32_t d = qdoc[j];
    if ((uint32_t)d >= limit) {
      out->bad = j, out->why = QCHECK_RANGE;
      return 1;
    }
    *max_doc = d > *max_doc ? d : *max_doc;
    if (b - a <= QCHECK_PAIRWISE_MAX)
      for (int64_t i = a; i < j; i++)
        if (qdoc[i] == d) {
          out->bad = j, out->why = QCHECK_DUP;
          return 1;
        }
  }
  return 0;
}

/* Block k of the check: queries [q0, q1), the doc limit, its result. */
typedef struct {
  const int32_t *qdoc;
  const int64_t *qoff;
  uint32_t limit;
  size_t q0, q1;
  qcheck_block *out;
} qcheck_span;

static qcheck_span qcheck_span_of(const qcheck_ctx *x, size_t k)
{
  const rs__corpus *c = x->c;
  const size_t q1 = (k + 1) * QCHECK_BLOCK < c->nq ? (k + 1) * QCHECK_BLOCK : c->nq;
  x->blk[k].bad = -1;
  return (qcheck_span){c->qdoc, c->qoff, c->has_docs ? (uint32_t)c->nd : (uint32_t)INT32_MAX, k * QCHECK_BLOCK, q1,
                       &x->blk[k]};
}

/* Checks queries [k * QCHECK_BLOCK, ...): docs in range, and no doc judged
 * twice (qcheck_query). */
static void qcheck_scan(void *vctx, size_t k, int tid)
{
  (void)tid;
  const qcheck_span sp = qcheck_span_of(vctx, k);
  int32_t max_doc = -1;
  for (size_t q = sp.q0; q < sp.q1; q++)
    if (qcheck_query(sp.qdoc, sp.qoff[q], sp.qoff[q + 1], sp.limit, &max_doc, sp.out)) break;
  sp.out->max_doc = max_doc;
}

#ifdef RS_HAVE_AVX2
/* qcheck_scan with a query of at most 8 judgments (the usual one) checked
 * in one register, without a branch: its docs below the limit, and none
 * equal to another (each lane compared with the lanes 1 to 4 after it,
 * round the register, which meets every pair).  The lanes past the query
 * hold distinct negative numbers, which no doc in range equals.  A query
 * this finds a problem in, or a longer one, takes qcheck_query, which
 * names the first problem as before.  The pairwise loops' branches were
 * most of the check: the 1M corpus's qrels (4M judgments, 4 a query) took
 * 12.8 ms at one thread and 7.2 at two, against 6.0 and 3.6 now. */
RS_AVX2_TARGET static void qcheck_scan_avx2(void *vctx, size_t k, int tid)
{
  (void)tid;
  const qcheck_span sp = qcheck_span_of(vctx, k);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i past = _mm256_add_epi32(lane, _mm256_set1_epi32(INT32_MIN)); /* the lanes past the query */
  const __m256i sign = _mm256_set1_epi32(INT32_MIN);
  const __m256i top = _mm256_xor_si256(_mm256_set1_epi32((int32_t)sp.limit), sign); /* unsigned order, as signed */
  __m256i rot[4];
  for (int r = 0; r < 4; r++) rot[r] = _mm256_and_si256(_mm256_add_epi32(lane, _mm256_set1_epi32(r + 1)), _mm256_set1_epi32(7));
  __m256i high = _mm256_set1_epi32(-1);
  int32_t max_doc = -1;
  for (size_t q = sp.q0; q < sp.q1; q++) {
    const int64_t a = sp.qoff[q], b = sp.qoff[q + 1];
    if (b - a <= 8) {
      const __m256i in = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(b - a)), lane);
      const __m256i d = _mm256_maskload_epi32((const int *)(sp.qdoc + a), in); /* 0 past the query */
      const __m256i own = _mm256_blendv_epi8(past, d, in);
      __m256i bad = _mm256_andnot_si256(_mm256_cmpgt_epi32(top, _mm256_xor_si256(d, sign)), in);
      for (int r = 0; r < 4; r++)
        bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(own, _mm256_permutevar8x32_epi32(own, rot[r])));
      if (_mm256_testz_si256(bad, bad)) {
        high = _mm256_max_epi32(high, own);
        continue;
      }
    }
    if (qcheck_query(sp.qdoc, a, b, sp.limit, &max_doc, sp.out)) break;
  }
  int32_t h[8];
  _mm256_storeu_si256((__m256i *)(void *)h, high);
  for (int i = 0; i < 8; i++) max_doc = h[i] > max_doc ? h[i] : max_doc;
  sp.out->max_doc = max_doc;
}
#endif

/* The qrels' own invariants: CSR offsets, doc range, one judgment per doc. */
static rs_code check_qrels(const rs__corpus *c, size_t nnz, rs_error *err)
{
  const int64_t *off = c->qoff;
  if (off[0] != 0)
    return rs__fail(err, RS_FORMAT, "%s:/qrels/offsets: row 0: expected 0, found %" PRId64, c->path, off[0]);
  for (size_t i = 0; i < c->nq; i++)
    if (off[i + 1] < off[i])
      return rs__fail(err, RS_FORMAT,
                      "%s:/qrels/offsets: row %zu: offsets must not decrease, found %" PRId64 " after %" PRId64,
                      c->path, i + 1, off[i + 1], off[i]);
  if ((uint64_t)off[c->nq] != nnz)
    return rs__fail(err, RS_FORMAT, "%s:/qrels/offsets: last offset must equal the length of /qrels/doc (%zu), found %" PRId64,
                    c->path, nnz, off[c->nq]);
  /* The per-query checks run on all threads, in blocks of queries; each
   * block keeps its first problem, and the first in query order is told. */
  const size_t n_blocks = (c->nq + QCHECK_BLOCK - 1) / QCHECK_BLOCK;
  qcheck_block *blk = rs__calloc(n_blocks ? n_blocks : 1, sizeof *blk);
  if (!blk) return rs__fail(err, RS_NOMEM, "out of memory checking the qrels");
  qcheck_ctx ctx = {c, blk};
  rs__item_fn scan = qcheck_scan;
#ifdef RS_HAVE_AVX2
  if (rs__cpu_has_avx2()) scan = qcheck_scan_avx2;
#endif
  rs__parallel_for(n_blocks, rs__threads(0), 1, scan, &ctx);
  int64_t bad = -1;
  int why = 0;
  int32_t max_doc = -1;
  for (size_t k = 0; k < n_blocks; k++) {
    if (bad < 0 && blk[k].bad >= 0) bad = blk[k].bad, why = blk[k].why;
    max_doc = blk[k].max_doc > max_doc ? blk[k].max_doc : max_doc;
  }
  free(blk);
  /* Queries with many judgments: each doc stamped with the last query that
   * judged it (serial; one array over the docs). */
  uint32_t *stamp = NULL;
  for (size_t i = 0; i < c->nq; i++) {
    const int64_t a = off[i], b = off[i + 1];
    if (bad >= 0 && a > bad) break;
    if (b - a <= QCHECK_PAIRWISE_MAX) continue;
    if (!stamp && !(stamp = rs__calloc((size_t)max_doc + 1, sizeof *stamp)))
      return rs__fail(err, RS_NOMEM, "out of memory checking the qrels");
    for (int64_t j = a; j < b; j++) {
      const int32_t d = c->qdoc[j];
      if (d < 0 || d > max_doc) break; /* out of range: reported below */
      if (stamp[d] == (uint32_t)i + 1 && (bad < 0 || j < bad)) {
        bad = j, why = QCHECK_DUP;
        break;
      }
      stamp[d] = (uint32_t)i + 1;
    }
  }
  free(stamp);
  if (bad < 0) return RS_OK;
  size_t q = 0; /* the query of row `bad` */
  for (size_t lo = 0, hi = c->nq; lo < hi;) {
    const size_t mid = (lo + hi) / 2;
    if (off[mid + 1] <= bad) lo = mid + 1;
    else hi = mid, q = mid;
  }
  const int32_t d = c->qdoc[bad];
  if (why == QCHECK_RANGE)
    return rs__fail(err, RS_FORMAT, "%s:/qrels/doc: row %" PRId64 " (query \"%s\"): doc index %" PRId32
                    " out of range [0, %zu)", c->path, bad, rs__corpus_qid(c, q), d,
                    c->has_docs ? c->nd : (size_t)INT32_MAX);
  return rs__fail(err, RS_DUPLICATE, "%s:/qrels/doc: row %" PRId64 " (query \"%s\"): doc index %" PRId32 " %s%s%s judged twice",
                  c->path, bad, rs__corpus_qid(c, q), d, c->has_docs ? "(\"" : "", c->has_docs ? rs__corpus_did(c, d) : "",
                  c->has_docs ? "\")" : "");
}

/* How an ids dataset is read: from the file's bytes (variable-length
 * strings from their heap, fixed-length ones as they lie) or through
 * libhdf5. */
enum { IDS_LIBHDF5, IDS_HEAP, IDS_FIXED };
typedef struct {
  int how;
  rs__h5_heap_rows rows; /* IDS_HEAP */
  fixed_rows fixed;      /* IDS_FIXED */
} ids_place;

/* How the ids dataset name of f (want rows) is read (pl->how). */
static rs_code ids_place_for(const rs__h5file *f, const char *file, const char *name, size_t want, ids_place *pl,
                             rs_error *err)
{
  pl->how = IDS_LIBHDF5;
  if (!f->heap_ids || !f->can_map) return RS_OK;
  hid_t d = -1;
  size_t n = 0;
  rs_code rc = open_dset(f->fid, file, name, name, &d, err);
  if (!rc) rc = check_strings(d, file, name, want, &n, err);
  if (!rc && heap_rows_of(d, f->size, &pl->rows)) {
    pl->rows.fd = f->fd;
    pl->rows.max_bytes = declared_max(f->size);
    pl->rows.file = file;
    pl->rows.name = name;
    pl->how = IDS_HEAP;
  } else if (!rc && fixed_rows_of(d, f->size, &pl->fixed)) {
    pl->how = IDS_FIXED;
  }
  close_id(d);
  return rc;
}


/* Reads ids dataset name (/queries/id or /docs/id: the probe's flag
 * `skipped`) as read_strings gives them: from the file's bytes when their
 * layout allows (1M query ids: 0.03 s, where libhdf5 takes 0.2 s), else
 * through libhdf5. */
static rs_code read_ids(const rs__h5file *f, const char *file, const char *name, unsigned skipped, size_t want,
                        char ***out, size_t *n_out, rs_error *err)
{
  ids_place pl;
  rs_code rc = ids_place_for(f, file, name, want, &pl, err);
  if (rc) return rc;
  if (pl.how == IDS_HEAP) {
    if (!(rc = rs__h5_heap_strings(&pl.rows, out, err))) *n_out = pl.rows.n;
    return rc;
  }
  if (pl.how == IDS_FIXED) {
    const fixed_rows *fr = &pl.fixed;
    char *fbuf = rs__malloc(rs__mul(fr->n, fr->width));
    if (!fbuf) return rs__fail(err, RS_NOMEM, "%s:%s: out of memory for %zu strings", file, name, fr->n);
    if (!(rc = pread_all(f->fd, fbuf, fr->n * fr->width, fr->at, file, name, err)) &&
        !(rc = pool_fixed(fbuf, fr->n, fr->width, fr->space_pad, out, file, name, err)))
      *n_out = fr->n;
    free(fbuf);
    return rc;
  }
  if (f->heap_skipped & skipped) /* the probe found the layout that this open does not: the file changed */
    return rs__fail(err, RS_IO, "%s:%s: the file changed while it was read; run the command again", file, name);
  return read_strings(f->fid, file, name, want, out, n_out, err);
}

/* Ids strictly rising in strcmp order, as probe_strings checks doc ids. */
typedef struct {
  char prev[256];
  size_t prev_len;
  int has_prev, in_order;
} order_check;

static void check_order(void *vo, size_t row, const char *s, size_t len)
{
  order_check *o = vo;
  (void)row;
  if (!o->in_order) return;
  if ((o->has_prev && cmp_counted(o->prev, o->prev_len, s, len) >= 0) || len >= sizeof o->prev) {
    o->in_order = 0; /* (longer ids: the ids are read instead) */
    return;
  }
  memcpy(o->prev, s, len);
  if (len < 8) memset(o->prev + len, 0, 8 - len); /* check_one_qid reads a short prev as a word */
  o->prev_len = len;
  o->has_prev = 1;
}

/* A part's query ids: checked and counted (qc, without hashes), and
 * whether they rise strictly in strcmp order.  Ids that rise are distinct
 * and need no hashes (qid_hashes_distinct: 15 ms of a one-thread open of
 * 1M ids; heap_qids_check hashes them in a second read otherwise);
 * `ragsweep import` writes the queries in that order, and gen_sweep too. */
typedef struct {
  qid_check qc;
  order_check order; /* its prev: the part's last id */
  char first[sizeof ((order_check *)0)->prev];
  size_t first_len;
} qid_part_check;

static void check_one_qid(void *vq, size_t row, const char *s, size_t len)
{
  qid_part_check *q = vq;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
  /* An ASCII id of 1 to 8 bytes (the usual) as one word: 8 bytes of it can
   * be read (h5_heap.h); its bytes are not NUL (they end at the first), so
   * as big-endian numbers, zero-filled, the words order as cmp_counted
   * orders the ids.  rs__utf8_valid, memcmp and memcpy were most of 250
   * instructions an id. */
  if (s && len - 1 < 8 && !q->qc.bad && q->qc.n < q->qc.cap) {
    uint64_t w;
    memcpy(&w, s, 8);
    w &= len == 8 ? ~0ull : (1ull << (8 * len)) - 1;
    if (!(w & 0x8080808080808080ull)) { /* ASCII, so UTF-8: qid_check_one's checks pass */
      q->qc.n++; /* (qc has no hashes here: see qid_part_check) */
      order_check *o = &q->order;
      if (!o->has_prev) memcpy(q->first, s, len), q->first_len = len;
      if (!o->in_order) return;
      if (o->has_prev) {
        uint64_t before;
        memcpy(&before, o->prev, 8); /* zero-filled past prev_len (check_order, and here) */
        if (o->prev_len <= 8 ? __builtin_bswap64(before) >= __builtin_bswap64(w)
                             : cmp_counted(o->prev, o->prev_len, s, len) >= 0) {
          o->in_order = 0;
          return;
        }
      }
      memcpy(o->prev, &w, 8);
      o->prev_len = len;
      o->has_prev = 1;
      return;
    }
  }
#endif
  qid_check_one(&q->qc, s, len);
  if (!s) {
    q->order.in_order = 0;
    return;
  }
  if (!q->order.has_prev && len < sizeof q->first) {
    memcpy(q->first, s, len);
    q->first_len = len;
  }
  check_order(&q->order, row, s, len);
}

/* The query ids in parts (one a thread, of at least QID_PART_MIN rows),
 * each part's hashes into its own range of one array. */
enum { QID_PARTS_MAX = 16, QID_PART_MIN = 1 << 16 };
typedef struct {
  size_t parts;
  rs__h5_heap_rows part[QID_PARTS_MAX];
  qid_part_check qc[QID_PARTS_MAX];
  rs_code rc[QID_PARTS_MAX];
  rs_error err[QID_PARTS_MAX];
} qid_parts;

/* Whether every part's ids rise, and so do the last of each part and the
 * first of the next. */
static int qid_parts_rise(const qid_parts *p)
{
  for (size_t i = 0; i < p->parts; i++)
    if (!p->qc[i].order.in_order) return 0;
  for (size_t i = 1; i < p->parts; i++) {
    const order_check *before = &p->qc[i - 1].order;
    if (before->has_prev && p->qc[i].order.has_prev &&
        cmp_counted(before->prev, before->prev_len, p->qc[i].first, p->qc[i].first_len) >= 0)
      return 0;
  }
  return 1;
}

static void check_qid_part(void *vp, size_t i, int tid)
{
  qid_parts *p = vp;
  (void)tid;
  p->rc[i] = rs__h5_heap_visit(&p->part[i], check_one_qid, &p->qc[i], &p->err[i]);
}

/* The hash of each id, at its row in hash[] (rows counted from the
 * dataset's first). */
static void hash_one_qid(void *vh, size_t row, const char *s, size_t len)
{
  uint64_t *hash = vh;
  hash[row] = id_hash(s, len);
}

typedef struct {
  qid_parts *p;
  uint64_t *hash;
} qid_hash_pass;

static void hash_qid_part(void *vh, size_t i, int tid)
{
  qid_hash_pass *h = vh;
  (void)tid;
  h->p->rc[i] = rs__h5_heap_visit(&h->p->part[i], hash_one_qid, h->hash, &h->p->err[i]);
}

/* qid_check, as the probe makes it, on query ids read from the file's
 * bytes, in parts on all threads (1M ids: 0.04 s on one): *ok = 1 when it
 * passes (the ids are not kept).  Ids that rise are distinct; only when
 * they do not are they read again for their hashes, which are then
 * bucketed (the hashes of ids that rise were 8 MB of fresh memory a
 * million ids, never read). */
static rs_code heap_qids_check(const rs__corpus *c, int *ok, rs_error *err)
{
  *ok = 0;
  ids_place pl;
  rs_code rc = ids_place_for(c->runs.file, c->path, "/queries/id", c->nq, &pl, err);
  if (rc || pl.how != IDS_HEAP) return rc; /* fixed-length ids: the exact check (check_query_ids) */
  const rs__h5_heap_rows rows = pl.rows;
  qid_parts *p = rs__calloc(1, sizeof *p);
  if (!p) return RS_OK; /* then the exact check */
  p->parts = (size_t)rs__threads(0);
  if (p->parts > QID_PARTS_MAX) p->parts = QID_PARTS_MAX;
  if (p->parts > rows.n / QID_PART_MIN) p->parts = rows.n / QID_PART_MIN ? rows.n / QID_PART_MIN : 1;
  for (size_t i = 0; i < p->parts; i++) {
    const size_t row0 = part_begin(rows.n, p->parts, i), row1 = part_begin(rows.n, p->parts, i + 1);
    p->part[i] = rows;
    p->part[i].rows_at += (uint64_t)row0 * (4 + rows.sizeof_addr + 4);
    p->part[i].first_row = row0;
    p->part[i].n = row1 - row0;
    p->qc[i] = (qid_part_check){.qc = {.cap = row1 - row0}, .order = {.in_order = 1}};
  }
  rs__parallel_for(p->parts, (int)p->parts, 1, check_qid_part, p);
  int pass = 1;
  for (size_t i = 0; i < p->parts && !rc; i++) { /* the first failing part: the row one reader would have named */
    if ((rc = p->rc[i]) && err) *err = p->err[i];
    pass = pass && !p->qc[i].qc.bad && p->qc[i].qc.n == p->qc[i].qc.cap;
  }
  if (!rc && pass && qid_parts_rise(p)) {
    *ok = 1;
  } else if (!rc && pass) {
    qid_hash_pass h = {p, rs__malloc(rs__mul(rows.n ? rows.n : 1, sizeof *h.hash))};
    if (h.hash) { /* (else the exact check) */
      rs__parallel_for(p->parts, (int)p->parts, 1, hash_qid_part, &h);
      int read = 1;
      for (size_t i = 0; i < p->parts; i++) read &= p->rc[i] == RS_OK;
      *ok = read && qid_hashes_distinct(h.hash, rows.n, rs__threads(0));
      free(h.hash);
    }
  }
  free(p);
  return rc;
}

/* Fixed-length doc ids in parts, each part's rows checked for order on
 * its own thread (the rows where parts meet afterwards).  Reads of 128 KiB
 * into one buffer a part: at 1 MiB its fresh pages were 258 faults of the
 * 1M open at one thread and 515 at two, and the check of 2M ids took 13 ms
 * at two threads, against 6 ms now. */
enum { ORDER_PARTS_MAX = 16, ORDER_PART_MIN = 1 << 15, ORDER_READ_BYTES = 1 << 17 };
typedef struct {
  const fixed_rows *fr;
  int fd;
  const char *file;
  size_t parts;
  int in_order[ORDER_PARTS_MAX];
  rs_code rc[ORDER_PARTS_MAX];
  rs_error err[ORDER_PARTS_MAX];
} order_parts;

/* Whether the strings a and b (w bytes each, fixed_len) rise strictly.
 * Padded with NULs, the answer is at the first byte where they differ,
 * unless a NUL (in both) comes before it: then they are equal.  Eight
 * bytes a step (the rows of 1M doc ids: 17 ns a row with a memchr for each
 * length and a memcmp). */
static inline int fixed_rise(const char *a, const char *b, size_t w, int space_pad)
{
  if (space_pad) return cmp_counted(a, fixed_len(a, w, 1), b, fixed_len(b, w, 1)) < 0;
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
  for (; i + 8 <= w; i += 8) {
    uint64_t u, v;
    memcpy(&u, x + i, 8);
    memcpy(&v, y + i, 8);
    const uint64_t diff = u ^ v, nul = (u - 0x0101010101010101ull) & ~u & 0x8080808080808080ull; /* lowest flag exact */
    if (diff | nul) {
      const unsigned at_diff = diff ? (unsigned)__builtin_ctzll(diff) / 8 : 8, at_nul = nul ? (unsigned)__builtin_ctzll(nul) / 8 : 8;
      if (at_nul < at_diff) return 0; /* equal up to a NUL in both */
      return x[i + at_diff] < y[i + at_diff];
    }
  }
#endif
  for (; i < w; i++) {
    if (x[i] != y[i]) return x[i] < y[i]; /* a NUL in a: a is the shorter */
    if (!x[i]) return 0;
  }
  return 0;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
/* The word u of a string, and the one of another at the same place, cut
 * after u's first NUL (bytes past it are not the string's), as numbers
 * that order as the bytes do; 1 when u holds a NUL. */
static inline int cut_words(uint64_t u, uint64_t v, uint64_t *hu, uint64_t *hv)
{
  const uint64_t nul = (u - 0x0101010101010101ull) & ~u & 0x8080808080808080ull; /* lowest flag exact */
  const uint64_t first = nul & (0 - nul);
  const uint64_t keep = ((first >> 7) << 8) - 1; /* bytes up to that NUL; all 8 without one */
  *hu = __builtin_bswap64(u & keep), *hv = __builtin_bswap64(v & keep);
  return nul != 0;
}

/* Whether rows [0, n) of w bytes (9 to 16, NUL-padded: ids like
 * "doc00012345") rise strictly, as fixed_rise says: each row's first 8
 * bytes and last 8, cut after the first NUL, compared as numbers, the
 * last 8 only when the first 8 are equal and hold no NUL (those it reads
 * again are then equal and not NUL).  fixed_rise's loop and byte loop
 * for the rest were 60 instructions a row of 11 bytes (callgrind, 2M
 * rows). */
static int short_rows_rise(const char *rows, size_t n, size_t w)
{
  for (size_t j = 0; j + 1 < n; j++) {
    const char *x = rows + j * w, *y = x + w;
    uint64_t u, v, hu, hv;
    memcpy(&u, x, 8);
    memcpy(&v, y, 8);
    const int ends = cut_words(u, v, &hu, &hv);
    if (hu != hv) {
      if (hu > hv) return 0;
      continue;
    }
    if (ends) return 0; /* equal */
    memcpy(&u, x + w - 8, 8);
    memcpy(&v, y + w - 8, 8);
    cut_words(u, v, &hu, &hv);
    if (hu >= hv) return 0;
  }
  return 1;
}
#endif

static void check_order_part(void *vp, size_t i, int tid)
{
  (void)tid;
  order_parts *p = vp;
  const fixed_rows *fr = p->fr;
  const size_t w = fr->width, per_read = ORDER_READ_BYTES / w ? ORDER_READ_BYTES / w : 1;
  const size_t r0 = part_begin(fr->n, p->parts, i), r1 = part_begin(fr->n, p->parts, i + 1);
  char *buf = rs__malloc(rs__mul(per_read + 1, w)); /* row 0: the last row of the block before */
  int in_order = 1;
  p->rc[i] = buf ? RS_OK : rs__fail(&p->err[i], RS_NOMEM, "%s:/docs/id: out of memory", p->file);
  for (size_t a = r0; a < r1 && in_order && !p->rc[i]; a += per_read) {
    const size_t k = r1 - a < per_read ? r1 - a : per_read;
    if ((p->rc[i] = pread_all(p->fd, buf + w, k * w, fr->at + (uint64_t)a * w, p->file, "/docs/id", &p->err[i]))) break;
    const size_t j0 = a == r0 ? 1 : 0; /* row j0 is the first to compare with the row before it */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
    if (!fr->space_pad && w - 9 < 8) {
      in_order = short_rows_rise(buf + j0 * w, k + 1 - j0, w);
    } else
#endif
      for (size_t j = j0; j < k && in_order; j++) in_order = fixed_rise(buf + j * w, buf + (j + 1) * w, w, fr->space_pad);
    memcpy(buf, buf + k * w, w);
  }
  free(buf);
  p->in_order[i] = in_order;
}

/* *sorted = 1 when fixed-length doc ids, read from the file's bytes, rise
 * strictly in strcmp order, on all threads (1M ids of 11 bytes: the
 * probe's reading of them through libhdf5 was a fifth of a one-thread
 * open). */
static rs_code fixed_docs_sorted(const rs__corpus *c, const fixed_rows *fr, int *sorted, rs_error *err)
{
  order_parts *p = rs__calloc(1, sizeof *p);
  if (!p) return rs__fail(err, RS_NOMEM, "%s:/docs/id: out of memory", c->path);
  *p = (order_parts){.fr = fr, .fd = c->runs.file->fd, .file = c->path, .parts = (size_t)rs__threads(0)};
  if (p->parts > ORDER_PARTS_MAX) p->parts = ORDER_PARTS_MAX;
  if (p->parts > fr->n / ORDER_PART_MIN) p->parts = fr->n / ORDER_PART_MIN ? fr->n / ORDER_PART_MIN : 1;
  rs__parallel_for(p->parts, (int)p->parts, 1, check_order_part, p);
  rs_code rc = RS_OK;
  int in_order = 1;
  for (size_t i = 0; i < p->parts && !rc; i++) {
    if ((rc = p->rc[i]) && err) *err = p->err[i];
    in_order = in_order && p->in_order[i];
  }
  char *two = NULL; /* the last row of a part and the first of the next */
  for (size_t i = 1; i < p->parts && in_order && !rc; i++) {
    const size_t r = part_begin(fr->n, p->parts, i), w = fr->width;
    if (!two && !(two = rs__malloc(rs__mul(2, w)))) rc = rs__fail(err, RS_NOMEM, "%s:/docs/id: out of memory", c->path);
    else if (!(rc = pread_all(p->fd, two, 2 * w, fr->at + (uint64_t)(r - 1) * w, c->path, "/docs/id", err)))
      in_order = fixed_rise(two, two + w, w, fr->space_pad);
  }
  free(two);
  free(p);
  *sorted = !rc && in_order;
  return rc;
}

/* *sorted = 1 when the doc ids, read from the file's bytes, rise in strcmp
 * order (the ids are not kept). */
static rs_code heap_docs_sorted(const rs__corpus *c, int *sorted, rs_error *err)
{
  *sorted = 0;
  ids_place pl;
  rs_code rc = ids_place_for(c->runs.file, c->path, "/docs/id", c->nd, &pl, err);
  if (rc || pl.how == IDS_LIBHDF5) return rc;
  if (pl.how == IDS_FIXED) return fixed_docs_sorted(c, &pl.fixed, sorted, err);
  order_check o = {.in_order = 1};
  rc = rs__h5_heap_visit(&pl.rows, check_order, &o, err);
  *sorted = !rc && o.in_order;
  return rc;
}

static int cmp_qid_index(const void *x, const void *y, void *v)
{
  char *const *id = v;
  const size_t a = *(const size_t *)x, b = *(const size_t *)y;
  const int d = strcmp(id[a], id[b]);
  return d ? d : (a > b) - (a < b);
}

/* qsort_r is not C11: a file-scope pointer for the comparator, set and used
 * by one thread only (this file is single-threaded, see corpus.h). */
static char **qid_sort_ids;
static int cmp_qid(const void *x, const void *y) { return cmp_qid_index(x, y, qid_sort_ids); }

/* Query ids are written raw into every CSV: each must be non-empty, UTF-8
 * (the README promises it) and unique (per_query.csv is keyed by it). */
static rs_code check_query_ids(rs__corpus *c, rs_error *err)
{
  if (c->runs.file->qids_ok) return RS_OK; /* checked by the probe, without reading them here */
  rs_code rc = rs__corpus_load_queries(c, err);
  if (rc) return rc;
  for (size_t i = 0; i < c->nq; i++) {
    const char *id = c->query_id[i];
    size_t bad = 0;
    if (!*id) return rs__fail(err, RS_FORMAT, "%s:/queries/id: row %zu: expected a query id, found an empty string", c->path, i);
    if (!rs__utf8_valid(id, strlen(id), &bad))
      return rs__fail(err, RS_FORMAT, "%s:/queries/id: row %zu: expected UTF-8, found byte 0x%02x at offset %zu", c->path,
                      i, (unsigned)(unsigned char)id[bad], bad);
  }
  size_t *order = rs__malloc(rs__mul(c->nq ? c->nq : 1, sizeof *order));
  if (!order) return rs__fail(err, RS_NOMEM, "%s:/queries/id: out of memory", c->path);
  for (size_t i = 0; i < c->nq; i++) order[i] = i;
  qid_sort_ids = c->query_id;
  qsort(order, c->nq, sizeof *order, cmp_qid);
  qid_sort_ids = NULL;
  for (size_t i = 1; i < c->nq && !rc; i++)
    if (strcmp(c->query_id[order[i - 1]], c->query_id[order[i]]) == 0)
      rc = rs__fail(err, RS_FORMAT, "%s:/queries/id: rows %zu and %zu: expected unique query ids, found '%s' twice",
                    c->path, order[i - 1], order[i], c->query_id[order[i]]);
  free(order);
  return rc;
}

rs_code rs__corpus_open(const char *path, rs__corpus **out, rs_error *err)
{
  rs__h5file *f = NULL;
  rs__corpus *c = NULL;
  size_t n = 0, nnz = 0, ngr = 0;
  void *p = NULL;
  rs_code rc = open_corpus_file(path, &f, err);
  if (rc) return rc;
  if (!(c = rs__calloc(1, sizeof *c)) || !(c->path = strdup(path))) {
    close_file(f);
    if (c) free(c);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  c->runs.file = f; /* from here on, rs__corpus_close closes the file */
  if ((rc = read_root_attrs(f, err))) goto fail;
  /* Query ids and texts are only described here: they are kept when first
   * needed (rs__corpus_load_queries), which an aggregate-only sweep never
   * does (ids read from the bytes are checked below, then let go). */
  if ((rc = describe_strings(f->fid, path, "/queries/id", SIZE_MAX, &c->nq, err))) goto fail;
  if (link_exists(f->fid, "/queries/text")) {
    if ((rc = describe_strings(f->fid, path, "/queries/text", c->nq, &n, err))) goto fail;
    c->has_text = 1;
  }
  if (link_exists(f->fid, "docs") && link_exists(f->fid, "/docs/id")) {
    /* Only the layout now: the ids themselves are read at the end of the
     * open (see there) or when first needed. */
    if ((rc = describe_strings(f->fid, path, "/docs/id", SIZE_MAX, &c->nd, err))) goto fail;
    if (c->nd > INT32_MAX) {
      rc = rs__fail(err, RS_UNSUPPORTED, "%s:/docs/id: at most %d docs are supported, found %zu", path, INT32_MAX, c->nd);
      goto fail;
    }
    c->has_docs = 1;
  }
  if (link_exists(f->fid, "docs") && link_exists(f->fid, "/docs/text")) {
    if (!c->has_docs) {
      rc = rs__fail(err, RS_FORMAT, "%s:/docs/text: expected /docs/id beside it (the texts follow its order), found none",
                    path);
      goto fail;
    }
    /* Only the layout now: the texts are read by rs__corpus_load_doc_texts. */
    if ((rc = describe_strings(f->fid, path, "/docs/text", c->nd, &n, err))) goto fail;
    c->has_doc_text = 1;
  }
  /* Ids read from the file's bytes are checked now, with no libhdf5 (so
   * before the probe's verdict: its error still comes first, see fail),
   * while the probe runs and before the qrels take their memory. */
  int qids_checked = 0, docs_sorted = 0;
  if ((rc = heap_qids_check(c, &qids_checked, err))) goto fail;
  if (c->has_docs && (rc = heap_docs_sorted(c, &docs_sorted, err))) goto fail;
  if (!link_exists(f->fid, "qrels")) { rc = rs__fail(err, RS_FORMAT, "%s: missing group /qrels", path); goto fail; }
  if ((rc = read_ints(f, path, "/qrels/offsets", H5T_NATIVE_INT64, sizeof(int64_t), c->nq + 1, &p, &n, err)))
    goto fail;
  c->qoff = p;
  if ((rc = read_ints(f, path, "/qrels/doc", H5T_NATIVE_INT32, sizeof(int32_t), SIZE_MAX, &p, &nnz, err)))
    goto fail;
  c->qdoc = p;
  if ((rc = read_grades(f, path, nnz, &c->qgrade, &ngr, err))) goto fail;
  if ((rc = check_qrels(c, nnz, err))) goto fail;
  if ((rc = open_runs(f, c->nq, 0, &c->runs, err))) goto fail;
  /* The ids, once the probe's verdict is in (it decoded them, or left them
   * to read_ids's reading of the file's bytes).  Doc ids in strcmp order
   * are read when first needed (rs__corpus_load_doc_ids); others now, for
   * the ranks of the ties. */
  if ((rc = file_settle(f, err))) goto fail;
  if (!qids_checked && (rc = check_query_ids(c, err))) goto fail;
  c->doc_ids_sorted = f->docs_sorted || docs_sorted;
  if (!c->doc_ids_sorted && (rc = rs__corpus_load_doc_ids(c, err))) goto fail;
  *out = c;
  return RS_OK;
fail:
  if (file_settle(f, NULL)) { /* the probe's verdict first, as when it ran before the open */
    rc = f->probe_rc;
    if (err) *err = f->probe_err;
  }
  rs__corpus_close(c);
  return rc;
}

rs_code rs__corpus_load_queries(rs__corpus *c, rs_error *err)
{
  size_t n = 0;
  rs_code rc;
  if (c->in_memory) return RS_OK; /* built with its ids and texts */
  if ((rc = file_settle(c->runs.file, err))) return rc;
  if (!c->query_id &&
      (rc = read_ids(c->runs.file, c->path, "/queries/id", HEAP_QIDS, c->nq, &c->query_id, &n, err)))
    return rc;
  if (c->has_text && !c->query_text &&
      (rc = read_strings(c->runs.file->fid, c->path, "/queries/text", c->nq, &c->query_text, &n, err)))
    return rc;
  return RS_OK;
}

rs_code rs__corpus_load_doc_texts(rs__corpus *c, rs_error *err)
{
  size_t n = 0;
  if (!c->has_doc_text)
    return rs__fail(err, RS_FORMAT, "%s: no /docs/text; expected the doc texts (ragsweep import --docs FILE writes them)",
                    c->path);
  if (c->doc_text || c->in_memory) return RS_OK;
  rs_code rc = file_settle(c->runs.file, err);
  if (!rc) rc = probe_file(c->path, "/docs/text", NULL, NULL, err);
  if (rc) return rc;
  return read_strings(c->runs.file->fid, c->path, "/docs/text", c->nd, &c->doc_text, &n, err);
}

rs_code rs__corpus_load_doc_ids(rs__corpus *c, rs_error *err)
{
  size_t n = 0;
  if (!c->has_docs || c->doc_id || c->in_memory) return RS_OK;
  rs_code rc = file_settle(c->runs.file, err);
  if (rc) return rc;
  return read_ids(c->runs.file, c->path, "/docs/id", HEAP_DOCS, c->nd, &c->doc_id, &n, err);
}

const char *rs__corpus_did(const rs__corpus *c, int32_t d)
{
  /* A cache, as rs__corpus_qid. */
  if (!c->doc_id && rs__corpus_load_doc_ids((rs__corpus *)c, NULL) != RS_OK) return "?";
  return c->doc_id && d >= 0 && (size_t)d < c->nd ? c->doc_id[d] : "?";
}

const char *rs__corpus_qid(const rs__corpus *c, size_t q)
{
  /* A cache: loading does not change what the corpus is. */
  if (!c->query_id && rs__corpus_load_queries((rs__corpus *)c, NULL) != RS_OK) return "?";
  return q < c->nq ? c->query_id[q] : "?";
}

void rs__corpus_close(rs__corpus *c)
{
  if (!c) return;
  free(c->path);
  free(c->query_id);
  free(c->query_text);
  free(c->doc_id);
  free(c->doc_text);
  free(c->qoff);
  free(c->qdoc);
  free(c->qgrade);
  rs__runset_close(&c->runs);
  rs__mem_corpus_free_ids(c);
  free(c);
}

/* --- reading runs ---------------------------------------------------------- */

static rs_code grow_rows(rs__block *b, size_t rows, rs_error *err)
{
  if (rows > b->cap_rows || !b->off) {
    int64_t *o = rs__realloc(b->off, rs__mul(rows + 1, sizeof *o));
    if (!o) return rs__fail(err, RS_NOMEM, "out of memory for a block of %zu queries", rows);
    b->off = o;
    b->cap_rows = rows;
  }
  return RS_OK;
}

/* One buffer for both (rs__malloc_refilled): the usual block, 2612 rows x
 * 100 docs and float scores, fills one 2 MB page, where the docs and the
 * scores from malloc took 4 kB pages, each its own first-touch fault. */
rs_code rs__block_room(rs__block *b, size_t docs, size_t score_bytes, int32_t **doc, void **score, rs_error *err)
{
  const size_t doc_bytes = rs__mul(docs, sizeof **doc);
  const size_t at = doc_bytes <= SIZE_MAX - RS_CACHE_LINE ? (doc_bytes + RS_CACHE_LINE - 1) & ~(size_t)(RS_CACHE_LINE - 1)
                                                          : SIZE_MAX;
  const size_t need = at <= SIZE_MAX - score_bytes ? at + score_bytes : SIZE_MAX;
  if (need > b->cap_bytes || !b->buf) {
    free(b->buf);
    if (!(b->buf = rs__malloc_refilled(need, &b->cap_bytes)))
      return rs__fail(err, RS_NOMEM, "out of memory for a block of %zu docs", docs);
  }
  *doc = b->buf;
  *score = (char *)b->buf + at;
  return RS_OK;
}

/* Copies bytes [start, start + len) of the file into buf with pread.  Not
 * mmap: on virtual machines whose page tables are shadowed, mapping and
 * unmapping a window costs more than copying it (1M x 100 from the page
 * cache: 1.1-1.5 s mapped, 0.09 s through pread into a reused buffer). */
static rs_code read_window(const rs__run *run, void *buf, uint64_t start, size_t len, const char *shown, rs_error *err)
{
  return pread_all(run->file->fd, buf, len, start, run->path, shown, err);
}

/* Elements [first, first + n_elems) of a run's doc or score dataset (1-D, or
 * 2-D rows [q0, q0 + rows) when dense) into buf: copied straight from the
 * file when the run allows it, else read by HDF5 as mtype. */
static rs_code read_elems(const rs__run *run, hid_t g, const char *dset, uint64_t addr, size_t esize, hid_t mtype,
                          size_t q0, size_t rows, uint64_t first, size_t n_elems, void *buf, rs_error *err)
{
  char shown[600];
  snprintf(shown, sizeof shown, "/runs/%s/%s", run->name, dset);
  if (n_elems == 0) return RS_OK;
  if (addr) return read_window(run, buf, addr + first * esize, n_elems * esize, shown, err);
  hid_t d = H5Dopen2(g, dset, H5P_DEFAULT);
  if (d < 0) return rs__fail(err, RS_IO, "%s:%s: cannot open", run->path, shown);
  rs_code rc = run->csr ? read_rows(d, run->path, shown, mtype, 1, (hsize_t)first, n_elems, 1, buf, err)
                        : read_rows(d, run->path, shown, mtype, 2, q0, rows, run->k, buf, err);
  close_id(d);
  return rc;
}

int rs__run_read_is_pread_only(const rs__run *run)
{
  return !run->mem && !run->csr && run->doc_addr && (!run->has_score || run->score_addr);
}

rs_code rs__run_read(const rs__run *run, size_t q0, size_t n, rs__block *b, rs_error *err)
{
  char shown[600];
  hid_t g = -1, d = -1;
  rs_code rc = RS_OK;
  const char *file = run->path;
  if (run->mem) return rs__mem_run_read(run, q0, n, b, err);
  b->doc = NULL;
  b->score32 = NULL;
  b->score64 = NULL;
  /* A dense run whose datasets are copied straight from the file (direct
   * addresses) needs nothing of HDF5 here: its group is opened only for
   * what HDF5 reads (offsets, or elements it must decode). */
  const int through_hdf5 = !rs__run_read_is_pread_only(run);
  if (through_hdf5 &&
      ((g = H5Gopen2(run->file->fid, "runs", H5P_DEFAULT)) < 0 || (d = H5Gopen2(g, run->name, H5P_DEFAULT)) < 0)) {
    rc = rs__fail(err, RS_IO, "%s:/runs/%s: cannot open the run", file, run->name);
    goto done;
  }
  close_id(g);
  g = d;
  d = -1;
  b->q0 = q0;
  b->n = n;
  if ((rc = grow_rows(b, n, err))) goto done;
  uint64_t first; /* element index of the block's first doc */
  size_t n_docs;
  if (run->csr) {
    snprintf(shown, sizeof shown, "/runs/%s/offsets", run->name);
    if ((d = H5Dopen2(g, "offsets", H5P_DEFAULT)) < 0) { rc = rs__fail(err, RS_IO, "%s:%s: cannot open", file, shown); goto done; }
    if ((rc = read_rows(d, file, shown, H5T_NATIVE_INT64, 1, q0, n + 1, 1, b->off, err))) goto done;
    close_id(d);
    d = -1;
    const int64_t base = b->off[0];
    for (size_t i = 0; i < n; i++)
      if (b->off[i + 1] < b->off[i]) {
        rc = rs__fail(err, RS_FORMAT, "%s:%s: row %zu: offsets must not decrease, found %" PRId64 " after %" PRId64,
                      file, shown, q0 + i + 1, b->off[i + 1], b->off[i]);
        goto done;
      }
    if (base < 0 || (uint64_t)b->off[n] > run->n_docs) {
      rc = rs__fail(err, RS_FORMAT, "%s:%s: rows %zu..%zu: offsets %" PRId64 "..%" PRId64 " outside doc's length %" PRIu64,
                    file, shown, q0, q0 + n, base, b->off[n], run->n_docs);
      goto done;
    }
    for (size_t i = 0; i <= n; i++) b->off[i] -= base;
    first = (uint64_t)base;
    n_docs = (size_t)b->off[n];
  } else {
    first = (uint64_t)q0 * run->k;
    n_docs = rs__mul(n, run->k);
    for (size_t i = 0; i <= n; i++) b->off[i] = (int64_t)(i * run->k);
  }
  const size_t score_size = run->score_f32 ? sizeof(float) : sizeof(double);
  int32_t *doc_buf = NULL;
  void *score_buf = NULL;
  if ((rc = rs__block_room(b, n_docs, run->has_score ? rs__mul(n_docs, score_size) : 0, &doc_buf, &score_buf, err)))
    goto done;
  if ((rc = read_elems(run, g, "doc", run->doc_addr, sizeof(int32_t), H5T_NATIVE_INT32, q0, n, first, n_docs, doc_buf,
                       err)))
    goto done;
  b->doc = doc_buf;
  if (run->has_score) {
    if ((rc = read_elems(run, g, "score", run->score_addr, score_size,
                         run->score_f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, q0, n, first, n_docs, score_buf, err)))
      goto done;
    if (run->score_f32) b->score32 = score_buf;
    else b->score64 = score_buf;
  }
done:
  close_id(d);
  close_id(g);
  return rc;
}

void rs__block_free(rs__block *b)
{
  if (!b) return;
  free(b->off);
  free(b->buf);
  memset(b, 0, sizeof *b);
}

rs_code rs__run_read_latency(const rs__run *run, size_t q0, size_t n, double *out, rs_error *err)
{
  char shown[600];
  if (run->mem) return rs__mem_run_read_latency(run, q0, n, out, err);
  snprintf(shown, sizeof shown, "/runs/%s/latency", run->name);
  if (q0 > run->n_rows || n > run->n_rows - q0)
    return rs__fail(err, RS_USAGE, "%s:%s: rows [%zu, %zu) past its %zu rows", run->path, shown, q0, q0 + n, run->n_rows);
  if (run->latency_addr && n) {
    /* float32 values go into the top half of out, then are widened from
     * the front: value i is read before out[i] overwrites the floats at
     * positions 2i - n and 2i - n + 1, neither of them past i. */
    const size_t esize = run->latency_f32 ? sizeof(float) : sizeof(double);
    float *f32 = run->latency_f32 ? (float *)out + n : NULL;
    rs_code rc = read_window(run, f32 ? (void *)f32 : (void *)out, run->latency_addr + (uint64_t)q0 * esize, n * esize,
                             shown, err);
    if (!rc && f32)
      for (size_t i = 0; i < n; i++) out[i] = (double)f32[i];
    return rc;
  }
  hid_t d = H5Dopen2(run->file->fid, shown, H5P_DEFAULT);
  if (d < 0) return rs__fail(err, RS_IO, "%s:%s: cannot open", run->path, shown);
  rs_code rc = read_rows(d, run->path, shown, H5T_NATIVE_DOUBLE, 1, q0, n, 1, out, err);
  close_id(d);
  return rc;
}

/* --- other programs' files (h5read.h) -------------------------------------- */

rs_code rs__h5_open(const char *path, const char *const *numbers, rs__h5file **out, rs_error *err)
{
  static const char *const none[] = {NULL};
  return open_file_reading(path, numbers ? numbers : none, out, err);
}

void rs__h5_close(rs__h5file *f) { close_file(f); }

const char *rs__h5_path(const rs__h5file *f) { return f->path; }

int rs__h5_has(const rs__h5file *f, const char *name) { return link_exists(f->fid, name); }

uint32_t rs__h5_root_links(const char *path, const char *const *names, uint32_t go_on_if)
{
  FILE *probe = fopen(path, "rb");
  if (!probe) return 0;
  fclose(probe);
  h5_quiet();
  kept_probe_drop(); /* one of another file, never opened */
  /* The child that looks up the links of a corpus goes on as the probe of
   * its open (probe_start_open's, as the first of its children): the
   * open then forks no child of its own, and the child's libhdf5 opens
   * the file once.  1M x 100: eval's probes took 7.5-10 ms for the links
   * and 11-13 for the open, one after the other, at one thread. */
  probe_run *pr = malloc(sizeof *pr);
  char *own = strdup(path);
  if (!pr || !own) {
    free(pr), free(own);
    return 0;
  }
  struct stat st;
  const int go_on = go_on_if && rs__mpi_size() <= 1 && stat(path, &st) == 0;
  probe_prepare(pr, own, NULL, "/docs/text", NULL, names, go_on ? probe_parallelism() : 1, 1, 1);
  pr->own_path = own;
  if (pr->ps) pr->ps[0].go_on_if = go_on ? go_on_if : 0;
  probe_spawn(pr, 1);
  probe_poll(pr, UNTIL_LINKS);
  if (!pr->rc && pr->stalled < 0 && pr->told_links[0] && pr->running[0]) {
    kept_probe.pr = pr, kept_probe.st = st;
    return pr->ps[0].links_found;
  }
  probe_found found = {0};
  const rs_code rc = probe_finish(pr, &found, NULL);
  free(pr);
  return rc == RS_OK ? found.links_found : 0;
}

static rs_code describe_root(const rs__h5file *f, const char *name, hid_t *d_out, dset_info *di, rs_error *err)
{
  char shown[300];
  snprintf(shown, sizeof shown, "/%s", name);
  hid_t d = -1;
  rs_code rc = open_dset(f->fid, f->path, shown, name, &d, err);
  if (rc) return rc;
  if ((rc = dset_describe(d, f->path, shown, di, err))) goto fail;
  if ((di->cls != H5T_INTEGER && di->cls != H5T_FLOAT) || di->size == 0 || di->size > 8) {
    rc = rs__fail(err, RS_FORMAT, "%s:%s: expected integers or floating point numbers, found %s of %zu bytes", f->path,
                  shown, class_name(di->cls), di->size);
    goto fail;
  }
  if (di->rank < 1) {
    rc = rs__fail(err, RS_FORMAT, "%s:%s: expected a 1-D or 2-D dataset, found a scalar", f->path, shown);
    goto fail;
  }
  if (di->rank == 1) di->dims[1] = 1;
  *d_out = d;
  return RS_OK;
fail:
  close_id(d);
  return rc;
}

rs_code rs__h5_describe(const rs__h5file *f, const char *name, rs__h5_shape *out, rs_error *err)
{
  hid_t d = -1;
  dset_info di;
  rs_code rc = describe_root(f, name, &d, &di, err);
  if (rc) return rc;
  close_id(d);
  *out = (rs__h5_shape){.rank = di.rank, .dims = {di.dims[0], di.dims[1]}, .is_float = di.cls == H5T_FLOAT,
                        .size = di.size};
  return RS_OK;
}

static rs_code read_root(const rs__h5file *f, const char *name, uint64_t cols, H5T_class_t cls, hid_t mtype, void *out,
                         rs_error *err)
{
  hid_t d = -1;
  dset_info di;
  rs_code rc = describe_root(f, name, &d, &di, err);
  if (rc) return rc;
  if (di.cls != cls) {
    rc = rs__fail(err, RS_FORMAT, "%s:/%s: expected %s, found %s", f->path, name,
                  cls == H5T_FLOAT ? "floating point numbers" : "integers", class_name(di.cls));
  } else if (cols > di.dims[1] || (di.rank == 1 && cols != 1)) {
    rc = rs__fail(err, RS_FORMAT, "%s:/%s: expected at least %" PRIu64 " columns, found %" PRIu64, f->path, name, cols,
                  (uint64_t)di.dims[1]);
  } else {
    char shown[300];
    snprintf(shown, sizeof shown, "/%s", name);
    rc = read_rows(d, f->path, shown, mtype, di.rank, 0, di.dims[0], cols, out, err);
  }
  close_id(d);
  return rc;
}

rs_code rs__h5_read_i64(const rs__h5file *f, const char *name, uint64_t cols, int64_t *out, rs_error *err)
{
  return read_root(f, name, cols, H5T_INTEGER, H5T_NATIVE_INT64, out, err);
}

rs_code rs__h5_read_f64(const rs__h5file *f, const char *name, uint64_t cols, double *out, rs_error *err)
{
  return read_root(f, name, cols, H5T_FLOAT, H5T_NATIVE_DOUBLE, out, err);
}

rs_code rs__h5_root_attrs(const rs__h5file *f, rs__attr **out, size_t *n, rs_error *err)
{
  attr_walk w = {.file = f->path, .group = "/", .bools = 1, .err = err};
  hsize_t idx = 0;
  if (H5Aiterate2(f->fid, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &w) < 0) {
    free_attrs(w.a, w.n);
    return w.rc ? w.rc : rs__fail(err, RS_IO, "%s: cannot list the root attributes", f->path);
  }
  if (w.n) qsort(w.a, w.n, sizeof *w.a, cmp_attr);
  *out = w.a;
  *n = w.n;
  return RS_OK;
}

void rs__attrs_free(rs__attr *a, size_t n) { free_attrs(a, n); }

/* --- writing --------------------------------------------------------------- */

struct rs__h5w {
  hid_t fid, lcpl;
  char *path, *tmp;
  int tmp_h; /* rs__tmp_register handle: the temporary file goes on SIGINT/SIGTERM */
};

static hid_t mem_type(rs__dtype t)
{
  switch (t) {
  case RS_DT_I8: return H5T_NATIVE_INT8;
  case RS_DT_I32: return H5T_NATIVE_INT32;
  case RS_DT_I64: return H5T_NATIVE_INT64;
  case RS_DT_F32: return H5T_NATIVE_FLOAT;
  case RS_DT_F64: return H5T_NATIVE_DOUBLE;
  }
  return H5T_NATIVE_INT32;
}

static hid_t file_type(rs__dtype t)
{
  switch (t) {
  case RS_DT_I8: return H5T_STD_I8LE;
  case RS_DT_I32: return H5T_STD_I32LE;
  case RS_DT_I64: return H5T_STD_I64LE;
  case RS_DT_F32: return H5T_IEEE_F32LE;
  case RS_DT_F64: return H5T_IEEE_F64LE;
  }
  return H5T_STD_I32LE;
}

rs_code rs__h5w_create(const char *path, int corpus, rs__h5w **out, rs_error *err)
{
  h5_quiet();
  rs__h5w *w = rs__calloc(1, sizeof *w);
  size_t len = strlen(path) + 40;
  if (!w || !(w->path = strdup(path)) || !(w->tmp = rs__malloc(len))) {
    if (w) free(w->path);
    free(w);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  /* DIR/.NAME.tmp.PID, the name every output takes (util/tmpfiles.h): a
   * signal removes it, and a later write of NAME removes it if a SIGKILL
   * left it (only NAME's: DIR may be anyone's folder). */
  const char *slash = strrchr(path, '/');
  const int dir_len = slash ? (int)(slash - path) : 1;
  const char *dir = slash ? path : ".", *base = slash ? slash + 1 : path;
  snprintf(w->tmp, len, "%.*s/.%s.tmp.%ld", dir_len, dir, base, (long)getpid());
  w->tmp[dir_len] = '\0';
  rs__tmp_sweep_stale_of(dir_len ? w->tmp : "/", base);
  w->tmp[dir_len] = '/';
  w->tmp_h = rs__tmp_register(w->tmp);
  w->lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(w->lcpl, 1);
  /* Datasets of 64 KiB or more start on a 4 KiB boundary, so that readers
   * can map their elements in place (rs__run_read needs aligned elements). */
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_alignment(fapl, 65536, 4096);
  w->fid = H5Fcreate(w->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (w->fid < 0) {
    rs_code rc = rs__fail(err, RS_IO, "%s: cannot create%s", path, h5_reason());
    rs__tmp_forget(w->tmp_h);
    H5Pclose(w->lcpl);
    free(w->tmp);
    free(w->path);
    free(w);
    return rc;
  }
  if (corpus) {
    char k_format[] = "format", k_version[] = "version", v_format[] = RS_CORPUS_FORMAT;
    rs__attr fmt = {.key = k_format, .kind = RS_ATTR_STRING, .text = v_format};
    rs__attr ver = {.key = k_version, .kind = RS_ATTR_INT, .num = RS_CORPUS_VERSION};
    rs_code rc;
    if ((rc = rs__h5w_attr(w, "/", &fmt, err)) || (rc = rs__h5w_attr(w, "/", &ver, err))) {
      rs__h5w_abort(w);
      return rc;
    }
  }
  *out = w;
  return RS_OK;
}

static void free_writer(rs__h5w *w)
{
  rs__tmp_forget(w->tmp_h);
  H5Pclose(w->lcpl);
  free(w->tmp);
  free(w->path);
  free(w);
}

rs_code rs__h5w_commit(rs__h5w *w, rs_error *err)
{
  rs_code rc = RS_OK;
  if (H5Fclose(w->fid) < 0) {
    rc = rs__fail(err, RS_IO, "%s: cannot finish writing%s", w->path, h5_reason());
    unlink(w->tmp);
  } else if (rename(w->tmp, w->path) != 0) {
    rc = rs__fail(err, RS_IO, "%s: cannot move the written file into place: %s", w->path, strerror(errno));
    unlink(w->tmp);
  }
  free_writer(w);
  return rc;
}

void rs__h5w_abort(rs__h5w *w)
{
  if (!w) return;
  H5Fclose(w->fid);
  unlink(w->tmp);
  free_writer(w);
}

rs_code rs__h5w_strings(rs__h5w *w, const char *dset, const char *const *s, size_t n, size_t fixed_len,
                        rs_error *err)
{
  hsize_t dims[1] = {n};
  hid_t sp = H5Screate_simple(1, dims, NULL), t = H5Tcopy(H5T_C_S1), d = -1;
  char *buf = NULL;
  rs_code rc = RS_OK;
  H5Tset_cset(t, H5T_CSET_UTF8);
  const void *data = s;
  if (fixed_len) {
    H5Tset_size(t, fixed_len);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
    if (!(buf = rs__calloc(n ? n : 1, fixed_len))) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
    for (size_t i = 0; i < n; i++) {
      size_t l = strlen(s[i]);
      memcpy(buf + i * fixed_len, s[i], l < fixed_len ? l : fixed_len);
    }
    data = buf;
  } else {
    H5Tset_size(t, H5T_VARIABLE);
  }
  if ((d = H5Dcreate2(w->fid, dset, t, sp, w->lcpl, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
      (n && H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0))
    rc = rs__fail(err, RS_IO, "%s:%s: cannot write%s", w->path, dset, h5_reason());
done:
  free(buf);
  close_id(d);
  close_id(t);
  close_id(sp);
  return rc;
}

rs_code rs__h5w_array(rs__h5w *w, const char *dset, rs__dtype type, int rank, const uint64_t *dims,
                      const void *data, rs_error *err)
{
  hsize_t hd[2] = {dims[0], rank > 1 ? dims[1] : 1};
  hid_t sp = H5Screate_simple(rank, hd, NULL), d = -1;
  rs_code rc = RS_OK;
  if ((d = H5Dcreate2(w->fid, dset, file_type(type), sp, w->lcpl, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
      (hd[0] * hd[1] != 0 && H5Dwrite(d, mem_type(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0))
    rc = rs__fail(err, RS_IO, "%s:%s: cannot write%s", w->path, dset, h5_reason());
  close_id(d);
  close_id(sp);
  return rc;
}

rs_code rs__h5w_rows_begin(rs__h5w *w, const char *dset, rs__dtype type, uint64_t rows, uint64_t cols,
                           rs_error *err)
{
  hsize_t hd[2] = {rows, cols};
  hid_t sp = H5Screate_simple(2, hd, NULL), d = -1;
  rs_code rc = RS_OK;
  if ((d = H5Dcreate2(w->fid, dset, file_type(type), sp, w->lcpl, H5P_DEFAULT, H5P_DEFAULT)) < 0)
    rc = rs__fail(err, RS_IO, "%s:%s: cannot create%s", w->path, dset, h5_reason());
  close_id(d);
  close_id(sp);
  return rc;
}

rs_code rs__h5w_rows(rs__h5w *w, const char *dset, rs__dtype type, uint64_t row0, uint64_t n_rows,
                     uint64_t cols, const void *data, rs_error *err)
{
  if (n_rows == 0 || cols == 0) return RS_OK;
  hid_t d = H5Dopen2(w->fid, dset, H5P_DEFAULT), fs = -1, ms = -1;
  hsize_t start[2] = {row0, 0}, count[2] = {n_rows, cols};
  rs_code rc = RS_OK;
  if (d < 0 || (fs = H5Dget_space(d)) < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
      (ms = H5Screate_simple(2, count, NULL)) < 0 || H5Dwrite(d, mem_type(type), ms, fs, H5P_DEFAULT, data) < 0)
    rc = rs__fail(err, RS_IO, "%s:%s: cannot write rows %" PRIu64 "..%" PRIu64 "%s", w->path, dset, row0,
                  row0 + n_rows - 1, h5_reason());
  close_id(ms);
  close_id(fs);
  close_id(d);
  return rc;
}

rs_code rs__h5w_attr(rs__h5w *w, const char *group, const rs__attr *a, rs_error *err)
{
  hid_t g = -1, sp = H5Screate(H5S_SCALAR), t = -1, at = -1;
  rs_code rc = RS_OK;
  if (strcmp(group, "/") == 0) g = H5Gopen2(w->fid, "/", H5P_DEFAULT);
  else if (link_exists(w->fid, group))
    g = H5Gopen2(w->fid, group, H5P_DEFAULT);
  else
    g = H5Gcreate2(w->fid, group, w->lcpl, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) { rc = rs__fail(err, RS_IO, "%s:%s: cannot create the group%s", w->path, group, h5_reason()); goto done; }
  herr_t st;
  if (a->kind == RS_ATTR_STRING) {
    t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    at = H5Acreate2(g, a->key, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    st = at < 0 ? -1 : H5Awrite(at, t, &a->text);
  } else if (a->kind == RS_ATTR_INT) {
    long long v = (long long)a->num;
    at = H5Acreate2(g, a->key, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    st = at < 0 ? -1 : H5Awrite(at, H5T_NATIVE_LLONG, &v);
  } else {
    at = H5Acreate2(g, a->key, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    st = at < 0 ? -1 : H5Awrite(at, H5T_NATIVE_DOUBLE, &a->num);
  }
  if (st < 0) rc = rs__fail(err, RS_IO, "%s:%s: cannot write attribute '%s'%s", w->path, group, a->key, h5_reason());
done:
  close_id(at);
  close_id(t);
  close_id(sp);
  close_id(g);
  return rc;
}
