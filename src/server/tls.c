/* tls.c: the server's OpenSSL context (OpenSSL 3, Debian's libssl), made from the
 * --tls-* files, swapped whole at SIGHUP under a mutex that accept takes for as long
 * as an up-ref. */
#include "server/tls.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

struct idgen__tls {
  pthread_mutex_t mu;
  SSL_CTX *ctx; /* in force; each SSL made from it holds a reference too */
  char cert[IDGEN_CFG_PATH], key[IDGEN_CFG_PATH], ca[IDGEN_CFG_PATH];
  int client_cert; /* 0 none, 1 optional, 2 require */
  idgen__tls_info_cb *info;
};

/* TLS 1.2's suites: forward secrecy and AEAD only (TLS 1.3's are OpenSSL's defaults). */
#define TLS12_CIPHERS "ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL:!eNULL"
/* Resumption with a client certificate needs a session context: any fixed bytes. */
#define SESSION_ID_CONTEXT "idgen serve"

/* err: "WHAT FILE: DOING: OpenSSL's reason", and OpenSSL's error queue emptied. */
static int fail(char *err, size_t errlen, const char *what, const char *file,
                const char *doing) {
  unsigned long e = ERR_peek_last_error();
  const char *reason = e ? ERR_reason_error_string(e) : NULL;
  snprintf(err, errlen, "%s %s: %s%s%s", what, file, doing, reason ? ": " : "",
           reason ? reason : "");
  ERR_clear_error();
  return -1;
}

/* The key read first, then matched, so that the two mistakes say different things. */
static int use_key(SSL_CTX *ctx, const idgen__tls *t, char *err, size_t errlen) {
  FILE *f = fopen(t->key, "r");
  EVP_PKEY *key = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
  if (f)
    fclose(f);
  if (!key)
    return fail(err, errlen, "--tls-key", t->key, "cannot read a PEM private key");
  int used = SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1;
  EVP_PKEY_free(key);
  if (!used) {
    ERR_clear_error();
    snprintf(err, errlen, "--tls-key %s: not the key of --tls-cert's certificate", t->key);
    return -1;
  }
  return 0;
}

static SSL_CTX *make_ctx(const idgen__tls *t, char *err, size_t errlen) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) {
    fail(err, errlen, "--tls-cert", t->cert, "cannot make a TLS context");
    return NULL;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                               SSL_OP_NO_COMPRESSION);
  /* An idle connection gives its record buffers back: 10,000 idle ones cost no 340 MB. */
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  int ok = SSL_CTX_set_cipher_list(ctx, TLS12_CIPHERS) == 1 &&
           SSL_CTX_set_session_id_context(ctx, (const unsigned char *)SESSION_ID_CONTEXT,
                                          sizeof SESSION_ID_CONTEXT - 1) == 1;
  if (!ok) {
    fail(err, errlen, "--tls-cert", t->cert, "cannot set the ciphers");
  } else if (SSL_CTX_use_certificate_chain_file(ctx, t->cert) != 1) {
    ok = 0;
    fail(err, errlen, "--tls-cert", t->cert, "cannot read a PEM certificate chain");
  } else if (use_key(ctx, t, err, errlen) < 0) {
    ok = 0;
  } else if (t->client_cert) {
    STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(t->ca);
    if (!names || SSL_CTX_load_verify_locations(ctx, t->ca, NULL) != 1) {
      ok = 0;
      sk_X509_NAME_pop_free(names, X509_NAME_free);
      fail(err, errlen, "--tls-ca", t->ca, "cannot read PEM CA certificates");
    } else {
      SSL_CTX_set_client_CA_list(ctx, names);
      SSL_CTX_set_verify(ctx,
                         SSL_VERIFY_PEER |
                             (t->client_cert == 2 ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0),
                         NULL);
    }
  }
  if (!ok) {
    SSL_CTX_free(ctx);
    return NULL;
  }
  if (t->info)
    SSL_CTX_set_info_callback(ctx, t->info);
  return ctx;
}

int idgen__tls_new(idgen__tls **out, const idgen__serve_config *cfg,
                   idgen__tls_info_cb *info, char *err, size_t errlen) {
  *out = NULL;
  if (!cfg->tls_cert[0])
    return 0;
  idgen__tls *t = calloc(1, sizeof *t);
  if (!t) {
    snprintf(err, errlen, "--tls-cert: out of memory");
    return -1;
  }
  snprintf(t->cert, sizeof t->cert, "%s", cfg->tls_cert);
  snprintf(t->key, sizeof t->key, "%s", cfg->tls_key);
  snprintf(t->ca, sizeof t->ca, "%s", cfg->tls_ca);
  t->client_cert = strcmp(cfg->tls_client_cert, "require") == 0    ? 2
                   : strcmp(cfg->tls_client_cert, "optional") == 0 ? 1
                                                                   : 0;
  t->info = info;
  t->ctx = make_ctx(t, err, errlen);
  if (!t->ctx) {
    free(t);
    return -1;
  }
  pthread_mutex_init(&t->mu, NULL);
  *out = t;
  return 0;
}

SSL_CTX *idgen__tls_ctx(idgen__tls *t) {
  pthread_mutex_lock(&t->mu);
  SSL_CTX *ctx = t->ctx;
  SSL_CTX_up_ref(ctx);
  pthread_mutex_unlock(&t->mu);
  return ctx;
}

int idgen__tls_reload(idgen__tls *t, char *err, size_t errlen) {
  SSL_CTX *fresh = make_ctx(t, err, errlen);
  if (!fresh)
    return -1;
  pthread_mutex_lock(&t->mu);
  SSL_CTX *old = t->ctx;
  t->ctx = fresh;
  pthread_mutex_unlock(&t->mu);
  SSL_CTX_free(old); /* open connections hold their own references */
  return 0;
}

/* A SAN entry as tokens.h names it ("DNS:x", "URI:x", "email:x"); 0 for another kind, or
 * one with a NUL inside (that could pass for a shorter name). */
static int san_text(const GENERAL_NAME *g, char *out, size_t outlen) {
  static const struct {
    int type;
    const char *prefix;
  } kinds[] = {{GEN_DNS, "DNS:"}, {GEN_URI, "URI:"}, {GEN_EMAIL, "email:"}};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    if (g->type != kinds[k].type)
      continue;
    const ASN1_IA5STRING *v = g->d.ia5;
    int len = ASN1_STRING_length(v);
    const unsigned char *bytes = ASN1_STRING_get0_data(v);
    if (len <= 0 || memchr(bytes, 0, (size_t)len))
      return 0;
    int n = snprintf(out, outlen, "%s%.*s", kinds[k].prefix, len, (const char *)bytes);
    return n > 0 && (size_t)n < outlen;
  }
  return 0;
}

int idgen__tls_peer_names(const SSL *ssl, idgen__cert_names *out) {
  X509 *cert = SSL_get0_peer_certificate(ssl);
  if (!cert || SSL_get_verify_result(ssl) != X509_V_OK)
    return 0;
  memset(out, 0, sizeof *out);
  BIO *bio = BIO_new(BIO_s_mem());
  if (!bio)
    return 0;
  int n = X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  if (n > 0 && (size_t)n < sizeof out->subject)
    BIO_read(bio, out->subject, n); /* a longer one matches no cert_subject */
  BIO_free(bio);
  GENERAL_NAMES *sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
  for (int i = 0;
       sans && i < sk_GENERAL_NAME_num(sans) && out->nsans < IDGEN__CERT_SANS_MAX; i++)
    out->nsans += (size_t)san_text(sk_GENERAL_NAME_value(sans, i), out->sans[out->nsans],
                                   sizeof out->sans[out->nsans]);
  GENERAL_NAMES_free(sans);
  ERR_clear_error();
  return 1;
}

const char *idgen__tls_mode(const idgen__tls *t) {
  static const char *const modes[] = {"tls", "mtls-optional", "mtls"};
  return t ? modes[t->client_cert] : "off";
}

void idgen__tls_free(idgen__tls *t) {
  if (!t)
    return;
  SSL_CTX_free(t->ctx);
  pthread_mutex_destroy(&t->mu);
  free(t);
}
