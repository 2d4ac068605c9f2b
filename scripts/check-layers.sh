#!/usr/bin/env bash
# Fails when a layer depends on one above it or on a crate it must not know (see ARCHITECTURE.md).
set -euo pipefail
cd "$(dirname "$0")/.."

fail=0
forbid() { # crate, forbidden dependency
  if cargo tree -p "$1" -e normal --prefix none --locked 2>/dev/null | awk '{print $1}' | grep -qx "$2"; then
    echo "layer violation: $1 depends on $2"
    fail=1
  fi
}

for dep in tokio tonic prost rusqlite zstd keel-store keel-blob keel-service keel-proto keel-server keel-client; do
  forbid keel-core "$dep"
done
for dep in tokio tonic prost keel-service keel-proto keel-server keel-client keel-blob; do
  forbid keel-store "$dep"
done
for dep in tokio tonic prost rusqlite keel-store keel-service keel-proto keel-server keel-client; do
  forbid keel-blob "$dep"
done
for dep in tokio tonic prost keel-proto keel-server keel-client; do
  forbid keel-service "$dep"
done
for dep in keel-service keel-store keel-blob keel-server rusqlite; do
  forbid keel-client "$dep"
done
# The benchmarks go through the wire like a user: no server-side crate.
for dep in keel-service keel-store keel-blob keel-server rusqlite; do
  forbid keel-bench "$dep"
done
[ "$fail" = 0 ] && echo "layers ok"
exit "$fail"
