/* llm.c: how many requests per second the LLM client (src/llm/http.c)
 * sustains against a local server that answers at once, and its CPU time per
 * request, at several concurrency levels.
 *
 * The server is bench/llm_server (one epoll thread, fixed reply), started
 * here as a child process; its CPU time is read from /proc/PID/stat.  Each
 * level runs --repeat times (after one warm-up run of 500 requests); the table
 * gives the median and best requests/s, and the client and server CPU
 * microseconds per request of the median run.  Every reply is checked (HTTP
 * 200, the exact body) while timing, so a broken client cannot win.
 *
 *   bench_llm [--requests N] [--conc 1,8,64] [--repeat R] [--quick]
 *             [--server PATH] [--out CSV]
 *
 * Rows are appended to --out (default bench/results/llm.csv) with the CPU
 * model, core count and UTC date.  Exit status: 0, 1 on a failed check, 2 usage. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "llm/http.h"
#include "llm/wire.h"

#define MAX_LEVELS 8

static const char expected_body[] =
    "{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion\",\"created\":0,\"model\":\"bench\","
    "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"YES\"},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1,\"total_tokens\":11}}";

typedef struct {
  size_t n, sent, ok, bad;
  const char *body;
  size_t body_len;
  char first_bad[300];
} job;

static int next_req(void *ctx, const char **path, char **body, size_t *len, size_t *tag)
{
  job *j = ctx;
  if (j->sent >= j->n) return 0;
  /* The pool owns and frees each body, as the judge's will. */
  if (!(*body = malloc(j->body_len + 1))) return 0;
  memcpy(*body, j->body, j->body_len + 1);
  *len = j->body_len;
  *path = "/chat/completions";
  *tag = j->sent++;
  return 1;
}

static int on_done(void *ctx, const rs__http_result *r)
{
  job *j = ctx;
  if (r->outcome == RS_HTTP_OK && r->status == 200 && r->body_len == sizeof expected_body - 1 &&
      memcmp(r->body, expected_body, r->body_len) == 0)
    j->ok++;
  else if (j->bad++ == 0)
    snprintf(j->first_bad, sizeof j->first_bad, "request %zu: outcome %d, HTTP %ld, %s", r->tag, (int)r->outcome,
             r->status, r->message);
  return 0;
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double self_cpu_s(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
         (double)ru.ru_stime.tv_usec * 1e-6;
}

/* utime + stime of a child from /proc/PID/stat, in seconds; -1 if unknown. */
static double proc_cpu_s(pid_t pid)
{
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')'); /* the command name may contain spaces */
  if (!p) return -1;
  unsigned long ut = 0, st = 0;
  /* Fields after ')': state(3) ... utime(14) stime(15). */
  if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) return -1;
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void read_machine(char *cpu, size_t cpu_size, long *cores, char *date, size_t date_size)
{
  snprintf(cpu, cpu_size, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) != 0) continue;
      const char *p = strchr(line, ':');
      if (!p) continue;
      for (p++; *p == ' ' || *p == '\t'; p++) {}
      snprintf(cpu, cpu_size, "%s", p);
      break;
    }
    fclose(f);
  }
  for (char *c = cpu; *c; c++) {
    if (*c == '\n' || *c == '\r') {
      *c = '\0';
      break;
    }
    if (*c == ',' || *c == '"' || (unsigned char)*c < ' ') *c = ' ';
  }
  *cores = sysconf(_SC_NPROCESSORS_ONLN);
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(date, date_size, "%Y-%m-%dT%H:%M:%SZ", &tm);
  else snprintf(date, date_size, "unknown");
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct {
  double wall, client_cpu, server_cpu;
} sample;

static int run_once(const char *url, int conc, size_t n, const char *body, size_t body_len, pid_t server,
                    sample *out)
{
  job j = {.n = n, .body = body, .body_len = body_len};
  rs__http_cfg cfg = {.base_url = url, .concurrency = conc, .timeout_s = 30, .max_retries = 0, .seed = 1};
  rs__http_stats st;
  rs_error err;
  double s0 = proc_cpu_s(server), c0 = self_cpu_s(), t0 = now_s();
  rs_code rc = rs__http_run(&cfg, next_req, on_done, &j, &st, &err);
  double t1 = now_s(), c1 = self_cpu_s(), s1 = proc_cpu_s(server);
  if (rc != RS_OK) {
    fprintf(stderr, "bench_llm: %s\n", err.msg);
    return 1;
  }
  if (j.ok != n || st.requests != n || st.attempts != n || st.ok != n || st.max_in_flight > conc) {
    fprintf(stderr, "bench_llm: check failed at concurrency %d: %zu of %zu replies correct, %llu attempts, "
                    "max in flight %d; %s\n",
            conc, j.ok, n, (unsigned long long)st.attempts, st.max_in_flight, j.first_bad);
    return 1;
  }
  out->wall = t1 - t0;
  out->client_cpu = c1 - c0;
  out->server_cpu = s0 >= 0 && s1 >= 0 ? s1 - s0 : -1;
  return 0;
}

int main(int argc, char **argv)
{
  size_t n = 20000;
  int repeat = 3, quick = 0, levels[MAX_LEVELS] = {1, 8, 64}, n_levels = 3;
  const char *out = "bench/results/llm.csv", *server_path = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--requests") && i + 1 < argc) n = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--server") && i + 1 < argc) server_path = argv[++i];
    else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(argv[i], "--conc") && i + 1 < argc) {
      n_levels = 0;
      for (char *p = argv[++i]; *p && n_levels < MAX_LEVELS;) {
        levels[n_levels++] = (int)strtol(p, &p, 10);
        if (*p == ',') p++;
      }
    } else {
      fprintf(stderr, "usage: bench_llm [--requests N] [--conc 1,8,64] [--repeat R] [--quick] [--server PATH] "
                      "[--out CSV]\n");
      return 2;
    }
  }
  if (quick) n = n > 2000 ? 2000 : n;
  if (n == 0 || repeat < 1 || n_levels == 0) {
    fprintf(stderr, "bench_llm: --requests, --repeat and --conc must be positive\n");
    return 2;
  }
  for (int l = 0; l < n_levels; l++)
    if (levels[l] < 1) {
      fprintf(stderr, "bench_llm: --conc levels must be >= 1\n");
      return 2;
    }
  char server_buf[4096];
  if (!server_path) {
    /* Next to this binary: build-bench/llm_server. */
    const char *slash = strrchr(argv[0], '/');
    snprintf(server_buf, sizeof server_buf, "%.*sllm_server", slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
    server_path = server_buf;
  }

  char dir[] = "/tmp/rs_bench_llm_XXXXXX", port_file[64];
  if (!mkdtemp(dir)) {
    perror("bench_llm: mkdtemp");
    return 1;
  }
  snprintf(port_file, sizeof port_file, "%s/port", dir);
  pid_t server = fork();
  if (server == 0) {
    execl(server_path, server_path, "--port-file", port_file, "--max-seconds", "900", (char *)NULL);
    _exit(127);
  }
  int port = 0;
  for (int i = 0; i < 500 && port == 0; i++) { /* at most 5 s */
    FILE *f = fopen(port_file, "r");
    if (f) {
      if (fscanf(f, "%d", &port) != 1) port = 0;
      fclose(f);
    }
    if (!port) {
      struct timespec ts = {0, 10000000L};
      nanosleep(&ts, NULL);
    }
  }
  int rc = 0;
  if (!port) {
    fprintf(stderr, "bench_llm: %s did not start\n", server_path);
    rc = 1;
    goto stop;
  }
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", port);
  rs__chat_msg msgs[2] = {{"system", "You judge relevance. Answer YES or NO."},
                          {"user", "Query: what is the boiling point of water at sea level?\n"
                                   "Passage: At standard atmospheric pressure water boils at 100 degrees Celsius.\n"
                                   "Is the passage relevant?"}};
  rs__chat_params params = {.model = "bench", .temperature = 0, .max_tokens = 1};
  size_t body_len;
  char *body = rs__chat_request(&params, msgs, 2, &body_len);
  char cpu[256], date[32];
  long cores;
  read_machine(cpu, sizeof cpu, &cores, date, sizeof date);
  printf("machine: %s, %ld cores; %s\n", cpu, cores, date);
  printf("bench_llm: %zu requests of %zu bytes per run, %d runs per level (median, best), reply %zu bytes\n", n,
         body_len, repeat, sizeof expected_body - 1);
  printf("%11s %12s %12s %18s %18s\n", "concurrency", "median_rps", "best_rps", "client_cpu_us/req",
         "server_cpu_us/req");
  FILE *rows = tmpfile();
  for (int l = 0; l < n_levels && rc == 0; l++) {
    sample warm, s[16];
    int reps = repeat > 16 ? 16 : repeat;
    if ((rc = run_once(url, levels[l], n < 500 ? n : 500, body, body_len, server, &warm))) break;
    for (int r = 0; r < reps && rc == 0; r++) rc = run_once(url, levels[l], n, body, body_len, server, &s[r]);
    if (rc) break;
    double walls[16];
    for (int r = 0; r < reps; r++) walls[r] = s[r].wall;
    qsort(walls, (size_t)reps, sizeof walls[0], cmp_double);
    const double med = walls[reps / 2], best = walls[0];
    const sample *m = &s[0];
    for (int r = 0; r < reps; r++)
      if (s[r].wall == med) m = &s[r];
    double ccpu = m->client_cpu / (double)n * 1e6, scpu = m->server_cpu >= 0 ? m->server_cpu / (double)n * 1e6 : -1;
    printf("%11d %12.0f %12.0f %18.1f %18.1f\n", levels[l], (double)n / med, (double)n / best, ccpu, scpu);
    if (rows)
      fprintf(rows, "%s,%s,%ld,llm_client,%d,%zu,%d,%.6f,%.6f,%.0f,%.0f,%.2f,%.2f\n", date, cpu, cores, levels[l], n,
              reps, med, best, (double)n / med, (double)n / best, ccpu, scpu);
  }
  free(body);
  if (rc == 0 && rows) {
    FILE *f = fopen(out, "a");
    if (!f) {
      fprintf(stderr, "bench_llm: cannot append to %s: %s\n", out, strerror(errno));
      rc = 1;
    } else {
      if (fseek(f, 0, SEEK_END) != 0 || ftell(f) == 0)
        fputs("date,cpu,cores,section,concurrency,requests,runs,median_s,best_s,median_rps,best_rps,"
              "client_cpu_us_per_req,server_cpu_us_per_req\n",
              f);
      rewind(rows);
      char buf[4096];
      size_t k;
      while ((k = fread(buf, 1, sizeof buf, rows)) > 0) fwrite(buf, 1, k, f);
      if (fclose(f) != 0) rc = 1;
    }
  }
  if (rows) fclose(rows);
stop:
  kill(server, SIGTERM);
  waitpid(server, NULL, 0);
  unlink(port_file);
  rmdir(dir);
  return rc;
}
