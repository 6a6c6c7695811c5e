/* record.c: the holder record kept with a HWM, and the locked local files that hold it. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lease/lease_internal.h"

/* A name as a JSON string's content: hostnames and region names never hold '"', '\\'
 * or control characters, so they are dropped rather than escaped. */
static void plain(const char *in, char *out, size_t outlen) {
  size_t j = 0;
  for (size_t i = 0; in[i] && j + 1 < outlen; i++)
    if (in[i] != '"' && in[i] != '\\' && (unsigned char)in[i] >= 0x20)
      out[j++] = in[i];
  out[j] = '\0';
}

int idgen__record_format(const idgen__record *rec, char *out, size_t outlen) {
  char host[IDGEN_HOLDER_HOST_MAX], region[IDGEN_LEASE_NAME_MAX], where[160] = "";
  plain(rec->host, host, sizeof host);
  plain(rec->region, region, sizeof region);
  if (rec->datacenter >= 0)
    snprintf(where, sizeof where, ",\"datacenter\":\"%" PRId64 "\"", rec->datacenter);
  if (region[0])
    snprintf(where + strlen(where), sizeof where - strlen(where), ",\"region\":\"%s\"",
             region);
  int n = snprintf(out, outlen,
                   "{\"hwm_ms\":\"%" PRId64 "\",\"host\":\"%s\",\"pid\":\"%" PRId64
                   "\",\"start_ms\":\"%" PRId64 "\",\"wall_ms\":\"%" PRId64 "\"%s}",
                   rec->hwm_ms, host, rec->pid, rec->start_ms, rec->wall_ms, where);
  if (n < 0 || (size_t)n >= outlen)
    return IDGEN_EBUFSIZE;
  return n;
}

/* ---- the record's reader ----------------------------------------------------------
 * Records are read back by their own strict reader rather than a JSON library, so that
 * libidgen needs nothing but libc: one flat object of string and integer values, which is
 * all idgen__record_format writes (and all earlier versions wrote, so state directories
 * and etcd keys carry over). Strings hold no escapes (names are written without '"',
 * '\\' and control bytes); an integer comes as a string of digits, as etcd writes int64,
 * or as a JSON number. A key given twice, nesting, a fraction or an exponent is no
 * record, as is one of more than RECORD_KEYS_MAX keys. A key this version does not know
 * is passed over, so that a later version's extra field does not make an older one take
 * its HWM record for corrupt.
 * fuzz/fuzz_record.c holds it to jansson's reading of the same bytes. */

typedef enum { FIELD_INT, FIELD_TEXT } field_kind;

static const struct {
  const char *name;
  field_kind kind;
  size_t offset, size;
} record_fields[] = {
    {"hwm_ms", FIELD_INT, offsetof(idgen__record, hwm_ms), 0},
    {"host", FIELD_TEXT, offsetof(idgen__record, host), IDGEN_HOLDER_HOST_MAX},
    {"pid", FIELD_INT, offsetof(idgen__record, pid), 0},
    {"start_ms", FIELD_INT, offsetof(idgen__record, start_ms), 0},
    {"wall_ms", FIELD_INT, offsetof(idgen__record, wall_ms), 0},
    {"datacenter", FIELD_INT, offsetof(idgen__record, datacenter), 0},
    {"region", FIELD_TEXT, offsetof(idgen__record, region), IDGEN_LEASE_NAME_MAX},
};
#define RECORD_FIELDS (sizeof record_fields / sizeof record_fields[0])
#define RECORD_KEYS_MAX 16 /* keys in one record, known or not: 7 are written */

typedef struct scan {
  const char *p, *end;
} scan;

/* A value as it stands in the text: a string's content, or a number's digits. */
typedef struct token {
  int is_string;
  const char *s;
  size_t n;
} token;

static void skip_space(scan *sc) {
  while (sc->p < sc->end &&
         (*sc->p == ' ' || *sc->p == '\t' || *sc->p == '\n' || *sc->p == '\r'))
    sc->p++;
}

/* Skips spaces, then takes c; 0 if the next byte is not c. */
static int take(scan *sc, char c) {
  skip_space(sc);
  if (sc->p >= sc->end || *sc->p != c)
    return 0;
  sc->p++;
  return 1;
}

/* A string without escapes or control bytes; sc is after its opening quote. */
static int read_string(scan *sc, token *t) {
  t->is_string = 1;
  t->s = sc->p;
  while (sc->p < sc->end && *sc->p != '"') {
    if (*sc->p == '\\' || (unsigned char)*sc->p < 0x20)
      return 0;
    sc->p++;
  }
  if (sc->p >= sc->end)
    return 0;
  t->n = (size_t)(sc->p - t->s);
  sc->p++;
  return 1;
}

/* A string, or an integer number (JSON's: no leading zero, no fraction, no exponent). */
static int read_value(scan *sc, token *t) {
  skip_space(sc);
  if (sc->p < sc->end && *sc->p == '"') {
    sc->p++;
    return read_string(sc, t);
  }
  t->is_string = 0;
  t->s = sc->p;
  if (sc->p < sc->end && *sc->p == '-')
    sc->p++;
  const char *digits = sc->p;
  while (sc->p < sc->end && *sc->p >= '0' && *sc->p <= '9')
    sc->p++;
  t->n = (size_t)(sc->p - t->s);
  return sc->p > digits && !(*digits == '0' && sc->p - digits > 1);
}

/* An int64 from a token: an optional '-', then 1 to 19 digits, within range. */
static int token_int(const token *t, int64_t *out) {
  size_t i = t->n > 0 && t->s[0] == '-';
  if (i == t->n || t->n - i > 19)
    return 0;
  uint64_t v = 0;
  for (; i < t->n; i++) {
    if (t->s[i] < '0' || t->s[i] > '9')
      return 0;
    v = v * 10 + (uint64_t)(t->s[i] - '0');
  }
  int neg = t->s[0] == '-';
  if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
    return 0;
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 1;
}

/* Stores a known field's value; 0 if it is not of the field's kind. */
static int store(idgen__record *r, size_t f, const token *t) {
  char *at = (char *)r + record_fields[f].offset;
  if (record_fields[f].kind == FIELD_INT) {
    int64_t v;
    if (!token_int(t, &v))
      return 0;
    memcpy(at, &v, sizeof v);
    return 1;
  }
  if (!t->is_string)
    return 0;
  size_t n = t->n < record_fields[f].size - 1 ? t->n : record_fields[f].size - 1;
  memcpy(at, t->s, n);
  at[n] = '\0';
  return 1;
}

int idgen__record_parse(const char *text, size_t len, idgen__record *out) {
  while (len && (text[len - 1] == ' ' || text[len - 1] == '\n' || text[len - 1] == '\0'))
    len--;
  if (len == 0)
    return IDGEN_EEMPTY;
  idgen__record r;
  memset(&r, 0, sizeof r);
  r.datacenter = -1;
  scan sc = {text, text + len};
  unsigned seen = 0;
  token keys[RECORD_KEYS_MAX];
  size_t nkeys = 0;
  if (!take(&sc, '{'))
    return IDGEN_EFORMAT;
  if (!take(&sc, '}')) {
    do {
      token key, value;
      if (!take(&sc, '"') || !read_string(&sc, &key) || !take(&sc, ':') ||
          !read_value(&sc, &value))
        return IDGEN_EFORMAT;
      for (size_t k = 0; k < nkeys; k++)
        if (keys[k].n == key.n && memcmp(keys[k].s, key.s, key.n) == 0)
          return IDGEN_EFORMAT; /* a key given twice: which value holds? */
      if (nkeys == RECORD_KEYS_MAX)
        return IDGEN_EFORMAT;
      keys[nkeys++] = key;
      for (size_t f = 0; f < RECORD_FIELDS; f++) {
        if (strlen(record_fields[f].name) != key.n ||
            memcmp(record_fields[f].name, key.s, key.n) != 0)
          continue;
        if (!store(&r, f, &value))
          return IDGEN_EFORMAT;
        seen |= 1u << f;
      }
      if (!value.is_string) {
        int64_t ignored;
        if (!token_int(&value, &ignored))
          return IDGEN_EFORMAT;
      }
    } while (take(&sc, ','));
    if (!take(&sc, '}'))
      return IDGEN_EFORMAT;
  }
  skip_space(&sc);
  /* A record without its HWM is corrupt, never "HWM 0". */
  if (sc.p != sc.end || !(seen & 1u) || r.hwm_ms < 0)
    return IDGEN_EFORMAT;
  *out = r;
  return 0;
}

void idgen__record_self(idgen__record *rec, const char *host_override, int64_t start_ms,
                        int64_t datacenter, const char *region) {
  memset(rec, 0, sizeof *rec);
  rec->datacenter = datacenter;
  snprintf(rec->region, sizeof rec->region, "%s", region ? region : "");
  if (host_override && *host_override)
    snprintf(rec->host, sizeof rec->host, "%s", host_override);
  else if (gethostname(rec->host, sizeof rec->host))
    snprintf(rec->host, sizeof rec->host, "unknown");
  rec->host[sizeof rec->host - 1] = '\0';
  rec->pid = (int64_t)getpid();
  rec->start_ms = start_ms;
}

/* 1 when path names the inode open as fd and it has a link, 0 when not, -errno. */
static int names_inode(int fd, const char *path) {
  struct stat held, named;
  if (fstat(fd, &held))
    return -errno;
  if (held.st_nlink == 0)
    return 0;
  if (stat(path, &named))
    return errno == ENOENT ? 0 : -errno;
  return held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

int idgen__hwm_file_lock(idgen__hwm_file *f, const char *path, int *created) {
  for (int attempt = 0; attempt < 8; attempt++) {
    /* Create it if missing, and know whether we did: a file we just created has no
     * history, one we found must hold a whole record. */
    int made = 1;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) {
      made = 0;
      fd = open(path, O_RDWR | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT)
        continue; /* removed since: try again */
    }
    if (fd < 0)
      return -errno;
    /* An open-file-description lock: two opens conflict even within one process, and
     * the kernel drops it when the last descriptor of this open closes. */
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_SETLK, &fl)) {
      int e = errno;
      close(fd);
      return e == EACCES || e == EAGAIN ? -EWOULDBLOCK : -e;
    }
    /* Removed or renamed over between the open and the lock: this lock would fence
     * nothing, since the next process opens whatever path names then. */
    int rc = names_inode(fd, path);
    if (rc <= 0) {
      close(fd);
      if (rc < 0)
        return rc;
      continue;
    }
    f->fd = fd;
    snprintf(f->path, sizeof f->path, "%s", path);
    *created = made;
    return 0;
  }
  return -EAGAIN;
}

int idgen__hwm_file_check(idgen__hwm_file *f) {
  int rc = names_inode(f->fd, f->path);
  return rc > 0 ? 0 : rc < 0 ? rc : IDGEN_ELEASE;
}

static int read_all(int fd, idgen__record *out) {
  char buf[1024];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n < 0)
    return -errno;
  return idgen__record_parse(buf, (size_t)n, out);
}

int idgen__hwm_file_read(idgen__hwm_file *f, idgen__record *out) {
  return read_all(f->fd, out);
}

int idgen__hwm_file_write(idgen__hwm_file *f, const idgen__record *rec) {
  /* One small pwrite padded to a fixed size: it never straddles a page, so a crash
   * leaves the old or the new record. */
  char buf[512];
  int n = idgen__record_format(rec, buf, sizeof buf);
  if (n < 0)
    return n;
  memset(buf + n, ' ', sizeof buf - 1 - (size_t)n);
  buf[sizeof buf - 1] = '\n';
  ssize_t w = pwrite(f->fd, buf, sizeof buf, 0);
  if (w < 0)
    return -errno;
  if ((size_t)w != sizeof buf)
    return -EIO;
  if (fdatasync(f->fd))
    return -errno;
  return 0;
}

void idgen__hwm_file_close(idgen__hwm_file *f) {
  if (f->fd >= 0)
    close(f->fd);
  f->fd = -1;
}

int idgen__hwm_file_locked(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : -errno;
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  int rc = fcntl(fd, F_OFD_GETLK, &fl) ? -errno : fl.l_type != F_UNLCK;
  close(fd);
  return rc;
}

int idgen__hwm_file_peek(const char *path, idgen__record *out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  int rc = read_all(fd, out);
  close(fd);
  return rc;
}
