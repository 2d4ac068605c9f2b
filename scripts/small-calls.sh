#!/usr/bin/env bash
# Small commands from concurrent shells: starts `keel serve` on a fresh root (tmpfs when
# /dev/shm exists) on an ephemeral loopback port, submits one file, then runs SHELLS shells that
# each call `keel ARGS` (default: `fstat //depot/f.txt`) in a loop for SECONDS, and prints
# calls/s over all shells plus the CPU each call cost: the client's (user+system of the keel
# processes, divided by the calls) and the server's (its user+system over the same loop, from
# /proc, divided by the calls).
#
#   scripts/small-calls.sh [KEEL_BINARY] [-- ARGS...]
#   SHELLS=8 SECONDS_EACH=10 scripts/small-calls.sh target/release/keel
set -euo pipefail

keel=${1:-target/release/keel}
shift || true
[[ ${1:-} == -- ]] && shift
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(fstat //depot/f.txt)
shells=${SHELLS:-8}
seconds=${SECONDS_EACH:-10}
keel=$(realpath "$keel")

base=$(mktemp -d "$([[ -d /dev/shm ]] && echo /dev/shm || echo /tmp)/keel-small-calls.XXXXXX")
server_pid=
cleanup() {
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$base"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$keel" serve --root "$base/root" --listen "127.0.0.1:$port" >"$base/server.log" 2>&1 &
server_pid=$!
export KEEL_SERVER=127.0.0.1:$port KEEL_USER=bench KEEL_WORKSPACE=bench
for _ in $(seq 100); do "$keel" info >/dev/null 2>&1 && break; sleep 0.1; done
mkdir -p "$base/ws"
cd "$base/ws"
"$keel" workspace create bench --root "$base/ws" --view "//depot/... //bench/..." >/dev/null
echo "a small file" >f.txt
"$keel" add f.txt >/dev/null
"$keel" submit -d "one file" >/dev/null

# The server's CPU so far (user+system clock ticks, fields 14 and 15 of /proc/PID/stat; the
# command name in field 2 has no spaces).
server_ticks() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }
ticks_before=$(server_ticks)

# Each shell counts its calls; the children's CPU comes from `times` at the shell's end.
pids=()
for i in $(seq "$shells"); do
    (
        end=$((SECONDS + seconds))
        n=0
        while ((SECONDS < end)); do
            "$keel" "${args[@]}" >/dev/null
            n=$((n + 1))
        done
        # `times` of this shell (not of a command substitution): its second line is the
        # children's user and system time.
        { echo "$n"; times; } >"$base/shell.$i"
    ) &
    pids+=($!)
done
wait "${pids[@]}"
server_ticks=$(($(server_ticks) - ticks_before))
python3 - "$base" "$shells" "$seconds" "$server_ticks" "$(getconf CLK_TCK)" <<'EOF'
import glob, re, sys
base, shells, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
server_cpu = int(sys.argv[4]) / int(sys.argv[5])
calls, cpu = 0, 0.0
for path in glob.glob(f"{base}/shell.*"):
    lines = open(path).read().split("\n")
    n = lines[0]
    user, system = lines[2].split()
    secs = lambda t: sum(float(x) * 60 ** i for i, x in enumerate(reversed(re.sub("[ms]", " ", t).split())))
    calls += int(n)
    cpu += secs(user) + secs(system)
print(f"{shells} shells x {seconds} s: {calls} calls, {calls / seconds:.0f} calls/s, "
      f"client CPU {cpu / max(calls, 1) * 1000:.2f} ms/call, "
      f"server CPU {server_cpu / max(calls, 1) * 1000:.2f} ms/call")
EOF
