/* test_state_dir.c: the state directory's check that it takes files holds when two
 * threads of one server check one directory at once (a segment's fetcher beside the
 * next generator's start: a clean clone's CI once failed "not writable: File exists"),
 * and after a crash left a check's file behind; it leaves nothing in the directory. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/host.h"

static char root[256];

static int setup(void **state) {
  (void)state;
  snprintf(root, sizeof root, "/tmp/idgen-test-statedir.XXXXXX");
  return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : -1;
}

static size_t entries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d));)
    n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

enum { CHECKS_PER_THREAD = 2000, THREADS = 4 };

static void *check_repeatedly(void *arg) {
  intptr_t failed = 0;
  char err[512];
  for (int i = 0; i < CHECKS_PER_THREAD && !failed; i++)
    failed = idgen__state_dir_ready(root, err, sizeof err) != 0;
  if (failed)
    fprintf(stderr, "%s\n", err);
  (void)arg;
  return (void *)failed;
}

static void two_threads_check_one_directory_at_once(void **state) {
  (void)state;
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&t[i], NULL, check_repeatedly, NULL), 0);
  intptr_t failures = 0;
  for (int i = 0; i < THREADS; i++) {
    void *failed;
    assert_int_equal(pthread_join(t[i], &failed), 0);
    failures += (intptr_t)failed;
  }
  assert_int_equal(failures, 0);
  assert_int_equal(entries(root), 0);
}

/* The name a check used before it had a name of its own: a crash between its create and
 * its unlink left it behind, and every later start with that PID failed. */
static void a_file_left_by_a_crashed_check(void **state) {
  (void)state;
  char left[300], err[512];
  snprintf(left, sizeof left, "%s/.write-test-%ld", root, (long)getpid());
  int fd = open(left, O_WRONLY | O_CREAT | O_EXCL, 0644);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(idgen__state_dir_ready(root, err, sizeof err), 0);
  assert_int_equal(entries(root), 1); /* the old one is not ours to remove */
}

static void a_missing_directory_is_made(void **state) {
  (void)state;
  char dir[300], err[512];
  snprintf(dir, sizeof dir, "%s/a/b", root);
  assert_int_equal(idgen__state_dir_ready(dir, err, sizeof err), 0);
  assert_int_equal(entries(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(two_threads_check_one_directory_at_once, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(a_file_left_by_a_crashed_check, setup, teardown),
      cmocka_unit_test_setup_teardown(a_missing_directory_is_made, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
