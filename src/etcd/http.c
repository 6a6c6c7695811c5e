/* http.c: POST to etcd's JSON gateway with libcurl, failing over between members. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd/client.h"

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

int idgen__etcd_http_init(idgen__etcd_http *h, const char eps[][IDGEN_LEASE_PATH_MAX],
                          int neps, int64_t timeout_ms) {
  pthread_once(&curl_once, curl_init_once);
  memset(h, 0, sizeof *h);
  h->curl = curl_easy_init();
  if (!h->curl)
    return IDGEN_ENOMEM;
  curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, h);
  curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https");
  for (int i = 0; i < neps && i < IDGEN_LEASE_ENDPOINTS_MAX; i++)
    memcpy(h->eps[i], eps[i], sizeof h->eps[i]);
  h->neps = neps < IDGEN_LEASE_ENDPOINTS_MAX ? neps : IDGEN_LEASE_ENDPOINTS_MAX;
  h->timeout_ms = timeout_ms;
  return 0;
}

void idgen__etcd_http_free(idgen__etcd_http *h) {
  if (h->curl)
    curl_easy_cleanup(h->curl);
  free(h->body);
  h->curl = NULL;
  h->body = NULL;
}

const char *idgen__etcd_http_endpoint(const idgen__etcd_http *h) {
  return h->eps[h->cur];
}

int idgen__etcd_http_post(idgen__etcd_http *h, const char *path, const char *body) {
  if (!body) {
    snprintf(h->why, sizeof h->why, "out of memory");
    return IDGEN_ENOMEM;
  }
  char url[IDGEN_LEASE_PATH_MAX + 64];
  char first_err[IDGEN_LEASE_WHY_MAX] = "";
  struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
  int rc = IDGEN_EUNAVAIL;
  for (int k = 0; k < h->neps; k++) {
    int i = (h->cur + k) % h->neps;
    snprintf(url, sizeof url, "%s%s", h->eps[i], path);
    h->len = 0;
    if (h->body)
      h->body[0] = '\0';
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
      if (!first_err[0])
        snprintf(first_err, sizeof first_err, "etcd %.160s: %s", h->eps[i],
                 curl_easy_strerror(cc));
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
  if (rc == IDGEN_EUNAVAIL)
    snprintf(h->why, sizeof h->why, "%s%s", first_err,
             h->neps > 1 ? " (and every other endpoint failed too)" : "");
  else if (rc)
    snprintf(h->why, sizeof h->why, "out of memory");
  return rc;
}
