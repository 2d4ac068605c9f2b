#!/usr/bin/env bash
# The metrics layer's cost on browse: release build, one browse dataset generated once on
# /dev/shm, each run on a fresh copy of it, runs interleaved off/on (the order alternating),
# the same seed. "on" starts the server with --metrics-listen and scrapes it once a second
# during the run, as a busy Prometheus would. Prints one JSON report line per run, tagged.
# Usage: bench/results/runs/2026-11-25-polyglot-2core/metrics-cost-2026-11-25.sh KEEL PAIRS FILES SECONDS
set -euo pipefail
keel=${1:-target/release/keel}
pairs=${2:-4}
files=${3:-100000}
seconds=${4:-6}
work=/dev/shm/keel-metrics-cost
rm -rf "$work" && mkdir -p "$work"
"$keel" bench generate --shape browse --files "$files" --root "$work/base" >&2
run() { # mode
  rm -rf "$work/run" && cp -a "$work/base" "$work/run"
  local extra=() scraper=""
  if [ "$1" = on ]; then
    extra=(--serve-arg=--metrics-listen=127.0.0.1:19166)
    ( for _ in $(seq 1 $((seconds + 20))); do
        curl -s -o /dev/null http://127.0.0.1:19166/metrics || true; sleep 1; done ) &
    scraper=$!
  fi
  "$keel" bench browse --files "$files" --clients 8 --seconds "$seconds" --root "$work/run" \
    --skip-generate --json "${extra[@]}" | sed "s/^{/{\"metrics\":\"$1\",/"
  if [ -n "$scraper" ]; then kill "$scraper" 2>/dev/null || true; fi
}
for i in $(seq 1 "$pairs"); do
  if [ $((i % 2)) = 1 ]; then run off; run on; else run on; run off; fi
done
rm -rf "$work"
