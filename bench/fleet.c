/* bench/fleet.c (bench_fleet): what a fleet of worker-ID holders costs its coordinator,
 * for an operator to read before running one (issues 25 and 26).
 *
 *   bench_fleet [--holders N] [--seconds S] [--coordinator NAME]... [--src DIR]
 *               [--json FILE] [--md FILE]
 *
 * From one process, N holders (default 1,024: the whole 10-bit worker field of the
 * snowflake layout; fewer claim the range 0..N-1, so N still fills the space) claim
 * worker IDs one after another at the default intervals (TTL 10 s, a keepalive every
 * TTL/3, a HWM write every 1 s, ahead 3 s). A holder is what `idgen serve` runs: one
 * provider handle (idgen_lease_open) with a generator and its keeper thread
 * (idgen_keeper_new), so N holders are N threads and N connections. Then one more
 * holder asks, and must be refused with IDGEN_ENOWORKER; then all are held for S
 * seconds (default 20) while the keepers' counts and the coordinator's CPU are read.
 *
 * Each coordinator is a row of the table `coordinators` below: its lease provider's row
 * (idgen_lease_provider), the project script that starts it on free loopback ports and
 * stops it by PID, and the option its endpoints go to. The script writes the server's
 * PID in DIR/m0.pid (scripts/cluster_common.bash), which gives its CPU (/proc/PID/stat)
 * and RSS (/proc/PID/status).
 *
 * In the window it also reads, every 50 ms, how far each generator's clock is below its
 * cap (the last HWM its keeper wrote): the least of these is the room the slowest HWM
 * write left; below zero, a generator issuing all along would have waited at its cap.
 *
 * HWM write and keepalive latencies are those of the keepers' own calls: the program is
 * linked with -Wl,--wrap=idgen_lease_write_hwm,--wrap=idgen_lease_keepalive
 * (bench/CMakeLists.txt), and the wrappers below time every call made in the window.
 *
 * Correctness is checked, never a timing: the N workers are distinct and exactly the
 * space, each generator issues an ID carrying its keeper's worker, the extra holder gets
 * IDGEN_ENOWORKER, and no lease is lost in the window. Exit 0 when every check held for
 * every coordinator, 1 when one failed or a coordinator did not start, 2 for bad usage. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "idgen.h"
#include "idgen/etcd.h"
#include "idgen/redis.h"
#include "idgen/zookeeper.h"
#include "idgen/lease.h"

#ifndef IDGEN_SOURCE_DIR
#define IDGEN_SOURCE_DIR "."
#endif

/* ---- The coordinators ---------------------------------------------------------------- */

typedef struct coordinator {
  const char *name;                     /* as --coordinator spells it */
  const idgen_lease_provider *provider; /* its lease provider's row */
  /* A script of scripts/ with the interface of scripts/etcd-cluster.sh: `start DIR
   * ARGS` starts the server on free loopback ports and prints its endpoints as its last
   * line; `stop DIR` stops it by PID; DIR/m0.pid is the server's PID. */
  const char *script;
  const char *start_args;
  const char *endpoints_option; /* the lease option (idgen_lease_config_set) they go to */
} coordinator;

/* One row per coordinator, run in this order: its provider row, its script of scripts/
 * (etcd-cluster.sh's interface: `start DIR ARGS` prints the endpoints; stop DIR;
 * DIR/m0.pid), and the lease option the endpoints go to. With more than one member, CPU
 * and RSS are member 0's alone. ZooKeeper's script sets maxClientCnxns=0: each holder is
 * one session, one connection from 127.0.0.1 (the default allows 60). */
static const coordinator coordinators[] = {
    {"etcd", &idgen_lease_etcd, "scripts/etcd-cluster.sh", "1", "etcd"},
    {"zookeeper", &idgen_lease_zookeeper, "scripts/zookeeper-cluster.sh", "1", "zookeeper"},
    {"redis", &idgen_lease_redis, "scripts/redis-server.sh", "--aof always", "redis"},
};
#define NCOORDINATORS (sizeof coordinators / sizeof coordinators[0])

/* ---- Timing the keepers' calls ---------------------------------------------------------
 */

/* Latencies in µs of the calls made while `measuring`, in a fixed array (a sample past
 * its end is counted, not kept). */
typedef struct samples {
  int64_t *us;
  size_t cap;
  atomic_size_t n;
  atomic_size_t failed;
} samples;

static atomic_int measuring;
static samples hwm_samples, keepalive_samples;

static int64_t mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void sample_add(samples *s, int64_t us, int rc) {
  if (!atomic_load(&measuring))
    return;
  if (rc) {
    atomic_fetch_add(&s->failed, 1);
    return;
  }
  size_t i = atomic_fetch_add(&s->n, 1);
  if (i < s->cap)
    s->us[i] = us;
}

int __real_idgen_lease_write_hwm(idgen_lease *lease, int64_t hwm_ms);
int __wrap_idgen_lease_write_hwm(idgen_lease *lease, int64_t hwm_ms);
int __real_idgen_lease_keepalive(idgen_lease *lease);
int __wrap_idgen_lease_keepalive(idgen_lease *lease);

int __wrap_idgen_lease_write_hwm(idgen_lease *lease, int64_t hwm_ms) {
  int64_t t = mono_us();
  int rc = __real_idgen_lease_write_hwm(lease, hwm_ms);
  sample_add(&hwm_samples, mono_us() - t, rc);
  return rc;
}

int __wrap_idgen_lease_keepalive(idgen_lease *lease) {
  int64_t t = mono_us();
  int rc = __real_idgen_lease_keepalive(lease);
  sample_add(&keepalive_samples, mono_us() - t, rc);
  return rc;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The q-quantile (nearest rank) of v[0..n), sorted in place; -1 when empty. */
static int64_t quantile(int64_t *v, size_t n, double q) {
  if (!n)
    return -1;
  qsort(v, n, sizeof *v, cmp_i64);
  size_t i = (size_t)(q * (double)n);
  return v[i < n ? i : n - 1];
}

/* ---- The coordinator's process ---------------------------------------------------------
 */

/* CPU time (user + system) of a process in ms, from /proc/PID/stat; -1 if unreadable. */
static int64_t cpu_ms_of(long pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[len] = 0;
  const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
  unsigned long long utime, stime;
  /* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
   * utime stime */
  if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                   &stime) != 2)
    return -1;
  return (int64_t)((utime + stime) * 1000 / (unsigned long long)sysconf(_SC_CLK_TCK));
}

/* A "Name:  value" line of /proc/PID/status as a number (kB for VmRSS, VmHWM); -1. */
static int64_t status_of(long pid, const char *name) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%ld/status", pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  int64_t v = -1;
  size_t nlen = strlen(name);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, name, nlen) && line[nlen] == ':') {
      v = strtoll(line + nlen + 1, NULL, 10);
      break;
    }
  fclose(f);
  return v;
}

/* Runs `SRC/SCRIPT VERB DIR ARGS`; with out, its last line of output (the endpoints). */
static int run_script(const char *src, const coordinator *c, const char *verb,
                      const char *dir, const char *args, char *out, size_t outlen) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s/%s' %s '%s' %s", src, c->script, verb, dir, args);
  FILE *p = popen(cmd, "r");
  if (!p)
    return -1;
  char line[1024];
  if (out && outlen)
    out[0] = 0;
  while (fgets(line, sizeof line, p)) {
    line[strcspn(line, "\n")] = 0;
    if (out && line[0])
      snprintf(out, outlen, "%s", line);
  }
  int st = pclose(p);
  return st == 0 ? 0 : -1;
}

/* ---- The fleet
 * --------------------------------------------------------------------------- */

typedef struct holder {
  idgen_lease *lease;
  idgen_gen *gen;
  idgen_keeper *keeper;
} holder;

/* What one coordinator's run measured. */
typedef struct result {
  const coordinator *c;
  int ok;            /* every check held */
  char failure[768]; /* the first check that failed */
  int holders;       /* holders that claimed a worker ID */
  int64_t claim_first_us, claim_median_us, claim_last_us, claim_max_us;
  int64_t fill_ms;      /* the N claims, one after another */
  int claim_retries;    /* claims that found the coordinator unavailable, tried again */
  int64_t last_held_ms; /* the N-th claim's start until it is held (the fresh-HWM wait) */
  int64_t all_held_ms;  /* the first claim's start until all are held */
  int extra_rc;         /* the (N+1)-th claim's answer */
  int64_t extra_us;
  char extra_why[512];
  double seconds; /* the window's length */
  double keepalives_per_s, hwm_per_s, hwm_scheduled_per_s, keepalives_scheduled_per_s;
  uint64_t failures, lost; /* in the window */
  int64_t hwm_p50_us, hwm_p99_us, hwm_max_us, ka_p50_us, ka_p99_us;
  double coord_cpu_fill_pct, coord_cpu_pct, self_cpu_pct;
  int64_t coord_rss_idle_kb, coord_rss_kb, coord_hwm_kb, self_rss_kb, self_threads;
  int64_t release_ms;      /* stopping all N (each releases its ID) */
  int64_t headroom_min_ms; /* the least cap - now seen in the window: below 0, a
                              generator issuing all along would have waited at its cap */
} result;

static int64_t self_cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (int64_t)ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000 +
         (int64_t)ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
}

static void fail(result *r, const char *what) {
  if (r->ok) {
    r->ok = 0;
    snprintf(r->failure, sizeof r->failure, "%s", what);
  }
  fprintf(stderr, "bench_fleet: %s: FAIL: %s\n", r->c->name, what);
}

static void sleep_ms(int64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) && errno == EINTR) {
  }
}

/* Opens one holder and claims a worker ID (the keeper's first acquire): 0 or the error,
 * with one line in err. */
static int holder_open(holder *h, const idgen_lease_config *cfg, const idgen_layout *layout,
                       idgen_clock *clock, char *err, size_t errlen) {
  memset(h, 0, sizeof *h);
  int rc = idgen_lease_open(&h->lease, cfg, layout, err, errlen);
  if (rc)
    return rc;
  idgen_gen_config gc;
  idgen_gen_config_init(&gc, clock);
  gc.layout = *layout;
  gc.armed = 0;
  if ((rc = idgen_gen_new(&h->gen, &gc))) {
    snprintf(err, errlen, "generator: %s", idgen_strerror(rc));
    return rc;
  }
  idgen_keeper_config kc;
  idgen_keeper_config_from(&kc, cfg);
  kc.lease = h->lease;
  kc.gen = h->gen;
  if ((rc = idgen_keeper_new(&h->keeper, &kc)))
    snprintf(err, errlen, "%s",
             idgen_lease_why(h->lease)[0] ? idgen_lease_why(h->lease) : idgen_strerror(rc));
  return rc;
}

static void holder_close(holder *h) {
  idgen_keeper_free(h->keeper);
  idgen_gen_free(h->gen);
  idgen_lease_free(h->lease);
  memset(h, 0, sizeof *h);
}

/* Sums of the keepers' counters. */
typedef struct totals {
  uint64_t renewals, hwm_writes, failures, lost;
} totals;

static totals totals_of(holder *hs, int n) {
  totals t = {0, 0, 0, 0};
  for (int i = 0; i < n; i++) {
    idgen_keeper_stats st;
    idgen_keeper_stats_get(hs[i].keeper, &st);
    t.renewals += st.renewals;
    t.hwm_writes += st.hwm_writes;
    t.failures += st.renewal_failures;
    t.lost += st.lease_lost;
  }
  return t;
}

/* Until end_us, every 50 ms: the least headroom any generator has below its cap (the
 * last HWM its keeper wrote, ahead of the clock by --hwm-ahead when just written). */
static int64_t watch_headroom(holder *hs, int n, int64_t end_us) {
  int64_t least = INT64_MAX;
  while (mono_us() < end_us) {
    for (int i = 0; i < n; i++) {
      idgen_keeper_stats st;
      idgen_keeper_stats_get(hs[i].keeper, &st);
      int64_t room = st.hwm_ms - idgen_gen_now_ns(hs[i].gen) / 1000000;
      if (room < least)
        least = room;
    }
    int64_t left_ms = (end_us - mono_us()) / 1000;
    sleep_ms(left_ms < 50 ? (left_ms > 0 ? left_ms : 0) : 50);
  }
  return least;
}

/* The checks on a full fleet: distinct workers that are exactly the space, each
 * generator issuing IDs of its own worker. */
static void check_workers(result *r, holder *hs, int n, const idgen_lease_space *space) {
  size_t nspace = (size_t)(space->hi - space->lo + 1);
  unsigned char *seen = calloc(nspace, 1);
  char why[256];
  for (int i = 0; i < n && seen; i++) {
    idgen_keeper_stats st;
    idgen_keeper_stats_get(hs[i].keeper, &st);
    if (st.worker < (int64_t)space->lo || st.worker > (int64_t)space->hi) {
      snprintf(why, sizeof why,
               "holder %d has worker %" PRId64 ", outside %" PRIu64 "-%" PRIu64, i,
               st.worker, space->lo, space->hi);
      fail(r, why);
      break;
    }
    if (seen[st.worker - (int64_t)space->lo]++) {
      snprintf(why, sizeof why, "worker %" PRId64 " held twice", st.worker);
      fail(r, why);
      break;
    }
    uint64_t id;
    idgen_parts parts;
    int rc = idgen_gen_next(hs[i].gen, &id);
    if (rc || idgen_decompose(idgen_gen_layout(hs[i].gen), id, &parts) ||
        parts.worker != (uint64_t)st.worker) {
      snprintf(why, sizeof why,
               "holder %d (worker %" PRId64 ") issued no ID of its own: %s", i, st.worker,
               rc ? idgen_strerror(rc) : "wrong worker field");
      fail(r, why);
      break;
    }
  }
  if ((size_t)n != nspace)
    fail(r, "the holders do not fill the space");
  free(seen);
}

enum { CLAIM_RETRIES = 3 };

/* The coordinator running now: stopped by its PID if the program is interrupted, so
 * that no server outlives the run (its directory, printed at the start, stays). */
static volatile sig_atomic_t running_pid;

static void on_signal(int sig) {
  if (running_pid > 0)
    kill((pid_t)running_pid, SIGTERM);
  _exit(128 + sig);
}

static void run_fleet(result *r, const char *src, int n, int seconds) {
  const coordinator *c = r->c;
  char dir[] = "/tmp/bench-fleet-XXXXXX", err[512];
  if (!mkdtemp(dir)) {
    fail(r, "mkdtemp failed");
    return;
  }
  char cdir[sizeof dir + 32], endpoints[1024], pidfile[sizeof cdir + 16];
  snprintf(cdir, sizeof cdir, "%s/%s", dir, c->name);
  fprintf(stderr, "bench_fleet: %s: starting it (%s start %s %s)\n", c->name, c->script,
          cdir, c->start_args);
  if (run_script(src, c, "start", cdir, c->start_args, endpoints, sizeof endpoints) ||
      !endpoints[0]) {
    fail(r, "the coordinator did not start");
    rmdir(dir);
    return;
  }
  snprintf(pidfile, sizeof pidfile, "%s/m0.pid", cdir);
  long pid = -1;
  FILE *pf = fopen(pidfile, "r");
  if (!pf || fscanf(pf, "%ld", &pid) != 1)
    fail(r, "no PID file m0.pid");
  if (pf)
    fclose(pf);
  running_pid = (sig_atomic_t)pid;
  fprintf(stderr, "bench_fleet: %s at %s, pid %ld\n", c->name, endpoints, pid);

  /* The config, through the options a user would set. */
  idgen_lease_config cfg;
  idgen_lease_config_init(&cfg);
  const idgen_lease_provider *providers[] = {c->provider, NULL};
  cfg.providers = providers;
  cfg.kind = c->provider->kind;
  char range[64];
  snprintf(range, sizeof range, "0-%d", n - 1);
  idgen_layout layout;
  idgen_lease_space space;
  if (idgen_lease_config_set(&cfg, c->endpoints_option, endpoints, err, sizeof err) ||
      idgen_lease_config_set(&cfg, "namespace", "fleet", err, sizeof err) ||
      (n < 1024 &&
       idgen_lease_config_set(&cfg, "worker-id-range", range, err, sizeof err)) ||
      idgen_layout_parse("snowflake", 9, 0, &layout, err, sizeof err) ||
      idgen_lease_space_of(&cfg, &layout, &space, err, sizeof err)) {
    fail(r, err);
    goto stop;
  }
  static idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);

  holder *hs = calloc((size_t)n, sizeof *hs);
  int64_t *claim_us = calloc((size_t)n, sizeof *claim_us);
  if (!hs || !claim_us) {
    fail(r, "out of memory");
    free(hs);
    free(claim_us);
    goto stop;
  }
  r->coord_rss_idle_kb = status_of(pid, "VmRSS");

  /* 1. N claims, one after another, the earlier holders keeping theirs meanwhile. */
  int64_t cpu0 = cpu_ms_of(pid), t0 = mono_us(), last_start = t0;
  for (int i = 0; i < n; i++) {
    last_start = mono_us();
    int rc;
    /* A coordinator too slow to answer within --etcd-timeout: tried again, as a
     * supervisor restarts a server that could not start; counted. */
    for (int tries = 0;; tries++) {
      rc = holder_open(&hs[i], &cfg, &layout, &clock.base, err, sizeof err);
      if (rc != IDGEN_EUNAVAIL || tries == CLAIM_RETRIES)
        break;
      r->claim_retries++;
      fprintf(stderr, "bench_fleet: %s: claim %d: %s; trying again\n", c->name, i + 1, err);
      holder_close(&hs[i]);
    }
    claim_us[i] = mono_us() - last_start;
    if (rc) {
      char why[700];
      snprintf(why, sizeof why, "claim %d of %d: %s: %s", i + 1, n, idgen_err_name(rc),
               err);
      fail(r, why);
      holder_close(&hs[i]);
      break;
    }
    r->holders = i + 1;
    if ((i + 1) % 128 == 0)
      fprintf(stderr, "bench_fleet: %s: %d claimed, the last in %.1f ms\n", c->name, i + 1,
              (double)claim_us[i] / 1000);
  }
  r->fill_ms = (mono_us() - t0) / 1000;
  int held = r->holders;
  if (held == n) {
    r->claim_first_us = claim_us[0];
    r->claim_last_us = claim_us[n - 1];
    for (int i = 0; i < n; i++)
      if (claim_us[i] > r->claim_max_us)
        r->claim_max_us = claim_us[i];
    r->claim_median_us = quantile(claim_us, (size_t)n, 0.5);
    /* held: past the fresh worker's HWM wait (ahead + one HWM interval) */
    if (idgen_keeper_wait_ready(hs[n - 1].keeper, 60000))
      fail(r, "the last holder was not held within 60 s");
    r->last_held_ms = (mono_us() - last_start) / 1000;
    for (int i = 0; i < n; i++)
      if (idgen_keeper_wait_ready(hs[i].keeper, 60000)) {
        fail(r, "a holder was not held within 60 s");
        break;
      }
    r->all_held_ms = (mono_us() - t0) / 1000;
  }
  int64_t cpu1 = cpu_ms_of(pid), t1 = mono_us();
  r->coord_cpu_fill_pct = 100.0 * (double)(cpu1 - cpu0) / ((double)(t1 - t0) / 1000);

  /* 2. One more: it must be refused, all being taken. */
  if (held == n) {
    holder extra;
    int64_t te = mono_us();
    r->extra_rc = holder_open(&extra, &cfg, &layout, &clock.base, err, sizeof err);
    r->extra_us = mono_us() - te;
    snprintf(r->extra_why, sizeof r->extra_why, "%s", r->extra_rc ? err : "(granted)");
    holder_close(&extra);
    if (r->extra_rc != IDGEN_ENOWORKER)
      fail(r, "the extra holder was not refused with IDGEN_ENOWORKER");
    check_workers(r, hs, n, &space);
  }

  /* 3. The window: all held, at the default intervals. */
  if (held == n) {
    totals a = totals_of(hs, n);
    int64_t ccpu = cpu_ms_of(pid), scpu = self_cpu_ms(), tw = mono_us();
    atomic_store(&measuring, 1);
    r->headroom_min_ms = watch_headroom(hs, n, tw + (int64_t)seconds * 1000000);
    atomic_store(&measuring, 0);
    double s = (double)(mono_us() - tw) / 1e6;
    totals b = totals_of(hs, n);
    r->seconds = s;
    r->coord_cpu_pct = 100.0 * (double)(cpu_ms_of(pid) - ccpu) / (s * 1000);
    r->self_cpu_pct = 100.0 * (double)(self_cpu_ms() - scpu) / (s * 1000);
    r->keepalives_per_s = (double)(b.renewals - a.renewals) / s;
    r->hwm_per_s = (double)(b.hwm_writes - a.hwm_writes) / s;
    r->hwm_scheduled_per_s = (double)n * 1000.0 / (double)cfg.hwm_interval_ms;
    r->keepalives_scheduled_per_s = (double)n / ((double)cfg.ttl_ms / 3.0 / 1000.0);
    r->failures = b.failures - a.failures;
    r->lost = b.lost - a.lost;
    size_t nh = atomic_load(&hwm_samples.n), nk = atomic_load(&keepalive_samples.n);
    nh = nh < hwm_samples.cap ? nh : hwm_samples.cap;
    nk = nk < keepalive_samples.cap ? nk : keepalive_samples.cap;
    r->hwm_p50_us = quantile(hwm_samples.us, nh, 0.5);
    r->hwm_p99_us = quantile(hwm_samples.us, nh, 0.99);
    r->hwm_max_us = nh ? hwm_samples.us[nh - 1] : -1;
    r->ka_p50_us = quantile(keepalive_samples.us, nk, 0.5);
    r->ka_p99_us = quantile(keepalive_samples.us, nk, 0.99);
    r->coord_rss_kb = status_of(pid, "VmRSS");
    r->coord_hwm_kb = status_of(pid, "VmHWM");
    r->self_rss_kb = status_of((long)getpid(), "VmRSS");
    r->self_threads = status_of((long)getpid(), "Threads");
    if (r->lost)
      fail(r, "a lease was lost in the window");
  }

  /* 4. A graceful end: each keeper writes its final HWM and releases its ID. */
  int64_t tr = mono_us();
  for (int i = 0; i < held; i++)
    if (idgen_keeper_stop(hs[i].keeper))
      fail(r, "a release failed");
  r->release_ms = (mono_us() - tr) / 1000;
  for (int i = 0; i < held; i++)
    holder_close(&hs[i]);
  free(hs);
  free(claim_us);

stop:
  run_script(src, c, "stop", cdir, "", NULL, 0);
  running_pid = 0;
  char rm[sizeof dir + 16];
  snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
  if (system(rm)) {
    /* a temp dir left behind is no failure of the fleet */
  }
}

/* ---- The table
 * --------------------------------------------------------------------------- */

static void ms3(char *out, size_t len, int64_t us) {
  if (us < 0)
    snprintf(out, len, "—");
  else
    snprintf(out, len, "%.1f", (double)us / 1000);
}

/* "1,024", "16": n as the tables spell it. */
static void count(char *out, size_t len, int n) {
  if (n >= 1000)
    snprintf(out, len, "%d,%03d", n / 1000, n % 1000);
  else
    snprintf(out, len, "%d", n);
}

/* "1,024th", "17th", "1,025th". */
static void ordinal(char *out, size_t len, int n) {
  const char *suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th"
                       : n % 10 == 1                    ? "st"
                       : n % 10 == 2                    ? "nd"
                       : n % 10 == 3                    ? "rd"
                                                        : "th";
  char c[16];
  count(c, sizeof c, n);
  snprintf(out, len, "%s%s", c, suffix);
}

static void print_table(FILE *f, const result *rs, size_t nr, int n, int seconds,
                        const char *cmdline) {
  char host[256] = "", date[32];
  double load[3] = {0, 0, 0};
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%MZ", gmtime(&now));
  if (getloadavg(load, 3) < 0)
    load[0] = load[1] = load[2] = -1;
  FILE *cpu = fopen("/proc/cpuinfo", "r");
  if (cpu) {
    char line[256];
    while (fgets(line, sizeof line, cpu))
      if (!strncmp(line, "model name", 10)) {
        const char *p = strchr(line, ':');
        snprintf(host, sizeof host, "%s", p ? p + 2 : line);
        host[strcspn(host, "\n")] = 0;
        break;
      }
    fclose(cpu);
  }
  char nc[16];
  count(nc, sizeof nc, n);
  fprintf(f,
          "Run of %s: `%s`. Machine: %ld cores (%s), shared; load average at the end: "
          "%.2f %.2f %.2f. %s holders from one process (each a provider handle, a "
          "generator and a keeper thread), default intervals (TTL 10 s, keepalive every "
          "TTL/3, HWM every 1 s), a %d s window with all held.\n\n",
          date, cmdline, sysconf(_SC_NPROCESSORS_ONLN), host, load[0], load[1], load[2], nc,
          seconds);
  fprintf(f, "| Measure |");
  for (size_t i = 0; i < nr; i++)
    fprintf(f, " %s |", rs[i].c->name);
  fprintf(f, "\n|---|");
  for (size_t i = 0; i < nr; i++)
    fprintf(f, "--:|");
  fprintf(f, "\n");
#define ROW(label, ...)                                                                    \
  do {                                                                                     \
    fprintf(f, "| %s |", label);                                                           \
    for (size_t i = 0; i < nr; i++) {                                                      \
      const result *r = &rs[i];                                                            \
      char a[32], b[32], cell[128];                                                        \
      (void)a;                                                                             \
      (void)b;                                                                             \
      __VA_ARGS__;                                                                         \
      fprintf(f, " %s |", cell);                                                           \
    }                                                                                      \
    fprintf(f, "\n");                                                                      \
  } while (0)
  ROW("holders that claimed a worker ID", count(cell, sizeof cell, r->holders));
  ROW("claim (open + acquire), 1st / median / max, ms", ms3(a, sizeof a, r->claim_first_us);
      ms3(b, sizeof b, r->claim_median_us);
      snprintf(cell, sizeof cell, "%s / %s / %.1f", a, b, (double)r->claim_max_us / 1000));
  char label[128], nth[32], next[32];
  ordinal(nth, sizeof nth, n);
  ordinal(next, sizeof next, n + 1);
  snprintf(label, sizeof label, "the %s claim, ms", nth);
  ROW(label, ms3(cell, sizeof cell, r->claim_last_us));
  ROW("claims tried again (the coordinator unavailable: a timeout)",
      snprintf(cell, sizeof cell, "%d", r->claim_retries));
  snprintf(label, sizeof label, "all %s claimed, one after another, s", nc);
  ROW(label, snprintf(cell, sizeof cell, "%.1f", (double)r->fill_ms / 1000));
  ROW("the last claim until held (the fresh worker's HWM wait), s",
      snprintf(cell, sizeof cell, "%.1f", (double)r->last_held_ms / 1000));
  snprintf(label, sizeof label, "one more holder (the %s): its answer", next);
  ROW(label, snprintf(cell, sizeof cell, "%s in %.1f ms",
                      r->extra_rc ? idgen_err_name(r->extra_rc) : "GRANTED",
                      (double)r->extra_us / 1000));
  ROW("keepalives/s (scheduled)",
      snprintf(cell, sizeof cell, "%.0f (%.0f)", r->keepalives_per_s,
               r->keepalives_scheduled_per_s));
  ROW("HWM writes/s (scheduled)",
      snprintf(cell, sizeof cell, "%.0f (%.0f)", r->hwm_per_s, r->hwm_scheduled_per_s));
  ROW("HWM write p50 / p99 / max, ms", ms3(a, sizeof a, r->hwm_p50_us);
      ms3(b, sizeof b, r->hwm_p99_us);
      snprintf(cell, sizeof cell, "%s / %s / %.1f", a, b, (double)r->hwm_max_us / 1000));
  ROW("least headroom below a cap (ahead 3 s), ms",
      snprintf(cell, sizeof cell, "%" PRId64, r->headroom_min_ms));
  ROW("keepalive p50 / p99, ms", ms3(a, sizeof a, r->ka_p50_us);
      ms3(b, sizeof b, r->ka_p99_us); snprintf(cell, sizeof cell, "%s / %s", a, b));
  ROW("failed keepalives + HWM writes / leases lost, in the window",
      snprintf(cell, sizeof cell, "%" PRIu64 " / %" PRIu64, r->failures, r->lost));
  ROW("coordinator CPU, % of one core: filling / all held",
      snprintf(cell, sizeof cell, "%.0f / %.0f", r->coord_cpu_fill_pct, r->coord_cpu_pct));
  ROW("coordinator RSS, MiB: idle / all held (peak)",
      snprintf(cell, sizeof cell, "%.0f / %.0f (%.0f)", (double)r->coord_rss_idle_kb / 1024,
               (double)r->coord_rss_kb / 1024, (double)r->coord_hwm_kb / 1024));
  ROW("holders' process: CPU % of one core / RSS MiB / threads",
      snprintf(cell, sizeof cell, "%.0f / %.0f / %" PRId64, r->self_cpu_pct,
               (double)r->self_rss_kb / 1024, r->self_threads));
  ROW("stop all (final HWM + release each), s",
      snprintf(cell, sizeof cell, "%.1f", (double)r->release_ms / 1000));
  ROW("checks", snprintf(cell, sizeof cell, "%s", r->ok ? "passed" : "FAILED"));
#undef ROW
  fprintf(f, "\n");
  for (size_t i = 0; i < nr; i++) {
    fprintf(f, "The %s holder's answer from %s: `%s: %s`\n\n", next, rs[i].c->name,
            rs[i].extra_rc ? idgen_err_name(rs[i].extra_rc) : "0", rs[i].extra_why);
    if (!rs[i].ok)
      fprintf(f, "%s FAILED: %s\n", rs[i].c->name, rs[i].failure);
  }
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      fprintf(f, "\\u%04x", *s);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}

static int write_json(const char *path, const result *rs, size_t nr, int n, int seconds) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  fprintf(f, "{\"bench\": \"fleet\", \"holders\": %d, \"seconds\": %d, \"coordinators\": [",
          n, seconds);
  for (size_t i = 0; i < nr; i++) {
    const result *r = &rs[i];
    fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
    json_str(f, r->c->name);
    fprintf(f,
            ", \"ok\": %s, \"holders\": %d, \"claim_first_ms\": %.2f, "
            "\"claim_median_ms\": %.2f, \"claim_last_ms\": %.2f, \"claim_max_ms\": %.2f, "
            "\"fill_s\": %.2f, \"last_held_s\": %.2f, \"all_held_s\": %.2f, "
            "\"extra_error\": \"%s\", \"extra_ms\": %.2f, \"extra_why\": ",
            r->ok ? "true" : "false", r->holders, (double)r->claim_first_us / 1000,
            (double)r->claim_median_us / 1000, (double)r->claim_last_us / 1000,
            (double)r->claim_max_us / 1000, (double)r->fill_ms / 1000,
            (double)r->last_held_ms / 1000, (double)r->all_held_ms / 1000,
            r->extra_rc ? idgen_err_name(r->extra_rc) : "", (double)r->extra_us / 1000);
    json_str(f, r->extra_why);
    fprintf(f,
            ", \"window_s\": %.2f, \"keepalives_per_s\": %.1f, "
            "\"keepalives_scheduled_per_s\": %.1f, \"hwm_writes_per_s\": %.1f, "
            "\"hwm_writes_scheduled_per_s\": %.1f, \"hwm_p50_ms\": %.2f, \"hwm_p99_ms\": "
            "%.2f, \"hwm_max_ms\": %.2f, \"keepalive_p50_ms\": %.2f, \"keepalive_p99_ms\": "
            "%.2f, \"failures\": %" PRIu64 ", \"lost\": %" PRIu64
            ", \"coordinator_cpu_fill_pct\": %.1f, \"coordinator_cpu_pct\": %.1f, "
            "\"coordinator_rss_idle_kb\": %" PRId64 ", \"coordinator_rss_kb\": %" PRId64
            ", \"coordinator_rss_peak_kb\": %" PRId64 ", \"holders_cpu_pct\": %.1f, "
            "\"holders_rss_kb\": %" PRId64 ", \"holders_threads\": %" PRId64
            ", \"stop_all_s\": %.2f, \"headroom_min_ms\": %" PRId64
            ", \"claim_retries\": %d}",
            r->seconds, r->keepalives_per_s, r->keepalives_scheduled_per_s, r->hwm_per_s,
            r->hwm_scheduled_per_s, (double)r->hwm_p50_us / 1000,
            (double)r->hwm_p99_us / 1000, (double)r->hwm_max_us / 1000,
            (double)r->ka_p50_us / 1000, (double)r->ka_p99_us / 1000, r->failures, r->lost,
            r->coord_cpu_fill_pct, r->coord_cpu_pct, r->coord_rss_idle_kb, r->coord_rss_kb,
            r->coord_hwm_kb, r->self_cpu_pct, r->self_rss_kb, r->self_threads,
            (double)r->release_ms / 1000, r->headroom_min_ms, r->claim_retries);
  }
  fprintf(f, "\n]}\n");
  return fclose(f) ? -1 : 0;
}

/* ---- main ------------------------------------------------------------------------------
 */

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: bench_fleet [--holders N] [--seconds S] [--coordinator NAME]... [--src DIR]"
      "\n                   [--json FILE] [--md FILE]\n"
      "N holders (default 1024, 2..1024) claim worker IDs from one process against each\n"
      "coordinator (default all:");
  for (size_t i = 0; i < NCOORDINATORS; i++)
    fprintf(out, " %s", coordinators[i].name);
  fprintf(out,
          "), started by SRC/scripts (default %s); one more\n"
          "must be refused; then S seconds (default 20) all held. Prints a table;\n"
          "--md FILE writes it too, --json FILE the figures.\n",
          IDGEN_SOURCE_DIR);
}

static int parse_int(const char *s, int lo, int hi, int *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi)
    return -1;
  *out = (int)v;
  return 0;
}

int main(int argc, char **argv) {
  int n = 1024, seconds = 20;
  const char *src = IDGEN_SOURCE_DIR, *json_path = NULL, *md_path = NULL;
  const coordinator *chosen[NCOORDINATORS];
  size_t nchosen = 0;
  static const struct option opts[] = {{"holders", required_argument, NULL, 'n'},
                                       {"seconds", required_argument, NULL, 's'},
                                       {"coordinator", required_argument, NULL, 'c'},
                                       {"src", required_argument, NULL, 'S'},
                                       {"json", required_argument, NULL, 'j'},
                                       {"md", required_argument, NULL, 'm'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int opt;
  opterr = 0; /* one line of our own below */
  while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (opt) {
    case 'n':
      if (parse_int(optarg, 2, 1024, &n)) {
        fprintf(stderr, "bench_fleet: --holders takes 2..1024, not '%s'\n", optarg);
        return 2;
      }
      break;
    case 's':
      if (parse_int(optarg, 1, 3600, &seconds)) {
        fprintf(stderr, "bench_fleet: --seconds takes 1..3600, not '%s'\n", optarg);
        return 2;
      }
      break;
    case 'c': {
      size_t i = 0;
      while (i < NCOORDINATORS && strcmp(coordinators[i].name, optarg))
        i++;
      if (i == NCOORDINATORS) {
        fprintf(stderr, "bench_fleet: unknown coordinator '%s' (see --help)\n", optarg);
        return 2;
      }
      if (nchosen < NCOORDINATORS)
        chosen[nchosen++] = &coordinators[i];
      break;
    }
    case 'S':
      src = optarg;
      break;
    case 'j':
      json_path = optarg;
      break;
    case 'm':
      md_path = optarg;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      fprintf(stderr, "bench_fleet: bad option or missing value: '%s' (see --help)\n",
              argv[optind - 1]);
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "bench_fleet: unexpected argument '%s' (see --help)\n", argv[optind]);
    return 2;
  }
  if (!nchosen)
    for (; nchosen < NCOORDINATORS; nchosen++)
      chosen[nchosen] = &coordinators[nchosen];

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  /* Each holder keeps a connection and an eventfd open: raise the soft limit. */
  struct rlimit rl;
  if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  /* room for every call of the window, twice over */
  hwm_samples.cap = (size_t)n * (size_t)seconds * 2 + 1024;
  keepalive_samples.cap = hwm_samples.cap;
  hwm_samples.us = calloc(hwm_samples.cap, sizeof(int64_t));
  keepalive_samples.us = calloc(keepalive_samples.cap, sizeof(int64_t));
  result *rs = calloc(nchosen, sizeof *rs);
  if (!hwm_samples.us || !keepalive_samples.us || !rs) {
    fprintf(stderr, "bench_fleet: out of memory\n");
    return 1;
  }
  int all_ok = 1;
  for (size_t i = 0; i < nchosen; i++) {
    atomic_store(&hwm_samples.n, 0);
    atomic_store(&keepalive_samples.n, 0);
    atomic_store(&hwm_samples.failed, 0);
    atomic_store(&keepalive_samples.failed, 0);
    rs[i].c = chosen[i];
    rs[i].ok = 1;
    run_fleet(&rs[i], src, n, seconds);
    all_ok &= rs[i].ok;
  }
  char cmdline[512] = "bench_fleet";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--md") ||
        !strcmp(argv[i], "--src")) {
      i++; /* where the results go is not part of what was measured */
      continue;
    }
    size_t len = strlen(cmdline);
    snprintf(cmdline + len, sizeof cmdline - len, " %s", argv[i]);
  }
  print_table(stdout, rs, nchosen, n, seconds, cmdline);
  if (md_path) {
    FILE *f = fopen(md_path, "w");
    if (!f) {
      perror(md_path);
      return 1;
    }
    print_table(f, rs, nchosen, n, seconds, cmdline);
    fclose(f);
  }
  if (json_path && write_json(json_path, rs, nchosen, n, seconds)) {
    perror(json_path);
    return 1;
  }
  free(rs);
  free(hwm_samples.us);
  free(keepalive_samples.us);
  return all_ok ? 0 : 1;
}
