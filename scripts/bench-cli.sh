#!/usr/bin/env bash
# Whole-process timings of the `brain` binary over a copy of the tldr corpus (hyperfine).
# Usage: scripts/bench-cli.sh [runs]   (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}
command -v hyperfine >/dev/null || { echo "error: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 2; }
cargo build --release --quiet
bin=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/brain
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp -r ../shared/corpora/tldr "$tmp/tldr"
export BRAIN_DIR="$tmp/tldr" BRAIN_DATA_DIR="$tmp/data" HOME="$tmp" BRAIN_NO_DAEMON=1
hyperfine -N --runs 10 --prepare "rm -rf $tmp/data" "$bin index" --export-json "$tmp/cold.json" >/dev/null
"$bin" index >/dev/null
hyperfine -N --warmup 3 --runs "$runs" --export-json "$tmp/warm.json" \
  "$bin index" \
  "$bin search 'git commit' --mode bm25 --no-sync" \
  "$bin search 'git commit' --mode bm25" >/dev/null
python3 - "$tmp/cold.json" "$tmp/warm.json" <<'PY'
import json, statistics, sys
for path in sys.argv[1:]:
    for r in json.load(open(path))["results"]:
        name = r["command"].split("/")[-1]
        label = "cold index build" if path.endswith("cold.json") else name
        print(f"{label:55s} median {statistics.median(r['times'])*1000:7.1f} ms  (n={len(r['times'])})")
PY
