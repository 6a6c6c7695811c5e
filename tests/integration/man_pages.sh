#!/usr/bin/env bash
# The man pages the build made (scripts/man.py): one per command `idgen --help` lists, plus
# idgen(1) and idgen(3). Each renders with `man -l` without a warning; every option that a
# command's --help names appears in its rendered page; every function libidgen and
# libidgen-opaque export, and every inline one the headers define, appears in idgen(3).
set -euo pipefail
idgen=${1:?usage: man_pages.sh path/to/idgen}
build=${IDGEN_BUILD_DIR:-$(dirname "$idgen")}
src=${IDGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v man >/dev/null || { echo "FAIL: man not found (man-db)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# render PAGE: the page as plain text, wide enough that no name breaks; groff's warnings
# (a bad request, a line it cannot set) fail the page.
render() {
  LC_ALL=C MANWIDTH=200 MAN_KEEP_FORMATTING= man --warnings -l "$1" 2>"$dir/warnings"
  if [[ -s $dir/warnings ]]; then
    fail "$(basename "$1"): $(head -n 3 "$dir/warnings")"
  fi
}
# options TEXT: each --long and -s option the text names, once.
options() { grep -oE '(^|[^[:alnum:]_-])--?[[:alpha:]][[:alnum:]-]*' | sed -E 's/^[^-]+//' | sort -u; }

commands=$("$idgen" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 {print $1}')
[[ -n $commands ]] || fail "idgen --help lists no commands"
pages=0
for cmd in "" $commands; do
  page=$build/man/idgen${cmd:+-$cmd}.1
  [[ -f $page ]] || { fail "no $page"; continue; }
  text=$(render "$page")
  # shellcheck disable=SC2086
  help=$("$idgen" $cmd --help)
  missing=()
  while IFS= read -r opt; do
    grep -qF -- "$opt" <<<"$text" || missing+=("$opt")
  done < <(options <<<"$help")
  [[ ${#missing[@]} -eq 0 ]] || fail "idgen${cmd:+-$cmd}(1) lacks ${missing[*]}"
  grep -q '^EXIT STATUS' <<<"$text" || fail "idgen${cmd:+-$cmd}(1) has no EXIT STATUS"
  pages=$((pages + 1))
done

text=$(render "$build/man/idgen.3")
# Every exported function but the internals libidgen.so exports for libidgen-etcd.so
# (idgen__*, not API).
functions=$( (nm -D --defined-only "$build/libidgen.so" "$build/libidgen-opaque.so" \
  "$build/libidgen-etcd.so" | awk '$2 == "T" && $3 !~ /^idgen__/ {print $3}'
  grep -ohE 'static inline [^(]*\bidgen_[a-z0-9_]+\(' "$src"/include/idgen/*.h |
    grep -oE 'idgen_[a-z0-9_]+') | sort -u)
[[ $(wc -l <<<"$functions") -gt 50 ]] || fail "too few functions found: $functions"
missing=()
for f in $functions; do
  grep -qE "\\b$f\\(" <<<"$text" || missing+=("$f")
done
[[ ${#missing[@]} -eq 0 ]] || fail "idgen(3) lacks ${missing[*]}"
for code in $(grep -oE 'X\(E[A-Z]+' "$src/include/idgen/error.h" | cut -c3-); do
  grep -q "IDGEN_$code" <<<"$text" || fail "idgen(3) lacks IDGEN_$code"
done

[[ $fails -eq 0 ]] || exit 1
echo "man_pages.sh: $pages pages in section 1 and idgen(3) with $(wc -l <<<"$functions") functions: all passed"
