#!/usr/bin/env python3
"""A long run of the warm backend under a person's and an assistant's daily use, watched for
what only time shows: memory or file descriptors that grow, a backend that dies, an edit
that never becomes searchable, a deleted note still found, an index or log that only grows.

  scripts/soak.py --corpus ../shared/corpora/tldr --minutes 20 \
      [--model-dir "$(scripts/test-model.sh)"] [--brain target/release/brain] \
      [--work /tmp/brain-soak] [--every 30] [--seed 1] [--writes 0.2]

Copies the corpus to WORK/brain, indexes it (with all-minilm-l6-v2 when --model-dir is
given, else keywords only), starts `brain serve`, then for MINUTES runs commands one after
another as a client would: searches in every mode (words from a random note), `similar
--text` with a passage of one, `get`, `status`, and writes: an edit appends a line with a
word no note has to a note, a new note holds another, a deletion removes one of those new
notes (a fifth of all commands, --writes); after each write the word is searched for (bm25) until it is found, or gone, or 10 s
pass (counted as stale). Every EVERY seconds one line: the backend's RSS and peak, its open
files and threads, the index and its WAL, the logs folder, and the medians of the interval.

Linux only: it reads the backend's figures from /proc. Exits 1 when the backend died, a command failed, a write stayed stale, or the backend's
open files grew by more than 16 from the first sample to the last; prints a summary either
way. Runs in its own sandbox (HOME, XDG_RUNTIME_DIR, BRAIN_DATA_DIR under WORK).
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time

STALE_AFTER = 10.0
FD_GROWTH_ALLOWED = 16


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brain", default="target/release/brain")
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--model-dir")
    ap.add_argument("--minutes", type=float, default=20)
    ap.add_argument("--every", type=float, default=30)
    ap.add_argument("--work", default="/tmp/brain-soak")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--writes", type=float, default=0.2,
                    help="share of commands that write (edit, new, delete); the rest read")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    brain = os.path.abspath(a.brain)
    if not os.path.isfile(brain):
        sys.exit(f"{brain}: no such binary (cargo build --release)")
    if not os.path.isdir(a.corpus):
        sys.exit(f"{a.corpus}: no such folder")
    shutil.rmtree(a.work, ignore_errors=True)
    root = os.path.join(a.work, "brain")
    shutil.copytree(a.corpus, root)
    for d in ["home", "run", "data"]:
        os.makedirs(os.path.join(a.work, d), mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
    env.update(
        BRAIN_DIR=root,
        BRAIN_DATA_DIR=os.path.join(a.work, "data"),
        XDG_RUNTIME_DIR=os.path.join(a.work, "run"),
        HOME=os.path.join(a.work, "home"),
        BRAIN_MODEL="all-minilm-l6-v2",
    )
    cli = Cli(brain, env)
    if a.model_dir:
        cli.run("model", "import", "all-minilm-l6-v2", a.model_dir)
    started = time.time()
    cli.run("index")
    print(f"indexed {root} in {time.time() - started:.1f} s", file=sys.stderr)
    # The notes as the index has them (not SCHEMA.md, INDEX.md or what the brain ignores).
    index_path = json.loads(cli.run("status", "--json"))["index_path"]
    with sqlite3.connect(f"file:{index_path}?mode=ro", uri=True) as db:
        notes = [p for (p,) in db.execute("SELECT path FROM notes ORDER BY path")]
    serve = subprocess.Popen([brain, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        pid = wait_for_backend(cli, serve, embedding=bool(a.model_dir))
        soak(a, rnd, cli, root, notes, pid, serve)
    finally:
        if serve.poll() is None:
            serve.send_signal(signal.SIGTERM)
            try:
                serve.wait(timeout=20)
            except subprocess.TimeoutExpired:
                serve.kill()


class Cli:
    """Runs brain commands, timing each; a failure is remembered, not raised."""

    def __init__(self, brain, env):
        self.brain, self.env = brain, env
        self.failures = []

    def run(self, *args, stdin=None):
        out = subprocess.run([self.brain, *args], env=self.env, capture_output=True, text=True, input=stdin)
        if out.returncode != 0:
            sys.exit(f"brain {' '.join(args)}: exit {out.returncode}: {out.stderr.strip()}")
        return out.stdout

    def timed(self, kind, *args, stdin=None):
        t = time.perf_counter()
        out = subprocess.run([self.brain, *args], env=self.env, capture_output=True, text=True, input=stdin)
        ms = (time.perf_counter() - t) * 1000
        if out.returncode != 0:
            self.failures.append(f"{kind}: brain {' '.join(args)[:120]}: exit {out.returncode}: {out.stderr.strip()[:300]}")
            return None, ms
        if out.stderr.strip() and "warning" in out.stderr:
            self.failures.append(f"{kind}: brain {' '.join(args)[:120]}: {out.stderr.strip()[:300]}")
        return out.stdout, ms


def wait_for_backend(cli, serve, embedding):
    """The backend's pid, once it answers (and, with a model, has embedded every passage)."""
    deadline = time.time() + 120
    while time.time() < deadline:
        if serve.poll() is not None:
            sys.exit(f"brain serve exited {serve.returncode}: {serve.stderr.read().decode()[-500:]}")
        status = json.loads(cli.run("status", "--json"))
        if status.get("backend") and (not embedding or status["pending_chunks"] == 0):
            return status["backend"]["pid"]
        time.sleep(0.5)
    sys.exit("the backend did not come up (or finish embedding) within 120 s")


def proc(pid):
    """The backend's resident and peak memory (MB), open files and threads."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            fields[k] = v.strip()
    mb = lambda k: int(fields[k].split()[0]) / 1024
    return mb("VmRSS"), mb("VmHWM"), len(os.listdir(f"/proc/{pid}/fd")), int(fields["Threads"])


def size_mb(path, pattern=None):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            if pattern is None or re.search(pattern, f):
                try:
                    total += os.path.getsize(os.path.join(d, f))
                except FileNotFoundError:
                    pass
    return total / 1e6


def words_of(root, rel, rnd, n):
    try:
        text = open(os.path.join(root, rel), encoding="utf-8", errors="replace").read()
    except FileNotFoundError:
        return None
    words = [w for w in re.findall(r"[A-Za-z][a-z]{3,}", text)]
    return " ".join(rnd.sample(words, min(n, len(words)))) if words else None


def soak(a, rnd, cli, root, notes, pid, serve):
    data = cli.env["BRAIN_DATA_DIR"]
    end = time.time() + a.minutes * 60
    samples, stale, visible_ms = [], [], []
    created, counter = [], 0
    interval = {"search": [], "similar": [], "get": [], "writes": 0}
    totals = {"search": 0, "similar": 0, "get": 0}
    next_sample = time.time()
    print("   min   rss MB  peak MB  fds  threads  index MB  wal MB  logs MB  searches  search ms  similar ms", flush=True)

    def visible(word, want):
        """Searches `word` until a note holds it (`want`) or none does; ms it took, or None."""
        t = time.perf_counter()
        while time.perf_counter() - t < STALE_AFTER:
            out, _ = cli.timed("freshness", "search", word, "--mode", "bm25", "--json", "--top", "3")
            found = out is not None and bool(json.loads(out)["results"])
            if found == want:
                return (time.perf_counter() - t) * 1000
            time.sleep(0.05)
        return None

    while time.time() < end:
        if serve.poll() is not None:
            cli.failures.append(f"the backend exited {serve.returncode}: {serve.stderr.read().decode()[-500:]}")
            break
        if time.time() >= next_sample:
            rss, peak, fds, threads = proc(pid)
            index = size_mb(os.path.join(data, "indexes"), r"\.sqlite$")
            wal = size_mb(os.path.join(data, "indexes"), r"-wal$")
            logs = size_mb(os.path.join(data, "logs"))
            med = lambda xs: f"{statistics.median(xs):9.1f}" if xs else "        -"
            minute = (time.time() - (end - a.minutes * 60)) / 60
            samples.append((rss, peak, fds, threads, index, wal, logs))
            print(f"{minute:6.1f} {rss:8.1f} {peak:8.1f} {fds:4d} {threads:8d} {index:9.1f} {wal:7.1f} {logs:8.2f}"
                  f" {len(interval['search']):9d} {med(interval['search'])}  {med(interval['similar'])}", flush=True)
            for k in totals:
                totals[k] += len(interval[k])
            interval = {"search": [], "similar": [], "get": [], "writes": 0}
            next_sample = time.time() + a.every
        # Reads share 1 - WRITES as 6 : 1 : 1 (search, similar, get); writes are edits, new
        # notes and deletions, 2 : 1 : 1.
        reads = 1 - a.writes
        r = rnd.random()
        r = r / reads * 0.8 if r < reads else 0.8 + (r - reads) / max(a.writes, 1e-9) * 0.2
        rel = rnd.choice(notes)
        if r < 0.6:
            q = words_of(root, rel, rnd, rnd.randint(2, 4))
            if q:
                # Without a model, hybrid answers by keywords and semantic refuses.
                mode = rnd.choice(["hybrid", "hybrid", "semantic" if a.model_dir else "hybrid", "bm25"])
                _, ms = cli.timed("search", "search", q, "--mode", mode, "--json", "--top", "10")
                interval["search"].append(ms)
        elif r < 0.7:
            q = words_of(root, rel, rnd, 40)
            if q:
                _, ms = cli.timed("similar", "similar", "--text", q, "--json", "--top", "5")
                interval["similar"].append(ms)
        elif r < 0.8:
            if os.path.exists(os.path.join(root, rel)):
                _, ms = cli.timed("get", "get", rel, "--json")
                interval["get"].append(ms)
        elif r < 0.9:
            counter += 1
            word = f"soakedit{counter:06d}x"
            with open(os.path.join(root, rel), "a", encoding="utf-8") as f:
                f.write(f"\n{word} {words_of(root, rel, rnd, 5) or ''}\n")
            v = visible(word, True)
            (visible_ms.append(v) if v is not None else stale.append(f"edit of {rel} ({word})"))
            interval["writes"] += 1
        elif r < 0.95 or not created:
            counter += 1
            word = f"soaknew{counter:06d}x"
            path = os.path.join(root, "soak", f"s{counter:06d}.md")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(f"# Soak {counter}\n\n{word} {words_of(root, rel, rnd, 30) or ''}\n")
            os.replace(tmp, path)
            created.append((path, word))
            v = visible(word, True)
            (visible_ms.append(v) if v is not None else stale.append(f"new note {path} ({word})"))
            interval["writes"] += 1
        else:
            path, word = created.pop(rnd.randrange(len(created)))
            os.remove(path)
            v = visible(word, False)
            (visible_ms.append(v) if v is not None else stale.append(f"deleted note {path} still found ({word})"))
            interval["writes"] += 1

    for k in totals:
        totals[k] += len(interval[k])
    print(f"\ncommands: {totals['search']} searches, {totals['similar']} similar, {totals['get']} get,"
          f" {len(visible_ms) + len(stale)} writes")
    problems = list(cli.failures) + [f"stale after {STALE_AFTER:.0f} s: {s}" for s in stale]
    if len(samples) >= 2:
        (rss0, _, fds0, thr0, idx0, _, logs0), (rss1, peak1, fds1, thr1, idx1, _, logs1) = samples[0], samples[-1]
        print(f"backend: RSS {rss0:.1f} -> {rss1:.1f} MB (peak {peak1:.1f}), open files {fds0} -> {fds1},"
              f" threads {thr0} -> {thr1}; index {idx0:.1f} -> {idx1:.1f} MB; logs {logs0:.2f} -> {logs1:.2f} MB")
        if fds1 - fds0 > FD_GROWTH_ALLOWED:
            problems.append(f"the backend's open files grew from {fds0} to {fds1}")
    if visible_ms:
        q = statistics.quantiles(visible_ms, n=20) if len(visible_ms) >= 20 else None
        print(f"writes: {len(visible_ms) + len(stale)}, searchable (or gone) after a median of"
              f" {statistics.median(visible_ms):.0f} ms" + (f", p95 {q[18]:.0f} ms" if q else "") + f"; stale {len(stale)}")
    for p in problems[:20]:
        print(f"problem: {p}")
    if problems:
        print(f"{len(problems)} problem(s)")
        sys.exit(1)
    print("no problem")


if __name__ == "__main__":
    main()
