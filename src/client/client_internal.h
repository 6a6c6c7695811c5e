/* client_internal.h: what client.c (buffers, hot path, fork) and client_server.c
 * (connections, refill threads, failover) share. */
#ifndef IDGEN_CLIENT_INTERNAL_H
#define IDGEN_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "idgen/client.h"

#define IDGEN__CLIENT_SLOTS                                                                \
  16 /* refills buffered or in flight per name, the current one included */
#define IDGEN__CLIENT_OFF_BITS 32
#define IDGEN__CLIENT_MAX_SERVERS 16
#define IDGEN__CLIENT_NAME_MAX 64
#define IDGEN__CLIENT_TOKEN_MAX 512

enum { SLOT_EMPTY, SLOT_INFLIGHT, SLOT_READY };
enum { NAME_UNKNOWN, NAME_RANGE, NAME_ARRAY };

/* One refill: a range (first, stride, count) or an array (ids[0..count)). Its fields
 * are written while pos is in an earlier generation (no reader's CAS can succeed on
 * them), under the stream's mu. */
typedef struct slot {
  _Atomic uint64_t count, first, stride;
  _Atomic int is_array;
  _Atomic int64_t born_ns; /* arrays: the age clock when the request was sent */
  _Atomic uint64_t *ids;   /* arrays: max_array of them, allocated at first use */
  uint64_t asked;          /* in flight: the count asked for (mu) */
  int state;               /* SLOT_* (mu) */
} slot;

typedef struct stream {
  _Alignas(64) _Atomic uint64_t pos; /* generation << OFF_BITS | offset in its slot */
  slot slots[IDGEN__CLIENT_SLOTS];   /* generation g lives in slots[g % SLOTS] */
  char name[IDGEN__CLIENT_NAME_MAX + 1];
  uint64_t uid;
  struct stream *next;
  pthread_mutex_t mu;
  pthread_cond_t cv; /* broadcast after every refill attempt */
  /* Guarded by mu. */
  uint64_t tail; /* the next generation a refill fills */
  int inflight;
  int kind;  /* NAME_* */
  int want;  /* a caller waits */
  int fatal; /* the servers refuse the name for good */
  char err[200];
  uint64_t batch;
  int64_t last_reserve_ns;
} stream;

typedef struct idgen__client_server {
  char host[256];
  int port;
  struct idgen_client *client;
  /* The data connection (src/redis/conn.c: plain or TLS), used by the server's thread
   * alone (closed by _free after the join, or dropped by a forked child, whose copy it
   * is). NULL: none. */
  struct idgen__redis_conn *conn;
  char failure[256]; /* why the last step failed (the server's thread alone) */
  char why[256];     /* why the server was last marked down; "" once it answers (mu) */
  uint64_t tag;      /* the last request's ECHO tag */
  int down;          /* skipped until a health check passes */
  int64_t retry_at_ns, backoff_ns;
  pthread_t thread;
  int thread_started;
} idgen__client_server;

struct idgen_client {
  idgen_client_options opt;
  char token[IDGEN__CLIENT_TOKEN_MAX];
  struct ssl_ctx_st *tls; /* NULL: plain */
  int has_cert;           /* tls shows a client certificate */
  char server_name[256];  /* checked instead of each host; "": the host */
  uint64_t uid, epoch;
  idgen__client_server servers[IDGEN__CLIENT_MAX_SERVERS];
  size_t nservers;
  pthread_mutex_t mu;
  pthread_cond_t refill_cv; /* wakes the refill threads (mu) */
  stream *streams;          /* mu; the newest first */
  _Atomic(stream *) streams_head;
  int threads_started, stop;        /* mu */
  uint64_t pokes;                   /* mu: wake-ups asked */
  struct idgen_client *next_client; /* the registry of the fork handler */
  struct {
    _Atomic uint64_t refills, refill_errors, late_discarded, burnt, waits, unavailable,
        failovers;
  } stats;
};

extern _Atomic uint64_t idgen__client_fork_epoch;

int64_t idgen__client_real_ns(void);
int64_t idgen__client_age_now_ns(idgen_client *c);
int idgen__client_cond_init(pthread_cond_t *cv);
void idgen__client_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t abs_ns);

/* client_server.c */
/* What the messages of src/redis/conn.c call the client's TLS fields. */
extern const struct idgen__conn_names idgen__client_tls_names;
int idgen__client_start_threads(idgen_client *c); /* c->mu held */
void idgen__client_stop_threads(idgen_client *c); /* joins them */
void idgen__client_server_close(idgen__client_server *sv);
void idgen__client_server_forget(idgen__client_server *sv); /* a child: close, no join */
void idgen__client_poke(idgen_client *c);

#endif
