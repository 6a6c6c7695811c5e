/* c-hiredis: fetching IDs from `idgen serve` over the Redis protocol with hiredis.
 *
 *   cc main.c $(pkg-config --cflags --libs hiredis) -o ids && ./ids 127.0.0.1 6380
 *
 * IDs come as strings: keep them as text, or parse them into uint64_t (strtoull). */
#include <stdio.h>
#include <stdlib.h>

#include <hiredis/hiredis.h>

int main(int argc, char **argv) {
  const char *host = argc > 1 ? argv[1] : "127.0.0.1";
  int port = argc > 2 ? atoi(argv[2]) : 6380;
  redisContext *c = redisConnect(host, port);
  if (!c || c->err) {
    fprintf(stderr, "ids: %s\n", c ? c->errstr : "out of memory");
    return 1;
  }
  /* With --auth-token-file on the server: redisCommand(c, "AUTH %s", token) first. */

  redisReply *one = redisCommand(c, "ID");
  if (!one || one->type != REDIS_REPLY_STRING) {
    fprintf(stderr, "ids: ID: %s\n", one ? one->str : c->errstr);
    return 1;
  }
  unsigned long long id = strtoull(one->str, NULL, 10);
  printf("ID      %llu\n", id);
  freeReplyObject(one);

  redisReply *many = redisCommand(c, "IDS %d", 5); /* an array of 5 strings, increasing */
  for (size_t i = 0; many && i < many->elements; i++)
    printf("IDS[%zu]  %s\n", i, many->element[i]->str);
  freeReplyObject(many);

  redisReply *parts = redisCommand(c, "DECODE %llu", id); /* JSON: time, worker, sequence */
  if (parts && parts->type == REDIS_REPLY_STRING)
    printf("DECODE  %s\n", parts->str);
  freeReplyObject(parts);

  redisFree(c);
  return 0;
}
