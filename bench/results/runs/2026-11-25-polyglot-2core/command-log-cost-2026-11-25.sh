#!/usr/bin/env bash
# The command log's cost: release build, log on (the default) vs off (`command_log = ""` in the
# root's keel.toml), interleaved pairs with the order alternating, each run on a fresh /dev/shm
# copy of one dataset generated once, the same seed. Workloads: browse (100,000 files, 8
# clients) and branchsubmit (20,000 files). Prints one JSON report line per run, tagged with
# "log":"on"/"off".
# Usage: bench/results/runs/2026-11-25-polyglot-2core/command-log-cost-2026-11-25.sh KEEL PAIRS [BROWSE_SECONDS]
set -euo pipefail
keel=${1:-target/release/keel}
pairs=${2:-4}
seconds=${3:-6}
work=/dev/shm/keel-command-log-cost
rm -rf "$work" && mkdir -p "$work"
"$keel" bench generate --shape browse --files 100000 --root "$work/browse" >&2
"$keel" bench generate --shape branchsubmit --files 20000 --root "$work/branchsubmit" >&2
run() { # mode workload
  rm -rf "$work/run" && cp -a "$work/$2" "$work/run"
  if [ "$1" = off ]; then printf 'command_log = ""\n' >> "$work/run/keel.toml"; fi
  local args=(--files 20000)
  if [ "$2" = browse ]; then args=(--files 100000 --clients 8 --seconds "$seconds"); fi
  "$keel" bench "$2" "${args[@]}" --root "$work/run" --skip-generate --json \
    | sed "s/^{/{\"log\":\"$1\",\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\",/"
}
for i in $(seq 1 "$pairs"); do
  for w in browse branchsubmit; do
    if [ $((i % 2)) = 1 ]; then run off "$w"; run on "$w"; else run on "$w"; run off "$w"; fi
  done
done
rm -rf "$work"
