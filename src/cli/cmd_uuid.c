/* cmd_uuid.c: `idgen uuid7`, `idgen uuid4`, `idgen ulid`. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#define UUID_MAX_COUNT UINT64_C(100000000)
#define UUID_CHUNK 4096

typedef enum kind { KIND_UUID7, KIND_UUID4, KIND_ULID } kind;

static const char *kind_cmd(kind k) {
  return k == KIND_UUID7 ? "uuid7" : k == KIND_UUID4 ? "uuid4" : "ulid";
}

static void usage(kind k, FILE *out) {
  switch (k) {
  case KIND_UUID7:
    fprintf(out,
            "usage: idgen uuid7 [-n N]\n"
            "\n"
            "Prints N new UUIDv7 (RFC 9562; default 1), one per line, in canonical lower\n"
            "case 8-4-4-4-12. 48-bit Unix ms, then the sub-ms fraction in 12 bits (Method\n"
            "3), then 62 bits of a randomly seeded counter that grows by a random step;\n"
            "randomness from the kernel CSPRNG. Values strictly increase within a run,\n"
            "even if the wall clock steps back (see docs/uuid.md).\n"
            "\n"
            "  -n, --count N   how many, 1 to %llu (default 1)\n",
            (unsigned long long)UUID_MAX_COUNT);
    break;
  case KIND_UUID4:
    fprintf(out,
            "usage: idgen uuid4 [-n N]\n"
            "\n"
            "Prints N new UUIDv4 (RFC 9562: 122 random bits from the kernel CSPRNG;\n"
            "default 1), one per line, in canonical lower case 8-4-4-4-12.\n"
            "\n"
            "  -n, --count N   how many, 1 to %llu (default 1)\n",
            (unsigned long long)UUID_MAX_COUNT);
    break;
  case KIND_ULID:
    fprintf(out,
            "usage: idgen ulid [-n N] [--monotonic]\n"
            "\n"
            "Prints N new ULIDs (default 1), one per line: 26 chars of Crockford base32,\n"
            "upper case; 48-bit Unix ms + 80 random bits from the kernel CSPRNG.\n"
            "\n"
            "  -n, --count N     how many, 1 to %llu (default 1)\n"
            "  -m, --monotonic   within one ms, each value is the previous + 1, so the\n"
            "                    output is strictly increasing (also if the clock steps\n"
            "                    back); fails (exit 1) in the ~never case that the 80\n"
            "                    bits of a ms run out\n",
            (unsigned long long)UUID_MAX_COUNT);
    break;
  }
}

static int run(kind k, int argc, char **argv) {
  static const struct option options[] = {{"count", required_argument, NULL, 'n'},
                                          {"monotonic", no_argument, NULL, 'm'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *cmd = kind_cmd(k);
  uint64_t count = 1;
  int monotonic = 0, opt;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":n:mh", options, NULL)) != -1) {
    switch (opt) {
    case 'n':
      if (cli_parse_u64(optarg, 1, UUID_MAX_COUNT, &count) < 0)
        return cli_error(CLI_USAGE, cmd, "count '%s' is not a number from 1 to %llu",
                         optarg, (unsigned long long)UUID_MAX_COUNT);
      break;
    case 'm':
      if (k != KIND_ULID)
        return cli_error(CLI_USAGE, cmd, "unknown option '%s' (see --help)",
                         argv[optind - 1]);
      monotonic = 1;
      break;
    case 'h':
      usage(k, stdout);
      return CLI_OK;
    case ':':
      return cli_error(CLI_USAGE, cmd, "option '%s' needs a value", argv[optind - 1]);
    default:
      return cli_error(CLI_USAGE, cmd, "unknown option '%s' (see --help)",
                       argv[optind - 1]);
    }
  }
  if (optind < argc)
    return cli_error(CLI_USAGE, cmd, "unexpected argument '%s'", argv[optind]);

  idgen_random *rnd = NULL;
  int rc = idgen_random_system_new(&rnd);
  if (rc < 0)
    return cli_error(CLI_FAILED, cmd, "cannot open the kernel random source: %s",
                     idgen_strerror(rc));
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen_uuid7_gen *gen7 = NULL;
  idgen_ulid_gen *genu = NULL;
  if (k == KIND_UUID7) {
    idgen_uuid7_config config = {&clock.base, rnd};
    rc = idgen_uuid7_new(&gen7, &config);
  } else if (k == KIND_ULID) {
    idgen_ulid_config config = {&clock.base, rnd, monotonic};
    rc = idgen_ulid_new(&genu, &config);
  }
  if (rc < 0) {
    idgen_random_system_free(rnd);
    return cli_error(CLI_FAILED, cmd, "cannot start the generator: %s", idgen_strerror(rc));
  }

  static idgen_uuid uuids[UUID_CHUNK];
  static idgen_ulid ulids[UUID_CHUNK];
  static char text[UUID_CHUNK * (IDGEN_UUID_TEXT_LEN + 1) + 1];
  int status = CLI_OK;
  for (uint64_t done = 0; done < count;) {
    size_t want = count - done < UUID_CHUNK ? (size_t)(count - done) : UUID_CHUNK;
    int64_t got = k == KIND_UUID7   ? idgen_uuid7_next_batch(gen7, uuids, want)
                  : k == KIND_UUID4 ? idgen_uuid4_batch(rnd, uuids, want)
                                    : idgen_ulid_next_batch(genu, ulids, want);
    if (got < 0) {
      status = cli_error(CLI_FAILED, cmd, "%s", idgen_strerror((int)got));
      break;
    }
    size_t len = 0;
    for (int64_t i = 0; i < got; i++) {
      int n = k == KIND_ULID ? idgen_ulid_format(ulids[i], text + len, sizeof text - len)
                             : idgen_uuid_format(uuids[i], text + len, sizeof text - len);
      len += (size_t)n;
      text[len++] = '\n';
    }
    fwrite(text, 1, len, stdout);
    done += (uint64_t)got;
  }
  idgen_uuid7_free(gen7);
  idgen_ulid_free(genu);
  idgen_random_system_free(rnd);
  if (fflush(stdout) != 0 && status == CLI_OK)
    status = cli_error(CLI_FAILED, cmd, "cannot write the values");
  return status;
}

int idgen__cmd_uuid7(int argc, char **argv) {
  return run(KIND_UUID7, argc, argv);
}

int idgen__cmd_uuid4(int argc, char **argv) {
  return run(KIND_UUID4, argc, argv);
}

int idgen__cmd_ulid(int argc, char **argv) {
  return run(KIND_ULID, argc, argv);
}
