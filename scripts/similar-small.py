#!/usr/bin/env python3
"""Measure `brain similar` in small brains: the judged drafts of eval/drafts/ (over notes-mix),
eval/drafts-jaebradley/ and eval/drafts-yutsuten/, each checked against a brain of NOTES notes that holds its
original (duplicates) or related notes plus random others from the same corpus.

  scripts/similar-small.py --corpora ../corpora-dev --model-dir "$(scripts/test-model.sh)" \
      [--brain target/release/brain] [--notes 50] [--seed 7] [--work /tmp/similar-small] \
      [--set drafts-yutsuten ...]

The calibration (eval/README.md, "Drafts") was done in brains of ~1,800 notes, where a
draft's topic has many notes; a new brain has few. Drafts are taken 16 at a time (in an
order shuffled by the seed); each group gets its own brain. Prints, per half and class, how
many drafts got each verdict, how often a duplicate's original came first, and how often a
related draft's related note was in the top 5, as scripts/similar-dev.py does.
"""
import argparse
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EVAL = os.path.join(HERE, "..", "eval")
# The counting and the report are similar-dev.py's, so both scripts read the same way.
_spec = importlib.util.spec_from_file_location("similar_dev", os.path.join(HERE, "similar-dev.py"))
dev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dev)
SETS = [("drafts", "notes-mix"), ("drafts-jaebradley", "jaebradley-notes"), ("drafts-yutsuten", "yutsuten-notes")]
GROUP = 16


def run(brain, env, *args):
    out = subprocess.run([brain, *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"brain {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brain", default="target/release/brain")
    ap.add_argument("--corpora", required=True, help="folder holding the sets' corpora (notes-mix/, jaebradley-notes/, yutsuten-notes/)")
    ap.add_argument("--model-dir", required=True, help="all-MiniLM-L6-v2 (scripts/test-model.sh)")
    ap.add_argument("--notes", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", default="/tmp/similar-small")
    # The figures in README.md are the first two sets'; the third is reported on its own.
    ap.add_argument("--set", action="append", choices=[s for s, _ in SETS],
                    help="a set to measure (repeatable, counted together; default: drafts and drafts-jaebradley)")
    a = ap.parse_args()
    chosen = a.set or ["drafts", "drafts-jaebradley"]
    brain = os.path.abspath(a.brain)
    shutil.rmtree(a.work, ignore_errors=True)
    models = os.path.join(a.work, "models")
    base = dict(os.environ, BRAIN_MODEL="all-minilm-l6-v2")
    stats = {}
    for set_name, corpus in [(s, c) for s, c in SETS if s in chosen]:
        root = os.path.join(a.corpora, corpus)
        if not os.path.isdir(root):
            sys.exit(f"{root} is missing: scripts/eval-corpora.py lays it out")
        every = sorted(
            os.path.relpath(os.path.join(d, f), root)
            for d, _, files in os.walk(root)
            for f in files
            if f.endswith(".md")
        )
        labels = [json.loads(l) for l in open(os.path.join(EVAL, set_name, "labels.jsonl")) if l.strip()]
        rnd = random.Random(a.seed)
        rnd.shuffle(labels)
        for k in range(0, len(labels), GROUP):
            group = labels[k : k + GROUP]
            keep = {p for lab in group for p in lab.get("of", []) + lab.get("to", []) if p in every}
            others = [p for p in every if p not in keep]
            rnd.shuffle(others)
            notes = sorted(keep) + others[: max(0, a.notes - len(keep))]
            here = os.path.join(a.work, f"{set_name}-{k}")
            for p in notes:
                os.makedirs(os.path.dirname(os.path.join(here, "notes", p)), exist_ok=True)
                shutil.copy(os.path.join(root, p), os.path.join(here, "notes", p))
            os.makedirs(os.path.join(here, "run"), mode=0o700)
            env = dict(
                base,
                BRAIN_DIR=os.path.join(here, "notes"),
                BRAIN_DATA_DIR=os.path.join(here, "data"),
                XDG_RUNTIME_DIR=os.path.join(here, "run"),
            )
            if not os.path.isdir(models):
                run(brain, dict(env, BRAIN_DATA_DIR=a.work), "model", "import", "all-minilm-l6-v2", a.model_dir)
            os.makedirs(os.path.join(here, "data"))
            os.symlink(models, os.path.join(here, "data", "models"))
            run(brain, env, "index")
            for lab in group:
                draft = os.path.join(EVAL, set_name, lab["draft"])
                r = json.loads(run(brain, env, "similar", draft, "--json", "--no-sync", "--top", "5"))
                dev.tally(stats, lab, r)
            print(f"{set_name}: drafts {k + 1}-{k + len(group)} in a brain of {len(notes)} notes", file=sys.stderr)
    dev.report(stats)


if __name__ == "__main__":
    main()
