/* fuzz_config.c: libFuzzer target: arbitrary bytes as `idgen serve --config`'s YAML file:
 * the load (libyaml, then the generator options) and the check before serving either
 * accept it or refuse it with one line, and neither crashes, leaks or reads past the
 * end. Opaque key files are left out (a fuzzed path could name a FIFO). */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[64];
  static idgen__serve_config cfg;
  if (!path[0])
    snprintf(path, sizeof path, "/tmp/idgen-fuzz-config-%ld.yaml", (long)getpid());
  if (memmem(data, size, "opaque", 6))
    return 0;
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
    abort();
  char *argv[] = {"serve", "--config", path, "--state-dir", "/tmp/idgen-fuzz-config", NULL};
  char err[1024] = "";
  FILE *out = fopen("/dev/null", "w");
  idgen__config_status st = idgen__serve_config_load(&cfg, 5, argv, out, err, sizeof err);
  fclose(out);
  if (st == IDGEN_CONFIG_SERVE && idgen__serve_config_check(&cfg, err, sizeof err) == 0) {
    assert(cfg.ngens >= 1 && !strcmp(cfg.gens[0].name, "default"));
  } else {
    assert(st == IDGEN_CONFIG_SERVE || st == IDGEN_CONFIG_USAGE);
    assert(err[0] && !strchr(err, '\n'));
  }
  return 0;
}
