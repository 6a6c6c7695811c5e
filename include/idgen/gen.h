/* idgen/gen.h: the Snowflake generator: lock-free, thread-safe, with clock-back
 * policies and the hooks a lease feeds it (worker ID, deadline, high-water cap). */
#ifndef IDGEN_GEN_H
#define IDGEN_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/clock.h"
#include "idgen/error.h"
#include "idgen/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct idgen_gen idgen_gen;

typedef enum idgen_policy {
  IDGEN_POLICY_FAIL = 0,    /* clock behind the last ID: IDGEN_ECLOCKBACK until it passes */
  IDGEN_POLICY_WAIT = 1,    /* spin up to spin_ns, sleep up to broken_ns, then fail */
  IDGEN_POLICY_LOGICAL = 2, /* keep counting from the last time; never blocks */
} idgen_policy;

/* "fail", "wait", "logical" -> policy; IDGEN_EINVAL otherwise. */
IDGEN_API int idgen_policy_parse(const char *name, idgen_policy *out);
IDGEN_API const char *idgen_policy_name(idgen_policy policy);

#define IDGEN_NO_DEADLINE INT64_MAX
#define IDGEN_NO_CAP INT64_MAX

typedef struct idgen_gen_config {
  idgen_layout layout; /* validated by idgen_gen_new */
  idgen_clock *clock;  /* required; must outlive the generator */
  idgen_policy policy;
  int64_t spin_ns;     /* WAIT: spin this long first; 0 means 1 ms */
  int64_t broken_ns;   /* WAIT: give up after this long behind; 0 means 500 ms */
  int64_t cap_wait_ns; /* cap reached: wait this long for a renewal, then fail
                          (sticky); 0 means 50 ms, negative means fail at once */
  /* Keep counting the sequence across time units until it passes this value, then
   * reset at the next unit (spreads id % n at low traffic). 0: reset every unit. */
  uint64_t seq_reset_threshold;
  /* Start armed with this worker (see idgen_gen_arm); if armed is 0 the generator
   * refuses with IDGEN_ENOTARMED until idgen_gen_arm is called. */
  int armed;
  uint64_t worker;
  int64_t floor_ms;    /* issue nothing at or below this Unix ms (a HWM); 0: none */
  int64_t cap_ms;      /* issue nothing above this Unix ms; IDGEN_NO_CAP: none */
  int64_t deadline_ns; /* refuse from this clock time on; IDGEN_NO_DEADLINE: none */
  /* 1: the generator's memory is shared by every process that uses it (made with
   * idgen_gen_init in a MAP_SHARED mapping, such as PostgreSQL's shared memory, before
   * the fork()s). There is one state word for all of them, so parent and child cannot
   * issue the same ID, and the fork check (IDGEN_EFORKED, see idgen_gen_next) does not
   * apply. The clock must then be at the same address, and valid, in every process
   * (a clock in the same shared memory, or in static data of the process that forks).
   * 0 (the default): private memory, and the fork check holds. */
  int process_shared;
} idgen_gen_config;

/* A config with the defaults: snowflake layout, the caller's clock, WAIT policy,
 * armed with worker 0, no floor, cap or deadline. */
IDGEN_API void idgen_gen_config_init(idgen_gen_config *config, idgen_clock *clock);

/* Creates a generator. IDGEN_ELAYOUT for a bad layout, IDGEN_ERANGE for a worker the
 * layout cannot hold, IDGEN_ETIMEEND if the clock is already past the layout's end,
 * IDGEN_EBEFOREEPOCH if it is before the epoch, IDGEN_EINVAL for a NULL clock. */
IDGEN_API int idgen_gen_new(idgen_gen **out, const idgen_gen_config *config);
/* Frees; NULL is fine. No other call may be running on it. A generator made by
 * idgen_gen_init is left alone: its memory is the caller's. */
IDGEN_API void idgen_gen_free(idgen_gen *gen);

/* In place, for memory the caller provides (shared memory above all): the bytes a
 * generator takes, and the alignment that memory needs. */
#define IDGEN_GEN_ALIGN 64
IDGEN_API size_t idgen_gen_size(void);

/* Makes a generator in mem[0..size): mem aligned to IDGEN_GEN_ALIGN, size at least
 * idgen_gen_size(). It holds no other resource, so there is nothing to free; the
 * caller keeps mem in place (never copied nor moved) while the generator is used.
 * *out is mem on success. Errors as idgen_gen_new, and IDGEN_EINVAL for a NULL or
 * misaligned mem, IDGEN_EBUFSIZE for a size too small; mem is untouched on failure.
 * Not thread-safe: make it before any process or thread uses it. */
IDGEN_API int idgen_gen_init(idgen_gen **out, void *mem, size_t size,
                             const idgen_gen_config *config);

/* Issues one ID. Thread-safe and lock-free: one CAS on a packed (time, seq) word.
 * Errors: IDGEN_ECLOCKBACK (policy), IDGEN_ELEASE (deadline passed; sticky until
 * armed), IDGEN_ECAP (cap reached and not raised in cap_wait_ns; sticky until the cap
 * is raised or the generator armed), IDGEN_ENOTARMED, IDGEN_EFORKED (see fork below),
 * IDGEN_ETIMEEND. When the sequence of the current unit is used up it spins until the
 * next unit.
 *
 * fork(): a child inherits the generator as it was, armed with the parent's worker ID,
 * cap and (time, seq) state, so the two would issue the same IDs. In the child every
 * call refuses with IDGEN_EFORKED (sticky) until idgen_gen_arm is called there, with a
 * worker ID that no other process holds: from a lease won in the child (a new
 * idgen_keeper; see idgen/lease.h), never the parent's. This holds for unfenced
 * (static) generators too. The parent is not affected. A generator made with
 * process_shared (see idgen_gen_config) is not a copy in the child but the same
 * memory, so none of this applies: the child issues as the parent does. */
IDGEN_API int idgen_gen_next(idgen_gen *gen, uint64_t *id);

/* Issues n IDs into ids[0..n), increasing. Reserves each unit's run of sequence
 * numbers with one CAS; a batch larger than a unit holds spans units. Returns n, or
 * a negative error if none was issued; if some were issued before an error, returns
 * how many (ids[0..count) are valid). Thread-safe. */
IDGEN_API int64_t idgen_gen_next_batch(idgen_gen *gen, uint64_t *ids, size_t n);

/* Arms the generator for a worker: sets worker, floor, cap and deadline at once and
 * clears every sticky refusal; it issues in this process only (a forked child refuses
 * until armed there), or in every process sharing it (process_shared). Raising state only:
 * the generator never issues a (time, seq) at or below one it issued before, whatever the
 * floor. An ID is only returned if it was issued entirely within one armed period.
 * Thread-safe. */
IDGEN_API int idgen_gen_arm(idgen_gen *gen, uint64_t worker, int64_t floor_ms,
                            int64_t cap_ms, int64_t deadline_ns);
/* Stops issuing (IDGEN_ENOTARMED) until armed again. When it returns, no call that has
 * not yet returned an ID will return one, and idgen_gen_last_ms called after it covers
 * every ID returned: a final HWM can be read then. Thread-safe. */
IDGEN_API void idgen_gen_disarm(idgen_gen *gen);
/* Raises the cap (never lowers it) and clears a sticky IDGEN_ECAP. Thread-safe. */
IDGEN_API void idgen_gen_set_cap(idgen_gen *gen, int64_t cap_ms);
/* Moves the deadline; ignored once the deadline has passed (that is sticky until
 * armed). Thread-safe. */
IDGEN_API void idgen_gen_set_deadline(idgen_gen *gen, int64_t deadline_ns);

/* The clock time of the generator's clock, in Unix ns (for deadlines). */
IDGEN_API int64_t idgen_gen_now_ns(idgen_gen *gen);
/* Unix ms of the newest time field issued so far (0 if none): the final HWM. */
IDGEN_API int64_t idgen_gen_last_ms(const idgen_gen *gen);
IDGEN_API const idgen_layout *idgen_gen_layout(const idgen_gen *gen);

typedef struct idgen_gen_stats {
  uint64_t issued;             /* IDs handed out */
  uint64_t seq_waits;          /* times the sequence ran out and it waited for a unit */
  uint64_t clock_back;         /* calls that found the clock behind the last ID */
  uint64_t clock_back_waited;  /* ... and waited it out (WAIT) */
  uint64_t clock_back_logical; /* ... and counted on from the last time (LOGICAL) */
  uint64_t clock_back_failed;  /* ... and failed (FAIL, or WAIT past broken_ns) */
  uint64_t cap_waits;          /* times it waited at the cap */
  uint64_t refused_lease;      /* calls refused: deadline passed */
  uint64_t refused_cap;        /* calls refused: cap */
  uint64_t refused_unarmed;    /* calls refused: not armed */
  uint64_t refused_forked;     /* calls refused: used in a forked child */
  uint64_t worker;             /* current worker ID */
  int armed;                   /* 1 while armed and no sticky refusal holds */
  int refusal;                 /* 0, or the refusal in force: IDGEN_ENOTARMED,
                                  IDGEN_ELEASE, IDGEN_ECAP or IDGEN_EFORKED */
  int64_t cap_ms;              /* current cap, Unix ms */
  int64_t deadline_ns;         /* current deadline */
  int64_t last_ms;             /* as idgen_gen_last_ms */
} idgen_gen_stats;

/* A snapshot of the counters; each is exact, their sum may be a moment apart. */
IDGEN_API void idgen_gen_stats_get(const idgen_gen *gen, idgen_gen_stats *out);

#ifdef __cplusplus
}
#endif
#endif
