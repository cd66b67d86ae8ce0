#!/usr/bin/env bash
# Builds the `brain` CLI for one target and puts it where the app bundle's sidecar entry
# (`bundle.externalBin` = "binaries/brain" in src-tauri/tauri.macos.conf.json) looks for
# it: src-tauri/binaries/brain-<target triple>. Brain.app then ships it as
# Contents/MacOS/brain, next to the app's own binary, built from the same commit.
#
#   scripts/build-sidecar.sh                           # the host's triple
#   scripts/build-sidecar.sh aarch64-apple-darwin      # one target (rustup target add it first)
#   scripts/build-sidecar.sh universal-apple-darwin    # both Mac architectures, joined by lipo
#
# On macOS `cargo tauri build` and `cargo tauri dev` run it first (beforeBuildCommand,
# beforeDevCommand) with TAURI_ENV_TARGET_TRIPLE, and TAURI_ENV_DEBUG=true for a debug app,
# which gets a debug CLI. Release otherwise. Prints each file it wrote.
set -euo pipefail
cd "$(dirname "$0")/.."

host=$(rustc -vV | sed -n 's/^host: //p')
triple=${1:-${TAURI_ENV_TARGET_TRIPLE:-$host}}
profile=release
[[ ${TAURI_ENV_DEBUG:-} == true ]] && profile=debug

if [[ $triple == *-apple-darwin ]]; then
  # The CLI must run wherever the app does: the bundle's minimum macOS, read from the one
  # place that sets it.
  min_macos=$(sed -n 's/.*"minimumSystemVersion": *"\([^"]*\)".*/\1/p' src-tauri/tauri.conf.json)
  export MACOSX_DEPLOYMENT_TARGET="${MACOSX_DEPLOYMENT_TARGET:-$min_macos}"
fi

target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
out=src-tauri/binaries
mkdir -p "$out"

# Builds brain for $1 and prints where cargo put it. The host's own triple is built without
# --target, so it shares target/<profile>/ (and its compiled dependencies) with the app.
build() {
  local t=$1 flags=(--locked -p brain --bin brain) dir
  [[ $profile == release ]] && flags+=(--release)
  if [[ $t == "$host" ]]; then
    dir="$target_dir/$profile"
  else
    flags+=(--target "$t")
    dir="$target_dir/$t/$profile"
  fi
  echo "build-sidecar: cargo build ${flags[*]}" >&2
  cargo build "${flags[@]}" >&2
  echo "$dir/brain"
}

place() { # FILE TRIPLE: copy FILE to the sidecar's name for TRIPLE
  install -m 0755 "$1" "$out/brain-$2"
  echo "$out/brain-$2"
}

if [[ $triple == universal-apple-darwin ]]; then
  # `tauri build --target universal-apple-darwin` builds the app once per architecture (each
  # build copies its own sidecar) and bundles the universal one.
  arm=$(build aarch64-apple-darwin)
  intel=$(build x86_64-apple-darwin)
  place "$arm" aarch64-apple-darwin
  place "$intel" x86_64-apple-darwin
  lipo -create -output "$out/brain-universal-apple-darwin" "$arm" "$intel"
  chmod 0755 "$out/brain-universal-apple-darwin"
  echo "$out/brain-universal-apple-darwin"
else
  place "$(build "$triple")" "$triple"
fi
