# Sourced by the bench-*.sh scripts that time a warm backend: sets `bin` (the brain binary
# given as $1, else the release build, built first) and `work` (a temp dir removed on exit,
# with the backend started as `$server` stopped first).
# shellcheck shell=bash
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-}"
if [[ -z "$bin" ]]; then
  (cd "$here" && cargo build --release --quiet -p brain --bin brain)
  target="$(cd "$here" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
  bin="$target/release/brain"
fi
bin="$(realpath "$bin")"

work="$(mktemp -d)"
server=""
cleanup() {
  if [[ -n "$server" ]]; then kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Starts `brain serve` in the background as `$server`, and waits until `brain status` shows
# the line matching $1 (the backend running, or its watcher on).
start_backend() {
  "$bin" serve 2>"$work/serve.stderr" &
  server=$!
  for _ in $(seq 1 500); do
    if "$bin" status 2>/dev/null | grep -q "$1"; then break; fi
    sleep 0.02
  done
  "$bin" status | grep -q "backend:   running" || { echo "brain serve did not start: $(cat "$work/serve.stderr")" >&2; exit 1; }
}

# `brain index`, its output kept in the work dir and shown only when it fails.
index_quietly() {
  "$bin" index >"$work/index.log" 2>&1 || { echo "brain index failed: $(tail -n 5 "$work/index.log")" >&2; exit 1; }
}
