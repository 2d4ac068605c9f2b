#!/usr/bin/env bash
# Short cargo-fuzz run of every target (keel-core parsers, the store model, the P4 wire decoder); exits non-zero on any crash.
# Usage: FUZZ_SECONDS=20 scripts/fuzz-smoke.sh   (needs a rustup toolchain named `nightly`)
set -euo pipefail

cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-20}"
targets=(file_spec view_line path form merge store_model trigger_table protect_line job_expr p4_message)

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

cd fuzz
failed=()
for target in "${targets[@]}"; do
    echo "=== fuzzing $target for ${seconds}s" >&2
    # --dev: unoptimised with debug assertions, which builds in about two minutes where an
    # optimised build takes over ten; a smoke run is short, so the build is most of its time.
    if ! cargo +nightly fuzz run --dev "$target" -- -max_total_time="$seconds"; then
        failed+=("$target")
    fi
done

if ((${#failed[@]} > 0)); then
    echo "fuzz smoke FAILED: ${failed[*]} (see fuzz/artifacts/)" >&2
    exit 1
fi
echo "fuzz smoke passed: ${targets[*]} (${seconds}s each)" >&2
