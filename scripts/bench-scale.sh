#!/usr/bin/env bash
# The scale benchmark: builds a 10k- and a 100k-note brain in a temp dir from the tldr pages
# in ../shared/corpora (recombined: each note is one page's text plus a passage of another,
# with frontmatter, a date, tags and a heading, in 60 folders of realistic depth), then
# prints for each size: cold index build, no-change sync, one-edit sync, DB size, the warm
# backend's RSS, query latency p50/p99 whole-process without a backend and warm (through
# the backend; for words new to it and for words it was asked before), and save-to-searchable (a new note written, until a search through the
# watching backend finds it). The last column is the ratio 100k/10k: the scaling.
#
# Vectors: every size is embedded with a stand-in embedder (`stand-in-hash-768`: hashed
# words, 768 dims, no meaning) behind the same Embedder trait, so the int8 scan, the exact
# re-rank, hybrid fusion and the backend's memory are measured at 100k in minutes; its
# query embedding costs ~0, so add the real model's (see `cargo bench --bench embed`).
# With --model DIR (a MiniLM folder, e.g. "$(scripts/test-model.sh)"), the 10k brain is
# embedded with the real model instead. --bin PATH measures that brain binary instead of
# building the release one (the test suite runs this script on tiny sizes that way, to keep
# it working; its figures mean nothing there).
#
#   scripts/bench-scale.sh [--model DIR] [--sizes "10000 100000"] [--bin PATH]
set -euo pipefail
model=""
sizes="10000 100000"
bin=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --model) model=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: scripts/bench-scale.sh [--model DIR] [--sizes \"10000 100000\"] [--bin PATH]" >&2; exit 2 ;;
  esac
done
# Paths given are read from where the script was called.
[[ -n $bin ]] && bin=$(realpath "$bin")
[[ -n $model ]] && model=$(realpath "$model")
cd "$(dirname "$0")/.."
corpus=../shared/corpora/tldr
[[ -d $corpus ]] || { echo "error: $corpus is missing" >&2; exit 2; }
if [[ -z $bin ]]; then
  cargo build --release --bin brain --quiet
  bin=$PWD/target/release/brain
fi
[[ -x $bin ]] || { echo "error: $bin is not an executable brain (--bin)" >&2; exit 2; }
work=$(mktemp -d)
# A backend started by serve_warm runs as `brain serve`, which pkill -f "$work" cannot
# match: stop it by its pid.
trap '[[ -n ${spid:-} ]] && kill "$spid" 2>/dev/null; pkill -f "$work" 2>/dev/null || true; rm -rf "$work"' EXIT
# A step that fails stops the run and says which, with brain's own words (its stderr goes
# to $errlog): a figure timed from a failed command would be a lie.
errlog=$work/stderr.log
set -E
trap 'echo "error: bench-scale.sh line $LINENO failed: $BASH_COMMAND" >&2; tail -n 5 "$errlog" >&2 2>/dev/null' ERR
echo "brain $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, work dir $work"
# This machine's speed drifts (1.5-2x within a day on the VM these figures were taken on):
# two figures that need none of brain's code say which runs compare.
calibrate() {
  python3 - "$bin" <<'PY'
import statistics, subprocess, sys, time
t = time.perf_counter()
s = 0
for i in range(3_000_000):
    s += i * i
cpu = (time.perf_counter() - t) * 1000
starts = []
for _ in range(21):
    t = time.perf_counter()
    subprocess.run([sys.argv[1], "--version"], stdout=subprocess.DEVNULL)
    starts.append((time.perf_counter() - t) * 1000)
print("calibration: a fixed Python loop %.0f ms; `brain --version` whole process %.1f ms p50"
      % (cpu, statistics.median(starts)))
PY
}
calibrate

ms() { echo $(($(date +%s%N) / 1000000)); }
# p50 and p99 (nearest rank) of the "round ms" lines on stdin, in ms: of every round, of
# the first (each query new to a backend) or of the later ones (asked before).
pct() { # [all|first|again]
  python3 -c "
import sys
which = sys.argv[1]
rows = [l.split() for l in sys.stdin.read().splitlines() if l.strip()]
xs = sorted(float(ms) for r, ms in rows if which == 'all' or (r == '1') == (which == 'first'))
pick = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))]
print('%.1f / %.1f' % (pick(0.5), pick(0.99)))" "${1:-all}"; }
# Runs each query three rounds (whole process), one "round ms" line per run. Timed from
# one Python process around each spawn (posix_spawn, the clock read in-process): timing
# with `date +%s%N` in the shell counted a `date` process start per query too, 2-3 ms on
# this machine (a `/bin/true` measured 3.3-4 ms that way, 0.7 ms this way).
queries() { # ARGS...
  python3 - "$bin" "$@" <<'PY'
import subprocess, sys, time
bin, args = sys.argv[1], sys.argv[2:]
qs = ["extract a tar archive", "list files by size", "git rebase interactive", "docker container logs",
      "compress a folder", "find files modified today", "ssh tunnel port", "kill a process by name",
      "show disk usage", "convert image format"]
for i in (1, 2, 3):
    for q in qs:
        s = time.perf_counter_ns()
        r = subprocess.run([bin, "search", q, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode != 0:
            sys.exit("error: brain search %r %s: %s" % (q, " ".join(args), r.stderr.decode(errors="replace").strip()))
        print(i, (time.perf_counter_ns() - s) / 1e6)
PY
}
# Starts `brain serve` (its pid in $spid) and waits until it is warm: after its first sync
# and its first load of the matrix (until then a query waits for them, seconds at 100k,
# which is start-up, not a query's cost).
serve_warm() { # LOG
  "$bin" serve >"$1" 2>&1 &
  spid=$!
  for _ in $(seq 1 100); do "$bin" status --json 2>/dev/null | grep -q '"backend": *{' && break; sleep 0.2; done
  for _ in $(seq 1 300); do "$bin" status --json 2>/dev/null | grep -q '"full_syncs": *[1-9]' && break; sleep 0.2; done
  "$bin" search "warm up" --no-sync >/dev/null 2>&1 || true
}

declare -A result
for n in $sizes; do
  root=$work/brain-$n data=$work/data-$n
  python3 - "$corpus" "$root" "$n" <<'PY'
import os, random, sys
corpus, root, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
pages = []
for dirpath, _, files in os.walk(corpus):
    for f in files:
        if f.endswith(".md") and f != "LICENSE.md":
            with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                pages.append((f[:-3], fh.read()))
pages.sort()
rng = random.Random(n)
folders = [f"area-{i:02d}" + ("" if i % 3 else f"/sub-{i % 7}") for i in range(60)]
for i in range(n):
    name, text = pages[i % len(pages)]
    other = pages[rng.randrange(len(pages))][1].split("\n\n")
    extra = "\n\n".join(other[1:3])
    folder = folders[i % len(folders)]
    os.makedirs(os.path.join(root, folder), exist_ok=True)
    body = text.split("\n", 1)[1] if text.startswith("#") else text
    note = (f"---\ntitle: \"{name} note {i}\"\ntags: [{rng.choice(['cli','ops','dev','net'])}, t{i % 97}]\n"
            f"created: 20{20 + i % 6}-{1 + i % 12:02d}-{1 + i % 28:02d}\n---\n"
            f"# {name} note {i}\n{body}\n\n## See also\n\n{extra}\n")
    with open(os.path.join(root, folder, f"{name}-{i}.md"), "w", encoding="utf-8") as fh:
        fh.write(note)
PY
  embedder=stand-in-hash-768
  [[ -n $model && $n -le 10000 ]] && embedder=all-minilm-l6-v2
  result[$n,embedder]=$embedder
  export BRAIN_DIR=$root BRAIN_DATA_DIR=$data BRAIN_MODEL=$embedder XDG_RUNTIME_DIR=$work/run-$n
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
  # Keywords first: sync costs without embedding. MiniLM is a model brain knows that this
  # fresh data dir does not hold yet (it is imported below when --model is given), so
  # these steps run keywords-only, as a brain without a model does.
  keywords=all-minilm-l6-v2
  s=$(ms); BRAIN_MODEL=$keywords "$bin" index >/dev/null 2>>"$errlog"; e=$(ms); result[$n,cold]=$((e - s))
  # The first sync after a build also checkpoints the build's WAL: the median of three is
  # what every later `brain search` without a backend pays.
  for i in 1 2 3; do
    s=$(ms); BRAIN_MODEL=$keywords "$bin" index >/dev/null 2>>"$errlog"; e=$(ms); echo $((e - s))
  done >"$work/nochange-$n"
  result[$n,nochange]=$(sort -n "$work/nochange-$n" | sed -n 2p)
  # What a sync's walk cannot go below: one `stat` per note (see calibrate()).
  s=$(ms); find "$root" -name '*.md' -printf '%T@ %s\n' >/dev/null; e=$(ms); result[$n,walk]=$((e - s))
  first=$(find "$root" -name '*.md' -print -quit)
  echo "edited line" >>"$first"
  s=$(ms); BRAIN_MODEL=$keywords "$bin" index >/dev/null 2>>"$errlog"; e=$(ms); result[$n,oneedit]=$((e - s))
  result[$n,bm25_cold]=$(BRAIN_MODEL=$keywords queries --mode bm25 --no-sync --no-daemon | pct)
  if [[ $embedder == all-minilm-l6-v2 ]]; then
    "$bin" model import all-minilm-l6-v2 "$model" >/dev/null
  fi
  s=$(ms); "$bin" index >/dev/null 2>>"$errlog"; e=$(ms); result[$n,embed]=$((e - s))
  echo "edited again" >>"$first"
  s=$(ms); "$bin" index >/dev/null 2>>"$errlog"; e=$(ms); result[$n,oneedit_vec]=$((e - s))
  result[$n,db]=$(du -sm "$data/indexes" | cut -f1)
  # The backend remembers each word's keyword scores until a note changes: the first round
  # of queries is what words new to it cost, the later rounds what words asked before cost
  # (as when the panel searches again on each keystroke). Hybrid gets a fresh backend.
  serve_warm "$work/serve-$n.log"
  out=$(queries --mode bm25)
  result[$n,bm25_warm_new]=$(pct first <<<"$out")
  result[$n,bm25_warm]=$(pct again <<<"$out")
  kill $spid; wait $spid 2>/dev/null || true
  serve_warm "$work/serve-$n.log"
  out=$(queries)
  result[$n,hyb_warm_new]=$(pct first <<<"$out")
  result[$n,hyb_warm]=$(pct again <<<"$out")
  result[$n,sem_warm]=$(queries --mode semantic | pct)
  result[$n,hyb_cold]=$(queries --no-sync --no-daemon | pct)
  result[$n,rss]=$(($(awk '/VmRSS/ {print $2}' "/proc/$spid/status") / 1024))
  word="zqfresh$n"
  printf -- "---\ntitle: fresh\n---\n# fresh\n\n%s\n" "$word" >"$root/area-00/fresh.md"
  s=$(ms)
  for _ in $(seq 1 200); do
    "$bin" search "$word" --mode bm25 --no-sync --json 2>/dev/null | grep -q fresh.md && break
    sleep 0.02
  done
  e=$(ms); result[$n,fresh]=$((e - s))
  # The same edit as above, seen by the backend's watcher: its sync reads only that file.
  word="zqedit$n"
  echo "$word" >>"$first"
  for _ in $(seq 1 200); do
    "$bin" search "$word" --mode bm25 --no-sync --json 2>/dev/null | grep -q "$(basename "$first")" && break
    sleep 0.02
  done
  result[$n,oneedit_watch]=$("$bin" status --json 2>/dev/null |
    python3 -c "import json, sys; print(json.load(sys.stdin)['last_sync']['took_ms'])" 2>/dev/null || echo n/a)
  kill $spid; wait $spid 2>/dev/null || true
done

set +e
trap - ERR
row() { # LABEL KEY UNIT
  local line a b
  line=$(printf '%-44s' "$1")
  for n in $sizes; do line+=$(printf ' %16s' "${result[$n,$2]:-n/a}${3:-}"); done
  a=${result[${sizes%% *},$2]:-}
  b=${result[${sizes##* },$2]:-}
  if [[ $a =~ ^[0-9.]+$ && $b =~ ^[0-9.]+$ && $a != 0 ]]; then
    line+=$(python3 -c "print(' %8.1fx' % ($b / $a))")
  elif [[ $a == *" / "* && $b == *" / "* ]]; then
    line+=$(python3 -c "a='$a'.split(' / ')[0]; b='$b'.split(' / ')[0]; print(' %8.1fx' % (float(b) / float(a)))")
  fi
  echo "$line"
}
header=$(printf '%-44s' "notes")
for n in $sizes; do header+=$(printf ' %16s' "$n"); done
echo
echo "$header    ratio"
row "embedder" embedder
row "cold index build (keywords), ms" cold
row "no-change sync (brain index), median of 3, ms" nochange
row "  (find with one stat per note, for scale), ms" walk
row "one-edit sync (brain index), ms" oneedit
row "one-edit sync by the backend's watcher, ms" oneedit_watch
row "index size on disk with vectors, MB" db
row "bm25 query, whole process, no backend, ms p50 / p99" bm25_cold
row "bm25 query, warm backend, new words, ms p50 / p99" bm25_warm_new
row "bm25 query, warm backend, words asked before" bm25_warm
row "semantic query, warm backend, ms p50 / p99" sem_warm
row "hybrid query, warm backend, new words" hyb_warm_new
row "hybrid query, warm backend, words asked before" hyb_warm
row "hybrid query, whole process, no backend, ms p50 / p99" hyb_cold
row "embedding the brain, ms" embed
row "one-edit brain index with vectors (sync + embed), ms" oneedit_vec
row "backend RSS, MB" rss
row "save to searchable (watcher), ms" fresh
echo
echo "stand-in-hash-768: hashed words, no meaning; its query embedding is ~0 ms, so a real model's"
echo "query embedding (MiniLM ~3 ms here) adds to its semantic and hybrid rows."
calibrate
