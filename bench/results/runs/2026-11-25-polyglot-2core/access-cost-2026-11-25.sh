#!/usr/bin/env bash
# What authentication and the protections check cost browse and sync: one release binary,
# `--access open` against `--access secure` (security 3, a ticket on every call, the 34-line
# table of crates/bench/src/access.rs), each run on a fresh /dev/shm copy of one dataset
# (generated once beforehand), runs interleaved open/secure with the order alternating.
# Prints one JSON report line per run, with the load average before it.
# Usage: bench/results/runs/2026-11-25-polyglot-2core/access-cost-2026-11-25.sh KEEL PAIRS BROWSE_BASE SYNC_BASE
#   BROWSE_BASE: keel bench generate --shape browse --files 100000 --root DIR
#   SYNC_BASE:   keel bench generate --shape sync --files 3400 --root DIR
set -euo pipefail
keel=$(realpath "${1:-target/release/keel}")
pairs=${2:-6}
browse_base=$3
sync_base=$4
work=/dev/shm/keel-access-cost
rm -rf "$work" && mkdir -p "$work"
run() { # workload mode pair
  rm -rf "$work/run" "$work/ws" && mkdir -p "$work/ws"
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  if [ "$1" = browse ]; then
    cp -a "$browse_base" "$work/run"
    "$keel" --json bench browse --files 100000 --clients 8 --seconds 10 --root "$work/run" \
      --skip-generate --access "$2"
  else
    cp -a "$sync_base" "$work/run"
    "$keel" --json bench sync --files 3400 --clients 8 --rounds 4 --root "$work/run" \
      --skip-generate --work-dir "$work/ws" --access "$2"
  fi | tail -1 | sed "s/^{/{\"pair\":$3,\"load\":$load,/"
}
for w in browse sync; do
  for i in $(seq 1 "$pairs"); do
    if [ $((i % 2)) = 1 ]; then run $w open $i; run $w secure $i; else run $w secure $i; run $w open $i; fi
  done
done
rm -rf "$work"
