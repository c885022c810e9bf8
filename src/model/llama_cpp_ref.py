#!/usr/bin/env python3
"""llama.cpp's answers for the same GGUF, through llama-cpp-python (src/bench/install-llama-cpp.sh).

For figures and comparison notes only: llama.cpp quantizes activations to 8 bits for its
quantized matrix products, so its logits differ from a float32 forward pass by more than rounding,
and its greedy ids can drift from the float32 reference's after a few tokens. The float32
reference is src/model/reference.py.

  python llama_cpp_ref.py MODEL.gguf [--threads 2] < requests.jsonl > answers.jsonl
      request {"ids": [...], "steps": N}; answer {"ids": [...], "logits": [[...last prompt
      position...]], "greedy": [N ids picked greedily, each fed back]}
  python llama_cpp_ref.py MODEL.gguf --bench 64,256,1024 --decode 128 --threads 2 --repeats 3
      prints "llama.cpp prefill N tokens: X tok/s" per length and "llama.cpp decode N tokens: X tok/s"
      (the best of the repeats).
"""

import argparse
import json
import sys
import time

import numpy as np
from llama_cpp import Llama

MAX_IDS = 8192
MAX_STEPS = 1024


def load(path, threads, context):
    return Llama(model_path=path, n_ctx=context, n_batch=min(context, 2048), n_threads=threads,
                 n_threads_batch=threads, logits_all=False, verbose=False)


def last_logits(llm):
    # with logits_all=False the context holds one row of logits: the last evaluated position's
    # (llama-cpp-python 0.3.x no longer copies it into llm.scores)
    row = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
    return np.array(row, dtype=np.float32)


def greedy(llm, ids, steps):
    llm.reset()
    llm.eval(ids)
    first = last_logits(llm)
    logits, out = first, []
    for s in range(steps):
        nxt = int(np.argmax(logits))
        out.append(nxt)
        if s + 1 < steps:
            llm.eval([nxt])
            logits = last_logits(llm)
    return first, out


def serve(path, threads):
    llm = None
    for lineno, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        request = json.loads(line)
        ids = [int(i) for i in request["ids"]]
        steps = int(request.get("steps", 0))
        if not 0 < len(ids) <= MAX_IDS or not 0 <= steps <= MAX_STEPS:
            raise ValueError(f"line {lineno}: {len(ids)} ids (1..{MAX_IDS}), {steps} steps (0..{MAX_STEPS})")
        if llm is None or llm.n_ctx() < len(ids) + steps:
            llm = load(path, threads, max(2048, len(ids) + steps))
        first, out = greedy(llm, ids, steps)
        sys.stdout.write(json.dumps({"ids": ids, "logits": [first.tolist()], "greedy": out}) + "\n")
        sys.stdout.flush()


def bench(path, lengths, decode, threads, repeats):
    context = max(lengths) + decode + 8
    llm = load(path, threads, context)
    vocab = llm.n_vocab()
    # a fixed, ordinary-looking token sequence (ids spread over the vocabulary, no control tokens)
    prompt = [100 + (i * 7919) % (vocab - 200) for i in range(max(lengths))]
    llm.reset()
    llm.eval(prompt[:16])  # warm-up
    for n in lengths:
        best = 0.0
        for _ in range(repeats):
            llm.reset()
            t0 = time.perf_counter()
            llm.eval(prompt[:n])
            best = max(best, n / (time.perf_counter() - t0))
        print(f"llama.cpp prefill {n} tokens: {best:.1f} tok/s", flush=True)
    best = 0.0
    for _ in range(repeats):
        llm.reset()
        llm.eval(prompt[:min(lengths)])
        nxt = int(np.argmax(last_logits(llm)))
        t0 = time.perf_counter()
        for _ in range(decode):
            llm.eval([nxt])
            nxt = int(np.argmax(last_logits(llm)))
        best = max(best, decode / (time.perf_counter() - t0))
    print(f"llama.cpp decode {decode} tokens: {best:.1f} tok/s", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bench", help="comma-separated prompt lengths to time")
    parser.add_argument("--decode", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not 1 <= args.threads <= 256 or not 1 <= args.repeats <= 100 or not 1 <= args.decode <= MAX_STEPS:
        parser.error("threads 1..256, repeats 1..100, decode 1..1024")
    if args.bench:
        lengths = [int(n) for n in args.bench.split(",")]
        if not all(1 <= n <= MAX_IDS for n in lengths):
            parser.error(f"prompt lengths 1..{MAX_IDS}")
        bench(args.model, lengths, args.decode, args.threads, args.repeats)
    else:
        serve(args.model, args.threads)


if __name__ == "__main__":
    main()
