#!/usr/bin/env bash
# Benchmarks of `brain similar` (#12), whole process, answered by a warm `brain serve`:
#   1. a four-line draft whose passage the brain already holds (scripts/bench-drafts/four-lines.md),
#   2. a new 30-line draft (thirty-lines.md, three passages), a word changed each run so that
#      no passage is in the backend's draft cache: every run embeds all three,
#   3. the same draft checked again unchanged (its passages come from the cache),
#   4. `brain similar --all` (near-duplicate clusters across the brain).
# Usage: BENCH_MODEL_DIR=$(scripts/test-model.sh) scripts/bench-similar.sh [path/to/brain]
#        BENCH_CORPUS=folder (default ../shared/corpora/tldr: 7,426 pages)
#        BENCH_DATA=folder   (a data dir already indexed for that corpus with the model:
#                             reused as it is; else one is built in a temp dir, ~3 min for tldr)
#        BENCH_ORT_PYTHON=python (one with onnx, onnxruntime, safetensors, tokenizers, numpy:
#                             then ONNX Runtime embeds the 30-line draft's passages too, in the
#                             same run, through scripts/ort_reference.py --passages)
# Needs python3. Prints medians in milliseconds.
set -euo pipefail

[[ -n ${BENCH_MODEL_DIR:-} ]] || { echo "error: BENCH_MODEL_DIR is not set: give the test model's folder (BENCH_MODEL_DIR=\$(scripts/test-model.sh))" >&2; exit 2; }
source "$(dirname "$0")/bench-lib.sh"
corpus="$(realpath -m "${BENCH_CORPUS:-$here/../shared/corpora/tldr}")"
[[ -d $corpus ]] || { echo "error: no corpus at $corpus: set BENCH_CORPUS to a folder of notes" >&2; exit 2; }

mkdir -p "$work/home" "$work/run" "$work/config"
export HOME="$work/home" XDG_RUNTIME_DIR="$work/run" XDG_CONFIG_HOME="$work/config"
export BRAIN_DIR="$corpus" BRAIN_DATA_DIR="${BENCH_DATA:-$work/data}" BRAIN_MODEL=all-minilm-l6-v2
unset BRAIN_CONFIG BRAIN_NO_DAEMON
if [[ -z ${BENCH_DATA:-} ]]; then
  echo "indexing $corpus with the model (minutes) ..." >&2
  "$bin" model import all-minilm-l6-v2 "$BENCH_MODEL_DIR" >/dev/null
  "$bin" index >/dev/null 2>&1
fi

start_backend "backend:   running"

python3 - "$bin" "$here/scripts/bench-drafts" <<'PY'
import os, statistics, subprocess, sys, time

brain, drafts = sys.argv[1:3]

def timed(args, stdin=None):
    start = time.perf_counter()
    r = subprocess.run([brain, *args], input=stdin, capture_output=True)
    took = (time.perf_counter() - start) * 1000
    if r.returncode != 0:
        sys.exit(f"brain {' '.join(args)} failed: {r.stderr.decode()}")
    return took

four = os.path.join(drafts, "four-lines.md")
thirty = open(os.path.join(drafts, "thirty-lines.md"), "rb").read()
timed(["similar", four, "--json", "--no-sync"])
small = [timed(["similar", four, "--json", "--no-sync"]) for _ in range(20)]
# Each run's draft differs in its first passage's first line and in the other two, so
# none of its passages is cached or stored.
stamp = int(time.time())
def fresh(i):
    word = f"benchword{stamp}x{i}".encode()
    return thirty.replace(b"Copy a file", b"Copy a " + word).replace(
        b"Generate a key", b"Generate a " + word).replace(b"Permission denied", word + b" denied")
new = [timed(["similar", "-", "--json", "--no-sync"], fresh(i)) for i in range(11)]
again = [timed(["similar", "-", "--json", "--no-sync"], fresh(0)) for _ in range(11)]
every = [timed(["similar", "--all", "--json", "--no-sync"]) for _ in range(3)]
print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
print(f"four-line draft, passage stored (median of {len(small)}): {statistics.median(small):.1f} ms")
print(f"new 30-line draft, 3 passages embedded (median of {len(new)}): {statistics.median(new):.1f} ms (min {min(new):.1f}, max {max(new):.1f})")
print(f"the same draft again, passages cached (median of {len(again)}): {statistics.median(again):.1f} ms")
print(f"similar --all (median of {len(every)}): {statistics.median(every) / 1000:.2f} s")
PY

if [[ -n ${BENCH_ORT_PYTHON:-} ]]; then
  # The draft's passages as brain cuts them: a one-note brain, indexed by keywords alone.
  mkdir -p "$work/draft/notes"
  cp "$here/scripts/bench-drafts/thirty-lines.md" "$work/draft/notes/"
  BRAIN_DIR="$work/draft/notes" BRAIN_DATA_DIR="$work/draft/data" BRAIN_MODEL= "$bin" index >/dev/null 2>&1
  python3 - "$work/draft/data" "$work/draft/passages.json" <<'PY'
import glob, json, sqlite3, sys
db = glob.glob(f"{sys.argv[1]}/indexes/*/brain.sqlite")[0]
texts = [r[0] for r in sqlite3.connect(db).execute("SELECT text FROM chunks ORDER BY seq")]
json.dump(texts, open(sys.argv[2], "w"))
PY
  "$BENCH_ORT_PYTHON" "$here/scripts/ort_reference.py" "$BENCH_MODEL_DIR" --passages "$work/draft/passages.json" | tail -n 1
fi
