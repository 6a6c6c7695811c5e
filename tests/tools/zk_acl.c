/* zk_acl.c: a second ZooKeeper client for tests/integration/lease_zookeeper_acl.sh, one
 * call per run, with or without digest credentials, to show what idgen's ACLs let a
 * client do to its nodes.
 * Usage: [ZK_AUTH=user:password] zk_acl HOSTS get|set|delete|create|acl|open PATH [DATA]
 *   get     prints "version=V owner=0x... data=..."
 *   set     setData PATH DATA at any version
 *   delete  delete PATH at any version
 *   create  create PATH (persistent, open ACL) with DATA
 *   acl     prints the ACL whole: "digest:user:HASH:cdrwa,world:anyone:r"
 *   open    setACL PATH world:anyone:cdrwa at any version
 * Prints "ok" then the output, or "error ZNOAUTH" (the code's name) and zerror's text;
 * exits 0, 3 for a refused call, 1 when no session was made, 2 for bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zookeeper/zookeeper.h>

static void quiet(const char *m) {
  (void)m;
}
static void nowatch(zhandle_t *zh, int t, int s, const char *p, void *c) {
  (void)zh, (void)t, (void)s, (void)p, (void)c;
}

static const char *code_name(int rc) {
  static const struct {
    int rc;
    const char *name;
  } names[] = {{ZNOAUTH, "ZNOAUTH"},         {ZNONODE, "ZNONODE"},
               {ZNODEEXISTS, "ZNODEEXISTS"}, {ZBADVERSION, "ZBADVERSION"},
               {ZNOTEMPTY, "ZNOTEMPTY"},     {ZINVALIDACL, "ZINVALIDACL"},
               {ZAUTHFAILED, "ZAUTHFAILED"}, {ZCONNECTIONLOSS, "ZCONNECTIONLOSS"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].rc == rc)
      return names[i].name;
  return "ZOTHER";
}

static void print_acl(const struct ACL_vector *acl) {
  for (int i = 0; i < acl->count; i++) {
    const struct ACL *e = &acl->data[i];
    char perms[6];
    int n = 0;
    if (e->perms & ZOO_PERM_CREATE)
      perms[n++] = 'c';
    if (e->perms & ZOO_PERM_DELETE)
      perms[n++] = 'd';
    if (e->perms & ZOO_PERM_READ)
      perms[n++] = 'r';
    if (e->perms & ZOO_PERM_WRITE)
      perms[n++] = 'w';
    if (e->perms & ZOO_PERM_ADMIN)
      perms[n++] = 'a';
    perms[n] = '\0';
    printf("%s%s:%s:%s", i ? "," : "", e->id.scheme, e->id.id, perms);
  }
  printf("\n");
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: [ZK_AUTH=user:pw] zk_acl HOSTS get|set|delete|create|acl|open "
                    "PATH [DATA]\n");
    return 2;
  }
  const char *cmd = argv[2], *path = argv[3], *data = argc > 4 ? argv[4] : "";
  zoo_set_log_stream(NULL);
  zhandle_t *zh = zookeeper_init2(argv[1], nowatch, 10000, NULL, NULL, 0, quiet);
  const char *auth = getenv("ZK_AUTH");
  if (zh && auth && *auth)
    zoo_add_auth(zh, "digest", auth, (int)strlen(auth), NULL, NULL);
  for (int i = 0; zh && zoo_state(zh) != ZOO_CONNECTED_STATE && i < 1000; i++)
    nanosleep(&(struct timespec){0, 5000000L}, NULL);
  if (!zh || zoo_state(zh) != ZOO_CONNECTED_STATE) {
    fprintf(stderr, "zk_acl: no session with %s\n", argv[1]);
    return 1;
  }
  int rc;
  char buf[1024];
  struct Stat st;
  struct ACL_vector acl = {0, NULL};
  if (!strcmp(cmd, "get")) {
    int len = (int)sizeof buf - 1;
    rc = zoo_get(zh, path, 0, buf, &len, &st);
    if (rc == ZOK)
      buf[len > 0 ? len : 0] = '\0';
  } else if (!strcmp(cmd, "set")) {
    rc = zoo_set(zh, path, data, (int)strlen(data), -1);
  } else if (!strcmp(cmd, "delete")) {
    rc = zoo_delete(zh, path, -1);
  } else if (!strcmp(cmd, "create")) {
    rc = zoo_create(zh, path, data, (int)strlen(data), &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  } else if (!strcmp(cmd, "acl")) {
    rc = zoo_get_acl(zh, path, &acl, &st);
  } else if (!strcmp(cmd, "open")) {
    rc = zoo_set_acl(zh, path, -1, &ZOO_OPEN_ACL_UNSAFE);
  } else {
    fprintf(stderr, "zk_acl: unknown command '%s'\n", cmd);
    zookeeper_close(zh);
    return 2;
  }
  if (rc != ZOK) {
    printf("error %s: %s\n", code_name(rc), zerror(rc));
    zookeeper_close(zh);
    return 3;
  }
  printf("ok\n");
  if (!strcmp(cmd, "get"))
    printf("version=%d owner=0x%llx data=%s\n", (int)st.version,
           (unsigned long long)st.ephemeralOwner, buf);
  if (!strcmp(cmd, "acl")) {
    print_acl(&acl);
    deallocate_ACL_vector(&acl);
  }
  zookeeper_close(zh);
  return 0;
}
