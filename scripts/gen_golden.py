#!/usr/bin/env python3
"""Generates the golden fixtures brain's Rust tests compare against. Run once, by hand:

    python3 -m venv /tmp/golden && /tmp/golden/bin/pip install torch sentence-transformers 'transformers>=5.24'
    /tmp/golden/bin/python scripts/gen_golden.py "$(scripts/test-model.sh)"

Writes (all committed, so CI needs no torch):
  tests/fixtures/minilm_golden.json   sentence-transformers vectors of all-MiniLM-L6-v2
  tests/fixtures/tiny-nomic/          a tiny random NomicBert in the original nomic layout
  tests/fixtures/tiny_nomic_golden.json  transformers' native NomicBertModel outputs for it
"""

import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from sentence_transformers import SentenceTransformer
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
from transformers import NomicBertConfig, NomicBertModel

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "how do i prevent silent failures from gitignore patterns",
    "Feature flags should be cleaned up once a rollout is complete; rework the tests, don't delete them.",
    "a",
    "",
    "Emoji 🚀 and accents: café, naïve, Ångström — and a NUL\u0000byte.",
    "SQLite FTS5 ranks with BM25; embeddings rank by cosine similarity. " * 40,  # > 256 tokens: truncated
]

CORPUS = [
    "plants create oxygen through photosynthesis",
    "the index lives outside the notes folder",
    "search query and search document prefixes",
    "rotary position embeddings rotate pairs of values",
    "feature flags, rollouts and cleanup of old code paths",
    "a local first search engine over markdown notes",
]


def minilm(model_dir: str) -> None:
    model = SentenceTransformer(model_dir, device="cpu")
    assert model.max_seq_length == 256, model.max_seq_length
    # One call: sentence-transformers pads the whole list into one batch of mixed lengths.
    vectors = model.encode(SENTENCES, batch_size=len(SENTENCES), normalize_embeddings=True, convert_to_numpy=True)
    out = {
        "model": "all-minilm-l6-v2",
        "generator": "sentence-transformers " + __import__("sentence_transformers").__version__
        + ", torch " + torch.__version__,
        "texts": SENTENCES,
        "vectors": [[float(x) for x in v] for v in vectors],
    }
    (FIXTURES / "minilm_golden.json").write_text(json.dumps(out, ensure_ascii=False) + "\n")


def tiny_tokenizer(dest: Path) -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=200, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    )
    tok.train_from_iterator(CORPUS + ["search_query: x", "search_document: y"], trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    tok.save(str(dest / "tokenizer.json"))
    return tok


def tiny_nomic() -> None:
    dest = FIXTURES / "tiny-nomic"
    dest.mkdir(parents=True, exist_ok=True)
    tok = tiny_tokenizer(dest)
    g = torch.Generator().manual_seed(20261129)
    hidden, heads, layers, inner = 64, 4, 2, 96
    vocab = tok.get_vocab_size()
    original = {
        "model_type": "nomic_bert",
        "vocab_size": vocab,
        "n_embd": hidden,
        "n_head": heads,
        "n_layer": layers,
        "n_inner": inner,
        "n_positions": 2048,
        "type_vocab_size": 2,
        "layer_norm_epsilon": 1e-12,
        "rotary_emb_fraction": 1.0,
        "rotary_emb_base": 1000,
        "rotary_emb_interleaved": False,
        "rotary_scaling_factor": None,
        "qkv_proj_bias": False,
        "mlp_fc1_bias": False,
        "mlp_fc2_bias": False,
        "activation_function": "swiglu",
        "prenorm": False,
        "causal": False,
    }
    (dest / "config.json").write_text(json.dumps(original, indent=2) + "\n")

    def lin(out_f, in_f):  # fan-in scaled, as a trained network's activations would be
        return torch.randn(out_f, in_f, generator=g) / in_f**0.5

    def norm():
        return 1.0 + 0.1 * torch.randn(hidden, generator=g), 0.1 * torch.randn(hidden, generator=g)

    w = {
        "embeddings.word_embeddings.weight": torch.randn(vocab, hidden, generator=g),
        "embeddings.token_type_embeddings.weight": torch.randn(2, hidden, generator=g),
    }
    w["emb_ln.weight"], w["emb_ln.bias"] = norm()
    for i in range(layers):
        p = f"encoder.layers.{i}."
        w[p + "attn.Wqkv.weight"] = lin(3 * hidden, hidden)
        w[p + "attn.out_proj.weight"] = lin(hidden, hidden)
        w[p + "mlp.fc11.weight"] = lin(inner, hidden)
        w[p + "mlp.fc12.weight"] = lin(inner, hidden)
        w[p + "mlp.fc2.weight"] = lin(hidden, inner)
        w[p + "norm1.weight"], w[p + "norm1.bias"] = norm()
        w[p + "norm2.weight"], w[p + "norm2.bias"] = norm()
    save_file({k: v.contiguous() for k, v in w.items()}, str(dest / "model.safetensors"))

    # transformers' native NomicBert (no remote code) reads the original layout through its
    # own weight-renaming table; a missing or unexpected key would mean the layouts differ.
    config = NomicBertConfig(
        vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
        intermediate_size=inner, max_position_embeddings=2048, type_vocab_size=2, layer_norm_eps=1e-12,
        hidden_act="silu", rope_parameters={"rope_type": "default", "rope_theta": 1000.0},
    )
    model, info = NomicBertModel.from_pretrained(str(dest), config=config, output_loading_info=True)
    bad = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    assert not bad, bad
    model.eval()

    docs = ["search_document: " + t for t in CORPUS[:4]] + ["search_document: "]
    queries = ["search_query: " + t for t in ["how do plants make oxygen", "rotary embeddings"]]

    def embed(texts, dims=None):
        enc = tok.encode_batch(texts)
        n = max(len(e.ids) for e in enc)
        ids = torch.tensor([e.ids + [0] * (n - len(e.ids)) for e in enc])
        mask = torch.tensor([[1] * len(e.ids) + [0] * (n - len(e.ids)) for e in enc])
        with torch.no_grad():
            hidden_states = model(input_ids=ids, attention_mask=mask).last_hidden_state
        m = mask.unsqueeze(-1).float()
        pooled = (hidden_states * m).sum(1) / m.sum(1).clamp(min=1e-9)
        if dims is not None:
            pooled = F.layer_norm(pooled, normalized_shape=(pooled.shape[1],))[:, :dims]
        return F.normalize(pooled, p=2, dim=1).tolist()

    out = {
        "model": "tiny-nomic (random weights, original nomic layout)",
        "generator": "transformers NomicBertModel " + __import__("transformers").__version__
        + ", torch " + torch.__version__,
        "document_prefix": "search_document: ",
        "query_prefix": "search_query: ",
        "documents": CORPUS[:4] + [""],
        "document_vectors": embed(docs),
        "queries": ["how do plants make oxygen", "rotary embeddings"],
        "query_vectors": embed(queries),
        "matryoshka_dims": 32,
        "matryoshka_document_vectors": embed(docs, dims=32),
    }
    (FIXTURES / "tiny_nomic_golden.json").write_text(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: gen_golden.py MINILM_DIR   (the folder scripts/test-model.sh prints)")
    torch.manual_seed(0)
    minilm(sys.argv[1])
    tiny_nomic()
