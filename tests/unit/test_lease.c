/* test_lease.c: the one-host providers (file, static, k8s), lease configuration and its
 * one-line errors, and the keeper arming a generator on a fake clock. */
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
#include "fake_clock.h"
#include "idgen/lease.h"
#include "lease/lease_internal.h"
#include "redis/url.h"

#define MS INT64_C(1000000)
#define T0_MS INT64_C(1780272000000) /* 2026-06-01 */

static char dir[256];
/* Worker IDs are claimed host-wide per namespace: a namespace of this test's own keeps
 * it apart from any other process on the host. */
static char ns[64];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/idgen-test-lease-XXXXXX");
  snprintf(ns, sizeof ns, "test-lease-%ld", (long)getpid());
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* A preset layout, by name. */
static const idgen_layout *layout_of(const char *name) {
  static idgen_layout l;
  assert_int_equal(idgen_layout_preset(name, &l), 0);
  return &l;
}

/* Opens the lease c configures under the named layout; it must open. */
static idgen_lease *open_config(const idgen_lease_config *c, const char *layout) {
  idgen_lease *l = NULL;
  char err[256];
  int rc = idgen_lease_open(&l, c, layout_of(layout), err, sizeof err);
  if (rc)
    print_error("open: %s\n", err);
  assert_int_equal(rc, 0);
  return l;
}

/* A lease of kind under snowflake; a file lease claims only 0..max_worker. */
static idgen_lease *open_kind(idgen_lease_kind kind, uint64_t max_worker) {
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  c.kind = kind;
  if (max_worker < 1023) {
    c.range_lo = 0;
    c.range_hi = (int64_t)max_worker;
  }
  snprintf(c.state_dir, sizeof c.state_dir, "%s", dir);
  snprintf(c.ns, sizeof c.ns, "%s", ns);
  c.worker_id = 7;
  c.pod_index = 2;
  c.worker_id_offset = 10;
  return open_config(&c, "snowflake");
}

static void test_file_smallest_free(void **state) {
  (void)state;
  idgen_lease *a = open_kind(IDGEN_LEASE_FILE, 2), *b = open_kind(IDGEN_LEASE_FILE, 2),
              *c = open_kind(IDGEN_LEASE_FILE, 2), *d = open_kind(IDGEN_LEASE_FILE, 2);
  idgen_lease_grant g;
  assert_int_equal(idgen_lease_acquire(a, &g), 0);
  assert_int_equal(g.worker, 0);
  assert_int_equal(g.fenced, 1);
  assert_int_equal(g.ttl_ms, 0);
  assert_int_equal(idgen_lease_acquire(b, &g), 0);
  assert_int_equal(g.worker, 1);
  assert_int_equal(idgen_lease_acquire(c, &g), 0);
  assert_int_equal(g.worker, 2);
  assert_int_equal(idgen_lease_acquire(d, &g), IDGEN_ENOWORKER);
  assert_non_null(
      strstr(idgen_lease_why(d), "all 3 worker IDs 0-2 (--worker-id-range) of namespace"));
  /* freeing b (as a dying process would) frees worker 1 and only it */
  assert_int_equal(idgen_lease_write_hwm(b, T0_MS + 3000), 0);
  idgen_lease_free(b);
  assert_int_equal(idgen_lease_acquire(d, &g), 0);
  assert_int_equal(g.worker, 1);
  assert_true(g.hwm_ms == T0_MS + 3000); /* the dead holder's cap */
  size_t n = 0;
  idgen_lease_holder hs[8];
  assert_int_equal(idgen_lease_holders(a, hs, 8, &n), 0);
  assert_int_equal(n, 3);
  assert_int_equal(hs[1].worker, 1);
  assert_true(hs[1].hwm_ms == T0_MS + 3000);
  assert_int_equal(hs[1].live, 1);
  idgen_lease_free(a);
  idgen_lease_free(c);
  idgen_lease_free(d);
}

static void test_file_release_final_hwm(void **state) {
  (void)state;
  idgen_lease *a = open_kind(IDGEN_LEASE_FILE, 1023);
  idgen_lease_grant g;
  assert_int_equal(idgen_lease_acquire(a, &g), 0);
  assert_int_equal(idgen_lease_write_hwm(a, T0_MS + 3000), 0);
  assert_int_equal(idgen_lease_release(a, T0_MS + 10), 0);
  assert_int_equal(idgen_lease_keepalive(a), IDGEN_ELEASE);
  assert_int_equal(idgen_lease_release(a, T0_MS + 20), 0); /* idempotent, no write */
  idgen_lease *b = open_kind(IDGEN_LEASE_FILE, 1023);
  assert_int_equal(idgen_lease_acquire(b, &g), 0);
  assert_int_equal(g.worker, 0);
  assert_true(g.hwm_ms == T0_MS + 10);
  idgen_lease_free(a);
  idgen_lease_free(b);
}

/* A file lease (static_worker < 0) or a static one, in dir/sub and namespace space. */
static idgen_lease *open_in(const char *sub, const char *space, int64_t static_worker) {
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  if (static_worker >= 0) {
    c.kind = IDGEN_LEASE_STATIC;
    c.worker_id = static_worker;
  }
  snprintf(c.state_dir, sizeof c.state_dir, "%s/%s", dir, sub);
  snprintf(c.ns, sizeof c.ns, "%s", space);
  return open_config(&c, "snowflake");
}

static void write_file(const char *name, const char *content, size_t len) {
  char path[300];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(fwrite(content, 1, len, f), len);
  fclose(f);
}
/* A string literal's bytes, NULs inside it included, without its terminator. */
#define write_lit(name, lit) write_file(name, lit, sizeof lit - 1)

/* A record that is not whole is corrupt, never "HWM 0": garbage, an empty file, all
 * NULs, or JSON without hwm_ms. The file provider passes over such an ID (everyone takes
 * the smallest free one: it would block them all) and says so; a fixed ID fails. */
static void test_file_corrupt_record(void **state) {
  (void)state;
  write_lit("worker-0", "garbage");
  write_lit("worker-1", "");
  write_lit("worker-2", "\0\0\0\0\0\0\0\0");
  write_lit("worker-3", "{\"host\":\"h\",\"pid\":\"1\"}");
  write_lit("worker-5", "{\"host\":\"h\",\"pid\":\"1\"}");
  idgen_lease *a = open_kind(IDGEN_LEASE_FILE, 7);
  idgen_lease_grant g;
  memset(&g, 0, sizeof g);
  assert_int_equal(idgen_lease_acquire(a, &g), 0);
  assert_int_equal(g.worker, 4);
  assert_int_equal(g.skipped, 4);
  assert_non_null(strstr(idgen_lease_why(a), "worker-3"));
  assert_non_null(strstr(idgen_lease_why(a), "skipped"));
  idgen_lease_free(a);
  idgen_lease *all = open_kind(IDGEN_LEASE_FILE, 3);
  assert_int_equal(idgen_lease_acquire(all, &g), IDGEN_ENOWORKER);
  assert_non_null(strstr(idgen_lease_why(all), "4 skipped"));
  idgen_lease_free(all);
  idgen_lease *fixed = open_in(".", ns, 5);
  assert_int_equal(idgen_lease_acquire(fixed, &g), IDGEN_EFORMAT);
  assert_non_null(strstr(idgen_lease_why(fixed), "worker-5"));
  idgen_lease_free(fixed);
}

static int64_t wall_ms(void) {
  return idgen_wall_ns() / MS;
}

/* Two processes of one namespace on one host never hold the same worker ID, whatever
 * their state directories: the host-wide claim. A refusal names the holder. */
static void test_two_state_dirs(void **state) {
  (void)state;
  idgen_lease *a = open_in("a", ns, -1), *b = open_in("b", ns, -1);
  idgen_lease_grant ga, gb;
  assert_int_equal(idgen_lease_acquire(a, &ga), 0);
  assert_int_equal(idgen_lease_acquire(b, &gb), 0);
  print_message("state dirs a and b: workers %llu and %llu\n",
                (unsigned long long)ga.worker, (unsigned long long)gb.worker);
  assert_int_equal(ga.worker, 0);
  assert_int_equal(gb.worker, 1);
  /* a static worker 0 in a third directory is refused, naming a's pid and directory */
  idgen_lease *s0 = open_in("c", ns, 0);
  char want[300];
  assert_int_equal(idgen_lease_acquire(s0, &gb), IDGEN_ECONFLICT);
  snprintf(want, sizeof want, "pid %ld (state dir %s/a)", (long)getpid(), dir);
  if (!strstr(idgen_lease_why(s0), want))
    fail_msg("'%s' lacks '%s'", idgen_lease_why(s0), want);
  /* another namespace is another ID space */
  idgen_lease *other = open_in("c", "test-lease-other-space", -1);
  assert_int_equal(idgen_lease_acquire(other, &gb), 0);
  assert_int_equal(gb.worker, 0);
  idgen_lease_free(other);
  /* the claim goes with the holder */
  idgen_lease_free(a);
  assert_int_equal(idgen_lease_acquire(s0, &gb), 0);
  assert_int_equal(gb.worker, 0);
  idgen_lease_free(s0);
  idgen_lease_free(b);
}

/* A file (static_worker < 0) or static lease under layout twitter in dir/s and namespace
 * space: datacenter dc (-1: none), claiming lo..hi (lo < 0: the whole field). */
static idgen_lease *open_twitter(const char *space, int64_t dc, int64_t lo, int64_t hi,
                                 int64_t static_worker) {
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  if (static_worker >= 0) {
    c.kind = IDGEN_LEASE_STATIC;
    c.worker_id = static_worker;
  }
  snprintf(c.state_dir, sizeof c.state_dir, "%s/s", dir);
  snprintf(c.ns, sizeof c.ns, "%s", space);
  c.datacenter = dc;
  c.range_lo = lo;
  c.range_hi = hi;
  return open_config(&c, "twitter");
}

/* --datacenter 3 under twitter: worker IDs 3 << 5 | N, the file dc-3/worker-N, claimed
 * host-wide as .../dc/3/worker/N. Datacenters fill their own 32 IDs each. */
static void test_datacenter_file(void **state) {
  (void)state;
  idgen_lease *a = open_twitter(ns, 3, -1, -1, -1), *b = open_twitter(ns, 3, -1, -1, -1),
              *c = open_twitter(ns, 4, -1, -1, -1);
  idgen_lease_grant g;
  assert_int_equal(idgen_lease_acquire(a, &g), 0);
  assert_int_equal(g.worker, 96);
  assert_int_equal(idgen_lease_acquire(b, &g), 0);
  assert_int_equal(g.worker, 97);
  assert_int_equal(idgen_lease_acquire(c, &g), 0);
  assert_int_equal(g.worker, 128);
  char path[300];
  snprintf(path, sizeof path, "%s/s/dc-3/worker-1", dir);
  assert_int_equal(access(path, F_OK), 0);
  assert_int_equal(idgen__claim_held(ns, 3, 1), 1);
  assert_int_equal(idgen__claim_held(ns, -1, 97), 1); /* its other name, claimed too */
  assert_int_equal(idgen__claim_held(ns, 3, 2), 0);
  idgen_lease_holder hs[8];
  size_t n = 0;
  assert_int_equal(idgen_lease_holders(a, hs, 8, &n), 0);
  assert_int_equal(n, 3);
  assert_true(hs[0].datacenter == 3 && hs[0].worker == 0 && hs[0].live);
  assert_true(hs[1].datacenter == 3 && hs[1].worker == 1 && hs[1].live);
  assert_true(hs[2].datacenter == 4 && hs[2].worker == 0 && hs[2].live);
  assert_string_equal(hs[0].region, "default");
  /* a range of the low field: "all taken" names it and the datacenter */
  idgen_lease *r = open_twitter(ns, 3, 0, 1, -1);
  assert_int_equal(idgen_lease_acquire(r, &g), IDGEN_ENOWORKER);
  if (!strstr(idgen_lease_why(r), "all 2 worker IDs 0-1 (--worker-id-range) of "
                                  "datacenter 3 in namespace"))
    fail_msg("%s", idgen_lease_why(r));
  idgen_lease_free(r);
  /* static under a datacenter: --worker-id is the low field */
  idgen_lease *st = open_twitter(ns, 3, -1, -1, 1);
  assert_int_equal(idgen_lease_acquire(st, &g), IDGEN_ECONFLICT);
  assert_non_null(strstr(idgen_lease_why(st), "worker ID 97"));
  idgen_lease_free(b);
  assert_int_equal(idgen_lease_acquire(st, &g), 0);
  assert_int_equal(g.worker, 97);
  idgen_lease_free(st);
  idgen_lease_free(a);
  idgen_lease_free(c);
}

/* A rolling change of --datacenter runs both names of an ID at once (dc-3/worker-0 and
 * worker-96): each excludes the other, by the claim and, where the claim does not
 * reach, by the lock; and each reads the other's HWM as a floor. */
static void test_datacenter_other_name(void **state) {
  (void)state;
  idgen_lease *a = open_twitter(ns, 3, -1, -1, -1);
  idgen_lease_grant g;
  assert_int_equal(idgen_lease_acquire(a, &g), 0);
  assert_int_equal(g.worker, 96);
  int64_t far = wall_ms() + 60000;
  assert_int_equal(idgen_lease_write_hwm(a, far), 0);
  idgen_lease *flat = open_twitter(ns, -1, 96, 97, -1);
  assert_int_equal(idgen_lease_acquire(flat, &g), 0);
  assert_int_equal(g.worker, 97); /* 96 is held as dc-3/worker-0 */
  idgen_lease *flat96 = open_twitter(ns, -1, 96, 96, -1);
  assert_int_equal(idgen_lease_acquire(flat96, &g), IDGEN_ENOWORKER);
  /* another claim namespace: only the lock on dc-3/worker-0 keeps it off */
  idgen_lease *elsewhere = open_twitter("test-lease-other-space", -1, 96, 96, -1);
  assert_int_equal(idgen_lease_acquire(elsewhere, &g), IDGEN_ENOWORKER);
  /* and the other way: worker-97 locked keeps dc-3/worker-1 from another namespace */
  idgen_lease *dc1 = open_twitter("test-lease-other-space", 3, 1, 1, -1);
  assert_int_equal(idgen_lease_acquire(dc1, &g), IDGEN_ENOWORKER);
  idgen_lease_free(dc1);
  /* a leaves its HWM (a minute ahead): worker-96 is new, yet its holder starts past it */
  assert_int_equal(idgen_lease_release(a, 0), 0);
  assert_int_equal(idgen_lease_acquire(elsewhere, &g), 0);
  assert_int_equal(g.worker, 96);
  assert_true(g.hwm_ms == far);
  /* and back: worker-97's HWM is the floor of dc-3/worker-1 */
  assert_int_equal(idgen_lease_write_hwm(flat, far + 1), 0);
  assert_int_equal(idgen_lease_release(flat, 0), 0);
  idgen_lease *back = open_twitter(ns, 3, 1, 1, -1);
  assert_int_equal(idgen_lease_acquire(back, &g), 0);
  assert_int_equal(g.worker, 97);
  assert_true(g.hwm_ms == far + 1);
  idgen_lease_free(back);
  idgen_lease_free(elsewhere);
  idgen_lease_free(flat96);
  idgen_lease_free(flat);
  idgen_lease_free(a);
}

/* The datacenter and the range against the layout, one line each; the worker ID of a
 * claimed value; k8s and static inside the range. */
static void test_space(void **state) {
  (void)state;
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  char err[256];
  idgen_lease_space sp;
  assert_int_equal(idgen_lease_space_of(&c, layout_of("twitter"), &sp, err, sizeof err), 0);
  assert_true(sp.datacenter == -1 && sp.bits == 10 && sp.low_bits == 5);
  assert_true(sp.lo == 0 && sp.hi == 1023);
  assert_int_equal(idgen_lease_config_set(&c, "datacenter", "31", err, sizeof err), 0);
  assert_int_equal(idgen_lease_space_of(&c, layout_of("twitter"), &sp, err, sizeof err), 0);
  assert_true(sp.datacenter == 31 && sp.bits == 5 && sp.lo == 0 && sp.hi == 31);
  assert_string_equal(sp.field, "worker");
  assert_string_equal(sp.dc_field, "datacenter");
  assert_int_equal(idgen_lease_space_worker(&sp, 7), 31 << 5 | 7);
  /* discord: worker 5 + process 5: the high field is the datacenter */
  assert_int_equal(idgen_lease_space_of(&c, layout_of("discord"), &sp, err, sizeof err), 0);
  assert_string_equal(sp.dc_field, "worker");
  assert_string_equal(sp.field, "process");
  assert_int_equal(idgen_lease_config_check(&c, layout_of("snowflake"), err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "--datacenter: the layout has one node field (worker)"));
  assert_int_equal(idgen_lease_config_set(&c, "datacenter", "32", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, layout_of("twitter"), err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "--datacenter: 32 is out of range"));
  assert_non_null(strstr(err, "0-31"));
  assert_int_equal(idgen_lease_config_set(&c, "datacenter", "-1", err, sizeof err),
                   IDGEN_EINVAL);
  c.datacenter = 1;
  assert_int_equal(idgen_lease_config_set(&c, "worker-id-range", "0-40", err, sizeof err),
                   0);
  assert_int_equal(idgen_lease_config_check(&c, layout_of("twitter"), err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "--worker-id-range: 0-40 is out of range"));
  static const char *const bad[] = {"5-2", "x", "1-", "-3", "1-2-3", "a-b", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(idgen_lease_config_set(&c, "worker-id-range", bad[i], err, sizeof err),
                     IDGEN_EINVAL);
  assert_int_equal(idgen_lease_config_set(&c, "worker-id-range", "8-15", err, sizeof err),
                   0);
  assert_int_equal(idgen_lease_space_of(&c, layout_of("twitter"), &sp, err, sizeof err), 0);
  assert_true(sp.lo == 8 && sp.hi == 15);
  /* k8s: ordinal + offset is the low field, and must fall in the range */
  c.kind = IDGEN_LEASE_K8S;
  c.pod_index = 2;
  c.worker_id_offset = 10;
  assert_int_equal(idgen_lease_config_check(&c, layout_of("twitter"), err, sizeof err), 0);
  c.worker_id_offset = 20;
  assert_int_equal(idgen_lease_config_check(&c, layout_of("twitter"), err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "22 is outside --worker-id-range 8-15"));
  /* --k8s-replicas: the ordinal below it, and the last pod's offset + N - 1 in the low
   * field and the range, whichever pod checks (issue 23) */
  c.worker_id_offset = 8;
  assert_int_equal(idgen_lease_config_set(&c, "k8s-replicas", "8", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, layout_of("twitter"), err, sizeof err), 0);
  c.pod_index = 8;
  assert_int_equal(idgen_lease_config_check(&c, layout_of("twitter"), err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "--k8s-replicas 8: pod ordinal 8 is not below it"));
  c.pod_index = 0;
  c.worker_id_offset = 9; /* this pod's 9 is in 8-15, the last pod's 16 is not */
  assert_int_equal(idgen_lease_config_check(&c, layout_of("twitter"), err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err,
                         "offset 9 + the last ordinal 7 = 16 is outside --worker-id-range "
                         "8-15"));
  c.range_lo = c.range_hi = -1;
  c.worker_id_offset = 25; /* datacenter 1: the low field holds 0-31 */
  assert_int_equal(idgen_lease_config_check(&c, layout_of("twitter"), err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "= 32 is out of range: the worker field holds 0-31"));
  assert_int_equal(idgen_lease_config_set(&c, "k8s-replicas", "0", err, sizeof err),
                   IDGEN_EINVAL);
  c.k8s_replicas = 0; /* no bound: the default generator alone, worker = ordinal + offset */
  assert_int_equal(idgen_lease_config_check(&c, layout_of("twitter"), err, sizeof err), 0);
  c.range_lo = 8;
  c.range_hi = 15;
  c.kind = IDGEN_LEASE_STATIC;
  c.worker_id = 16;
  assert_int_equal(idgen_lease_config_check(&c, layout_of("twitter"), err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "--worker-id: 16 is outside --worker-id-range 8-15"));
  /* region: a name like a namespace's; env names the variable */
  assert_string_equal(c.region, "default");
  assert_int_equal(idgen_lease_config_set(&c, "region", "eu-west.1", err, sizeof err), 0);
  assert_string_equal(c.region, "eu-west.1");
  assert_int_equal(idgen_lease_config_set(&c, "region", "a b", err, sizeof err),
                   IDGEN_EINVAL);
  setenv("IDGEN_DATACENTER", "x", 1);
  idgen_lease_config_init(&c);
  assert_int_equal(idgen_lease_config_env(&c, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "IDGEN_DATACENTER"));
  setenv("IDGEN_DATACENTER", "2", 1);
  setenv("IDGEN_WORKER_ID_RANGE", "0-3", 1);
  setenv("IDGEN_REGION", "west", 1);
  setenv("IDGEN_K8S_REPLICAS", "4", 1);
  assert_int_equal(idgen_lease_config_env(&c, err, sizeof err), 0);
  assert_true(c.datacenter == 2 && c.range_lo == 0 && c.range_hi == 3);
  assert_string_equal(c.region, "west");
  assert_int_equal(c.k8s_replicas, 4);
  unsetenv("IDGEN_K8S_REPLICAS");
  unsetenv("IDGEN_DATACENTER");
  unsetenv("IDGEN_WORKER_ID_RANGE");
  unsetenv("IDGEN_REGION");
}

/* Where the claim does not reach (processes in separate network namespaces, here two
 * claim namespaces) the lock alone keeps two holders of one state directory apart: an
 * open-file-description lock, so that two opens in one process conflict too. */
static void test_lock_alone_fences_a_shared_dir(void **state) {
  (void)state;
  idgen_lease *a = open_in("s", ns, -1), *b = open_in("s", "test-lease-other-space", -1);
  idgen_lease_grant ga, gb;
  assert_int_equal(idgen_lease_acquire(a, &ga), 0);
  assert_int_equal(idgen_lease_acquire(b, &gb), 0);
  assert_int_equal(ga.worker, 0);
  assert_int_equal(gb.worker, 1);
  idgen_lease_free(a);
  idgen_lease_free(b);
}

/* A holder of worker 0 in dir/s whose cap is 3 s ahead. */
static idgen_lease *hold_worker0(int64_t *cap) {
  idgen_lease *a = open_in("s", ns, -1);
  idgen_lease_grant g;
  assert_int_equal(idgen_lease_acquire(a, &g), 0);
  assert_int_equal(g.worker, 0);
  *cap = wall_ms() + 3000;
  assert_int_equal(idgen_lease_write_hwm(a, *cap), 0);
  return a;
}

/* worker-0 removed while held: the holder notices at its next HWM write and gives the
 * ID up; nobody takes the ID meanwhile (the claim), and whoever creates worker-0 anew
 * starts past now + ahead + one interval, above any cap the holder persisted. */
static void test_removed_worker_file(void **state) {
  (void)state;
  int64_t cap;
  idgen_lease *a = hold_worker0(&cap);
  idgen_lease_grant g;
  char path[300];
  snprintf(path, sizeof path, "%s/s/worker-0", dir);
  assert_int_equal(unlink(path), 0);
  idgen_lease *b = open_in("s", ns, -1);
  assert_int_equal(idgen_lease_acquire(b, &g), 0);
  print_message("worker-0 removed under its holder: a newcomer got worker %llu, HWM %lld "
                "(the holder's cap %lld)\n",
                (unsigned long long)g.worker, (long long)g.hwm_ms, (long long)cap);
  assert_true(g.worker != 0 || g.hwm_ms >= cap);
  assert_int_equal(g.worker, 1);
  assert_int_equal(idgen_lease_write_hwm(a, cap + 1000), IDGEN_ELEASE);
  assert_non_null(strstr(idgen_lease_why(a), "removed or replaced"));
  assert_int_equal(idgen_lease_keepalive(a), IDGEN_ELEASE);
  /* given up: worker 0 is free again, and its new file makes its holder wait */
  int64_t before = wall_ms();
  assert_int_equal(idgen_lease_acquire(a, &g), 0);
  assert_int_equal(g.worker, 0);
  assert_true(g.hwm_ms >= before + 3000 + 1000);
  idgen_lease_free(a);
  idgen_lease_free(b);
}

/* The same without the claim to help (another namespace: as processes in another
 * network namespace sharing the directory would be): the file alone must keep the
 * newcomer above the holder's cap. A file renamed over is noticed too. */
static void test_replaced_worker_file_without_claim(void **state) {
  (void)state;
  int64_t cap;
  idgen_lease *a = hold_worker0(&cap);
  idgen_lease_grant g;
  char path[300], tmp[300];
  snprintf(path, sizeof path, "%s/s/worker-0", dir);
  snprintf(tmp, sizeof tmp, "%s/s/worker-0.tmp", dir);
  write_lit("s/worker-0.tmp", "{\"hwm_ms\":\"5\"}");
  assert_int_equal(rename(tmp, path), 0); /* an editor's save: HWM 5, lock gone */
  assert_int_equal(unlink(path), 0);      /* and then removed */
  idgen_lease *b = open_in("s", "test-lease-other-space", -1);
  assert_int_equal(idgen_lease_acquire(b, &g), 0);
  assert_int_equal(g.worker, 0);
  assert_true(g.hwm_ms > cap);
  assert_int_equal(idgen_lease_write_hwm(a, cap + 1000), IDGEN_ELEASE);
  /* the record b's acquire wrote makes a third process wait as long */
  idgen_lease_free(b);
  idgen_lease *c = open_in("s", ns, -1);
  int64_t waited_for = g.hwm_ms;
  assert_int_equal(idgen_lease_acquire(c, &g), 0);
  assert_int_equal(g.worker, 0);
  assert_true(g.hwm_ms == waited_for);
  idgen_lease_free(c);
  idgen_lease_free(a);
}

/* worker-0 replaced while held, as an editor's save or a restore from a backup would:
 * renamed over (the held inode loses its last link), or moved aside and a new file put
 * in its place (the held inode keeps a link, under another name). Either way the path
 * names an inode nobody has locked. The holder must notice at its next HWM write and
 * give the ID up. */
static void test_replaced_worker_file(void **state) {
  (void)state;
  char path[300], tmp[300], aside[300];
  snprintf(path, sizeof path, "%s/s/worker-0", dir);
  snprintf(tmp, sizeof tmp, "%s/s/worker-0.tmp", dir);
  snprintf(aside, sizeof aside, "%s/s/worker-0.old", dir);
  for (int moved_aside = 0; moved_aside <= 1; moved_aside++) {
    int64_t cap;
    idgen_lease *a = hold_worker0(&cap);
    write_lit("s/worker-0.tmp", "{\"hwm_ms\":\"5\"}");
    if (moved_aside)
      assert_int_equal(rename(path, aside), 0);
    assert_int_equal(rename(tmp, path), 0);
    assert_int_equal(idgen_lease_write_hwm(a, cap + 1000), IDGEN_ELEASE);
    assert_non_null(strstr(idgen_lease_why(a), "removed or replaced"));
    assert_int_equal(idgen_lease_keepalive(a), IDGEN_ELEASE);
    idgen_lease_free(a);
  }
}

static void test_static_and_k8s(void **state) {
  (void)state;
  idgen_lease *s = open_kind(IDGEN_LEASE_STATIC, 1023);
  idgen_lease_grant g;
  assert_int_equal(idgen_lease_acquire(s, &g), 0);
  assert_int_equal(g.worker, 7);
  assert_int_equal(g.fenced, 0); /* no fence between hosts */
  assert_int_equal(idgen_lease_write_hwm(s, T0_MS), 0);
  /* a second process on this host with the same static ID is refused */
  idgen_lease *s2 = open_kind(IDGEN_LEASE_STATIC, 1023);
  assert_int_equal(idgen_lease_acquire(s2, &g), IDGEN_ECONFLICT);
  idgen_lease_free(s);
  assert_int_equal(idgen_lease_acquire(s2, &g), 0);
  assert_true(g.hwm_ms == T0_MS);
  idgen_lease_free(s2);
  idgen_lease *k = open_kind(IDGEN_LEASE_K8S, 1023);
  assert_int_equal(idgen_lease_acquire(k, &g), 0);
  assert_int_equal(g.worker, 12); /* pod 2 + offset 10 */
  char line[256];
  idgen_lease_describe(k, line, sizeof line);
  assert_non_null(strstr(line, "k8s: worker ID 12"));
  idgen_lease_free(k);
}

static void test_k8s_ordinal(void **state) {
  (void)state;
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  int64_t ord = -1;
  char err[200];
  snprintf(c.hostname, sizeof c.hostname, "idgen-17");
  assert_int_equal(idgen__k8s_ordinal(&c, &ord, err, sizeof err), 0);
  assert_int_equal(ord, 17);
  c.pod_index = 4;
  assert_int_equal(idgen__k8s_ordinal(&c, &ord, err, sizeof err), 0);
  assert_int_equal(ord, 4);
  c.pod_index = -1;
  snprintf(c.hostname, sizeof c.hostname, "web");
  assert_int_equal(idgen__k8s_ordinal(&c, &ord, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "no -N suffix"));
  snprintf(c.hostname, sizeof c.hostname, "web-x1");
  assert_int_equal(idgen__k8s_ordinal(&c, &ord, err, sizeof err), IDGEN_EINVAL);
}

static void test_config(void **state) {
  (void)state;
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  char err[256];
  assert_int_equal(idgen_lease_config_set(&c, "lease", "etcd", err, sizeof err), 0);
  assert_int_equal(c.kind, IDGEN_LEASE_ETCD);
  assert_int_equal(idgen_lease_config_set(&c, "lease", "zk", err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "unknown provider 'zk'"));
  assert_int_equal(idgen_lease_config_set(&c, "lease-ttl", "1", err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "minimum of 2 s"));
  assert_int_equal(idgen_lease_config_set(&c, "lease-ttl", "3", err, sizeof err), 0);
  assert_int_equal(c.ttl_ms, 3000);
  assert_int_equal(
      idgen_lease_config_set(&c, "etcd", "http://a:1/, http://b:2", err, sizeof err), 0);
  assert_int_equal(c.nendpoints, 2);
  assert_string_equal(c.endpoints[0], "http://a:1");
  assert_string_equal(c.endpoints[1], "http://b:2");
  assert_int_equal(idgen_lease_config_set(&c, "etcd", "a:1", err, sizeof err),
                   IDGEN_EINVAL);
  assert_int_equal(idgen_lease_config_set(&c, "namespace", "a/b", err, sizeof err),
                   IDGEN_EINVAL);
  assert_int_equal(idgen_lease_config_set(&c, "worker-id", "-1", err, sizeof err),
                   IDGEN_EINVAL);
  assert_int_equal(idgen_lease_config_set(&c, "nope", "1", err, sizeof err), IDGEN_EINVAL);
  assert_int_equal(idgen_lease_config_set(&c, "require-ntp-sync", NULL, err, sizeof err),
                   0);
  assert_int_equal(c.require_ntp_sync, 1);
  /* margin too long for the TTL: 3 s TTL, keepalive every 1 s, margin 2 s */
  assert_int_equal(idgen_lease_config_set(&c, "lease-margin", "2000", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, layout_of("snowflake"), err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "--lease-margin"));
  c.margin_ms = 1000;
  assert_int_equal(idgen_lease_config_check(&c, layout_of("snowflake"), err, sizeof err),
                   0);
  /* a worker ID with no HWM yet waits ahead + interval: beyond --hwm-wait-max it never
   * starts; at it, it does */
  c.ahead_ms = 25000;
  c.hwm_interval_ms = 6000;
  assert_int_equal(idgen_lease_config_check(&c, layout_of("snowflake"), err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "beyond --hwm-wait-max (30000 ms)"));
  c.hwm_interval_ms = 5000;
  assert_int_equal(idgen_lease_config_check(&c, layout_of("snowflake"), err, sizeof err),
                   0);
  c.ahead_ms = 3000;
  c.hwm_interval_ms = 1000;
  c.kind = IDGEN_LEASE_STATIC;
  c.worker_id = -1;
  assert_int_equal(idgen_lease_config_check(&c, layout_of("snowflake"), err, sizeof err),
                   IDGEN_EINVAL);
  c.worker_id = 1024;
  assert_int_equal(idgen_lease_config_check(&c, layout_of("snowflake"), err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "out of range"));
  /* env: the variable is named in the error */
  setenv("IDGEN_LEASE_TTL", "1", 1);
  idgen_lease_config_init(&c);
  assert_int_equal(idgen_lease_config_env(&c, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "IDGEN_LEASE_TTL"));
  unsetenv("IDGEN_LEASE_TTL");
  setenv("IDGEN_WORKER_ID", "5", 1);
  setenv("IDGEN_LEASE", "static", 1);
  assert_int_equal(idgen_lease_config_env(&c, err, sizeof err), 0);
  assert_int_equal(c.kind, IDGEN_LEASE_STATIC);
  assert_int_equal(c.worker_id, 5);
  unsetenv("IDGEN_WORKER_ID");
  unsetenv("IDGEN_LEASE");
}

/* etcd's TLS and auth options: one scheme per list, the TLS files only with https://, a
 * certificate with its key, a user with a password and the other way round; the
 * password from the environment only. */
static void test_config_etcd_access(void **state) {
  (void)state;
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  char err[256];
  const idgen_layout *l = layout_of("snowflake");
  assert_int_equal(idgen_lease_config_set(&c, "lease", "etcd", err, sizeof err), 0);
  assert_int_equal(
      idgen_lease_config_set(&c, "etcd", "https://a:1,http://b:2", err, sizeof err),
      IDGEN_EINVAL);
  assert_non_null(strstr(err, "mix http:// and https://"));
  assert_int_equal(idgen_lease_config_set(&c, "etcd", "http://a:1", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "etcd-cacert", "ca.pem", err, sizeof err), 0);
  assert_string_equal(c.etcd_cacert, "ca.pem");
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "--etcd-cacert: the etcd endpoints are http://"));
  assert_int_equal(
      idgen_lease_config_set(&c, "etcd", "https://a:1, https://b:2/", err, sizeof err), 0);
  assert_int_equal(c.nendpoints, 2);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "etcd-cert", "c.pem", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "--etcd-cert: needs --etcd-key"));
  assert_int_equal(idgen_lease_config_set(&c, "etcd-key", "c.key", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "etcd-key", "a\nb", err, sizeof err),
                   IDGEN_EINVAL);
  assert_int_equal(idgen_lease_config_set(&c, "etcd-user", "idgen", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "--etcd-user: no password"));
  setenv("IDGEN_ETCD_PASSWORD", "secret", 1);
  setenv("IDGEN_ETCD_CACERT", "env-ca.pem", 1);
  assert_int_equal(idgen_lease_config_env(&c, err, sizeof err), 0);
  unsetenv("IDGEN_ETCD_PASSWORD");
  unsetenv("IDGEN_ETCD_CACERT");
  assert_string_equal(c.etcd_password, "secret");
  assert_string_equal(c.etcd_cacert, "env-ca.pem");
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), 0);
  /* no flag carries a password */
  assert_int_equal(idgen_lease_config_set(&c, "etcd-password", "x", err, sizeof err),
                   IDGEN_EINVAL);
  assert_int_equal(idgen_lease_config_set(&c, "etcd-user", "", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "IDGEN_ETCD_PASSWORD: no --etcd-user"));
  c.etcd_password[0] = '\0';
  assert_int_equal(idgen_lease_config_set(&c, "etcd-password-file", "pw", err, sizeof err),
                   0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "--etcd-password-file: no --etcd-user"));
}

/* ZooKeeper's digest auth options: a user with a password and the other way round, no
 * colon in the user, the password from the environment only. */
static void test_config_zk_access(void **state) {
  (void)state;
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  char err[256];
  const idgen_layout *l = layout_of("snowflake");
  assert_int_equal(idgen_lease_config_set(&c, "lease", "zookeeper", err, sizeof err), 0);
  assert_int_equal(
      idgen_lease_config_set(&c, "zookeeper", "127.0.0.1:2181", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "zk-user", "idgen", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "--zk-user: no password"));
  setenv("IDGEN_ZK_PASSWORD", "secret", 1);
  assert_int_equal(idgen_lease_config_env(&c, err, sizeof err), 0);
  unsetenv("IDGEN_ZK_PASSWORD");
  assert_string_equal(c.zk_password, "secret");
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "zk-password", "x", err, sizeof err),
                   IDGEN_EINVAL); /* no flag carries a password */
  assert_int_equal(idgen_lease_config_set(&c, "zk-user", "a:b", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "holds a ':'"));
  assert_int_equal(idgen_lease_config_set(&c, "zk-user", "", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "IDGEN_ZK_PASSWORD: no --zk-user"));
  c.zk_password[0] = '\0';
  assert_int_equal(idgen_lease_config_set(&c, "zk-password-file", "pw", err, sizeof err),
                   0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "--zk-password-file: no --zk-user"));
  setenv("IDGEN_ZK_USER", "env-user", 1);
  assert_int_equal(idgen_lease_config_env(&c, err, sizeof err), 0);
  unsetenv("IDGEN_ZK_USER");
  assert_string_equal(c.zk_user, "env-user");
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), 0);
}

/* Redis's TLS and auth options: the TLS files only with rediss://, a certificate with
 * its key, one password (the URL's, a file's or the environment's), one user; with a
 * password from elsewhere a bare "NAME@" of the URL is the user. */
static void test_config_redis_access(void **state) {
  (void)state;
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  char err[256];
  const idgen_layout *l = layout_of("snowflake");
  assert_int_equal(idgen_lease_config_set(&c, "lease", "redis", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "redis", "redis://h:1", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "redis-cacert", "ca.pem", err, sizeof err),
                   0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_string_equal(err,
                      "--redis-cacert: the Redis URL is redis:// (TLS needs rediss://)");
  assert_int_equal(idgen_lease_config_set(&c, "redis", "rediss://h:1", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "redis-key", "c.key", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "--redis-key: needs --redis-cert"));
  assert_int_equal(idgen_lease_config_set(&c, "redis-cert", "c.pem", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "redis-user", "idgen", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "redis user 'idgen': no password"));
  setenv("IDGEN_REDIS_PASSWORD", "secret", 1);
  setenv("IDGEN_REDIS_CACERT", "env-ca.pem", 1);
  assert_int_equal(idgen_lease_config_env(&c, err, sizeof err), 0);
  unsetenv("IDGEN_REDIS_PASSWORD");
  unsetenv("IDGEN_REDIS_CACERT");
  assert_string_equal(c.redis_password, "secret");
  assert_string_equal(c.redis_cacert, "env-ca.pem");
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "redis-password", "x", err, sizeof err),
                   IDGEN_EINVAL); /* no flag carries a password */
  /* two passwords, two users */
  assert_int_equal(idgen_lease_config_set(&c, "redis", "rediss://u:p@h:1", err, sizeof err),
                   0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_string_equal(err, "IDGEN_REDIS_PASSWORD: the URL has a password too (give one)");
  assert_int_equal(
      idgen_lease_config_set(&c, "redis", "rediss://other@h:1", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "--redis-user idgen: the URL names user 'other'"));
  assert_int_equal(
      idgen_lease_config_set(&c, "redis", "rediss://idgen@h:1", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "redis-user", "", err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), 0);
  assert_int_equal(idgen_lease_config_set(&c, "redis-password-file", "pw", err, sizeof err),
                   0);
  assert_int_equal(idgen_lease_config_set(&c, "redis", "rediss://:p@h:1", err, sizeof err),
                   0);
  assert_int_equal(idgen_lease_config_check(&c, l, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "--redis-password-file: the URL has a password too"));
}

/* The URL's user and password, and what the options given apart change of them. */
static void test_redis_url_auth(void **state) {
  (void)state;
  idgen__redis_url u;
  char err[256];
  assert_int_equal(idgen__redis_url_parse("rediss://h:7/2", &u, err, sizeof err), 0);
  assert_true(u.tls && u.port == 7 && u.db == 2 && !u.user[0] && !u.pass[0]);
  assert_int_equal(idgen__redis_url_parse("rediz://h:7", &u, err, sizeof err),
                   IDGEN_EINVAL);
  assert_non_null(strstr(err, "not a redis:// or rediss:// URL"));
  /* "NAME@" alone is a password, as redis-cli reads it... */
  assert_int_equal(idgen__redis_url_parse("redis://pw@h", &u, err, sizeof err), 0);
  assert_true(!u.tls && u.bare && !u.user[0]);
  assert_string_equal(u.pass, "pw");
  assert_int_equal(idgen__redis_url_auth(&u, NULL, NULL, NULL, err, sizeof err), 0);
  assert_string_equal(u.pass, "pw");
  /* ... and the user when the password comes from elsewhere */
  assert_int_equal(idgen__redis_url_auth(&u, NULL, "s3", "F", err, sizeof err), 0);
  assert_string_equal(u.user, "pw");
  assert_string_equal(u.pass, "s3");
  assert_int_equal(idgen__redis_url_parse("redis://h", &u, err, sizeof err), 0);
  assert_int_equal(idgen__redis_url_auth(&u, "idgen", "s3", "F", err, sizeof err), 0);
  assert_string_equal(u.user, "idgen");
  assert_string_equal(u.pass, "s3");
  assert_int_equal(idgen__redis_url_parse("redis://h", &u, err, sizeof err), 0);
  assert_int_equal(idgen__redis_url_auth(&u, NULL, "s3", "F", err, sizeof err), 0);
  assert_true(!u.user[0]); /* AUTH s3: the default user */
  assert_int_equal(idgen__redis_url_parse("redis://h", &u, err, sizeof err), 0);
  assert_int_equal(idgen__redis_url_auth(&u, "idgen", NULL, "F", err, sizeof err),
                   IDGEN_EINVAL);
  assert_int_equal(idgen__redis_url_parse("redis://u:p@h", &u, err, sizeof err), 0);
  assert_int_equal(idgen__redis_url_auth(&u, "u", NULL, "F", err, sizeof err), 0);
  assert_int_equal(idgen__redis_url_auth(&u, NULL, "q", "F", err, sizeof err),
                   IDGEN_EINVAL);
  assert_string_equal(err, "F: the URL has a password too (give one)");
}

static void test_unwritable_state_dir(void **state) {
  (void)state;
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  char path[300];
  snprintf(path, sizeof path, "%s/plain", dir);
  FILE *f = fopen(path, "w");
  fclose(f);
  snprintf(c.state_dir, sizeof c.state_dir, "%s/plain/sub", dir);
  idgen_lease *l = NULL;
  char err[256] = "";
  assert_true(idgen_lease_open(&l, &c, layout_of("snowflake"), err, sizeof err) < 0);
  assert_null(l);
  assert_non_null(strstr(err, "state dir"));
  assert_null(strchr(err, '\n'));
}

static void test_keeper_arms_and_releases(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, T0_MS * MS);
  idgen_gen_config gc;
  idgen_gen_config_init(&gc, &clock.base);
  gc.armed = 0;
  idgen_gen *gen = NULL;
  assert_int_equal(idgen_gen_new(&gen, &gc), 0);
  uint64_t id;
  assert_int_equal(idgen_gen_next(gen, &id), IDGEN_ENOTARMED);

  /* a previous holder left a HWM 5 ms ahead of our clock */
  idgen_lease *prev = open_kind(IDGEN_LEASE_FILE, 1023);
  idgen_lease_grant g;
  assert_int_equal(idgen_lease_acquire(prev, &g), 0);
  assert_int_equal(idgen_lease_release(prev, T0_MS + 5), 0);
  idgen_lease_free(prev);

  idgen_lease *l = open_kind(IDGEN_LEASE_FILE, 1023);
  idgen_keeper_config kc;
  memset(&kc, 0, sizeof kc);
  kc.lease = l;
  kc.gen = gen;
  idgen_keeper *k = NULL;
  assert_int_equal(idgen_keeper_new(&k, &kc), 0);
  assert_int_equal(idgen_keeper_wait_ready(k, 50), IDGEN_ETIMEDOUT); /* clock not past */
  assert_int_equal(idgen_keeper_state_get(k), IDGEN_KEEPER_WAITING_HWM);
  idgen_clock_fake_advance(&clock, 10 * MS);
  assert_int_equal(idgen_keeper_wait_ready(k, 10000), 0);
  assert_int_equal(idgen_keeper_state_get(k), IDGEN_KEEPER_HELD);
  assert_int_equal(idgen_gen_next(gen, &id), 0);
  idgen_parts p;
  assert_int_equal(idgen_decompose(idgen_gen_layout(gen), id, &p), 0);
  assert_true(p.time_ms > T0_MS + 5);
  assert_int_equal(p.worker, 0);
  idgen_keeper_stats st;
  idgen_keeper_stats_get(k, &st);
  assert_int_equal(st.worker, 0);
  assert_true(st.floor_ms == T0_MS + 5);
  assert_true(st.hwm_writes >= 1);
  assert_true(st.hwm_ms == T0_MS + 10 + 3000);
  assert_int_equal(idgen_keeper_stop(k), 0);
  assert_int_equal(idgen_gen_next(gen, &id), IDGEN_ENOTARMED);
  assert_int_equal(idgen_keeper_state_get(k), IDGEN_KEEPER_STOPPED);
  idgen_keeper_free(k);
  idgen_lease_free(l);

  /* the final HWM is the last ms issued, not the cap */
  idgen_lease *next = open_kind(IDGEN_LEASE_FILE, 1023);
  assert_int_equal(idgen_lease_acquire(next, &g), 0);
  assert_int_equal(g.worker, 0);
  assert_true(g.hwm_ms == p.time_ms);
  idgen_lease_free(next);
  idgen_gen_free(gen);
}

static void test_keeper_refuses_far_hwm(void **state) {
  (void)state;
  idgen_clock_fake clock;
  idgen_clock_fake_init(&clock, T0_MS * MS);
  idgen_gen_config gc;
  idgen_gen_config_init(&gc, &clock.base);
  gc.armed = 0;
  idgen_gen *gen = NULL;
  assert_int_equal(idgen_gen_new(&gen, &gc), 0);
  idgen_lease *prev = open_kind(IDGEN_LEASE_FILE, 1023);
  idgen_lease_grant g;
  assert_int_equal(idgen_lease_acquire(prev, &g), 0);
  assert_int_equal(idgen_lease_release(prev, T0_MS + 60000), 0);
  idgen_lease_free(prev);
  idgen_lease *l = open_kind(IDGEN_LEASE_FILE, 1023);
  idgen_keeper_config kc;
  memset(&kc, 0, sizeof kc);
  kc.lease = l;
  kc.gen = gen;
  idgen_keeper *k = NULL;
  assert_int_equal(idgen_keeper_new(&k, &kc), IDGEN_ETIMEDOUT);
  assert_null(k);
  assert_non_null(strstr(idgen_lease_why(l), "ahead of this clock"));
  /* the HWM was left as it was */
  assert_int_equal(idgen_lease_acquire(l, &g), 0);
  assert_true(g.hwm_ms == T0_MS + 60000);
  idgen_lease_free(l);
  idgen_gen_free(gen);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_file_smallest_free, setup, teardown),
      cmocka_unit_test_setup_teardown(test_file_release_final_hwm, setup, teardown),
      cmocka_unit_test_setup_teardown(test_file_corrupt_record, setup, teardown),
      cmocka_unit_test_setup_teardown(test_two_state_dirs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lock_alone_fences_a_shared_dir, setup, teardown),
      cmocka_unit_test_setup_teardown(test_removed_worker_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_replaced_worker_file_without_claim, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_replaced_worker_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_static_and_k8s, setup, teardown),
      cmocka_unit_test_setup_teardown(test_datacenter_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_datacenter_other_name, setup, teardown),
      cmocka_unit_test(test_space),
      cmocka_unit_test(test_k8s_ordinal),
      cmocka_unit_test(test_config),
      cmocka_unit_test(test_config_etcd_access),
      cmocka_unit_test(test_config_zk_access),
      cmocka_unit_test(test_config_redis_access),
      cmocka_unit_test(test_redis_url_auth),
      cmocka_unit_test_setup_teardown(test_unwritable_state_dir, setup, teardown),
      cmocka_unit_test_setup_teardown(test_keeper_arms_and_releases, setup, teardown),
      cmocka_unit_test_setup_teardown(test_keeper_refuses_far_hwm, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
