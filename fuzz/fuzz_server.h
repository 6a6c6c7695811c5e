/* fuzz_server.h: a service built once for the server's fuzz targets, which link the
 * server library (scripts/fuzz.sh). The configuration comes from the server's own option
 * table, as `idgen serve` would build it, so a new option's default reaches the fuzzers. */
#ifndef IDGEN_FUZZ_SERVER_H
#define IDGEN_FUZZ_SERVER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/api.h"
#include "server/config.h"
#include "server/log.h"
#include "server/service.h"

#define FUZZ_TOKEN "fuzz-token-0123456789"

static idgen__svc *fuzz_svc;
static idgen__tctx fuzz_tctx;

/* A service with the static provider (worker 7), a state dir under /tmp, a token (so
 * the auth paths run), an opaque key (so the opaque forms and decode run), max_count
 * 64, and named generators (?name=, ID NAME: a js53 snowflake one, a segment one on
 * the file backend in the state dir with the key, a uuid7 one), ready to issue before
 * the first input. */
static void fuzz_server_init(void) {
  static idgen__serve_config cfg;
  char dir[] = "/tmp/idgen-fuzz-XXXXXX";
  if (!mkdtemp(dir))
    abort();
  char key[sizeof dir + 16];
  snprintf(key, sizeof key, "%s/opaque.key", dir);
  FILE *f = fopen(key, "w");
  if (!f || fputs("000102030405060708090a0b0c0d0e0f\n", f) < 0 || fclose(f) != 0)
    abort();
  char config[sizeof dir + 32];
  snprintf(config, sizeof config, "%s/generators.yaml", dir);
  f = fopen(config, "w");
  if (!f ||
      fprintf(f,
              "generators:\n"
              "  events: {kind: snowflake, layout: js53, worker_id: 6}\n"
              "  orders: {kind: segment, step: 50, max_step: 400, opaque_key_file: %s}\n"
              "  tokens: {kind: uuid7}\n",
              key) < 0 ||
      fclose(f) != 0)
    abort();
  /* Worker IDs are claimed host-wide per namespace: one of this process's own. */
  char ns[64];
  snprintf(ns, sizeof ns, "fuzz-%ld", (long)getpid());
  char *argv[] = {
      "serve",  "--policy",    "logical", "--max-count", "64",   "--lease",
      "static", "--worker-id", "7",       "--state-dir", dir,    "--opaque-key-file",
      key,      "--namespace", ns,        "--config",    config, NULL};
  char err[256];
  if (idgen__serve_config_load(&cfg, (int)(sizeof argv / sizeof argv[0]) - 1, argv, stderr,
                               err, sizeof err) != IDGEN_CONFIG_SERVE)
    abort();
  strcpy(cfg.auth_token, FUZZ_TOKEN);
  idgen__log_open("/dev/null");
  if (idgen__svc_new(&fuzz_svc, &cfg, 1, err, sizeof err) < 0 ||
      idgen__tctx_init(&fuzz_tctx, fuzz_svc, 0) < 0)
    abort();
  char reason[256];
  for (int i = 0; i < 500 && !idgen__svc_ready(fuzz_svc, reason, sizeof reason); i++)
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
}

#endif
