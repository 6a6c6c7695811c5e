#!/usr/bin/env bash
# The short fault campaign's scenarios on other stores than etcd (tests/chaos/run.sh, as
# chaos.sh runs them): the file provider's restarts and its state directory full,
# read-only and removed; segment generators on MariaDB (one at READ-COMMITTED, one
# beside a Flickr one-number client); the ZooKeeper provider on a 3-member ensemble of
# its own; the Redis provider killed, restarted without persistence (and its negative
# control, which must show duplicates) and a segment generator on Redis.
# Usage: chaos_stores.sh /path/to/idgen
set -euo pipefail
exec bash "$(dirname "$0")/chaos.sh" "${1:?usage: chaos_stores.sh /path/to/idgen}" \
  file-restart file-statedir file-removed segment-mariadb-rc segment-mariadb-flickr \
  zookeeper redis redis-volatile redis-negative segment-redis
