/* client.c: one Redis connection (conn.c: plain or TLS) with AUTH and SELECT, and the
 * start checks on INFO (see client.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "idgen/clock.h"
#include "idgen/lease.h"
#include "lease/lease_internal.h"
#include "redis/client.h"
#include "redis/conn.h"

int idgen__redis_init(idgen__redis *r, const idgen__redis_url *url,
                      const idgen_lease_config *access, int64_t timeout_ms, char *err,
                      size_t errlen) {
  memset(r, 0, sizeof *r);
  r->url = *url;
  r->timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
  if (!access)
    return 0;
  char pw[sizeof access->redis_password];
  const char *from = "IDGEN_REDIS_PASSWORD";
  int rc = 0;
  snprintf(pw, sizeof pw, "%s", access->redis_password);
  if (access->redis_password_file[0]) {
    from = "--redis-password-file";
    rc = idgen__password_file_read("redis-password-file", access->redis_password_file, pw,
                                   sizeof pw, err, errlen);
  }
  if (!rc)
    rc = idgen__redis_url_auth(&r->url, access->redis_user, pw, from, err, errlen);
  memset(pw, 0, sizeof pw);
  if (rc || !url->tls)
    return rc;
  r->tls = idgen__redis_tls_new(access->redis_cacert, access->redis_cert, access->redis_key,
                                err, errlen);
  r->has_cert = access->redis_cert[0] != '\0';
  return r->tls ? 0 : IDGEN_EINVAL;
}

const char *idgen__redis_where(const idgen__redis *r) {
  static _Thread_local char where[240];
  snprintf(where, sizeof where, "%s %.200s:%d/%d", r->url.tls ? "rediss" : "redis",
           r->url.host, r->url.port, r->url.db);
  return where;
}

/* Sets r->why, printf style; returns rc. */
static int failf(idgen__redis *r, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int failf(idgen__redis *r, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->why, sizeof r->why, fmt, ap);
  va_end(ap);
  return rc;
}

/* fmt: a literal with two %s, where r talks to and detail (cut at 200 bytes). */
#define fail(r, rc, fmt, detail) failf(r, rc, fmt, idgen__redis_where(r), detail)

void idgen__redis_close(idgen__redis *r, int only_drop) {
  idgen__redis_conn_close(r->c, only_drop);
  r->c = NULL;
}

void idgen__redis_free(idgen__redis *r, int only_drop) {
  idgen__redis_close(r, only_drop);
  idgen__redis_tls_free(r->tls);
  r->tls = NULL;
  memset(r->url.pass, 0, sizeof r->url.pass);
}

int idgen__redis_info_field(const char *info, const char *field, char *out, size_t outlen) {
  size_t flen = strlen(field);
  for (const char *line = info; line && *line;) {
    const char *eol = strpbrk(line, "\r\n");
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    if (len > flen && !strncmp(line, field, flen) && line[flen] == ':') {
      size_t vlen = len - flen - 1;
      if (vlen >= outlen)
        vlen = outlen - 1;
      memcpy(out, line + flen + 1, vlen);
      out[vlen] = '\0';
      return 0;
    }
    line = eol ? eol + strspn(eol, "\r\n") : NULL;
  }
  if (outlen)
    out[0] = '\0';
  return -1;
}

/* One command on the raw connection, within timeout_ms. */
static redisReply *raw(idgen__redis *r, int argc, const char **argv) {
  char *cmd = NULL;
  int len = redisFormatCommandArgv(&cmd, argc, argv, NULL);
  if (len < 0) {
    failf(r, IDGEN_ENOMEM, "out of memory");
    return NULL;
  }
  redisReply *rep = idgen__redis_conn_call(r->c, cmd, (size_t)len,
                                           idgen_monotonic_ns() + r->timeout_ms * 1000000);
  redisFreeCommand(cmd);
  return rep;
}

/* Why the last command on the connection failed. */
static const char *conn_why(const idgen__redis *r) {
  return idgen__redis_conn_error(r->c);
}

/* What INFO says the server is: refused (a replica, idgen, not Redis) or the facts the
 * warning is built from. */
static int check_info(idgen__redis *r) {
  const char *argv[] = {"INFO"};
  redisReply *rep = raw(r, 1, argv);
  if (!rep)
    return fail(r, IDGEN_EUNAVAIL, "%s: INFO: %.200s", conn_why(r));
  if (rep->type != REDIS_REPLY_STRING) {
    char msg[160];
    snprintf(msg, sizeof msg, "%.150s",
             rep->type == REDIS_REPLY_ERROR ? rep->str : "not text");
    freeReplyObject(rep);
    r->refused = 1;
    return fail(r, IDGEN_EINVAL, "%s: INFO refused (%s): not a Redis server idgen can use",
                msg);
  }
  char v[64];
  int rc = 0;
  if (!idgen__redis_info_field(rep->str, "idgen_version", v, sizeof v)) {
    r->refused = 1;
    rc = fail(r, IDGEN_EINVAL,
              "%s answers INFO with idgen_version:%s: that is idgen's own RESP port, not "
              "a Redis server",
              v);
  } else if (idgen__redis_info_field(rep->str, "role", v, sizeof v) ||
             idgen__redis_info_field(rep->str, "aof_enabled", v + 32, 32)) {
    r->refused = 1;
    rc = fail(r, IDGEN_EINVAL, "%s: INFO has no role or aof_enabled: %snot a Redis server",
              "");
  } else if (strcmp(v, "master")) {
    r->refused = 1;
    rc = fail(r, IDGEN_EINVAL,
              "%s is a replica (role:%s): its writes are refused or lost; give the "
              "primary's address",
              v);
  } else {
    r->info.aof_enabled = !strcmp(v + 32, "1");
    idgen__redis_info_field(rep->str, "connected_slaves", v, sizeof v);
    r->info.replicas = strtoll(v, NULL, 10);
    idgen__redis_info_field(rep->str, "redis_version", r->info.version,
                            sizeof r->info.version);
  }
  freeReplyObject(rep);
  if (rc)
    return rc;
  /* appendfsync is not in INFO; CONFIG may be renamed away on managed servers. */
  const char *cfg[] = {"CONFIG", "GET", "appendfsync"};
  rep = raw(r, 3, cfg);
  if (!rep)
    return fail(r, IDGEN_EUNAVAIL, "%s: CONFIG GET: %.200s", conn_why(r));
  r->info.fsync_always = -1;
  if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
      rep->element[1]->type == REDIS_REPLY_STRING)
    r->info.fsync_always = !strcmp(rep->element[1]->str, "always");
  freeReplyObject(rep);
  if (!r->info.aof_enabled)
    snprintf(
        r->warning, sizeof r->warning,
        "%s has AOF off: a restart loses the keys written since its last snapshot "
        "(claims then wait TTL + --hwm-ahead; segment numbers past the snapshot repeat)",
        idgen__redis_where(r));
  else if (r->info.fsync_always != 1)
    snprintf(r->warning, sizeof r->warning,
             "%s has appendfsync %s, not always: a host crash loses up to 1 s of writes "
             "(claims then wait TTL + --hwm-ahead; segment numbers of a lost block repeat)",
             idgen__redis_where(r), r->info.fsync_always < 0 ? "unknown" : "everysec/no");
  else
    r->warning[0] = '\0';
  return 0;
}

int idgen__redis_connect(idgen__redis *r) {
  if (r->c)
    return 0;
  r->refused = 0;
  char why[256];
  if (idgen__redis_conn_open(&r->c, r->url.host, r->url.port, r->tls, r->has_cert,
                             idgen_monotonic_ns() + r->timeout_ms * 1000000, why,
                             sizeof why)) {
    r->c = NULL;
    return fail(r, IDGEN_EUNAVAIL, "%s: %.200s", why);
  }
  int rc = 0;
  if (r->url.pass[0]) {
    const char *argv[] = {"AUTH", r->url.user, r->url.pass};
    redisReply *rep =
        r->url.user[0] ? raw(r, 3, argv) : raw(r, 2, (const char *[]){"AUTH", r->url.pass});
    if (!rep)
      rc = fail(r, IDGEN_EUNAVAIL, "%s: AUTH: %.200s", conn_why(r));
    else if (rep->type == REDIS_REPLY_ERROR)
      rc = fail(r, IDGEN_EUNAVAIL, "%s: AUTH refused: %.200s", rep->str);
    if (rep)
      freeReplyObject(rep);
  }
  if (!rc && r->url.db) {
    char db[16];
    snprintf(db, sizeof db, "%d", r->url.db);
    const char *argv[] = {"SELECT", db};
    redisReply *rep = raw(r, 2, argv);
    if (!rep)
      rc = fail(r, IDGEN_EUNAVAIL, "%s: SELECT: %.200s", conn_why(r));
    else if (rep->type == REDIS_REPLY_ERROR)
      rc = fail(r, IDGEN_EUNAVAIL, "%s: SELECT refused: %.200s", rep->str);
    if (rep)
      freeReplyObject(rep);
  }
  if (!rc)
    rc = check_info(r);
  if (rc)
    idgen__redis_close(r, 0);
  return rc;
}

redisReply *idgen__redis_argv(idgen__redis *r, int argc, const char **argv, int *rc) {
  *rc = idgen__redis_connect(r);
  if (*rc)
    return NULL;
  int64_t t0 = idgen_monotonic_ns();
  redisReply *rep = raw(r, argc, argv);
  if (r->observe)
    r->observe(r->observe_ctx, idgen_monotonic_ns() - t0);
  if (!rep) {
    failf(r, IDGEN_EUNAVAIL, "%s: %.20s: %.127s", idgen__redis_where(r),
          strncmp(argv[0], "EVAL", 4) ? argv[0] : "script", conn_why(r));
    idgen__redis_close(r, 0);
    *rc = IDGEN_EUNAVAIL;
  }
  return rep;
}
