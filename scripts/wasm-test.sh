#!/usr/bin/env bash
# Builds the WebAssembly package (wasm/) and tests it in three runtimes, on
# the same corpus as the Node.js package (inputs signed by the agentsig CLI,
# npm jose + canonicalize, the A2A JS SDK and npm web-bot-auth; tampered
# ones; bad input), the reports compared with the CLI's --json:
#   - Node.js's own WebAssembly (node:test),
#   - workerd, the Cloudflare Workers runtime (npm `workerd`), also running
#     examples/workers (the Web Bot Auth gate and the signing agent),
#   - headless Chromium (Debian `chromium`) on a test page from loopback,
#     and the inspector page (inspector/): its rendered verdicts equal
#     `agentsig inspect --json` for valid and tampered inputs of every kind.
# Then prints the benches (never timed assertions). Cold start: the
# toolchain (Debian packages, wasm-bindgen-cli from crates.io), the build,
# the npm packages the tests compare against.
#
# Usage: scripts/wasm-test.sh [--no-bench]
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

scripts/wasm-toolchain.sh
scripts/wasm-build.sh

# The CLI the corpus is checked against (the project's own toolchain).
if [ -z "${AGENTSIG_BIN:-}" ] && [ ! -x target/debug/agentsig ] && [ ! -x target/release/agentsig ]; then
  cargo build --bin agentsig
fi

echo "== npm install (wasm/: the peers and workerd, for the tests only)"
# workerd ships its binary in an optional dependency; no install script runs.
npm install --prefix wasm --no-audit --no-fund --ignore-scripts >/dev/null

echo "== node --test (Node.js, workerd, headless Chromium, examples/workers, the inspector page)"
corpus=$(mktemp -d)/corpus.json
node wasm/test/make-corpus.mjs "$corpus"
AGENTSIG_WASM_CORPUS="$corpus" node --test --test-concurrency=1 \
  wasm/test/node.test.mjs wasm/test/workerd.test.mjs wasm/test/chromium.test.mjs wasm/test/examples.test.mjs \
  wasm/test/inspector.test.mjs

if [ "${1:-}" != "--no-bench" ]; then
  echo "== benches in Node.js and workerd (printed; never a timed test; 1 s per bench)"
  node wasm/bench/bench.mjs 1
fi
echo "== scripts/wasm-test.sh done in $(( $(date +%s) - start )) s"
