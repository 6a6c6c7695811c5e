/* cmd_opaque.c: `idgen opaque encode|decode|keygen`: opaque IDs from the command line. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/id_form.h"
#include "idgen/opaque.h"

static const char usage_text[] =
    "usage: idgen opaque encode|decode --key-file FILE [--tweak T] [--format F]\n"
    "                                  [--from F] ID...\n"
    "       idgen opaque keygen [--bits 128|256] FILE\n"
    "\n"
    "An opaque ID is a keyed permutation of a 63-bit ID (FF1, NIST SP 800-38G, on AES):\n"
    "another 63-bit number that tells neither the ID's time, nor its worker, nor how\n"
    "many IDs were made, and that only the key turns back. The same ID always gives the\n"
    "same opaque ID, and every 63-bit number decodes to some ID: see docs/opaque.md for\n"
    "what it protects and what it does not.\n"
    "\n"
    "  encode         print the opaque form of each ID, one per line\n"
    "  decode         print the ID behind each opaque ID, one per line\n"
    "  keygen         write a new random key (getrandom) to FILE with mode 0600; an\n"
    "                 existing FILE is never overwritten\n"
    "\n"
    "  --key-file FILE  the key: 32 or 64 hex digits (AES-128 or AES-256) and at most\n"
    "                   a newline\n"
    "  --tweak T        the tweak, its UTF-8 bytes (default \"default\", the name of\n"
    "                   idgen serve's default generator, so its opaque IDs decode\n"
    "                   here as they are); each tweak gives another permutation\n"
    "  --format F       write decimal (default), base62, base32 or hex\n"
    "  --from F         read every ID in this form only (default: any form, told by\n"
    "                   its shape as in idgen decode; an all-digit text is decimal)\n"
    "  --bits N         keygen: 256 (default) or 128\n"
    "  --help           this text\n"
    "\n"
    "Exit status: 0 done; 1 the key could not be written (FILE exists, or an I/O\n"
    "error); 2 bad usage, a bad key file or an ID that does not read (then nothing is\n"
    "printed).\n";

#define PLAIN_FORMS "decimal, base62, base32 or hex"

/* Strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF). */
static int utf8_valid(const unsigned char *s) {
  while (*s) {
    unsigned c = *s++, need, min;
    if (c < 0x80)
      continue;
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1, min = 0x80, c &= 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2, min = 0x800, c &= 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3, min = 0x10000, c &= 0x07;
    } else {
      return 0;
    }
    for (unsigned k = 0; k < need; k++, s++) {
      if ((*s & 0xC0) != 0x80)
        return 0;
      c = c << 6 | (*s & 0x3Fu);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
      return 0;
  }
  return 1;
}

/* A plain codec name for --format/--from: the four an opaque ID can take. */
static int plain_format(const char *name, idgen_format *out) {
  idgen_format f;
  if (idgen_format_parse(name, &f) < 0 || f == IDGEN_FORMAT_FRIENDLY)
    return -1;
  *out = f;
  return 0;
}

static int permute(const char *action, int argc, char **argv) {
  static const struct option options[] = {
      {"key-file", required_argument, NULL, 'k'}, {"tweak", required_argument, NULL, 't'},
      {"format", required_argument, NULL, 'f'},   {"from", required_argument, NULL, 'r'},
      {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
  const char *key_file = NULL, *tweak = IDGEN__DEFAULT_GENERATOR;
  idgen_format format = IDGEN_FORMAT_DECIMAL, from = IDGEN_FORMAT_DECIMAL;
  int forced = 0, c;
  char cmd[32];
  snprintf(cmd, sizeof cmd, "opaque %s", action);
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
    switch (c) {
    case 'k':
      key_file = optarg;
      break;
    case 't':
      tweak = optarg;
      break;
    case 'f':
      if (plain_format(optarg, &format) < 0)
        return cli_error(CLI_USAGE, cmd, "--format '%s': want " PLAIN_FORMS, optarg);
      break;
    case 'r':
      if (plain_format(optarg, &from) < 0)
        return cli_error(CLI_USAGE, cmd, "--from '%s': want " PLAIN_FORMS, optarg);
      forced = 1;
      break;
    case 'h':
      fputs(usage_text, stdout);
      return CLI_OK;
    case ':':
      return cli_error(CLI_USAGE, cmd, "option '%s' needs a value", argv[optind - 1]);
    default:
      return cli_error(CLI_USAGE, cmd, "unknown option '%s' (try --help)",
                       argv[optind - 1]);
    }
  }
  if (!key_file)
    return cli_error(CLI_USAGE, cmd, "--key-file is required (try --help)");
  if (!utf8_valid((const unsigned char *)tweak))
    return cli_error(CLI_USAGE, cmd, "--tweak is not valid UTF-8");
  if (strlen(tweak) > IDGEN_OPAQUE_TWEAK_MAX)
    return cli_error(CLI_USAGE, cmd, "--tweak is longer than %d bytes",
                     IDGEN_OPAQUE_TWEAK_MAX);
  int n = argc - optind;
  if (n < 1)
    return cli_error(CLI_USAGE, cmd, "no ID given (try --help)");
  char err[PATH_MAX + 200];
  idgen_opaque *o = NULL;
  if (idgen__opaque_open("--key-file", key_file, tweak, strlen(tweak), &o, err,
                         sizeof err) < 0)
    return cli_error(CLI_USAGE, cmd, "%s", err);

  /* Every ID is read and permuted before any is printed, so a bad one leaves stdout
   * empty. */
  int decode = !strcmp(action, "decode"), status = CLI_OK;
  uint64_t *out = calloc((size_t)n, sizeof *out);
  if (!out) {
    idgen_opaque_free(o);
    return cli_error(CLI_FAILED, cmd, "out of memory");
  }
  for (int i = 0; i < n && status == CLI_OK; i++) {
    const char *text = argv[optind + i];
    int rc = forced ? idgen_id_parse(text, strlen(text), from, NULL, &out[i])
                    : idgen_id_parse_any(text, strlen(text), NULL, &out[i], NULL);
    if (rc < 0)
      status = cli_error(CLI_USAGE, cmd, "'%s' is not %s%s%s: %s", text,
                         decode ? "an opaque ID" : "an ID", forced ? " in " : "",
                         forced ? idgen_format_name(from) : "", idgen_strerror(rc));
  }
  if (status == CLI_OK) {
    int rc = decode ? idgen_opaque_decode_batch(o, out, out, (size_t)n)
                    : idgen_opaque_encode_batch(o, out, out, (size_t)n);
    if (rc < 0)
      status = cli_error(CLI_FAILED, cmd, "%s", idgen_strerror(rc));
  }
  idgen_opaque_free(o);
  for (int i = 0; i < n && status == CLI_OK; i++) {
    char text[IDGEN_FORMAT_MAX];
    int len = idgen_id_format(out[i], format, NULL, text, sizeof text);
    if (len < 0) {
      status = cli_error(CLI_FAILED, cmd, "cannot format %llu: %s",
                         (unsigned long long)out[i], idgen_strerror(len));
      break;
    }
    printf("%s\n", text);
  }
  free(out);
  if (fflush(stdout) != 0 && status == CLI_OK)
    status = cli_error(CLI_FAILED, cmd, "cannot write the IDs");
  return status;
}

static int encode(int argc, char **argv) {
  return permute("encode", argc, argv);
}

static int decode(int argc, char **argv) {
  return permute("decode", argc, argv);
}

/* Writes text to a new file at path, mode 0600, and syncs it; never replaces a file. */
static int write_new_file(const char *path, const char *text, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -errno;
  int rc = fchmod(fd, 0600) < 0 ? -errno : 0; /* whatever the umask */
  for (size_t done = 0; rc == 0 && done < len;) {
    ssize_t w = write(fd, text + done, len - done);
    if (w < 0 && errno != EINTR)
      rc = -errno;
    else if (w > 0)
      done += (size_t)w;
  }
  if (rc == 0 && fsync(fd) < 0)
    rc = -errno;
  if (close(fd) < 0 && rc == 0)
    rc = -errno;
  if (rc < 0)
    unlink(path);
  return rc;
}

static int keygen(int argc, char **argv) {
  static const struct option options[] = {{"bits", required_argument, NULL, 'b'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  size_t keylen = 32;
  int c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
    switch (c) {
    case 'b':
      if (strcmp(optarg, "256") && strcmp(optarg, "128"))
        return cli_error(CLI_USAGE, "opaque keygen", "--bits '%s': want 128 or 256",
                         optarg);
      keylen = !strcmp(optarg, "256") ? 32 : 16;
      break;
    case 'h':
      fputs(usage_text, stdout);
      return CLI_OK;
    case ':':
      return cli_error(CLI_USAGE, "opaque keygen", "option '%s' needs a value",
                       argv[optind - 1]);
    default:
      return cli_error(CLI_USAGE, "opaque keygen", "unknown option '%s' (try --help)",
                       argv[optind - 1]);
    }
  }
  if (argc - optind != 1)
    return cli_error(CLI_USAGE, "opaque keygen", "want one FILE to write the key to");
  const char *path = argv[optind];
  uint8_t key[IDGEN_OPAQUE_KEY_MAX];
  char text[2 * IDGEN_OPAQUE_KEY_MAX + 2];
  idgen_random *random = NULL;
  int rc = idgen_random_system_new(&random);
  if (rc == 0)
    rc = idgen_random_fill(random, key, keylen);
  idgen_random_system_free(random);
  if (rc < 0)
    return cli_error(CLI_FAILED, "opaque keygen", "no random bytes: %s",
                     idgen_strerror(rc));
  for (size_t i = 0; i < keylen; i++)
    snprintf(text + 2 * i, 3, "%02x", key[i]);
  text[2 * keylen] = '\n';
  rc = write_new_file(path, text, 2 * keylen + 1);
  explicit_bzero(key, sizeof key);
  explicit_bzero(text, sizeof text);
  if (rc == -EEXIST)
    return cli_error(CLI_FAILED, "opaque keygen",
                     "%s exists: not overwriting it (a new key means new opaque IDs; see "
                     "docs/opaque.md)",
                     path);
  if (rc < 0)
    return cli_error(CLI_FAILED, "opaque keygen", "%s: %s", path, idgen_strerror(rc));
  return CLI_OK;
}

static const cli_command actions[] = {
    {"encode", encode, "the opaque form of IDs"},
    {"decode", decode, "the IDs behind opaque IDs"},
    {"keygen", keygen, "write a new key file"},
};

int idgen__cmd_opaque(int argc, char **argv) {
  if (argc < 2)
    return cli_error(CLI_USAGE, "opaque", "want encode, decode or keygen (try --help)");
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    fputs(usage_text, stdout);
    return CLI_OK;
  }
  for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
    if (!strcmp(argv[1], actions[i].name))
      return actions[i].run(argc - 1, argv + 1);
  return cli_error(CLI_USAGE, "opaque",
                   "unknown action '%s': want encode, decode or keygen", argv[1]);
}
