#!/usr/bin/env bash
# Server instructions per browse, counted with callgrind (deterministic where wall-clock is
# noise): copies a browse dataset to a fresh root, starts `keel serve` under callgrind with
# instrumentation off, runs a short browse to warm it (and, with ACCESS=secure, to secure the
# server and keep the logins in a tickets file), then counts the server's instructions during
# a browse of SECONDS that reuses those logins, so no password check or set-up write is
# counted.
#
#   scripts/callgrind-browse.sh KEEL_BINARY DATASET OUT [SECONDS]
#   ACCESS=secure CGRUN=/dev/shm/cg-run scripts/callgrind-browse.sh target/release/keel /dev/shm/base-br /tmp/cg-secure
#
# DATASET: a root made by `keel bench generate --shape browse --files 100000 --root DIR`.
# Prints browses, total instructions and instructions per browse; OUT.cg and OUT.json stay.
set -euo pipefail

bin=$(realpath "$1")
data=$2
out=$3
seconds=${4:-20}
run=${CGRUN:-/dev/shm/cgrun}
access=${ACCESS:-open}

rm -rf "$run" "$run.tickets"
cp -a "$data" "$run"
valgrind --tool=callgrind --fair-sched=yes --instr-atstart=no --callgrind-out-file="$out.cg" \
    "$bin" serve --root "$run" --listen 127.0.0.1:0 >"$run.out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 300); do
    grep -q "listening on" "$run.out" && break
    sleep 0.2
done
addr=$(grep -o "listening on 127.0.0.1:[0-9]*" "$run.out" | grep -o "127.*")
browse=(bench browse --server "$addr" --skip-generate --files 100000 --clients 2
    --access "$access" --tickets "$run.tickets")
"$bin" "${browse[@]}" --seconds 3 >/dev/null
callgrind_control -i on $server >/dev/null
"$bin" --json "${browse[@]}" --seconds "$seconds" >"$out.json"
callgrind_control -i off $server >/dev/null
kill $server
wait $server 2>/dev/null || true
trap - EXIT
browses=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])['browses'])" "$out.json")
total=$(callgrind_annotate "$out.cg" 2>/dev/null | grep "PROGRAM TOTALS" | awk '{gsub(",","",$1); print $1}')
echo "access=$access browses=$browses Ir=$total Ir/browse=$((total / browses))"
