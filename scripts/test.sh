#!/usr/bin/env bash
# Runs every check and test Keel has: formatting, lints, the layer rules, unit and end-to-end
# tests against the real `keel` binary (the slow cases too), a one-round smoke run of
# scripts/vcs-compare (Keel, svn and git side by side), the Debian package installed and run as
# packaged (as root), and a bounded fuzz smoke run of every parser. A plain `cargo test` skips the slow end-to-end cases and takes well under two minutes.
# Usage: scripts/test.sh [--keel PATH]
#   --keel PATH     the keel binary the vcs-compare smoke runs (default: the debug build in cargo's
#                   target directory, which honours CARGO_TARGET_DIR)
#   FUZZ_SECONDS=N  the per-target fuzz time (0 skips the fuzz smoke)
set -euo pipefail
cd "$(dirname "$0")/.."

keel_bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --keel) [ $# -ge 2 ] || { echo "scripts/test.sh: --keel needs a PATH" >&2; exit 2; }
            keel_bin="$2"; shift 2 ;;
    --keel=*) keel_bin="${1#--keel=}"; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "scripts/test.sh: unknown argument '$1' (usage: scripts/test.sh [--keel PATH])" >&2; exit 2 ;;
  esac
done

step() { printf '\n== %s\n' "$*"; }

step "toolchain components"
rustup component add rustfmt clippy >/dev/null 2>&1 || true

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo doc without warnings (broken links, bad doc syntax)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

step "layer rules (dependencies point down)"
scripts/check-layers.sh

step "headless browser for the log report's page (Debian's chromium, installed when missing)"
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
fi

step "P4Python from PyPI for the P4 conformance suite (target/p4venv)"
# The suite (crates/keel/tests/e2e/p4_*.rs) drives the P4 listener with P4Python; it fails,
# never skips, without it.
p4venv="${CARGO_TARGET_DIR:-target}/p4venv"
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
fi
if ! "$p4venv/bin/python" -c 'import P4' >/dev/null 2>&1; then
  python3 -m venv "$p4venv"
  "$p4venv/bin/pip" install --quiet p4python
fi
export KEEL_P4PYTHON="$PWD/$p4venv/bin/python"
case "$p4venv" in /*) export KEEL_P4PYTHON="$p4venv/bin/python" ;; esac

step "P4Java from Maven Central for the P4 conformance suite (target/p4java/lib)"
# crates/keel/tests/e2e/p4java.rs compiles tests/p4java/Drive.java against these jars and runs
# it; it fails, never skips, without them. A JDK and Maven are installed when missing.
if ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jdk-headless maven >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jdk-headless maven >/dev/null
  fi
fi
p4java_lib="$(cd "${CARGO_TARGET_DIR:-target}" 2>/dev/null && pwd || echo "$PWD/target")/p4java/lib"
if ! ls "$p4java_lib"/p4java-*.jar >/dev/null 2>&1; then
  mvn -q -f crates/keel/tests/p4java/pom.xml dependency:copy-dependencies -DoutputDirectory="$p4java_lib"
fi
export KEEL_P4JAVA_LIB="$p4java_lib"

step "keel linked with musl, as packaged (the target and Debian's musl-tools, added when missing)"
# crates/keel/tests/e2e/musl_keel.rs runs it (KEEL_MUSL_KEEL) beside the debug keel-server, and
# the Debian package below ships it.
rustup target add x86_64-unknown-linux-musl >/dev/null
if ! command -v musl-gcc >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl-tools >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl-tools >/dev/null
  fi
fi
target_dir="$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
cargo build -p keel --bin keel --target x86_64-unknown-linux-musl --locked
export KEEL_MUSL_KEEL="$target_dir/x86_64-unknown-linux-musl/debug/keel"

step "cargo test (with the slow end-to-end cases: KEEL_SLOW_TESTS=1)"
KEEL_SLOW_TESTS=1 cargo test --workspace --locked

step "vcs-compare smoke (Keel, svn and git on a 300-file tree and a 50-revision annotate, one round; at most 5 minutes)"
if [ -z "$keel_bin" ]; then
  # The binary `cargo test` just built for the end-to-end suite (a `cargo build -p keel` would
  # build it again: the tests' dev-dependencies change the features of a few crates), wherever
  # cargo puts its builds (CARGO_TARGET_DIR, build.target-dir).
  keel_bin="$target_dir/debug/keel"
  [ -x "$keel_bin" ] || cargo build -p keel --locked
fi
timeout 300 scripts/vcs-compare --small --rounds 1 --annotate-revs 50 --no-write --keel "$keel_bin"

step "Debian package: built, installed with dpkg -i, run as packaged, purged (as root)"
if [ "$(id -u)" = 0 ]; then
  # As released: the musl keel beside the debug keel-server.
  timeout 900 packaging/test-deb.sh --binary "$KEEL_MUSL_KEEL" --server "$target_dir/debug/keel-server"
else
  echo "skipped: not root (packaging/test-deb.sh installs a package; run it as root)"
fi

if [ "${FUZZ_SECONDS:-10}" != "0" ]; then
  step "fuzz smoke (${FUZZ_SECONDS:-10}s per target)"
  FUZZ_SECONDS="${FUZZ_SECONDS:-10}" scripts/fuzz-smoke.sh
fi
echo
echo "all checks passed"
