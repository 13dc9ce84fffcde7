#define _GNU_SOURCE
#include "llm_helpers.h"
#include "helpers.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Starts python on script_path with --port-file and --max-seconds, plus
 * --log (and --script when script_json is non-NULL) for llm_stub.py, or
 * --port 0 for another server. */
static int start_server(llm_stub *s, const char *py, int stub_args, const char *script_json, double max_seconds)
{
  memset(s, 0, sizeof *s);
  snprintf(s->dir, sizeof s->dir, "/tmp/rs_llm_stub_XXXXXX");
  if (!mkdtemp(s->dir)) {
    fprintf(stderr, "llm_stub: mkdtemp: %s\n", strerror(errno));
    return -1;
  }
  char script[128], portf[128], maxs[32];
  snprintf(script, sizeof script, "%s/script.json", s->dir);
  snprintf(portf, sizeof portf, "%s/port", s->dir);
  snprintf(s->log, sizeof s->log, "%s/log.jsonl", s->dir);
  snprintf(maxs, sizeof maxs, "%g", max_seconds > 0 ? max_seconds : 30);
  if (script_json) {
    FILE *f = fopen(script, "w");
    if (!f || fputs(script_json, f) < 0 || fclose(f) != 0) {
      fprintf(stderr, "llm_stub: cannot write %s\n", script);
      return -1;
    }
  }
  /* The system interpreter starts in 0.1 s; a version manager's shim on
   * PATH can take a second or more, which every test would pay. */
  const char *python = getenv("RAGSWEEP_PYTHON");
  if (!python || !*python) python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    /* The stub dies with the test process even when an assertion aborts it. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    char *argv[12];
    int a = 0;
    argv[a++] = (char *)python;
    argv[a++] = (char *)py;
    argv[a++] = "--port-file";
    argv[a++] = portf;
    argv[a++] = "--max-seconds";
    argv[a++] = maxs;
    if (!stub_args) { /* a demo server has a fixed default port */
      argv[a++] = "--port";
      argv[a++] = "0";
    }
    if (stub_args) {
      argv[a++] = "--log";
      argv[a++] = s->log;
    }
    if (stub_args && script_json) {
      argv[a++] = "--script";
      argv[a++] = script;
    }
    argv[a] = NULL;
    execvp(python, argv);
    _exit(127);
  }
  s->pid = pid;
  for (int i = 0; i < 1000; i++) { /* at most 10 s */
    FILE *f = fopen(portf, "r");
    if (f) {
      int port = 0;
      int ok = fscanf(f, "%d", &port) == 1;
      fclose(f);
      if (ok && port > 0) {
        s->port = port;
        snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d/v1", port);
        return 0;
      }
    }
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      s->pid = 0;
      fprintf(stderr, "llm_stub: %s exited before listening\n", py);
      return -1;
    }
    th_sleep_ms(10);
  }
  fprintf(stderr, "llm_stub: no port file after 10 s\n");
  llm_stub_stop(s);
  return -1;
}

int llm_stub_start(llm_stub *s, const char *script_json, double max_seconds)
{
  const char *py = getenv("RAGSWEEP_LLM_STUB");
  if (!py || !*py) py = "tests/llm_stub.py";
  return start_server(s, py, 1, script_json, max_seconds);
}

int llm_server_start(llm_stub *s, const char *script_path, double max_seconds)
{
  return start_server(s, script_path, 0, NULL, max_seconds);
}

void llm_stub_stop(llm_stub *s)
{
  if (s->pid > 0) {
    kill(s->pid, SIGTERM);
    int st, i;
    for (i = 0; i < 300 && waitpid(s->pid, &st, WNOHANG) == 0; i++) th_sleep_ms(10);
    if (i == 300) {
      kill(s->pid, SIGKILL);
      waitpid(s->pid, &st, 0);
    }
    s->pid = 0;
  }
  if (s->dir[0]) {
    const char *names[] = {"script.json", "port", "port.tmp", "log.jsonl"};
    char p[192];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
      snprintf(p, sizeof p, "%s/%s", s->dir, names[i]);
      unlink(p);
    }
    rmdir(s->dir);
    s->dir[0] = '\0';
  }
}

json_object *llm_stub_log(const llm_stub *s)
{
  json_object *arr = json_object_new_array();
  FILE *f = fopen(s->log, "r");
  if (!f) return arr;
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, f)) > 0) {
    json_object *o = json_tokener_parse(line);
    if (o) json_object_array_add(arr, o);
  }
  free(line);
  fclose(f);
  return arr;
}

const char *llm_str(json_object *o, const char *key)
{
  json_object *v;
  if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string)) return NULL;
  return json_object_get_string(v);
}

double llm_num(json_object *o, const char *key)
{
  json_object *v;
  if (!o || !json_object_object_get_ex(o, key, &v)) return NAN;
  if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) return NAN;
  return json_object_get_double(v);
}
