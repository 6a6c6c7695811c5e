/* idgen/lease.h: worker-ID leases with a fenced high-water mark (HWM): one provider
 * vtable (static, k8s, file, etcd, zookeeper), its configuration, and the keeper that feeds a
 * generator. See docs/leases.md for the safety argument and the failure table. */
#ifndef IDGEN_LEASE_H
#define IDGEN_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/error.h"
#include "idgen/gen.h"
#include "idgen/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Configuration, shared by the CLI and the server ---------------------------- */

typedef enum idgen_lease_kind {
  IDGEN_LEASE_FILE = 0,   /* one host: the smallest worker ID free on this host (default) */
  IDGEN_LEASE_STATIC = 1, /* --worker-id N: NO FENCE, the operator keeps IDs unique */
  IDGEN_LEASE_K8S = 2,    /* StatefulSet ordinal + offset: unique within one set */
  IDGEN_LEASE_ETCD = 3,   /* etcd v3 leases through its JSON gateway */
  IDGEN_LEASE_ZOOKEEPER = 4, /* ZooKeeper sessions and versioned setData (3.8 C client) */
  IDGEN_LEASE_REDIS = 5,  /* Redis keys with PX expiry and Lua scripts: NOT a consensus
                             store, see docs/leases.md (libidgen-redis, idgen/redis.h) */
} idgen_lease_kind;

#define IDGEN_LEASE_PATH_MAX 512
#define IDGEN_LEASE_NAME_MAX 64
#define IDGEN_LEASE_ENDPOINTS_MAX 8

struct idgen_lease_provider;

typedef struct idgen_lease_config {
  idgen_lease_kind kind;                /* --lease, IDGEN_LEASE */
  char state_dir[IDGEN_LEASE_PATH_MAX]; /* --state-dir, IDGEN_STATE_DIR; "" = default */
  int64_t worker_id;        /* --worker-id, IDGEN_WORKER_ID (static); -1 unset */
  int64_t worker_id_offset; /* --worker-id-offset, IDGEN_WORKER_ID_OFFSET (k8s) */
  int64_t pod_index;        /* IDGEN_POD_INDEX (k8s); -1: from the hostname */
  char hostname[IDGEN_LEASE_NAME_MAX]; /* for k8s and holder records; "" = gethostname */
  char endpoints[IDGEN_LEASE_ENDPOINTS_MAX][IDGEN_LEASE_PATH_MAX]; /* --etcd URLS */
  int nendpoints;
  char zookeeper[IDGEN_LEASE_PATH_MAX]; /* --zookeeper HOST:PORT[,...], IDGEN_ZOOKEEPER */
  char ns[IDGEN_LEASE_NAME_MAX]; /* --namespace, IDGEN_NAMESPACE; default "default" */
  int64_t ttl_ms;                /* --lease-ttl SECONDS (etcd; zookeeper: the session
                                    timeout asked for); default 10 s, >= 2 s */
  int64_t margin_ms;             /* --lease-margin MS: stop this long before the TTL
                                    ends; 0 = min(2 s, TTL/3) */
  int64_t ahead_ms;              /* --hwm-ahead MS: cap = now + ahead; default 3000 */
  int64_t hwm_interval_ms;       /* --hwm-interval MS: HWM write period; default 1000 */
  int64_t hwm_wait_max_ms;       /* --hwm-wait-max MS: longest wait past a HWM at
                                    start; default 30000 */
  int64_t request_timeout_ms;    /* --etcd-timeout MS: per etcd request; default 5000
                                    (a leader change can stall a request ~2.4 s) */
  int64_t max_skew_ms;           /* --max-clock-skew MS: refuse at start when the
                                    local clock is this far from the median of live
                                    peers (etcd); default 10000; 0 = do not check */
  int require_ntp_sync;          /* --require-ntp-sync: refuse when adjtimex says the
                                    clock is unsynchronised */
  int64_t datacenter;            /* --datacenter N, IDGEN_DATACENTER: the high node field
                                    of a two-field layout, fixed to N; -1 unset */
  int64_t range_lo, range_hi;    /* --worker-id-range LO-HI, IDGEN_WORKER_ID_RANGE: the
                                    claimed field's values; -1 unset (all of them) */
  char region[IDGEN_LEASE_NAME_MAX]; /* --region, IDGEN_REGION: kept in holder records
                                        for the startup check; default "default" */
  int64_t k8s_replicas;              /* --k8s-replicas N, IDGEN_K8S_REPLICAS (k8s): ordinals
                                        are below N (refused otherwise), so a generator at
                                        offset o takes o .. o + N - 1; 0 unset (no bound) */
  char redis_url[IDGEN_LEASE_PATH_MAX]; /* --redis URL, IDGEN_REDIS (redis):
                                          redis://[user:pass@]HOST:PORT[/db], or
                                          rediss:// over TLS */
  int64_t redis_min_replicas;           /* --redis-min-replicas N: each HWM write waits
                                          (WAIT) for N replicas; 0: no wait */
  /* The providers of other libraries this program links, NULL-terminated (NULL: none):
   * idgen_lease_open takes the one of config->kind from them, libidgen's own (file,
   * static, k8s) being always there. etcd: {&idgen_lease_etcd, NULL} (idgen/etcd.h). */
  const struct idgen_lease_provider *const *providers;
  /* etcd over TLS (https:// endpoints: the peer and its host name are always verified)
   * and etcd's own users; the segment etcd backend takes them too. "" = none. */
  char etcd_cacert[IDGEN_LEASE_PATH_MAX]; /* --etcd-cacert FILE, IDGEN_ETCD_CACERT: PEM
                                             CAs of the endpoints ("": the system's) */
  char etcd_cert[IDGEN_LEASE_PATH_MAX];   /* --etcd-cert FILE, IDGEN_ETCD_CERT: a PEM
                                             client certificate, with etcd_key */
  char etcd_key[IDGEN_LEASE_PATH_MAX];    /* --etcd-key FILE, IDGEN_ETCD_KEY */
  char etcd_user[IDGEN_LEASE_NAME_MAX];   /* --etcd-user, IDGEN_ETCD_USER: authenticate
                                             as this user (/v3/auth/authenticate) */
  char etcd_password_file[IDGEN_LEASE_PATH_MAX]; /* --etcd-password-file FILE,
                                                    IDGEN_ETCD_PASSWORD_FILE: read at
                                                    open; wins over etcd_password */
  char etcd_password[IDGEN_LEASE_NAME_MAX * 4];  /* IDGEN_ETCD_PASSWORD (no flag) */
  /* ZooKeeper digest auth: with a user, the provider authenticates each session
   * (zoo_add_auth "digest") and makes its nodes writable by that user alone (readable by
   * all); see docs/leases.md, "ZooKeeper auth". "" = none: open nodes, as before. */
  char zk_user[IDGEN_LEASE_NAME_MAX];          /* --zk-user, IDGEN_ZK_USER (no ':') */
  char zk_password_file[IDGEN_LEASE_PATH_MAX]; /* --zk-password-file FILE,
                                                  IDGEN_ZK_PASSWORD_FILE: read at open;
                                                  wins over zk_password */
  char zk_password[IDGEN_LEASE_NAME_MAX * 4];  /* IDGEN_ZK_PASSWORD (no flag) */
  /* Redis over TLS (rediss:// URLs: the peer and its host name are always verified) and
   * Redis users apart from the URL; the segment redis backend takes them too. "" = none. */
  char redis_cacert[IDGEN_LEASE_PATH_MAX]; /* --redis-cacert FILE, IDGEN_REDIS_CACERT:
                                              PEM CAs of the server ("": the system's) */
  char redis_cert[IDGEN_LEASE_PATH_MAX];   /* --redis-cert FILE, IDGEN_REDIS_CERT: a PEM
                                              client certificate, with redis_key */
  char redis_key[IDGEN_LEASE_PATH_MAX];    /* --redis-key FILE, IDGEN_REDIS_KEY */
  char redis_user[IDGEN_LEASE_NAME_MAX];   /* --redis-user, IDGEN_REDIS_USER: AUTH as
                                              this ACL user */
  char redis_password_file[IDGEN_LEASE_PATH_MAX]; /* --redis-password-file FILE,
                                                     IDGEN_REDIS_PASSWORD_FILE: read at
                                                     open; wins over redis_password */
  char redis_password[IDGEN_LEASE_NAME_MAX * 4];  /* IDGEN_REDIS_PASSWORD (no flag) */
} idgen_lease_config;

/* Defaults: file provider, default state dir, worker unset, namespace "default", TTL
 * 10 s, ahead 3 s, HWM every 1 s, wait bound 30 s, timeout 5 s, skew 10 s, no
 * datacenter, no range, region "default". */
IDGEN_API void idgen_lease_config_init(idgen_lease_config *config);

/* One lease option, for building getopt tables and --help texts. */
typedef struct idgen_lease_option {
  const char *name; /* long option name without "--": "lease", "state-dir", ... */
  const char *env;  /* the environment variable that sets it too, or NULL */
  int has_arg;      /* 0: a flag; 1: takes a value */
  const char *arg;  /* the value's name in usage lines, "NAME" */
  const char *help; /* one line */
} idgen_lease_option;

/* The options idgen_lease_config_set understands, ending with a NULL name: at most
 * IDGEN_LEASE_OPTIONS_MAX of them (the library's build checks it), so that a caller may
 * size an array of options by it. */
#define IDGEN_LEASE_OPTIONS_MAX 64
IDGEN_API const idgen_lease_option *idgen_lease_options(void);

/* Sets one option by its long name (value NULL for flags). IDGEN_EINVAL for an unknown
 * name or a bad value, with a one-line reason in err (may be NULL). Not thread-safe
 * for one config. */
IDGEN_API int idgen_lease_config_set(idgen_lease_config *config, const char *name,
                                     const char *value, char *err, size_t errlen);

/* Reads every option's environment variable (IDGEN_LEASE, IDGEN_STATE_DIR,
 * IDGEN_WORKER_ID, IDGEN_WORKER_ID_OFFSET, IDGEN_POD_INDEX, IDGEN_ETCD, IDGEN_ZOOKEEPER,
 * IDGEN_NAMESPACE, IDGEN_LEASE_TTL, IDGEN_DATACENTER, IDGEN_WORKER_ID_RANGE,
 * IDGEN_REGION, IDGEN_K8S_REPLICAS, IDGEN_REDIS, IDGEN_ETCD_CACERT, IDGEN_ETCD_CERT,
 * IDGEN_ETCD_KEY, IDGEN_ETCD_USER, IDGEN_ETCD_PASSWORD_FILE, IDGEN_ZK_USER,
 * IDGEN_ZK_PASSWORD_FILE, IDGEN_REDIS_CACERT, IDGEN_REDIS_CERT, IDGEN_REDIS_KEY,
 * IDGEN_REDIS_USER, IDGEN_REDIS_PASSWORD_FILE) and IDGEN_ETCD_PASSWORD, IDGEN_ZK_PASSWORD
 * and IDGEN_REDIS_PASSWORD, which no flag sets. Call before the flags, so that flags
 * win. IDGEN_EINVAL
 * with a reason naming the variable. */
IDGEN_API int idgen_lease_config_env(idgen_lease_config *config, char *err, size_t errlen);

/* Which worker IDs a config lets a provider claim under a layout. Without a datacenter
 * the claimed field is the whole worker ID (all NODE fields); with one, it is the
 * layout's low NODE field, and the high one is fixed to the datacenter (twitter:
 * worker ID = datacenter << 5 | claimed). */
typedef struct idgen_lease_space {
  int64_t datacenter; /* the high NODE field's value; -1: none */
  uint8_t bits;       /* the claimed field's width */
  uint8_t low_bits;   /* two NODE fields: the low one's width; 0: one NODE field */
  uint64_t lo, hi;    /* the claimed values, inclusive (--worker-id-range; default all) */
  char field[IDGEN_FIELD_NAME_MAX];    /* the claimed field's name ("worker") */
  char dc_field[IDGEN_FIELD_NAME_MAX]; /* the high field's name ("datacenter"); "" */
} idgen_lease_space;

/* Fills *out from the config and the layout. IDGEN_EINVAL with one line in err for a
 * datacenter given to a one-field layout or out of its field, or a range beyond the
 * claimed field. */
IDGEN_API int idgen_lease_space_of(const idgen_lease_config *config,
                                   const idgen_layout *layout, idgen_lease_space *out,
                                   char *err, size_t errlen);
/* The worker ID (what the generator and idgen decode see) of a claimed value. */
IDGEN_API uint64_t idgen_lease_space_worker(const idgen_lease_space *space,
                                            uint64_t claimed);

/* Checks the config against a layout without touching anything outside the process:
 * TTL >= 2 s, margin below TTL * 2/3, the datacenter and range (idgen_lease_space_of),
 * static worker or k8s ordinal + offset within the claimed field and the range; with
 * k8s_replicas, the ordinal below it and offset + k8s_replicas - 1 (the last pod's
 * worker) within the field and the range too; endpoints present for etcd (the TLS
 * files only with https:// ones, a certificate with its key, a user with a password
 * source and a password with a user), and --zookeeper's hosts for zookeeper (--zk-user
 * without a colon, with a password source, and a password with a user). */
IDGEN_API int idgen_lease_config_check(const idgen_lease_config *config,
                                       const idgen_layout *layout, char *err,
                                       size_t errlen);

/* The provider kind's name ("file", ...) and back. */
IDGEN_API const char *idgen_lease_kind_name(idgen_lease_kind kind);
IDGEN_API int idgen_lease_kind_parse(const char *name, idgen_lease_kind *out);

/* ---- Providers --------------------------------------------------------------------- */

/* The local providers (file, static, k8s) hold a worker ID by two fences: a host-wide
 * claim, an abstract Unix socket "idgen/<namespace>/worker/<N>" that one process of the
 * host (of one network namespace) can bind at a time, whatever its user and state
 * directory; and an exclusive lock on the file worker-<N> in the state directory,
 * which keeps the HWM. With a datacenter D, N is the claimed (low) field and the names
 * are "idgen/<namespace>/dc/<D>/worker/<N>" and dc-<D>/worker-<N>; etcd's keys are
 * /idgen/<namespace>/dc/<D>/workers/<N> and .../hwm/<N>. Under a two-field layout a
 * worker ID has both names, the split one and the whole one, whichever the holder
 * used: a claim needs both free, and its floor is the higher HWM of the two, so
 * holders with and without --datacenter (a rolling change) never share an ID. The kernel
 * drops both when the process dies. A holder checks before every HWM write that worker-<N>
 * is still the file it locked; if it was removed or replaced it gives the ID up
 * (IDGEN_ELEASE). A worker file that has no record yet makes its new holder wait past now +
 * ahead + one HWM interval. A record that is not whole (empty, all NUL, no hwm_ms) is
 * corrupt: file passes that ID over (idgen_lease_grant.skipped), static and k8s refuse to
 * start.
 *
 * fork(): a provider opened before a fork belongs to the parent. In the child it
 * refuses every call with IDGEN_EFORKED (its lock, claim, etcd connection and lease are
 * shared with the parent, and a child's HWM write or release would undo the parent's);
 * idgen_lease_free in the child only drops the child's copies (and leaves an etcd
 * handle's connections alone). A child that needs IDs opens a provider of its own:
 * it wins a worker ID of its own. */

/* A provider: an opaque handle, made by idgen_lease_open. */
typedef struct idgen_lease idgen_lease;

/* A provider's row in the table idgen_lease_open chooses from: its kind and name, and
 * its constructor. libidgen's rows are its own; a library with a provider of its own
 * exports its row (idgen_lease_etcd), and a program lists the rows of the libraries it
 * links in idgen_lease_config.providers, as Lua's luaL_openlibs opens the libraries a
 * program was built with: no registry, no global state. open makes the provider for
 * config (checked: idgen_lease_config_check) in space; readonly as for
 * idgen_lease_open_readonly; on failure one line in err. */
typedef struct idgen_lease_provider {
  idgen_lease_kind kind;
  const char *name; /* as --lease spells it: "etcd" */
  int (*open)(idgen_lease **out, const idgen_lease_config *config,
              const idgen_lease_space *space, int readonly, char *err, size_t errlen);
} idgen_lease_provider;

/* What acquire hands back. */
typedef struct idgen_lease_grant {
  uint64_t worker;  /* the worker ID won (with a datacenter: datacenter and claimed
                       field together, idgen_lease_space_worker) */
  int64_t hwm_ms;   /* the persisted HWM read after winning it (0: none): issue
                       nothing at or below it */
  int64_t ttl_ms;   /* the lease's TTL; 0: it cannot expire (static, k8s, file) */
  int fenced;       /* 1 if another holder of this ID is excluded (file, etcd) */
  uint32_t skipped; /* smaller free IDs passed over for an unreadable HWM record (file,
                       etcd); idgen_lease_why names the last one */
} idgen_lease_grant;

#define IDGEN_HOLDER_HOST_MAX 64

/* One holder of a worker ID, as `idgen lease` shows it. */
typedef struct idgen_lease_holder {
  uint64_t worker;    /* the number in its name: the claimed field under a datacenter */
  int64_t datacenter; /* the datacenter its name is under; -1: none */
  int live;           /* 1 if the ID is held now; 0: only a HWM remains */
  char host[IDGEN_HOLDER_HOST_MAX];
  int64_t pid;
  int64_t start_ms;                  /* when the holder started, Unix ms (its clock) */
  int64_t wall_ms;                   /* its wall clock when it last wrote its HWM */
  int64_t hwm_ms;                    /* its persisted HWM, 0 if none */
  int64_t ttl_left_ms;               /* etcd: lease time left; -1 if not applicable */
  char region[IDGEN_LEASE_NAME_MAX]; /* the region its record names; "" if none */
} idgen_lease_holder;

#define IDGEN_LEASE_WHY_MAX 256

/* Latency of the provider's requests to its coordination service (etcd; the local
 * providers make none), as a histogram with these upper bounds in ms, then +Inf. */
#define IDGEN_LEASE_LATENCY_BOUNDS_MS                                                      \
  { 1, 5, 10, 50, 100, 500, 1000, 2500, 5000 }
#define IDGEN_LEASE_LATENCY_BUCKETS 10 /* nine bounds and +Inf */

typedef struct idgen_lease_latency {
  uint64_t count;
  uint64_t sum_us;
  uint64_t buckets[IDGEN_LEASE_LATENCY_BUCKETS]; /* not cumulative: one count each */
} idgen_lease_latency;

/* A snapshot of the request latency histogram (all zero for local providers).
 * Thread-safe. */
IDGEN_API void idgen_lease_latency_get(idgen_lease *lease, idgen_lease_latency *out);

/* Creates the provider the config names, for a layout (its NODE fields decide the
 * worker IDs). Checks the config (idgen_lease_config_check) and the outside world: the
 * state directory is created if missing and must be writable; etcd must answer. On
 * failure err gets one line ("state dir /x: Permission denied", "etcd
 * http://127.0.0.1:2379: Connection refused"). */
IDGEN_API int idgen_lease_open(idgen_lease **out, const idgen_lease_config *config,
                               const idgen_layout *layout, char *err, size_t errlen);
/* Like idgen_lease_open, to look only (idgen_lease_holders, idgen_lease_describe): it
 * makes and writes nothing, so a missing state directory holds no worker IDs, and
 * idgen_lease_acquire on it refuses with IDGEN_EINVAL (etcd: opening only reads
 * anyway; do not acquire on it either). */
IDGEN_API int idgen_lease_open_readonly(idgen_lease **out, const idgen_lease_config *config,
                                        const idgen_layout *layout, char *err,
                                        size_t errlen);

/* The calls on a provider: each goes to the provider's own code, is made from one thread
 * at a time (the keeper's, or the caller's before a keeper starts), returns 0 or a
 * negative error and, on failure, leaves one line in idgen_lease_why. */

/* Wins a worker ID (smallest free one of the space for file and etcd) and reads its HWM.
 * IDGEN_ENOWORKER when every ID of the space is taken, IDGEN_EUNAVAIL when the service
 * cannot be reached, IDGEN_ECLOCKSKEW when refused for the local clock, IDGEN_ECONFLICT
 * (etcd, first call) when a live holder of the same datacenter names another region. */
IDGEN_API int idgen_lease_acquire(idgen_lease *lease, idgen_lease_grant *out);
/* Keeps the lease alive; 0 while still held, IDGEN_ELEASE when it is gone for good,
 * IDGEN_EUNAVAIL when unknown (retry). */
IDGEN_API int idgen_lease_keepalive(idgen_lease *lease);
/* Persists hwm_ms (and the holder record) only while this holder still holds the ID
 * (file: fsync'd). IDGEN_ELEASE when the fence refused it, IDGEN_EUNAVAIL. */
IDGEN_API int idgen_lease_write_hwm(idgen_lease *lease, int64_t hwm_ms);
/* Writes the final HWM (the last ms actually issued; 0: leave the HWM as it is) and frees
 * the ID at once. Safe after a loss; idempotent. */
IDGEN_API int idgen_lease_release(idgen_lease *lease, int64_t final_hwm_ms);
/* Fills up to max holders (IDs held now, and IDs with a HWM) of the namespace, every
 * datacenter's and those without one, ordered by datacenter (none first) and worker;
 * *count gets the total found. Does not need acquire. */
IDGEN_API int idgen_lease_holders(idgen_lease *lease, idgen_lease_holder *out, size_t max,
                                  size_t *count);
/* A one-line description of what acquire would do ("file /var/lib/idgen, ..."). */
IDGEN_API void idgen_lease_describe(idgen_lease *lease, char *out, size_t outlen);
/* The provider's kind ("file", "static", "k8s", "etcd"). A static string. */
IDGEN_API const char *idgen_lease_name(const idgen_lease *lease);
/* The last failure, one line (at most IDGEN_LEASE_WHY_MAX bytes with its NUL); "" if
 * none. Valid until the next call on the provider. */
IDGEN_API const char *idgen_lease_why(const idgen_lease *lease);
/* Frees (releasing nothing: call release first for a graceful end). NULL is fine. */
IDGEN_API void idgen_lease_free(idgen_lease *lease);

/* The kernel's NTP state from adjtimex: 1 synchronised, 0 not, negative error.
 * *maxerror_us (may be NULL) gets the kernel's maximum error estimate. */
IDGEN_API int idgen_ntp_synced(int64_t *maxerror_us);

/* ---- The keeper: a provider + a generator + a thread ------------------------------ */

/* fork(): the keeper's thread does not exist in a child, and its lease is the
 * parent's. In the child its generator refuses with IDGEN_EFORKED; idgen_keeper_stop
 * and idgen_keeper_wait_ready return IDGEN_EFORKED at once and release nothing;
 * idgen_keeper_free frees only the child's memory. To issue in the child: free the
 * inherited keeper and provider, open a new provider, and start a new keeper on the
 * generator (it arms it with the child's own worker ID). */

typedef struct idgen_keeper idgen_keeper;

/* Where the keeper is. held is the only ready state. */
typedef enum idgen_keeper_state {
  IDGEN_KEEPER_ACQUIRING = 0,   /* winning a worker ID (again) */
  IDGEN_KEEPER_WAITING_HWM = 1, /* ID won; waiting for the clock to pass its HWM */
  IDGEN_KEEPER_HELD = 2,        /* the generator is armed with the ID */
  IDGEN_KEEPER_LOST = 3,        /* deadline passed: proving the lease still holds */
  IDGEN_KEEPER_STOPPED = 4,     /* idgen_keeper_stop returned: the ID is released */
} idgen_keeper_state;

/* "acquiring", "waiting-hwm", "held", "lost", "stopped" (for logs, /v1/info, metrics);
 * "unknown" for any other value. A static string. */
IDGEN_API const char *idgen_keeper_state_name(idgen_keeper_state state);

typedef struct idgen_keeper_config {
  idgen_lease *lease;      /* required; not owned: free it after idgen_keeper_free */
  idgen_gen *gen;          /* required; not owned */
  int64_t margin_ms;       /* deadline = last good keepalive + TTL - margin;
                              0 = min(2000, TTL/3) */
  int64_t ahead_ms;        /* cap = now + ahead; 0 = 3000 */
  int64_t hwm_interval_ms; /* 0 = 1000 */
  int64_t hwm_wait_max_ms; /* refuse a HWM further ahead than this; 0 = 30000 */
  int64_t retry_ms;        /* pause between attempts to win an ID again; 0 = 1000 */
} idgen_keeper_config;

/* Fills a keeper config's timings from a lease config (lease and gen left NULL). */
IDGEN_API void idgen_keeper_config_from(idgen_keeper_config *out,
                                        const idgen_lease_config *config);

/* Wins a worker ID now (errors such as IDGEN_ENOWORKER, IDGEN_EUNAVAIL,
 * IDGEN_ECLOCKSKEW, or IDGEN_ETIMEDOUT for a HWM beyond hwm_wait_max_ms come back here,
 * with idgen_lease_why), then starts the keeper's thread, which waits until the
 * generator's clock is past the HWM, writes the first cap, arms the generator and
 * keeps the lease. The generator issues nothing before that: see
 * idgen_keeper_wait_ready. */
IDGEN_API int idgen_keeper_new(idgen_keeper **out, const idgen_keeper_config *config);

/* Waits (relative sleeps) up to timeout_ms for the state "held". 0 when held,
 * IDGEN_ETIMEDOUT otherwise. Thread-safe. */
IDGEN_API int idgen_keeper_wait_ready(idgen_keeper *keeper, int64_t timeout_ms);

/* Graceful end: disarms the generator, stops the thread, disarms the generator for
 * good (a step under way may have armed it again), then writes the final HWM (the
 * last ms issued, read after that) and releases the ID at once. Once it returns the
 * generator refuses (IDGEN_ENOTARMED) until another keeper arms it, whatever step was
 * in flight, and the HWM left is at or above every timestamp issued. Idempotent. */
IDGEN_API int idgen_keeper_stop(idgen_keeper *keeper);
/* Stops (if not stopped) and frees; NULL is fine. */
IDGEN_API void idgen_keeper_free(idgen_keeper *keeper);

typedef struct idgen_keeper_stats {
  uint64_t renewals;         /* successful keepalives */
  uint64_t renewal_failures; /* failed keepalives and HWM writes */
  uint64_t lease_lost;       /* times the lease was lost (deadline or fence) */
  uint64_t hwm_writes;       /* successful HWM writes */
  uint64_t cap_waits;        /* the generator's waits at the cap */
  uint64_t acquisitions;     /* worker IDs won */
  uint64_t skipped;          /* free worker IDs passed over for an unreadable HWM
                                record (each also left in idgen_keeper_last_error) */
  int64_t worker;            /* current worker ID, -1 if none */
  int64_t hwm_ms;            /* last HWM written (the cap) */
  int64_t floor_ms;          /* HWM read when the ID was won */
  idgen_keeper_state state;  /* as idgen_keeper_state_get */
} idgen_keeper_stats;

/* The keeper's state now. Thread-safe. */
IDGEN_API idgen_keeper_state idgen_keeper_state_get(const idgen_keeper *keeper);
IDGEN_API void idgen_keeper_stats_get(const idgen_keeper *keeper, idgen_keeper_stats *out);
/* The last error the keeper met, one line ("" if none). Thread-safe. */
IDGEN_API void idgen_keeper_last_error(idgen_keeper *keeper, char *out, size_t outlen);

#ifdef __cplusplus
}
#endif
#endif
