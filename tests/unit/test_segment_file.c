/* test_segment_file.c: the file backend never makes a sequence again at 1 by itself:
 * what its start does after a crash between each two steps of making a file, a removed
 * or emptied file, init over each, and the host-wide claim of a name between processes
 * (a child process stands for the other server). The drain of a shared claim's probes,
 * thousands of starts, is test_segment_file_probes.c's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "idgen.h"
#include "segment/segment.h"

static char root[256], dir[300], other[300], ns[64];

static int setup(void **state) {
  (void)state;
  snprintf(root, sizeof root, "/tmp/idgen-test-segfile.XXXXXX");
  assert_non_null(mkdtemp(root));
  snprintf(dir, sizeof dir, "%s/a", root);
  snprintf(other, sizeof other, "%s/b", root);
  assert_int_equal(mkdir(dir, 0755), 0);
  assert_int_equal(mkdir(other, 0755), 0);
  snprintf(ns, sizeof ns, "test-segfile-%ld", (long)getpid());
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : -1;
}

static idgen__segment_backend *open_dir(const char *d) {
  idgen__segment_backend *b = NULL;
  char err[256];
  assert_int_equal(idgen__segment_backend_open(&b, "file", d, 0, err, sizeof err), 0);
  return b;
}

static void put(const char *name, const char *text) {
  char path[400];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* The file's content ("" if empty), or "-" when it does not exist. */
static const char *content(const char *name) {
  static char buf[512];
  char path[400];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  if (!f)
    return "-";
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

static void clear(void) {
  const char *names[] = {"segment-orders", "segment-orders.created", "segment-orders.new"};
  for (size_t i = 0; i < 3; i++) {
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
}

/* start(may_make) on the directory as it stands: its result, why in out. */
static int start(int may_make, char *why, size_t whylen) {
  idgen__segment_backend *b = open_dir(dir);
  int rc = idgen__segment_file_start(b, ns, "orders", may_make);
  snprintf(why, whylen, "%s", b->why);
  idgen__segment_backend_free(b);
  return rc;
}

#define AT_0 "00000000000000000000 orders\n"

static void test_crash_between_steps(void **state) {
  (void)state;
  char why[256];
  /* Nothing yet: made at 0, then recorded. */
  assert_int_equal(start(1, why, sizeof why), 0);
  assert_string_equal(content("segment-orders"), AT_0);
  assert_non_null(strstr(content("segment-orders.created"), "was made in this directory"));
  assert_string_equal(content("segment-orders.new"), "-");
  /* A crash after the record was opened, before the file was made: made. */
  clear();
  put("segment-orders.created", "");
  assert_int_equal(start(1, why, sizeof why), 0);
  assert_string_equal(content("segment-orders"), AT_0);
  /* ... after NAME.new was written, before its link: made, NAME.new gone. */
  clear();
  put("segment-orders.created", "");
  put("segment-orders.new", "000000000");
  assert_int_equal(start(1, why, sizeof why), 0);
  assert_string_equal(content("segment-orders"), AT_0);
  assert_string_equal(content("segment-orders.new"), "-");
  /* ... after the link, before the record said "made" (or a file of an older version):
   * it is there, and now recorded. */
  clear();
  put("segment-orders", "00000000000000031000 orders\n");
  assert_int_equal(start(1, why, sizeof why), 1);
  assert_non_null(strstr(content("segment-orders.created"), "was made in this directory"));
  assert_string_equal(content("segment-orders"), "00000000000000031000 orders\n");
  /* Made, then removed: refused, and not made again. */
  unlink(strcat(strcpy(why, dir), "/segment-orders"));
  assert_int_equal(start(1, why, sizeof why), IDGEN_EPROTO);
  assert_non_null(strstr(why, "segment-orders is gone, but this directory made it"));
  assert_string_equal(content("segment-orders"), "-");
  /* Made, then emptied: refused; so is an empty file without the record. */
  put("segment-orders", "");
  assert_int_equal(start(1, why, sizeof why), IDGEN_EPROTO);
  assert_non_null(strstr(why, "segment-orders is empty: its max is lost"));
  unlink(strcat(strcpy(why, dir), "/segment-orders.created"));
  assert_int_equal(start(1, why, sizeof why), IDGEN_EPROTO);
  assert_string_equal(content("segment-orders"), "");
  /* Without may_make (a named file, idgen segment next): a missing file is refused,
   * and nothing is left behind. */
  clear();
  assert_int_equal(start(0, why, sizeof why), -ENOENT);
  assert_non_null(strstr(why, "run 'idgen segment init' first"));
  assert_string_equal(content("segment-orders.created"), "-");
  /* A path: form is never made by a start, even one allowed to make the default file. */
  char path[400];
  snprintf(path, sizeof path, "%s/orders.seq", dir);
  idgen__segment_backend *b = open_dir(path);
  assert_int_equal(idgen__segment_file_start(b, ns, "orders", 1), -ENOENT);
  idgen__segment_backend_free(b);
  assert_string_equal(content("orders.seq"), "-");
}

static void test_init_makes_only_what_is_not_there(void **state) {
  (void)state;
  char why[256];
  idgen__segment_backend *b = open_dir(dir);
  assert_int_equal(b->vtable->init(b, "orders", 10, 0, 0), 0);
  idgen__segment_block blk;
  assert_int_equal(b->vtable->fetch(b, "orders", 10, 0, &blk), 0);
  assert_int_equal(b->vtable->init(b, "orders", 10, 0, 0), 1); /* there: left as it is */
  assert_string_equal(content("segment-orders"), "00000000000000000010 orders\n");
  /* An emptied file under a running process: refused, never read as 0. */
  put("segment-orders", "");
  assert_int_equal(b->vtable->fetch(b, "orders", 10, 0, &blk), IDGEN_EPROTO);
  assert_non_null(strstr(b->why, "is empty"));
  /* init makes an emptied one again, and a removed one, at or above the record's
   * highest (10), or below it when forced: the operator's choice. */
  assert_int_equal(b->vtable->init(b, "orders", 10, 0, 0), IDGEN_EPROTO);
  assert_non_null(strstr(b->why, "says 10 was handed out: --start-after 0 is below it"));
  assert_string_equal(content("segment-orders"), "");
  assert_int_equal(b->vtable->init(b, "orders", 10, 0, 1), 0);
  assert_string_equal(content("segment-orders"), AT_0);
  unlink(strcat(strcpy(why, dir), "/segment-orders"));
  assert_int_equal(b->vtable->init(b, "orders", 10, 0, 0), 0); /* the record says 0 now */
  assert_string_equal(content("segment-orders"), AT_0);
  assert_int_equal(b->vtable->fetch(b, "orders", 10, 0, &blk), 0);
  unlink(strcat(strcpy(why, dir), "/segment-orders"));
  assert_int_equal(b->vtable->init(b, "orders", 10, 9, 0), IDGEN_EPROTO);
  assert_int_equal(b->vtable->init(b, "orders", 10, 10, 0), 0);
  assert_string_equal(content("segment-orders"), "00000000000000000010 orders\n");
  assert_int_equal(start(1, why, sizeof why), 1);
  idgen__segment_backend_free(b);
  /* Removed under a running process: its fetch says the file was made, not "init". */
  b = open_dir(dir);
  assert_int_equal(idgen__segment_file_start(b, ns, "orders", 1), 1);
  unlink(strcat(strcpy(why, dir), "/segment-orders"));
  assert_int_equal(b->vtable->fetch(b, "orders", 10, 0, &blk), IDGEN_EPROTO);
  assert_non_null(strstr(b->why, "is gone, but this directory made it"));
  idgen__segment_backend_free(b);
}

/* The child: serves 'orders' from d, says so on ready, exits when done closes. */
static void child_serves(const char *d, int ready, int done) {
  idgen__segment_backend *b = NULL;
  char err[256];
  int ok = idgen__segment_backend_open(&b, "file", d, 0, err, sizeof err) == 0 &&
           idgen__segment_file_start(b, ns, "orders", 1) >= 0;
  char c = ok ? 'y' : 'n';
  if (write(ready, &c, 1) != 1)
    _exit(3);
  if (read(done, &c, 1) < 0)
    _exit(3);
  _exit(ok ? 0 : 1);
}

static void test_claim_across_processes(void **state) {
  (void)state;
  int ready[2], done[2];
  assert_int_equal(pipe(ready), 0);
  assert_int_equal(pipe(done), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(ready[0]);
    close(done[1]);
    child_serves(dir, ready[1], done[0]);
  }
  close(ready[1]);
  close(done[0]);
  char c;
  assert_int_equal(read(ready[0], &c, 1), 1);
  assert_int_equal(c, 'y');
  /* Another state directory, the same name and namespace: refused, naming the other. */
  idgen__segment_backend *b = open_dir(other);
  assert_int_equal(idgen__segment_file_start(b, ns, "orders", 1), IDGEN_ECONFLICT);
  char want[400];
  snprintf(want, sizeof want, "served on this host by pid %ld from state dir %s;",
           (long)pid, dir);
  if (!strstr(b->why, want))
    print_error("why: %s\nwant: %s\n", b->why, want);
  assert_non_null(strstr(b->why, want));
  idgen__segment_backend_free(b);
  char path[400];
  snprintf(path, sizeof path, "%s/segment-orders", other);
  assert_int_equal(access(path, F_OK), -1); /* nothing made beside it */
  /* init there is refused as well. */
  b = open_dir(other);
  assert_int_equal(idgen__segment_file_claim(b, ns, "orders"), IDGEN_ECONFLICT);
  idgen__segment_backend_free(b);
  /* The same directory shares the file; so does its file named as a path. */
  b = open_dir(dir);
  assert_int_equal(idgen__segment_file_start(b, ns, "orders", 1), 1);
  idgen__segment_backend_free(b);
  snprintf(path, sizeof path, "%s/segment-orders", dir);
  b = open_dir(path);
  assert_int_equal(idgen__segment_file_start(b, ns, "orders", 0), 1);
  idgen__segment_backend_free(b);
  /* Many starts of sharers, each probing the child once: none is refused. */
  for (int i = 0; i < 200; i++) {
    b = open_dir(dir);
    assert_int_equal(idgen__segment_file_start(b, ns, "orders", 1), 1);
    idgen__segment_backend_free(b);
  }
  /* Another namespace is another claim. */
  char ns2[80];
  snprintf(ns2, sizeof ns2, "%s-2", ns);
  b = open_dir(other);
  assert_int_equal(idgen__segment_file_start(b, ns2, "orders", 1), 0);
  idgen__segment_backend_free(b);
  /* Once the other process is gone, the claim is free. */
  close(done[1]);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  b = open_dir(other);
  assert_int_equal(idgen__segment_file_start(b, ns, "orders", 1), 1);
  idgen__segment_backend_free(b);
  close(ready[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_crash_between_steps, setup, teardown),
      cmocka_unit_test_setup_teardown(test_init_makes_only_what_is_not_there, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_claim_across_processes, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
