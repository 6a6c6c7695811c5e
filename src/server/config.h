/* config.h: the configuration of `idgen serve`: defaults, IDGEN_* environment, flags. */
#ifndef IDGEN_SERVER_CONFIG_H
#define IDGEN_SERVER_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "idgen/gen.h"
#include "idgen/layout.h"
#include "idgen/lease.h"
#include "segment/format.h"
#include "segment/segment.h"
#include "server/kind.h"

#define IDGEN_CFG_STR 256
#define IDGEN_CFG_PATH 4096
#define IDGEN_CFG_DSN 1024
#define IDGEN_SERVE_GENERATORS_MAX 256 /* each snowflake or segment one runs a thread */
#define IDGEN__GEN_NAME_MAX 64
#define IDGEN__GEN_KEYS_MAX 40 /* options a generator entry may hold (config.c's table) */

/* One generator of `idgen serve`, merged from the config file, the flags and the
 * defaults. Which fields count depends on the kind. */
typedef struct idgen__gen_spec {
  char name[IDGEN__GEN_NAME_MAX + 1]; /* 1-64 of [A-Za-z0-9_.-], not starting with '.',
                                         not all digits, not a format's name */
  idgen__kind kind;
  int line; /* its entry's line in the config file; 0: none */
  /* snowflake */
  char layout[IDGEN_CFG_STR];
  char policy[IDGEN_CFG_STR];
  uint64_t seq_reset_threshold;
  idgen_lease_config lease; /* the process's lease options with the generator's own */
  /* segment */
  char backend[16];
  char dsn[IDGEN_CFG_DSN]; /* "": the file backend in the state directory */
  uint64_t step, max_step, prefetch_pct, period_s, retry_ms, timeout_ms;
  char period[16];   /* "none", "day", "month", "year": one sequence per period */
  char timezone[64]; /* the periods' timezone (tz database name); default UTC */
  uint64_t digits;   /* a period's numbers: 1 to 10^digits - 1; default 6 */
  char format[128];  /* the text form ("ORD-{date:%Y%m%d}-{seq:06}"; snowflake: a prefix
                        before base62, "ord_{base62}"); "": none */
  /* snowflake and segment */
  char opaque_key_file[IDGEN_CFG_PATH]; /* "": no opaque forms */
  /* Where each option of config.c's table came from: its line in the file, 0 for the
   * default, -1 for the default generator's value (namespace, region). */
  int lines[IDGEN__GEN_KEYS_MAX];
} idgen__gen_spec;

/* One token of the config file's tokens: section (docs/server.md, "One service for many
 * teams"): who may use which generators. Its value is read from file, at start and on
 * SIGHUP (server/tokens.h). */
#define IDGEN__TOKENS_MAX 256
/* Token names one server knows over its life (reloads add new ones): the per-token
 * metrics' bound. */
#define IDGEN__TOKEN_SLOTS 1024
typedef struct idgen__token_spec {
  char name[IDGEN__GEN_NAME_MAX + 1]; /* its key: 1-64 of [A-Za-z0-9_.-] */
  char file[IDGEN_CFG_PATH];
  int line;           /* its entry's line in the config file; 0: --auth-token-file */
  int all_generators; /* generators omitted or ["*"] */
  char (*generators)[IDGEN__GEN_NAME_MAX + 1]; /* configured generators' names (heap) */
  size_t ngenerators;
  int decode;     /* may decode opaque IDs (HTTP /v1/decode/ID?opaque=1) */
  uint64_t rate;  /* its quota, IDs per second (server/quota.h); 0: none */
  uint64_t burst; /* IDs at once; 0: the default, one second of the rate */
  /* A verified client certificate that stands for this team (server/tokens.h,
   * idgen__token_set_find_cert); "": none. A team needs a file, one of these, or both. */
  char cert_subject[IDGEN_CFG_STR]; /* its subject, RFC 2253 ("CN=team-a,O=corp") */
  char cert_san[IDGEN_CFG_STR];     /* one SAN entry: "DNS:name", "URI:uri", "email:addr" */
} idgen__token_spec;

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
  char log_level[IDGEN_CFG_STR];       /* "debug", "info" (default), "warn" */
  char config_file[IDGEN_CFG_PATH];    /* --config: the generators' YAML file; "": none */
  char tls_cert[IDGEN_CFG_PATH];       /* PEM chain both listeners present; "": no TLS */
  char tls_key[IDGEN_CFG_PATH];        /* its private key */
  char tls_ca[IDGEN_CFG_PATH];         /* CAs that sign client certificates; "": none */
  char tls_client_cert[IDGEN_CFG_STR]; /* "none" (default), "optional", "require" */
  char health_listen[IDGEN_CFG_STR];   /* plain-text /healthz and /readyz, loopback
                                          ADDR:PORT; "": none */
  uint64_t seq_reset_threshold;        /* the default generator's (snowflake) */
  uint64_t threads;                    /* 0: one per core */
  uint64_t max_conns;                  /* per listener: one cannot take the other's slots */
  uint64_t max_header_bytes;
  uint64_t max_request_line;
  uint64_t header_timeout_ms;
  uint64_t idle_timeout_ms;
  uint64_t auth_timeout_ms; /* RESP, token set: time to authenticate, from accept */
  uint64_t max_count;
  uint64_t shutdown_timeout_ms;
  /* Derived, not options: */
  char auth_token[IDGEN_CFG_STR]; /* read from auth_token_file; "" means no token */
  idgen__gen_spec *gens;          /* every generator, "default" first (owned; heap) */
  size_t ngens;
  idgen__token_spec *tokens; /* the config file's tokens: (owned; heap) */
  size_t ntokens;
  int argc;    /* the command line it was loaded from, which SIGHUP's reload loads */
  char **argv; /* again (server/reload.h): not owned, kept by the caller */
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

/* Fills cfg from defaults, then the config file's "default" entry, then IDGEN_*
 * variables, then argv (getopt_long), and adds the file's other generators. cfg must be
 * zeroed or loaded before: what a previous load allocated is freed. On
 * IDGEN_CONFIG_USAGE or IDGEN_CONFIG_INTERNAL, err holds one line ("FILE:LINE: KEY:
 * ..." for the file). */
idgen__config_status idgen__serve_config_load(idgen__serve_config *cfg, int argc,
                                              char **argv, FILE *out, char *err,
                                              size_t errlen);
/* 1 if clients must present a token: --auth-token-file or a tokens: section. */
int idgen__serve_config_auth(const idgen__serve_config *cfg);
/* Frees what load allocated (the generators, the tokens); cfg can be loaded again. */
void idgen__serve_config_free(idgen__serve_config *cfg);
/* The checks a loaded configuration must pass before serving, each a usage error (exit
 * 2): listener addresses, the clock, every generator (layout, policy, sequence
 * threshold and lease options against the layout; segment backend, DSN syntax and
 * steps; the opaque key file), fixed worker IDs that two generators would both claim,
 * and the token files (--auth-token-file read into auth_token, and those of the tokens:
 * section: one token of IDGEN_SERVE_TOKEN_MIN printable bytes at least each, no two the
 * same). What only running can tell (etcd or a database reachable,
 * the state dir writable, the ports free) is left to the server. Returns 0, or -1 with
 * one line in err. */
int idgen__serve_config_check(idgen__serve_config *cfg, char *err, size_t errlen);
/* The typed values behind a snowflake generator's layout and policy. */
typedef struct idgen__snowflake_choices {
  idgen_layout layout;
  idgen_policy policy;
} idgen__snowflake_choices;
/* Parses them from a spec (kind snowflake). Returns 0, or -1 with one line in err that
 * names the generator's option. */
int idgen__gen_spec_parse(const idgen__gen_spec *spec, idgen__snowflake_choices *out,
                          char *err, size_t errlen);
/* A segment generator's DSN: its own, or for the file backend the state directory
 * (with a trailing '/', so that it reads as a directory before it exists). */
void idgen__gen_spec_dsn(const idgen__gen_spec *spec, char *out, size_t outlen);
/* A segment generator's config from a spec (name, steps, prefetch, period, retry),
 * for backend b and clock. */
/* A period generator's period, digits and timezone into *out (loaded into *tz, which
 * the caller frees after the generator; NULL without a period). -1 with one line. */
int idgen__gen_spec_period(const idgen__gen_spec *spec, idgen__segment_config *out,
                           idgen__tz **tz, char *err, size_t errlen);
/* A snowflake generator's format, PREFIX{base62}: its prefix (Stripe's ord_). -1 with
 * one line naming the entry otherwise. */
#define IDGEN__SNOWFLAKE_PREFIX_MAX 16
int idgen__snowflake_prefix(const idgen__gen_spec *spec, char *prefix, size_t prefixlen,
                            char *err, size_t errlen);
/* A segment generator's format compiled (it has one). -1 with one line naming it. */
int idgen__gen_spec_format(const idgen__gen_spec *spec, idgen__seg_format *out, char *err,
                           size_t errlen);
/* A segment generator's format history file (segment/format.h): "formats-NAME" in its
 * state directory, whatever its backend. */
void idgen__gen_spec_format_history(const idgen__gen_spec *spec, char *out, size_t outlen);
void idgen__gen_spec_segment_config(const idgen__gen_spec *spec, idgen__segment_backend *b,
                                    idgen_clock *clock, idgen__segment_config *out);
/* The generator named name (len bytes), or NULL. */
const idgen__gen_spec *idgen__serve_config_gen(const idgen__serve_config *cfg,
                                               const char *name, size_t len);
/* 1 for --clock wall (fault tests), 0 for mono. */
int idgen__serve_wall_clock(const idgen__serve_config *cfg);
/* Writes the effective configuration, one "name = value  # source" line each. */
void idgen__serve_config_print(const idgen__serve_config *cfg, FILE *out);

#endif
