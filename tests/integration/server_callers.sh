#!/usr/bin/env bash
# Callers' names (issue 29): RESP CLIENT SETNAME and HTTP User-Agent, counted in a
# bounded Space-Saving top 64 per thread (src/server/callers.c).
#   load:    10,000 distinct names (5,000 over RESP, 5,000 over HTTP, callers_load.py) and
#            three heavy ones: /metrics keeps at most 65 caller series, the heavy names are
#            listed by /v1/callers within the stated bound, the server's RSS stays put
#            (printed before and after; only a generous bound is asserted).
#   hostile: quotes, backslashes, tabs, bytes past ASCII, a 10 kB User-Agent, "other":
#            /metrics still parses (promtool, the Prometheus client's parser) and each
#            name is its sanitized, capped self.
#   log:     --log-level debug logs each naming; info does not; a bad level exits 2.
source "$(dirname "$0")/server_common.bash"
source "$(dirname "$0")/parts.bash"
parts load hostile log -- "${@:2}"
PY=/usr/bin/python3 # Debian's: python3-prometheus-client imports there only

# series FILE: the caller series in a /metrics text.
series() { grep -c '^idgen_caller_requests_total{' "$1" || true; }

if part load; then
  start_server load --log-level debug
  before=$(rss_kib "$SERVER_PID")
  t0=$(date +%s.%N)
  if python3 "$SOURCE_DIR/tests/integration/callers_load.py" 127.0.0.1 "$RESP_PORT" \
    "$HTTP_PORT" 5000 5000 >"$WORK/load.json" 2>"$WORK/load.err"; then
    say "ok   load: $(cat "$WORK/load.json") in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f s", b - a }')"
  else
    fail "callers_load.py: $(cat "$WORK/load.err")"
  fi
  after=$(rss_kib "$SERVER_PID")
  say "     RSS before ${before} kB, after ${after} kB"
  ((after - before < 51200)) || fail "RSS grew by $((after - before)) kB (more than 50 MB)"
  curl -s "http://$HTTP/metrics" >"$WORK/metrics"
  curl -s "http://$HTTP/v1/callers" >"$WORK/callers.json"
  n=$(series "$WORK/metrics")
  say "     $n caller series in /metrics after 10,003 names"
  ((n <= 65)) || fail "$n caller series in /metrics (65 at most)"
  check "the overflow series" 1 "$(grep -c '^idgen_caller_requests_total{caller="other"} ' "$WORK/metrics" || true)"
  check_match "the error bound's gauge" '^[0-9]+$' \
    "$(awk '$1 == "idgen_caller_error_bound" { print $2 }' "$WORK/metrics")"
  check_match "HELP says approximate" 'HELP idgen_caller_requests_total .*approximate' \
    "$(grep '^# HELP idgen_caller_requests_total' "$WORK/metrics")"
  # The heavy names listed, each within [true, true + error_bound], at_least below true;
  # every listed name of the load no lower than it was sent (1 to 3 times for a light
  # one: a light name's listed count is at least 1, its at_least at most 3).
  if ! "$PY" - "$WORK/load.json" "$WORK/callers.json" "$WORK/metrics" >"$WORK/bound" 2>&1 <<'EOF'; then
import json, sys
from prometheus_client.parser import text_string_to_metric_families
load, got = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
bound, callers = got["error_bound"], {c["name"]: c for c in got["callers"]}
bad = []
print(f"error_bound {bound}, {len(callers)} listed, total {got['total']}, other {got['other']}")
for name, true in load["heavy"].items():
    c = callers.get(name)
    if not c:
        bad.append(f"{name} not listed")
        continue
    print(f"{name}: true {true}, listed {c['count']}, at least {c['at_least']}")
    if not (true <= c["count"] <= true + bound and c["at_least"] <= true):
        bad.append(f"{name}: true {true} outside [{c['at_least']}, {c['count']}] or bound {bound}")
for name, c in callers.items():
    if "-light-" in name and not (c["count"] >= 1 and c["at_least"] <= 3 and c["count"] <= 3 + bound):
        bad.append(f"{name}: {c}")
if sum(c["count"] for c in got["callers"]) + got["other"] != got["total"]:
    bad.append("the listed counts and other do not add up to total")
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[3]).read())}
fam = fams.get("idgen_caller_requests")
if not fam or len(fam.samples) > 65:
    bad.append("idgen_caller_requests_total: missing or over 65 series")
print("\n".join(bad) or "within the bound")
sys.exit(1 if bad else 0)
EOF
    fail "bound: $(cat "$WORK/bound")"
  else
    sed 's/^/     /' "$WORK/bound"
  fi
  grep -q ' debug caller resp client=[0-9]* name=heavy-resp$' "$SERVER_LOG" ||
    fail "no debug line for heavy-resp's SETNAME"
  stop_server || fail "the load server did not stop cleanly"
fi

if part hostile; then
  start_server hostile --max-header-bytes 16384
  big=$(head -c 10240 /dev/zero | tr '\0' x)
  for ua in 'quo"te' 'back\slash' $'tab\there' $'high\xc3\xa9\xff' "$big" other '' 'a"} 1'; do
    curl -s -o /dev/null -A "$ua" "http://$HTTP/healthz"
  done
  # RESP: a printable name with '"' and '\' is taken and sanitized; a 10 kB one refused.
  check "SETNAME with quotes" OK "$(redis-cli -p "$RESP_PORT" CLIENT SETNAME 'r"q\b')"
  check_match "SETNAME of 10 kB refused" 'at most 64 bytes' \
    "$(redis-cli -p "$RESP_PORT" CLIENT SETNAME "$big" 2>&1)"
  curl -s "http://$HTTP/metrics" >"$WORK/metrics"
  for name in 'quo_te' 'back_slash' 'tab_here' 'high___' "${big:0:64}" _other '-' 'a_} 1' 'r_q_b'; do
    check "series for [${name:0:20}]" 1 "$(grep -cF "idgen_caller_requests_total{caller=\"$name\"} " "$WORK/metrics" || true)"
  done
  check "one overflow series" 1 "$(grep -c '^idgen_caller_requests_total{caller="other"} ' "$WORK/metrics" || true)"
  if command -v promtool >/dev/null; then
    promtool check metrics <"$WORK/metrics" >"$WORK/promtool" 2>&1 ||
      fail "promtool check metrics: $(cat "$WORK/promtool")"
  else
    fail "promtool not found (Debian's prometheus)"
  fi
  # The Prometheus client's parser reads every caller back as sent, sanitized.
  if "$PY" - "$WORK/metrics" >"$WORK/parsed" 2>&1 <<'EOF'; then
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
names = sorted(s.labels["caller"] for s in fams["idgen_caller_requests"].samples)
ok = all(" " <= ch <= "~" and ch not in '"\\' for n in names for ch in n) and len(names) <= 65
print(f"{len(names)} callers parsed: " + ", ".join(n[:20] for n in names))
sys.exit(0 if ok else 1)
EOF
    say "ok   $(cat "$WORK/parsed")"
  else
    fail "the parser: $(cat "$WORK/parsed")"
  fi
  check "/v1/callers is JSON" ok "$("$PY" -c 'import json,sys; json.load(sys.stdin); print("ok")' \
    < <(curl -s "http://$HTTP/v1/callers") 2>&1)"
  stop_server || fail "the hostile server did not stop cleanly"
fi

if part log; then
  start_server quiet
  redis-cli -p "$RESP_PORT" CLIENT SETNAME quiet-one >/dev/null
  curl -s -o /dev/null -A quiet-agent "http://$HTTP/healthz"
  stop_server || fail "the quiet server did not stop cleanly"
  check "no debug line at info" 0 "$(grep -c ' debug ' "$SERVER_LOG" || true)"
  start_server loud --log-level debug
  redis-cli -p "$RESP_PORT" CLIENT SETNAME loud-one >/dev/null
  curl -s -o /dev/null -A loud-agent "http://$HTTP/healthz"
  stop_server || fail "the loud server did not stop cleanly"
  check "debug: RESP naming" 1 "$(grep -c ' debug caller resp client=[0-9]* name=loud-one$' "$SERVER_LOG" || true)"
  check "debug: HTTP User-Agent" 1 "$(grep -c ' debug caller http name=loud-agent$' "$SERVER_LOG" || true)"
  check "--log-level bad" 2 "$(serve_refused "$WORK/bad.log" --log-level verbose)"
  check_match "--log-level bad: its message" "expected debug, info or warn" "$(cat "$WORK/bad.log")"
  check "--print-config shows the level" 'log-level = "debug"  # flag' \
    "$("$IDGEN" serve --log-level debug --print-config | grep '^log-level')"
fi
finish
