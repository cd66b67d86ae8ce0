#!/usr/bin/env python3
"""Checks #11's rule "every name query that bm25 ranks first stays first" on many names,
drawn from the notes themselves rather than written by hand.

  BRAIN_DIR=<an indexed, embedded brain> BRAIN_DATA_DIR=... BRAIN_MODEL=all-minilm-l6-v2 \
      scripts/eval-names.py [--count 150] [--seed 1] [BRAIN ...]

Names are identifiers found in the notes (snake_case, camelCase, dotted names, long
flags), each held by at most three notes and at least six characters long; the query is
the name alone, and a note is relevant when it holds the name as written (not inside a
longer word; case aside, as brain's literal check reads it). For each name, bm25 mode's first result and hybrid's, for every BRAIN binary
given (default target/release/brain), are compared: a LOSS is a name bm25 put a holder
first for and hybrid did not; a WIN the other way. Prints each, then the totals.
"""
import argparse
import collections
import json
import os
import random
import re
import subprocess
import sys

NAME = re.compile(
    r"(?<![\w.-])([A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+"
    r"|[A-Z][a-z]+[A-Z][A-Za-z0-9]+|[a-z][a-z0-9]+\.[a-z][a-z0-9_]+(?:\.[a-z0-9_]+)*"
    r"|--[a-z][a-z-]{2,})(?![\w-])"
)
# File names and web addresses are not names a person types to find a note.
NOT_NAMES = (".md", ".com", ".org", ".io", ".html")


def notes(root):
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            if f.endswith(".md"):
                path = os.path.join(folder, f)
                with open(path, errors="replace") as fh:
                    out[os.path.relpath(path, root)] = fh.read()
    return out


def names(texts, count, seed):
    held = collections.defaultdict(set)
    for path, text in texts.items():
        for name in NAME.findall(text):
            held[name].add(path)
    pool = sorted(
        name
        for name, paths in held.items()
        if len(paths) <= 3 and len(name) >= 6 and not name.endswith(NOT_NAMES)
    )
    random.Random(seed).shuffle(pool)
    return pool[:count]


def first(brain, mode, query):
    run = subprocess.run(
        [brain, "search", "--json", "--no-sync", "--top", "1", "--mode", mode, "--", query],
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        sys.exit(f"brain search {query!r} --mode {mode} failed: {run.stderr.strip()}")
    results = json.loads(run.stdout)["results"]
    return results[0]["path"] if results else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("brains", nargs="*", default=["target/release/brain"])
    a = ap.parse_args()
    root = os.environ.get("BRAIN_DIR")
    if not root or not os.path.isdir(root):
        sys.exit("error: set BRAIN_DIR to the indexed brain folder the names are drawn from")
    texts = notes(root)
    totals = collections.Counter()
    for name in names(texts, a.count, a.seed):
        held = re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", re.IGNORECASE)
        relevant = {p for p, t in texts.items() if held.search(t)}
        by_bm25 = first(a.brains[0], "bm25", name) in relevant
        totals["names"] += 1
        totals["bm25 first"] += by_bm25
        for i, brain in enumerate(a.brains):
            got = first(brain, "hybrid", name)
            by_hybrid = got in relevant
            totals[f"hybrid first [{i}]"] += by_hybrid
            if by_bm25 and not by_hybrid:
                totals[f"losses [{i}]"] += 1
                print(f"LOSS [{i}] {name}: hybrid's first is {got}")
            if by_hybrid and not by_bm25:
                totals[f"wins [{i}]"] += 1
                print(f"WIN  [{i}] {name}")
    print(json.dumps(totals))


if __name__ == "__main__":
    main()
