#!/usr/bin/env bash
# Installs the keel Debian package on this machine and checks it works as packaged, then
# removes it: the package built from a debug build (packaging/build-deb.sh --binary), `dpkg -i`,
# the `keel` system user and files in place, `keel serve` started with the unit's own ExecStart
# command line and the packaged /etc/keel/keel.toml as the keel user (on 127.0.0.1:0 instead of
# the packaged port), `keel info` answered, no colour codes in its log, `systemd-analyze verify`
# on the unit, and `dpkg --purge`. Needs root; refuses to run over an existing keel install.
#
# Usage: packaging/test-deb.sh [--binary PATH] [--server PATH]
#   (default: `cargo build -p keel`, debug; --server defaults to the keel-server beside --binary)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."

step() { printf '\n== %s\n' "$*"; }
fail() { echo "test-deb.sh: FAILED: $*" >&2; exit 1; }

binary="" server_binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="${2:?--binary needs a PATH}"; shift 2 ;;
    --server) server_binary="${2:?--server needs a PATH}"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "test-deb.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || fail "run as root (it installs and removes a package)"
if dpkg -s keel >/dev/null 2>&1 || [ -e /var/lib/keel ] || getent passwd keel >/dev/null; then
  fail "keel is already installed here (package, /var/lib/keel or user keel): not touching it"
fi

if [ -z "$binary" ]; then
  step "debug build"
  cargo build -p keel --locked
  target_dir="$(cargo metadata --format-version 1 --no-deps --locked |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
  binary="$target_dir/debug/keel"
fi

work="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  if dpkg -s keel >/dev/null 2>&1; then dpkg --purge keel >/dev/null 2>&1 || true; fi
  rm -rf /var/lib/keel /var/log/keel "$work"
}
trap cleanup EXIT

step "build the .deb"
server_binary="${server_binary:-$(dirname "$binary")/keel-server}"
deb="$(packaging/build-deb.sh --binary "$binary" --server "$server_binary" --out "$work" | tail -1)"
echo "$deb ($(du -h "$deb" | cut -f1))"
dpkg-deb --info "$deb" | sed -n '/Package:/,/Depends:/p'

step "dpkg -i"
dpkg -i "$deb"
getent passwd keel >/dev/null || fail "postinst did not create the keel user"
for f in /usr/bin/keel /usr/bin/keel-server /lib/systemd/system/keel.service /etc/keel/keel.toml /etc/logrotate.d/keel \
  /usr/share/man/man1/keel.1.gz /usr/share/man/man1/keel-serve.1.gz \
  /usr/share/bash-completion/completions/keel /usr/share/zsh/vendor-completions/_keel \
  /usr/share/fish/vendor_completions.d/keel.fish; do
  [ -e "$f" ] || fail "the package did not install $f"
done
keel --version | grep -q '^keel [0-9.]* (' || fail "keel --version does not name a commit: $(keel --version)"
keel --version

step "the unit's ExecStart, as the keel user, with the packaged config"
exec_start="$(sed -n 's/^ExecStart=//p' /lib/systemd/system/keel.service)"
echo "unit:  $exec_start"
# systemd would create these (StateDirectory=keel, LogsDirectory=keel); without it, as it would.
install -d -o keel -g keel -m 0750 /var/lib/keel /var/log/keel
# The packaged port may be in use here: the same command line, on an ephemeral port.
cmd="${exec_start/--listen 127.0.0.1:1666/--listen 127.0.0.1:0}"
[ "$cmd" != "$exec_start" ] || fail "ExecStart has no --listen 127.0.0.1:1666 to move"
echo "test:  $cmd"
cd /var/lib/keel
# shellcheck disable=SC2086
runuser -u keel -- $cmd >"$work/stdout" 2>"$work/stderr" &
server_pid=$!
cd - >/dev/null
addr=""
for _ in $(seq 1 300); do
  addr="$(sed -n 's/^keel serve: listening on \([^ ]*\) .*/\1/p' "$work/stdout")"
  [ -n "$addr" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$addr" ] || { cat "$work/stderr" >&2; fail "keel serve did not start"; }
echo "listening on $addr"
info="$(keel -s "$addr" -u keel-test info)"
echo "$info"
echo "$info" | grep -q "/var/lib/keel" || fail "keel info does not name the root /var/lib/keel"
sleep 2
kill -0 "$server_pid" 2>/dev/null || fail "keel serve exited"
[ -f /var/log/keel/commands.jsonl ] || sleep 1
grep -q '"command":"Info"' /var/log/keel/commands.jsonl || fail "no command log at /var/log/keel/commands.jsonl (the packaged config)"
[ "$(stat -c %U /var/lib/keel/metadata.db 2>/dev/null || stat -c %U /var/lib/keel)" = keel ] ||
  fail "the data is not owned by keel"
if grep -q $'\e' "$work/stderr"; then fail "ANSI colour codes in the server's log"; fi
kill -TERM "$server_pid"
for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$server_pid" 2>/dev/null; then fail "keel serve did not stop on SIGTERM"; fi
server_pid=""
echo "stopped on SIGTERM"

step "systemd-analyze verify (Debian's systemd, installed when missing)"
if ! command -v systemd-analyze >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd >/dev/null
fi
if ! out="$(systemd-analyze verify /lib/systemd/system/keel.service 2>&1)"; then
  echo "$out" >&2
  fail "systemd-analyze verify refused the unit"
fi
[ -z "$out" ] || echo "$out"
echo "unit verified"

step "dpkg --purge"
dpkg --purge keel
! getent passwd keel >/dev/null || fail "purge left the keel user"
[ ! -e /usr/bin/keel ] || fail "purge left /usr/bin/keel"
echo
echo "deb test passed"
