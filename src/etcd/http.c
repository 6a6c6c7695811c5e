/* http.c: POST to etcd's JSON gateway with libcurl, failing over between members; TLS
 * (verified always) and etcd's auth tokens, taken again when etcd refuses one. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd/client.h"
#include "lease/lease_internal.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_data(char *p, size_t size, size_t n, void *ud) {
  idgen__etcd_http *h = ud;
  size_t add = size * n;
  if (h->len + add + 1 > h->cap) {
    size_t cap = (h->len + add + 1) * 2;
    char *b = realloc(h->body, cap);
    if (!b)
      return 0;
    h->body = b;
    h->cap = cap;
  }
  memcpy(h->body + h->len, p, add);
  h->len += add;
  h->body[h->len] = '\0';
  return add;
}

/* A file an option names, readable now: 0, or IDGEN_EINVAL with err. */
static int file_readable(const char *opt, const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    if (err && errlen)
      snprintf(err, errlen, "--%s %s: %s", opt, path, strerror(errno));
    return IDGEN_EINVAL;
  }
  fclose(f);
  return 0;
}

/* The password: the file's one line (its line end dropped), or c's own. */
static int read_password(idgen__etcd_http *h, const idgen_lease_config *c, char *err,
                         size_t errlen) {
  if (!c->etcd_password_file[0]) {
    snprintf(h->password, sizeof h->password, "%s", c->etcd_password);
    return 0;
  }
  return idgen__password_file_read("etcd-password-file", c->etcd_password_file, h->password,
                                   sizeof h->password, err, errlen);
}

int idgen__etcd_http_init(idgen__etcd_http *h, const idgen_lease_config *c, char *err,
                          size_t errlen) {
  pthread_once(&curl_once, curl_init_once);
  memset(h, 0, sizeof *h);
  int neps = c->nendpoints;
  for (int i = 0; i < neps && i < IDGEN_LEASE_ENDPOINTS_MAX; i++)
    memcpy(h->eps[i], c->endpoints[i], sizeof h->eps[i]);
  h->neps = neps < IDGEN_LEASE_ENDPOINTS_MAX ? neps : IDGEN_LEASE_ENDPOINTS_MAX;
  h->timeout_ms = c->request_timeout_ms;
  h->tls = h->neps > 0 && !strncmp(h->eps[0], "https://", 8);
  snprintf(h->user, sizeof h->user, "%s", c->etcd_user);
  int rc = 0;
  if ((c->etcd_cacert[0] &&
       (rc = file_readable("etcd-cacert", c->etcd_cacert, err, errlen))) ||
      (c->etcd_cert[0] && (rc = file_readable("etcd-cert", c->etcd_cert, err, errlen))) ||
      (c->etcd_key[0] && (rc = file_readable("etcd-key", c->etcd_key, err, errlen))) ||
      (h->user[0] && (rc = read_password(h, c, err, errlen))))
    return rc;
  h->curl = curl_easy_init();
  if (!h->curl) {
    if (err && errlen)
      snprintf(err, errlen, "out of memory");
    return IDGEN_ENOMEM;
  }
  curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, h);
  curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, h->curl_err);
  /* One scheme for all (the option parser refuses a mix): no plain text to a TLS list. */
  curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, h->tls ? "https" : "http");
  if (h->tls) {
    /* HTTP/1.1 as over http:// (no ALPN h2): one framing for the keepalive stream */
    curl_easy_setopt(h->curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(h->curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h->curl, CURLOPT_SSL_VERIFYHOST, 2L);
    if (c->etcd_cacert[0])
      curl_easy_setopt(h->curl, CURLOPT_CAINFO, c->etcd_cacert);
    if (c->etcd_cert[0]) {
      h->has_cert = 1;
      curl_easy_setopt(h->curl, CURLOPT_SSLCERT, c->etcd_cert);
      curl_easy_setopt(h->curl, CURLOPT_SSLCERTTYPE, "PEM");
      curl_easy_setopt(h->curl, CURLOPT_SSLKEY, c->etcd_key);
      curl_easy_setopt(h->curl, CURLOPT_SSLKEYTYPE, "PEM");
    }
  }
  return 0;
}

void idgen__etcd_http_free(idgen__etcd_http *h) {
  if (h->curl)
    curl_easy_cleanup(h->curl);
  free(h->body);
  h->curl = NULL;
  h->body = NULL;
  memset(h->password, 0, sizeof h->password);
  memset(h->token, 0, sizeof h->token);
}

const char *idgen__etcd_http_endpoint(const idgen__etcd_http *h) {
  return h->eps[h->cur];
}

/* One request, failing over between the endpoints (idgen__etcd_http_post), with the
 * token when there is one. */
static int post_once(idgen__etcd_http *h, const char *path, const char *body) {
  char url[IDGEN_LEASE_PATH_MAX + 64];
  char first_err[IDGEN_LEASE_WHY_MAX] = "";
  char auth[sizeof h->token + 32];
  struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
  if (hdr && h->token[0]) {
    snprintf(auth, sizeof auth, "Authorization: %s", h->token);
    struct curl_slist *more = curl_slist_append(hdr, auth);
    if (!more) {
      curl_slist_free_all(hdr);
      hdr = NULL;
    } else {
      hdr = more;
    }
  }
  if (!hdr) {
    snprintf(h->why, sizeof h->why, "out of memory");
    return IDGEN_ENOMEM;
  }
  int rc = IDGEN_EUNAVAIL;
  for (int k = 0; k < h->neps; k++) {
    int i = (h->cur + k) % h->neps;
    snprintf(url, sizeof url, "%s%s", h->eps[i], path);
    h->len = 0;
    if (h->body)
      h->body[0] = '\0';
    h->curl_err[0] = '\0';
    curl_easy_setopt(h->curl, CURLOPT_URL, url);
    curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, (long)h->timeout_ms);
    curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)(h->timeout_ms < 2000 ? h->timeout_ms : 2000));
    int64_t sent_ns = idgen_monotonic_ns();
    CURLcode cc = curl_easy_perform(h->curl);
    if (h->observe)
      h->observe(h->observe_ctx, idgen_monotonic_ns() - sent_ns);
    if (cc != CURLE_OK) {
      /* TLS failures say what failed only in libcurl's detail (the CA, the peer's
       * certificate, a missing client certificate) */
      int detail = h->tls && h->curl_err[0];
      /* etcd --client-cert-auth drops a TLS 1.3 client without one after the handshake */
      int no_cert =
          h->tls && !h->has_cert && (cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR);
      if (!first_err[0] && snprintf(first_err, sizeof first_err, "etcd %.160s: %s%s%s%s%s",
                                    h->eps[i], curl_easy_strerror(cc), detail ? " (" : "",
                                    detail ? h->curl_err : "", detail ? ")" : "",
                                    no_cert ? "; no client certificate given (--etcd-cert)"
                                            : "") >= (int)sizeof first_err)
        first_err[sizeof first_err - 1] = '\0'; /* cut: one line still */
      continue;
    }
    curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &h->status);
    if (h->status >= 500) {
      char msg[160] = "";
      idgen__etcd_error(h->body ? h->body : "", h->len, NULL, msg, sizeof msg);
      if (!first_err[0])
        snprintf(first_err, sizeof first_err, "etcd %.160s: HTTP %ld %.60s", h->eps[i],
                 h->status, msg);
      continue;
    }
    h->cur = i;
    if (!h->body)
      on_data((char *)"", 0, 0, h);
    rc = h->body ? 0 : IDGEN_ENOMEM;
    break;
  }
  curl_slist_free_all(hdr);
  memset(auth, 0, sizeof auth);
  if (rc == IDGEN_EUNAVAIL)
    snprintf(h->why, sizeof h->why, "%s%s", first_err,
             h->neps > 1 ? " (and every other endpoint failed too)" : "");
  else if (rc)
    snprintf(h->why, sizeof h->why, "out of memory");
  return rc;
}

/* Takes a new token for h->user: 0, or IDGEN_EUNAVAIL with why naming the endpoint and
 * etcd's reason (a wrong password, auth not enabled). */
static int authenticate(idgen__etcd_http *h) {
  h->token[0] = '\0';
  char *body =
      idgen__etcd_dump(json_pack("{ssss}", "name", h->user, "password", h->password));
  if (!body) {
    snprintf(h->why, sizeof h->why, "out of memory");
    return IDGEN_ENOMEM;
  }
  int rc = post_once(h, "/v3/auth/authenticate", body);
  memset(body, 0, strlen(body));
  free(body);
  if (rc)
    return rc;
  json_t *root = idgen__etcd_json_load(h->body, h->len);
  const char *token = json_string_value(json_object_get(root, "token"));
  char msg[160] = "";
  if (h->status == 200 && token && *token && strlen(token) < sizeof h->token &&
      !strpbrk(token, "\r\n")) {
    snprintf(h->token, sizeof h->token, "%s", token);
  } else if (!idgen__etcd_error(h->body, h->len, NULL, msg, sizeof msg)) {
    snprintf(msg, sizeof msg,
             h->status == 200 ? "no usable token in the reply" : "HTTP %ld", h->status);
  }
  json_decref(root);
  if (h->token[0])
    return 0;
  snprintf(h->why, sizeof h->why, "etcd %.160s: authenticating as '%.40s': %s",
           h->eps[h->cur], h->user, msg);
  return IDGEN_EUNAVAIL;
}

/* The reply refuses the token: etcd did not apply the request. */
static int token_refused(const idgen__etcd_http *h) {
  int code = 0;
  char msg[160] = "";
  if (!idgen__etcd_error(h->body, h->len, &code, msg, sizeof msg))
    return 0;
  return h->status == 401 || code == 16 /* Unauthenticated */ ||
         strstr(msg, "invalid auth token") || strstr(msg, "revision of auth store is old");
}

int idgen__etcd_http_post(idgen__etcd_http *h, const char *path, const char *body) {
  if (!body) {
    snprintf(h->why, sizeof h->why, "out of memory");
    return IDGEN_ENOMEM;
  }
  int rc;
  if (h->user[0] && !h->token[0] && (rc = authenticate(h)))
    return rc;
  rc = post_once(h, path, body);
  if (rc || !h->user[0] || !token_refused(h))
    return rc;
  /* Expired (or another member's): once more, only after a new token. */
  h->reauths++;
  if ((rc = authenticate(h)))
    return rc;
  return post_once(h, path, body);
}
