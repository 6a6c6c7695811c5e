/* test_segment.c: the segment generator on a counter in memory and a fake clock (blocks,
 * the prefetch point, step adaptation, a backend going down and coming back, a counter
 * that goes back), the file backend on a real directory, and every backend's DSN
 * checks (no server is contacted by open). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "idgen.h"
#include "fake_clock.h"
#include "segment/segment.h"
#include "segment_mem.h"

#define MINUTE_NS (INT64_C(60) * 1000000000)
#define T0_NS INT64_C(1780272000000000000) /* 2026-06-01 */

/* A generator in manual mode on a counter in memory and a fake clock. */
typedef struct fixture {
  mem_backend m;
  idgen_clock_fake clock;
  idgen__segment *seg;
} fixture;

static void make(fixture *f, uint64_t step, uint64_t max_step) {
  mem_setup(&f->m);
  idgen_clock_fake_init(&f->clock, T0_NS);
  idgen__segment_config c;
  idgen__segment_config_init(&c, "orders", &f->m.base, &f->clock.base);
  c.step = step;
  c.max_step = max_step;
  c.manual = 1;
  f->seg = NULL;
  char err[256];
  int rc = idgen__segment_new(&f->seg, &c, err, sizeof err);
  if (rc)
    print_error("new: %s\n", err);
  assert_int_equal(rc, 0);
}

/* Hands out what is left of the current block. */
static void use_up(idgen__segment *seg) {
  idgen__segment_stats s;
  idgen__segment_stats_get(seg, &s);
  uint64_t v;
  for (uint64_t i = 0; i < s.current_left; i++)
    assert_int_equal(idgen__segment_next(seg, &v), 0);
}

static void test_consecutive_across_blocks(void **state) {
  (void)state;
  fixture f;
  make(&f, 10, 10);
  idgen__segment *seg = f.seg;
  for (uint64_t want = 1; want <= 95; want++) {
    uint64_t v = 0;
    assert_int_equal(idgen__segment_next(seg, &v), 0);
    assert_int_equal(v, want);
  }
  idgen__segment_stats s;
  idgen__segment_stats_get(seg, &s);
  assert_int_equal(s.issued, 95);
  assert_int_equal(s.current_left, 5);
  assert_int_equal(s.blocks_fetched, 10); /* each fetched inline: nobody prefetched */
  assert_int_equal(s.waits, 10);
  assert_int_equal(s.last_max, 100);
  idgen__segment_free(seg);
}

/* The next block is fetched once the current one is prefetch_pct used, not before. */
static void test_prefetch_point(void **state) {
  (void)state;
  fixture f;
  make(&f, 1000, 1000);
  idgen__segment *seg = f.seg;
  mem_backend *m = &f.m;
  uint64_t v;
  assert_int_equal(idgen__segment_next(seg, &v), 0); /* first block, fetched inline */
  assert_int_equal(m->calls, 1);
  for (int i = 1; i < 199; i++)
    assert_int_equal(idgen__segment_next(seg, &v), 0);
  assert_int_equal(idgen__segment_run_fetcher(seg), 0); /* 199 used: not due */
  assert_int_equal(idgen__segment_next(seg, &v), 0);
  assert_int_equal(v, 200);
  assert_int_equal(idgen__segment_run_fetcher(seg), 1); /* 200 used: due */
  assert_int_equal(idgen__segment_run_fetcher(seg), 0); /* one buffered block at most */
  idgen__segment_stats s;
  idgen__segment_stats_get(seg, &s);
  assert_int_equal(s.current_left, 800);
  assert_int_equal(s.next_left, 1000);
  assert_int_equal(s.waits, 1);
  /* the buffered block follows without a wait */
  uint64_t ids[900];
  assert_int_equal(idgen__segment_next_batch(seg, ids, 900), 900);
  assert_int_equal(ids[0], 201);
  assert_int_equal(ids[899], 1100);
  idgen__segment_stats_get(seg, &s);
  assert_int_equal(s.waits, 1);
  assert_int_equal(s.next_left, 0);
  assert_int_equal(m->calls, 2);
  idgen__segment_free(seg);
}

/* Leaf's rule: a block that lasts less than the period doubles the step (to max_step),
 * one that lasts more than twice the period halves it (to step). */
static void test_step_adapts(void **state) {
  (void)state;
  fixture f;
  make(&f, 100, 1600);
  idgen__segment *seg = f.seg;
  mem_backend *m = &f.m;
  uint64_t v;
  /* Each block used up within a minute, and the next one fetched (by the call that
   * finds none left): 100, 200, 400, 800, 1600, 1600. */
  assert_int_equal(idgen__segment_next(seg, &v), 0);
  for (int block = 1; block < 6; block++) {
    idgen_clock_fake_advance(&f.clock, MINUTE_NS);
    use_up(seg);
    assert_int_equal(idgen__segment_next(seg, &v), 0);
  }
  assert_int_equal(m->calls, 6);
  const uint64_t growing[] = {100, 200, 400, 800, 1600, 1600};
  for (int i = 0; i < 6; i++)
    assert_int_equal(m->steps[i], growing[i]);
  /* 20 minutes a block: between the period and twice it, the step stays */
  use_up(seg);
  idgen_clock_fake_advance(&f.clock, 20 * MINUTE_NS);
  assert_int_equal(idgen__segment_next(seg, &v), 0);
  assert_int_equal(m->steps[6], 1600);
  /* 31 minutes a block: halves, down to step and no further */
  const uint64_t shrinking[] = {800, 400, 200, 100, 100};
  for (int i = 0; i < 5; i++) {
    use_up(seg);
    idgen_clock_fake_advance(&f.clock, 31 * MINUTE_NS);
    assert_int_equal(idgen__segment_next(seg, &v), 0);
    assert_int_equal(m->steps[7 + i], shrinking[i]);
  }
  idgen__segment_stats s;
  idgen__segment_stats_get(seg, &s);
  assert_int_equal(s.step, 100);
  idgen__segment_free(seg);
}

/* Down: the buffered numbers are served, then a clear refusal (no call to the backend
 * before the retry pause ends), then it recovers by itself. */
static void test_backend_down_and_back(void **state) {
  (void)state;
  fixture f;
  make(&f, 100, 100);
  idgen__segment *seg = f.seg;
  mem_backend *m = &f.m;
  uint64_t v, last = 0;
  for (int i = 0; i < 20; i++)
    assert_int_equal(idgen__segment_next(seg, &v), 0);
  assert_int_equal(idgen__segment_run_fetcher(seg), 1); /* 100 more buffered */
  atomic_store(&m->fail, IDGEN_EUNAVAIL);
  for (int i = 20; i < 200; i++) { /* 80 left of the first block, 100 buffered */
    assert_int_equal(idgen__segment_next(seg, &v), 0);
    assert_true(v > last);
    last = v;
  }
  assert_int_equal(last, 200);
  assert_int_equal(idgen__segment_run_fetcher(seg), IDGEN_EUNAVAIL); /* the prefetch */
  int calls = m->calls;
  assert_int_equal(idgen__segment_next(seg, &v), IDGEN_EBACKEND);
  assert_int_equal(idgen__segment_next(seg, &v), IDGEN_EBACKEND);
  assert_int_equal(idgen__segment_run_fetcher(seg), 0); /* the retry pause */
  assert_int_equal(m->calls, calls);
  char why[256];
  idgen__segment_last_error(seg, why, sizeof why);
  assert_string_equal(why, "mem: down (-1041)");
  idgen__segment_stats s;
  idgen__segment_stats_get(seg, &s);
  assert_int_equal(s.refused, 2);
  assert_int_equal(s.backend_ok, 0);
  assert_int_equal(s.ready, 0);
  assert_true(s.backend_errors >= 1);
  /* still down after the pause: one more try, one more error */
  idgen_clock_fake_advance(&f.clock, 1000000000);
  assert_int_equal(idgen__segment_run_fetcher(seg), IDGEN_EUNAVAIL);
  /* back */
  atomic_store(&m->fail, 0);
  assert_int_equal(idgen__segment_next(seg, &v), IDGEN_EBACKEND); /* still in the pause */
  idgen_clock_fake_advance(&f.clock, 1000000000);
  assert_int_equal(idgen__segment_run_fetcher(seg), 1);
  assert_int_equal(idgen__segment_next(seg, &v), 0);
  assert_int_equal(v, 201);
  idgen__segment_last_error(seg, why, sizeof why);
  assert_string_equal(why, "");
  idgen__segment_stats_get(seg, &s);
  assert_int_equal(s.ready, 1);
  assert_int_equal(s.backend_ok, 1);
  idgen__segment_free(seg);
}

/* A backend whose counter went back (a restored backup) is refused, not served. */
static void test_counter_going_back_is_refused(void **state) {
  (void)state;
  fixture f;
  make(&f, 10, 10);
  idgen__segment *seg = f.seg;
  mem_backend *m = &f.m;
  uint64_t v;
  for (int i = 0; i < 10; i++)
    assert_int_equal(idgen__segment_next(seg, &v), 0);
  m->max = 5; /* next block 6..15: overlaps what was handed out */
  assert_int_equal(idgen__segment_next(seg, &v), IDGEN_EBACKEND);
  char why[256];
  idgen__segment_last_error(seg, why, sizeof why);
  assert_non_null(strstr(why, "block 6-15 of 'orders' is not above the last number leased "
                              "(10): was the counter reset?"));
  idgen__segment_free(seg);
}

/* ...and for good: every retry takes a block, so the counter climbs back past this
 * generator's floor into numbers that other processes handed out above it. */
static void test_counter_going_back_stays_refused(void **state) {
  (void)state;
  fixture f;
  make(&f, 10, 10);
  idgen__segment *seg = f.seg;
  mem_backend *m = &f.m;
  uint64_t v;
  for (int i = 0; i < 10; i++)
    assert_int_equal(idgen__segment_next(seg, &v), 0);
  m->max = 5;
  assert_int_equal(idgen__segment_next(seg, &v), IDGEN_EBACKEND);
  int calls = m->calls;
  m->max = 1000; /* climbed past the floor by other processes' tries */
  idgen_clock_fake_advance(&f.clock, 60 * INT64_C(1000000000));
  assert_int_equal(idgen__segment_run_fetcher(seg), 0); /* nothing due, ever */
  assert_int_equal(idgen__segment_next(seg, &v), IDGEN_EBACKEND);
  assert_int_equal(m->calls, calls);
  idgen__segment_stats s;
  idgen__segment_stats_get(seg, &s);
  assert_int_equal(s.ready, 0);
  char why[256];
  idgen__segment_last_error(seg, why, sizeof why);
  assert_non_null(strstr(why, "was the counter reset?"));
  idgen__segment_free(seg);
}

/* Blocks with a stride (Flickr's servers counting apart): floors are passed down, and
 * the numbers rise by the stride. */
static void test_stride_and_floor(void **state) {
  (void)state;
  fixture f;
  make(&f, 3, 3);
  idgen__segment *seg = f.seg;
  mem_backend *m = &f.m;
  m->stride = 2;
  m->max = 1;
  uint64_t ids[7];
  assert_int_equal(idgen__segment_next_batch(seg, ids, 7), 7);
  const uint64_t want[] = {3, 5, 7, 9, 11, 13, 15};
  for (int i = 0; i < 7; i++)
    assert_int_equal(ids[i], want[i]);
  assert_int_equal(m->floors[0], 0);
  assert_int_equal(m->floors[1], 7);
  assert_int_equal(m->floors[2], 13);
  idgen__segment_free(seg);
}

static void test_batch_partial_on_refusal(void **state) {
  (void)state;
  fixture f;
  make(&f, 10, 10);
  idgen__segment *seg = f.seg;
  mem_backend *m = &f.m;
  uint64_t ids[25];
  assert_int_equal(idgen__segment_next_batch(seg, ids, 5), 5);
  atomic_store(&m->fail, IDGEN_ETIMEDOUT);
  assert_int_equal(idgen__segment_next_batch(seg, ids, 25), 5); /* the block's last 5 */
  assert_int_equal(ids[4], 10);
  assert_int_equal(idgen__segment_next_batch(seg, ids, 25), IDGEN_EBACKEND);
  idgen__segment_free(seg);
}

static void test_config_errors(void **state) {
  (void)state;
  mem_backend m;
  mem_setup(&m);
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, T0_NS);
  idgen__segment_config c;
  idgen__segment *seg = NULL;
  char err[256];
  char long_name[IDGEN_SEGMENT_NAME_MAX + 2];
  memset(long_name, 'a', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  const char *bad_names[] = {"", ".hidden", "a/b", "x y", long_name};
  for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
    idgen__segment_config_init(&c, bad_names[i], &m.base, &clock.base);
    assert_int_equal(idgen__segment_new(&seg, &c, err, sizeof err), IDGEN_EINVAL);
    assert_non_null(strstr(err, "segment name"));
  }
  idgen__segment_config_init(&c, "orders", &m.base, &clock.base);
  c.step = 0;
  assert_int_equal(idgen__segment_new(&seg, &c, err, sizeof err), IDGEN_EINVAL);
  assert_string_equal(err, "segment 'orders': step 0 is outside 1-1073741824");
  c.step = 100;
  c.max_step = 50;
  assert_int_equal(idgen__segment_new(&seg, &c, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "max_step 50 is outside step (100)"));
  c.max_step = 100;
  c.prefetch_pct = 101;
  assert_int_equal(idgen__segment_new(&seg, &c, err, sizeof err), IDGEN_EINVAL);
  c.prefetch_pct = 20;
  c.backend = NULL;
  assert_int_equal(idgen__segment_new(&seg, &c, err, sizeof err), IDGEN_EINVAL);
  assert_null(seg);
  assert_string_equal(idgen_strerror(IDGEN_EBACKEND),
                      "segment backend unavailable and no buffered numbers left");
  assert_string_equal(idgen_err_name(IDGEN_EBACKEND), "IDGEN_EBACKEND");
}

/* The fetcher thread: the first block arrives by itself, and later ones ahead of use. */
static void test_thread_mode(void **state) {
  (void)state;
  mem_backend m;
  mem_setup(&m);
  idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen__segment_config c;
  idgen__segment_config_init(&c, "orders", &m.base, &clock.base);
  c.step = 1000;
  idgen__segment *seg = NULL;
  char err[256];
  assert_int_equal(idgen__segment_new(&seg, &c, err, sizeof err), 0);
  assert_int_equal(idgen__segment_wait_ready(seg, 10000), 0);
  uint64_t last = 0, v;
  for (int i = 0; i < 100000; i++) {
    assert_int_equal(idgen__segment_next(seg, &v), 0);
    assert_true(v > last);
    last = v;
  }
  idgen__segment_stats s;
  idgen__segment_stats_get(seg, &s);
  assert_int_equal(s.issued, 100000);
  assert_true(s.step > 1000); /* blocks last far less than 15 minutes here */
  assert_int_equal(s.fetch_latency.count, s.blocks_fetched);
  idgen__segment_free(seg);
}

/* ---- the file backend ---- */

static char dir[256];

static int file_setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/idgen-test-segment-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int file_teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static idgen__segment_backend *open_backend(const char *kind, const char *dsn) {
  idgen__segment_backend *b = NULL;
  char err[256];
  int rc = idgen__segment_backend_open(&b, kind, dsn, 0, err, sizeof err);
  if (rc)
    print_error("open: %s\n", err);
  assert_int_equal(rc, 0);
  return b;
}

static void test_file_backend(void **state) {
  (void)state;
  idgen__segment_backend *a = open_backend("file", dir), *b = open_backend("file", dir);
  idgen__segment_block blk;
  assert_int_equal(a->vtable->fetch(a, "orders", 10, 0, &blk), -ENOENT);
  assert_non_null(strstr(a->why, "run 'idgen segment init' first"));
  assert_int_equal(a->vtable->init(a, "orders", 10, 0, 0), 0);
  assert_int_equal(b->vtable->init(b, "orders", 10, 0, 0), 1); /* idempotent */
  /* two openers of one file get disjoint blocks, one after the other */
  assert_int_equal(a->vtable->fetch(a, "orders", 10, 0, &blk), 0);
  assert_int_equal(blk.max, 10);
  assert_int_equal(blk.count, 10);
  assert_int_equal(blk.stride, 1);
  assert_int_equal(b->vtable->fetch(b, "orders", 5, 0, &blk), 0);
  assert_int_equal(blk.max, 15);
  assert_int_equal(a->vtable->fetch(a, "orders", 10, 0, &blk), 0);
  assert_int_equal(blk.max, 25);
  char path[300], buf[128];
  snprintf(path, sizeof path, "%s/segment-orders", dir);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  assert_string_equal(buf, "00000000000000000025 orders\n");
  /* a damaged file stops the sequence rather than restarting it */
  f = fopen(path, "w");
  fputs("25 orders\n", f);
  fclose(f);
  assert_int_equal(a->vtable->fetch(a, "orders", 10, 0, &blk), IDGEN_EPROTO);
  assert_non_null(strstr(a->why, "not a segment record of 'orders'"));
  /* near the end of the numbers */
  f = fopen(path, "w");
  fputs("09223372036854775800 orders\n", f);
  fclose(f);
  assert_int_equal(a->vtable->fetch(a, "orders", 10, 0, &blk), IDGEN_ERANGE);
  assert_int_equal(a->vtable->fetch(a, "orders", 7, 0, &blk), 0);
  assert_true(blk.max == INT64_MAX);
  idgen__segment_backend_free(a);
  idgen__segment_backend_free(b);
  /* a DSN naming a file: it holds one name, and says so */
  snprintf(path, sizeof path, "%s/one.seq", dir);
  a = open_backend("file", path);
  assert_int_equal(a->vtable->init(a, "events", 10, 0, 0), 0);
  assert_int_equal(a->vtable->fetch(a, "events", 10, 0, &blk), 0);
  assert_int_equal(a->vtable->fetch(a, "orders", 10, 0, &blk), IDGEN_EPROTO);
  idgen__segment_backend_free(a);
}

static void test_open_errors(void **state) {
  (void)state;
  static const struct {
    const char *kind, *dsn, *want;
  } cases[] = {
      {"memcached", "x",
       "unknown segment backend 'memcached' (file, postgres, etcd, mariadb, redis)"},
      {"redis", "x",
       "segment redis DSN: 'x': not a redis:// or rediss:// URL "
       "(redis[s]://[user:pass@]HOST:PORT[/db])"},
      {"redis", "redis://h:0", "segment redis DSN: 'redis://h:0': bad port "
                               "(redis[s]://[user:pass@]HOST:PORT[/db])"},
      {"file", "", "segment backend file: no DSN given"},
      {"file", "/nonexistent-idgen/dir/file",
       "segment file /nonexistent-idgen/dir/file: directory /nonexistent-idgen/dir does "
       "not exist"},
      {"postgres", "host=127.0.0.1 port",
       "segment postgres DSN: missing \"=\" after "
       "\"port\" in connection info string"},
      {"postgres", "nosuchkey=1",
       "segment postgres DSN: invalid connection option "
       "\"nosuchkey\""},
      {"etcd", "127.0.0.1:2379",
       "segment etcd DSN: '127.0.0.1:2379' is not an http:// or "
       "https:// URL"},
      {"etcd", ",", "segment etcd DSN: no endpoint given"},
      {"mariadb", "database=test", "segment mariadb DSN: no servers=HOST:PORT[,HOST:PORT]"},
      {"mariadb", "servers=127.0.0.1",
       "segment mariadb DSN: server '127.0.0.1' is not "
       "HOST:PORT"},
      {"mariadb", "servers=127.0.0.1:70000",
       "segment mariadb DSN: server "
       "'127.0.0.1:70000' is not HOST:PORT"},
      {"postgres", "host=127.0.0.1 sslmode=verify_full",
       "segment postgres DSN: sslmode 'verify_full' is not one of disable, allow, prefer, "
       "require, verify-ca, verify-full"},
      {"postgres", "postgresql://h/db?ssl_max_protocol_version=TLSv2",
       "segment postgres DSN: ssl_max_protocol_version 'TLSv2' is not one of TLSv1, "
       "TLSv1.1, TLSv1.2, TLSv1.3"},
      {"mariadb", "servers=h:1 colour=blue",
       "segment mariadb DSN: unknown key 'colour' "
       "(servers, database, user, password, table, ssl-ca, ssl-cert, ssl-key, "
       "ssl-verify)"},
      {"mariadb", "servers=h:1 ssl-verify=no",
       "segment mariadb DSN: bad ssl-verify 'no' (on or off)"},
      {"mariadb", "servers=h:1 ssl-ca=", "segment mariadb DSN: bad ssl-ca ''"},
      {"mariadb", "servers=h:1 ssl-key=/k.pem",
       "segment mariadb DSN: ssl-cert and ssl-key go together"},
      {"mariadb", "servers=h:1 table=a;b", "segment mariadb DSN: bad table 'a;b'"},
      {"mariadb", "servers=h:1 nokey", "segment mariadb DSN: 'nokey' is not KEY=VALUE"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    idgen__segment_backend *b = NULL;
    char err[256] = "";
    assert_int_equal(
        idgen__segment_backend_open(&b, cases[i].kind, cases[i].dsn, 0, err, sizeof err),
        IDGEN_EINVAL);
    assert_null(b);
    assert_string_equal(err, cases[i].want);
  }
  /* good DSNs open without a server behind them */
  const char *good[][2] = {
      {"postgres", "host=127.0.0.1 port=1 dbname=x"},
      {"postgres", "host=h sslmode=verify-full sslrootcert=/ca.pem sslcert=/c sslkey=/k"},
      {"postgres", "postgresql://h/db?sslmode=require&ssl_min_protocol_version=tlsv1.2"},
      {"etcd", "http://127.0.0.1:1,http://127.0.0.1:2/"},
      {"mariadb", "servers=127.0.0.1:1,127.0.0.1:2 table=t64 password=p;w"},
      {"mariadb", "servers=h:1 ssl-ca=/ca.pem ssl-cert=/c.pem ssl-key=/c.key"},
      {"mariadb", "servers=h:1 ssl-verify=off"},
      {"mariadb", "servers=h:1 password="}, /* none, as before the TLS keys */
      {"redis", "redis://u:p@127.0.0.1:1/2"}};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    idgen__segment_backend_free(open_backend(good[i][0], good[i][1]));
}

/* A backend that is not there fails its fetch with EUNAVAIL and one line. */
static void test_unreachable_backends(void **state) {
  (void)state;
  const char *cases[][2] = {
      {"postgres", "host=127.0.0.1 port=1 dbname=x connect_timeout=2"},
      {"etcd", "http://127.0.0.1:1"},
      {"mariadb", "servers=127.0.0.1:1,127.0.0.1:2"},
  };
  for (size_t i = 0; i < 3; i++) {
    idgen__segment_backend *b = open_backend(cases[i][0], cases[i][1]);
    idgen__segment_block blk;
    assert_int_equal(b->vtable->fetch(b, "orders", 10, 0, &blk), IDGEN_EUNAVAIL);
    assert_null(strchr(b->why, '\n'));
    assert_true(strlen(b->why) > 10);
    idgen__segment_backend_free(b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_consecutive_across_blocks),
      cmocka_unit_test(test_prefetch_point),
      cmocka_unit_test(test_step_adapts),
      cmocka_unit_test(test_backend_down_and_back),
      cmocka_unit_test(test_counter_going_back_is_refused),
      cmocka_unit_test(test_counter_going_back_stays_refused),
      cmocka_unit_test(test_stride_and_floor),
      cmocka_unit_test(test_batch_partial_on_refusal),
      cmocka_unit_test(test_config_errors),
      cmocka_unit_test(test_thread_mode),
      cmocka_unit_test_setup_teardown(test_file_backend, file_setup, file_teardown),
      cmocka_unit_test_setup_teardown(test_open_errors, file_setup, file_teardown),
      cmocka_unit_test(test_unreachable_backends),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
