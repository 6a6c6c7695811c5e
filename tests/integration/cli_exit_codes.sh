#!/usr/bin/env bash
# One rule for every command's exit status (README, idgen(1)): 0 ok; 1 a runtime failure
# (the operation could not be done); 2 bad usage or a bad configuration, with exactly one
# line on stderr and nothing on stdout. Each case below is one bad input or one failure of
# one command; every command has its cases.
set -euo pipefail
idgen=${1:?usage: cli_exit_codes.sh path/to/idgen}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0 cases=0

# expect STATUS ARGS...: idgen ARGS exits STATUS (within 60 s); for 2, one line on stderr
# naming the command and nothing on stdout; for 1, a reason on stderr (idgen serve's is
# its log's error line, maybe after a warning).
expect() {
  local want=$1 got=0
  shift
  timeout 60 "$idgen" "$@" >"$dir/out" 2>"$dir/err" </dev/null || got=$?
  cases=$((cases + 1))
  local lines
  lines=$(wc -l <"$dir/err")
  if [[ $got -ne $want ]]; then
    echo "FAIL: idgen $* exited $got, want $want: $(head -c 300 "$dir/err")" >&2
    fails=$((fails + 1))
  elif [[ $want -eq 2 && ($lines -ne 1 || $(cat "$dir/err") != "idgen"*) ]] ||
    [[ $want -eq 1 && $lines -eq 0 ]]; then
    echo "FAIL: idgen $*: want one 'idgen ...' line on stderr, got $lines:" >&2
    head -n 5 "$dir/err" >&2
    fails=$((fails + 1))
  elif [[ $want -eq 2 && -s $dir/out ]]; then
    echo "FAIL: idgen $*: bad usage printed to stdout: $(head -c 200 "$dir/out")" >&2
    fails=$((fails + 1))
  fi
}

# A random loopback port nothing listens on: etcd "unreachable at start".
while :; do
  closed_port=$((20000 + RANDOM % 12000))
  (exec 3<>"/dev/tcp/127.0.0.1/$closed_port") 2>/dev/null || break
done
touch "$dir/exists.key"
echo short >"$dir/short.token"
printf '1 a 5\n2 a 5\n' >"$dir/dup.history"
printf 'not a history\n' >"$dir/bad.history"

# idgen itself
expect 2
expect 2 bogus
expect 0 --help
expect 0 --version
# next
expect 2 next --bogus
expect 2 next -n x
expect 2 next -n 0
expect 2 next --layout bogus
expect 2 next --format bogus
expect 2 next --policy bogus
expect 2 next --worker 99999
expect 2 next extra
# uuid7, uuid4, ulid
expect 2 uuid7 -n 0
expect 2 uuid7 extra
expect 2 uuid4 -n x
expect 2 ulid --bogus
# decode
expect 2 decode
expect 2 decode zzz
expect 2 decode --layout bogus 1
expect 2 decode --format bogus 1
# opaque
expect 2 opaque
expect 2 opaque bogus
expect 2 opaque encode 1
expect 2 opaque encode --key-file "$dir/missing.key" 1
expect 2 opaque keygen
expect 2 opaque keygen --bits 100 "$dir/new.key"
expect 1 opaque keygen "$dir/exists.key"
# layout, collide
expect 2 layout bogus
expect 2 layout --layout bogus
expect 2 collide
expect 2 collide --scheme x --rate 1 --years 1
expect 2 collide --scheme uuidv4 --rate x --years 1
# lease
expect 2 lease --bogus
expect 2 lease --lease bogus
expect 2 lease --lease static
expect 2 lease --lease-ttl x
expect 1 lease --lease etcd --etcd "http://127.0.0.1:$closed_port"
# segment
expect 2 segment
expect 2 segment bogus
expect 2 segment next
expect 2 segment next -n 0 seq
expect 2 segment next --backend bogus seq
expect 2 segment init --bogus seq
expect 1 segment next --backend etcd --dsn "http://127.0.0.1:$closed_port" --timeout 500 seq
expect 2 segment init --start-after -1 seq
expect 2 segment next --start-after 5 seq
expect 2 segment init --from-sequence s --start-after 5 seq
expect 2 segment init --from-sequence s seq
# adopt
expect 2 adopt orders id
expect 2 adopt --dsn "host=127.0.0.1" orders
expect 2 adopt --dsn "host=127.0.0.1" --lock-timeout 0 orders id
expect 1 adopt --dsn "host=127.0.0.1 port=$closed_port connect_timeout=2" orders id
# check
expect 2 check
expect 2 check "$dir/missing.history"
expect 2 check "$dir/bad.history"
expect 2 check --layout bogus "$dir/dup.history"
# a check that finds a problem: status 1, the report on stdout
"$idgen" check "$dir/dup.history" >"$dir/out" 2>&1 && fails=$((fails + 1))
grep -q 'verdict: FAIL' "$dir/out" || { echo "FAIL: check of a duplicate: $(cat "$dir/out")" >&2; fails=$((fails + 1)); }
# bench
expect 2 bench --bogus
expect 2 bench --seconds x
expect 1 bench --seconds 0.1 --json "$dir/missing-dir/out.json"
# serve: every configuration mistake is found before it listens (2); what only running
# can tell is a runtime failure (1). Listeners on loopback port 0, never a fixed port.
state=$dir/state
serve=(serve --http 127.0.0.1:0 --resp 127.0.0.1:0 --state-dir "$state")
expect 2 serve --bogus
expect 2 serve extra
expect 2 serve --threads x
expect 2 serve --http bogus
expect 2 serve --http '' --resp ''
expect 2 "${serve[@]}" --layout bogus
expect 2 "${serve[@]}" --policy bogus
expect 2 "${serve[@]}" --clock bogus
expect 2 "${serve[@]}" --lease bogus
expect 2 "${serve[@]}" --lease static
expect 2 "${serve[@]}" --lease static --worker-id 5000
expect 2 "${serve[@]}" --lease-ttl 1
expect 2 "${serve[@]}" --lease k8s --pod-index 5000
expect 2 "${serve[@]}" --auth-token-file "$dir/missing.token"
expect 2 "${serve[@]}" --auth-token-file "$dir/short.token"
expect 2 "${serve[@]}" --opaque-key-file "$dir/missing.key"
expect 2 "${serve[@]}" --opaque-key-file "$dir/exists.key"
# --config: a missing file, YAML that does not parse, a bad option, a check that fails
expect 2 "${serve[@]}" --config "$dir/missing.yaml"
printf 'generators:\n  a: {kind: uuid7\n' >"$dir/syntax.yaml"
expect 2 "${serve[@]}" --config "$dir/syntax.yaml"
printf 'generators:\n  orders:\n    kind: segment\n    step: 0\n' >"$dir/step.yaml"
expect 2 "${serve[@]}" --config "$dir/step.yaml"
printf 'generators:\n  orders: {kind: segment, backend: postgres}\n' >"$dir/nodsn.yaml"
expect 2 "${serve[@]}" --config "$dir/nodsn.yaml"
printf 'generators:\n  default: {kind: segment}\n' >"$dir/segdefault.yaml"
expect 2 "${serve[@]}" --config "$dir/segdefault.yaml" --layout js53
expect 1 "${serve[@]}" --lease etcd --etcd "http://127.0.0.1:$closed_port" --etcd-timeout 500
expect 1 serve --http 127.0.0.1:0 --resp 127.0.0.1:0 --state-dir "$dir/exists.key/state"
expect 1 "${serve[@]}" --log-file "$dir/missing-dir/idgen.log"

if [[ $fails -gt 0 ]]; then
  echo "cli_exit_codes.sh: $fails of $cases cases failed" >&2
  exit 1
fi
echo "cli_exit_codes.sh: $cases cases passed"
