/* test_fork.c: a forked child never issues the parent's IDs: its inherited generator
 * refuses with IDGEN_EFORKED until armed in the child, and its inherited keeper and lease
 * leave the parent's worker ID alone; a generator in shared memory (process_shared) is
 * one for both, and both issue from it. Each test forks; the child reports through a
 * pipe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "idgen.h"
#include "idgen/lease.h"

#define DRAW 20000 /* IDs each side draws at once: several milliseconds' worth */

/* What a child reports: its first result, how many IDs it issued (they follow), and the
 * result and worker of a draw after it armed the generator itself. */
typedef struct child_report {
  int stats_refusal; /* what the stats said before the first call */
  int first_rc;
  int rearm_rc;
  uint64_t rearm_worker;
  uint64_t n;
} child_report;

static void write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w <= 0)
      _exit(3);
    p += w;
    len -= (size_t)w;
  }
}

static int read_all(int fd, void *buf, size_t len) {
  char *p = buf;
  while (len > 0) {
    ssize_t r = read(fd, p, len);
    if (r <= 0)
      return -1;
    p += r;
    len -= (size_t)r;
  }
  return 0;
}

/* Draws up to n IDs into ids, stopping at the first error; returns how many. */
static uint64_t draw(idgen_gen *gen, uint64_t *ids, uint64_t n, int *first_rc) {
  uint64_t got = 0;
  *first_rc = 0;
  while (got < n) {
    int rc = idgen_gen_next(gen, &ids[got]);
    if (rc) {
      *first_rc = rc;
      break;
    }
    got++;
  }
  return got;
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

/* IDs present in both sorted arrays. */
static uint64_t common(const uint64_t *a, uint64_t na, const uint64_t *b, uint64_t nb) {
  uint64_t i = 0, j = 0, n = 0;
  while (i < na && j < nb) {
    if (a[i] < b[j])
      i++;
    else if (a[i] > b[j])
      j++;
    else
      n++, i++, j++;
  }
  return n;
}

#define NO_REARM UINT64_MAX

/* Forks; the child draws DRAW IDs from gen, then (unless rearm_worker is NO_REARM) arms
 * gen with rearm_worker and draws one, and reports. The parent draws DRAW IDs at the same
 * time. Returns the IDs the two processes share and fills *report. */
static uint64_t fork_and_draw(idgen_gen *gen, uint64_t rearm_worker, child_report *report) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  uint64_t *mine = calloc(DRAW, sizeof *mine), *theirs = calloc(DRAW, sizeof *theirs);
  assert_non_null(mine);
  assert_non_null(theirs);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    child_report r;
    memset(&r, 0, sizeof r);
    idgen_gen_stats st;
    idgen_gen_stats_get(gen, &st);
    r.stats_refusal = st.refusal;
    r.n = draw(gen, theirs, DRAW, &r.first_rc);
    uint64_t id;
    if (rearm_worker != NO_REARM) {
      r.rearm_rc = idgen_gen_arm(gen, rearm_worker, 0, IDGEN_NO_CAP, IDGEN_NO_DEADLINE);
      if (r.rearm_rc == 0)
        r.rearm_rc = idgen_gen_next(gen, &id);
    }
    if (rearm_worker != NO_REARM && r.rearm_rc == 0) {
      idgen_parts p;
      idgen_decompose(idgen_gen_layout(gen), id, &p);
      r.rearm_worker = p.worker;
    }
    write_all(fds[1], &r, sizeof r);
    write_all(fds[1], theirs, r.n * sizeof *theirs);
    _exit(0);
  }
  close(fds[1]);
  int rc = 0;
  uint64_t n = draw(gen, mine, DRAW, &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(read_all(fds[0], report, sizeof *report), 0);
  assert_true(report->n <= DRAW);
  assert_int_equal(read_all(fds[0], theirs, report->n * sizeof *theirs), 0);
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  qsort(mine, n, sizeof *mine, cmp_u64);
  qsort(theirs, report->n, sizeof *theirs, cmp_u64);
  uint64_t dups = common(mine, n, theirs, report->n);
  print_message("fork: parent issued %llu, child issued %llu, duplicates %llu\n",
                (unsigned long long)n, (unsigned long long)report->n,
                (unsigned long long)dups);
  free(mine);
  free(theirs);
  return dups;
}

/* An unfenced generator armed with worker 3 before the fork: parent and child would
 * collide whatever the provider. */
static void test_gen_child_refuses_until_armed(void **state) {
  (void)state;
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen_gen_config c;
  idgen_gen_config_init(&c, &clock.base);
  c.worker = 3;
  idgen_gen *gen = NULL;
  assert_int_equal(idgen_gen_new(&gen, &c), 0);
  uint64_t id;
  assert_int_equal(idgen_gen_next(gen, &id), 0);
  child_report r;
  uint64_t dups = fork_and_draw(gen, 4, &r);
  assert_int_equal(dups, 0);
  assert_int_equal(r.stats_refusal, IDGEN_EFORKED);
  assert_int_equal(r.first_rc, IDGEN_EFORKED);
  assert_int_equal(r.n, 0);
  assert_int_equal(r.rearm_rc, 0); /* armed in the child, it issues */
  assert_int_equal(r.rearm_worker, 4);
  /* the parent is not affected */
  assert_int_equal(idgen_gen_next(gen, &id), 0);
  idgen_gen_stats st;
  idgen_gen_stats_get(gen, &st);
  assert_int_equal(st.refusal, 0);
  idgen_gen_free(gen);
}

/* ---- a keeper and a file lease across fork() -------------------------------------- */

static char dir[256], ns[64];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/idgen-test-fork-XXXXXX");
  snprintf(ns, sizeof ns, "test-fork-%ld", (long)getpid());
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

typedef struct held {
  idgen_lease_config cfg;
  idgen_lease *lease;
  idgen_keeper *keeper;
} held;

/* A file lease in dir (HWM every 50 ms, cap now + 100 ms: a fresh file waits 150 ms)
 * and a keeper arming gen; waits until it holds. */
static int hold(held *h, idgen_gen *gen) {
  idgen_lease_config_init(&h->cfg);
  snprintf(h->cfg.state_dir, sizeof h->cfg.state_dir, "%s", dir);
  snprintf(h->cfg.ns, sizeof h->cfg.ns, "%s", ns);
  h->cfg.ahead_ms = 100;
  h->cfg.hwm_interval_ms = 50;
  char err[256];
  idgen_layout snowflake;
  idgen_layout_preset("snowflake", &snowflake);
  int rc = idgen_lease_open(&h->lease, &h->cfg, &snowflake, err, sizeof err);
  if (rc)
    return rc;
  idgen_keeper_config kc;
  idgen_keeper_config_from(&kc, &h->cfg);
  kc.lease = h->lease;
  kc.gen = gen;
  if ((rc = idgen_keeper_new(&h->keeper, &kc)))
    return rc;
  return idgen_keeper_wait_ready(h->keeper, 20000);
}

/* An unarmed generator on clock, armed by a keeper that holds a file lease. */
static idgen_gen *held_gen(idgen_clock_mono *clock, held *h) {
  idgen_clock_mono_init(clock);
  idgen_gen_config gc;
  idgen_gen_config_init(&gc, &clock->base);
  gc.armed = 0;
  idgen_gen *gen = NULL;
  assert_int_equal(idgen_gen_new(&gen, &gc), 0);
  memset(h, 0, sizeof *h);
  assert_int_equal(hold(h, gen), 0);
  return gen;
}

typedef struct keeper_report {
  int gen_rc, stop_rc, write_rc, release_rc, new_rc;
  uint64_t new_worker;
} keeper_report;

/* The child of a process whose keeper holds worker 0: everything inherited refuses,
 * freeing it leaves the parent's ID alone, and a lease of its own wins another ID. */
static void child_with_keeper(int fd, idgen_gen *gen, held *parent) {
  keeper_report r;
  memset(&r, 0, sizeof r);
  uint64_t id;
  r.gen_rc = idgen_gen_next(gen, &id);
  r.stop_rc = idgen_keeper_stop(parent->keeper);
  r.write_rc = idgen_lease_write_hwm(parent->lease, 1);
  r.release_rc = idgen_lease_release(parent->lease, 1);
  idgen_keeper_free(parent->keeper);
  idgen_lease_free(parent->lease);
  held mine;
  memset(&mine, 0, sizeof mine);
  r.new_rc = hold(&mine, gen);
  if (r.new_rc == 0)
    r.new_rc = idgen_gen_next(gen, &id);
  if (r.new_rc == 0) {
    idgen_parts p;
    idgen_decompose(idgen_gen_layout(gen), id, &p);
    r.new_worker = p.worker;
  }
  idgen_keeper_free(mine.keeper);
  idgen_lease_free(mine.lease);
  write_all(fd, &r, sizeof r);
  _exit(0);
}

static void test_keeper_and_lease_in_child(void **state) {
  (void)state;
  idgen_clock_mono clock;
  held parent;
  idgen_gen *gen = held_gen(&clock, &parent);
  uint64_t id;
  assert_int_equal(idgen_gen_next(gen, &id), 0);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    child_with_keeper(fds[1], gen, &parent);
  }
  close(fds[1]);
  keeper_report r;
  assert_int_equal(read_all(fds[0], &r, sizeof r), 0);
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(r.gen_rc, IDGEN_EFORKED);
  assert_int_equal(r.stop_rc, IDGEN_EFORKED);
  assert_int_equal(r.write_rc, IDGEN_EFORKED);
  assert_int_equal(r.release_rc, IDGEN_EFORKED);
  assert_int_equal(r.new_rc, 0);
  assert_int_equal(r.new_worker, 1); /* the parent still holds worker 0 */
  /* The parent goes on as it was, still holding worker 0. */
  assert_int_equal(idgen_keeper_state_get(parent.keeper), IDGEN_KEEPER_HELD);
  assert_int_equal(idgen_gen_next(gen, &id), 0);
  idgen_parts p;
  assert_int_equal(idgen_decompose(idgen_gen_layout(gen), id, &p), 0);
  assert_int_equal(p.worker, 0);
  idgen_keeper_stats st;
  int64_t writes = 0;
  idgen_keeper_stats_get(parent.keeper, &st);
  writes = (int64_t)st.hwm_writes;
  for (int i = 0; i < 200 && (int64_t)st.hwm_writes <= writes + 1; i++) {
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
    idgen_keeper_stats_get(parent.keeper, &st);
  }
  assert_true((int64_t)st.hwm_writes > writes + 1); /* its file is still its own */
  assert_int_equal(idgen_keeper_stop(parent.keeper), 0);
  idgen_keeper_free(parent.keeper);
  idgen_lease_free(parent.lease);
  idgen_gen_free(gen);
}

/* The issue's case: fork after the keeper is ready, and both processes issue. */
static void test_file_lease_fork_duplicates(void **state) {
  (void)state;
  idgen_clock_mono clock;
  held parent;
  idgen_gen *gen = held_gen(&clock, &parent);
  child_report r;
  uint64_t dups = fork_and_draw(gen, 9, &r);
  assert_int_equal(dups, 0);
  assert_int_equal(r.first_rc, IDGEN_EFORKED);
  idgen_keeper_free(parent.keeper);
  idgen_lease_free(parent.lease);
  idgen_gen_free(gen);
}

/* ---- a generator in shared memory ------------------------------------------------- */

/* What PostgreSQL does: the clock and the generator in a MAP_SHARED mapping made before
 * the fork, with process_shared. Parent and child both issue, at once, from the one
 * state word: no refusal and no duplicate. */
static void test_shared_gen_issues_in_child(void **state) {
  (void)state;
  size_t clock_room =
      (sizeof(idgen_clock_mono) + IDGEN_GEN_ALIGN - 1) / IDGEN_GEN_ALIGN * IDGEN_GEN_ALIGN;
  size_t len = clock_room + idgen_gen_size();
  void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(map != MAP_FAILED);
  idgen_clock_mono *clock = map;
  idgen_clock_mono_init(clock);
  idgen_gen_config c;
  idgen_gen_config_init(&c, &clock->base);
  c.worker = 3;
  c.process_shared = 1;
  idgen_gen *gen = NULL;
  assert_int_equal(idgen_gen_init(&gen, (char *)map + clock_room, idgen_gen_size(), &c), 0);
  uint64_t id;
  assert_int_equal(idgen_gen_next(gen, &id), 0);
  child_report r;
  uint64_t dups = fork_and_draw(gen, NO_REARM, &r);
  assert_int_equal(dups, 0);
  assert_int_equal(r.stats_refusal, 0);
  assert_int_equal(r.first_rc, 0);
  assert_int_equal(r.n, DRAW);
  idgen_gen_stats st;
  idgen_gen_stats_get(gen, &st);
  assert_int_equal(st.issued, 1 + 2 * DRAW); /* one count for both processes */
  assert_int_equal(st.refused_forked, 0);
  assert_int_equal(munmap(map, len), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gen_child_refuses_until_armed),
      cmocka_unit_test_setup_teardown(test_keeper_and_lease_in_child, setup, teardown),
      cmocka_unit_test_setup_teardown(test_file_lease_fork_duplicates, setup, teardown),
      cmocka_unit_test(test_shared_gen_issues_in_child),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
