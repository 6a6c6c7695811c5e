/* cmd_segment.c: `idgen segment init|next`: create a segment sequence in its backend,
 * and take numbers from it (for scripts; `idgen serve` hands them out as a service). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "host/host.h"
#include "segment/segment.h"

#define SEGMENT_MAX_COUNT UINT64_C(100000000)
#define SEGMENT_CHUNK 4096

typedef struct segment_args {
  const char *cmd; /* "segment init" or "segment next" */
  const char *backend, *dsn, *name;
  uint64_t step, count;
  int step_set;
  uint64_t start_after;      /* init: numbers 1..start_after are in use already */
  const char *from_sequence; /* init, postgres: start after this sequence's last value */
  int force;                 /* init: --start-after below the backend's recorded highest */
  int64_t timeout_ms;
  idgen_lease_config access; /* etcd, redis: TLS files and user (--etcd-cacert, ...) */
  unsigned access_given;     /* bit i: access_opts[i] given as a flag */
} segment_args;

/* The etcd and redis backends' options, named as `idgen serve`'s (the lease's) and set
 * through the lease's parser; their IDGEN_* variables too. Each is for the backend its
 * name begins with. */
static const char *const access_opts[] = {
    "etcd-cacert",  "etcd-cert",  "etcd-key",  "etcd-user",  "etcd-password-file",
    "redis-cacert", "redis-cert", "redis-key", "redis-user", "redis-password-file"};
enum { NACCESS = sizeof access_opts / sizeof access_opts[0], ACCESS_BASE = 1000 };

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: idgen segment init [--backend B] [--dsn DSN] [--step N]\n"
      "                          [--start-after N | --from-sequence SEQ] [--force] NAME\n"
      "       idgen segment next [--backend B] [--dsn DSN] [-n N] [--step N] NAME\n"
      "       (etcd: also --etcd-cacert, --etcd-cert, --etcd-key, --etcd-user,\n"
      "        --etcd-password-file; redis: the same as --redis-*)\n"
      "\n"
      "Segment sequences hand out dense, increasing integers from blocks leased from a\n"
      "backend with one atomic operation each (see docs/segment.md). `init` creates what\n"
      "the sequence NAME needs in the backend, so that its first number is 1 (on MariaDB:\n"
      "the server's offset); it refuses (exit 1) when the sequence exists, and leaves it.\n"
      "On PostgreSQL, etcd and Redis it also refuses one the backend made and lost (its\n"
      "row or key gone, the backend's record of it there): its numbers would repeat.\n"
      "`next` leases a block and prints N numbers, one per line; numbers of a block that\n"
      "are not printed are never handed out (a gap). No number is printed twice, by this\n"
      "or any other process using the same backend and NAME.\n"
      "\n"
      "  -b, --backend B   file (default), postgres, etcd, mariadb or redis\n"
      "  -d, --dsn DSN     where the backend is:\n"
      "                      file      a directory (holds segment-NAME) or a file path;\n"
      "                                default $IDGEN_STATE_DIR or the state directory\n"
      "                      postgres  a libpq connection string: \"host=H port=P "
      "dbname=D\"\n"
      "                                (table leaf_alloc); TLS: libpq's own keys,\n"
      "                                \"... sslmode=verify-full sslrootcert=CA\"\n"
      "                      etcd      URL[,URL...]: http://127.0.0.1:2379, or all\n"
      "                                https:// (key /idgen/segment/NAME)\n"
      "                      mariadb   \"servers=H:P[,H:P] [database=test] [user=root]\n"
      "                                [password=..] [table=tickets64]\": Flickr's ticket\n"
      "                                servers, each with auto_increment_increment = the\n"
      "                                server count and an offset of its own; TLS:\n"
      "                                [ssl-ca=FILE] [ssl-cert=FILE ssl-key=FILE]\n"
      "                                [ssl-verify=off] (default: the CA and the host\n"
      "                                name checked; docs/segment.md)\n"
      "                      redis     redis://[user:pass@]HOST:PORT[/db], or\n"
      "                                rediss:// over TLS (key\n"
      "                                idgen:default:segment:NAME)\n");
  /* Two literals: each below the 4095 bytes C11 lets a compiler stop at. */
  fprintf(
      out,
      "      --etcd-cacert FILE, --etcd-cert FILE, --etcd-key FILE\n"
      "                    etcd over https://: the CA of the endpoints (default: the\n"
      "                    system's; peer and host name always verified), and a client\n"
      "                    certificate with its key [env IDGEN_ETCD_CACERT, ...]\n"
      "      --etcd-user USER, --etcd-password-file FILE\n"
      "                    etcd with auth enabled: the user, and a file holding its\n"
      "                    password (or env IDGEN_ETCD_PASSWORD) [env IDGEN_ETCD_USER,\n"
      "                    IDGEN_ETCD_PASSWORD_FILE]\n");
  fprintf(
      out,
      "      --redis-cacert FILE, --redis-cert FILE, --redis-key FILE\n"
      "                    redis over rediss://: the CA of the server (default: the\n"
      "                    system's; peer and host name always verified), and a client\n"
      "                    certificate with its key [env IDGEN_REDIS_CACERT, ...]\n"
      "      --redis-user USER, --redis-password-file FILE\n"
      "                    redis AUTH apart from the URL: the ACL user (or\n"
      "                    rediss://USER@HOST), and a file holding the password (or env\n"
      "                    IDGEN_REDIS_PASSWORD) [env IDGEN_REDIS_USER,\n"
      "                    IDGEN_REDIS_PASSWORD_FILE]\n"
      "  -n, --count N     next: how many numbers, 1 to %llu (default 1)\n"
      "  -s, --step N      next: the block size (default N, so nothing is skipped);\n"
      "                    init: the step recorded in the row (postgres; default 1000)\n"
      "  -t, --timeout MS  per backend request (default 5000)\n"
      "  -a, --start-after N\n"
      "                    init: the first number is N + 1 (on MariaDB the first of the\n"
      "                    server's offset above N), for a table whose numbers 1..N are\n"
      "                    in use (docs/adopt.md); postgres, etcd, redis: N > 0 also\n"
      "                    makes again a lost sequence (N at or above every number\n"
      "                    it handed out); file: a lost file is made again at N\n"
      "      --force       init: accept a --start-after N below the highest number the\n"
      "                    backend's records say was handed out (postgres, etcd, file,\n"
      "                    redis: refused without it, naming that number); redis: also\n"
      "                    make a key on a server with AOF off (a restart then loses\n"
      "                    it, and numbers repeat)\n"
      "  -f, --from-sequence SEQ\n"
      "                    init, postgres: N is the last value of the PostgreSQL\n"
      "                    sequence SEQ in the DSN's database (stop using SEQ first)\n"
      "\n"
      "Exit status: 0 done, 1 the backend failed or refused (one line says why), 2 bad\n"
      "usage.\n",
      (unsigned long long)SEGMENT_MAX_COUNT);
}

/* One of access_opts (i) into a->access; what names where it came from. */
static int access_set(segment_args *a, size_t i, const char *value, const char *what) {
  char err[256];
  if (idgen_lease_config_set(&a->access, access_opts[i], value, err, sizeof err)) {
    const char *colon = strchr(err, ':');
    return cli_error(CLI_USAGE, a->cmd, "%s%s", what, colon ? colon : ": bad value");
  }
  if (what[0] == '-') /* a flag, not the environment */
    a->access_given |= 1u << i;
  return 0;
}

static int access_env(segment_args *a) {
  const idgen_lease_option *lo = idgen_lease_options();
  for (size_t i = 0; i < NACCESS; i++)
    for (size_t j = 0; lo[j].name; j++) {
      const char *v =
          lo[j].env && !strcmp(lo[j].name, access_opts[i]) ? getenv(lo[j].env) : NULL;
      if (v && *v && access_set(a, i, v, lo[j].env))
        return CLI_USAGE;
    }
  const struct {
    const char *env;
    char *field;
    size_t cap;
  } pws[] = {
      {"IDGEN_ETCD_PASSWORD", a->access.etcd_password, sizeof a->access.etcd_password},
      {"IDGEN_REDIS_PASSWORD", a->access.redis_password, sizeof a->access.redis_password}};
  for (size_t i = 0; i < sizeof pws / sizeof pws[0]; i++) {
    const char *pw = getenv(pws[i].env);
    if (!pw || !*pw)
      continue;
    if (strlen(pw) >= pws[i].cap)
      return cli_error(CLI_USAGE, a->cmd, "%s: too long", pws[i].env);
    snprintf(pws[i].field, pws[i].cap, "%s", pw);
  }
  return 0;
}

static int parse_args(int argc, char **argv, segment_args *a) {
  static const struct option options[] = {
      {"etcd-cacert", required_argument, NULL, ACCESS_BASE + 0},
      {"etcd-cert", required_argument, NULL, ACCESS_BASE + 1},
      {"etcd-key", required_argument, NULL, ACCESS_BASE + 2},
      {"etcd-user", required_argument, NULL, ACCESS_BASE + 3},
      {"etcd-password-file", required_argument, NULL, ACCESS_BASE + 4},
      {"redis-cacert", required_argument, NULL, ACCESS_BASE + 5},
      {"redis-cert", required_argument, NULL, ACCESS_BASE + 6},
      {"redis-key", required_argument, NULL, ACCESS_BASE + 7},
      {"redis-user", required_argument, NULL, ACCESS_BASE + 8},
      {"redis-password-file", required_argument, NULL, ACCESS_BASE + 9},
      {"backend", required_argument, NULL, 'b'},
      {"dsn", required_argument, NULL, 'd'},
      {"count", required_argument, NULL, 'n'},
      {"step", required_argument, NULL, 's'},
      {"timeout", required_argument, NULL, 't'},
      {"start-after", required_argument, NULL, 'a'},
      {"from-sequence", required_argument, NULL, 'f'},
      {"force", no_argument, NULL, 'F'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  uint64_t v;
  int opt;
  opterr = 0;
  optind = 1;
  if (access_env(a))
    return CLI_USAGE;
  while ((opt = getopt_long(argc, argv, ":b:d:n:s:t:a:f:h", options, NULL)) != -1) {
    if (opt >= ACCESS_BASE && opt < ACCESS_BASE + NACCESS) {
      char what[64];
      snprintf(what, sizeof what, "--%s", access_opts[opt - ACCESS_BASE]);
      if (access_set(a, (size_t)(opt - ACCESS_BASE), optarg, what))
        return CLI_USAGE;
      continue;
    }
    switch (opt) {
    case 'b':
      a->backend = optarg;
      break;
    case 'd':
      a->dsn = optarg;
      break;
    case 'n':
      if (cli_parse_u64(optarg, 1, SEGMENT_MAX_COUNT, &a->count) < 0)
        return cli_error(CLI_USAGE, a->cmd, "count '%s' is not a number from 1 to %llu",
                         optarg, (unsigned long long)SEGMENT_MAX_COUNT);
      break;
    case 's':
      if (cli_parse_u64(optarg, 1, IDGEN_SEGMENT_STEP_MAX, &a->step) < 0)
        return cli_error(CLI_USAGE, a->cmd, "step '%s' is not a number from 1 to %llu",
                         optarg, (unsigned long long)IDGEN_SEGMENT_STEP_MAX);
      a->step_set = 1;
      break;
    case 't':
      if (cli_parse_u64(optarg, 100, 600000, &v) < 0)
        return cli_error(CLI_USAGE, a->cmd,
                         "timeout '%s' is not a number of ms from 100 "
                         "to 600000",
                         optarg);
      a->timeout_ms = (int64_t)v;
      break;
    case 'a':
      if (cli_parse_u64(optarg, 0, IDGEN_SEGMENT_NUMBER_MAX - 1, &a->start_after) < 0)
        return cli_error(CLI_USAGE, a->cmd,
                         "start-after '%s' is not a number from 0 to %lld", optarg,
                         (long long)(IDGEN_SEGMENT_NUMBER_MAX - 1));
      break;
    case 'f':
      a->from_sequence = optarg;
      break;
    case 'F':
      a->force = 1;
      break;
    case 'h':
      usage(stdout);
      return -1;
    case ':':
      return cli_error(CLI_USAGE, a->cmd, "option '%s' needs a value", argv[optind - 1]);
    default:
      return cli_error(CLI_USAGE, a->cmd, "unknown option '%s' (see --help)",
                       argv[optind - 1]);
    }
  }
  if (optind == argc)
    return cli_error(CLI_USAGE, a->cmd, "no sequence NAME given (see --help)");
  if (optind + 1 < argc)
    return cli_error(CLI_USAGE, a->cmd, "unexpected argument '%s'", argv[optind + 1]);
  a->name = argv[optind];
  if ((a->start_after || a->from_sequence) && strcmp(a->cmd, "segment init"))
    return cli_error(CLI_USAGE, a->cmd, "--start-after and --from-sequence are for init");
  if (a->force && strcmp(a->cmd, "segment init"))
    return cli_error(CLI_USAGE, a->cmd, "--force is for init");
  if (a->start_after && a->from_sequence)
    return cli_error(CLI_USAGE, a->cmd, "--start-after or --from-sequence, not both");
  for (size_t i = 0; i < NACCESS; i++) {
    size_t len = strcspn(access_opts[i], "-"); /* "etcd", "redis" */
    if ((a->access_given & (1u << i)) &&
        (strlen(a->backend) != len || strncmp(access_opts[i], a->backend, len)))
      return cli_error(CLI_USAGE, a->cmd, "--%s is for --backend %.*s", access_opts[i],
                       (int)len, access_opts[i]);
  }
  if (a->from_sequence && strcmp(a->backend, "postgres"))
    return cli_error(CLI_USAGE, a->cmd, "--from-sequence needs --backend postgres");
  if (idgen__segment_name_check(a->name))
    return cli_error(CLI_USAGE, a->cmd,
                     "name '%s': use 1-%d of A-Z a-z 0-9 _ . - (not starting with '.')",
                     a->name, IDGEN_SEGMENT_NAME_MAX);
  return 0;
}

/* Opens the backend the arguments name; the file backend's DSN defaults to the state
 * directory, as `idgen serve` keeps it. */
static int open_backend(segment_args *a, idgen__segment_backend **out) {
  char state_dir[IDGEN_LEASE_PATH_MAX];
  if (!a->dsn && !strcmp(a->backend, "file")) {
    const char *env = getenv("IDGEN_STATE_DIR");
    if (env && *env)
      snprintf(state_dir, sizeof state_dir, "%s", env);
    else
      idgen__default_state_dir(state_dir, sizeof state_dir);
    char err[256];
    if (idgen__state_dir_ready(state_dir, err, sizeof err))
      return cli_error(CLI_FAILED, a->cmd, "%s", err);
    a->dsn = state_dir;
  }
  char err[IDGEN_SEGMENT_WHY_MAX];
  if (idgen__segment_backend_open_with(out, a->backend, a->dsn, a->timeout_ms, &a->access,
                                       err, sizeof err))
    return cli_error(CLI_USAGE, a->cmd, "%s", err);
  return 0;
}

/* The namespace of the file backend's host-wide claim, as `idgen serve` takes it. */
static const char *claim_ns(void) {
  const char *ns = getenv("IDGEN_NAMESPACE");
  return ns && *ns ? ns : "default";
}

/* init makes a sequence that does not exist, and only that: over one that exists it
 * would hand out again the numbers that were handed out (a file's claim first, so
 * that a file is not made beside the one another process serves). */
static int run_init(segment_args *a) {
  idgen__segment_backend *b = NULL;
  int status = open_backend(a, &b);
  if (status)
    return status;
  if (a->from_sequence) {
    char err[IDGEN_SEGMENT_WHY_MAX];
    if (cli_pg_sequence_last(a->dsn, a->from_sequence, &a->start_after, err, sizeof err)) {
      idgen__segment_backend_free(b);
      return cli_error(CLI_FAILED, a->cmd, "%s", err);
    }
  }
  int rc = idgen__segment_file_claim(b, claim_ns(), a->name);
  if (rc == 0)
    rc =
        b->vtable->init(b, a->name, a->step_set ? a->step : 1000, a->start_after, a->force);
  if (rc < 0)
    status = cli_error(CLI_FAILED, a->cmd, "%s", b->why);
  else if (rc == 0 && !a->start_after)
    printf("created '%s' in %s\n", a->name, b->vtable->name);
  else if (rc == 0)
    printf("created '%s' in %s, its numbers above %llu\n", a->name, b->vtable->name,
           (unsigned long long)a->start_after);
  else /* there: making it again would hand out its numbers again */
    status = cli_error(CLI_FAILED, a->cmd,
                       "'%s' already exists in %s: left as it was (init makes only a "
                       "sequence that does not exist)",
                       a->name, b->vtable->name);
  idgen__segment_backend_free(b);
  return status;
}

static int run_next(segment_args *a) {
  idgen__segment_backend *b = NULL;
  int status = open_backend(a, &b);
  if (status)
    return status;
  if (idgen__segment_file_start(b, claim_ns(), a->name, 0) < 0) {
    status = cli_error(CLI_FAILED, a->cmd, "%s", b->why);
    idgen__segment_backend_free(b);
    return status;
  }
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen__segment_config c;
  idgen__segment_config_init(&c, a->name, b, &clock.base);
  uint64_t step = a->step_set ? a->step : a->count;
  c.step = c.max_step = step < IDGEN_SEGMENT_STEP_MAX ? step : IDGEN_SEGMENT_STEP_MAX;
  c.manual = 1;
  idgen__segment *seg = NULL;
  char err[IDGEN_SEGMENT_WHY_MAX];
  if (idgen__segment_new(&seg, &c, err, sizeof err)) {
    idgen__segment_backend_free(b);
    return cli_error(CLI_USAGE, a->cmd, "%s", err);
  }
  uint64_t *buf = malloc(SEGMENT_CHUNK * sizeof *buf);
  for (uint64_t done = 0; buf && done < a->count && status == CLI_OK;) {
    size_t want =
        a->count - done < SEGMENT_CHUNK ? (size_t)(a->count - done) : SEGMENT_CHUNK;
    int64_t got = idgen__segment_next_batch(seg, buf, want);
    for (int64_t i = 0; i < got; i++)
      printf("%llu\n", (unsigned long long)buf[i]);
    if (got < (int64_t)want) {
      idgen__segment_last_error(seg, err, sizeof err);
      status = cli_error(CLI_FAILED, a->cmd, "%s", err[0] ? err : idgen_strerror((int)got));
    }
    done += got > 0 ? (uint64_t)got : 0;
  }
  if (!buf)
    status = cli_error(CLI_FAILED, a->cmd, "out of memory");
  free(buf);
  idgen__segment_free(seg);
  idgen__segment_backend_free(b);
  if (fflush(stdout) && status == CLI_OK)
    status = cli_error(CLI_FAILED, a->cmd, "cannot write: %s", strerror(errno));
  return status;
}

static const struct {
  const char *name, *cmd;
  int (*run)(segment_args *a);
} subcommands[] = {
    {"init", "segment init", run_init},
    {"next", "segment next", run_next},
};

int idgen__cmd_segment(int argc, char **argv) {
  if (argc < 2)
    return cli_error(CLI_USAGE, "segment", "init or next? (see --help)");
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(stdout);
    return CLI_OK;
  }
  for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++) {
    if (strcmp(argv[1], subcommands[i].name))
      continue;
    segment_args a = {.cmd = subcommands[i].cmd, .backend = "file", .count = 1};
    int status = parse_args(argc - 1, argv + 1, &a);
    if (status)
      return status < 0 ? CLI_OK : status;
    return subcommands[i].run(&a);
  }
  return cli_error(CLI_USAGE, "segment", "unknown subcommand '%s' (init, next)", argv[1]);
}
