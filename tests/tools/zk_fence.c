/* zk_fence.c: a test program that drives two ZooKeeper providers step by step against a
 * real ensemble, for the fence lines of src/lease/zookeeper.c; each step's outcome is
 * printed, and the exit status says whether the fence held (0) or not (1).
 * Usage: zk_fence HOSTS NAMESPACE takeover|ttl|dc
 *   takeover  A claims a worker with no HWM node (its floor must be now + ahead + one
 *             interval, issue 23's rule); A's worker node is deleted by a foreign client; B claims the
 *             same worker ID: A's next HWM write must be refused (IDGEN_ELEASE), B's
 *             floor must be at or above A's last HWM written, and B's writes go on.
 *   ttl       the lease's TTL must be the session timeout the ensemble negotiated (asks
 *             for 60 s; the project's ensembles allow at most 20 ticks).
 *   dc        with --datacenter 1 under twitter, a claim of worker 1 in dc 1 must be
 *             passed over while whole worker ID 33 (dc 1, worker 1) is held without one.
 *   many N    N providers in this process each open and claim (distinct workers), then
 *             all release: prints the time taken. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zookeeper/zookeeper.h>

#include "idgen.h"
#include "idgen/lease.h"
#include "idgen/zookeeper.h"

static const idgen_lease_provider *const providers[] = {&idgen_lease_zookeeper, NULL};

static void quiet(const char *m) {
  (void)m;
}
static void nowatch(zhandle_t *zh, int t, int s, const char *p, void *c) {
  (void)zh, (void)t, (void)s, (void)p, (void)c;
}

static int64_t max_skew_ms = 10000; /* many: 0, its holders write no HWM after claiming */

static int open_one(idgen_lease **out, const char *hosts, const char *ns, const char *layout,
                    int64_t dc, int64_t ttl_s) {
  idgen_lease_config c;
  idgen_lease_config_init(&c);
  c.kind = IDGEN_LEASE_ZOOKEEPER;
  snprintf(c.zookeeper, sizeof c.zookeeper, "%s", hosts);
  snprintf(c.ns, sizeof c.ns, "%s", ns);
  c.ttl_ms = ttl_s * 1000;
  c.margin_ms = 1000;
  c.datacenter = dc;
  c.max_skew_ms = max_skew_ms;
  c.providers = providers;
  idgen_layout l;
  char err[256];
  if (idgen_layout_parse(layout, strlen(layout), 0, &l, err, sizeof err))
    return fprintf(stderr, "layout: %s\n", err), -1;
  int rc = idgen_lease_open(out, &c, &l, err, sizeof err);
  if (rc)
    fprintf(stderr, "open: %s\n", err);
  return rc;
}

/* Deletes a node as a foreign client (an operator, a bug). */
static int foreign_delete(const char *hosts, const char *path) {
  zhandle_t *zh = zookeeper_init2(hosts, nowatch, 10000, NULL, NULL, 0, quiet);
  for (int i = 0; zh && zoo_state(zh) != ZOO_CONNECTED_STATE && i < 1000; i++) {
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  int zrc = zh ? zoo_delete(zh, path, -1) : ZSYSTEMERROR;
  if (zh)
    zookeeper_close(zh);
  printf("foreign delete %s: %s\n", path, zerror(zrc));
  return zrc == ZOK ? 0 : -1;
}

static int takeover(const char *hosts, const char *ns) {
  idgen_lease *a = NULL, *b = NULL;
  idgen_lease_grant ga, gb;
  int64_t before_ms = idgen_wall_ns() / 1000000;
  if (open_one(&a, hosts, ns, "snowflake", -1, 10) || idgen_lease_acquire(a, &ga))
    return fprintf(stderr, "A: %s\n", a ? idgen_lease_why(a) : "open"), 1;
  /* no HWM node yet: the floor is past now + ahead (3000) + one interval (1000) */
  printf("A's first floor is %lld ms past the claim\n", (long long)(ga.hwm_ms - before_ms));
  if (ga.hwm_ms < before_ms + 4000)
    return printf("FRESH WAIT BROKEN: a worker with no HWM node was not waited for\n"), 1;
  int64_t a_hwm = ga.hwm_ms + 5000;
  if (idgen_lease_write_hwm(a, a_hwm))
    return fprintf(stderr, "A write: %s\n", idgen_lease_why(a)), 1;
  printf("A holds worker %llu, HWM %lld\n", (unsigned long long)ga.worker, (long long)a_hwm);
  char path[256];
  snprintf(path, sizeof path, "/idgen/%s/workers/%llu", ns, (unsigned long long)ga.worker);
  if (foreign_delete(hosts, path))
    return 1;
  if (open_one(&b, hosts, ns, "snowflake", -1, 10) || idgen_lease_acquire(b, &gb))
    return fprintf(stderr, "B: %s\n", b ? idgen_lease_why(b) : "open"), 1;
  printf("B holds worker %llu, floor %lld\n", (unsigned long long)gb.worker,
         (long long)gb.hwm_ms);
  int bad = 0;
  if (gb.worker != ga.worker)
    printf("B took another worker: the test needs the same one\n"), bad = 1;
  if (gb.hwm_ms < a_hwm)
    printf("B's floor %lld is below A's HWM %lld\n", (long long)gb.hwm_ms,
           (long long)a_hwm),
        bad = 1;
  int rc = idgen_lease_write_hwm(a, a_hwm + 10000);
  printf("A write after B's claim: %s (%s)\n", idgen_err_name(rc), idgen_lease_why(a));
  if (rc != IDGEN_ELEASE)
    printf("FENCE BROKEN: A's HWM write was not refused\n"), bad = 1;
  rc = idgen_lease_write_hwm(b, gb.hwm_ms + 3000);
  printf("B write: %s\n", idgen_err_name(rc));
  if (rc)
    bad = 1;
  rc = idgen_lease_keepalive(a);
  printf("A keepalive: %s\n", idgen_err_name(rc));
  if (rc != IDGEN_ELEASE)
    bad = 1;
  idgen_lease_release(b, 0);
  idgen_lease_free(a);
  idgen_lease_free(b);
  return bad;
}

static int ttl(const char *hosts, const char *ns) {
  idgen_lease *a = NULL;
  idgen_lease_grant g;
  if (open_one(&a, hosts, ns, "snowflake", -1, 60) || idgen_lease_acquire(a, &g))
    return fprintf(stderr, "A: %s\n", a ? idgen_lease_why(a) : "open"), 1;
  zhandle_t *zh = zookeeper_init2(hosts, nowatch, 60000, NULL, NULL, 0, quiet);
  for (int i = 0; zh && zoo_state(zh) != ZOO_CONNECTED_STATE && i < 1000; i++) {
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  int negotiated = zh ? zoo_recv_timeout(zh) : -1;
  if (zh)
    zookeeper_close(zh);
  printf("asked 60000 ms; negotiated %d ms; grant ttl %lld ms\n", negotiated,
         (long long)g.ttl_ms);
  idgen_lease_release(a, 0);
  idgen_lease_free(a);
  return negotiated >= 60000 || g.ttl_ms != negotiated;
}

static int dc(const char *hosts, const char *ns) {
  idgen_lease *split = NULL;
  idgen_lease_grant g;
  /* the whole worker IDs 0..33 taken without a datacenter: 33 is dc 1, worker 1 */
  idgen_lease *held[34] = {0};
  int n = 0, bad = 0;
  max_skew_ms = 0; /* its holders write no HWM after claiming: their clocks grow old */
  for (; n < 34; n++)
    if (open_one(&held[n], hosts, ns, "twitter", -1, 10) || idgen_lease_acquire(held[n], &g))
      return fprintf(stderr, "whole %d: %s\n", n, held[n] ? idgen_lease_why(held[n]) : "open"), 1;
  printf("held whole worker IDs 0-33\n");
  if (open_one(&split, hosts, ns, "twitter", 1, 10) || idgen_lease_acquire(split, &g))
    return fprintf(stderr, "split: %s\n", split ? idgen_lease_why(split) : "open"), 1;
  printf("dc 1 claim got worker ID %llu\n", (unsigned long long)g.worker);
  if (g.worker == 32 || g.worker == 33)
    bad = 1; /* 32 = dc 1 worker 0, 33 = dc 1 worker 1: both held whole */
  for (int i = 0; i < n; i++)
    idgen_lease_free(held[i]);
  idgen_lease_free(split);
  return bad;
}

static int many(const char *hosts, const char *ns, int n) {
  idgen_lease **ls = calloc((size_t)n, sizeof *ls);
  uint64_t *seen = calloc(1024, sizeof *seen);
  if (!ls || !seen)
    return 1;
  max_skew_ms = 0;
  int64_t t0 = idgen_monotonic_ns();
  int bad = 0, held = 0;
  for (int i = 0; i < n && !bad; i++) {
    idgen_lease_grant g;
    if (open_one(&ls[i], hosts, ns, "snowflake", -1, 10) || idgen_lease_acquire(ls[i], &g)) {
      fprintf(stderr, "handle %d: %s\n", i, ls[i] ? idgen_lease_why(ls[i]) : "open");
      bad = 1;
      break;
    }
    if (g.worker >= 1024 || seen[g.worker]++)
      bad = 1;
    held++;
  }
  int64_t t1 = idgen_monotonic_ns();
  for (int i = 0; i < n; i++)
    if (ls[i])
      idgen_lease_release(ls[i], 0), idgen_lease_free(ls[i]);
  int64_t t2 = idgen_monotonic_ns();
  printf("%d handles held distinct workers in %lld ms; released in %lld ms\n", held,
         (long long)((t1 - t0) / 1000000), (long long)((t2 - t1) / 1000000));
  free(ls);
  free(seen);
  return bad || held != n;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 5 && !strcmp(argv[3], "many"))
    return many(argv[1], argv[2], atoi(argv[4]));
  if (argc != 4)
    return fprintf(stderr, "usage: zk_fence HOSTS NAMESPACE takeover|ttl|dc\n"), 2;
  if (!strcmp(argv[3], "takeover"))
    return takeover(argv[1], argv[2]);
  if (!strcmp(argv[3], "ttl"))
    return ttl(argv[1], argv[2]);
  if (!strcmp(argv[3], "dc"))
    return dc(argv[1], argv[2]);
  return 2;
}
