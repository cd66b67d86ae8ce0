#!/usr/bin/env python3
"""Measure `brain similar` on a set of judged drafts: eval/drafts/ (over notes-mix),
eval/drafts-jaebradley/ (over jaebradley-notes) or eval/drafts-yutsuten/ (over yutsuten-notes).

  BRAIN_DIR=<copy of the set's corpus> BRAIN_DATA_DIR=... BRAIN_MODEL=all-minilm-l6-v2 \
      scripts/similar-dev.py [--set drafts|drafts-jaebradley|drafts-yutsuten] [--brain target/release/brain] [--half tune|test]

The brain must hold the set's corpus (see eval/README.md), indexed and embedded. Drafts
with an even number are the tune half, odd ones the test half (the thresholds were set on
the tune half of eval/drafts/; eval/drafts-jaebradley/ was written after, so both of its
halves are unseen by them; eval/drafts-yutsuten/ was written after all calibration, by
someone who had not seen brain's verdicts, and is only reported). Prints, per class, how many drafts got each verdict, how often a duplicate's original
came first, and how often a related draft's related note was in the top 5.
"""
import argparse
import json
import os
import subprocess
import sys

EVAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "eval")


def half(name):
    return "tune" if int(name.split("-")[1].split(".")[0]) % 2 == 0 else "test"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brain", default="target/release/brain")
    ap.add_argument("--half", choices=["tune", "test"])
    ap.add_argument("--set", default="drafts", choices=["drafts", "drafts-jaebradley", "drafts-yutsuten"])
    a = ap.parse_args()
    drafts = os.path.join(EVAL, a.set)
    labels = [json.loads(l) for l in open(os.path.join(drafts, "labels.jsonl")) if l.strip()]
    stats = {}
    for lab in labels:
        h = half(lab["draft"])
        if a.half and h != a.half:
            continue
        out = subprocess.run(
            [a.brain, "similar", os.path.join(drafts, lab["draft"]), "--json", "--no-sync", "--top", "5"],
            capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{lab['draft']}: {out.stderr.strip()}")
        tally(stats, lab, json.loads(out.stdout))
    report(stats)


def tally(stats, lab, r):
    """Counts one draft's answer `r` (`brain similar --json`) against its label."""
    s = stats.setdefault((half(lab["draft"]), lab["class"]), {"n": 0, "duplicate": 0, "related": 0, "new": 0, "first": 0, "top5": 0})
    s["n"] += 1
    s[r["verdict"]] += 1
    paths = [x["path"] for x in r["results"]]
    if lab["class"] == "duplicate" and paths[:1] and paths[0] in lab["of"]:
        s["first"] += 1
    if lab["class"] == "related" and any(p in lab.get("to", []) for p in paths[:5]):
        s["top5"] += 1


def report(stats):
    """One line per half and class."""
    for (h, c), s in sorted(stats.items()):
        extra = {"duplicate": f"original first {s['first']}", "related": f"related in top 5 {s['top5']}"}.get(c, "")
        print(f"{h:5} {c:9} n={s['n']:3}  duplicate {s['duplicate']:3}  related {s['related']:3}  new {s['new']:3}  {extra}")


if __name__ == "__main__":
    main()
