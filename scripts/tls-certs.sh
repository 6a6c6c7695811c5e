#!/usr/bin/env bash
# Makes a throwaway PKI for the TLS tests in DIR (made; nothing of it is checked in):
#   ca.pem ca.key          the test CA
#   server.pem server.key  127.0.0.1 and localhost, signed by ca
#   server2.pem server2.key  another pair of the same names (a rotation's new pair)
#   expired.pem expired.key  the same names, expired in 2020
#   wrong-host.pem wrong-host.key  signed by ca for elsewhere.invalid only (a host name
#                          check must refuse it on 127.0.0.1)
#   client.pem client.key  CN=team-a, for client authentication, signed by ca
#   client-expired.pem client-expired.key  the same, expired in 2020
#   client-b.pem client-b.key  CN=team-b with SANs DNS:team-b.example and
#                          URI:spiffe://idgen.test/team-b, for client authentication
#   client-c.pem client-c.key  CN=team-c, for client authentication (no team's, at first)
#   etcd-server.pem etcd-server.key  127.0.0.1 and localhost, for server and client
#                          authentication both (etcd's gateway dials its own gRPC port
#                          with it when clients must show a certificate)
#   other-ca.pem           a CA nobody here trusts; other.pem other.key: signed by it
#   wronghost.pem wronghost.key  signed by ca for wronghost.invalid only (not 127.0.0.1):
#                          a host name check must refuse it
# Usage: scripts/tls-certs.sh DIR
set -euo pipefail
dir=${1:?usage: scripts/tls-certs.sh DIR}
command -v openssl >/dev/null || { echo "tls-certs.sh: no openssl (scripts/deps.sh test)" >&2; exit 1; }
command -v faketime >/dev/null || { echo "tls-certs.sh: no faketime (scripts/deps.sh test)" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"
umask 077
ca() { # name subject
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj "$2" -keyout "$1.key" -out "$1.pem" 2>/dev/null
}
leaf() { # name subject ca extensions [faketime date]
  local ext; ext=$(mktemp)
  printf '%s\n' "$4" >"$ext"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$2" \
    -keyout "$1.key" -out "$1.csr" 2>/dev/null
  ${5:+faketime "$5"} openssl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" \
    -CAcreateserial -days "${6:-30}" -extfile "$ext" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr" "$ext"
}
server_ext="subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
ca ca "/CN=idgen test CA"
ca other-ca "/CN=another CA"
leaf server "/CN=localhost" ca "$server_ext"
leaf server2 "/CN=localhost" ca "$server_ext"
leaf client "/CN=team-a" ca "extendedKeyUsage=clientAuth"
leaf other "/CN=team-b" other-ca "extendedKeyUsage=clientAuth"
leaf expired "/CN=localhost" ca "$server_ext" "2020-01-01 00:00:00" 1
leaf wrong-host "/CN=elsewhere.invalid" ca "subjectAltName=DNS:elsewhere.invalid
extendedKeyUsage=serverAuth"
leaf client-expired "/CN=team-a" ca "extendedKeyUsage=clientAuth" "2020-01-01 00:00:00" 1
leaf wronghost "/CN=wronghost.invalid" ca "subjectAltName=DNS:wronghost.invalid
extendedKeyUsage=serverAuth"
leaf etcd-server "/CN=localhost" ca "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth,clientAuth"
leaf client-b "/CN=team-b/O=idgen test" ca "subjectAltName=DNS:team-b.example,URI:spiffe://idgen.test/team-b
extendedKeyUsage=clientAuth"
leaf client-c "/CN=team-c" ca "extendedKeyUsage=clientAuth"
chmod 644 ./*.pem
