#!/usr/bin/env bash
# idgen opaque keygen / encode / decode: key files, round trips in every form, agreement
# with tests/tools/ff1_reference.py (FF1 written again, in Python), errors; and that
# libidgen itself still needs no libcrypto (only libidgen-opaque does).
set -euo pipefail
idgen=${1:?usage: cli_opaque.sh path/to/idgen}
src=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${IDGEN_BUILD_DIR:-$(dirname "$idgen")}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }

# keygen: 64 hex digits and a newline, mode 0600 whatever the umask, never overwritten
(umask 000 && "$idgen" opaque keygen "$dir/key")
[[ $(stat -c %a "$dir/key") == 600 ]] || fail "key mode $(stat -c %a "$dir/key")"
grep -qxE '[0-9a-f]{64}' "$dir/key" || fail "key text: $(cat "$dir/key")"
[[ $(wc -c <"$dir/key") -eq 65 ]] || fail "key length"
before=$(cat "$dir/key")
rc=0; err=$("$idgen" opaque keygen "$dir/key" 2>&1) || rc=$?
[[ $rc -eq 1 && $err == *"exists: not overwriting"* && $(cat "$dir/key") == "$before" ]] ||
  fail "keygen over an existing file: rc $rc, $err"
ln -s "$dir/elsewhere" "$dir/link"
rc=0; "$idgen" opaque keygen "$dir/link" 2>/dev/null || rc=$?
[[ $rc -eq 1 && ! -e "$dir/elsewhere" ]] || fail "keygen followed a symlink"
"$idgen" opaque keygen --bits 128 "$dir/key128"
grep -qxE '[0-9a-f]{32}' "$dir/key128" || fail "128-bit key text"
"$idgen" opaque keygen "$dir/key2"
[[ $(cat "$dir/key2") != "$before" ]] || fail "two keygens gave one key"
ok "keygen"

# round trips: 1000 new IDs in each form
"$idgen" next -n 1000 >"$dir/ids"
for f in decimal base62 base32 hex; do
  "$idgen" opaque encode --key-file "$dir/key" --format "$f" $(cat "$dir/ids") >"$dir/opaque.$f"
  [[ $(sort -u "$dir/opaque.$f" | wc -l) -eq 1000 ]] || fail "$f: opaque IDs repeat"
  "$idgen" opaque decode --key-file "$dir/key" --from "$f" $(cat "$dir/opaque.$f") >"$dir/back.$f"
  cmp -s "$dir/ids" "$dir/back.$f" || fail "$f: decode does not give the IDs back"
done
# the opaque IDs are not in the IDs' order (the IDs are increasing)
sort -n -c "$dir/opaque.decimal" 2>/dev/null && fail "opaque IDs kept the order"
ok "round trips in decimal, base62, base32, hex"

# edges, and agreement with the Python implementation on fixed and random values
printf '%s\n' 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f >"$dir/fixed"
out=$("$idgen" opaque encode --key-file "$dir/fixed" 0 1 4611686018427387904 9223372036854775807)
[[ $out == $'1928147665358327327\n7446678137478122738\n593690778404878550\n5158646560925547725' ]] ||
  fail "fixed vectors: $out"
/usr/bin/python3 "$src/tests/tools/ff1_reference.py" selftest >/dev/null || fail "reference selftest"
key=$(cat "$dir/key")
for tweak in default "" orders "généré"; do
  ids=$(shuf -n 200 "$dir/ids" | tr '\n' ' ')
  want=$(/usr/bin/python3 "$src/tests/tools/ff1_reference.py" encode "$key" "$tweak" $ids)
  got=$("$idgen" opaque encode --key-file "$dir/key" --tweak "$tweak" $ids)
  [[ $got == "$want" ]] || fail "tweak '$tweak': idgen and the reference disagree"
  want=$(/usr/bin/python3 "$src/tests/tools/ff1_reference.py" decode "$key" "$tweak" $ids)
  got=$("$idgen" opaque decode --key-file "$dir/key" --tweak "$tweak" $ids)
  [[ $got == "$want" ]] || fail "tweak '$tweak': decode disagrees with the reference"
done
ok "agrees with tests/tools/ff1_reference.py (4 tweaks, 200 IDs each, both ways)"
a=$("$idgen" opaque encode --key-file "$dir/key" 42)
b=$("$idgen" opaque encode --key-file "$dir/key" --tweak orders 42)
c=$("$idgen" opaque encode --key-file "$dir/key2" 42)
[[ $a != "$b" && $a != "$c" ]] || fail "tweak or key changes nothing"
ok "tweak and key"

# bad input: exit 2, one line on stderr, nothing on stdout
bad() {
  local rc=0
  "$idgen" opaque "$@" >"$dir/out" 2>"$dir/err" || rc=$?
  [[ $rc -eq 2 ]] || fail "opaque $*: exit $rc, want 2"
  [[ ! -s "$dir/out" ]] || fail "opaque $*: printed $(cat "$dir/out")"
  [[ $(wc -l <"$dir/err") -eq 1 ]] || fail "opaque $*: stderr $(cat "$dir/err")"
}
printf 'abc\n' >"$dir/short"
printf '%s\n\n' "$key" >"$dir/twolines"
printf '%s' "${key:0:63}" >"$dir/odd"
: >"$dir/empty"
head -c 1000 /dev/zero >"$dir/long"
for k in short twolines odd empty long missing; do bad encode --key-file "$dir/$k" 1; done
bad encode 1
bad encode --key-file "$dir/key"
bad encode --key-file "$dir/key" 9223372036854775808
bad encode --key-file "$dir/key" 1 nope 2
bad decode --key-file "$dir/key" -1
bad encode --key-file "$dir/key" --format friendly 1
bad encode --key-file "$dir/key" --from octal 1
bad encode --key-file "$dir/key" --from hex 12
bad encode --key-file "$dir/key" --tweak $'\xff' 1
bad encode --key-file "$dir/key" --tweak "$(head -c 4097 /dev/zero | tr '\0' a)" 1
bad encode --key-file "$dir/key" --colour 1
bad keygen
bad keygen --bits 512 "$dir/k3"
bad frobnicate
"$idgen" opaque --help | grep '^usage: idgen opaque' >/dev/null || fail "--help"
ok "bad input: exit 2, one line, nothing printed"

# libidgen needs no libcrypto: only libidgen-opaque does
if readelf -d "$build/libidgen.so" | grep 'libcrypto' >/dev/null; then fail "libidgen.so needs libcrypto"; fi
nm -u "$build/libidgen.a" 2>/dev/null | grep -E ' (EVP|OPENSSL)_' >/dev/null && fail "libidgen.a calls OpenSSL"
readelf -d "$build/libidgen-opaque.so" | grep 'libcrypto' >/dev/null || fail "libidgen-opaque.so without libcrypto"
ok "libidgen needs no libcrypto"
echo "all checks passed"
