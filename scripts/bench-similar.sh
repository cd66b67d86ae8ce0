#!/usr/bin/env bash
# Benchmarks of `brain similar` (#12), whole process, answered by a warm `brain serve`:
#   1. a new four-line draft (scripts/bench-drafts/four-lines.md, one passage, which takes the
#      queries' few-token pass), a word changed each run so that it is never cached,
#   2. a new 30-line draft (thirty-lines.md, three passages), a word changed in each passage
#      each run: every run embeds all three,
#   3. each 30-line draft checked again right after, unchanged (its passages from the cache),
#   4. `brain similar --all` (near-duplicate clusters across the brain).
# Usage: BENCH_MODEL_DIR=$(scripts/test-model.sh) scripts/bench-similar.sh [path/to/brain]
#        BENCH_CORPUS=folder (default ../shared/corpora/tldr: 7,426 pages)
#        BENCH_DATA=folder   (a data dir already indexed for that corpus with the model:
#                             reused as it is; else one is built in a temp dir, ~3 min for tldr)
#        BENCH_RUNS=n        (new drafts of each size timed, default 11; the test suite runs 2)
#        BENCH_ORT_PYTHON=python (one with onnx, onnxruntime, safetensors, tokenizers, numpy:
#                             then ONNX Runtime embeds the 30-line draft's passages too, in the
#                             same run, through scripts/ort_reference.py --passages)
# Needs python3. Prints medians in milliseconds.
set -euo pipefail

[[ -n ${BENCH_MODEL_DIR:-} ]] || { echo "error: BENCH_MODEL_DIR is not set: give the test model's folder (BENCH_MODEL_DIR=\$(scripts/test-model.sh))" >&2; exit 2; }
source "$(dirname "$0")/bench-lib.sh"
corpus="${BENCH_CORPUS:-$here/../shared/corpora/tldr}"
[[ -d $corpus ]] || { echo "error: no corpus at $corpus: set BENCH_CORPUS to a folder of notes" >&2; exit 2; }
corpus="$(realpath "$corpus")"
# The ONNX Runtime step runs with the caller's HOME, where a `pip --user` install lives.
home="${HOME:-}"

mkdir -p "$work/home" "$work/run" "$work/config"
export HOME="$work/home" XDG_RUNTIME_DIR="$work/run" XDG_CONFIG_HOME="$work/config"
export BRAIN_DIR="$corpus" BRAIN_DATA_DIR="${BENCH_DATA:-$work/data}" BRAIN_MODEL=all-minilm-l6-v2
unset BRAIN_CONFIG BRAIN_NO_DAEMON
if [[ -z ${BENCH_DATA:-} ]]; then
  echo "indexing $corpus with the model (minutes) ..." >&2
  "$bin" model import all-minilm-l6-v2 "$BENCH_MODEL_DIR" >/dev/null
  index_quietly
fi

start_backend "watcher:   on"

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

four = open(os.path.join(drafts, "four-lines.md"), "rb").read()
thirty = open(os.path.join(drafts, "thirty-lines.md"), "rb").read()
# Each run's drafts differ from every other's in each passage, so none is cached or stored.
stamp = int(time.time())
def word(i):
    return f"benchword{stamp}x{i}".encode()
def fresh_four(i):
    return four.replace(b"To extract", b"To " + word(i))
def fresh(i):
    return thirty.replace(b"Copy a file", b"Copy a " + word(i)).replace(
        b"Generate a key", b"Generate a " + word(i)).replace(b"Permission denied", word(i) + b" denied")
similar = ["similar", "-", "--json", "--no-sync"]
timed(similar, fresh_four(-1))
runs = int(os.environ.get("BENCH_RUNS", "11"))
small = [timed(similar, fresh_four(i)) for i in range(runs)]
new, again = [], []
for i in range(runs):
    new.append(timed(similar, fresh(i)))
    again.append(timed(similar, fresh(i)))
every = [timed(["similar", "--all", "--json", "--no-sync"]) for _ in range(3)]
print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
print(f"new four-line draft, 1 passage embedded (median of {len(small)}): {statistics.median(small):.1f} ms")
print(f"new 30-line draft, 3 passages embedded (median of {len(new)}): {statistics.median(new):.1f} ms (min {min(new):.1f}, max {max(new):.1f})")
print(f"each 30-line draft again, passages cached (median of {len(again)}): {statistics.median(again):.1f} ms")
print(f"similar --all (median of {len(every)}): {statistics.median(every) / 1000:.2f} s")
PY

if [[ -n ${BENCH_ORT_PYTHON:-} ]]; then
  # The draft's passages as brain cuts them: a one-note brain, indexed by keywords alone.
  mkdir -p "$work/draft/notes"
  cp "$here/scripts/bench-drafts/thirty-lines.md" "$work/draft/notes/"
  # Keywords alone: the new data dir holds no model, and passages are cut without one.
  BRAIN_DIR="$work/draft/notes" BRAIN_DATA_DIR="$work/draft/data" index_quietly
  python3 - "$work/draft/data" "$work/draft/passages.json" <<'PY'
import glob, json, sqlite3, sys
db = glob.glob(f"{sys.argv[1]}/indexes/*/brain.sqlite")[0]
texts = [r[0] for r in sqlite3.connect(db).execute("SELECT text FROM chunks ORDER BY seq")]
json.dump(texts, open(sys.argv[2], "w"))
PY
  HOME="$home" "$BENCH_ORT_PYTHON" "$here/scripts/ort_reference.py" "$BENCH_MODEL_DIR" --passages "$work/draft/passages.json" | tail -n 1
fi
