#!/usr/bin/env bash
# Installs what the WebAssembly package (wasm/) needs to build and test, and
# prints the environment to build it with. Idempotent: each step is skipped
# when its tool is already there.
#
# - Debian's rustc-web / cargo-web / rust-web-src: a rustc with the standard
#   library's sources, so `-Zbuild-std` can build std for
#   wasm32-unknown-unknown (the project's own toolchain has no wasm32 std
#   and none can be downloaded here). The native build keeps its toolchain.
# - lld: wasm-ld, the linker.
# - chromium: the headless browser the page tests run in.
# - wasm-bindgen-cli at exactly the wasm-bindgen crate's version in
#   Cargo.lock (the CLI refuses a module built by another version), from
#   crates.io into a cache directory ($WASM_TOOLS, default target/wasm-tools).
#
# Usage: scripts/wasm-toolchain.sh            install
#        eval "$(scripts/wasm-toolchain.sh --env)"  also export the build env
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WASM_TOOLS=${WASM_TOOLS:-$ROOT/target/wasm-tools}

if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi

need=()
dpkg -s rustc-web >/dev/null 2>&1 || need+=(rustc-web)
dpkg -s cargo-web >/dev/null 2>&1 || need+=(cargo-web)
dpkg -s rust-web-src >/dev/null 2>&1 || need+=(rust-web-src)
command -v wasm-ld >/dev/null 2>&1 || need+=(lld)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# clang with its wasm32 target: ring's build compiles its C parts for
# wasm32 with it.
command -v clang >/dev/null 2>&1 || need+=(clang)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing ${need[*]} (Debian)" >&2
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

# Debian's rustc and cargo from those packages, not the rustup ones on PATH.
DEB_CARGO=$(dpkg -L cargo-web | grep -E '/bin/cargo(-[0-9.]+)?$' | head -1)
DEB_RUSTC=$(dpkg -L rustc-web | grep -E '/bin/rustc(-[0-9.]+)?$' | head -1)
[ -x "$DEB_CARGO" ] && [ -x "$DEB_RUSTC" ] || { echo "no Debian cargo/rustc found" >&2; exit 2; }

WBG_VERSION=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
[ -n "$WBG_VERSION" ] || { echo "wasm-bindgen is not in Cargo.lock" >&2; exit 2; }
if ! "$WASM_TOOLS/bin/wasm-bindgen" --version 2>/dev/null | grep -q " $WBG_VERSION\$"; then
  echo "== cargo install wasm-bindgen-cli $WBG_VERSION into $WASM_TOOLS (minutes)" >&2
  # Its own lock file first; where the registry index lacks a version it
  # names (a mirror behind crates.io), the newest compatible versions.
  cargo install --locked --quiet --root "$WASM_TOOLS" --version "=$WBG_VERSION" wasm-bindgen-cli >&2 ||
    cargo install --quiet --root "$WASM_TOOLS" --version "=$WBG_VERSION" wasm-bindgen-cli >&2
fi

if [ "${1:-}" = "--env" ]; then
  echo "export WASM_CARGO='$DEB_CARGO'"
  echo "export WASM_RUSTC='$DEB_RUSTC'"
  echo "export WASM_BINDGEN='$WASM_TOOLS/bin/wasm-bindgen'"
fi
