/* cmd_adopt.c: `idgen adopt`: switch a PostgreSQL table's BIGSERIAL or identity column
 * to DEFAULT idgen_next() through the extension's idgen_adopt() (docs/adopt.md), and
 * the look-up `idgen segment init --from-sequence` makes of a sequence's last value. */
#include <getopt.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "segment/segment.h"

#define ADOPT_CMD "adopt"

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: idgen adopt --dsn DSN [--lock-timeout MS] TABLE COLUMN\n"
      "\n"
      "Switches TABLE's bigint COLUMN, a BIGSERIAL or identity column, to DEFAULT\n"
      "idgen_next() in one transaction, through idgen_adopt() of the idgen extension\n"
      "(installed in DSN's database, see docs/adopt.md). It takes the table's ACCESS\n"
      "EXCLUSIVE lock first (waiting for transactions that inserted), refuses when\n"
      "max(COLUMN) or the sequence's last value is not below the first ID idgen\n"
      "issues now, keeps the old sequence, and prints how to go back.\n"
      "\n"
      "  -d, --dsn DSN          a libpq connection string or URI (TLS: sslmode,\n"
      "                         sslrootcert, sslcert, sslkey; docs/segment.md)\n"
      "  -l, --lock-timeout MS  give up when the lock is not had within MS (default\n"
      "                         5000; inserts queue behind a waiting ALTER)\n"
      "\n"
      "Exit status: 0 switched, 1 refused or failed (one line says why), 2 bad usage.\n");
}

/* The first line of a libpq error, without its "ERROR:  " prefix. */
static const char *first_line(const char *msg, char *out, size_t outlen) {
  if (!strncmp(msg, "ERROR:  ", 8))
    msg += 8;
  snprintf(out, outlen, "%s", msg);
  out[strcspn(out, "\n")] = '\0';
  return out;
}

/* One statement; 0, or -1 with its error in err. */
static int exec(PGconn *c, const char *sql, int n, const char *const *params,
                PGresult **keep, char *err, size_t errlen) {
  PGresult *r = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
  ExecStatusType s = PQresultStatus(r);
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
    first_line(PQresultErrorMessage(r), err, errlen);
    PQclear(r);
    return -1;
  }
  if (keep)
    *keep = r;
  else
    PQclear(r);
  return 0;
}

static PGconn *connect_db(const char *dsn, char *err, size_t errlen) {
  PGconn *c = PQconnectdb(dsn);
  if (PQstatus(c) != CONNECTION_OK) {
    first_line(PQerrorMessage(c), err, errlen);
    PQfinish(c);
    return NULL;
  }
  return c;
}

int cli_pg_sequence_last(const char *dsn, const char *sequence, uint64_t *out, char *err,
                         size_t errlen) {
  char why[512];
  PGconn *c = connect_db(dsn, why, sizeof why);
  if (!c) {
    snprintf(err, errlen, "postgres: %s", why);
    return -1;
  }
  PGresult *r = NULL;
  const char *params[] = {sequence};
  /* Cached values of other sessions are below last_value: a cache reserves its block
   * there. NULL: never called, nothing handed out. */
  int rc = exec(c, "SELECT coalesce(pg_sequence_last_value($1::regclass), 0)", 1, params,
                &r, why, sizeof why);
  if (!rc) {
    long long v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    if (v < 0) {
      snprintf(why, sizeof why, "sequence %s is at %lld, below 0", sequence, v);
      rc = -1;
    } else {
      *out = (uint64_t)v;
    }
    PQclear(r);
  }
  if (rc)
    snprintf(err, errlen, "postgres: %s", why);
  PQfinish(c);
  return rc;
}

int idgen__cmd_adopt(int argc, char **argv) {
  static const struct option options[] = {{"dsn", required_argument, NULL, 'd'},
                                          {"lock-timeout", required_argument, NULL, 'l'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *dsn = NULL;
  uint64_t lock_ms = 5000;
  int opt;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":d:l:h", options, NULL)) != -1) {
    switch (opt) {
    case 'd':
      dsn = optarg;
      break;
    case 'l':
      if (cli_parse_u64(optarg, 1, 3600000, &lock_ms) < 0)
        return cli_error(CLI_USAGE, ADOPT_CMD,
                         "lock-timeout '%s' is not a number of ms from 1 to 3600000",
                         optarg);
      break;
    case 'h':
      usage(stdout);
      return CLI_OK;
    case ':':
      return cli_error(CLI_USAGE, ADOPT_CMD, "option '%s' needs a value", argv[optind - 1]);
    default:
      return cli_error(CLI_USAGE, ADOPT_CMD, "unknown option '%s' (see --help)",
                       argv[optind - 1]);
    }
  }
  if (!dsn)
    return cli_error(CLI_USAGE, ADOPT_CMD, "no --dsn given (see --help)");
  if (argc - optind != 2)
    return cli_error(CLI_USAGE, ADOPT_CMD, "give TABLE and COLUMN (see --help)");
  char err[512], lock_text[32];
  if (idgen__segment_postgres_dsn_check(dsn, err, sizeof err))
    return cli_error(CLI_USAGE, ADOPT_CMD, "DSN: %s", err);
  PGconn *c = connect_db(dsn, err, sizeof err);
  if (!c)
    return cli_error(CLI_FAILED, ADOPT_CMD, "postgres: %s", err);
  snprintf(lock_text, sizeof lock_text, "%" PRIu64, lock_ms);
  const char *lock_params[] = {lock_text};
  const char *adopt_params[] = {argv[optind], argv[optind + 1]};
  PGresult *r = NULL;
  /* One transaction: the lock, the checks and the ALTERs commit together or not at all. */
  int rc = exec(c, "BEGIN", 0, NULL, NULL, err, sizeof err);
  if (!rc)
    rc = exec(c, "SELECT set_config('lock_timeout', $1, true)", 1, lock_params, NULL, err,
              sizeof err);
  if (!rc)
    rc = exec(c, "SELECT idgen_adopt($1::regclass, $2::name)", 2, adopt_params, &r, err,
              sizeof err);
  if (!rc)
    rc = exec(c, "COMMIT", 0, NULL, NULL, err, sizeof err);
  int status = CLI_OK;
  if (rc)
    status = cli_error(CLI_FAILED, ADOPT_CMD, "%s", err);
  else
    printf("%s\n", PQgetvalue(r, 0, 0));
  PQclear(r);
  PQfinish(c);
  return status;
}
