#!/usr/bin/env bash
# The crash loops of tests/it/faults.rs, long: SIGKILL `brain index` at random moments N
# times (every third kill also cuts the WAL short) and `brain serve` while it embeds and
# answers N/2 times, checking PRAGMA integrity_check and the FTS index after each, then
# that the next run completes and finds every sampled note. Prints the seed of each loop
# (replay with BRAIN_CRASH_SEED=...).
#
#   scripts/crash-loop.sh [N]      # default 50
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50}
export BRAIN_CRASH_LOOPS=$n
if [[ -z ${BRAIN_TEST_MODEL_DIR:-} ]]; then
  BRAIN_TEST_MODEL_DIR=$(scripts/test-model.sh)
  export BRAIN_TEST_MODEL_DIR
fi
started=$(date +%s)
cargo test --test it faults::kill_9 -- --nocapture --test-threads 1 2>&1 |
  grep -E "seed|kills landed|^test |test result|panicked|integrity"
echo "crash loops: $n kills of brain index, $(((n + 1) / 2)) of brain serve, in $(($(date +%s) - started)) s"
