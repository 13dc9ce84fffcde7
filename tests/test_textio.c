/* test_textio.c: byte input (src/formats/textio.h): a plain file mapped
 * whole reads as its bytes followed by zero padding, at every length
 * around a page; what cannot be mapped says so; pages handed back leave the
 * rest readable; and a file that shrinks under the mapping ends the program
 * with a message, not a core dump. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "formats/textio.h"
#include "helpers.h"

/* A file of n bytes, byte i being 'a' + i % 26, at a fresh path. */
static const char *write_pattern(size_t n)
{
  char *text = malloc(n + 1);
  cr_assert(text);
  for (size_t i = 0; i < n; i++) text[i] = (char)('a' + i % 26);
  text[n] = '\0';
  const char *path = th_write_temp(0, "mapped.txt", text);
  free(text);
  return path;
}

Test(textio, mapped_bytes_then_zero_pad)
{
  const size_t page = (size_t)sysconf(_SC_PAGESIZE), pad = 64;
  const size_t sizes[] = {1, pad, page - pad, page - 1, page, page + 1, 2 * page - 3, 3 * page};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    const size_t n = sizes[k];
    const char *path = write_pattern(n);
    rs__input *in = NULL;
    rs_error err = {0};
    cr_assert_eq(rs__input_open(path, &in, &err), RS_OK, "%s", err.msg);
    cr_assert_eq(rs__input_plain_size(in), (long long)n);
    rs__mapped m;
    cr_assert_eq(rs__input_map(in, pad, &m, &err), RS_OK, "size %zu", n);
    rs__input_close(in); /* the mapping outlives the descriptor */
    cr_assert_eq(m.len, n);
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) wrong += m.data[i] != (char)('a' + i % 26);
    for (size_t i = n; i < n + pad; i++) wrong += m.data[i] != 0;
    cr_expect_eq(wrong, 0, "size %zu: %zu bytes differ", n, wrong);
    rs__mapped_close(&m);
    cr_expect_null(m.data);
  }
}

Test(textio, released_pages_leave_the_rest_readable)
{
  const size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 5 * page + 17;
  const char *path = write_pattern(n);
  rs__input *in = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__input_open(path, &in, &err), RS_OK, "%s", err.msg);
  rs__mapped m;
  cr_assert_eq(rs__input_map(in, 8, &m, &err), RS_OK);
  rs__input_close(in);
  rs__mapped_release(&m, 2 * page + 100); /* two whole pages go, the third stays */
  cr_expect_eq(m.released, 2 * page);
  rs__mapped_release(&m, page); /* never backwards */
  cr_expect_eq(m.released, 2 * page);
  size_t wrong = 0;
  for (size_t i = 2 * page; i < n; i++) wrong += m.data[i] != (char)('a' + i % 26);
  cr_expect_eq(wrong, 0);
  rs__mapped_release(&m, n); /* the partial last page stays */
  cr_expect_eq(m.released, 5 * page);
  cr_expect_eq(m.data[n - 1], (char)('a' + (n - 1) % 26));
  rs__mapped_close(&m);
}

Test(textio, gzip_is_not_mapped)
{
  static const unsigned char gz_empty[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  const char *path = th_write_temp(0, "run.gz", "");
  FILE *f = fopen(path, "wb");
  cr_assert(f);
  fwrite(gz_empty, 1, sizeof gz_empty, f);
  fclose(f);
  rs__input *in = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__input_open(path, &in, &err), RS_OK, "%s", err.msg);
  rs__mapped m;
  cr_expect_eq(rs__input_map(in, 8, &m, &err), RS_UNSUPPORTED);
  cr_expect_null(m.data);
  rs__input_close(in);
}

/* The file is cut to nothing after it was mapped: reading a lost page
 * raises SIGBUS, which the guard turns into a message and exit status 2. */
Test(textio, shrinking_file_ends_with_a_message)
{
  const size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 4 * page;
  const char *path = write_pattern(n);
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  const pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    rs__input *in = NULL;
    rs__mapped m;
    if (rs__input_open(path, &in, NULL) != RS_OK || rs__input_map(in, 8, &m, NULL) != RS_OK) _exit(90);
    signal(SIGBUS, SIG_DFL); /* as a program starts (a sanitizer's own handler would keep the guard out) */
    rs__mapped_guard_sigbus("prog", 2);
    if (truncate(path, 0) != 0) _exit(91);
    volatile char c = m.data[3 * page]; /* SIGBUS: the page is gone */
    (void)c;
    _exit(92);
  }
  close(fds[1]);
  char msg[512] = {0};
  size_t got = 0;
  for (ssize_t r; got < sizeof msg - 1 && (r = read(fds[0], msg + got, sizeof msg - 1 - got)) > 0;) got += (size_t)r;
  close(fds[0]);
  int st = 0;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  cr_assert(WIFEXITED(st), "the child died of signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  cr_expect_eq(WEXITSTATUS(st), 2);
  cr_expect_str_eq(msg, "prog: an input file shrank while it was being read (SIGBUS); run again once nothing writes it\n");
}
