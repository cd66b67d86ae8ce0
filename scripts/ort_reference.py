#!/usr/bin/env python3
"""Same-machine ONNX Runtime reference figures for brain's all-MiniLM-L6-v2 embedder, without torch.

PyTorch cannot be installed everywhere (its Linux wheels pull gigabytes of CUDA packages), so this
builds the BERT encoder graph by hand with onnx.helper from model.safetensors, runs it in
onnxruntime on the CPU, checks it against tests/fixtures/minilm_golden.json (the
sentence-transformers vectors) and prints medians comparable with benches/embed.rs and
scripts/bench_reference.py:

    pip install onnx onnxruntime safetensors tokenizers numpy
    python3 scripts/ort_reference.py "$(scripts/test-model.sh)" [--threads 2]

The graph follows what torch.onnx.export gives for BertModel (opset 17, LayerNormalization, GELU as
0.5*x*(1+erf(x/sqrt(2))), an additive attention mask, dynamic batch and sequence axes), so ORT's
graph optimizations (ORT_ENABLE_ALL) see the same patterns. token_type_ids are always zero, so the
type-0 row is folded into the position table. Exits 1 if the vectors differ from the golden ones by
more than 1e-4.
"""

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from bench_common import documents, median_time

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "fixtures" / "minilm_golden.json"
QUERY = "how do i stop silent failures in gitignore"
MAX_LEN = 256
TOLERANCE = 1e-4


def build_graph(model_dir):
    """The BERT encoder as an onnx.ModelProto: (input_ids, attention_mask) -> last_hidden_state."""
    cfg = json.loads((model_dir / "config.json").read_text())
    raw = load_file(str(model_dir / "model.safetensors"))
    w = {k.removeprefix("bert."): v for k, v in raw.items()}
    hidden, heads, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    head_dim = hidden // heads
    inits, nodes = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op, inputs, name, **attrs):
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def linear(x, prefix, name):  # x @ W^T + b, as torch exports nn.Linear
        wt = const(prefix + ".weight_t", np.ascontiguousarray(w[prefix + ".weight"].T))
        return node("Add", [node("MatMul", [x, wt], name + "_mm"), const(prefix + ".bias", w[prefix + ".bias"])], name)

    def layer_norm(x, prefix, name):
        g, b = const(prefix + ".weight", w[prefix + ".weight"]), const(prefix + ".bias", w[prefix + ".bias"])
        return node("LayerNormalization", [x, g, b], name, axis=-1, epsilon=eps)

    f32 = lambda v: np.array(v, dtype=np.float32)  # noqa: E731
    i64 = lambda v: np.array(v, dtype=np.int64)  # noqa: E731

    # Embeddings: word[ids] + (position + token_type[0])[0..s], then LayerNorm.
    word = const("word_embeddings", w["embeddings.word_embeddings.weight"])
    pos_type = w["embeddings.position_embeddings.weight"] + w["embeddings.token_type_embeddings.weight"][0]
    pos_table = const("position_type0_embeddings", pos_type)
    seq_len = node("Gather", [node("Shape", ["input_ids"], "ids_shape"), const("one", i64(1))], "seq_len", axis=0)
    positions = node("Range", [const("zero", i64(0)), seq_len, "one"], "positions")
    emb = node("Add", [node("Gather", [word, "input_ids"], "word_emb", axis=0),
                       node("Gather", [pos_table, positions], "pos_emb", axis=0)], "emb_sum")
    x = layer_norm(emb, "embeddings.LayerNorm", "emb_ln")

    # Additive mask [b, 1, 1, s]: 0 where attended, -10000 where padded.
    m = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    m = node("Unsqueeze", [m, const("mask_axes", i64([1, 2]))], "mask_4d")
    m = node("Sub", [const("f_one", f32(1.0)), m], "mask_inv")
    mask = node("Mul", [m, const("mask_neg", f32(-10000.0))], "mask_add")

    split_shape = const("split_shape", i64([0, 0, heads, head_dim]))
    merge_shape = const("merge_shape", i64([0, 0, hidden]))
    scale = const("attn_scale", f32(math.sqrt(head_dim)))
    for i in range(cfg["num_hidden_layers"]):
        p, n = f"encoder.layer.{i}", f"l{i}_"

        def heads_of(kind, perm):  # [b, s, hidden] -> [b, heads, s, d] (perm 0213) or [b, heads, d, s]
            t = linear(x, f"{p}.attention.self.{kind}", n + kind)
            t = node("Reshape", [t, split_shape], n + kind + "_split")
            return node("Transpose", [t], n + kind + "_t", perm=perm)

        q, k, v = heads_of("query", [0, 2, 1, 3]), heads_of("key", [0, 2, 3, 1]), heads_of("value", [0, 2, 1, 3])
        scores = node("Div", [node("MatMul", [q, k], n + "qk"), scale], n + "scores")
        probs = node("Softmax", [node("Add", [scores, mask], n + "masked")], n + "probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], n + "ctx")], n + "ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, merge_shape], n + "ctx_merged")
        attn = linear(ctx, f"{p}.attention.output.dense", n + "attn_out")
        x = layer_norm(node("Add", [attn, x], n + "attn_res"), f"{p}.attention.output.LayerNorm", n + "attn_ln")

        h = linear(x, f"{p}.intermediate.dense", n + "inter")
        erf = node("Erf", [node("Div", [h, const(n + "sqrt2", f32(math.sqrt(2.0)))], n + "gelu_div")], n + "gelu_erf")
        g = node("Mul", [h, node("Add", [erf, const(n + "g_one", f32(1.0))], n + "gelu_add")], n + "gelu_mul")
        g = node("Mul", [g, const(n + "g_half", f32(0.5))], n + "gelu")
        out = linear(g, f"{p}.output.dense", n + "ffn_out")
        x = layer_norm(node("Add", [out, x], n + "ffn_res"), f"{p}.output.LayerNorm", n + "ffn_ln")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])
    am = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", hidden])
    graph = helper.make_graph(nodes, "minilm_encoder", [ids, am], [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ort_reference.py")
    model.ir_version = 8  # the IR of opset 17, so older onnxruntime builds load it too
    onnx.checker.check_model(model)
    # Intermediate shapes (as torch.onnx.export records them) let ORT fuse Add+LayerNormalization
    # into SkipLayerNormalization; without them it does not.
    return onnx.shape_inference.infer_shapes(model)


class Embedder:
    def __init__(self, model_dir, threads):
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json ships with truncation and Fixed padding at 128; sentence-transformers uses 256
        # and pads a batch to its longest text, so override both.
        self.tok.enable_truncation(MAX_LEN)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "minilm.onnx")
            onnx.save(build_graph(model_dir), path)
            self.sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])

    def tokenize(self, texts):
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        return ids, mask

    def run(self, ids, mask):  # run the encoder, mean-pool over the mask, L2-normalise
        hidden = self.sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        m = mask[..., None].astype(np.float32)
        v = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    def embed(self, texts, batch=32):
        return np.concatenate([self.run(*self.tokenize(texts[i:i + batch])) for i in range(0, len(texts), batch)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir", type=Path, help="folder with config.json, tokenizer.json, model.safetensors")
    ap.add_argument("--threads", type=int, default=2, help="ORT intra_op_num_threads (default 2)")
    ap.add_argument("--query-only", action="store_true", help="skip the 100-document timing")
    ap.add_argument("--passages", type=Path, help="a JSON list of texts: time embedding them in one batch "
                    "(what scripts/bench-similar.sh compares a draft's embedding with) instead")
    args = ap.parse_args()
    emb = Embedder(args.model_dir, args.threads)
    print(f"onnxruntime {ort.__version__}, intra_op_num_threads={args.threads}")

    golden = json.loads(GOLDEN.read_text())
    got = np.stack([emb.embed([t])[0] for t in golden["texts"]])
    diff = float(np.abs(got - np.array(golden["vectors"], dtype=np.float32)).max())
    print(f"max abs diff vs {GOLDEN.name} ({len(golden['texts'])} texts): {diff:.2e}")
    if not diff <= TOLERANCE:
        print(f"FAIL: over {TOLERANCE:g}", file=sys.stderr)
        return 1

    if args.passages:
        texts = json.loads(args.passages.read_text())
        ntok = [sum(e.attention_mask) for e in emb.tok.encode_batch(texts)]
        t = median_time(lambda: emb.embed(texts, batch=len(texts)), 21, 3)
        print(f"onnxruntime minilm, {len(texts)} passages ({sum(ntok)} tokens) in one batch: {t * 1000:.1f} ms")
        return 0
    t = median_time(lambda: emb.embed([QUERY]), 200, 20)
    print(f"onnxruntime minilm query: {t * 1000:.2f} ms")
    ids, mask = emb.tokenize([QUERY])
    t = median_time(lambda: emb.run(ids, mask), 200, 20)
    print(f"onnxruntime minilm query (no tokenisation): {t * 1000:.2f} ms")

    if args.query_only:
        return 0
    docs = documents(100, 180)
    ntok = [sum(e.attention_mask) for e in emb.tok.encode_batch(docs)]
    print(f"documents: {len(docs)}, tokens median {statistics.median(ntok)}")
    t = median_time(lambda: emb.embed(docs, batch=32), 5, 1)
    print(f"onnxruntime minilm: {len(docs) / t:.1f} docs/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
