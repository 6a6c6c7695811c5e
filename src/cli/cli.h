/* cli.h: the subcommands of the idgen binary and the helpers they share. */
#ifndef IDGEN_CLI_H
#define IDGEN_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "idgen.h"

/* Exit statuses: 0 success, 1 the operation failed, 2 bad usage or input. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

typedef struct cli_command {
  const char *name;
  int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
  const char *summary;
} cli_command;

/* One line to stderr, "idgen <cmd>: <message>", and returns status. */
int cli_error(int status, const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Parses a non-negative integer in [min, max] from text, strictly. */
int cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/* Resolves --layout (a preset or spec; NULL means "snowflake") into *out, or writes the
 * reason into err. */
int cli_layout(const char *spec, idgen_layout *out, char *err, size_t errlen);

/* Unix ms now, from the wall clock. */
int64_t cli_now_ms(void);

/* Lease options, shared by lease, next and serve (cmd_lease.c): getopt_long values
 * CLI_LEASE_OPT_BASE + i for idgen_lease_options()[i]. add_options appends them to
 * opts[at..max) and returns the new count; cli_lease_option applies one (CLI_USAGE
 * with one line on a bad value); cli_lease_usage prints their --help lines. */
#define CLI_LEASE_OPT_BASE 1000
size_t cli_lease_add_options(struct option *opts, size_t at, size_t max);
int cli_lease_option(idgen_lease_config *config, int val, const char *arg, const char *cmd);
void cli_lease_usage(FILE *out);

int idgen__cmd_next(int argc, char **argv);
int idgen__cmd_layout(int argc, char **argv);
int idgen__cmd_bench(int argc, char **argv);
int idgen__cmd_lease(int argc, char **argv);
int idgen__bench_gen(int argc, char **argv);
int idgen__cmd_uuid7(int argc, char **argv);
int idgen__cmd_uuid4(int argc, char **argv);
int idgen__cmd_ulid(int argc, char **argv);
int idgen__cmd_check(int argc, char **argv);
int idgen__cmd_decode(int argc, char **argv);
int idgen__cmd_at(int argc, char **argv);
int idgen__cmd_collide(int argc, char **argv);
int idgen__cmd_serve(int argc, char **argv);
int idgen__cmd_segment(int argc, char **argv);
int idgen__cmd_opaque(int argc, char **argv);
int idgen__cmd_adopt(int argc, char **argv);

/* The last value of the PostgreSQL sequence named by text in dsn's database (0 when it
 * was never called), for `segment init --from-sequence` (cmd_adopt.c). 0, or -1 with
 * one line in err. */
int cli_pg_sequence_last(const char *dsn, const char *sequence, uint64_t *out, char *err,
                         size_t errlen);

#endif
