/* zookeeper.c: the ZooKeeper provider: worker IDs as ephemeral nodes of one session, the
 * HWM as a persistent node written only at the version this holder last saw; the claim
 * is one multi that creates the worker node and bumps the HWM node's version (see
 * claim_multi). Every call is synchronous, from the keeper's thread: the client's own
 * threads run only the empty watcher, so they never reach the generator. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <zookeeper/zookeeper.h>

#include "core/core_internal.h"
#include "idgen/zookeeper.h"
#include "lease/lease_internal.h"

#define ZK_PATH_MAX 192
#define ZK_VALUE_MAX 512

typedef struct zk_lease {
  idgen_lease base;
  zhandle_t *zh; /* one session; NULL: none (opened again by the next call needing one) */
  int64_t session_id;
  char hosts[IDGEN_LEASE_PATH_MAX];
  int64_t connect_timeout_ms;
  int ttl_ms; /* the session timeout asked for */
  char ns[IDGEN_LEASE_NAME_MAX];
  idgen_lease_space space;
  int64_t max_skew_ms;
  int64_t fresh_wait_ms; /* ahead + one HWM interval: see fresh_record */
  int readonly;
  int started;   /* the start checks (clock skew, region) passed */
  int dirs_made; /* ensure_dirs succeeded once (again after a ZNONODE) */
  char host[IDGEN_LEASE_NAME_MAX];
  char region[IDGEN_LEASE_NAME_MAX];
  int64_t start_ms;
  int held;
  uint64_t worker;     /* the claimed value held */
  int32_t hwm_version; /* our HWM node's version as we last saw it (the fence) */
  uint64_t fork_gen;
  /* Digest auth (--zk-user; "" = none: nodes open to all, as before). */
  char user[IDGEN_LEASE_NAME_MAX];
  char auth[IDGEN_LEASE_NAME_MAX * 5 + 2];   /* "user:password", for zoo_add_auth */
  char digest_id[IDGEN_LEASE_NAME_MAX + 96]; /* "user:BASE64(SHA1(user:password))" */
  struct ACL node_acl[2], root_acl[2];       /* point into digest_id */
  struct ACL_vector node_acls, root_acls;    /* see acl_for */
} zk_lease;

/* The client calls it from its completion thread, possibly holding its locks: it must
 * do nothing (the provider polls zoo_state from the keeper's thread instead). */
static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh, (void)type, (void)state, (void)path, (void)ctx;
}

/* The library never prints: the client's log lines go nowhere. */
static void quiet(const char *message) {
  (void)message;
}

static int refuse_in_child(zk_lease *z) {
  if (!idgen__lease_forked(z->fork_gen))
    return 0;
  return idgen__why(&z->base, IDGEN_EFORKED,
                    "this provider was opened by the parent process: open a new one");
}

static void nap_ms(int ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  nanosleep(&ts, NULL); /* relative: libfaketime breaks absolute monotonic waits */
}

static void session_close(zk_lease *z) {
  if (z->zh)
    zookeeper_close(z->zh); /* the ensemble drops the session's ephemeral nodes */
  z->zh = NULL;
  z->session_id = 0;
  z->held = 0;
}

/* Waits (relative naps) up to the connect timeout for the session to be connected: 0,
 * IDGEN_ELEASE when it expired, IDGEN_EUNAVAIL otherwise. */
static int session_wait(zk_lease *z) {
  for (int64_t waited = 0;; waited += 5) {
    int st = zoo_state(z->zh);
    if (st == ZOO_CONNECTED_STATE)
      return 0;
    if (st == ZOO_EXPIRED_SESSION_STATE)
      return idgen__why(&z->base, IDGEN_ELEASE, "zookeeper: session expired");
    if (st == ZOO_AUTH_FAILED_STATE)
      return idgen__why(&z->base, IDGEN_EUNAVAIL, "zookeeper %s: authentication failed",
                        z->hosts);
    if (waited >= z->connect_timeout_ms)
      return idgen__why(&z->base, IDGEN_EUNAVAIL,
                        "zookeeper %s: no server answered in %lld ms", z->hosts,
                        (long long)z->connect_timeout_ms);
    nap_ms(5);
  }
}

/* A connected session: the one we have, or a new one when it expired (the old session's
 * nodes are gone with it: whatever it held is lost). */
static int session_ready(zk_lease *z) {
  if (z->zh) {
    int st = zoo_state(z->zh);
    if (st == ZOO_CONNECTED_STATE)
      return 0;
    if (st != ZOO_EXPIRED_SESSION_STATE && st != ZOO_AUTH_FAILED_STATE) {
      int rc = session_wait(z);
      if (rc != IDGEN_ELEASE)
        return rc;
    }
    session_close(z);
  }
  z->zh = zookeeper_init2(z->hosts, watcher, z->ttl_ms, NULL, NULL, 0, quiet);
  if (!z->zh)
    return idgen__why(&z->base, IDGEN_EUNAVAIL, "zookeeper %s: cannot make a client",
                      z->hosts);
  /* A handle keeps its auth and sends it first on every connection it makes (the C
   * client's send_auth_info), but a new handle, for a new session, has none: add it
   * here, before the first connection, so that it precedes every request. */
  int rc = 0;
  if (z->user[0] &&
      zoo_add_auth(z->zh, "digest", z->auth, (int)strlen(z->auth), NULL, NULL) != ZOK)
    rc = idgen__why(&z->base, IDGEN_EUNAVAIL, "zookeeper %s: cannot add digest auth",
                    z->hosts);
  if (!rc)
    rc = session_wait(z);
  if (rc) {
    session_close(z);
    return rc;
  }
  z->session_id = zoo_client_id(z->zh)->client_id;
  return 0;
}

/* A ZooKeeper result as ours: 0 for ZOK; IDGEN_ELEASE once the session is gone;
 * IDGEN_EUNAVAIL for the rest (connection loss: unknown, retry). */
static int zk_error(zk_lease *z, int zrc, const char *what, const char *path) {
  if (zrc == ZOK)
    return 0;
  if (zrc == ZSESSIONEXPIRED || (z->zh && zoo_state(z->zh) == ZOO_EXPIRED_SESSION_STATE))
    return idgen__why(&z->base, IDGEN_ELEASE, "zookeeper %s %s: session expired", what,
                      path);
  if (zrc == ZNOAUTH)
    return idgen__why(&z->base, IDGEN_EUNAVAIL,
                      "zookeeper %s: %s %s: not allowed by the ACL (%s)", z->hosts, what,
                      path, z->user[0] ? "changed since the start?" : "give --zk-user");
  return idgen__why(&z->base, IDGEN_EUNAVAIL, "zookeeper %s %s: %s", what, path,
                    zerror(zrc));
}

/* "/idgen/<ns>" and, under datacenter dc >= 0, "/dc/<dc>". */
static void space_root(const zk_lease *z, int64_t dc, char *out, size_t outlen) {
  if (dc >= 0)
    snprintf(out, outlen, "/idgen/%s/dc/%lld", z->ns, (long long)dc);
  else
    snprintf(out, outlen, "/idgen/%s", z->ns);
}

/* The node of kind ("workers", "hwm") of w under datacenter dc. */
static void node_of(const zk_lease *z, int64_t dc, const char *kind, uint64_t w, char *out,
                    size_t outlen) {
  char root[128];
  space_root(z, dc, root, sizeof root);
  snprintf(out, outlen, "%s/%s/%llu", root, kind, (unsigned long long)w);
}

/* ---- Digest ACLs (--zk-user; docs/leases.md, "ZooKeeper auth") ---------------------- */

static char scheme_digest[] = "digest", scheme_world[] = "world", id_anyone[] = "anyone";

/* What this provider needs of a node it uses: read it, write it (a HWM), make and
 * delete its children (worker nodes). Its nodes give it ADMIN too, which lets it read
 * the digest in an ACL: ZooKeeper shows others "user:x". */
#define ZK_PERMS_USED (ZOO_PERM_READ | ZOO_PERM_WRITE | ZOO_PERM_CREATE | ZOO_PERM_DELETE)
#define ZK_PERMS_CHANGE                                                                    \
  (ZOO_PERM_WRITE | ZOO_PERM_CREATE | ZOO_PERM_DELETE | ZOO_PERM_ADMIN)

/* The digest id ZooKeeper's DigestAuthenticationProvider derives from "user:password":
 * user:BASE64(SHA1(user:password)), and the ACLs made of it. An explicit digest ACL,
 * not ZOO_CREATOR_ALL_ACL ("auth"): the id is needed anyway to check the ACLs of nodes
 * that exist (a wrong password, a tree made without auth), and a node's ACL then names
 * this user alone whatever other ids the session carries. */
static int digest_setup(zk_lease *z, char *err, size_t errlen) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
  if (!EVP_Digest(z->auth, strlen(z->auth), md, &mdlen, EVP_sha1(), NULL)) {
    if (err && errlen)
      snprintf(err, errlen, "zookeeper %s: SHA-1 not available from libcrypto", z->hosts);
    return IDGEN_EUNAVAIL;
  }
  EVP_EncodeBlock(b64, md, (int)mdlen);
  snprintf(z->digest_id, sizeof z->digest_id, "%s:%s", z->user, (const char *)b64);
  OPENSSL_cleanse(md, sizeof md);
  z->node_acl[0] = (struct ACL){ZOO_PERM_ALL, {scheme_digest, z->digest_id}};
  z->node_acl[1] = (struct ACL){ZOO_PERM_READ, {scheme_world, id_anyone}};
  z->root_acl[0] = z->node_acl[0];
  z->root_acl[1] = (struct ACL){ZOO_PERM_READ | ZOO_PERM_CREATE, {scheme_world, id_anyone}};
  z->node_acls = (struct ACL_vector){2, z->node_acl};
  z->root_acls = (struct ACL_vector){2, z->root_acl};
  return 0;
}

/* The ACL of a node this provider makes. Without --zk-user open to all, as before; with
 * it, everything for our digest id and reading for all (holder records and HWMs hold
 * no secret, and `idgen lease` lists them without credentials). /idgen is the parent
 * of every namespace: anyone may create there too, so that other users' namespaces
 * can be made beside ours (ours cannot be deleted: it is never empty). */
static struct ACL_vector *acl_for(zk_lease *z, const char *path) {
  if (!z->user[0])
    return &ZOO_OPEN_ACL_UNSAFE;
  return strcmp(path, "/idgen") ? &z->node_acls : &z->root_acls;
}

/* An ACL as text, digests cut to their user ("digest:alice:cdrwa,world:anyone:r"). */
static void acl_text(const struct ACL_vector *acl, char *out, size_t outlen) {
  size_t at = 0;
  out[0] = '\0';
  for (int i = 0; i < acl->count && at < outlen; i++) {
    const struct ACL *e = &acl->data[i];
    const char *id = e->id.id ? e->id.id : "";
    int idlen = (int)strlen(id);
    if (e->id.scheme && !strcmp(e->id.scheme, "digest") && strchr(id, ':'))
      idlen = (int)(strchr(id, ':') - id);
    char perms[6];
    int np = 0;
    const char letters[] = "cdrwa";
    const int bits[] = {ZOO_PERM_CREATE, ZOO_PERM_DELETE, ZOO_PERM_READ, ZOO_PERM_WRITE,
                        ZOO_PERM_ADMIN};
    for (int b = 0; b < 5; b++)
      if (e->perms & bits[b])
        perms[np++] = letters[b];
    perms[np] = '\0';
    int w = snprintf(out + at, outlen - at, "%s%s:%.*s:%s", i ? "," : "",
                     e->id.scheme ? e->id.scheme : "", idlen, id, perms);
    at += w > 0 ? (size_t)w : 0;
  }
}

/* Whether an existing node's ACL lets this provider, and only it, change the node: 0,
 * 1 when the node is absent, or IDGEN_EUNAVAIL with one line naming the ensemble. With
 * --zk-user: refused when anyone may change it (a tree made without auth: idgen never
 * rewrites an ACL it did not set), when it is this user's with another password, or
 * another user's. Without: refused when it is closed to us (made with --zk-user). */
static int acl_check(zk_lease *z, const char *path) {
  struct ACL_vector acl = {0, NULL};
  struct Stat st;
  int zrc = zoo_get_acl(z->zh, path, &acl, &st);
  if (zrc == ZNONODE)
    return 1;
  if (zrc != ZOK)
    return zk_error(z, zrc, "getACL", path);
  int world = 0, ours = 0, same_user = 0;
  size_t ulen = strlen(z->user);
  for (int i = 0; i < acl.count; i++) {
    const struct ACL *e = &acl.data[i];
    const char *scheme = e->id.scheme ? e->id.scheme : "", *id = e->id.id ? e->id.id : "";
    if (!strcmp(scheme, "world") && !strcmp(id, "anyone"))
      world |= e->perms;
    else if (ulen && !strcmp(scheme, "digest") && !strcmp(id, z->digest_id))
      ours |= e->perms;
    else if (ulen && !strcmp(scheme, "digest") && !strncmp(id, z->user, ulen) &&
             id[ulen] == ':')
      same_user = 1;
  }
  char text[256];
  acl_text(&acl, text, sizeof text);
  deallocate_ACL_vector(&acl);
  if (!ulen) {
    if ((world & ZK_PERMS_USED) == ZK_PERMS_USED || z->readonly)
      return 0;
    return idgen__why(&z->base, IDGEN_EUNAVAIL,
                      "zookeeper %s: %s is closed to clients without credentials (its "
                      "ACL: %s): give --zk-user and --zk-password-file",
                      z->hosts, path, text);
  }
  if (world & ZK_PERMS_CHANGE)
    return idgen__why(&z->base, IDGEN_EUNAVAIL,
                      "zookeeper %s: %s lets anyone change it (ACL %s: made without "
                      "--zk-user?): idgen does not take it over; set its ACL first "
                      "(docs/leases.md, \"ZooKeeper auth\")",
                      z->hosts, path, text);
  if ((ours & ZK_PERMS_USED) == ZK_PERMS_USED)
    return 0;
  if (same_user && !ours)
    return idgen__why(&z->base, IDGEN_EUNAVAIL,
                      "zookeeper %s: %s belongs to user '%s' with another password: wrong "
                      "--zk-password-file or IDGEN_ZK_PASSWORD?",
                      z->hosts, path, z->user);
  return idgen__why(&z->base, IDGEN_EUNAVAIL,
                    "zookeeper %s: %s does not let user '%s' read, write, create and "
                    "delete (its ACL: %s)",
                    z->hosts, path, z->user, text);
}

/* Checks the nodes of our space that exist (the namespace and datacenter folders, the
 * workers and hwm folders) without making any: at open, so that a wrong password or a
 * tree it may not use is refused at start, in one line. */
static int check_tree(zk_lease *z) {
  if (!z->user[0] && z->readonly)
    return 0; /* reading needs no credentials */
  char root[128], path[ZK_PATH_MAX];
  space_root(z, z->space.datacenter, root, sizeof root);
  const char *kinds[] = {"workers", "hwm"};
  for (size_t k = 0; k < 2; k++) {
    snprintf(path, sizeof path, "%s/%s", root, kinds[k]);
    size_t ns_len = strlen("/idgen/") + strlen(z->ns);
    for (char *p = path + ns_len;; p++) { /* /idgen/<ns>, each prefix below, the whole */
      char save = *p;
      if (save != '/' && save != '\0')
        continue;
      *p = '\0';
      int rc = acl_check(z, path);
      *p = save;
      if (rc < 0)
        return rc;
      if (rc == 1 || !save)
        break; /* absent: so is everything below */
    }
  }
  return 0;
}

/* Makes the persistent folders of datacenter dc's space (those that exist stay). */
static int ensure_dirs_of(zk_lease *z, int64_t dc) {
  char root[128], path[ZK_PATH_MAX];
  space_root(z, dc, root, sizeof root);
  size_t ns_len = strlen("/idgen/") + strlen(z->ns);
  const char *kinds[] = {"workers", "hwm"};
  for (size_t k = 0; k < 2; k++) {
    snprintf(path, sizeof path, "%s/%s", root, kinds[k]);
    for (char *p = path + 1;; p++) { /* every prefix, then the whole */
      char save = *p;
      if (save != '/' && save != '\0')
        continue;
      *p = '\0';
      int zrc = zoo_create(z->zh, path, NULL, -1, acl_for(z, path), 0, NULL, 0);
      int rc = 0;
      if (zrc == ZNODEEXISTS && strlen(path) >= ns_len)
        rc = acl_check(z, path); /* /idgen itself is every namespace's: not checked */
      *p = save;
      if (zrc == ZNOAUTH)
        return idgen__why(&z->base, IDGEN_EUNAVAIL,
                          "zookeeper %s: not allowed to create %s (its parent's ACL)%s",
                          z->hosts, path, z->user[0] ? "" : ": give --zk-user");
      if (zrc != ZOK && zrc != ZNODEEXISTS)
        return zk_error(z, zrc, "create", path);
      if (rc < 0)
        return rc;
      if (!save)
        break;
    }
  }
  return 0;
}

/* Our space's folders, and under a two-field layout the other names' (the claim's
 * multi creates and deletes the other name's worker node, under its folder). */
static int make_dirs(zk_lease *z) {
  int rc = ensure_dirs_of(z, z->space.datacenter);
  if (rc || !z->space.low_bits)
    return rc;
  if (z->space.datacenter >= 0)
    return ensure_dirs_of(z, -1);
  int64_t odc;
  uint64_t dcs = 0;
  for (uint64_t w = z->space.lo; w <= z->space.hi; w++) { /* each high field value */
    idgen__space_alias(&z->space, w, &odc);
    if (odc >= 0 && (uint64_t)odc + 1 > dcs) {
      if ((rc = ensure_dirs_of(z, odc)))
        return rc;
      dcs = (uint64_t)odc + 1;
    }
    if (w == UINT64_MAX)
      break;
  }
  return 0;
}

static int ensure_dirs(zk_lease *z) {
  if (z->dirs_made)
    return 0;
  int rc = make_dirs(z);
  z->dirs_made = rc == 0;
  return rc;
}

/* Reads a node: 0 with its data (NUL-terminated) and stat, ZNONODE, or another ZK code. */
static int get_node(zk_lease *z, const char *path, char *buf, int buflen, int *len,
                    struct Stat *stat) {
  int n = buflen - 1;
  int zrc = zoo_get(z->zh, path, 0, buf, &n, stat);
  if (zrc == ZOK) {
    if (n < 0)
      n = 0;
    buf[n] = '\0';
    *len = n;
  }
  return zrc;
}

/* The worker numbers under our space's workers folder (malloc'd). */
static int list_workers(zk_lease *z, int64_t dc, uint64_t **out, size_t *n) {
  char root[128], path[ZK_PATH_MAX];
  space_root(z, dc, root, sizeof root);
  snprintf(path, sizeof path, "%s/workers", root);
  struct String_vector kids = {0, NULL};
  int zrc = zoo_get_children(z->zh, path, 0, &kids);
  *out = NULL;
  *n = 0;
  if (zrc == ZNONODE)
    return 0;
  if (zrc != ZOK)
    return zk_error(z, zrc, "list", path);
  uint64_t *ws = calloc(kids.count > 0 ? (size_t)kids.count : 1, sizeof *ws);
  if (!ws) {
    deallocate_String_vector(&kids);
    return idgen__why(&z->base, IDGEN_ENOMEM, "out of memory");
  }
  for (int i = 0; i < kids.count; i++) {
    char *end;
    unsigned long long v = strtoull(kids.data[i], &end, 10);
    if (kids.data[i][0] >= '0' && kids.data[i][0] <= '9' && !*end)
      ws[(*n)++] = v;
  }
  deallocate_String_vector(&kids);
  *out = ws;
  return 0;
}

static int listed(const uint64_t *list, size_t n, uint64_t w) {
  for (size_t i = 0; i < n; i++)
    if (list[i] == w)
      return 1;
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* At start: refuse when the local clock is far from the median of the live holders'
 * recorded clocks (a HWM record counts only when its current holder wrote it: written
 * after the worker node was made), or when a live holder of our datacenter names
 * another region. */
static int check_start(zk_lease *z, const uint64_t *ws, size_t nw) {
  if (z->max_skew_ms <= 0 && z->space.datacenter < 0)
    return 0; /* nothing to check: no reads */
  int64_t *clocks = calloc(nw ? nw : 1, sizeof *clocks);
  if (!clocks)
    return idgen__why(&z->base, IDGEN_ENOMEM, "out of memory");
  size_t nc = 0;
  int rc = 0;
  for (size_t i = 0; i < nw && !rc; i++) {
    char wpath[ZK_PATH_MAX], hpath[ZK_PATH_MAX], buf[ZK_VALUE_MAX];
    node_of(z, z->space.datacenter, "workers", ws[i], wpath, sizeof wpath);
    node_of(z, z->space.datacenter, "hwm", ws[i], hpath, sizeof hpath);
    struct Stat ws_stat, hs_stat;
    int len;
    idgen__record r;
    if (get_node(z, wpath, buf, sizeof buf, &len, &ws_stat) != ZOK)
      continue; /* gone since the listing */
    if (z->space.datacenter >= 0 && !idgen__record_parse(buf, (size_t)len, &r) &&
        r.region[0] && strcmp(r.region, z->region)) {
      rc = idgen__why(&z->base, IDGEN_ECONFLICT,
                      "%s %lld of namespace '%s' has a live holder in region '%s' (host %s, "
                      "zookeeper node %s), and this is region '%s': two regions with one "
                      "%s number? (--datacenter, --region)",
                      z->space.dc_field, (long long)z->space.datacenter, z->ns, r.region,
                      r.host, wpath, z->region, z->space.dc_field);
      break;
    }
    if (get_node(z, hpath, buf, sizeof buf, &len, &hs_stat) == ZOK &&
        hs_stat.mzxid >= ws_stat.czxid && !idgen__record_parse(buf, (size_t)len, &r) &&
        r.wall_ms > 0)
      clocks[nc++] = r.wall_ms;
  }
  if (!rc && z->max_skew_ms > 0 && nc > 0) {
    qsort(clocks, nc, sizeof *clocks, cmp_i64);
    int64_t median = nc % 2 ? clocks[nc / 2] : (clocks[nc / 2 - 1] + clocks[nc / 2]) / 2;
    int64_t d = idgen_wall_ns() / NS_PER_MS - median;
    if (d > z->max_skew_ms || -d > z->max_skew_ms)
      rc = idgen__why(&z->base, IDGEN_ECLOCKSKEW,
                      "local clock is %+lld ms off the median of %zu live peers in "
                      "namespace '%s' (limit %lld ms, --max-clock-skew)",
                      (long long)d, nc, z->ns, (long long)z->max_skew_ms);
  }
  free(clocks);
  return rc;
}

/* One HWM node as read before a claim: its data, version, and record. */
typedef struct hwm_node {
  char path[ZK_PATH_MAX];
  char data[ZK_VALUE_MAX];
  int len;
  int found;
  int32_t version;
  idgen__record rec;
} hwm_node;

/* Reads a HWM node: 0 (found or not), IDGEN_EEMPTY / IDGEN_EFORMAT for a record that is
 * not whole, or the session's error. */
static int read_hwm(zk_lease *z, hwm_node *h) {
  struct Stat st;
  memset(&h->rec, 0, sizeof h->rec);
  h->found = 0;
  h->version = -1;
  int zrc = get_node(z, h->path, h->data, sizeof h->data, &h->len, &st);
  if (zrc == ZNONODE)
    return 0;
  if (zrc != ZOK)
    return zk_error(z, zrc, "get", h->path);
  h->found = 1;
  h->version = st.version;
  return idgen__record_parse(h->data, (size_t)h->len, &h->rec);
}

/* The record of a worker claimed with no HWM node: its first use, or its history lost
 * (the node or the namespace deleted): ZooKeeper cannot tell the two apart, so both
 * wait past now + ahead + one HWM interval, as etcd's fresh_hwm (docs/leases.md, step
 * 11). The claim itself writes it, so a holder dying in the wait leaves it for the next. */
static void fresh_record(const zk_lease *z, idgen__record *rec) {
  idgen__record_self(rec, z->host, z->start_ms, z->space.datacenter, z->region);
  rec->wall_ms = idgen_wall_ns() / NS_PER_MS;
  rec->hwm_ms = rec->wall_ms + z->fresh_wait_ms;
}

/* What one try at a worker ID came to. */
typedef enum try_result {
  TRY_HELD,   /* the ID is ours, its HWM read */
  TRY_RACE,   /* lost a race (or a reply): list again */
  TRY_PASSED, /* the ID was passed over: list again */
  TRY_FAILED  /* *rc says why */
} try_result;

/* An acquire in progress. */
typedef struct acquiring {
  idgen__passed p; /* the IDs passed over */
  uint64_t w;
  int has_other; /* two-field layouts: the ID's other name */
  char wpath[ZK_PATH_MAX], owpath[ZK_PATH_MAX];
  hwm_node hwm, ohwm;
  char self[ZK_VALUE_MAX];   /* our holder record, the worker node's data */
  char fresh[ZK_VALUE_MAX];  /* the first HWM record, when the node is absent */
  int64_t fresh_hwm_ms;
} acquiring;

/* The worker node of the claim is there and belongs to this session: the claim applied
 * (its reply lost). 1 yes, 0 no, or a negative error. */
static int node_is_ours(zk_lease *z, const char *path) {
  struct Stat st;
  int zrc = zoo_exists(z->zh, path, 0, &st);
  if (zrc == ZNONODE)
    return 0;
  if (zrc != ZOK)
    return zk_error(z, zrc, "exists", path);
  return st.ephemeralOwner == z->session_id;
}

/* The claim, one multi (all or nothing):
 * - create the ephemeral worker node with our holder record;
 * - set the HWM node, unchanged, at the version just read (or create it with the fresh
 *   record when it was absent): the claim bumps its version, so a write of the last
 *   holder, which expects the version it saw, fails from this claim on;
 * - two-field layouts: the other name's worker node must be absent (created and
 *   deleted), and its HWM node is set at the version read, or asserted absent too.
 * *results gets each op's outcome. Returns the multi's ZooKeeper code. */
static int claim_multi(zk_lease *z, acquiring *a, zoo_op_result_t *results, int *nops) {
  zoo_op_t ops[6];
  int n = 0;
  struct ACL_vector *acl = acl_for(z, a->wpath);
  zoo_create_op_init(&ops[n++], a->wpath, a->self, (int)strlen(a->self), acl, ZOO_EPHEMERAL,
                     NULL, 0);
  if (a->hwm.found)
    zoo_set_op_init(&ops[n++], a->hwm.path, a->hwm.data, a->hwm.len, a->hwm.version, NULL);
  else
    zoo_create_op_init(&ops[n++], a->hwm.path, a->fresh, (int)strlen(a->fresh), acl, 0,
                       NULL, 0);
  if (a->has_other) {
    zoo_create_op_init(&ops[n++], a->owpath, NULL, -1, acl, ZOO_EPHEMERAL, NULL, 0);
    zoo_delete_op_init(&ops[n++], a->owpath, -1);
    if (a->ohwm.found) {
      zoo_set_op_init(&ops[n++], a->ohwm.path, a->ohwm.data, a->ohwm.len, a->ohwm.version,
                      NULL);
    } else {
      zoo_create_op_init(&ops[n++], a->ohwm.path, NULL, -1, acl, 0, NULL, 0);
      zoo_delete_op_init(&ops[n++], a->ohwm.path, -1);
    }
  }
  *nops = n;
  return zoo_multi(z->zh, n, ops, results);
}

/* Picks the smallest free ID of the space (not passed over), and reads its HWM nodes. */
static try_result pick(zk_lease *z, acquiring *a, int *rc) {
  uint64_t *ws = NULL;
  size_t nw = 0;
  if ((*rc = list_workers(z, z->space.datacenter, &ws, &nw)))
    return TRY_FAILED;
  if (!z->started) {
    if ((*rc = check_start(z, ws, nw))) {
      free(ws);
      return TRY_FAILED;
    }
    z->started = 1;
  }
  int found = 0;
  for (uint64_t w = z->space.lo; w <= z->space.hi && !found; w++) {
    if (!listed(ws, nw, w) && !listed(a->p.ids, a->p.n, w)) {
      a->w = w;
      found = 1;
    }
    if (w == UINT64_MAX)
      break;
  }
  free(ws);
  if (!found) {
    *rc = idgen__none_free(&z->base, &z->space, z->ns, "zookeeper", &a->p);
    return TRY_FAILED;
  }
  node_of(z, z->space.datacenter, "workers", a->w, a->wpath, sizeof a->wpath);
  node_of(z, z->space.datacenter, "hwm", a->w, a->hwm.path, sizeof a->hwm.path);
  int64_t odc;
  uint64_t ow = idgen__space_alias(&z->space, a->w, &odc);
  a->has_other = odc != -2;
  const char *bad = a->hwm.path;
  *rc = read_hwm(z, &a->hwm);
  if (!*rc && a->has_other) {
    node_of(z, odc, "workers", ow, a->owpath, sizeof a->owpath);
    node_of(z, odc, "hwm", ow, a->ohwm.path, sizeof a->ohwm.path);
    bad = a->ohwm.path;
    *rc = read_hwm(z, &a->ohwm);
  }
  /* With --zk-user, a HWM node made without it (anyone may rewrite it) is refused. */
  if (z->user[0] && (!*rc || *rc == IDGEN_EEMPTY || *rc == IDGEN_EFORMAT)) {
    int arc = a->hwm.found ? acl_check(z, a->hwm.path) : 0;
    if (arc >= 0 && !*rc && a->has_other && a->ohwm.found)
      arc = acl_check(z, a->ohwm.path);
    if (arc < 0) {
      *rc = arc;
      return TRY_FAILED;
    }
  }
  if (*rc == IDGEN_EEMPTY || *rc == IDGEN_EFORMAT) {
    /* one bad record must not stop everyone (all take the smallest free ID) */
    idgen__why(&z->base, *rc, "zookeeper node %s: unreadable HWM record (%s)", bad,
               idgen_strerror(*rc));
    snprintf(a->p.last_corrupt, sizeof a->p.last_corrupt, "%s", z->base.why);
    a->p.corrupt++;
    return (*rc = idgen__pass_over(&z->base, &a->p, a->w)) ? TRY_FAILED : TRY_PASSED;
  }
  return *rc ? TRY_FAILED : TRY_HELD;
}

/* After a multi whose reply was lost (connection loss, timeout): did it apply? Only the
 * worker node's ephemeralOwner can say: ours, then the claim applied whole (a multi is
 * atomic), and the HWM node is as the claim left it: read its version again. */
static try_result claim_ambiguous(zk_lease *z, acquiring *a, int *rc) {
  if ((*rc = session_ready(z)))
    return TRY_FAILED;
  int ours = node_is_ours(z, a->wpath);
  if (ours < 0) {
    *rc = ours;
    return TRY_FAILED;
  }
  if (!ours)
    return TRY_RACE;
  hwm_node now;
  memset(&now, 0, sizeof now);
  snprintf(now.path, sizeof now.path, "%s", a->hwm.path);
  *rc = read_hwm(z, &now);
  if (*rc || !now.found) {
    *rc = *rc ? *rc : idgen__why(&z->base, IDGEN_EUNAVAIL, "zookeeper: %s vanished",
                                  now.path);
    return TRY_FAILED;
  }
  a->hwm.version = now.version - 1; /* hold() takes the claim's version as read + 1 */
  a->hwm.found = 1;
  a->hwm.rec = now.rec;
  return TRY_HELD;
}

/* One try: pick, then claim in one multi. */
static try_result try_worker(zk_lease *z, acquiring *a, int *rc) {
  try_result t = pick(z, a, rc);
  if (t != TRY_HELD)
    return t;
  idgen__record self, fresh;
  idgen__record_self(&self, z->host, z->start_ms, z->space.datacenter, z->region);
  self.wall_ms = idgen_wall_ns() / NS_PER_MS;
  self.hwm_ms = a->hwm.found ? a->hwm.rec.hwm_ms : 0;
  fresh_record(z, &fresh);
  a->fresh_hwm_ms = fresh.hwm_ms;
  if (idgen__record_format(&self, a->self, sizeof a->self) < 0 ||
      idgen__record_format(&fresh, a->fresh, sizeof a->fresh) < 0) {
    *rc = idgen__why(&z->base, IDGEN_EBUFSIZE, "holder record too long");
    return TRY_FAILED;
  }
  zoo_op_result_t res[6];
  memset(res, 0, sizeof res);
  int nops = 0;
  int zrc = claim_multi(z, a, res, &nops);
  if (zrc == ZOK)
    return TRY_HELD;
  if (zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT)
    return claim_ambiguous(z, a, rc);
  if (zrc == ZNONODE && res[0].err == ZNONODE) { /* a folder deleted: make it again */
    z->dirs_made = 0;
    *rc = ensure_dirs(z);
    return *rc ? TRY_FAILED : TRY_RACE;
  }
  if (a->has_other && res[0].err == ZOK && res[1].err == ZOK && res[2].err == ZNODEEXISTS) {
    a->p.other++;
    return (*rc = idgen__pass_over(&z->base, &a->p, a->w)) ? TRY_FAILED : TRY_PASSED;
  }
  if (zrc == ZNONODE)
    z->dirs_made = 0; /* the other name's folder, maybe */
  if (zrc == ZNODEEXISTS || zrc == ZBADVERSION || zrc == ZNONODE)
    return TRY_RACE; /* taken, or its HWM moved since we read it */
  *rc = zk_error(z, zrc, "claim multi", a->wpath);
  return TRY_FAILED;
}

/* Holds the ID a try won. */
static void hold(zk_lease *z, const acquiring *a, idgen_lease_grant *out) {
  z->held = 1;
  z->worker = a->w;
  z->hwm_version = a->hwm.found ? a->hwm.version + 1 : 0; /* the claim bumped it */
  int64_t hwm = a->hwm.found ? a->hwm.rec.hwm_ms : a->fresh_hwm_ms;
  if (a->has_other && a->ohwm.found && a->ohwm.rec.hwm_ms > hwm)
    hwm = a->ohwm.rec.hwm_ms;
  out->worker = idgen_lease_space_worker(&z->space, a->w);
  out->hwm_ms = hwm;
  /* The deadline counts from the send time of the last round trip plus the session
   * timeout the ensemble negotiated, not the one asked for. */
  out->ttl_ms = zoo_recv_timeout(z->zh);
  out->fenced = 1;
  out->skipped = (uint32_t)a->p.corrupt;
  if (a->p.corrupt)
    idgen__why(&z->base, 0, "%s: skipped", a->p.last_corrupt);
}

static int zk_acquire(idgen_lease *l, idgen_lease_grant *out) {
  zk_lease *z = (zk_lease *)l;
  int rc = refuse_in_child(z);
  if (rc)
    return rc;
  if (z->readonly)
    return idgen__why(l, IDGEN_EINVAL, "opened read-only: cannot acquire");
  if (z->held)
    session_close(z); /* an ID from before a loss: its session goes with it */
  if ((rc = session_ready(z)) || (rc = ensure_dirs(z)))
    return rc == IDGEN_ELEASE ? IDGEN_EUNAVAIL : rc;
  acquiring a;
  memset(&a, 0, sizeof a);
  for (int races = 0; races < 64;) {
    switch (try_worker(z, &a, &rc)) {
    case TRY_HELD:
      hold(z, &a, out);
      free(a.p.ids);
      return 0;
    case TRY_RACE:
      races++;
      continue;
    case TRY_PASSED:
      continue;
    case TRY_FAILED:
      free(a.p.ids);
      return rc == IDGEN_ELEASE ? IDGEN_EUNAVAIL : rc;
    }
  }
  free(a.p.ids);
  return idgen__why(l, IDGEN_ECONFLICT,
                    "zookeeper: lost 64 races for a worker ID in namespace '%s'", z->ns);
}

/* A round trip that shows the session alive and the worker node still ours. */
static int zk_keepalive(idgen_lease *l) {
  zk_lease *z = (zk_lease *)l;
  int rc = refuse_in_child(z);
  if (rc)
    return rc;
  if (!z->held || !z->zh)
    return idgen__why(l, IDGEN_ELEASE, "no worker ID held");
  if (zoo_state(z->zh) == ZOO_EXPIRED_SESSION_STATE)
    return idgen__why(l, IDGEN_ELEASE, "zookeeper: session expired");
  char wpath[ZK_PATH_MAX];
  node_of(z, z->space.datacenter, "workers", z->worker, wpath, sizeof wpath);
  int ours = node_is_ours(z, wpath);
  if (ours < 0)
    return ours;
  if (!ours)
    return idgen__why(l, IDGEN_ELEASE, "zookeeper: %s is gone or not this session's", wpath);
  return 0;
}

/* Writes our HWM: a setData at the version we last saw (docs/leases.md, the ZooKeeper
 * step). A claim by anyone else bumped the version, so a holder that lost its session,
 * or was paused while another claimed, is refused here; and a write of ours that the
 * client gave up on (its reply lost) cannot land later and lower the HWM: it expected a
 * version our later write moved on. When the version moved but the worker node is still
 * this session's, the write that moved it was ours (applied, reply lost) or an
 * operator's: read the node and write again, once, the higher of the two. */
static int fenced_set(zk_lease *z, int64_t hwm_ms) {
  idgen__record rec;
  idgen__record_self(&rec, z->host, z->start_ms, z->space.datacenter, z->region);
  rec.hwm_ms = hwm_ms;
  rec.wall_ms = idgen_wall_ns() / NS_PER_MS;
  char hpath[ZK_PATH_MAX], wpath[ZK_PATH_MAX], value[ZK_VALUE_MAX];
  node_of(z, z->space.datacenter, "hwm", z->worker, hpath, sizeof hpath);
  node_of(z, z->space.datacenter, "workers", z->worker, wpath, sizeof wpath);
  for (int attempt = 0;; attempt++) {
    if (idgen__record_format(&rec, value, sizeof value) < 0)
      return idgen__why(&z->base, IDGEN_EBUFSIZE, "holder record too long");
    struct Stat st;
    int zrc = zoo_set2(z->zh, hpath, value, (int)strlen(value), z->hwm_version, &st);
    if (zrc == ZOK) {
      z->hwm_version = st.version;
      return 0;
    }
    if (zrc == ZNONODE)
      return idgen__why(&z->base, IDGEN_ELEASE,
                        "zookeeper: %s was deleted under us: HWM not written", hpath);
    if (zrc != ZBADVERSION)
      return zk_error(z, zrc, "setData", hpath); /* maybe applied: see above */
    int ours = node_is_ours(z, wpath);
    if (ours < 0)
      return ours;
    if (!ours)
      return idgen__why(&z->base, IDGEN_ELEASE,
                        "zookeeper: %s moved past version %d and %s is not this session's: "
                        "HWM not written",
                        hpath, (int)z->hwm_version, wpath);
    if (attempt > 0)
      return idgen__why(&z->base, IDGEN_EUNAVAIL,
                        "zookeeper: %s changed twice under our session: HWM not written",
                        hpath);
    hwm_node now;
    memset(&now, 0, sizeof now);
    snprintf(now.path, sizeof now.path, "%s", hpath);
    int rc = read_hwm(z, &now);
    if (rc && rc != IDGEN_EEMPTY && rc != IDGEN_EFORMAT)
      return rc;
    if (!now.found)
      return idgen__why(&z->base, IDGEN_ELEASE,
                        "zookeeper: %s was deleted under us: HWM not written", hpath);
    z->hwm_version = now.version;
    if (!rc && now.rec.hwm_ms > rec.hwm_ms) /* unreadable: ours replaces it */
      rec.hwm_ms = now.rec.hwm_ms;
  }
}

static int zk_write_hwm(idgen_lease *l, int64_t hwm_ms) {
  zk_lease *z = (zk_lease *)l;
  int rc = refuse_in_child(z);
  if (rc)
    return rc;
  if (!z->held || !z->zh)
    return idgen__why(l, IDGEN_ELEASE, "no worker ID held");
  return fenced_set(z, hwm_ms);
}

/* The final HWM, then the session closed: its worker node goes with it, at once. */
static int zk_release(idgen_lease *l, int64_t final_hwm_ms) {
  zk_lease *z = (zk_lease *)l;
  int rc = refuse_in_child(z);
  if (rc)
    return rc;
  if (z->held && z->zh && final_hwm_ms > 0)
    rc = fenced_set(z, final_hwm_ms);
  if (rc == IDGEN_ELEASE)
    rc = 0; /* gone already: nothing to free */
  session_close(z);
  return rc;
}

/* One worker ID named in the namespace. */
typedef struct named {
  int64_t dc;
  uint64_t w;
} named;

static int cmp_named(const void *a, const void *b) {
  const named *x = a, *y = b;
  if (x->dc != y->dc)
    return x->dc < y->dc ? -1 : 1;
  return x->w < y->w ? -1 : x->w > y->w;
}

/* Adds the numbered children of folder (dc's "workers" or "hwm") to the list. */
static int add_children(zk_lease *z, int64_t dc, const char *kind, named **list, size_t *n,
                        size_t *cap) {
  char root[128], path[ZK_PATH_MAX];
  space_root(z, dc, root, sizeof root);
  snprintf(path, sizeof path, "%s/%s", root, kind);
  struct String_vector kids = {0, NULL};
  int zrc = zoo_get_children(z->zh, path, 0, &kids);
  if (zrc == ZNONODE)
    return 0;
  if (zrc != ZOK)
    return zk_error(z, zrc, "list", path);
  int rc = 0;
  for (int i = 0; i < kids.count && !rc; i++) {
    char *end;
    unsigned long long w = strtoull(kids.data[i], &end, 10);
    if (kids.data[i][0] < '0' || kids.data[i][0] > '9' || *end)
      continue;
    size_t j = 0;
    while (j < *n && ((*list)[j].dc != dc || (*list)[j].w != w))
      j++;
    if (j < *n)
      continue;
    if (*n == *cap) {
      size_t c = *cap ? *cap * 2 : 64;
      named *grown = realloc(*list, c * sizeof *grown);
      if (!grown) {
        rc = idgen__why(&z->base, IDGEN_ENOMEM, "out of memory");
        break;
      }
      *list = grown;
      *cap = c;
    }
    (*list)[(*n)++] = (named){dc, w};
  }
  deallocate_String_vector(&kids);
  return rc;
}

static void fill_holder(zk_lease *z, const named *k, idgen_lease_holder *h) {
  memset(h, 0, sizeof *h);
  h->worker = k->w;
  h->datacenter = k->dc;
  h->ttl_left_ms = -1;
  char path[ZK_PATH_MAX], buf[ZK_VALUE_MAX];
  for (int i = 0; i < 2; i++) {
    node_of(z, k->dc, i == 0 ? "hwm" : "workers", k->w, path, sizeof path);
    struct Stat st;
    int len;
    idgen__record r;
    if (get_node(z, path, buf, sizeof buf, &len, &st) != ZOK)
      continue;
    if (i == 1)
      h->live = 1;
    if (idgen__record_parse(buf, (size_t)len, &r))
      continue;
    if (i == 0) {
      h->hwm_ms = r.hwm_ms;
      h->wall_ms = r.wall_ms;
    } else if (!h->wall_ms) {
      h->wall_ms = r.wall_ms;
    }
    snprintf(h->host, sizeof h->host, "%s", r.host);
    snprintf(h->region, sizeof h->region, "%s", r.region);
    h->pid = r.pid;
    h->start_ms = r.start_ms;
  }
}

static int zk_holders(idgen_lease *l, idgen_lease_holder *out, size_t max, size_t *count) {
  zk_lease *z = (zk_lease *)l;
  int rc = refuse_in_child(z);
  if (rc || (rc = session_ready(z)))
    return rc;
  named *list = NULL;
  size_t n = 0, cap = 0;
  /* the whole namespace: its own folders and every datacenter's */
  int64_t dcs_max = -1;
  char dcpath[ZK_PATH_MAX];
  snprintf(dcpath, sizeof dcpath, "/idgen/%s/dc", z->ns);
  struct String_vector dcs = {0, NULL};
  int zrc = zoo_get_children(z->zh, dcpath, 0, &dcs);
  if (zrc != ZOK && zrc != ZNONODE)
    return zk_error(z, zrc, "list", dcpath);
  for (int i = -1; i < (zrc == ZOK ? dcs.count : 0) && !rc; i++) {
    int64_t dc = -1;
    if (i >= 0) {
      char *end;
      long long v = strtoll(dcs.data[i], &end, 10);
      if (dcs.data[i][0] < '0' || dcs.data[i][0] > '9' || *end)
        continue;
      dc = v;
    }
    if (dc > dcs_max)
      dcs_max = dc;
    if (!(rc = add_children(z, dc, "workers", &list, &n, &cap)))
      rc = add_children(z, dc, "hwm", &list, &n, &cap);
  }
  if (zrc == ZOK)
    deallocate_String_vector(&dcs);
  if (rc) {
    free(list);
    return rc;
  }
  if (n)
    qsort(list, n, sizeof *list, cmp_named);
  for (size_t i = 0; i < n && i < max; i++)
    fill_holder(z, &list[i], &out[i]);
  free(list);
  *count = n;
  return 0;
}

static void zk_describe(idgen_lease *l, char *out, size_t outlen) {
  zk_lease *z = (zk_lease *)l;
  char space[160];
  idgen__space_name(&z->space, z->ns, space, sizeof space);
  uint64_t *ws = NULL;
  size_t nw = 0;
  if (refuse_in_child(z) || session_ready(z) ||
      list_workers(z, z->space.datacenter, &ws, &nw)) {
    snprintf(out, outlen, "zookeeper: %s: %s", space, l->why);
    return;
  }
  int64_t pick = -1;
  for (uint64_t w = z->space.lo; w <= z->space.hi && pick < 0; w++) {
    if (!listed(ws, nw, w))
      pick = (int64_t)w;
    if (w == UINT64_MAX)
      break;
  }
  free(ws);
  int timeout = zoo_recv_timeout(z->zh);
  if (pick < 0)
    snprintf(out, outlen, "zookeeper %s: session timeout %d ms, all %llu %s are taken",
             z->hosts, timeout, (unsigned long long)idgen__space_size(&z->space), space);
  else
    snprintf(out, outlen,
             "zookeeper %s: session timeout %d ms, would claim %llu of the %s (worker ID "
             "%llu; %zu held)",
             z->hosts, timeout, (unsigned long long)pick, space,
             (unsigned long long)idgen_lease_space_worker(&z->space, (uint64_t)pick), nw);
}

static void zk_free(idgen_lease *l) {
  zk_lease *z = (zk_lease *)l;
  /* In a forked child the session is the parent's: closing it would end the parent's
   * lease. The child leaves it be (its copy of the client has no threads anyway). */
  if (!idgen__lease_forked(z->fork_gen))
    session_close(z);
  OPENSSL_cleanse(z->auth, sizeof z->auth);
  free(z);
}

/* "user:password" from the config (the password file read now), and its digest id. */
static int auth_setup(zk_lease *z, const idgen_lease_config *c, char *err, size_t errlen) {
  char pw[sizeof c->zk_password];
  int rc = 0;
  if (c->zk_password_file[0])
    rc = idgen__password_file_read("zk-password-file", c->zk_password_file, pw, sizeof pw,
                                   err, errlen);
  else
    snprintf(pw, sizeof pw, "%s", c->zk_password);
  if (!rc) {
    snprintf(z->user, sizeof z->user, "%s", c->zk_user);
    snprintf(z->auth, sizeof z->auth, "%s:%s", c->zk_user, pw);
    rc = digest_setup(z, err, errlen);
  }
  OPENSSL_cleanse(pw, sizeof pw);
  return rc;
}

static const idgen_lease_class zk_class = {"zookeeper",  zk_acquire, zk_keepalive,
                                           zk_write_hwm, zk_release, zk_holders,
                                           zk_describe,  zk_free};

/* The constructor of idgen_lease_zookeeper's row: opens a session (one connection and
 * the client's two threads), so that an unreachable ensemble is refused at start, and
 * checks the ACLs of the space's nodes that exist (check_tree), so that a wrong
 * password is too. */
static int zk_open(idgen_lease **out, const idgen_lease_config *c,
                   const idgen_lease_space *space, int readonly, char *err,
                   size_t errlen) {
  zk_lease *z = calloc(1, sizeof *z);
  if (!z)
    return IDGEN_ENOMEM;
  z->base.vtable = &zk_class;
  idgen__fork_watch();
  z->fork_gen = idgen__fork_generation();
  snprintf(z->hosts, sizeof z->hosts, "%s", c->zookeeper);
  z->connect_timeout_ms = c->request_timeout_ms;
  z->ttl_ms = c->ttl_ms > INT32_MAX ? INT32_MAX : (int)c->ttl_ms;
  snprintf(z->ns, sizeof z->ns, "%s", c->ns);
  z->space = *space;
  z->max_skew_ms = c->max_skew_ms;
  z->fresh_wait_ms = c->ahead_ms + c->hwm_interval_ms;
  z->readonly = readonly;
  snprintf(z->host, sizeof z->host, "%s", c->hostname);
  snprintf(z->region, sizeof z->region, "%s", c->region);
  z->start_ms = idgen_wall_ns() / NS_PER_MS;
  int rc = 0;
  if (c->zk_user[0] && (rc = auth_setup(z, c, err, errlen))) {
    zk_free(&z->base);
    return rc;
  }
  if (!(rc = session_ready(z)))
    rc = check_tree(z);
  if (rc) {
    if (err && errlen)
      snprintf(err, errlen, "%s", z->base.why);
    zk_free(&z->base);
    return rc == IDGEN_ELEASE ? IDGEN_EUNAVAIL : rc;
  }
  z->base.why[0] = '\0';
  *out = &z->base;
  return 0;
}

const idgen_lease_provider idgen_lease_zookeeper = {IDGEN_LEASE_ZOOKEEPER, "zookeeper",
                                                    zk_open};
