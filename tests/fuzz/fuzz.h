/* fuzz.h: what the libFuzzer targets of tests/fuzz share.
 *
 * Most parsers take a path, so the input is written to an anonymous
 * in-memory file (memfd_create) and handed over as /dev/fd/N: nothing
 * touches the disk, and each opener gets its own file offset, as with a
 * real file.  Only `make fuzz` builds these (clang, -fsanitize=fuzzer). */
#ifndef RAGSWEEP_FUZZ_H
#define RAGSWEEP_FUZZ_H
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

typedef struct fz_file {
  int fd;
  char path[32];
} fz_file;

/* Writes data[0, size) to a new memfd; aborts when the kernel refuses, as
 * a fuzz run without its input would be meaningless. */
static inline void fz_file_open(fz_file *f, const void *data, size_t size)
{
  f->fd = memfd_create("ragsweep-fuzz", MFD_CLOEXEC);
  if (f->fd < 0) { perror("memfd_create"); abort(); }
  const char *p = data;
  for (size_t done = 0; done < size;) {
    ssize_t w = write(f->fd, p + done, size - done);
    if (w <= 0) { perror("write memfd"); abort(); }
    done += (size_t)w;
  }
  snprintf(f->path, sizeof f->path, "/dev/fd/%d", f->fd);
}

/* Closes the memfd, which frees its memory. */
static inline void fz_file_close(fz_file *f)
{
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
}

/* A NUL-terminated copy of data[0, size) (parsers of C strings); aborts
 * when out of memory. */
static inline char *fz_str(const uint8_t *data, size_t size)
{
  char *s = malloc(size + 1);
  if (!s) abort();
  if (size) memcpy(s, data, size);
  s[size] = '\0';
  return s;
}
#endif
