/* config.h: the configuration of `idgen serve`: defaults, IDGEN_* environment, flags. */
#ifndef IDGEN_SERVER_CONFIG_H
#define IDGEN_SERVER_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "idgen/gen.h"
#include "idgen/layout.h"
#include "idgen/lease.h"

#define IDGEN_CFG_STR 256
#define IDGEN_CFG_PATH 4096

typedef struct idgen__serve_config {
  char http[IDGEN_CFG_STR]; /* "ADDR:PORT"; "" disables the HTTP listener */
  char resp[IDGEN_CFG_STR]; /* "ADDR:PORT"; "" disables the RESP listener */
  char layout[IDGEN_CFG_STR];
  char policy[IDGEN_CFG_STR];
  char clock[IDGEN_CFG_STR]; /* "mono" (default) or "wall" (fault tests only) */
  idgen_lease_config lease;  /* --lease and its options (idgen_lease_options()) */
  char auth_token_file[IDGEN_CFG_PATH];
  char opaque_key_file[IDGEN_CFG_PATH]; /* the default generator's opaque key; "": none */
  char log_file[IDGEN_CFG_PATH];
  uint64_t threads;   /* 0: one per core */
  uint64_t max_conns; /* per listener: one cannot take the other's slots */
  uint64_t max_header_bytes;
  uint64_t max_request_line;
  uint64_t header_timeout_ms;
  uint64_t idle_timeout_ms;
  uint64_t auth_timeout_ms; /* RESP, token set: time to authenticate, from accept */
  uint64_t max_count;
  uint64_t shutdown_timeout_ms;
  /* Derived, not options: */
  char auth_token[IDGEN_CFG_STR]; /* read from auth_token_file; "" means no token */
} idgen__serve_config;

/* The largest --max-count accepted. */
#define IDGEN_SERVE_MAX_COUNT_LIMIT 65536
/* The shortest token accepted: guessing 16 printable bytes is out of reach. */
#define IDGEN_SERVE_TOKEN_MIN 16

/* What idgen__serve_config_load found. */
typedef enum idgen__config_status {
  IDGEN_CONFIG_SERVE,   /* cfg is filled: serve with it */
  IDGEN_CONFIG_DONE,    /* --help or --print-config was printed to out */
  IDGEN_CONFIG_USAGE,   /* a bad flag or value: err says which */
  IDGEN_CONFIG_INTERNAL /* a built-in default is invalid (a bug): err says which */
} idgen__config_status;

/* Fills cfg from defaults, then IDGEN_* variables, then argv (getopt_long). On
 * IDGEN_CONFIG_USAGE or IDGEN_CONFIG_INTERNAL, err holds one line. */
idgen__config_status idgen__serve_config_load(idgen__serve_config *cfg, int argc,
                                              char **argv, FILE *out, char *err,
                                              size_t errlen);
/* The checks a loaded configuration must pass before serving, each a usage error (exit
 * 2): listener addresses, layout, policy and clock, the lease options against the
 * layout, the opaque key file, and the token file (read into auth_token: one token of
 * IDGEN_SERVE_TOKEN_MIN printable bytes at least). What only running can tell (etcd
 * reachable, the state dir writable, the ports free) is left to the server. Returns 0,
 * or -1 with one line in err. */
int idgen__serve_config_check(idgen__serve_config *cfg, char *err, size_t errlen);
/* The typed values behind the text options --layout, --policy and --clock. */
typedef struct idgen__serve_choices {
  idgen_layout layout;
  idgen_policy policy;
  int wall_clock; /* --clock wall; else mono */
} idgen__serve_choices;
/* Parses them from cfg. Returns 0, or -1 with one line in err. */
int idgen__serve_config_parse(const idgen__serve_config *cfg, idgen__serve_choices *out,
                              char *err, size_t errlen);
/* Writes the effective configuration, one "name = value  # source" line each. */
void idgen__serve_config_print(const idgen__serve_config *cfg, FILE *out);
/* Splits "ADDR:PORT" ("[v6]:PORT" too). Returns 0 or -1. */
int idgen__parse_hostport(const char *s, char *host, size_t hostlen, uint16_t *port);

#endif
