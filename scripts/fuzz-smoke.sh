#!/usr/bin/env bash
# Fuzz smoke test: build every cargo-fuzz target and run each for a few
# seconds with libFuzzer's per-input -timeout, so a crash, a failed
# assertion or a slow input (quadratic structured-field work) fails CI.
#
#   scripts/fuzz-smoke.sh            # 10 s per target
#   FUZZ_SECS=30 scripts/fuzz-smoke.sh
#
# Needs cargo-fuzz (installed here with `cargo install cargo-fuzz --locked`
# when missing) and RUSTC_BOOTSTRAP=1 so the stable toolchain accepts the
# sanitizer flags (see fuzz/README.md). Exits non-zero on the first failure;
# the reproducer is left in fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

SECS="${FUZZ_SECS:-10}"
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz-smoke: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

bash fuzz/seed.sh
targets=$(cd fuzz && cargo fuzz list)
[ -n "$targets" ] || { echo "fuzz-smoke: no targets found" >&2; exit 1; }

(cd fuzz && cargo fuzz build -O)

status=0
for t in $targets; do
    mkdir -p "fuzz/corpus/$t"
    echo "fuzz-smoke: $t for ${SECS}s (-timeout=2)" >&2
    # A private scratch corpus keeps the seeded corpus unchanged between runs.
    scratch=$(mktemp -d)
    if ! (cd fuzz && cargo fuzz run -O "$t" "$scratch" "corpus/$t" -- \
        -max_total_time="$SECS" -timeout=2 -rss_limit_mb=2048 -max_len=16384 \
        -print_final_stats=1 2>"$scratch.log"); then
        tail -n 40 "$scratch.log" >&2
        echo "fuzz-smoke: FAILED $t (artifacts in fuzz/artifacts/$t/)" >&2
        status=1
    else
        grep -E '^stat::number_of_executed_units' "$scratch.log" | sed "s/^/fuzz-smoke: $t /" >&2 || true
    fi
    rm -rf "$scratch" "$scratch.log"
done
[ "$status" -eq 0 ] && echo "fuzz-smoke: all targets ok" >&2
exit "$status"
