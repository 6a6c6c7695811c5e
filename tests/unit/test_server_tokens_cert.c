/* test_server_tokens_cert.c: which team a client certificate stands for
 * (idgen__token_set_find_cert): an exact subject or one exact SAN entry, no team for a
 * near miss or for a certificate two teams could claim, and a team of a certificate only
 * never matched by a token, an empty one above all. A reload keeps a team's identity only
 * while its certificate names stay. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "server/tokens.h"

/* team-a by subject, team-b by SAN, team-c by both; none has a token file. */
static idgen__token_spec specs[3];
static idgen__serve_config cfg;

static void teams(void) {
  memset(specs, 0, sizeof specs);
  memset(&cfg, 0, sizeof cfg);
  const char *names[] = {"team-a", "team-b", "team-c"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(specs[i].name, sizeof specs[i].name, "%s", names[i]);
    specs[i].all_generators = 1;
    specs[i].line = (int)i + 2;
  }
  snprintf(specs[0].cert_subject, IDGEN_CFG_STR, "CN=team-a");
  snprintf(specs[1].cert_san, IDGEN_CFG_STR, "DNS:team-b.example");
  snprintf(specs[2].cert_subject, IDGEN_CFG_STR, "CN=team-c,O=corp");
  snprintf(specs[2].cert_san, IDGEN_CFG_STR, "URI:spiffe://corp/team-c");
  cfg.tokens = specs;
  cfg.ntokens = 3;
}

static idgen__token_set *load_set(void) {
  idgen__token_set *set = NULL;
  char err[512] = "";
  if (idgen__token_set_load(&cfg, NULL, NULL, 0, &set, err, sizeof err) < 0)
    fail_msg("load: %s", err);
  return set;
}

static idgen__cert_names cert(const char *subject, const char *san1, const char *san2) {
  idgen__cert_names n;
  memset(&n, 0, sizeof n);
  snprintf(n.subject, sizeof n.subject, "%s", subject);
  if (san1)
    snprintf(n.sans[n.nsans++], IDGEN_CFG_STR, "%s", san1);
  if (san2)
    snprintf(n.sans[n.nsans++], IDGEN_CFG_STR, "%s", san2);
  return n;
}

static void test_match_rule(void **state) {
  (void)state;
  teams();
  idgen__token_set *set = load_set();
  idgen__cert_names n;
  n = cert("CN=team-a", NULL, NULL);
  assert_int_equal(idgen__token_set_find_cert(set, &n), 0);
  n = cert("CN=nobody", "DNS:other.example", "DNS:team-b.example");
  assert_int_equal(idgen__token_set_find_cert(set, &n), 1); /* its second SAN */
  n = cert("CN=team-c,O=corp", NULL, NULL);
  assert_int_equal(idgen__token_set_find_cert(set, &n), 2);
  n = cert("CN=x", "URI:spiffe://corp/team-c", NULL);
  assert_int_equal(idgen__token_set_find_cert(set, &n), 2);
  /* near misses: no team */
  static const char *const subjects[] = {
      "CN=team-A", "CN=team-a,O=corp", "CN=team-a ", "O=corp,CN=team-c", "cn=team-a", ""};
  for (size_t i = 0; i < sizeof subjects / sizeof subjects[0]; i++) {
    n = cert(subjects[i], NULL, NULL);
    if (idgen__token_set_find_cert(set, &n) != -1)
      fail_msg("subject '%s' matched a team", subjects[i]);
  }
  n = cert("CN=x", "DNS:team-b.example.", "team-b.example");
  assert_int_equal(idgen__token_set_find_cert(set, &n), -1);
  n = cert("CN=x", "DNS:TEAM-B.example", NULL);
  assert_int_equal(idgen__token_set_find_cert(set, &n), -1);
  /* a SAN entry is not a subject, nor the other way round */
  n = cert("DNS:team-b.example", "CN=team-a", NULL);
  assert_int_equal(idgen__token_set_find_cert(set, &n), -1);
  /* two teams could claim it: neither */
  n = cert("CN=team-a", "DNS:team-b.example", NULL);
  assert_int_equal(idgen__token_set_find_cert(set, &n), -1);
  assert_int_equal(idgen__token_set_find_cert(set, NULL), -1);
  /* a team without a token file is never found by a token, an empty one included */
  assert_int_equal(idgen__token_set_find(set, "", 0), -1);
  assert_int_equal(idgen__token_set_find(set, "CN=team-a", 9), -1);
  idgen__token_set_free(set);
}

static void test_same_certificate_refused(void **state) {
  (void)state;
  teams();
  snprintf(specs[2].cert_san, IDGEN_CFG_STR, "DNS:team-b.example");
  idgen__token_set *set = NULL;
  char err[512] = "";
  assert_int_equal(idgen__token_set_load(&cfg, NULL, NULL, 0, &set, err, sizeof err), -1);
  assert_null(set);
  assert_non_null(strstr(err, "tokens 'team-b' and 'team-c' name the same certificate "
                              "(DNS:team-b.example)"));
  teams();
  snprintf(specs[1].cert_subject, IDGEN_CFG_STR, "CN=team-a");
  assert_int_equal(idgen__token_set_load(&cfg, NULL, NULL, 0, &set, err, sizeof err), -1);
  assert_non_null(strstr(err, "tokens 'team-a' and 'team-b' name the same certificate "
                              "(CN=team-a)"));
}

/* A reload keeps a team's identity (and so a RESP connection's grant) while its name
 * and certificate names stay; a changed cert_subject is a new identity. */
static void test_reload_identity(void **state) {
  (void)state;
  teams();
  idgen__token_reg *reg = NULL;
  assert_int_equal(idgen__token_reg_new(&reg), 0);
  char err[512];
  idgen__token_set *one = NULL, *two = NULL;
  assert_int_equal(idgen__token_set_load(&cfg, reg, NULL, 0, &one, err, sizeof err), 0);
  snprintf(specs[0].cert_subject, IDGEN_CFG_STR, "CN=team-a2");
  assert_int_equal(idgen__token_set_load(&cfg, reg, one, 0, &two, err, sizeof err), 0);
  idgen__token_ref a1, a2, b1, b2;
  idgen__token_set_ref(one, 0, &a1);
  idgen__token_set_ref(two, 0, &a2);
  idgen__token_set_ref(one, 1, &b1);
  idgen__token_set_ref(two, 1, &b2);
  assert_int_not_equal(a1.ident, a2.ident);
  assert_int_equal(b1.ident, b2.ident);
  assert_int_equal(a1.slot, a2.slot); /* the same name: the same metrics and bucket */
  idgen__token_set_free(one);
  idgen__token_set_free(two);
  idgen__token_reg_free(reg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_match_rule),
      cmocka_unit_test(test_same_certificate_refused),
      cmocka_unit_test(test_reload_identity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
