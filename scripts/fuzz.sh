#!/usr/bin/env bash
# Fuzzes every parser that reads outside input (fuzz/fuzz_targets: note files, queries run
# against real FTS5, socket request lines, PATH:LINE:COUNT / --since / --where, SCHEMA.md)
# for SECONDS each with cargo-fuzz (libFuzzer + AddressSanitizer, nightly), starting from
# the seeds in fuzz/seeds. Prints executions and crashes per target; a crash's input lands
# in fuzz/artifacts/TARGET/ (reproduce: cargo +nightly fuzz run TARGET that-file), and each
# one found becomes a regression test in the normal suite.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     # default 60 s each, every target
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(note query request specs schema)
rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cd fuzz
cargo +nightly fuzz build -O || exit 2
failed=0
for t in "${targets[@]}"; do
  mkdir -p "target/corpus/$t"
  log="target/fuzz-$t.log"
  cargo +nightly fuzz run -O "$t" "target/corpus/$t" "seeds/$t" -- \
    -max_total_time="$seconds" -print_final_stats=1 >"$log" 2>&1
  rc=$?
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  # slow-unit-* files are inputs that took over 10 s of wall time (a stopped or starved
  # process writes them too); they are reported apart, not counted as crashes.
  crashes=$(find "artifacts/$t" -type f ! -name 'slow-unit-*' 2>/dev/null | wc -l)
  slow=$(find "artifacts/$t" -type f -name 'slow-unit-*' 2>/dev/null | wc -l)
  printf '%-8s %10s executions in %ss, exit %s, %s crash inputs (and %s slow) in fuzz/artifacts/%s\n' \
    "$t" "${execs:-?}" "$seconds" "$rc" "$crashes" "$slow" "$t"
  [[ $rc -eq 0 ]] || failed=1
done
exit $failed
