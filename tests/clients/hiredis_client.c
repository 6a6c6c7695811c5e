/* hiredis_client.c: hiredis (Debian's libhiredis) against idgen serve: PING, ID, IDS,
 * DECODE, pipelining, eight connections, AUTH. Usage: hiredis_client PORT AUTH_PORT TOKEN.
 * Exits 1 on the first failed check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

static int failures;

static void check(const char *name, int ok, const char *detail) {
  printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", name, ok ? "" : ": ", ok ? "" : detail);
  failures += !ok;
}

static redisContext *connect_to(int port) {
  redisContext *c = redisConnect("127.0.0.1", port);
  if (!c || c->err) {
    printf("FAIL connect to %d: %s\n", port, c ? c->errstr : "out of memory");
    exit(1);
  }
  return c;
}

/* A decimal ID as a string reply; its value in *out. */
static int id_reply(const redisReply *r, unsigned long long *out) {
  if (!r || r->type != REDIS_REPLY_STRING || r->len == 0 || r->len > 20)
    return 0;
  char *end;
  *out = strtoull(r->str, &end, 10);
  return end == r->str + r->len;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: hiredis_client PORT AUTH_PORT TOKEN\n");
    return 2;
  }
  int port = atoi(argv[1]), auth_port = atoi(argv[2]);
  printf("hiredis %d.%d.%d\n", HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH);
  redisContext *c = connect_to(port);

  redisReply *r = redisCommand(c, "PING");
  check("PING", r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "PONG"), "");
  freeReplyObject(r);

  unsigned long long id = 0, prev = 0, v = 0;
  r = redisCommand(c, "ID");
  check("ID: a decimal string", id_reply(r, &id), r ? r->str : c->errstr);
  char idtext[32];
  snprintf(idtext, sizeof idtext, "%llu", id);
  freeReplyObject(r);

  r = redisCommand(c, "IDS %d", 100);
  int good = r && r->type == REDIS_REPLY_ARRAY && r->elements == 100;
  for (size_t i = 0; good && i < r->elements; i++, prev = v)
    good = id_reply(r->element[i], &v) && v > prev;
  check("IDS 100: 100 increasing decimal strings", good, "");
  freeReplyObject(r);

  r = redisCommand(c, "DECODE %s", idtext);
  char want[64];
  snprintf(want, sizeof want, "{\"id\":\"%s\",", idtext);
  check("DECODE: the JSON of the same ID",
        r && r->type == REDIS_REPLY_STRING && !strncmp(r->str, want, strlen(want)),
        r ? r->str : "");
  freeReplyObject(r);

  /* Pipelining: 200 commands written at once, then 200 replies read in order. */
  for (int i = 0; i < 200; i++)
    redisAppendCommand(c, "ID");
  good = 1;
  prev = 0;
  for (int i = 0; i < 200; i++) {
    void *reply = NULL;
    good = good && redisGetReply(c, &reply) == REDIS_OK && id_reply(reply, &v) && v > prev;
    prev = v;
    freeReplyObject(reply);
  }
  check("200 pipelined IDs, increasing", good, c->errstr);
  redisFree(c);

  /* Eight connections, each with a pipeline of 8 x IDS 50: 3200 distinct IDs. */
  redisContext *pool[8];
  for (int i = 0; i < 8; i++) {
    pool[i] = connect_to(port);
    for (int k = 0; k < 8; k++)
      redisAppendCommand(pool[i], "IDS 50");
  }
  static unsigned long long all[3200];
  size_t n = 0;
  good = 1;
  for (int i = 0; i < 8; i++) {
    for (int k = 0; k < 8; k++) {
      void *reply = NULL;
      redisReply *rr;
      good = good && redisGetReply(pool[i], &reply) == REDIS_OK;
      rr = reply;
      for (size_t e = 0; good && rr && e < rr->elements && n < 3200; e++)
        good = id_reply(rr->element[e], &all[n++]);
      freeReplyObject(reply);
    }
    redisFree(pool[i]);
  }
  int distinct = good && n == 3200;
  for (size_t i = 0; distinct && i < n; i++)
    for (size_t j = i + 1; distinct && j < n; j++)
      distinct = all[i] != all[j];
  check("8 connections: 3200 distinct IDs", distinct, "");

  c = connect_to(auth_port);
  r = redisCommand(c, "ID");
  check("no AUTH: NOAUTH", r && r->type == REDIS_REPLY_ERROR && strstr(r->str, "NOAUTH"),
        "");
  freeReplyObject(r);
  r = redisCommand(c, "AUTH %s", "wrong-token-xyz");
  check("a wrong token is refused",
        r && r->type == REDIS_REPLY_ERROR && strstr(r->str, "WRONGPASS"), "");
  freeReplyObject(r);
  r = redisCommand(c, "AUTH %s", argv[3]);
  check("AUTH token", r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "OK"), "");
  freeReplyObject(r);
  r = redisCommand(c, "ID");
  check("AUTH, then ID", id_reply(r, &id), "");
  freeReplyObject(r);
  redisFree(c);

  if (failures) {
    printf("%d check(s) failed\n", failures);
    return 1;
  }
  printf("all checks passed\n");
  return 0;
}
