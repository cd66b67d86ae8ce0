#!/usr/bin/env bash
# Installs what the menu-bar app needs to build (Tauri's WebKitGTK stack), what its
# end-to-end test needs to run (Xvfb, WebKitWebDriver, xdotool, tauri-driver), and what the
# fault tests use (unshare, strace) and what the benchmark scripts' smoke tests run
# (hyperfine, pkill), on Debian or
# Ubuntu. Idempotent and quiet: it prints only what it installs. Runs as root or via sudo.
set -euo pipefail

packages=(
  build-essential pkg-config libssl-dev            # compiling
  libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev  # Tauri on Linux
  xvfb xauth webkit2gtk-driver xdotool curl jq     # the end-to-end test
  util-linux strace                                # the fault tests: unshare -n, traced sockets
  hyperfine procps                                 # scripts/bench-*: timing, cleanup
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    sudo=()
  elif command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "setup-app-deps: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  fi
  echo "setup-app-deps: installing ${missing[*]}"
  log=$(mktemp)
  apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -qq)
  # apt's chatter goes to a log that is shown only when something fails.
  if ! { "${apt[@]}" update && "${apt[@]}" install --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
fi

if ! command -v tauri-driver >/dev/null && [[ ! -x "${CARGO_HOME:-$HOME/.cargo}/bin/tauri-driver" ]]; then
  echo "setup-app-deps: installing tauri-driver"
  cargo install tauri-driver --locked --quiet
fi
