/* cmd_serve.c: `idgen serve`: the network ID service (HTTP/JSON and RESP2). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "server/config.h"
#include "server/server.h"

int idgen__cmd_serve(int argc, char **argv) {
  static idgen__serve_config cfg;
  char err[512];
  int rc = idgen__serve_config_load(&cfg, argc, argv, stdout, err, sizeof err);
  if (rc == 1)
    return CLI_OK;
  if (rc != 0)
    return cli_error(CLI_USAGE, "serve", "%s", err);
  char host[256];
  uint16_t port;
  if (cfg.http[0] && idgen__parse_hostport(cfg.http, host, sizeof host, &port) < 0)
    return cli_error(CLI_USAGE, "serve", "--http '%s': expected ADDR:PORT", cfg.http);
  if (cfg.resp[0] && idgen__parse_hostport(cfg.resp, host, sizeof host, &port) < 0)
    return cli_error(CLI_USAGE, "serve", "--resp '%s': expected ADDR:PORT", cfg.resp);
  /* The lease options against the layout (--datacenter needs two node fields, ...): a
   * usage error too. A bad layout is the server's to report. */
  idgen_layout layout;
  if (idgen_layout_parse(cfg.layout, strlen(cfg.layout), 0, &layout, NULL, 0) == 0 &&
      idgen_lease_config_check(&cfg.lease, &layout, err, sizeof err))
    return cli_error(CLI_USAGE, "serve", "%s", err);
  return idgen__serve_run(&cfg) == 0 ? CLI_OK : CLI_FAILED;
}
