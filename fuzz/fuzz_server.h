/* fuzz_server.h: the server's sans-I/O sources in one unit, for the fuzz targets
 * (scripts/fuzz.sh compiles one file against libidgen.a), and a service built once. */
#ifndef IDGEN_FUZZ_SERVER_H
#define IDGEN_FUZZ_SERVER_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/server/api.c"
#include "../src/server/buf.c"
#include "../src/server/decode_json.c"
#include "../src/server/id_form.c"
#include "../src/server/log.c"
#include "../src/server/metrics.c"
#include "../src/server/resp.c"
#include "../src/server/service.c"

static idgen__svc *fuzz_svc;
static idgen__tctx fuzz_tctx;

/* A service with the static provider (worker 7), a state dir under /tmp, a token (so
 * the auth paths run), an opaque key (so the opaque forms and decode run) and max_count
 * 64, ready to issue before the first input. */
static void fuzz_server_init(void) {
  static idgen__serve_config cfg;
  memset(&cfg, 0, sizeof cfg);
  strcpy(cfg.layout, "snowflake");
  strcpy(cfg.policy, "logical");
  strcpy(cfg.clock, "mono");
  strcpy(cfg.auth_token, "fuzz-token");
  cfg.max_count = 64;
  cfg.max_header_bytes = 8192;
  cfg.max_request_line = 2048;
  idgen_lease_config_init(&cfg.lease);
  char dir[] = "/tmp/idgen-fuzz-XXXXXX";
  char err[256];
  if (!mkdtemp(dir) ||
      idgen_lease_config_set(&cfg.lease, "lease", "static", err, sizeof err) ||
      idgen_lease_config_set(&cfg.lease, "worker-id", "7", err, sizeof err) ||
      idgen_lease_config_set(&cfg.lease, "state-dir", dir, err, sizeof err))
    abort();
  snprintf(cfg.opaque_key_file, sizeof cfg.opaque_key_file, "%s/opaque.key", dir);
  FILE *key = fopen(cfg.opaque_key_file, "w");
  if (!key || fputs("000102030405060708090a0b0c0d0e0f\n", key) < 0 || fclose(key) != 0)
    abort();
  idgen__log_open("/dev/null");
  if (idgen__svc_new(&fuzz_svc, &cfg, 1, err, sizeof err) < 0 ||
      idgen__tctx_init(&fuzz_tctx, fuzz_svc, 0) < 0)
    abort();
  const char *reason;
  for (int i = 0; i < 500 && !idgen__svc_ready(fuzz_svc, &reason); i++)
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
}

#endif
