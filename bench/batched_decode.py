"""Would decoding the three agents' calls together cut the team's wall time on this machine?

Issue 20 asks to measure llama.cpp's parallel sequences (the server's parallel slots with continuous
batching) against the one slot the agents queue on today. llama-cpp-python's server has no such
setting, so this measures what it would buy: the default model (Qwen2.5-Coder-1.5B Q4_K_M) through
llama.cpp's own C API (the ctypes bindings the ``[local]`` extra ships), greedy, k prompts of the
bench's arithmetic kind.

- one after another: each prompt prefilled and decoded alone, as the shared server does now;
- together: the k prompts prefilled in one batch as k sequences, then one ``llama_decode`` per step
  carrying one token of each sequence (what a parallel-slot server does).

Same prompts, same number of new tokens, same threads; it prints both wall times, decode tokens/s,
and how many of the k greedy outputs came out the same both ways.

    .venv/bin/python -m bench.batched_decode [--k 3] [--tokens 96] [--threads 2]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any

import numpy  # llama-cpp-python's own dependency (the [local] extra)

PROMPTS = [
    "What is 12 + 7 * 31 + 5 - 9 * 14? Work it out step by step and end with 'Answer: N'.",
    "What is 48 + 3 * 17 + 26 - 8 * 11? Work it out step by step and end with 'Answer: N'.",
    "What is 95 + 6 * 23 + 14 - 7 * 19? Work it out step by step and end with 'Answer: N'.",
    "Which is larger, 9.11 or 9.9? Answer in one sentence.",
]


@dataclass
class Timing:
    wall_s: float
    prefill_s: float
    decoded: int
    outputs: list[list[int]]

    @property
    def decode_tokens_per_s(self) -> float:
        return self.decoded / max(1e-9, self.wall_s - self.prefill_s)


class Model:
    """One llama.cpp context with room for ``k`` sequences."""

    def __init__(self, path: str, k: int, threads: int) -> None:
        import llama_cpp as lc  # the [local] extra
        from llama_cpp._logger import set_verbose

        set_verbose(False)  # llama.cpp's load log, hundreds of lines, only errors kept
        self.lc: Any = lc
        lc.llama_backend_init()
        model_params = lc.llama_model_default_params()
        model_params.use_extra_bufts = False  # AMX repacking segfaults here (backends/llama_server.py)
        self.model = lc.llama_model_load_from_file(path.encode(), model_params)
        params = lc.llama_context_default_params()
        params.n_ctx, params.n_batch, params.n_ubatch = 4096, 512, 512
        params.n_threads = params.n_threads_batch = threads
        params.n_seq_max, params.kv_unified = k, True
        self.ctx = lc.llama_init_from_model(self.model, params)
        self.vocab = lc.llama_model_get_vocab(self.model)
        self.n_vocab = lc.llama_vocab_n_tokens(self.vocab)
        self.batch = lc.llama_batch_init(512, 0, k)

    def tokens(self, question: str) -> list[int]:
        text = f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n".encode()
        room = (self.lc.llama_token * (len(text) + 8))()
        n = self.lc.llama_tokenize(self.vocab, text, len(text), room, len(room), True, True)
        return list(room[:n])

    def clear(self) -> None:
        self.lc.llama_memory_clear(self.lc.llama_get_memory(self.ctx), True)

    def decode(self, items: list[tuple[int, int, int, bool]]) -> None:
        """One ``llama_decode`` of (token, position, sequence, wants logits) items."""
        batch = self.batch
        for i, (token, pos, seq, logits) in enumerate(items):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, pos, 1
            batch.seq_id[i][0], batch.logits[i] = seq, logits
        batch.n_tokens = len(items)
        if self.lc.llama_decode(self.ctx, batch) != 0:
            raise RuntimeError("llama_decode failed")

    def greedy(self, index: int) -> int:
        """The most likely next token after the batch item ``index`` (which asked for logits)."""
        logits = self.lc.llama_get_logits_ith(self.ctx, index)
        return int(numpy.ctypeslib.as_array(logits, shape=(self.n_vocab,)).argmax())


def one_after_another(model: Model, prompts: list[list[int]], new_tokens: int) -> Timing:
    start, prefill, outputs = time.perf_counter(), 0.0, []
    for prompt in prompts:
        model.clear()
        began = time.perf_counter()
        model.decode([(t, p, 0, p == len(prompt) - 1) for p, t in enumerate(prompt)])
        prefill += time.perf_counter() - began
        out = [model.greedy(len(prompt) - 1)]
        while len(out) < new_tokens:
            model.decode([(out[-1], len(prompt) + len(out) - 1, 0, True)])
            out.append(model.greedy(0))
        outputs.append(out)
    return Timing(time.perf_counter() - start, prefill, new_tokens * len(prompts), outputs)


def together(model: Model, prompts: list[list[int]], new_tokens: int) -> Timing:
    model.clear()
    start = time.perf_counter()
    items, last = [], []
    for seq, prompt in enumerate(prompts):
        items += [(t, p, seq, p == len(prompt) - 1) for p, t in enumerate(prompt)]
        last.append(len(items) - 1)
    model.decode(items)
    prefill = time.perf_counter() - start
    outputs = [[model.greedy(i)] for i in last]
    while len(outputs[0]) < new_tokens:
        model.decode([(out[-1], len(prompt) + len(out) - 1, seq, True)
                      for seq, (prompt, out) in enumerate(zip(prompts, outputs, strict=True))])
        for seq, out in enumerate(outputs):
            out.append(model.greedy(seq))
    return Timing(time.perf_counter() - start, prefill, new_tokens * len(prompts), outputs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=3, help="sequences (agents' calls) at once")
    parser.add_argument("--tokens", type=int, default=96, help="new tokens per sequence")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", default="default")
    args = parser.parse_args(argv)
    from massgen.backends.local_model import resolve_model

    model = Model(str(resolve_model(args.model)), args.k, args.threads)
    prompts = [model.tokens(q) for q in (PROMPTS * args.k)[: args.k]]
    alone = one_after_another(model, prompts, args.tokens)
    batched = together(model, prompts, args.tokens)
    same = sum(a == b for a, b in zip(alone.outputs, batched.outputs, strict=True))
    print("| decoding | k | new tokens each | wall s | prefill s | decode tokens/s |")
    print("|---|---|---|---|---|---|")
    for name, timing in (("one after another (today's one slot)", alone), ("together (parallel sequences)", batched)):
        print(f"| {name} | {args.k} | {args.tokens} | {timing.wall_s:.1f} | {timing.prefill_s:.1f} | "
              f"{timing.decode_tokens_per_s:.2f} |")
    print(f"\nwall time together / one after another: {batched.wall_s / alone.wall_s:.2f}; "
          f"greedy outputs the same both ways: {same} of {args.k}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
