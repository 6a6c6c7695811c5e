/* test_segment_file_probes.c: a holder of a segment file's shared claim drains the
 * probes of the other sharers at each fetch, so more starts than any listen backlog
 * holds (SOMAXCONN: 4096) are never refused. Its own program: its 5,000 starts take most
 * of a second of CPU each time it runs, and the mutants that test_segment_file kills do
 * not need them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "idgen.h"
#include "segment/segment.h"

static char dir[256], ns[64];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/idgen-test-segprobes.XXXXXX");
  assert_non_null(mkdtemp(dir));
  snprintf(ns, sizeof ns, "test-segprobes-%ld", (long)getpid());
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static idgen__segment_backend *open_dir(const char *d) {
  idgen__segment_backend *b = NULL;
  char err[256];
  assert_int_equal(idgen__segment_backend_open(&b, "file", d, 0, err, sizeof err), 0);
  return b;
}

/* A holder drains the probes of the others at each fetch: more starts than any
 * backlog holds are never refused. */
static void test_probes_are_drained(void **state) {
  (void)state;
  idgen__segment_backend *a = open_dir(dir);
  assert_int_equal(idgen__segment_file_start(a, ns, "orders", 1), 0);
  idgen__segment_block blk;
  for (int i = 0; i < 5000; i++) {
    idgen__segment_backend *b = open_dir(dir);
    int rc = idgen__segment_file_start(b, ns, "orders", 1);
    if (rc != 1)
      print_error("start %d: %s\n", i, b->why);
    assert_int_equal(rc, 1);
    idgen__segment_backend_free(b);
    if (i % 1000 == 999)
      assert_int_equal(a->vtable->fetch(a, "orders", 10, 0, &blk), 0);
  }
  idgen__segment_backend_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_probes_are_drained, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
