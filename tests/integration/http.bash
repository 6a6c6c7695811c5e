# tests/integration/http.bash: an HTTP status from bash alone, for the tests' polls
# (readiness, every 50 ms): a curl costs 27 ms of CPU on these VMs (it maps 33
# libraries; a clean clone's suite started 4,547 of them, 125 CPU-s), this no process.
# Sourced by server_common.bash and tests/chaos/run.sh.

# http_code [-m SECONDS] http://HOST:PORT/PATH: the status of a GET of PATH, as curl's
# -w '%{http_code}' prints it; 000 when there is no connection, or no status line within
# SECONDS (default 10).
http_code() {
  local max=10 url hostport path fd line
  if [[ $1 == -m ]]; then max=$2; shift 2; fi
  url=${1#http://} path=/
  hostport=${url%%/*}
  [[ $url != */* ]] || path=/${url#*/}
  if ! { exec {fd}<>"/dev/tcp/${hostport%:*}/${hostport##*:}"; } 2>/dev/null; then
    echo 000
    return 0
  fi
  printf 'GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$path" "$hostport" \
    >&"$fd" 2>/dev/null || true
  if read -r -t "$max" -u "$fd" line && [[ $line =~ ^HTTP/[0-9.]+\ ([0-9]{3}) ]]; then
    echo "${BASH_REMATCH[1]}"
  else
    echo 000
  fi
  exec {fd}>&-
}
