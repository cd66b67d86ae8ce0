#!/usr/bin/env python3
"""Assigns each query of an eval set (eval/*.jsonl) to the half it belongs to, once:
"tune" (used while developing the fusion) or "test" (held back; reported, never tuned on).

Stratified by class and deterministic: within a class, queries are ordered by a hash of
their text and alternate tune, test, tune, ... A query that already has a "half" keeps it,
so adding queries later never moves old ones.  Usage: scripts/eval-split.py eval/x.jsonl...
"""
import hashlib
import json
import sys


def key(q):
    return hashlib.sha256(q["query"].encode()).hexdigest()


for path in sys.argv[1:]:
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    by_class = {}
    for r in rows:
        by_class.setdefault(r.get("class", ""), []).append(r)
    for members in by_class.values():
        have = sum(1 for r in members if r.get("half") == "tune") - sum(
            1 for r in members if r.get("half") == "test"
        )
        for r in sorted((r for r in members if "half" not in r), key=key):
            r["half"] = "tune" if have <= 0 else "test"
            have += 1 if r["half"] == "tune" else -1
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    counts = {}
    for r in rows:
        counts[(r.get("class"), r["half"])] = counts.get((r.get("class"), r["half"]), 0) + 1
    print(path, dict(sorted(counts.items())))
