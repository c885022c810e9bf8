#!/usr/bin/env python3
"""An independent reference for the Java tokenizer: Hugging Face `tokenizers` built from a GGUF.

    python src/model/hf_tokenize.py MODEL.gguf < requests.jsonl > answers.jsonl

Reads the file's vocabulary, merges and token types with the `gguf` package and builds a
byte-level BPE tokenizer the way SmolLM2's tokenizer is defined: every digit split on its own,
then the GPT-2 split pattern and byte-to-unicode map (ByteLevel, no prefix space), BPE merges by
rank, CONTROL-type tokens added as special tokens (matched in the text before pre-tokenization),
no BOS and no post-processing.

Each request line is a JSON object, answered by one line:
    {"encode": "text"}   ->  {"ids": [...]}
    {"decode": [ids]}    ->  {"text": "..."}   (special tokens kept)
A request that fails is answered {"error": "..."}. Answers are ASCII-only JSON.
"""
import json
import sys

import gguf
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

CONTROL = 3


def field(reader, key):
    f = reader.fields.get(key)
    if f is None:
        sys.exit(f"hf_tokenize: {key} is missing")
    return f.contents()


def build(path):
    reader = gguf.GGUFReader(path)
    model, pre = field(reader, "tokenizer.ggml.model"), field(reader, "tokenizer.ggml.pre")
    if model != "gpt2" or pre != "smollm":
        sys.exit(f"hf_tokenize: expected a gpt2/smollm tokenizer, found {model}/{pre}")
    tokens = field(reader, "tokenizer.ggml.tokens")
    types = field(reader, "tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ", 1)) for m in field(reader, "tokenizer.ggml.merges")]
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True),
         pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    specials = [t for t, ty in zip(tokens, types) if ty == CONTROL]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
    for t in specials:
        if tok.token_to_id(t) != vocab[t]:
            sys.exit(f"hf_tokenize: special token {t!r} got id {tok.token_to_id(t)}, not {vocab[t]}")
    return tok


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: hf_tokenize.py MODEL.gguf < requests.jsonl")
    tok = build(sys.argv[1])
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if "encode" in request:
                answer = {"ids": tok.encode(request["encode"]).ids}
            else:
                answer = {"text": tok.decode(request["decode"], skip_special_tokens=False)}
        except Exception as ex:  # reported per line, the Java test names the string
            answer = {"error": f"{type(ex).__name__}: {ex}"}
        out.write(json.dumps(answer, ensure_ascii=True) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
