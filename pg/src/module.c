/* module.c: the extension's entry point: its settings (idgen.*), and, when loaded by
 * shared_preload_libraries, its shared memory and lease worker. */
#include "idgen_pg.h"

#include <limits.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void _PG_init(void);

idgen_layout idgen_pg_layout;
idgen_policy idgen_pg_policy = IDGEN_POLICY_WAIT;
idgen_lease_config idgen_pg_lease;
int idgen_pg_start_wait_ms = 10000;
char *idgen_pg_opaque_key_file = NULL;

static char *layout_setting, *etcd_setting, *namespace_setting, *state_dir_setting;
/* idgen.etcd_cacert, _cert, _key, _user, _password_file: the lease options of the same
 * names (etcd-cacert, ...), as idgen serve's --etcd-cacert ... */
static char *etcd_access_settings[5];
static const char *const etcd_access_options[5] = {"etcd-cacert", "etcd-cert", "etcd-key",
                                                   "etcd-user", "etcd-password-file"};
static int policy_setting = IDGEN_POLICY_WAIT;
static int lease_setting = IDGEN_LEASE_FILE;
static int worker_id_setting = -1;
static int lease_ttl_s = 10;

static const struct config_enum_entry policy_options[] = {
    {"fail", IDGEN_POLICY_FAIL, false},
    {"wait", IDGEN_POLICY_WAIT, false},
    {"logical", IDGEN_POLICY_LOGICAL, false},
    {NULL, 0, false},
};

static const struct config_enum_entry lease_options[] = {
    {"file", IDGEN_LEASE_FILE, false},
    {"static", IDGEN_LEASE_STATIC, false},
    {"etcd", IDGEN_LEASE_ETCD, false},
    {NULL, 0, false},
};

/* idgen.layout: a preset or a spec (docs/layouts.md), checked as idgen's CLI checks it;
 * the parsed layout rides along as the setting's extra. */
static bool check_layout(char **newval, void **extra, GucSource source) {
  char err[256];
  idgen_layout layout;
  int64 now_ms = idgen_wall_ns() / 1000000;
  (void)source;
  if (idgen_layout_parse(*newval, strlen(*newval), now_ms, &layout, err, sizeof err) < 0) {
    GUC_check_errdetail("%s", err);
    return false;
  }
  *extra = malloc(sizeof layout);
  if (!*extra)
    return false;
  memcpy(*extra, &layout, sizeof layout);
  return true;
}

static void assign_layout(const char *newval, void *extra) {
  (void)newval;
  memcpy(&idgen_pg_layout, extra, sizeof idgen_pg_layout);
}

/* A lease option's value, checked by the library as idgen serve checks its flag. */
static bool lease_option_ok(const char *option, const char *value) {
  idgen_lease_config scratch;
  char err[256];
  idgen_lease_config_init(&scratch);
  if (idgen_lease_config_set(&scratch, option, value, err, sizeof err) < 0) {
    GUC_check_errdetail("%s", err);
    return false;
  }
  return true;
}

/* idgen.etcd: endpoints as idgen serve --etcd takes them; empty unless the lease is etcd.
 */
static bool check_etcd(char **newval, void **extra, GucSource source) {
  (void)extra;
  (void)source;
  return !**newval || lease_option_ok("etcd", *newval);
}

/* The files' settings: a path as idgen serve's --etcd-cacert takes one. */
static bool check_etcd_file(char **newval, void **extra, GucSource source) {
  (void)extra;
  (void)source;
  return !**newval || lease_option_ok("etcd-cacert", *newval);
}

static bool check_etcd_user(char **newval, void **extra, GucSource source) {
  (void)extra;
  (void)source;
  return !**newval || lease_option_ok("etcd-user", *newval);
}

static bool check_namespace(char **newval, void **extra, GucSource source) {
  (void)extra;
  (void)source;
  return lease_option_ok("namespace", *newval);
}

/* The settings fixed at server start: defined only when the library is preloaded
 * (PostgreSQL refuses PGC_POSTMASTER settings defined later). */
static void define_server_settings(void) {
  DefineCustomStringVariable(
      "idgen.layout", "Bit layout of idgen_next()'s IDs: a preset or a spec.",
      "Presets: snowflake, twitter, discord, instagram, sonyflake, js53; or a spec such "
      "as time:41,worker:10,seq:12,epoch:2026-01-01.",
      &layout_setting, "snowflake", PGC_POSTMASTER, 0, check_layout, assign_layout, NULL);
  DefineCustomEnumVariable("idgen.policy",
                           "What idgen_next() does when the clock is behind its last ID.",
                           NULL, &policy_setting, IDGEN_POLICY_WAIT, policy_options,
                           PGC_POSTMASTER, 0, NULL, NULL, NULL);
  DefineCustomEnumVariable(
      "idgen.lease", "Where the worker ID comes from: static, file or etcd.",
      "static: idgen.worker_id, no fence between hosts; file: the smallest ID free on "
      "this host; etcd: a fenced lease held by the idgen lease worker.",
      &lease_setting, IDGEN_LEASE_FILE, lease_options, PGC_POSTMASTER, 0, NULL, NULL, NULL);
  DefineCustomIntVariable("idgen.worker_id", "The worker ID of the static lease.",
                          "-1: unset (the static lease then refuses to start).",
                          &worker_id_setting, -1, -1, INT_MAX, PGC_POSTMASTER, 0, NULL,
                          NULL, NULL);
  DefineCustomStringVariable("idgen.etcd",
                             "etcd endpoints of the etcd lease, comma-separated.", NULL,
                             &etcd_setting, "", PGC_POSTMASTER, 0, check_etcd, NULL, NULL);
  static const char *const access_help[5][2] = {
      {"idgen.etcd_cacert", "PEM CA certificates of the https:// etcd endpoints "
                            "(empty: the system's); peer and host name always verified."},
      {"idgen.etcd_cert", "PEM client certificate for the https:// etcd endpoints, with "
                          "idgen.etcd_key."},
      {"idgen.etcd_key", "PEM private key of idgen.etcd_cert."},
      {"idgen.etcd_user", "etcd user the lease authenticates as (etcd auth enabled), "
                          "with idgen.etcd_password_file."},
      {"idgen.etcd_password_file", "File holding idgen.etcd_user's password (one line), "
                                   "read when the lease worker starts."},
  };
  for (int i = 0; i < 5; i++)
    DefineCustomStringVariable(access_help[i][0], access_help[i][1],
                               "A relative path is taken from the data directory.",
                               &etcd_access_settings[i], "", PGC_POSTMASTER, 0,
                               i == 3 ? check_etcd_user : check_etcd_file, NULL, NULL);
  DefineCustomStringVariable(
      "idgen.namespace", "Worker IDs are unique within a namespace.",
      "etcd keys live under /idgen/NAMESPACE/; the file and static leases claim each ID "
      "host-wide in it, against idgen serve too.",
      &namespace_setting, "default", PGC_POSTMASTER, 0, check_namespace, NULL, NULL);
  DefineCustomStringVariable("idgen.state_dir",
                             "Where the file and static leases keep their HWM files.",
                             "Empty: pg_idgen in the data directory.", &state_dir_setting,
                             "", PGC_POSTMASTER, 0, NULL, NULL, NULL);
  DefineCustomIntVariable("idgen.lease_ttl", "TTL of the etcd lease.", NULL, &lease_ttl_s,
                          10, 2, 3600, PGC_POSTMASTER, GUC_UNIT_S, NULL, NULL, NULL);
}

/* The settings any session (start_wait) or a reload (opaque_key_file) may change. */
static void define_session_settings(void) {
  DefineCustomIntVariable(
      "idgen.start_wait",
      "How long a call waits for the lease worker to arm the generator after a start.",
      "After that, or once the lease was held since the start, a call without a worker ID "
      "fails at once.",
      &idgen_pg_start_wait_ms, 10000, 0, INT_MAX, PGC_USERSET, GUC_UNIT_MS, NULL, NULL,
      NULL);
  DefineCustomStringVariable(
      "idgen.opaque_key_file", "Key file of idgen_opaque() and idgen_unopaque().",
      "32 or 64 hex digits, as idgen opaque keygen writes; a relative "
      "path is taken from the data directory.",
      &idgen_pg_opaque_key_file, "", PGC_SIGHUP, 0, NULL, NULL, NULL);
}

/* One lease option, set through the library so that it checks it as idgen serve does. */
static void set_lease_option(const char *setting, const char *name, const char *value) {
  char err[256];
  if (idgen_lease_config_set(&idgen_pg_lease, name, value, err, sizeof err) < 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("invalid value for parameter \"%s\": \"%s\"", setting, value),
                    errdetail("%s", err)));
}

/* The lease configuration from the settings, checked against the layout. */
static void configure_lease(void) {
  char num[32], err[256];
  /* libidgen-etcd is linked in: idgen.lease = etcd */
  static const idgen_lease_provider *const providers[] = {&idgen_lease_etcd, NULL};
  idgen_lease_config_init(&idgen_pg_lease);
  idgen_pg_lease.providers = providers;
  idgen_pg_lease.kind = (idgen_lease_kind)lease_setting;
  if (worker_id_setting >= 0) {
    snprintf(num, sizeof num, "%d", worker_id_setting);
    set_lease_option("idgen.worker_id", "worker-id", num);
  }
  if (etcd_setting && *etcd_setting)
    set_lease_option("idgen.etcd", "etcd", etcd_setting);
  for (int i = 0; i < 5; i++)
    if (etcd_access_settings[i] && *etcd_access_settings[i]) {
      char setting[64];
      snprintf(setting, sizeof setting, "idgen.%s", etcd_access_options[i]);
      for (char *c = setting; *c; c++)
        *c = *c == '-' ? '_' : *c;
      set_lease_option(setting, etcd_access_options[i], etcd_access_settings[i]);
    }
  set_lease_option("idgen.namespace", "namespace", namespace_setting);
  snprintf(num, sizeof num, "%d", lease_ttl_s);
  set_lease_option("idgen.lease_ttl", "lease-ttl", num);
  if (state_dir_setting && *state_dir_setting)
    set_lease_option("idgen.state_dir", "state-dir", state_dir_setting);
  else
    snprintf(idgen_pg_lease.state_dir, sizeof idgen_pg_lease.state_dir, "%s/pg_idgen",
             DataDir);
  if (idgen_lease_config_check(&idgen_pg_lease, &idgen_pg_layout, err, sizeof err) < 0)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("idgen: the lease settings do not fit together"), errdetail("%s", err),
             errhint("idgen.lease = static needs idgen.worker_id within the "
                     "layout's worker IDs; etcd needs idgen.etcd (all https:// with "
                     "idgen.etcd_cacert ...; idgen.etcd_user with "
                     "idgen.etcd_password_file).")));
}

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void shmem_request(void) {
  if (prev_shmem_request_hook)
    prev_shmem_request_hook();
  idgen_pg_shmem_request();
}

static void shmem_startup(void) {
  if (prev_shmem_startup_hook)
    prev_shmem_startup_hook();
  idgen_pg_shmem_startup();
}

/* A value in postgresql.conf (or -c) that its check refuses only draws a WARNING when
 * a library defines the setting after the file was read, and the default stays: a
 * typo in idgen.layout would silently make IDs of another layout. So each value given
 * is read back before the setting is defined, and checked again afterwards at ERROR:
 * the server then refuses to start with PostgreSQL's own message for it. */
static const char *const setting_names[] = {
    "idgen.layout",          "idgen.policy",      "idgen.lease",
    "idgen.worker_id",       "idgen.etcd",        "idgen.namespace",
    "idgen.state_dir",       "idgen.lease_ttl",   "idgen.start_wait",
    "idgen.opaque_key_file", "idgen.etcd_cacert", "idgen.etcd_cert",
    "idgen.etcd_key",        "idgen.etcd_user",   "idgen.etcd_password_file",
};
#define NSETTINGS (sizeof setting_names / sizeof setting_names[0])

static void check_given_settings(char *const given[NSETTINGS]) {
  for (size_t i = 0; i < NSETTINGS; i++)
    if (given[i])
      (void)set_config_option(setting_names[i], given[i], PGC_POSTMASTER, PGC_S_FILE,
                              GUC_ACTION_SET, false, ERROR, false);
}

/* Without preloading, idgen.layout stays a placeholder: decoding reads it from there
 * (the layout the server's IDs were made under), or takes the default. */
static void layout_from_placeholder(void) {
  const char *spec = GetConfigOption("idgen.layout", true, false);
  char err[256];
  if (!spec || !*spec)
    spec = "snowflake";
  if (idgen_layout_parse(spec, strlen(spec), 0, &idgen_pg_layout, err, sizeof err) < 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("invalid value for parameter \"idgen.layout\": \"%s\"", spec),
                    errdetail("%s", err)));
}

void _PG_init(void) {
  /* Loaded by a backend on its own (CREATE EXTENSION without preloading): the codecs,
   * UUIDs and decoding work; idgen_next() says what is missing. */
  if (!process_shared_preload_libraries_in_progress) {
    layout_from_placeholder();
    define_session_settings();
    return;
  }
  char *given[NSETTINGS];
  for (size_t i = 0; i < NSETTINGS; i++) {
    const char *value = GetConfigOption(setting_names[i], true, false);
    given[i] = value ? pstrdup(value) : NULL;
  }
  define_server_settings();
  define_session_settings();
  MarkGUCPrefixReserved("idgen");
  idgen_pg_policy = (idgen_policy)policy_setting;
  check_given_settings(given);
  configure_lease();
  prev_shmem_request_hook = shmem_request_hook;
  shmem_request_hook = shmem_request;
  prev_shmem_startup_hook = shmem_startup_hook;
  shmem_startup_hook = shmem_startup;
  idgen_pg_register_worker();
}
