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

for dep in tokio tonic prost rusqlite zstd keel-store keel-blob keel-service keel-proto keel-server keel-client keel-tls; do
  forbid keel-core "$dep"
done
for dep in tokio tonic prost keel-service keel-proto keel-server keel-client keel-blob; do
  forbid keel-store "$dep"
done
for dep in tokio tonic prost rusqlite keel-store keel-service keel-proto keel-server keel-client; do
  forbid keel-blob "$dep"
done
for dep in tokio tonic prost keel-proto keel-server keel-client keel-tls; do
  forbid keel-service "$dep"
done
# The transport knows no Keel crate: it is the wire's bottom, below proto, server and client.
for dep in keel-core keel-store keel-blob keel-service keel-proto keel-server keel-client rusqlite; do
  forbid keel-tls "$dep"
done
for dep in keel-service keel-store keel-blob keel-server rusqlite; do
  forbid keel-client "$dep"
done
# The metrics crate knows no Keel crate: the server and the proxy give it what to expose.
for dep in keel-core keel-store keel-blob keel-service keel-proto keel-server keel-client keel-tls keel-proxy rusqlite; do
  forbid keel-metrics "$dep"
done
# The P4 front end speaks its own wire over the service (and only through it reaches the
# stores): no gRPC, no protobuf, no other front end.
for dep in tonic prost keel-proto keel-server keel-client keel-tls; do
  forbid keel-p4 "$dep"
done
# The P4 wire's pure parts do no IO and know only the pure core.
for dep in tokio tonic prost rusqlite keel-store keel-blob keel-service keel-proto keel-server keel-client keel-tls keel-p4; do
  forbid keel-p4-wire "$dep"
done
# Nothing below the front ends knows a P4 wire type.
for crate in keel-core keel-store keel-blob keel-service; do
  forbid "$crate" keel-p4
  forbid "$crate" keel-p4-wire
done
# The proxy knows only the wire (and the pure core's digests): no server-side crate.
for dep in keel-service keel-store keel-blob keel-server keel-client rusqlite; do
  forbid keel-proxy "$dep"
done
# The benchmarks go through the wire like a user: no server-side crate.
for dep in keel-service keel-store keel-blob keel-server rusqlite; do
  forbid keel-bench "$dep"
done

# Only the top layer speaks to people: no library crate prints (the keel binary and the
# benchmarks' reports do). Comments and doc lines are not code.
printers=$(grep -rnE '\b(e?println|e?print)!' crates/*/src --include='*.rs' |
  grep -vE '^crates/(keel|bench)/' | grep -vE '^[^:]+:[0-9]+:\s*//' || true)
if [ -n "$printers" ]; then
  echo "layer violation: a library crate prints (only keel and keel-bench may):"
  echo "$printers"
  fail=1
fi
# Service errors and wire types stop at the server: nothing below it names them.
below=$(grep -rnE '\b(ServiceError|keel_proto)\b' crates/{core,store,blob}/src --include='*.rs' || true)
wire=$(grep -rnE '\bkeel_proto\b' crates/service/src --include='*.rs' || true)
if [ -n "$below$wire" ]; then
  echo "layer violation: a service error or wire type below the server:"
  printf '%s\n' "$below" "$wire" | grep -v '^$'
  fail=1
fi
[ "$fail" = 0 ] && echo "layers ok"
exit "$fail"
