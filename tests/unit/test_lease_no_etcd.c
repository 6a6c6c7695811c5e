/* test_lease_no_etcd.c: a program linked with libidgen alone (no libidgen-etcd, so no
 * libcurl or jansson): the local providers open, and kind etcd is refused with
 * IDGEN_ENOPROVIDER and a line that says what to link. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "idgen.h"

static void test_etcd_needs_its_library(void **state) {
  (void)state;
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  char err[256] = "";
  assert_int_equal(idgen_lease_config_set(&c, "lease", "etcd", err, sizeof err), 0);
  assert_int_equal(
      idgen_lease_config_set(&c, "etcd", "http://127.0.0.1:1", err, sizeof err), 0);
  idgen_layout layout;
  assert_int_equal(idgen_layout_preset("snowflake", &layout), 0);
  idgen_lease *lease = (idgen_lease *)&c; /* must stay untouched */
  assert_int_equal(idgen_lease_open(&lease, &c, &layout, err, sizeof err),
                   IDGEN_ENOPROVIDER);
  assert_ptr_equal(lease, (idgen_lease *)&c);
  assert_string_equal(err, "the etcd provider is not in this program: link libidgen-etcd "
                           "(pkg-config idgen-etcd) and list idgen_lease_etcd in "
                           "idgen_lease_config.providers");
  assert_string_equal(idgen_strerror(IDGEN_ENOPROVIDER),
                      "lease provider not in this program (etcd: link libidgen-etcd)");
}

static void test_local_providers_open(void **state) {
  (void)state;
  char dir[] = "/tmp/idgen-no-etcd-XXXXXX";
  assert_non_null(mkdtemp(dir));
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  char err[256] = "", ns[64];
  snprintf(ns, sizeof ns, "no-etcd-%ld", (long)getpid());
  assert_int_equal(idgen_lease_config_set(&c, "state-dir", dir, err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "namespace", ns, err, sizeof err), 0);
  idgen_layout layout;
  assert_int_equal(idgen_layout_preset("snowflake", &layout), 0);
  idgen_lease *lease = NULL;
  assert_int_equal(idgen_lease_open(&lease, &c, &layout, err, sizeof err), 0);
  assert_string_equal(idgen_lease_name(lease), "file");
  idgen_lease_grant grant;
  assert_int_equal(idgen_lease_acquire(lease, &grant), 0);
  assert_int_equal(idgen_lease_release(lease, 0), 0);
  idgen_lease_free(lease);
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_etcd_needs_its_library),
      cmocka_unit_test(test_local_providers_open),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
