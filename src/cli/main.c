/* main.c: the idgen binary: dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const cli_command commands[] = {
    {"serve", idgen__cmd_serve, "run the ID service (HTTP/JSON and the Redis protocol)"},
    {"next", idgen__cmd_next, "print new Snowflake IDs"},
    {"uuid7", idgen__cmd_uuid7, "print new UUIDv7 (time-ordered, RFC 9562)"},
    {"uuid4", idgen__cmd_uuid4, "print new UUIDv4 (random, RFC 9562)"},
    {"ulid", idgen__cmd_ulid, "print new ULIDs (plain or --monotonic)"},
    {"decode", idgen__cmd_decode, "show the time, node fields and sequence of IDs"},
    {"at", idgen__cmd_at, "the smallest or largest ID of a time (for range queries)"},
    {"opaque", idgen__cmd_opaque, "opaque IDs: encode, decode, keygen (docs/opaque.md)"},
    {"layout", idgen__cmd_layout, "draw a layout's bits to scale, with its limits"},
    {"collide", idgen__cmd_collide, "chance that a scheme's IDs collide at a rate"},
    {"lease", idgen__cmd_lease, "show what a worker-ID provider would claim, and holders"},
    {"segment", idgen__cmd_segment, "create a segment sequence, or take numbers from it"},
    {"adopt", idgen__cmd_adopt, "switch a PostgreSQL serial column to idgen_next()"},
    {"check", idgen__cmd_check, "check recorded IDs for duplicates and disorder"},
    {"bench", idgen__cmd_bench, "measure the generator against its ceiling"},
};

static void usage(FILE *out) {
  fprintf(out, "usage: idgen <command> [options]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(out,
          "\n'idgen <command> --help' describes one command. Version " IDGEN_VERSION ".\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    char names[256] = "";
    for (size_t i = 0, at = 0;
         i < sizeof commands / sizeof commands[0] && at < sizeof names; i++)
      at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "",
                             commands[i].name);
    return cli_error(CLI_USAGE, "", "no command given: %s (try 'idgen --help')", names);
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return CLI_OK;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("idgen " IDGEN_VERSION "\n");
    return CLI_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name))
      return commands[i].run(argc - 1, argv + 1);
  return cli_error(CLI_USAGE, "", "unknown command '%s' (try 'idgen --help')", argv[1]);
}
