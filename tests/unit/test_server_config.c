/* test_server_config.c: `idgen serve`'s option table: defaults, usage errors, --help,
 * the checks before serving (the token's minimum length), and which listen addresses
 * count as loopback. */
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),     cmocka_unit_test(test_usage_and_help),
      cmocka_unit_test(test_token_length), cmocka_unit_test(test_listeners_checked),
      cmocka_unit_test(test_loopback),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
