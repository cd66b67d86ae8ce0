#!/usr/bin/env bash
# Benchmarks of the warm backend, on a temp copy of examples/brain:
#   1. whole-process `brain search` answered by a running `brain serve` (median of 20),
#   2. the same search with --no-daemon (the cold, in-process path),
#   3. time from saving a note to a search returning it (median of 20 saves).
# Usage: scripts/bench-backend.sh [path/to/brain]   (default: the release build)
#        BENCH_NOTES=2000 scripts/bench-backend.sh ...   (adds that many generated notes)
#        BENCH_MODEL_DIR=$(scripts/test-model.sh) scripts/bench-backend.sh ...
#          (imports all-minilm-l6-v2 from there first: the searches are then hybrid, and
#           the save timing also waits for the new passage's vector)
# Needs hyperfine and python3. Prints medians in milliseconds.
set -euo pipefail

command -v hyperfine >/dev/null || { echo "error: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 2; }
source "$(dirname "$0")/bench-lib.sh"

cp -r "$here/examples/brain" "$work/brain"
python3 - "$work/brain" "${BENCH_NOTES:-0}" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
words = "cache retry flag cleanup sqlite index latency budget review deploy rollback jitter".split()
for i in range(n):
    d = os.path.join(root, "bulk", f"{i // 500:02d}")
    os.makedirs(d, exist_ok=True)
    body = " ".join(words[(i * 7 + j) % len(words)] for j in range(120))
    with open(os.path.join(d, f"note-{i:05d}.md"), "w") as f:
        f.write(f"---\ntype: lore\ntags: [bulk]\n---\n# Bulk note {i}\n\n{body}\n")
PY
mkdir -p "$work/home" "$work/run" "$work/data" "$work/config"
export HOME="$work/home" XDG_RUNTIME_DIR="$work/run" XDG_CONFIG_HOME="$work/config"
export BRAIN_DATA_DIR="$work/data" BRAIN_DIR="$work/brain"
unset BRAIN_CONFIG BRAIN_NO_DAEMON BRAIN_MODEL
if [[ -n ${BENCH_MODEL_DIR:-} ]]; then
  export BRAIN_MODEL=all-minilm-l6-v2
  "$bin" model import all-minilm-l6-v2 "$BENCH_MODEL_DIR" >/dev/null
  index_quietly
fi

start_backend "watcher:   on"

query="flag cleanup"
hyperfine -N --style basic --warmup 3 --runs 20 --export-json "$work/search.json" \
  -n warm "$bin search '$query'" \
  -n cold "$bin search '$query' --no-daemon" >&2

socket="$(ls "$work"/run/brain/*.sock)"
python3 - "$socket" "$work/brain" "$work/search.json" "$bin" "$query" <<'PY'
import json, os, socket, statistics, sys, time

sock_path, root, hyperfine_json, bench_bin, bench_query = sys.argv[1:6]
runs = {r["command"]: r for r in json.load(open(hyperfine_json))["results"]}

def ask(query):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock_path)
    s.sendall((json.dumps({"v": 1, "op": "search", "query": query, "mode": "bm25", "top": 1}) + "\n").encode())
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return json.loads(data)

def status():
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock_path)
    s.sendall(b'{"v":1,"op":"status"}\n')
    data = b""
    while not data.endswith(b"\n"):
        data += s.recv(65536)
    return json.loads(data)["result"]["status"]

lags, embedded = [], []
for i in range(20):
    token = f"benchtoken{i:03d}x{int(time.time()*1000)}"
    path = os.path.join(root, "lore", f"bench-{i}.md")
    start = time.perf_counter()
    with open(path, "w") as f:
        f.write(f"# Bench {i}\n\n{token}\n")
    while True:
        hits = ask(token).get("result", {}).get("search", {}).get("results", [])
        if hits:
            break
        if time.perf_counter() - start > 10:
            sys.exit(f"note {path} not searchable after 10 s")
        time.sleep(0.002)
    lags.append((time.perf_counter() - start) * 1000)
    if os.environ.get("BRAIN_MODEL"):
        while status()["pending_chunks"] > 0:
            if time.perf_counter() - start > 10:
                sys.exit(f"note {path} not embedded after 10 s")
            time.sleep(0.002)
        embedded.append((time.perf_counter() - start) * 1000)
    time.sleep(0.05)

ms = lambda s: s * 1000

print(f"notes: {status()['notes']}, machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
print(f"warm  brain search (whole process, median of {len(runs['warm']['times'])}): {ms(runs['warm']['median']):.1f} ms")
print(f"cold  brain search --no-daemon (median of {len(runs['cold']['times'])}):   {ms(runs['cold']['median']):.1f} ms")
import subprocess
mode = json.loads(subprocess.run([bench_bin, "search", bench_query, "--json"], capture_output=True, check=True).stdout)["mode"]
print(f"search mode: {mode}")
print(f"save -> searchable (median of {len(lags)}): {statistics.median(lags):.0f} ms (min {min(lags):.0f}, max {max(lags):.0f})")
if embedded:
    print(f"save -> searchable and embedded (median of {len(embedded)}): {statistics.median(embedded):.0f} ms (max {max(embedded):.0f})")
PY
