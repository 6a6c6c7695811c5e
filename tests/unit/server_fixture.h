/* server_fixture.h: a service for the server's unit tests (test_server_*.c), built from
 * the option table as `idgen serve` builds it: the static provider (worker 3, in a
 * namespace of this process's own, since a worker ID is claimed host-wide per namespace
 * and the tests run side by side), a fresh state dir, a token, ready to issue; with
 * fixture_start(yaml), the generators of a config file too. */
#ifndef IDGEN_TEST_SERVER_FIXTURE_H
#define IDGEN_TEST_SERVER_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/api.h"
#include "server/config.h"
#include "server/log.h"
#include "server/service.h"

#define FIXTURE_TOKEN "unit-test-token-0123456789"

static idgen__serve_config fixture_cfg;
static char fixture_dir[] = "/tmp/idgen-unit-XXXXXX";
static idgen__svc *fixture_svc;
static idgen__tctx fixture_t;
/* Metric shards (and token hazard slots) of the service: one per thread a test serves
 * from; fixture_t is shard 0. */
static size_t fixture_shards = 1;

/* Builds the service from the fixture's flags; with yaml, also from that config file
 * (written into the state dir, whose segment files it then holds). */
static inline int fixture_start(const char *yaml) {
  char *dir = mkdtemp(fixture_dir);
  if (!dir)
    return -1;
  /* Worker IDs are claimed host-wide per namespace: one of this process's own, so that
   * two server tests at once (ctest -j) or other checkouts never meet. */
  char ns[64], config[sizeof fixture_dir + 32];
  snprintf(ns, sizeof ns, "unit-test-%ld", (long)getpid());
  snprintf(config, sizeof config, "%s/generators.yaml", dir);
  if (yaml) {
    FILE *f = fopen(config, "w");
    if (!f || fputs(yaml, f) < 0 || fclose(f) != 0)
      return -1;
  }
  char *argv[] = {"serve",
                  "--policy",
                  "logical",
                  "--lease",
                  "static",
                  "--worker-id",
                  "3",
                  "--state-dir",
                  dir,
                  "--namespace",
                  ns,
                  "--config",
                  yaml ? config : "",
                  NULL};
  char err[256];
  FILE *out = fopen("/dev/null", "w");
  idgen__config_status st = idgen__serve_config_load(
      &fixture_cfg, (int)(sizeof argv / sizeof argv[0]) - 1, argv, out, err, sizeof err);
  fclose(out);
  if (st != IDGEN_CONFIG_SERVE ||
      idgen__serve_config_check(&fixture_cfg, err, sizeof err)) {
    fprintf(stderr, "fixture: %s\n", err);
    return -1;
  }
  strcpy(fixture_cfg.auth_token, FIXTURE_TOKEN);
  idgen__log_open("/dev/null");
  if (idgen__svc_new(&fixture_svc, &fixture_cfg, fixture_shards, err, sizeof err) < 0 ||
      idgen__tctx_init(&fixture_t, fixture_svc, 0) < 0) {
    fprintf(stderr, "fixture: %s\n", err);
    return -1;
  }
  char reason[256];
  for (int i = 0; i < 500 && !idgen__svc_ready(fixture_svc, reason, sizeof reason); i++)
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  return idgen__svc_ready(fixture_svc, reason, sizeof reason) ? 0 : -1;
}

static inline int fixture_up(void **state) {
  (void)state;
  return fixture_start(NULL);
}

static int fixture_down(void **state) {
  (void)state;
  idgen__tctx_free(&fixture_t);
  idgen__svc_free(fixture_svc);
  idgen__serve_config_free(&fixture_cfg);
  idgen__log_close();
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", fixture_dir);
  return system(cmd) == 0 ? 0 : -1;
}

#endif
