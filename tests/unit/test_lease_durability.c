/* test_lease_durability.c: a file provider's HWM write reaches the disk before it
 * returns (one fdatasync per write, counted by wrapping fdatasync at link time with
 * -Wl,--wrap=fdatasync), and every way the write can fail (a failed sync, a refused or
 * short write under RLIMIT_FSIZE) comes back as an error, never as a success. A new
 * worker file's directory entry is synced too (-Wl,--wrap=fsync), after its first
 * record, and what was synced is what the next holder starts from. The wrappers are
 * tests/unit/fake_sync.c's. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "idgen.h"
#include "idgen/lease.h"
#include "fake_sync.h"
#include "lease/lease_internal.h"

#define T0_MS INT64_C(1780272000000) /* 2026-06-01 */

/* The watched file's fdatasync calls (fake_sync.h) and the HWM it held at the last. */
static fake_sync_watch watch;
static int64_t hwm_at_sync;

static void record_hwm(int fd, int call) {
  (void)call;
  char buf[1024];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  idgen__record rec;
  hwm_at_sync = n > 0 && idgen__record_parse(buf, (size_t)n, &rec) == 0 ? rec.hwm_ms : -1;
}

/* The state directory's fsync calls, and the HWM that worker-0 held at the first (-1:
 * none, or not a whole record). */
static fake_sync_watch dir_watch;
static int64_t worker0_hwm;

static char dir[256];

static void peek_worker0(int fd, int call) {
  (void)fd;
  if (call != 1)
    return;
  char path[300];
  snprintf(path, sizeof path, "%s/worker-0", dir);
  idgen__record rec;
  worker0_hwm = idgen__hwm_file_peek(path, &rec) == 0 ? rec.hwm_ms : -1;
}

/* Worker IDs are claimed host-wide per namespace: one of this test's own, or another
 * process on the host holding worker 0 of the default namespace would move us off it. */
static char ns[64];

static int setup(void **state) {
  (void)state;
  watch = (fake_sync_watch){.seen = record_hwm};
  dir_watch = (fake_sync_watch){.seen = peek_worker0};
  fake_sync_watch_fdatasync(&watch);
  fake_sync_watch_fsync(&dir_watch);
  snprintf(ns, sizeof ns, "test-durability-%ld", (long)getpid());
  snprintf(dir, sizeof dir, "/tmp/idgen-test-durability-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* A file lease in dir that has won worker 0, as *g says. */
static idgen_lease *acquire_worker_0(idgen_lease_grant *g) {
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  c.kind = IDGEN_LEASE_FILE;
  snprintf(c.state_dir, sizeof c.state_dir, "%s", dir);
  snprintf(c.ns, sizeof c.ns, "%s", ns);
  idgen_lease *l = NULL;
  char err[256];
  idgen_layout snowflake;
  idgen_layout_preset("snowflake", &snowflake);
  assert_int_equal(idgen_lease_open(&l, &c, &snowflake, err, sizeof err), 0);
  assert_int_equal(idgen_lease_acquire(l, g), 0);
  assert_int_equal(g->worker, 0);
  return l;
}

/* A file lease holding worker 0, whose file is watched. */
static idgen_lease *hold_worker_0(void) {
  idgen_lease_grant g;
  idgen_lease *l = acquire_worker_0(&g);
  char path[300];
  snprintf(path, sizeof path, "%s/worker-0", dir);
  assert_int_equal(fake_sync_watch_path(&watch, path), 0);
  return l;
}

static void test_each_hwm_write_is_synced(void **state) {
  (void)state;
  idgen_lease *l = hold_worker_0();
  for (int i = 1; i <= 3; i++) {
    int64_t hwm = T0_MS + 1000 * i;
    assert_int_equal(idgen_lease_write_hwm(l, hwm), 0);
    assert_int_equal(watch.calls, i);
    assert_true(hwm_at_sync == hwm); /* the sync came after the write */
  }
  /* the final HWM of a graceful release too */
  assert_int_equal(idgen_lease_release(l, T0_MS + 1500), 0);
  assert_int_equal(watch.calls, 4);
  assert_true(hwm_at_sync == T0_MS + 1500);
  idgen_lease_free(l);
  /* what was synced is what the next holder starts from */
  idgen_lease_grant g;
  idgen_lease *next = acquire_worker_0(&g);
  assert_true(g.hwm_ms == T0_MS + 1500);
  idgen_lease_free(next);
}

/* A worker file this process creates has no history: its first record (the wait its
 * holder must sit out) is synced, then the directory entry that names the file, both
 * before the ID is granted. A crash during the wait leaves both for the next holder. */
static void test_new_worker_file_and_its_directory_synced(void **state) {
  (void)state;
  assert_int_equal(fake_sync_watch_path(&dir_watch, dir), 0);
  int64_t before_ms = idgen_wall_ns() / 1000000;
  idgen_lease_grant g;
  idgen_lease *l = acquire_worker_0(&g);
  assert_true(g.hwm_ms > before_ms); /* the wait */
  assert_int_equal(dir_watch.calls, 1);
  assert_true(worker0_hwm == g.hwm_ms); /* the record came first */
  idgen_lease_free(l);
}

static void test_failed_sync_is_an_error(void **state) {
  (void)state;
  idgen_lease *l = hold_worker_0();
  watch.fail_errno = EIO;
  assert_int_equal(idgen_lease_write_hwm(l, T0_MS + 3000), -EIO);
  assert_non_null(strstr(idgen_lease_why(l), "worker-0"));
  watch.fail_errno = 0;
  assert_int_equal(idgen_lease_write_hwm(l, T0_MS + 3000), 0);
  idgen_lease_free(l);
}

/* Writes one HWM with the file size limit at limit bytes (SIGXFSZ ignored, so the write
 * fails or comes up short instead of killing us); restores both before returning. */
static int write_hwm_with_fsize_limit(idgen_lease *l, rlim_t limit, int64_t hwm) {
  struct rlimit old, low;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  low = old;
  low.rlim_cur = limit;
  struct sigaction ignore, saved;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  assert_int_equal(sigaction(SIGXFSZ, &ignore, &saved), 0);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &low), 0);
  int rc = idgen_lease_write_hwm(l, hwm);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
  assert_int_equal(sigaction(SIGXFSZ, &saved, NULL), 0);
  return rc;
}

static void test_refused_write_is_an_error(void **state) {
  (void)state;
  idgen_lease *l = hold_worker_0();
  /* the record cannot grow past 0 bytes: the write is refused (EFBIG) */
  assert_int_equal(write_hwm_with_fsize_limit(l, 0, T0_MS + 3000), -EFBIG);
  assert_non_null(strstr(idgen_lease_why(l), "worker-0"));
  /* nor past 100 bytes: the write comes up short */
  assert_int_equal(write_hwm_with_fsize_limit(l, 100, T0_MS + 3000), -EIO);
  /* nothing above was synced as if it were written */
  assert_int_equal(watch.calls, 0);
  assert_int_equal(idgen_lease_write_hwm(l, T0_MS + 4000), 0);
  assert_int_equal(watch.calls, 1);
  idgen_lease_free(l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_each_hwm_write_is_synced, setup, teardown),
      cmocka_unit_test_setup_teardown(test_failed_sync_is_an_error, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refused_write_is_an_error, setup, teardown),
      cmocka_unit_test_setup_teardown(test_new_worker_file_and_its_directory_synced, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
