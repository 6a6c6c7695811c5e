/* client_tool.c: libidgen-client driven by tests/integration/client_*.sh.
 *   load SERVERS NAME THREADS COUNT OUTDIR   each thread takes COUNT IDs (and, with
 *        $STOP_FILE set, goes on until that file exists), retrying after
 *        IDGEN_EUNAVAIL; writes OUTDIR/t<i>: "<ms> t<i> <id>" or "<ms> t<i> ERR <name>"
 *        (idgen check's history). Prints the longest call in ms and the stats.
 *        $MAX_WAIT_MS, $TIMEOUT_MS, $MAX_AGE_MS set the options.
 *   fork SERVERS NAME OUTDIR  fills the buffer, forks; child and parent take 2000 IDs
 *        each into OUTDIR/child and OUTDIR/parent.
 *   age SERVERS NAME          with a fake clock: after the clock jumps past max_age_ms,
 *        every ID is newer than one asked of the server directly after the jump.
 *   bad SERVERS NAME          bad addresses, options and names: one line each.
 *   probe SERVERS NAME        one ID, waiting $MAX_WAIT_MS: prints "ok" (exit 0), or
 *        the error and each server's reason (idgen_client_server_error), exit 1; then
 *        the stats.
 * Every mode goes over TLS when $TLS_CA, $TLS_CERT, $TLS_KEY or $TLS_SERVER_NAME is set
 * (idgen_client_new_tls; $TLS_CA=system: the system's store); a client that cannot be
 * made exits 2 with its one line. load prints each server's last reason after the
 * stats ("server i: ..."). */
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "idgen/client.h"

static const char *servers, *name, *outdir;
static long count;
static idgen_client *client;
static _Atomic int64_t longest_ns;

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static long long wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
static int64_t env_ms(const char *var, int64_t dflt) {
  const char *v = getenv(var);
  return v && *v ? atoll(v) : dflt;
}

static void options(idgen_client_options *o) {
  idgen_client_options_init(o);
  o->max_wait_ms = env_ms("MAX_WAIT_MS", o->max_wait_ms);
  o->timeout_ms = env_ms("TIMEOUT_MS", o->timeout_ms);
  o->max_age_ms = env_ms("MAX_AGE_MS", o->max_age_ms);
  o->auth_token = getenv("TOKEN");
}

static void *loader(void *arg) {
  long t = (long)arg;
  char path[4096];
  snprintf(path, sizeof path, "%s/t%ld", outdir, t);
  FILE *f = fopen(path, "w");
  if (!f)
    exit(2);
  const char *stop = getenv("STOP_FILE");
  for (long got = 0, i = 0;; i++) {
    if (got >= count && (!stop || ((i & 1023) == 0 && access(stop, F_OK) == 0)))
      break;
    uint64_t id;
    int64_t t0 = mono_ns();
    int rc = idgen_client_next(client, name, &id);
    int64_t took = mono_ns() - t0, was = atomic_load(&longest_ns);
    while (took > was && !atomic_compare_exchange_weak(&longest_ns, &was, took))
      ;
    if (rc == 0) {
      fprintf(f, "%lld t%ld %" PRIu64 "\n", wall_ms(), t, id);
      got++;
      continue;
    }
    fprintf(f, "%lld t%ld ERR %s\n", wall_ms(), t, idgen_err_name(rc));
    if (rc != IDGEN_EUNAVAIL) {
      char why[256];
      idgen_client_name_error(client, name, why, sizeof why);
      fprintf(stderr, "t%ld: %s: %s\n", t, idgen_err_name(rc), why);
      break;
    }
    fflush(f);
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
  fclose(f);
  return NULL;
}

static void print_stats(void) {
  idgen_client_stats st;
  idgen_client_stats_get(client, &st);
  printf("longest_call_ms=%.1f refills=%" PRIu64 " refill_errors=%" PRIu64
         " late_discarded=%" PRIu64 " burnt=%" PRIu64 " waits=%" PRIu64
         " unavailable=%" PRIu64 " failovers=%" PRIu64 "\n",
         (double)atomic_load(&longest_ns) / 1e6, st.refills, st.refill_errors,
         st.late_discarded, st.burnt, st.waits, st.unavailable, st.failovers);
}

static void print_server_errors(FILE *to) {
  for (size_t i = 0; i < 16; i++) {
    char why[256];
    idgen_client_server_error(client, i, why, sizeof why);
    if (why[0])
      fprintf(to, "server %zu: %s\n", i, why);
  }
}

static const char *env_or_null(const char *var) {
  const char *v = getenv(var);
  return v && *v ? v : NULL;
}

static int open_client(idgen_client_options *o) {
  char err[256];
  idgen_client_tls tls;
  idgen_client_tls_init(&tls);
  tls.ca_file = env_or_null("TLS_CA");
  tls.cert_file = env_or_null("TLS_CERT");
  tls.key_file = env_or_null("TLS_KEY");
  tls.server_name = env_or_null("TLS_SERVER_NAME");
  int use_tls = tls.ca_file || tls.cert_file || tls.key_file || tls.server_name;
  if (tls.ca_file && !strcmp(tls.ca_file, "system"))
    tls.ca_file = NULL;
  int rc =
      idgen_client_new_tls(&client, servers, o, use_tls ? &tls : NULL, err, sizeof err);
  if (rc < 0)
    fprintf(stderr, "client_tool: %s\n", err);
  return rc;
}

static int cmd_load(long threads) {
  idgen_client_options o;
  options(&o);
  if (open_client(&o) < 0)
    return 2;
  pthread_t th[64];
  for (long i = 0; i < threads; i++)
    pthread_create(&th[i], NULL, loader, (void *)i);
  for (long i = 0; i < threads; i++)
    pthread_join(th[i], NULL);
  print_stats();
  print_server_errors(stdout);
  idgen_client_free(client);
  return 0;
}

static int cmd_probe(void) {
  idgen_client_options o;
  options(&o);
  if (open_client(&o) < 0)
    return 2;
  uint64_t id;
  int rc = idgen_client_next(client, name, &id);
  if (rc == 0)
    printf("ok\n");
  else
    printf("%s\n", idgen_err_name(rc));
  print_server_errors(stdout);
  print_stats();
  idgen_client_free(client);
  return rc == 0 ? 0 : 1;
}

static int take_into(const char *file, int n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", outdir, file);
  FILE *f = fopen(path, "w");
  if (!f)
    return 2;
  for (int i = 0; i < n; i++) {
    uint64_t id;
    int rc = idgen_client_next(client, name, &id);
    if (rc < 0) { /* the test wants every one: the first error decides, and a client
                   * whose buffers cannot fill would wait out each of the rest */
      fprintf(f, "0 %s ERR %s\n", file, idgen_err_name(rc));
      break;
    }
    fprintf(f, "%lld %s %" PRIu64 "\n", wall_ms(), file, id);
  }
  fclose(f);
  return 0;
}

static int cmd_fork(void) {
  idgen_client_options o;
  options(&o);
  if (open_client(&o) < 0)
    return 2;
  uint64_t id;
  for (int i = 0; i < 5 && idgen_client_next(client, name, &id) < 0; i++)
    ;
  nanosleep(&(struct timespec){0, 300000000}, NULL); /* the buffer fills meanwhile */
  pid_t pid = fork();
  if (pid == 0) {
    int rc = take_into("child", 2000);
    idgen_client_free(client);
    _exit(rc);
  }
  int rc = take_into("parent", 2000), status = 0;
  waitpid(pid, &status, 0);
  idgen_client_free(client);
  return rc || !WIFEXITED(status) || WEXITSTATUS(status) ? 1 : 0;
}

/* A clock the test moves by hand. */
typedef struct fake_clock {
  idgen_clock base;
  _Atomic int64_t now;
} fake_clock;
static int64_t fake_now(idgen_clock *c) {
  return atomic_load(&((fake_clock *)c)->now);
}
static void fake_wait(idgen_clock *c, int64_t ns) {
  atomic_fetch_add(&((fake_clock *)c)->now, ns > 0 ? ns : 1);
}
static const idgen_clock_class fake_class = {fake_now, fake_wait, fake_wait};

static int cmd_age(void) {
  fake_clock fc = {{&fake_class}, INT64_C(1000000000)};
  idgen_client_options o;
  options(&o);
  o.clock = &fc.base;
  o.max_age_ms = 100;
  if (open_client(&o) < 0)
    return 2;
  uint64_t id, before = 0;
  for (int i = 0; i < 100; i++)
    if (idgen_client_next(client, name, &id) == 0)
      before = id;
  nanosleep(&(struct timespec){0, 200000000}, NULL); /* the buffer fills meanwhile */
  /* One ID asked of the server directly, then the jump: whatever was asked before the
   * jump is older than the bound, and smaller than this. */
  char host[256];
  int port;
  if (sscanf(servers, "%255[^:]:%d", host, &port) != 2)
    return 2;
  redisContext *rc = redisConnect(host, port);
  redisReply *r = rc ? redisCommand(rc, "ID %s", name) : NULL;
  if (!r || r->type != REDIS_REPLY_STRING) {
    fprintf(stderr, "client_tool: no ID from the server directly\n");
    return 2;
  }
  uint64_t mark = strtoull(r->str, NULL, 10);
  freeReplyObject(r);
  redisFree(rc);
  atomic_fetch_add(&fc.now, (o.max_age_ms + 1) * INT64_C(1000000));
  int bad = 0;
  for (int i = 0; i < 5000; i++) {
    if (idgen_client_next(client, name, &id) < 0)
      continue;
    if (id <= mark) {
      if (bad++ < 3)
        printf("stale: %" PRIu64 " (before the jump: the server was at %" PRIu64 ")\n", id,
               mark);
    }
  }
  printf("before=%" PRIu64 " mark=%" PRIu64 " stale=%d\n", before, mark, bad);
  print_stats();
  idgen_client_free(client);
  return bad ? 1 : 0;
}

static void try_new(const char *what, const char *list, const idgen_client_options *o) {
  char err[256] = "";
  idgen_client *c = NULL;
  int rc = idgen_client_new(&c, list, o, err, sizeof err);
  printf("%s: %s %s\n", what, rc < 0 ? idgen_err_name(rc) : "ok", err);
  idgen_client_free(c);
}

static int cmd_bad(void) {
  idgen_client_options o;
  idgen_client_options_init(&o);
  try_new("empty", "", &o);
  try_new("no port", "127.0.0.1", &o);
  try_new("port 0", "127.0.0.1:0", &o);
  try_new("port 65536", "127.0.0.1:65536", &o);
  try_new("port text", "127.0.0.1:http", &o);
  try_new("trailing comma", "127.0.0.1:1,", &o);
  try_new("no host", ":6380", &o);
  o.max_wait_ms = -1;
  try_new("max_wait -1", servers, &o);
  idgen_client_options_init(&o);
  o.min_batch = 0;
  try_new("min_batch 0", servers, &o);
  idgen_client_options_init(&o);
  o.timeout_ms = 0;
  try_new("timeout 0", servers, &o);
  idgen_client_options_init(&o);
  o.low_water_pct = 101;
  try_new("low_water 101", servers, &o);
  idgen_client_options_init(&o);
  o.max_wait_ms = 300;
  if (open_client(&o) < 0)
    return 2;
  uint64_t id;
  char why[256];
  const char *names[] = {"bad name!", "", "nope", "tokens", name};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    int rc = idgen_client_next(client, names[i], &id);
    idgen_client_name_error(client, names[i], why, sizeof why);
    printf("next '%s': %s %s\n", names[i], rc < 0 ? idgen_err_name(rc) : "ok", why);
  }
  /* One buffer for two names: the second gets its own sequence's numbers. */
  char buf[16];
  uint64_t a = 0, b = 0;
  snprintf(buf, sizeof buf, "%s", name);
  int ra = idgen_client_next(client, buf, &a);
  snprintf(buf, sizeof buf, "items");
  int rb = idgen_client_next(client, buf, &b);
  printf("one buffer, two names: %s=%" PRIu64 " (%d) items=%" PRIu64 " (%d)\n", name, a, ra,
         b, rb);
  idgen_client_free(client);
  idgen_client_free(NULL);
  printf("free NULL: ok\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: client_tool load|fork|age|bad|probe SERVERS NAME ...\n");
    return 2;
  }
  servers = argv[2];
  name = argv[3];
  if (!strcmp(argv[1], "load") && argc == 7) {
    count = atol(argv[5]);
    outdir = argv[6];
    return cmd_load(atol(argv[4]));
  }
  if (!strcmp(argv[1], "fork") && argc == 5) {
    outdir = argv[4];
    return cmd_fork();
  }
  if (!strcmp(argv[1], "age"))
    return cmd_age();
  if (!strcmp(argv[1], "probe"))
    return cmd_probe();
  if (!strcmp(argv[1], "bad"))
    return cmd_bad();
  fprintf(stderr, "client_tool: bad usage\n");
  return 2;
}
