/* test_server_config.c: `idgen serve`'s option table: defaults, usage errors, --help,
 * the checks before serving (the token's minimum length), which listen addresses count
 * as loopback; the config file of named generators: what it sets, that flags and
 * IDGEN_* variables win over its default entry, and one line naming the key and line
 * for each thing wrong in it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "common/util.h"
#include "server/config.h"
#include "server/server.h"

static idgen__serve_config cfg;

static idgen__config_status load(char **argv, char *err, size_t errlen) {
  int argc = 0;
  while (argv[argc])
    argc++;
  FILE *out = fopen("/dev/null", "w");
  idgen__config_status st = idgen__serve_config_load(&cfg, argc, argv, out, err, errlen);
  fclose(out);
  return st;
}

static void test_defaults(void **state) {
  (void)state;
  char err[256] = "";
  char *argv[] = {"serve", NULL};
  assert_int_equal(load(argv, err, sizeof err), IDGEN_CONFIG_SERVE);
  assert_int_equal(cfg.max_conns, 10000);
  assert_int_equal(cfg.idle_timeout_ms, 300000);
  assert_int_equal(cfg.auth_timeout_ms, 10000);
  assert_int_equal(cfg.max_header_bytes, 8192);
  assert_string_equal(cfg.clock, "mono");
  assert_int_equal(idgen__serve_config_check(&cfg, err, sizeof err), 0);
  assert_string_equal(cfg.auth_token, "");
}

static void test_usage_and_help(void **state) {
  (void)state;
  char err[256] = "";
  char *bad[] = {"serve", "--idle-timeout", "5", NULL};
  assert_int_equal(load(bad, err, sizeof err), IDGEN_CONFIG_USAGE);
  assert_non_null(strstr(err, "--idle-timeout"));
  char *unknown[] = {"serve", "--nope", NULL};
  assert_int_equal(load(unknown, err, sizeof err), IDGEN_CONFIG_USAGE);
  char *help[] = {"serve", "--help", NULL};
  assert_int_equal(load(help, err, sizeof err), IDGEN_CONFIG_DONE);
  char *print[] = {"serve", "--print-config", NULL};
  assert_int_equal(load(print, err, sizeof err), IDGEN_CONFIG_DONE);
}

/* Loads a configuration whose token file holds `token`; returns the check's result. */
static int check_token(const char *token, char *err, size_t errlen) {
  char path[] = "/tmp/idgen-token-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, token, strlen(token)), (ssize_t)strlen(token));
  close(fd);
  char *argv[] = {"serve", "--auth-token-file", path, NULL};
  assert_int_equal(load(argv, err, errlen), IDGEN_CONFIG_SERVE);
  int rc = idgen__serve_config_check(&cfg, err, errlen);
  unlink(path);
  return rc;
}

static void test_token_length(void **state) {
  (void)state;
  char err[256] = "";
  assert_int_equal(check_token("a\n", err, sizeof err), -1);
  assert_non_null(strstr(err, "16 at least"));
  assert_string_equal(cfg.auth_token, "");
  assert_int_equal(check_token("0123456789abcde\n", err, sizeof err), -1); /* 15 */
  assert_int_equal(check_token("0123456789abcdef\n", err, sizeof err), 0); /* 16 */
  assert_string_equal(cfg.auth_token, "0123456789abcdef");
  assert_int_equal(check_token("two tokens-0123456789\n", err, sizeof err), -1);
  assert_non_null(strstr(err, "printable"));
}

static void test_listeners_checked(void **state) {
  (void)state;
  char err[256] = "";
  char *none[] = {"serve", "--http", "", "--resp", "", NULL};
  assert_int_equal(load(none, err, sizeof err), IDGEN_CONFIG_SERVE);
  assert_int_equal(idgen__serve_config_check(&cfg, err, sizeof err), -1);
  assert_non_null(strstr(err, "nothing to serve"));
  char *bad[] = {"serve", "--http", "localhost", NULL};
  assert_int_equal(load(bad, err, sizeof err), IDGEN_CONFIG_SERVE);
  assert_int_equal(idgen__serve_config_check(&cfg, err, sizeof err), -1);
  assert_non_null(strstr(err, "ADDR:PORT"));
}

/* Listeners beyond loopback without a token are warned about: which addresses are ours. */
static int loopback(const char *ip) {
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  if (inet_pton(AF_INET, ip, &((struct sockaddr_in *)&ss)->sin_addr) == 1)
    ss.ss_family = AF_INET;
  else if (inet_pton(AF_INET6, ip, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1)
    ss.ss_family = AF_INET6;
  else
    fail_msg("not an address: %s", ip);
  return idgen__sockaddr_is_loopback((struct sockaddr *)&ss);
}

static void test_loopback(void **state) {
  (void)state;
  assert_true(loopback("127.0.0.1"));
  assert_true(loopback("127.1.2.3"));
  assert_true(loopback("::1"));
  assert_true(loopback("::ffff:127.0.0.1"));
  assert_false(loopback("0.0.0.0"));
  assert_false(loopback("::"));
  assert_false(loopback("10.0.0.1"));
  assert_false(loopback("128.0.0.1"));
  assert_false(loopback("::ffff:10.0.0.1"));
}

/* Writes yaml to a file and loads it with the flags given; err gets the load's error,
 * or the check's when the load passed and check is set. Returns the status of the
 * stage that failed (IDGEN_CONFIG_SERVE, or -1 for a failed check). */
static int load_yaml(const char *yaml, char *const *flags, int check, char *err,
                     size_t errlen) {
  static char path[] = "/tmp/idgen-config-XXXXXX";
  strcpy(path + strlen(path) - 6, "XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
  close(fd);
  char *argv[16] = {"serve", "--config", path, "--state-dir", "/tmp"};
  int argc = 5;
  for (size_t i = 0; flags && flags[i]; i++)
    argv[argc++] = flags[i];
  argv[argc] = NULL;
  err[0] = '\0';
  int st = (int)load(argv, err, errlen);
  if (st == IDGEN_CONFIG_SERVE && check && idgen__serve_config_check(&cfg, err, errlen) < 0)
    st = -1;
  unlink(path);
  /* Messages name the file: drop its random name. */
  char *at = strstr(err, path);
  if (at)
    memmove(at + 4, at + strlen(path), strlen(at + strlen(path)) + 1),
        memcpy(at, "FILE", 4);
  return st;
}

static void test_config_file(void **state) {
  (void)state;
  char err[512];
  const char *yaml = "generators:\n"
                     "  default:\n"
                     "    kind: snowflake\n"
                     "    layout: js53\n"
                     "    policy: fail\n"
                     "  events: {kind: snowflake, layout: twitter, datacenter: 2,\n"
                     "           seq_reset_threshold: 255, namespace: ev}\n"
                     "  orders:\n"
                     "    kind: segment\n"
                     "    backend: postgres\n"
                     "    dsn: \"host=127.0.0.1 port=5432 dbname=ids password=s3cret\"\n"
                     "    step: 500\n"
                     "    max_step: 8000\n"
                     "  tokens: {kind: uuid7}\n";
  char *flags[] = {"--policy", "logical", NULL};
  assert_int_equal(load_yaml(yaml, flags, 1, err, sizeof err), IDGEN_CONFIG_SERVE);
  assert_int_equal(cfg.ngens, 4);
  /* The default: the file's layout, the flag's policy. */
  assert_string_equal(cfg.gens[0].name, "default");
  assert_string_equal(cfg.gens[0].layout, "js53");
  assert_string_equal(cfg.gens[0].policy, "logical");
  assert_string_equal(cfg.layout, "js53");
  const idgen__gen_spec *ev = idgen__serve_config_gen(&cfg, "events", 6);
  assert_non_null(ev);
  assert_int_equal(ev->kind, KIND_SNOWFLAKE);
  assert_string_equal(ev->layout, "twitter");
  assert_string_equal(ev->policy, "wait"); /* its own default, not the default's */
  assert_int_equal(ev->lease.datacenter, 2);
  assert_int_equal(ev->seq_reset_threshold, 255);
  assert_string_equal(ev->lease.ns, "ev");
  const idgen__gen_spec *orders = idgen__serve_config_gen(&cfg, "orders", 6);
  assert_int_equal(orders->kind, KIND_SEGMENT);
  assert_string_equal(orders->backend, "postgres");
  assert_int_equal(orders->step, 500);
  assert_int_equal(orders->max_step, 8000);
  assert_int_equal(orders->prefetch_pct, 20);
  assert_int_equal(idgen__serve_config_gen(&cfg, "tokens", 6)->kind, KIND_UUID7);
  assert_null(idgen__serve_config_gen(&cfg, "nope", 4));
  /* --print-config: sources, the password masked. */
  char *out = NULL;
  size_t outlen = 0;
  FILE *f = open_memstream(&out, &outlen);
  idgen__serve_config_print(&cfg, f);
  fclose(f);
  assert_non_null(strstr(out, "layout = \"js53\"  # file:4\n"));
  assert_non_null(strstr(out, "policy = \"logical\"  # flag\n"));
  assert_non_null(strstr(out, "[generators.orders]  # file:8\n"));
  assert_non_null(strstr(out, "step = 500  # file:12\n"));
  assert_non_null(strstr(out, "prefetch_pct = 20  # default\n"));
  assert_non_null(strstr(out, "password=***"));
  assert_null(strstr(out, "s3cret"));
  free(out);
}

/* DSNs fit to print: every password and key passphrase masked, in a keyword string and
 * in a URI's query, and nothing of one shown when the output is too short for it. */
static void test_dsn_masked(void **state) {
  (void)state;
  static const char *const cases[][2] = {
      {"host=h password=s3cret dbname=d", "host=h password=*** dbname=d"},
      {"host=h password='s3 cret' sslpassword=k3y sslmode=verify-full",
       "host=h password=*** sslpassword=*** sslmode=verify-full"},
      {"postgresql://u:s3cret@h/d?sslpassword=k3y&sslmode=require&PASSWORD=p4",
       "postgresql://u:***@h/d?sslpassword=***&sslmode=require&PASSWORD=***"},
      {"servers=h:1 user=u password=p;w ssl-ca=/ca.pem",
       "servers=h:1 user=u password=*** ssl-ca=/ca.pem"},
      {"host=h mypassword=x", "host=h mypassword=x"}, /* not a key of its own */
  };
  char out[128];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    idgen__dsn_masked(cases[i][0], out, sizeof out);
    assert_string_equal(out, cases[i][1]);
  }
  for (size_t len = 1; len <= 40; len++) { /* cut anywhere: never a secret's letter */
    char small[40];
    idgen__dsn_masked("host=h sslpassword=k3yk3y password=s3cret", small, len);
    assert_true(strlen(small) < len);
    assert_null(strstr(small, "k3"));
    assert_null(strstr(small, "s3"));
  }
}

/* The default entry's options meet the flags and IDGEN_* variables: both win. */
static void test_config_precedence(void **state) {
  (void)state;
  char err[512];
  const char *yaml = "generators:\n  default: {layout: js53, policy: fail, namespace: "
                     "fromfile}\n  events: {kind: snowflake}\n";
  setenv("IDGEN_POLICY", "wait", 1);
  char *flags[] = {"--layout", "twitter", NULL};
  assert_int_equal(load_yaml(yaml, flags, 0, err, sizeof err), IDGEN_CONFIG_SERVE);
  unsetenv("IDGEN_POLICY");
  assert_string_equal(cfg.gens[0].layout, "twitter");
  assert_string_equal(cfg.gens[0].policy, "wait");
  assert_string_equal(cfg.gens[0].lease.ns, "fromfile");
  /* A named snowflake generator takes the default's namespace unless it names one. */
  assert_string_equal(cfg.gens[1].lease.ns, "fromfile");
  /* A default of another kind has no layout to set. */
  char *layout[] = {"--layout", "js53", NULL};
  assert_int_equal(
      load_yaml("generators:\n  default: {kind: segment}\n", layout, 0, err, sizeof err),
      IDGEN_CONFIG_USAGE);
  assert_non_null(strstr(err, "--layout: the default generator is a segment generator"));
  assert_int_equal(
      load_yaml("generators:\n  default: {kind: ulid}\n", NULL, 1, err, sizeof err),
      IDGEN_CONFIG_SERVE);
  assert_int_equal(cfg.gens[0].kind, KIND_ULID);
}

/* A segment generator on etcd takes the process's --etcd-* options, or its own
 * etcd_* keys; the segment's checks refuse the TLS files with http://; --print-config
 * never shows a password. */
static void test_config_etcd_access(void **state) {
  (void)state;
  char err[512];
  const char *yaml = "generators:\n"
                     "  a: {kind: segment, backend: etcd, dsn: \"https://127.0.0.1:1\"}\n"
                     "  b: {kind: segment, backend: etcd, dsn: \"https://127.0.0.1:1\",\n"
                     "      etcd_cacert: b-ca.pem, etcd_user: b, etcd_password_file: pw}\n";
  char *flags[] = {"--etcd-cacert", "/etc/hostname", "--etcd-user", "idgen", NULL};
  setenv("IDGEN_ETCD_PASSWORD", "s3cret", 1);
  assert_int_equal(load_yaml(yaml, flags, 0, err, sizeof err), IDGEN_CONFIG_SERVE);
  unsetenv("IDGEN_ETCD_PASSWORD");
  const idgen__gen_spec *a = idgen__serve_config_gen(&cfg, "a", 1);
  const idgen__gen_spec *b = idgen__serve_config_gen(&cfg, "b", 1);
  assert_string_equal(a->lease.etcd_cacert, "/etc/hostname");
  assert_string_equal(a->lease.etcd_user, "idgen");
  assert_string_equal(a->lease.etcd_password, "s3cret");
  assert_string_equal(b->lease.etcd_cacert, "b-ca.pem");
  assert_string_equal(b->lease.etcd_user, "b");
  assert_string_equal(b->lease.etcd_password_file, "pw");
  char *out = NULL;
  size_t outlen = 0;
  FILE *f = open_memstream(&out, &outlen);
  idgen__serve_config_print(&cfg, f);
  fclose(f);
  assert_non_null(strstr(out, "etcd-cacert = \"/etc/hostname\"  # flag\n"));
  assert_non_null(strstr(out, "etcd_cacert = \"b-ca.pem\"  # file:4\n"));
  assert_non_null(strstr(out, "etcd-password = (set, not shown)"));
  assert_null(strstr(out, "s3cret"));
  free(out);
  /* the checks: TLS files with an http:// DSN; a key without its certificate */
  assert_int_equal(load_yaml("generators:\n  o: {kind: segment, backend: etcd, dsn: "
                             "\"http://127.0.0.1:1\", etcd_cacert: ca.pem}\n",
                             NULL, 1, err, sizeof err),
                   -1);
  assert_non_null(strstr(err, "--etcd-cacert: the etcd endpoints are http://"));
  assert_int_equal(load_yaml("generators:\n  o: {kind: segment, backend: etcd, dsn: "
                             "\"https://127.0.0.1:1\", etcd_key: k.pem}\n",
                             NULL, 1, err, sizeof err),
                   -1);
  assert_non_null(strstr(err, "--etcd-key: needs --etcd-cert"));
  assert_int_equal(load_yaml("generators:\n  o: {kind: snowflake, etcd_cacert: ca.pem}\n",
                             NULL, 0, err, sizeof err),
                   IDGEN_CONFIG_USAGE);
  assert_non_null(strstr(err, "not an option of a snowflake generator"));
}

/* A segment generator on Redis takes the process's --redis-* options, or its own
 * redis_* keys; the segment's checks refuse TLS files with redis://; --print-config
 * never shows a password. */
static void test_config_redis_access(void **state) {
  (void)state;
  char err[512];
  const char *yaml = "generators:\n"
                     "  a: {kind: segment, backend: redis, dsn: \"rediss://127.0.0.1:1\"}\n"
                     "  b: {kind: segment, backend: redis, dsn: \"rediss://127.0.0.1:1\",\n"
                     "      redis_cacert: b-ca.pem, redis_user: b, redis_password_file: pw}\n";
  char *flags[] = {"--redis-cacert", "/etc/hostname", "--redis-user", "idgen", NULL};
  setenv("IDGEN_REDIS_PASSWORD", "s3cret", 1);
  assert_int_equal(load_yaml(yaml, flags, 0, err, sizeof err), IDGEN_CONFIG_SERVE);
  unsetenv("IDGEN_REDIS_PASSWORD");
  const idgen__gen_spec *a = idgen__serve_config_gen(&cfg, "a", 1);
  const idgen__gen_spec *b = idgen__serve_config_gen(&cfg, "b", 1);
  assert_string_equal(a->lease.redis_cacert, "/etc/hostname");
  assert_string_equal(a->lease.redis_user, "idgen");
  assert_string_equal(a->lease.redis_password, "s3cret");
  assert_string_equal(b->lease.redis_cacert, "b-ca.pem");
  assert_string_equal(b->lease.redis_user, "b");
  assert_string_equal(b->lease.redis_password_file, "pw");
  char *out = NULL;
  size_t outlen = 0;
  FILE *f = open_memstream(&out, &outlen);
  idgen__serve_config_print(&cfg, f);
  fclose(f);
  assert_non_null(strstr(out, "redis-cacert = \"/etc/hostname\"  # flag\n"));
  assert_non_null(strstr(out, "redis_cacert = \"b-ca.pem\"  # file:4\n"));
  assert_non_null(strstr(out, "redis-password = (set, not shown)"));
  assert_null(strstr(out, "s3cret"));
  free(out);
  assert_int_equal(load_yaml("generators:\n  o: {kind: segment, backend: redis, dsn: "
                             "\"redis://127.0.0.1:1\", redis_cacert: ca.pem}\n",
                             NULL, 1, err, sizeof err),
                   -1);
  assert_non_null(strstr(err, "--redis-cacert: the Redis URL is redis://"));
  assert_int_equal(load_yaml("generators:\n  o: {kind: segment, backend: redis, dsn: "
                             "\"rediss://127.0.0.1:1\", redis_cert: c.pem}\n",
                             NULL, 1, err, sizeof err),
                   -1);
  assert_non_null(strstr(err, "--redis-cert: needs --redis-key"));
}

/* Each bad file: one line that names the file, the line and the key. */
/* tokens: each its file, generators (a list, or every one) and decode; two tokens of
 * one value refused by the check. */
static void test_config_tokens(void **state) {
  (void)state;
  char err[512], a[] = "/tmp/idgen-unit-token-a-XXXXXX", b[] = "/tmp/idgen-unit-token-b-XXXXXX";
  int fa = mkstemp(a), fb = mkstemp(b);
  assert_true(fa >= 0 && fb >= 0);
  assert_int_equal(write(fa, "token-aaaa-0123456789\n", 22), 22);
  assert_int_equal(write(fb, "token-bbbb-0123456789\n", 22), 22);
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "generators:\n  orders: {kind: uuid7}\n  invoices: {kind: ulid}\n"
           "tokens:\n  team-a: {file: %s, generators: [orders, invoices], decode: true}\n"
           "  team-b:\n    file: %s\n",
           a, b);
  assert_int_equal(load_yaml(yaml, NULL, 1, err, sizeof err), IDGEN_CONFIG_SERVE);
  assert_int_equal(cfg.ntokens, 2);
  assert_string_equal(cfg.tokens[0].name, "team-a");
  assert_int_equal(cfg.tokens[0].all_generators, 0);
  assert_int_equal(cfg.tokens[0].ngenerators, 2);
  assert_string_equal(cfg.tokens[0].generators[1], "invoices");
  assert_int_equal(cfg.tokens[0].decode, 1);
  assert_int_equal(cfg.tokens[0].line, 5);
  assert_int_equal(cfg.tokens[1].all_generators, 1);
  assert_int_equal(cfg.tokens[1].decode, 0);
  assert_int_equal(idgen__serve_config_auth(&cfg), 1);
  /* the same value twice */
  assert_int_equal(lseek(fb, 0, SEEK_SET), 0);
  assert_int_equal(write(fb, "token-aaaa-0123456789\n", 22), 22);
  assert_int_equal(load_yaml(yaml, NULL, 1, err, sizeof err), -1);
  assert_non_null(strstr(err, "tokens 'team-a' and 'team-b' hold the same token"));
  close(fa);
  close(fb);
  unlink(a);
  unlink(b);
}

static void test_config_file_errors(void **state) {
  (void)state;
  static const struct {
    const char *yaml;
    int check; /* 0: the load refuses it; 1: the check before serving does */
    const char *want;
  } cases[] = {
      {"generators:\n  o:\n    kind: segment\n    step: 0\n", 0,
       "FILE:4: generators.o.step: '0' is not a number from 1 to 1073741824"},
      {"generators:\n  o: {kind: segmnt}\n", 0,
       "FILE:2: generators.o.kind: 'segmnt' is not a kind (snowflake, segment, uuid7"},
      {"generators:\n  o:\n    step: 5\n", 0, "FILE:2: generators.o: no kind"},
      {"generators:\n  o: {kind: segment,\n      layout: js53}\n", 0,
       "FILE:3: generators.o.layout: not an option of a segment generator (it takes: kind, "
       "backend"},
      {"generators:\n  o: {kind: segment, colour: red}\n", 0,
       "FILE:2: generators.o.colour: unknown option of a segment generator"},
      {"generators:\n  hex: {kind: uuid7}\n", 0,
       "FILE:2: generators.hex: not a generator "
       "name: a format's name"},
      {"generators:\n  '2024': {kind: uuid7}\n", 0,
       "generators.2024: not a generator name: "
       "all digits"},
      {"generators:\n  a/b: {kind: uuid7}\n", 0, "generators.a/b: not a generator name"},
      {"generators:\n  a: {kind: uuid7}\n  a: {kind: uuid4}\n", 0,
       "FILE:3: generators.a: given twice (first on line 2)"},
      {"generators:\n  a: {kind: uuid7}\ngenerators:\n  b: {kind: uuid4}\n", 0,
       "FILE:3: generators: given twice (first on line 1)"},
      {"generators:\ngenerators:\n  b: {kind: uuid4}\n", 0,
       "FILE:2: generators: given twice (first on line 1)"},
      {"generators:\n  a: [1, 2]\n", 0, "FILE:2: generators.a: want a mapping"},
      {"generators:\n  a:\n", 0, "FILE:2: generators.a: no options"},
      {"generators:\n  a: {kind: [uuid7]}\n", 0, "generators.a.kind: want a single value"},
      {"gens: {}\n", 0, "FILE:1: gens: unknown key"},
      {"generators:\n  a: {kind: uuid7\n", 0, "FILE:3:1: YAML: "},
      {"generators: {}\n---\nmore: 1\n", 0, "FILE:3: a second YAML document"},
      {"generators:\n  e: {kind: snowflake, namespace: 'a b'}\n", 0,
       "FILE:2: generators.e.namespace: 'a b' must be"},
      {"generators:\n  e: {kind: snowflake,\n     layout: js54}\n", 1,
       "FILE:3: generators.e.layout 'js54': unknown layout"},
      {"generators:\n  e: {kind: snowflake, datacenter: 3}\n", 1,
       "FILE:2: generators.e: --datacenter: the layout has one node field"},
      {"generators:\n  e: {kind: snowflake, seq_reset_threshold: 5000}\n", 1,
       "FILE:2: generators.e.seq_reset_threshold 5000: must be below 2^12"},
      {"generators:\n  o: {kind: segment, backend: pg, dsn: x}\n", 1,
       "FILE:2: generators.o: unknown segment backend 'pg'"},
      {"generators:\n  o: {kind: segment, backend: postgres}\n", 1,
       "FILE:2: generators.o: segment backend postgres: no DSN given"},
      {"generators:\n  o: {kind: segment, backend: etcd, path: /x}\n", 1,
       "FILE:2: generators.o.path: the etcd backend takes a dsn, not a path"},
      {"generators:\n  o: {kind: segment, dsn: /x, path: /y}\n", 0,
       "FILE:2: generators.o.path: give dsn or path, not both"},
      {"generators:\n  o: {kind: segment, step: 10, max_step: 5}\n", 1,
       "FILE:2: generators.o: segment 'o': max_step 5 is outside step (10)"},
      {"generators:\n  o: {kind: segment, opaque_key_file: /no/such/key}\n", 1,
       "FILE:2: generators.o.opaque_key_file /no/such/key: No such file"},
      {"tokens:\n  t: {file: /x, generators: [nosuch]}\n", 0,
       "FILE:2: tokens.t.generators: 'nosuch' is not a generator of this server (default)"},
      {"tokens:\n  t: {file: /x, generators: []}\n", 0,
       "FILE:2: tokens.t.generators: an empty"},
      {"tokens:\n  t: {file: /x, decode: maybe}\n", 0,
       "FILE:2: tokens.t.decode: 'maybe' is not true or false"},
      {"tokens:\n  t: {generators: [default]}\n", 0, "FILE:2: tokens.t: no file"},
      {"tokens:\n  t: {file: [a, b]}\n", 0, "FILE:2: tokens.t.file: want a single value"},
      {"tokens:\n  t: {cert_subject: \"CN=a\"}\n", 1,
       "FILE:2: tokens.t.cert_subject: needs --tls-ca and --tls-client-cert optional or "
       "require"},
      {"tokens:\n  t: {cert_san: \"DNS:a\"}\n", 1,
       "FILE:2: tokens.t.cert_san: needs --tls-ca"},
      {"tokens:\n  t: {cert_san: \"IP:127.0.0.1\"}\n", 0,
       "FILE:2: tokens.t.cert_san: 'IP:127.0.0.1' is not DNS:NAME, URI:URI or "
       "email:ADDRESS"},
      {"tokens:\n  t: {cert_san: \"DNS:\"}\n", 0,
       "FILE:2: tokens.t.cert_san: 'DNS:' is not"},
      {"tokens:\n  t: {cert_subject: team-a}\n", 0,
       "FILE:2: tokens.t.cert_subject: 'team-a' is not a subject in RFC 2253 form"},
      {"tokens:\n  t: {cert_subject: \"\"}\n", 0,
       "FILE:2: tokens.t.cert_subject: want a subject"},
      {"tokens:\n  t: {cert_subject: [a, b]}\n", 0,
       "FILE:2: tokens.t.cert_subject: want a single value"},
      {"tokens:\n  t: {file: /x, speed: 5}\n", 0, "FILE:2: tokens.t.speed: unknown option"},
      {"tokens:\n  t: {file: /x, rate: 0}\n", 0,
       "FILE:2: tokens.t.rate: '0' is not a number from 1 to 1000000"},
      {"tokens:\n  t: {file: /x, rate: 1000001}\n", 0,
       "FILE:2: tokens.t.rate: '1000001' is not a number from 1 to 1000000"},
      {"tokens:\n  t: {file: /x, rate: 5, burst: 1000000001}\n", 0,
       "FILE:2: tokens.t.burst: '1000000001' is not a number from 1 to 1000000000"},
      {"tokens:\n  t: {file: /x, burst: 5}\n", 0,
       "FILE:2: tokens.t.burst: a burst needs a rate"},
      {"tokens:\n  t: {file: /x, rate: [1, 2]}\n", 0,
       "FILE:2: tokens.t.rate: want a single value"},
      {"tokens:\n  auth-token-file: {file: /x}\n", 0,
       "FILE:2: tokens.auth-token-file: not a token name"},
      {"tokens:\n  t: {file: /no/such/token}\n", 1,
       "FILE:2: tokens.t.file /no/such/token: No such file"},
      {"generators:\n  default: {seq_reset_threshold: 99999}\n", 1,
       "FILE:2: generators.default.seq_reset_threshold 99999: must be below 2^12"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char err[512];
    int st = load_yaml(cases[i].yaml, NULL, cases[i].check, err, sizeof err);
    assert_int_equal(st, cases[i].check ? -1 : IDGEN_CONFIG_USAGE);
    if (!strstr(err, cases[i].want))
      fail_msg("case %zu: want '%s' in '%s'", i, cases[i].want, err);
    assert_null(strchr(err, '\n'));
  }
}

/* A team of a certificate only loads (no file) and passes the check with --tls-ca;
 * --health-listen is loopback only. */
static void test_cert_teams_and_health(void **state) {
  (void)state;
  char err[512];
  char ca[] = "/tmp/idgen-unit-ca-XXXXXX";
  int fd = mkstemp(ca);
  assert_true(fd >= 0);
  close(fd);
  char *mtls[] = {"--tls-cert",        ca,         "--tls-key", ca, "--tls-ca", ca,
                  "--tls-client-cert", "optional", NULL};
  const char *yaml = "tokens:\n  t: {cert_subject: \"CN=a,O=b\", cert_san: \"URI:x:y\"}\n";
  assert_int_equal(load_yaml(yaml, mtls, 1, err, sizeof err), 0);
  assert_string_equal(cfg.tokens[0].cert_subject, "CN=a,O=b");
  assert_string_equal(cfg.tokens[0].cert_san, "URI:x:y");
  assert_string_equal(cfg.tokens[0].file, "");
  assert_int_equal(idgen__serve_config_auth(&cfg), 1);
  static const struct {
    const char *addr;
    int ok;
  } health[] = {{"127.0.0.1:9000", 1}, {"127.0.0.2:0", 1},   {"[::1]:9000", 1},
                {"0.0.0.0:9000", 0},   {"10.1.2.3:9000", 0}, {"[::]:9000", 0},
                {"nonsense", 0}};
  for (size_t i = 0; i < sizeof health / sizeof health[0]; i++) {
    char *flags[] = {"--health-listen", (char *)health[i].addr, NULL};
    int st = load_yaml("generators:\n  o: {kind: uuid7}\n", flags, 1, err, sizeof err);
    if (st != (health[i].ok ? 0 : -1))
      fail_msg("--health-listen %s: %d (%s)", health[i].addr, st, err);
    if (!health[i].ok && !strstr(err, "--health-listen"))
      fail_msg("--health-listen %s: '%s'", health[i].addr, err);
  }
  unlink(ca);
}

/* Static worker IDs: two generators cannot share one (one lock file per ID). */
static void test_fixed_workers(void **state) {
  (void)state;
  char err[512];
  char *flags[] = {"--lease", "static", "--worker-id", "3", NULL};
  assert_int_equal(load_yaml("generators:\n  e: {kind: snowflake, worker_id: 3, namespace: "
                             "other}\n",
                             flags, 1, err, sizeof err),
                   -1);
  assert_non_null(strstr(err, "generators 'default' and 'e' would both claim worker ID 3"));
  assert_int_equal(load_yaml("generators:\n  e: {kind: snowflake, worker_id: 4}\n", flags,
                             1, err, sizeof err),
                   IDGEN_CONFIG_SERVE);
  assert_int_equal(
      load_yaml("generators:\n  e: {kind: snowflake}\n", flags, 1, err, sizeof err), -1);
  assert_non_null(strstr(err, "generators.e: --lease static needs --worker-id"));
}

/* k8s: two snowflake generators of one namespace must not meet on any pod. Pods cannot
 * see each other, so the check needs the bound on the pods (--k8s-replicas) and refuses
 * offsets closer than it (issue 23: offset 1 for 'events' was pod 1's default). */
static void test_k8s_workers(void **state) {
  (void)state;
  char err[1024];
  char *none[] = {"--lease", "k8s", "--pod-index", "0", NULL};
  char *two[] = {"--lease", "k8s", "--pod-index", "1", "--k8s-replicas", "2", NULL};
  struct {
    const char *yaml;
    char **flags;
    const char *want; /* NULL: accepted */
  } cases[] = {
      /* the review's configuration: pod 0's events (0+1) is pod 1's default (1+0) */
      {"generators:\n  events: {kind: snowflake, worker_id_offset: 1}\n", none,
       "generators 'default' and 'events' share namespace 'default' under the k8s "
       "provider with no bound on the pods"},
      {"generators:\n  events: {kind: snowflake, worker_id_offset: 1}\n", two,
       "'default' takes 0-1 and 'events' 1-2 (worker_id_offset + ordinals 0-1 of "
       "--k8s-replicas 2): give them worker_id_offset values at least 2 apart"},
      {"generators:\n  events: {kind: snowflake, worker_id_offset: 2}\n", two, NULL},
      {"generators:\n  a: {kind: snowflake, worker_id_offset: 2}\n"
       "  b: {kind: snowflake, worker_id_offset: 3}\n",
       two, "generators 'a' and 'b' would share worker IDs across pods"},
      {"generators:\n  a: {kind: snowflake, worker_id_offset: 4}\n"
       "  b: {kind: snowflake, worker_id_offset: 2}\n",
       two, NULL},
      /* below the default: b's 0-1 are the default's */
      {"generators:\n  b: {kind: snowflake, worker_id_offset: 4}\n"
       "  c: {kind: snowflake, worker_id_offset: 3}\n",
       two, "'b' takes 4-5 and 'c' 3-4"},
      /* a namespace of its own: no cross-pod rule, only the lock file's */
      {"generators:\n  e: {kind: snowflake, worker_id_offset: 1, namespace: other}\n", none,
       NULL},
      {"generators:\n  e: {kind: snowflake, namespace: other}\n", none,
       "generators 'default' and 'e' would both claim worker ID 0 past the pod ordinal"},
      /* one namespace, two datacenters: the workers as the IDs carry them */
      {"generators:\n  default: {layout: twitter, datacenter: 1}\n"
       "  e: {kind: snowflake, layout: twitter, datacenter: 2}\n",
       two, NULL},
      {"generators:\n  default: {layout: twitter, datacenter: 1}\n"
       "  e: {kind: snowflake, layout: twitter, worker_id_offset: 33}\n",
       two, "'default' takes 32-33 and 'e' 33-34"},
      /* the last pod's worker must fit the field and the range */
      {"generators:\n  e: {kind: snowflake, worker_id_offset: 1023}\n", two,
       "generators.e: --k8s-replicas 2: offset 1023 + the last ordinal 1 = 1024 is out of "
       "range: the worker field holds 0-1023"},
      {"generators:\n  e: {kind: snowflake, worker_id_offset: 2, worker_id_range: 0-2}\n",
       two,
       "generators.e: --k8s-replicas 2: offset 2 + the last ordinal 1 = 3 is outside "
       "--worker-id-range 0-2"},
      /* segment and text kinds claim no worker */
      {"generators:\n  o: {kind: segment}\n  t: {kind: uuid7}\n", none, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int st = load_yaml(cases[i].yaml, cases[i].flags, 1, err, sizeof err);
    if (!cases[i].want) {
      if (st != IDGEN_CONFIG_SERVE)
        fail_msg("case %zu: refused: %s", i, err);
      continue;
    }
    if (st != -1 || !strstr(err, cases[i].want))
      fail_msg("case %zu: want '%s', got %d '%s'", i, cases[i].want, st, err);
    assert_null(strchr(err, '\n'));
  }
  /* The default alone keeps worker = ordinal + offset, bound or not; a pod at or past
   * the bound is refused. */
  char *alone[] = {"--lease", "k8s", "--pod-index", "5", "--worker-id-offset", "7", NULL};
  assert_int_equal(load_yaml("generators:\n  default: {}\n", alone, 1, err, sizeof err),
                   IDGEN_CONFIG_SERVE);
  char *past[] = {"--lease", "k8s", "--pod-index", "2", "--k8s-replicas", "2", NULL};
  assert_int_equal(load_yaml("generators:\n  default: {}\n", past, 1, err, sizeof err), -1);
  assert_non_null(strstr(err, "--k8s-replicas 2: pod ordinal 2 is not below it"));
  char *zero[] = {"--lease", "k8s", "--k8s-replicas", "0", NULL};
  assert_int_equal(load_yaml("generators:\n  default: {}\n", zero, 1, err, sizeof err),
                   IDGEN_CONFIG_USAGE);
  assert_non_null(strstr(err, "--k8s-replicas: 0 pods"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_usage_and_help),
      cmocka_unit_test(test_token_length),
      cmocka_unit_test(test_listeners_checked),
      cmocka_unit_test(test_loopback),
      cmocka_unit_test(test_config_file),
      cmocka_unit_test(test_dsn_masked),
      cmocka_unit_test(test_config_precedence),
      cmocka_unit_test(test_config_etcd_access),
      cmocka_unit_test(test_config_redis_access),
      cmocka_unit_test(test_config_file_errors),
      cmocka_unit_test(test_config_tokens),
      cmocka_unit_test(test_fixed_workers),
      cmocka_unit_test(test_k8s_workers),
      cmocka_unit_test(test_cert_teams_and_health),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
