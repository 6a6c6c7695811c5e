#!/usr/bin/env bash
# Removes what `make install` installed: the files in BUILD/install_manifest.txt (CMake
# writes it on install; give the same DESTDIR), then the folders of idgen's own left
# empty (include/idgen, share/doc/idgen, ...); shared folders such as bin/ stay.
# Usage: scripts/uninstall.sh BUILD_DIR
set -euo pipefail
manifest=${1:?usage: scripts/uninstall.sh BUILD_DIR}/install_manifest.txt
[[ -f $manifest ]] || { echo "uninstall.sh: no $manifest: nothing was installed from it" >&2; exit 2; }
removed=0
dirs=()
while IFS= read -r file || [[ -n $file ]]; do
  [[ -n $file ]] || continue
  file=${DESTDIR:-}$file
  if [[ -e $file || -L $file ]]; then
    rm -f -- "$file"
    removed=$((removed + 1))
  fi
  dir=$(dirname "$file")
  # the folders named idgen, and those inside them
  while [[ $dir == */idgen/* || $dir == */idgen ]]; do
    dirs+=("$dir")
    dir=$(dirname "$dir")
  done
done <"$manifest"
# deepest first, and only when empty
if [[ ${#dirs[@]} -gt 0 ]]; then
  printf '%s\n' "${dirs[@]}" | sort -ru | while IFS= read -r dir; do
    rmdir -- "$dir" 2>/dev/null || true
  done
fi
echo "uninstall.sh: removed $removed files listed in $manifest"
