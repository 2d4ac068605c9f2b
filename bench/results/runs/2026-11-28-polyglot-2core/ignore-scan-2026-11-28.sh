#!/bin/sh
# The cost of ignore files in a workspace scan (`keel status`): a workspace of 2,000 submitted
# files in 100 directories, timed with no ignore file anywhere, with a root `.p4ignore` that
# matches none of them, and with that file ignoring a 20,000-file `target/` tree beside them
# (pruned unread), against `status -I` walking that tree. Median of 5 runs each.
# Usage: ignore-scan-2026-11-28.sh PATH/TO/keel   (prints one line per case)
set -eu
KEEL=${1:?path to the keel binary}
WORK=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
PORT=$((20000 + $$ % 20000))
"$KEEL" serve --root "$WORK/server" --listen "127.0.0.1:$PORT" >/dev/null 2>&1 &
SERVER=$!
export KEEL_SERVER=127.0.0.1:$PORT KEEL_USER=bench KEEL_WORKSPACE=bench
for _ in $(seq 50); do "$KEEL" info >/dev/null 2>&1 && break; sleep 0.2; done
mkdir -p "$WORK/ws" && cd "$WORK/ws"
"$KEEL" workspace create bench --root "$WORK/ws" >/dev/null
for d in $(seq 100); do
  mkdir -p "src/d$d"
  for f in $(seq 20); do echo "file $d $f" > "src/d$d/f$f.c"; done
done
"$KEEL" add ... >/dev/null && "$KEEL" submit -d files >/dev/null
"$KEEL" status >/dev/null 2>&1 || true   # warm the state file
median() { sort -n | sed -n 3p; }
time_status() {
  for _ in 1 2 3 4 5; do
    s=$(date +%s%N); "$KEEL" status "$@" >/dev/null 2>&1; e=$(date +%s%N)
    echo $(( (e - s) / 1000000 ))
  done | median
}
echo "no ignore file:               $(time_status) ms"
printf '*.o\nbuild/\n' > .p4ignore
echo "root .p4ignore, nothing hit:  $(time_status) ms"
for d in $(seq 200); do
  mkdir -p "target/debug/d$d"
  for f in $(seq 100); do echo x > "target/debug/d$d/o$f.o"; done
done
printf '*.o\nbuild/\ntarget/\n' > .p4ignore
echo "+ 20,000 files in target/:    $(time_status) ms (target/ pruned)"
echo "status -I (walks target/):    $(time_status -I) ms"
