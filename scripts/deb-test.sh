#!/usr/bin/env bash
# The Debian packages (debian/), built and used as an operator would:
#   1. `dpkg-buildpackage -us -uc -b` on a copy of the tree (the .debs land beside it, in
#      a temp dir, never outside the tree's own);
#   2. lintian on them, failing on any error or warning (debian/*.lintian-overrides say
#      why each override is there); `systemd-analyze security` on the unit;
#   3. a fresh Debian root: the mmdebstrap minbase the image test makes (cached outside
#      the tree, scripts/image-test.sh), unpacked, and `apt-get install ./*.deb` in it;
#   4. in that root: `idgen serve` from the unit's own ExecStart, Environment= and User=
#      runs as the idgen user with its state in /var/lib/idgen and its listeners on
#      loopback; `man idgen`; a program built with `pkg-config --cflags --libs idgen`
#      runs; `CREATE EXTENSION idgen` in a throwaway cluster; then `apt-get purge`
#      leaves nothing named idgen but the system user, which Debian keeps.
# Usage: scripts/deb-test.sh   (root: chroot and mount need it)
# Env: IDGEN_TEST_CACHE (default ${XDG_CACHE_HOME:-/var/cache}/idgen-test)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
say() { printf 'deb-test: %s\n' "$*"; }
die() { printf 'deb-test: FAIL: %s\n' "$*" >&2; exit 1; }
for tool in dpkg-buildpackage dh lintian mmdebstrap systemd-analyze chroot curl mount git; do
  command -v "$tool" >/dev/null || die "$tool not found (scripts/deps.sh test)"
done
[[ $(id -u) -eq 0 ]] || die "needs root (chroot, mount)"

cache=${IDGEN_TEST_CACHE:-${XDG_CACHE_HOME:-/var/cache}/idgen-test}
mkdir -p "$cache"
tmp=$(mktemp -d /tmp/idgen-deb-test.XXXXXX)
root=$tmp/root
pid="" pg_data=""
t_start=$SECONDS

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  LANG=C.UTF-8 "$@"; }
cleanup() {
  if [[ -n $pid ]]; then kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if [[ -n $pg_data ]]; then
    in_root su postgres -s /bin/sh -c \
      "/usr/lib/postgresql/15/bin/pg_ctl -D $pg_data -m immediate stop" >/dev/null 2>&1 || true
  fi
  if mountpoint -q "$root/proc" 2>/dev/null; then umount "$root/proc" || true; fi
  # Never follow a mount out of the temp dir.
  mountpoint -q "$root/proc" 2>/dev/null || rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT

# 1. The packages, from a copy of the tree: the files git tracks or would (so the tree as
# it is, uncommitted edits too, but no build dirs).
t0=$SECONDS
mkdir -p "$tmp/pkg/idgen"
git ls-files -z --cached --others --exclude-standard |
  tar -c --null -T - -f - | tar -x -C "$tmp/pkg/idgen" -f -
(cd "$tmp/pkg/idgen" && DEB_BUILD_OPTIONS="parallel=$(nproc)" \
  dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1 ||
  { tail -n 40 "$tmp/build.log" >&2; die "dpkg-buildpackage failed"; }
mapfile -t debs < <(ls "$tmp/pkg"/*.deb)
names=$(for d in "${debs[@]}"; do dpkg-deb -f "$d" Package; done | sort | tr '\n' ' ')
want="idgen libidgen-client1 libidgen-dev libidgen-etcd1 libidgen-opaque1 libidgen-redis1 "
want+="libidgen-zookeeper1 libidgen1 postgresql-15-idgen "
[[ $names == "$want" ]] || die "packages built: '$names', want '$want'"
say "built ${#debs[@]} packages in $((SECONDS - t0)) s: $names"

# 2. lintian, on the binary packages as built (the .changes lists them).
t0=$SECONDS
lintian --fail-on error,warning --display-info --pedantic "$tmp"/pkg/*.changes >"$tmp/lintian.log" 2>&1 ||
  { cat "$tmp/lintian.log" >&2; die "lintian: errors or warnings"; }
summary=$(awk '/^[EWIPX]: / {printf "%s %s, ", $1, $3}' "$tmp/lintian.log")
say "lintian clean at --fail-on error,warning in $((SECONDS - t0)) s (${summary:-no tags, }overrides: $(cat "$src"/debian/*.lintian-overrides 2>/dev/null | grep -cv '^#\|^$' || true))"
dpkg-deb -x "$tmp/pkg/idgen_"*.deb "$tmp/idgen-deb"
unit=$tmp/idgen-deb/lib/systemd/system/idgen.service
[[ -f $unit ]] || die "the idgen package has no lib/systemd/system/idgen.service"
exposure=$(systemd-analyze security --offline=yes "$unit" 2>&1 | tee "$tmp/security.log" |
  sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p')
[[ -n $exposure ]] || { cat "$tmp/security.log" >&2; die "systemd-analyze security gave no level"; }
awk -v e="$exposure" 'BEGIN {exit !(e <= 2.0)}' ||
  { grep '✗' "$tmp/security.log" >&2; die "systemd-analyze security: exposure $exposure > 2.0"; }
say "systemd-analyze security: exposure $exposure ($(grep -c '✗' "$tmp/security.log") settings short; 2.0 at most)"

# 3. A fresh root: the image test's minbase (made once, cached), unpacked.
t0=$SECONDS
if [[ ! -s $cache/bookworm-minbase.tar ]]; then
  say "making the base with mmdebstrap (once; cached in $cache)"
  mmdebstrap --variant=minbase --quiet bookworm "$tmp/base.tar" || die "mmdebstrap failed"
  mv "$tmp/base.tar" "$cache/bookworm-minbase.tar"
fi
mkdir -p "$root"
tar -x -C "$root" -f "$cache/bookworm-minbase.tar"
[[ -c $root/dev/null ]] || die "the base has no /dev/null"
# Nothing the packages install is started inside the root (PostgreSQL's cluster, idgen):
# the tests start their own, on loopback and a Unix socket.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mkdir -p "$root/tmp/debs"
cp "${debs[@]}" "$root/tmp/debs/"
# Debian's packages the install pulls in (PostgreSQL, gcc, ...) are kept in the cache from
# one run to the next, as apt keeps them on a machine: only the first run downloads them.
mkdir -p "$cache/deb-archives"
find "$cache/deb-archives" -name '*.deb' -exec cp -t "$root/var/cache/apt/archives/" {} +
in_root apt-get update -qq >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log" >&2; die "apt-get update"; }
# The tools a user brings: a compiler for the program, man, curl.
in_root /bin/sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  /tmp/debs/*.deb gcc libc6-dev pkgconf man-db curl' >>"$tmp/apt.log" 2>&1 ||
  { tail -n 30 "$tmp/apt.log" >&2; die "apt-get install ./*.deb failed in the fresh root"; }
find "$root/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -newer "$root/tmp/debs" \
  -exec cp -t "$cache/deb-archives/" {} +
say "fresh root with the packages installed in $((SECONDS - t0)) s"

# 4a. The user and the state directory postinst made.
t0=$SECONDS
passwd=$(in_root getent passwd idgen) || die "no idgen user after install"
uid=$(cut -d: -f3 <<<"$passwd")
[[ $uid -ne 0 && $(cut -d: -f7 <<<"$passwd") == */nologin ]] || die "idgen user: $passwd"
[[ $(stat -c '%u %a' "$root/var/lib/idgen") == "$uid 750" ]] ||
  die "/var/lib/idgen: $(stat -c '%U %a' "$root/var/lib/idgen")"
for f in /etc/idgen/idgen.conf /etc/default/idgen; do
  grep -qx "$f" "$root/var/lib/dpkg/info/idgen.conffiles" || die "$f is not a conffile"
done

# 4b. idgen serve as the unit runs it: its User=, Environment= and EnvironmentFile=.
# As shipped, both listeners are on loopback (--print-config says where each value came
# from); the run itself takes free ports there, so that parallel runs never collide.
unit_env=$(sed -n 's/^Environment=//p' "$root/lib/systemd/system/idgen.service" | tr '\n' ' ')
read -ra exec_start <<<"$(sed -n 's/^ExecStart=//p' "$root/lib/systemd/system/idgen.service")"
unit_user=$(sed -n 's/^User=//p' "$root/lib/systemd/system/idgen.service")
[[ $unit_user == idgen && ${exec_start[*]} == "/usr/bin/idgen serve" ]] ||
  die "unit: User=$unit_user ExecStart=${exec_start[*]}"
serve() { # extra env... -- extra args...; run in a subshell (it execs)
  local env=() ; while [[ $1 != -- ]]; do env+=("$1"); shift; done; shift
  # shellcheck disable=SC2086 # the unit's Environment= words
  exec chroot --userspec=idgen:idgen "$root" /usr/bin/env -i PATH=/usr/bin:/bin $unit_env \
    $(grep -v '^#' "$root/etc/default/idgen" | grep . || true) "${env[@]}" \
    "${exec_start[@]}" "$@"
}
printed=$(serve -- --print-config) || die "idgen serve --print-config failed as idgen"
for l in 'http = "127.0.0.1:8080"' 'resp = "127.0.0.1:6380"' 'config = "/etc/idgen/idgen.conf"'; do
  grep -q "^$l " <<<"$printed" || { echo "$printed" >&2; die "as shipped, not '$l'"; }
done
serve IDGEN_HTTP=127.0.0.1:0 IDGEN_RESP=127.0.0.1:0 -- 2>"$tmp/serve.log" &
pid=$!
for _ in $(seq 1 200); do
  grep -q ' lease state=held' "$tmp/serve.log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/serve.log" >&2; die "idgen serve exited"; }
  sleep 0.05
done
http=$(grep -o ' http=[^ ]*' "$tmp/serve.log" | head -n 1 | cut -d= -f2)
[[ $http == 127.0.0.1:* ]] || { cat "$tmp/serve.log" >&2; die "no HTTP listener in the log"; }
body=$(curl -sf "http://$http/v1/id") || die "GET /v1/id failed"
[[ $body =~ ^\{\"id\":\"[0-9]+\"\}$ ]] || die "GET /v1/id: $body"
[[ $(stat -c %u "/proc/$pid") == "$uid" ]] || die "idgen serve does not run as idgen"
owned=$(find "$root/var/lib/idgen" -mindepth 1 -user "$uid" | wc -l)
[[ $owned -gt 0 && -z $(find "$root/var/lib/idgen" -mindepth 1 ! -user "$uid") ]] ||
  die "/var/lib/idgen's files are not idgen's: $(ls -ln "$root/var/lib/idgen")"
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?; pid=""
[[ $rc -eq 0 ]] || { cat "$tmp/serve.log" >&2; die "idgen serve exited $rc on SIGTERM"; }
say "idgen serve ran as idgen (uid $uid), state in /var/lib/idgen: $body"

# 4c. The man pages.
# (Outputs are read whole, not piped into grep -q: an early exit of grep would be a
# SIGPIPE, a failure under pipefail.)
page=$(in_root man -P cat idgen 2>/dev/null) || die "man idgen failed"
[[ $page == *idgen-serve* ]] || die "man idgen shows no idgen-serve(1)"
page=$(in_root man -P cat 3 idgen 2>/dev/null) || die "man 3 idgen failed"
[[ $page == *idgen_gen_new* ]] || die "man 3 idgen shows no idgen_gen_new"

# 4d. A program against libidgen-dev, linked with the shared library.
cp examples/c-embedded/main.c "$root/tmp/embedded.c"
in_root /bin/sh -c 'cc /tmp/embedded.c $(pkg-config --cflags --libs idgen) -o /tmp/embedded' \
  >"$tmp/cc.log" 2>&1 || { cat "$tmp/cc.log" >&2; die "cc with pkg-config --cflags --libs idgen"; }
libs=$(in_root ldd /tmp/embedded) || die "ldd /tmp/embedded"
[[ $libs == *'libidgen.so.1 => /'* ]] || die "not linked to libidgen.so.1: $libs"
mkdir -p "$root/tmp/embedded-state"
in_root IDGEN_STATE_DIR=/tmp/embedded-state /tmp/embedded >"$tmp/embedded.log" 2>&1 ||
  { cat "$tmp/embedded.log" >&2; die "the pkg-config program failed"; }

# 4e. CREATE EXTENSION in a throwaway cluster of the root (a Unix socket only).
pg_data=/tmp/pg
install -d -o "$(in_root id -u postgres)" "$root/tmp/pg" "$root/tmp/pgsock"
in_root su postgres -s /bin/sh -c "/usr/lib/postgresql/15/bin/initdb -D $pg_data -A trust" \
  >"$tmp/pg.log" 2>&1 || { cat "$tmp/pg.log" >&2; die "initdb in the root"; }
in_root su postgres -s /bin/sh -c "/usr/lib/postgresql/15/bin/pg_ctl -D $pg_data -w -l /tmp/pg/log \
  -o \"-c listen_addresses='' -k /tmp/pgsock -c shared_preload_libraries=idgen \
  -c idgen.lease=static -c idgen.worker_id=7\" start" >>"$tmp/pg.log" 2>&1 ||
  { cat "$tmp/pg.log" "$root/tmp/pg/log" >&2; die "PostgreSQL with idgen preloaded"; }
sql=$(in_root su postgres -s /bin/sh -c "/usr/lib/postgresql/15/bin/psql -h /tmp/pgsock -qAt -v ON_ERROR_STOP=1 \
  -c 'CREATE EXTENSION idgen' -c 'SELECT (idgen_decode(idgen_next())).worker'" 2>&1) ||
  { echo "$sql" >&2; die "CREATE EXTENSION idgen"; }
[[ $sql == 7 ]] || die "idgen_next() in the root's cluster: $sql"
in_root su postgres -s /bin/sh -c "/usr/lib/postgresql/15/bin/pg_ctl -D $pg_data -w stop" \
  >>"$tmp/pg.log" 2>&1 || die "pg_ctl stop"
pg_data=""
rm -rf "$root/tmp/pg" "$root/tmp/pgsock"
say "man idgen, a pkg-config program and CREATE EXTENSION idgen work ($((SECONDS - t0)) s)"

# 4f. Purge: nothing named idgen may stay but the system user and group, which Debian
# keeps (debian/idgen.postrm says why); /tmp holds only this test's own files.
t0=$SECONDS
in_root apt-get purge -y -q idgen libidgen1 libidgen-etcd1 libidgen-opaque1 libidgen-zookeeper1 \
  libidgen-redis1 libidgen-client1 libidgen-dev postgresql-15-idgen >>"$tmp/apt.log" 2>&1 || { tail -n 20 "$tmp/apt.log" >&2; die "purge"; }
# (/var/cache/man holds man-db's own formatted copies of the pages this test's `man`
# read: man-db's cache, which it expires itself, not the package's files.)
left=$(cd "$root" && find . \( -path ./tmp -o -path ./proc -o -path ./var/cache/man \) -prune \
  -o -iname '*idgen*' -print)
[[ -z $left ]] || die "left after purge: $left"
[[ -z $(in_root dpkg-query -W -f '${Package} ${Status}\n' 2>/dev/null | grep idgen) ]] ||
  die "dpkg still knows: $(in_root dpkg-query -W 2>/dev/null | grep idgen)"
in_root getent passwd idgen >/dev/null || die "purge removed the idgen user (Debian keeps it)"
say "purge left nothing but the idgen user ($((SECONDS - t0)) s)"
say "all checks passed in $((SECONDS - t_start)) s"
