#!/usr/bin/env bash
# Builds Brain.app and its .dmg on a Mac, with the `brain` CLI inside (Contents/MacOS/brain,
# the sidecar that scripts/build-sidecar.sh builds), then checks what it built: the CLI is
# there for every architecture and runs, the signature verifies, the disk image verifies.
#
#   scripts/macos-bundle.sh                          # this Mac's architecture
#   scripts/macos-bundle.sh universal-apple-darwin   # Apple silicon + Intel (both rustup targets)
#
# Signing and notarization use what is in the environment (the release workflow passes the
# GitHub secrets of the same names; empty counts as unset):
#   APPLE_CERTIFICATE, APPLE_CERTIFICATE_PASSWORD  a "Developer ID Application" .p12, base64
#   APPLE_SIGNING_IDENTITY                          optional; else taken from the certificate
#   APPLE_ID, APPLE_PASSWORD, APPLE_TEAM_ID         notarization (an app-specific password)
# Without a certificate the app is signed ad hoc (a complete signature, no identity: macOS
# asks once before the first launch) and each skipped step is a notice in the CI log.
# Prints the bundle folder last (and sets the step output `bundle` on GitHub Actions).
set -euo pipefail
cd "$(dirname "$0")/.."

[[ $(uname -s) == Darwin ]] || { echo "macos-bundle: needs macOS" >&2; exit 2; }
cargo tauri --version >/dev/null 2>&1 || {
  echo "macos-bundle: no 'cargo tauri': cargo install tauri-cli --version '^2' --locked" >&2
  exit 2
}

notice() { # one line for a person; a notice annotation on GitHub Actions
  if [[ -n ${GITHUB_ACTIONS:-} ]]; then echo "::notice title=macos-bundle::$*"; else echo "macos-bundle: $*" >&2; fi
}

for v in APPLE_CERTIFICATE APPLE_CERTIFICATE_PASSWORD APPLE_SIGNING_IDENTITY APPLE_ID \
  APPLE_PASSWORD APPLE_TEAM_ID APPLE_API_KEY APPLE_API_ISSUER APPLE_API_KEY_PATH; do
  [[ -n ${!v:-} ]] || unset "$v"
done
# tauri imports the certificate only with its password; one without the other would leave
# the app unsigned and fail at `codesign --verify` below, far from the cause.
if [[ -n ${APPLE_CERTIFICATE:-} && -z ${APPLE_CERTIFICATE_PASSWORD:-} ]]; then
  notice "APPLE_CERTIFICATE is set but APPLE_CERTIFICATE_PASSWORD is not: signing ad hoc instead"
  unset APPLE_CERTIFICATE
fi
if [[ -n ${APPLE_CERTIFICATE:-} ]]; then
  if [[ -n ${APPLE_ID:-} || -n ${APPLE_API_KEY:-} ]]; then
    echo "macos-bundle: signing with the Developer ID certificate, then notarizing" >&2
  else
    notice "no APPLE_ID / APPLE_PASSWORD / APPLE_TEAM_ID: signed, not notarized"
  fi
else
  notice "no APPLE_CERTIFICATE: signed ad hoc, not notarized (Gatekeeper asks before the first launch)"
  unset APPLE_SIGNING_IDENTITY APPLE_ID APPLE_PASSWORD APPLE_API_KEY
  export APPLE_SIGNING_IDENTITY=-
fi

triple=${1:-}
args=(tauri build --ci --bundles "app,dmg")
[[ -n $triple ]] && args+=(--target "$triple")
# beforeBuildCommand (src-tauri/tauri.macos.conf.json) builds the sidecar for the same target.
(cd src-tauri && cargo "${args[@]}")

target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
bundle="$target_dir/${triple:+$triple/}release/bundle"
app="$bundle/macos/Brain.app"
cli="$app/Contents/MacOS/brain"

[[ -x $cli ]] || { echo "macos-bundle: $cli is missing: the CLI is not in the bundle" >&2; exit 1; }
case ${triple:-$(uname -m)} in
  universal-apple-darwin) want="x86_64 arm64" ;;
  x86_64*) want="x86_64" ;;
  *) want="arm64" ;;
esac
for bin in "$cli" "$app/Contents/MacOS/brain-app"; do
  archs=$(lipo -archs "$bin")
  for a in $want; do
    [[ " $archs " == *" $a "* ]] || { echo "macos-bundle: $bin has [$archs], lacks $a" >&2; exit 1; }
  done
done
echo "macos-bundle: $("$cli" --version) in the bundle ($(lipo -archs "$cli"))" >&2
# The bundled CLI works on its own: a keyword search of the example brain, in a scratch data dir.
scratch=$(mktemp -d)
touch "$scratch/config.toml"
BRAIN_DATA_DIR="$scratch/data" BRAIN_CONFIG="$scratch/config.toml" \
  "$cli" --dir examples/brain search "gitignore patterns" --mode bm25 --no-daemon --top 1 >"$scratch/hit"
grep -q '^\[1\] ' "$scratch/hit" || { echo "macos-bundle: the bundled CLI found nothing" >&2; exit 1; }
rm -rf "$scratch"
codesign --verify --deep --strict "$app"
codesign -dv "$app" 2>&1 | grep -E '^(Authority|Signature|TeamIdentifier)=' | sed 's/^/macos-bundle: /' >&2 || true
for dmg in "$bundle"/dmg/*.dmg; do
  hdiutil verify -quiet "$dmg"
  echo "macos-bundle: $dmg verified" >&2
done
[[ -n ${GITHUB_OUTPUT:-} ]] && echo "bundle=$bundle" >>"$GITHUB_OUTPUT"
echo "$bundle"
