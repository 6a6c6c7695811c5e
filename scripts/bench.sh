#!/usr/bin/env bash
# scripts/bench.sh (make bench): every benchmark in turn; results go to bench/results/ and
# the sections of docs/benchmarks.md (and docs/btree.md) that the scripts write.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/bench.sh [--build DIR] [--idgen PATH] [--no-docs] [--seconds S] [--rounds N] [NAME ...]
Runs, in this order (default: all):
  gen     build/bench_gen (= idgen bench): the generator against its ceiling
  uuid    build/bench_uuid: UUIDv7/v4 and ULID against libuuid
  btree   bench/btree.sh: each ID scheme in a PostgreSQL B-tree (minutes)
  ticket  bench/ticket.sh: sequences, Redis INCR, the Flickr ticket server, idgen
  server  bench/server.sh: idgen serve against nginx, redis-server and its ceiling
  tls     bench/tls.sh: idgen serve over TLS against nginx and redis-server over TLS
  opaque  bench/opaque.sh: opaque IDs per ID (bench_opaque) and over HTTP
  pg      bench/pg.sh: the PostgreSQL extension against nextval(), gen_random_uuid()
          (needs the extension installed: make pg-install)
  fleet   build/bench_fleet: 1,024 lease holders against each coordinator (minutes);
          its table goes to the end of docs/leases.md
  btree-summary  (not in the default list) copy docs/btree.md's summary, without a run
Writes bench/results/* and rewrites the results sections of docs/benchmarks.md,
docs/btree.md and docs/leases.md (unless --no-docs).
  --build DIR   the build dir (default: build)
  --idgen PATH  the idgen binary for ticket, server, tls and opaque (default: BUILD/idgen)
  --seconds S   per-measurement length for ticket, server, tls and opaque (default 5)
  --rounds N    alternating rounds in server, tls and opaque (default 3)
EOF
}

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$src_dir/build"
docs=1
seconds=5
rounds=3
idgen=""
names=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build_dir=$2; shift 2 ;;
    --no-docs) docs=0; shift ;;
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --idgen) idgen=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    gen|uuid|btree|btree-summary|ticket|server|tls|opaque|pg|fleet) names+=("$1"); shift ;;
    *) echo "scripts/bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ ${#names[@]} -gt 0 ]] || names=(gen uuid btree ticket server tls opaque pg fleet)
build_dir=$(cd "$build_dir" && pwd)
results="$src_dir/bench/results"
doc="$src_dir/docs/benchmarks.md"
mkdir -p "$results"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

machine() {
  echo "$(nproc) cores ($(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //')), $(uname -sr)"
}

# section TAG FILE: replace the block between the TAG markers in docs/benchmarks.md.
section() {
  local tag=$1 file=$2 begin="<!-- $1 begin: written by a script, do not edit -->"
  local end="<!-- $1 end -->"
  [[ $docs -eq 1 ]] || return 0
  { echo "$begin"; cat "$file"; echo "$end"; } >"$tmp/section.md"
  if [[ -f "$doc" ]] && grep -qF "<!-- $tag begin" "$doc"; then
    awk -v f="$tmp/section.md" -v b="<!-- $tag begin" -v e="$end" '
      index($0, b) == 1 { while ((getline l < f) > 0) print l; skip = 1; next }
      $0 == e { skip = 0; next }
      !skip' "$doc" >"$tmp/doc.md"
    cat "$tmp/doc.md" >"$doc"
  else
    { echo; cat "$tmp/section.md"; } >>"$doc"
  fi
}

# A program's printed table, fenced, with its command, date and machine.
program_section() { # TAG COMMAND OUTFILE
  {
    echo "Run of $(date -u +%Y-%m-%dT%H:%MZ): \`$2\`."
    echo "Machine: $(machine); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo "Absolute figures are this shared machine's."
    echo
    echo '```'
    cat "$3"
    echo '```'
  } >"$tmp/$1.md"
  section "$1" "$tmp/$1.md"
}

# The btree summary: each run's heading paragraph and "Relative to bigserial" table from
# docs/btree.md, which bench/btree.sh --docs writes.
btree_summary() {
  local src="$src_dir/docs/btree.md"
  [[ -f "$src" ]] || return 0
  awk '
    /^<!-- btree-results rows=[0-9]+ begin/ { inblk = 1; head = 1; rel = 0; next }
    /^<!-- btree-results rows=[0-9]+ end/ { inblk = 0; next }
    !inblk { next }
    head { if ($0 == "") { head = 0; print "" } else print; next }
    /^Relative to/ { rel = 1 }
    rel { if ($0 ~ /^!\[/) { rel = 0; next } print }
  ' "$src" >"$tmp/btree.md"
  echo "Full tables and plots: [docs/btree.md](btree.md)." >>"$tmp/btree.md"
  section btree-results "$tmp/btree.md"
}

for name in "${names[@]}"; do
  echo "== $name" >&2
  case "$name" in
    gen)
      "$build_dir/bench_gen" --json "$results/gen.json" | tee "$results/gen.txt"
      program_section gen-results "build/bench_gen --json bench/results/gen.json" "$results/gen.txt"
      ;;
    uuid)
      "$build_dir/bench_uuid" --json "$results/uuid.json" | tee "$results/uuid.txt"
      program_section uuid-results "build/bench_uuid --json bench/results/uuid.json" "$results/uuid.txt"
      ;;
    btree)
      if [[ -x "$src_dir/bench/btree.sh" ]]; then
        args=(--build "$build_dir")
        [[ $docs -eq 1 ]] && args+=(--docs)
        "$src_dir/bench/btree.sh" "${args[@]}"
        btree_summary
      else
        echo "scripts/bench.sh: bench/btree.sh not in this tree: skipped" >&2
      fi
      ;;
    btree-summary) btree_summary ;;
    ticket|server|tls|opaque)
      args=(--build "$build_dir" --seconds "$seconds")
      [[ $name != ticket ]] && args+=(--rounds "$rounds")
      [[ -n "$idgen" ]] && args+=(--idgen "$idgen")
      [[ $docs -eq 1 ]] && args+=(--docs)
      "$src_dir/bench/$name.sh" "${args[@]}"
      ;;
    fleet)
      "$build_dir/bench_fleet" --json "$results/fleet.json" --md "$results/fleet.md"
      doc="$src_dir/docs/leases.md" section fleet-results "$results/fleet.md"
      ;;
    pg)
      args=(--seconds "$seconds")
      [[ $docs -eq 1 ]] && args+=(--docs)
      "$src_dir/bench/pg.sh" "${args[@]}"
      ;;
  esac
done
