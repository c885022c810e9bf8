#!/usr/bin/env python3
"""An independent float32 forward pass of a llama-architecture GGUF model, in numpy.

The Java engine's logit test compares itself with this script. It reads the same GGUF file with
the `gguf` package, dequantizes every weight once to float32 and runs the llama block:

  x = token_embd[id]
  per block: h = rmsnorm(x) * attn_norm; q, k, v = h @ W.T; RoPE on q and k per head over
             adjacent pairs (2i, 2i+1) at angle pos * base^(-2i/head_dim); grouped-query
             attention (query head j reads KV head j // (heads / kv_heads)), causal softmax of
             q.k / sqrt(head_dim); x += attn_output(...);
             h = rmsnorm(x) * ffn_norm; x += down(silu(gate(h)) * up(h))
  logits = rmsnorm(x) * output_norm @ output.T (output = token_embd when the file has no
           output.weight: tied embeddings)

Hyper-parameters come from the file's metadata. Everything is float32.

Usage (with the venv that src/model/install-model-venv.sh prints):

  python reference.py MODEL.gguf < requests.jsonl > answers.jsonl
  python reference.py MODEL.gguf --self-check

Each request line is {"ids": [...], "steps": N} or {"text": "...", "steps": N} (the text is
tokenized with a tokenizer built from the file's vocabulary and merges). Each answer line is
{"ids": [...prompt ids...], "logits": [[...logits of the last prompt position...]],
 "greedy": [N greedy ids, each fed back], "step_logits_top": [[[id, logit] x5] per step],
 "gap": the smallest top1 - top2 logit gap over the N steps}.
Timings go to stderr. REFERENCE_THREADS sets numpy's BLAS threads (default 1).
"""

import argparse
import json
import os
import sys
import time

# One BLAS thread unless told otherwise: the matrix-vector products of decoding gain little from
# more, and on a busy machine spinning BLAS threads slow everything down by an order of magnitude.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, os.environ.get("REFERENCE_THREADS", "1"))

import numpy as np  # noqa: E402 (after the thread settings)

from gguf import GGUFReader  # noqa: E402
from gguf.quants import dequantize  # noqa: E402

MAX_IDS = 8192
MAX_STEPS = 1024


def log(message):
    print(f"reference: {message}", file=sys.stderr, flush=True)


def field(reader, key, required=True):
    f = reader.fields.get(key)
    if f is None:
        if required:
            raise ValueError(f"GGUF metadata lacks {key}")
        return None
    return f.contents()


class Model:
    """The weights, dequantized once to float32, and the hyper-parameters from the metadata."""

    def __init__(self, path):
        start = time.perf_counter()
        reader = GGUFReader(path)
        arch = field(reader, "general.architecture")
        if arch != "llama":
            raise ValueError(f"general.architecture is {arch!r}, not 'llama'")
        self.blocks = int(field(reader, "llama.block_count"))
        self.dim = int(field(reader, "llama.embedding_length"))
        self.ffn = int(field(reader, "llama.feed_forward_length"))
        self.heads = int(field(reader, "llama.attention.head_count"))
        self.kv_heads = int(field(reader, "llama.attention.head_count_kv"))
        self.eps = np.float32(field(reader, "llama.attention.layer_norm_rms_epsilon"))
        self.rope_base = float(field(reader, "llama.rope.freq_base"))
        self.context = int(field(reader, "llama.context_length"))
        self.head_dim = self.dim // self.heads
        if self.heads % self.kv_heads or self.dim % self.heads:
            raise ValueError(f"heads {self.heads}, kv heads {self.kv_heads}, dim {self.dim} do not divide")
        rope_dims = field(reader, "llama.rope.dimension_count", required=False)
        if rope_dims is not None and int(rope_dims) != self.head_dim:
            raise ValueError(f"llama.rope.dimension_count {rope_dims} != head dim {self.head_dim}")
        self.reader = reader
        tensors = {t.name: t for t in reader.tensors}

        def weight(name, shape):
            t = tensors.get(name)
            if t is None:
                raise ValueError(f"GGUF has no tensor {name}")
            w = np.ascontiguousarray(dequantize(t.data, t.tensor_type), dtype=np.float32).reshape(shape)
            return w

        d, f, hd = self.dim, self.ffn, self.head_dim
        kv = self.kv_heads * hd
        self.embd = weight("token_embd.weight", (-1, d))
        self.vocab = self.embd.shape[0]
        self.output = weight("output.weight", (self.vocab, d)) if "output.weight" in tensors else self.embd
        self.output_norm = weight("output_norm.weight", (d,))
        self.layers = []
        for i in range(self.blocks):
            p = f"blk.{i}."
            self.layers.append({
                "attn_norm": weight(p + "attn_norm.weight", (d,)),
                "q": weight(p + "attn_q.weight", (d, d)),
                "k": weight(p + "attn_k.weight", (kv, d)),
                "v": weight(p + "attn_v.weight", (kv, d)),
                "o": weight(p + "attn_output.weight", (d, d)),
                "ffn_norm": weight(p + "ffn_norm.weight", (d,)),
                "gate": weight(p + "ffn_gate.weight", (f, d)),
                "up": weight(p + "ffn_up.weight", (f, d)),
                "down": weight(p + "ffn_down.weight", (d, f)),
            })
        # theta_i = base^(-2i / head_dim), computed in float64, used as float32 cos / sin.
        self.inv_freq = self.rope_base ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)
        log(f"loaded {path} ({self.blocks} blocks, dim {d}, vocab {self.vocab}) in "
            f"{time.perf_counter() - start:.1f} s")

    def new_cache(self, capacity):
        shape = (self.blocks, capacity, self.kv_heads, self.head_dim)
        return {"k": np.zeros(shape, np.float32), "v": np.zeros(shape, np.float32), "len": 0}

    def rmsnorm(self, x, w):
        ms = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
        return (x / np.sqrt(ms + self.eps)).astype(np.float32) * w

    def rope(self, x, positions):
        # x: [T, H, hd]; rotates the adjacent pairs (2i, 2i+1) of every head.
        angles = positions.astype(np.float64)[:, None] * self.inv_freq[None, :]
        cos = np.cos(angles).astype(np.float32)[:, None, :]
        sin = np.sin(angles).astype(np.float32)[:, None, :]
        even, odd = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = even * cos - odd * sin
        out[..., 1::2] = even * sin + odd * cos
        return out

    def forward(self, ids, cache, all_logits=False):
        """Runs the tokens at positions cache["len"]...; returns the last position's logits
        (or every position's), and appends their keys and values to the cache."""
        ids = np.asarray(ids, dtype=np.int64)
        if ids.ndim != 1 or len(ids) == 0:
            raise ValueError("needs a non-empty list of token ids")
        bad = ids[(ids < 0) | (ids >= self.vocab)]
        if len(bad):
            raise ValueError(f"token id {int(bad[0])} outside the vocabulary (0..{self.vocab - 1})")
        start = cache["len"]
        t = len(ids)
        end = start + t
        if end > cache["k"].shape[1]:
            raise ValueError(f"sequence of {end} tokens exceeds the cache's {cache['k'].shape[1]}")
        hd, h, kvh = self.head_dim, self.heads, self.kv_heads
        group = h // kvh
        positions = np.arange(start, end)
        scale = np.float32(1.0 / np.sqrt(hd))
        # causal mask: query at position start + a sees keys 0..start + a
        mask = np.arange(end)[None, :] > positions[:, None]
        x = self.embd[ids].copy()
        for i, layer in enumerate(self.layers):
            hn = self.rmsnorm(x, layer["attn_norm"])
            q = (hn @ layer["q"].T).reshape(t, h, hd)
            k = (hn @ layer["k"].T).reshape(t, kvh, hd)
            v = (hn @ layer["v"].T).reshape(t, kvh, hd)
            q = self.rope(q, positions)
            k = self.rope(k, positions)
            cache["k"][i, start:end] = k
            cache["v"][i, start:end] = v
            keys = cache["k"][i, :end]  # [S, kvh, hd]
            values = cache["v"][i, :end]
            att = np.empty((t, h, hd), np.float32)
            for j in range(h):
                kj = keys[:, j // group, :]  # [S, hd]
                vj = values[:, j // group, :]
                s = (q[:, j, :] @ kj.T) * scale  # [T, S]
                s = np.where(mask, np.float32(-np.inf), s)
                s = s - s.max(axis=1, keepdims=True)
                p = np.exp(s)
                p /= p.sum(axis=1, keepdims=True)
                att[:, j, :] = p @ vj
            x = x + att.reshape(t, h * hd) @ layer["o"].T
            hn = self.rmsnorm(x, layer["ffn_norm"])
            gate = hn @ layer["gate"].T
            up = hn @ layer["up"].T
            act = (gate / (np.float32(1) + np.exp(-gate))) * up
            x = x + act @ layer["down"].T
        cache["len"] = end
        out = x if all_logits else x[-1:]
        logits = self.rmsnorm(out, self.output_norm) @ self.output.T
        assert logits.dtype == np.float32
        return logits if all_logits else logits[0]


def top(logits, n):
    order = np.argsort(-logits, kind="stable")[:n]
    return [[int(i), float(logits[i])] for i in order]


def generate(model, ids, steps, keep=None):
    """Prefills the prompt, then picks `steps` ids greedily, feeding each back (KV cache).
    Appends each step's logits to `keep` when given."""
    cache = model.new_cache(len(ids) + steps)
    t0 = time.perf_counter()
    logits = model.forward(ids, cache)
    t1 = time.perf_counter()
    first = logits
    greedy, tops, gap = [], [], float("inf")
    for s in range(steps):
        if keep is not None:
            keep.append(logits)
        best = top(logits, 5)
        tops.append(best)
        gap = min(gap, best[0][1] - best[1][1])
        nxt = int(np.argmax(logits))
        greedy.append(nxt)
        if s + 1 < steps:
            logits = model.forward([nxt], cache)
    t2 = time.perf_counter()
    log(f"{len(ids)} prompt tokens in {t1 - t0:.2f} s ({len(ids) / (t1 - t0):.0f} tok/s), "
        f"{max(steps - 1, 0)} decode steps in {t2 - t1:.2f} s")
    return first, greedy, tops, gap


def build_tokenizer(model):
    """A Hugging Face tokenizer from the GGUF's vocabulary and merges (byte-level BPE, every
    digit split on its own first, control tokens matched before anything else)."""
    from tokenizers import Tokenizer, AddedToken, decoders, models, pre_tokenizers
    tokens = field(model.reader, "tokenizer.ggml.tokens")
    merges = field(model.reader, "tokenizer.ggml.merges")
    types = field(model.reader, "tokenizer.ggml.token_type")
    vocab = {tok: i for i, tok in enumerate(tokens)}
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=pairs, fuse_unk=False, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(tokens[i], special=True) for i, ty in enumerate(types) if ty == 3])
    return tok


def serve(model):
    tokenizer = None
    for lineno, line in enumerate(sys.stdin, 1):
        line = line.strip()
        if not line:
            continue
        request = json.loads(line)
        steps = int(request.get("steps", 0))
        if not 0 <= steps <= MAX_STEPS:
            raise ValueError(f"line {lineno}: steps {steps} outside 0..{MAX_STEPS}")
        if "text" in request:
            if tokenizer is None:
                tokenizer = build_tokenizer(model)
            ids = tokenizer.encode(request["text"], add_special_tokens=False).ids
        else:
            ids = [int(i) for i in request["ids"]]
        if not 0 < len(ids) <= MAX_IDS:
            raise ValueError(f"line {lineno}: {len(ids)} prompt ids, wants 1..{MAX_IDS}")
        logits, greedy, tops, gap = generate(model, ids, steps)
        answer = {"ids": ids, "logits": [logits.tolist()], "greedy": greedy,
                  "step_logits_top": tops, "gap": gap if steps else None}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def self_check(model):
    """The cached decode must pick the same ids as recomputing the whole sequence each step,
    with logits that agree closely."""
    prompts = [[1, 9690, 198, 19556, 30], [504, 3458, 253, 1345, 2618, 314, 28, 33, 34, 35] * 3]
    steps = 8
    worst = 0.0
    for ids in prompts:
        cached = []
        _, greedy, _, gap = generate(model, ids, steps, keep=cached)
        seq = list(ids)
        for s in range(steps):
            full = model.forward(seq, model.new_cache(len(seq)))
            worst = max(worst, float(np.max(np.abs(full - cached[s]))))
            nxt = int(np.argmax(full))
            if nxt != greedy[s]:
                raise AssertionError(f"step {s}: recomputed {nxt}, cached decode {greedy[s]}")
            seq.append(nxt)
        log(f"self-check: {len(ids)} ids -> {greedy} (gap {gap:.3f}) same with and without the cache")
    if worst > 1e-3:
        raise AssertionError(f"cached and recomputed logits differ by {worst:.2e}")
    log(f"self-check: passed; max |logit diff|, cached decode vs recomputed: {worst:.2e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--self-check", action="store_true")
    args = parser.parse_args()
    model = Model(args.model)
    if args.self_check:
        self_check(model)
    else:
        serve(model)


if __name__ == "__main__":
    main()
