/* log.c: the server's event log: one line per event, one write(2) per line. */
#include "server/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "idgen/layout.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = 2;
static char log_path[4096];

static const char *const level_names[] = {"debug", "info", "warn", "error"};
enum { LEVEL_DEBUG, LEVEL_INFO, LEVEL_WARN, LEVEL_ERROR, NLEVELS };
static _Atomic int log_level = LEVEL_INFO;

/* The rank of a level's name; an unknown one is written (as an error would be). */
static int rank_of(const char *level) {
  for (int i = 0; i < NLEVELS; i++)
    if (!strcmp(level, level_names[i]))
      return i;
  return LEVEL_ERROR;
}

int idgen__log_set_level(const char *level) {
  for (int i = 0; i <= LEVEL_WARN; i++)
    if (!strcmp(level, level_names[i])) {
      atomic_store_explicit(&log_level, i, memory_order_relaxed);
      return 0;
    }
  return -1;
}

int idgen__log_debug_on(void) {
  return atomic_load_explicit(&log_level, memory_order_relaxed) == LEVEL_DEBUG;
}

static int open_path(void) {
  int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  return fd < 0 ? -errno : fd;
}

int idgen__log_open(const char *path) {
  pthread_mutex_lock(&log_lock);
  int rc = 0;
  if (!path || !*path || !strcmp(path, "-")) {
    log_path[0] = 0;
    log_fd = 2;
  } else if (strlen(path) >= sizeof log_path) {
    rc = -ENAMETOOLONG;
  } else {
    strcpy(log_path, path);
    int fd = open_path();
    if (fd < 0) {
      rc = fd;
      log_path[0] = 0;
    } else {
      log_fd = fd;
    }
  }
  pthread_mutex_unlock(&log_lock);
  return rc;
}

int idgen__log_reopen(void) {
  pthread_mutex_lock(&log_lock);
  int rc = 0;
  if (log_path[0]) {
    int fd = open_path();
    if (fd < 0) {
      rc = fd; /* keep writing to the old file */
    } else {
      if (log_fd > 2)
        close(log_fd);
      log_fd = fd;
    }
  }
  pthread_mutex_unlock(&log_lock);
  return rc;
}

void idgen__log_close(void) {
  pthread_mutex_lock(&log_lock);
  if (log_fd > 2)
    close(log_fd);
  log_fd = 2;
  log_path[0] = 0;
  pthread_mutex_unlock(&log_lock);
}

void idgen__log(const char *level, const char *event, const char *fmt, ...) {
  if (rank_of(level) < atomic_load_explicit(&log_level, memory_order_relaxed))
    return;
  char line[1024];
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  char when[32];
  if (idgen_format_time(ms, when, sizeof when) < 0)
    snprintf(when, sizeof when, "%lld", (long long)ms);
  int n = snprintf(line, sizeof line, "%s %s %s ", when, level, event);
  if (n < 0 || (size_t)n >= sizeof line)
    return;
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
  if (len > sizeof line - 2)
    len = sizeof line - 2;
  /* One event, one line: no newline inside a message. */
  for (size_t i = (size_t)n; i < len; i++)
    if (line[i] == '\n' || line[i] == '\r')
      line[i] = ' ';
  line[len++] = '\n';
  pthread_mutex_lock(&log_lock);
  ssize_t w = write(log_fd, line, len);
  (void)w;
  pthread_mutex_unlock(&log_lock);
}
