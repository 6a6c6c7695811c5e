#!/usr/bin/env bash
# ids.sh: IDs from `idgen serve` with curl and redis-cli, and taken apart by `idgen decode`.
#
#   ./ids.sh        # IDGEN_HTTP, IDGEN_RESP (host:port; defaults 127.0.0.1:8080, :6380),
#                   # IDGEN (the idgen binary; default: idgen on PATH)
set -euo pipefail
http=${IDGEN_HTTP:-127.0.0.1:8080}
resp=${IDGEN_RESP:-127.0.0.1:6380}
idgen=${IDGEN:-idgen}

# HTTP: JSON with the ID as a string (add -H "Authorization: Bearer $TOKEN" with a token).
echo "curl:       $(curl -fsS "http://$http/v1/id")"
echo "curl:       $(curl -fsS "http://$http/v1/ids?count=3&format=base62")"

# The Redis protocol: one ID per line (add -a "$TOKEN" with a token).
id=$(redis-cli -h "${resp%:*}" -p "${resp##*:}" ID)
echo "redis-cli:  $id"
echo "redis-cli:  $(redis-cli -h "${resp%:*}" -p "${resp##*:}" IDS 3 | tr '\n' ' ')"

# Any ID, UUID or ULID, taken apart, by the CLI and by the server: the same JSON.
"$idgen" decode "$id"
echo "decode:     $("$idgen" decode --json "$id")"
echo "DECODE:     $(redis-cli -h "${resp%:*}" -p "${resp##*:}" DECODE "$id")"
