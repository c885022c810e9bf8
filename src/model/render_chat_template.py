#!/usr/bin/env python3
"""An independent reference for the Java chat template: the GGUF's own template rendered by jinja2.

    python src/model/render_chat_template.py MODEL.gguf < conversations.jsonl > rendered.jsonl

Reads tokenizer.chat_template with the `gguf` package and renders it in a sandboxed jinja2
environment set up as Hugging Face's apply_chat_template sets it up (trim_blocks, lstrip_blocks).
Each request line is {"messages": [{"role": ..., "content": ...}, ...], "add_generation_prompt": bool},
answered by {"text": "..."} (ASCII-only JSON), or {"error": "..."}.
"""
import json
import sys

import gguf
from jinja2.sandbox import ImmutableSandboxedEnvironment


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: render_chat_template.py MODEL.gguf < conversations.jsonl")
    reader = gguf.GGUFReader(sys.argv[1])
    f = reader.fields.get("tokenizer.chat_template")
    if f is None:
        sys.exit("render_chat_template: tokenizer.chat_template is missing")
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    template = env.from_string(f.contents())
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            answer = {"text": template.render(messages=request["messages"],
                                              add_generation_prompt=request["add_generation_prompt"])}
        except Exception as ex:  # reported per line
            answer = {"error": f"{type(ex).__name__}: {ex}"}
        sys.stdout.write(json.dumps(answer, ensure_ascii=True) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
