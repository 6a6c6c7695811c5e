/* segment_ticket_client.c: one of Flickr's one-number clients of a ticket server, for
 * the tests that share a ticket table between them and idgen's segment generators. Each
 * number is taken as Flickr's clients take it:
 *   REPLACE INTO tickets64 (stub) VALUES ('a'); SELECT LAST_INSERT_ID();
 * on one connection in autocommit mode, retrying the REPLACE on MariaDB's error 1467
 * ("Failed to read auto-increment value from storage engine"), a deadlock or a lock
 * wait. Every number goes to a history in the format `idgen check --integers` reads:
 *   <unix ms> <process> <number> <name>
 * so one check judges the numbers of both kinds of client together. It stops after
 * --count numbers or on SIGTERM, then prints one line to stderr:
 *   TICKETCLIENT issued=.. retries=..
 * Usage: segment_ticket_client --server HOST:PORT --process P --name NAME --out FILE
 *          [--count N] [--stub a] [--table tickets64] [--database test] [--pace-us US] */
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mysql.h>
#include <mysqld_error.h>

#include "idgen.h"

#define RETRIES_MAX 1000 /* in a row: past that the server is not coming back */

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

static void usage(void) {
  fprintf(stderr, "usage: segment_ticket_client --server HOST:PORT --process P --name NAME "
                  "--out FILE [--count N] [--stub S] [--table T] [--database D] [--pace-us "
                  "US]\n");
}

static int retryable(unsigned code) {
  return code == ER_AUTOINC_READ_FAILED || code == ER_LOCK_DEADLOCK ||
         code == ER_LOCK_WAIT_TIMEOUT;
}

int main(int argc, char **argv) {
  static const struct option options[] = {
      {"server", required_argument, NULL, 's'},  {"process", required_argument, NULL, 'p'},
      {"name", required_argument, NULL, 'N'},    {"out", required_argument, NULL, 'o'},
      {"count", required_argument, NULL, 'n'},   {"stub", required_argument, NULL, 'S'},
      {"table", required_argument, NULL, 't'},   {"database", required_argument, NULL, 'd'},
      {"pace-us", required_argument, NULL, 'u'}, {NULL, 0, NULL, 0}};
  const char *server = NULL, *process = NULL, *name = NULL, *out_path = NULL;
  const char *stub = "a", *table = "tickets64", *database = "test";
  long long count = -1, pace_us = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    switch (opt) {
    case 's':
      server = optarg;
      break;
    case 'p':
      process = optarg;
      break;
    case 'N':
      name = optarg;
      break;
    case 'o':
      out_path = optarg;
      break;
    case 'n':
      count = atoll(optarg);
      break;
    case 'S':
      stub = optarg;
      break;
    case 't':
      table = optarg;
      break;
    case 'd':
      database = optarg;
      break;
    case 'u':
      pace_us = atoll(optarg);
      break;
    default:
      usage();
      return 2;
    }
  }
  const char *colon = server ? strrchr(server, ':') : NULL;
  if (!colon || !process || !name || !out_path || optind != argc || strchr(process, ' ') ||
      strchr(stub, '\'') || strchr(table, '`')) {
    usage();
    return 2;
  }
  char host[128];
  snprintf(host, sizeof host, "%.*s", (int)(colon - server), server);
  unsigned port = (unsigned)atoi(colon + 1);

  MYSQL *conn = mysql_init(NULL);
  if (!conn || !mysql_real_connect(conn, host, "root", NULL, database, port, NULL, 0)) {
    fprintf(stderr, "segment_ticket_client: connect %s: %s\n", server,
            conn ? mysql_error(conn) : "out of memory");
    return 1;
  }
  FILE *out = fopen(out_path, "a");
  if (!out) {
    fprintf(stderr, "segment_ticket_client: cannot write '%s'\n", out_path);
    return 2;
  }
  setvbuf(out, NULL, _IOLBF, 0); /* whole lines only */
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);

  char replace[256];
  snprintf(replace, sizeof replace, "REPLACE INTO `%s` (stub) VALUES ('%s')", table, stub);
  long long done = 0, retries = 0;
  int in_a_row = 0, rc = 0;
  while (!stop_flag && (count < 0 || done < count)) {
    if (mysql_query(conn, replace)) {
      unsigned code = mysql_errno(conn);
      if (retryable(code) && ++in_a_row < RETRIES_MAX) {
        retries++;
        continue;
      }
      fprintf(stderr, "segment_ticket_client: %s: %u %s\n", replace, code,
              mysql_error(conn));
      rc = 1;
      break;
    }
    in_a_row = 0;
    MYSQL_RES *res = NULL;
    MYSQL_ROW row = NULL;
    if (!mysql_query(conn, "SELECT LAST_INSERT_ID()") && (res = mysql_store_result(conn)))
      row = mysql_fetch_row(res);
    if (!row || !row[0]) {
      fprintf(stderr, "segment_ticket_client: SELECT LAST_INSERT_ID(): %s\n",
              mysql_error(conn));
      if (res)
        mysql_free_result(res);
      rc = 1;
      break;
    }
    fprintf(out, "%lld %s %s %s\n", (long long)(idgen_wall_ns() / 1000000), process, row[0],
            name);
    mysql_free_result(res);
    done++;
    if (pace_us) {
      struct timespec ts = {(time_t)(pace_us / 1000000), (long)(pace_us % 1000000) * 1000};
      nanosleep(&ts, NULL);
    }
  }
  fclose(out);
  mysql_close(conn);
  fprintf(stderr, "TICKETCLIENT issued=%lld retries=%lld\n", done, retries);
  return rc;
}
