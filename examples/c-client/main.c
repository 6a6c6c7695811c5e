/* c-client: IDs from libidgen-client's local buffer (no round trip per ID), with
 * failover over the servers listed.
 *   cc main.c $(pkg-config --cflags --libs idgen-client) -o ids && ./ids 127.0.0.1:6380
 */
#include <idgen/client.h>
#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv) {
  const char *servers = argc > 1 ? argv[1] : "127.0.0.1:6380";
  const char *name = argc > 2 ? argv[2] : "default";
  idgen_client_options o;
  idgen_client_options_init(&o);
  o.max_wait_ms = 500;
  idgen_client *c;
  char err[256];
  if (idgen_client_new(&c, servers, &o, err, sizeof err) < 0) {
    fprintf(stderr, "c-client: %s\n", err);
    return 2;
  }
  int rc = 0;
  for (int i = 0; i < 5 && rc == 0; i++) {
    uint64_t id;
    if ((rc = idgen_client_next(c, name, &id)) == 0)
      printf("%" PRIu64 "\n", id);
    else
      fprintf(stderr, "c-client: error %d (IDGEN_EUNAVAIL: no server answered)\n", rc);
  }
  idgen_client_free(c);
  return rc ? 1 : 0;
}
