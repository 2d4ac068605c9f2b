#!/usr/bin/env bash
# run.sh KEEL_BINARY BASEDIR NFILES EDITS : import NFILES files, then EDITS changes of 5%.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KEEL=$1; BASE=$2; N=$3; EDITS=$4
rm -rf "$BASE"; mkdir -p "$BASE"
python3 "$HERE/gen.py" "$BASE/ws" "$N"
PORT=$((20000 + RANDOM % 20000))
"$KEEL" serve --root "$BASE/root" --listen 127.0.0.1:$PORT > "$BASE/serve.log" 2>&1 &
SPID=$!
trap 'kill $SPID 2>/dev/null || true' EXIT
export KEEL_SERVER=127.0.0.1:$PORT KEEL_USER=bench KEEL_WORKSPACE=bench
for _ in $(seq 50); do "$KEEL" info >/dev/null 2>&1 && break; sleep 0.1; done
cd "$BASE/ws"
"$KEEL" workspace create bench --root "$BASE/ws" --view "//depot/... //bench/..." >/dev/null
if [ -n "${PERF:-}" ]; then perf record -F 999 -g -p $SPID -o "$BASE/perf.data" 2>/dev/null & PP=$!; sleep 0.3; fi
cpu0=$(awk '{print $14+$15}' /proc/$SPID/stat)
t0=$(date +%s.%N)
"$KEEL" -q add ... >/dev/null
"$KEEL" -q submit -d import >/dev/null
t1=$(date +%s.%N)
cpu1=$(awk '{print $14+$15}' /proc/$SPID/stat)
if [ -n "${PERF:-}" ]; then kill -INT $PP; wait $PP 2>/dev/null || true; fi
sleep 1.5   # let the checkpoint thread go quiet (WAL truncation)
du1=$(du -sB1 "$BASE/root" | cut -f1)
echo "import files=$N wall=$(echo "$t1 - $t0" | bc) server_cpu_s=$(echo "($cpu1 - $cpu0)/100" | bc -l | cut -c1-5) root_bytes=$du1"
for c in $(seq "$EDITS"); do
  python3 "$HERE/edit.py" "$BASE/ws" "$c" list > "$BASE/edited"
  xargs -a "$BASE/edited" "$KEEL" -q edit >/dev/null
  python3 "$HERE/edit.py" "$BASE/ws" "$c" write
  "$KEEL" -q submit -d "edit $c" >/dev/null
done
sleep 1.5
du2=$(du -sB1 "$BASE/root" | cut -f1)
echo "after_edits=$EDITS root_bytes=$du2"
sleep 10
echo "10s_later root_bytes=$(du -sB1 "$BASE/root" | cut -f1)"
du -sB1 "$BASE/root"/* | sed 's/^/  /'
du -sB1 "$BASE/root/content"/* 2>/dev/null | sort -n | tail -4 | sed "s/^/    /"
ls -la "$BASE/root"/*.db-wal 2>/dev/null | awk '{print "  wal " $5 " " $9}'
