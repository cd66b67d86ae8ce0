#!/usr/bin/env python3
"""brain's nomic-embed-text-v1.5 against the reference implementation.

The reference is the model's own code on the hub (NomicBert, run by transformers with
trust_remote_code) on the files of the pinned revision in audit/nomic-embed-text-v1.5.toml,
downloaded here independently of brain. For a fixed set of texts (queries, documents, one
longer than the 512-token window, Matryoshka dimensions) it compares the vectors printed by
`brain model embed --json` with the reference's: cosine similarity and the largest
difference of any component, each within a tolerance. It also checks the downloaded files
against the manifest's sizes and SHA-256. Exits 1 on any mismatch, naming it.

    pip install -r scripts/nomic-reference.requirements.txt
    brain model fetch nomic-embed-text-v1.5
    scripts/nomic-reference.py --brain "$(command -v brain)" --out target/nomic-reference.json

The model's Python code lives in another hub repository (nomic-ai/nomic-bert-2048, named by
config.json's auto_map); it is pinned too (--code-revision). Run this in a throwaway
environment: trust_remote_code executes that code.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
MANIFEST = REPO_ROOT / "audit" / "nomic-embed-text-v1.5.toml"
MODEL = "nomic-embed-text-v1.5"
# nomic-ai/nomic-bert-2048 at the commit that public projects pinning revision e9b67630 of
# the model use with it (found in one; override with NOMIC_CODE_REVISION).
CODE_REVISION = os.environ.get("NOMIC_CODE_REVISION", "7710840340a098cfb869c4f65e87cf2b1b70caca")
FILES = ["config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
         "vocab.txt", "model.safetensors"]

LONG = " ".join(
    "When a reader skips entries it must leave a visible marker, so that an audit of the log "
    "can tell a deliberate skip from a silent failure; paragraph {}.".format(i)
    for i in range(40)
)
# (text, as a query?, Matryoshka dimension or None for the full 768)
CASES = [
    ("how do i prevent silent failures from gitignore patterns", True, None),
    ("why did the deploy hang", True, None),
    ("Skip-log sentinel for audit-mode reads. When a reader skips entries it must leave a "
     "visible marker.", False, None),
    ("Feature flags: delete the flag, then rework the tests that pinned both branches.", False, None),
    ("SQLite WAL checkpoints starve when a reader never lets go.", False, None),
    (LONG, False, None),  # over 512 tokens: both sides must truncate the same way
    ("tokio select cancellation safety", True, 256),
    ("Idempotency keys make a retried POST safe.", False, 128),
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_files(folder, manifest):
    """Every downloaded file against the manifest; returns the mismatches."""
    pins = {f["path"]: f for f in manifest["files"]}
    bad = []
    for name in FILES:
        path = Path(folder) / name
        pin = pins[name]
        size, digest = path.stat().st_size, sha256(path)
        ok = size == pin["size"] and digest == pin["sha256"]
        print(f"{'ok  ' if ok else 'BAD '} {name}: {size} bytes, sha256 {digest}")
        if not ok:
            bad.append(f"{name}: got {size} bytes sha256 {digest}, {MANIFEST.name} pins "
                       f"{pin['size']} bytes sha256 {pin['sha256']}")
    return bad


def reference_vectors(folder, manifest):
    import torch
    import torch.nn.functional as F
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    # A local folder: NomicBert's own from_pretrained then loads this folder's weights (given a
    # hub id it would fetch the weights of the main branch, whatever the revision asked).
    model = AutoModel.from_pretrained(folder, trust_remote_code=True, code_revision=CODE_REVISION)
    model.eval()
    out = []
    with torch.inference_mode():
        for text, query, dims in CASES:
            prefix = manifest["query_prefix"] if query else manifest["document_prefix"]
            enc = tokenizer(prefix + text, truncation=True, max_length=manifest["max_tokens"],
                            return_tensors="pt")
            hidden = model(**enc)[0]
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1)
            if dims is not None:
                # Matryoshka, as the model card says: layer norm, truncate, normalise.
                pooled = F.layer_norm(pooled, normalized_shape=(pooled.shape[1],))[:, :dims]
            out.append(F.normalize(pooled, p=2, dim=1)[0].tolist())
    return out


def brain_vector(brain, text, query, dims):
    cmd = [brain, "model", "embed", "--json", "--model", MODEL]
    if query:
        cmd.append("--query")
    if dims is not None:
        cmd += ["--dims", str(dims)]
    done = subprocess.run(cmd + ["--", text], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"nomic-reference: {' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--brain", required=True, help="the brain binary (with the model installed)")
    p.add_argument("--out", help="write the report here as JSON")
    p.add_argument("--min-cosine", type=float, default=0.9999)
    p.add_argument("--max-diff", type=float, default=1e-3)
    args = p.parse_args()

    manifest = tomllib.loads(MANIFEST.read_text())
    from huggingface_hub import snapshot_download

    folder = snapshot_download(manifest["repo"], revision=manifest["revision"], allow_patterns=FILES)
    print(f"reference: {manifest['repo']} at {manifest['revision']}, code "
          f"nomic-ai/nomic-bert-2048 at {CODE_REVISION}")
    failures = check_files(folder, manifest)
    refs = reference_vectors(folder, manifest)

    rows = []
    for (text, query, dims), ref in zip(CASES, refs):
        got = brain_vector(args.brain, text, query, dims)
        vec = got["vector"]
        label = f"{'query' if query else 'document'} {dims or 768}d: {text[:48]!r}"
        if len(vec) != len(ref):
            failures.append(f"{label}: brain gave {len(vec)} dims, the reference {len(ref)}")
            continue
        cosine = sum(a * b for a, b in zip(vec, ref)) / (
            sum(a * a for a in vec) ** 0.5 * sum(b * b for b in ref) ** 0.5)
        diff = max(abs(a - b) for a, b in zip(vec, ref))
        ok = cosine >= args.min_cosine and diff <= args.max_diff
        print(f"{'ok  ' if ok else 'BAD '} cos {cosine:.7f}  max|diff| {diff:.2e}  on {got['device']}  {label}")
        rows.append({"text": text, "query": query, "dims": len(vec), "device": got["device"],
                     "cosine": cosine, "max_diff": diff, "ok": ok})
        if not ok:
            failures.append(f"{label}: cosine {cosine:.7f} (min {args.min_cosine}), "
                            f"max diff {diff:.2e} (max {args.max_diff})")

    if args.out:
        report = {"model": manifest["repo"], "revision": manifest["revision"],
                  "code_revision": CODE_REVISION, "min_cosine": args.min_cosine,
                  "max_diff": args.max_diff, "cases": rows, "failures": failures}
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    if failures:
        print("\n".join(["", "nomic-reference: FAILED"] + failures), file=sys.stderr)
        sys.exit(1)
    print(f"nomic-reference: {len(rows)} vectors match the reference")


if __name__ == "__main__":
    main()
