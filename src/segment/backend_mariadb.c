/* backend_mariadb.c: the segment backend on Flickr's ticket servers (MariaDB, through
 * libmariadb). N servers share one sequence by counting apart: server I runs with
 * auto_increment_increment = N and auto_increment_offset = I + 1, and keeps a table
 *   tickets64 (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, stub UNIQUE)
 * where Flickr's one-number clients take one number each with
 *   REPLACE INTO tickets64 (stub) VALUES ('a'); SELECT LAST_INSERT_ID();
 * A block comes from the same AUTO_INCREMENT counter, with the table locked:
 *   LOCK TABLES tickets64 WRITE;
 *   REPLACE INTO tickets64 (stub) VALUES ('name');       -- v, the counter's next value
 *   REPLACE INTO tickets64 (id, stub) VALUES (end, 'name');  -- the counter moves past end
 *   UNLOCK TABLES;
 * The block is the step numbers of the server's residue class from max(v, the first one
 * above floor) to end, stride N. Why the lock, and not a REPLACE ... SELECT MAX(id):
 * LOCK TABLES waits until every statement (and open transaction) on the table is over,
 * and holds back every new one before it opens the table, so before the counter hands
 * it a value. No one-number client holds a value in flight while the block is taken,
 * none takes one until its end is in the counter, and no isolation level or binlog
 * format changes that (MAX(id) could not see values in flight, and read without locks
 * at READ-COMMITTED). A crash between two steps loses numbers, never repeats them:
 * after the first REPLACE v is spent, and the block is handed out only after UNLOCK
 * (which commits, should the session not be in autocommit mode). The
 * floor lifts a server to above the other's last block, so one generator's numbers
 * rise while it alternates between servers. Fetches alternate, and skip a server that
 * failed for a second; servers set up to collide stop every fetch.
 * Periods (key NAME:NUMBER): each period is a ticket table of its own on every server,
 * TABLE_NUMBER (tickets64_20261201, ENGINE=InnoDB, which keeps its counter across
 * restarts), its counter from the server's first number. TABLE_periods records on each
 * server which period tables it made, so that one made and lost is refused rather than
 * made again at 1: see period_start. TABLE_newest records on each server the newest
 * period started there per kind (tickets64_YYYYMMDD): no period table below it is made
 * there again, whatever tables and records of old periods were dropped. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>

#include "segment/segment.h"

#define SERVERS_MAX 8
#define DOWN_NS INT64_C(1000000000)
#define IDENT_MAX 64       /* MariaDB's longest table name */
#define PERIODS "_periods" /* TABLE_periods: the record of the period tables made */
#define NEWEST "_newest"   /* TABLE_newest: the newest period started, per kind */

typedef struct server {
  char host[128];
  unsigned port;
  MYSQL *conn;           /* NULL until connected, and after a failure */
  uint64_t increment;    /* @@auto_increment_increment, read at connect */
  uint64_t offset;       /* @@auto_increment_offset */
  int64_t down_until_ns; /* monotonic: skip it until then, unless every server is down */
  char started[IDENT_MAX + 1]; /* the period table period_start passed on this connection */
} server;

typedef struct mariadb_backend {
  idgen__segment_backend base;
  server servers[SERVERS_MAX];
  int nservers;
  int next; /* the server to try first */
  char database[65], user[65], password[129], table[65];
  /* TLS, asked by any ssl-* key: the CA of the servers' certificates ("" the system's),
   * a client certificate and its key ("" none), and "on" or "off" (verification) */
  char ssl_ca[IDGEN_LEASE_PATH_MAX], ssl_cert[IDGEN_LEASE_PATH_MAX],
      ssl_key[IDGEN_LEASE_PATH_MAX], ssl_verify[4];
  int tls;
  unsigned timeout_s;
} mariadb_backend;

static pthread_once_t library_once = PTHREAD_ONCE_INIT;
static void library_init(void) {
  mysql_library_init(0, NULL, NULL);
}

static void disconnect(server *s) {
  if (s->conn)
    mysql_close(s->conn);
  s->conn = NULL;
  s->started[0] = '\0';
}

/* A failed call on s: drops the connection if it is broken; the backend's code. */
static int server_error(mariadb_backend *m, server *s, const char *what) {
  unsigned code = mysql_errno(s->conn);
  char msg[160];
  snprintf(msg, sizeof msg, "%s", mysql_error(s->conn));
  int rc = IDGEN_EUNAVAIL;
  if (code == ER_NO_SUCH_TABLE)
    rc = -ENOENT;
  if (code >= 2000) /* a client error: the connection is gone or unusable */
    disconnect(s);
  return idgen__segment_why(
      &m->base, rc, "mariadb %s:%u %s: %s%s", s->host, s->port, what, msg,
      rc == -ENOENT ? " (run 'idgen segment init --backend mariadb')" : "");
}

/* Every server must count apart from the others: the same increment, at least the
 * number of servers, and offsets of their own. A server set up otherwise would hand
 * out another's numbers, so it is refused. */
static int check_counting(mariadb_backend *m, server *s) {
  uint64_t inc = s->increment, off = s->offset;
  if (inc < (uint64_t)m->nservers || off < 1 || off > inc)
    return idgen__segment_why(&m->base, IDGEN_EPROTO,
                              "mariadb %s:%u: auto_increment_increment %" PRIu64
                              " and offset %" PRIu64 " do not keep %d ticket servers apart "
                              "(want increment >= %d, offset 1..increment)",
                              s->host, s->port, inc, off, m->nservers, m->nservers);
  for (int i = 0; i < m->nservers; i++) {
    server *o = &m->servers[i];
    if (o == s || !o->increment)
      continue;
    if (o->increment != inc || o->offset == off)
      return idgen__segment_why(&m->base, IDGEN_EPROTO,
                                "mariadb %s:%u (increment %" PRIu64 ", offset %" PRIu64
                                ") and %s:%u (increment %" PRIu64 ", offset %" PRIu64
                                ") would hand out the same numbers",
                                s->host, s->port, inc, off, o->host, o->port, o->increment,
                                o->offset);
  }
  return 0;
}

/* TLS 1.2 or 1.3, never plain text. libmariadb 10.11 (measured) checks the server's
 * chain against ssl-ca, or without it against the system's CAs when it checks the
 * host name; ssl-verify=off drops the host name check, and with no ssl-ca the chain's. */
static void tls_options(const mariadb_backend *m, MYSQL *conn) {
  my_bool enforce = 1, verify = !strcmp(m->ssl_verify, "on");
  mysql_optionsv(conn, MYSQL_OPT_SSL_ENFORCE, &enforce);
  mysql_optionsv(conn, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
  mysql_optionsv(conn, MARIADB_OPT_TLS_VERSION, "TLSv1.2,TLSv1.3");
  if (m->ssl_ca[0])
    mysql_optionsv(conn, MYSQL_OPT_SSL_CA, m->ssl_ca);
  if (m->ssl_cert[0])
    mysql_optionsv(conn, MYSQL_OPT_SSL_CERT, m->ssl_cert);
  if (m->ssl_key[0])
    mysql_optionsv(conn, MYSQL_OPT_SSL_KEY, m->ssl_key);
}

static int connect_server(mariadb_backend *m, server *s) {
  if (s->conn)
    return 0;
  s->conn = mysql_init(NULL);
  if (!s->conn)
    return idgen__segment_why(&m->base, IDGEN_ENOMEM, "mariadb: out of memory");
  mysql_options(s->conn, MYSQL_OPT_CONNECT_TIMEOUT, &m->timeout_s);
  mysql_options(s->conn, MYSQL_OPT_READ_TIMEOUT, &m->timeout_s);
  mysql_options(s->conn, MYSQL_OPT_WRITE_TIMEOUT, &m->timeout_s);
  if (m->tls)
    tls_options(m, s->conn);
  if (!mysql_real_connect(s->conn, s->host, m->user, m->password[0] ? m->password : NULL,
                          m->database, s->port, NULL, 0)) {
    /* MariaDB refuses a plain-text client under require_secure_transport as it refuses
     * a wrong password: the line says which way this one came. */
    int plain_denied = !m->tls && mysql_errno(s->conn) == ER_ACCESS_DENIED_ERROR;
    int rc = server_error(m, s, "connect");
    size_t len = strlen(m->base.why);
    if (plain_denied)
      snprintf(m->base.why + len, sizeof m->base.why - len,
               " (sent in plain text; a server that requires TLS wants ssl-ca=FILE)");
    disconnect(s);
    return rc;
  }
  /* libmariadb can go on in plain text where TLS was asked (an option it ignored, a
   * server without TLS in some of its versions): the session says which it is. */
  if (m->tls && !mysql_get_ssl_cipher(s->conn)) {
    disconnect(s);
    return idgen__segment_why(&m->base, IDGEN_EUNAVAIL,
                              "mariadb %s:%u connect: TLS asked (ssl-*), but the "
                              "server answered in plain text: refused",
                              s->host, s->port);
  }
  /* LOCK TABLES waits for the table's other users no longer than a request may take: a
   * request still queued after its client gave up would hold back every one-number
   * client behind it until the server's lock_wait_timeout (a day). */
  char session[64];
  snprintf(session, sizeof session, "SET SESSION lock_wait_timeout = %u", m->timeout_s);
  if (mysql_query(s->conn, session))
    return server_error(m, s, "session settings");
  if (mysql_query(s->conn, "SELECT @@auto_increment_increment, @@auto_increment_offset"))
    return server_error(m, s, "settings");
  MYSQL_RES *res = mysql_store_result(s->conn);
  MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
  int ok = row && row[0] && row[1];
  if (ok) {
    s->increment = strtoull(row[0], NULL, 10);
    s->offset = strtoull(row[1], NULL, 10);
  }
  if (res)
    mysql_free_result(res);
  int rc = ok ? check_counting(m, s)
              : idgen__segment_why(&m->base, IDGEN_EPROTO,
                                   "mariadb %s:%u: cannot read auto_increment settings",
                                   s->host, s->port);
  if (rc) {
    s->increment = 0;
    disconnect(s);
  }
  return rc;
}

/* Runs sql on s: 0 or an error. */
static int query(mariadb_backend *m, server *s, const char *what, const char *sql) {
  return mysql_query(s->conn, sql) ? server_error(m, s, what) : 0;
}

/* Reads one unsigned integer (SELECT GET_LOCK(...)). */
static int select_u64(mariadb_backend *m, server *s, const char *sql, uint64_t *out) {
  int rc = query(m, s, "select", sql);
  if (rc)
    return rc;
  MYSQL_RES *res = mysql_store_result(s->conn);
  MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
  char *end = NULL;
  errno = 0;
  unsigned long long v = row && row[0] ? strtoull(row[0], &end, 10) : 0;
  int ok = row && row[0] && !errno && end != row[0] && !*end;
  if (res)
    mysql_free_result(res);
  if (!ok)
    return idgen__segment_why(&m->base, IDGEN_EPROTO, "mariadb %s:%u: unexpected reply",
                              s->host, s->port);
  *out = v;
  return 0;
}

/* Reads the first column of the first row as text: 1 with it in out, 0 for no row (or
 * NULL), or an error. */
static int select_text(mariadb_backend *m, server *s, const char *sql, char *out,
                       size_t outlen) {
  int rc = query(m, s, "select", sql);
  if (rc)
    return rc;
  MYSQL_RES *res = mysql_store_result(s->conn);
  if (!res)
    return server_error(m, s, "select");
  MYSQL_ROW row = mysql_fetch_row(res);
  int found = row && row[0];
  if (found)
    snprintf(out, outlen, "%s", row[0]);
  mysql_free_result(res);
  return found;
}

/* The ticket table and the row's stub of key: a period key NAME:NUMBER has the table
 * TABLE_NUMBER and the stub NAME (1); any other key, the table and itself (0). -1 when
 * the period table's name would be too long (refused at config time, by
 * mariadb_period_check). */
static int key_table(const mariadb_backend *m, const char *key, char table[IDENT_MAX + 1],
                     char stub[IDGEN_SEGMENT_NAME_MAX + 1]) {
  const char *colon = strchr(key, ':');
  size_t tlen = strlen(m->table);
  if (!colon) {
    memcpy(table, m->table, tlen + 1);
    snprintf(stub, IDGEN_SEGMENT_NAME_MAX + 1, "%s", key);
    return 0;
  }
  size_t digits = strlen(colon + 1);
  if (tlen + 1 + digits > IDENT_MAX || tlen + strlen(PERIODS) > IDENT_MAX ||
      (size_t)(colon - key) > IDGEN_SEGMENT_NAME_MAX)
    return -1;
  memcpy(table, m->table, tlen);
  table[tlen] = '_';
  memcpy(table + tlen + 1, colon + 1, digits + 1);
  memcpy(stub, key, (size_t)(colon - key));
  stub[colon - key] = '\0';
  return 1;
}

/* The engines that keep a table's AUTO_INCREMENT across a restart (MariaDB 10.11,
 * measured with TERM and KILL): not MEMORY, which starts again at 1. */
static int engine_keeps_counter(const char *engine) {
  return !strcmp(engine, "InnoDB") || !strcmp(engine, "MyISAM") || !strcmp(engine, "Aria");
}

/* Where a start of period table `table` on one server got to: its record in
 * TABLE_periods and whether the table exists. A start runs in steps that each commit on
 * their own (CREATE TABLE commits implicitly: no transaction can hold them together),
 * and a crash after any step leaves one of these, which the next start continues from:
 *   state     record  table   meaning: what is done (period_on[])
 *   NEW       none    none    never made: record 'making', CREATE TABLE, the marker
 *                             row, 'made'
 *   MAKING    making  none    a start stopped before its CREATE: made (from 'making' on)
 *   CREATED   making  there   a start stopped after its CREATE, before 'made', and no
 *                             block is taken before 'made': the marker row, then 'made'
 *   MADE      made    there   ready, if its marker row (id 0, stub '') is there; without
 *                             it the table was emptied (TRUNCATE resets the counter):
 *                             refused
 *   LOST      made    none    made and lost: refused (made again it would count from 1)
 *   FOREIGN   none    there   not made by idgen, or its record lost: refused
 * The record is written before the CREATE: a table that exists always has one, so a
 * table with none is never taken for one idgen made. */
typedef enum period_state {
  PERIOD_NEW,
  PERIOD_MAKING,
  PERIOD_CREATED,
  PERIOD_MADE,
  PERIOD_LOST,
  PERIOD_FOREIGN,
  PERIOD_STATES
} period_state;

/* One start of a period table on one server. */
typedef struct period_start_ctx {
  mariadb_backend *m;
  server *s;
  const char *key; /* NAME:NUMBER, for the refusals */
  const char *table;
  char engine[64]; /* the table's, when it exists */
} period_start_ctx;

/* Raises the newest period of the table's kind (TABLE_YYYYMMDD) on the server to the
 * table's, and reads it back with a locking read (the newest version at any isolation
 * level, in a transaction or not): *newest, at or above the table's. 0 or an error. */
static int newest_raise(period_start_ctx *c, uint64_t *newest) {
  mariadb_backend *m = c->m;
  size_t tlen = strlen(m->table), digits = strlen(c->table) - tlen - 1;
  const char *number = c->table + tlen + 1;
  char family[IDENT_MAX + 16], sql[512];
  snprintf(family, sizeof family, "%s_%s", m->table,
           digits == 4   ? "YYYY"
           : digits == 6 ? "YYYYMM"
                         : "YYYYMMDD");
  snprintf(sql, sizeof sql,
           "CREATE TABLE IF NOT EXISTS `%s" NEWEST "` (family VARCHAR(%d) NOT NULL "
           "PRIMARY KEY, period BIGINT UNSIGNED NOT NULL, changed TIMESTAMP NOT NULL "
           "DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP) ENGINE=InnoDB",
           m->table, IDENT_MAX);
  int rc = query(m, c->s, "create the newest periods' record", sql);
  if (rc)
    return rc;
  snprintf(sql, sizeof sql,
           "INSERT INTO `%s" NEWEST "` (family, period) VALUES ('%s', %s) ON DUPLICATE "
           "KEY UPDATE period = GREATEST(period, VALUES(period))",
           m->table, family, number);
  if ((rc = query(m, c->s, "raise the newest period", sql)))
    return rc;
  snprintf(sql, sizeof sql,
           "SELECT period FROM `%s" NEWEST "` WHERE family = '%s' FOR UPDATE", m->table,
           family);
  return select_u64(m, c->s, sql, newest);
}

/* Reads the table's record and engine into *state. 0 or an error. */
static int period_read(period_start_ctx *c, period_state *state) {
  mariadb_backend *m = c->m;
  char sql[512], record[16] = "";
  snprintf(sql, sizeof sql,
           "CREATE TABLE IF NOT EXISTS `%s" PERIODS "` (period_table VARCHAR(%d) NOT NULL "
           "PRIMARY KEY, state ENUM('making','made') NOT NULL, changed TIMESTAMP NOT NULL "
           "DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP) ENGINE=InnoDB",
           m->table, IDENT_MAX);
  int rc = query(m, c->s, "create the periods' record", sql);
  if (rc)
    return rc;
  snprintf(sql, sizeof sql, "SELECT state FROM `%s" PERIODS "` WHERE period_table = '%s'",
           m->table, c->table);
  int recorded = select_text(m, c->s, sql, record, sizeof record);
  if (recorded < 0)
    return recorded;
  snprintf(sql, sizeof sql,
           "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
           "AND TABLE_NAME = '%s'",
           c->table);
  int exists = select_text(m, c->s, sql, c->engine, sizeof c->engine);
  if (exists < 0)
    return exists;
  if (!recorded)
    *state = exists ? PERIOD_FOREIGN : PERIOD_NEW;
  else if (strcmp(record, "made"))
    *state = exists ? PERIOD_CREATED : PERIOD_MAKING;
  else
    *state = exists ? PERIOD_MADE : PERIOD_LOST;
  return 0;
}

/* The table exists: its engine must keep the counter across a restart. */
static int period_engine_check(period_start_ctx *c) {
  if (engine_keeps_counter(c->engine))
    return 0;
  return idgen__segment_why(&c->m->base, IDGEN_EPROTO,
                            "mariadb %s:%u: period table %s is ENGINE=%.16s, which loses "
                            "its AUTO_INCREMENT on a restart: refused (make it InnoDB)",
                            c->s->host, c->s->port, c->table, c->engine);
}

/* CREATED: the marker row (id 0 leaves the counter at the server's first number), then
 * 'made'. 0 (made) or an error. */
static int period_on_created(period_start_ctx *c) {
  char sql[512];
  int rc = period_engine_check(c);
  if (rc)
    return rc;
  snprintf(sql, sizeof sql,
           "SET STATEMENT sql_mode = 'NO_AUTO_VALUE_ON_ZERO' FOR INSERT IGNORE INTO `%s` "
           "(id, stub) VALUES (0, '')",
           c->table);
  if ((rc = query(c->m, c->s, "insert the marker row", sql)))
    return rc;
  snprintf(sql, sizeof sql,
           "UPDATE `%s" PERIODS "` SET state = 'made' WHERE period_table = '%s'",
           c->m->table, c->table);
  return query(c->m, c->s, "record 'made'", sql);
}

/* MAKING: CREATE TABLE, then as CREATED. */
static int period_on_making(period_start_ctx *c) {
  char sql[512];
  /* InnoDB whatever the server's default_storage_engine: it keeps the counter */
  snprintf(sql, sizeof sql,
           "CREATE TABLE IF NOT EXISTS `%s` (id BIGINT UNSIGNED NOT NULL "
           "AUTO_INCREMENT, stub VARCHAR(%d) NOT NULL DEFAULT '', PRIMARY KEY (id), "
           "UNIQUE KEY stub (stub)) ENGINE=InnoDB",
           c->table, IDGEN_SEGMENT_NAME_MAX);
  int rc = query(c->m, c->s, "create the period table", sql);
  if (rc)
    return rc;
  snprintf(c->engine, sizeof c->engine, "InnoDB");
  return period_on_created(c);
}

/* NEW: record 'making', then as MAKING; only at or above the newest period started
 * here (raised to it first). */
static int period_on_new(period_start_ctx *c) {
  char sql[512], record[IDENT_MAX + 192];
  uint64_t newest = 0;
  int rc = newest_raise(c, &newest);
  if (rc)
    return rc;
  if (newest > strtoull(c->table + strlen(c->m->table) + 1, NULL, 10)) {
    snprintf(record, sizeof record, "%s" NEWEST " on %s:%u", c->m->table, c->s->host,
             c->s->port);
    return idgen__segment_behind(&c->m->base, c->key, newest, record);
  }
  snprintf(sql, sizeof sql,
           "INSERT INTO `%s" PERIODS "` (period_table, state) VALUES ('%s', 'making')",
           c->m->table, c->table);
  rc = query(c->m, c->s, "record 'making'", sql);
  return rc ? rc : period_on_making(c);
}

/* MADE: ready if it keeps its counter and still has its marker row. 1 or an error. */
static int period_on_made(period_start_ctx *c) {
  char sql[256];
  int rc = period_engine_check(c);
  if (rc)
    return rc;
  uint64_t marker = 0;
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM `%s` WHERE id = 0", c->table);
  if ((rc = select_u64(c->m, c->s, sql, &marker)))
    return rc;
  if (marker != 1)
    return idgen__segment_why(&c->m->base, IDGEN_EPROTO,
                              "mariadb %s:%u: period table %s lost its marker row (id 0): "
                              "emptied, its counter may have gone back: refused",
                              c->s->host, c->s->port, c->table);
  return 1;
}

static int period_on_lost(period_start_ctx *c) {
  return idgen__segment_why(&c->m->base, IDGEN_EPROTO,
                            "mariadb %s:%u: period table %s is gone, but %s" PERIODS
                            " says it was made: refused, not made again at 1; restore it "
                            "with its AUTO_INCREMENT",
                            c->s->host, c->s->port, c->table, c->m->table);
}

static int period_on_foreign(period_start_ctx *c) {
  return idgen__segment_why(&c->m->base, IDGEN_EPROTO,
                            "mariadb %s:%u: table %s exists, but %s" PERIODS
                            " has no record of it (not made by idgen, or the record lost): "
                            "refused",
                            c->s->host, c->s->port, c->table, c->m->table);
}

/* What a start does in each state: 0 (made now), 1 (it was made), or an error. */
static int (*const period_on[PERIOD_STATES])(period_start_ctx *) = {
    [PERIOD_NEW] = period_on_new,         [PERIOD_MAKING] = period_on_making,
    [PERIOD_CREATED] = period_on_created, [PERIOD_MADE] = period_on_made,
    [PERIOD_LOST] = period_on_lost,       [PERIOD_FOREIGN] = period_on_foreign,
};

/* Makes period table `table` ready on s before its first block there (see period_state),
 * under the named lock 'idgen-periods:DATABASE.TABLE': one starter at a time per server.
 * 0 when made, 1 when it was there, or an error with one line in why. */
static int period_start(mariadb_backend *m, server *s, const char *key, const char *table) {
  if (!strcmp(s->started, table))
    return 1;
  char lock[128], sql[160];
  snprintf(lock, sizeof lock, "'idgen-periods:%.24s.%.24s'", m->database, m->table);
  snprintf(sql, sizeof sql, "SELECT GET_LOCK(%s, %u)", lock, m->timeout_s);
  uint64_t got = 0;
  int rc = select_u64(m, s, sql, &got);
  if (rc)
    return rc;
  if (got != 1)
    return idgen__segment_why(&m->base, IDGEN_EUNAVAIL,
                              "mariadb %s:%u: other starts held the periods' lock for %u s",
                              s->host, s->port, m->timeout_s);
  period_start_ctx c = {m, s, key, table, ""};
  period_state state = PERIOD_NEW;
  rc = period_read(&c, &state);
  if (!rc)
    rc = period_on[state](&c);
  if (s->conn) {
    snprintf(sql, sizeof sql, "DO RELEASE_LOCK(%s)", lock);
    if (mysql_query(s->conn, sql)) {
      if (rc >= 0)
        rc = server_error(m, s, "release the periods' lock");
      disconnect(s);
    }
  }
  if (rc < 0)
    return rc;
  snprintf(s->started, sizeof s->started, "%s", table);
  return rc;
}

/* The block's two REPLACEs, with the table locked (see the top of the file). */
static int take_block(mariadb_backend *m, server *s, const char *table, const char *name,
                      int period, uint64_t step, uint64_t floor,
                      idgen__segment_block *out) {
  uint64_t inc = s->increment, off = s->offset;
  char sql[256];
  snprintf(sql, sizeof sql, "REPLACE INTO `%s` (stub) VALUES ('%s')", table, name);
  int rc = query(m, s, "replace (take a value)", sql);
  if (rc)
    return rc;
  uint64_t v = mysql_insert_id(s->conn);
  /* A new row: the name was never initialised. A period table is initialised as a whole
   * (period_start): a name's row comes with its first block. */
  if (!period && mysql_affected_rows(s->conn) == 1) {
    snprintf(sql, sizeof sql, "DELETE FROM `%s` WHERE stub = '%s'", table, name);
    if ((rc = query(m, s, "delete", sql)))
      return rc;
    return idgen__segment_why(&m->base, -ENOENT,
                              "mariadb %s:%u: no row '%s' in %s: run 'idgen segment init "
                              "--backend mariadb' first",
                              s->host, s->port, name, table);
  }
  if (v == 0 || v % inc != off % inc || v > IDGEN_SEGMENT_NUMBER_MAX)
    return idgen__segment_why(&m->base, IDGEN_EPROTO,
                              "mariadb %s:%u: %s gave id %" PRIu64 ", not a number of "
                              "this server's AUTO_INCREMENT counter",
                              s->host, s->port, table, v);
  /* the first number of this server's class above floor */
  uint64_t above = floor < off ? off : floor - (floor - off) % inc + inc;
  uint64_t first = v > above ? v : above;
  if (first > IDGEN_SEGMENT_NUMBER_MAX ||
      step - 1 > (IDGEN_SEGMENT_NUMBER_MAX - first) / inc)
    return idgen__segment_why(&m->base, IDGEN_ERANGE,
                              "mariadb %s:%u: a block of %" PRIu64 " would pass 2^63 - 1",
                              s->host, s->port, step);
  uint64_t end = first + (step - 1) * inc;
  snprintf(sql, sizeof sql, "REPLACE INTO `%s` (id, stub) VALUES (%" PRIu64 ", '%s')",
           table, end, name);
  if ((rc = query(m, s, "replace (block end)", sql)))
    return rc;
  *out = (idgen__segment_block){end, step, inc};
  return 0;
}

/* Liveness, not safety: idgen's fetches on one table queue on a named lock before they
 * ask for the table's. MariaDB grants a waiting LOCK TABLES ... WRITE ahead of waiting
 * statements, so fetchers that always had one such request queued would starve the
 * one-number clients (measured: 3 processes taking blocks of 200 left a client 11
 * numbers in 5 s). With one fetch at a time, the clients waiting at its UNLOCK run
 * before the next fetch's LOCK. 1 when held, 0 if not within the timeout, or an error. */
static int fetchers_lock(mariadb_backend *m, server *s, const char *table) {
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT GET_LOCK('idgen:%.32s.%.24s', %u)", m->database, table,
           m->timeout_s);
  uint64_t got = 0;
  int rc = select_u64(m, s, sql, &got);
  return rc ? rc : got == 1;
}

static int fetch_once(mariadb_backend *m, server *s, const char *key, uint64_t step,
                      uint64_t floor, idgen__segment_block *out) {
  char table[IDENT_MAX + 1], name[IDGEN_SEGMENT_NAME_MAX + 1];
  int period = key_table(m, key, table, name);
  if (period < 0)
    return idgen__segment_why(&m->base, IDGEN_EINVAL, "mariadb: %s: table name too long",
                              key);
  int rc = connect_server(m, s);
  if (rc)
    return rc;
  if (period && (rc = period_start(m, s, key, table)) < 0)
    return rc;
  if ((rc = fetchers_lock(m, s, table)) != 1)
    return rc < 0 ? rc
                  : idgen__segment_why(&m->base, IDGEN_EUNAVAIL,
                                       "mariadb %s:%u: other fetches held the fetchers' "
                                       "lock for %u s",
                                       s->host, s->port, m->timeout_s);
  char sql[128];
  snprintf(sql, sizeof sql, "LOCK TABLES `%s` WRITE", table);
  idgen__segment_block b;
  rc = query(m, s, "lock", sql);
  if (!rc)
    rc = take_block(m, s, table, name, period, step, floor, &b);
  /* The block is handed out only once the lock is given back: a session that kept it
   * would stop every one-number client. A failed UNLOCK drops the connection, and with
   * it both locks. */
  if (s->conn && (mysql_query(s->conn, "UNLOCK TABLES") ||
                  mysql_query(s->conn, "DO RELEASE_ALL_LOCKS()"))) {
    if (!rc) /* else keep the first failure's why */
      rc = server_error(m, s, "unlock");
    disconnect(s);
  }
  /* A period table gone since its start (dropped under this process): its record says
   * why, in the words of a start. */
  if (rc == -ENOENT && period && s->conn) {
    s->started[0] = '\0';
    int again = period_start(m, s, key, table);
    if (again < 0)
      rc = again;
  }
  if (!rc)
    *out = b;
  return rc;
}

/* fetch_once, and once more on a new connection if a kept one turned out to be broken
 * (the server restarted since the last call). The lock and the insert id belong to a
 * connection, so every statement runs again: a block whose reply was lost is lost,
 * never reused. */
static int fetch_from(mariadb_backend *m, server *s, const char *name, uint64_t step,
                      uint64_t floor, idgen__segment_block *out) {
  int kept = s->conn != NULL;
  int rc = fetch_once(m, s, name, step, floor, out);
  if (rc == IDGEN_EUNAVAIL && kept && !s->conn)
    rc = fetch_once(m, s, name, step, floor, out);
  return rc;
}

static int mariadb_fetch(idgen__segment_backend *b, const char *name, uint64_t step,
                         uint64_t floor, idgen__segment_block *out) {
  mariadb_backend *m = (mariadb_backend *)b;
  if (idgen__segment_name_check(name))
    return idgen__segment_why(b, IDGEN_EINVAL, "mariadb: bad name");
  int64_t now = idgen_monotonic_ns();
  int up = 0;
  for (int i = 0; i < m->nservers; i++)
    up += m->servers[i].down_until_ns <= now;
  char first_err[IDGEN_SEGMENT_WHY_MAX] = "";
  int first_rc = IDGEN_EUNAVAIL;
  for (int k = 0; k < m->nservers; k++) {
    int i = (m->next + k) % m->nservers;
    server *s = &m->servers[i];
    if (up && s->down_until_ns > now)
      continue;
    int rc = fetch_from(m, s, name, step, floor, out);
    if (!rc) {
      s->down_until_ns = 0;
      m->next = (i + 1) % m->nservers; /* alternate, as Flickr's clients do */
      return 0;
    }
    /* servers that would collide, a period table lost: say so, do not work around */
    if (rc == IDGEN_EPROTO)
      return rc;
    s->down_until_ns = idgen_monotonic_ns() + DOWN_NS;
    if (!first_err[0]) {
      snprintf(first_err, sizeof first_err, "%s", b->why);
      first_rc = rc;
    }
  }
  return idgen__segment_why(b, first_rc, "%s%s", first_err,
                            m->nservers > 1 ? " (and no other ticket server answered)"
                                            : "");
}

/* period_start on every server: 0 when made on one, 1 when it was there on each. */
static int period_start_all(mariadb_backend *m, const char *key, const char *table) {
  int made = 0;
  for (int i = 0; i < m->nservers; i++) {
    server *s = &m->servers[i];
    int rc = connect_server(m, s);
    if (!rc)
      rc = period_start(m, s, key, table);
    if (rc < 0)
      return rc;
    made |= rc == 0;
  }
  return !made;
}

static int mariadb_init(idgen__segment_backend *b, const char *name, uint64_t step,
                        uint64_t start_after, int force) {
  (void)force; /* the recorded highest is checked per backend (issue 35) */
  mariadb_backend *m = (mariadb_backend *)b;
  (void)step; /* the step is the generator's; a ticket server keeps only its counter */
  if (idgen__segment_name_check(name))
    return idgen__segment_why(b, IDGEN_EINVAL, "mariadb: bad name");
  char table[IDENT_MAX + 1], stub[IDGEN_SEGMENT_NAME_MAX + 1];
  int period = key_table(m, name, table, stub);
  if (period < 0)
    return idgen__segment_why(b, IDGEN_EINVAL, "mariadb: %s: table name too long", name);
  if (period && start_after) /* a period key: its table on every server */
    return idgen__segment_why(
        b, IDGEN_EINVAL, "mariadb: %s: a period's table counts from 1 (no start after)",
        name);
  if (period)
    return period_start_all(m, name, table);
  char create[400], insert[300];
  snprintf(
      create, sizeof create,
      "CREATE TABLE IF NOT EXISTS `%s` (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, "
      "stub VARCHAR(%d) NOT NULL DEFAULT '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) "
      "ENGINE=InnoDB",
      m->table, IDGEN_SEGMENT_NAME_MAX);
  /* The row at start_after moves the server's counter past it in the same statement,
   * as fetch's REPLACE moves it past a block's end. */
  if (start_after)
    snprintf(insert, sizeof insert,
             "INSERT IGNORE INTO `%s` (id, stub) VALUES (%" PRIu64 ", '%s')", m->table,
             start_after, name);
  else
    snprintf(insert, sizeof insert, "INSERT IGNORE INTO `%s` (stub) VALUES ('%s')",
             m->table, name);
  int created = 0;
  for (int i = 0; i < m->nservers; i++) {
    server *s = &m->servers[i];
    int rc = connect_server(m, s);
    if (!rc)
      rc = query(m, s, "create table", create);
    if (!rc)
      rc = query(m, s, "insert", insert);
    if (rc)
      return rc;
    created |= mysql_affected_rows(s->conn) == 1;
  }
  return !created;
}

static void mariadb_free(idgen__segment_backend *b) {
  mariadb_backend *m = (mariadb_backend *)b;
  for (int i = 0; i < m->nservers; i++)
    disconnect(&m->servers[i]);
  free(m);
}

/* A period's table is started on each server at the first fetch from it there
 * (period_start), so that one server down at midnight does not stop the period. The
 * period's first fetch goes to the first server, whose first number is 1. */
static int mariadb_key_start(idgen__segment_backend *b, const char *ns, const char *key,
                             uint64_t step) {
  mariadb_backend *m = (mariadb_backend *)b;
  (void)ns, (void)step;
  char table[IDENT_MAX + 1], stub[IDGEN_SEGMENT_NAME_MAX + 1];
  if (key_table(m, key, table, stub) < 0)
    return idgen__segment_why(b, IDGEN_EINVAL, "mariadb: %s: table name too long", key);
  m->next = 0;
  return 0;
}

/* A period's ticket table, TABLE_NUMBER, and the record TABLE_periods must fit
 * MariaDB's names (the generator's name is a row's stub, up to 64 characters). */
static int mariadb_period_check(idgen__segment_backend *b, const char *name,
                                idgen__period_kind kind) {
  mariadb_backend *m = (mariadb_backend *)b;
  (void)name;
  const char *number = kind == IDGEN__PERIOD_DAY     ? "_YYYYMMDD"
                       : kind == IDGEN__PERIOD_MONTH ? "_YYYYMM"
                                                     : "_YYYY";
  size_t suffix = strlen(number) > strlen(PERIODS) ? strlen(number) : strlen(PERIODS);
  if (strlen(m->table) + suffix > IDENT_MAX)
    return idgen__segment_why(b, IDGEN_EINVAL,
                              "mariadb: table '%s' is too long for a %s period: with %s "
                              "and " PERIODS " its names pass MariaDB's %d characters "
                              "(use at most %zu)",
                              m->table, idgen__period_name(kind), number, IDENT_MAX,
                              IDENT_MAX - suffix);
  return 0;
}

static const idgen__segment_backend_class mariadb_class = {
    "mariadb", mariadb_init,      mariadb_fetch,       mariadb_free,
    NULL,      mariadb_key_start, mariadb_period_check};

/* How a DSN key's value is checked. */
typedef enum value_kind {
  VALUE_WORD,   /* a name: A-Z a-z 0-9 _ */
  VALUE_ANY,    /* any text without spaces, or none (a password) */
  VALUE_PATH,   /* a file, without spaces; asks for TLS */
  VALUE_ON_OFF, /* "on" or "off"; asks for TLS */
} value_kind;

#define DSN_FIELD(f) offsetof(mariadb_backend, f), sizeof((mariadb_backend *)0)->f
static const struct {
  const char *key;
  size_t offset, cap;
  value_kind kind;
} dsn_keys[] = {
    {"database", DSN_FIELD(database), VALUE_WORD},
    {"user", DSN_FIELD(user), VALUE_WORD},
    {"password", DSN_FIELD(password), VALUE_ANY},
    {"table", DSN_FIELD(table), VALUE_WORD},
    {"ssl-ca", DSN_FIELD(ssl_ca), VALUE_PATH},
    {"ssl-cert", DSN_FIELD(ssl_cert), VALUE_PATH},
    {"ssl-key", DSN_FIELD(ssl_key), VALUE_PATH},
    {"ssl-verify", DSN_FIELD(ssl_verify), VALUE_ON_OFF},
};
#undef DSN_FIELD

static int value_ok(value_kind kind, const char *s) {
  if (kind == VALUE_ON_OFF)
    return !strcmp(s, "on") || !strcmp(s, "off");
  if (kind == VALUE_ANY)
    return 1;
  if (kind == VALUE_PATH)
    return *s != '\0';
  if (!*s)
    return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '_'))
      return 0;
  return 1;
}

static int parse_servers(mariadb_backend *m, char *list, char *err, size_t errlen) {
  char *save = NULL;
  for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (m->nservers == SERVERS_MAX) {
      snprintf(err, errlen, "segment mariadb DSN: more than %d servers", SERVERS_MAX);
      return IDGEN_EINVAL;
    }
    server *s = &m->servers[m->nservers];
    char *colon = strrchr(tok, ':');
    char *end = NULL;
    unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
    if (!colon || colon == tok || !colon[1] || *end || port < 1 || port > 65535 ||
        (size_t)(colon - tok) >= sizeof s->host) {
      snprintf(err, errlen, "segment mariadb DSN: server '%.80s' is not HOST:PORT", tok);
      return IDGEN_EINVAL;
    }
    memcpy(s->host, tok, (size_t)(colon - tok));
    s->host[colon - tok] = '\0';
    s->port = (unsigned)port;
    m->nservers++;
  }
  if (m->nservers == 0) {
    snprintf(err, errlen, "segment mariadb DSN: servers= names no server");
    return IDGEN_EINVAL;
  }
  return 0;
}

/* One KEY=VALUE of dsn_keys into m. */
static int parse_key(mariadb_backend *m, const char *key, const char *value, char *err,
                     size_t errlen) {
  for (size_t i = 0; i < sizeof dsn_keys / sizeof dsn_keys[0]; i++) {
    if (strcmp(key, dsn_keys[i].key))
      continue;
    if (strlen(value) >= dsn_keys[i].cap || !value_ok(dsn_keys[i].kind, value)) {
      snprintf(err, errlen, "segment mariadb DSN: bad %s '%.40s'%s", key, value,
               dsn_keys[i].kind == VALUE_ON_OFF ? " (on or off)" : "");
      return IDGEN_EINVAL;
    }
    snprintf((char *)m + dsn_keys[i].offset, dsn_keys[i].cap, "%s", value);
    m->tls |= dsn_keys[i].kind == VALUE_PATH || dsn_keys[i].kind == VALUE_ON_OFF;
    return 0;
  }
  snprintf(err, errlen,
           "segment mariadb DSN: unknown key '%.40s' (servers, database, user, password, "
           "table, ssl-ca, ssl-cert, ssl-key, ssl-verify)",
           key);
  return IDGEN_EINVAL;
}

/* "servers=H:P[,H:P...] [database=D] [user=U] [password=P] [table=T] [ssl-ca=FILE]
 * [ssl-cert=FILE ssl-key=FILE] [ssl-verify=off]". */
static int parse_dsn(mariadb_backend *m, const char *dsn, char *err, size_t errlen) {
  char buf[IDGEN_SEGMENT_DSN_MAX];
  snprintf(buf, sizeof buf, "%s", dsn);
  snprintf(m->database, sizeof m->database, "test");
  snprintf(m->user, sizeof m->user, "root");
  snprintf(m->table, sizeof m->table, "tickets64");
  snprintf(m->ssl_verify, sizeof m->ssl_verify, "on");
  int have_servers = 0;
  char *save = NULL;
  for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    char *eq = strchr(tok, '=');
    if (!eq) {
      snprintf(err, errlen, "segment mariadb DSN: '%.80s' is not KEY=VALUE", tok);
      return IDGEN_EINVAL;
    }
    *eq = '\0';
    int rc = !strcmp(tok, "servers") ? parse_servers(m, eq + 1, err, errlen)
                                     : parse_key(m, tok, eq + 1, err, errlen);
    if (rc)
      return rc;
    have_servers |= !strcmp(tok, "servers");
  }
  if (!have_servers) {
    snprintf(err, errlen, "segment mariadb DSN: no servers=HOST:PORT[,HOST:PORT]");
    return IDGEN_EINVAL;
  }
  if (!m->ssl_cert[0] != !m->ssl_key[0]) {
    snprintf(err, errlen, "segment mariadb DSN: ssl-cert and ssl-key go together");
    return IDGEN_EINVAL;
  }
  return 0;
}

int idgen__segment_mariadb_new(idgen__segment_backend **out, const char *dsn,
                               int64_t timeout_ms, char *err, size_t errlen) {
  pthread_once(&library_once, library_init);
  mariadb_backend *m = calloc(1, sizeof *m);
  if (!m)
    return IDGEN_ENOMEM;
  m->base.vtable = &mariadb_class;
  if (parse_dsn(m, dsn, err, errlen)) {
    free(m);
    return IDGEN_EINVAL;
  }
  m->timeout_s = (unsigned)((timeout_ms + 999) / 1000);
  *out = &m->base;
  return 0;
}
