#!/usr/bin/env python3
"""Latency of `brain search --json` as a whole process vs. a `search` call to a running
`brain mcp`, over a copy of a notes folder (default: the tldr corpus, 7k notes).

Usage: scripts/bench-mcp.py BRAIN_BINARY [FOLDER] [RUNS]

Both sync with the folder first (the default), as an assistant's search would. The MCP
numbers are request-to-answer on one long-lived server (what Claude Code does: it starts
`brain mcp` once per session); the first call, which opens the index, is reported apart.

BENCH_SERVE=1 starts `brain serve` on the folder first, so both are answered by the warm
backend over its socket (the everyday setup); otherwise both run in-process.
BENCH_DATA_DIR=DIR searches FOLDER in place with the index (and models) already in DIR,
instead of indexing a fresh copy: with an embedded index and BRAIN_MODEL set, the searches
are hybrid. FOLDER is only read either way.
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

binary = os.path.abspath(sys.argv[1])
folder = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "../../shared/corpora/tldr")
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 30
queries = ["git commit", "compress a folder into an archive", "list open ports", "tar", "kill a process by name"]

serve = os.environ.get("BENCH_SERVE") == "1"
data = os.environ.get("BENCH_DATA_DIR")
tmp = tempfile.mkdtemp()
server = None
try:
    os.makedirs(os.path.join(tmp, "run"), mode=0o700)
    env = dict(os.environ, HOME=tmp, XDG_RUNTIME_DIR=os.path.join(tmp, "run"))
    env.pop("BRAIN_NO_DAEMON", None)
    if data:
        root = os.path.abspath(folder)
        env.update(BRAIN_DIR=root, BRAIN_DATA_DIR=os.path.abspath(data))
    else:
        root = os.path.join(tmp, "brain")
        shutil.copytree(folder, root)
        env.update(BRAIN_DIR=root, BRAIN_DATA_DIR=os.path.join(tmp, "data"))
        subprocess.run([binary, "index"], env=env, check=True, stdout=subprocess.DEVNULL)
    if serve:
        server = subprocess.Popen([binary, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while b'"backend":{' not in subprocess.run([binary, "status", "--json"], env=env, capture_output=True).stdout.replace(b" ", b""):
            if time.time() > deadline:
                sys.exit("brain serve did not come up")
            time.sleep(0.05)
    else:
        env["BRAIN_NO_DAEMON"] = "1"
    mode = json.loads(subprocess.run([binary, "search", queries[0], "--json"], env=env, capture_output=True, check=True).stdout)["mode"]

    def ms(t):
        return f"{statistics.median(t) * 1000:7.1f} ms"

    cli = []
    for i in range(runs + 3):
        q = queries[i % len(queries)]
        t = time.perf_counter()
        subprocess.run([binary, "search", q, "--json"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if i >= 3:
            cli.append(time.perf_counter() - t)

    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "mcp"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    def ask(msg):
        p.stdin.write(json.dumps(msg) + "\n"); p.stdin.flush()
        if "id" not in msg:
            return None
        while True:
            answer = json.loads(p.stdout.readline())
            if answer.get("id") == msg["id"]:
                return answer
    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    mcp = []
    first = None
    for i in range(runs + 1):
        q = queries[i % len(queries)]
        t = time.perf_counter()
        r = ask({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": "search", "arguments": {"query": q}}})
        assert r["result"]["isError"] is False, r
        if i == 0:
            first = time.perf_counter() - t0
        else:
            mcp.append(time.perf_counter() - t)
    p.stdin.close(); p.wait(timeout=30)

    n = sum(1 for _, _, fs in os.walk(root) for f in fs if f.endswith(".md"))
    print(f"{n} notes, mode {mode}, {'warm backend (brain serve)' if serve else 'in-process'}, {runs} runs each, medians:")
    print(f"  brain search --json (whole process)     {ms(cli)}")
    print(f"  MCP search call (server already running) {ms(mcp)}")
    print(f"  MCP start + initialize + first search     {first * 1000:7.1f} ms")
finally:
    if server:
        server.terminate(); server.wait(timeout=30)
    shutil.rmtree(tmp, ignore_errors=True)
