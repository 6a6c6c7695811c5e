/* tls.h: `idgen serve --tls-cert/--tls-key [--tls-ca --tls-client-cert]`: the OpenSSL
 * context both listeners hand their connections to, and its rotation at SIGHUP. A new
 * connection takes the context in force when it is accepted and keeps it: a reload
 * changes what the next handshake presents, never an open connection. */
#ifndef IDGEN_SERVER_TLS_H
#define IDGEN_SERVER_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "server/config.h"
#include "server/tokens.h"

typedef struct idgen__tls idgen__tls;

/* OpenSSL's info callback (SSL_CTX_set_info_callback): how the event loop learns which
 * SSL a socket's handshake made (server/netloop.h). */
typedef void idgen__tls_info_cb(const SSL *ssl, int where, int ret);

/* Loads the certificate chain, its key and the client CA that cfg names into a new
 * context, info (may be NULL) set on it and on every context a reload makes. *out is
 * NULL, and 0 is returned, when cfg asks for no TLS; -1 with one line in err
 * ("--tls-cert FILE: ...") when a file does not read or the pair does not match. */
int idgen__tls_new(idgen__tls **out, const idgen__serve_config *cfg,
                   idgen__tls_info_cb *info, char *err, size_t errlen);
/* The client certificate ssl's finished handshake verified, as tokens.h matches it: 1
 * and *out, or 0 when the client sent none (or it did not verify). */
int idgen__tls_peer_names(const SSL *ssl, idgen__cert_names *out);
/* The context in force, with a reference the caller drops with SSL_CTX_free once no SSL
 * will be made from it any more. Any thread. */
SSL_CTX *idgen__tls_ctx(idgen__tls *t);
/* Reads the same files again (SIGHUP): 0 with the new context in force for the next
 * handshakes, or -1 with one line in err and the context in force kept. */
int idgen__tls_reload(idgen__tls *t, char *err, size_t errlen);
/* For the start line: "off" (t NULL), "tls", "mtls-optional" or "mtls" (a client
 * certificate required). */
const char *idgen__tls_mode(const idgen__tls *t);
/* NULL is fine. The serving threads must have ended. */
void idgen__tls_free(idgen__tls *t);

#endif
