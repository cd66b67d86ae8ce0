#!/usr/bin/env python3
"""Same-machine reference figures for benches/embed.rs: PyTorch (sentence-transformers) and
ONNX Runtime on all-MiniLM-L6-v2 with the same 100 documents of ~230 tokens, and PyTorch on a
model of nomic-embed-text's size with random weights. Prints medians.

    /tmp/golden/bin/pip install onnx onnxruntime   # besides torch, sentence-transformers
    /tmp/golden/bin/python scripts/bench_reference.py "$(scripts/test-model.sh)"
"""

import statistics
import sys
import tempfile

import torch

from bench_common import documents, median_time


def main(model_dir):
    torch.set_num_threads(2)
    from sentence_transformers import SentenceTransformer

    docs = documents(100, 180)
    query = "how do i stop silent failures in gitignore"
    st = SentenceTransformer(model_dir, device="cpu")
    ntok = [len(st.tokenizer(d)["input_ids"]) for d in docs]
    print(f"documents: {len(docs)}, tokens median {statistics.median(ntok)}")
    with torch.inference_mode():
        t = median_time(lambda: st.encode(docs, batch_size=32), 5)
        print(f"pytorch minilm: {len(docs) / t:.1f} docs/s")
        t = median_time(lambda: st.encode([query]), 50)
        print(f"pytorch minilm query: {t * 1000:.2f} ms")

    try:
        import numpy as np
        import onnxruntime as ort
        from transformers import AutoModel, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(model_dir)
        hf = AutoModel.from_pretrained(model_dir).eval()
        path = tempfile.mktemp(suffix=".onnx")
        sample = tok(["hello world"], return_tensors="pt")
        torch.onnx.export(
            hf, (sample["input_ids"],), path, kwargs={"attention_mask": sample["attention_mask"]},
            input_names=["input_ids", "attention_mask"],
            output_names=["last_hidden_state"], dynamic_axes={"input_ids": {0: "b", 1: "s"},
            "attention_mask": {0: "b", 1: "s"}, "last_hidden_state": {0: "b", 1: "s"}}, opset_version=17, dynamo=False,
        )
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 2
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])

        def run(texts, batch=32):
            for i in range(0, len(texts), batch):
                enc = tok(texts[i:i + batch], padding=True, truncation=True, max_length=256, return_tensors="np")
                out = sess.run(None, {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]})[0]
                m = enc["attention_mask"][..., None]
                v = (out * m).sum(1) / m.sum(1)
                v / np.linalg.norm(v, axis=1, keepdims=True)

        t = median_time(lambda: run(docs), 5)
        print(f"onnxruntime minilm: {len(docs) / t:.1f} docs/s")
        t = median_time(lambda: run([query]), 50)
        print(f"onnxruntime minilm query: {t * 1000:.2f} ms")
    except Exception as e:  # noqa: BLE001 - a missing optional runtime is reported, not fatal
        print(f"onnxruntime: skipped ({e})")

    from transformers import NomicBertConfig, NomicBertModel

    cfg = NomicBertConfig(rope_parameters={"rope_type": "default", "rope_theta": 1000.0})
    nomic = NomicBertModel(cfg).eval()
    enc = st.tokenizer(["search_document: " + d for d in docs[:20]], padding=True, return_tensors="pt")
    with torch.inference_mode():
        t = median_time(lambda: [nomic(input_ids=enc["input_ids"][i:i + 32],
                                       attention_mask=enc["attention_mask"][i:i + 32]) for i in range(0, 20, 32)], 3)
        print(f"pytorch nomic-sized: {20 / t:.2f} docs/s")


if __name__ == "__main__":
    main(sys.argv[1])
