/* llm_server.c: a minimal HTTP/1.1 keep-alive server for bench/llm.c.
 *
 * One thread, epoll, 127.0.0.1 on a free port written to --port-file
 * (tmp + rename).  Every complete request (headers plus Content-Length
 * bytes) is answered at once with one fixed chat-completion JSON reply, so
 * the figures measure the client, not a model.  Stops after --max-seconds
 * or on SIGTERM/SIGINT.  Not a general server: no chunked bodies. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONN 1024
#define BUF_CAP (1 << 16)

static const char reply_body[] =
    "{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion\",\"created\":0,\"model\":\"bench\","
    "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"YES\"},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1,\"total_tokens\":11}}";

typedef struct conn {
  int fd;
  size_t len;
  char buf[BUF_CAP];
} conn;

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) { (void)sig, stop_flag = 1; }

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Length of the first complete request in c->buf, 0 if incomplete, -1 if bad. */
static long request_len(const conn *c)
{
  const char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
  if (!end) return c->len >= BUF_CAP ? -1 : 0;
  size_t head = (size_t)(end - c->buf) + 4;
  long body = 0;
  for (const char *p = c->buf; p && p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) break;
    if (strncasecmp(p, "content-length:", 15) == 0) body = strtol(p + 15, NULL, 10);
    p = nl + 1;
  }
  if (body < 0 || head + (size_t)body > BUF_CAP) return -1;
  return c->len >= head + (size_t)body ? (long)(head + (size_t)body) : 0;
}

static int write_all(int fd, const char *s, size_t n)
{
  /* Replies are small and the socket buffer is empty between keep-alive
   * requests, so a blocking-style loop on EAGAIN is bounded in practice. */
  for (int spins = 0; n > 0 && spins < 100000; spins++) {
    ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
    if (w > 0) {
      s += w;
      n -= (size_t)w;
    } else if (w < 0 && errno != EAGAIN && errno != EINTR) return -1;
  }
  return n == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
  const char *port_file = NULL;
  double max_s = 120;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--port-file") && i + 1 < argc) port_file = argv[++i];
    else if (!strcmp(argv[i], "--max-seconds") && i + 1 < argc) max_s = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: llm_server --port-file PATH [--max-seconds S]\n");
      return 2;
    }
  }
  if (!port_file) {
    fprintf(stderr, "llm_server: --port-file is required\n");
    return 2;
  }
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  char reply[1024];
  int reply_len = snprintf(reply, sizeof reply,
                           "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                           "Connection: keep-alive\r\n\r\n%s",
                           sizeof reply_body - 1, reply_body);

  int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 512) != 0 ||
      getsockname(ls, (struct sockaddr *)&a, &al) != 0) {
    perror("llm_server: listen");
    return 1;
  }
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
  FILE *f = fopen(tmp, "w");
  if (!f || fprintf(f, "%d\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0 || rename(tmp, port_file) != 0) {
    perror("llm_server: port file");
    return 1;
  }
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
  epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
  const double t_end = now_s() + max_s;
  struct epoll_event evs[64];
  int n_conn = 0;
  while (!stop_flag && now_s() < t_end) {
    int n = epoll_wait(ep, evs, 64, 100);
    for (int i = 0; i < n; i++) {
      conn *c = evs[i].data.ptr;
      if (!c) {
        for (int k = 0; k < 64; k++) {
          int fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK);
          if (fd < 0) break;
          if (n_conn >= MAX_CONN || !(c = malloc(sizeof *c))) {
            close(fd);
            continue;
          }
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          c->fd = fd;
          c->len = 0;
          struct epoll_event ce = {.events = EPOLLIN, .data.ptr = c};
          epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ce);
          n_conn++;
        }
        continue;
      }
      int dead = 0;
      for (int k = 0; k < 64; k++) {
        ssize_t r = recv(c->fd, c->buf + c->len, BUF_CAP - c->len, 0);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
          dead = 1;
          break;
        }
        if (r < 0) break;
        c->len += (size_t)r;
        long q;
        while ((q = request_len(c)) > 0) {
          if (write_all(c->fd, reply, (size_t)reply_len) != 0) {
            dead = 1;
            break;
          }
          memmove(c->buf, c->buf + q, c->len - (size_t)q);
          c->len -= (size_t)q;
        }
        if (q < 0) dead = 1;
        if (dead || c->len == BUF_CAP) break;
      }
      if (dead) {
        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        free(c);
        n_conn--;
      }
    }
  }
  return 0;
}
