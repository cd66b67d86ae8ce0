#!/usr/bin/env python3
"""Pooled judging for brain's eval sets.

  brain eval --pool 5 > pool.jsonl                   # what no judgment covers yet
  scripts/eval-judge.py merge judgments.jsonl ...    # record verdicts in eval/<set>.jsonl

A judgment line: {"set": "notes-mix", "query": "...", "path": "git/x.md", "relevant": true}.
A relevant note joins the query's "relevant" list, any other its "judged" list (judged,
not relevant). Merging is idempotent; a verdict that contradicts an earlier one is
reported and the new one wins.
"""
import json
import os
import sys

EVAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "eval")


def merge(files):
    by_set = {}
    for f in files:
        for n, line in enumerate(open(f, encoding="utf-8"), 1):
            if not line.strip():
                continue
            j = json.loads(line)
            for key in ("set", "query", "path", "relevant"):
                if key not in j:
                    sys.exit(f"{f}:{n}: missing {key!r}")
            by_set.setdefault(j["set"], []).append(j)
    for name, verdicts in by_set.items():
        path = os.path.join(EVAL, f"{name}.jsonl")
        rows = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
        index = {r["query"]: r for r in rows}
        added = flipped = 0
        for v in verdicts:
            row = index.get(v["query"])
            if row is None:
                sys.exit(f"{name}: no query {v['query']!r}")
            rel, judged = set(row["relevant"]), set(row.get("judged", []))
            before = "relevant" if v["path"] in rel else "judged" if v["path"] in judged else None
            now = "relevant" if v["relevant"] else "judged"
            if before == now:
                continue
            if before:
                flipped += 1
                print(f"{name}: {v['query']!r}: {v['path']} {before} -> {now}", file=sys.stderr)
            (rel if v["relevant"] else judged).add(v["path"])
            (judged if v["relevant"] else rel).discard(v["path"])
            row["relevant"], row["judged"] = sorted(rel), sorted(judged)
            added += 1
        with open(path, "w", encoding="utf-8") as out:
            for r in rows:
                out.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(f"{name}: {added} verdicts recorded ({flipped} changed)")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "merge":
        sys.exit(__doc__)
    merge(sys.argv[2:])
