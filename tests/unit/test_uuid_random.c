/* test_uuid_random.c: the random sources: the buffered system CSPRNG (sizes, fork
 * safety of its buffer and of the generators) and the fake source. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "idgen.h"
#include "fake_clock.h"

static void test_system_sizes(void **state) {
  (void)state;
  idgen_random *rnd = NULL;
  assert_int_equal(idgen_random_system_new(&rnd), 0);
  static uint8_t a[100000], b[100000];
  /* Odd sizes across refills, a request larger than the buffer, and zero bytes. */
  size_t sizes[] = {0, 1, 7, 16, 4000, 4096, 5000, 100000, 3};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    assert_int_equal(idgen_random_fill(rnd, a, sizes[i]), 0);
    assert_int_equal(idgen_random_fill(rnd, b, sizes[i]), 0);
    if (sizes[i] >= 16)
      assert_memory_not_equal(a, b, sizes[i]);
    for (size_t k = sizes[i]; k < 64 && k < sizeof a; k++)
      assert_int_equal(a[k], 0); /* nothing written past the end */
  }
  /* 10^5 bytes: every byte value shows up. */
  assert_int_equal(idgen_random_fill(rnd, a, sizeof a), 0);
  int seen[256] = {0};
  for (size_t i = 0; i < sizeof a; i++)
    seen[a[i]] = 1;
  for (int v = 0; v < 256; v++)
    assert_int_equal(seen[v], 1);
  idgen_random_system_free(rnd);
  idgen_random_system_free(NULL);
  assert_int_equal(idgen_random_system_new(NULL), IDGEN_EINVAL);
}

/* Parent and child draw after a fork: the child must not reuse the parent's buffered
 * bytes, and a v7 / monotonic ULID generator copied into the child must not repeat the
 * parent's next values. */
static void test_fork(void **state) {
  (void)state;
  idgen_random *rnd = NULL;
  assert_int_equal(idgen_random_system_new(&rnd), 0);
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, 1700000000000LL * 1000000);
  idgen_uuid7_config cfg7 = {&clock.base, rnd};
  idgen_uuid7_gen *gen7 = NULL;
  assert_int_equal(idgen_uuid7_new(&gen7, &cfg7), 0);
  idgen_ulid_config cfgu = {&clock.base, rnd, 1};
  idgen_ulid_gen *genu = NULL;
  assert_int_equal(idgen_ulid_new(&genu, &cfgu), 0);
  uint8_t warm[16];
  idgen_uuid before7;
  idgen_ulid beforeu;
  assert_int_equal(idgen_random_fill(rnd, warm, sizeof warm), 0); /* buffer now full */
  assert_int_equal(idgen_uuid7_next(gen7, &before7), 0);
  assert_int_equal(idgen_ulid_next(genu, &beforeu), 0);

  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    uint8_t msg[48];
    idgen_uuid u7;
    idgen_ulid uu;
    int ok = idgen_random_fill(rnd, msg, 16) == 0 && idgen_uuid7_next(gen7, &u7) == 0 &&
             idgen_ulid_next(genu, &uu) == 0;
    memcpy(msg + 16, u7.b, 16);
    memcpy(msg + 32, uu.b, 16);
    ssize_t w = ok ? write(fds[1], msg, sizeof msg) : -1;
    _exit(w == (ssize_t)sizeof msg ? 0 : 1);
  }
  close(fds[1]);
  uint8_t mine[16];
  idgen_uuid my7;
  idgen_ulid myu;
  assert_int_equal(idgen_random_fill(rnd, mine, sizeof mine), 0);
  assert_int_equal(idgen_uuid7_next(gen7, &my7), 0);
  assert_int_equal(idgen_ulid_next(genu, &myu), 0);
  uint8_t theirs[48];
  size_t got = 0;
  while (got < sizeof theirs) {
    ssize_t r = read(fds[0], theirs + got, sizeof theirs - got);
    assert_true(r > 0);
    got += (size_t)r;
  }
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_memory_not_equal(mine, theirs, 16);
  assert_memory_not_equal(my7.b, theirs + 16, 16);
  assert_memory_not_equal(myu.b, theirs + 32, 16);
  /* The child's values still come after everything the generator issued before. */
  assert_true(memcmp(before7.b, theirs + 16, 16) < 0);
  assert_true(memcmp(beforeu.b, theirs + 32, 16) < 0);
  idgen_uuid7_free(gen7);
  idgen_ulid_free(genu);
  idgen_random_system_free(rnd);
}

static void test_fake(void **state) {
  (void)state;
  static const uint8_t pattern[3] = {1, 2, 3};
  idgen_random_fake f;
  idgen_random_fake_init(&f, pattern, sizeof pattern);
  uint8_t buf[8];
  assert_int_equal(idgen_random_fill(&f.base, buf, 5), 0);
  assert_memory_equal(buf, ((uint8_t[]){1, 2, 3, 1, 2}), 5);
  assert_int_equal(idgen_random_fill(&f.base, buf, 2), 0);
  assert_memory_equal(buf, ((uint8_t[]){3, 1}), 2);
  idgen_random_fake_rewind(&f);
  assert_int_equal(idgen_random_fill(&f.base, buf, 1), 0);
  assert_int_equal(buf[0], 1);
  atomic_store(&f.fail, -EIO);
  assert_int_equal(idgen_random_fill(&f.base, buf, 1), -EIO);
  assert_int_equal(f.pos, 1);
  /* The NULL stream: repeatable, seed-dependent. */
  uint8_t x[32], y[32];
  idgen_random_fake_init(&f, NULL, 0);
  assert_int_equal(idgen_random_fill(&f.base, x, sizeof x), 0);
  idgen_random_fake_rewind(&f);
  assert_int_equal(idgen_random_fill(&f.base, y, sizeof y), 0);
  assert_memory_equal(x, y, sizeof x);
  f.seed = 99;
  idgen_random_fake_rewind(&f);
  assert_int_equal(idgen_random_fill(&f.base, y, sizeof y), 0);
  assert_memory_not_equal(x, y, sizeof x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_system_sizes),
      cmocka_unit_test(test_fork),
      cmocka_unit_test(test_fake),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
