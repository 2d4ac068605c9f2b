#!/usr/bin/env bash
# A branch through the command line: generates the branchsubmit dataset (FILES files under
# //depot/main/...) once, then per run copies it to a fresh root (tmpfs when /dev/shm exists),
# starts `keel serve` on an ephemeral loopback port and times `keel integrate -v
# //depot/main/... //depot/rel/...` and `keel submit -d branch` from start to exit, with the
# client's peak RSS and CPU (GNU time). Several binaries are run interleaved, RUNS rounds.
#
#   scripts/branch-cli.sh KEEL_BINARY [KEEL_BINARY...]
#   FILES=70000 RUNS=2 scripts/branch-cli.sh /dev/shm/keel-before target/release/keel
set -euo pipefail

[[ $# -ge 1 ]] || { echo "usage: $0 KEEL_BINARY [KEEL_BINARY...]" >&2; exit 2; }
files=${FILES:-70000}
runs=${RUNS:-2}
binaries=()
for b in "$@"; do binaries+=("$(realpath "$b")"); done

base=$(mktemp -d "$([[ -d /dev/shm ]] && echo /dev/shm || echo /tmp)/keel-branch-cli.XXXXXX")
server_pid=
cleanup() {
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$base"
}
trap cleanup EXIT

"${binaries[0]}" bench generate --shape branchsubmit --files "$files" --root "$base/dataset" >/dev/null

# Runs `keel ARGS` timed; prints "wall s, peak RSS MiB, user+sys s" and keeps its last line.
timed() {
    /usr/bin/time -f "%e %M %U %S" -o "$base/time" "$@" >"$base/out" 2>"$base/err" ||
        { cat "$base/err" >&2; exit 1; }
    read -r wall rss user sys <"$base/time"
    printf '%s s, %d MiB, CPU %.2f s [%s]' "$wall" $((rss / 1024)) \
        "$(echo "$user + $sys" | bc)" "$(tail -1 "$base/out")"
}

for run in $(seq "$runs"); do
    for keel in "${binaries[@]}"; do
        rm -rf "$base/root" "$base/ws"
        cp -a "$base/dataset" "$base/root"
        mkdir -p "$base/ws"
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        "$keel" serve --root "$base/root" --listen "127.0.0.1:$port" >"$base/server.log" 2>&1 &
        server_pid=$!
        export KEEL_SERVER=127.0.0.1:$port KEEL_USER=bench KEEL_WORKSPACE=bench
        for _ in $(seq 100); do "$keel" info >/dev/null 2>&1 && break; sleep 0.1; done
        cd "$base/ws"
        "$keel" workspace create bench --root "$base/ws" --view "//depot/... //bench/..." >/dev/null
        integrate=$(timed "$keel" integrate -v //depot/main/... //depot/rel/...)
        submit=$(timed "$keel" submit -d branch)
        echo "run $run $keel (load $(cut -d' ' -f1 /proc/loadavg)): integrate $integrate; submit $submit"
        kill "$server_pid"
        wait "$server_pid" 2>/dev/null || true
        server_pid=
        cd /
    done
done
