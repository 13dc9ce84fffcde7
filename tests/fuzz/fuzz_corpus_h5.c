/* fuzz_corpus_h5: the HDF5 corpus and run-file readers, structure-aware.
 * Random bytes are almost never an HDF5 file, so the input is a list of
 * mutations of a valid corpus (tests/fuzz/h5base/: one written by
 * `ragsweep import`, one by gen_sweep):
 *   byte 0: which base file;  then records of 5 bytes:
 *   offset (3 bytes, little-endian, modulo the file's size), op, value;
 *   op bit 0 set: XOR the byte with value, else overwrite it with value;
 *   op bit 1 set: also cut the file at that offset (its last record wins).
 * The result is opened as a corpus (rs__corpus_open, every run read whole
 * block by block, latencies, query and doc texts) and as a run file
 * (rs__runset_open), as `eval` and `check` open them.  libhdf5 cannot
 * open a memfd's /dev/fd/N, so the file is rewritten in place in one
 * temporary file ($TMPDIR, else /tmp), removed at exit. */
#include "fuzz.h"
#include <dirent.h>
#include "formats/corpus.h"

#ifndef FUZZ_H5BASE
#define FUZZ_H5BASE "tests/fuzz/h5base"
#endif

enum { MAX_BASE = 8, MAX_EDITS = 64 };
static struct {
  unsigned char *bytes;
  size_t size, nq;
} base[MAX_BASE];
static size_t n_base;
static char tmp_path[4096];

static void remove_tmp(void) { unlink(tmp_path); }

/* Loads every *.h5 of FUZZ_H5BASE (sorted by name, so byte 0 means the same
 * file on every machine) and the query count of each. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  struct dirent **ents = NULL;
  int n = scandir(FUZZ_H5BASE, &ents, NULL, alphasort);
  if (n < 0) { perror(FUZZ_H5BASE); abort(); }
  for (int i = 0; i < n; i++) {
    size_t len = strlen(ents[i]->d_name);
    char path[4096];
    if (n_base < MAX_BASE && len > 3 && strcmp(ents[i]->d_name + len - 3, ".h5") == 0 &&
        snprintf(path, sizeof path, "%s/%s", FUZZ_H5BASE, ents[i]->d_name) < (int)sizeof path) {
      FILE *f = fopen(path, "rb");
      rs__corpus *c = NULL;
      rs_error err = {0};
      if (!f || fseek(f, 0, SEEK_END) || (base[n_base].size = (size_t)ftell(f)) == 0 || fseek(f, 0, SEEK_SET) ||
          !(base[n_base].bytes = malloc(base[n_base].size)) ||
          fread(base[n_base].bytes, 1, base[n_base].size, f) != base[n_base].size ||
          rs__corpus_open(path, &c, &err)) {
        fprintf(stderr, "fuzz_corpus_h5: cannot use %s as a base: %s\n", path, err.msg);
        abort();
      }
      base[n_base++].nq = c->nq;
      rs__corpus_close(c);
      fclose(f);
    }
    free(ents[i]);
  }
  free(ents);
  if (!n_base) { fprintf(stderr, "fuzz_corpus_h5: no *.h5 in %s\n", FUZZ_H5BASE); abort(); }
  const char *dir = getenv("TMPDIR");
  snprintf(tmp_path, sizeof tmp_path, "%s/ragsweep-fuzz-XXXXXX.h5", dir && *dir ? dir : "/tmp");
  int fd = mkstemps(tmp_path, 3);
  if (fd < 0) { perror(tmp_path); abort(); }
  close(fd);
  atexit(remove_tmp);
  return 0;
}

/* Reads every row of every run of s, 3 queries at a time (several blocks
 * even on the small bases), and the latencies. */
static void read_runs(const rs__runset *s)
{
  rs__block b;
  memset(&b, 0, sizeof b);
  rs_error err = {0};
  for (size_t r = 0; r < s->n; r++) {
    const rs__run *run = &s->run[r];
    for (size_t q0 = 0; q0 < run->n_rows; q0 += 3) {
      size_t n = run->n_rows - q0 < 3 ? run->n_rows - q0 : 3;
      if (rs__run_read(run, q0, n, &b, &err)) break;
      for (size_t i = 0; i < n; i++)
        for (int64_t j = b.off[i]; j < b.off[i + 1]; j++) /* every element is readable */
          if (b.doc[j] < -1 && run->has_score && rs__block_score(&b, (size_t)j) == 12345.0) abort();
    }
    if (run->has_latency) {
      double *lat = malloc((run->n_rows ? run->n_rows : 1) * sizeof *lat);
      if (!lat) abort();
      (void)rs__run_read_latency(run, 0, run->n_rows, lat, &err);
      free(lat);
    }
  }
  rs__block_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size == 0) return 0;
  size_t which = data[0] % n_base, len = base[which].size;
  unsigned char *file = malloc(len);
  if (!file) abort();
  memcpy(file, base[which].bytes, len);
  size_t keep = len;
  for (size_t i = 1, k = 0; i + 5 <= size && k < MAX_EDITS; i += 5, k++) {
    size_t off = ((size_t)data[i] | (size_t)data[i + 1] << 8 | (size_t)data[i + 2] << 16) % len;
    file[off] = data[i + 3] & 1 ? file[off] ^ data[i + 4] : data[i + 4];
    if (data[i + 3] & 2) keep = off;
  }
  FILE *out = fopen(tmp_path, "wb");
  if (!out || fwrite(file, 1, keep, out) != keep || fclose(out)) { perror(tmp_path); abort(); }
  free(file);
  rs__corpus *c = NULL;
  rs_error err = {0};
  if (rs__corpus_open(tmp_path, &c, &err) == RS_OK) {
    read_runs(&c->runs);
    (void)rs__corpus_load_queries(c, &err);
    if (c->has_doc_text) (void)rs__corpus_load_doc_texts(c, &err);
    for (size_t q = 0; q < c->nq; q++) (void)strlen(rs__corpus_qid(c, q));
    rs__corpus_close(c);
  } else if (err.msg[0] == '\0') {
    abort();
  }
  rs__runset s;
  memset(&s, 0, sizeof s);
  if (rs__runset_open(tmp_path, base[which].nq, &s, &err) == RS_OK) {
    read_runs(&s);
    rs__runset_close(&s);
  }
  return 0;
}
