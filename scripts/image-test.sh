#!/usr/bin/env bash
# The container image, built and run as a container runtime would run it, on a machine that
# reaches no image registry and where `podman run` cannot start containers:
#   1. a Debian base made with mmdebstrap (cached outside the tree), `podman import`ed;
#   2. `make image` FROM it (podman build, chroot isolation, no layer cache);
#   3. the image's config: a non-root user, the /var/lib/idgen volume, ports, entrypoint;
#   4. its filesystem (`podman image mount`), with a fresh directory bound on the volume
#      and /proc mounted, entered with `chroot --userspec` as the image's user: the
#      entrypoint with the image's environment serves IDs on loopback to curl, writes its
#      lease files into the volume as that user, and stops cleanly on SIGTERM.
# Its podman storage is its own (under the cache), so it never touches other images.
# Usage: scripts/image-test.sh   (root: chroot and mount need it)
# Env: IDGEN_TEST_CACHE (default ${XDG_CACHE_HOME:-/var/cache}/idgen-test)
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'image-test: %s\n' "$*"; }
die() { printf 'image-test: FAIL: %s\n' "$*" >&2; exit 1; }
for tool in podman mmdebstrap chroot curl mount; do
  command -v "$tool" >/dev/null || die "$tool not found (scripts/deps.sh test)"
done
[[ $(id -u) -eq 0 ]] || die "needs root (chroot, mount)"

cache=${IDGEN_TEST_CACHE:-${XDG_CACHE_HOME:-/var/cache}/idgen-test}
mkdir -p "$cache" /run/idgen-test
podman=(podman --root "$cache/containers" --runroot /run/idgen-test)
base=localhost/idgen-test-base:bookworm
image=localhost/idgen-test:$$ # one per run: two worktrees may test at once
tmp=$(mktemp -d /tmp/idgen-image-test.XXXXXX)
mnt="" pid=""

cleanup() {
  if [[ -n $pid ]]; then kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if [[ -n $mnt ]]; then
    mountpoint -q "$mnt/proc" && umount "$mnt/proc"
    mountpoint -q "$mnt/var/lib/idgen" && umount "$mnt/var/lib/idgen"
    "${podman[@]}" image unmount "$image" >/dev/null || true
  fi
  "${podman[@]}" rmi -f "$image" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# 1. The base: Debian's minbase, made once and kept (about 170 MB).
t0=$SECONDS
if [[ ! -s $cache/bookworm-minbase.tar ]]; then
  say "making the base with mmdebstrap (once; cached in $cache)"
  mmdebstrap --variant=minbase --quiet bookworm "$tmp/base.tar" ||
    die "mmdebstrap failed"
  mv "$tmp/base.tar" "$cache/bookworm-minbase.tar"
fi
if ! "${podman[@]}" image exists "$base"; then
  "${podman[@]}" import "$cache/bookworm-minbase.tar" "$base" >/dev/null || die "podman import"
fi
say "base ready in $((SECONDS - t0)) s"

# 2. The image, through the Makefile's target. No layer cache: each run installs the
# packages afresh, as a user's first build does, and leaves no intermediate images.
t0=$SECONDS
make --no-print-directory image PODMAN="${podman[*]}" IMAGE="$image" BASE="$base" \
  IMAGE_FLAGS="--isolation=chroot --layers=false --pull=never" >"$tmp/build.log" 2>&1 ||
  { tail -n 40 "$tmp/build.log" >&2; die "make image failed"; }
say "image built in $((SECONDS - t0)) s: $("${podman[@]}" image inspect --format '{{.Size}}' "$image") bytes"

# 3. What the image says about itself.
inspect() { "${podman[@]}" image inspect --format "$1" "$image"; }
user=$(inspect '{{.Config.User}}')
uid=${user%%:*}
[[ $uid =~ ^[0-9]+$ && $uid -ne 0 ]] || die "image user '$user' is not a non-root uid"
[[ $(inspect '{{range $k, $v := .Config.Volumes}}{{$k}} {{end}}') == "/var/lib/idgen " ]] ||
  die "volumes: $(inspect '{{json .Config.Volumes}}')"
[[ $(inspect '{{range $k, $v := .Config.ExposedPorts}}{{$k}} {{end}}') == "6380/tcp 8080/tcp " ]] ||
  die "exposed ports: $(inspect '{{json .Config.ExposedPorts}}')"
mapfile -t entrypoint < <(inspect '{{range .Config.Entrypoint}}{{println .}}{{end}}' | sed '/^$/d')
[[ ${entrypoint[*]} == "/usr/local/bin/idgen serve" ]] || die "entrypoint: ${entrypoint[*]}"
mapfile -t env < <(inspect '{{range .Config.Env}}{{println .}}{{end}}' | sed '/^$/d')
printf '%s\n' "${env[@]}" | grep -x 'IDGEN_HTTP=0.0.0.0:8080' >/dev/null || die "env: no IDGEN_HTTP=0.0.0.0:8080"
say "config: user $user, volume /var/lib/idgen, ports 8080 6380, entrypoint idgen serve"

# 4. Its filesystem, as the container would run it (the volume fresh and writable).
mnt=$("${podman[@]}" image mount "$image")
[[ -x $mnt/usr/local/bin/idgen ]] || die "no /usr/local/bin/idgen in the image"
for f in usr/bin/gcc usr/bin/cc usr/bin/cmake src usr/include/idgen.h; do
  [[ ! -e $mnt/$f ]] || die "the runtime image holds /$f (build tools belong in the build stage)"
done
mkdir -p "$tmp/volume"
chown "$user" "$tmp/volume"
mount --bind "$tmp/volume" "$mnt/var/lib/idgen"
mount -t proc proc "$mnt/proc"
# The image's environment, with the listeners moved to loopback (tests use 127.0.0.1).
env -i "${env[@]}" IDGEN_HTTP=127.0.0.1:0 IDGEN_RESP=127.0.0.1:0 \
  chroot --userspec="$user" "$mnt" "${entrypoint[@]}" 2>"$tmp/serve.log" &
pid=$!
for _ in $(seq 1 200); do
  grep -q ' lease state=held' "$tmp/serve.log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/serve.log" >&2; die "idgen serve exited in the image"; }
  sleep 0.05
done
http=$(grep -o ' http=[^ ]*' "$tmp/serve.log" | head -n 1 | cut -d= -f2)
[[ $http == 127.0.0.1:* ]] || { cat "$tmp/serve.log" >&2; die "no HTTP listener in the log"; }
body=$(curl -sf "http://$http/v1/id") || die "GET /v1/id failed"
[[ $body =~ ^\{\"id\":\"[0-9]+\"\}$ ]] || die "GET /v1/id: $body"
say "serves as uid $uid in the image: $body"
# The process runs as the image's user, and its lease files went to the volume as it.
[[ $(stat -c %u "/proc/$pid") == "$uid" ]] || die "idgen serve does not run as uid $uid"
owned=$(find "$tmp/volume" -mindepth 1 -user "$uid" | wc -l)
[[ $owned -gt 0 && -z $(find "$tmp/volume" -mindepth 1 ! -user "$uid") ]] ||
  die "the volume's files are not the image user's: $(ls -ln "$tmp/volume")"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=""
[[ $rc -eq 0 ]] || { cat "$tmp/serve.log" >&2; die "idgen serve exited $rc on SIGTERM"; }
say "stopped cleanly on SIGTERM; all checks passed"
