/* lease_holder.c: a test program that holds a worker-ID lease and issues IDs, printing
 * "<ms> <worker> <id>" lines on stdout and "# ..." events (states, refusals, each new
 * lease error, each HWM the keeper has written) on stderr, until SIGTERM
 * (graceful: final HWM, release), --duration-ms after it first held the lease, or once
 * --count IDs were issued (--every-ms 0: up to 1024 IDs between two looks at the keeper).
 * Usage: lease_holder [lease options] [--layout SPEC] [--every-ms N] [--duration-ms N]
 *        [--count N] */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "idgen.h"
#include "idgen/etcd.h"
#include "idgen/redis.h"
#include "idgen/zookeeper.h"
#include "idgen/lease.h"

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

static void sleep_ms(int64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  setvbuf(stderr, NULL, _IOLBF, 0);
  const idgen_lease_option *lo = idgen_lease_options();
  size_t nlo = 0;
  while (lo[nlo].name)
    nlo++;
  struct option *opts = calloc(nlo + 5, sizeof *opts);
  size_t k = 0;
  for (size_t i = 0; i < nlo; i++)
    opts[k++] = (struct option){lo[i].name, lo[i].has_arg ? required_argument : no_argument,
                                NULL, 1000 + (int)i};
  opts[k++] = (struct option){"layout", required_argument, NULL, 'l'};
  opts[k++] = (struct option){"every-ms", required_argument, NULL, 'e'};
  opts[k++] = (struct option){"duration-ms", required_argument, NULL, 'd'};
  opts[k++] = (struct option){"count", required_argument, NULL, 'c'};

  idgen_lease_config cfg;
  idgen_lease_config_init(&cfg);
  char err[512];
  if (idgen_lease_config_env(&cfg, err, sizeof err)) {
    fprintf(stderr, "lease_holder: %s\n", err);
    return 2;
  }
  const char *layout_spec = "snowflake";
  int64_t every_ms = 2, duration_ms = 0, count = 0, issued = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (opt >= 1000) {
      if (idgen_lease_config_set(&cfg, lo[opt - 1000].name, optarg, err, sizeof err)) {
        fprintf(stderr, "lease_holder: %s\n", err);
        return 2;
      }
    } else if (opt == 'l') {
      layout_spec = optarg;
    } else if (opt == 'e') {
      every_ms = atoll(optarg);
    } else if (opt == 'd') {
      duration_ms = atoll(optarg);
    } else if (opt == 'c') {
      count = atoll(optarg);
    } else {
      return 2;
    }
  }
  free(opts);

  idgen_layout layout;
  if (idgen_layout_parse(layout_spec, strlen(layout_spec), 0, &layout, err, sizeof err)) {
    fprintf(stderr, "lease_holder: layout: %s\n", err);
    return 2;
  }
  static const idgen_lease_provider *const providers[] = {
      &idgen_lease_etcd, &idgen_lease_zookeeper, &idgen_lease_redis, NULL};
  cfg.providers = providers; /* every provider the binary has */
  idgen_lease *lease = NULL;
  int rc = idgen_lease_open(&lease, &cfg, &layout, err, sizeof err);
  if (rc) {
    fprintf(stderr, "lease_holder: %s\n", err);
    return 1;
  }
  static idgen_clock_mono clock;
  idgen_clock_mono_init(&clock);
  idgen_gen_config gc;
  idgen_gen_config_init(&gc, &clock.base);
  gc.layout = layout;
  gc.armed = 0;
  gc.policy = IDGEN_POLICY_WAIT;
  idgen_gen *gen = NULL;
  if ((rc = idgen_gen_new(&gen, &gc))) {
    fprintf(stderr, "lease_holder: generator: %s\n", idgen_strerror(rc));
    idgen_lease_free(lease);
    return 1;
  }
  idgen_keeper_config kc;
  idgen_keeper_config_from(&kc, &cfg);
  kc.lease = lease;
  kc.gen = gen;
  idgen_keeper *keeper = NULL;
  if ((rc = idgen_keeper_new(&keeper, &kc))) {
    fprintf(stderr, "lease_holder: %s\n",
            idgen_lease_why(lease)[0] ? idgen_lease_why(lease) : idgen_strerror(rc));
    idgen_gen_free(gen);
    idgen_lease_free(lease);
    return 1;
  }
  idgen_keeper_stats st;
  idgen_keeper_stats_get(keeper, &st);
  fprintf(stderr, "# acquired worker=%lld floor=%lld\n", (long long)st.worker,
          (long long)st.floor_ms);
  if (st.skipped) {
    char why[256];
    idgen_keeper_last_error(keeper, why, sizeof why);
    fprintf(stderr, "# skipped %llu (%s)\n", (unsigned long long)st.skipped, why);
  }

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);

  int last_state = -1;
  int last_err = 0;
  int64_t last_hwm = -1;
  int64_t started = 0; /* --duration-ms counts from the first "held" */
  char last_lease_err[256] = "";
  while (!stop_flag) {
    if (duration_ms && started && idgen_monotonic_ns() - started > duration_ms * 1000000)
      break;
    idgen_keeper_state state = idgen_keeper_state_get(keeper);
    if (!started && state == IDGEN_KEEPER_HELD)
      started = idgen_monotonic_ns();
    idgen_keeper_stats_get(keeper, &st);
    if ((int)state != last_state) {
      fprintf(stderr, "# state %s worker=%lld floor=%lld hwm=%lld\n",
              idgen_keeper_state_name(state), (long long)st.worker, (long long)st.floor_ms,
              (long long)st.hwm_ms);
      last_state = (int)state;
    }
    if (st.hwm_ms != last_hwm) { /* the HWM the keeper holds written, on change */
      fprintf(stderr, "# hwm %lld\n", (long long)st.hwm_ms);
      last_hwm = st.hwm_ms;
    }
    uint64_t id;
    int burst = every_ms == 0 ? 1024 : 1;
    for (int b = 0; b < burst && (rc = idgen_gen_next(gen, &id)) == 0; b++) {
      idgen_parts p;
      idgen_decompose(&layout, id, &p);
      printf("%lld %llu %llu\n", (long long)p.time_ms, (unsigned long long)p.worker,
             (unsigned long long)id);
      last_err = 0;
      if (count && ++issued >= count)
        stop_flag = 1;
      if (stop_flag)
        break;
    }
    if (rc != 0 && rc != last_err) {
      char why[256];
      idgen_keeper_last_error(keeper, why, sizeof why);
      fprintf(stderr, "# refused %s (%s)\n", idgen_err_name(rc), why);
      last_err = rc;
    }
    char lease_err[256]; /* each new lease error once, e.g. a fence refusal */
    idgen_keeper_last_error(keeper, lease_err, sizeof lease_err);
    if (strcmp(lease_err, last_lease_err)) {
      fprintf(stderr, "# error %s\n", lease_err);
      snprintf(last_lease_err, sizeof last_lease_err, "%s", lease_err);
    }
    sleep_ms(every_ms);
  }
  idgen_keeper_stats_get(keeper, &st);
  int64_t last = idgen_gen_last_ms(gen);
  rc = idgen_keeper_stop(keeper);
  idgen_keeper_stats_get(keeper, &st);
  fprintf(stderr,
          "# stopped rc=%d last_ms=%lld hwm=%lld renewals=%llu failures=%llu lost=%llu "
          "hwm_writes=%llu\n",
          rc, (long long)last, (long long)st.hwm_ms, (unsigned long long)st.renewals,
          (unsigned long long)st.renewal_failures, (unsigned long long)st.lease_lost,
          (unsigned long long)st.hwm_writes);
  idgen_keeper_free(keeper);
  idgen_gen_free(gen);
  idgen_lease_free(lease);
  return rc ? 1 : 0;
}
