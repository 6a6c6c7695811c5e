#!/usr/bin/env bash
# bench_fleet's smoke run, so that the benchmark cannot rot: 16 holders against each
# coordinator of its table (etcd, ZooKeeper, Redis), started by the project's scripts. It
# asserts only what bench_fleet checks itself and says in its table: the 16 workers
# distinct and the whole space 0-15, one more holder refused with IDGEN_ENOWORKER and a
# why() that says all are taken, no lease lost; never a timing. Usage: bench_fleet.sh
# /path/to/idgen
set -euo pipefail
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
IDGEN=${1:?usage: bench_fleet.sh /path/to/idgen}
SRC=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${IDGEN_BUILD_DIR:-$(dirname "$IDGEN")}
FLEET=$BUILD/bench_fleet
[[ -x $FLEET ]] || { echo "FAIL: bench_fleet not built at $FLEET" >&2; exit 1; }
command -v etcd >/dev/null && command -v redis-server >/dev/null && command -v java >/dev/null ||
  "$SRC/scripts/deps.sh" test
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$T/out" "$T/err" >&2 || true; exit 1; }
ok() { echo "ok - $*"; }

# 1. Bad usage: exit 2, one line.
rc=0; "$FLEET" --holders 1 >"$T/out" 2>"$T/err" || rc=$?
[[ $rc -eq 2 && $(wc -l <"$T/err") -eq 1 ]] || fail "--holders 1: exit $rc"
rc=0; "$FLEET" --coordinator nosuch >"$T/out" 2>"$T/err" || rc=$?
[[ $rc -eq 2 && $(wc -l <"$T/err") -eq 1 ]] || fail "--coordinator nosuch: exit $rc"
ok "bad usage exits 2 with one line"

# 2. The fleet: bench_fleet exits 0 only when its checks held for every coordinator.
rc=0
"$FLEET" --holders 16 --seconds 2 --src "$SRC" --json "$T/fleet.json" >"$T/out" 2>"$T/err" || rc=$?
[[ $rc -eq 0 ]] || fail "bench_fleet exited $rc"
grep -q '^| checks | passed' "$T/out" || fail "no passed checks in the table"
grep -q '^| holders that claimed a worker ID | 16 ' "$T/out" || fail "not 16 holders"
for c in etcd zookeeper redis; do
  grep -q "^The 17th holder's answer from $c: \`IDGEN_ENOWORKER: .*all 16 worker IDs 0-15 .* are taken" "$T/out" ||
    fail "the 17th holder was not refused as all taken ($c)"
done
/usr/bin/python3 - "$T/fleet.json" <<'PY' || fail "fleet.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["holders"] == 16, d
assert len(d["coordinators"]) == 3, d
for c in d["coordinators"]:
    assert c["ok"] and c["holders"] == 16 and c["extra_error"] == "IDGEN_ENOWORKER", c
    assert c["lost"] == 0, c
PY
ok "16 distinct workers fill 0-15; the 17th is refused: all taken (etcd, zookeeper, redis)"
