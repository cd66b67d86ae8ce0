#!/usr/bin/env python3
"""Lays out the notes corpora of `brain eval` (eval/README.md) from git checkouts.

    scripts/eval-corpora.py CHECKOUTS_DIR [DEST]      # DEST defaults to ../corpora-dev

CHECKOUTS_DIR holds one clone per source, named owner+name (Bhupesh-V+til, ...); each must
have the pinned commit below. Files are read from that commit (`git show`), never from the
work tree, so the layout is the same whatever is checked out. A corpus already under DEST
(notes-mix, jaebradley-notes, til-mix, yutsuten-notes) is left as it is and needs no clones: one the
judgments were made on is never overwritten.
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
YUTSUTEN = ("Yutsuten+notes", "afb6ec45")
TIL_MIX = [
    ("jonasbn+til", "adc31356"),
    ("jwworth+til", "5928a20a"),
    ("khanhicetea+today-i-learned", "e36d2fae"),
    ("jthodge+til", "17508d0e"),
    ("fosdickio+til", "5022ec84"),
    ("thoughtbot+til", "c69a5f72"),
    ("leebyron+til", "1e9ecc41"),
    ("brunoarueira+til", "f47be40c"),
    ("jmurty+til", "f47b47bb"),
]
# A TIL repository's files that are not notes: guides, indexes, templates.
NOT_A_NOTE = re.compile(
    r"^(readme|licen[sc]e|copying|contributing|changelog|code_of_conduct|claude|agents|index|toc|summary|_?template)(\..*)?\.md$",
    re.I,
)
# Counts the judged sets were written against.
EXPECTED = {"notes-mix": 1754, "jaebradley-notes": 1844, "til-mix": 1262, "yutsuten-notes": 776}


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


def lay_out_notes_mix(root, dest):
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
        write(dest, rel, data)
    return len(mix)


def lay_out_jaebradley(root, dest):
    name, commit = JAEBRADLEY
    count = 0
    for rel, data in notes(checkout(root, name), commit):
        write(dest, rel, data)
        count += 1
    return count


def lay_out_til_mix(root, dest):
    """Each repository under its owner's folder; notes only: no root-level files, nothing
    under a hidden or `_` folder, no guide or index (NOT_A_NOTE), nothing under 80 bytes
    (trimmed) or over 100 kB, no second copy of the same bytes; jthodge's under content/."""
    seen = set()
    count = 0
    for name, commit in TIL_MIX:
        owner = name.split("+")[0]
        for rel, data in sorted(notes(checkout(root, name), commit)):
            parts = rel.split("/")
            if (
                len(parts) == 1
                or any(p.startswith((".", "_")) for p in parts[:-1])
                or NOT_A_NOTE.match(parts[-1])
                or (owner == "jthodge" and parts[0] != "content")
                or len(data.strip()) < 80
                or len(data) > 100_000
                or data in seen
            ):
                continue
            seen.add(data)
            write(dest, os.path.join(owner, rel), data)
            count += 1
    return count


def lay_out_yutsuten(root, dest):
    """The notes under notes/, without that prefix; not the site's home page (index.md)
    nor a note under 80 bytes."""
    name, commit = YUTSUTEN
    count = 0
    for rel, data in notes(checkout(root, name), commit):
        if not rel.startswith("notes/") or rel == "notes/index.md" or len(data) < 80:
            continue
        write(dest, rel[len("notes/") :], data)
        count += 1
    return count


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip())
    root = sys.argv[1]
    dest = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.path.dirname(__file__), "..", "..", "corpora-dev")
    for corpus, lay_out in (
        ("notes-mix", lay_out_notes_mix),
        ("jaebradley-notes", lay_out_jaebradley),
        ("til-mix", lay_out_til_mix),
        ("yutsuten-notes", lay_out_yutsuten),
    ):
        where = os.path.join(dest, corpus)
        if os.path.exists(where):
            print(f"eval-corpora: {where} exists; left as it is")
            continue
        got = lay_out(root, where)
        want = EXPECTED[corpus]
        flag = "" if got == want else f" (the judged sets expect {want})"
        print(f"eval-corpora: {where}: {got} notes{flag}")


if __name__ == "__main__":
    main()
