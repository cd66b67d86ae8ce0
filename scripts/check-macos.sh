#!/usr/bin/env bash
# Type-checks the whole workspace (library, CLI, tests, the app) for Apple silicon from
# Linux: `cargo check --target aarch64-apple-darwin`, so the code behind
# `cfg(target_os = "macos")` (Metal, the menu bar, the login item, the app's panel) is
# compiled by rustc on every test run and not first on a macOS runner.
#
# Nothing is linked and no C is compiled: the C sources of a few dependencies (SQLite,
# Oniguruma, objc2's exception helper) need Apple's SDK, so their build scripts are handed a
# compiler and archiver that write empty outputs, which `cargo check` never reads. The
# Rust of every crate, brain's and its dependencies', is checked for real.
#
# Installs the target's standard library with rustup once. Where rustup cannot fetch it,
# says so and exits 0, unless BRAIN_REQUIRE_MACOS_CHECK=1 (then that is a failure).
set -euo pipefail
cd "$(dirname "$0")/.."

target=aarch64-apple-darwin
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
  if ! log=$(rustup target add "$target" 2>&1); then
    echo "check-macos: skipped: rustup could not install $target: $(tail -n1 <<<"$log")" >&2
    [[ ${BRAIN_REQUIRE_MACOS_CHECK:-} == 1 ]] && exit 1
    exit 0
  fi
fi

stubs=$(mktemp -d)
sidecar=src-tauri/binaries/brain-$target
made_sidecar=
cleanup() {
  rm -rf "$stubs"
  [[ -n $made_sidecar ]] && rm -f "$sidecar"
  rmdir src-tauri/binaries 2>/dev/null || true
}
trap cleanup EXIT

# A compiler that leaves an empty object where `-o` says, and an archiver that leaves an
# empty archive: enough for build scripts whose outputs only a linker would read.
cat >"$stubs/cc" <<'EOF'
#!/usr/bin/env bash
out= prev=
for arg in "$@"; do
  [[ $prev == -o ]] && out=$arg
  prev=$arg
done
[[ -n $out ]] && : >"$out"
exit 0
EOF
cat >"$stubs/ar" <<'EOF'
#!/usr/bin/env bash
for arg in "$@"; do
  case $arg in *.a) printf '!<arch>\n' >"$arg" ;; esac
done
exit 0
EOF
chmod +x "$stubs/cc" "$stubs/ar"

# Tauri's build step insists that the sidecar the bundle ships exists (the gitignored
# binaries/ folder, which scripts/build-sidecar.sh fills for a real build).
if [[ ! -e $sidecar ]]; then
  mkdir -p src-tauri/binaries
  : >"$sidecar"
  made_sidecar=1
fi

export CC_aarch64_apple_darwin="$stubs/cc" CXX_aarch64_apple_darwin="$stubs/cc"
export AR_aarch64_apple_darwin="$stubs/ar"
cargo check --workspace --all-targets --locked --target "$target" --quiet
echo "check-macos: the workspace type-checks for $target"
