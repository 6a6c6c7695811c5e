/* cmd_serve.c: `idgen serve`: the network ID service (HTTP/JSON and RESP2). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "server/config.h"
#include "server/netloop.h"
#include "server/server.h"

int idgen__cmd_serve(int argc, char **argv) {
  static idgen__serve_config cfg;
  char err[512];
  switch (idgen__serve_config_load(&cfg, argc, argv, stdout, err, sizeof err)) {
  case IDGEN_CONFIG_SERVE:
    break;
  case IDGEN_CONFIG_DONE:
    idgen__serve_config_free(&cfg);
    return CLI_OK;
  case IDGEN_CONFIG_USAGE:
    idgen__serve_config_free(&cfg);
    return cli_error(CLI_USAGE, "serve", "%s", err);
  case IDGEN_CONFIG_INTERNAL:
    idgen__serve_config_free(&cfg);
    return cli_error(CLI_FAILED, "serve", "%s", err);
  }
  int status = CLI_USAGE;
  idgen__tls *tls =
      NULL; /* its files are read before anything listens: a bad one is usage */
  if (idgen__serve_config_check(&cfg, err, sizeof err) < 0 ||
      idgen__tls_new(&tls, &cfg, idgen__net_tls_info, err, sizeof err) < 0)
    cli_error(CLI_USAGE, "serve", "%s", err);
  else
    status = idgen__serve_run(&cfg, tls) == 0 ? CLI_OK : CLI_FAILED;
  idgen__serve_config_free(&cfg);
  return status;
}
