/* test_llm_cache.c: SHA-256 on the NIST vectors, and the SQLite reply cache:
 * round trips of binary bodies, first answer wins, persistence, a writer
 * killed with SIGKILL mid-stream, two writers on one file, merging shards,
 * rejected files. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "llm/cache.h"
#include "util/sha256.h"

/* ---- SHA-256 -------------------------------------------------------------- */

static void hex_of(const void *msg, size_t n, char out[65])
{
  uint8_t d[32];
  rs__sha256(msg, n, d);
  rs__hex(d, 32, out);
}

Test(sha256, nist_vectors)
{
  char h[65];
  hex_of("", 0, h);
  cr_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  hex_of("abc", 3, h);
  cr_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  hex_of(m448, strlen(m448), h);
  cr_assert_str_eq(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                     "mnopqrstnopqrstu";
  hex_of(m896, strlen(m896), h);
  cr_assert_str_eq(h, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

Test(sha256, million_a_in_odd_pieces)
{
  /* Pieces of 1, 2, 3, ... 130 bytes cross every buffer boundary. */
  char a[131];
  memset(a, 'a', sizeof a);
  rs__sha256_ctx s;
  rs__sha256_init(&s);
  size_t left = 1000000, step = 1;
  while (left) {
    size_t n = step < left ? step : left;
    rs__sha256_update(&s, a, n);
    left -= n;
    step = step % 130 + 1;
  }
  rs__sha256_update(&s, NULL, 0);
  uint8_t d[32];
  char h[65];
  rs__sha256_final(&s, d);
  rs__hex(d, 32, h);
  cr_assert_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

Test(sha256, padding_boundaries)
{
  /* 55, 56 and 64 bytes: the length fits in the last block, just does not,
   * and a whole block (values from sha256sum). */
  char m[64], h[65];
  memset(m, 'a', sizeof m);
  hex_of(m, 55, h);
  cr_assert_str_eq(h, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  hex_of(m, 56, h);
  cr_assert_str_eq(h, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  hex_of(m, 64, h);
  cr_assert_str_eq(h, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

/* ---- the cache ------------------------------------------------------------- */

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
  static char p[4][128];
  static int slot;
  if (!tmpdir[0]) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ragsweep-cache-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
    th_note_dir(tmpdir);
  }
  slot = (slot + 1) % 4;
  snprintf(p[slot], sizeof p[slot], "%s/%s", tmpdir, name);
  return p[slot];
}

static void key_of(uint32_t i, uint8_t key[32])
{
  char s[32];
  int n = snprintf(s, sizeof s, "request-%u", (unsigned)i);
  rs__sha256(s, (size_t)n, key);
}

/* Body of entry i: binary, with NULs and invalid UTF-8, length varying. */
static size_t body_of(uint32_t i, uint32_t salt, char *buf)
{
  size_t n = 3 + i % 50;
  for (size_t k = 0; k < n; k++) buf[k] = (char)((i * 31u + (uint32_t)k * 7u + salt) & 0xff);
  buf[0] = '\0';
  buf[1] = (char)0xff;
  return n;
}

static void put_one(rs__llm_cache *c, uint32_t i, uint32_t salt)
{
  uint8_t key[32];
  char body[64];
  rs_error err = {0};
  key_of(i, key);
  rs__cache_entry e = {.body = body, .body_len = body_of(i, salt, body), .status = 200, .prompt_tokens = i,
                       .completion_tokens = -1, .latency_ms = 1.5 * i, .model = "m-test", .created = 1700000000 + i};
  cr_assert_eq(rs__llm_cache_put(c, key, &e, &err), RS_OK, "%s", err.msg);
}

static void expect_one(rs__llm_cache *c, uint32_t i, uint32_t salt)
{
  uint8_t key[32];
  char body[64];
  rs_error err = {0};
  rs__cache_entry e = {0};
  int found = -1;
  key_of(i, key);
  size_t n = body_of(i, salt, body);
  cr_assert_eq(rs__llm_cache_get(c, key, &e, &found, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(found, 1, "entry %u missing", (unsigned)i);
  cr_assert_eq(e.body_len, n);
  cr_assert_eq(memcmp(e.body, body, n), 0, "entry %u: body differs", (unsigned)i);
  cr_assert_eq(e.body[n], '\0');
  cr_assert_eq(e.status, 200);
  cr_assert_eq(e.prompt_tokens, (int64_t)i);
  cr_assert_eq(e.completion_tokens, -1);
  cr_assert_eq(e.latency_ms, 1.5 * i);
  cr_assert_str_eq(e.model, "m-test");
  cr_assert_eq(e.created, 1700000000 + (int64_t)i);
  rs__cache_entry_free(&e);
}

Test(cache, round_trip_first_wins_and_reopen)
{
  const char *path = tmp_path("a.sqlite");
  rs__llm_cache *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__llm_cache_open(path, &c, &err), RS_OK, "%s", err.msg);
  for (uint32_t i = 0; i < 20; i++) put_one(c, i, 0);
  /* A second answer for a stored key is ignored. */
  put_one(c, 7, 99);
  /* An empty body and a failed request are stored as such. */
  uint8_t k[32];
  key_of(1000, k);
  rs__cache_entry fail = {.body = NULL, .body_len = 0, .status = 503, .prompt_tokens = -1, .completion_tokens = -1,
                          .latency_ms = 0.25, .model = NULL, .created = 0};
  cr_assert_eq(rs__llm_cache_put(c, k, &fail, &err), RS_OK, "%s", err.msg);
  uint64_t n = 0;
  cr_assert_eq(rs__llm_cache_count(c, &n, &err), RS_OK);
  cr_assert_eq(n, 21);
  rs__llm_cache_close(c);

  c = NULL;
  cr_assert_eq(rs__llm_cache_open_existing(path, &c, &err), RS_OK, "%s", err.msg);
  for (uint32_t i = 0; i < 20; i++) expect_one(c, i, 0);
  rs__cache_entry e = {0};
  int found = 0;
  cr_assert_eq(rs__llm_cache_get(c, k, &e, &found, &err), RS_OK);
  cr_assert_eq(found, 1);
  cr_assert_eq(e.status, 503);
  cr_assert_eq(e.body_len, 0);
  cr_assert_str_eq(e.model, "");
  cr_assert_gt(e.created, 1700000000); /* 0 means "now" */
  rs__cache_entry_free(&e);
  key_of(20, k);
  cr_assert_eq(rs__llm_cache_get(c, k, &e, &found, &err), RS_OK);
  cr_assert_eq(found, 0);
  cr_assert_eq(rs__llm_cache_has(c, k, &found, &err), RS_OK);
  cr_assert_eq(found, 0);
  key_of(19, k);
  cr_assert_eq(rs__llm_cache_has(c, k, &found, &err), RS_OK);
  cr_assert_eq(found, 1);
  rs__cache_model_count *m = NULL;
  size_t nm = 0;
  cr_assert_eq(rs__llm_cache_models(c, &m, &nm, &err), RS_OK);
  cr_assert_eq(nm, 2);
  cr_assert_str_eq(m[0].model, "");
  cr_assert_eq(m[0].n, 1);
  cr_assert_eq(m[0].n_error, 1);
  cr_assert_str_eq(m[1].model, "m-test");
  cr_assert_eq(m[1].n, 20);
  cr_assert_eq(m[1].n_error, 0);
  rs__cache_model_counts_free(m, nm);
  rs__llm_cache_close(c);
}

/* The child puts entries 0, 1, 2, ... and writes each index to the pipe
 * once its put has returned; the parent kills it mid-stream. */
Test(cache, sigkill_loses_nothing_committed)
{
  const char *path = tmp_path("kill.sqlite");
  int fd[2];
  cr_assert_eq(pipe(fd), 0);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    close(fd[0]);
    rs__llm_cache *c = NULL;
    if (rs__llm_cache_open(path, &c, NULL)) _exit(2);
    for (uint32_t i = 0;; i++) {
      uint8_t key[32];
      char body[64];
      key_of(i, key);
      rs__cache_entry e = {.body = body, .body_len = body_of(i, 0, body), .status = 200, .prompt_tokens = i,
                           .completion_tokens = -1, .latency_ms = 1.5 * i, .model = "m-test",
                           .created = 1700000000 + i};
      if (rs__llm_cache_put(c, key, &e, NULL)) _exit(3);
      if (write(fd[1], &i, sizeof i) != (ssize_t)sizeof i) _exit(4);
    }
  }
  close(fd[1]);
  uint32_t last = 0, got;
  int have = 0;
  /* Wait until 300 puts are done, then kill without warning. */
  while (!have || last < 300) {
    ssize_t r = read(fd[0], &got, sizeof got);
    cr_assert_eq(r, (ssize_t)sizeof got, "the child stopped early");
    last = got;
    have = 1;
  }
  kill(pid, SIGKILL);
  /* Whatever the child reported before dying is in the pipe still. */
  while (read(fd[0], &got, sizeof got) == (ssize_t)sizeof got) last = got;
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the child was not killed (status %d)", st);

  rs__llm_cache *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__llm_cache_open(path, &c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__llm_cache_verify(c, &err), RS_OK, "%s", err.msg);
  for (uint32_t i = 0; i <= last; i++) expect_one(c, i, 0);
  uint64_t n = 0;
  cr_assert_eq(rs__llm_cache_count(c, &n, &err), RS_OK);
  /* At most the one put in flight beyond what was reported. */
  cr_assert(n == (uint64_t)last + 1 || n == (uint64_t)last + 2, "count %llu after last reported %u",
            (unsigned long long)n, (unsigned)last);
  rs__llm_cache_close(c);
}

/* Two processes opening one new cache at the same moment: one creates it,
 * the other must then find a finished file, never a half-made one taken
 * for a foreign SQLite file (it read the marks before the other's commit
 * and the tables after: 39 of 300 such pairs failed).  60 pairs. */
Test(cache, two_processes_create_one_new_file)
{
  size_t failed = 0;
  char first_error[600] = "";
  for (int pair = 0; pair < 60; pair++) {
    char name[32];
    snprintf(name, sizeof name, "new%d.sqlite", pair);
    const char *path = tmp_path(name);
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t pid[2];
    for (int w = 0; w < 2; w++) {
      pid[w] = fork();
      cr_assert_neq(pid[w], -1);
      if (pid[w] == 0) {
        close(fd[0]);
        rs__llm_cache *c = NULL;
        rs_error err = {0};
        if (rs__llm_cache_open(path, &c, &err)) {
          ssize_t wr = write(fd[1], err.msg, strlen(err.msg));
          (void)wr;
          _exit(2);
        }
        rs__llm_cache_close(c);
        _exit(0);
      }
    }
    close(fd[1]);
    char msg[600] = "";
    ssize_t got = read(fd[0], msg, sizeof msg - 1);
    close(fd[0]);
    for (int w = 0; w < 2; w++) {
      int st = 0;
      waitpid(pid[w], &st, 0);
      failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    if (got > 0 && !first_error[0]) snprintf(first_error, sizeof first_error, "%s", msg);
  }
  cr_expect_eq(failed, 0, "%zu of 120 openings failed; the first: %s", failed, first_error);
}

Test(cache, two_processes_write_one_file)
{
  const char *path = tmp_path("shared.sqlite");
  pid_t pid[2];
  for (int w = 0; w < 2; w++) {
    pid[w] = fork();
    cr_assert_neq(pid[w], -1);
    if (pid[w] == 0) {
      rs__llm_cache *c = NULL;
      if (rs__llm_cache_open(path, &c, NULL)) _exit(2);
      /* Own keys w*1000 .. w*1000+399, shared keys 5000..5099 interleaved. */
      for (uint32_t i = 0; i < 400; i++) {
        uint8_t key[32];
        char body[64];
        uint32_t id = i % 4 == 0 ? 5000 + i / 4 : (uint32_t)w * 1000 + i;
        key_of(id, key);
        rs__cache_entry e = {.body = body, .body_len = body_of(id, (uint32_t)w + 1, body), .status = 200,
                             .prompt_tokens = id, .completion_tokens = -1, .latency_ms = 1.5 * id,
                             .model = "m-test", .created = 1700000000 + id};
        if (rs__llm_cache_put(c, key, &e, NULL)) _exit(3);
      }
      rs__llm_cache_close(c);
      _exit(0);
    }
  }
  for (int w = 0; w < 2; w++) {
    int st = 0;
    waitpid(pid[w], &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d failed (status %d)", w, st);
  }
  rs__llm_cache *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__llm_cache_open(path, &c, &err), RS_OK, "%s", err.msg);
  uint64_t n = 0;
  cr_assert_eq(rs__llm_cache_count(c, &n, &err), RS_OK);
  cr_assert_eq(n, 2 * 300 + 100);
  for (uint32_t i = 0; i < 400; i++)
    if (i % 4) expect_one(c, i, 1), expect_one(c, 1000 + i, 2);
  /* A shared key holds one writer's answer, whole. */
  uint8_t key[32];
  char b1[64], b2[64];
  rs__cache_entry e = {0};
  int found = 0;
  key_of(5007, key);
  cr_assert_eq(rs__llm_cache_get(c, key, &e, &found, &err), RS_OK);
  cr_assert_eq(found, 1);
  size_t n1 = body_of(5007, 1, b1), n2 = body_of(5007, 2, b2);
  cr_assert(e.body_len == n1 && (memcmp(e.body, b1, n1) == 0 || memcmp(e.body, b2, n2) == 0));
  rs__cache_entry_free(&e);
  rs__llm_cache_close(c);
}

Test(cache, merge_shards)
{
  const char *pa = tmp_path("m-a.sqlite"), *pb = tmp_path("m-b.sqlite");
  rs__llm_cache *a = NULL, *b = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__llm_cache_open(pa, &a, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__llm_cache_open(pb, &b, &err), RS_OK, "%s", err.msg);
  for (uint32_t i = 0; i < 30; i++) put_one(a, i, 0);     /* 0..29 */
  for (uint32_t i = 20; i < 50; i++) put_one(b, i, i < 30 ? 7 : 0); /* 20..49; 20..29 differ */
  rs__llm_cache_close(b);
  uint64_t added = 99, n = 0;
  cr_assert_eq(rs__llm_cache_merge(a, pb, &added, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(added, 20);
  cr_assert_eq(rs__llm_cache_count(a, &n, &err), RS_OK);
  cr_assert_eq(n, 50);
  for (uint32_t i = 0; i < 50; i++) expect_one(a, i, 0); /* a's answers for 20..29 kept */
  cr_assert_eq(rs__llm_cache_merge(a, pb, &added, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(added, 0);
  cr_assert_eq(rs__llm_cache_count(a, &n, &err), RS_OK);
  cr_assert_eq(n, 50);
  rs__llm_cache_close(a);
}

Test(cache, rejects_other_files)
{
  rs__llm_cache *c = NULL;
  rs_error err = {0};
  char txt[160]; /* tmp_path's slots are reused below */
  snprintf(txt, sizeof txt, "%s", tmp_path("notes.txt"));
  FILE *f = fopen(txt, "w");
  cr_assert_not_null(f);
  fputs("these are notes, not a database; they are long enough to fill a header of one hundred bytes......\n", f);
  fclose(f);
  cr_assert_eq(rs__llm_cache_open(txt, &c, &err), RS_FORMAT);
  cr_assert_null(c);
  cr_assert(strstr(err.msg, txt) && strstr(err.msg, "not a ragsweep LLM cache"), "%s", err.msg);

  /* SQLite files written by Python: another application's, and a cache of
   * a future schema version. */
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 -c \"import sqlite3; d = sqlite3.connect('%s'); d.execute('create table t(x)'); d.commit();"
           " d = sqlite3.connect('%s'); d.execute('pragma application_id=0x52534c43');"
           " d.execute('pragma user_version=2'); d.commit()\"",
           tmp_path("other.sqlite"), tmp_path("v2.sqlite"));
  cr_assert_eq(system(cmd), 0);
  cr_assert_eq(rs__llm_cache_open(tmp_path("other.sqlite"), &c, &err), RS_FORMAT);
  cr_assert(strstr(err.msg, "other.sqlite: not a ragsweep LLM cache: expected SQLite application_id 0x52534c43, "
                            "found 0x00000000 (an SQLite file with other tables)"), "%s", err.msg);
  cr_assert_eq(rs__llm_cache_open(tmp_path("v2.sqlite"), &c, &err), RS_FORMAT);
  cr_assert(strstr(err.msg, "v2.sqlite: ragsweep LLM cache schema version 2; this ragsweep reads version 1"), "%s",
            err.msg);

  /* A missing folder is named. */
  char missing[160];
  snprintf(missing, sizeof missing, "%s/no-such-folder/c.sqlite", tmp_path(""));
  cr_assert_eq(rs__llm_cache_open(missing, &c, &err), RS_IO);
  cr_assert(strstr(err.msg, "no-such-folder does not exist"), "%s", err.msg);
  /* open_existing does not create. */
  cr_assert_eq(rs__llm_cache_open_existing(tmp_path("absent.sqlite"), &c, &err), RS_IO);
  cr_assert(strstr(err.msg, "absent.sqlite"), "%s", err.msg);
  uint64_t added = 0;
  cr_assert_eq(rs__llm_cache_open(tmp_path("dst.sqlite"), &c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__llm_cache_merge(c, txt, &added, &err), RS_FORMAT);
  cr_assert(strstr(err.msg, "notes.txt"), "%s", err.msg);
  rs__llm_cache_close(c);
}
