#!/usr/bin/env python3
"""Lays out the notes corpora of `brain eval` (eval/README.md) from git checkouts.

    scripts/eval-corpora.py CHECKOUTS_DIR [DEST]      # DEST defaults to ../corpora-dev

CHECKOUTS_DIR holds one clone per source, named owner+name (Bhupesh-V+til, ...); each must
have the pinned commit below. Files are read from that commit (`git show`), never from the
work tree, so the layout is the same whatever is checked out. DEST/notes-mix and
DEST/jaebradley-notes must not exist yet: a corpus the judgments were made on is never
overwritten.
"""
import os
import re
import subprocess
import sys

MIX = [
    ("Bhupesh-V+til", "3adc4bf2"),
    ("khanhicetea+today-i-learned", "e36d2fae"),
    ("jwworth+til", "5928a20a"),
    ("thoughtbot+til", "c69a5f72"),
    ("MichaelCurrin+dev-cheatsheets", "d19cea65"),
]
JAEBRADLEY = ("jaebradley+notes", "afdcd19e")
# Counts the judged sets were written against.
EXPECTED = {"notes-mix": 1754, "jaebradley-notes": 1844}


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def checkout(root, name):
    for sub in (os.path.join(root, name, "repo"), os.path.join(root, name)):
        if os.path.isdir(sub):
            return sub
    sys.exit(f"eval-corpora: no clone of {name} under {root}; clone it there first")


def body(text):
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end >= 0:
            return text[end + 4 :]
    return text


def prose_words(text):
    """Words of a page outside headings, links, link definitions and Jekyll tags (a code
    block counts as 20), so a cheatsheet folder's index.md that only links its children
    scores low."""
    t = re.sub(r"```.*?```", " code" * 20, body(text), flags=re.S)
    t = re.sub(r"\{%.*?%\}", " ", t)
    t = re.sub(r"^\s*\[[^\]]*\]:.*$", " ", t, flags=re.M)
    t = re.sub(r"^\s*#.*$", " ", t, flags=re.M)
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", " ", t)
    t = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", " ", t)
    return len(re.findall(r"\w+", t))


def notes(repo, commit):
    # -z: names with quotes or non-ASCII letters come back as they are, not C-quoted.
    for name in git(repo, "ls-tree", "-r", "-z", "--name-only", commit).decode().split("\0"):
        if name.lower().endswith(".md"):
            yield name, git(repo, "show", f"{commit}:{name}")


def write(dest, rel, data):
    path = os.path.join(dest, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip())
    root = sys.argv[1]
    dest = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.path.dirname(__file__), "..", "..", "corpora-dev")
    for corpus in EXPECTED:
        if os.path.exists(os.path.join(dest, corpus)):
            sys.exit(f"eval-corpora: {os.path.join(dest, corpus)} already exists; remove it to lay it out again")

    mix = {}
    for name, commit in MIX:
        repo = checkout(root, name)
        author = name.split("+")[0]
        for rel, data in notes(repo, commit):
            if name.startswith("MichaelCurrin"):
                if not rel.startswith("cheatsheets/"):
                    continue
                rel = rel[len("cheatsheets/") :]
                if os.path.basename(rel) == "index.md" and prose_words(data.decode("utf-8", "replace")) < 30:
                    continue
            if "/" not in rel:  # a repository's README, licence, contributing guide
                continue
            if rel in mix:
                stem, ext = os.path.splitext(rel)
                rel = f"{stem}-{author}{ext}"
            mix[rel] = data
    for rel, data in mix.items():
        write(os.path.join(dest, "notes-mix"), rel, data)

    name, commit = JAEBRADLEY
    count = 0
    for rel, data in notes(checkout(root, name), commit):
        write(os.path.join(dest, "jaebradley-notes"), rel, data)
        count += 1

    for corpus, got in (("notes-mix", len(mix)), ("jaebradley-notes", count)):
        want = EXPECTED[corpus]
        flag = "" if got == want else f" (the judged sets expect {want})"
        print(f"eval-corpora: {os.path.join(dest, corpus)}: {got} notes{flag}")


if __name__ == "__main__":
    main()
