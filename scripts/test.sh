#!/usr/bin/env bash
# Run the whole test suite, including the interop tests against independent
# implementations (PyPI and npm packages), which this script installs into
# .venv/ and tests/interop/node/node_modules/ (both git-ignored).
#
# Usage: bash scripts/test.sh [extra cargo test args]
#        AGENTSIG_PEERS_ONLY=1 bash scripts/test.sh   (install the peers only)
set -euo pipefail
cd "$(dirname "$0")/.."

# Independent implementations the interop tests run against.
PY_PACKAGES=(
  "rfc8785==0.1.4"                    # JCS (Trail of Bits)
  "joserfc>=1.6"                      # JOSE: detached JWS, JWT
  "PyJWT[crypto]>=2.10"               # JWT: delegation tokens
  "http-message-signatures==3.0.0"    # RFC 9421 (pyauth), the strictest peer
  "http-sfv>=0.9.9"                   # RFC 8941 structured fields, used by the RFC 9421 helper
  "cryptography>=42"
  "a2a-sdk[signing]==1.3.*"           # A2A Agent Card signatures (A2A interop)
  "jsonschema>=4.18"                  # validates every --json report against docs/report.schema.json (Draft 2020-12)
  # The Python package (python/): its build backend and its tests.
  "maturin>=1.7,<2"                   # builds the PyO3 extension (abi3 wheel)
  "pytest>=8"
  "uvicorn>=0.30"                     # a real ASGI server for the middleware test
  "starlette>=0.37"                   # the ASGI app the middleware wraps
  "httpx>=0.27"                       # the client of the httpx auth class
)

# Say what is about to happen before the quiet minutes of installing and
# building: nothing is printed while pip, npm and cargo work.
echo "== scripts/test.sh: installing the test peers and tools, then building, then testing (several quiet minutes each)"
echo "-- PyPI into .venv/: ${PY_PACKAGES[*]%%[<>=\[]*}"
if [ ! -x .venv/bin/python3 ]; then
  python3 -m venv .venv
fi
.venv/bin/python3 -m pip install --quiet --disable-pip-version-check "${PY_PACKAGES[@]}"

if command -v npm >/dev/null 2>&1; then
  echo "-- npm into tests/interop/node_modules/: jose @a2a-js/sdk web-bot-auth http-message-sig ajv ajv-formats"
  npm install --silent --no-save --no-audit --no-fund --prefix tests/interop jose@6 @a2a-js/sdk@1.3 web-bot-auth@0.1 http-message-sig@0.3 ajv@8 ajv-formats@3
fi
# AGENTSIG_PEERS_ONLY=1: install the peers and stop (.ci/run does this in
# the background while it builds; the second call above is then a quick
# check that finds everything installed).
if [ "${AGENTSIG_PEERS_ONLY:-}" = 1 ]; then
  exit 0
fi

# The tests call `python3`: make it the venv's interpreter.
export PATH="$PWD/.venv/bin:$PATH"
# Interop tests fail instead of skipping when a peer implementation is missing.
export AGENTSIG_REQUIRE_INTEROP=1

# The Python package: one release build of the extension (pip runs maturin's
# PEP 517 backend, the venv's maturin above, found on PATH, which shares the
# workspace's target/), installed into the venv its tests run in.
echo "-- the Python package (python/): a release build of its extension, installed into .venv/"
python3 -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps --no-build-isolation ./python

# The Node.js package (node/): `npm install` there installs its development
# tools (@napi-rs/cli, typescript, jose, express, web-bot-auth, @a2a-js/sdk,
# http-message-sig) and runs its install
# script, the release build of the addon (node/scripts/build.js, in the
# workspace's target/).
node_ok=0
if command -v npm >/dev/null 2>&1; then
  echo "-- the Node.js package (node/): its development tools into node/node_modules/ and a release build of its addon"
  npm install --silent --no-audit --no-fund --prefix node
  node_ok=1
fi

log=$(mktemp)
# The Rust tests get a temporary directory of their own: each test removes
# what it creates there (tests/tmp_support), and anything left is reported
# and fails the run.
rust_tmp=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$rust_tmp"' EXIT
# Doc tests are not part of --all-targets, so run them first, then the rest.
TMPDIR="$rust_tmp" cargo test --doc "$@" 2>&1 | tee -a "$log"
TMPDIR="$rust_tmp" cargo test --all-targets --no-fail-fast "$@" 2>&1 | tee -a "$log"
# The WebAssembly package's crate (wasm/, not a default member), built
# natively: its own tests, such as the allocations of the hot call counted.
TMPDIR="$rust_tmp" cargo test -p agentsig-wasm --no-fail-fast 2>&1 | tee -a "$log"
tmp_left=$(find "$rust_tmp" -mindepth 1 -maxdepth 1 | wc -l)
if [ "$tmp_left" -ne 0 ]; then
  echo "agentsig: the Rust tests left $tmp_left entries in their TMPDIR:" >&2
  find "$rust_tmp" -mindepth 1 -maxdepth 1 -printf '  %f\n' >&2
fi

# The Python package's tests (python/tests): counted in the closing line;
# a failure fails the script after that line is printed.
pylog=$(mktemp)
trap 'rm -f "$log" "$pylog"; rm -rf "$rust_tmp"' EXIT
pytest_rc=0
python3 -m pytest python/tests -q -p no:cacheprovider 2>&1 | tee "$pylog" || pytest_rc=$?

# The Node.js package's tests (node/test, node:test): counted in the closing
# line from the TAP reporter's "# pass N" and "# fail N" lines.
nodelog=$(mktemp)
trap 'rm -f "$log" "$pylog" "$nodelog"' EXIT
node_rc=0
if [ "$node_ok" -eq 1 ]; then
  (cd node && node --test --test-reporter=tap test/*.test.js test/*.test.mjs) >"$nodelog" 2>&1 || node_rc=$?
  grep -E '^# (tests|pass|fail)' "$nodelog" || true
  if [ "$node_rc" -ne 0 ]; then grep -E '^ *not ok' -A12 "$nodelog" | head -200 || true; fi
else
  echo "node/: npm not found, the Node.js package's tests did not run"
  node_rc=1
fi
read -r node_passed node_failed < <(awk '/^# pass / { p = $3 } /^# fail / { f = $3 } END { print p + 0, f + 0 }' "$nodelog")
if [ "$node_rc" -ne 0 ] && [ "${node_failed:-0}" -eq 0 ]; then node_failed=1; fi

# One closing line for the whole run: the sum over every test binary,
# pytest's own summary ("N passed, M failed in Xs") and node:test's.
read -r passed failed < <(awk '/^test result:/ {
  for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i }
} END { print p + 0, f + 0 }' "$log")
read -r py_passed py_failed < <(tail -n 1 "$pylog" | awk '{
  for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^(failed|errors?)/) f += $i }
} END { print p + 0, f + 0 }')
if [ "$pytest_rc" -ne 0 ] && [ "${py_failed:-0}" -eq 0 ]; then py_failed=1; fi
echo "agentsig: $(( ${passed:-0} + ${py_passed:-0} + ${node_passed:-0} )) passed, $(( ${failed:-0} + ${py_failed:-0} + ${node_failed:-0} )) failed"
if [ "$tmp_left" -ne 0 ]; then exit 1; fi
if [ "$pytest_rc" -ne 0 ]; then exit "$pytest_rc"; fi
exit "$node_rc"
