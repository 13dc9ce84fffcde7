/* llm_helpers.h: the scripted OpenAI-compatible stub (tests/llm_stub.py) as
 * a real process, for the client, judge and rag tests. */
#ifndef RAGSWEEP_TEST_LLM_HELPERS_H
#define RAGSWEEP_TEST_LLM_HELPERS_H

#include <json-c/json.h>
#include <sys/types.h>

typedef struct llm_stub {
  pid_t pid;      /* 0 when not running */
  int port;
  char dir[64];   /* its temporary folder (script, log, port file) */
  char log[128];  /* the JSONL request log */
  char url[64];   /* "http://127.0.0.1:PORT/v1" */
} llm_stub;

/* Starts tests/llm_stub.py (or $RAGSWEEP_LLM_STUB) with $RAGSWEEP_PYTHON, else
 * /usr/bin/python3 when present, else python3 on PATH, with the script
 * text (JSON; NULL: no script) and waits (at most 10 s) for its port file.
 * The stub exits by itself after max_seconds, and when the test process dies
 * (PR_SET_PDEATHSIG).  Returns 0, or -1 with a message on stderr. */
int llm_stub_start(llm_stub *s, const char *script_json, double max_seconds);

/* Starts another server script the same way (same interpreter, port file,
 * lifetime and stop), such as scripts/rag_server.py: it is given only
 * --port-file, --max-seconds and --port 0 (no --log: llm_stub_log is then
 * empty). */
int llm_server_start(llm_stub *s, const char *script_path, double max_seconds);

/* Stops it (SIGTERM, then SIGKILL after 3 s) and removes its folder. */
void llm_stub_stop(llm_stub *s);

/* The request log so far as a JSON array of records (see llm_stub.py);
 * never NULL (an empty array when there is no log).  Free with json_object_put. */
json_object *llm_stub_log(const llm_stub *s);

/* Field helpers on a log record or any object: the string (NULL when absent
 * or not a string), the number (NAN when absent). */
const char *llm_str(json_object *o, const char *key);
double llm_num(json_object *o, const char *key);

#endif
