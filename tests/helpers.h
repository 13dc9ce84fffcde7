/* helpers.h: running the ragsweep binary from tests. */
#ifndef RAGSWEEP_TEST_HELPERS_H
#define RAGSWEEP_TEST_HELPERS_H

#include <stddef.h>

/* The binaries under test: $RAGSWEEP_BIN (default build/ragsweep) and the
 * serial reference build $RAGSWEEP_SERIAL_BIN (NULL when not set). */
const char *th_bin(void);
/* The trec_eval program built beside th_bin() ($RAGSWEEP_TREC_EVAL_BIN if set). */
const char *th_trec_eval_bin(void);
const char *th_serial_bin(void);

/* The conformance folder (../shared/conformance, or $RAGSWEEP_CONFORMANCE),
 * or NULL when it is not there. */
const char *th_conformance_dir(void);

/* Output of one run: stdout and stderr (malloc'd, NUL-terminated), status. */
typedef struct {
  char *out;
  size_t out_len;
  char *err;
  int status; /* exit code, or 128 + signal */
} th_result;

/* Runs argv (argv[0] is the program path) in directory dir (NULL: here),
 * with extra environment entries env ("NAME=value", NULL-terminated; may be
 * NULL) and stdin from stdin_path (NULL: /dev/null). */
th_result th_run(const char *dir, char *const argv[], char *const env[], const char *stdin_path);
/* Runs the ragsweep under test with the arguments up to a NULL (at most 62). */
th_result th_rs(const char *first, ...);
/* The same in directory dir (NULL: here) with extra environment entries
 * env (as th_run's; may be NULL). */
th_result th_rs_at(const char *dir, char *const *env, ...);

/* Splits a command line on spaces into argv after a given program path;
 * returns the count.  args is modified. */
int th_split(char *args, const char *prog, const char *sub, char **argv, int max);

void th_free(th_result *r);

/* Reads a whole file; NULL when it cannot. */
char *th_slurp(const char *path, size_t *len);

/* Writes text to a fresh file in a temporary folder; returns its path
 * (static storage per call slot 0..7). */
const char *th_write_temp(int slot, const char *name, const char *text);

/* trec_eval's strcmp of two ids of known length that are not
 * NUL-terminated (the qrels' docnos point into the file): each is copied
 * and ended with a NUL, then compared with strcmp. */
int th_strcmp_n(const char *a, size_t na, const char *b, size_t nb);

/* Paths live in a ring of 64 static buffers: tests build many and free
 * none (the leak checker of `make asan` runs on the test process too). */
char *th_ring_slot(void);
/* A fresh folder under /tmp (a ring slot); asserts that it was made.  It
 * is removed, with what it holds, when the test's process exits. */
char *th_fresh_dir(void);
/* Removes the folder dir (made by the caller, e.g. with mkdtemp) and what
 * it holds when this process exits, as th_fresh_dir's folders are:
 * Criterion runs each test in a process of its own.  RAGSWEEP_TEST_KEEP=1
 * keeps them, to look at after a failure. */
void th_note_dir(const char *dir);
/* dir/name (a ring slot; dir may itself be one). */
char *th_join(const char *dir, const char *name);
/* 1 when path exists. */
int th_exists(const char *path);
/* Sleeps ms milliseconds (for the bounded polls of tests). */
void th_sleep_ms(long ms);

#endif
