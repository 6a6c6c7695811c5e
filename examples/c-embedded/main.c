/* c-embedded: idgen as a library inside your program, no server. The file provider
 * gives this process a worker ID of its own on this host (a lock file in a state
 * directory keeps its high-water mark), a keeper thread renews it, and the generator
 * makes 1,000 IDs; then one is decoded back into its time, worker and sequence.
 *
 *   cc main.c $(pkg-config --cflags --libs idgen) -o embedded && ./embedded
 *
 * IDGEN_STATE_DIR and IDGEN_NAMESPACE choose where the worker ID is kept (default:
 * ~/.local/state/idgen, or /var/lib/idgen for root). */
#include <idgen.h>
#include <inttypes.h>
#include <stdio.h>

#define COUNT 1000

int main(void) {
  char err[256] = "";
  idgen_layout layout;
  idgen_layout_preset("snowflake", &layout); /* 41 bits of ms, 10 of worker, 12 of seq */

  /* 1. The worker ID: the file provider, configured from the environment. */
  idgen_lease_config lease_config;
  idgen_lease_config_init(&lease_config);
  idgen_lease *lease = NULL;
  if (idgen_lease_config_env(&lease_config, err, sizeof err) < 0 ||
      idgen_lease_open(&lease, &lease_config, &layout, err, sizeof err) < 0) {
    fprintf(stderr, "embedded: %s\n", err);
    return 1;
  }

  /* 2. The generator: unarmed until the keeper hands it the worker ID it won. */
  idgen_clock_mono clock; /* monotonic, anchored to the wall clock */
  idgen_clock_mono_init(&clock);
  idgen_gen_config gen_config;
  idgen_gen_config_init(&gen_config, &clock.base);
  gen_config.armed = 0;
  idgen_gen *gen = NULL;
  int rc = idgen_gen_new(&gen, &gen_config);

  /* 3. The keeper: wins the ID, waits past its last HWM, arms the generator, renews. */
  idgen_keeper_config keeper_config;
  idgen_keeper_config_from(&keeper_config, &lease_config);
  keeper_config.lease = lease;
  keeper_config.gen = gen;
  idgen_keeper *keeper = NULL;
  if (rc == 0)
    rc = idgen_keeper_new(&keeper, &keeper_config);
  if (rc == 0)
    rc = idgen_keeper_wait_ready(keeper, 30000); /* a new ID's first holder waits ~4 s */
  if (rc < 0) {
    fprintf(stderr, "embedded: %s (%s)\n", idgen_strerror(rc), idgen_lease_why(lease));
    idgen_keeper_free(keeper);
    idgen_gen_free(gen);
    idgen_lease_free(lease);
    return 1;
  }

  /* 4. 1,000 IDs in one call: increasing, and unique across every holder of the ID. */
  static uint64_t ids[COUNT];
  int64_t got = idgen_gen_next_batch(gen, ids, COUNT);
  if (got != COUNT) {
    fprintf(stderr, "embedded: %s\n", idgen_strerror(got < 0 ? (int)got : IDGEN_EEXHAUSTED));
    rc = 1;
  } else {
    /* 5. Decode the last one: time, worker, sequence. */
    idgen_parts parts;
    char when[40], base62[IDGEN_FORMAT_MAX];
    idgen_decompose(&layout, ids[COUNT - 1], &parts);
    idgen_format_time(parts.time_ms, when, sizeof when);
    idgen_id_format(ids[COUNT - 1], IDGEN_FORMAT_BASE62, &layout, base62, sizeof base62);
    printf("%d IDs, worker %" PRIu64 "; the last: %" PRIu64 " (base62 %s) made at %s, "
           "sequence %" PRIu64 "\n",
           COUNT, parts.node[0], ids[COUNT - 1], base62, when, parts.seq);
  }

  /* 6. Stop: the last HWM is written and the worker ID released at once. */
  idgen_keeper_free(keeper);
  idgen_gen_free(gen);
  idgen_lease_free(lease);
  return rc;
}
