/* ticket_client.c (bench_ticket_client): the Flickr ticket server's client, with the
 * latency of every request: each ID costs one round trip of
 *   REPLACE INTO Tickets64 (stub) VALUES ('a'); SELECT LAST_INSERT_ID();
 *
 *   bench_ticket_client --server HOST:PORT [--server HOST:PORT ...] [--clients N]
 *                       [--seconds S] [--warmup S] [--table NAME]
 *
 * N threads (default 1), each with one connection per server; with two servers each
 * client alternates between them, request by request (client i starts on server i % k),
 * as Flickr's round-robin does. Requests in the first --warmup seconds (default 0.5) are
 * not counted. Prints one line:
 *   TICKETRESULT ids=.. seconds=.. rate=.. p50_us=.. p99_us=.. max_us=.. distinct=yes|no
 *                min_id=.. max_id=.. retries=..
 * (distinct: no ID came back twice, across servers). A request that fails with a deadlock
 * or lock wait timeout (InnoDB) is retried, its latency including the retries, which are
 * counted. Exit 1 on any other failed request. */
#include <errno.h>
#include <getopt.h>
#include <mysql.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SERVERS 8
#define MAX_CLIENTS 256

typedef struct {
  char host[64];
  unsigned port;
} server_addr;

typedef struct {
  int index;
  int64_t start_ns, warm_ns, stop_ns;
  uint32_t *lat_us; /* counted requests only */
  uint64_t *ids;
  size_t n, cap;
  uint64_t retries;
  int failed;
  char error[640];
} client;

static server_addr servers[MAX_SERVERS];
static int nservers;
static const char *table = "Tickets64";

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int push(client *c, uint32_t lat_us, uint64_t id) {
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 65536;
    uint32_t *l = realloc(c->lat_us, cap * sizeof *l);
    if (!l)
      return -1;
    c->lat_us = l;
    uint64_t *d = realloc(c->ids, cap * sizeof *d);
    if (!d)
      return -1;
    c->ids = d;
    c->cap = cap;
  }
  c->lat_us[c->n] = lat_us;
  c->ids[c->n] = id;
  c->n++;
  return 0;
}

/* One ID: the two statements in one round trip; returns 0 and the ID, or -1. */
static int ticket(MYSQL *db, const char *sql, size_t sql_len, uint64_t *id) {
  if (mysql_real_query(db, sql, (unsigned long)sql_len) != 0)
    return -1;
  int got = 0;
  do {
    MYSQL_RES *res = mysql_store_result(db);
    if (res) {
      MYSQL_ROW row = mysql_fetch_row(res);
      if (row && row[0]) {
        *id = strtoull(row[0], NULL, 10);
        got = 1;
      }
      mysql_free_result(res);
    } else if (mysql_field_count(db) != 0) {
      return -1;
    }
  } while (mysql_next_result(db) == 0);
  if (mysql_errno(db) != 0)
    return -1;
  return got ? 0 : -1;
}

static void *run(void *arg) {
  client *c = arg;
  MYSQL *db[MAX_SERVERS] = {0};
  char sql[256];
  int len =
      snprintf(sql, sizeof sql,
               "REPLACE INTO %s (stub) VALUES ('a'); SELECT LAST_INSERT_ID();", table);
  mysql_thread_init();
  for (int s = 0; s < nservers; s++) {
    db[s] = mysql_init(NULL);
    if (!db[s] || !mysql_real_connect(db[s], servers[s].host, "root", NULL, "test",
                                      servers[s].port, NULL, CLIENT_MULTI_STATEMENTS)) {
      snprintf(c->error, sizeof c->error, "connect %s:%u: %s", servers[s].host,
               servers[s].port, db[s] ? mysql_error(db[s]) : "out of memory");
      c->failed = 1;
      goto out;
    }
  }
  for (uint64_t k = (uint64_t)c->index;; k++) {
    int64_t t0 = now_ns();
    if (t0 >= c->stop_ns)
      break;
    MYSQL *d = db[k % (uint64_t)nservers];
    uint64_t id = 0;
    int rc, tries = 0;
    /* InnoDB can deadlock two REPLACEs on the unique stub: retry, as a client must. */
    while ((rc = ticket(d, sql, (size_t)len, &id)) != 0 && tries < 100 &&
           (mysql_errno(d) == 1213 || mysql_errno(d) == 1205)) {
      tries++;
    }
    if (rc != 0) {
      snprintf(c->error, sizeof c->error, "query: %s", mysql_error(d));
      c->failed = 1;
      break;
    }
    if (t0 >= c->warm_ns)
      c->retries += (uint64_t)tries;
    if (t0 < c->warm_ns)
      continue;
    int64_t us = (now_ns() - t0 + 500) / 1000;
    if (push(c, (uint32_t)(us > UINT32_MAX ? UINT32_MAX : us), id) != 0) {
      snprintf(c->error, sizeof c->error, "out of memory");
      c->failed = 1;
      break;
    }
  }
out:
  for (int s = 0; s < nservers; s++)
    mysql_close(db[s]);
  mysql_thread_end();
  return NULL;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static void usage(FILE *out) {
  fputs("usage: bench_ticket_client --server HOST:PORT [--server HOST:PORT ...]\n"
        "                           [--clients N] [--seconds S] [--warmup S] [--table "
        "NAME]\n",
        out);
}

int main(int argc, char **argv) {
  int clients = 1;
  double seconds = 5.0, warmup = 0.5;
  static const struct option opts[] = {{"server", required_argument, NULL, 's'},
                                       {"clients", required_argument, NULL, 'c'},
                                       {"seconds", required_argument, NULL, 't'},
                                       {"warmup", required_argument, NULL, 'w'},
                                       {"table", required_argument, NULL, 'T'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int ch;
  while ((ch = getopt_long(argc, argv, "s:c:t:w:T:h", opts, NULL)) != -1) {
    switch (ch) {
    case 's': {
      const char *colon = strrchr(optarg, ':');
      if (nservers == MAX_SERVERS || !colon || colon == optarg ||
          (size_t)(colon - optarg) >= sizeof servers[0].host) {
        fprintf(stderr, "bench_ticket_client: bad --server '%s'\n", optarg);
        return 2;
      }
      memcpy(servers[nservers].host, optarg, (size_t)(colon - optarg));
      servers[nservers].port = (unsigned)strtoul(colon + 1, NULL, 10);
      nservers++;
      break;
    }
    case 'c':
      clients = atoi(optarg);
      break;
    case 't':
      seconds = atof(optarg);
      break;
    case 'w':
      warmup = atof(optarg);
      break;
    case 'T':
      table = optarg;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (nservers == 0 || clients < 1 || clients > MAX_CLIENTS || !(seconds > 0) ||
      !(warmup >= 0) ||
      strspn(table, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789_") != strlen(table)) {
    fprintf(stderr,
            "bench_ticket_client: need --server, 1..%d clients, seconds > 0, a plain "
            "table name\n",
            MAX_CLIENTS);
    return 2;
  }
  if (mysql_library_init(0, NULL, NULL) != 0) {
    fprintf(stderr, "bench_ticket_client: mysql_library_init failed\n");
    return 1;
  }
  client *cs = calloc((size_t)clients, sizeof *cs);
  pthread_t *th = calloc((size_t)clients, sizeof *th);
  if (!cs || !th)
    return 1;
  int64_t start = now_ns();
  int64_t warm = start + (int64_t)(warmup * 1e9);
  int64_t stop = warm + (int64_t)(seconds * 1e9);
  for (int i = 0; i < clients; i++) {
    cs[i] = (client){.index = i, .start_ns = start, .warm_ns = warm, .stop_ns = stop};
    if (pthread_create(&th[i], NULL, run, &cs[i]) != 0) {
      fprintf(stderr, "bench_ticket_client: pthread_create: %s\n", strerror(errno));
      return 1;
    }
  }
  size_t total = 0;
  uint64_t retries = 0;
  int failed = 0;
  for (int i = 0; i < clients; i++) {
    pthread_join(th[i], NULL);
    total += cs[i].n;
    retries += cs[i].retries;
    if (cs[i].failed) {
      fprintf(stderr, "bench_ticket_client: client %d: %s\n", i, cs[i].error);
      failed = 1;
    }
  }
  double elapsed = (double)(now_ns() - warm) / 1e9;
  if (failed || total == 0) {
    if (!failed)
      fprintf(stderr, "bench_ticket_client: no request finished\n");
    return 1;
  }
  uint32_t *lat = malloc(total * sizeof *lat);
  uint64_t *ids = malloc(total * sizeof *ids);
  if (!lat || !ids)
    return 1;
  size_t k = 0;
  for (int i = 0; i < clients; i++) {
    memcpy(lat + k, cs[i].lat_us, cs[i].n * sizeof *lat);
    memcpy(ids + k, cs[i].ids, cs[i].n * sizeof *ids);
    k += cs[i].n;
    free(cs[i].lat_us);
    free(cs[i].ids);
  }
  qsort(lat, total, sizeof *lat, cmp_u32);
  qsort(ids, total, sizeof *ids, cmp_u64);
  int distinct = 1;
  for (size_t i = 1; i < total; i++) {
    if (ids[i] == ids[i - 1])
      distinct = 0;
  }
  printf("TICKETRESULT ids=%zu seconds=%.3f rate=%.1f p50_us=%u p99_us=%u max_us=%u "
         "distinct=%s min_id=%llu max_id=%llu retries=%llu\n",
         total, elapsed, (double)total / elapsed, lat[total / 2], lat[(total * 99) / 100],
         lat[total - 1], distinct ? "yes" : "no", (unsigned long long)ids[0],
         (unsigned long long)ids[total - 1], (unsigned long long)retries);
  free(lat);
  free(ids);
  free(cs);
  free(th);
  mysql_library_end();
  return 0;
}
