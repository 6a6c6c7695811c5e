/* test_segment_durability.c: the file backend's block reaches the disk before the fetch
 * returns (one fdatasync per fetch, after the write; the directory fsync'd when init
 * creates the file: both counted by wrapping them at link time, -Wl,--wrap=...), every
 * way the write can fail comes back as an error and no number of that block is handed
 * out, and the lock keeps a second opener out while it is held. The wrappers are
 * tests/unit/fake_sync.c's. */
#include <errno.h>
#include <fcntl.h>
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
#include "fake_clock.h"
#include "fake_sync.h"
#include "segment/segment.h"

/* The watched file's fdatasync calls (fake_sync.h) and what it held at the last one;
 * the fsync calls on directories. */
static fake_sync_watch watch, dir_watch;
static char at_sync[64];

static void record_contents(int fd, int call) {
  (void)call;
  ssize_t n = pread(fd, at_sync, sizeof at_sync - 1, 0);
  at_sync[n > 0 ? n : 0] = '\0';
}

static char dir[256], path[300];

static int setup(void **state) {
  (void)state;
  watch = (fake_sync_watch){.seen = record_contents};
  dir_watch = (fake_sync_watch){.any_dir = 1};
  fake_sync_watch_fdatasync(&watch);
  fake_sync_watch_fsync(&dir_watch);
  snprintf(dir, sizeof dir, "/tmp/idgen-test-segment-durability-XXXXXX");
  if (!mkdtemp(dir))
    return -1;
  snprintf(path, sizeof path, "%s/segment-orders", dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* A file backend on dir with 'orders' created in it, its file watched. */
static idgen__segment_backend *open_orders(int64_t timeout_ms) {
  idgen__segment_backend *b = NULL;
  char err[256];
  assert_int_equal(
      idgen__segment_backend_open(&b, "file", dir, timeout_ms, err, sizeof err), 0);
  assert_int_equal(b->vtable->init(b, "orders", 10, 0, 0), 0);
  assert_int_equal(fake_sync_watch_path(&watch, path), 0);
  return b;
}

static void test_each_block_is_synced_before_it_is_handed_out(void **state) {
  (void)state;
  idgen__segment_backend *b = open_orders(0);
  assert_int_equal(dir_watch.calls, 1); /* init created the file: its directory too */
  idgen__segment_block blk;
  for (int i = 1; i <= 3; i++) {
    assert_int_equal(b->vtable->fetch(b, "orders", 10, 0, &blk), 0);
    assert_int_equal(watch.calls, i);
    char want[64];
    snprintf(want, sizeof want, "%020d orders\n", 10 * i);
    assert_string_equal(at_sync, want); /* the sync came after the write */
    assert_int_equal(blk.max, 10 * i);
  }
  /* init of an existing file writes and syncs nothing */
  assert_int_equal(b->vtable->init(b, "orders", 10, 0, 0), 1);
  assert_int_equal(watch.calls, 3);
  assert_int_equal(dir_watch.calls, 1);
  idgen__segment_backend_free(b);
}

/* A failed sync is an error, and the generator hands out nothing of that block. */
static void test_failed_sync_is_an_error(void **state) {
  (void)state;
  idgen__segment_backend *b = open_orders(0);
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, INT64_C(1780272000000000000));
  idgen__segment_config c;
  idgen__segment_config_init(&c, "orders", b, &clock.base);
  c.step = c.max_step = 10;
  c.manual = 1;
  idgen__segment *seg = NULL;
  char err[256];
  assert_int_equal(idgen__segment_new(&seg, &c, err, sizeof err), 0);
  watch.fail_errno = EIO;
  uint64_t v;
  assert_int_equal(idgen__segment_next(seg, &v), IDGEN_EBACKEND);
  idgen__segment_last_error(seg, err, sizeof err);
  assert_non_null(strstr(err, "segment-orders: fsync"));
  watch.fail_errno = 0;
  idgen_clock_fake_advance(&clock, INT64_C(2000000000));
  assert_int_equal(idgen__segment_run_fetcher(seg), 1);
  assert_int_equal(idgen__segment_next(seg, &v), 0);
  assert_int_equal(v, 11); /* the block whose sync failed is never handed out */
  idgen__segment_free(seg);
  idgen__segment_backend_free(b);
}

/* Fetches one block with the file size limit at limit bytes (SIGXFSZ ignored, so the
 * write fails or comes up short instead of killing us); restores both. */
static int fetch_with_fsize_limit(idgen__segment_backend *b, rlim_t limit) {
  struct rlimit old, low;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  low = old;
  low.rlim_cur = limit;
  struct sigaction ignore, saved;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  assert_int_equal(sigaction(SIGXFSZ, &ignore, &saved), 0);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &low), 0);
  idgen__segment_block blk;
  int rc = b->vtable->fetch(b, "orders", 10, 0, &blk);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
  assert_int_equal(sigaction(SIGXFSZ, &saved, NULL), 0);
  return rc;
}

static void test_refused_or_short_write_is_an_error(void **state) {
  (void)state;
  idgen__segment_backend *b = open_orders(0);
  assert_int_equal(fetch_with_fsize_limit(b, 0), -EFBIG);
  /* the record's highest is written first (segment-orders.created) */
  assert_non_null(strstr(b->why, "segment-orders.created: write"));
  /* Short: 10 of the record's bytes rewritten. A torn record reads as the old max or
   * more (same width, the new digits first), never less: no block comes back. */
  assert_int_equal(fetch_with_fsize_limit(b, 10), -EIO);
  assert_int_equal(watch.calls, 0); /* nothing was synced as if it were written */
  /* 100 bytes: room for the key file's record, not for all of the made-record's, which
   * is written first: its short write alone is the error. */
  assert_int_equal(fetch_with_fsize_limit(b, 100), -EIO);
  assert_non_null(strstr(b->why, "segment-orders.created: write: short write"));
  assert_int_equal(watch.calls, 0);
  idgen__segment_block blk;
  assert_int_equal(b->vtable->fetch(b, "orders", 10, 0, &blk), 0);
  assert_int_equal(blk.max, 10);
  idgen__segment_backend_free(b);
}

/* The single-file form has no record: the key file's own write is the first, and a
 * short one is an error too, nothing synced as if it were written. */
static void test_short_write_of_a_single_file_is_an_error(void **state) {
  (void)state;
  idgen__segment_backend *b = NULL;
  char err[256];
  assert_int_equal(
      idgen__segment_backend_open(&b, "file", path, 0, err, sizeof err), 0);
  assert_int_equal(b->vtable->init(b, "orders", 10, 0, 0), 0);
  assert_int_equal(fake_sync_watch_path(&watch, path), 0);
  assert_int_equal(fetch_with_fsize_limit(b, 10), -EIO);
  assert_non_null(strstr(b->why, "short write"));
  assert_int_equal(watch.calls, 0);
  idgen__segment_block blk;
  assert_int_equal(b->vtable->fetch(b, "orders", 10, 0, &blk), 0);
  assert_int_equal(blk.max, 10);
  idgen__segment_backend_free(b);
}

/* While another open file holds the lock, a fetch waits, and gives up at its timeout. */
static void test_lock_keeps_a_second_opener_out(void **state) {
  (void)state;
  idgen__segment_backend *b = open_orders(200);
  int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  assert_int_equal(fcntl(fd, F_OFD_SETLK, &fl), 0);
  idgen__segment_block blk;
  assert_int_equal(b->vtable->fetch(b, "orders", 10, 0, &blk), IDGEN_ETIMEDOUT);
  assert_non_null(strstr(b->why, "still locked by another process"));
  assert_int_equal(watch.calls, 0);
  close(fd); /* releases it */
  assert_int_equal(b->vtable->fetch(b, "orders", 10, 0, &blk), 0);
  assert_int_equal(blk.max, 10);
  idgen__segment_backend_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_each_block_is_synced_before_it_is_handed_out,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_failed_sync_is_an_error, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refused_or_short_write_is_an_error, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_short_write_of_a_single_file_is_an_error, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_lock_keeps_a_second_opener_out, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
